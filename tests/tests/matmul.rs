//! Tensor-core GEMM (`host::matmul`, kernels `kernels::gemm_tc`): `C = A·Bᵀ` with `A` m×k,
//! `B` n×k and `C` m×n row-major, on both kernel families (`wgmma` on sm_90, without and
//! with clusters of two sharing `B`; `mma.sync` on sm_80+) and the three precisions (bf16,
//! f16, TF32), against CPU references.
//!
//! - Exact: inputs are small integers (−3..=3), so every product and every partial sum
//!   (|sum| ≤ 9·k < 2²⁴) is exact in `f32` whatever the order or rounding mode of the
//!   tensor cores' additions, and TF32 holds them exactly; the one rounding left is the
//!   final conversion to the output type, which the CPU does the same way (to nearest, ties
//!   to even). So the GPU's result must equal the CPU's bit for bit (a zero is compared by
//!   value: its sign depends on the order of the additions). Shapes include ragged ones
//!   (m, n not multiples of the 128×256 tiles, k not a multiple of the K steps).
//! - Random: inputs uniform in [−1, 1) at 1024×1536×2048; on 4096 sampled elements the
//!   error against an `f64` reference stays within `host::matmul::error_bound` (stated
//!   there: `(2·u_in + u_in² + γ_k)·Σ|a||b|` for the accumulation, `γ_k = k·u/(1 − k·u)`
//!   with `u = 2⁻²³`, plus `u_out·|c|` for the output rounding, `u_out` = 2⁻⁸ bf16, 2⁻¹¹
//!   f16, 2⁻²⁴ f32; `u_in` = 2⁻¹¹ for TF32's rounded inputs, 0 otherwise), and every
//!   element is finite.
//!
//! - FP8 (`host::matmul_fp8`, e4m3 and e5m2 inputs, bf16 and f32 out, per-tensor scales):
//!   exact against a CPU model of the FP8 products on inputs whose sums are exact (see
//!   `fp8_exact_case`), and bad scales, shapes and architectures refused by name.
//!
//! GPU tests skip, with a message, on GPUs that cannot run a family (`wgmma` needs exactly
//! sm_90, `mma.sync` sm_80 or later). Without a GPU (or with `FERROCUDA_DEVICE=cpu`) the
//! `wgmma` and `mma.sync` tests run on the CPU emulator, at smaller shapes
//! (`EMULATOR_EXACT_SHAPES`, `random_case`), the cluster variant included.

use cuda_std::half::{F8E4M3, F8E5M2, bf16, f16};
use cust::device::DeviceAttribute;
use host::Gpu;
use host::matmul::{TcElem, TcKernel, Tf32, error_bound, gemm, reference_f64};
use host::matmul_fp8::{Fp8Elem, Fp8Out, gemm_fp8, reference_f64 as fp8_reference};
use kernels::gemm_tc::mma_sync::MMA_SHARED_BYTES;
use tests::{gpu, mix};

/// Whether `gpu` runs `kernel`'s family; prints why not. The CPU emulator runs every
/// family (it emulates `wgmma`, TMA, `mbarrier` and clusters, the sm_90a variant's host body
/// included, and `mma.sync`).
fn runs(gpu: &Gpu, kernel: TcKernel) -> bool {
    if gpu.is_emulator() {
        return true;
    }
    let cc = gpu
        .context()
        .compute_capability()
        .expect("compute capability");
    // mma.sync's cp.async ring needs more shared memory per block than sm_86/sm_89 give
    // (99 KiB): there the launch is refused with `CudaError::SharedMemory`.
    let shared = gpu
        .context()
        .attribute(DeviceAttribute::MaxSharedMemoryPerBlockOptin)
        .unwrap_or(i32::MAX);
    let ok = match kernel {
        TcKernel::Wgmma
        | TcKernel::WgmmaCluster2
        | TcKernel::WgmmaPingpong
        | TcKernel::WgmmaPingpongCluster2
        | TcKernel::WgmmaRs
        | TcKernel::WgmmaRsCluster2 => cc.major == 9 && cc.minor == 0,
        TcKernel::MmaSync => cc.major >= 8 && i64::from(shared) >= i64::from(MMA_SHARED_BYTES),
    };
    if !ok {
        eprintln!(
            "skipped: {} ({cc}, {shared} bytes of shared memory per block) cannot run the \
             {kernel} GEMM (wgmma: sm_90 only; mma.sync: sm_80+ with {MMA_SHARED_BYTES} bytes)",
            gpu.name()
        );
    }
    ok
}

/// `len` small integers in −3..=3.
fn small_ints<T: TcElem>(seed: u64, len: usize) -> Vec<T::Elem> {
    (0..len)
        .map(|i| T::from_f32((mix(seed, i) % 7) as f32 - 3.0))
        .collect()
}

/// `len` values uniform in [−1, 1), rounded to `T`.
fn uniform<T: TcElem>(seed: u64, len: usize) -> Vec<T::Elem> {
    (0..len)
        .map(|i| T::from_f32(((mix(seed, i) >> 40) as f32 / (1u64 << 23) as f32) - 1.0))
        .collect()
}

