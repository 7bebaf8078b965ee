//! The GPU backend: the seam's objects over cudarc's safe layer (`CudaContext`,
//! `CudaStream`, `CudaEvent`, `CudaSlice`, `PinnedHostSlice`, `UnifiedSlice`, `CudaModule`,
//! `CudaFunction`, `CudaGraph`), plus the driver calls cudarc leaves to its users (launches,
//! kernel attributes, occupancy, prefetches, stream callbacks).
//!
//! Memory is allocated in bytes ([`Byte`]): the seam is untyped, and a typed buffer's length
//! and element type live in cust's public types. The driver sees the same allocations,
//! copies and events as with typed cudarc slices.

use super::{
    ArchState, Backend, Bytes, CPU, Code, Completion, DEFAULT_STREAM_CAPTURE, Event, EventKind,
    FunctionAttribute, GPU, Graph, Init, Launch, LoadedImage, LoadedVariant, Managed, Memory,
    MemoryAdvice, Module, ModuleSource, Pinned, Queue, Stream, not_on_emulator,
};
use crate::{
    device::{Device, DeviceAttribute, driver_version},
    error::{CudaError, CudaResult},
    launch_config::LaunchAttributes,
};
use cudarc::{
    driver::{
        CudaContext, CudaEvent, CudaFunction, CudaGraph, CudaModule, CudaSlice, CudaStream,
        DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, DriverError, PinnedHostSlice, SyncOnDrop,
        UnifiedSlice, result, sys,
    },
    nvrtc::Ptx,
};
use cust_core::{ComputeCapability, Cubin, ModuleImage};
use std::{
    any::Any,
    ffi::c_void,
    fmt,
    mem::{ManuallyDrop, MaybeUninit},
    ops::Range,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// One byte of device memory as cudarc types it. `MaybeUninit`, so that the bytes of any
/// `T: DeviceCopy`, padding included, may be viewed as `Byte`s.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct Byte(MaybeUninit<u8>);

// SAFETY: one plain byte, the same on host and device.
unsafe impl DeviceRepr for Byte {}
// SAFETY: a zero byte is a valid `MaybeUninit<u8>`.
unsafe impl cudarc::driver::ValidAsZeroBits for Byte {}

fn typed(b: &Bytes) -> &[Byte] {
    // SAFETY: `Byte` is `repr(transparent)` over `MaybeUninit<u8>`.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast(), b.len()) }
}

fn typed_mut(b: &mut Bytes) -> &mut [Byte] {
    // SAFETY: as in `typed`; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast(), b.len()) }
}

fn untyped(b: &[Byte]) -> &Bytes {
    // SAFETY: as in `typed`.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast(), b.len()) }
}

fn untyped_mut(b: &mut [Byte]) -> &mut Bytes {
    // SAFETY: as in `typed_mut`.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr().cast(), b.len()) }
}

/// The error for a failed driver call while doing `during`.
fn failed(during: impl fmt::Display) -> impl FnOnce(DriverError) -> CudaError {
    move |source| CudaError::Driver {
        during: during.to_string(),
        source,
    }
}

/// A [`CudaError::BackendMismatch`] of GPU memory (or a GPU function) with the emulator.
fn with_cpu(what: &'static str) -> CudaError {
    CudaError::BackendMismatch {
        what,
        buffer: GPU,
        stream: CPU,
    }
}

/// A [`CudaError::BackendMismatch`] of emulator memory with a GPU stream or buffer.
fn from_cpu(what: &'static str) -> CudaError {
    CudaError::BackendMismatch {
        what,
        buffer: CPU,
        stream: GPU,
    }
}

/// Orders a buffer's use on a stream until the work that uses it is queued: dropping it
/// records the use (cudarc's `SyncOnDrop`), so that later users on other streams wait for it.
#[derive(Debug)]
pub struct Guard<'a> {
    _sync: SyncOnDrop<'a>,
}

fn guard(sync: SyncOnDrop<'_>) -> Option<Guard<'_>> {
    Some(Guard { _sync: sync })
}

/// The GPU stream behind a seam stream, if it is one.
pub(crate) fn cuda_stream(stream: &dyn Stream) -> Option<&Arc<CudaStream>> {
    stream
        .as_any()
        .downcast_ref::<GpuStream>()
        .map(|s| &s.stream)
}

/// The GPU context behind a seam backend, if it is one.
pub(crate) fn cuda_context(backend: &dyn Backend) -> Option<&Arc<CudaContext>> {
    backend.as_any().downcast_ref::<Gpu>().map(|g| &g.ctx)
}

/// The GPU event behind a seam event, if it is one.
pub(crate) fn cuda_event(event: &dyn Event) -> Option<&CudaEvent> {
    event.as_any().downcast_ref::<GpuEvent>().map(|e| &e.event)
}

/// The GPU module behind a seam module, if it is one.
pub(crate) fn cuda_module(module: &dyn Module) -> Option<&Arc<CudaModule>> {
    module
        .as_any()
        .downcast_ref::<GpuModule>()
        .map(|m| &m.module)
}

/// The GPU function behind a seam function, if it is one.
pub(crate) fn cuda_function(function: &dyn super::Function) -> Option<&CudaFunction> {
    function
        .as_any()
        .downcast_ref::<GpuFunction>()
        .map(|f| &f.function)
}

/// The GPU allocation behind seam memory, if it is one.
pub(crate) fn cuda_memory(memory: &dyn Memory) -> Option<&CudaSlice<Byte>> {
    memory
        .as_any()
        .downcast_ref::<GpuMemory>()
        .map(|m| &*m.slice)
}

/// As [`cuda_memory`], writable.
pub(crate) fn cuda_memory_mut(memory: &mut dyn Memory) -> Option<&mut CudaSlice<Byte>> {
    memory
        .as_any_mut()
        .downcast_mut::<GpuMemory>()
        .map(|m| &mut *m.slice)
}

/// The managed allocation behind seam managed memory, if it is the GPU's.
pub(crate) fn cuda_managed(memory: &dyn Managed) -> Option<&UnifiedSlice<Byte>> {
    memory
        .as_any()
        .downcast_ref::<GpuManaged>()
        .map(|m| &m.slice)
}

/// As [`cuda_managed`], writable.
pub(crate) fn cuda_managed_mut(memory: &mut dyn Managed) -> Option<&mut UnifiedSlice<Byte>> {
    memory
        .as_any_mut()
        .downcast_mut::<GpuManaged>()
        .map(|m| &mut m.slice)
}

/// A GPU's primary context.
pub(crate) struct Gpu {
    ctx: Arc<CudaContext>,
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .finish()
    }
}

