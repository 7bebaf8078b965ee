//! [`Stream`]: an ordered queue of GPU work.
//!
//! Methods that need another type live beside it, so that no module imports one above it:
//! [`Stream::wait_event`] in [`event`](crate::event), [`Stream::capture`] in
//! [`graph`](crate::graph), and the cudarc accessors (`from_cudarc`, `as_cudarc`,
//! `as_inner`) in the crate's private `interop` module.

use crate::{
    backend::{self, Completion},
    context::{Context, CurrentContext},
    error::CudaResult,
    launch_config::LaunchConfig,
};
use std::{
    fmt,
    sync::{Arc, Mutex},
};

/// The driver's stream handle, CUDA's `CUstream` (the runtime's `cudaStream_t`), as an
/// opaque pointer for C and C++ libraries that take one (e.g. CUB); from
/// [`Stream::as_inner`].
pub type RawStream = *mut std::ffi::c_void;

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
    ctx: Context,
    /// A GPU stream, or the CPU emulator's (which runs all work at once, in call order).
    queue: Arc<dyn backend::Stream>,
    priority: i32,
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
    /// [`CudaError::NoContext`](crate::CudaError::NoContext), or a driver error.
    pub fn new(flags: StreamFlags, priority: Option<i32>) -> CudaResult<Self> {
        Self::new_in(&CurrentContext::get_current()?, flags, priority)
    }

    /// [`Stream::new`] on a given context (on the emulator, its one stream).
    ///
    /// # Errors
    /// A driver error.
    pub fn new_in(ctx: &Context, _flags: StreamFlags, priority: Option<i32>) -> CudaResult<Self> {
        let queue = ctx.backend().new_stream(priority, "creating a stream")?;
        let priority = queue.priority()?;
        Ok(Self::from_parts(ctx.clone(), queue, priority))
    }

    /// The context's legacy default stream (the NULL stream), which synchronises with every
    /// blocking stream.
    pub fn default_of(ctx: &Context) -> Self {
        Self::from_parts(ctx.clone(), ctx.backend().default_stream(), 0)
    }

    /// A stream of `ctx`'s backend.
    pub(crate) fn from_parts(ctx: Context, queue: Arc<dyn backend::Stream>, priority: i32) -> Self {
        Self {
            ctx,
            queue,
            priority,
        }
    }

    /// `true` for a stream of the CPU emulator.
    pub fn is_emulator(&self) -> bool {
        self.queue.is_emulator()
    }

    /// The backend's stream, which buffers, events and functions use this stream through.
    pub(crate) fn queue(&self) -> &dyn backend::Stream {
        &*self.queue
    }

    /// The range of stream priorities `(least, greatest)` of the current context's device,
    /// e.g. `(0, -5)`: lower numbers are higher priorities (`(0, 0)` on the emulator).
    ///
    /// # Errors
    /// A driver error.
    pub fn priority_range() -> CudaResult<(i32, i32)> {
        CurrentContext::get_current()?
            .backend()
            .stream_priority_range()
    }

    /// The stream's priority, as the driver set it.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// Blocks until all work queued so far has finished.
    ///
    /// # Errors
    /// [`CudaError::Driver`](crate::CudaError::Driver) with the first asynchronous error of
    /// the queued work (e.g. a kernel that trapped).
    pub fn synchronize(&self) -> CudaResult<()> {
        self.queue.synchronize()
    }

    /// [`Stream::synchronize`], with a failure reported as a failure of the kernel `kernel`
    /// launched with `cfg` ([`CudaError::Launch`](crate::CudaError::Launch)): asynchronous
    /// kernel faults surface at the next synchronisation, and this names the kernel that was
    /// queued last.
    ///
    /// # Errors
    /// [`CudaError::Launch`](crate::CudaError::Launch) naming the kernel and configuration.
    pub fn synchronize_after(&self, kernel: &str, cfg: LaunchConfig) -> CudaResult<()> {
        self.queue
            .synchronize()
            .map_err(|e| e.in_launch(kernel, cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes))
    }

    /// Makes work queued after this call wait for all work queued on `other` so far.
    ///
    /// # Errors
    /// A driver error.
    pub fn join(&self, other: &Stream) -> CudaResult<()> {
        self.queue.join(&*other.queue)
    }

    /// The context the stream belongs to.
    pub fn context(&self) -> Context {
        self.ctx.clone()
    }
}

/// A future that completes when the work queued on a stream before
/// [`Stream::synchronize_async`] has finished: the driver calls back into it
/// (`cuStreamAddCallback`, which runs even when that work failed), so no thread blocks while
/// it is pending. Runs on any executor.
#[must_use = "futures do nothing unless awaited"]
pub struct StreamFuture {
    state: Arc<Mutex<Completion>>,
}

impl fmt::Debug for StreamFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamFuture").finish_non_exhaustive()
    }
}

impl std::future::Future for StreamFuture {
    type Output = CudaResult<()>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<CudaResult<()>> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match s.status.take() {
            Some(status) => std::task::Poll::Ready(status),
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
        let state = Arc::new(Mutex::new(Completion::default()));
        self.queue.notify(state.clone())?;
        Ok(StreamFuture { state })
    }
}
