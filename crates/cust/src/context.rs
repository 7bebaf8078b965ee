//! [`Context`] (a device's primary context) and [`CurrentContext`], the context that
//! cust-style constructors without a context argument use.
//!
//! As in cust 0.3, `Module::from_ptx`, `Stream::new`, `DeviceBuffer::from_slice` and friends
//! work on the *current* context. Here that is the context made current on this thread with
//! [`CurrentContext::set_current`], else the first context created in the process (cust
//! follows the driver, whose current context is per thread only; the process-wide fallback
//! lets worker threads of a one-GPU program work without extra calls).

use crate::{
    device::Device,
    error::{CudaError, CudaResult},
};
use cudarc::driver::CudaContext;
use std::{
    cell::RefCell,
    fmt,
    sync::{Arc, Mutex},
};

/// A device's primary context (shared by everything that uses the device in this process).
/// Cheap to clone.
#[derive(Clone)]
pub struct Context {
    inner: Arc<CudaContext>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("ordinal", &self.inner.ordinal())
            .finish()
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Context>> = const { RefCell::new(None) };
}
static PROCESS_DEFAULT: Mutex<Option<Context>> = Mutex::new(None);

impl Context {
    /// Opens `device`'s primary context and makes it current on this thread (and the
    /// process-wide default if there is none yet).
    ///
    /// # Errors
    /// [`CudaError::Driver`] if the driver cannot create it.
    pub fn new(device: Device) -> CudaResult<Self> {
        let inner = CudaContext::new(device.ordinal()).map_err(CudaError::driver(format!(
            "creating the context of device {}",
            device.ordinal()
        )))?;
        let ctx = Self { inner };
        CurrentContext::set_current(&ctx);
        let mut default = PROCESS_DEFAULT.lock().unwrap_or_else(|e| e.into_inner());
        if default.is_none() {
            *default = Some(ctx.clone());
        }
        Ok(ctx)
    }

    /// Wraps a cudarc context (does not make it current).
    pub fn from_cudarc(inner: Arc<CudaContext>) -> Self {
        Self { inner }
    }

    /// The device.
    ///
    /// # Errors
    /// As [`Device::get_device`].
    pub fn device(&self) -> CudaResult<Device> {
        Device::get_device(self.inner.ordinal() as u32)
    }

    /// Waits for all work on the device.
    ///
    /// # Errors
    /// [`CudaError::Driver`] with the first asynchronous error (e.g. a kernel that trapped).
    pub fn synchronize(&self) -> CudaResult<()> {
        self.inner
            .synchronize()
            .map_err(CudaError::driver("synchronizing the context"))
    }

    /// `(free, total)` device memory, bytes.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn mem_info(&self) -> CudaResult<(usize, usize)> {
        self.inner
            .mem_get_info()
            .map_err(CudaError::driver("reading free memory (cuMemGetInfo)"))
    }

    /// Checks that `bytes` more bytes fit in free device memory.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] when they do not.
    pub fn check_free(&self, what: &'static str, bytes: usize) -> CudaResult<()> {
        let (free, _) = self.mem_info()?;
        if bytes > free {
            return Err(CudaError::OutOfMemory { what, bytes, free });
        }
        Ok(())
    }

    /// The compute capability of the context's device.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn compute_capability(&self) -> CudaResult<crate::module::ComputeCapability> {
        let (major, minor) = self
            .inner
            .compute_capability()
            .map_err(CudaError::driver("reading the compute capability"))?;
        Ok(crate::module::ComputeCapability::new(
            major as u32,
            minor as u32,
        ))
    }

    /// The device's name, e.g. `NVIDIA H200` (`unknown GPU` if the driver cannot say).
    pub fn name(&self) -> String {
        self.inner.name().unwrap_or_else(|_| "unknown GPU".into())
    }

    /// The device's ordinal (0 = first GPU).
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal()
    }

    /// A device attribute of the context's device (`cuDeviceGetAttribute`), e.g.
    /// [`DeviceAttribute::MultiprocessorCount`](crate::device::DeviceAttribute).
    ///
    /// # Errors
    /// A driver error.
    pub fn attribute(&self, attribute: crate::device::DeviceAttribute) -> CudaResult<i32> {
        self.device()?.get_attribute(attribute)
    }

    /// Makes the context current on this thread for driver calls.
    pub(crate) fn bind_to_thread(&self) -> CudaResult<()> {
        self.inner
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))
    }

    /// The cudarc context, for crates built over cudarc beside this one (e.g. `blastoff`);
    /// applications use [`Context`]'s own methods.
    pub fn as_cudarc(&self) -> &Arc<CudaContext> {
        &self.inner
    }
}

/// The context used by constructors that take none (see the [module docs](self)).
#[derive(Debug)]
pub struct CurrentContext;

impl CurrentContext {
    /// Makes `ctx` current on this thread.
    pub fn set_current(ctx: &Context) {
        CURRENT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    }

    /// This thread's current context, else the process-wide default.
    ///
    /// # Errors
    /// [`CudaError::NoContext`] when neither exists.
    pub fn get_current() -> CudaResult<Context> {
        if let Some(ctx) = CURRENT.with(|c| c.borrow().clone()) {
            return Ok(ctx);
        }
        PROCESS_DEFAULT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or(CudaError::NoContext)
    }
}

/// Initialises CUDA, opens device 0 and makes its context current: the usual first line of a
/// cust program. Keep the returned [`Context`] alive while you use the GPU.
///
/// # Errors
/// [`CudaError::NoDriver`], [`CudaError::NoDevice`], or a driver error.
pub fn quick_init() -> CudaResult<Context> {
    Context::new(Device::get_device(0)?)
}
