//! The GPU context: one device, one stream, the kernels module; typed launch helpers; errors
//! that name the kernel, launch configuration and CUDA error.

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, DeviceRepr, DriverError, LaunchArgs,
    LaunchConfig, sys,
};
use std::{
    collections::HashMap,
    fmt,
    sync::Arc,
    time::{Duration, Instant},
};

/// Why a GPU operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// The CUDA driver library (`libcuda.so`) could not be loaded.
    #[error(
        "no CUDA driver found (libcuda.so could not be loaded): install an NVIDIA driver, or use the CPU backend"
    )]
    NoDriver,
    /// The driver is there but reports no CUDA device.
    #[error("the CUDA driver reports no GPU")]
    NoDevice,
    /// The requested device ordinal does not exist.
    #[error("GPU {ordinal} does not exist: {count} device(s) found (ordinals 0..{count})")]
    BadOrdinal {
        /// Requested ordinal.
        ordinal: usize,
        /// Number of devices.
        count: usize,
    },
    /// A driver call failed.
    #[error("CUDA error during {during}: {source}")]
    Driver {
        /// What was being done.
        during: String,
        /// The driver's error (name and code).
        #[source]
        source: DriverError,
    },
    /// A kernel launch (or the execution it started) failed.
    #[error(
        "kernel `{kernel}` failed (grid {grid:?}, block {block:?}, {shared_bytes} bytes dynamic shared memory): {source}"
    )]
    Launch {
        /// Kernel name.
        kernel: &'static str,
        /// Grid dimensions in blocks.
        grid: (u32, u32, u32),
        /// Block dimensions in threads.
        block: (u32, u32, u32),
        /// Dynamic shared memory per block, bytes.
        shared_bytes: u32,
        /// The driver's error (name and code).
        #[source]
        source: DriverError,
    },
    /// The module has no kernel of this name.
    #[error("the kernels module has no kernel `{0}` (is it a #[kernel] in the kernels crate?)")]
    UnknownKernel(String),
    /// The host arguments' sizes differ from the kernel's PTX parameter declaration.
    #[error(
        "kernel `{kernel}` parameter ABI mismatch: the host passes parameter sizes {host:?} bytes,          the PTX declares {ptx:?}"
    )]
    AbiMismatch {
        /// Kernel name.
        kernel: String,
        /// Sizes of the parameters the host pushes, bytes.
        host: Vec<usize>,
        /// Sizes the PTX entry declares, bytes.
        ptx: Vec<usize>,
    },
    /// An invalid launch configuration was requested.
    #[error("invalid launch configuration: {0}")]
    LaunchConfig(String),
    /// A buffer would not fit in device memory, or a size overflows.
    #[error("{what} needs {bytes} bytes of device memory, more than the {free} bytes free")]
    OutOfMemory {
        /// What the buffer is for.
        what: &'static str,
        /// Bytes requested.
        bytes: usize,
        /// Bytes free on the device.
        free: usize,
    },
}

impl GpuError {
    /// Wraps a driver error with what was being done.
    pub(crate) fn driver(during: impl Into<String>) -> impl FnOnce(DriverError) -> Self {
        let during = during.into();
        move |source| Self::Driver { during, source }
    }
}

/// Whether the CUDA driver library can be loaded (cheap; does not initialise CUDA).
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library by its known names.
    unsafe { sys::is_culib_present() }
}

/// One GPU with the kernels module loaded, and a stream to work on.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    functions: HashMap<&'static str, CudaFunction>,
    /// Parameter sizes in bytes of every PTX entry, from the module text.
    param_sizes: HashMap<String, Vec<usize>>,
    /// What the module was loaded from.
    module_source: ModuleSource,
    /// How long loading the module took (`cuModuleLoadData`, including any JIT).
    module_load: Duration,
}

