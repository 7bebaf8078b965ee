//! `cuda_std::half`'s FP8 types on the device against the host: the probes of
//! `kernels/src/fp8.rs` (in the sm_90a variant `PROBES_SM90A`, the one built for sm_89 or
//! later) convert all 256 codes of each format to `f32` and about a million `f32` inputs to
//! each format, with the `cvt` instructions on a GPU and in software on the CPU emulator.
//! Both are compared with a reference written here from the formats' definition (OCP 8-bit
//! Floating Point Specification, v1.0: the value of each code by its formula, and a
//! conversion that picks the nearest of those values, ties to the even code, saturating as
//! `cvt.rn.satfinite` does), which shares no code with `cuda_std`'s software conversions
//! (`from_f32_soft`, `to_f32_soft`); the host's software conversions are compared with it
//! too, so on a GPU the `cvt` results equal the host's. The results must be identical bit
//! for bit, except that a NaN only has to be a NaN (payload and sign are not specified the
//! same way). Skipped, with a message, on GPUs other than compute capability 9.0 (the module
//! is sm_90a PTX); the emulator reports 9.0.

use cuda_std::half::{F8E4M3, F8E5M2};
use cust::function::LaunchConfig;
use probes::fp8 as probe;
use std::sync::OnceLock;
use tests::{dtoh, htod, launch_probe as launch, zeros};

include!(env!("PROBES_SM90A_MODULE"));

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// The `f32` inputs: every FP8 value of both formats, the midpoints between neighbours and
/// the `f32`s next to both, ±0, ±∞, NaN, the saturation boundaries, then random bit patterns
/// (half of them with exponents in FP8's range, 2⁻²⁰..2¹⁷), about 10⁶ in all.
fn inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        464.0,
        61440.0,
    ];
    let decoders: [fn(u8) -> f32; 2] = [
        |b| F8E4M3::from_bits(b).to_f32_soft(),
        |b| F8E5M2::from_bits(b).to_f32_soft(),
    ];
    for d in decoders {
        for b in 0..=255u8 {
            let (lo, hi) = (d(b), d(b.wrapping_add(1)));
            let mut near = |x: f32| {
                if x.is_finite() {
                    v.extend([
                        x,
                        f32::from_bits(x.to_bits() + 1),
                        f32::from_bits(x.to_bits().saturating_sub(1)),
                    ]);
                }
            };
            near(lo);
            if lo.is_finite() && hi.is_finite() {
                near(((f64::from(lo) + f64::from(hi)) / 2.0) as f32);
            }
        }
    }
    let mut rng = Rng(0x5eed_f8f8);
    while v.len() < 1 << 20 {
        let r = rng.next();
        v.push(f32::from_bits(r as u32));
        let in_range = ((r >> 32) as u32 & 0x807f_ffff) | ((107 + (r % 38) as u32) << 23);
        v.push(f32::from_bits(in_range));
    }
    v
}

/// An FP8 format as the OCP specification defines it (v1.0, §5.3.2, Table 1).
struct Format {
    exponent_bits: u32,
    mantissa_bits: u32,
    bias: i32,
    /// E5M2 has IEEE specials (all-ones exponent: ±∞ and NaNs); E4M3 has no infinities and
    /// only `S.1111.111` is NaN.
    ieee_specials: bool,
    /// The non-negative finite codes and their values, in increasing value (code order).
    finite: OnceLock<Vec<(u8, f64)>>,
}

static E4M3: Format = Format {
    exponent_bits: 4,
    mantissa_bits: 3,
    bias: 7,
    ieee_specials: false,
    finite: OnceLock::new(),
};
static E5M2: Format = Format {
    exponent_bits: 5,
    mantissa_bits: 2,
    bias: 15,
    ieee_specials: true,
    finite: OnceLock::new(),
};

