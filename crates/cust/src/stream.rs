//! [`Stream`]: an ordered queue of GPU work.

use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    event::Event,
};
use cudarc::driver::{CudaStream, result};
use std::{fmt, ops::Deref, sync::Arc};

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
/// (shared). Dereferences to cudarc's `Arc<CudaStream>` for everything cudarc offers
/// (`clone_htod`, `alloc_zeros`, `memcpy_dtoh`, ...).
#[derive(Clone)]
pub struct Stream {
    inner: Arc<CudaStream>,
    priority: i32,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl Deref for Stream {
    type Target = Arc<CudaStream>;
    fn deref(&self) -> &Arc<CudaStream> {
        &self.inner
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
        let inner = match priority {
            None => ctx.new_stream(),
            Some(p) => ctx.new_stream_with_priority(p),
        }
        .map_err(CudaError::driver("creating a stream"))?;
        let mut priority = 0;
        // SAFETY: a live stream; the driver writes one integer.
        unsafe { cudarc::driver::sys::cuStreamGetPriority(inner.cu_stream(), &mut priority) }
            .result()
            .map_err(CudaError::driver("reading the stream priority"))?;
        Ok(Self { inner, priority })
    }

    /// The context's legacy default stream (the NULL stream), which synchronises with every
    /// blocking stream.
    pub fn default_of(ctx: &Context) -> Self {
        Self {
            inner: ctx.default_stream(),
            priority: 0,
        }
    }

    /// Wraps a cudarc stream.
    pub fn from_cudarc(inner: Arc<CudaStream>) -> Self {
        Self { inner, priority: 0 }
    }

    /// The range of stream priorities `(least, greatest)` of the current context's device,
    /// e.g. `(0, -5)`: lower numbers are higher priorities.
    ///
    /// # Errors
    /// A driver error.
    pub fn priority_range() -> CudaResult<(i32, i32)> {
        CurrentContext::get_current()?
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))?;
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
        self.inner
            .synchronize()
            .map_err(CudaError::driver("synchronizing a stream"))
    }

    /// Makes work queued after this call wait until `event` (recorded on any stream) has
    /// completed.
    ///
    /// # Errors
    /// A driver error.
    pub fn wait_event(&self, event: &Event) -> CudaResult<()> {
        self.inner
            .wait(event.as_cudarc())
            .map_err(CudaError::driver("making a stream wait for an event"))
    }

    /// Makes work queued after this call wait for all work queued on `other` so far.
    ///
    /// # Errors
    /// A driver error.
    pub fn join(&self, other: &Stream) -> CudaResult<()> {
        self.inner
            .join(&other.inner)
            .map_err(CudaError::driver("making a stream wait for another"))
    }

    /// The cudarc stream.
    pub fn as_cudarc(&self) -> &Arc<CudaStream> {
        &self.inner
    }
}
