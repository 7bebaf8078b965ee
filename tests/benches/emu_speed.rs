//! The CPU emulator's speed: thread steps per second (a *thread step* is one resumption of
//! an emulated thread: its start and once after each barrier or warp collective) for a
//! reduction over 2^20 elements, a 256×256 SGEMM (the tiled matmul probe) and a 512×512
//! Mandelbrot tile (`tests/tests/support/speed_probes.rs`), with every check on and with
//! none. A benchmark, not a test: printed, not asserted (timings depend on the machine and
//! its load); the results are still checked against the CPU. Each probe runs
//! `EMU_SPEED_REPS` times (default 7) and its median time is printed. Run in release with
//! `cargo xtask emu-speed` (`cargo bench -p tests --bench emu_speed`); a word after `--`
//! (`reduce`, `sgemm`, `mandelbrot`) runs the probes whose name contains it.

use cuda_emu::{self as emu, EmuReport};

#[path = "../tests/support/emulate.rs"]
#[macro_use]
mod emulate;
#[path = "../tests/support/speed_probes.rs"]
mod speed_probes;

/// Runs `probe` `reps` times; returns the median of the seconds it reports (the launch's
/// wall time, without its checks of the result) and the last run's report (every run's
/// counts are the same: they do not depend on timing).
fn median(reps: usize, mut probe: impl FnMut() -> (f64, EmuReport)) -> (f64, EmuReport) {
    let mut times = Vec::with_capacity(reps);
    let mut report = None;
    for _ in 0..reps {
        let (s, r) = probe();
        times.push(s);
        report = Some(r);
    }
    times.sort_by(f64::total_cmp);
    (times[reps / 2], report.expect("at least one run"))
}

fn main() {
    let reps = match std::env::var("EMU_SPEED_REPS") {
        Err(_) => 7,
        Ok(v) => match v.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => panic!("EMU_SPEED_REPS={v:?}: expected a whole number of runs, at least 1"),
        },
    };
    fn line(what: &str, checks: &str, s: f64, report: &EmuReport) {
        println!(
            "{what:<34} {checks:<10} {s:>8.3} s  {:>9} threads  {:>9} thread steps  {:>9.3e} thread-steps/s  {:>9.3e} threads/s",
            report.threads,
            report.thread_steps,
            report.thread_steps as f64 / s,
            report.threads as f64 / s,
        );
    }
    let modes = [
        ("all checks", emu::EmuChecks::ALL),
        ("no checks", emu::EmuChecks::NONE),
    ];
    // `cargo bench` passes `--bench`; any other word picks the probes.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted =
        |probe: &str| filter.is_empty() || filter.iter().any(|f| probe.contains(f.as_str()));
    println!(
        "emulator speed, {} rayon workers, median of {reps} runs",
        std::thread::available_parallelism().map_or(1, usize::from)
    );

    let probes = speed_probes::Probes::new();
    for (name, checks) in modes.into_iter().filter(|_| wanted("reduce")) {
        let (s, report) = median(reps, || probes.reduce(checks));
        line("reduce_sum_u32, 2^20 elements", name, s, &report);
    }
    for (name, checks) in modes.into_iter().filter(|_| wanted("sgemm")) {
        let (s, report) = median(reps, || probes.sgemm(checks));
        line("tiled sgemm 256x256x256", name, s, &report);
        println!("{:>34} {:.3e} multiply-adds/s", "", 256f64.powi(3) / s);
    }
    for (name, checks) in modes.into_iter().filter(|_| wanted("mandelbrot")) {
        let (s, report) = median(reps, || probes.mandelbrot(checks));
        line("mandelbrot_f32 512x512, 256 iter", name, s, &report);
    }
}
