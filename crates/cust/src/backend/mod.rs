//! The one seam between cust's public types and the device they run on, in the manner of the
//! standard library's `sys`: [`driver`] runs everything on a CUDA GPU through cudarc's safe
//! layer, [`cpu`] on the CPU emulator (`cuda_emu`).
//!
//! Each public type holds the trait object of its kind and calls it, never asking which
//! backend it has: [`Context`](crate::context::Context) a [`Backend`],
//! [`Stream`](crate::stream::Stream) a [`Stream`], [`Event`](crate::event::Event) an
//! [`Event`], the device buffers and views a [`Memory`], `LockedBuffer` a [`Pinned`],
//! `UnifiedBuffer` a [`Managed`], [`Module`](crate::module::Module) a [`Module`],
//! [`Function`](crate::function::Function) a [`Function`] and
//! [`Graph`](crate::graph::Graph) a [`Graph`]. What only a GPU can do (code from PTX or
//! cubins, occupancy queries, most device attributes) is a default method returning
//! [`CudaError::NotOnEmulator`]; the driver overrides it.
//!
//! Objects of both backends meet in some calls (a buffer used on a stream, an event recorded
//! on a stream, a function launched on a stream). The implementation called downcasts the
//! other object (`as_any`, a type-id comparison) to its own kind and reports
//! [`CudaError::BackendMismatch`] when it is the other backend's (or `NotOnEmulator`, for the
//! few calls that always reported that).
//!
//! One of the GPU backend's types belongs to the seam's vocabulary and is re-exported here:
//! [`Guard`], what a kernel parameter holds until its launch is queued (the emulator needs
//! none).
//!
//! Conventions: sizes, offsets and ranges are in bytes; host data crosses the seam as
//! [`Bytes`].

pub(crate) mod cpu;
pub(crate) mod driver;

pub use driver::Guard;

use crate::{
    device::{Device, DeviceAttribute},
    error::{CudaError, CudaResult},
    launch_config::LaunchAttributes,
};
use cust_core::{ComputeCapability, ModuleImage, ModuleTarget};
use std::{
    any::Any,
    ffi::c_void,
    fmt,
    mem::MaybeUninit,
    ops::Range,
    sync::{Arc, Mutex},
    task::Waker,
    time::Duration,
};

/// Host memory as a copy reads or writes it: any `T: DeviceCopy` seen as its bytes (padding
/// included, hence `MaybeUninit`).
pub(crate) type Bytes = [MaybeUninit<u8>];

/// The names [`CudaError::BackendMismatch`] gives the backends.
pub(crate) const GPU: &str = "the GPU";
/// As [`GPU`].
pub(crate) const CPU: &str = "the CPU emulator";

/// [`CudaError::NotOnEmulator`] naming `operation`: what the trait's GPU-only defaults return.
pub(crate) fn not_on_emulator(operation: &'static str) -> CudaError {
    CudaError::NotOnEmulator { operation }
}

