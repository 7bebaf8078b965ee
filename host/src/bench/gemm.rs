//! The GEMM rows by precision (`--precision-gemm`): BF16, FP16, TF32 and FP32 against
//! cuBLAS's `cublasGemmEx` and cuBLASLt at the same precision, in the same run, with an
//! accuracy check; and FP8 E4M3 (`bf16` out, per-tensor scales [`FP8_SCALES`]) against
//! cuBLASLt's scaled matmul alone (`cublasGemmEx` takes no FP8), in `Bench::fp8_rows`.
//!
//! Layout, for every row: `A` is m×k row-major, `B` is n×k row-major (so each output element
//! reads a row of `A` and a row of `B`), `C = A·Bᵀ` is m×n row-major, all of the precision's
//! storage type (`bf16`, `f16`, `f32` for TF32 and FP32), accumulated in `f32`. cuBLAS is
//! column-major, where these buffers read as `Aᵀ` (k×m), `Bᵀ` (k×n) and `Cᵀ` (n×m); so cuBLAS
//! computes `Cᵀ = B·Aᵀ`: its first operand is `B`'s buffer with `op = T`, its second is
//! `A`'s with `op = N`, `(m, n, k) = (n, m, k)` and every leading dimension `k`, except
//! `ldc = n` ([`cublas_call`], tested on the CPU below and on the GPU in blastoff's tests).
//!
//! Inputs are random in [-1, 1) from fixed seeds, rounded to the storage type; the same
//! values go to every implementation and to the reference.
//!
//! Our kernels: the tensor-core GEMMs of `host::matmul` (`wgmma`, `wgmma c2` — the same
//! kernel with clusters of two sharing `B` — and `mma.sync`, for BF16, FP16 and TF32, hooked
//! in by [`tensor_core_kernels`]; each its own row) and, for FP32, the SGEMM kernel of
//! [`crate::vector::sgemm_dev`] (which takes `B` as k×n row-major: it gets `Bᵀ`, transposed
//! on the host, so it multiplies the same matrices).
//!
//! Timing: every implementation of a (precision, shape) is prepared first — cuBLAS's
//! context, workspace, `α` and `β`, our `GemmPlan`s, `Bᵀ` for `sgemm` — each with its own
//! `C`, NaN-filled, and then they are timed **interleaved**
//! ([`crate::timing::Repeat::events_interleaved`]): the warm-up runs each in turn, then
//! every repetition takes one sample of each in turn (cuBLAS, `wgmma`, `wgmma c2`,
//! `mma.sync`; for FP32 cuBLAS, `sgemm`), and only then is each `C` copied back and checked.
//! Timed one block of repetitions after the other, clock and thermal drift landed on one of
//! them: on one H100, BF16 `wgmma` at 4096³ measured 0.86, 0.91 and 1.07× cuBLAS in three
//! runs while cuBLAS itself moved between 706 and 786 TFLOP/s. An implementation that
//! cannot be prepared, or fails during a sample, gets a note and drops out; the others go
//! on. Each sample is `inner` back-to-back launches between two CUDA events, divided by
//! `inner` ([`launches_per_sample`]): at 2048³ a BF16 GEMM takes about 25 µs, where one
//! launch's host-side gap would weigh. TFLOP/s = 2·m·n·k / median time.
//!
//! Accuracy: on 256 sampled elements and the four corners of `C`, the error against an
//! `f64` reference computed from the same (rounded) inputs, relative to `Σ_p |a_ip·b_jp|`;
//! the largest is reported for ours and for cuBLAS, with the standard bound for the
//! precision and `k` ([`GemmPrecision::error_bound`]). A row is flagged (a note starting
//! `FLAG`) when ours is more than 2× cuBLAS's error, above the bound, or has a non-finite
//! element anywhere in `C`.

use super::cublaslt::LtGemm;
use super::{Bench, BenchError, Implementation, random_f64, report::Entry};
use crate::gpu::GpuError;
use crate::matmul::Tf32;
use crate::timing::Stats;
use blastoff::{ComputeType, CublasContext, GemmExDatatype, MatrixOp};
use cuda_std::half::{F8E4M3, bf16, f16};
use cust::error::GpuContext;
use cust::memory::{DeviceBox, DeviceBuffer, DeviceCopy};
use cust::stream::Stream;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process's bench log has the cluster kernel's launch line
/// ([`Ours::launch_note`]): it is printed once per run.
static CLUSTER_LAUNCH_LOGGED: AtomicBool = AtomicBool::new(false);

/// The shapes `(m, n, k)` of the GEMM rows by precision when none are given: three cubes
/// and two transformer shapes (M=N=8192, K=2048; M=4096, N=14336, K=4096).
pub const DEFAULT_PRECISION_GEMM_SHAPES: [(u32, u32, u32); 5] = [
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 8192, 2048),
    (4096, 14336, 4096),
];

/// Elements of `C` whose error is checked (plus the four corners).
const SAMPLES: u64 = 256;

/// The precision of a GEMM row: storage type of `A`, `B`, `C` and how products are summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GemmPrecision {
    /// `bf16` operands and result, `f32` accumulation (tensor cores).
    Bf16,
    /// `f16` operands and result, `f32` accumulation (tensor cores).
    Fp16,
    /// `f32` operands and result, products of TF32-rounded operands, `f32` accumulation
    /// (tensor cores; cuBLAS `CUBLAS_COMPUTE_32F_FAST_TF32`).
    Tf32,
    /// `f32` throughout, TF32 off (cuBLAS `CUBLAS_COMPUTE_32F`, default math mode).
    Fp32,
    /// FP8 E4M3 `A` and `B`, per-tensor scales, `bf16` `C`, `f32` accumulation (tensor
    /// cores; cuBLASLt's scaled matmul, [`crate::matmul_fp8`]).
    E4m3,
}

impl GemmPrecision {
    /// Every precision, in table order.
    pub const ALL: [Self; 5] = [Self::Bf16, Self::Fp16, Self::Tf32, Self::Fp32, Self::E4m3];

