//! `cuda_std::half` on the GPU against the same functions on the host, bit for bit: the
//! packed `f16x2`/`bf16x2` arithmetic (`fma`, `add`, `mul`) and the scalar conversions, on
//! small integers (every result exact) and on random finite halves (rounded results, which
//! the host reproduces because it rounds once, as the GPU does: see `cuda_std::half`'s
//! module docs). Probes: `kernels/src/half.rs`. The `bf16` probe is in the sm_80 variant
//! (`PROBES_SM80`) and is skipped, with a message, on GPUs older than sm_80.
//!
//! Also one PTX test (no GPU): the sm_80 probe really uses `fma.rn.bf16x2`.

use cuda_std::half::{
    Bf16x2, F16x2, bf16, bf16_from_f32, bf16_to_f32, f16, f16_from_f32, f16_to_f32,
};
use cust::function::LaunchConfig;
use probes::half::{self as probe, OPS_SLOTS};
use tests::{PROBES_SM80, assert_identical, probes as gpu};
use tests::{dtoh, htod, launch_probe as launch, sm80_module};

/// Elements per test array: several blocks, the last one partial.
const N: usize = 1000;

fn cfg_1d(n: usize) -> LaunchConfig {
    LaunchConfig::new((n as u32).div_ceil(128), 128, 0)
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next_u16(&mut self) -> u16 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as u16
    }
}

/// `N` random finite halves' bits (`is_finite` tells which bits qualify).
fn random_bits(rng: &mut Rng, is_finite: impl Fn(u16) -> bool) -> Vec<u16> {
    let mut v = Vec::with_capacity(N);
    while v.len() < N {
        let b = rng.next_u16();
        if is_finite(b) {
            v.push(b);
        }
    }
    v
}

/// The integers -8..8 in element `i`'s pattern: every product and sum of three of them,
/// `a·b + c`, has at most 7 significant bits, so it is exact in `f16` and `bf16`.
fn small_int(i: usize, k: usize) -> f32 {
    ((i * 7 + k * 5 + i / 16) % 16) as f32 - 8.0
}

/// The three input arrays `[a, b, c]` of packed bits: small integers, then random finite
/// halves, `N` pairs each.
fn packed_inputs(
    random: bool,
    is_finite: impl Fn(u16) -> bool + Copy,
    to_bits: impl Fn(f32) -> u16,
) -> [Vec<u32>; 3] {
    let mut rng = Rng(0x243f_6a88_85a3_08d3);
    core::array::from_fn(|k| {
        if random {
            let lo = random_bits(&mut rng, is_finite);
            let hi = random_bits(&mut rng, is_finite);
            lo.iter()
                .zip(&hi)
                .map(|(&l, &h)| u32::from(l) | u32::from(h) << 16)
                .collect()
        } else {
            (0..N)
                .map(|i| {
                    u32::from(to_bits(small_int(i, k)))
                        | u32::from(to_bits(small_int(i + 3, k + 1))) << 16
                })
                .collect()
        }
    })
}

fn f16_finite(b: u16) -> bool {
    f16::from_bits(b).is_finite()
}

fn bf16_finite(b: u16) -> bool {
    bf16::from_bits(b).is_finite()
}

/// Host results of `[a·b + c, a + b, a·b]` per element, in the probes' layout. NaN results
/// (∞ − ∞ after an overflow) are compared as "some NaN": the GPU's payload is canonical.
fn host_ops<T: Copy>(a: &[T], b: &[T], c: &[T], ops: impl Fn(T, T, T) -> [T; 3]) -> Vec<T> {
    (0..a.len()).flat_map(|i| ops(a[i], b[i], c[i])).collect()
}

/// Replaces every NaN half (per element of the packed pair) by the canonical `0x7fff`.
fn canonical_nans(bits: u32, is_nan: impl Fn(u16) -> bool) -> u32 {
    let fix = |h: u16| if is_nan(h) { 0x7fff } else { h };
    u32::from(fix(bits as u16)) | u32::from(fix((bits >> 16) as u16)) << 16
}

#[test]
fn f16x2_fma_add_mul_match_the_host_bit_for_bit() {
    let gpu = gpu();
    let is_nan = |h: u16| f16::from_bits(h).is_nan();
    for random in [false, true] {
        let [a, b, c] = packed_inputs(random, f16_finite, |x| f16::from_f32(x).to_bits())
            .map(|v| v.into_iter().map(F16x2::from_bits).collect::<Vec<_>>());
        let mut out = htod(&gpu, &vec![F16x2::default(); OPS_SLOTS * N]);
        let (da, db, dc) = (htod(&gpu, &a), htod(&gpu, &b), htod(&gpu, &c));
        launch!(
            &gpu,
            gpu.module(),
            probe::half_f16x2_ops,
            cfg_1d(N),
            (&da, &db, &dc, &mut out)
        );
        let expected = host_ops(&a, &b, &c, |x, y, z| [x.mul_add(y, z), x + y, x * y]);
        let bits = |v: &[F16x2]| {
            v.iter()
                .map(|p| canonical_nans(p.to_bits(), is_nan))
                .collect::<Vec<_>>()
        };
        let what = if random {
            "f16x2 random"
        } else {
            "f16x2 integers"
        };
        assert_identical(what, &bits(&expected), &bits(&dtoh(&out)));
    }
}

