//! The CPU backend behind [`Context::emulator`](crate::context::Context::emulator): host
//! allocations standing for device memory, the registry of live ones that every emulated
//! launch passes to `cuda_emu` for its bounds check, streams that run their work at once,
//! events on host time, and typed launches through `cuda_emu::launch`.
//!
//! The device it stands for is one of compute capability 9.0 (the emulator runs sm_90a's
//! `wgmma`, TMA and `mbarrier`), named [`NAME`], with [`DEFAULT_MEMORY_BYTES`] of device
//! memory unless `EmulatorOptions::memory_bytes` says otherwise: live device and managed
//! allocations are counted against it, so `mem_info` and the allocation checks answer as the
//! driver does. A launch the hardware would refuse (the limits of the CUDA C++ Programming
//! Guide's "Technical Specifications per Compute Capability", `crate::launch_config`) is refused
//! with the driver's `CUDA_ERROR_INVALID_VALUE`; dynamic shared memory above 48 KB needs the
//! kernel's opt-in, up to sm_90's 227 KB, as on the GPU.
//!
//! Streams capture graphs as the driver's do (`cuStreamBeginCapture` in thread-local mode):
//! while a created stream captures, its launches, device-to-device copies, copies with pinned
//! memory and memsets are recorded instead of run, a stream that waits for an event recorded
//! in the capture joins it, and the graph replays the recorded work in the order it was
//! queued (an order every dependency of the capture allows). The legacy default stream
//! cannot be captured, and synchronising a capturing stream, allocating on it or copying
//! between it and pageable host memory is refused, with the driver's
//! `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`.
//!
//! What needs a GPU (code from PTX or cubins, occupancy queries, clusters, device
//! attributes other than those [`Cpu::attribute`] answers) keeps the seam's default:
//! `NotOnEmulator`. A launch that allows programmatic stream serialization
//! (`LaunchAttributes::programmatic_stream_serialization`) runs as any other: the launches
//! of a stream run to completion one after the other, which every dependent launch allows,
//! and the kernels' `grid_dependency_sync` returns at once.

use super::{
    Backend, Bytes, CPU, Completion, DEFAULT_STREAM_CAPTURE, Event, EventKind, FunctionAttribute,
    GPU, Graph, Guard, HostKernel, Init, Launch, LoadedImage, Managed, Memory, MemoryAdvice,
    Module, ModuleSource, Pinned, Queue, Stream, UNTYPED_LAUNCH, not_on_emulator,
};
use crate::{
    device::DeviceAttribute,
    error::{CudaError, CudaResult},
    launch_config::{
        DEFAULT_MAX_DYNAMIC_SHARED_BYTES, MAX_BLOCK_XY, MAX_BLOCK_Z, MAX_GRID_X, MAX_GRID_YZ,
        MAX_THREADS_PER_BLOCK, SM90_MAX_SHARED_BYTES_PER_BLOCK_OPTIN, hardware_refuses,
    },
};
use cuda_emu::HostBuffer;
use cust_core::{
    ComputeCapability, ModuleImage,
    launch::{HostEntry, Kernel, ParamSizes},
};
use std::{
    alloc::Layout,
    any::Any,
    collections::BTreeMap,
    ffi::c_void,
    fmt,
    mem::MaybeUninit,
    ops::Range,
    ptr::NonNull,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};

/// The emulator's device name ([`Backend::name`]).
pub(crate) const NAME: &str = "ferrocuda CPU emulator";

/// The compute capability the emulator stands for: 9.0, the Hopper architecture whose
/// sm_90a units (`wgmma`, TMA, `mbarrier`) it runs.
pub(crate) const COMPUTE_CAPABILITY: ComputeCapability = ComputeCapability::new(9, 0);

/// The emulated device memory, bytes, unless `EmulatorOptions::memory_bytes` says otherwise:
/// 80 GiB, the HBM3 of the H100 SXM5 that compute capability 9.0 stands for (NVIDIA H100
/// Tensor Core GPU datasheet: 80 GB). A real H100 reports a little less to `cuMemGetInfo`
/// (the driver reserves some); the emulator reports this figure as its total, and the host
/// must still provide what is allocated.
pub const DEFAULT_MEMORY_BYTES: usize = 80 << 30;

/// Alignment of every emulator allocation, bytes: `cudaMalloc`'s guarantee (CUDA C
/// Programming Guide, "Device Memory": at least 256 bytes).
const ALIGN_BYTES: usize = 256;

/// A [`CudaError::BackendMismatch`] of emulator memory (or an emulator event or function)
/// with a GPU stream or buffer.
fn with_gpu(what: &'static str) -> CudaError {
    CudaError::BackendMismatch {
        what,
        buffer: CPU,
        stream: GPU,
    }
}

/// The emulator's checks, as `cuda_emu` defines them (re-exported as
/// `cust::context::EmuChecks`).
pub use cuda_emu::EmuChecks;

impl<P: ParamSizes, S> HostKernel for Kernel<P, S> {
    unsafe fn run(&self, launch: &Launch<'_>, device: &dyn Any) -> CudaResult<()> {
        let Some(device) = device.downcast_ref::<CpuDevice>() else {
            return Err(with_gpu("a typed launch"));
        };
        let config = (
            launch.grid,
            launch.block,
            launch.attributes.unwrap_or_default().cluster_dims(),
            launch.shared_bytes,
        );
        // SAFETY: forwarded to the caller.
        unsafe { run_kernel(self, config, launch.args, device) }
    }

    unsafe fn record(&self, launch: &Launch<'_>) -> RecordedLaunch {
        let args = P::PARAM_SIZES
            .iter()
            .zip(launch.args.iter())
            .map(|(&bytes, &arg)| {
                // SAFETY: the caller's contract: each pointer points to its parameter's
                // bytes, as many as the kind declares.
                unsafe { std::slice::from_raw_parts(arg.cast::<u8>(), bytes) }.to_vec()
            })
            .collect();
        RecordedLaunch {
            name: self.name(),
            host: self.host_entry(),
            grid: launch.grid,
            block: launch.block,
            cluster: launch.attributes.unwrap_or_default().cluster_dims(),
            shared_bytes: launch.shared_bytes,
            args,
            replay: replay::<P, S>,
        }
    }
}

