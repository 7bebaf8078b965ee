//! SGEMM: `c = alpha · a·b + beta · c` on `f32` (row-major), with the `cp.async` kernel
//! where the device has it and the baseline kernel elsewhere.

use super::{download, finish, upload};
use crate::gpu::{FunctionOf, Gpu, GpuError, ResolvedOf};
use cuda_std::launch::{Kernel, MutPtr, Slice, Unsafe, Value};
use cust::{function::LaunchConfig, memory::DeviceBuffer};
use kernels::gemm::{SGEMM_THREADS, SGEMM_TILE_M, SGEMM_TILE_N};
use kernels::gemm_sm80::{SGEMM80_SHARED_BYTES, SGEMM80_THREADS, SGEMM80_TILE_M, SGEMM80_TILE_N};

/// `sgemm`: `(m, n, k, alpha, a, b, beta, c: *mut f32)`.
pub type SgemmKernel = Kernel<
    (
        Value<u32>,
        Value<u32>,
        Value<u32>,
        Value<f32>,
        Slice<f32>,
        Slice<f32>,
        Value<f32>,
        MutPtr<f32>,
    ),
    Unsafe,
>;

/// The SGEMM kernels, resolved in a [`Gpu`]'s module on first use ([`Gpu::kernels`]):
/// `sgemm_cp_async` where the module has it for the device (`None` where not), and `sgemm`.
#[derive(Default)]
struct SgemmKernels {
    cp_async: std::sync::OnceLock<Option<FunctionOf<SgemmKernel>>>,
    sgemm: ResolvedOf<SgemmKernel>,
}

/// `c = alpha · a·b + beta · c` (row-major; `a` m×k, `b` k×n, `c` m×n).
///
/// Kernel choice: `kernels::gemm_sm80::sgemm_cp_async` (the `cp.async` pipeline) when the
/// module has it for this device (sm_80 and later) and `k` and `n` are multiples of 4, else
/// `kernels::gemm::sgemm`. Both accumulate each output over k in increasing order with
/// fused multiply-adds, so they give the same bits.
///
/// # Panics
/// If a buffer is shorter than its matrix or a dimension is 0.
pub fn sgemm_dev(
    gpu: &Gpu,
    (m, n, k): (u32, u32, u32),
    alpha: f32,
    a: &DeviceBuffer<f32>,
    b: &DeviceBuffer<f32>,
    beta: f32,
    c: &mut DeviceBuffer<f32>,
) -> Result<(), GpuError> {
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    assert!(
        m > 0 && n > 0 && k > 0,
        "sgemm: dimensions must be positive"
    );
    assert!(
        a.len() >= mu * ku && b.len() >= ku * nu && c.len() >= mu * nu,
        "sgemm: buffer too short"
    );
    let table = gpu.kernels::<SgemmKernels>();
    // The sm_80 variant is picked when the device can run it; on older devices (or a module
    // without the variant) the lookup fails (once per `Gpu`) and the baseline kernel runs.
    let cp_async = table.cp_async.get_or_init(|| {
        let handle: SgemmKernel = kernels::gemm_sm80::sgemm_cp_async;
        gpu.module().kernel(handle).ok()
    });
    if let Some(cp_async) = cp_async
        .as_ref()
        .filter(|_| k.is_multiple_of(4) && n.is_multiple_of(4))
    {
        let cfg = LaunchConfig::new(
            (n.div_ceil(SGEMM80_TILE_N), m.div_ceil(SGEMM80_TILE_M)),
            SGEMM80_THREADS,
            SGEMM80_SHARED_BYTES,
        );
        // SAFETY: k and n multiples of 4 (checked), dimensions positive, buffer sizes
        // checked above, whole allocations (16-byte aligned); the module's launch shape
        // (grid, 256 threads, `SGEMM80_SHARED_BYTES`); `c` is borrowed mutably, so nothing
        // else uses it.
        return unsafe {
            cp_async.launch_unchecked(gpu.stream(), cfg, (m, n, k, alpha, a, b, beta, c))
        };
    }
    let cfg = LaunchConfig::new(
        (n.div_ceil(SGEMM_TILE_N), m.div_ceil(SGEMM_TILE_M)),
        SGEMM_THREADS,
        0,
    );
    let kernel = table.sgemm.get(gpu, kernels::gemm::sgemm)?;
    // SAFETY: buffer sizes checked above, whole allocations (16-byte aligned); the
    // module's launch shape; `c` is borrowed mutably, so nothing else uses it.
    unsafe { kernel.launch_unchecked(gpu.stream(), cfg, (m, n, k, alpha, a, b, beta, c)) }
}

/// `alpha · a·b + beta · c` on the GPU (row-major; `a` m×k, `b` k×n, `c` m×n).
pub fn sgemm(
    gpu: &Gpu,
    dims: (u32, u32, u32),
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &[f32],
) -> Result<Vec<f32>, GpuError> {
    let (a_d, b_d) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut c_d = upload(gpu, c)?;
    sgemm_dev(gpu, dims, alpha, &a_d, &b_d, beta, &mut c_d)?;
    finish(gpu, "sgemm")?;
    download("sgemm", &c_d, c.len())
}
