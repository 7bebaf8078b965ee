//! [`Stream`]: an ordered queue of GPU work.

use crate::cpu::CpuDevice;
use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    event::Event,
};
use cudarc::driver::{CudaStream, result};
use std::{fmt, sync::Arc};

/// Stream creation flags (cust 0.3's `StreamFlags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamFlags(u32);

impl StreamFlags {
    /// cust's default. Here every created stream is non-blocking (cudarc creates only
    /// `CU_STREAM_NON_BLOCKING` streams): it does not synchronise implicitly with the legacy
    /// default stream. Buffers used on several streams are still ordered, by the events
    /// cudarc records for each buffer.
    pub const DEFAULT: Self = Self(0);
    /// Work in this stream may run concurrently with the legacy default stream.
    pub const NON_BLOCKING: Self = Self(1);
}

/// An ordered queue of GPU work: copies, kernel launches, event records. Cheap to clone
/// (shared).
#[derive(Clone)]
pub struct Stream {
    inner: Inner,
    priority: i32,
}

/// A GPU stream, or the CPU emulator's (which runs all work at once, in call order).
#[derive(Clone)]
enum Inner {
    Cuda(Arc<CudaStream>),
    Cpu(Arc<CpuDevice>),
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl Stream {
    /// A new stream on the current context. `priority`: lower numbers run first; `None` is
    /// the default priority 0; values outside the device's range
    /// ([`Stream::priority_range`]) are clamped by the driver.
    ///
    /// # Errors
    /// [`CudaError::NoContext`], or a driver error.
    pub fn new(flags: StreamFlags, priority: Option<i32>) -> CudaResult<Self> {
        Self::new_in(&CurrentContext::get_current()?, flags, priority)
    }

    /// [`Stream::new`] on a given context.
    ///
    /// # Errors
    /// A driver error.
    pub fn new_in(ctx: &Context, _flags: StreamFlags, priority: Option<i32>) -> CudaResult<Self> {
        if ctx.is_emulator() {
            return Ok(Self::default_of(ctx));
        }
        let cuda = ctx.cuda("creating a stream")?;
        let inner = match priority {
            None => cuda.new_stream(),
            Some(p) => cuda.new_stream_with_priority(p),
        }
        .map_err(CudaError::driver("creating a stream"))?;
        let mut priority = 0;
        // SAFETY: a live stream; the driver writes one integer.
        unsafe { cudarc::driver::sys::cuStreamGetPriority(inner.cu_stream(), &mut priority) }
            .result()
            .map_err(CudaError::driver("reading the stream priority"))?;
        Ok(Self {
            inner: Inner::Cuda(inner),
            priority,
        })
    }

    /// The context's legacy default stream (the NULL stream), which synchronises with every
    /// blocking stream.
    pub fn default_of(ctx: &Context) -> Self {
        let inner = match ctx.cpu() {
            Some(device) => Inner::Cpu(device.clone()),
            None => Inner::Cuda(ctx.as_cudarc().default_stream()),
        };
        Self { inner, priority: 0 }
    }

    /// Wraps a cudarc stream.
    pub fn from_cudarc(inner: Arc<CudaStream>) -> Self {
        Self {
            inner: Inner::Cuda(inner),
            priority: 0,
        }
    }

    /// `true` for a stream of the CPU emulator.
    pub fn is_emulator(&self) -> bool {
        matches!(self.inner, Inner::Cpu(_))
    }

    /// The emulator's device, `None` on a GPU.
    pub(crate) fn cpu(&self) -> Option<&Arc<CpuDevice>> {
        match &self.inner {
            Inner::Cpu(d) => Some(d),
            Inner::Cuda(_) => None,
        }
    }

    /// The cudarc stream, or [`CudaError::NotOnEmulator`] naming `operation` on the emulator.
    pub(crate) fn cuda(&self, operation: &'static str) -> CudaResult<&Arc<CudaStream>> {
        match &self.inner {
            Inner::Cuda(s) => Ok(s),
            Inner::Cpu(_) => Err(CudaError::NotOnEmulator { operation }),
        }
    }

    /// The range of stream priorities `(least, greatest)` of the current context's device,
    /// e.g. `(0, -5)`: lower numbers are higher priorities.
    ///
    /// # Errors
    /// A driver error.
    pub fn priority_range() -> CudaResult<(i32, i32)> {
        let ctx = CurrentContext::get_current()?;
        if ctx.is_emulator() {
            return Ok((0, 0));
        }
        ctx.bind_to_thread()?;
        result::stream::get_priority_range()
            .map_err(CudaError::driver("reading the stream priority range"))
    }

    /// The stream's priority, as the driver set it.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Blocks until all work queued so far has finished.
    ///
    /// # Errors
    /// [`CudaError::Driver`] with the first asynchronous error of the queued work (e.g. a
    /// kernel that trapped).
    pub fn synchronize(&self) -> CudaResult<()> {
        match &self.inner {
            Inner::Cuda(s) => s
                .synchronize()
                .map_err(CudaError::driver("synchronizing a stream")),
            Inner::Cpu(_) => Ok(()),
        }
    }

    /// [`Stream::synchronize`], with a failure reported as a failure of the kernel `kernel`
    /// launched with `cfg` ([`CudaError::Launch`]): asynchronous kernel faults surface at the
    /// next synchronisation, and this names the kernel that was queued last.
    ///
    /// # Errors
    /// [`CudaError::Launch`] naming the kernel and configuration.
    pub fn synchronize_after(
        &self,
        kernel: &str,
        cfg: crate::function::LaunchConfig,
    ) -> CudaResult<()> {
        match &self.inner {
            Inner::Cuda(s) => s
                .synchronize()
                .map_err(|source| crate::launch::launch_error(kernel, cfg, source)),
            Inner::Cpu(_) => Ok(()),
        }
    }

    /// Makes work queued after this call wait until `event` (recorded on any stream) has
    /// completed.
    ///
    /// # Errors
    /// A driver error.
    pub fn wait_event(&self, event: &Event) -> CudaResult<()> {
        let Inner::Cuda(inner) = &self.inner else {
            return Ok(());
        };
        inner
            .wait(event.cuda()?)
            .map_err(CudaError::driver("making a stream wait for an event"))
    }

    /// Makes work queued after this call wait for all work queued on `other` so far.
    ///
    /// # Errors
    /// A driver error.
    pub fn join(&self, other: &Stream) -> CudaResult<()> {
        let (Inner::Cuda(inner), Inner::Cuda(other)) = (&self.inner, &other.inner) else {
            return Ok(());
        };
        inner
            .join(other)
            .map_err(CudaError::driver("making a stream wait for another"))
    }

    /// The context the stream belongs to.
    pub fn context(&self) -> Context {
        match &self.inner {
            Inner::Cuda(s) => Context::from_cudarc(s.context().clone()),
            Inner::Cpu(d) => Context::from_cpu(d.clone()),
        }
    }

    /// The driver's stream handle (`CUstream`), for passing to C/C++ libraries that take a
    /// `cudaStream_t` (e.g. CUB); cust 0.3's `as_inner`. The stream stays valid while `self`
    /// lives.
    pub fn as_inner(&self) -> crate::sys::CUstream {
        self.cu_stream()
    }

    /// Makes the stream's context current on this thread (driver calls need it).
    pub(crate) fn bind_to_thread(&self) -> Result<(), cudarc::driver::DriverError> {
        match &self.inner {
            Inner::Cuda(s) => s.context().bind_to_thread(),
            Inner::Cpu(_) => Ok(()),
        }
    }

    /// The driver's stream handle.
    pub(crate) fn cu_stream(&self) -> crate::sys::CUstream {
        match &self.inner {
            Inner::Cuda(s) => s.cu_stream(),
            Inner::Cpu(_) => std::ptr::null_mut(),
        }
    }

    /// The cudarc stream, for crates built over cudarc beside this one (e.g. `blastoff`);
    /// applications use [`Stream`]'s own methods.
    ///
    /// # Panics
    /// On the CPU emulator, which has no CUDA stream (check [`Stream::is_emulator`]).
    pub fn as_cudarc(&self) -> &Arc<CudaStream> {
        match &self.inner {
            Inner::Cuda(s) => s,
            Inner::Cpu(_) => panic!(
                "Stream::as_cudarc: the CPU emulator has no CUDA stream (cudarc-based \
                 libraries such as cuBLAS need a GPU)"
            ),
        }
    }
}

/// A future that completes when the work queued on a stream before
/// [`Stream::synchronize_async`] has finished: the driver calls back into it
/// (`cuStreamAddCallback`, which runs even when that work failed), so no thread blocks while
/// it is pending. Runs on any executor.
#[must_use = "futures do nothing unless awaited"]
pub struct StreamFuture {
    state: Arc<std::sync::Mutex<Completion>>,
}

#[derive(Default)]
struct Completion {
    /// The status the driver passed to the callback, once it ran.
    status: Option<cudarc::driver::sys::CUresult>,
    waker: Option<std::task::Waker>,
}

impl fmt::Debug for StreamFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamFuture").finish_non_exhaustive()
    }
}

