//! Timing: the one repetition loop ([`Repeat::run_interleaved`], of which [`Repeat::run`] is
//! the one-closure case) and the one statistics type ([`Stats`]) used by every benchmark, CLI
//! command and example of this crate.
//!
//! A repetition is timed either on the GPU, between two CUDA events on the stream
//! ([`event_time`], [`Repeat::events`]), or on the host's wall clock ([`Repeat::wall`]).
//! Times are in milliseconds.
//!
//! Implementations compared with each other are best timed interleaved
//! ([`Repeat::run_interleaved`], [`Repeat::events_interleaved`]): one sample of each in
//! turn, repetition after repetition, so that a drift of the GPU's clocks or temperature
//! during the run falls on all of them alike rather than on whichever was timed last.

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

    /// The loop for one closure: calls `once` for the warm-up (results dropped) and then for
    /// each timed run, and returns the timed runs' results in order. `once` measures itself
    /// (with [`event_time`] or the wall clock) and may return several times per run. (This
    /// is [`Repeat::run_interleaved`] with one closure.)
    ///
    /// # Errors
    /// The first error of `once`.
    pub fn run<T, E>(&self, mut once: impl FnMut() -> Result<T, E>) -> Result<Vec<T>, E> {
        match self.run_interleaved(&mut [&mut once]).pop() {
            Some(result) => result,
            None => unreachable!("one closure gives one result"),
        }
    }

    /// THE loop for several closures timed against each other (implementations of one
    /// workload): [`Repeat::run`]'s warm-up and repetitions, in rounds that call each
    /// closure once, in slice order. The warm-up is `warmup` rounds, and more until the
    /// rounds together have lasted `min_warmup` (so each closure warms up `warmup` times
    /// at least, and the last closure's warm-up ends just before the first one's first
    /// timed run); then `reps` timed rounds (0 counts as 1). Results are dropped in the
    /// warm-up and kept in the timed rounds.
    ///
    /// Returns, for each closure in slice order, its timed results in order (exactly
    /// `reps.max(1)` of them), or its first error: a closure that fails (in the warm-up or
    /// a timed round) is not called again, and the others go on. With every closure failed
    /// the loop stops early, `min_warmup` or not.
    pub fn run_interleaved<T, E>(
        &self,
        once: &mut [&mut dyn FnMut() -> Result<T, E>],
    ) -> Vec<Result<Vec<T>, E>> {
        let mut out: Vec<Result<Vec<T>, E>> = once.iter().map(|_| Ok(Vec::new())).collect();
        let warm_start = Instant::now();
        let mut rounds = 0;
        while rounds < self.warmup || warm_start.elapsed() < self.min_warmup {
            if !round(once, &mut out, false) {
                return out;
            }
            rounds += 1;
        }
        for _ in 0..self.reps.max(1) {
            if !round(once, &mut out, true) {
                break;
            }
        }
        out
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

    /// Times each closure of `fs` (each queues GPU work on `stream`, in `ctx`) as
    /// [`Repeat::events`] does, interleaved ([`Repeat::run_interleaved`]): every
    /// repetition times one run of each closure in turn, in slice order, between its own
    /// two CUDA events, waiting for the stream after each.
    ///
    /// Returns, for each closure in slice order, the statistics of its `reps.max(1)` timed
    /// runs, or its first error (of the closure, or a driver error of its events or the
    /// wait); a failed closure is dropped from later rounds and the others go on.
    pub fn events_interleaved<E: From<CudaError>>(
        &self,
        ctx: &Context,
        stream: &Stream,
        fs: &mut [&mut dyn FnMut() -> Result<(), E>],
    ) -> Vec<Result<Stats, E>> {
        let mut timed: Vec<_> = fs
            .iter_mut()
            .map(|f| {
                move || {
                    event_time(ctx, stream, &mut **f, || Ok(stream.synchronize()?))
                        .map(|d| d.as_secs_f64() * 1e3)
                }
            })
            .collect();
        let mut once: Vec<&mut dyn FnMut() -> Result<f64, E>> = timed
            .iter_mut()
            .map(|f| f as &mut dyn FnMut() -> Result<f64, E>)
            .collect();
        self.run_interleaved(&mut once)
            .into_iter()
            .map(|ms| ms.map(Stats::from_samples))
            .collect()
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

/// One round of [`Repeat::run_interleaved`]: calls each closure of `once` whose slot in
/// `out` is still `Ok`, in order, pushing its result there if `keep` and putting its error
/// in place of its results if it fails. Returns whether any call succeeded.
fn round<T, E>(
    once: &mut [&mut dyn FnMut() -> Result<T, E>],
    out: &mut [Result<Vec<T>, E>],
    keep: bool,
) -> bool {
    let mut any_ok = false;
    for (f, slot) in once.iter_mut().zip(out.iter_mut()) {
        let Ok(results) = slot else { continue };
        match f() {
            Ok(t) => {
                if keep {
                    results.push(t);
                }
                any_ok = true;
            }
            Err(e) => *slot = Err(e),
        }
    }
    any_ok
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
    use std::cell::RefCell;

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
        // Zero reps still times once; a minimum warm-up time adds runs until it has passed
        // (and no more: each run sleeps at least 1 ms, so 5 suffice). Sleeps only ever
        // overrun, so these bounds hold on a loaded machine.
        let mut starts = Vec::new();
        let begin = Instant::now();
        let r = Repeat::new(0, 0).min_warmup(Duration::from_millis(5));
        let timed = r
            .run(|| {
                starts.push(Instant::now());
                std::thread::sleep(Duration::from_millis(1));
                Ok::<_, ()>(())
            })
            .unwrap();
        assert_eq!(timed.len(), 1);
        assert!((2..=6).contains(&starts.len()), "{}", starts.len());
        assert!(starts[starts.len() - 1] - begin >= Duration::from_millis(5));
        assert_eq!(
            Repeat::new(0, 2).wall(|| Ok::<_, ()>(())).unwrap().samples,
            2
        );
        // The first error ends the loop, in the warm-up or a timed run.
        for fail_at in [2, 5] {
            let mut calls = 0;
            let r = Repeat::new(3, 4).run(|| {
                calls += 1;
                if calls == fail_at { Err(calls) } else { Ok(()) }
            });
            assert_eq!((r, calls), (Err(fail_at), fail_at));
        }
    }

    /// A closure for the interleaved tests: logs `id` in `order` at each call and returns
    /// its own call count, or `Err(id)` at call `fail_at`.
    fn logging<'a>(
        id: usize,
        order: &'a RefCell<Vec<usize>>,
        fail_at: Option<u32>,
    ) -> impl FnMut() -> Result<u32, usize> + 'a {
        let mut calls = 0;
        move || {
            order.borrow_mut().push(id);
            calls += 1;
            if Some(calls) == fail_at {
                Err(id)
            } else {
                Ok(calls)
            }
        }
    }

    #[test]
    fn interleaved_warms_up_every_closure_then_times_them_in_turn() {
        let order = RefCell::new(Vec::new());
        let (mut f0, mut f1, mut f2) = (
            logging(0, &order, None),
            logging(1, &order, None),
            logging(2, &order, None),
        );
        let out = Repeat::new(2, 3).run_interleaved(&mut [&mut f0, &mut f1, &mut f2]);
        // Two warm-up rounds, then three timed rounds, each calling 0, 1, 2 in turn.
        assert_eq!(*order.borrow(), [0, 1, 2].repeat(5));
        assert_eq!(
            out,
            [Ok(vec![3, 4, 5]), Ok(vec![3, 4, 5]), Ok(vec![3, 4, 5])]
        );
        // Zero reps still times one round.
        order.borrow_mut().clear();
        let (mut g0, mut g1) = (logging(0, &order, None), logging(1, &order, None));
        let out = Repeat::new(0, 0).run_interleaved(&mut [&mut g0, &mut g1]);
        assert_eq!(
            (out, order.borrow().clone()),
            (vec![Ok(vec![1]), Ok(vec![1])], vec![0, 1])
        );
    }

    #[test]
    fn interleaved_drops_a_failed_closure_and_goes_on_with_the_others() {
        let order = RefCell::new(Vec::new());
        // Closure 1 fails at its 3rd call (the 2nd timed round); closure 2 in the warm-up.
        let (mut f0, mut f1, mut f2) = (
            logging(0, &order, None),
            logging(1, &order, Some(3)),
            logging(2, &order, Some(1)),
        );
        let out = Repeat::new(1, 3).run_interleaved(&mut [&mut f0, &mut f1, &mut f2]);
        assert_eq!(*order.borrow(), [0, 1, 2, 0, 1, 0, 1, 0]);
        assert_eq!(out, [Ok(vec![2, 3, 4]), Err(1), Err(2)]);
        // All failed: no endless warm-up, whatever `min_warmup` says; no closures: nothing.
        let r = Repeat::new(0, 2).min_warmup(Duration::from_secs(3600));
        let mut h = logging(0, &order, Some(1));
        assert_eq!(r.run_interleaved(&mut [&mut h]), [Err(0)]);
        assert!(r.run_interleaved::<(), ()>(&mut []).is_empty());
    }

    #[test]
    fn interleaved_min_warmup_adds_whole_rounds() {
        let order = RefCell::new(Vec::new());
        let starts = RefCell::new(Vec::new());
        let slow = |id| {
            let mut f = logging(id, &order, None);
            let starts = &starts;
            move || {
                starts.borrow_mut().push(Instant::now());
                std::thread::sleep(Duration::from_millis(1));
                f()
            }
        };
        let (mut f0, mut f1) = (slow(0), slow(1));
        let begin = Instant::now();
        let r = Repeat::new(0, 1).min_warmup(Duration::from_millis(5));
        let out = r.run_interleaved(&mut [&mut f0, &mut f1]);
        // Every round calls both closures, in order. The warm-up goes on until 5 ms have
        // passed: at least one round, and at most 3, as a round sleeps at least 2 ms (sleeps
        // only ever overrun, so this holds on a loaded machine). Then the timed round.
        let order = order.borrow().clone();
        let rounds = order.len() / 2;
        assert!((2..=4).contains(&rounds), "{order:?}");
        assert_eq!(order, [0, 1].repeat(rounds));
        let timed_start = starts.borrow()[2 * (rounds - 1)];
        assert!(timed_start - begin >= Duration::from_millis(5));
        let calls = rounds as u32;
        assert_eq!(out, [Ok(vec![calls]), Ok(vec![calls])]);
    }
}