    /// The name in workloads and on the command line: `bf16`, `fp16`, `tf32`, `fp32`,
    /// `e4m3`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bf16 => "bf16",
            Self::Fp16 => "fp16",
            Self::Tf32 => "tf32",
            Self::Fp32 => "fp32",
            Self::E4m3 => "e4m3",
        }
    }

    /// The precision named `name` (as [`GemmPrecision::name`], ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// cuBLAS's compute type for this precision.
    pub const fn compute(self) -> ComputeType {
        match self {
            Self::Tf32 => ComputeType::F32FastTf32,
            Self::Bf16 | Self::Fp16 | Self::Fp32 | Self::E4m3 => ComputeType::F32,
        }
    }

    /// The standard worst-case bound on `|ĉ_ij − c_ij| / Σ_p |a_ip·b_jp|` for a length-`k`
    /// dot product whose inputs are exact in the storage type (Higham, *Accuracy and
    /// Stability of Numerical Algorithms*, 2nd ed., §3.1: `γ_k = k·u / (1 − k·u)`):
    /// `u_products + u_output + γ_k(u_accumulate)`, where
    /// - `u_accumulate` = 2⁻²⁴ for FP32 (FFMA, round to nearest), 2⁻²³ on tensor cores
    ///   (their `f32` adder need not round to nearest: truncation doubles `u`);
    /// - `u_output` = 2⁻⁸ for `bf16` (8 significand bits), 2⁻¹¹ for `f16` (11), 0 for `f32`
    ///   (the accumulator's own rounding);
    /// - `u_products` = 2·2⁻¹⁰ for TF32 (each operand cut to 11 significand bits, by
    ///   truncation at worst), 0 otherwise (products of `bf16`/`f16`/FP8 are exact in
    ///   `f32`).
    ///
    /// For E4M3 the bound is `bf16`'s (`bf16` output, products exact) with the `f32`
    /// accumulation assumed: NVIDIA does not specify the tensor cores' accumulator width for
    /// FP8 inputs, and a narrower one shows as errors above it, in both the cuBLAS row and
    /// ours. The scales are powers of two (`FP8_SCALES`) and add no error.
    ///
    /// Typical errors are far smaller (√k rather than k growth, and rounding errors
    /// cancel); the bound is what no correct kernel can exceed.
    pub fn error_bound(self, k: usize) -> f64 {
        let u_acc = match self {
            Self::Fp32 => 2f64.powi(-24),
            Self::Bf16 | Self::Fp16 | Self::Tf32 | Self::E4m3 => 2f64.powi(-23),
        };
        let gamma = k as f64 * u_acc / (1.0 - k as f64 * u_acc);
        let (u_products, u_output) = match self {
            Self::Bf16 | Self::E4m3 => (0.0, 2f64.powi(-8)),
            Self::Fp16 => (0.0, 2f64.powi(-11)),
            Self::Tf32 => (2.0 * 2f64.powi(-10), 0.0),
            Self::Fp32 => (0.0, 0.0),
        };
        u_products + u_output + gamma
    }
}

impl std::fmt::Display for GemmPrecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A number type whose values the accuracy check reads: the storage types and FP8.
pub(super) trait Exact: Copy + Send + Sync {
    /// The value, exactly.
    fn to_f64(self) -> f64;
}

/// A storage type of the GEMM rows: `bf16`, `f16` or `f32`.
pub(super) trait Operand:
    GemmExDatatype + DeviceCopy + Exact + Copy + Send + Sync + 'static
{
    /// A quiet NaN: `C` starts as this, so an unwritten element cannot pass for a result.
    const NAN: Self;
    /// `x` rounded to this type (to nearest).
    fn from_f64(x: f64) -> Self;
}

impl Exact for bf16 {
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

impl Operand for bf16 {
    const NAN: Self = bf16::NAN;
    fn from_f64(x: f64) -> Self {
        bf16::from_f64(x)
    }
}

impl Exact for f16 {
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}

impl Operand for f16 {
    const NAN: Self = f16::NAN;
    fn from_f64(x: f64) -> Self {
        f16::from_f64(x)
    }
}

impl Exact for f32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Operand for f32 {
    const NAN: Self = f32::NAN;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Exact for F8E4M3 {
    fn to_f64(self) -> f64 {
        f64::from(self.to_f32())
    }
}

/// The per-tensor scales `(scale_a, scale_b)` of the FP8 rows, ours and cuBLASLt's: powers
/// of two, so that scaling adds no rounding, and not 1, so that a kernel that ignored one
/// would show in the accuracy check.
pub const FP8_SCALES: (f32, f32) = (0.5, 4.0);

/// The column-major cuBLAS call that computes the row-major `C = A·Bᵀ` (`A` m×k, `B` n×k,
/// `C` m×n): `Cᵀ (n×m) = B (n×k) · Aᵀ (k×m)`, with `B`'s buffer (column-major `Bᵀ`, k×n) as
/// the first operand, transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CublasCall {
    /// cuBLAS's `(m, n, k)`: ours `(n, m, k)`.
    mnk: (usize, usize, usize),
    /// The first operand (`B`'s buffer): transposed, leading dimension `k`.
    op_first: MatrixOp,
    ld_first: usize,
    /// The second operand (`A`'s buffer): as stored, leading dimension `k`.
    op_second: MatrixOp,
    ld_second: usize,
    /// `C`'s leading dimension: `n`.
    ldc: usize,
}

/// See [`CublasCall`].
fn cublas_call((m, n, k): (usize, usize, usize)) -> CublasCall {
    CublasCall {
        mnk: (n, m, k),
        op_first: MatrixOp::Transpose,
        ld_first: k,
        op_second: MatrixOp::None,
        ld_second: k,
        ldc: n,
    }
}

/// Back-to-back launches per timed sample: enough for about 2·10¹¹ flops (0.3 ms at
/// 700 TFLOP/s), 1 to 64.
fn launches_per_sample(flops: f64) -> u32 {
    (2e11 / flops).ceil().clamp(1.0, 64.0) as u32
}

/// `stats` of samples of `inner` launches, as per-launch times.
fn per_launch(stats: Stats, inner: u32) -> Stats {
    let d = f64::from(inner.max(1));
    Stats {
        median_ms: stats.median_ms / d,
        min_ms: stats.min_ms / d,
        max_ms: stats.max_ms / d,
        q1_ms: stats.q1_ms / d,
        q3_ms: stats.q3_ms / d,
        samples: stats.samples,
    }
}

/// The inputs of one (precision, shape): dimensions, host copies, device buffers.
pub(super) struct Operands<'a, T: DeviceCopy> {
    /// `(m, n, k)`.
    pub dims: (usize, usize, usize),
    /// Launches per timed sample ([`launches_per_sample`]).
    pub inner: u32,
    /// `B`, n×k row-major, on the host.
    pub b_host: &'a [T],
    /// `A` on the GPU.
    pub a: &'a DeviceBuffer<T>,
    /// `B` on the GPU.
    pub b: &'a DeviceBuffer<T>,
}