/// The exact test for one family, type and shape: GPU result equals the CPU's bit for bit.
fn exact_case<T: TcElem>(gpu: &Gpu, kernel: TcKernel, (m, n, k): (usize, usize, usize)) {
    let a = small_ints::<T>(1 + m as u64, m * k);
    let b = small_ints::<T>(2 + n as u64, n * k);
    let c = gemm::<T>(gpu, kernel, m, n, k, &a, &b)
        .unwrap_or_else(|e| panic!("{} {kernel} {m}×{n}×{k}: {e}", T::NAME));
    assert_eq!(c.len(), m * n);
    let mut wrong = 0usize;
    for i in 0..m {
        for j in 0..n {
            // Exact in f32 (|sum| < 2²⁴), rounded once to T.
            let sum: f32 = (0..k)
                .map(|p| (T::to_f64(a[i * k + p]) * T::to_f64(b[j * k + p])) as f32)
                .sum();
            let want = T::from_f32(sum);
            let got = c[i * n + j];
            let same = got == want || (T::to_f64(got) == 0.0 && T::to_f64(want) == 0.0);
            if !same {
                if wrong < 5 {
                    eprintln!(
                        "{} {kernel} {m}×{n}×{k}: C[{i}][{j}] = {got:?}, expected {want:?}",
                        T::NAME
                    );
                }
                wrong += 1;
            }
        }
    }
    assert_eq!(
        wrong,
        0,
        "{} {kernel} {m}×{n}×{k}: {wrong} of {} elements differ from the CPU",
        T::NAME,
        m * n
    );
}

/// Shapes of the exact tests: whole tiles, ragged m and n (200×328, 257×513), a single
/// element, k not a multiple of any K step (136 = 2·64 + 8, 520), a long k. The `wgmma`
/// kernels store C by TMA where its rows are a multiple of 16 bytes (n = 256, 328, 24,
/// 2056; and 260 for f32) and from registers otherwise (n = 1, 513; 260 for bf16/f16): both
/// paths, clipped tiles and boxes wholly outside C (200×328) are covered. For the clusters
/// of two along M, an odd number of tile rows (1, 3, 17: a block past the last row that
/// reads zeros and stores nothing) and an even one (2). The last shape has more tiles (17 ×
/// 9 = 153) than an H100 or H200 has multiprocessors and more pairs of tile rows × tile
/// columns (9 × 9 = 81) than clusters of two fit at once, so the persistent blocks and
/// clusters each compute several tiles.
const EXACT_SHAPES: [(usize, usize, usize); 8] = [
    (128, 256, 64),
    (200, 328, 64),
    (1, 1, 8),
    (257, 513, 136),
    (300, 260, 520),
    (64, 24, 2056),
    (2176, 2056, 8),
    // More 128 × 176 ping-pong tiles (11 × 14 = 154) than multiprocessors and more K steps
    // (7) than stages (5): both consumer warpgroups of a block compute tiles, taking turns.
    (1408, 2464, 392),
];

/// The exact tests' shapes on the CPU emulator, where a debug build emulates the full list
/// too slowly: ragged m and n in both tile dimensions (several tiles, so each persistent
/// block computes more than one and the ring's phases carry on across tiles), k not a
/// multiple of the K steps (136 = 2·64 + 8), and a single element.
const EMULATOR_EXACT_SHAPES: [(usize, usize, usize); 3] =
    [(200, 328, 64), (1, 1, 8), (257, 260, 136)];

/// The ping-pong kernel's extra shape on the emulator: 3 × 3 tiles of 128 × 176 (both
/// ragged) and 7 K steps (the last ragged) for a ring of 5 stages, so that on a host of up
/// to 4 cores (the emulator's multiprocessors: the persistent grid) both consumer
/// warpgroups of a block compute tiles and the second skips the first's stages.
const EMULATOR_PINGPONG_SHAPE: (usize, usize, usize) = (260, 360, 392);

fn exact_all_types(kernel: TcKernel) {
    let gpu = gpu();
    if !runs(&gpu, kernel) {
        return;
    }
    let mut shapes = if gpu.is_emulator() {
        EMULATOR_EXACT_SHAPES.to_vec()
    } else {
        EXACT_SHAPES.to_vec()
    };
    if gpu.is_emulator() && kernel.is_pingpong() {
        shapes.push(EMULATOR_PINGPONG_SHAPE);
    }
    for shape in shapes {
        if has::<bf16>(kernel) {
            exact_case::<bf16>(&gpu, kernel, shape);
            exact_case::<f16>(&gpu, kernel, shape);
        }
        if has::<Tf32>(kernel) {
            exact_case::<Tf32>(&gpu, kernel, shape);
        }
    }
}

/// Whether type `T` has `kernel` (the RS forms are TF32's only, the ping-pong form bf16's
/// and f16's).
fn has<T: TcElem>(kernel: TcKernel) -> bool {
    T::KERNELS.contains(&kernel)
}

/// On a GPU, or on the CPU emulator at [`EMULATOR_EXACT_SHAPES`].
#[test]
fn wgmma_integer_inputs_equal_the_cpu_bit_for_bit() {
    exact_all_types(TcKernel::Wgmma);
}