/// A typed launch recorded by a stream capture: the kernel's name and host entry, its
/// configuration and a copy of its parameters' bytes, with the function that rebuilds the
/// typed handle to run it again.
pub(crate) struct RecordedLaunch {
    name: &'static str,
    host: Option<HostEntry>,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    cluster: [u32; 3],
    shared_bytes: u32,
    /// Each parameter's bytes, as laid out for the device.
    args: Vec<Vec<u8>>,
    /// `replay::<P, S>` for the handle's kinds.
    replay: unsafe fn(&RecordedLaunch, &CpuDevice) -> CudaResult<()>,
}

/// Runs a recorded launch of a `Kernel<P, S>` on `device`.
///
/// # Safety
/// As `cuda_emu::launch`: the addresses inside the recorded parameters are still valid for
/// the kernel's accesses (the graph borrows the buffers they point to).
unsafe fn replay<P: ParamSizes, S>(launch: &RecordedLaunch, device: &CpuDevice) -> CudaResult<()> {
    let kernel = match launch.host {
        Some(host) => Kernel::<P, S>::__new_with_host(launch.name, host),
        None => Kernel::<P, S>::__new(launch.name),
    };
    // The host shim only reads through these pointers.
    let args: Vec<*mut c_void> = launch
        .args
        .iter()
        .map(|a| a.as_ptr().cast_mut().cast())
        .collect();
    let config = (
        launch.grid,
        launch.block,
        launch.cluster,
        launch.shared_bytes,
    );
    // SAFETY: one pointer per parameter to a copy of its bytes; the rest is the caller's.
    unsafe { run_kernel(&kernel, config, &args, device) }
}

/// A launch's shape: grid, block, blocks per cluster, dynamic shared bytes.
type Shape = ((u32, u32, u32), (u32, u32, u32), [u32; 3], u32);

/// Runs `kernel` with `(grid, block, cluster, dynamic shared bytes)` on `device`, printing
/// its `println!` output once it is done.
///
/// # Safety
/// As `cuda_emu::launch`.
unsafe fn run_kernel<P: ParamSizes, S>(
    kernel: &Kernel<P, S>,
    (grid, block, cluster, shared_bytes): Shape,
    args: &[*mut c_void],
    device: &CpuDevice,
) -> CudaResult<()> {
    let options = cuda_emu::EmuOptions {
        seed: device.seed,
        checks: device.checks,
        buffers: device
            .buffers()
            .iter()
            .map(|&(address, bytes)| HostBuffer { address, bytes })
            .collect(),
        ..cuda_emu::EmuOptions::default()
    };
    let (g, b) = (grid, block);
    // SAFETY: forwarded to the caller.
    let report = unsafe {
        cuda_emu::launch_cluster(
            kernel,
            [g.0, g.1, g.2],
            [b.0, b.1, b.2],
            cluster,
            shared_bytes,
            args,
            &options,
        )
    }?;
    if !report.printed.is_empty() {
        let text: String = report.printed.iter().map(|p| p.text.as_str()).collect();
        // As the GPU's printf buffer, the output appears when the launch is done.
        print!("{text}");
    }
    Ok(())
}

/// The live device allocations of a CPU device.
#[derive(Debug, Default)]
struct Allocations {
    /// Address → bytes.
    by_address: BTreeMap<usize, usize>,
    /// The sum of their sizes, bytes.
    used_bytes: usize,
}

/// One CPU device: its emulated memory size and live allocations, and how it runs launches.
#[derive(Debug)]
struct CpuDevice {
    allocations: Mutex<Allocations>,
    /// The emulated device memory, bytes.
    memory_bytes: usize,
    /// The order of the threads of a block (`cuda_emu::EmuOptions::seed`).
    seed: u64,
    /// The checks every launch makes.
    checks: EmuChecks,
}

impl CpuDevice {
    fn new(memory_bytes: usize, seed: u64, checks: EmuChecks) -> Arc<Self> {
        Arc::new(Self {
            allocations: Mutex::new(Allocations::default()),
            memory_bytes,
            seed,
            checks,
        })
    }

    fn allocations(&self) -> std::sync::MutexGuard<'_, Allocations> {
        self.allocations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every live allocation, `(address, bytes)`, for the emulator's bounds check.
    fn buffers(&self) -> Vec<(usize, usize)> {
        self.allocations()
            .by_address
            .iter()
            .map(|(&address, &bytes)| (address, bytes))
            .collect()
    }

    /// Emulated device memory not taken by live allocations, bytes.
    fn free_bytes(&self) -> usize {
        self.memory_bytes
            .saturating_sub(self.allocations().used_bytes)
    }
}

/// The CPU emulator as a device.
#[derive(Debug)]
pub(crate) struct Cpu {
    device: Arc<CpuDevice>,
}

impl Cpu {
    /// A new emulator device of `memory_bytes` of device memory whose launches run with
    /// `seed` and `checks`.
    pub(crate) fn open(memory_bytes: usize, seed: u64, checks: EmuChecks) -> Arc<dyn Backend> {
        Arc::new(Self {
            device: CpuDevice::new(memory_bytes, seed, checks),
        })
    }
}

