//! Warp-level tensor-core MMA (`cuda_std::mma`): the probes of `kernels/src/mma.rs` (in the
//! sm_80 variant `PROBES_SM80`) against a CPU model, bit for bit, for `.f16`, `.bf16` and
//! `.tf32`; the host-side fragment model; and the sm_80 PTX's instructions.
//!
//! Inputs are small integers (`A`, `B` in -3..=3) and `C` is an integer plus one half, so
//! every product and partial sum is exact in `f32` (|sum| < 2⁸), whatever the order of the
//! hardware's additions, and no `D` element is zero (no signed-zero question): the GPU's `D`
//! must equal the CPU's exactly. The launches run on the GPU where there is one (skipped,
//! with a message, on GPUs older than sm_80) and otherwise on the CPU emulator
//! (`cuda_emu`), whose tensor-core model is exact on these inputs.

use cuda_std::mma::{
    Bf16, Element, F16, FragA, FragB, M16N8K8, M16N8K16, MmaShape, Shape, Tf32, layout,
};
use cust::{
    function::LaunchConfig,
    memory::{DeviceBuffer, DeviceCopy},
};
use host::Gpu;
use probes::mma::{self as probe, LDMATRIX_RAW_WORDS};
use tests::{PROBES_SM80, probes as gpu};
use tests::{dtoh, htod, launch_probe as launch, sm80_module, zeros};

// ---------------------------------------------------------------------------------------
// CPU model

/// A deterministic integer in `lo..=hi` for index `i` of stream `seed`.
fn small_int(seed: u32, i: usize, lo: i32, hi: i32) -> f32 {
    let mut x = (i as u32).wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    (lo + (x % (hi - lo + 1) as u32) as i32) as f32
}

/// `count` row-major matrices of `len` small integers each (`A` or `B`).
fn operand(seed: u32, count: usize, len: usize) -> Vec<f32> {
    (0..count * len)
        .map(|i| small_int(seed, i, -3, 3))
        .collect()
}

/// `count` 16×8 accumulators: integers in -8..=8 plus 0.5.
fn accumulator(seed: u32, count: usize) -> Vec<f32> {
    (0..count * 128)
        .map(|i| small_int(seed, i, -8, 8) + 0.5)
        .collect()
}

/// `D = A·B + C` for one problem: `a` m×k, `b` k×n, `c` m×n, all row-major, in `f32`
/// (exact for the inputs above, so the order of the additions does not matter).
fn mma_reference(a: &[f32], b: &[f32], c: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut d = c.to_vec();
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                d[i * n + j] += a[i * k + p] * b[p * n + j];
            }
        }
    }
    d
}

/// [`mma_reference`] over `count` consecutive problems of shape `S`.
fn mma_reference_all<S: Shape>(a: &[f32], b: &[f32], c: &[f32], count: usize) -> Vec<f32> {
    let (m, n, k) = (S::M as usize, S::N as usize, S::K as usize);
    (0..count)
        .flat_map(|p| {
            mma_reference(
                &a[p * m * k..(p + 1) * m * k],
                &b[p * k * n..(p + 1) * k * n],
                &c[p * m * n..(p + 1) * m * n],
                m,
                n,
                k,
            )
        })
        .collect()
}