/// `TcKernel::best_for` picks a kernel this device runs, and it gives the CPU's bits: on an
/// H200 the cooperative kernel at 2048² (fewer than two ping-pong tiles per multiprocessor)
/// and the ping-pong form in clusters at 4096²; on the emulator whatever its
/// multiprocessor count makes of the emulator's shapes.
#[test]
fn the_best_kernel_for_the_device_gives_the_cpu_bits() {
    let gpu = gpu();
    let shapes = if gpu.is_emulator() {
        vec![EMULATOR_PINGPONG_SHAPE, (1, 1, 8)]
    } else {
        vec![(2048, 2048, 64), (4096, 4096, 64)]
    };
    for (m, n, k) in shapes {
        let kernel = TcKernel::best_for::<bf16>(&gpu, m, n).expect("best kernel");
        assert_eq!(
            TcKernel::best_for::<f16>(&gpu, m, n).expect("best kernel"),
            kernel
        );
        if runs(&gpu, kernel) {
            eprintln!("{}: {m}×{n}: {kernel}", gpu.name());
            exact_case::<bf16>(&gpu, kernel, (m, n, k));
            exact_case::<f16>(&gpu, kernel, (m, n, k));
        }
        let kernel = TcKernel::best_for::<Tf32>(&gpu, m, n).expect("best kernel");
        if runs(&gpu, kernel) {
            exact_case::<Tf32>(&gpu, kernel, (m, n, k));
        }
    }
}

#[test]
fn wgmma_cluster2_integer_inputs_equal_the_cpu_bit_for_bit() {
    exact_all_types(TcKernel::WgmmaCluster2);
}

/// The ping-pong form (bf16, f16): on a GPU, or on the CPU emulator at
/// [`EMULATOR_EXACT_SHAPES`] (257×260: 3 × 2 tiles of 128 × 176, so with fewer blocks than
/// tiles a consumer warpgroup computes two and skips the other's stages between them).
#[test]
fn wgmma_pingpong_integer_inputs_equal_the_cpu_bit_for_bit() {
    exact_all_types(TcKernel::WgmmaPingpong);
    exact_all_types(TcKernel::WgmmaPingpongCluster2);
}

/// TF32 with `A` rounded in registers (the RS form), without and with clusters: on a GPU,
/// or on the CPU emulator at [`EMULATOR_EXACT_SHAPES`].
#[test]
fn wgmma_rs_tf32_integer_inputs_equal_the_cpu_bit_for_bit() {
    exact_all_types(TcKernel::WgmmaRs);
    exact_all_types(TcKernel::WgmmaRsCluster2);
}

/// On a GPU, or on the CPU emulator at [`EMULATOR_EXACT_SHAPES`].
#[test]
fn mma_sync_integer_inputs_equal_the_cpu_bit_for_bit() {
    exact_all_types(TcKernel::MmaSync);
}

/// The emulator's output for one family, type and shape equals the GPU's bit for bit on the
/// same integer inputs (bits compared through the exact `f64` value, the sign of zero
/// included).
fn emulator_equals_gpu<T: TcElem>(
    gpu: &Gpu,
    emulator: &Gpu,
    kernel: TcKernel,
    (m, n, k): (usize, usize, usize),
) {
    let a = small_ints::<T>(1 + m as u64, m * k);
    let b = small_ints::<T>(2 + n as u64, n * k);
    let on = |dev: &Gpu| {
        // Buffers are made in the current context: the device's own.
        cust::context::CurrentContext::set_current(dev.context());
        gemm::<T>(dev, kernel, m, n, k, &a, &b)
            .unwrap_or_else(|e| panic!("{} {kernel} {m}×{n}×{k} on {}: {e}", T::NAME, dev.name()))
    };
    let (g, e) = (on(gpu), on(emulator));
    let differ = g
        .iter()
        .zip(&e)
        .filter(|&(&x, &y)| T::to_f64(x).to_bits() != T::to_f64(y).to_bits())
        .count();
    assert_eq!(
        differ,
        0,
        "{} {kernel} {m}×{n}×{k}: {differ} of {} elements differ between {} and the emulator",
        T::NAME,
        m * n,
        gpu.name()
    );
}

/// On a GPU (the bundle's run): every family the GPU runs, at the emulator's exact shapes,
/// and on sm_90 the FP8 GEMM (e4m3 → bf16, e5m2 → f32) at [`FP8_EMULATOR_SHAPES`], gives
/// the same bits on the GPU and on the CPU emulator in the same process. Without a
/// GPU there is nothing to compare with: skipped, with a message.
#[test]
fn integer_gemms_on_the_emulator_equal_the_gpu_bit_for_bit() {
    let gpu = gpu();
    if gpu.is_emulator() {
        eprintln!("skipped: no GPU to compare the emulator's output with");
        return;
    }
    let emulator = Gpu::emulator(&host::KERNELS).expect("the CPU emulator");
    for kernel in TcKernel::ALL {
        if !runs(&gpu, kernel) {
            continue;
        }
        for &shape in &EMULATOR_EXACT_SHAPES {
            if has::<bf16>(kernel) {
                emulator_equals_gpu::<bf16>(&gpu, &emulator, kernel, shape);
                emulator_equals_gpu::<f16>(&gpu, &emulator, kernel, shape);
            }
            if has::<Tf32>(kernel) {
                emulator_equals_gpu::<Tf32>(&gpu, &emulator, kernel, shape);
            }
        }
        eprintln!("{kernel}: the emulator equals {} bit for bit", gpu.name());
    }
    if runs(&gpu, TcKernel::Wgmma) {
        for &shape in &FP8_EMULATOR_SHAPES {
            fp8_emulator_equals_gpu::<F8E4M3, bf16>(&gpu, &emulator, shape);
            fp8_emulator_equals_gpu::<F8E5M2, f32>(&gpu, &emulator, shape);
        }
        eprintln!("FP8 wgmma: the emulator equals {} bit for bit", gpu.name());
    }
}