/// The driver's callback: records the status and wakes the task awaiting the future. It
/// calls no CUDA function (not allowed in a stream callback).
unsafe extern "C" fn stream_done(
    _stream: cudarc::driver::sys::CUstream,
    status: cudarc::driver::sys::CUresult,
    data: *mut std::ffi::c_void,
) {
    // SAFETY: `data` is the `Arc` leaked by `synchronize_async` for exactly this one call.
    let state = unsafe { Arc::from_raw(data as *const std::sync::Mutex<Completion>) };
    let waker = {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        s.status = Some(status);
        s.waker.take()
    };
    if let Some(w) = waker {
        w.wake();
    }
}

impl std::future::Future for StreamFuture {
    type Output = CudaResult<()>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<CudaResult<()>> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match s.status {
            Some(status) => std::task::Poll::Ready(
                status
                    .result()
                    .map_err(CudaError::driver("awaiting a stream")),
            ),
            None => {
                s.waker = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    }
}

impl Stream {
    /// A [`StreamFuture`] for the work queued on this stream so far: `.await` it instead of
    /// [`Stream::synchronize`] to wait without blocking a thread (e.g. several streams
    /// awaited together by one executor).
    ///
    /// # Errors
    /// A driver error queueing the callback; the future itself yields the error of the work
    /// it waited for, if any.
    pub fn synchronize_async(&self) -> CudaResult<StreamFuture> {
        let state = Arc::new(std::sync::Mutex::new(Completion::default()));
        let inner = match &self.inner {
            Inner::Cuda(s) => s,
            Inner::Cpu(_) => {
                // Everything queued on the emulator has run: complete at once.
                state.lock().unwrap_or_else(|p| p.into_inner()).status =
                    Some(cudarc::driver::sys::CUresult::CUDA_SUCCESS);
                return Ok(StreamFuture { state });
            }
        };
        let data = Arc::into_raw(state.clone()) as *mut std::ffi::c_void;
        inner
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver("binding the stream's context"))?;
        // SAFETY: `stream_done` matches `CUstreamCallback` and takes ownership of `data`
        // (one strong count) when the driver calls it, which it does exactly once; flags must
        // be 0.
        let queued = unsafe {
            cudarc::driver::sys::cuStreamAddCallback(inner.cu_stream(), Some(stream_done), data, 0)
        }
        .result();
        if let Err(e) = queued {
            // SAFETY: the driver did not take `data`: reclaim the count leaked above.
            drop(unsafe { Arc::from_raw(data as *const std::sync::Mutex<Completion>) });
            return Err(CudaError::driver("queueing a stream callback")(e));
        }
        Ok(StreamFuture { state })
    }
}
