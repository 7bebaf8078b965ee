//! Timing: the one repetition loop ([`Repeat::run`]) and the one statistics type ([`Stats`])
//! used by every benchmark, CLI command and example of this crate.
//!
//! A repetition is timed either on the GPU, between two CUDA events on the stream
//! ([`event_time`], [`Repeat::events`]), or on the host's wall clock ([`Repeat::wall`]).
//! Times are in milliseconds.

use cust::CudaError;
use cust::context::Context;
use cust::event::{Event, EventFlags};
use cust::stream::Stream;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Summary of timed samples, milliseconds: median, extremes and quartiles (each the sample at
/// the rounded position `(samples − 1) · q` of the sorted samples, so the median of an even
/// count is the upper one).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Median.
    pub median_ms: f64,
    /// Fastest.
    pub min_ms: f64,
    /// Slowest.
    pub max_ms: f64,
    /// First quartile.
    pub q1_ms: f64,
    /// Third quartile.
    pub q3_ms: f64,
    /// Number of samples.
    pub samples: usize,
}

impl Stats {
    /// From samples in milliseconds.
    ///
    /// # Panics
    /// If `ms` is empty.
    pub fn from_samples(mut ms: Vec<f64>) -> Self {
        assert!(!ms.is_empty(), "no samples");
        ms.sort_by(f64::total_cmp);
        let q = |f: f64| ms[((ms.len() - 1) as f64 * f).round() as usize];
        Self {
            median_ms: q(0.5),
            min_ms: ms[0],
            max_ms: ms[ms.len() - 1],
            q1_ms: q(0.25),
            q3_ms: q(0.75),
            samples: ms.len(),
        }
    }

    /// From samples as durations.
    ///
    /// # Panics
    /// If `samples` is empty.
    pub fn from_durations(samples: impl IntoIterator<Item = Duration>) -> Self {
        Self::from_samples(samples.into_iter().map(|d| d.as_secs_f64() * 1e3).collect())
    }

    /// The median as a [`Duration`].
    pub fn median(&self) -> Duration {
        Duration::from_secs_f64(self.median_ms.max(0.0) / 1e3)
    }
}

/// How many times to run: `warmup` untimed runs lasting at least `min_warmup` together, then
/// `reps` timed runs (at least one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeat {
    /// Untimed runs before timing.
    pub warmup: u32,
    /// Timed runs (0 counts as 1).
    pub reps: u32,
    /// Warm-up lasts at least this long, whatever `warmup` says (default zero).
    pub min_warmup: Duration,
}

impl Repeat {
    /// `warmup` untimed runs, then `reps` timed runs; no minimum warm-up time.
    pub const fn new(warmup: u32, reps: u32) -> Self {
        Self {
            warmup,
            reps,
            min_warmup: Duration::ZERO,
        }
    }

    /// Warm-up lasts at least `min_warmup` (default zero): after an idle stretch the GPU's
    /// clocks take a moment to come back up.
    #[must_use]
    pub const fn min_warmup(self, min_warmup: Duration) -> Self {
        Self { min_warmup, ..self }
    }

    /// THE loop: calls `once` for the warm-up (results dropped) and then for each timed run,
    /// and returns the timed runs' results in order. `once` measures itself (with
    /// [`event_time`] or the wall clock) and may return several times per run.
    ///
    /// # Errors
    /// The first error of `once`.
    pub fn run<T, E>(&self, mut once: impl FnMut() -> Result<T, E>) -> Result<Vec<T>, E> {
        let warm_start = Instant::now();
        let mut runs = 0;
        while runs < self.warmup || warm_start.elapsed() < self.min_warmup {
            once()?;
            runs += 1;
        }
        (0..self.reps.max(1)).map(|_| once()).collect()
    }

    /// Times `f` (which queues GPU work on `stream`, in `ctx`) with CUDA events around each
    /// run, waiting for the stream after each.
    ///
    /// # Errors
    /// The first error of `f`, or a driver error of the events or the wait.
    pub fn events<E: From<CudaError>>(
        &self,
        ctx: &Context,
        stream: &Stream,
        mut f: impl FnMut() -> Result<(), E>,
    ) -> Result<Stats, E> {
        let ms = self.run(|| {
            event_time(ctx, stream, &mut f, || Ok(stream.synchronize()?))
                .map(|d| d.as_secs_f64() * 1e3)
        })?;
        Ok(Stats::from_samples(ms))
    }

    /// Times `f` on the host's wall clock (whatever it does, including waiting for the GPU).
    ///
    /// # Errors
    /// The first error of `f`.
    pub fn wall<E>(&self, mut f: impl FnMut() -> Result<(), E>) -> Result<Stats, E> {
        let ms = self.run(|| {
            let t = Instant::now();
            f()?;
            Ok(t.elapsed().as_secs_f64() * 1e3)
        })?;
        Ok(Stats::from_samples(ms))
    }
}

/// Runs `queue` (GPU work queued on `stream`) between two CUDA events created in `ctx`,
/// then `wait` (which must wait for the stream, e.g. `stream.synchronize()`, and may name
/// the kernel in its error), and returns the GPU time between the events (resolution about
/// 0.5 µs, per the CUDA driver API's `cuEventElapsedTime`).
///
/// # Errors
/// The error of `queue` or `wait`, or a driver error of the events.
pub fn event_time<E: From<CudaError>>(
    ctx: &Context,
    stream: &Stream,
    queue: impl FnOnce() -> Result<(), E>,
    wait: impl FnOnce() -> Result<(), E>,
) -> Result<Duration, E> {
    let start = Event::new_in(ctx, EventFlags::DEFAULT)?;
    start.record(stream)?;
    queue()?;
    let end = Event::new_in(ctx, EventFlags::DEFAULT)?;
    end.record(stream)?;
    wait()?;
    Ok(end.elapsed(&start)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_quantiles() {
        let s = Stats::from_samples(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(
            (s.min_ms, s.q1_ms, s.median_ms, s.q3_ms, s.max_ms),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert_eq!(s.median(), Duration::from_millis(3));
        // Even counts: the upper median.
        let s = Stats::from_durations([1, 4, 2, 3].map(Duration::from_millis));
        assert_eq!(s.median_ms, 3.0);
    }

    #[test]
    fn run_warms_up_then_times() {
        let mut calls = 0;
        let timed = Repeat::new(3, 4)
            .run(|| {
                calls += 1;
                Ok::<_, ()>(calls)
            })
            .unwrap();
        assert_eq!(timed, [4, 5, 6, 7]);
        // Zero reps still times once; a minimum warm-up time adds runs.
        let mut calls = 0;
        let r = Repeat::new(0, 0).min_warmup(Duration::from_millis(5));
        let timed = r
            .run(|| {
                calls += 1;
                std::thread::sleep(Duration::from_millis(1));
                Ok::<_, ()>(())
            })
            .unwrap();
        assert_eq!(timed.len(), 1);
        assert!(calls >= 3, "{calls}");
        assert_eq!(
            Repeat::new(0, 2).wall(|| Ok::<_, ()>(())).unwrap().samples,
            2
        );
    }
}