/// Host-side element conversion: the exact `f32` to the type's bit pattern.
trait HostElement: Element {
    /// The storage form of `x`.
    fn encode(x: f32) -> Self::Storage;
    /// The bits of a stored element, as the fragment builders take them.
    fn word(x: Self::Storage) -> u32;
    /// The value of an element's bits.
    fn decode(bits: u32) -> f32;
}
impl HostElement for F16 {
    fn encode(x: f32) -> u16 {
        half::f16::from_f32(x).to_bits()
    }
    fn word(x: u16) -> u32 {
        x.into()
    }
    fn decode(bits: u32) -> f32 {
        half::f16::from_bits(bits as u16).to_f32()
    }
}
impl HostElement for Bf16 {
    fn encode(x: f32) -> u16 {
        half::bf16::from_f32(x).to_bits()
    }
    fn word(x: u16) -> u32 {
        x.into()
    }
    fn decode(bits: u32) -> f32 {
        half::bf16::from_bits(bits as u16).to_f32()
    }
}
impl HostElement for Tf32 {
    fn encode(x: f32) -> f32 {
        x
    }
    fn word(x: f32) -> u32 {
        x.to_bits()
    }
    fn decode(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
}

fn encode<E: HostElement>(x: &[f32]) -> Vec<E::Storage> {
    x.iter().map(|&v| E::encode(v)).collect()
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// `B` (k×n, row-major) of each of `count` problems transposed to column-major.
fn col_major(b: &[f32], k: usize, n: usize) -> Vec<f32> {
    b.chunks(k * n)
        .flat_map(|m| (0..n * k).map(move |i| m[(i % k) * n + i / k]))
        .collect()
}

/// The warp's fragments of `A` (m×k) and `B` (k×n), built on the host by the documented
/// map, multiplied by the CPU model of `mma.sync`: each lane's `D` registers, read back
/// into a row-major 16×8 matrix. The model scatters the fragments' elements to their
/// `(row, col)` and computes `A·B + C` there, so it equals [`mma_reference`] exactly when
/// the maps are one-to-one.
fn mma_on_fragments<S: MmaShape<E>, E: HostElement>(a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
    let (m, n, k) = (S::M as usize, S::N as usize, S::K as usize);
    let mut a2 = vec![f32::NAN; m * k];
    let mut b2 = vec![f32::NAN; k * n];
    for lane in 0..32 {
        let fa = FragA::<S, E>::from_fn(lane, |r, col| {
            E::word(E::encode(a[r as usize * k + col as usize]))
        });
        let fb = FragB::<S, E>::from_fn(lane, |kk, nn| {
            E::word(E::encode(b[kk as usize * n + nn as usize]))
        });
        for (reg, word) in fa.regs().into_iter().enumerate() {
            for h in 0..E::PER_REG {
                let (r, col) = S::a_coord(lane, reg as u32, h);
                a2[r as usize * k + col as usize] = E::decode(word >> (16 * h) & mask::<E>());
            }
        }
        for (reg, word) in fb.regs().into_iter().enumerate() {
            for h in 0..E::PER_REG {
                let (kk, nn) = S::b_coord(lane, reg as u32, h);
                b2[kk as usize * n + nn as usize] = E::decode(word >> (16 * h) & mask::<E>());
            }
        }
    }
    assert!(
        !a2.iter().chain(&b2).any(|x| x.is_nan()),
        "an element no lane holds"
    );
    let d = mma_reference(&a2, &b2, c, m, n, k);
    // Through the accumulator map: lane, register → (row, col) and back.
    let mut out = vec![f32::NAN; m * n];
    for lane in 0..32 {
        for reg in 0..4 {
            let (r, col) = layout::acc_m16n8(lane, reg);
            out[(r * 8 + col) as usize] = d[(r * 8 + col) as usize];
        }
    }
    out
}

fn mask<E: Element>() -> u32 {
    if E::PER_REG == 2 { 0xffff } else { u32::MAX }
}

#[test]
fn fragment_model_equals_the_matrix_product() {
    fn check<S: MmaShape<E>, E: HostElement>(what: &str) {
        let (m, n, k) = (S::M as usize, S::N as usize, S::K as usize);
        let (a, b, c) = (
            operand(1, 1, m * k),
            operand(2, 1, k * n),
            accumulator(3, 1),
        );
        assert_eq!(
            bits(&mma_on_fragments::<S, E>(&a, &b, &c)),
            bits(&mma_reference(&a, &b, &c, m, n, k)),
            "{what}"
        );
    }
    check::<M16N8K16, F16>("f16");
    check::<M16N8K16, Bf16>("bf16");
    check::<M16N8K8, Tf32>("tf32");
}

#[test]
fn inputs_are_exact_in_every_element_type() {
    for x in operand(1, 4, 256).into_iter().chain(accumulator(3, 4)) {
        assert_eq!(half::f16::from_f32(x).to_f32(), x);
        assert_eq!(half::bf16::from_f32(x).to_f32(), x);
        // tf32 keeps 10 mantissa bits: the low 13 are zero.
        assert_eq!(x.to_bits() & 0x1fff, 0, "{x} is not exact in tf32");
    }
}

#[test]
fn sm80_ptx_holds_the_tensor_core_instructions() {
    for instruction in [
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    ] {
        assert!(
            PROBES_SM80.ptx.contains(instruction),
            "`{instruction}` missing from the sm_80 probes PTX"
        );
    }
    // The baseline (sm_70) module has no sm_80 probe.
    assert!(!tests::PROBES.ptx.contains("mma.sync"));
}

// ---------------------------------------------------------------------------------------
// GPU

/// Runs `mma_global_*` for `S`, `E` on `warps` problems, `B` row- and column-major.
fn check_global<S: MmaShape<E>, E: HostElement>(
    gpu: &Gpu,
    what: &str,
    run: impl Fn(
        &DeviceBuffer<E::Storage>,
        &DeviceBuffer<E::Storage>,
        &DeviceBuffer<f32>,
        &mut DeviceBuffer<f32>,
        u32,
    ),
) where
    E::Storage: DeviceCopy,
{
    let warps = 4;
    let (m, n, k) = (S::M as usize, S::N as usize, S::K as usize);
    let (a, b, c) = (
        operand(11, warps, m * k),
        operand(12, warps, k * n),
        accumulator(13, warps),
    );
    let expected = bits(&mma_reference_all::<S>(&a, &b, &c, warps));
    for b_col_major in [0, 1] {
        let b_in = if b_col_major == 1 {
            col_major(&b, k, n)
        } else {
            b.clone()
        };
        let (da, db, dc) = (
            htod(gpu, &encode::<E>(&a)),
            htod(gpu, &encode::<E>(&b_in)),
            htod(gpu, &c),
        );
        let mut dd = zeros::<f32>(gpu, warps * m * n);
        run(&da, &db, &dc, &mut dd, b_col_major);
        assert_eq!(
            bits(&dtoh(&dd)),
            expected,
            "{what}, B column-major: {b_col_major}"
        );
    }
}

#[test]
fn mma_from_global_memory_matches_the_cpu_bit_for_bit() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    let cfg = LaunchConfig::new(1, 128, 0);
    check_global::<M16N8K16, F16>(&gpu, "f16", |a, b, c, d, col| {
        launch!(&gpu, &module, probe::mma_global_f16, cfg, (a, b, c, d, col));
    });
    check_global::<M16N8K16, Bf16>(&gpu, "bf16", |a, b, c, d, col| {
        launch!(
            &gpu,
            &module,
            probe::mma_global_bf16,
            cfg,
            (a, b, c, d, col)
        );
    });
    check_global::<M16N8K8, Tf32>(&gpu, "tf32", |a, b, c, d, col| {
        launch!(
            &gpu,
            &module,
            probe::mma_global_tf32,
            cfg,
            (a, b, c, d, col)
        );
    });
}

#[test]
fn mma_through_ldmatrix_matches_the_cpu_bit_for_bit() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    let blocks = 3;
    let cfg = LaunchConfig::new(blocks as u32, 32, 0);
    let c = accumulator(23, blocks);
    // f16 and bf16: `B` loaded row-major (`.trans`) and column-major.
    let (a, b) = (operand(21, blocks, 256), operand(22, blocks, 128));
    let expected = bits(&mma_reference_all::<M16N8K16>(&a, &b, &c, blocks));
    let expected_twice: Vec<u32> = expected
        .chunks(128)
        .flat_map(|d| d.iter().chain(d).copied())
        .collect();
    let dc = htod(&gpu, &c);
    for (what, da, db) in [
        ("f16", encode::<F16>(&a), encode::<F16>(&b)),
        ("bf16", encode::<Bf16>(&a), encode::<Bf16>(&b)),
    ] {
        let (da, db) = (htod(&gpu, &da), htod(&gpu, &db));
        let mut dd = zeros::<f32>(&gpu, blocks * 256);
        let kernel = if what == "f16" {
            probe::mma_ldmatrix_f16
        } else {
            probe::mma_ldmatrix_bf16
        };
        launch!(&gpu, &module, kernel, cfg, (&da, &db, &dc, &mut dd));
        assert_eq!(
            bits(&dtoh(&dd)),
            expected_twice,
            "{what}: per block, D with B row-major (x2.trans) then column-major (x2)"
        );
    }
    // tf32.
    let (a, b) = (operand(31, blocks, 128), operand(32, blocks, 64));
    let expected = bits(&mma_reference_all::<M16N8K8>(&a, &b, &c, blocks));
    let (da, db) = (htod(&gpu, &a), htod(&gpu, &b));
    let mut dd = zeros::<f32>(&gpu, blocks * 128);
    launch!(
        &gpu,
        &module,
        probe::mma_ldmatrix_tf32,
        cfg,
        (&da, &db, &dc, &mut dd)
    );
    assert_eq!(bits(&dtoh(&dd)), expected, "tf32 through ldmatrix");
}