/// A zero-filled host allocation of `bytes` bytes, aligned as device memory.
struct HostAlloc {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: `HostAlloc` owns its allocation like a `Box<[u8]>`; access is ordered by the
// borrow rules of the buffer types that own it (and by the emulator's launch contract).
unsafe impl Send for HostAlloc {}
// SAFETY: as above; `&HostAlloc` only reads the pointer.
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    /// `bytes` zeroed bytes; `what` names the buffer if the host cannot allocate them.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`].
    fn zeroed(what: &'static str, bytes: usize) -> CudaResult<Self> {
        let layout = Self::layout(bytes).ok_or(CudaError::OutOfMemory {
            what,
            bytes,
            free: isize::MAX as usize,
        })?;
        // SAFETY: the layout has a non-zero size (at least one byte).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(CudaError::OutOfMemory {
            what,
            bytes,
            free: 0,
        })?;
        Ok(Self { ptr, bytes })
    }

    fn layout(bytes: usize) -> Option<Layout> {
        Layout::from_size_align(bytes.max(1), ALIGN_BYTES).ok()
    }

    fn address(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    fn bytes(&self) -> &Bytes {
        // SAFETY: `bytes` bytes of a live allocation that `&self` borrows.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast(), self.bytes) }
    }

    fn bytes_mut(&mut self) -> &mut Bytes {
        // SAFETY: as in `bytes`, borrowed exclusively.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.bytes) }
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        if let Some(layout) = Self::layout(self.bytes) {
            // SAFETY: allocated in `zeroed` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// Emulator memory standing for device (or managed) memory: registered with its device
/// while alive, so that emulated launches may use it.
struct CpuMemory {
    alloc: HostAlloc,
    device: Arc<CpuDevice>,
}

impl CpuMemory {
    /// `bytes` zeroed bytes on `device`, counted against its memory.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] with the free figure when they do not fit in the device's
    /// free memory (or the host cannot allocate them).
    fn zeroed(device: &Arc<CpuDevice>, what: &'static str, bytes: usize) -> CudaResult<Self> {
        // The check and the registration under one lock: two threads cannot both take the
        // last free bytes.
        let mut allocations = device.allocations();
        let free = device.memory_bytes.saturating_sub(allocations.used_bytes);
        if bytes > free {
            return Err(CudaError::OutOfMemory { what, bytes, free });
        }
        let alloc = HostAlloc::zeroed(what, bytes)?;
        allocations.by_address.insert(alloc.address(), bytes);
        allocations.used_bytes += bytes;
        drop(allocations);
        Ok(Self {
            alloc,
            device: device.clone(),
        })
    }

    /// `bytes` bytes of a device buffer on `device`, holding `init`.
    fn buffer(
        device: &Arc<CpuDevice>,
        bytes: usize,
        init: Init<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        let mut mem = Self::zeroed(device, "DeviceBuffer", bytes)?;
        if let Init::Copy(src) = init {
            mem.alloc.bytes_mut().copy_from_slice(src);
        }
        Ok(Box::new(mem))
    }

    fn at(&self, range: &Range<usize>) -> *mut MaybeUninit<u8> {
        // SAFETY: `range.start <= bytes` (checked by the caller): within or one past the
        // allocation.
        unsafe { self.alloc.ptr.as_ptr().add(range.start).cast() }
    }
}

impl Drop for CpuMemory {
    fn drop(&mut self) {
        let mut allocations = self.device.allocations();
        if let Some(bytes) = allocations.by_address.remove(&self.alloc.address()) {
            allocations.used_bytes -= bytes;
        }
    }
}

/// `range` of emulator memory as a kernel parameter on `stream`.
fn host_param<'a>(address: usize, stream: &dyn Stream) -> CudaResult<(u64, Option<Guard<'a>>)> {
    if stream.is_emulator() {
        Ok((address as u64, None))
    } else {
        Err(with_gpu("launching a kernel"))
    }
}

impl Memory for CpuMemory {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn address(&self, range: Range<usize>) -> u64 {
        self.at(&range) as u64
    }

    fn use_on<'a>(
        &'a self,
        range: Range<usize>,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)> {
        host_param(self.at(&range) as usize, stream)
    }

    fn use_mut_on<'a>(
        &'a mut self,
        range: Range<usize>,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)> {
        host_param(self.at(&range) as usize, stream)
    }

    fn write(
        &mut self,
        range: Range<usize>,
        src: &Bytes,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()> {
        refuse_pageable_in_capture(queue, what)?;
        self.alloc.bytes_mut()[range].copy_from_slice(src);
        Ok(())
    }

    fn read(
        &self,
        range: Range<usize>,
        dst: &mut Bytes,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()> {
        refuse_pageable_in_capture(queue, what)?;
        dst.copy_from_slice(&self.alloc.bytes()[range]);
        Ok(())
    }

    fn copy_from(
        &mut self,
        src: &dyn Memory,
        queue: Queue<'_>,
        _what: &'static str,
    ) -> CudaResult<()> {
        let Some(src) = src.as_any().downcast_ref::<CpuMemory>() else {
            return Err(CudaError::BackendMismatch {
                what: "copying between device buffers",
                buffer: GPU,
                stream: CPU,
            });
        };
        if let Queue::On(stream) = queue
            && let Some(capture) = capture_of(stream)
        {
            capture.record(Work::Copy {
                dst: self.alloc.address(),
                src: src.alloc.address(),
                bytes: self.alloc.bytes,
            });
            return Ok(());
        }
        self.alloc.bytes_mut().copy_from_slice(src.alloc.bytes());
        Ok(())
    }

    fn set_zero(&mut self, stream: &dyn Stream) -> CudaResult<()> {
        if let Some(capture) = capture_of(stream) {
            capture.record(Work::Zero {
                dst: self.alloc.address(),
                bytes: self.alloc.bytes,
            });
            return Ok(());
        }
        self.alloc.bytes_mut().fill(MaybeUninit::new(0));
        Ok(())
    }

    fn write_pinned(&mut self, src: &dyn Pinned, stream: &dyn Stream) -> CudaResult<()> {
        let Some(src) = src.as_any().downcast_ref::<CpuPinned>() else {
            return Err(with_gpu("copying from pinned host memory"));
        };
        if let Some(capture) = capture_of(stream) {
            capture.record(Work::Copy {
                dst: self.alloc.address(),
                src: src.alloc.address(),
                bytes: self.alloc.bytes,
            });
            return Ok(());
        }
        self.alloc.bytes_mut().copy_from_slice(src.alloc.bytes());
        Ok(())
    }

    fn read_pinned(&self, dst: &mut dyn Pinned, stream: &dyn Stream) -> CudaResult<()> {
        let Some(dst) = dst.as_any_mut().downcast_mut::<CpuPinned>() else {
            return Err(with_gpu("copying to pinned host memory"));
        };
        if let Some(capture) = capture_of(stream) {
            capture.record(Work::Copy {
                dst: dst.alloc.address(),
                src: self.alloc.address(),
                bytes: self.alloc.bytes,
            });
            return Ok(());
        }
        dst.alloc.bytes_mut().copy_from_slice(self.alloc.bytes());
        Ok(())
    }
}

impl Managed for CpuMemory {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn bytes(&self) -> CudaResult<&Bytes> {
        Ok(self.alloc.bytes())
    }

    fn bytes_mut(&mut self) -> CudaResult<&mut Bytes> {
        Ok(self.alloc.bytes_mut())
    }

    fn prefetch_to_device(&self) -> CudaResult<()> {
        Ok(())
    }

    fn prefetch_to_host(&self, stream: &dyn Stream) -> CudaResult<()> {
        if stream.is_emulator() {
            Ok(())
        } else {
            Err(with_gpu("prefetching managed memory"))
        }
    }

    fn advise(&self, _advice: MemoryAdvice) -> CudaResult<()> {
        Ok(())
    }

    fn use_on<'a>(&'a self, stream: &'a dyn Stream) -> CudaResult<(u64, Option<Guard<'a>>)> {
        host_param(self.alloc.address(), stream)
    }

    fn use_mut_on<'a>(
        &'a mut self,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)> {
        host_param(self.alloc.address(), stream)
    }
}

