//! Attention forward on the GPU: `O = softmax(Q·Kᵀ/√D)·V` and the log-sum-exp `L`, in bf16
//! or f16, with the kernels of `kernels::attention`: on `wgmma` on sm_90
//! ([`AttentionKernel::Wgmma`], `kernels::attention::wgmma`; and on the CPU emulator),
//! on `mma.sync` on sm_80 and later ([`AttentionKernel::MmaSync`]).
//!
//! Layouts ([`common::attention`]): `Q` and `O` are `(B, H, S, D)` row-major, `K` and `V`
//! `(B, H_kv, S, D)` (grouped-query attention: `H_kv` divides `H`, query head `h` reads
//! key/value head `h / (H / H_kv)`), `L` is `(B, H, S)` in `f32` (natural log). The tensors
//! are contiguous: the strides are those of the shape, and a buffer shorter than its shape
//! needs is refused.
//!
//! Shapes ([`AttentionShape::check`]): `D` ∈ {64, 128}; `B`, `H`, `H_kv`, `S` ≥ 1; `H_kv`
//! divides `H`; `B·H·ceil(S / 64)` (the grid, one block per head and 64 query rows) below
//! 2³¹; for [`AttentionKernel::Wgmma`] also `B·H·S` below 2³¹ (its tensor maps' row
//! coordinates are `i32`; checked by [`AttentionPlan::with_kernel`]). A shape outside these
//! rules is an error naming the value and what is allowed, before any launch.
//!
//! Two levels, as in [`crate::matmul`]: [`AttentionPlan`] (made once per shape and buffers,
//! launched many times, no synchronisation: what a benchmark times) and [`attention`]
//! (upload, run, download). [`reference_f64`] and [`error_bound`] are the CPU side the tests
//! compare with.
//!
//! The parts, each re-exported here: the input types and kernel handles ([`AttnElem`],
//! `attention/elem.rs`), the shape rules ([`AttentionShape`], `attention/shape.rs`), the plan
//! and its kernel table (`attention/plan.rs`) and the CPU reference
//! (`attention/reference.rs`); this file holds [`AttentionKernel`] and [`attention`].

use crate::gpu::{Gpu, GpuError};
use cust::{error::GpuContext, memory::DeviceBuffer};

mod elem;
mod plan;
mod reference;
mod shape;

pub use elem::{AttnElem, AttnKernel, AttnParams, WgAttnKernel, WgAttnParams};
pub use plan::AttentionPlan;
pub use reference::{ReferenceRow, error_bound, reference_f64};
pub use shape::AttentionShape;

/// Which attention kernel a plan launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttentionKernel {
    /// `mma.sync` (sm_80 and later): 64 query rows per block of 4 warps.
    MmaSync,
    /// `wgmma` with `P` from registers (sm_90a): a TMA producer warpgroup and 64 query rows
    /// per consumer warpgroup, 2 consumers (128 rows) for D = 128, 3 (192 rows) for D = 64.
    Wgmma,
}

impl AttentionKernel {
    /// The fastest kernel `gpu` runs: [`AttentionKernel::Wgmma`] on compute capability 9.0
    /// (and the CPU emulator, which reports 9.0), [`AttentionKernel::MmaSync`] otherwise.
    ///
    /// # Errors
    /// A driver error if the compute capability cannot be read.
    pub fn best_for(gpu: &Gpu) -> Result<Self, GpuError> {
        let cc = gpu
            .context()
            .compute_capability()
            .gpu_context("reading the compute capability")?;
        Ok(if (cc.major, cc.minor) == (9, 0) {
            Self::Wgmma
        } else {
            Self::MmaSync
        })
    }

    /// The kernel's name stem in reports (`mma.sync`, `wgmma`).
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::MmaSync => "mma.sync",
            Self::Wgmma => "wgmma",
        }
    }
}

/// The output of [`attention`]: `O` `(B, H, S, D)` and `L` `(B, H, S)`.
#[derive(Clone, Debug)]
pub struct AttentionOutput<T> {
    /// `O`, in the input type.
    pub o: Vec<T>,
    /// `L = ln Σ_j exp(q·k_j/√D)` per query row.
    pub lse: Vec<f32>,
}

/// Attention of `shape` on the GPU: uploads `q`, `k`, `v`, runs the fastest kernel the
/// device has ([`AttentionKernel::best_for`]), waits and downloads `O` and `L`.
///
/// # Errors
/// As [`attention_with`].
pub fn attention<T: AttnElem>(
    gpu: &Gpu,
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
) -> Result<AttentionOutput<T>, GpuError> {
    attention_with(gpu, AttentionKernel::best_for(gpu)?, shape, q, k, v)
}

/// [`attention`] with the kernel `kernel`.
///
/// # Errors
/// As [`AttentionPlan::with_kernel`]; [`GpuError::Launch`] (or a driver error) naming the
/// kernel if it fails; errors of the copies.
pub fn attention_with<T: AttnElem>(
    gpu: &Gpu,
    kernel: AttentionKernel,
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
) -> Result<AttentionOutput<T>, GpuError> {
    // The shape first: its element counts are only computed once they are known to fit.
    shape.check()?;
    shape.check_buffers([q.len(), k.len(), v.len(), shape.q_len(), shape.lse_len()])?;
    let up = |x: &[T], len: usize, what: &str| {
        DeviceBuffer::from_slice_async(&x[..len], gpu.stream())
            .with_gpu_context(|| format!("copying {what} to the GPU"))
    };
    let q_d = up(q, shape.q_len(), "Q")?;
    let k_d = up(k, shape.kv_len(), "K")?;
    let v_d = up(v, shape.kv_len(), "V")?;
    let mut o_d = DeviceBuffer::from_slice_async(&vec![T::POISON; shape.q_len()], gpu.stream())
        .gpu_context("allocating O")?;
    let mut l_d = DeviceBuffer::from_slice_async(&vec![f32::NAN; shape.lse_len()], gpu.stream())
        .gpu_context("allocating L")?;
    let mut plan =
        AttentionPlan::with_kernel(gpu, kernel, shape, &q_d, &k_d, &v_d, &mut o_d, &mut l_d)?;
    plan.launch(gpu)?;
    let cfg = plan.config();
    drop(plan);
    gpu.sync_after(&format!("{} attention ({shape})", T::NAME), cfg)?;
    Ok(AttentionOutput {
        o: o_d.as_host_vec().gpu_context("copying O to the host")?,
        lse: l_d.as_host_vec().gpu_context("copying L to the host")?,
    })
}