#[test]
fn ldmatrix_registers_follow_the_ptx_layout() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    // 32 rows × 8 columns, element (r, c) = 100·r + c: four 8×8 matrices stacked.
    let src: Vec<u16> = (0..256u16).map(|i| 100 * (i / 8) + i % 8).collect();
    let dsrc = htod(&gpu, &src);
    let mut out = zeros::<u32>(&gpu, 32 * LDMATRIX_RAW_WORDS);
    launch!(
        &gpu,
        &module,
        probe::mma_ldmatrix_raw,
        LaunchConfig::new(1, 32, 0),
        (&dsrc, &mut out)
    );
    let got = dtoh(&out);
    // Register of matrix `i` for lane `l`: element `h` at (row, col) of that matrix.
    let word = |lane: u32, i: u32, trans: bool| -> u32 {
        (0..2)
            .map(|h| {
                let (r, c) = layout::ldmatrix_b16(lane, h);
                let (r, c) = if trans { (c, r) } else { (r, c) };
                u32::from(src[((8 * i + r) * 8 + c) as usize]) << (16 * h)
            })
            .fold(0, |x, y| x | y)
    };
    for lane in 0..32u32 {
        let mut expected = Vec::new();
        for trans in [false, true] {
            for count in [1, 2, 4] {
                expected.extend((0..count).map(|i| word(lane, i, trans)));
            }
        }
        let l = lane as usize;
        assert_eq!(
            &got[l * LDMATRIX_RAW_WORDS..(l + 1) * LDMATRIX_RAW_WORDS],
            &expected[..],
            "lane {lane}: x1, x2, x4, x1.trans, x2.trans, x4.trans"
        );
    }
}
