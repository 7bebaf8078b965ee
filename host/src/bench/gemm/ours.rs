//! Our kernels in the GEMM rows, each prepared to time on one (precision, shape)
//! ([`Prepared`]): the tensor-core GEMMs of `host::matmul` ([`tensor_core_kernels`]) and,
//! for FP32, the SGEMM of [`crate::vector::sgemm_dev`] ([`sgemm_kernel`]).

use super::precision::Operand;
use super::{Launch, Operands, upload};
use crate::bench::{Bench, BenchError};
use crate::gpu::GpuError;
use cust::memory::DeviceBuffer;
use rayon::prelude::*;

/// One of our kernels on one (precision, shape), ready to time: its name, its launch or why
/// it cannot run (e.g. a `wgmma` kernel on a GPU before sm_90), and how it launches.
pub(super) struct Prepared<'a> {
    /// `wgmma`, `wgmma c2`, `wgmma rs`, `wgmma rs c2` (TF32), `mma.sync`, `sgemm`.
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
pub(super) type OurKernels<T> = for<'a> fn(
    &'a Bench<'_>,
    &'a Operands<'_, T>,
    &'a mut Vec<DeviceBuffer<T>>,
) -> Result<Vec<Prepared<'a>>, GpuError>;

/// FP32's kernel: the SGEMM of [`crate::vector::sgemm_dev`], which reads `B` as k×n
/// row-major, so it gets `Bᵀ` (transposed on the host and uploaded here, owned by its
/// launch): the same product `A·Bᵀ`. Pushes its NaN-filled `C` onto `cs` (see
/// [`OurKernels`]).
///
/// # Errors
/// A GPU error uploading `Bᵀ` or `C`.
pub(super) fn sgemm_kernel<'a>(
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

/// Our tensor-core kernels (`host::matmul`'s `GemmPlan` for every `TcKernel` of the type,
/// `TcElem::KERNELS`: `wgmma`, `wgmma c2`, for TF32 the RS forms `wgmma rs` and
/// `wgmma rs c2` (`A` rounded in registers), `mma.sync`) for input type `T` (`bf16`, `f16`,
/// or [`Tf32`] on `f32` data): each
/// planned once on `operands` and its own NaN-filled `C`, pushed onto `cs` (see
/// [`OurKernels`]; a kernel that writes nothing cannot pass with another's result). A
/// kernel that cannot be planned (e.g. `wgmma` before sm_90) is reported in its
/// [`Prepared`], and the others still run. For a kernel with clusters,
/// [`Prepared::launch_note`] says how many clusters fit at once and the grid.
///
/// # Errors
/// A GPU error uploading a `C`; the kernels' own errors go into [`Prepared`].
///
/// [`Tf32`]: crate::matmul::Tf32
pub(super) fn tensor_core_kernels<'a, T: crate::matmul::TcElem<Elem: Operand>>(
    bench: &'a Bench<'_>,
    operands: &'a Operands<'_, T::Elem>,
    cs: &'a mut Vec<DeviceBuffer<T::Elem>>,
) -> Result<Vec<Prepared<'a>>, GpuError> {
    use crate::matmul::GemmPlan;
    let (m, n, k) = operands.dims;
    let nan = vec![<T::Elem as Operand>::NAN; m * n];
    for _ in T::KERNELS {
        cs.push(upload(bench, &nan)?);
    }
    let gpu = &bench.gpu;
    let prepared = T::KERNELS
        .iter()
        .copied()
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