/// What the kernels module was loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// A cubin assembled at build time for exactly this compute capability (no JIT).
    Cubin {
        /// Major compute capability.
        major: u32,
        /// Minor compute capability.
        minor: u32,
    },
    /// The PTX, compiled by the driver when loaded.
    PtxJit,
}

impl fmt::Display for ModuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cubin { major, minor } => write!(f, "cubin sm_{major}{minor}"),
            Self::PtxJit => f.write_str("PTX JIT"),
        }
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens GPU `ordinal` (0 = first) and loads the kernels module: the build-time cubin
    /// of [`crate::cubins`] whose compute capability equals the device's, if there is one
    /// and the driver accepts it, else [`crate::PTX`] (JIT-compiled by the driver).
    /// [`Gpu::module_source`] and [`Gpu::module_load_time`] say which and how long it took.
    ///
    /// # Errors
    /// [`GpuError::NoDriver`] without a CUDA driver, [`GpuError::NoDevice`] or
    /// [`GpuError::BadOrdinal`] without that GPU, [`GpuError::Driver`] if context creation or
    /// the PTX load (JIT compilation) fails.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        if !driver_available() {
            return Err(GpuError::NoDriver);
        }
        let count =
            CudaContext::device_count().map_err(GpuError::driver("cuInit / cuDeviceGetCount"))?;
        let count = usize::try_from(count).unwrap_or(0);
        if count == 0 {
            return Err(GpuError::NoDevice);
        }
        if ordinal >= count {
            return Err(GpuError::BadOrdinal { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal).map_err(GpuError::driver("creating the context"))?;
        let stream = ctx.default_stream();
        let (major, minor) = ctx
            .compute_capability()
            .map_err(GpuError::driver("reading the compute capability"))?;
        let cubin = crate::cubins::CUBINS.iter().find(|&&(ma, mi, _)| {
            i64::from(ma) == i64::from(major) && i64::from(mi) == i64::from(minor)
        });
        let t0 = Instant::now();
        let from_cubin = cubin.and_then(|&(major, minor, bytes)| {
            // A cubin the driver rejects (e.g. built by a newer ptxas than it supports) is
            // not fatal: the PTX below is the fallback.
            ctx.load_module(cudarc::nvrtc::Ptx::from_binary(bytes.to_vec()))
                .ok()
                .map(|m| (m, ModuleSource::Cubin { major, minor }))
        });
        let (module, module_source) = match from_cubin {
            Some(loaded) => loaded,
            None => (
                ctx.load_module(cudarc::nvrtc::Ptx::from_src(crate::PTX))
                    .map_err(GpuError::driver("loading the kernels PTX module"))?,
                ModuleSource::PtxJit,
            ),
        };
        let module_load = t0.elapsed();
        let mut functions = HashMap::new();
        for name in kernels::kernel_names() {
            let f = module
                .load_function(name)
                .map_err(GpuError::driver(format!("looking up kernel `{name}`")))?;
            functions.insert(name, f);
        }
        Ok(Self {
            ctx,
            stream,
            module,
            functions,
            param_sizes: ptx_param_sizes(crate::PTX),
            module_source,
            module_load,
        })
    }

    /// What the kernels module was loaded from: `cubin sm_90` or `PTX JIT` when displayed.
    pub fn module_source(&self) -> ModuleSource {
        self.module_source
    }

    /// How long [`Gpu::new`] took to load the kernels module (driver JIT included for PTX).
    pub fn module_load_time(&self) -> Duration {
        self.module_load
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream all work of this `Gpu` is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The loaded kernels module.
    pub fn module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> String {
        self.ctx.name().unwrap_or_else(|_| "unknown GPU".into())
    }

    /// A kernel of the module by name.
    ///
    /// # Panics
    /// If `name` is not in [`kernels::kernel_names`] (a programming error).
    pub fn function(&self, name: &'static str) -> &CudaFunction {
        &self.functions[name]
    }

    /// A kernel of the module by name.
    ///
    /// # Errors
    /// [`GpuError::UnknownKernel`] if the module has no such entry.
    pub fn try_function(&self, name: &str) -> Result<&CudaFunction, GpuError> {
        self.functions
            .get(name)
            .ok_or_else(|| GpuError::UnknownKernel(name.to_owned()))
    }

    /// Checks parameter sizes about to be pushed for `kernel` against its PTX declaration.
    ///
    /// # Errors
    /// [`GpuError::AbiMismatch`] when they differ (count or any size).
    pub fn check_abi(&self, kernel: &str, host: &[usize]) -> Result<(), GpuError> {
        match self.param_sizes.get(kernel) {
            Some(ptx) if ptx.as_slice() != host => Err(GpuError::AbiMismatch {
                kernel: kernel.to_owned(),
                host: host.to_vec(),
                ptx: ptx.clone(),
            }),
            Some(_) => Ok(()),
            None => Err(GpuError::UnknownKernel(kernel.to_owned())),
        }
    }

    /// Waits for all work queued on this GPU's stream.
    ///
    /// # Errors
    /// [`GpuError::Driver`] with the first asynchronous error (e.g. a kernel that trapped).
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream
            .synchronize()
            .map_err(GpuError::driver("synchronizing the stream"))
    }

    /// Checks that `bytes` more bytes fit in free device memory.
    pub fn check_free(&self, what: &'static str, bytes: usize) -> Result<(), GpuError> {
        let (free, _) = self
            .ctx
            .mem_get_info()
            .map_err(GpuError::driver("cuMemGetInfo"))?;
        if bytes > free {
            return Err(GpuError::OutOfMemory { what, bytes, free });
        }
        Ok(())
    }

    /// A launch builder for `kernel` on this GPU's stream; push the arguments with
    /// `.arg(..)` in parameter order, then call [`Gpu::launch`].
    pub fn launch_builder(&self, kernel: &'static str) -> LaunchArgs<'_> {
        self.stream.launch_builder(self.function(kernel))
    }

    /// Queues the launch `args` of `kernel` with `cfg`. Errors carry the kernel name and the
    /// launch configuration.
    ///
    /// # Safety
    /// The arguments pushed must match the kernel's parameters in number, order and layout,
    /// and satisfy the kernel's own `# Safety` contract (buffer sizes, no aliasing).
    pub unsafe fn launch(
        &self,
        kernel: &'static str,
        cfg: LaunchConfig,
        mut args: LaunchArgs<'_>,
    ) -> Result<(), GpuError> {
        // SAFETY: forwarded to the caller.
        unsafe { args.launch(cfg) }
            .map(|_| ())
            .map_err(|source| launch_error(kernel, cfg, source))
    }

    /// Records a timing event on the stream.
    pub fn record_event(&self) -> Result<cudarc::driver::CudaEvent, GpuError> {
        self.stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(GpuError::driver("recording an event"))
    }

    /// Waits for the stream; a failure is reported as a failure of `kernel` (asynchronous
    /// kernel faults surface here).
    pub fn sync_after(&self, kernel: &'static str, cfg: LaunchConfig) -> Result<(), GpuError> {
        self.stream
            .synchronize()
            .map_err(|source| launch_error(kernel, cfg, source))
    }
}

fn launch_error(kernel: &'static str, cfg: LaunchConfig, source: DriverError) -> GpuError {
    GpuError::Launch {
        kernel,
        grid: cfg.grid_dim,
        block: cfg.block_dim,
        shared_bytes: cfg.shared_mem_bytes,
        source,
    }
}

/// A `&[T]` kernel parameter: rustc passes it as a 16-byte by-value aggregate
/// `(data pointer, length in elements)` (BRIEF: verified in the PTX). Push it with
/// `args.arg(&param)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SliceParam {
    ptr: sys::CUdeviceptr,
    len: u64,
}

