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
    bench::mandelbrot::{
        CudaCKernel, CudaCReference, bench_kernels, render_naive_cpu, total_iterations,
    },
    mandelbrot::{Image, Precision, RenderParams, render_cpu},
    timing::Repeat,
};
use std::time::Duration;

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
    #[arg(long, default_value_t = 8192, allow_negative_numbers = true, value_parser = parse_size)]
    pub size: u32,
    /// Iteration limit (1 to 10,000,000).
    #[arg(long, default_value_t = 1000, allow_negative_numbers = true, value_parser = super::parse_max_iter)]
    pub max_iter: u32,
    /// Timed repetitions per kernel (the median is reported), 1 to 1000.
    #[arg(long, default_value_t = 10, allow_negative_numbers = true, value_parser = super::parse_reps)]
    pub reps: u32,
    /// Untimed warm-up launches per kernel (0 to 1000).
    #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = super::parse_warmup)]
    pub warmup: u32,
    /// Arithmetic precision.
    #[arg(long, value_enum, default_value_t = BenchPrecision::Both)]
    pub precision: BenchPrecision,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BenchBackend::Gpu)]
    pub backend: BenchBackend,
    /// Skip the CUDA C reference kernels (built with nvcc when it is on PATH).
    #[arg(long)]
    pub no_cuda_c: bool,
    /// Also write the table as JSON to this file (checked before the benchmark runs; as
    /// mandelbrot's -o: a regular file replaced atomically, a read-only one refused, or a
    /// character device or FIFO written through).
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
}

/// Largest `--size`, pixels per side.
const MAX_BENCH_SIDE_PX: u32 = 32_768;

/// `--size`: 1 to [`MAX_BENCH_SIDE_PX`] pixels.
fn parse_size(s: &str) -> Result<u32, String> {
    super::parse_flag_u32_in(
        s,
        "--size",
        "the image side in pixels",
        1,
        MAX_BENCH_SIDE_PX,
    )
}

/// What the `--json` file is called in errors.
const JSON_FILE: &str = "JSON file";

/// Host memory the CPU benchmark may take for its images: 4 GiB.
const MAX_CPU_BENCH_BYTES: u64 = 4 << 30;

/// The benchmark views: (name, centre, scale).
pub const VIEWS: [(&str, f64, f64, f64); 4] = [
    ("full set", -0.75, 0.0, 3.0),
    ("seahorse valley", -0.7435, 0.1314, 0.02),
    ("elephant valley", 0.2925, 0.0149, 0.02),
    ("period-3 minibrot", -1.7549, 0.0, 0.04),
];