/// One launch of a prepared implementation, queued on the bench's stream (no
/// synchronisation), writing the implementation's own `C`.
type Launch<'a> = Box<dyn FnMut() -> Result<(), BenchError> + 'a>;

/// One of our kernels on one (precision, shape), ready to time: its name, its launch or why
/// it cannot run (e.g. a `wgmma` kernel on a GPU before sm_90), and how it launches.
pub(super) struct Prepared<'a> {
    /// `wgmma`, `wgmma c2`, `mma.sync`, `sgemm`.
    pub kernel: &'static str,
    /// One launch (the plan made, the buffers bound), or the error.
    pub launch: Result<Launch<'a>, BenchError>,
    /// How a kernel with clusters launches (the clusters that fit at once and the grid),
    /// for the bench log, which prints the first such line of the run.
    pub launch_note: Option<String>,
}

/// Our kernels for one precision: given the bench, the inputs and an empty `cs`, pushes one
/// NaN-filled `C` (m×n row-major) per kernel onto `cs` and returns each kernel, in the same
/// order, prepared to write its own.
type OurKernels<T> = for<'a> fn(
    &'a Bench<'_>,
    &'a Operands<'_, T>,
    &'a mut Vec<DeviceBuffer<T>>,
) -> Result<Vec<Prepared<'a>>, GpuError>;

/// cuBLAS prepared for one (precision, shape): its context with a 32 MiB workspace, `α = 1`
/// and `β = 0` on the device, and its own `C` (m×n row-major, NaN-filled).
struct CublasGemm<T: DeviceCopy> {
    blas: CublasContext,
    alpha: DeviceBox<f32>,
    beta: DeviceBox<f32>,
    c: DeviceBuffer<T>,
}

impl<T: Operand> CublasGemm<T> {
    /// Queues one `cublasGemmEx` at `precision` on `stream` computing the row-major
    /// `C = A·Bᵀ` of `operands` into `self.c` ([`cublas_call`]).
    ///
    /// # Errors
    /// cuBLAS's error, as text.
    fn launch(
        &mut self,
        stream: &Stream,
        precision: GemmPrecision,
        operands: &Operands<'_, T>,
    ) -> Result<(), BenchError> {
        let call = cublas_call(operands.dims);
        let (cm, cn, ck) = call.mnk;
        self.blas
            .gemm_ex::<T>(
                stream,
                cm,
                cn,
                ck,
                &self.alpha,
                operands.b,
                call.ld_first,
                call.op_first,
                &self.beta,
                operands.a,
                call.ld_second,
                call.op_second,
                &mut self.c,
                call.ldc,
                precision.compute(),
            )
            .map_err(|e| BenchError(e.to_string()))
    }
}

/// `c` copied to the host.
fn download<T: DeviceCopy>(c: &DeviceBuffer<T>) -> Result<Vec<T>, BenchError> {
    Ok(c.as_host_vec().gpu_context("copying C back")?)
}

/// The result of a launch that was never timed (which [`Bench::time_interleaved`] rules
/// out: it returns one result per launch).
fn not_timed() -> Result<Stats, BenchError> {
    Err(BenchError("not timed".to_owned()))
}

/// The error check of one result: the largest sampled relative error and how many
/// elements of `C` are not finite.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Accuracy {
    max_rel: f64,
    non_finite: usize,
}