impl SliceParam {
    /// The parameter for `len` elements at device address `ptr`.
    pub fn from_raw(ptr: sys::CUdeviceptr, len: usize) -> Self {
        Self {
            ptr,
            len: len as u64,
        }
    }

    /// The parameter for the whole of `slice`.
    pub fn new<T>(slice: &cudarc::driver::CudaSlice<T>, stream: &CudaStream) -> Self {
        use cudarc::driver::DevicePtr;
        let (ptr, _sync) = slice.device_ptr(stream);
        Self {
            ptr,
            len: slice.len() as u64,
        }
    }
}

// SAFETY: plain old data matching the kernel's (ptr, len) aggregate layout.
unsafe impl DeviceRepr for SliceParam {}

/// A [`DeviceCopy`](cuda_std::DeviceCopy) value passed to a kernel by value (its bytes are
/// copied into the launch's parameter buffer). Push it with `args.arg(&ByValue(v))`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct ByValue<T>(pub T);

// SAFETY: `DeviceCopy` guarantees a defined, pointer-free layout, identical on host and
// device (both 64-bit little-endian, same Rust definition).
unsafe impl<T: cuda_std::DeviceCopy> DeviceRepr for ByValue<T> {}

/// Parameter sizes in bytes of every `.entry` in PTX text, in declaration order.
///
/// Parameters are declared one per line as `.param .u32 NAME_param_1`, `.param .u64 .ptr
/// ... NAME_param_3` or `.param .align 4 .b8 NAME_param_0[24]` (an aggregate of 24 bytes).
pub fn ptx_param_sizes(ptx: &str) -> HashMap<String, Vec<usize>> {
    let mut entries = HashMap::new();
    let mut current: Option<(String, Vec<usize>)> = None;
    for line in ptx.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            if let Some((name, sizes)) = current.take() {
                entries.insert(name, sizes);
            }
            let name = rest.split('(').next().unwrap_or(rest).trim().to_owned();
            current = Some((name, Vec::new()));
        } else if let Some(decl) = line.strip_prefix(".param ") {
            if let Some((_, sizes)) = current.as_mut() {
                sizes.push(param_decl_size(decl));
            }
        } else if (line.starts_with('{') || line.starts_with(')'))
            && let Some((name, sizes)) = current.take()
        {
            entries.insert(name, sizes);
        }
    }
    if let Some((name, sizes)) = current {
        entries.insert(name, sizes);
    }
    entries
}

