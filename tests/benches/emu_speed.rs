//! The CPU emulator's speed: thread steps per second (a *thread step* is one resumption of
//! an emulated thread: its start and once after each barrier or warp collective) for a
//! reduction over 2^20 elements, a 256×256 SGEMM (the tiled matmul probe) and a 512×512
//! Mandelbrot tile, with every check on and with none. A benchmark, not a test: printed, not
//! asserted (timings depend on the machine and its load); the results are still checked
//! against the CPU. Each probe runs `EMU_SPEED_REPS` times (default 7) and its median time is
//! printed. Run in release with `cargo xtask emu-speed` (`cargo bench -p tests --bench
//! emu_speed`); a word after `--` (`reduce`, `sgemm`, `mandelbrot`) runs the probes whose
//! name contains it.

use common::palette::Coloring;
use common::{Band, Complex, Palette, RenderJob, Viewport};
use cuda_emu::{self as emu, EmuOptions, EmuReport, HostBuffer};
use probes::primitives as prim;
use std::ffi::c_void;
use std::time::Instant;

#[path = "../tests/support/emulate.rs"]
#[macro_use]
mod emulate;
use emulate::{opts, run, slice, slice_mut};

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

    // Reduction: 2^20 u32, 256 blocks of 256 threads, 4096 elements per block.
    let n = 1usize << 20;
    let input: Vec<u32> = (0..n as u32).map(|i| i % 1000).collect();
    let expected = input.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    for (name, checks) in modes.into_iter().filter(|_| wanted("reduce")) {
        let options = EmuOptions { checks, ..opts() };
        let (s, report) = median(reps, || {
            let mut partial = vec![0u32; 256];
            let start = Instant::now();
            let report =
                emulate!(kernels::reduce::reduce_sum_u32, [256, 1, 1], [256, 1, 1], 0, &options;
                slice(&input), n / 256, slice_mut(&mut partial))
                .unwrap_or_else(|e| panic!("{e}"));
            let s = start.elapsed().as_secs_f64();
            assert_eq!(
                partial.iter().fold(0u32, |a, &v| a.wrapping_add(v)),
                expected
            );
            (s, report)
        });
        line("reduce_sum_u32, 2^20 elements", name, s, &report);
    }

    // SGEMM 256×256×256 with the tiled matmul of the GPU tests (16×16 tiles through shared
    // memory, 16×16 blocks of 256 threads, two barriers per tile step). The product kernel
    // `kernels::gemm::sgemm` does not run on the emulator: its shared-memory helpers
    // (`kernels/src/gemm.rs`, `smem`) take 32-bit shared-window addresses and panic on the
    // host.
    let dim = 256usize;
    let a: Vec<f32> = (0..dim * dim).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..dim * dim).map(|i| (i % 5) as f32 - 2.0).collect();
    let reference = tests::matmul_f32(&a, &b, dim, dim, dim);
    for (name, checks) in modes.into_iter().filter(|_| wanted("sgemm")) {
        let d = dim as u32;
        let (s, report) = median(reps, || {
            let mut c = vec![0f32; dim * dim];
            let options = EmuOptions {
                checks,
                buffers: vec![HostBuffer {
                    address: c.as_ptr() as usize,
                    bytes: 4 * c.len(),
                }],
                ..opts()
            };
            let start = Instant::now();
            let report = emulate!(prim::matmul_tiled_f32, [16, 16, 1], [16, 16, 1], 0, &options;
                slice(&a), slice(&b), c.as_mut_ptr(), d, d, d)
            .unwrap_or_else(|e| panic!("{e}"));
            let s = start.elapsed().as_secs_f64();
            // Small integers: every sum is exact, in any order.
            assert_eq!(tests::f32_bits(&c), tests::f32_bits(&reference));
            (s, report)
        });
        line("tiled sgemm 256x256x256", name, s, &report);
        println!(
            "{:>34} {:.3e} multiply-adds/s",
            "",
            (dim * dim * dim) as f64 / s
        );
    }

    // Mandelbrot: 512×512 f32, 256 iterations, 32×32 blocks of 16×16.
    let view = Viewport::from_center_scale(512, 512, Complex::new(-0.75, 0.0), 3.0)
        .unwrap_or_else(|e| panic!("{e}"));
    let job = RenderJob::new(&view, 1, 256, Coloring::discrete(Palette::Gray)).cast::<f32>();
    let band = Band {
        first_row: 0,
        rows: 512,
    };
    let norms: Vec<f32> = Vec::new();
    for (name, checks) in modes.into_iter().filter(|_| wanted("mandelbrot")) {
        let options = EmuOptions { checks, ..opts() };
        let (s, report) = median(reps, || {
            let mut counts = vec![0u32; 512 * 512];
            let start = Instant::now();
            let report = emulate!(kernels::mandelbrot::mandelbrot_f32, [32, 32, 1], [16, 16, 1],
                0, &options; job, band, slice_mut(&mut counts), slice(&norms))
            .unwrap_or_else(|e| panic!("{e}"));
            let s = start.elapsed().as_secs_f64();
            for (i, &c) in counts.iter().enumerate().step_by(997) {
                let (x, y) = ((i % 512) as u32, (i / 512) as u32);
                assert_eq!(c, job.escape_single(x, y).n, "pixel ({x}, {y})");
            }
            (s, report)
        });
        line("mandelbrot_f32 512x512, 256 iter", name, s, &report);
    }
}