/// Checks row-major `c` (m×n) = `scale`·`a`·`b`ᵀ (`a` m×k, `b` n×k, row-major) on
/// [`SAMPLES`] pseudo-random elements and the four corners, against an `f64` reference from
/// the same inputs; relative errors are to `scale·Σ_p |a_ip·b_jp|`. Non-finite elements are
/// counted over all of `c`.
fn accuracy<A: Exact, C: Exact>(
    c: &[C],
    a: &[A],
    b: &[A],
    (m, n, k): (usize, usize, usize),
    scale_c: f64,
) -> Accuracy {
    let non_finite = c.par_iter().filter(|x| !x.to_f64().is_finite()).count();
    let corners = [0, n - 1, (m - 1) * n, m * n - 1];
    let max_rel = (0..SAMPLES)
        .map(|s| (s.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize % (m * n))
        .chain(corners)
        .map(|idx| {
            let (i, j) = (idx / n, idx % n);
            let (row_a, row_b) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
            let (mut v, mut abs) = (0.0f64, 0.0f64);
            for (&x, &y) in row_a.iter().zip(row_b) {
                let prod = x.to_f64() * y.to_f64();
                v += prod;
                abs += prod.abs();
            }
            let (v, abs) = (v * scale_c, abs * scale_c);
            let err = (c[idx].to_f64() - v).abs() / abs.max(f64::MIN_POSITIVE);
            // A NaN must not vanish in `max`.
            if err.is_nan() { f64::INFINITY } else { err }
        })
        .fold(0.0f64, f64::max);
    Accuracy {
        max_rel,
        non_finite,
    }
}

/// A device buffer holding `x`, copied on the bench's stream.
fn upload<T: DeviceCopy>(bench: &Bench<'_>, x: &[T]) -> Result<DeviceBuffer<T>, GpuError> {
    DeviceBuffer::from_slice_async(x, bench.gpu.stream()).gpu_context("copying to the GPU")
}

/// `n` values in [-1, 1) from `seed`, rounded to `T`.
fn random_operand<T: Operand>(seed: u64, n: usize) -> Vec<T> {
    random_f64(seed, n)
        .into_par_iter()
        .map(|v| T::from_f64(2.0 * (v - 1.0)))
        .collect()
}

impl Bench<'_> {
    /// The GEMM rows of one precision at one shape: cuBLAS and each of our kernels, timed
    /// interleaved, with ratios to cuBLAS and the accuracy check (see the
    /// [module docs](self)).
    ///
    /// # Errors
    /// A GPU error outside a peer (allocation, copy); cuBLAS's and our kernels' own failures
    /// become notes.
    pub(super) fn precision_gemm(
        &mut self,
        precision: GemmPrecision,
        dims: (u32, u32, u32),
    ) -> Result<(), GpuError> {
        match precision {
            GemmPrecision::Bf16 => {
                self.precision_rows::<bf16>(precision, dims, tensor_core_kernels::<bf16>)
            }
            GemmPrecision::Fp16 => {
                self.precision_rows::<f16>(precision, dims, tensor_core_kernels::<f16>)
            }
            GemmPrecision::Tf32 => {
                self.precision_rows::<f32>(precision, dims, tensor_core_kernels::<Tf32>)
            }
            GemmPrecision::Fp32 => self.precision_rows::<f32>(precision, dims, sgemm_kernel),
            GemmPrecision::E4m3 => self.fp8_rows(precision, dims),
        }
    }

    /// [`Bench::precision_gemm`] for storage type `T`, with `ours` giving our kernels.
    fn precision_rows<T: Operand>(
        &mut self,
        precision: GemmPrecision,
        (m, n, k): (u32, u32, u32),
        ours: OurKernels<T>,
    ) -> Result<(), GpuError> {
        let dims = (m as usize, n as usize, k as usize);
        let (mu, nu, ku) = dims;
        let workload = format!("gemm {precision} {m}x{n}x{k}");
        self.log(&format!("{workload}: preparing inputs"));
        let a_host: Vec<T> = random_operand(21, mu * ku);
        let b_host: Vec<T> = random_operand(22, nu * ku);
        let a = upload(self, &a_host)?;
        let b = upload(self, &b_host)?;
        let flops = 2.0 * mu as f64 * nu as f64 * ku as f64;
        let inner = launches_per_sample(flops);
        let operands = Operands {
            dims,
            inner,
            b_host: &b_host,
            a: &a,
            b: &b,
        };
        let bound = precision.error_bound(ku);

        // Prepare every implementation, each with its own NaN-filled C; time them
        // interleaved (cuBLAS first, then ours in order); then copy each C back.
        let mut blas = self.opts.cublas.then(|| self.cublas_gemm_ex::<T>(dims));
        let mut lt = self
            .opts
            .cublas
            .then(|| self.cublaslt_gemm::<T>(precision, &operands));
        if let Some(Ok(l)) = &lt {
            self.log(&format!(
                "{workload}: cublas lt: {}",
                l.selection.describe()
            ));
        }
        let mut c_ours = Vec::new();
        let (timed, ours_meta) = {
            let prepared = ours(self, &operands, &mut c_ours)?;
            let (stream, ops) = (self.gpu.stream(), &operands);
            let mut launches: Vec<Result<Launch<'_>, BenchError>> = Vec::new();
            if let Some(Ok(g)) = blas.as_mut() {
                launches.push(Ok(Box::new(move || g.launch(stream, precision, ops))));
            }
            if let Some(Ok(l)) = lt.as_mut() {
                launches.push(Ok(Box::new(move || l.launch(stream, ops.a, ops.b))));
            }
            let mut meta = Vec::new();
            for p in prepared {
                meta.push((p.kernel, p.launch_note));
                launches.push(p.launch);
            }
            (self.time_interleaved(ops.inner, launches), meta)
        };
        let mut timed = timed.into_iter();
        // cuBLAS's result comes first where it was prepared (and so timed).
        let blas_outcome = blas.map(|prepared| {
            let g = prepared?;
            let stats = timed.next().unwrap_or_else(not_timed)?;
            Ok::<_, BenchError>((stats, download(&g.c)?))
        });
        // Then cuBLASLt's.
        let lt_outcome = lt.map(|prepared| {
            let l = prepared?;
            let stats = timed.next().unwrap_or_else(not_timed)?;
            Ok::<_, BenchError>((stats, download(&l.c)?))
        });
        let ours_outcomes: Vec<_> = ours_meta
            .into_iter()
            .zip(&c_ours)
            .map(|((kernel, launch_note), c)| {
                let outcome = timed
                    .next()
                    .unwrap_or_else(not_timed)
                    .and_then(|stats| Ok((stats, download(c)?)));
                (kernel, launch_note, outcome)
            })
            .collect();
        drop(c_ours);
        self.report_rows(
            &workload,
            flops,
            bound,
            vec![(GEMM_EX, blas_outcome), (LT, lt_outcome)],
            ours_outcomes,
            |c| accuracy(c, &a_host, &b_host, dims, 1.0),
        );
        Ok(())
    }

    /// The FP8 rows at one shape: E4M3 `A` and `B` (random in [-1, 1), rounded to E4M3),
    /// `bf16` `C`, scales [`FP8_SCALES`]: cuBLASLt's scaled matmul (its fastest of the
    /// heuristic's candidates; `cublasGemmEx` takes no FP8, so there is no `gemmex` row)
    /// and our `wgmma` kernel ([`crate::matmul_fp8::Fp8GemmPlan`]), timed interleaved and
    /// checked as the other precisions.
    ///
    /// # Errors
    /// As [`Bench::precision_gemm`].
    fn fp8_rows(
        &mut self,
        precision: GemmPrecision,
        (m, n, k): (u32, u32, u32),
    ) -> Result<(), GpuError> {
        use crate::matmul_fp8::Fp8GemmPlan;
        let dims = (m as usize, n as usize, k as usize);
        let (mu, nu, ku) = dims;
        let workload = format!("gemm {precision} {m}x{n}x{k}");
        self.log(&format!("{workload}: preparing inputs"));
        let fp8 = |seed, len| -> Vec<F8E4M3> {
            random_f64(seed, len)
                .into_par_iter()
                .map(|v| F8E4M3::from_f32((2.0 * (v - 1.0)) as f32))
                .collect()
        };
        let (a_host, b_host) = (fp8(21, mu * ku), fp8(22, nu * ku));
        let a = upload(self, &a_host)?;
        let b = upload(self, &b_host)?;
        let flops = 2.0 * mu as f64 * nu as f64 * ku as f64;
        let inner = launches_per_sample(flops);
        let bound = precision.error_bound(ku);
        let (scale_a, scale_b) = FP8_SCALES;

        let mut lt = self.opts.cublas.then(|| -> Result<_, BenchError> {
            // cuBLASLt reads the codes as bytes.
            let bytes = |x: &[F8E4M3]| x.iter().map(|v| v.to_bits()).collect::<Vec<u8>>();
            let (a8, b8) = (
                upload(self, &bytes(&a_host))?,
                upload(self, &bytes(&b_host))?,
            );
            let c = upload(self, &vec![bf16::NAN; mu * nu])?;
            let (ctx, stream) = (self.gpu.context(), self.gpu.stream());
            let time = |f: &mut dyn FnMut() -> Result<(), BenchError>| {
                crate::timing::event_time(ctx, stream, f, || {
                    stream
                        .synchronize()
                        .map_err(|e| BenchError(format!("waiting for cuBLASLt: {e}")))
                })
            };
            let l = LtGemm::prepare_fp8(
                blastoff::Fp8Format::E4m3,
                dims,
                FP8_SCALES,
                &a8,
                &b8,
                c,
                stream,
                inner,
                &time,
            )?;
            Ok((l, a8, b8))
        });
        if let Some(Ok((l, ..))) = &lt {
            self.log(&format!(
                "{workload}: cublas lt: {}",
                l.selection.describe()
            ));
        }
        let mut c_ours = upload(self, &vec![bf16::NAN; mu * nu])?;
        let timed = {
            let gpu = &self.gpu;
            let stream = gpu.stream();
            let mut launches: Vec<Result<Launch<'_>, BenchError>> = Vec::new();
            if let Some(Ok((l, a8, b8))) = lt.as_mut() {
                let (a8, b8) = (&*a8, &*b8);
                launches.push(Ok(Box::new(move || l.launch(stream, a8, b8))));
            }
            launches.push(
                Fp8GemmPlan::<F8E4M3, bf16>::new(
                    gpu,
                    mu,
                    nu,
                    ku,
                    &a,
                    &b,
                    &mut c_ours,
                    scale_a,
                    scale_b,
                )
                .map(|mut plan| {
                    Box::new(move || plan.launch(gpu).map_err(BenchError::from)) as Launch<'_>
                })
                .map_err(BenchError::from),
            );
            self.time_interleaved(inner, launches)
        };
        let mut timed = timed.into_iter();
        let lt_outcome = lt.map(|prepared| {
            let (l, ..) = prepared?;
            let stats = timed.next().unwrap_or_else(not_timed)?;
            Ok::<_, BenchError>((stats, download(&l.c)?))
        });
        let ours = timed
            .next()
            .unwrap_or_else(not_timed)
            .and_then(|stats| Ok((stats, download(&c_ours)?)));
        drop(c_ours);
        let scale = f64::from(scale_a) * f64::from(scale_b);
        self.report_rows(
            &workload,
            flops,
            bound,
            vec![(LT, lt_outcome)],
            vec![("wgmma", None, ours)],
            |c| accuracy(c, &a_host, &b_host, dims, scale),
        );
        Ok(())
    }

    /// The rows of one (precision, shape) from what was timed: the cuBLAS rows (`peers`,
    /// by variant; `None`: not prepared, as with `--no-cublas`), ratios to the faster of
    /// them, and ours (`(kernel, launch note, outcome)`), each checked with `check`
    /// ([`accuracy`]) against `bound`, flagged ([`flags`]), logged and added to the
    /// entries; failures become notes.
    #[expect(
        clippy::type_complexity,
        reason = "the outcomes as timed: (stats, C) or why not"
    )]
    fn report_rows<C>(
        &mut self,
        workload: &str,
        flops: f64,
        bound: f64,
        outcomes: Vec<(&'static str, Option<Result<(Stats, Vec<C>), BenchError>>)>,
        ours_outcomes: Vec<(
            &'static str,
            Option<String>,
            Result<(Stats, Vec<C>), BenchError>,
        )>,
        check: impl Fn(&[C]) -> Accuracy,
    ) {
        // The cuBLAS rows (`cublasGemmEx`, cuBLASLt's fastest algorithm); ratios are to the
        // faster of the two.
        let mut peers: Vec<(Entry, Accuracy)> = Vec::new();
        for (variant, outcome) in outcomes {
            match outcome {
                Some(Ok((stats, c))) => {
                    let acc = check(&c);
                    let mut e = Entry::flops(workload, Implementation::Cublas, stats, flops);
                    e.variant = Some(variant.to_owned());
                    e.max_rel_error = Some(acc.max_rel);
                    peers.push((e, acc));
                }
                Some(Err(why)) => {
                    let line = format!("{workload}: cublas {variant} skipped: {why}");
                    self.log(&line);
                    self.notes.push(line);
                }
                None => {}
            }
        }
        let reference = fastest_peer(&peers);

        let mut rows = Vec::new();
        for (kernel, launch_note, outcome) in ours_outcomes {
            if let Some(note) = &launch_note
                && !CLUSTER_LAUNCH_LOGGED.swap(true, Ordering::Relaxed)
            {
                self.log(&format!("{workload}: rust {kernel}: {note}"));
            }
            let (stats, c_host) = match outcome {
                Ok(x) => x,
                Err(e) => {
                    let line = format!("{workload}: rust {kernel} did not run: {e}");
                    self.log(&line);
                    self.notes.push(line);
                    continue;
                }
            };
            let acc = check(&c_host);
            let mut e = Entry::flops(workload, Implementation::Rust, stats, flops);
            e.variant = Some(kernel.to_owned());
            e.max_rel_error = Some(acc.max_rel);
            let blas = reference.as_ref();
            if let Some((r, _)) = blas {
                e.vs_reference = e.tflop_per_s.zip(r.tflop_per_s).map(|(x, y)| x / y);
            }
            for flag in flags(&acc, blas.map(|(_, a)| a), bound) {
                let line = format!("FLAG {workload} rust {kernel}: {flag}");
                self.log(&line);
                self.notes.push(line);
            }
            rows.push(e);
        }

        let blas_text = if peers.is_empty() {
            "cublas -".to_owned()
        } else {
            peers
                .iter()
                .map(|(r, _)| {
                    format!(
                        "cublas {} {} (max err {:.2e})",
                        r.variant.as_deref().unwrap_or(""),
                        r.rate_text(),
                        r.max_rel_error.unwrap_or(f64::NAN)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ours_text: Vec<String> = rows
            .iter()
            .map(|e| {
                format!(
                    "rust {} {} ({}, max err {:.2e})",
                    e.variant.as_deref().unwrap_or(""),
                    e.rate_text(),
                    e.vs_reference.map_or_else(
                        || "no cuBLAS row to rate it by".to_owned(),
                        |r| { format!("{r:.3}x") }
                    ),
                    e.max_rel_error.unwrap_or(f64::NAN)
                )
            })
            .collect();
        let line = format!(
            "{workload}: {}{blas_text}; error bound {bound:.2e}",
            ours_text
                .iter()
                .map(|t| format!("{t}, "))
                .collect::<String>()
        );
        self.log(&line);
        for (e, acc) in &peers {
            if acc.non_finite > 0 || acc.max_rel > bound {
                let line = format!(
                    "FLAG {workload} cublas {}: max err {:.2e} (bound {bound:.2e}), {} non-finite",
                    e.variant.as_deref().unwrap_or(""),
                    acc.max_rel,
                    acc.non_finite
                );
                self.log(&line);
                self.notes.push(line);
            }
        }
        self.entries.extend(rows);
        self.entries.extend(peers.into_iter().map(|(e, _)| e));
    }

    /// Prepares cuBLASLt for `C = A·Bᵀ` of `operands` at `precision` and picks its fastest
    /// algorithm for the shape ([`LtGemm::prepare`], timed on the bench's stream), with a
    /// NaN-filled `C` (m×n row-major) of its own.
    ///
    /// # Errors
    /// Why not, as text: no `libcublasLt.so`, a cuBLASLt error, a GPU error.
    fn cublaslt_gemm<T: Operand>(
        &self,
        precision: GemmPrecision,
        operands: &Operands<'_, T>,
    ) -> Result<LtGemm<blastoff::LtMatmul<T>>, BenchError> {
        let (m, n, _) = operands.dims;
        let c = upload(self, &vec![T::NAN; m * n])?;
        let (ctx, stream) = (self.gpu.context(), self.gpu.stream());
        let time = |f: &mut dyn FnMut() -> Result<(), BenchError>| {
            crate::timing::event_time(ctx, stream, f, || {
                stream
                    .synchronize()
                    .map_err(|e| BenchError(format!("waiting for cuBLASLt: {e}")))
            })
        };
        LtGemm::prepare(
            precision.compute(),
            operands.dims,
            operands.a,
            operands.b,
            c,
            stream,
            operands.inner,
            &time,
        )
    }

    /// Prepares cuBLAS (`cublasGemmEx`, through [`blastoff`]) for `C = A·Bᵀ` at `dims`
    /// (`(m, n, k)`): a context with a 32 MiB workspace, `α = 1` and `β = 0` on the device,
    /// and a NaN-filled `C` (m×n row-major). Nothing is launched.
    ///
    /// # Errors
    /// Why not, as text: no `libcublas.so`, a cuBLAS error, a GPU error.
    fn cublas_gemm_ex<T: Operand>(
        &self,
        (m, n, _): (usize, usize, usize),
    ) -> Result<CublasGemm<T>, BenchError> {
        let text = |e: blastoff::Error| BenchError(e.to_string());
        let mut blas = CublasContext::new().map_err(text)?;
        blas.set_workspace(CublasContext::HOPPER_WORKSPACE_BYTES)
            .map_err(text)?;
        Ok(CublasGemm {
            blas,
            alpha: DeviceBox::new(&1.0f32)?,
            beta: DeviceBox::new(&0.0f32)?,
            c: upload(self, &vec![T::NAN; m * n])?,
        })
    }

    /// Times `launches` (each one launch on the bench's stream; an `Err` is an
    /// implementation that could not be prepared) interleaved, with this run's repetitions
    /// ([`crate::timing::Repeat::events_interleaved`]): each sample of an implementation is
    /// `inner` back-to-back launches between two CUDA events. Returns, for each launch in
    /// order, its per-launch timing ([`per_launch`]), or its preparation's error or its
    /// first error while timed (after which it was not launched again: the others went on).
    fn time_interleaved(
        &self,
        inner: u32,
        mut launches: Vec<Result<Launch<'_>, BenchError>>,
    ) -> Vec<Result<Stats, BenchError>> {
        let mut timed = {
            let mut samples: Vec<_> = launches
                .iter_mut()
                .filter_map(|l| l.as_mut().ok())
                .map(|launch| {
                    move || -> Result<(), BenchError> {
                        for _ in 0..inner {
                            launch()?;
                        }
                        Ok(())
                    }
                })
                .collect();
            let mut fs: Vec<&mut dyn FnMut() -> Result<(), BenchError>> = samples
                .iter_mut()
                .map(|f| f as &mut dyn FnMut() -> Result<(), BenchError>)
                .collect();
            self.repeat
                .events_interleaved(self.gpu.context(), self.gpu.stream(), &mut fs)
                .into_iter()
        };
        launches
            .into_iter()
            .map(|l| {
                l.and_then(|_| timed.next().unwrap_or_else(not_timed))
                    .map(|stats| per_launch(stats, inner))
            })
            .collect()
    }
}

/// The variant names of the two cuBLAS rows: `cublasGemmEx`, and cuBLASLt's fastest of
/// its heuristic's candidates ([`super::cublaslt`]).
const GEMM_EX: &str = "gemmex";
const LT: &str = "lt";

/// The fastest of the cuBLAS rows (smallest median; the first of equal ones), the one our
/// rows' ratios are to.
fn fastest_peer(peers: &[(Entry, Accuracy)]) -> Option<(Entry, Accuracy)> {
    peers
        .iter()
        .filter(|(e, _)| e.tflop_per_s.is_some())
        .max_by(|(x, _), (y, _)| {
            let (x, y) = (x.tflop_per_s.unwrap_or(0.0), y.tflop_per_s.unwrap_or(0.0));
            // Equal rates keep the first (max_by returns the last of equals).
            x.partial_cmp(&y)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(std::cmp::Ordering::Greater)
        })
        .cloned()
}

/// What is wrong with our result `ours`, given cuBLAS's (`blas`, if it ran) and the
/// standard `bound`: non-finite elements, an error above 2× cuBLAS's, an error above the
/// bound. Empty when nothing is. (`max_rel` is never NaN: [`accuracy`] makes it infinite.)
fn flags(ours: &Accuracy, blas: Option<&Accuracy>, bound: f64) -> Vec<String> {
    let mut out = Vec::new();
    if ours.non_finite > 0 {
        out.push(format!("{} non-finite elements in C", ours.non_finite));
    }
    if let Some(b) = blas
        && ours.max_rel > 2.0 * b.max_rel
    {
        out.push(format!(
            "max err {:.2e} is worse than 2x cuBLAS's {:.2e}",
            ours.max_rel, b.max_rel
        ));
    }
    if ours.max_rel > bound {
        out.push(format!(
            "max err {:.2e} exceeds the standard bound {bound:.2e}",
            ours.max_rel
        ));
    }
    out
}

/// FP32's kernel: the SGEMM of [`crate::vector::sgemm_dev`], which reads `B` as k×n
/// row-major, so it gets `Bᵀ` (transposed on the host and uploaded here, owned by its
/// launch): the same product `A·Bᵀ`. Pushes its NaN-filled `C` onto `cs` (see
/// [`OurKernels`]).
///
/// # Errors
/// A GPU error uploading `Bᵀ` or `C`.
fn sgemm_kernel<'a>(
    bench: &'a Bench<'_>,
    operands: &'a Operands<'_, f32>,
    cs: &'a mut Vec<DeviceBuffer<f32>>,
) -> Result<Vec<Prepared<'a>>, GpuError> {
    let (m, n, k) = operands.dims;
    let b = operands.b_host;
    // Row p of Bᵀ (k×n) is column p of B (n×k).
    let b_t: Vec<f32> = (0..k * n)
        .into_par_iter()
        .map(|idx| b[(idx % n) * k + idx / n])
        .collect();
    let b_t = upload(bench, &b_t)?;
    cs.push(upload(bench, &vec![f32::NAN; m * n])?);
    let last = cs.len() - 1;
    let c = &mut cs[last];
    let (gpu, a, dims) = (&bench.gpu, operands.a, (m as u32, n as u32, k as u32));
    let launch: Launch<'a> = Box::new(move || {
        crate::vector::sgemm_dev(gpu, dims, 1.0, a, &b_t, 0.0, c).map_err(BenchError::from)
    });
    Ok(vec![Prepared {
        kernel: "sgemm",
        launch: Ok(launch),
        launch_note: None,
    }])
}