/// Size of one `.param` declaration (the text after `.param `).
fn param_decl_size(decl: &str) -> usize {
    if let Some(open) = decl.rfind('[') {
        let count: usize = decl[open + 1..]
            .trim_end_matches([']', ',', ' '])
            .parse()
            .unwrap_or(0);
        let elem = if decl.contains(".b8") {
            1
        } else {
            scalar_size(decl)
        };
        return count * elem;
    }
    scalar_size(decl)
}

fn scalar_size(decl: &str) -> usize {
    for (suffix, size) in [("64", 8), ("32", 4), ("16", 2), ("8", 1)] {
        for ty in ["u", "s", "b", "f"] {
            if decl.contains(&format!(".{ty}{suffix}")) {
                return size;
            }
        }
    }
    0
}

/// A 2D launch covering `width × height` threads with 16×16 blocks (256 threads, a good
/// default for per-pixel kernels).
pub fn launch_config_2d(width: u32, height: u32) -> LaunchConfig {
    const BLOCK: u32 = 16;
    LaunchConfig {
        grid_dim: (width.div_ceil(BLOCK), height.div_ceil(BLOCK), 1),
        block_dim: (BLOCK, BLOCK, 1),
        shared_mem_bytes: 0,
    }
}

/// Milliseconds between two events recorded with [`Gpu::record_event`] (the end event must
/// have completed, e.g. after a synchronisation).
pub fn elapsed_ms(
    start: &cudarc::driver::CudaEvent,
    end: &cudarc::driver::CudaEvent,
) -> Result<f32, GpuError> {
    start
        .elapsed_ms(end)
        .map_err(GpuError::driver("reading event time"))
}
