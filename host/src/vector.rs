//! Vector workloads on the GPU and their CPU references: the STREAM kernels (copy, scale,
//! add, triad), axpy, dot products, sum/min/max reductions, inclusive/exclusive scans,
//! the radix sort (`vector/sort.rs`) and SGEMM.
//!
//! Two levels:
//! - device-level (`*_dev` methods of [`Gpu`]): queue the launches on device buffers, no
//!   copies, no synchronisation — what the benchmark times;
//! - host-level (methods without suffix): copy the inputs in, poison the outputs, launch,
//!   synchronise and copy the results back — what tests and the CLI use.
//!
//! CPU references (`*_cpu`, `*_f64`; in `vector/cpu.rs`, re-exported here) use rayon and the
//! same operation order where the GPU result is exact (copy, scale, add, triad, axpy, integer
//! reductions and scans); for float reductions, scans and SGEMM they are computed in `f64` and
//! tests compare with an error bound.
//!
//! Conventions: vectors are whole device allocations (the kernels rely on their 16-byte
//! alignment); matrices are row-major (`A` m×k, `B` k×n, `C` m×n).
//!
//! The parts, each re-exported here: the element-wise kernels (`vector/elementwise.rs`:
//! copy, scale, add, triad, axpy), the reductions and dot products (`vector/reduce.rs`), the
//! scans (`vector/scan.rs`), SGEMM (`vector/sgemm.rs`) and the radix sort
//! (`vector/sort.rs`); this file holds the [`Element`] types and the copies in and out.

use crate::gpu::{Gpu, GpuError};
use cust::{
    device::DeviceAttribute,
    error::GpuContext,
    function::LaunchConfig,
    memory::{AsyncCopyDestination, DeviceBuffer, ValidAsZeroBits},
};

mod cpu;
mod elementwise;
mod reduce;
mod scan;
mod sgemm;
mod sort;

pub use cpu::{
    add_cpu, affine_scan_cpu, axpy_cpu, copy_cpu, dot_f64, min_max_cpu, reduce_u32_cpu, scale_cpu,
    scan_f64, scan_u32_cpu, sgemm_f64, sum_f64, triad_cpu,
};
pub use elementwise::{
    AxpyKernel, DotKernel, Float, Map1Kernel, Map2Kernel, ScaleKernel, TriadKernel, add, add_dev,
    axpy, axpy_dev, copy, copy_dev, scale, scale_dev, stream_config, triad, triad_dev,
};
pub use reduce::{
    ReduceKernel, ReduceOp, Scratch, Split, dot, dot_dev, reduce, reduce_dev, scratch,
};
pub(crate) use scan::LookBackBook;
pub use scan::{
    AFFINE_SCAN_KERNELS, ScanKernel, ScanKind, ScanLaunch, ScanState, Scannable, affine_scan,
    affine_scan_dev, scan, scan_dev,
};
pub use sgemm::{SgemmKernel, sgemm, sgemm_dev};
pub use sort::{
    HistogramKernel, MAX_SORT_LEN, SortError, SortPassKernel, SortPlan, Sortable, check_bits,
    sort_keys, sort_keys_bits, sort_keys_cpu, sort_keys_dev, sort_pairs, sort_pairs_bits,
    sort_pairs_cpu, sort_pairs_dev,
};

/// An element type the vector kernels exist for.
pub trait Element:
    ValidAsZeroBits + cuda_std::DeviceCopy + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// Type name as in the kernel names (`f32`, `f64`, `u32`).
    const NAME: &'static str;
    /// Elements per 16-byte access in the kernels.
    const LANES: usize;
    /// A value written to output buffers before a launch, so unwritten elements show up
    /// (a NaN with a recognisable payload for floats).
    const POISON: Self;
    /// Typed handles of `reduce_{sum,min,max}_<type>`.
    const REDUCE_KERNELS: [ReduceKernel<Self>; 3];
}

impl Element for f32 {
    const NAME: &'static str = "f32";
    const LANES: usize = 4;
    const POISON: Self = f32::from_bits(0x7fc0_dead);
    const REDUCE_KERNELS: [ReduceKernel<Self>; 3] = [
        kernels::reduce::reduce_sum_f32,
        kernels::reduce::reduce_min_f32,
        kernels::reduce::reduce_max_f32,
    ];
}
impl Element for f64 {
    const NAME: &'static str = "f64";
    const LANES: usize = 2;
    const POISON: Self = f64::from_bits(0x7ff8_0000_dead_beef);
    const REDUCE_KERNELS: [ReduceKernel<Self>; 3] = [
        kernels::reduce::reduce_sum_f64,
        kernels::reduce::reduce_min_f64,
        kernels::reduce::reduce_max_f64,
    ];
}
impl Element for u32 {
    const NAME: &'static str = "u32";
    const LANES: usize = 4;
    const POISON: Self = 0xdead_beef;
    const REDUCE_KERNELS: [ReduceKernel<Self>; 3] = [
        kernels::reduce::reduce_sum_u32,
        kernels::reduce::reduce_min_u32,
        kernels::reduce::reduce_max_u32,
    ];
}

fn config_1d(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig::new(blocks.max(1), threads, 0)
}

/// Device-level launches: queue work on device buffers, no synchronisation.
/// Number of streaming multiprocessors.
pub fn sm_count(gpu: &Gpu) -> Result<u32, GpuError> {
    let n = gpu
        .context()
        .attribute(DeviceAttribute::MultiprocessorCount)?;
    Ok(u32::try_from(n).unwrap_or(1).max(1))
}

/// Host-level operations: copy in, poison the output, launch, synchronise, copy back.
/// A device copy of `x`.
pub fn upload<T: Element>(gpu: &Gpu, x: &[T]) -> Result<DeviceBuffer<T>, GpuError> {
    DeviceBuffer::from_slice_async(x, gpu.stream()).gpu_context("copying to the GPU")
}

/// A device buffer of `len` elements filled with [`Element::POISON`].
pub fn poisoned<T: Element>(gpu: &Gpu, len: usize) -> Result<DeviceBuffer<T>, GpuError> {
    upload(gpu, &vec![T::POISON; len.max(1)])
}

fn download<T: Element>(
    what: &'static str,
    x: &DeviceBuffer<T>,
    len: usize,
) -> Result<Vec<T>, GpuError> {
    let mut v = x
        .as_host_vec()
        .with_gpu_context(|| format!("copying the {what} result to the host"))?;
    v.truncate(len);
    Ok(v)
}

/// Waits for the queued launches; a kernel fault is reported as a failure of `kernel`.
fn finish(gpu: &Gpu, kernel: &'static str) -> Result<(), GpuError> {
    gpu.stream()
        .synchronize()
        .with_gpu_context(|| format!("running `{kernel}`"))
}

fn upload_into<T: Element>(gpu: &Gpu, x: &[T], dst: &mut DeviceBuffer<T>) -> Result<(), GpuError> {
    dst.async_copy_from(x, gpu.stream())
        .gpu_context("copying to the GPU")
}
