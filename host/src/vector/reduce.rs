//! The reductions (sum, min, max: [`ReduceOp`]) and dot products, each two launches over a
//! [`Split`] of the input, with their device [`Scratch`].

use super::elementwise::{Float, FloatKernels};
use super::scan::ScanState;
use super::{Element, config_1d, download, finish, sm_count, upload, upload_into};
use crate::gpu::{Gpu, GpuError, ResolvedOf, kernel_table};
use cuda_std::launch::{Kernel, Out, Safe, Slice, Value};
use cust::{error::GpuContext, memory::DeviceBuffer};
use kernels::vector::BLOCK_THREADS;

/// A reduction kernel: `(x: &[T], chunk: usize, out: OutSlice<T>)`.
pub type ReduceKernel<T> = Kernel<(Slice<T>, Value<usize>, Out<T>), Safe>;

kernel_table! {
    /// The reductions of element type `T`, each resolved in a [`Gpu`]'s module on first use
    /// ([`Gpu::kernels`]): `reduce[op as usize]` is `T::REDUCE_KERNELS[op as usize]`.
    struct ReduceKernels<T> {
        reduce: [ResolvedOf<ReduceKernel<T>>; 3],
    }
}

/// A reduction operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum (wrapping for integers).
    Sum,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

impl ReduceOp {
    /// All operators.
    pub const ALL: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }

    fn kernel<T: Element>(self) -> ReduceKernel<T> {
        T::REDUCE_KERNELS[self as usize]
    }
}

/// How a reduction or scan of `len` elements is split over blocks: `blocks` chunks of
/// `chunk` elements (the last one shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// Blocks of the first pass (= partial results).
    pub blocks: u32,
    /// Elements per block: a positive multiple of 2048 (256 threads × 8), so chunks start
    /// 16-byte aligned.
    pub chunk: usize,
}

impl Split {
    /// The split for `len` elements on a GPU with `sm_count` multiprocessors: at most 8
    /// blocks of 256 threads per multiprocessor (one full wave), chunks a multiple of 2048.
    pub fn new(len: usize, sm_count: u32) -> Self {
        let tile = BLOCK_THREADS as usize * 8;
        let max_blocks = (sm_count.max(1) as usize) * 8;
        let chunk = len.div_ceil(max_blocks).div_ceil(tile).max(1) * tile;
        let blocks = len.div_ceil(chunk).max(1);
        Self {
            blocks: u32::try_from(blocks).unwrap_or(u32::MAX),
            chunk,
        }
    }
}

/// Device scratch for reductions, dots and scans of one length (allocate once, reuse).
#[derive(Debug)]
pub struct Scratch<T: Element> {
    split: Split,
    partials: DeviceBuffer<T>,
    /// The reduction result (one element).
    pub result: DeviceBuffer<T>,
    scan: ScanState,
}

impl<T: Element> Scratch<T> {
    /// The split this scratch was made for.
    pub fn split(&self) -> Split {
        self.split
    }

    /// `(partials, result)`, for launches outside this module (the bench's CUDA C twins).
    pub(crate) fn reduce_buffers(&mut self) -> (&mut DeviceBuffer<T>, &mut DeviceBuffer<T>) {
        (&mut self.partials, &mut self.result)
    }

    /// The scan state, for [`scan_dev`](super::scan_dev) and the bench's CUDA C twins.
    pub fn scan_state(&mut self) -> &mut ScanState {
        &mut self.scan
    }
}

/// The second pass of a reduction: one block over `blocks` partials.
fn second_pass(blocks: u32) -> Split {
    Split {
        blocks: 1,
        chunk: (blocks as usize).div_ceil(4) * 4,
    }
}

/// Device scratch for reductions and scans of `len` elements.
pub fn scratch<T: Element>(gpu: &Gpu, len: usize) -> Result<Scratch<T>, GpuError> {
    let split = Split::new(len, sm_count(gpu)?);
    let s = gpu.stream();
    let what = "allocating reduction and scan scratch";
    Ok(Scratch {
        split,
        partials: DeviceBuffer::zeroed_async(split.blocks as usize, s).gpu_context(what)?,
        result: DeviceBuffer::zeroed_async(1, s).gpu_context(what)?,
        scan: ScanState::new(gpu, len)?,
    })
}

