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

use crate::gpu::{FunctionOf, Gpu, GpuError, ResolvedOf};
use cuda_std::launch::{AtomicOut, Kernel, MutPtr, Out, Safe, Slice, Unsafe, Value};
use cust::{
    device::DeviceAttribute,
    error::GpuContext,
    function::LaunchConfig,
    memory::{AsyncCopyDestination, DeviceBuffer, DeviceSlice, DeviceSliceMut, ValidAsZeroBits},
};
use kernels::gemm::{SGEMM_THREADS, SGEMM_TILE_M, SGEMM_TILE_N};
use kernels::gemm_sm80::{SGEMM80_SHARED_BYTES, SGEMM80_THREADS, SGEMM80_TILE_M, SGEMM80_TILE_N};
use kernels::scan::{
    MAX_EPOCH, SCAN_THREADS, SCAN_THREADS_WIDE, SCAN_TILE, SCAN_TILE_WIDE, status_words,
};
use kernels::vector::BLOCK_THREADS;

mod cpu;
mod sort;

pub use cpu::{
    add_cpu, affine_scan_cpu, axpy_cpu, copy_cpu, dot_f64, min_max_cpu, reduce_u32_cpu, scale_cpu,
    scan_f64, scan_u32_cpu, sgemm_f64, sum_f64, triad_cpu,
};
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

/// A reduction kernel: `(x: &[T], chunk: usize, out: OutSlice<T>)`.
pub type ReduceKernel<T> = Kernel<(Slice<T>, Value<usize>, Out<T>), Safe>;
/// A map kernel with one input (`copy`, `scale` without `q`): `(a: &[T], out: OutSlice<T>)`.
pub type Map1Kernel<T> = Kernel<(Slice<T>, Out<T>), Safe>;
/// `scale`: `(c: &[T], q: T, b: OutSlice<T>)`.
pub type ScaleKernel<T> = Kernel<(Slice<T>, Value<T>, Out<T>), Safe>;
/// `add`: `(a: &[T], b: &[T], c: OutSlice<T>)`.
pub type Map2Kernel<T> = Kernel<(Slice<T>, Slice<T>, Out<T>), Safe>;
/// `triad`: `(b: &[T], c: &[T], q: T, a: OutSlice<T>)`.
pub type TriadKernel<T> = Kernel<(Slice<T>, Slice<T>, Value<T>, Out<T>), Safe>;
/// `axpy`: `(alpha: T, x: &[T], y: OutSlice<T>)`.
pub type AxpyKernel<T> = Kernel<(Value<T>, Slice<T>, Out<T>), Safe>;
/// `dot`: `(a: &[T], b: &[T], chunk: usize, out: OutSlice<T>)`.
pub type DotKernel<T> = Kernel<(Slice<T>, Slice<T>, Value<usize>, Out<T>), Safe>;
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
/// A single-pass scan: `(x, out, status, counter, epoch, base)`; see `kernels::scan`.
pub type ScanKernel<T> = Kernel<
    (
        Slice<T>,
        Out<T>,
        Out<u64>,
        AtomicOut<u32>,
        Value<u32>,
        Value<u32>,
    ),
    Unsafe,
>;

/// A float type with the STREAM kernels, axpy and dot.
pub trait Float:
    Element + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + Into<f64>
{
    /// Typed handles: copy.
    const COPY: Map1Kernel<Self>;
    /// scale.
    const SCALE: ScaleKernel<Self>;
    /// add.
    const ADD: Map2Kernel<Self>;
    /// triad.
    const TRIAD: TriadKernel<Self>;
    /// axpy.
    const AXPY: AxpyKernel<Self>;
    /// dot (first pass).
    const DOT: DotKernel<Self>;
    /// `self · a + b` with one rounding (the GPU's `fma.rn`).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `v` rounded to `Self`.
    fn from_f64(v: f64) -> Self;
}

/// An element type with prefix-sum kernels (inclusive, exclusive).
pub trait Scannable: Element {
    /// Typed handles of `scan_inclusive_<type>`, `scan_exclusive_<type>`.
    const SCAN_KERNELS: [ScanKernel<Self>; 2];
    /// Threads per block and elements per tile (one block) of these kernels:
    /// `kernels::scan::{SCAN_THREADS, SCAN_TILE}` for 4-byte types,
    /// `{SCAN_THREADS_WIDE, SCAN_TILE_WIDE}` for 8-byte ones.
    const SCAN_SHAPE: (u32, usize);
}

