//! `ferrocuda mandelbrot`: render the Mandelbrot set to a PNG file.

use super::{OutputFile, parse_complex, parse_finite, parse_palette};
use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use common::{Complex, Palette, Viewport};
use host::{
    Gpu, GpuError,
    mandelbrot::{Precision, RenderParams, render_cpu},
};
use std::{path::PathBuf, time::Instant};

/// Largest image side in pixels.
const MAX_SIDE_PX: u32 = 65_536;
/// Largest image in pixels: 2^28 (16384²), 1.9 GB of escape times and colours in host memory.
const MAX_PIXELS: u64 = 1 << 28;
/// Largest iteration limit.
const MAX_ITER_LIMIT: u32 = 10_000_000;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The GPU when a CUDA driver and device exist, otherwise the CPU.
    Auto,
    /// The GPU; an error if there is none.
    Gpu,
    /// The CPU (all cores, rayon).
    Cpu,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// f32 while the pixel spacing allows it, else f64.
    Auto,
    F32,
    F64,
}

#[derive(clap::Args)]
pub struct MandelbrotArgs {
    /// Image width in pixels.
    #[arg(long, default_value_t = 1200)]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 900)]
    pub height: u32,
    /// Centre of the view as RE,IM (e.g. -0.75,0).
    #[arg(long, value_name = "RE,IM", allow_hyphen_values = true, value_parser = parse_complex, conflicts_with = "corners")]
    pub center: Option<Complex<f64>>,
    /// Width of the view along the real axis, in complex-plane units (used with --center).
    #[arg(
        long,
        default_value_t = 3.5,
        allow_hyphen_values = true,
        value_parser = parse_finite,
        conflicts_with = "corners"
    )]
    pub scale: f64,
    /// The view's upper-left and lower-right corners, each RE,IM (instead of --center/--scale).
    #[arg(long, num_args = 2, value_names = ["UL", "LR"], allow_hyphen_values = true, value_parser = parse_complex)]
    pub corners: Option<Vec<Complex<f64>>>,
    /// Iteration limit (1 to 10,000,000).
    #[arg(long, default_value_t = 1000)]
    pub max_iter: u32,
    /// Arithmetic precision.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Auto)]
    pub precision: PrecisionArg,
    /// Colour palette: gray, classic, fire, ocean.
    #[arg(long, default_value = "classic", value_parser = parse_palette)]
    pub palette: Palette,
    /// Where to compute.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Output PNG file.
    #[arg(short, long, default_value = "mandelbrot.png")]
    pub output: PathBuf,
    /// Also render on the CPU and check that the images are identical (GPU backend only).
    #[arg(long)]
    pub verify: bool,
}

pub fn run(args: &MandelbrotArgs) -> Result<()> {
    let (width, height) = (args.width, args.height);
    if width == 0 || height == 0 || width > MAX_SIDE_PX || height > MAX_SIDE_PX {
        bail!(
            "image size {width}x{height} is not allowed: width and height must be 1 to {MAX_SIDE_PX} pixels"
        );
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        bail!(
            "image size {width}x{height} ({} pixels) is too large: at most {MAX_PIXELS} pixels (16384x16384)",
            u64::from(width) * u64::from(height)
        );
    }
    if args.max_iter == 0 || args.max_iter > MAX_ITER_LIMIT {
        bail!(
            "--max-iter {} is not allowed: it must be 1 to {MAX_ITER_LIMIT}",
            args.max_iter
        );
    }
    let view = match &args.corners {
        Some(c) => Viewport::from_corners(width, height, c[0], c[1]),
        None => Viewport::from_center_scale(
            width,
            height,
            args.center.unwrap_or(Complex::new(-0.75, 0.0)),
            args.scale,
        ),
    }
    .map_err(anyhow::Error::msg)?;
    let (auto_precision, f64_too_coarse) = Precision::for_view(&view);
    let precision = match args.precision {
        PrecisionArg::Auto => auto_precision,
        PrecisionArg::F32 => Precision::F32,
        PrecisionArg::F64 => Precision::F64,
    };
    if precision == Precision::F32 && auto_precision == Precision::F64 {
        eprintln!(
            "warning: pixel spacing {:e} is too fine for f32 at this centre; use --precision f64 or auto",
            view.min_step()
        );
    } else if f64_too_coarse {
        eprintln!(
            "warning: pixel spacing {:e} is below f64 resolution at this centre; the image will be blocky",
            view.min_step()
        );
    }
    let output = OutputFile::create(&args.output)?;
    let params = RenderParams {
        view,
        max_iter: args.max_iter,
        precision,
        palette: args.palette,
    };

    let gpu = match args.backend {
        Backend::Cpu => None,
        Backend::Gpu => Some(Gpu::new(0).context("--backend gpu was requested")?),
        Backend::Auto => match Gpu::new(0) {
            Ok(gpu) => Some(gpu),
            Err(err @ (GpuError::NoDriver | GpuError::NoDevice)) => {
                eprintln!("note: {err}; rendering on the CPU");
                None
            }
            Err(err) => return Err(err).context("opening the GPU"),
        },
    };
    let start = Instant::now();
    let image = match &gpu {
        Some(gpu) => {
            let (image, t) = gpu.render_mandelbrot(&params)?;
            println!(
                "GPU {}: {width}x{height}, max_iter {}, {}: kernel {:.2} ms, render {:.2} ms",
                gpu.name(),
                params.max_iter,
                precision.name(),
                t.kernel.as_secs_f64() * 1e3,
                t.total.as_secs_f64() * 1e3
            );
            if args.verify {
                let cpu_start = Instant::now();
                let cpu = render_cpu(&params);
                let cpu_ms = cpu_start.elapsed().as_secs_f64() * 1e3;
                let differing = cpu
                    .counts
                    .iter()
                    .zip(&image.counts)
                    .filter(|(a, b)| a != b)
                    .count();
                if cpu != image {
                    bail!(
                        "GPU and CPU images differ: {differing} of {} escape times differ",
                        cpu.counts.len()
                    );
                }
                println!(
                    "verify: CPU render ({cpu_ms:.0} ms) is identical (escape times and colours)"
                );
            }
            image
        }
        None => {
            let image = render_cpu(&params);
            println!(
                "CPU ({} threads): {width}x{height}, max_iter {}, {}: render {:.2} ms",
                rayon::current_num_threads(),
                params.max_iter,
                precision.name(),
                start.elapsed().as_secs_f64() * 1e3
            );
            image
        }
    };
    let encode_start = Instant::now();
    output.write_png(image.width_px, image.height_px, &image.rgb)?;
    println!(
        "wrote {} (PNG encode {:.0} ms, end to end {:.0} ms)",
        args.output.display(),
        encode_start.elapsed().as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