impl Gpu {
    /// `bytes` holding `init`, filled on the default stream, which is then waited for: from
    /// the stream-ordered pool ([`alloc_on`]) or, `unpooled`, by `cuMemAlloc`
    /// ([`alloc_unpooled`]). A failed wait frees the memory as it was allocated.
    fn alloc_ready(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
        unpooled: bool,
    ) -> CudaResult<Box<dyn Memory>> {
        let stream = self.ctx.default_stream();
        let slice = if unpooled {
            alloc_unpooled(&stream, bytes, init)
        } else {
            alloc_on(&stream, bytes, init)
        }
        .map_err(failed(during))?;
        let memory = GpuMemory::new(slice, unpooled);
        stream.synchronize().map_err(failed(during))?;
        Ok(Box::new(memory))
    }

    /// Opens GPU `ordinal`'s primary context.
    pub(crate) fn open(ordinal: usize) -> CudaResult<Arc<dyn Backend>> {
        let ctx = CudaContext::new(ordinal).map_err(CudaError::driver(format!(
            "creating the context of device {ordinal}"
        )))?;
        Ok(Arc::new(Self { ctx }))
    }

    /// Wraps a cudarc context.
    pub(crate) fn wrap(ctx: Arc<CudaContext>) -> Arc<dyn Backend> {
        Arc::new(Self { ctx })
    }

    /// Loads one target of an image (the baseline or a variant for `arch`) on a device of
    /// capability `device`: the cubin for the device's architecture where `cubins` has one
    /// and the driver accepts it (a rejected cubin, e.g. from a newer ptxas than the driver
    /// supports, is not fatal), else the PTX.
    fn load_target(
        &self,
        ptx: &str,
        cubins: &[Cubin],
        arch: ComputeCapability,
        device: ComputeCapability,
        origin: &str,
    ) -> CudaResult<(Arc<dyn Module>, ModuleSource, Duration)> {
        let t0 = Instant::now();
        let cubin = cubins.iter().find(|c| {
            c.arch.base() == device.base()
                && c.arch.arch_specific == arch.arch_specific
                && c.arch.family_specific == arch.family_specific
        });
        if let Some(cubin) = cubin
            && let Ok(module) = self.load_module(Code::Binary(cubin.bytes), origin)
        {
            return Ok((module, ModuleSource::Cubin(cubin.arch), t0.elapsed()));
        }
        Code::check_ptx(ptx).map_err(|reason| CudaError::InvalidModule {
            origin: origin.to_owned(),
            reason,
        })?;
        let module = self.load_module(Code::Ptx(ptx), origin)?;
        Ok((module, ModuleSource::PtxJit, t0.elapsed()))
    }

    /// The error for code the driver refused to load.
    fn load_error(&self, origin: &str, hint: &'static str, source: DriverError) -> CudaError {
        let cc = self
            .compute_capability()
            .map(|cc| format!(" ({cc})"))
            .unwrap_or_default();
        let relevant = matches!(
            source.0,
            sys::CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
                | sys::CUresult::CUDA_ERROR_INVALID_PTX
                | sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                | sys::CUresult::CUDA_ERROR_INVALID_IMAGE
        );
        CudaError::ModuleLoad {
            origin: origin.to_owned(),
            device: format!("{}{cc}", self.name()),
            hint: if relevant { hint } else { "" },
            source,
        }
    }
}

const NO_BINARY_HINT: &str = " (a cubin runs only on the architecture it was assembled for: \
                              load the PTX, or assemble for this GPU's sm_XY)";
const PTX_HINT: &str = " (PTX needs a driver at least as new as its .version: update the \
                        driver, or build with an older PTX ISA)";

impl Backend for Gpu {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn name(&self) -> String {
        self.ctx.name().unwrap_or_else(|_| "unknown GPU".into())
    }

    fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    fn synchronize(&self) -> CudaResult<()> {
        self.ctx
            .synchronize()
            .map_err(CudaError::driver("synchronizing the context"))
    }