/// Typed handles of the user-operator example, `scan_{inclusive,exclusive}_affine`: affine
/// maps `x ↦ a·x + b` (mod 2^32) packed as `a | b << 32` (`kernels::scan::affine`), composed
/// in order.
pub const AFFINE_SCAN_KERNELS: [ScanKernel<u64>; 2] = [
    kernels::scan::scan_inclusive_affine,
    kernels::scan::scan_exclusive_affine,
];

/// The reductions of element type `T`, each resolved in a [`Gpu`]'s module on first use
/// ([`Gpu::kernels`]): `reduce[op as usize]` is `T::REDUCE_KERNELS[op as usize]`.
struct ReduceKernels<T> {
    reduce: [ResolvedOf<ReduceKernel<T>>; 3],
}

impl<T> Default for ReduceKernels<T> {
    fn default() -> Self {
        Self {
            reduce: Default::default(),
        }
    }
}

/// The element-wise kernels and the dot product of float type `T`, each resolved in a
/// [`Gpu`]'s module on first use ([`Gpu::kernels`]): the [`Float`] handles.
struct FloatKernels<T> {
    copy: ResolvedOf<Map1Kernel<T>>,
    scale: ResolvedOf<ScaleKernel<T>>,
    add: ResolvedOf<Map2Kernel<T>>,
    triad: ResolvedOf<TriadKernel<T>>,
    axpy: ResolvedOf<AxpyKernel<T>>,
    dot: ResolvedOf<DotKernel<T>>,
}

impl<T> Default for FloatKernels<T> {
    fn default() -> Self {
        Self {
            copy: Default::default(),
            scale: Default::default(),
            add: Default::default(),
            triad: Default::default(),
            axpy: Default::default(),
            dot: Default::default(),
        }
    }
}

/// The scans (`[inclusive, exclusive]`) of element type `T`, each resolved in a [`Gpu`]'s
/// module on first use ([`Gpu::kernels`]): [`Scannable::SCAN_KERNELS`], and for `u64`
/// [`AFFINE_SCAN_KERNELS`] (the only `u64` scans).
struct ScanKernels<T> {
    scan: [ResolvedOf<ScanKernel<T>>; 2],
}

impl<T> Default for ScanKernels<T> {
    fn default() -> Self {
        Self {
            scan: Default::default(),
        }
    }
}