/// Our tensor-core kernels (`host::matmul`'s `GemmPlan` for every `TcKernel`: `wgmma`,
/// `wgmma c2`, `mma.sync`) for input type `T` (`bf16`, `f16`, or [`Tf32`] on `f32` data): each
/// planned once on `operands` and its own NaN-filled `C`, pushed onto `cs` (see
/// [`OurKernels`]; a kernel that writes nothing cannot pass with another's result). A
/// kernel that cannot be planned (e.g. `wgmma` before sm_90) is reported in its
/// [`Prepared`], and the others still run. For a kernel with clusters,
/// [`Prepared::launch_note`] says how many clusters fit at once and the grid.
///
/// # Errors
/// A GPU error uploading a `C`; the kernels' own errors go into [`Prepared`].
fn tensor_core_kernels<'a, T: crate::matmul::TcElem<Elem: Operand>>(
    bench: &'a Bench<'_>,
    operands: &'a Operands<'_, T::Elem>,
    cs: &'a mut Vec<DeviceBuffer<T::Elem>>,
) -> Result<Vec<Prepared<'a>>, GpuError> {
    use crate::matmul::{GemmPlan, TcKernel};
    let (m, n, k) = operands.dims;
    let nan = vec![<T::Elem as Operand>::NAN; m * n];
    for _ in TcKernel::ALL {
        cs.push(upload(bench, &nan)?);
    }
    let gpu = &bench.gpu;
    let prepared = TcKernel::ALL
        .into_iter()
        .zip(cs.iter_mut())
        .map(|(kernel, c)| {
            let mut launch_note = None;
            let launch = GemmPlan::<T>::new(gpu, kernel, m, n, k, operands.a, operands.b, c)
                .map(|mut plan| {
                    if let Some(fit) = plan.max_active_clusters() {
                        let cfg = plan.config();
                        launch_note = Some(format!(
                            "cuOccupancyMaxActiveClusters = {fit} clusters of {} blocks \
                             ({} threads, {} bytes of dynamic shared memory each); grid {:?} \
                             blocks, block {:?}",
                            kernel.cluster_m(),
                            cfg.block_dim.0,
                            cfg.shared_mem_bytes,
                            cfg.grid_dim,
                            cfg.block_dim
                        ));
                    }
                    Box::new(move || plan.launch(gpu).map_err(BenchError::from)) as Launch<'a>
                })
                .map_err(BenchError::from);
            Prepared {
                kernel: kernel.name(),
                launch,
                launch_note,
            }
        })
        .collect();
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column-major GEMM on the CPU, interpreting buffers as cuBLAS does:
    /// `C = op(X)·op(Y)`, `C` m×n with leading dimension `ldc`.
    fn column_major(call: &CublasCall, x: &[f64], y: &[f64]) -> Vec<f64> {
        let (m, n, k) = call.mnk;
        let mut c = vec![f64::NAN; call.ldc * n];
        for j in 0..n {
            for i in 0..m {
                let mut sum = 0.0;
                for p in 0..k {
                    // op(X) is m×k: X stored k×m when transposed.
                    let x_ip = if call.op_first.transposes() {
                        x[p + i * call.ld_first]
                    } else {
                        x[i + p * call.ld_first]
                    };
                    let y_pj = if call.op_second.transposes() {
                        y[j + p * call.ld_second]
                    } else {
                        y[p + j * call.ld_second]
                    };
                    sum += x_ip * y_pj;
                }
                c[i + j * call.ldc] = sum;
            }
        }
        c
    }

    /// The cuBLAS call on `B`'s and `A`'s row-major buffers writes the row-major
    /// `C = A·Bᵀ`, exactly, on a small non-square case.
    #[test]
    fn cublas_call_computes_row_major_a_times_b_transposed() {
        let (m, n, k) = (3, 5, 4);
        let a: Vec<f64> = (0..m * k).map(|i| (i * 7 % 9) as f64 - 4.0).collect();
        let b: Vec<f64> = (0..n * k).map(|i| (i * 5 % 11) as f64 - 5.0).collect();
        let call = cublas_call((m, n, k));
        let got = column_major(&call, &b, &a);
        let mut want = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[j * k + p]).sum();
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn accuracy_finds_errors_and_non_finite_elements() {
        let (m, n, k) = (4, 6, 5);
        let a: Vec<f32> = random_operand(1, m * k);
        let b: Vec<f32> = random_operand(2, n * k);
        let mut c: Vec<f32> = (0..m * n)
            .map(|idx| {
                let (i, j) = (idx / n, idx % n);
                (0..k)
                    .map(|p| f64::from(a[i * k + p]) * f64::from(b[j * k + p]))
                    .sum::<f64>() as f32
            })
            .collect();
        let exact = accuracy(&c, &a, &b, (m, n, k), 1.0);
        assert_eq!(exact.non_finite, 0);
        assert!(exact.max_rel < 1e-7, "{exact:?}");
        // A corner is always sampled: spoil it.
        c[m * n - 1] += 0.5;
        let spoiled = accuracy(&c, &a, &b, (m, n, k), 1.0);
        assert!(spoiled.max_rel > 1e-3, "{spoiled:?}");
        c[0] = f32::NAN;
        let nan = accuracy(&c, &a, &b, (m, n, k), 1.0);
        assert_eq!(nan.non_finite, 1);
        assert_eq!(nan.max_rel, f64::INFINITY);
    }

    #[test]
    fn flags_name_what_is_wrong() {
        let good = Accuracy {
            max_rel: 1e-3,
            non_finite: 0,
        };
        assert!(flags(&good, Some(&good), 4e-3).is_empty());
        let worse = Accuracy {
            max_rel: 2.5e-3,
            ..good
        };
        let f = flags(&worse, Some(&good), 4e-3);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("worse than 2x cuBLAS"), "{f:?}");
        let nan = Accuracy {
            max_rel: f64::INFINITY,
            non_finite: 3,
        };
        assert_eq!(flags(&nan, None, 4e-3).len(), 2);
    }

    #[test]
    fn bounds_and_names() {
        // bf16 output rounding dominates at k = 4096: 2^-8 + γ_4096 with u = 2^-23, where
        // γ_k = k·u / (1 − k·u) ≈ 4.88e-4; ≈ 4.4e-3 in all.
        let b = GemmPrecision::Bf16.error_bound(4096);
        let ku = 4096.0 * 2f64.powi(-23);
        assert!((b - (2f64.powi(-8) + ku / (1.0 - ku))).abs() < 1e-15, "{b}");
        assert!(GemmPrecision::Fp32.error_bound(4096) < GemmPrecision::Tf32.error_bound(4096));
        assert!(GemmPrecision::Fp16.error_bound(4096) < b);
        for p in GemmPrecision::ALL {
            assert_eq!(GemmPrecision::from_name(p.name()), Some(p));
        }
        assert_eq!(GemmPrecision::from_name("BF16"), Some(GemmPrecision::Bf16));
        assert_eq!(GemmPrecision::from_name("fp64"), None);
        assert_eq!(GemmPrecision::Tf32.compute(), ComputeType::F32FastTf32);
    }

    /// The FP8 rows' check: E4M3 inputs, a bf16 `C` scaled by `scale_a·scale_b`; a `C`
    /// that left out the scale is far off.
    #[test]
    fn fp8_accuracy_applies_the_scale() {
        let (m, n, k) = (3, 5, 32);
        let fp8 = |seed, len| -> Vec<F8E4M3> {
            random_f64(seed, len)
                .into_iter()
                .map(|v| F8E4M3::from_f32((2.0 * (v - 1.0)) as f32))
                .collect()
        };
        let (a, b) = (fp8(1, m * k), fp8(2, n * k));
        let scale = f64::from(FP8_SCALES.0) * f64::from(FP8_SCALES.1);
        let product = |s: f64| -> Vec<bf16> {
            (0..m * n)
                .map(|idx| {
                    let (i, j) = (idx / n, idx % n);
                    let v: f64 = (0..k)
                        .map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64())
                        .sum();
                    bf16::from_f64(s * v)
                })
                .collect()
        };
        let good = accuracy(&product(scale), &a, &b, (m, n, k), scale);
        assert!(
            good.max_rel <= GemmPrecision::E4m3.error_bound(k),
            "{good:?}"
        );
        let unscaled = accuracy(&product(1.0), &a, &b, (m, n, k), scale);
        assert!(unscaled.max_rel > 0.1, "{unscaled:?}");
        assert_eq!(GemmPrecision::from_name("E4M3"), Some(GemmPrecision::E4m3));
    }

    #[test]
    fn launches_and_per_launch_stats() {
        assert_eq!(launches_per_sample(2.0 * 2048f64.powi(3)), 12);
        assert_eq!(launches_per_sample(2.0 * 8192f64.powi(3)), 1);
        let s = per_launch(Stats::from_samples(vec![4.0, 8.0, 6.0]), 4);
        assert_eq!((s.min_ms, s.median_ms, s.max_ms), (1.0, 1.5, 2.0));
    }
}