/// [`emulator_equals_gpu`] for the FP8 GEMM, on [`fp8_exact_case`]'s kind of inputs
/// (integers in −3..=3 times 2⁻³ and 2², scales 0.25 and 2).
fn fp8_emulator_equals_gpu<T: Fp8Elem, O: Fp8Out>(
    gpu: &Gpu,
    emulator: &Gpu,
    (m, n, k): (usize, usize, usize),
) {
    let ints = |seed: u64, len: usize, unit: f32| -> Vec<T> {
        (0..len)
            .map(|i| T::from_f32(((mix(seed, i) % 7) as f32 - 3.0) * unit))
            .collect()
    };
    let (a, b) = (
        ints(1 + m as u64, m * k, 0.125),
        ints(2 + n as u64, n * k, 4.0),
    );
    let on = |dev: &Gpu| -> Vec<O> {
        cust::context::CurrentContext::set_current(dev.context());
        gemm_fp8(dev, m, n, k, &a, &b, 0.25, 2.0).unwrap_or_else(|e| {
            panic!(
                "{} → {} {m}×{n}×{k} on {}: {e}",
                T::NAME,
                O::NAME,
                dev.name()
            )
        })
    };
    let (g, e) = (on(gpu), on(emulator));
    let differ = g
        .iter()
        .zip(&e)
        .filter(|(x, y)| x.to_f64().to_bits() != y.to_f64().to_bits())
        .count();
    assert_eq!(
        differ,
        0,
        "{} → {} {m}×{n}×{k}: {differ} of {} elements differ between {} and the emulator",
        T::NAME,
        O::NAME,
        m * n,
        gpu.name()
    );
}

/// The random test for one family and type (see the module docs for the bound).
fn random_case<T: TcElem>(gpu: &Gpu, kernel: TcKernel) {
    // On the CPU emulator a smaller ragged shape (2 × 2 tiles, 4 to 8 K steps): a debug
    // build emulates the GPU's shape too slowly.
    let (m, n, k) = if gpu.is_emulator() {
        (136, 264, 256)
    } else {
        (1024, 1536, 2048)
    };
    let a = uniform::<T>(11, m * k);
    let b = uniform::<T>(12, n * k);
    let c = gemm::<T>(gpu, kernel, m, n, k, &a, &b)
        .unwrap_or_else(|e| panic!("{} {kernel}: {e}", T::NAME));
    if let Some(i) = c.iter().position(|&x| !T::to_f64(x).is_finite()) {
        panic!(
            "{} {kernel}: C[{}][{}] = {:?} is not finite",
            T::NAME,
            i / n,
            i % n,
            c[i]
        );
    }
    let at: Vec<(usize, usize)> = (0..4096)
        .map(|s| {
            (
                (mix(13, s) % m as u64) as usize,
                (mix(14, s) % n as u64) as usize,
            )
        })
        .collect();
    let exact = reference_f64::<T>(k, &a, &b, &at);
    let mut worst = 0.0f64;
    for (&(i, j), &want) in at.iter().zip(&exact) {
        let abs_sum: f64 = (0..k)
            .map(|p| (T::to_f64(a[i * k + p]) * T::to_f64(b[j * k + p])).abs())
            .sum();
        let bound = error_bound::<T>(k, abs_sum, want);
        let got = T::to_f64(c[i * n + j]);
        let err = (got - want).abs();
        assert!(
            err <= bound,
            "{} {kernel}: C[{i}][{j}] = {got}, expected {want} (f64): error {err:e} > bound {bound:e}",
            T::NAME
        );
        worst = worst.max(err / bound);
    }
    eprintln!(
        "{} {kernel} {m}×{n}×{k}: largest error {worst:.3} of the bound",
        T::NAME
    );
}

fn random_all_types(kernel: TcKernel) {
    let gpu = gpu();
    if !runs(&gpu, kernel) {
        return;
    }
    if has::<bf16>(kernel) {
        random_case::<bf16>(&gpu, kernel);
        random_case::<f16>(&gpu, kernel);
    }
    if has::<Tf32>(kernel) {
        random_case::<Tf32>(&gpu, kernel);
    }
}

/// On a GPU, or on the CPU emulator at a smaller shape (see `random_case`).
#[test]
fn wgmma_random_inputs_are_within_the_error_bound() {
    random_all_types(TcKernel::Wgmma);
}

#[test]
fn wgmma_cluster2_random_inputs_are_within_the_error_bound() {
    random_all_types(TcKernel::WgmmaCluster2);
}

#[test]
fn wgmma_pingpong_random_inputs_are_within_the_error_bound() {
    random_all_types(TcKernel::WgmmaPingpong);
    random_all_types(TcKernel::WgmmaPingpongCluster2);
}

/// TF32 with `A` rounded in registers, without and with clusters: on a GPU, or on the CPU
/// emulator at a smaller shape (see `random_case`).
#[test]
fn wgmma_rs_tf32_random_inputs_are_within_the_error_bound() {
    random_all_types(TcKernel::WgmmaRs);
    random_all_types(TcKernel::WgmmaRsCluster2);
}