    fn bind_to_thread(&self) -> CudaResult<()> {
        self.ctx
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))
    }

    fn check_free(&self, what: &'static str, bytes: usize) -> CudaResult<()> {
        let (free, _) = self.mem_info()?;
        if bytes > free {
            return Err(CudaError::OutOfMemory { what, bytes, free });
        }
        Ok(())
    }

    fn attribute(&self, attribute: DeviceAttribute) -> CudaResult<i32> {
        self.device()?.get_attribute(attribute)
    }

    fn device(&self) -> CudaResult<Device> {
        Device::get_device(self.ctx.ordinal() as u32)
    }

    fn mem_info(&self) -> CudaResult<(usize, usize)> {
        self.ctx
            .mem_get_info()
            .map_err(CudaError::driver("reading free memory (cuMemGetInfo)"))
    }

    fn compute_capability(&self) -> CudaResult<ComputeCapability> {
        let (major, minor) = self
            .ctx
            .compute_capability()
            .map_err(CudaError::driver("reading the compute capability"))?;
        Ok(ComputeCapability::new(major as u32, minor as u32))
    }

    fn default_stream(&self) -> Arc<dyn Stream> {
        Arc::new(GpuStream {
            stream: self.ctx.default_stream(),
        })
    }

    fn new_stream(
        &self,
        priority: Option<i32>,
        during: &'static str,
    ) -> CudaResult<Arc<dyn Stream>> {
        let stream = match priority {
            None => self.ctx.new_stream(),
            Some(p) => self.ctx.new_stream_with_priority(p),
        }
        .map_err(CudaError::driver(during))?;
        Ok(Arc::new(GpuStream { stream }))
    }

    fn stream_priority_range(&self) -> CudaResult<(i32, i32)> {
        self.bind_to_thread()?;
        result::stream::get_priority_range()
            .map_err(CudaError::driver("reading the stream priority range"))
    }

    fn new_event(&self, kind: EventKind) -> CudaResult<Box<dyn Event>> {
        let flags = match kind {
            EventKind::Default => sys::CUevent_flags::CU_EVENT_DEFAULT,
            EventKind::BlockingSync => sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC,
            EventKind::DisableTiming => sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
        };
        let event = self
            .ctx
            .new_event(Some(flags))
            .map_err(CudaError::driver("creating an event"))?;
        Ok(Box::new(GpuEvent { event }))
    }

    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        self.alloc_ready(bytes, init, during, false)
    }

    fn alloc_unpooled(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        self.alloc_ready(bytes, init, during, true)
    }

    fn alloc_pinned(&self, bytes: usize) -> CudaResult<Box<dyn Pinned>> {
        // SAFETY: the memory is uninitialised; the caller initialises every byte before
        // reading it. No write-combining flag: the host also reads it.
        let slice = unsafe { self.ctx.alloc_pinned_with_flags::<Byte>(bytes, 0) }
            .map_err(CudaError::driver("allocating pinned host memory"))?;
        Ok(Box::new(GpuPinned {
            slice,
            pending: Mutex::new(None),
        }))
    }

    fn alloc_managed(&self, bytes: usize) -> CudaResult<Box<dyn Managed>> {
        // SAFETY: uninitialised memory; the caller initialises every byte before reading it.
        let slice = unsafe { self.ctx.alloc_unified::<Byte>(bytes, true) }
            .map_err(CudaError::driver("allocating managed memory"))?;
        Ok(Box::new(GpuManaged { slice }))
    }

    fn load_module(&self, code: Code<'_>, origin: &str) -> CudaResult<Arc<dyn Module>> {
        let module = match code {
            // Line tables: the driver's JIT keeps them only when asked, through the linker,
            // whose cubin cudarc then loads (cudarc's `load_module` takes no JIT options).
            Code::Ptx(ptx) if Code::has_line_tables(ptx) => {
                let cubin = jit_with_line_info(&self.ctx, ptx)
                    .map_err(|source| self.load_error(origin, PTX_HINT, source))?;
                self.ctx
                    .load_module(Ptx::from_binary(cubin))
                    .map_err(|source| self.load_error(origin, PTX_HINT, source))?
            }
            Code::Ptx(ptx) => self
                .ctx
                .load_module(Ptx::from_src(ptx))
                .map_err(|source| self.load_error(origin, PTX_HINT, source))?,
            Code::Binary(bytes) => {
                if !Code::is_binary(bytes) {
                    return Err(CudaError::InvalidModule {
                        origin: origin.to_owned(),
                        reason: "expected an ELF cubin (starts with 0x7f 'ELF') or a fatbin".into(),
                    });
                }
                self.ctx
                    .load_module(Ptx::from_binary(bytes.to_vec()))
                    .map_err(|source| self.load_error(origin, NO_BINARY_HINT, source))?
            }
        };
        Ok(Arc::new(GpuModule {
            module,
            ctx: self.ctx.clone(),
        }))
    }

    fn load_image(&self, image: &'static ModuleImage, origin: &str) -> CudaResult<LoadedImage> {
        let cc = self.compute_capability()?;
        let mut variants = Vec::new();
        for (index, variant) in image.variants_for(cc) {
            let v_origin = format!("{origin} ({} variant)", variant.arch);
            let (module, source, _) =
                self.load_target(variant.ptx, &variant.cubins, variant.arch, cc, &v_origin)?;
            variants.push(LoadedVariant {
                index,
                arch: variant.arch,
                module,
                source,
            });
        }
        let (module, source, load_time) =
            self.load_target(image.ptx, &image.cubins, cc, cc, origin)?;
        Ok(LoadedImage {
            module,
            source,
            load_time,
            arch: Some(ArchState {
                device: cc,
                variants,
            }),
        })
    }
}

/// Allocates `bytes` on `stream` holding `init` (cudarc's `alloc`, `alloc_zeros`,
/// `clone_htod`).
fn alloc_on(
    stream: &Arc<CudaStream>,
    bytes: usize,
    init: Init<'_>,
) -> Result<CudaSlice<Byte>, DriverError> {
    match init {
        // SAFETY: the contents are arbitrary; the caller vouches for reading them.
        Init::Uninit => unsafe { stream.alloc::<Byte>(bytes) },
        Init::Zeroed => stream.alloc_zeros::<Byte>(bytes),
        Init::Copy(src) => stream.clone_htod(typed(src)),
    }
}

/// Allocates `bytes` holding `init` with `cuMemAlloc`, outside the device's stream-ordered
/// memory pool, the fill queued on `stream` (not waited for): `DeviceBuffer`'s `_unpooled`
/// constructors. A process's first `cuMemAllocAsync` on a device sets up the pool: 7.7–11.8
/// ms on an H200 (driver 580) whatever the size (256 bytes or 23 MB), against 0.14–0.16 ms
/// for a first `cuMemAlloc` and 0.06–0.10 ms for the next ones
/// (`bench/python/first_alloc.py`, 2026-11-29, four fresh processes per variant).
/// [`free_unpooled`] frees them.
fn alloc_unpooled(
    stream: &Arc<CudaStream>,
    bytes: usize,
    init: Init<'_>,
) -> Result<CudaSlice<Byte>, DriverError> {
    stream.context().bind_to_thread()?;
    // SAFETY: a plain allocation on the bound context; its contents are filled below, or
    // arbitrary for `Init::Uninit` (the caller vouches for not reading them first).
    let ptr = unsafe { result::malloc_sync(bytes) }?;
    // SAFETY: `ptr` is a new allocation of `bytes` bytes on `stream`'s context, owned by the
    // slice from here on and given back to `cuMemFree` by `free_unpooled` (never to cudarc's
    // drop, which would free it into the pool). cudarc makes the slice's two tracking
    // events here (it panics only if the driver cannot create an event).
    let mut slice = unsafe { stream.upgrade_device_ptr::<Byte>(ptr, bytes) };
    let filled = match init {
        Init::Uninit => Ok(()),
        Init::Zeroed => stream.memset_zeros(&mut slice),
        Init::Copy(src) => stream.memcpy_htod(typed(src), &mut slice),
    };
    match filled {
        Ok(()) => Ok(slice),
        Err(e) => {
            free_unpooled(slice);
            Err(e)
        }
    }
}

/// Frees memory of [`alloc_unpooled`]: waits for the work queued on it (its stream, after
/// the waits cudarc's `leak` queues for its last reads and writes on other streams), then
/// `cuMemFree`. Errors are kept as the context's, as cudarc's drop does.
fn free_unpooled(slice: CudaSlice<Byte>) {
    let stream = slice.stream().clone();
    let ctx = stream.context().clone();
    let ptr = slice.leak();
    ctx.record_err(stream.synchronize());
    ctx.record_err(ctx.bind_to_thread());
    // SAFETY: allocated by `cuMemAlloc` (`alloc_unpooled`), freed once (the slice is gone),
    // and the work queued on it has finished.
    ctx.record_err(unsafe { result::free_sync(ptr) });
}

