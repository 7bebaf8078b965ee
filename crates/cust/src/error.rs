//! [`CudaError`], the one error type of the runtime, and [`CudaResult`].

use cudarc::driver::{DriverError, sys::CUresult};
use std::path::PathBuf;

/// `Result` with a [`CudaError`].
pub type CudaResult<T> = Result<T, CudaError>;

/// Why a runtime call failed. Every variant says what was being done; driver failures carry
/// the CUDA error's name, code and description (e.g. `CUDA_ERROR_INVALID_VALUE (1): invalid
/// argument`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    /// The CUDA driver library (`libcuda.so`) could not be loaded.
    #[error(
        "no CUDA driver found (libcuda.so could not be loaded): install an NVIDIA driver (CUDA \
         12 or later), or run on the CPU emulator: open the device with \
         `cust::context::Context::from_env(0)` (the emulator where there is no GPU, with \
         FERROCUDA_DEVICE unset or `cpu`) or `Context::emulator()`"
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
    /// No context is current on this thread and none was created in this process.
    #[error(
        "no CUDA context: call `cust::quick_init()` or `Context::new(device)` first (or \
         `CurrentContext::set_current(&ctx)` on this thread)"
    )]
    NoContext,
    /// A driver call failed.
    #[error("CUDA error while {during}: {}", describe(.source))]
    Driver {
        /// What was being done.
        during: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// A kernel launch, or the execution it started, failed.
    #[error(
        "kernel `{kernel}` failed (grid {grid:?}, block {block:?}, {shared_bytes} bytes dynamic shared memory): {}",
        describe(.source)
    )]
    Launch {
        /// Kernel name.
        kernel: String,
        /// Grid dimensions in blocks.
        grid: (u32, u32, u32),
        /// Block dimensions in threads.
        block: (u32, u32, u32),
        /// Dynamic shared memory per block, bytes.
        shared_bytes: u32,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The bytes given to [`Module::from_ptx`](crate::module::Module::from_ptx) /
    /// [`from_cubin`](crate::module::Module::from_cubin) / [`from_file`](crate::module::Module::from_file)
    /// are not a module of the expected kind.
    #[error("{origin} is not a valid module: {reason}")]
    InvalidModule {
        /// Where the bytes came from (a file path, or "PTX text" / "cubin").
        origin: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// The driver rejected a module (e.g. a cubin for another architecture, or PTX newer than
    /// the driver).
    #[error("loading {origin} on {device} failed: {}{hint}", describe(.source))]
    ModuleLoad {
        /// Where the module came from.
        origin: String,
        /// The device, with its compute capability.
        device: String,
        /// What to check.
        hint: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// A module file could not be read.
    #[error("cannot read module file {path}: {source}")]
    ModuleFile {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The module has no kernel of this name.
    #[error("{origin} has no kernel `{kernel}`{available}")]
    UnknownKernel {
        /// Kernel name asked for.
        kernel: String,
        /// The module.
        origin: String,
        /// The kernels it has, where known (`"; it has: a, b"`), else a hint.
        available: String,
    },
    /// The module's kernel exists only in arch-specific variants the device cannot run (e.g.
    /// a `wgmma` kernel only in the `sm_90a` PTX, on an sm_80 GPU).
    #[error("kernel `{kernel}` needs {needs}; this device is {device} ({origin})")]
    KernelArchitecture {
        /// Kernel name.
        kernel: String,
        /// The module.
        origin: String,
        /// The targets whose PTX defines it, e.g. `sm_90a` (`sm_90a or sm_100a` for several).
        needs: String,
        /// The device's compute capability.
        device: cust_core::ComputeCapability,
    },
    /// More dynamic shared memory than the device allows a block
    /// ([`Function::set_max_dynamic_shared_bytes`](crate::function::Function::set_max_dynamic_shared_bytes)).
    #[error(
        "kernel `{kernel}` asks for {requested_bytes} bytes of dynamic shared memory per block \
         (plus {static_bytes} bytes static); this device allows {limit_bytes} bytes per block \
         in all (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)"
    )]
    SharedMemory {
        /// Kernel name.
        kernel: String,
        /// Dynamic shared memory asked for, bytes.
        requested_bytes: u32,
        /// The kernel's static shared memory, bytes.
        static_bytes: u32,
        /// The device's opt-in limit per block, bytes.
        limit_bytes: u32,
    },
    /// A tensor map that breaks one of the hardware's rules
    /// ([`cust::tma`](crate::tma)), found before any driver call: the message names the
    /// rule and the value.
    #[error("invalid tensor map: {0}")]
    TensorMap(String),
    /// The host arguments' sizes differ from the kernel's parameters.
    #[error(
        "kernel `{kernel}` of {origin}: parameter layout mismatch: the host passes parameters \
         of {host:?} bytes, the module declares {module:?}{hint}"
    )]
    ParamMismatch {
        /// Kernel name.
        kernel: String,
        /// The module (e.g. "kernels module `kernels`", a file path, "PTX text").
        origin: String,
        /// Sizes of the parameters the host passes, bytes.
        host: Vec<usize>,
        /// Sizes the kernel declares, bytes.
        module: Vec<usize>,
        /// How to fix it, where a likely cause is recognised.
        hint: &'static str,
    },
    /// The kernel's parameter layout cannot be checked: the module carries no manifest and
    /// the driver is older than CUDA 12.4 (`cuFuncGetParamInfo`).
    #[error(
        "cannot check the parameters of kernel `{0}`: load the module from cuda_builder's \
         module image (`Module::from_image`) or use a CUDA 12.4+ driver"
    )]
    ParamInfoUnavailable(String),
    /// The operation needs a CUDA GPU: the CPU emulator ([`Context::emulator`]) does not
    /// provide it.
    ///
    /// [`Context::emulator`]: crate::context::Context::emulator
    #[error(
        "{operation} is not supported on the CPU emulator: it needs a CUDA GPU (set \
         FERROCUDA_DEVICE=gpu, or run on a machine with one)"
    )]
    NotOnEmulator {
        /// What was asked for, e.g. `"graph capture"`.
        operation: &'static str,
    },
    /// A kernel failed on the CPU emulator: a panic, a `device_assert!`, or one of the
    /// emulator's checks (races, barrier divergence, uninitialised shared reads, out-of-bounds
    /// accesses), naming the kernel, block, thread and source location. (Boxed: the report
    /// is large, and every `CudaResult` would carry its size.)
    #[error("{0}")]
    Emulator(Box<cuda_emu::EmuError>),
    /// Memory of one backend used with the other: a GPU buffer in an emulated launch or a
    /// CPU-emulator buffer in a GPU launch or copy.
    #[error("{what}: the buffer lives on {buffer}, the stream or context on {stream}")]
    BackendMismatch {
        /// The operation.
        what: &'static str,
        /// The buffer's backend (`"the GPU"` or `"the CPU emulator"`).
        buffer: &'static str,
        /// The other side's backend.
        stream: &'static str,
    },
    /// `FERROCUDA_DEVICE` ([`DeviceChoice::from_env`]) is set to something other than
    /// `gpu`, `cpu` or `auto`.
    ///
    /// [`DeviceChoice::from_env`]: crate::context::DeviceChoice::from_env
    #[error(
        "FERROCUDA_DEVICE={value:?} is not a device: use `gpu`, `cpu` or `auto` (unset is \
         `auto`: the GPU if there is one, else the CPU emulator)"
    )]
    BadDeviceChoice {
        /// The variable's value, as set.
        value: String,
    },
    /// An emulator option from the environment (`FERROCUDA_EMU_SEED`,
    /// `FERROCUDA_EMU_CHECKS`) that is not one of its values.
    #[error("{variable}={value:?} is not allowed: use {allowed}")]
    BadEmulatorOption {
        /// The variable.
        variable: &'static str,
        /// Its value, as set.
        value: String,
        /// What the variable takes.
        allowed: &'static str,
    },
    /// An invalid launch configuration.
    #[error("invalid launch configuration: {0}")]
    LaunchConfig(String),
    /// Two buffers of a copy have different lengths.
    #[error("{what}: the source has {src} elements, the destination {dst}; they must be equal")]
    LengthMismatch {
        /// Which copy.
        what: &'static str,
        /// Source length, elements.
        src: usize,
        /// Destination length, elements.
        dst: usize,
    },
    /// A range of a buffer that is not within it.
    #[error("range {range} is out of bounds for a buffer of {len} elements")]
    OutOfRange {
        /// The range asked for, as written (`Included(2)..Excluded(9)`).
        range: String,
        /// The buffer's length, elements.
        len: usize,
    },
    /// A buffer would not fit in free device memory.
    #[error("{what} needs {bytes} bytes of device memory, more than the {free} bytes free")]
    OutOfMemory {
        /// What the buffer is for.
        what: &'static str,
        /// Bytes requested.
        bytes: usize,
        /// Bytes free on the device.
        free: usize,
    },
    /// A size computation overflowed.
    #[error("{what}: {len} elements of {elem_bytes} bytes overflow the address space")]
    SizeOverflow {
        /// What was being allocated.
        what: &'static str,
        /// Element count.
        len: usize,
        /// Element size, bytes.
        elem_bytes: usize,
    },
    /// The driver ended a graph capture without a graph
    /// ([`Stream::capture`](crate::stream::Stream::capture)).
    #[error("the graph capture ended without a graph")]
    NoGraph,
    /// A [`ComputeGraph`](crate::graph::ComputeGraph) whose declared nodes and inputs do not
    /// form a graph that can run: a name declared twice, an input that names no node, or a
    /// cycle of inputs.
    #[error("compute graph: {0}")]
    GraphSpec(String),
    /// The NCCL library could not be loaded ([`nccl`](crate::nccl)).
    #[error(
        "NCCL not found: cudarc loads `libnccl.so` from the library path; install NCCL (e.g. \
         `pip install nvidia-nccl-cu12`, which ships `libnccl.so.2`) and put a `libnccl.so` \
         link to it in a directory on LD_LIBRARY_PATH"
    )]
    NoNccl,
    /// An NCCL call failed.
    #[error("NCCL error while {during}: {name} ({code}): {text}")]
    Nccl {
        /// What was being done.
        during: String,
        /// The `ncclResult_t` name, e.g. `ncclInvalidUsage`.
        name: String,
        /// The `ncclResult_t` value.
        code: u32,
        /// NCCL's description of the error.
        text: String,
    },
    /// A feature of cust 0.3 that this runtime does not provide.
    #[error("not supported: {0}")]
    Unsupported(&'static str),
    /// cust 0.3's `CudaError::InvalidValue` (`CUDA_ERROR_INVALID_VALUE`), for programs that
    /// return it as their own failure.
    #[error("invalid value")]
    InvalidValue,
    /// cust 0.3's `CudaError::NotReady` (`CUDA_ERROR_NOT_READY`), for programs that return it
    /// as their own failure.
    #[error("not ready")]
    NotReady,
    /// cust 0.3's `CudaError::NotSupported` (`CUDA_ERROR_NOT_SUPPORTED`), for programs that
    /// return it as their own failure.
    #[error("operation not supported")]
    NotSupported,
    /// cust 0.3's `CudaError::UnknownError` (`CUDA_ERROR_UNKNOWN`), for programs that return
    /// it as their own failure (e.g. "the GPU's result differs from the CPU's").
    #[error("unknown error")]
    UnknownError,
    /// An error with what the caller was doing around it ([`GpuContext::gpu_context`]).
    #[error("{context}: {source}")]
    Context {
        /// What the caller was doing.
        context: String,
        /// The error itself.
        #[source]
        source: Box<CudaError>,
    },
}