/// A device: a GPU's primary context, or the CPU emulator. Creates the other objects.
pub(crate) trait Backend: Send + Sync + fmt::Debug {
    /// For the driver's downcasts (`as_cudarc`).
    fn as_any(&self) -> &dyn Any;
    /// `true` for the CPU emulator.
    fn is_emulator(&self) -> bool;
    /// The device's name (`unknown GPU` if the driver cannot say).
    fn name(&self) -> String;
    /// The device's ordinal (0 for the emulator).
    fn ordinal(&self) -> usize;
    /// Waits for all work on the device.
    fn synchronize(&self) -> CudaResult<()>;
    /// Makes the context current on this thread for driver calls.
    fn bind_to_thread(&self) -> CudaResult<()>;
    /// Checks that `bytes` more bytes of `what` fit in free device memory.
    fn check_free(&self, what: &'static str, bytes: usize) -> CudaResult<()>;
    /// A device attribute (`cuDeviceGetAttribute`).
    fn attribute(&self, attribute: DeviceAttribute) -> CudaResult<i32>;
    /// The device as the driver enumerates it.
    fn device(&self) -> CudaResult<Device> {
        Err(not_on_emulator("a device handle"))
    }
    /// `(free, total)` device memory, bytes.
    fn mem_info(&self) -> CudaResult<(usize, usize)> {
        Err(not_on_emulator("reading free device memory"))
    }
    /// The device's compute capability (9.0 for the emulator).
    fn compute_capability(&self) -> CudaResult<ComputeCapability> {
        Err(not_on_emulator("reading the compute capability"))
    }

    /// The context's legacy default stream.
    fn default_stream(&self) -> Arc<dyn Stream>;
    /// A new stream (`None`: the default priority), or the emulator's one stream; `during`
    /// names the creation in a driver error.
    fn new_stream(
        &self,
        priority: Option<i32>,
        during: &'static str,
    ) -> CudaResult<Arc<dyn Stream>>;
    /// The range of stream priorities `(least, greatest)`.
    fn stream_priority_range(&self) -> CudaResult<(i32, i32)>;
    /// A new event.
    fn new_event(&self, kind: EventKind) -> CudaResult<Box<dyn Event>>;

    /// `bytes` of device memory holding `init`, allocated on the default stream, which is
    /// then waited for (a buffer that is ready on every stream). `during` names the
    /// allocation in a driver error.
    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>>;
    /// As [`Backend::alloc`], but on a GPU by `cuMemAlloc`, outside the stream-ordered memory
    /// pool, and freed by `cuMemFree` (which synchronises the device). The emulator has no
    /// pool: [`Backend::alloc`].
    fn alloc_unpooled(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>> {
        self.alloc(bytes, init, during)
    }
    /// `bytes` of page-locked host memory, contents unset (plain zeroed host memory on the
    /// emulator); the caller writes every byte before reading any.
    fn alloc_pinned(&self, bytes: usize) -> CudaResult<Box<dyn Pinned>>;
    /// `bytes` of managed memory, contents unset (zeros on the emulator); the caller writes
    /// every byte before reading any.
    fn alloc_managed(&self, bytes: usize) -> CudaResult<Box<dyn Managed>>;

    /// Loads PTX or a cubin; `origin` names it in errors.
    fn load_module(&self, code: Code<'_>, origin: &str) -> CudaResult<Arc<dyn Module>> {
        let _ = origin;
        Err(not_on_emulator(match code {
            Code::Ptx(_) => "loading PTX (the emulator runs `#[kernel]` handles of a module image)",
            Code::Binary(_) => {
                "loading a cubin (the emulator runs `#[kernel]` handles of a module image)"
            }
        }))
    }
    /// Loads what of a `cuda_builder` image runs here: on a GPU the baseline and each
    /// arch-specific variant the device runs, each from the cubin for its architecture where
    /// the image has one the driver accepts, else from its PTX; on the emulator nothing (the
    /// kernels' host bodies come with their typed handles).
    fn load_image(&self, image: &'static ModuleImage, origin: &str) -> CudaResult<LoadedImage>;
}

/// An ordered queue of work.
pub(crate) trait Stream: Send + Sync {
    /// For downcasts by the other objects' implementations.
    fn as_any(&self) -> &dyn Any;
    /// `true` for the emulator's stream.
    fn is_emulator(&self) -> bool;
    /// The stream's priority as the driver set it.
    fn priority(&self) -> CudaResult<i32>;
    /// Blocks until all work queued so far has finished.
    fn synchronize(&self) -> CudaResult<()>;
    /// Makes work queued later wait for `event`.
    fn wait(&self, event: &dyn Event) -> CudaResult<()>;
    /// Makes work queued later wait for all work queued on `other` so far.
    fn join(&self, other: &dyn Stream) -> CudaResult<()>;
    /// `bytes` of device memory holding `init`, allocated and filled in order on this stream,
    /// without waiting.
    fn alloc(
        &self,
        bytes: usize,
        init: Init<'_>,
        during: fmt::Arguments<'_>,
    ) -> CudaResult<Box<dyn Memory>>;
    /// Completes `done` once the work queued so far has finished, without blocking.
    fn notify(&self, done: Arc<Mutex<Completion>>) -> CudaResult<()>;
    /// Captures the work `record` queues on this stream into a graph; `operation` names the
    /// capture where it cannot be done.
    fn capture(
        &self,
        operation: &'static str,
        record: &mut dyn FnMut() -> CudaResult<()>,
    ) -> CudaResult<Box<dyn Graph>> {
        let _ = record;
        Err(not_on_emulator(operation))
    }
}

/// A marker in a stream.
pub(crate) trait Event: Send + Sync {
    /// For downcasts by the other objects' implementations.
    fn as_any(&self) -> &dyn Any;
    /// Records the event at the current end of `stream`'s queue.
    fn record(&self, stream: &dyn Stream) -> CudaResult<()>;
    /// Blocks until the event has completed.
    fn synchronize(&self) -> CudaResult<()>;
    /// Whether the event has completed.
    fn is_complete(&self) -> CudaResult<bool>;
    /// Milliseconds from `start` to this event.
    fn elapsed_ms(&self, start: &dyn Event) -> CudaResult<f32>;
}

/// Where a copy between host and device memory runs.
#[derive(Clone, Copy)]
pub(crate) enum Queue<'a> {
    /// On the memory's own stream, which is then waited for (a synchronous copy).
    Sync,
    /// On the memory's own stream, without waiting (a copy into pageable host memory
    /// returns once done).
    Own,
    /// Queued on this stream.
    On(&'a dyn Stream),
}

/// What a new allocation holds.
#[derive(Clone, Copy)]
pub(crate) enum Init<'a> {
    /// Whatever was there (zeros on the emulator).
    Uninit,
    /// Zeros.
    Zeroed,
    /// A copy of these bytes.
    Copy(&'a Bytes),
}

/// Device memory: a cudarc allocation on the GPU, a registered host allocation on the
/// emulator. Ranges are checked by the caller.
pub(crate) trait Memory: Send + Sync {
    /// For downcasts by the other objects' implementations.
    fn as_any(&self) -> &dyn Any;
    /// As [`Memory::as_any`], writable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// `true` for host memory of the emulator.
    fn is_emulator(&self) -> bool;
    /// The device address of `range`'s first byte, read on the memory's own stream (the
    /// driver orders it after earlier writes and records the read, as cudarc's
    /// `device_ptr`).
    fn address(&self, range: Range<usize>) -> u64;
    /// `range` as a kernel parameter read on `stream`: its address, and the guard that
    /// records the use once the work is queued (GPU only).
    fn use_on<'a>(
        &'a self,
        range: Range<usize>,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)>;
    /// As [`Memory::use_on`], for a parameter the kernel writes.
    fn use_mut_on<'a>(
        &'a mut self,
        range: Range<usize>,
        stream: &'a dyn Stream,
    ) -> CudaResult<(u64, Option<Guard<'a>>)>;
    /// Copies `src` (of `range`'s length) into `range`; `what` names the copy in errors.
    fn write(
        &mut self,
        range: Range<usize>,
        src: &Bytes,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()>;
    /// Copies `range` into `dst` (of `range`'s length).
    fn read(
        &self,
        range: Range<usize>,
        dst: &mut Bytes,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()>;
    /// Copies all of `src` (of the same size) into this memory.
    fn copy_from(
        &mut self,
        src: &dyn Memory,
        queue: Queue<'_>,
        what: &'static str,
    ) -> CudaResult<()>;
    /// Queues setting every byte to zero on `stream`.
    fn set_zero(&mut self, stream: &dyn Stream) -> CudaResult<()>;
    /// Queues a copy of all of `src` (of the same size) into this memory on `stream`.
    fn write_pinned(&mut self, src: &dyn Pinned, stream: &dyn Stream) -> CudaResult<()>;
    /// Queues a copy of this memory into all of `dst` (of the same size) on `stream`.
    fn read_pinned(&self, dst: &mut dyn Pinned, stream: &dyn Stream) -> CudaResult<()>;
}

/// Page-locked host memory (plain host memory on the emulator), read and written in place.
pub(crate) trait Pinned: Send + Sync {
    /// For downcasts by the other objects' implementations.
    fn as_any(&self) -> &dyn Any;
    /// As [`Pinned::as_any`], writable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// `true` for the emulator's.
    fn is_emulator(&self) -> bool;
    /// The contents, once every copy queued from or into them has finished.
    fn bytes(&self) -> CudaResult<&Bytes>;
    /// As [`Pinned::bytes`], writable.
    fn bytes_mut(&mut self) -> CudaResult<&mut Bytes>;
    /// Queues a copy of `bytes` bytes of device memory from address `src` into the first
    /// `bytes` bytes of this memory on `stream`.
    ///
    /// # Safety
    /// `src` is the address of `bytes` readable bytes of device memory of `stream`'s
    /// backend, ordered on `stream` and kept alive until the copy is queued; this memory
    /// holds at least `bytes` bytes.
    unsafe fn copy_from_device(
        &mut self,
        src: u64,
        bytes: usize,
        stream: &dyn Stream,
    ) -> CudaResult<()>;
    /// Records that a copy from or into this memory was just queued on `stream`, so that the
    /// host accessors wait for it.
    fn copy_queued(&self, stream: &dyn Stream) -> CudaResult<()>;
}

/// Managed ("unified") memory: one address valid on the host and the device.
pub(crate) trait Managed: Send + Sync {
    /// For the driver's downcasts (cudarc's memory traits).
    fn as_any(&self) -> &dyn Any;
    /// As [`Managed::as_any`], writable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// `true` for the emulator's.
    fn is_emulator(&self) -> bool;
    /// The contents, read in place once the device work that used them has finished.
    fn bytes(&self) -> CudaResult<&Bytes>;
    /// As [`Managed::bytes`], writable.
    fn bytes_mut(&mut self) -> CudaResult<&mut Bytes>;
    /// Starts migrating the pages to the device.
    fn prefetch_to_device(&self) -> CudaResult<()>;
    /// Starts migrating the pages to host memory, on `stream`.
    fn prefetch_to_host(&self, stream: &dyn Stream) -> CudaResult<()>;
    /// Gives the driver a usage hint.
    fn advise(&self, advice: MemoryAdvice) -> CudaResult<()>;
    /// All of it as a kernel parameter read on `stream` (see [`Memory::use_on`]).
    fn use_on<'a>(&'a self, stream: &'a dyn Stream) -> CudaResult<(u64, Option<Guard<'a>>)>;
    /// As [`Managed::use_on`], for a parameter the kernel writes.
    fn use_mut_on<'a>(&'a mut self, stream: &'a dyn Stream)
    -> CudaResult<(u64, Option<Guard<'a>>)>;
}

/// Code the GPU's module loader takes.
#[derive(Clone, Copy)]
pub(crate) enum Code<'a> {
    /// PTX text, compiled by the driver when loaded.
    Ptx(&'a str),
    /// An ELF cubin or a fatbin.
    Binary(&'a [u8]),
}

impl Code<'_> {
    /// An ELF cubin or a fatbin (magic `0xBA55ED50`, little-endian).
    pub(crate) fn is_binary(bytes: &[u8]) -> bool {
        bytes.starts_with(b"\x7fELF") || bytes.starts_with(&0xBA55_ED50u32.to_le_bytes())
    }

    /// Why `text` is not PTX the driver could load, if it is not.
    pub(crate) fn check_ptx(text: &str) -> Result<(), String> {
        if text.contains('\0') {
            return Err("PTX text must not contain NUL bytes".into());
        }
        let directive = |d: &str| text.lines().any(|l| l.trim_start().starts_with(d));
        if !directive(".version") || !directive(".target") {
            return Err("expected PTX text with `.version` and `.target` directives".into());
        }
        Ok(())
    }

    /// Whether PTX `text` carries line tables: a `.loc` directive (what `cuda_builder`'s
    /// `line_tables(true)` adds). The driver keeps them in the code it compiles only when
    /// asked (`CU_JIT_GENERATE_LINE_INFO`, ptxas' `-lineinfo`), so the GPU backend asks
    /// whenever they are there.
    pub(crate) fn has_line_tables(text: &str) -> bool {
        text.lines().any(|l| {
            l.trim_start()
                .strip_prefix(".loc")
                .is_some_and(|rest| rest.starts_with([' ', '\t']))
        })
    }
}

/// What a module was loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// A cubin for exactly the device's compute capability (no JIT compilation).
    Cubin(ComputeCapability),
    /// PTX, compiled by the driver when loaded.
    PtxJit,
    /// No code loaded: the CPU emulator runs the kernels' host bodies
    /// ([`Context::emulator`](crate::context::Context::emulator)).
    Emulator,
}

impl fmt::Display for ModuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cubin(cc) => write!(f, "cubin {cc}"),
            Self::PtxJit => f.write_str("PTX JIT"),
            Self::Emulator => f.write_str("CPU emulator"),
        }
    }
}