/// The SGEMM kernels, resolved in a [`Gpu`]'s module on first use ([`Gpu::kernels`]):
/// `sgemm_cp_async` where the module has it for the device (`None` where not), and `sgemm`.
#[derive(Default)]
struct SgemmKernels {
    cp_async: std::sync::OnceLock<Option<FunctionOf<SgemmKernel>>>,
    sgemm: ResolvedOf<SgemmKernel>,
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
impl Float for f32 {
    const COPY: Map1Kernel<Self> = kernels::vector::copy_f32;
    const SCALE: ScaleKernel<Self> = kernels::vector::scale_f32;
    const ADD: Map2Kernel<Self> = kernels::vector::add_f32;
    const TRIAD: TriadKernel<Self> = kernels::vector::triad_f32;
    const AXPY: AxpyKernel<Self> = kernels::vector::axpy_f32;
    const DOT: DotKernel<Self> = kernels::reduce::dot_f32;
    fn mul_add(self, a: Self, b: Self) -> Self {
        f32::mul_add(self, a, b)
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}
impl Float for f64 {
    const COPY: Map1Kernel<Self> = kernels::vector::copy_f64;
    const SCALE: ScaleKernel<Self> = kernels::vector::scale_f64;
    const ADD: Map2Kernel<Self> = kernels::vector::add_f64;
    const TRIAD: TriadKernel<Self> = kernels::vector::triad_f64;
    const AXPY: AxpyKernel<Self> = kernels::vector::axpy_f64;
    const DOT: DotKernel<Self> = kernels::reduce::dot_f64;
    fn mul_add(self, a: Self, b: Self) -> Self {
        f64::mul_add(self, a, b)
    }
    fn from_f64(v: f64) -> Self {
        v
    }
}
impl Scannable for f32 {
    const SCAN_KERNELS: [ScanKernel<Self>; 2] = [
        kernels::scan::scan_inclusive_f32,
        kernels::scan::scan_exclusive_f32,
    ];
    const SCAN_SHAPE: (u32, usize) = (SCAN_THREADS, SCAN_TILE);
}
impl Scannable for u32 {
    const SCAN_KERNELS: [ScanKernel<Self>; 2] = [
        kernels::scan::scan_inclusive_u32,
        kernels::scan::scan_exclusive_u32,
    ];
    const SCAN_SHAPE: (u32, usize) = (SCAN_THREADS, SCAN_TILE);
}
impl Scannable for f64 {
    const SCAN_KERNELS: [ScanKernel<Self>; 2] = [
        kernels::scan::scan_inclusive_f64,
        kernels::scan::scan_exclusive_f64,
    ];
    const SCAN_SHAPE: (u32, usize) = (SCAN_THREADS_WIDE, SCAN_TILE_WIDE);
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

/// Inclusive (`out[i] = x[0] + … + x[i]`) or exclusive (`out[i] = x[0] + … + x[i-1]`,
/// `out[0] = 0`) prefix sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// Includes `x[i]` in `out[i]`.
    Inclusive,
    /// Excludes it.
    Exclusive,
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

/// The look-back state of the single-pass scan (`kernels::scan`): the status words, the tile
/// counter, and the host's copy of what the next launch must pass. One state serves scans
/// of any element type up to the length it was made for.
#[derive(Debug)]
pub struct ScanState {
    /// `kernels::scan::status_words(tiles)` words for the most tiles a scan of the length
    /// can have (the smaller tile: `len / SCAN_TILE`), zeroed at allocation (epoch 0 =
    /// never written).
    pub status: DeviceBuffer<u64>,
    /// The tile counter (one `u32`), incremented once by every block of every scan launch.
    pub counter: DeviceBuffer<u32>,
    book: LookBackBook,
}

/// The host's account of a look-back state (status words carrying epochs, a tile counter
/// that is never reset; `kernels::scan`, `kernels::sort`): the epoch of the last launch and
/// the counter's value now. One rule for the scan and the sort.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LookBackBook {
    /// Epoch of the last launch (0: none yet).
    epoch: u32,
    /// The counter's value now (wrapping): blocks launched so far.
    issued: u32,
}

impl LookBackBook {
    /// Books one launch of `tiles` blocks: a fresh epoch (after `zero_status`, queued
    /// before the launch, when the epochs run out: epochs start again at 1) and the
    /// counter's value before the launch. The caller then queues exactly that launch.
    pub(crate) fn book(
        &mut self,
        tiles: u32,
        zero_status: impl FnOnce() -> Result<(), GpuError>,
    ) -> Result<ScanLaunch, GpuError> {
        if self.epoch >= MAX_EPOCH {
            zero_status()?;
            self.epoch = 0;
        }
        self.epoch += 1;
        let launch = ScanLaunch {
            tiles,
            epoch: self.epoch,
            base: self.issued,
        };
        self.issued = self.issued.wrapping_add(tiles);
        Ok(launch)
    }
}

/// What one scan launch passes besides the buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanLaunch {
    /// Blocks of the launch: one per tile.
    pub tiles: u32,
    /// A fresh epoch, in `1..=MAX_EPOCH`.
    pub epoch: u32,
    /// The counter's value before the launch.
    pub base: u32,
}

impl ScanState {
    /// A zeroed state for scans of up to `len` elements of any type, allocated on `gpu`'s
    /// stream.
    pub fn new(gpu: &Gpu, len: usize) -> Result<Self, GpuError> {
        let s = gpu.stream();
        let what = "allocating the scan status words";
        let words = status_words(len.div_ceil(SCAN_TILE.min(SCAN_TILE_WIDE)).max(1));
        Ok(Self {
            status: DeviceBuffer::zeroed_async(words, s).gpu_context(what)?,
            counter: DeviceBuffer::zeroed_async(1, s).gpu_context(what)?,
            book: LookBackBook::default(),
        })
    }

    /// Books a scan launch over `len` elements of a 4-byte type (tiles of
    /// `kernels::scan::SCAN_TILE`); see [`ScanState::book_tiles`].
    pub fn book(&mut self, gpu: &Gpu, len: usize) -> Result<ScanLaunch, GpuError> {
        self.book_tiles(gpu, len, SCAN_TILE)
    }