/// "Pinned" memory of the emulator: host memory (no copy engine to pin it for), not
/// registered as device memory.
struct CpuPinned {
    alloc: HostAlloc,
}

impl Pinned for CpuPinned {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn bytes(&self) -> CudaResult<&Bytes> {
        Ok(self.alloc.bytes())
    }

    fn bytes_mut(&mut self) -> CudaResult<&mut Bytes> {
        Ok(self.alloc.bytes_mut())
    }

    unsafe fn copy_from_device(
        &mut self,
        src: u64,
        bytes: usize,
        stream: &dyn Stream,
    ) -> CudaResult<()> {
        if !stream.is_emulator() {
            return Err(with_gpu("copying into pinned host memory"));
        }
        if let Some(capture) = capture_of(stream) {
            capture.record(Work::Copy {
                dst: self.alloc.address(),
                src: src as usize,
                bytes,
            });
            return Ok(());
        }
        // SAFETY: the caller's contract: on the emulator `src` is the host address of
        // `bytes` readable bytes of a live allocation, and this memory holds at least
        // `bytes`; it is a distinct allocation (`&mut self`).
        unsafe {
            std::ptr::copy_nonoverlapping(
                src as usize as *const MaybeUninit<u8>,
                self.alloc.bytes_mut().as_mut_ptr(),
                bytes,
            );
        }
        Ok(())
    }

    fn copy_queued(&self, _stream: &dyn Stream) -> CudaResult<()> {
        // Done when it returned.
        Ok(())
    }
}

impl Backend for Cpu {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn name(&self) -> String {
        NAME.into()
    }

    fn ordinal(&self) -> usize {
        0
    }

    fn synchronize(&self) -> CudaResult<()> {
        // All work is done when it returns.
        Ok(())
    }

    fn bind_to_thread(&self) -> CudaResult<()> {
        Ok(())
    }

    fn check_free(&self, what: &'static str, bytes: usize) -> CudaResult<()> {
        let free = self.device.free_bytes();
        if bytes > free {
            return Err(CudaError::OutOfMemory { what, bytes, free });
        }
        Ok(())
    }

    fn mem_info(&self) -> CudaResult<(usize, usize)> {
        Ok((self.device.free_bytes(), self.device.memory_bytes))
    }

    fn compute_capability(&self) -> CudaResult<ComputeCapability> {
        Ok(COMPUTE_CAPABILITY)
    }

    /// The attributes of a device of compute capability 9.0 that the emulator models: the
    /// compute capability, the launch limits it checks (CUDA C++ Programming Guide,
    /// "Technical Specifications per Compute Capability"), the warp size, and as
    /// "multiprocessors" the host's cores (blocks run in parallel on rayon's pool).
    fn attribute(&self, attribute: DeviceAttribute) -> CudaResult<i32> {
        use DeviceAttribute as A;
        let as_i32 = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        let (major, minor) = (COMPUTE_CAPABILITY.major, COMPUTE_CAPABILITY.minor);
        Ok(match attribute {
            A::MultiprocessorCount => {
                let cores = std::thread::available_parallelism().map_or(1, usize::from);
                i32::try_from(cores).unwrap_or(i32::MAX)
            }
            A::ComputeCapabilityMajor => as_i32(major),
            A::ComputeCapabilityMinor => as_i32(minor),
            A::WarpSize => 32,
            A::MaxThreadsPerBlock => as_i32(MAX_THREADS_PER_BLOCK),
            A::MaxBlockDimX | A::MaxBlockDimY => as_i32(MAX_BLOCK_XY),
            A::MaxBlockDimZ => as_i32(MAX_BLOCK_Z),
            A::MaxGridDimX => as_i32(MAX_GRID_X),
            A::MaxGridDimY | A::MaxGridDimZ => as_i32(MAX_GRID_YZ),
            A::MaxSharedMemoryPerBlockOptin => as_i32(SM90_MAX_SHARED_BYTES_PER_BLOCK_OPTIN),
            _ => {
                return Err(not_on_emulator(
                    "device attributes other than the compute capability, the launch \
                     limits, the warp size and the multiprocessor count",
                ));
            }
        })
    }

    fn default_stream(&self) -> Arc<dyn Stream> {
        CpuStream::new(&self.device, true)
    }

    fn new_stream(
        &self,
        _priority: Option<i32>,
        _during: &'static str,
    ) -> CudaResult<Arc<dyn Stream>> {
        // Work runs at once, in call order, on every stream; a created stream differs from
        // the default one only in that it can be captured.
        Ok(CpuStream::new(&self.device, false))
    }