/// What [`Backend::load_image`] loaded.
pub(crate) struct LoadedImage {
    /// The baseline.
    pub(crate) module: Arc<dyn Module>,
    /// What the baseline was loaded from.
    pub(crate) source: ModuleSource,
    /// How long loading the baseline took.
    pub(crate) load_time: Duration,
    /// On a GPU, its compute capability and the variants loaded beside the baseline.
    pub(crate) arch: Option<ArchState>,
}

/// The device and the loaded variants of a module from a [`ModuleImage`].
pub(crate) struct ArchState {
    /// The device's compute capability.
    pub(crate) device: ComputeCapability,
    /// The arch-specific variants the device runs.
    pub(crate) variants: Vec<LoadedVariant>,
}

/// One arch-specific variant of a [`ModuleImage`], loaded.
pub(crate) struct LoadedVariant {
    /// Its index in [`ModuleImage::variants`].
    pub(crate) index: usize,
    /// Its target.
    pub(crate) arch: ComputeCapability,
    /// Its code.
    pub(crate) module: Arc<dyn Module>,
    /// What it was loaded from.
    pub(crate) source: ModuleSource,
}

impl ArchState {
    /// The loaded module of `target` (`None` for the baseline, or a variant that was not
    /// loaded, which [`ModuleImage::target_for`] never picks on this device).
    pub(crate) fn module(&self, target: ModuleTarget) -> Option<&Arc<dyn Module>> {
        match target {
            ModuleTarget::Baseline => None,
            ModuleTarget::Variant(index) => self
                .variants
                .iter()
                .find(|v| v.index == index)
                .map(|v| &v.module),
        }
    }
}

