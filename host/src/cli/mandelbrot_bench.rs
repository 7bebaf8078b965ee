//! `ferrocuda mandelbrot-bench`: the naive Mandelbrot kernel against the optimized one
//! (cardioid/bulb tests, periodicity checking), on the full view and three boundary-rich
//! zooms. Kernel times come from CUDA events (warm-up launches, then the median of the timed
//! repetitions); the escape times and colours of both kernels must be identical.

use super::outln;
use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use common::{Complex, Palette, Viewport};
use host::{
    Gpu,
    mandelbrot::{Precision, RenderParams, render_cpu, render_naive_cpu, total_iterations},
};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchPrecision {
    F32,
    F64,
    /// f32, then f64.
    Both,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchBackend {
    /// CUDA kernels, timed with CUDA events.
    Gpu,
    /// The same code on the CPU (rayon), timed with the wall clock (use a small --size).
    Cpu,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Image width and height in pixels (1 to 32768).
    #[arg(long, default_value_t = 8192)]
    pub size: u32,
    /// Iteration limit (1 to 10,000,000).
    #[arg(long, default_value_t = 1000, value_parser = super::parse_max_iter)]
    pub max_iter: u32,
    /// Timed repetitions per kernel (the median is reported), 1 to 1000.
    #[arg(long, default_value_t = 10, value_parser = super::parse_reps)]
    pub reps: u32,
    /// Untimed warm-up launches per kernel (0 to 1000).
    #[arg(long, default_value_t = 2, value_parser = super::parse_warmup)]
    pub warmup: u32,
    /// Arithmetic precision.
    #[arg(long, value_enum, default_value_t = BenchPrecision::Both)]
    pub precision: BenchPrecision,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BenchBackend::Gpu)]
    pub backend: BenchBackend,
}

/// Host memory the CPU benchmark may take for its images: 4 GiB.
const MAX_CPU_BENCH_BYTES: u64 = 4 << 30;

/// The benchmark views: (name, centre, scale).
pub const VIEWS: [(&str, f64, f64, f64); 4] = [
    ("full set", -0.75, 0.0, 3.0),
    ("seahorse valley", -0.7435, 0.1314, 0.02),
    ("elephant valley", 0.2925, 0.0149, 0.02),
    ("period-3 minibrot", -1.7549, 0.0, 0.04),
];

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if args.size == 0 || args.size > 32_768 {
        super::usage!(
            "--size {} is not allowed: it must be 1 to 32768 pixels",
            args.size
        );
    }
    super::mandelbrot::check_size_and_iter(args.size, args.size, args.max_iter)?;
    if args.backend == BenchBackend::Cpu {
        // The CPU run keeps both kernels' images (escape times and colours: 14 bytes per
        // pixel) to compare them.
        let bytes = 14 * u64::from(args.size).pow(2);
        if bytes > MAX_CPU_BENCH_BYTES {
            super::usage!(
                "--size {} with --backend cpu is not allowed: it needs {:.1} GiB for the two \
                 images, more than the {} GiB allowed; use --size {} or less",
                args.size,
                bytes as f64 / f64::from(1u32 << 30),
                MAX_CPU_BENCH_BYTES >> 30,
                ((MAX_CPU_BENCH_BYTES / 14) as f64).sqrt() as u64
            );
        }
    }
    let precisions: &[Precision] = match args.precision {
        BenchPrecision::F32 => &[Precision::F32],
        BenchPrecision::F64 => &[Precision::F64],
        BenchPrecision::Both => &[Precision::F32, Precision::F64],
    };
    let gpu = match args.backend {
        BenchBackend::Gpu => Some(Gpu::new(0).context("mandelbrot-bench --backend gpu")?),
        BenchBackend::Cpu => None,
    };
    let device = gpu.as_ref().map_or_else(
        || format!("CPU ({} threads)", rayon::current_num_threads()),
        |g| format!("GPU {}", g.name()),
    );
    outln!(
        "{device}: {0}x{0}, max_iter {1}, {2} warm-up + {3} timed runs per kernel (median)",
        args.size,
        args.max_iter,
        args.warmup,
        args.reps
    );
    outln!(
        "{:<18} {:>4} {:>11} {:>11} {:>13} {:>13} {:>8}  counts",
        "view",
        "prec",
        "naive ms",
        "optim. ms",
        "naive Git/s",
        "optim. Git/s",
        "speedup"
    );
    let mut mismatches = Vec::new();
    let mut speedups = Vec::new();
    for &(name, re, im, scale) in &VIEWS {
        let view = Viewport::from_center_scale(args.size, args.size, Complex::new(re, im), scale)
            .map_err(anyhow::Error::msg)?;
        for &precision in precisions {
            let params = RenderParams {
                view,
                max_iter: args.max_iter,
                precision,
                palette: Palette::Classic,
            };
            let (naive_t, opt_t, naive, opt) = match &gpu {
                Some(gpu) => {
                    let b = host::mandelbrot::bench_kernels(gpu, &params, args.warmup, args.reps)
                        .with_context(|| {
                        format!("benchmarking {name} ({})", precision.name())
                    })?;
                    (
                        median(b.naive),
                        median(b.optimized),
                        b.naive_image,
                        b.optimized_image,
                    )
                }
                None => {
                    let time = |f: &dyn Fn() -> host::mandelbrot::Image| {
                        let mut times = Vec::new();
                        let mut image = None;
                        for rep in 0..args.warmup + args.reps {
                            let t = Instant::now();
                            let im = f();
                            if rep >= args.warmup {
                                times.push(t.elapsed());
                            }
                            image = Some(im);
                        }
                        (median(times), image.expect("at least one repetition"))
                    };
                    let (nt, n) = time(&|| render_naive_cpu(&params));
                    let (ot, o) = time(&|| render_cpu(&params));
                    (nt, ot, n, o)
                }
            };
            let iterations = total_iterations(&naive.counts) as f64;
            let identical = naive == opt;
            if !identical {
                let differing = naive
                    .counts
                    .iter()
                    .zip(&opt.counts)
                    .filter(|(a, b)| a != b)
                    .count();
                mismatches.push(format!(
                    "{name} ({}): {differing} escape times differ",
                    precision.name()
                ));
            }
            let speedup = naive_t.as_secs_f64() / opt_t.as_secs_f64();
            speedups.push(speedup);
            outln!(
                "{name:<18} {:>4} {:>11.3} {:>11.3} {:>13.2} {:>13.2} {:>7.2}x  {}",
                precision.name(),
                naive_t.as_secs_f64() * 1e3,
                opt_t.as_secs_f64() * 1e3,
                iterations / naive_t.as_secs_f64() / 1e9,
                iterations / opt_t.as_secs_f64() / 1e9,
                speedup,
                if identical { "identical" } else { "DIFFER" }
            );
        }
    }
    outln!("(Git/s: the naive loop's iterations, Σ escape times, per second of kernel time)");
    if !mismatches.is_empty() {
        bail!(
            "the optimized kernel changed results: {}",
            mismatches.join("; ")
        );
    }
    Ok(())
}
