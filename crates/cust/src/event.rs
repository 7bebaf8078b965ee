//! [`Event`]: a marker in a stream, for ordering streams and timing GPU work.

use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::{CudaEvent, sys};
use std::{fmt, time::Duration};

/// Event creation flags (cust 0.3's `EventFlags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventFlags(sys::CUevent_flags);

impl EventFlags {
    /// Timing enabled; waiting on the event spins.
    pub const DEFAULT: Self = Self(sys::CUevent_flags::CU_EVENT_DEFAULT);
    /// Waiting on the event blocks the thread instead of spinning.
    pub const BLOCKING_SYNC: Self = Self(sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC);
    /// No timing (cheaper, for ordering only); [`Event::elapsed_time_f32`] then fails.
    pub const DISABLE_TIMING: Self = Self(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
}

/// Whether an event's work has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventStatus {
    /// Everything before the record has finished.
    Ready,
    /// Not yet.
    NotReady,
}

/// A marker recorded in a stream: completes when all work queued before it has.
pub struct Event {
    inner: CudaEvent,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event").finish_non_exhaustive()
    }
}

impl Event {
    /// A new event on the current context.
    ///
    /// # Errors
    /// [`CudaError::NoContext`], or a driver error.
    pub fn new(flags: EventFlags) -> CudaResult<Self> {
        Self::new_in(&CurrentContext::get_current()?, flags)
    }

    /// [`Event::new`] on a given context.
    ///
    /// # Errors
    /// A driver error.
    pub fn new_in(ctx: &Context, flags: EventFlags) -> CudaResult<Self> {
        let inner = ctx
            .as_cudarc()
            .new_event(Some(flags.0))
            .map_err(CudaError::driver("creating an event"))?;
        Ok(Self { inner })
    }

    /// Records the event at the current end of `stream`'s queue.
    ///
    /// # Errors
    /// A driver error.
    pub fn record(&self, stream: &Stream) -> CudaResult<()> {
        self.inner
            .record(stream.as_cudarc())
            .map_err(CudaError::driver("recording an event"))
    }

    /// Blocks until the event has completed.
    ///
    /// # Errors
    /// A driver error (including asynchronous errors of the work before it).
    pub fn synchronize(&self) -> CudaResult<()> {
        self.inner
            .synchronize()
            .map_err(CudaError::driver("waiting for an event"))
    }

    /// Whether the event has completed, without blocking.
    ///
    /// # Errors
    /// A driver error.
    pub fn query(&self) -> CudaResult<EventStatus> {
        match self.inner.try_is_complete() {
            Ok(true) => Ok(EventStatus::Ready),
            Ok(false) => Ok(EventStatus::NotReady),
            Err(e) => Err(CudaError::driver("querying an event")(e)),
        }
    }

    /// Milliseconds of GPU time from `start` to this event (both recorded, this one
    /// completed; resolution about 0.5 µs, per the CUDA driver API's `cuEventElapsedTime`).
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_NOT_READY` if this event has not completed, or
    /// `CUDA_ERROR_INVALID_HANDLE` if either was created with
    /// [`EventFlags::DISABLE_TIMING`].
    pub fn elapsed_time_f32(&self, start: &Event) -> CudaResult<f32> {
        start
            .inner
            .elapsed_ms(&self.inner)
            .map_err(CudaError::driver("reading the time between two events"))
    }

    /// [`Event::elapsed_time_f32`] as a [`Duration`].
    ///
    /// # Errors
    /// As [`Event::elapsed_time_f32`].
    pub fn elapsed(&self, start: &Event) -> CudaResult<Duration> {
        let ms = self.elapsed_time_f32(start)?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }

    /// The cudarc event.
    pub fn as_cudarc(&self) -> &CudaEvent {
        &self.inner
    }
}