/// Loaded code: its kernels by name.
pub(crate) trait Module: Send + Sync {
    /// For the driver's downcasts (`as_cudarc`).
    fn as_any(&self) -> &dyn Any;
    /// `true` for the emulator's (no code loaded).
    fn is_emulator(&self) -> bool;
    /// The kernel `name`; `None` if the module has none of that name.
    fn function(&self, name: &str) -> CudaResult<Option<Box<dyn Function>>>;
}

/// A kernel attribute (`CUfunction_attribute`) that cust reads or sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FunctionAttribute {
    /// The kernel's static shared memory, bytes.
    StaticSharedBytes,
    /// The dynamic shared memory launches may use, bytes.
    MaxDynamicSharedBytes,
    /// Whether clusters of more than 8 blocks are allowed.
    NonPortableClusterSizeAllowed,
}

/// A launch as the backends take it.
pub(crate) struct Launch<'a> {
    /// The kernel's name, for errors.
    pub(crate) kernel: &'a str,
    /// Grid dimensions, in blocks.
    pub(crate) grid: (u32, u32, u32),
    /// Block dimensions, in threads.
    pub(crate) block: (u32, u32, u32),
    /// Dynamic shared memory per block, bytes.
    pub(crate) shared_bytes: u32,
    /// `None` for a plain launch (`cuLaunchKernel`); `Some` for `cuLaunchKernelEx` with
    /// these attributes (the cluster attribute unless the cluster is `[1, 1, 1]`; the
    /// programmatic stream serialization attribute where allowed).
    pub(crate) attributes: Option<LaunchAttributes>,
    /// One pointer per parameter, each to the parameter's bytes as laid out for the device.
    pub(crate) args: &'a mut [*mut c_void],
    /// The kernel's host body, which the emulator runs (`None` for untyped `launch!`).
    pub(crate) host: Option<&'a dyn HostKernel>,
}

