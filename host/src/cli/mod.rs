//! The subcommands of the `ferrocuda` binary (one module each) and the argument parsers and
//! output helpers they share.

pub mod bench;
pub mod decimal;
pub mod deep;
pub mod device;
pub mod info;
pub mod mandelbrot;
pub mod mandelbrot_bench;
mod output;
mod parse;
pub mod vector;
pub mod zoom;

use anyhow::{Result, bail};
use std::{
    fmt,
    io::{IsTerminal, Write},
    sync::{
        Arc,
        atomic::{AtomicI32, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

pub(crate) use output::read_bounded;
pub use output::{OutputFile, encode_png, os_message};
pub use parse::{
    DEFAULT_MAX_ITER, MAX_ITER_LIMIT, MAX_SIDE_PX, parse_complex, parse_fps, parse_frame_side,
    parse_max_iter, parse_palette, parse_reps, parse_side, parse_vector_len, parse_warmup,
};
use parse::{parse_flag_u32_in, parse_u32_in};

/// `eprintln!` that never panics: a line on standard error, where a write error (a closed or
/// full stderr, `2>/dev/full`) is ignored, so it never costs the output file.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
pub(crate) use errln;

/// Progress of a long run on stderr: in a terminal an indicatif bar redrawn four times a
/// second (elapsed time, position, ETA); otherwise, for runs longer than 10 s, one line every
/// 10 s. Work is counted with [`Progress::inc`] or through a counter read by [`Progress::watch`].
/// Dropping it stops the display at once: the display thread waits on a channel that the drop
/// closes, never in a fixed sleep.
pub struct Progress {
    bar: indicatif::ProgressBar,
    done: Arc<AtomicU64>,
    /// Closed (dropped) to stop the display thread.
    stop: Option<std::sync::mpsc::Sender<()>>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

/// How often the progress display is updated.
const PROGRESS_TICK: Duration = Duration::from_millis(250);

impl Progress {
    /// Progress over `len` `unit`s (e.g. "rows").
    pub fn new(len: u64, unit: &'static str) -> Self {
        Self::with_counter(len, unit, None, PROGRESS_TICK)
    }

    /// Progress whose position is read from `counter` (an absolute count, e.g. the samples
    /// a CPU render has finished), `per_unit` counts to a `unit` (e.g. 16 samples to a
    /// pixel), on top of [`Progress::inc`].
    pub fn watch(len: u64, unit: &'static str, counter: &'static AtomicU64, per_unit: u64) -> Self {
        Self::with_counter(len, unit, Some((counter, per_unit)), PROGRESS_TICK)
    }

    fn with_counter(
        len: u64,
        unit: &'static str,
        counter: Option<(&'static AtomicU64, u64)>,
        tick: Duration,
    ) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let bar = if terminal {
            let style = indicatif::ProgressStyle::with_template(&format!(
                "{{elapsed_precise}} [{{wide_bar}}] {{pos}}/{{len}} {unit}, ETA {{eta}}"
            ))
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            indicatif::ProgressBar::new(len).with_style(style)
        } else {
            indicatif::ProgressBar::hidden()
        };
        let done = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let base = counter.map_or(0, |(c, _)| c.load(Ordering::Relaxed));
        let ticker = {
            let (bar, done) = (bar.clone(), done.clone());
            std::thread::spawn(move || {
                let start = Instant::now();
                let mut last_line = start;
                // Wakes every `tick`, or at once when the sender is dropped.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(tick)
                {
                    let pos = done.load(Ordering::Relaxed)
                        + counter.map_or(0, |(c, per_unit)| {
                            c.load(Ordering::Relaxed).saturating_sub(base) / per_unit.max(1)
                        });
                    let pos = pos.min(len);
                    if terminal {
                        bar.set_position(pos);
                    } else if last_line.elapsed() >= Duration::from_secs(10) {
                        last_line = Instant::now();
                        errln!(
                            "progress: {pos}/{len} {unit} ({:.0}%), {:.0} s",
                            100.0 * pos as f64 / len.max(1) as f64,
                            start.elapsed().as_secs_f64()
                        );
                    }
                }
            })
        };
        Self {
            bar,
            done,
            stop: Some(stop),
            ticker: Some(ticker),
        }
    }

    /// Counts `n` more units done.
    pub fn inc(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // Closing the channel wakes the display thread at once.
        drop(self.stop.take());
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

/// Writes a line to standard output; a closed pipe becomes [`StdoutClosed`] (the program then
/// ends quietly), any other write error a one-line error.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::write_line(format_args!($($arg)*))?
    };
}
pub(crate) use outln;

/// Standard output was closed by its reader (e.g. `| head -1`).
#[derive(Debug, thiserror::Error)]
#[error("standard output was closed")]
pub struct StdoutClosed;

/// A value that is not allowed (exit status 2, as for the argument parser's own errors).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// `bail!` for a [`UsageError`].
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::cli::UsageError(format!($($arg)*))))
    };
}
pub(crate) use usage;

