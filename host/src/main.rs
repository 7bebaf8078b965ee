//! `ferrocuda`: the command-line front end (Mandelbrot renderer, vector add, device info).

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use common::{Complex, Palette, Viewport};
use host::{
    Gpu, GpuError,
    gpu::driver_available,
    mandelbrot::{Precision, RenderParams, render_cpu},
};
use std::{path::PathBuf, process::ExitCode, time::Instant};

/// Largest image side in pixels.
const MAX_SIDE_PX: u32 = 65_536;
/// Largest image in pixels: 2^28 (16384²), 1.9 GB of escape times and colours in host memory.
const MAX_PIXELS: u64 = 1 << 28;
/// Largest iteration limit.
const MAX_ITER_LIMIT: u32 = 10_000_000;

#[derive(Parser)]
#[command(
    name = "ferrocuda",
    version,
    about = "Rust CUDA kernels: Mandelbrot renderer, vector workloads, device info"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render the Mandelbrot set to a PNG file.
    Mandelbrot(MandelbrotArgs),
    /// Add two f32 vectors on the GPU, check against the CPU, print time and bandwidth.
    VectorAdd(VectorAddArgs),
    /// Show the CUDA driver version and every GPU.
    Info,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// The GPU when a CUDA driver and device exist, otherwise the CPU.
    Auto,
    /// The GPU; an error if there is none.
    Gpu,
    /// The CPU (all cores, rayon).
    Cpu,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PrecisionArg {
    /// f32 while the pixel spacing allows it, else f64.
    Auto,
    F32,
    F64,
}

#[derive(clap::Args)]
struct MandelbrotArgs {
    /// Image width in pixels.
    #[arg(long, default_value_t = 1200)]
    width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 900)]
    height: u32,
    /// Centre of the view as RE,IM (e.g. -0.75,0).
    #[arg(long, value_name = "RE,IM", allow_hyphen_values = true, value_parser = parse_complex, conflicts_with = "corners")]
    center: Option<Complex<f64>>,
    /// Width of the view along the real axis, in complex-plane units (used with --center).
    #[arg(
        long,
        default_value_t = 3.5,
        allow_hyphen_values = true,
        value_parser = parse_finite,
        conflicts_with = "corners"
    )]
    scale: f64,
    /// The view's upper-left and lower-right corners, each RE,IM (instead of --center/--scale).
    #[arg(long, num_args = 2, value_names = ["UL", "LR"], allow_hyphen_values = true, value_parser = parse_complex)]
    corners: Option<Vec<Complex<f64>>>,
    /// Iteration limit (1 to 10,000,000).
    #[arg(long, default_value_t = 1000)]
    max_iter: u32,
    /// Arithmetic precision.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Auto)]
    precision: PrecisionArg,
    /// Colour palette: gray, classic, fire, ocean.
    #[arg(long, default_value = "classic", value_parser = parse_palette)]
    palette: Palette,
    /// Where to compute.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    backend: Backend,
    /// Output PNG file.
    #[arg(short, long, default_value = "mandelbrot.png")]
    output: PathBuf,
    /// Also render on the CPU and check that the images are identical (GPU backend only).
    #[arg(long)]
    verify: bool,
}

#[derive(clap::Args)]
struct VectorAddArgs {
    /// Number of elements (1 to 2^31).
    #[arg(long, default_value_t = 1 << 28)]
    len: u64,
    /// Timed repetitions (after one warm-up).
    #[arg(long, default_value_t = 20)]
    reps: u32,
}

