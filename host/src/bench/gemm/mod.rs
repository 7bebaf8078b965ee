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
//! `ldc = n` (`cublas_call` in [`peers`], tested on the CPU there and on the GPU in blastoff's
//! tests).
//!
//! Inputs are random in [-1, 1) from fixed seeds, rounded to the storage type; the same
//! values go to every implementation and to the reference.
//!
//! Our kernels: the tensor-core GEMMs of `host::matmul` (`wgmma`, `wgmma c2` — the same
//! kernel with clusters of two sharing `B` — and `mma.sync`, for BF16, FP16 and TF32, and
//! for TF32 `wgmma rs` and `wgmma rs c2`, which round `A` in registers; hooked
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

//!
//! The parts: [`precision`] (the precisions, their storage types and error bounds),
//! [`peers`] (cuBLAS and cuBLASLt, prepared), [`ours`] (our kernels, prepared), [`rows`]
//! (the inputs, the interleaved timing and the rows of one precision and shape) and
//! [`accuracy`] (the check of each `C`).
//!
//! [`FP8_SCALES`]: precision::FP8_SCALES
//! [`tensor_core_kernels`]: ours::tensor_core_kernels
//! [`launches_per_sample`]: rows::launches_per_sample

mod accuracy;
mod ours;
mod peers;
mod precision;
mod rows;

pub use precision::GemmPrecision;

use super::{Bench, BenchError, random_f64};
use crate::gpu::GpuError;
use cust::error::GpuContext;
use cust::memory::{DeviceBuffer, DeviceCopy};
use precision::Operand;
use rayon::prelude::*;

/// The shapes `(m, n, k)` of the GEMM rows by precision when none are given: three cubes
/// and two transformer shapes (M=N=8192, K=2048; M=4096, N=14336, K=4096).
pub const DEFAULT_PRECISION_GEMM_SHAPES: [(u32, u32, u32); 5] = [
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (8192, 8192, 2048),
    (4096, 14336, 4096),
];

/// The inputs of one (precision, shape): dimensions, host copies, device buffers.
pub(super) struct Operands<'a, T: DeviceCopy> {
    /// `(m, n, k)`.
    pub dims: (usize, usize, usize),
    /// Launches per timed sample ([`launches_per_sample`](rows::launches_per_sample)).
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

/// `c` copied to the host.
fn download<T: DeviceCopy>(c: &DeviceBuffer<T>) -> Result<Vec<T>, BenchError> {
    Ok(c.as_host_vec().gpu_context("copying C back")?)
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