/// On random inputs (not exact sums) the RS form (`A` rounded in registers) gives the same
/// bits as the SS form (`A` rounded by the pass) with the same cluster size: both round to
/// nearest the same way and the tensor cores then see the same operands in the same order.
/// On a GPU at 1024×1536×2048 (ragged variant 1000×1500×1028), on the CPU emulator at
/// 136×264×256.
#[test]
fn wgmma_rs_tf32_equals_the_ss_form_bit_for_bit() {
    let gpu = gpu();
    let shapes: &[(usize, usize, usize)] = if gpu.is_emulator() {
        &[(136, 264, 256)]
    } else {
        &[(1024, 1536, 2048), (1000, 1500, 1028)]
    };
    for (ss, rs) in [
        (TcKernel::Wgmma, TcKernel::WgmmaRs),
        (TcKernel::WgmmaCluster2, TcKernel::WgmmaRsCluster2),
    ] {
        if !runs(&gpu, rs) {
            return;
        }
        for &(m, n, k) in shapes {
            let a = uniform::<Tf32>(21, m * k);
            let b = uniform::<Tf32>(22, n * k);
            let run = |kernel| {
                gemm::<Tf32>(&gpu, kernel, m, n, k, &a, &b)
                    .unwrap_or_else(|e| panic!("tf32 {kernel} {m}×{n}×{k}: {e}"))
            };
            let (c_ss, c_rs) = (run(ss), run(rs));
            let differ: Vec<usize> = (0..m * n)
                .filter(|&i| c_ss[i].to_bits() != c_rs[i].to_bits())
                .collect();
            if let Some(&i) = differ.first() {
                panic!(
                    "tf32 {m}×{n}×{k}: {} of {} elements differ between {ss} and {rs}, the \
                     first C[{}][{}] = {} ({ss}) and {} ({rs})",
                    differ.len(),
                    m * n,
                    i / n,
                    i % n,
                    c_ss[i],
                    c_rs[i]
                );
            }
        }
        eprintln!("tf32 {rs} equals {ss} bit for bit");
    }
}

/// On a GPU, or on the CPU emulator at a smaller shape (see `random_case`).
#[test]
fn mma_sync_random_inputs_are_within_the_error_bound() {
    random_all_types(TcKernel::MmaSync);
}

/// TF32 inputs are rounded to nearest (ties away from zero, `cvt.rna.tf32.f32`) on their way
/// into the tensor cores, by every kernel family, not truncated. One operand holds
/// `s·(1 + 3·2⁻¹²)` for small integers `s` (−3..=3), whose 13 dropped bits are at least half
/// a TF32 unit, so rounding and truncation give different TF32 values; the other holds the
/// small integers themselves (exact in TF32). Every product of a rounded value (11
/// significant bits, a multiple of 2⁻¹⁰) and an integer up to 3, and every partial sum
/// (|sum| ≤ 9.02·k < 2¹³ for k ≤ 520), is then exact in `f32`, so the GPU must equal the
/// CPU's sum of rounded products bit for bit; the test checks that truncation would give
/// other results (it can fail). Each operand takes the fractional values in turn.
///
/// On the CPU emulator one smaller ragged shape (the GPU shapes take about a minute of a
/// debug build there).
#[test]
fn tf32_inputs_are_rounded_to_nearest() {
    use cuda_std::mma::tf32_from_f32;
    let gpu = gpu();
    let shapes: &[(usize, usize, usize)] = if gpu.is_emulator() {
        &[(129, 136, 72)]
    } else {
        &[(257, 513, 136), (300, 260, 520)]
    };
    for kernel in TcKernel::ALL {
        if !runs(&gpu, kernel) || !has::<Tf32>(kernel) {
            continue;
        }
        for &(m, n, k) in shapes {
            for fractional_a in [true, false] {
                let ints = |seed: u64, len: usize| small_ints::<Tf32>(seed, len);
                let frac = |seed: u64, len: usize| -> Vec<f32> {
                    ints(seed, len)
                        .into_iter()
                        .map(|s| s * (1.0 + 3.0 * 2f32.powi(-12)))
                        .collect()
                };
                let (a, b) = if fractional_a {
                    (frac(31, m * k), ints(32, n * k))
                } else {
                    (ints(31, m * k), frac(32, n * k))
                };
                let c = gemm::<Tf32>(&gpu, kernel, m, n, k, &a, &b)
                    .unwrap_or_else(|e| panic!("tf32 {kernel} {m}×{n}×{k}: {e}"));
                let dot = |i: usize, j: usize, cut: &dyn Fn(f32) -> f32| -> f32 {
                    (0..k).map(|p| cut(a[i * k + p]) * cut(b[j * k + p])).sum()
                };
                let truncate = |x: f32| f32::from_bits(x.to_bits() & !0x1fff);
                let (mut wrong, mut tells) = (0usize, 0usize);
                for i in 0..m {
                    for j in 0..n {
                        let want = dot(i, j, &tf32_from_f32);
                        tells += usize::from(dot(i, j, &truncate) != want);
                        let got = c[i * n + j];
                        if got != want && !(got == 0.0 && want == 0.0) {
                            if wrong < 5 {
                                eprintln!(
                                    "tf32 {kernel} {m}×{n}×{k} (fractional A: {fractional_a}): \
                                     C[{i}][{j}] = {got}, rounded inputs give {want}, \
                                     truncated ones {}",
                                    dot(i, j, &truncate)
                                );
                            }
                            wrong += 1;
                        }
                    }
                }
                assert!(
                    tells > m * n / 2,
                    "only {tells} of {} elements tell rounding from truncation",
                    m * n
                );
                assert_eq!(
                    wrong,
                    0,
                    "tf32 {kernel} {m}×{n}×{k} (fractional A: {fractional_a}): {wrong} of {} \
                     elements differ from the sum of rounded products",
                    m * n
                );
            }
        }
    }
}