fn parse_complex(s: &str) -> Result<Complex<f64>, String> {
    let (re, im) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}` is not a complex number: write RE,IM, e.g. -0.75,0.1"))?;
    let parse = |part: &str| -> Result<f64, String> {
        let v: f64 = part
            .trim()
            .parse()
            .map_err(|_| format!("`{part}` in `{s}` is not a number"))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!(
                "`{part}` in `{s}` is not allowed: coordinates must be finite"
            ))
        }
    };
    Ok(Complex::new(parse(re)?, parse(im)?))
}

fn parse_finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("`{s}` is not allowed: it must be a finite number")),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

fn parse_palette(s: &str) -> Result<Palette, String> {
    Palette::from_name(s).ok_or_else(|| {
        format!(
            "unknown palette `{s}`; allowed: {}",
            Palette::NAMES.join(", ")
        )
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Mandelbrot(args) => mandelbrot(&args),
        Command::VectorAdd(args) => vector_add(&args),
        Command::Info => info(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn mandelbrot(args: &MandelbrotArgs) -> Result<()> {
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

/// An output file written atomically: a temporary file in the same folder, renamed over the
/// destination only after the PNG is complete, so an error leaves no partial file (the
/// temporary file is removed when dropped; a process killed by a signal can leave a
/// `.ferrocuda-*.png.part` behind, never a truncated `.png`).
struct OutputFile {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl OutputFile {
    /// Checks the name and that the folder is writable (before any rendering work).
    fn create(path: &std::path::Path) -> Result<Self> {
        let is_png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if !is_png {
            bail!(
                "output file `{}` is not allowed: it must end in .png",
                path.display()
            );
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".ferrocuda-").suffix(".png.part");
        // tempfile creates files owner-only (0600); an image should get the usual mode
        // (0666 less the umask).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let temp = builder.tempfile_in(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot write the output file `{}`: folder `{}`: {}",
                path.display(),
                dir.display(),
                e.kind()
            )
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            temp,
        })
    }

    fn write_png(self, width: u32, height: u32, rgb: &[u8]) -> Result<()> {
        let file = std::io::BufWriter::new(self.temp.as_file());
        let encoder = image::codecs::png::PngEncoder::new(file);
        image::ImageEncoder::write_image(
            encoder,
            rgb,
            width,
            height,
            image::ExtendedColorType::Rgb8,
        )
        .with_context(|| format!("encoding the PNG for `{}`", self.path.display()))?;
        self.temp
            .persist(&self.path)
            .with_context(|| format!("cannot write the output file `{}`", self.path.display()))?;
        Ok(())
    }
}

fn vector_add(args: &VectorAddArgs) -> Result<()> {
    const MAX_LEN: u64 = 1 << 31;
    if args.len == 0 || args.len > MAX_LEN {
        bail!(
            "--len {} is not allowed: it must be 1 to {MAX_LEN}",
            args.len
        );
    }
    if args.reps == 0 {
        bail!("--reps 0 is not allowed: it must be at least 1");
    }
    let gpu = Gpu::new(0).context("vector-add runs on the GPU")?;
    let n = usize::try_from(args.len)?;
    // Inputs with non-trivial bits (not zeros): a[i] = i mod 1024 / 8, b[i] = 1/3 · (i mod 7).
    let a: Vec<f32> = (0..n).map(|i| (i % 1024) as f32 / 8.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 / 3.0).collect();
    let run = gpu.vector_add(&a, &b, args.reps)?;
    let expected = host::vector::add_cpu(&a, &b);
    let mismatches = expected
        .iter()
        .zip(&run.c)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    if mismatches > 0 {
        bail!("GPU result differs from the CPU in {mismatches} of {n} elements");
    }
    println!(
        "GPU {}: vector add f32, {n} elements: kernel {:.3} ms = {:.1} GB/s; device-to-device copy {:.3} ms = {:.1} GB/s; ratio {:.3}; result identical to the CPU",
        gpu.name(),
        run.kernel.as_secs_f64() * 1e3,
        run.kernel_bytes_per_s() / 1e9,
        run.memcpy.as_secs_f64() * 1e3,
        run.memcpy_bytes_per_s() / 1e9,
        run.kernel_bytes_per_s() / run.memcpy_bytes_per_s()
    );
    Ok(())
}

fn info() -> Result<()> {
    if !driver_available() {
        println!(
            "no CUDA driver found (libcuda.so could not be loaded); ferrocuda will render on the CPU"
        );
        return Ok(());
    }
    let (major, minor) = host::info::driver_version()?;
    println!("CUDA driver: version {major}.{minor}");
    let devices = host::info::devices()?;
    if devices.is_empty() {
        println!("no CUDA devices found");
    }
    for d in devices {
        println!("{d}");
    }
    Ok(())
}