    fn stream_priority_range(&self) -> CudaResult<(i32, i32)> {
        Ok((0, 0))
    }

    fn new_event(&self, _kind: EventKind) -> CudaResult<Box<dyn Event>> {
        Ok(Box::new(CpuEvent {
            recorded: Mutex::new(None),
            capture: Mutex::new(None),
        }))
    }

    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        _during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        CpuMemory::buffer(&self.device, bytes, init)
    }

    fn alloc_pinned(&self, bytes: usize) -> CudaResult<Box<dyn Pinned>> {
        Ok(Box::new(CpuPinned {
            alloc: HostAlloc::zeroed("LockedBuffer", bytes)?,
        }))
    }

    fn alloc_managed(&self, bytes: usize) -> CudaResult<Box<dyn Managed>> {
        Ok(Box::new(CpuMemory::zeroed(
            &self.device,
            "UnifiedBuffer",
            bytes,
        )?))
    }

    fn load_image(&self, _image: &'static ModuleImage, _origin: &str) -> CudaResult<LoadedImage> {
        Ok(LoadedImage {
            module: Arc::new(CpuModule),
            source: ModuleSource::Emulator,
            load_time: Duration::ZERO,
            arch: None,
        })
    }
}

/// Work a capture records: what a graph of the emulator replays.
enum Work {
    /// A typed launch.
    Launch(RecordedLaunch),
    /// A copy of `bytes` bytes from `src` to `dst` (host addresses of device or pinned
    /// memory).
    Copy {
        dst: usize,
        src: usize,
        bytes: usize,
    },
    /// `bytes` zeros at `dst` (a device buffer's host address).
    Zero { dst: usize, bytes: usize },
}

impl Work {
    /// Does the work on `device`.
    ///
    /// # Safety
    /// The memory the work names is alive and not otherwise accessed meanwhile (a graph
    /// borrows every buffer its capture used), and a launch's own contract holds.
    unsafe fn run(&self, device: &CpuDevice) -> CudaResult<()> {
        match *self {
            // SAFETY: the caller's contract.
            Self::Launch(ref launch) => unsafe { (launch.replay)(launch, device) },
            Self::Copy { dst, src, bytes } => {
                // SAFETY: two live allocations of at least `bytes` bytes (sizes checked when
                // recorded); `copy` allows them to be the same.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) };
                Ok(())
            }
            Self::Zero { dst, bytes } => {
                // SAFETY: a live allocation of `bytes` bytes.
                unsafe { std::ptr::write_bytes(dst as *mut u8, 0, bytes) };
                Ok(())
            }
        }
    }
}

/// A stream capture of the emulator: the work recorded while it is open.
struct Capture {
    work: Mutex<Vec<Work>>,
    /// Whether the capture is still open (streams that joined it keep a reference).
    open: std::sync::atomic::AtomicBool,
}

impl Capture {
    fn record(&self, work: Work) {
        self.work
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(work);
    }
}

/// The capture open on `stream`, if it is an emulator stream that is capturing.
fn capture_of(stream: &dyn Stream) -> Option<Arc<Capture>> {
    stream
        .as_any()
        .downcast_ref::<CpuStream>()
        .and_then(CpuStream::capturing)
}

/// Refuses a copy between pageable host memory and the device queued on a capturing stream,
/// as the driver does: the graph would read or write host memory that the capture does not
/// own when it is replayed.
fn refuse_pageable_in_capture(queue: Queue<'_>, what: &'static str) -> CudaResult<()> {
    match queue {
        Queue::On(stream) if capture_of(stream).is_some() => {
            Err(CudaError::capture_unsupported(format!(
                "{what} between pageable host memory and a capturing stream (copy through \
                 pinned memory, a LockedBuffer, inside a capture)"
            )))
        }
        _ => Ok(()),
    }
}

/// An emulator stream: runs all work at once, in call order, unless it is capturing.
struct CpuStream {
    device: Arc<CpuDevice>,
    /// The legacy default stream, which cannot be captured.
    legacy_default: bool,
    /// The capture this stream records into: one it began or one it joined by waiting for
    /// an event recorded in it (a closed one is dropped when next looked at).
    capture: Mutex<Option<Arc<Capture>>>,
}

impl CpuStream {
    fn new(device: &Arc<CpuDevice>, legacy_default: bool) -> Arc<Self> {
        Arc::new(Self {
            device: device.clone(),
            legacy_default,
            capture: Mutex::new(None),
        })
    }

    /// The open capture this stream records into, if any.
    fn capturing(&self) -> Option<Arc<Capture>> {
        let mut capture = self.capture.lock().unwrap_or_else(|e| e.into_inner());
        if capture
            .as_ref()
            .is_some_and(|c| !c.open.load(Ordering::Acquire))
        {
            *capture = None;
        }
        capture.clone()
    }

    /// Makes this stream record into `capture` (it waited for work of the capture).
    fn join_capture(&self, capture: Arc<Capture>) -> CudaResult<()> {
        if self.legacy_default {
            return Err(CudaError::capture_unsupported(
                "making the legacy default stream wait for work of a capture (it cannot be \
                 captured: use Stream::new)",
            ));
        }
        *self.capture.lock().unwrap_or_else(|e| e.into_inner()) = Some(capture);
        Ok(())
    }

    /// Refuses `what` while the stream captures.
    fn not_while_capturing(&self, what: &str) -> CudaResult<()> {
        match self.capturing() {
            Some(_) => Err(CudaError::capture_unsupported(format!(
                "{what} while the stream captures a graph"
            ))),
            None => Ok(()),
        }
    }
}

impl Stream for CpuStream {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn priority(&self) -> CudaResult<i32> {
        Ok(0)
    }

    fn synchronize(&self) -> CudaResult<()> {
        self.not_while_capturing("synchronizing the stream")
    }