/// On a GPU or the CPU emulator: the shape is refused before any launch.
#[test]
fn shapes_the_kernels_cannot_run_are_errors_naming_the_value() {
    let gpu = gpu();
    let (a, b) = (vec![bf16::ZERO; 64 * 100], vec![bf16::ZERO; 64 * 100]);
    for kernel in TcKernel::ALL {
        let err = gemm::<bf16>(&gpu, kernel, 64, 64, 100, &a, &b)
            .expect_err("k = 100 is not a multiple of 8")
            .to_string();
        assert!(err.contains("k = 100"), "{err}");
    }
}

/// A kernel a type does not have is an error naming both, before any launch: the RS forms
/// for bf16, the ping-pong forms for TF32.
#[test]
fn kernels_a_type_lacks_are_errors_naming_both() {
    let gpu = gpu();
    let a = vec![0.0f32; 64 * 64];
    for kernel in [TcKernel::WgmmaPingpong, TcKernel::WgmmaPingpongCluster2] {
        if !runs(&gpu, kernel) {
            return;
        }
        let err = gemm::<Tf32>(&gpu, kernel, 64, 64, 64, &a, &a)
            .expect_err("no TF32 ping-pong kernel")
            .to_string();
        assert!(
            err.contains("tf32") && err.contains(kernel.name()) && err.contains("bf16 and f16"),
            "{err}"
        );
    }
    let b = vec![bf16::ZERO; 64 * 64];
    let err = gemm::<bf16>(&gpu, TcKernel::WgmmaRs, 64, 64, 64, &b, &b)
        .expect_err("no bf16 RS kernel")
        .to_string();
    assert!(
        err.contains("bf16") && err.contains("wgmma rs") && err.contains("TF32 only"),
        "{err}"
    );
}

/// The tensor-core kernels exist only in their variants, and ptxas (where the build found
/// it) assembled them without spills or stack frames, the wgmma ones within the 168
/// registers that 384 threads allow.
#[test]
fn gemm_kernels_live_in_their_variants_without_spills() {
    let image = &*host::KERNELS;
    let mut checked = 0;
    for entry in image.entries.iter().filter(|e| e.name.starts_with("gemm_")) {
        let tensor = entry.name.starts_with("gemm_mma_") || entry.name.starts_with("gemm_wgmma_");
        if !tensor {
            continue;
        }
        assert!(
            !entry.archs.contains(&image.ptx_arch),
            "{} must not be in the baseline PTX ({})",
            entry.name,
            image.ptx_arch
        );
        for r in &entry.resources {
            assert_eq!(
                (r.spill_store_bytes, r.spill_load_bytes, r.stack_frame_bytes),
                (0, 0, 0),
                "{} on {}: spills or stack",
                entry.name,
                r.arch
            );
            if entry.name.starts_with("gemm_wgmma_") {
                assert!(
                    r.registers <= 168,
                    "{}: {} registers",
                    entry.name,
                    r.registers
                );
            }
            checked += 1;
        }
    }
    if checked == 0 {
        eprintln!("skipped the resource checks: the build found no ptxas");
    }
    let sm90a = image
        .variants
        .iter()
        .find(|v| v.arch.arch_specific)
        .expect("an sm_90a variant");
    assert!(
        sm90a
            .ptx
            .contains("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16")
    );
    assert!(sm90a.ptx.contains("cp.async.bulk.tensor.2d"));
    // The FP8 entry points: two `m64n128k32` per 32 bytes of K (one per half of `B`, each
    // half's products summed into `f32` registers per stage: `PromotedA`), both formats.
    for ty in ["e4m3", "e5m2"] {
        assert!(
            sm90a.ptx.contains(&format!(
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.{ty}.{ty}"
            )),
            "no {ty} wgmma in the sm_90a PTX"
        );
        for out in ["bf16", "f32"] {
            let name = format!("gemm_wgmma_{ty}_{out}");
            assert!(
                image.entries.iter().any(|e| e.name == name),
                "{name} is missing from the manifest"
            );
        }
    }
    // The epilogue stores C through shared memory with TMA.
    assert!(
        sm90a
            .ptx
            .contains("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group")
    );
    assert!(sm90a.ptx.contains("setmaxnreg.inc.sync.aligned.u32 232"));
    // The cluster kernels: B multicast to both blocks, releases on both blocks' barriers,
    // and the non-.aligned cluster barrier (rustc may duplicate a barrier into both arms
    // of a branch on the thread index).
    for name in [
        "gemm_wgmma_bf16_c2",
        "gemm_wgmma_f16_c2",
        "gemm_wgmma_tf32_c2",
    ] {
        assert!(
            image.entries.iter().any(|e| e.name == name),
            "{name} is missing from the manifest"
        );
    }
    assert!(sm90a.ptx.contains(".multicast::cluster"));
    // Stages go back to the producers with the default (release.cta) remote arrival, not
    // the cluster-scope release whose fence stalled the consumers.
    assert!(sm90a.ptx.contains("mbarrier.arrive.shared::cluster.b64"));
    assert!(
        !sm90a
            .ptx
            .contains("mbarrier.arrive.release.cluster.shared::cluster.b64")
    );
    assert!(sm90a.ptx.contains("barrier.cluster.arrive.release;"));
    assert!(!sm90a.ptx.contains("barrier.cluster.arrive.aligned"));
    assert!(!sm90a.ptx.contains("barrier.cluster.wait.aligned"));
}