impl Launch<'_> {
    /// Why a function of one backend does not run this launch on a stream of the other:
    /// `function_on_cpu` says whose the function is.
    pub(crate) fn across_backends(&self, function_on_cpu: bool) -> CudaError {
        if self.host.is_none() {
            return not_on_emulator(UNTYPED_LAUNCH);
        }
        let (buffer, stream) = if function_on_cpu {
            (CPU, GPU)
        } else {
            (GPU, CPU)
        };
        CudaError::BackendMismatch {
            what: "launching a kernel",
            buffer,
            stream,
        }
    }
}

/// A kernel's body compiled for the host, with its parameter kinds erased: what the CPU
/// backend runs for a typed launch (the `#[kernel]` handle; implemented in [`cpu`]).
pub(crate) trait HostKernel {
    /// Runs the kernel over `launch`'s grid on the emulator `device` (the CPU backend's
    /// device: its live allocations for the bounds check, its seed and checks), and prints
    /// its `println!` output to stdout.
    ///
    /// # Safety
    /// As `cuda_emu::launch`: `launch.args` holds one pointer per parameter, laid out for
    /// the device, pointing to host memory valid for the kernel's accesses.
    unsafe fn run(&self, launch: &Launch<'_>, device: &dyn Any) -> CudaResult<()>;

    /// `launch` as a capturing emulator stream records it: the parameters' bytes copied, to
    /// be run again by each replay of the graph.
    ///
    /// # Safety
    /// `launch.args` holds one pointer per parameter, each readable for the parameter's
    /// bytes as laid out for the device.
    unsafe fn record(&self, launch: &Launch<'_>) -> cpu::RecordedLaunch;
}

/// What both backends say when the legacy default stream is asked to capture a graph.
pub(crate) const DEFAULT_STREAM_CAPTURE: &str =
    "starting a graph capture (the default stream cannot be captured: use Stream::new)";

/// What the emulator says of an untyped launch.
pub(crate) const UNTYPED_LAUNCH: &str = "untyped `launch!` (the emulator needs the \
                                         `#[kernel]` handle: use a typed launch, \
                                         `module.kernel(handle)?.launch(..)`)";

/// A kernel of a loaded module.
pub(crate) trait Function: Send + Sync {
    /// For the driver's downcasts (`as_cudarc`).
    fn as_any(&self) -> &dyn Any;
    /// `true` for a kernel of the emulator.
    fn is_emulator(&self) -> bool;
    /// Whether launches above 48 KB of dynamic shared memory need the kernel's opt-in
    /// ([`FunctionAttribute::MaxDynamicSharedBytes`]): the GPU's rule, which the emulator
    /// follows.
    fn shared_memory_opt_in(&self) -> bool;
    /// The size in bytes of each parameter, as the code declares them; `kernel` names it in
    /// errors.
    fn param_sizes(&self, kernel: &str) -> CudaResult<Vec<usize>>;
    /// A kernel attribute (`cuFuncGetAttribute`).
    fn attribute(&self, kernel: &str, attribute: FunctionAttribute) -> CudaResult<i32> {
        let _ = (kernel, attribute);
        Err(not_on_emulator("reading a kernel attribute"))
    }
    /// Sets a kernel attribute (`cuFuncSetAttribute`).
    fn set_attribute(
        &self,
        kernel: &str,
        attribute: FunctionAttribute,
        value: i32,
    ) -> CudaResult<()> {
        let _ = (kernel, attribute, value);
        Err(not_on_emulator("setting a kernel attribute"))
    }
    /// `(minimum grid size for full occupancy, block size)` for `dynamic_shared_bytes` per
    /// block and blocks of at most `block_size_limit` threads (0: no limit).
    fn suggested_launch_configuration(
        &self,
        kernel: &str,
        dynamic_shared_bytes: usize,
        block_size_limit: u32,
    ) -> CudaResult<(u32, u32)>;
    /// Resident blocks of `threads` threads per multiprocessor.
    fn max_active_blocks_per_multiprocessor(
        &self,
        kernel: &str,
        threads: u32,
        dynamic_shared_bytes: usize,
    ) -> CudaResult<u32> {
        let _ = (kernel, threads, dynamic_shared_bytes);
        Err(not_on_emulator("occupancy queries"))
    }
    /// Clusters of `cluster` blocks of `block` threads that fit on the device at once.
    fn max_active_clusters(
        &self,
        kernel: &str,
        block: (u32, u32, u32),
        dynamic_shared_bytes: u32,
        cluster: [u32; 3],
    ) -> CudaResult<u32> {
        let _ = (kernel, block, dynamic_shared_bytes, cluster);
        Err(not_on_emulator("cluster occupancy queries"))
    }
    /// Queues the kernel on `stream` (the emulator runs it before returning).
    ///
    /// # Safety
    /// `launch.args` holds one pointer per parameter, each to a value of the size the code
    /// declares, pointing to memory of `stream`'s backend valid for the kernel's accesses;
    /// the kernel's own `# Safety` contract holds.
    unsafe fn launch(&self, stream: &dyn Stream, launch: Launch<'_>) -> CudaResult<()>;
}

/// A captured, instantiated graph.
pub(crate) trait Graph {
    /// Queues one replay on the capturing stream.
    fn launch(&self) -> CudaResult<()>;
    /// Uploads the graph's resources to the device.
    fn upload(&self) -> CudaResult<()>;
}

/// How an event is created (`CUevent_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Timing enabled; waiting spins.
    Default,
    /// Waiting blocks the thread.
    BlockingSync,
    /// No timing.
    DisableTiming,
}

/// A usage hint for managed memory (`UnifiedBuffer::advise`; `cuMemAdvise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryAdvice {
    /// Mostly read: the driver may keep read-only copies on the host and the device.
    ReadMostly,
    /// Keep the pages in this buffer's device memory; others map them rather than migrate.
    PreferDevice,
    /// Keep the pages in host memory.
    PreferHost,
    /// This buffer's device accesses the pages often: keep them mapped for it.
    AccessedByDevice,
}

/// The state a `StreamFuture` shares with the backend that completes it.
#[derive(Default)]
pub(crate) struct Completion {
    /// The outcome of the work waited for, once known.
    pub(crate) status: Option<CudaResult<()>>,
    /// The task to wake then.
    pub(crate) waker: Option<Waker>,
}

impl Completion {
    /// Records `status` and wakes the waiting task, if any.
    pub(crate) fn complete(done: &Mutex<Self>, status: CudaResult<()>) {
        let waker = {
            let mut s = done.lock().unwrap_or_else(|p| p.into_inner());
            s.status = Some(status);
            s.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}