pub fn run(args: &BenchArgs) -> Result<()> {
    super::mandelbrot::check_size_and_iter(args.size, args.size, args.max_iter)?;
    // The JSON file's path is checked now, not after the benchmark.
    if let Some(path) = &args.json {
        super::OutputFile::check(path, JSON_FILE, ".json.part")?;
    }
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
    let cuda_c = match (&gpu, args.no_cuda_c) {
        (Some(gpu), false) => match CudaCReference::build(gpu) {
            Ok(c) => Some(c),
            Err(why) => {
                super::errln!("note: no CUDA C reference: {why}");
                None
            }
        },
        _ => None,
    };
    let mut rows_json = Vec::new();
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
        "{:<18} {:>4} {:>11} {:>11} {:>9} {:>13} {:>13} {:>8}  {:<9} {:>10} {:>10} {:>9} {:>8}",
        "view",
        "prec",
        "naive ms",
        "optim. ms",
        "colour ms",
        "naive Git/s",
        "optim. Git/s",
        "speedup",
        "counts",
        "C naive",
        "C card.",
        "vs best C",
        "C diff"
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
            // `color_t`: the GPU renderer's colour pass (`opt_t` is then its escape pass alone);
            // the CPU renders both in one loop.
            let (naive_t, opt_t, color_t, naive, opt) = match &gpu {
                Some(gpu) => {
                    let b = bench_kernels(gpu, &params, args.warmup, args.reps)
                        .with_context(|| format!("benchmarking {name} ({})", precision.name()))?;
                    (
                        b.naive.median(),
                        b.optimized.median(),
                        b.color.median(),
                        b.naive_image,
                        b.optimized_image,
                    )
                }
                None => {
                    let time = |f: &dyn Fn() -> Image| {
                        let mut image = None;
                        let stats = Repeat::new(args.warmup, args.reps).wall(|| {
                            image = Some(f());
                            Ok::<_, std::convert::Infallible>(())
                        });
                        let Ok(stats) = stats;
                        (stats.median(), image.expect("at least one repetition"))
                    };
                    let (nt, n) = time(&|| render_naive_cpu(&params));
                    let (ot, o) = time(&|| render_cpu(&params));
                    (nt, ot, Duration::ZERO, n, o)
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
            // The naive kernel colours too: compare it with both passes.
            let speedup = naive_t.as_secs_f64() / (opt_t + color_t).as_secs_f64();
            speedups.push(speedup);
            // The CUDA C references on the same view: medians, and how many pixels' escape
            // times differ from our naive kernel's.
            let mut c_cols = (
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
            );
            let mut c_json = serde_json::Value::Null;
            if let (Some(gpu), Some(c)) = (&gpu, &cuda_c) {
                let run = |k: CudaCKernel| {
                    c.bench(gpu, k, &params, args.warmup, args.reps)
                        .map(|(t, counts)| {
                            let diff = counts
                                .iter()
                                .zip(&naive.counts)
                                .filter(|(a, b)| a != b)
                                .count();
                            (t.median(), diff)
                        })
                };
                let (cn_t, cn_diff) = run(CudaCKernel::Naive).context("CUDA C naive kernel")?;
                let (cc_t, cc_diff) =
                    run(CudaCKernel::Cardioid).context("CUDA C cardioid kernel")?;
                let best = cn_t.min(cc_t);
                let ratio = best.as_secs_f64() / opt_t.as_secs_f64();
                let ratio_with_color = best.as_secs_f64() / (opt_t + color_t).as_secs_f64();
                c_cols = (
                    format!("{:.3}", cn_t.as_secs_f64() * 1e3),
                    format!("{:.3}", cc_t.as_secs_f64() * 1e3),
                    format!("{ratio:.2}x"),
                    format!("{}", cn_diff.max(cc_diff)),
                );
                c_json = serde_json::json!({
                    "cuda_c_naive_ms": cn_t.as_secs_f64() * 1e3,
                    "cuda_c_cardioid_ms": cc_t.as_secs_f64() * 1e3,
                    "best_cuda_c_ms": best.as_secs_f64() * 1e3,
                    "ratio_vs_cuda_c": ratio,
                    "ratio_vs_cuda_c_with_color_pass": ratio_with_color,
                    "cuda_c_naive_differing_px": cn_diff,
                    "cuda_c_cardioid_differing_px": cc_diff,
                });
            }
            rows_json.push(serde_json::json!({
                "view": name,
                "precision": precision.name(),
                "naive_ms": naive_t.as_secs_f64() * 1e3,
                "optimized_ms": opt_t.as_secs_f64() * 1e3,
                "color_pass_ms": color_t.as_secs_f64() * 1e3,
                "optimized_differing_px": naive
                    .counts
                    .iter()
                    .zip(&opt.counts)
                    .filter(|(a, b)| a != b)
                    .count(),
                "cuda_c": c_json,
            }));
            outln!(
                "{name:<18} {:>4} {:>11.3} {:>11.3} {:>9.3} {:>13.2} {:>13.2} {:>7.2}x  {:<9} {:>10} {:>10} {:>9} {:>8}",
                precision.name(),
                naive_t.as_secs_f64() * 1e3,
                opt_t.as_secs_f64() * 1e3,
                color_t.as_secs_f64() * 1e3,
                iterations / naive_t.as_secs_f64() / 1e9,
                iterations / opt_t.as_secs_f64() / 1e9,
                speedup,
                if identical { "identical" } else { "DIFFER" },
                c_cols.0,
                c_cols.1,
                c_cols.2,
                c_cols.3
            );
        }
    }
    outln!(
        "(optim. ms: the optimized escape loop; on the GPU the renderer's escape pass, escape \
         times only, and colour ms its colour pass; speedup: naive / (optim. + colour); Git/s: \
         the naive loop's iterations, Σ escape times, per second of kernel time)"
    );
    if cuda_c.is_some() {
        outln!(
            "(C naive / C card.: CUDA C kernels (nvcc -O3), escape times only, ms; vs best C: \
             the faster one's time / our escape pass's time, above 1 = ours faster; C diff: \
             pixels whose escape time differs from our naive kernel's)"
        );
    }
    if let Some(path) = &args.json {
        let doc = serde_json::json!({
            "device": device,
            "size_px": args.size,
            "max_iter": args.max_iter,
            "warmup": args.warmup,
            "reps": args.reps,
            "rows": rows_json,
        });
        let text = serde_json::to_string_pretty(&doc).context("formatting the JSON")?;
        super::OutputFile::open(path, JSON_FILE, ".json.part")?
            .write_bytes((text + "\n").as_bytes())?;
    }
    if !mismatches.is_empty() {
        bail!(
            "the optimized kernel changed results: {}",
            mismatches.join("; ")
        );
    }
    Ok(())
}
