//! [`Event`]: a marker in a stream, for ordering streams and timing GPU work.

use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::{CudaEvent, sys};
use std::{
    fmt,
    sync::Mutex,
    time::{Duration, Instant},
};

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
    inner: Inner,
}

/// A GPU event, or on the CPU emulator the host time of the last record (work on an
/// emulator stream is done when queued, so a record is the host's clock then).
enum Inner {
    Cuda(CudaEvent),
    Cpu(Mutex<Option<Instant>>),
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
        if ctx.is_emulator() {
            return Ok(Self {
                inner: Inner::Cpu(Mutex::new(None)),
            });
        }
        let inner = ctx
            .as_cudarc()
            .new_event(Some(flags.0))
            .map_err(CudaError::driver("creating an event"))?;
        Ok(Self {
            inner: Inner::Cuda(inner),
        })
    }

    /// The cudarc event, or [`CudaError::NotOnEmulator`] on the emulator.
    pub(crate) fn cuda(&self) -> CudaResult<&CudaEvent> {
        match &self.inner {
            Inner::Cuda(e) => Ok(e),
            Inner::Cpu(_) => Err(CudaError::NotOnEmulator {
                operation: "a CPU-emulator event on a GPU stream",
            }),
        }
    }

    /// Records the event at the current end of `stream`'s queue.
    ///
    /// # Errors
    /// A driver error.
    pub fn record(&self, stream: &Stream) -> CudaResult<()> {
        if let Inner::Cpu(at) = &self.inner {
            if !stream.is_emulator() {
                return Err(CudaError::BackendMismatch {
                    what: "recording an event",
                    buffer: crate::cpu::CPU,
                    stream: crate::cpu::GPU,
                });
            }
            *at.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
            return Ok(());
        }
        self.cuda()?
            .record(stream.cuda("recording a GPU event on a CPU-emulator stream")?)
            .map_err(CudaError::driver("recording an event"))
    }

    /// Blocks until the event has completed.
    ///
    /// # Errors
    /// A driver error (including asynchronous errors of the work before it).
    pub fn synchronize(&self) -> CudaResult<()> {
        let Inner::Cuda(inner) = &self.inner else {
            return Ok(());
        };
        inner
            .synchronize()
            .map_err(CudaError::driver("waiting for an event"))
    }

    /// Whether the event has completed, without blocking.
    ///
    /// # Errors
    /// A driver error.
    pub fn query(&self) -> CudaResult<EventStatus> {
        let Inner::Cuda(inner) = &self.inner else {
            return Ok(EventStatus::Ready);
        };
        match inner.try_is_complete() {
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
        if let (Inner::Cpu(end), Inner::Cpu(begin)) = (&self.inner, &start.inner) {
            let end = *end.lock().unwrap_or_else(|p| p.into_inner());
            let begin = *begin.lock().unwrap_or_else(|p| p.into_inner());
            return match (begin, end) {
                (Some(b), Some(e)) => Ok(if e >= b {
                    e.duration_since(b).as_secs_f32() * 1e3
                } else {
                    -(b.duration_since(e).as_secs_f32() * 1e3)
                }),
                _ => Err(CudaError::LaunchConfig(
                    "elapsed time between events that were not both recorded".into(),
                )),
            };
        }
        start
            .cuda()?
            .elapsed_ms(self.cuda()?)
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
    ///
    /// # Panics
    /// For an event of the CPU emulator, which has no CUDA event.
    pub fn as_cudarc(&self) -> &CudaEvent {
        match &self.inner {
            Inner::Cuda(e) => e,
            Inner::Cpu(_) => panic!("Event::as_cudarc: the CPU emulator has no CUDA event"),
        }
    }
}