pub fn write_line(args: fmt::Arguments<'_>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => bail!("cannot write to standard output: {e}"),
    }
}

/// The signal that stopped the program, if one did (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Its `stop` is set together with [`SIGNAL`] (render loops poll it, also inside a band on
/// the CPU); its `samples_done` feeds the progress display.
pub static CONTROL: host::mandelbrot::RenderControl = host::mandelbrot::RenderControl::new();

/// Stopped by a signal (Ctrl-C, Ctrl-\\, `kill`, a closed terminal); the exit status is
/// 128 + signal.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by {}: stopped; {written}", signal_name(*.signal))]
pub struct Interrupted {
    /// The signal number.
    pub signal: i32,
    /// What was left on disk.
    pub written: String,
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGINT => "SIGINT (Ctrl-C)",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        signal_hook::consts::SIGQUIT => "SIGQUIT (Ctrl-\\)",
        _ => "a signal",
    }
}

/// Catches SIGINT, SIGTERM, SIGHUP and SIGQUIT (once per process; SIGQUIT would otherwise
/// end the program with a core dump and leave its temporary files): the first one sets `CONTROL.stop`, and a
/// line on stderr says at once that the program is stopping; render loops then stop within
/// about a second, remove their temporary files and exit with status 128 + signal.
pub fn catch_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(mut signals) =
            signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])
        else {
            return;
        };
        std::thread::spawn(move || {
            for signal in signals.forever() {
                if SIGNAL
                    .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    CONTROL.stop.store(true, Ordering::SeqCst);
                    errln!("\n{}: stopping", signal_name(signal));
                }
            }
        });
    });
}

/// Fails with [`Interrupted`] once a signal was caught; `written` says what is on disk.
pub fn check_interrupt_with(written: impl FnOnce() -> String) -> Result<()> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => Ok(()),
        signal => Err(Interrupted {
            signal,
            written: written(),
        }
        .into()),
    }
}

/// [`check_interrupt_with`] for a command that writes one file only on success.
pub fn check_interrupt() -> Result<()> {
    check_interrupt_with(|| "no output file written".to_owned())
}

/// The exit status and whether to print the error, for an error returned by a subcommand.
pub fn exit_status(err: &anyhow::Error) -> (u8, bool) {
    if err.is::<StdoutClosed>() || err.chain().any(|c| c.is::<StdoutClosed>()) {
        // Like a program killed by SIGPIPE, but after cleaning up: quietly.
        return (141, false);
    }
    if let Some(i) = err.downcast_ref::<Interrupted>() {
        return (u8::try_from(128 + i.signal).unwrap_or(130), true);
    }
    if err.chain().any(|c| c.is::<UsageError>()) {
        return (2, true);
    }
    (1, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N17: stopping the progress display is an event, not the end of a sleep: with an
    /// hour-long tick, dropping it still returns at once (the old display slept a fixed
    /// 250 ms per tick and was joined, so every render took at least that long).
    #[test]
    fn progress_stops_without_waiting_for_a_tick() {
        let progress = Progress::with_counter(10, "rows", None, Duration::from_secs(3600));
        progress.inc(3);
        let t = Instant::now();
        drop(progress);
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "dropping the progress display waited {:?} (for its tick)",
            t.elapsed()
        );
    }
}