/// Adds what the caller was doing to a failed runtime call, like `anyhow`'s `context` but
/// keeping the [`CudaError`] type (so [`CudaError::cuda_code`] and [`CudaError::root`] still
/// reach the driver's error).
///
/// ```
/// use cust::prelude::*;
///
/// fn upload(len: usize) -> CudaResult<DeviceBuffer<f32>> {
///     DeviceBuffer::zeroed(len).gpu_context(format!("allocating the {len}-element input"))
/// }
/// // Without a GPU this fails too; the message then starts with the context:
/// if let Err(e) = upload(1 << 20) {
///     assert!(e.to_string().starts_with("allocating the 1048576-element input: "));
/// }
/// ```
pub trait GpuContext<T> {
    /// On error, wraps it in [`CudaError::Context`] with `what` (what was being done).
    ///
    /// # Errors
    /// The original error, wrapped.
    fn gpu_context(self, what: impl Into<String>) -> CudaResult<T>;

    /// [`gpu_context`](GpuContext::gpu_context) with the text made only on error.
    ///
    /// # Errors
    /// The original error, wrapped.
    fn with_gpu_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> CudaResult<T>;
}

impl<T> GpuContext<T> for CudaResult<T> {
    fn gpu_context(self, what: impl Into<String>) -> CudaResult<T> {
        self.map_err(|e| CudaError::Context {
            context: what.into(),
            source: Box::new(e),
        })
    }