    /// Books a scan launch over `len` elements in tiles of `tile` elements: a fresh epoch
    /// and the counter base. When the epochs run out, the status words are zeroed first (on
    /// `gpu`'s stream, so before the launch) and epochs start again at 1.
    ///
    /// The caller must then queue exactly one scan launch with these values on the same
    /// stream: every block increments the counter once, and the next booking counts on it.
    ///
    /// # Panics
    /// If the state was made for a shorter input (or `tile` is 0).
    pub fn book_tiles(
        &mut self,
        gpu: &Gpu,
        len: usize,
        tile: usize,
    ) -> Result<ScanLaunch, GpuError> {
        let tiles = u32::try_from(len.div_ceil(tile).max(1)).unwrap_or(u32::MAX);
        assert!(
            status_words(tiles as usize) <= self.status.len(),
            "scan: scratch made for a shorter input"
        );
        let status = &mut self.status;
        self.book.book(tiles, || {
            status
                .set_zero(gpu.stream())
                .gpu_context("zeroing the scan status words")
        })
    }
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

    /// The scan state, for [`scan_dev`] and the bench's CUDA C twins.
    pub fn scan_state(&mut self) -> &mut ScanState {
        &mut self.scan
    }
}

fn config_1d(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig::new(blocks.max(1), threads, 0)
}

/// The second pass of a reduction: one block over `blocks` partials.
fn second_pass(blocks: u32) -> Split {
    Split {
        blocks: 1,
        chunk: (blocks as usize).div_ceil(4) * 4,
    }
}

/// Device-level launches: queue work on device buffers, no synchronisation.
/// Number of streaming multiprocessors.
pub fn sm_count(gpu: &Gpu) -> Result<u32, GpuError> {
    let n = gpu
        .context()
        .attribute(DeviceAttribute::MultiprocessorCount)?;
    Ok(u32::try_from(n).unwrap_or(1).max(1))
}

/// The launch of the element-wise (STREAM) kernels for `len` elements of `T`: one 16-byte
/// pack per thread, 256-thread blocks, as many blocks as that takes (up to the grid limit
/// 2³¹ − 1; the kernels' grid-stride loop covers any rest).
///
/// Measured on an H200 (2²⁸ elements, one run, device-to-device memcpy 4221 GB/s): copy f32
/// 4246 GB/s and add f32 4350 GB/s this way, against 3919 and 4086 GB/s with one resident
/// wave (8 blocks per multiprocessor) looping over the array, and 4180 and 4303 GB/s with 4
/// packs per thread. Many short blocks keep the memory system fuller than a fixed set of
/// long-lived threads.
pub fn stream_config<T: Element>(len: usize) -> LaunchConfig {
    let blocks = len
        .div_ceil(T::LANES)
        .div_ceil(BLOCK_THREADS as usize)
        .min(i32::MAX as usize);
    config_1d(blocks as u32, BLOCK_THREADS)
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

/// `c = a` (STREAM copy) for the first `min(a.len(), c.len())` elements.
pub fn copy_dev<T: Float>(
    gpu: &Gpu,
    a: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<T>,
) -> Result<(), GpuError> {
    let cfg = stream_config::<T>(a.len().min(c.len()));
    let copy = gpu.kernels::<FloatKernels<T>>().copy.get(gpu, T::COPY)?;
    copy.launch(gpu.stream(), cfg, (a, c))
}

/// `b = q · c` (STREAM scale).
pub fn scale_dev<T: Float>(
    gpu: &Gpu,
    c: &DeviceBuffer<T>,
    q: T,
    b: &mut DeviceBuffer<T>,
) -> Result<(), GpuError> {
    let cfg = stream_config::<T>(c.len().min(b.len()));
    let scale = gpu.kernels::<FloatKernels<T>>().scale.get(gpu, T::SCALE)?;
    scale.launch(gpu.stream(), cfg, (c, q, b))
}

/// `c = a + b` (STREAM add).
pub fn add_dev<T: Float>(
    gpu: &Gpu,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    c: &mut DeviceBuffer<T>,
) -> Result<(), GpuError> {
    let cfg = stream_config::<T>(a.len().min(b.len()).min(c.len()));
    let add = gpu.kernels::<FloatKernels<T>>().add.get(gpu, T::ADD)?;
    add.launch(gpu.stream(), cfg, (a, b, c))
}

/// `a = b + q · c` (STREAM triad; product and sum rounded separately).
pub fn triad_dev<T: Float>(
    gpu: &Gpu,
    b: &DeviceBuffer<T>,
    c: &DeviceBuffer<T>,
    q: T,
    a: &mut DeviceBuffer<T>,
) -> Result<(), GpuError> {
    let cfg = stream_config::<T>(b.len().min(c.len()).min(a.len()));
    let triad = gpu.kernels::<FloatKernels<T>>().triad.get(gpu, T::TRIAD)?;
    triad.launch(gpu.stream(), cfg, (b, c, q, a))
}

/// `y = fma(alpha, x, y)` in place.
pub fn axpy_dev<T: Float>(
    gpu: &Gpu,
    alpha: T,
    x: &DeviceBuffer<T>,
    y: &mut DeviceBuffer<T>,
) -> Result<(), GpuError> {
    let cfg = stream_config::<T>(x.len().min(y.len()));
    let axpy = gpu.kernels::<FloatKernels<T>>().axpy.get(gpu, T::AXPY)?;
    axpy.launch(gpu.stream(), cfg, (alpha, x, y))
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

/// `out = scan(x)` (the first `min(x.len(), out.len())` elements) in one launch: the
/// single-pass scan with decoupled look-back (`kernels::scan`), one block per tile. `x` and
/// `out` are views (`buffer.as_slice()`, `buffer.index(a..b)`) at any element offset: the
/// kernels load and store one element per lane per access.
///
/// # Panics
/// If `state` was made for a shorter input.
pub fn scan_dev<T: Scannable>(
    gpu: &Gpu,
    kind: ScanKind,
    x: &DeviceSlice<'_, T>,
    state: &mut ScanState,
    out: &mut DeviceSliceMut<'_, T>,
) -> Result<(), GpuError> {
    let kernel = gpu.kernels::<ScanKernels<T>>().scan[kind as usize]
        .get(gpu, T::SCAN_KERNELS[kind as usize])?;
    scan_with_dev(gpu, kernel, T::SCAN_SHAPE, x, state, out)
}

/// The user-operator scan: `out[i]` = the composition, in order, of the affine maps `x[0]`
/// … `x[i]` (inclusive) or `x[0]` … `x[i-1]` (exclusive; `out[0]` is the identity), each
/// packed as `a | b << 32` (`kernels::scan::affine`), arithmetic modulo 2^32.
///
/// # Panics
/// If `state` was made for a shorter input.
pub fn affine_scan_dev(
    gpu: &Gpu,
    kind: ScanKind,
    x: &DeviceSlice<'_, u64>,
    state: &mut ScanState,
    out: &mut DeviceSliceMut<'_, u64>,
) -> Result<(), GpuError> {
    let kernel = gpu.kernels::<ScanKernels<u64>>().scan[kind as usize]
        .get(gpu, AFFINE_SCAN_KERNELS[kind as usize])?;
    scan_with_dev(
        gpu,
        kernel,
        (SCAN_THREADS_WIDE, SCAN_TILE_WIDE),
        x,
        state,
        out,
    )
}

/// One launch of a `kernels::scan` kernel whose blocks have `threads` threads and whose
/// tiles hold `tile` elements.
fn scan_with_dev<T: cuda_std::DeviceCopy>(
    gpu: &Gpu,
    kernel: &FunctionOf<ScanKernel<T>>,
    (threads, tile): (u32, usize),
    x: &DeviceSlice<'_, T>,
    st: &mut ScanState,
    out: &mut DeviceSliceMut<'_, T>,
) -> Result<(), GpuError> {
    let len = x.len().min(out.len());
    let l = st.book_tiles(gpu, len, tile)?;
    let cfg = config_1d(l.tiles, threads);
    // SAFETY: `book_tiles` gave a fresh epoch (no status word carries it) and the counter's
    // value before this launch, which is the only one using this state on the stream
    // (`&mut`); the grid has one block of `threads` per tile of `tile` elements, the
    // kernel's shape.
    unsafe {
        kernel.launch_unchecked(
            gpu.stream(),
            cfg,
            (x, out, &mut st.status, &mut st.counter, l.epoch, l.base),
        )
    }
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

/// STREAM copy on the GPU.
pub fn copy<T: Float>(gpu: &Gpu, a: &[T]) -> Result<Vec<T>, GpuError> {
    let a_d = upload(gpu, a)?;
    let mut c = poisoned::<T>(gpu, a.len())?;
    copy_dev(gpu, &a_d, &mut c)?;
    finish(gpu, T::COPY.name())?;
    download("copy", &c, a.len())
}

/// STREAM scale on the GPU: `q · c`.
pub fn scale<T: Float>(gpu: &Gpu, c: &[T], q: T) -> Result<Vec<T>, GpuError> {
    let c_d = upload(gpu, c)?;
    let mut b = poisoned::<T>(gpu, c.len())?;
    scale_dev(gpu, &c_d, q, &mut b)?;
    finish(gpu, T::SCALE.name())?;
    download("scale", &b, c.len())
}

/// STREAM add on the GPU: `a + b`.
pub fn add<T: Float>(gpu: &Gpu, a: &[T], b: &[T]) -> Result<Vec<T>, GpuError> {
    let len = a.len().min(b.len());
    let (a_d, b_d) = (upload(gpu, a)?, upload(gpu, b)?);
    let mut c = poisoned::<T>(gpu, len)?;
    add_dev(gpu, &a_d, &b_d, &mut c)?;
    finish(gpu, T::ADD.name())?;
    download("add", &c, len)
}

/// STREAM triad on the GPU: `b + q · c`.
pub fn triad<T: Float>(gpu: &Gpu, b: &[T], c: &[T], q: T) -> Result<Vec<T>, GpuError> {
    let len = b.len().min(c.len());
    let (b_d, c_d) = (upload(gpu, b)?, upload(gpu, c)?);
    let mut a = poisoned::<T>(gpu, len)?;
    triad_dev(gpu, &b_d, &c_d, q, &mut a)?;
    finish(gpu, T::TRIAD.name())?;
    download("triad", &a, len)
}

/// axpy on the GPU: `fma(alpha, x, y)`.
pub fn axpy<T: Float>(gpu: &Gpu, alpha: T, x: &[T], y: &[T]) -> Result<Vec<T>, GpuError> {
    assert_eq!(x.len(), y.len(), "axpy: x and y must have the same length");
    let x_d = upload(gpu, x)?;
    let mut y_d = upload(gpu, y)?;
    axpy_dev(gpu, alpha, &x_d, &mut y_d)?;
    finish(gpu, T::AXPY.name())?;
    download("axpy", &y_d, x.len())
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

/// Prefix sum of `x` on the GPU.
pub fn scan<T: Scannable>(gpu: &Gpu, kind: ScanKind, x: &[T]) -> Result<Vec<T>, GpuError> {
    let x_d = upload(gpu, x)?;
    let mut st = ScanState::new(gpu, x.len())?;
    let mut out = poisoned::<T>(gpu, x.len())?;
    scan_dev(gpu, kind, &x_d.as_slice(), &mut st, &mut out.as_mut_slice())?;
    finish(gpu, T::SCAN_KERNELS[kind as usize].name())?;
    download("scan", &out, x.len())
}

/// The affine-map scan ([`affine_scan_dev`]) of `x` on the GPU.
pub fn affine_scan(gpu: &Gpu, kind: ScanKind, x: &[u64]) -> Result<Vec<u64>, GpuError> {
    let what = "copying to the GPU";
    let x_d = DeviceBuffer::from_slice_async(x, gpu.stream()).gpu_context(what)?;
    let poison = vec![0xdead_beef_dead_beef_u64; x.len().max(1)];
    let mut out = DeviceBuffer::from_slice_async(&poison, gpu.stream()).gpu_context(what)?;
    let mut st = ScanState::new(gpu, x.len())?;
    affine_scan_dev(gpu, kind, &x_d.as_slice(), &mut st, &mut out.as_mut_slice())?;
    finish(gpu, AFFINE_SCAN_KERNELS[kind as usize].name())?;
    let mut v = out
        .as_host_vec()
        .gpu_context("copying the affine scan result to the host")?;
    v.truncate(x.len());
    Ok(v)
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

fn upload_into<T: Element>(gpu: &Gpu, x: &[T], dst: &mut DeviceBuffer<T>) -> Result<(), GpuError> {
    dst.async_copy_from(x, gpu.stream())
        .gpu_context("copying to the GPU")
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