/// One pass of the chunked reduction kernel of `op` (`x` → one value per block into `out`).
fn reduce_pass<T: Element>(
    gpu: &Gpu,
    op: ReduceOp,
    x: &DeviceBuffer<T>,
    split: Split,
    out: &mut DeviceBuffer<T>,
) -> Result<(), GpuError> {
    let cfg = config_1d(split.blocks, BLOCK_THREADS);
    let kernel = gpu.kernels::<ReduceKernels<T>>().reduce[op as usize].get(gpu, op.kernel())?;
    kernel.launch(gpu.stream(), cfg, (x, split.chunk, out))
}

/// `scratch.result = op(x[..])` in two launches.
pub fn reduce_dev<T: Element>(
    gpu: &Gpu,
    op: ReduceOp,
    x: &DeviceBuffer<T>,
    scratch: &mut Scratch<T>,
) -> Result<(), GpuError> {
    reduce_pass(gpu, op, x, scratch.split, &mut scratch.partials)?;
    let second = second_pass(scratch.split.blocks);
    reduce_pass(gpu, op, &scratch.partials, second, &mut scratch.result)
}

/// `scratch.result = Σ a[i]·b[i]` in two launches (dot, then a sum of the partials).
pub fn dot_dev<T: Float>(
    gpu: &Gpu,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    scratch: &mut Scratch<T>,
) -> Result<(), GpuError> {
    let split = scratch.split;
    let cfg = config_1d(split.blocks, BLOCK_THREADS);
    let dot = gpu.kernels::<FloatKernels<T>>().dot.get(gpu, T::DOT)?;
    dot.launch(
        gpu.stream(),
        cfg,
        (a, b, split.chunk, &mut scratch.partials),
    )?;
    reduce_pass(
        gpu,
        ReduceOp::Sum,
        &scratch.partials,
        second_pass(split.blocks),
        &mut scratch.result,
    )
}

/// `op(x[..])` on the GPU (the identity for an empty `x`).
pub fn reduce<T: Element>(gpu: &Gpu, op: ReduceOp, x: &[T]) -> Result<T, GpuError> {
    let x_d = upload(gpu, x)?;
    let mut s = scratch::<T>(gpu, x.len())?;
    upload_into(gpu, &[T::POISON], &mut s.result)?;
    reduce_dev(gpu, op, &x_d, &mut s)?;
    finish(gpu, op.kernel::<T>().name())?;
    Ok(download("reduce", &s.result, 1)?[0])
}

/// `Σ a[i]·b[i]` on the GPU.
pub fn dot<T: Float>(gpu: &Gpu, a: &[T], b: &[T]) -> Result<T, GpuError> {
    let (a_d, b_d) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut s = scratch::<T>(gpu, a.len().min(b.len()))?;
    upload_into(gpu, &[T::POISON], &mut s.result)?;
    dot_dev(gpu, &a_d, &b_d, &mut s)?;
    finish(gpu, T::DOT.name())?;
    Ok(download("dot", &s.result, 1)?[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers_the_input_with_aligned_chunks() {
        for len in [0usize, 1, 31, 2048, 2049, (1 << 20) + 7, 1 << 28] {
            for sms in [1u32, 132] {
                let s = Split::new(len, sms);
                assert!(s.chunk > 0 && s.chunk.is_multiple_of(BLOCK_THREADS as usize * 8));
                assert!(s.blocks as usize * s.chunk >= len, "{len} {sms}: {s:?}");
                assert!(
                    s.blocks as usize <= (sms as usize * 8).max(1),
                    "{len} {sms}: {s:?}"
                );
                assert!(len == 0 || (s.blocks as usize - 1) * s.chunk < len, "{s:?}");
            }
        }
    }
}