    fn with_gpu_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> CudaResult<T> {
        self.map_err(|e| CudaError::Context {
            context: what().into(),
            source: Box::new(e),
        })
    }
}

/// For cudarc's own calls: the driver's error with what was being done
/// ([`CudaError::Driver`]).
impl<T> GpuContext<T> for Result<T, DriverError> {
    fn gpu_context(self, what: impl Into<String>) -> CudaResult<T> {
        self.map_err(CudaError::driver(what))
    }

    fn with_gpu_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> CudaResult<T> {
        self.map_err(|source| CudaError::Driver {
            during: what().into(),
            source,
        })
    }
}

/// Two errors are equal when they are the same variant with the same message (driver errors:
/// the same operation and CUDA error code). As cust 0.3's `CudaError: PartialEq`, so that
/// `event.query() != Ok(EventStatus::Ready)` and `assert_eq!(r, Err(CudaError::UnknownError))`
/// compile. (Some variants wrap an `std::io::Error`, which has no `PartialEq` of its own.)
impl PartialEq for CudaError {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.cuda_code() == other.cuda_code()
            && self.to_string() == other.to_string()
    }
}

impl Eq for CudaError {}

impl CudaError {
    /// A closure that wraps a driver error with what was being done, for `map_err`.
    pub fn driver(during: impl Into<String>) -> impl FnOnce(DriverError) -> Self {
        let during = during.into();
        move |source| Self::Driver { during, source }
    }