/// Programmatic dependent launch of TF32's product after the rounding pass: the pass
/// triggers its dependents, every TF32 `wgmma` kernel waits for its prerequisite grid (once:
/// the producer, before its first TMA load), and no other kernel does either.
#[test]
fn tf32_products_wait_for_the_rounding_pass_and_only_they() {
    let image = &*host::KERNELS;
    let sm90a = image
        .variants
        .iter()
        .find(|v| v.arch.arch_specific)
        .expect("an sm_90a variant");
    let ptx = &sm90a.ptx;
    // Each entry's text: from its `.entry` to the next one.
    let starts: Vec<usize> = ptx.match_indices(".entry ").map(|(i, _)| i).collect();
    let mut seen = 0;
    for (n, &start) in starts.iter().enumerate() {
        let body = &ptx[start..starts.get(n + 1).copied().unwrap_or(ptx.len())];
        let name = body[".entry ".len()..]
            .split(|c: char| c == '(' || c.is_whitespace())
            .next()
            .unwrap_or_default();
        let (waits, triggers) = (
            body.matches("griddepcontrol.wait;").count(),
            body.matches("griddepcontrol.launch_dependents;").count(),
        );
        let expected = match name {
            "round_tf32" => (0, 1),
            "gemm_wgmma_tf32"
            | "gemm_wgmma_tf32_c2"
            | "gemm_wgmma_tf32_rs"
            | "gemm_wgmma_tf32_rs_c2" => (1, 0),
            _ => (0, 0),
        };
        assert_eq!((waits, triggers), expected, "{name}: (waits, triggers)");
        seen += usize::from(expected != (0, 0));
    }
    assert_eq!(
        seen, 5,
        "the TF32 kernels and the rounding pass are in the sm_90a PTX"
    );
}

/// The cluster variant launches with an even grid of clusters of two (a whole number of
/// clusters), no larger than the clusters the device holds at once, and no larger than
/// the pairs of tile rows × tile columns need.
#[test]
fn wgmma_cluster2_grid_is_bounded_by_the_clusters_that_fit() {
    use cust::memory::DeviceBuffer;
    use host::matmul::GemmPlan;
    let gpu = gpu();
    if !runs(&gpu, TcKernel::WgmmaCluster2) {
        return;
    }
    // (m, n, pairs of tile rows × tile columns): 1, 2·3 = 6, 9·9 = 81.
    for (m, n, groups) in [(1, 1, 1), (257, 700, 6), (2176, 2056, 81)] {
        let k = 8;
        let a = DeviceBuffer::from_slice_async(&vec![bf16::ZERO; m * k], gpu.stream()).expect("A");
        let b = DeviceBuffer::from_slice_async(&vec![bf16::ZERO; n * k], gpu.stream()).expect("B");
        let mut c =
            DeviceBuffer::from_slice_async(&vec![bf16::ZERO; m * n], gpu.stream()).expect("C");
        let plan = GemmPlan::<bf16>::new(&gpu, TcKernel::WgmmaCluster2, m, n, k, &a, &b, &mut c)
            .unwrap_or_else(|e| panic!("{m}×{n}: {e}"));
        let fit = plan.max_active_clusters().expect("a cluster kernel");
        assert!(fit >= 1);
        let grid = plan.config().grid_dim;
        assert_eq!(
            grid,
            (2 * fit.min(groups), 1, 1),
            "{m}×{n}, {fit} clusters fit"
        );
        eprintln!("{m}×{n}: {fit} clusters of 2 fit; grid {grid:?}");
    }
}