/// Runs `op` on the stream `queue` names (`own`: the memory's own), waiting for it for
/// [`Queue::Sync`]; `what` names the copy in errors.
fn queued(
    queue: Queue<'_>,
    own: &Arc<CudaStream>,
    what: &'static str,
    op: impl FnOnce(&Arc<CudaStream>) -> Result<(), DriverError>,
) -> CudaResult<()> {
    match queue {
        Queue::Sync => op(own).and_then(|()| own.synchronize()),
        Queue::Own => op(own),
        Queue::On(stream) => op(&gpu_stream(stream, || with_cpu(what))?.stream),
    }
    .map_err(failed(what))
}

/// A GPU stream.
struct GpuStream {
    stream: Arc<CudaStream>,
}

/// Wraps a cudarc stream.
pub(crate) fn wrap_stream(stream: Arc<CudaStream>) -> Arc<dyn Stream> {
    Arc::new(GpuStream { stream })
}

/// The GPU stream of `stream`, or `error` for the emulator's.
fn gpu_stream(stream: &dyn Stream, error: impl FnOnce() -> CudaError) -> CudaResult<&GpuStream> {
    stream
        .as_any()
        .downcast_ref::<GpuStream>()
        .ok_or_else(error)
}

/// The driver's callback for [`Stream::notify`]: records the status and wakes the task
/// awaiting it. It calls no CUDA function (not allowed in a stream callback).
unsafe extern "C" fn stream_done(_stream: sys::CUstream, status: sys::CUresult, data: *mut c_void) {
    // SAFETY: `data` is the `Arc` leaked by `notify` for exactly this one call.
    let done = unsafe { Arc::from_raw(data as *const Mutex<Completion>) };
    Completion::complete(
        &done,
        status
            .result()
            .map_err(CudaError::driver("awaiting a stream")),
    );
}

impl Stream for GpuStream {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn priority(&self) -> CudaResult<i32> {
        let mut priority = 0;
        // SAFETY: a live stream; the driver writes one integer.
        unsafe { sys::cuStreamGetPriority(self.stream.cu_stream(), &mut priority) }
            .result()
            .map_err(CudaError::driver("reading the stream priority"))?;
        Ok(priority)
    }

    fn synchronize(&self) -> CudaResult<()> {
        self.stream
            .synchronize()
            .map_err(CudaError::driver("synchronizing a stream"))
    }

    fn wait(&self, event: &dyn Event) -> CudaResult<()> {
        let event =
            cuda_event(event).ok_or(not_on_emulator("a CPU-emulator event on a GPU stream"))?;
        self.stream
            .wait(event)
            .map_err(CudaError::driver("making a stream wait for an event"))
    }

    fn join(&self, other: &dyn Stream) -> CudaResult<()> {
        let Some(other) = cuda_stream(other) else {
            return Ok(());
        };
        self.stream
            .join(other)
            .map_err(CudaError::driver("making a stream wait for another"))
    }

    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        let slice = alloc_on(&self.stream, bytes, init).map_err(failed(during))?;
        Ok(Box::new(GpuMemory::new(slice, false)))
    }

    fn notify(&self, done: Arc<Mutex<Completion>>) -> CudaResult<()> {
        self.stream
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver("binding the stream's context"))?;
        let data = Arc::into_raw(done) as *mut c_void;
        // SAFETY: `stream_done` matches `CUstreamCallback` and takes ownership of `data`
        // (one strong count) when the driver calls it, which it does exactly once; flags
        // must be 0.
        let queued = unsafe {
            sys::cuStreamAddCallback(self.stream.cu_stream(), Some(stream_done), data, 0)
        }
        .result();
        if let Err(e) = queued {
            // SAFETY: the driver did not take `data`: reclaim the count leaked above.
            drop(unsafe { Arc::from_raw(data as *const Mutex<Completion>) });
            return Err(CudaError::driver("queueing a stream callback")(e));
        }
        Ok(())
    }

    fn capture(
        &self,
        _operation: &'static str,
        record: &mut dyn FnMut() -> CudaResult<()>,
    ) -> CudaResult<Box<dyn Graph>> {
        // cudarc orders each buffer's uses across streams with events; inside a capture,
        // waiting on an event recorded outside it is an error
        // (CUDA_ERROR_STREAM_CAPTURE_ISOLATION). So: finish all work queued so far on this
        // context, then pause the event bookkeeping while the capture is open. The graph's
        // own uses of the buffers are ordered on this stream, and dropping the graph waits
        // for its replays, before the borrows of the buffers end.
        let ctx = self.stream.context().clone();
        ctx.synchronize().map_err(CudaError::driver(
            "finishing queued work before a graph capture",
        ))?;
        let tracking = ctx.is_event_tracking();
        if tracking {
            // SAFETY: turned back on below, before returning; buffers allocated while it is
            // off get no events (allocating inside a capture is not supported here).
            unsafe { ctx.disable_event_tracking() };
        }
        let begun = self
            .stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(CudaError::driver(DEFAULT_STREAM_CAPTURE));
        let (recorded, ended) = match begun {
            Ok(()) => {
                let recorded = record();
                (
                    recorded,
                    self.stream.end_capture(sys::CUgraphInstantiate_flags(0)),
                )
            }
            Err(e) => (Err(e), Ok(None)),
        };
        if tracking {
            // SAFETY: restores the state found above.
            unsafe { ctx.enable_event_tracking() };
        }
        recorded?;
        match ended.map_err(CudaError::driver("ending a graph capture"))? {
            Some(graph) => Ok(Box::new(GpuGraph { graph })),
            None => Err(CudaError::NoGraph),
        }
    }
}

/// A GPU event.
struct GpuEvent {
    event: CudaEvent,
}

impl Event for GpuEvent {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn record(&self, stream: &dyn Stream) -> CudaResult<()> {
        let stream = gpu_stream(stream, || {
            not_on_emulator("recording a GPU event on a CPU-emulator stream")
        })?;
        self.event
            .record(&stream.stream)
            .map_err(CudaError::driver("recording an event"))
    }