    /// The CUDA error code (`CUresult`) behind this error, if the driver reported one
    /// (through any [`CudaError::Context`] wrappers).
    pub fn cuda_code(&self) -> Option<u32> {
        match self.root() {
            Self::Driver { source, .. }
            | Self::Launch { source, .. }
            | Self::ModuleLoad { source, .. } => Some(source.0 as u32),
            _ => None,
        }
    }

    /// This error, seen at the synchronisation after a launch of `kernel` (`grid` in blocks,
    /// `block` in threads, `shared_bytes` of dynamic shared memory), reported as that launch's
    /// failure ([`CudaError::Launch`]) when it is the driver's; any other error as it is.
    pub(crate) fn in_launch(
        self,
        kernel: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: u32,
    ) -> Self {
        match self {
            Self::Driver { source, .. } => Self::Launch {
                kernel: kernel.to_owned(),
                grid,
                block,
                shared_bytes,
                source,
            },
            other => other,
        }
    }

    /// The error inside any [`CudaError::Context`] wrappers.
    pub fn root(&self) -> &CudaError {
        let mut e = self;
        while let Self::Context { source, .. } = e {
            e = source;
        }
        e
    }
}

/// `CUDA_ERROR_NAME (code): description`, from the driver's own tables.
pub fn describe(err: &DriverError) -> String {
    // Without a driver (the CPU emulator's errors in the driver's words), the name comes from
    // cudarc's enum and the text from the table below: cudarc panics when a driver function
    // is called with no library to load it from.
    // `device::driver_available`, called directly: `error` is the crate's bottom layer
    // and imports none of its modules.
    // SAFETY: only tries to dlopen the driver library by its known names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return format!("{:?} ({}): {}", err.0, err.0 as u32, offline_text(err.0));
    }
    let name = err
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", err.0));
    let text = err
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name} ({}): {text}", err.0 as u32)
}

