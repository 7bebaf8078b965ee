//! [`Event`]: a marker in a stream, for ordering streams and timing GPU work.

use crate::{
    backend::{self, EventKind},
    context::{Context, CurrentContext},
    error::CudaResult,
    stream::Stream,
};
use std::{fmt, time::Duration};

/// Event creation flags (cust 0.3's `EventFlags`; the driver's `CUevent_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventFlags(EventKind);

impl EventFlags {
    /// Timing enabled; waiting on the event spins.
    pub const DEFAULT: Self = Self(EventKind::Default);
    /// Waiting on the event blocks the thread instead of spinning.
    pub const BLOCKING_SYNC: Self = Self(EventKind::BlockingSync);
    /// No timing (cheaper, for ordering only); [`Event::elapsed_time_f32`] then fails.
    pub const DISABLE_TIMING: Self = Self(EventKind::DisableTiming);
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
    /// A GPU event, or on the CPU emulator the host time of the last record (work on an
    /// emulator stream is done when queued, so a record is the host's clock then).
    inner: Box<dyn backend::Event>,
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
    /// [`CudaError::NoContext`](crate::CudaError::NoContext), or a driver error.
    pub fn new(flags: EventFlags) -> CudaResult<Self> {
        Self::new_in(&CurrentContext::get_current()?, flags)
    }

    /// [`Event::new`] on a given context.
    ///
    /// # Errors
    /// A driver error.
    pub fn new_in(ctx: &Context, flags: EventFlags) -> CudaResult<Self> {
        Ok(Self {
            inner: ctx.backend().new_event(flags.0)?,
        })
    }

    /// The backend's event.
    pub(crate) fn inner(&self) -> &dyn backend::Event {
        &*self.inner
    }

    /// Records the event at the current end of `stream`'s queue.
    ///
    /// # Errors
    /// A driver error; [`CudaError::BackendMismatch`](crate::CudaError::BackendMismatch) or
    /// [`CudaError::NotOnEmulator`](crate::CudaError::NotOnEmulator) for an event and a
    /// stream of different backends.
    pub fn record(&self, stream: &Stream) -> CudaResult<()> {
        self.inner.record(stream.queue())
    }

    /// Blocks until the event has completed.
    ///
    /// # Errors
    /// A driver error (including asynchronous errors of the work before it).
    pub fn synchronize(&self) -> CudaResult<()> {
        self.inner.synchronize()
    }

    /// Whether the event has completed, without blocking.
    ///
    /// # Errors
    /// A driver error.
    pub fn query(&self) -> CudaResult<EventStatus> {
        Ok(if self.inner.is_complete()? {
            EventStatus::Ready
        } else {
            EventStatus::NotReady
        })
    }

    /// Milliseconds of GPU time from `start` to this event (both recorded, this one
    /// completed; resolution about 0.5 µs, per the CUDA driver API's `cuEventElapsedTime`).
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_NOT_READY` if this event has not completed, or
    /// `CUDA_ERROR_INVALID_HANDLE` if either was created with
    /// [`EventFlags::DISABLE_TIMING`].
    pub fn elapsed_time_f32(&self, start: &Event) -> CudaResult<f32> {
        self.inner.elapsed_ms(&*start.inner)
    }

    /// [`Event::elapsed_time_f32`] as a [`Duration`].
    ///
    /// # Errors
    /// As [`Event::elapsed_time_f32`].
    pub fn elapsed(&self, start: &Event) -> CudaResult<Duration> {
        let ms = self.elapsed_time_f32(start)?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

impl Stream {
    /// Makes work queued after this call wait until `event` (recorded on any stream) has
    /// completed.
    ///
    /// # Errors
    /// A driver error.
    pub fn wait_event(&self, event: &Event) -> CudaResult<()> {
        self.queue().wait(event.inner())
    }
}