    fn synchronize(&self) -> CudaResult<()> {
        self.event
            .synchronize()
            .map_err(CudaError::driver("waiting for an event"))
    }

    fn is_complete(&self) -> CudaResult<bool> {
        self.event
            .try_is_complete()
            .map_err(CudaError::driver("querying an event"))
    }

    fn elapsed_ms(&self, start: &dyn Event) -> CudaResult<f32> {
        let start =
            cuda_event(start).ok_or(not_on_emulator("a CPU-emulator event on a GPU stream"))?;
        start
            .elapsed_ms(&self.event)
            .map_err(CudaError::driver("reading the time between two events"))
    }
}

/// GPU memory: from the stream-ordered pool (`cuMemAllocAsync`, freed by cudarc's drop)
/// or not ([`alloc_unpooled`], freed by [`free_unpooled`]).
struct GpuMemory {
    /// Taken once, by the drop.
    slice: ManuallyDrop<CudaSlice<Byte>>,
    /// Made by `cuMemAlloc`, outside the pool.
    unpooled: bool,
}

impl GpuMemory {
    /// `slice` from the pool, or from [`alloc_unpooled`] if `unpooled`.
    fn new(slice: CudaSlice<Byte>, unpooled: bool) -> Self {
        Self {
            slice: ManuallyDrop::new(slice),
            unpooled,
        }
    }
}

impl Drop for GpuMemory {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the field is not used again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        if self.unpooled {
            free_unpooled(slice);
        }
        // Pooled: cudarc's drop (`cuMemFreeAsync` on its stream, after its events).
    }
}

impl Memory for GpuMemory {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn address(&self, range: Range<usize>) -> u64 {
        let view = self.slice.slice(range);
        let stream = view.stream().clone();
        let (ptr, _record) = view.device_ptr(&stream);
        ptr
    }

    fn use_on<'a>(
        &'a self,
        range: Range<usize>,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)> {
        let stream = gpu_stream(stream, || with_cpu("launching a kernel"))?;
        let (ptr, sync) = self.slice.slice(range).view_ptr(&stream.stream);
        Ok((ptr, guard(sync)))
    }

    fn use_mut_on<'a>(
        &'a mut self,
        range: Range<usize>,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)> {
        let stream = gpu_stream(stream, || with_cpu("launching a kernel"))?;
        let (ptr, sync) = self.slice.slice_mut(range).view_ptr_mut(&stream.stream);
        Ok((ptr, guard(sync)))
    }

    fn write(
        &mut self,
        range: Range<usize>,
        src: &Bytes,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()> {
        let own = self.slice.stream().clone();
        let mut view = self.slice.slice_mut(range);
        queued(queue, &own, what, |s| s.memcpy_htod(typed(src), &mut view))
    }

    fn read(
        &self,
        range: Range<usize>,
        dst: &mut Bytes,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()> {
        let view = self.slice.slice(range);
        queued(queue, view.stream(), what, |s| {
            s.memcpy_dtoh(&view, typed_mut(dst))
        })
    }

    fn copy_from(
        &mut self,
        src: &dyn Memory,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()> {
        let src = cuda_memory(src).ok_or_else(|| from_cpu("copying between device buffers"))?;
        let own = self.slice.stream().clone();
        queued(queue, &own, what, |s| s.memcpy_dtod(src, &mut *self.slice))
    }

    fn set_zero(&mut self, stream: &dyn Stream) -> CudaResult<()> {
        gpu_stream(stream, || {
            not_on_emulator("a GPU memset on a CPU-emulator stream")
        })?
        .stream
        .memset_zeros(&mut *self.slice)
        .map_err(CudaError::driver("queueing a memset of a device buffer"))
    }

    fn write_pinned(&mut self, src: &dyn Pinned, stream: &dyn Stream) -> CudaResult<()> {
        let Some(pinned) = src.as_any().downcast_ref::<GpuPinned>() else {
            return Err(with_cpu("copying from pinned host memory"));
        };
        let cuda = gpu_stream(stream, || with_cpu("queueing a pinned host-to-device copy"))?;
        cuda.stream
            .memcpy_htod(&pinned.slice, &mut *self.slice)
            .map_err(CudaError::driver("queueing a pinned host-to-device copy"))?;
        pinned.copy_queued(stream)
    }

    fn read_pinned(&self, dst: &mut dyn Pinned, stream: &dyn Stream) -> CudaResult<()> {
        let Some(pinned) = dst.as_any_mut().downcast_mut::<GpuPinned>() else {
            return Err(with_cpu("copying to pinned host memory"));
        };
        let cuda = gpu_stream(stream, || with_cpu("queueing a device-to-pinned-host copy"))?;
        cuda.stream
            .memcpy_dtoh(&*self.slice, &mut pinned.slice)
            .map_err(CudaError::driver("queueing a device-to-pinned-host copy"))?;
        pinned.copy_queued(stream)
    }
}

/// Page-locked host memory of a GPU context.
struct GpuPinned {
    slice: PinnedHostSlice<Byte>,
    /// An event after the last asynchronous copy from or into this memory. (cudarc records
    /// its own only while the context has streams besides the default one.)
    pending: Mutex<Option<CudaEvent>>,
}

impl GpuPinned {
    /// Waits for the last queued copy from or into this memory.
    fn wait_for_copies(&self) -> CudaResult<()> {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(event) = pending.as_ref() {
            event
                .synchronize()
                .map_err(CudaError::driver("waiting for a copy into pinned memory"))?;
        }
        Ok(())
    }
}

impl Pinned for GpuPinned {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn bytes(&self) -> CudaResult<&Bytes> {
        self.wait_for_copies()?;
        self.slice
            .as_slice()
            .map(untyped)
            .map_err(CudaError::driver("waiting for a copy into pinned memory"))
    }

    fn bytes_mut(&mut self) -> CudaResult<&mut Bytes> {
        self.wait_for_copies()?;
        self.slice
            .as_mut_slice()
            .map(untyped_mut)
            .map_err(CudaError::driver("waiting for a copy from pinned memory"))
    }

    unsafe fn copy_from_device(
        &mut self,
        src: u64,
        bytes: usize,
        stream: &dyn Stream,
    ) -> CudaResult<()> {
        let stream = gpu_stream(stream, || with_cpu("copying into pinned host memory"))?;
        stream
            .stream
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))?;
        let dst = self.slice.as_mut_ptr().map_err(CudaError::driver(
            "waiting for earlier uses of pinned memory",
        ))?;
        // SAFETY: `dst` is page-locked memory of at least `bytes` bytes, kept from the host
        // until the accessors wait for this copy; `src` is the caller's: `bytes` bytes of
        // device memory ordered on `stream`.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream.stream.cu_stream()) }
            .result()
            .map_err(CudaError::driver("queueing a device-to-pinned-host copy"))
    }

    fn copy_queued(&self, stream: &dyn Stream) -> CudaResult<()> {
        let stream = gpu_stream(stream, || {
            not_on_emulator("recording an event after a pinned copy")
        })?;
        let event = stream
            .stream
            .record_event(None)
            .map_err(CudaError::driver("recording an event after a pinned copy"))?;
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(event);
        Ok(())
    }
}