    fn wait(&self, event: &dyn Event) -> CudaResult<()> {
        let Some(event) = event.as_any().downcast_ref::<CpuEvent>() else {
            return Err(with_gpu("making a stream wait for an event"));
        };
        match event.capture() {
            Some(capture) => self.join_capture(capture),
            None => Ok(()),
        }
    }

    fn join(&self, other: &dyn Stream) -> CudaResult<()> {
        match capture_of(other) {
            Some(capture) => self.join_capture(capture),
            None => Ok(()),
        }
    }

    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        _during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        self.not_while_capturing("allocating on the stream (allocate before the capture)")?;
        CpuMemory::buffer(&self.device, bytes, init)
    }

    fn notify(&self, done: Arc<Mutex<Completion>>) -> CudaResult<()> {
        self.not_while_capturing("waiting for the stream")?;
        // Everything queued on the emulator has run: complete at once.
        Completion::complete(&done, Ok(()));
        Ok(())
    }

    fn capture(
        &self,
        _operation: &'static str,
        record: &mut dyn FnMut() -> CudaResult<()>,
    ) -> CudaResult<Box<dyn Graph>> {
        if self.legacy_default {
            return Err(CudaError::capture_unsupported(DEFAULT_STREAM_CAPTURE));
        }
        self.not_while_capturing("starting a graph capture")?;
        let capture = Arc::new(Capture {
            work: Mutex::new(Vec::new()),
            open: std::sync::atomic::AtomicBool::new(true),
        });
        *self.capture.lock().unwrap_or_else(|e| e.into_inner()) = Some(capture.clone());
        let recorded = record();
        // Ended whether or not `record` succeeded: the stream (and any that joined) runs
        // its work again.
        capture.open.store(false, Ordering::Release);
        *self.capture.lock().unwrap_or_else(|e| e.into_inner()) = None;
        recorded?;
        let work = std::mem::take(&mut *capture.work.lock().unwrap_or_else(|e| e.into_inner()));
        Ok(Box::new(CpuGraph {
            work,
            device: self.device.clone(),
        }))
    }
}

/// A graph of the emulator: the work of a capture, replayed in the order it was recorded.
struct CpuGraph {
    work: Vec<Work>,
    device: Arc<CpuDevice>,
}

impl Graph for CpuGraph {
    fn launch(&self) -> CudaResult<()> {
        for work in &self.work {
            // SAFETY: the public `Graph` borrows every buffer the capture used for as long
            // as it exists, and its launches' contracts held when they were captured.
            unsafe { work.run(&self.device) }?;
        }
        Ok(())
    }

    fn upload(&self) -> CudaResult<()> {
        // Nothing to upload: the work is host memory already.
        Ok(())
    }
}

/// An event of the emulator: the host time of the last record (work on an emulator stream
/// is done when queued, so a record is the host's clock then), or the capture it was last
/// recorded in.
struct CpuEvent {
    recorded: Mutex<Option<Instant>>,
    capture: Mutex<Option<Arc<Capture>>>,
}

impl CpuEvent {
    fn recorded(&self) -> Option<Instant> {
        *self.recorded.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The open capture the event was last recorded in, if any.
    fn capture(&self) -> Option<Arc<Capture>> {
        self.capture
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .filter(|c| c.open.load(Ordering::Acquire))
    }
}

impl Event for CpuEvent {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn record(&self, stream: &dyn Stream) -> CudaResult<()> {
        if !stream.is_emulator() {
            return Err(with_gpu("recording an event"));
        }
        let capture = capture_of(stream);
        if capture.is_none() {
            *self.recorded.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
        }
        *self.capture.lock().unwrap_or_else(|p| p.into_inner()) = capture;
        Ok(())
    }

    fn synchronize(&self) -> CudaResult<()> {
        Ok(())
    }

    fn is_complete(&self) -> CudaResult<bool> {
        Ok(true)
    }

    fn elapsed_ms(&self, start: &dyn Event) -> CudaResult<f32> {
        let Some(start) = start.as_any().downcast_ref::<CpuEvent>() else {
            return Err(not_on_emulator("a CPU-emulator event on a GPU stream"));
        };
        match (start.recorded(), self.recorded()) {
            (Some(b), Some(e)) => Ok(if e >= b {
                e.duration_since(b).as_secs_f32() * 1e3
            } else {
                -(b.duration_since(e).as_secs_f32() * 1e3)
            }),
            _ => Err(CudaError::LaunchConfig(
                "elapsed time between events that were not both recorded".into(),
            )),
        }
    }
}

/// A module of the emulator: no code; the kernels are the image's entries, run by their
/// handles' host bodies.
struct CpuModule;

impl Module for CpuModule {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn function(&self, _name: &str) -> CudaResult<Option<Box<dyn super::Function>>> {
        // The image's entry names the kernel (checked by the caller); the typed handle
        // brings its host body at launch.
        Ok(Some(Box::new(CpuFunction {
            max_dynamic_shared_bytes: AtomicU32::new(DEFAULT_MAX_DYNAMIC_SHARED_BYTES),
        })))
    }
}

/// A kernel of the emulator: the dynamic shared memory its launches may use, as the
/// driver keeps it per kernel.
struct CpuFunction {
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: 48 KB until the kernel opts in.
    max_dynamic_shared_bytes: AtomicU32,
}

impl super::Function for CpuFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn shared_memory_opt_in(&self) -> bool {
        // As on the GPU: above 48 KB a launch needs the kernel's opt-in.
        true
    }

    fn max_active_clusters(
        &self,
        _kernel: &str,
        _block: (u32, u32, u32),
        _dynamic_shared_bytes: u32,
        _cluster: [u32; 3],
    ) -> CudaResult<u32> {
        // The emulator runs one cluster per worker of rayon's pool (the host's cores, the
        // emulator's "multiprocessors"), whatever its size.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Ok(u32::try_from(cores).unwrap_or(u32::MAX))
    }

    fn param_sizes(&self, kernel: &str) -> CudaResult<Vec<usize>> {
        Err(CudaError::ParamInfoUnavailable(kernel.to_owned()))
    }