impl Format {
    /// The value of `code`, from the formula: (−1)^S × 2^(1−bias) × 0.M for a zero
    /// exponent field, (−1)^S × 2^(E−bias) × 1.M otherwise (exact in `f64`).
    fn value(&self, code: u8) -> f64 {
        let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = i32::from(code >> self.mantissa_bits) & ((1 << self.exponent_bits) - 1);
        let m = i32::from(code) & ((1 << self.mantissa_bits) - 1);
        let all_ones = (1 << self.exponent_bits) - 1;
        if e == all_ones && self.ieee_specials {
            return if m == 0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        if e == all_ones && m == (1 << self.mantissa_bits) - 1 {
            return f64::NAN;
        }
        let fraction = f64::from(m) / f64::from(1 << self.mantissa_bits);
        if e == 0 {
            sign * fraction * 2f64.powi(1 - self.bias)
        } else {
            sign * (1.0 + fraction) * 2f64.powi(e - self.bias)
        }
    }

    /// `x` converted with round-to-nearest-even and saturation to the largest finite value
    /// (`cvt.rn.satfinite`: ±∞ and magnitudes beyond it become ± that value), found by
    /// searching the values of the codes, not by moving bits; NaN gives a NaN code.
    fn encode(&self, x: f32) -> u8 {
        let codes = self.finite.get_or_init(|| {
            (0..=0x7f)
                .map(|c| (c, self.value(c)))
                .filter(|(_, v)| v.is_finite())
                .collect()
        });
        if x.is_nan() {
            return 0x7f;
        }
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = f64::from(x).abs();
        let (max_code, max) = codes[codes.len() - 1];
        if a >= max {
            return sign | max_code;
        }
        // The last code not above `a`, and the next one.
        let i = codes.partition_point(|&(_, v)| v <= a) - 1;
        let ((lo_code, lo), (hi_code, hi)) = (codes[i], codes[i + 1]);
        let code = match (a - lo).partial_cmp(&(hi - a)) {
            Some(std::cmp::Ordering::Less) => lo_code,
            Some(std::cmp::Ordering::Greater) => hi_code,
            _ if lo_code % 2 == 0 => lo_code,
            _ => hi_code,
        };
        sign | code
    }
}

/// Whether `gpu` and `host` agree: the same bits, or both NaN (`is_nan`).
fn same(gpu: u8, host: u8, is_nan: impl Fn(u8) -> bool) -> bool {
    gpu == host || (is_nan(gpu) && is_nan(host))
}

#[test]
fn the_inputs_cover_every_code() {
    let x = inputs();
    assert!(x.len() >= 1 << 20);
    let mut seen = [[false; 256]; 2];
    for &v in &x {
        seen[0][usize::from(F8E4M3::from_f32_soft(v).to_bits())] = true;
        seen[1][usize::from(F8E5M2::from_f32_soft(v).to_bits())] = true;
    }
    // Every code a conversion can produce: all but the non-canonical NaNs (and E5M2's ±∞,
    // which saturating conversions never produce).
    for b in 0..=255u8 {
        if b & 0x7f != 0x7f {
            assert!(seen[0][usize::from(b)], "e4m3 {b:#04x}");
        }
        if !matches!(b & 0x7f, 0x7c..=0x7f) {
            assert!(seen[1][usize::from(b)], "e5m2 {b:#04x}");
        }
    }
}

/// The host's software conversions agree with the reference on every code and input, so a
/// device that agrees with the reference agrees with the host.
#[test]
fn host_fp8_conversions_match_the_reference() {
    for b in 0..=255u8 {
        for (what, got, want) in [
            ("e4m3", F8E4M3::from_bits(b).to_f32_soft(), E4M3.value(b)),
            ("e5m2", F8E5M2::from_bits(b).to_f32_soft(), E5M2.value(b)),
        ] {
            assert!(
                f64::from(got).to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{what} {b:#04x}: {got:e} on the host, {want:e} by the formula"
            );
        }
    }
    let mut bad = Vec::new();
    for v in inputs() {
        let pairs = [
            (
                "e4m3",
                F8E4M3::from_f32_soft(v).to_bits(),
                E4M3.encode(v),
                0,
            ),
            (
                "e5m2",
                F8E5M2::from_f32_soft(v).to_bits(),
                E5M2.encode(v),
                1,
            ),
        ];
        for (what, host, reference, format) in pairs {
            let is_nan = |b: u8| [&E4M3, &E5M2][format].value(b).is_nan();
            if !same(host, reference, is_nan) {
                bad.push(format!(
                    "{what}({v:e} = {:#010x}): host {host:#04x}, reference {reference:#04x}",
                    v.to_bits()
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches, first: {:#?}",
        bad.len(),
        &bad[..bad.len().min(10)]
    );
}

#[test]
fn gpu_fp8_conversions_match_the_host() {
    let gpu = tests::probes();
    let cc = gpu
        .context()
        .compute_capability()
        .expect("compute capability");
    if (cc.major, cc.minor) != (9, 0) {
        eprintln!(
            "skipped: {} is not sm_90 (the FP8 probes are in the sm_90a variant)",
            gpu.name()
        );
        return;
    }
    let module = cust::module::Module::from_image_in(gpu.context(), &PROBES_SM90A)
        .expect("loading the sm_90a kernels variant");

    // All 256 codes to f32.
    let codes: Vec<u8> = (0..=255).collect();
    let codes_d = htod(&gpu, &codes);
    let (mut e4_d, mut e5_d) = (zeros::<f32>(&gpu, 256), zeros::<f32>(&gpu, 256));
    launch!(
        &gpu,
        &module,
        probe::fp8_to_f32,
        LaunchConfig::new(2, 128, 0),
        (&codes_d, &mut e4_d, &mut e5_d)
    );
    let (e4, e5) = (dtoh(&e4_d), dtoh(&e5_d));
    for b in 0..=255u8 {
        let i = usize::from(b);
        for (what, got, want) in [
            ("e4m3", e4[i], E4M3.value(b)),
            ("e5m2", e5[i], E5M2.value(b)),
        ] {
            assert!(
                f64::from(got).to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{what} {b:#04x}: {got:e} on the device, {want:e} by the formula"
            );
        }
    }

    // About 10⁶ f32 inputs to both formats.
    let x = inputs();
    let x_d = htod(&gpu, &x);
    let (mut e4_d, mut e5_d) = (zeros::<u8>(&gpu, x.len()), zeros::<u8>(&gpu, x.len()));
    launch!(
        &gpu,
        &module,
        probe::fp8_from_f32,
        LaunchConfig::new((x.len() as u32).div_ceil(256), 256, 0),
        (&x_d, &mut e4_d, &mut e5_d)
    );
    let (e4, e5) = (dtoh(&e4_d), dtoh(&e5_d));
    let mut bad = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        let (h4, h5) = (E4M3.encode(v), E5M2.encode(v));
        if !same(e4[i], h4, |b| E4M3.value(b).is_nan()) {
            bad.push(format!(
                "e4m3({v:e} = {:#010x}): device {:#04x}, reference {h4:#04x}",
                v.to_bits(),
                e4[i]
            ));
        }
        if !same(e5[i], h5, |b| E5M2.value(b).is_nan()) {
            bad.push(format!(
                "e5m2({v:e} = {:#010x}): device {:#04x}, reference {h5:#04x}",
                v.to_bits(),
                e5[i]
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} mismatches of {} conversions, first: {:#?}",
        bad.len(),
        2 * x.len(),
        &bad[..bad.len().min(10)]
    );
}