/// Managed memory of a GPU context.
struct GpuManaged {
    slice: UnifiedSlice<Byte>,
}

impl Managed for GpuManaged {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn bytes(&self) -> CudaResult<&Bytes> {
        self.slice
            .as_slice()
            .map(untyped)
            .map_err(CudaError::driver("reading managed memory on the host"))
    }

    fn bytes_mut(&mut self) -> CudaResult<&mut Bytes> {
        self.slice
            .as_mut_slice()
            .map(untyped_mut)
            .map_err(CudaError::driver("writing managed memory on the host"))
    }

    fn prefetch_to_device(&self) -> CudaResult<()> {
        self.slice.prefetch().map_err(CudaError::driver(
            "prefetching managed memory to the device",
        ))
    }

    fn prefetch_to_host(&self, stream: &dyn Stream) -> CudaResult<()> {
        let stream = gpu_stream(stream, || with_cpu("prefetching managed memory"))?;
        let (ptr, _record) = self.slice.device_ptr(&stream.stream);
        let host = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        // SAFETY: the whole managed allocation, queued on `stream`.
        unsafe {
            result::mem_prefetch_async(ptr, self.slice.num_bytes(), host, stream.stream.cu_stream())
        }
        .map_err(CudaError::driver("prefetching managed memory to the host"))
    }

    fn advise(&self, advice: MemoryAdvice) -> CudaResult<()> {
        let ordinal = DeviceSlice::stream(&self.slice).context().ordinal() as i32;
        let device = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal,
        };
        let host = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        use sys::CUmem_advise::*;
        let (what, location) = match advice {
            MemoryAdvice::ReadMostly => (CU_MEM_ADVISE_SET_READ_MOSTLY, device),
            MemoryAdvice::PreferDevice => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, device),
            MemoryAdvice::PreferHost => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host),
            MemoryAdvice::AccessedByDevice => (CU_MEM_ADVISE_SET_ACCESSED_BY, device),
        };
        let stream = DeviceSlice::stream(&self.slice).clone();
        let (ptr, _record) = self.slice.device_ptr(&stream);
        // SAFETY: the whole managed allocation.
        unsafe { result::mem_advise(ptr, self.slice.num_bytes(), what, location) }
            .map_err(failed(format_args!("advising managed memory ({advice:?})")))
    }

    fn use_on<'a>(&'a self, stream: &'a dyn Stream) -> CudaResult<(u64, Option<Guard<'a>>)> {
        let stream = gpu_stream(stream, || with_cpu("launching a kernel"))?;
        let (ptr, sync) = self.slice.device_ptr(&stream.stream);
        Ok((ptr, guard(sync)))
    }

    fn use_mut_on<'a>(
        &'a mut self,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)> {
        let stream = gpu_stream(stream, || with_cpu("launching a kernel"))?;
        let (ptr, sync) = self.slice.device_ptr_mut(&stream.stream);
        Ok((ptr, guard(sync)))
    }
}

/// Compiles `ptx` for the device of `ctx` with the driver's JIT and line information on
/// (`CU_JIT_GENERATE_LINE_INFO`, what ptxas' `-lineinfo` is to nvcc), so that Nsight Compute,
/// compute-sanitizer and cuda-gdb name the source lines of its `.loc` directives; returns the
/// cubin. Through the JIT linker (`cuLinkCreate`, `cuLinkAddData`, `cuLinkComplete`), the
/// driver's one entry that takes JIT options and hands back the code.
fn jit_with_line_info(ctx: &Arc<CudaContext>, ptx: &str) -> Result<Vec<u8>, DriverError> {
    /// Destroys the link state (and the cubin it owns) when dropped.
    struct Link(sys::CUlinkState);
    impl Drop for Link {
        fn drop(&mut self) {
            // SAFETY: a state from `cuLinkCreate_v2`, destroyed once; its cubin is copied
            // out before this runs.
            unsafe { sys::cuLinkDestroy(self.0) };
        }
    }
    ctx.bind_to_thread()?;
    // `Code::check_ptx` refused NUL bytes; one here is an invalid image all the same.
    let source = std::ffi::CString::new(ptx)
        .map_err(|_| DriverError(sys::CUresult::CUDA_ERROR_INVALID_IMAGE))?;
    let mut options = [sys::CUjit_option::CU_JIT_GENERATE_LINE_INFO];
    // An integer option's value is passed in the pointer itself (CUDA Driver API,
    // `CUjit_option`).
    let mut values = [std::ptr::without_provenance_mut::<c_void>(1)];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: one option with its value, arrays of length 1; the driver writes the state.
    unsafe { sys::cuLinkCreate_v2(1, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }
        .result()?;
    let link = Link(state);
    // SAFETY: `source` is NUL-terminated and outlives the call (the driver copies it); the
    // name is a C string literal; the same one option as above.
    unsafe {
        sys::cuLinkAddData_v2(
            link.0,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            source.as_ptr() as *mut c_void,
            source.as_bytes_with_nul().len(),
            c"module.ptx".as_ptr(),
            1,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    }
    .result()?;
    let (mut cubin, mut bytes): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
    // SAFETY: the driver writes a pointer to the cubin it owns (until `cuLinkDestroy`) and
    // its size.
    unsafe { sys::cuLinkComplete(link.0, &mut cubin, &mut bytes) }.result()?;
    // SAFETY: `cubin` points to `bytes` bytes owned by `link`, alive until it drops below.
    Ok(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), bytes) }.to_vec())
}

/// A module loaded on a GPU.
struct GpuModule {
    module: Arc<CudaModule>,
    /// Its context, which its functions bind for driver calls.
    ctx: Arc<CudaContext>,
}