    /// The static shared memory is 0: the emulator allocates a kernel's shared arrays when
    /// its threads first declare them, so their size is not known before a launch and is not
    /// counted against the opt-in limit (on a GPU it is).
    fn attribute(&self, _kernel: &str, attribute: FunctionAttribute) -> CudaResult<i32> {
        match attribute {
            FunctionAttribute::StaticSharedBytes => Ok(0),
            FunctionAttribute::MaxDynamicSharedBytes => Ok(i32::try_from(
                self.max_dynamic_shared_bytes.load(Ordering::Relaxed),
            )
            .unwrap_or(i32::MAX)),
            FunctionAttribute::NonPortableClusterSizeAllowed => {
                Err(not_on_emulator("thread block clusters"))
            }
        }
    }

    fn set_attribute(
        &self,
        kernel: &str,
        attribute: FunctionAttribute,
        value: i32,
    ) -> CudaResult<()> {
        match attribute {
            FunctionAttribute::MaxDynamicSharedBytes => {
                let limit = SM90_MAX_SHARED_BYTES_PER_BLOCK_OPTIN;
                match u32::try_from(value) {
                    Ok(bytes) if bytes <= limit => {
                        self.max_dynamic_shared_bytes
                            .store(bytes, Ordering::Relaxed);
                        Ok(())
                    }
                    _ => Err(CudaError::SharedMemory {
                        kernel: kernel.to_owned(),
                        requested_bytes: u32::try_from(value).unwrap_or(0),
                        static_bytes: 0,
                        limit_bytes: limit,
                    }),
                }
            }
            FunctionAttribute::StaticSharedBytes
            | FunctionAttribute::NonPortableClusterSizeAllowed => {
                Err(not_on_emulator("setting this kernel attribute"))
            }
        }
    }

    fn suggested_launch_configuration(
        &self,
        _kernel: &str,
        _dynamic_shared_bytes: usize,
        block_size_limit: u32,
    ) -> CudaResult<(u32, u32)> {
        // No occupancy to compute: one block of 256 threads (or the limit, if lower).
        let limit = if block_size_limit == 0 {
            256
        } else {
            block_size_limit
        };
        Ok((1, limit.min(256)))
    }