#[test]
fn f16_conversions_match_the_host_bit_for_bit() {
    let gpu = gpu();
    let mut rng = Rng(0x1319_8a2e_0370_7344);
    // Every f16 (NaNs excluded: their payloads differ), and f32s around the f16 range:
    // random bits in [2^-30, 2^17), both signs, plus the ties 1 + 2^-11 and 65520.
    let h: Vec<f16> = (0..=u16::MAX)
        .map(f16::from_bits)
        .filter(|h| !h.is_nan())
        .collect();
    let mut x: Vec<f32> = (0..h.len())
        .map(|_| {
            let bits = (u32::from(rng.next_u16()) << 16 | u32::from(rng.next_u16())) & 0x807f_ffff;
            let exp = 97 + u32::from(rng.next_u16()) % 47; // 2^-30 ..= 2^16
            f32::from_bits(bits | exp << 23)
        })
        .collect();
    x[0] = 1.0 + 2f32.powi(-11);
    x[1] = 65520.0;
    x[2] = -65519.0;
    let (dx, dh) = (htod(&gpu, &x), htod(&gpu, &h));
    let mut out_h = htod(&gpu, &vec![f16::ZERO; x.len()]);
    let mut out_f = htod(&gpu, &vec![0f32; x.len()]);
    launch!(
        &gpu,
        gpu.module(),
        probe::half_f16_convert,
        cfg_1d(x.len()),
        (&dx, &dh, &mut out_h, &mut out_f)
    );
    let want_h: Vec<u16> = x.iter().map(|&v| f16_from_f32(v).to_bits()).collect();
    let want_f: Vec<u32> = h.iter().map(|&v| f16_to_f32(v).to_bits()).collect();
    assert_identical(
        "cvt.rn.f16.f32",
        &want_h,
        &dtoh(&out_h).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
    );
    assert_identical(
        "cvt.f32.f16",
        &want_f,
        &dtoh(&out_f).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
    );
}

#[test]
fn bf16x2_ops_and_conversions_match_the_host_bit_for_bit() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    let is_nan = |h: u16| bf16::from_bits(h).is_nan();
    let mut rng = Rng(0xa409_3822_299f_31d0);
    for random in [false, true] {
        let [a, b, c] = packed_inputs(random, bf16_finite, |x| bf16::from_f32(x).to_bits())
            .map(|v| v.into_iter().map(Bf16x2::from_bits).collect::<Vec<_>>());
        // Random f32s (NaNs excluded) and random non-NaN bf16s.
        let x: Vec<f32> = (0..N)
            .map(|_| f32::from_bits(u32::from(rng.next_u16()) << 16 | u32::from(rng.next_u16())))
            .map(|v| if v.is_nan() { 1.0 } else { v })
            .collect();
        let h: Vec<bf16> = random_bits(&mut rng, |b| !bf16::from_bits(b).is_nan())
            .into_iter()
            .map(bf16::from_bits)
            .collect();
        let (da, db, dc) = (htod(&gpu, &a), htod(&gpu, &b), htod(&gpu, &c));
        let mut out = htod(&gpu, &vec![Bf16x2::default(); OPS_SLOTS * N]);
        launch!(
            &gpu,
            &module,
            probe::half_bf16x2_ops,
            cfg_1d(N),
            (&da, &db, &dc, &mut out)
        );
        let (dx, dh) = (htod(&gpu, &x), htod(&gpu, &h));
        let mut out_h = htod(&gpu, &vec![bf16::ZERO; N]);
        let mut out_f = htod(&gpu, &vec![0f32; N]);
        launch!(
            &gpu,
            &module,
            probe::half_bf16_convert,
            cfg_1d(N),
            (&dx, &dh, &mut out_h, &mut out_f)
        );
        let expected = host_ops(&a, &b, &c, |p, q, r| [p.mul_add(q, r), p + q, p * q]);
        let bits = |v: &[Bf16x2]| {
            v.iter()
                .map(|p| canonical_nans(p.to_bits(), is_nan))
                .collect::<Vec<_>>()
        };
        let what = if random {
            "bf16x2 random"
        } else {
            "bf16x2 integers"
        };
        assert_identical(what, &bits(&expected), &bits(&dtoh(&out)));
        let want_h: Vec<u16> = x.iter().map(|&v| bf16_from_f32(v).to_bits()).collect();
        let want_f: Vec<u32> = h.iter().map(|&v| bf16_to_f32(v).to_bits()).collect();
        assert_identical(
            "cvt.rn.bf16.f32",
            &want_h,
            &dtoh(&out_h).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        );
        assert_identical(
            "bf16 -> f32",
            &want_f,
            &dtoh(&out_f).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        );
    }
}

/// The PTX text of entry `name` in `ptx`: from its `.entry` line to the next entry's.
fn entry_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("entry {name} not in the PTX"));
    let rest = &ptx[start + 1..];
    let end = rest.find(".entry ").map_or(rest.len(), |e| e);
    &rest[..end]
}

#[test]
fn sm80_probe_uses_packed_bf16_fma_and_the_baseline_probe_packed_f16() {
    let bf = entry_body(PROBES_SM80.ptx, "half_bf16x2_ops");
    assert!(
        bf.contains("fma.rn.bf16x2"),
        "half_bf16x2_ops lacks fma.rn.bf16x2:\n{bf}"
    );
    let cvt = entry_body(PROBES_SM80.ptx, "half_bf16_convert");
    assert!(
        cvt.contains("cvt.rn.bf16.f32"),
        "half_bf16_convert lacks cvt.rn.bf16.f32:\n{cvt}"
    );
    let f = entry_body(tests::PROBES.ptx, "half_f16x2_ops");
    for insn in ["fma.rn.f16x2", "add.rn.f16x2", "mul.rn.f16x2"] {
        assert!(f.contains(insn), "half_f16x2_ops lacks {insn}:\n{f}");
    }
    assert!(
        !tests::PROBES.ptx.contains("half_bf16"),
        "the sm_80 probes must not be in the baseline module"
    );
}