/// FP8 (`host::matmul_fp8`): `C = scale_a·scale_b·(A·Bᵀ)` for one input format, output
/// type and shape, bit for bit against a CPU model of the tensor cores: exact FP8 products
/// ([`host::matmul_fp8::reference_f64`], each input's value decoded from its code), summed
/// exactly, times the scale, rounded once to the output type. The inputs keep every partial
/// sum exact in any accumulator of 12 or more significant bits (NVIDIA does not specify the
/// FP8 accumulator's width): `A`'s elements are integers in −3..=3 times 2⁻³, `B`'s times
/// 2² (codes with several exponents, exact in both formats), so every product is a multiple
/// of 2⁻¹ of magnitude at most 4.5 and `|sum| ≤ 4.5·k < 2¹¹` for the shapes' `k ≤ 272`. The
/// scales (0.25 and 2, both powers of two) make the scaling exact too.
fn fp8_exact_case<T: Fp8Elem + std::fmt::Debug, O: Fp8Out + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    (m, n, k): (usize, usize, usize),
) {
    let ints = |seed: u64, len: usize, unit: f32| -> Vec<T> {
        (0..len)
            .map(|i| T::from_f32(((mix(seed, i) % 7) as f32 - 3.0) * unit))
            .collect()
    };
    let a = ints(1 + m as u64, m * k, 0.125);
    let b = ints(2 + n as u64, n * k, 4.0);
    let (scale_a, scale_b) = (0.25f32, 2.0f32);
    let name = format!("{} → {} {m}×{n}×{k}", T::NAME, O::NAME);
    let c: Vec<O> =
        gemm_fp8(gpu, m, n, k, &a, &b, scale_a, scale_b).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(c.len(), m * n);
    let at: Vec<(usize, usize)> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    let sums = fp8_reference(k, &a, &b, &at);
    let mut wrong = 0usize;
    for (&(i, j), &sum) in at.iter().zip(&sums) {
        // The sum is exact in f32 (checked), the scale a power of two.
        assert_eq!(
            f64::from(sum as f32),
            sum,
            "{name}: the test's sums must be exact"
        );
        let want = O::from_f32(sum as f32 * (scale_a * scale_b));
        let got = c[i * n + j];
        let same = got == want || (got.to_f64() == 0.0 && want.to_f64() == 0.0);
        if !same {
            if wrong < 5 {
                eprintln!("{name}: C[{i}][{j}] = {got:?}, expected {want:?} (sum {sum})");
            }
            wrong += 1;
        }
    }
    assert_eq!(
        wrong,
        0,
        "{name}: {wrong} of {} elements differ from the CPU",
        m * n
    );
}

/// Shapes of the FP8 exact tests on a GPU: a whole tile, ragged m and n (several tiles,
/// boxes wholly outside C), k not a multiple of the 128-element K step (144 = 128 + 16,
/// 272), a single element, more tiles (17 × 9) than multiprocessors. `C`'s rows are
/// stored by TMA where they are a multiple of 16 bytes (n = 256, 328, 2056; 260 for f32)
/// and from registers otherwise (n = 1, 513; 260 for bf16).
const FP8_EXACT_SHAPES: [(usize, usize, usize); 6] = [
    (128, 256, 128),
    (200, 328, 144),
    (1, 1, 16),
    (257, 513, 272),
    (300, 260, 144),
    (2176, 2056, 16),
];

/// The FP8 exact tests' shapes on the CPU emulator (a debug build emulates the GPU list too
/// slowly): ragged m and n over several tiles, a ragged K step, a single element.
const FP8_EMULATOR_SHAPES: [(usize, usize, usize); 2] = [(200, 260, 144), (1, 1, 16)];

/// On a GPU (sm_90 only; others skip with a message), or on the CPU emulator at
/// [`FP8_EMULATOR_SHAPES`]: both FP8 formats, both output types.
#[test]
fn fp8_gemm_equals_the_cpu_model_bit_for_bit() {
    let gpu = gpu();
    if !runs(&gpu, TcKernel::Wgmma) {
        return;
    }
    let shapes: &[(usize, usize, usize)] = if gpu.is_emulator() {
        &FP8_EMULATOR_SHAPES
    } else {
        &FP8_EXACT_SHAPES
    };
    for &shape in shapes {
        fp8_exact_case::<F8E4M3, bf16>(&gpu, shape);
        fp8_exact_case::<F8E4M3, f32>(&gpu, shape);
        fp8_exact_case::<F8E5M2, bf16>(&gpu, shape);
        fp8_exact_case::<F8E5M2, f32>(&gpu, shape);
    }
}

/// On a GPU or the CPU emulator: bad scales and shapes are refused before any launch,
/// naming the value; on a GPU other than sm_90 the error names the kernel (and so the
/// precision) and both architectures.
#[test]
fn fp8_bad_scales_shapes_and_architectures_are_errors_naming_them() {
    let gpu = gpu();
    let a = vec![F8E4M3::from_f32(1.0); 64 * 32];
    for (sa, sb, want) in [
        (0.0, 1.0, "scale_a = 0"),
        (1.0, -1.0, "scale_b = -1"),
        (f32::NAN, 1.0, "scale_a = NaN"),
        (1.0, f32::INFINITY, "scale_b = inf"),
    ] {
        let err = gemm_fp8::<F8E4M3, bf16>(&gpu, 64, 64, 32, &a, &a, sa, sb)
            .expect_err(want)
            .to_string();
        assert!(err.contains(want) && err.contains("e4m3 GEMM"), "{err}");
    }
    let err = gemm_fp8::<F8E5M2, f32>(
        &gpu,
        64,
        64,
        24,
        &vec![F8E5M2::from_f32(1.0); 64 * 24],
        &vec![F8E5M2::from_f32(1.0); 64 * 24],
        1.0,
        1.0,
    )
    .expect_err("k = 24 is not a multiple of 16")
    .to_string();
    assert!(
        err.contains("k = 24") && err.contains("e5m2 GEMM (f32 out)"),
        "{err}"
    );
    if !gpu.is_emulator() && !runs(&gpu, TcKernel::Wgmma) {
        let err = gemm_fp8::<F8E4M3, bf16>(&gpu, 64, 64, 32, &a, &a, 1.0, 1.0)
            .expect_err("FP8 wgmma needs sm_90a")
            .to_string();
        assert!(
            err.contains("gemm_wgmma_e4m3_bf16") && err.contains("sm_90a"),
            "{err}"
        );
    }
}