    unsafe fn launch(&self, stream: &dyn Stream, launch: Launch<'_>) -> CudaResult<()> {
        let Some(stream) = stream.as_any().downcast_ref::<CpuStream>() else {
            return Err(launch.across_backends(true));
        };
        let Some(host) = launch.host else {
            return Err(not_on_emulator(UNTYPED_LAUNCH));
        };
        // What the driver refuses with CUDA_ERROR_INVALID_VALUE: a configuration over the
        // hardware's limits, or more dynamic shared memory than the kernel opted into.
        if hardware_refuses(launch.grid, launch.block).is_some()
            || launch.shared_bytes > self.max_dynamic_shared_bytes.load(Ordering::Relaxed)
        {
            return Err(CudaError::refused_launch(
                launch.kernel,
                launch.grid,
                launch.block,
                launch.shared_bytes,
            ));
        }
        if let Some(capture) = stream.capturing() {
            // SAFETY: the caller's contract: one pointer per parameter, each to its bytes.
            capture.record(Work::Launch(unsafe { host.record(&launch) }));
            return Ok(());
        }
        // SAFETY: the caller's contract: on the emulator the arguments point to host memory.
        unsafe { host.run(&launch, stream.device.as_ref()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_zeroed_aligned_and_registered_while_alive() {
        let dev = CpuDevice::new(DEFAULT_MEMORY_BYTES, 0, EmuChecks::ALL);
        let a = CpuMemory::zeroed(&dev, "test", 100).unwrap();
        assert_eq!(a.alloc.address() % ALIGN_BYTES, 0);
        assert!(
            a.alloc
                .bytes()
                .iter()
                // SAFETY: zeroed at allocation.
                .all(|b| unsafe { b.assume_init() } == 0)
        );
        let b = CpuMemory::zeroed(&dev, "test", 0).unwrap();
        let buffers = dev.buffers();
        assert_eq!(buffers.len(), 2);
        assert!(buffers.contains(&(a.alloc.address(), 100)));
        drop(a);
        drop(b);
        assert!(dev.buffers().is_empty());
    }

    /// Live device and managed allocations are counted against the emulated memory: what
    /// `mem_info` reports and allocations are refused against, with the free figure.
    #[test]
    fn live_allocations_are_counted_against_the_emulated_memory() {
        use crate::{context::Context, memory::DeviceBuffer};
        const MIB: usize = 1 << 20;
        // Not made current: the other tests of this process keep their own contexts.
        let ctx = Context::from_backend(Cpu::open(MIB, 0, EmuChecks::ALL));
        assert_eq!(ctx.mem_info().unwrap(), (MIB, MIB));
        let a = DeviceBuffer::<u8>::zeroed_in(&ctx, 600 << 10).unwrap();
        let left = MIB - (600 << 10);
        assert_eq!(ctx.mem_info().unwrap(), (left, MIB));
        for err in [
            DeviceBuffer::<u8>::zeroed_in(&ctx, 500 << 10).unwrap_err(),
            ctx.backend()
                .alloc_managed(500 << 10)
                .map(drop)
                .unwrap_err(),
        ] {
            assert!(
                matches!(err, CudaError::OutOfMemory { bytes, free, .. }
                    if bytes == 500 << 10 && free == left),
                "{err}"
            );
            assert!(
                err.to_string().contains(&format!("the {left} bytes free")),
                "{err}"
            );
        }
        drop(a);
        assert_eq!(ctx.mem_info().unwrap(), (MIB, MIB));
        let b = DeviceBuffer::<u8>::zeroed_in(&ctx, 500 << 10).unwrap();
        assert_eq!(ctx.mem_info().unwrap().0, MIB - (500 << 10));
        drop(b);
        // Pinned memory is host memory: not counted.
        let pinned = ctx.backend().alloc_pinned(2 * MIB).unwrap();
        assert_eq!(ctx.mem_info().unwrap(), (MIB, MIB));
        drop(pinned);
    }

    /// While a stream captures, its work is recorded, not run; what a capture cannot take
    /// is refused as the driver refuses it; the stream runs work again afterwards.
    #[test]
    fn a_capture_records_work_that_each_replay_runs_in_order() {
        use crate::{
            context::Context,
            memory::{AsyncCopyDestination, DeviceBuffer, LockedBuffer},
            stream::{Stream, StreamFlags},
        };
        let ctx = Context::from_backend(Cpu::open(DEFAULT_MEMORY_BYTES, 0, EmuChecks::ALL));
        let stream = Stream::new_in(&ctx, StreamFlags::NON_BLOCKING, None).unwrap();
        let mut pinned = LockedBuffer::new_in(&ctx, &0u32, 4).unwrap();
        pinned.copy_from_slice(&[1, 2, 3, 4]);
        let mut a = DeviceBuffer::<u32>::zeroed_in(&ctx, 4).unwrap();
        let mut b = DeviceBuffer::<u32>::from_slice_in(&ctx, &[9; 4]).unwrap();
        for replays in [0, 2] {
            let graph = stream
                .capture(|s| {
                    // Zero `b`, then copy the pinned values into `a`, then `a` into `b`.
                    b.set_zero(s)?;
                    a.async_copy_from(&pinned, s)?;
                    b.async_copy_from(&a, s)?;
                    // Inside a capture a stream cannot be waited for, and pageable host
                    // memory cannot be copied.
                    let sync = s.synchronize().unwrap_err();
                    assert_eq!(sync.cuda_code(), Some(900), "{sync}");
                    let mut host = [0u32; 4];
                    let copy = b.async_copy_to(&mut host[..], s).unwrap_err();
                    assert!(copy.to_string().contains("pageable"), "{copy}");
                    Ok(())
                })
                .unwrap();
            for _ in 0..replays {
                graph.launch().unwrap();
            }
            drop(graph);
            // Nothing ran during the capture; each replay ran all of it, in order.
            let (want_a, want_b) = if replays == 0 {
                ([0; 4], [9; 4])
            } else {
                ([1, 2, 3, 4], [1, 2, 3, 4])
            };
            assert_eq!(a.as_host_vec().unwrap(), want_a, "{replays} replays");
            assert_eq!(b.as_host_vec().unwrap(), want_b, "{replays} replays");
        }
        // The stream works again after the capture.
        stream.synchronize().unwrap();
        b.set_zero(&stream).unwrap();
        assert_eq!(b.as_host_vec().unwrap(), [0; 4]);
    }

    /// What the emulator cannot do is a `NotOnEmulator` error naming it, never a panic;
    /// tensor maps, pinned and unified memory work in host memory.
    #[test]
    fn gpu_only_operations_are_errors_and_host_memory_kinds_work_on_the_emulator() {
        use crate::{
            context::Context,
            graph::ComputeGraph,
            memory::{AsyncCopyDestination, DeviceBuffer, LockedBuffer, UnifiedBuffer},
            nccl::Communicators,
            stream::Stream,
            tma::{TensorMap, TensorMapExt, TmaSwizzle},
        };
        let ctx = Context::emulator();
        let stream = Stream::default_of(&ctx);
        let not_here = |r: CudaResult<()>, what: &str| match r {
            Err(CudaError::NotOnEmulator { operation }) => {
                assert!(operation.contains(what), "{operation}");
            }
            other => panic!("{what}: expected NotOnEmulator, got {other:?}"),
        };
        // Graphs are captured as on a GPU, where the default stream cannot be captured.
        let refused = |r: CudaResult<()>| match r {
            Err(err) => {
                assert_eq!(err.cuda_code(), Some(900), "{err}");
                assert!(err.to_string().contains("Stream::new"), "{err}");
            }
            Ok(()) => panic!("the default stream was captured"),
        };
        refused(stream.capture(|_| Ok(())).map(drop));
        let mut g = ComputeGraph::new();
        g.node("a", &[]).unwrap();
        refused(g.build(&stream, |_, _| Ok(())).map(drop));
        not_here(
            Communicators::new(std::slice::from_ref(&stream)).map(drop),
            "NCCL",
        );
        let buf = DeviceBuffer::<f32>::zeroed_in(&ctx, 1024).unwrap();
        let map = TensorMap::tiled_2d(
            buf.as_device_ptr(),
            [32, 32],
            128,
            [32, 8],
            TmaSwizzle::None,
        );
        // Tensor maps are the exception: on the emulator they are encoded in ferrocuda's own
        // layout (cust_core::tma), which the emulator's TMA reads.
        let map = map.expect("a tensor map in the CPU layout");
        assert!(map.decode_cpu().is_ok(), "{:?}", map.decode_cpu());

        let src: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let pinned = LockedBuffer::from_slice(&src).unwrap();
        assert!(pinned.is_emulator());
        let mut dev = DeviceBuffer::<f32>::zeroed_in(&ctx, 1000).unwrap();
        dev.async_copy_from(&pinned, &stream).unwrap();
        let mut back = LockedBuffer::new_in(&ctx, &-1.0, 1500).unwrap();
        back.async_copy_prefix_from(&dev, &stream).unwrap();
        assert_eq!(&back[..1000], &src[..]);
        assert!(back[1000..].iter().all(|&v| v == -1.0));

        let mut unified = UnifiedBuffer::from_slice(&src).unwrap();
        assert!(unified.is_emulator());
        unified.prefetch_to_device().unwrap();
        unified.prefetch_to_host(&stream).unwrap();
        unified.as_mut_slice().unwrap()[3] = 7.5;
        assert_eq!(unified.as_slice().unwrap()[..4], [0.0, 1.0, 2.0, 7.5]);
        // Registered with the device, so emulated launches may use it.
        let cpu = ctx.backend().as_any().downcast_ref::<Cpu>().unwrap();
        assert!(cpu.device.buffers().iter().any(|&(_, bytes)| bytes == 4000));
    }
}