/// `cuGetErrorString`'s text for the codes the CPU emulator reports (CUDA driver 12/13);
/// empty for others.
fn offline_text(code: CUresult) -> &'static str {
    match code {
        CUresult::CUDA_ERROR_INVALID_VALUE => "invalid argument",
        CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED => {
            "operation not permitted when stream is capturing"
        }
        _ => "",
    }
}

impl CudaError {
    /// A launch the hardware refuses (a configuration over a limit of "Technical
    /// Specifications per Compute Capability"), as the driver reports it: a
    /// [`CudaError::Launch`] with `CUDA_ERROR_INVALID_VALUE`. The CPU emulator's, which names
    /// no cudarc type.
    pub(crate) fn refused_launch(
        kernel: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: u32,
    ) -> Self {
        Self::Launch {
            kernel: kernel.to_owned(),
            grid,
            block,
            shared_bytes,
            source: DriverError(CUresult::CUDA_ERROR_INVALID_VALUE),
        }
    }

    /// What the driver reports for work a stream capture cannot take (e.g. capturing the
    /// legacy default stream: CUDA Runtime API, `cudaStreamBeginCapture`, "capture may not
    /// be initiated if stream is cudaStreamLegacy"): a [`CudaError::Driver`] with
    /// `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` during `during`. The CPU emulator's.
    pub(crate) fn capture_unsupported(during: impl Into<String>) -> Self {
        Self::Driver {
            during: during.into(),
            source: DriverError(CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
        }
    }
}

impl From<cuda_emu::EmuError> for CudaError {
    fn from(e: cuda_emu::EmuError) -> Self {
        Self::Emulator(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_wraps_and_keeps_the_root() {
        let failed: CudaResult<()> = Err(CudaError::LaunchConfig("block 2000".into()));
        let e = failed
            .gpu_context("rendering band 3")
            .with_gpu_context(|| format!("frame {}", 7))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "frame 7: rendering band 3: invalid launch configuration: block 2000"
        );
        assert!(matches!(e.root(), CudaError::LaunchConfig(m) if m == "block 2000"));
        // The source chain walks both contexts down to the root.
        let mut chain = 0;
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            chain += 1;
            source = s.source();
        }
        assert_eq!(chain, 2);
        assert_eq!(e.cuda_code(), None);
    }

    #[test]
    fn errors_compare_by_variant_and_message() {
        assert_eq!(CudaError::UnknownError, CudaError::UnknownError);
        assert_ne!(CudaError::UnknownError, CudaError::InvalidValue);
        let a = CudaError::LaunchConfig("block 2000".into());
        assert_eq!(a, CudaError::LaunchConfig("block 2000".into()));
        assert_ne!(a, CudaError::LaunchConfig("block 3000".into()));
        let r: CudaResult<u32> = Err(CudaError::NotReady);
        assert!(r != Ok(1));
        let d = |code| CudaError::driver("x")(DriverError(code));
        assert_ne!(
            d(CUresult::CUDA_ERROR_INVALID_VALUE),
            d(CUresult::CUDA_ERROR_OUT_OF_MEMORY)
        );
    }

    #[test]
    fn no_driver_names_the_emulator() {
        let text = CudaError::NoDriver.to_string();
        for part in [
            "install an NVIDIA driver",
            "CPU emulator",
            "Context::from_env(0)",
            "FERROCUDA_DEVICE",
            "Context::emulator()",
        ] {
            assert!(text.contains(part), "{part:?} missing from: {text}");
        }
    }

    #[test]
    fn context_keeps_the_cuda_code() {
        // No driver call: the code is read from the error itself.
        let failed: Result<(), DriverError> = Err(DriverError(CUresult::CUDA_ERROR_INVALID_VALUE));
        let e = failed
            .gpu_context("copying")
            .gpu_context("step 2")
            .unwrap_err();
        assert_eq!(
            e.cuda_code(),
            Some(CUresult::CUDA_ERROR_INVALID_VALUE as u32)
        );
        assert!(matches!(e.root(), CudaError::Driver { during, .. } if during == "copying"));
    }
}
