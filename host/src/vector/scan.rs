//! The scans: the single-pass prefix sums with decoupled look-back (`kernels::scan`) of the
//! [`Scannable`] types and of affine maps (the user-operator example), their look-back
//! state ([`ScanState`], booked by [`LookBackBook`], which the sort shares), and the
//! device- and host-level calls.

use super::{Element, config_1d, download, finish, poisoned, upload};
use crate::gpu::{FunctionOf, Gpu, GpuError, ResolvedOf, kernel_table};
use cuda_std::launch::{AtomicOut, Kernel, Out, Slice, Unsafe, Value};
use cust::{
    error::GpuContext,
    memory::{DeviceBuffer, DeviceSlice, DeviceSliceMut},
};
use kernels::scan::{
    MAX_EPOCH, SCAN_THREADS, SCAN_THREADS_WIDE, SCAN_TILE, SCAN_TILE_WIDE, status_words,
};

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

kernel_table! {
    /// The scans (`[inclusive, exclusive]`) of element type `T`, each resolved in a [`Gpu`]'s
    /// module on first use ([`Gpu::kernels`]): [`Scannable::SCAN_KERNELS`], and for `u64`
    /// [`AFFINE_SCAN_KERNELS`] (the only `u64` scans).
    struct ScanKernels<T> {
        scan: [ResolvedOf<ScanKernel<T>>; 2],
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

/// Inclusive (`out[i] = x[0] + … + x[i]`) or exclusive (`out[i] = x[0] + … + x[i-1]`,
/// `out[0] = 0`) prefix sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// Includes `x[i]` in `out[i]`.
    Inclusive,
    /// Excludes it.
    Exclusive,
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