impl Module for GpuModule {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn function(&self, name: &str) -> CudaResult<Option<Box<dyn super::Function>>> {
        match self.module.load_function(name) {
            Ok(function) => Ok(Some(Box::new(GpuFunction {
                function,
                ctx: self.ctx.clone(),
            }))),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_NOT_FOUND => Ok(None),
            Err(e) => Err(failed(format_args!("looking up kernel `{name}`"))(e)),
        }
    }
}

/// A kernel of a module loaded on a GPU.
struct GpuFunction {
    function: CudaFunction,
    ctx: Arc<CudaContext>,
}

impl GpuFunction {
    fn bind(&self) -> CudaResult<()> {
        self.ctx
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))
    }
}

fn to_sys(attribute: FunctionAttribute) -> sys::CUfunction_attribute {
    use sys::CUfunction_attribute::*;
    match attribute {
        FunctionAttribute::StaticSharedBytes => CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        FunctionAttribute::MaxDynamicSharedBytes => CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        FunctionAttribute::NonPortableClusterSizeAllowed => {
            CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
        }
    }
}

/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` for clusters of `cluster` blocks.
fn cluster_attribute(cluster: [u32; 3]) -> sys::CUlaunchAttribute {
    let [x, y, z] = cluster;
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            clusterDim: sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x, y, z },
        },
    }
}

/// The `CUlaunchAttribute`s of `attributes` and how many of the two are set (the first
/// ones): `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` unless the cluster is `[1, 1, 1]`, then
/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (value 1) where allowed.
fn launch_attributes(attributes: LaunchAttributes) -> ([sys::CUlaunchAttribute; 2], u32) {
    use sys::CUlaunchAttributeID::*;
    let unset = sys::CUlaunchAttribute {
        id: CU_LAUNCH_ATTRIBUTE_IGNORE,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue { pad: [0; 64] },
    };
    let mut set = [unset; 2];
    let mut count = 0;
    let cluster = attributes.cluster_dims();
    if cluster != [1, 1, 1] {
        set[count] = cluster_attribute(cluster);
        count += 1;
    }
    if attributes.programmatic_stream_serialization_allowed() {
        set[count] = sys::CUlaunchAttribute {
            id: CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue {
                programmaticStreamSerializationAllowed: 1,
            },
        };
        count += 1;
    }
    (set, count as u32)
}

impl super::Function for GpuFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn is_emulator(&self) -> bool {
        false
    }

    fn shared_memory_opt_in(&self) -> bool {
        true
    }

    fn param_sizes(&self, kernel: &str) -> CudaResult<Vec<usize>> {
        if driver_version()? < (12, 4) {
            return Err(CudaError::ParamInfoUnavailable(kernel.to_owned()));
        }
        let f = self.function.cu_function();
        let mut sizes = Vec::new();
        for index in 0.. {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `f` is a live function of a loaded module (the caller holds the
            // module); the driver writes two integers. Driver >= 12.4 checked above, so the
            // symbol exists.
            let status = unsafe { sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size) };
            match status {
                sys::CUresult::CUDA_SUCCESS => sizes.push(size),
                // Past the last parameter.
                sys::CUresult::CUDA_ERROR_INVALID_VALUE => break,
                other => {
                    return Err(failed(format_args!(
                        "reading the parameters of kernel `{kernel}`"
                    ))(DriverError(other)));
                }
            }
        }
        Ok(sizes)
    }

    fn attribute(&self, kernel: &str, attribute: FunctionAttribute) -> CudaResult<i32> {
        let attribute = to_sys(attribute);
        let mut value = 0;
        self.bind()?;
        // SAFETY: a live function of a loaded module (the caller holds the module); the
        // driver writes one int.
        unsafe { sys::cuFuncGetAttribute(&mut value, attribute, self.function.cu_function()) }
            .result()
            .map_err(failed(format_args!(
                "reading {attribute:?} of kernel `{kernel}`"
            )))?;
        Ok(value)
    }

    fn set_attribute(
        &self,
        kernel: &str,
        attribute: FunctionAttribute,
        value: i32,
    ) -> CudaResult<()> {
        let attribute = to_sys(attribute);
        self.bind()?;
        // SAFETY: a live function of a loaded module (the caller holds the module); a plain
        // value.
        unsafe { sys::cuFuncSetAttribute(self.function.cu_function(), attribute, value) }
            .result()
            .map_err(failed(format_args!(
                "setting {attribute:?} = {value} on kernel `{kernel}`"
            )))
    }

    fn suggested_launch_configuration(
        &self,
        kernel: &str,
        dynamic_shared_bytes: usize,
        block_size_limit: u32,
    ) -> CudaResult<(u32, u32)> {
        let (mut min_grid, mut block) = (0, 0);
        self.bind()?;
        // SAFETY: a live function; no callback, so `dynamic_shared_bytes` applies to every
        // block size; the driver writes two integers.
        unsafe {
            sys::cuOccupancyMaxPotentialBlockSize(
                &mut min_grid,
                &mut block,
                self.function.cu_function(),
                None,
                dynamic_shared_bytes,
                i32::try_from(block_size_limit).unwrap_or(i32::MAX),
            )
        }
        .result()
        .map_err(failed(format_args!(
            "occupancy query for kernel `{kernel}`"
        )))?;
        Ok((min_grid as u32, block as u32))
    }

    fn max_active_blocks_per_multiprocessor(
        &self,
        kernel: &str,
        threads: u32,
        dynamic_shared_bytes: usize,
    ) -> CudaResult<u32> {
        self.function
            .occupancy_max_active_blocks_per_multiprocessor(threads, dynamic_shared_bytes, None)
            .map_err(failed(format_args!(
                "occupancy query for kernel `{kernel}`"
            )))
    }

    fn max_active_clusters(
        &self,
        kernel: &str,
        block: (u32, u32, u32),
        dynamic_shared_bytes: u32,
        cluster: [u32; 3],
    ) -> CudaResult<u32> {
        let [x, y, z] = cluster;
        let mut attribute = cluster_attribute(cluster);
        let config = sys::CUlaunchConfig {
            gridDimX: x,
            gridDimY: y,
            gridDimZ: z,
            blockDimX: block.0,
            blockDimY: block.1,
            blockDimZ: block.2,
            sharedMemBytes: dynamic_shared_bytes,
            // Ignored by the query.
            hStream: std::ptr::null_mut(),
            attrs: &raw mut attribute,
            numAttrs: 1,
        };
        let mut clusters = 0;
        self.bind()?;
        // SAFETY: a live function of a loaded module (the caller holds the module); `config`
        // and the attribute it points to outlive the call, which only reads them; the driver
        // writes one int.
        unsafe {
            sys::cuOccupancyMaxActiveClusters(
                &mut clusters,
                self.function.cu_function(),
                &raw const config,
            )
        }
        .result()
        .map_err(failed(format_args!(
            "cluster occupancy query for kernel `{kernel}` (clusters of {cluster:?} blocks of \
             BlockSize {{ x: {}, y: {}, z: {} }} threads, {dynamic_shared_bytes} bytes of \
             dynamic shared memory)",
            block.0, block.1, block.2
        )))?;
        Ok(u32::try_from(clusters).unwrap_or(0))
    }

    unsafe fn launch(&self, stream: &dyn Stream, launch: Launch<'_>) -> CudaResult<()> {
        let Some(cuda) = cuda_stream(stream) else {
            return Err(launch.across_backends(false));
        };
        let f = self.function.cu_function();
        let (grid, block, shared_bytes) = (launch.grid, launch.block, launch.shared_bytes);
        let args = launch.args;
        let queued = cuda
            .context()
            .bind_to_thread()
            .and_then(|()| match launch.attributes {
                // SAFETY: the caller's contract: one pointer per parameter, each to a value of
                // the size the module declares, outliving the call.
                None => unsafe {
                    result::launch_kernel(f, grid, block, shared_bytes, cuda.cu_stream(), args)
                },
                Some(attributes) => {
                    let (mut attrs, count) = launch_attributes(attributes);
                    let config = sys::CUlaunchConfig {
                        gridDimX: grid.0,
                        gridDimY: grid.1,
                        gridDimZ: grid.2,
                        blockDimX: block.0,
                        blockDimY: block.1,
                        blockDimZ: block.2,
                        sharedMemBytes: shared_bytes,
                        hStream: cuda.cu_stream(),
                        attrs: attrs.as_mut_ptr(),
                        numAttrs: count,
                    };
                    // SAFETY: as above; `config` and `attrs` (whose first `count` entries
                    // are set) outlive the call; no `extra`.
                    unsafe {
                        sys::cuLaunchKernelEx(
                            &raw const config,
                            f,
                            args.as_mut_ptr(),
                            std::ptr::null_mut(),
                        )
                    }
                    .result()
                }
            });
        queued.map_err(|source| CudaError::Launch {
            kernel: launch.kernel.to_owned(),
            grid,
            block,
            shared_bytes,
            source,
        })
    }
}

/// A graph captured on a GPU stream.
struct GpuGraph {
    graph: CudaGraph,
}

impl Graph for GpuGraph {
    fn launch(&self) -> CudaResult<()> {
        self.graph
            .launch()
            .map_err(CudaError::driver("launching a CUDA graph"))
    }

    fn upload(&self) -> CudaResult<()> {
        self.graph
            .upload()
            .map_err(CudaError::driver("uploading a CUDA graph"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attributes `cuLaunchKernelEx` gets: the cluster's only when it has more than one
    /// block, programmatic stream serialization (value 1) only when allowed, packed first.
    #[test]
    fn launch_attributes_set_only_what_was_asked_in_order() {
        use sys::CUlaunchAttributeID::*;
        let (_, count) = launch_attributes(LaunchAttributes::new());
        assert_eq!(count, 0);
        let (set, count) = launch_attributes(LaunchAttributes::from([2, 1, 1]));
        assert_eq!(count, 1);
        assert_eq!(set[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        // SAFETY: the union's member for this attribute id.
        let dim = unsafe { set[0].value.clusterDim };
        assert_eq!((dim.x, dim.y, dim.z), (2, 1, 1));
        let pdl = LaunchAttributes::new().programmatic_stream_serialization(true);
        let (set, count) = launch_attributes(pdl);
        assert_eq!(count, 1);
        assert_eq!(
            set[0].id,
            CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        );
        // SAFETY: the union's member for this attribute id.
        let allowed = unsafe { set[0].value.programmaticStreamSerializationAllowed };
        assert_eq!(allowed, 1);
        let (set, count) = launch_attributes(pdl.cluster([2, 1, 1]));
        assert_eq!(count, 2);
        assert_eq!(
            [set[0].id, set[1].id],
            [
                CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            ]
        );
    }

    /// A kernel with line tables, as `cuda_builder`'s `line_tables(true)` writes them.
    const LINES_PTX: &str = ".version 7.0
.target sm_70
.address_size 64
\t.file\t1 \"/src/planted_lines.rs\"

.visible .entry store_one(
\t.param .u64 store_one_param_0
)
{
\t.reg .b32 \t%r<2>;
\t.reg .b64 \t%rd<3>;

\t.loc\t1 3 5
\tld.param.u64 \t%rd1, [store_one_param_0];
\tcvta.to.global.u64 \t%rd2, %rd1;
\tmov.u32 \t%r1, 1;
\t.loc\t1 4 9
\tst.global.u32 \t[%rd2], %r1;
\tret;
}
";

    /// The driver's JIT keeps the line tables of PTX that has them: the cubin holds the
    /// line sections and names the `.rs` file. (ptxas 12.9 keeps them with or without
    /// `-lineinfo`; the driver is asked explicitly, as its documentation requires.)
    #[test]
    #[ignore = "needs a CUDA GPU: the driver's JIT compiler"]
    fn jit_with_line_info_keeps_the_source_lines() {
        assert!(Code::has_line_tables(LINES_PTX));
        let ctx = CudaContext::new(0).expect("GPU 0");
        let cubin = jit_with_line_info(&ctx, LINES_PTX).expect("JIT");
        assert!(Code::is_binary(&cubin), "not an ELF cubin");
        let has = |needle: &[u8]| cubin.windows(needle.len()).any(|w| w == needle);
        assert!(
            has(b".nv_debug_line_sass"),
            "no SASS line table in the cubin"
        );
        assert!(
            has(b"planted_lines.rs"),
            "the cubin does not name the source file"
        );
        // And it loads and runs.
        let module = ctx
            .load_module(Ptx::from_binary(cubin))
            .expect("loading the cubin");
        module.load_function("store_one").expect("store_one");
    }
}
