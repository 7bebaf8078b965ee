//! The CPU backend behind [`Context::emulator`](crate::context::Context::emulator): host
//! allocations standing for device memory, the registry of live ones that every emulated
//! launch passes to `cuda_emu` for its bounds check, streams that run their work at once,
//! events on host time, and typed launches through `cuda_emu::launch`.
//!
//! What needs a GPU (code from PTX or cubins, graphs, occupancy queries, device attributes
//! other than the multiprocessor count) keeps the seam's default: `NotOnEmulator`.

use super::{
    Backend, Bytes, CPU, Completion, Event, EventKind, GPU, Guard, HostKernel, Init, Launch,
    LoadedImage, Managed, Memory, MemoryAdvice, Module, ModuleSource, Pinned, Queue, Stream,
    UNTYPED_LAUNCH, not_on_emulator,
};
use crate::{
    device::DeviceAttribute,
    error::{CudaError, CudaResult},
};
use cuda_emu::HostBuffer;
use cust_core::{
    ModuleImage,
    launch::{Kernel, ParamSizes},
};
use std::{
    alloc::Layout,
    any::Any,
    collections::BTreeMap,
    fmt,
    mem::MaybeUninit,
    ops::Range,
    ptr::NonNull,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

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
        let (g, b) = (launch.grid, launch.block);
        // SAFETY: forwarded to the caller.
        let report = unsafe {
            cuda_emu::launch_cluster(
                self,
                [g.0, g.1, g.2],
                [b.0, b.1, b.2],
                launch.cluster.unwrap_or([1, 1, 1]),
                launch.shared_bytes,
                launch.args,
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
}

/// One CPU device: its live allocations (address → bytes).
#[derive(Debug)]
struct CpuDevice {
    allocations: Mutex<BTreeMap<usize, usize>>,
    /// The order of the threads of a block (`cuda_emu::EmuOptions::seed`).
    seed: u64,
    /// The checks every launch makes.
    checks: EmuChecks,
}

impl CpuDevice {
    fn new(seed: u64, checks: EmuChecks) -> Arc<Self> {
        Arc::new(Self {
            allocations: Mutex::new(BTreeMap::new()),
            seed,
            checks,
        })
    }

    /// Every live allocation, `(address, bytes)`, for the emulator's bounds check.
    fn buffers(&self) -> Vec<(usize, usize)> {
        self.allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(&address, &bytes)| (address, bytes))
            .collect()
    }
}

/// The CPU emulator as a device.
#[derive(Debug)]
pub(crate) struct Cpu {
    device: Arc<CpuDevice>,
}

impl Cpu {
    /// A new emulator device whose launches run with `seed` and `checks`.
    pub(crate) fn open(seed: u64, checks: EmuChecks) -> Arc<dyn Backend> {
        Arc::new(Self {
            device: CpuDevice::new(seed, checks),
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
    /// `bytes` zeroed bytes on `device`.
    fn zeroed(device: &Arc<CpuDevice>, what: &'static str, bytes: usize) -> CudaResult<Self> {
        let alloc = HostAlloc::zeroed(what, bytes)?;
        device
            .allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(alloc.address(), bytes);
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
        self.device
            .allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.alloc.address());
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
        _queue: Queue<'_>,
        _what: &'static str,
    ) -> CudaResult<()> {
        self.alloc.bytes_mut()[range].copy_from_slice(src);
        Ok(())
    }

    fn read(
        &self,
        range: Range<usize>,
        dst: &mut Bytes,
        _queue: Queue<'_>,
        _what: &'static str,
    ) -> CudaResult<()> {
        dst.copy_from_slice(&self.alloc.bytes()[range]);
        Ok(())
    }

    fn copy_from(
        &mut self,
        src: &dyn Memory,
        _queue: Queue<'_>,
        _what: &'static str,
    ) -> CudaResult<()> {
        let Some(src) = src.as_any().downcast_ref::<CpuMemory>() else {
            return Err(CudaError::BackendMismatch {
                what: "copying between device buffers",
                buffer: GPU,
                stream: CPU,
            });
        };
        self.alloc.bytes_mut().copy_from_slice(src.alloc.bytes());
        Ok(())
    }

    fn set_zero(&mut self, _stream: &dyn Stream) -> CudaResult<()> {
        self.alloc.bytes_mut().fill(MaybeUninit::new(0));
        Ok(())
    }

    fn write_pinned(&mut self, src: &dyn Pinned, _stream: &dyn Stream) -> CudaResult<()> {
        let Some(src) = src.as_any().downcast_ref::<CpuPinned>() else {
            return Err(with_gpu("copying from pinned host memory"));
        };
        self.alloc.bytes_mut().copy_from_slice(src.alloc.bytes());
        Ok(())
    }

    fn read_pinned(&self, dst: &mut dyn Pinned, _stream: &dyn Stream) -> CudaResult<()> {
        let Some(dst) = dst.as_any_mut().downcast_mut::<CpuPinned>() else {
            return Err(with_gpu("copying to pinned host memory"));
        };
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
        "CPU emulator".into()
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

    fn check_free(&self, _what: &'static str, _bytes: usize) -> CudaResult<()> {
        // Allocations fail by themselves when the host runs out.
        Ok(())
    }

    fn attribute(&self, attribute: DeviceAttribute) -> CudaResult<i32> {
        // The emulator's "multiprocessors" are the host's cores (blocks run in parallel on
        // rayon's pool); no other property is modelled.
        if attribute == DeviceAttribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            return Ok(i32::try_from(cores).unwrap_or(i32::MAX));
        }
        Err(not_on_emulator(
            "device attributes other than the multiprocessor count",
        ))
    }

    fn default_stream(&self) -> Arc<dyn Stream> {
        Arc::new(CpuStream {
            device: self.device.clone(),
        })
    }

    fn new_stream(
        &self,
        _priority: Option<i32>,
        _during: &'static str,
    ) -> CudaResult<Arc<dyn Stream>> {
        // One stream: work runs at once, in call order.
        Ok(self.default_stream())
    }

    fn stream_priority_range(&self) -> CudaResult<(i32, i32)> {
        Ok((0, 0))
    }

    fn new_event(&self, _kind: EventKind) -> CudaResult<Box<dyn Event>> {
        Ok(Box::new(CpuEvent {
            recorded: Mutex::new(None),
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

/// The emulator's stream: runs all work at once, in call order.
struct CpuStream {
    device: Arc<CpuDevice>,
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
        Ok(())
    }

    fn wait(&self, _event: &dyn Event) -> CudaResult<()> {
        Ok(())
    }

    fn join(&self, _other: &dyn Stream) -> CudaResult<()> {
        Ok(())
    }

    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        _during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        CpuMemory::buffer(&self.device, bytes, init)
    }

    fn notify(&self, done: Arc<Mutex<Completion>>) -> CudaResult<()> {
        // Everything queued on the emulator has run: complete at once.
        Completion::complete(&done, Ok(()));
        Ok(())
    }
}

/// An event of the emulator: the host time of the last record (work on an emulator stream
/// is done when queued, so a record is the host's clock then).
struct CpuEvent {
    recorded: Mutex<Option<Instant>>,
}

impl CpuEvent {
    fn recorded(&self) -> Option<Instant> {
        *self.recorded.lock().unwrap_or_else(|p| p.into_inner())
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
        *self.recorded.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
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
        Ok(Some(Box::new(CpuFunction)))
    }
}

/// A kernel of the emulator.
struct CpuFunction;

impl super::Function for CpuFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        true
    }

    fn shared_memory_opt_in(&self) -> bool {
        // Host memory: no per-kernel opt-in, no device limit.
        false
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
        // SAFETY: the caller's contract: on the emulator the arguments point to host memory.
        unsafe { host.run(&launch, stream.device.as_ref()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_zeroed_aligned_and_registered_while_alive() {
        let dev = CpuDevice::new(0, EmuChecks::ALL);
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
        not_here(stream.capture(|_| Ok(())).map(drop), "graph");
        let mut g = ComputeGraph::new();
        g.node("a", &[]).unwrap();
        not_here(g.build(&stream, |_, _| Ok(())).map(drop), "graph");
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
