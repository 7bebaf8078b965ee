//! `ferrocuda mandelbrot`: render the Mandelbrot set to a PNG file.
//!
//! The image is rendered in bands of rows and each band is streamed into the PNG encoder (on
//! its own thread, overlapping the next band's render), so memory stays bounded whatever the
//! size: sides up to 65536 pixels (2^32 pixels). With several GPUs (`--gpus`), each renders
//! bands as it becomes free and the bands are put back in order before encoding. Ctrl-C stops
//! between bands and removes the temporary file.

use super::decimal::{DecimalPoint, parse_decimal_text, parse_scale};
use super::device::{Backend, open_pool};
use super::{OutputFile, check_interrupt, outln, parse_complex, parse_palette};
use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use common::{Band, Complex, Palette, RenderJob, Viewport, ViewportError, palette::Shading};
use host::{
    Gpu,
    deep::Decimal,
    mandelbrot::{
        BandImage, BandJob, BandRenderer, GpuRenderer, Precision, RenderControl, RenderParams,
        Style,
        pool::{GpuPool, GpuSelection, PoolError},
        precision::{self, Arithmetic},
        rows_per_launch,
    },
};
use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

pub use super::{MAX_ITER_LIMIT, MAX_SIDE_PX};
/// Largest palette cycle in iterations.
const MAX_CYCLE_ITERS: u32 = 1_000_000;
/// Pixels per band by default: 2^23 (32768 × 256), 88 MiB of device buffers, 24 MiB of
/// colours per band in host memory. Bands of colours below glibc's largest mmap threshold
/// (32 MiB) reuse freed heap memory instead of faulting in fresh pages for every band: on an
/// H200 machine (16 cores) a 32768² render took 1.3–1.8 s end to end with 256-row bands and
/// 2.3–2.8 s with 1024-row bands.
pub const DEFAULT_BAND_PX: u64 = 1 << 23;
/// Most host memory the bands of one render may hold at once: 1.5 GiB, counted by
/// [`BandMemory`]. `--band-rows` is refused above it and the default rows are capped by it
/// (device buffers are checked against the GPU's free memory when they are allocated).
pub const MAX_BAND_HOST_BYTES: u64 = 3 << 29;

/// Where the bands of a render are rendered, as far as their host memory is concerned.
#[derive(Clone, Copy, Debug)]
pub enum BandRenderers {
    /// The CPU: one band rendered at a time.
    Cpu,
    /// A pool of `count` GPUs whose sink lets at most `reorder_window` bands past the next
    /// one start ([`GpuPool::reorder_window`]).
    Gpus { count: u64, reorder_window: u64 },
}

/// What the bands of one `mandelbrot` render hold in host memory at their peak, per image
/// pixel of a band: the one rule `--band-rows` and the default rows are bounded by
/// ([`MAX_BAND_HOST_BYTES`]). Every buffer a band has on the host is counted:
///
/// - every band in flight holds its colours, 3 bytes a pixel ([`BandImage::rgb`]). On the
///   CPU three bands are in flight: one being rendered, one queued for the PNG encoder and
///   one being encoded. On GPUs, the bands the pool may render ahead (its reorder window)
///   and the same two;
/// - the band being rendered on the CPU holds escape times, 4 bytes a pixel, for f32/f64
///   (`host::mandelbrot::cpu`), and escape times and `|z|²` of every sample, 8 bytes a
///   sample, for perturbation (`PerturbedJob::render_band_cpu_until`);
/// - each GPU holds page-locked memory for colours, 3 bytes per element of its band
///   buffers, which hold every sample of a perturbed band (`GpuRenderer::new`); perturbed
///   bands are coloured on the GPU, so their samples' escape times and `|z|²` stay there;
/// - with `--verify`, every band in flight keeps its escape times (and `|z|²` of perturbed
///   samples), and the check renders one band on the CPU again.
#[derive(Clone, Copy, Debug)]
pub struct BandMemory {
    /// Samples per pixel of a perturbed image (1, 4 or 16); `None` for f32/f64.
    pub perturbed_samples: Option<u64>,
    /// Where the bands are rendered.
    pub renderers: BandRenderers,
    /// Whether `--verify` checks each GPU band on the CPU.
    pub verify: bool,
}

impl BandMemory {
    /// Bytes of colour per pixel of a band.
    const COLOR_BYTES: u64 = 3;

    /// Escape times (and `|z|²` of every sample, for perturbation) per pixel.
    fn count_bytes(self) -> u64 {
        match self.perturbed_samples {
            Some(samples) => 8 * samples,
            None => 4,
        }
    }

    /// Bands holding colours at once.
    fn bands_in_flight(self) -> u64 {
        match self.renderers {
            BandRenderers::Cpu => 3,
            BandRenderers::Gpus { reorder_window, .. } => reorder_window + 2,
        }
    }

    /// Host bytes per pixel of a band at the peak of a render.
    pub fn bytes_per_px(self) -> u64 {
        let colors = self.bands_in_flight() * Self::COLOR_BYTES;
        let counts = self.count_bytes();
        match self.renderers {
            BandRenderers::Cpu => colors + counts,
            BandRenderers::Gpus { count, .. } => {
                let staging = Self::COLOR_BYTES * self.perturbed_samples.unwrap_or(1);
                let verify = if self.verify {
                    // Kept by every band in flight (the GPU's copies among them), and the
                    // check's own CPU band.
                    self.bands_in_flight() * counts + counts + Self::COLOR_BYTES
                } else {
                    0
                };
                colors + count * staging + verify
            }
        }
    }

    /// What [`BandMemory::bytes_per_px`] counts, in words.
    fn describe(self) -> String {
        let counts = match self.perturbed_samples {
            Some(1) => "escape times and |z|² of 1 sample per pixel".to_owned(),
            Some(s) => format!("escape times and |z|² of {s} samples per pixel"),
            None => "escape times".to_owned(),
        };
        let bands = self.bands_in_flight();
        match self.renderers {
            BandRenderers::Cpu => {
                format!("{counts} while a band renders, and the colours of {bands} bands in flight")
            }
            BandRenderers::Gpus { count, .. } => {
                let verify = if self.verify {
                    format!(", and --verify's {counts} of every band and its CPU render")
                } else {
                    String::new()
                };
                format!(
                    "the colours of {bands} bands in flight, page-locked memory for colours on \
                     each of {count} GPUs{verify}"
                )
            }
        }
    }

    /// Most rows per band of a `width_px`-wide image within [`MAX_BAND_HOST_BYTES`] (at
    /// least 1).
    pub fn max_rows(self, width_px: u32) -> u32 {
        let per_row = self.bytes_per_px() * u64::from(width_px.max(1));
        u32::try_from(MAX_BAND_HOST_BYTES / per_row)
            .unwrap_or(u32::MAX)
            .max(1)
    }

    /// Refuses `rows` per band of a `width_px × height_px` image (`deep`: rendered by
    /// perturbation) when they hold more than [`MAX_BAND_HOST_BYTES`], naming the value,
    /// the bytes per pixel and the allowed range.
    fn check_rows(self, rows: u32, width_px: u32, height_px: u32, deep: bool) -> Result<()> {
        let max = self.max_rows(width_px);
        let band_rows = rows.min(height_px);
        if band_rows <= max {
            return Ok(());
        }
        let gib = |bytes: u64| bytes as f64 / f64::from(1u32 << 30);
        let per_px = self.bytes_per_px();
        let kind = if deep { "deep " } else { "" };
        let on = match self.renderers {
            BandRenderers::Cpu => "on the CPU".to_owned(),
            BandRenderers::Gpus { count: 1, .. } => "on 1 GPU".to_owned(),
            BandRenderers::Gpus { count, .. } => format!("on {count} GPUs"),
        };
        super::usage!(
            "--band-rows {rows} is not allowed for this {width_px}-pixel-wide {kind}image {on}: \
             a band of {band_rows} rows would hold up to {:.1} GiB of host memory ({per_px} \
             bytes per pixel: {}), more than the {:.1} GiB allowed; allowed: --band-rows 1 to \
             {max}",
            gib(per_px * u64::from(band_rows) * u64::from(width_px)),
            self.describe(),
            gib(MAX_BAND_HOST_BYTES)
        );
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrecisionArg {
    /// f32 while the pixel spacing allows it, else f64, else perturbation (one rule:
    /// `host::mandelbrot::precision`).
    Auto,
    F32,
    F64,
}

impl PrecisionArg {
    /// The value as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    /// What to change on the command line when `check_view` refuses a float view as too deep
    /// for f64 (`corners`: the view was given as --corners): views that deep are rendered by
    /// perturbation, which `--precision f32|f64` and `--corners` rule out. `None` when
    /// neither was given.
    pub fn too_deep_advice(self, corners: bool) -> Option<String> {
        let forced = (self != Self::Auto).then(|| format!("leave out --precision {}", self.name()));
        let corners =
            corners.then_some("give the view as --center RE,IM --scale WIDTH instead of --corners");
        match (forced, corners) {
            (Some(f), Some(c)) => Some(format!("{f} and {c}")),
            (Some(f), None) => Some(format!("{f} (auto chooses perturbation)")),
            (None, Some(c)) => Some(c.to_owned()),
            (None, None) => None,
        }
    }
}

/// Options for how the image looks, shared with `ferrocuda zoom`.
#[derive(clap::Args, Clone)]
pub struct LookArgs {
    /// Colour palette: gray, classic, fire, ocean, viridis, electric.
    #[arg(long, default_value = "classic", value_parser = parse_palette)]
    pub palette: Palette,
    /// Smooth (continuous) colouring from the normalized iteration count (bailout radius 256).
    #[arg(long)]
    pub smooth: bool,
    /// Iterations per palette cycle (1 to 1,000,000).
    #[arg(long, value_name = "ITERS", default_value_t = Palette::CYCLE_ITERS, allow_negative_numbers = true, value_parser = parse_cycle)]
    pub palette_cycle: u32,
    /// Shift of the palette along its cycle, as a fraction of the cycle (0 to below 1).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, allow_hyphen_values = true, value_parser = parse_offset)]
    pub palette_offset: f32,
    /// Supersampling (anti-aliasing): 1, 2 (2×2 samples per pixel) or 4 (4×4).
    #[arg(long, value_name = "N", default_value_t = 1, allow_negative_numbers = true, value_parser = parse_supersample)]
    pub supersample: u32,
}

impl LookArgs {
    pub fn style(&self) -> Style {
        Style {
            shading: if self.smooth {
                Shading::Smooth
            } else {
                Shading::Discrete
            },
            cycle_iters: self.palette_cycle,
            offset: self.palette_offset,
            supersample: self.supersample,
        }
    }
}

/// A deep view's centre as two decimals of any length, `--center-re` and `--center-im`:
/// each requires the other, both conflict with `--center`. Shared with `ferrocuda zoom`;
/// each command words the two options' help itself (`mut_arg` on its arguments).
#[derive(clap::Args, Clone)]
pub struct CenterParts {
    #[arg(long, value_name = "DECIMAL", allow_hyphen_values = true, value_parser = parse_decimal_text, requires = "center_im", conflicts_with = "center")]
    center_re: Option<String>,
    #[arg(long, value_name = "DECIMAL", allow_hyphen_values = true, value_parser = parse_decimal_text, requires = "center_re", conflicts_with = "center")]
    center_im: Option<String>,
}

impl CenterParts {
    /// The real and imaginary parts as given, when they were (clap takes both or neither).
    pub fn get(&self) -> Option<(&str, &str)> {
        self.center_re.as_deref().zip(self.center_im.as_deref())
    }
}

#[derive(clap::Args)]
#[command(
    mut_arg("center_re", |a| a.help(
        "Real part of the centre as a decimal of any length (deep zooms; with --center-im); a \
         part smaller than 1e-30103 in size, below what any view resolves, is taken as 0"
    )),
    mut_arg("center_im", |a| a.help(
        "Imaginary part of the centre as a decimal of any length (with --center-re; as \
         --center-re, a part smaller than 1e-30103 in size is 0)"
    ))
)]
pub struct MandelbrotArgs {
    /// Image width in pixels (1 to 65536).
    #[arg(long, default_value_t = 1200, allow_negative_numbers = true, value_parser = super::parse_side)]
    pub width: u32,
    /// Image height in pixels (1 to 65536).
    #[arg(long, default_value_t = 900, allow_negative_numbers = true, value_parser = super::parse_side)]
    pub height: u32,
    /// Centre of the view as RE,IM (e.g. -0.75,0): two decimals (see --scale), every digit
    /// kept (a deep view gets all of them); a part smaller than 1e-30103 in size, below what
    /// any view resolves, is taken as 0.
    #[arg(long, value_name = "RE,IM", allow_hyphen_values = true, value_parser = DecimalPoint::parse, conflicts_with = "corners")]
    pub center: Option<DecimalPoint>,
    /// Width of the view along the real axis, in complex-plane units (used with --center or
    /// --center-re/--center-im). Any positive decimal, e.g. 3.5 or 1e-500 (an optional sign,
    /// digits with at most one `.`, optionally `e` and an exponent of at most 1,000,000,000
    /// in size): views deeper than f64 resolves are rendered by perturbation from an
    /// arbitrary-precision reference orbit.
    #[arg(
        long,
        default_value = "3.5",
        allow_hyphen_values = true,
        value_parser = parse_scale,
        conflicts_with = "corners"
    )]
    pub scale: Decimal,
    #[command(flatten)]
    pub center_parts: CenterParts,
    /// Take centre, scale and iteration limit from a Kalles Fraktaler location file (its
    /// `Re`, `Im`, `Zoom` and `Iterations` lines; --max-iter, when given, overrides
    /// `Iterations`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["center", "corners", "center_re", "center_im", "scale"])]
    pub kfr: Option<PathBuf>,
    /// The view's upper-left and lower-right corners, each RE,IM (instead of --center/--scale).
    #[arg(long, num_args = 2, value_names = ["UL", "LR"], allow_hyphen_values = true, value_parser = parse_complex, conflicts_with_all = ["center_re", "center_im"])]
    pub corners: Option<Vec<Complex<f64>>>,
    /// Iteration limit (1 to 10,000,000) [default: 1000, or a --kfr file's `Iterations`]. A
    /// view past f64 (perturbation) also holds a reference orbit and BLA table of up to 192
    /// bytes per iteration, whatever the image size: up to 1.8 GiB at 10,000,000.
    #[arg(long, allow_negative_numbers = true, value_parser = super::parse_max_iter)]
    pub max_iter: Option<u32>,
    /// Arithmetic precision.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Auto)]
    pub precision: PrecisionArg,
    #[command(flatten)]
    pub look: LookArgs,
    /// Where to compute.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// GPUs to render on: `all`, or N for the first N (each takes the next band when free).
    #[arg(long, value_name = "all|N", default_value = "all", allow_negative_numbers = true, value_parser = super::device::parse_gpus)]
    pub gpus: GpuSelection,
    /// Rows per band (the unit of one launch and of streaming to the PNG); default: as many
    /// as fit in 2^23 pixels, and with several GPUs at most 1/8 of the image per GPU. The
    /// bands in flight may hold at most 1.5 GiB of host memory: on the CPU 13 bytes per
    /// pixel of a band for f32/f64 and 8·s²+9 for a deep image of s×s samples (escape
    /// times, and |z|² of every sample, while a band renders; colours of three bands); on
    /// GPUs more (page-locked memory and bands rendered ahead). The error names the range.
    #[arg(long, value_name = "ROWS", allow_negative_numbers = true, value_parser = parse_band_rows)]
    pub band_rows: Option<u32>,
    /// Output PNG file: a regular file (replaced atomically; a symbolic link's target is
    /// replaced, the link kept), or a character device or FIFO (e.g. a link to /dev/null or a
    /// named pipe: written through, never replaced). Block devices and sockets are refused.
    #[arg(short, long, default_value = "mandelbrot.png")]
    pub output: PathBuf,
    /// Also render on the CPU and check that the images are identical (GPU backend only).
    #[arg(long)]
    pub verify: bool,
    /// How hard the PNG encoder compresses (zlib level; bands are compressed as they arrive,
    /// on all cores): fast (level 1), default (zlib's default, 6) or best (9). Same pixels
    /// whatever the level; see the README for the sizes and times of each.
    #[arg(long, value_enum, value_name = "LEVEL", default_value_t = PngCompression::Fast)]
    pub png_compression: PngCompression,
}

/// The PNG encoder's compression level (`--png-compression`): zlib's levels 1, 6 and 9 with
/// the "Up" row filter. Every level gives the same pixels; higher levels give smaller files
/// and take longer (the README's table has sizes and times).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PngCompression {
    /// zlib level 1: fastest, largest file (the default).
    Fast,
    /// zlib's default level (6).
    Default,
    /// zlib level 9: smallest file, slowest.
    Best,
}

impl PngCompression {
    /// The encoder's level.
    fn level(self) -> mtpng::CompressionLevel {
        match self {
            Self::Fast => mtpng::CompressionLevel::Fast,
            Self::Default => mtpng::CompressionLevel::Default,
            Self::Best => mtpng::CompressionLevel::High,
        }
    }
}

fn parse_cycle(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(v) if (1..=MAX_CYCLE_ITERS).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not allowed: the palette cycle must be a whole number of iterations from 1 to {MAX_CYCLE_ITERS}"
        )),
    }
}

fn parse_offset(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not allowed: the palette offset must be a fraction of the cycle, at least 0 and below 1"
        )),
    }
}

fn parse_supersample(s: &str) -> Result<u32, String> {
    match s.trim() {
        "1" => Ok(1),
        "2" => Ok(2),
        "4" => Ok(4),
        _ => Err(format!(
            "`{s}` is not allowed: supersampling must be 1, 2 (2x2) or 4 (4x4)"
        )),
    }
}

fn parse_band_rows(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!(
            "`{s}` is not allowed: rows per band must be a whole number of at least 1"
        )),
    }
}

/// Checks an image size and an iteration limit, naming the bad value.
pub fn check_size_and_iter(width: u32, height: u32, max_iter: u32) -> Result<()> {
    if width == 0 || height == 0 || width > MAX_SIDE_PX || height > MAX_SIDE_PX {
        super::usage!(
            "image size {width}x{height} is not allowed: width and height must be 1 to {MAX_SIDE_PX} pixels"
        );
    }
    if max_iter == 0 || max_iter > MAX_ITER_LIMIT {
        super::usage!("--max-iter {max_iter} is not allowed: it must be 1 to {MAX_ITER_LIMIT}");
    }
    Ok(())
}

/// The location when the view needs perturbation: a KFR file or --center-re/--center-im
/// (always perturbed), or --center/--scale when the one precision rule
/// (`host::mandelbrot::precision`) says f64 cannot resolve its samples (or its scale
/// underflows f64), unless --precision forces f32 or f64.
///
/// # Errors
/// A [`super::UsageError`] for --precision f32/f64 with a location that is always perturbed.
fn deep_location(args: &MandelbrotArgs) -> Result<Option<super::deep::Location>> {
    use super::deep::Location;
    let explicit = if let Some(path) = &args.kfr {
        let loc = Location::from_kfr(path, args.width, args.height)?;
        center_within_f64(&loc.re, &loc.im)?;
        Some(loc)
    } else if let Some((re, im)) = args.center_parts.get() {
        center_within_f64(re, im)?;
        Some(Location {
            re: re.to_owned(),
            im: im.to_owned(),
            scale: args.scale.clone(),
            max_iter: None,
        })
    } else {
        None
    };
    if let Some(loc) = explicit {
        if args.precision != PrecisionArg::Auto {
            super::usage!(
                "--precision {} is not allowed with --center-re/--center-im or --kfr: those \
                 views are always rendered by perturbation from an arbitrary-precision \
                 reference orbit; leave --precision at auto, or give --center RE,IM to \
                 choose f32 or f64",
                args.precision.name()
            );
        }
        return Ok(Some(loc));
    }
    if args.corners.is_some() || args.precision != PrecisionArg::Auto {
        return Ok(None);
    }
    if let Some(c) = &args.center {
        center_within_f64(&c.re.text(), &c.im.text())?;
    }
    let center = center_f64(args);
    // Every digit of --center (not its f64 rounding).
    let (re, im) = args.center.as_ref().map_or_else(
        || ("-0.75".to_owned(), "0".to_owned()),
        |c| (c.re.text(), c.im.text()),
    );
    let deep = Location {
        re,
        im,
        scale: args.scale.clone(),
        max_iter: None,
    };
    let Some(scale_log10) = scale_log10(&args.scale) else {
        // A zero the deep path rejects by name; anything else not a positive number, the
        // f64 path names.
        return Ok((args.scale.to_f64() == 0.0).then_some(deep));
    };
    let choice = precision::for_center_scale(
        center,
        scale_log10,
        args.width,
        args.height,
        args.look.supersample,
    );
    Ok((choice.arithmetic == Arithmetic::Perturbed).then_some(deep))
}

/// Refuses a centre beyond `f64`'s range (any digits are kept, but a centre of 1e400 is no
/// view of the Mandelbrot set, and would cost the deep path a number of that size).
fn center_within_f64(re: &str, im: &str) -> Result<()> {
    let finite = |x: &str| x.parse::<f64>().is_ok_and(f64::is_finite);
    if !finite(re) || !finite(im) {
        super::usage!(
            "centre {re},{im} is not allowed: each part must be within f64's range (at most \
             {:e} in size)",
            f64::MAX
        );
    }
    Ok(())
}

/// The centre as `f64` (the default -0.75,0 when none was given).
fn center_f64(args: &MandelbrotArgs) -> Complex<f64> {
    args.center
        .as_ref()
        .map_or(Complex::new(-0.75, 0.0), DecimalPoint::to_f64)
}

/// A viewport error as a usage error; one about coordinates that are not finite names the
/// values that gave them (`what()`, e.g. "--corners -1e308,1e308 1e308,-1e308").
pub fn view_error(e: ViewportError, what: impl FnOnce() -> String) -> super::UsageError {
    match e {
        ViewportError::NotFinite => super::UsageError(format!(
            "{} is not allowed: the view's coordinates or its pixel spacing are beyond f64's \
             range (at most {:e} in size, spacing at least {:e})",
            what(),
            f64::MAX,
            f64::MIN_POSITIVE
        )),
        e => super::UsageError(e.to_string()),
    }
}

/// `log10` of a positive decimal `scale` (any exponent, beyond f64's range too), or `None`.
pub fn scale_log10(scale: &Decimal) -> Option<f64> {
    Some(scale)
        .filter(|d| !d.is_zero() && d.to_f64().is_sign_positive())
        .and_then(Decimal::log10_abs)
}

/// Checks a view width (`--scale`, `--start-scale`, ...) for an image `width_px` wide: positive,
/// and a pixel spacing that f64 represents as a normal number.
pub fn check_scale(flag: &str, scale: f64, width_px: u32) -> Result<()> {
    if scale.is_nan() || scale <= 0.0 {
        super::usage!("{flag} {scale:e} is not allowed: it must be a positive number");
    }
    let spacing = scale / f64::from(width_px.max(1));
    if spacing < f64::MIN_POSITIVE {
        super::usage!(
            "{flag} {scale:e} is not allowed: its pixel spacing ({flag} / width = {spacing:e}) \
             is below the smallest normal f64 ({:e}); `ferrocuda mandelbrot` renders zooms \
             this deep by perturbation (--center/--scale or --center-re/--center-im)",
            f64::MIN_POSITIVE
        );
    }
    Ok(())
}

/// The precision to use for `job` (whose sample grid decides), with the warnings of the
/// automatic choice.
pub fn choose_precision(job: &RenderJob<f64>, arg: PrecisionArg, quiet: bool) -> Precision {
    let choice = precision::for_viewport(&job.samples);
    let auto_precision = choice.arithmetic.float().unwrap_or(Precision::F64);
    let f64_too_coarse = !choice.resolves(Arithmetic::F64);
    let precision = match arg {
        PrecisionArg::Auto => auto_precision,
        PrecisionArg::F32 => Precision::F32,
        PrecisionArg::F64 => Precision::F64,
    };
    if quiet {
        return precision;
    }
    if precision == Precision::F32 && auto_precision == Precision::F64 {
        super::errln!(
            "warning: pixel spacing {:e} is too fine for f32 at this centre; use --precision f64 or auto",
            job.samples.min_step()
        );
    } else if f64_too_coarse {
        super::errln!(
            "warning: pixel spacing {:e} is below f64 resolution at this centre; the image will be blocky",
            job.samples.min_step()
        );
    }
    precision
}

/// Rows per band by default: as many as fit in [`DEFAULT_BAND_PX`] pixels and in
/// [`host::mandelbrot::MAX_ITERATIONS_PER_LAUNCH`] worst-case iterations (so a stop request
/// is noticed between launches within about a second) and, with several GPUs, at most 1/8 of
/// the image per GPU (so that work stealing can even out unequal bands).
pub fn default_band_rows(job: &RenderJob<f64>, gpus: usize) -> u32 {
    let rows = rows_per_launch(job, DEFAULT_BAND_PX);
    if gpus <= 1 {
        return rows;
    }
    let per_gpu = u32::try_from(8 * gpus).unwrap_or(u32::MAX);
    rows.min(job.height_px.div_ceil(per_gpu)).max(1)
}

/// The band renderer: `gpu` with band buffers of `capacity_px` pixels, or the CPU.
pub fn band_renderer(gpu: Option<&Gpu>, capacity_px: usize) -> Result<BandRenderer<'_>> {
    Ok(match gpu {
        Some(gpu) => BandRenderer::Gpu(Box::new(GpuRenderer::new(gpu, capacity_px)?)),
        None => BandRenderer::Cpu,
    })
}

/// Peak resident memory of this process (`VmHWM` in /proc/self/status), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The image a `mandelbrot` run renders: an f32/f64 job or a perturbed one, both rendered
/// band by band through [`BandJob`].
enum Work {
    Float {
        job: RenderJob<f64>,
        precision: Precision,
    },
    Deep(Box<super::deep::DeepPrepared>),
}

impl Work {
    fn band_job(&self) -> BandJob<'_> {
        match self {
            Self::Float { job, precision } => BandJob::Float {
                job,
                precision: *precision,
            },
            Self::Deep(d) => BandJob::Perturbed(&d.job),
        }
    }
}

/// The f32/f64 job of `args` (not a deep view): the view checked, the precision chosen.
fn float_job(args: &MandelbrotArgs, style: &Style) -> Result<(RenderJob<f64>, Precision)> {
    let (width, height) = (args.width, args.height);
    let scale = Some(args.scale.to_f64())
        .filter(|s| s.is_finite())
        .ok_or_else(|| {
            super::UsageError(format!(
                "--scale `{}` is not allowed: it must be a finite number",
                args.scale
            ))
        })?;
    if args.corners.is_none() {
        check_scale("--scale", scale, width)?;
    }
    let center = center_f64(args);
    let view = match &args.corners {
        Some(c) => Viewport::from_corners(width, height, c[0], c[1]).map_err(|e| {
            view_error(e, || {
                format!(
                    "--corners {:e},{:e} {:e},{:e}",
                    c[0].re, c[0].im, c[1].re, c[1].im
                )
            })
        }),
        None => Viewport::from_center_scale(width, height, center, scale).map_err(|e| {
            view_error(e, || {
                format!(
                    "--center {:e},{:e} --scale {}",
                    center.re, center.im, args.scale
                )
            })
        }),
    }?;
    Precision::check_view(&view).map_err(|e| {
        match args.precision.too_deep_advice(args.corners.is_some()) {
            Some(advice) => super::UsageError(format!("{e}: {advice}")),
            None => super::UsageError(e),
        }
    })?;
    if let Some(c) = &args.corners {
        // Pixels are as wide as the view divided by the width, as tall as its height by the
        // height: unequal when the corners' aspect ratio differs from the image's.
        let (w, h) = ((c[1].re - c[0].re).abs(), (c[0].im - c[1].im).abs());
        let aspect = (w / f64::from(width)) / (h / f64::from(height));
        if (aspect - 1.0).abs() > 0.01 {
            super::errln!(
                "note: the corners span {w:e} x {h:e} but the image is {width}x{height}: pixels \
                 are {aspect:.3} times as wide as tall (the picture is stretched)"
            );
        }
    }
    let params = RenderParams {
        view,
        max_iter: args.max_iter.unwrap_or(super::DEFAULT_MAX_ITER),
        precision: Precision::F64,
        palette: args.look.palette,
    };
    let job = params.job(style);
    let precision = choose_precision(&job, args.precision, false);
    Ok((job, precision))
}

/// Rows per band by default for a perturbed job: as many as fit in [`DEFAULT_BAND_PX`]
/// pixels and in [`host::deep::MAX_PERTURBED_ITERATIONS_PER_LAUNCH`] worst-case iterations
/// and, with several GPUs, at most 1/8 of the image per GPU.
pub fn default_deep_band_rows(job: &host::deep::PerturbedJob, gpus: usize) -> u32 {
    let rows = job.rows_per_band(DEFAULT_BAND_PX);
    if gpus <= 1 {
        return rows;
    }
    let per_gpu = u32::try_from(8 * gpus).unwrap_or(u32::MAX);
    rows.min(job.job.height_px.div_ceil(per_gpu)).max(1)
}

pub fn run(args: &MandelbrotArgs) -> Result<()> {
    let (width, height) = (args.width, args.height);
    let cli_max_iter = args.max_iter.unwrap_or(super::DEFAULT_MAX_ITER);
    check_size_and_iter(width, height, cli_max_iter)?;
    let style = args.look.style();
    // Every value is checked before the output file is created; a deep view's reference
    // orbit is computed after (it can take long, and a signal stops it).
    let location = deep_location(args)?;
    let mut float = None;
    let mut deep = None;
    match &location {
        Some(loc) => {
            let view = super::deep::view(loc, width, height)?;
            deep = Some((view, super::deep::max_iter(args.max_iter, loc)));
        }
        None => float = Some(float_job(args, &style)?),
    }
    let samples_per_px = u64::from(style.supersample).pow(2);
    let output = OutputFile::create(&args.output)?;
    super::catch_signals();

    let pool = open_pool(args.backend, args.gpus)?;
    let verify = args.verify && pool.is_some();
    let memory = BandMemory {
        perturbed_samples: deep.is_some().then_some(samples_per_px),
        renderers: match &pool {
            None => BandRenderers::Cpu,
            Some(pool) => BandRenderers::Gpus {
                count: pool.len() as u64,
                reorder_window: pool.reorder_window() as u64,
            },
        },
        verify,
    };
    if let Some(rows) = args.band_rows {
        memory.check_rows(rows, width, height, deep.is_some())?;
    }
    let start = Instant::now();
    let work = match (float, deep) {
        (Some((job, precision)), _) => Work::Float { job, precision },
        (None, Some((view, max_iter))) => {
            let mut d = super::deep::prepare(&view, max_iter, &style, args.look.palette, None)?;
            if let Some(loc) = &location {
                d.scale = loc.scale.text();
            }
            Work::Deep(Box::new(d))
        }
        (None, None) => unreachable!("a view is either deep or not"),
    };
    let band_job = work.band_job();
    let gpus = pool.as_ref().map_or(1, GpuPool::len);
    let rows = args
        .band_rows
        .unwrap_or_else(|| {
            let default = match &work {
                Work::Float { job, .. } => default_band_rows(job, gpus),
                Work::Deep(d) => default_deep_band_rows(&d.job, gpus),
            };
            default.min(memory.max_rows(width))
        })
        .min(height);
    if args.verify && pool.is_none() {
        super::errln!(
            "note: --verify compares the GPU with the CPU; rendering on the CPU, nothing to compare"
        );
    }

    let bands: Vec<Band> = Band::split(height, rows).collect();
    // In pixels: the GPU path counts finished bands; the CPU path its finished pixels (of a
    // deep image, samples), within rows.
    let pixels = u64::from(width) * u64::from(height);
    let progress = match &pool {
        Some(_) => super::Progress::new(pixels, "pixels"),
        None => super::Progress::watch(
            pixels,
            "pixels",
            &super::CONTROL.samples_done,
            band_job.buffer_px_per_px() as u64,
        ),
    };
    let count_bands = pool.is_some();
    let mut kernel = Duration::ZERO;
    let mut verify_time = Duration::ZERO;
    let mut report = None;
    let encode = std::thread::scope(|scope| -> Result<Duration> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
        let file = output
            .file()
            .try_clone()
            .context("opening the output file")?;
        let level = args.png_compression;
        let encoder = scope.spawn(move || encode_png(file, width, height, level, rx));
        // Each rendered band, in order: check it against the CPU, hand it to the encoder.
        let mut sink = |b: BandImage| -> Result<()> {
            check_interrupt()?;
            kernel += b.kernel;
            if verify {
                let t = Instant::now();
                verify_band(band_job, &b)?;
                verify_time += t.elapsed();
            }
            tx.send(b.rgb).map_err(|_| EncoderStopped)?;
            if count_bands {
                progress.inc(u64::from(b.band.rows) * u64::from(width));
            }
            Ok(())
        };
        let rendered = match &pool {
            Some(pool) => match pool.render(band_job, &bands, verify, &mut sink) {
                Ok(r) => {
                    report = Some(r);
                    Ok(())
                }
                Err(PoolError::Sink(e)) => Err(e),
                Err(e) => Err(anyhow::Error::new(e)),
            },
            None => bands.iter().try_for_each(|&band| {
                match band_job.render_cpu_until(band, false, &super::CONTROL) {
                    Some(b) => sink(b),
                    None => check_interrupt(),
                }
            }),
        };
        drop(tx);
        let encoded = encoder.join().expect("the PNG encoder thread panicked");
        match rendered {
            // The encoder failed first: its error says why.
            Err(e) if e.is::<EncoderStopped>() => encoded,
            Err(e) => Err(e),
            Ok(()) => encoded,
        }
    });
    drop(progress);
    let encode = encode.with_context(|| format!("writing `{}`", args.output.display()))?;
    check_interrupt()?;
    output.persist()?;

    let what = match &work {
        Work::Float { job, precision } => format!(
            "{width}x{height}, max_iter {}, {}",
            job.max_iter,
            precision.name()
        ),
        Work::Deep(d) => format!(
            "deep zoom {width}x{height}, max_iter {}, {}",
            d.job.job.max_iter,
            d.summary()
        ),
    };
    let bands_note = if bands.len() > 1 {
        format!(", {} bands of {rows} rows", bands.len())
    } else {
        String::new()
    };
    match (&pool, &report) {
        (Some(pool), Some(report)) => {
            let names: Vec<&str> = pool.devices().iter().map(|(_, n)| n.as_str()).collect();
            let device = if pool.len() == 1 {
                format!("GPU {}", names[0])
            } else {
                format!("{} GPUs ({})", pool.len(), names.join(", "))
            };
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            outln!(
                "{device}: {what}{bands_note}: kernel {:.2} ms, render wall {:.0} ms",
                ms(kernel),
                ms(report.wall)
            );
            // Where the wall goes, per GPU: its setup (buffers, page-locked staging, kernels)
            // and its bands (launches, kernels, copies back); the rest is waiting.
            for share in &report.gpus {
                outln!(
                    "  GPU {}: {} bands ({} rows), kernel {:.2} ms, setup {:.1} ms, busy {:.1} ms",
                    share.ordinal,
                    share.bands,
                    share.rows,
                    ms(share.kernel),
                    ms(share.setup),
                    ms(share.busy)
                );
            }
        }
        _ => outln!(
            "CPU ({} threads): {what}{bands_note}: render {:.2} ms",
            rayon::current_num_threads(),
            kernel.as_secs_f64() * 1e3
        ),
    }
    if verify {
        outln!(
            "verify: CPU render ({:.0} ms) is identical (escape times, |z|² of perturbed \
             samples, and colours)",
            verify_time.as_secs_f64() * 1e3
        );
    }
    let peak = peak_rss_bytes().map_or_else(String::new, |b| {
        format!(", peak memory {:.0} MiB", b as f64 / f64::from(1 << 20))
    });
    outln!(
        "wrote {} (PNG encode {:.0} ms, end to end {:.0} ms{peak})",
        args.output.display(),
        encode.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// The sink's error when the PNG encoder has stopped (its own error is reported instead).
#[derive(Debug, thiserror::Error)]
#[error("the PNG encoder stopped")]
struct EncoderStopped;

/// Renders `b`'s rows on the CPU and fails unless the escape times, the `|z_n|²` of
/// perturbed samples (bit for bit) and the colours are identical.
fn verify_band(work: BandJob<'_>, b: &BandImage) -> Result<()> {
    let band = b.band;
    let Some(cpu) = work.render_cpu_until(band, true, &RenderControl::new()) else {
        unreachable!("a fresh control is never stopped");
    };
    let norms_differ = cpu.norms.len() != b.norms.len()
        || cpu
            .norms
            .iter()
            .zip(&b.norms)
            .any(|(a, b)| a.to_bits() != b.to_bits());
    if cpu.counts != b.counts || cpu.rgb != b.rgb || norms_differ {
        let differing = cpu
            .counts
            .iter()
            .zip(&b.counts)
            .filter(|(a, b)| a != b)
            .count();
        let norms = cpu
            .norms
            .iter()
            .zip(&b.norms)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        bail!(
            "GPU and CPU images differ in rows {}..{}: {differing} of {} escape times and \
             {norms} of {} |z|² differ",
            band.first_row,
            band.first_row + band.rows,
            cpu.counts.len(),
            cpu.norms.len()
        );
    }
    Ok(())
}

/// Encodes the RGB rows received on `rx` (top first, whole rows) as a `width × height` PNG
/// into `file` at compression `level`; returns the time spent encoding.
///
/// `mtpng` compresses the rows in parallel on rayon's thread pool, 256 KiB pieces at a time
/// (the "Up" filter on every row), each piece its own IDAT chunk as soon as it is ready
/// ("streaming"), so memory stays bounded by the pieces in flight, not the image. The pieces
/// form one valid zlib stream: each piece is deflated with the previous piece's last 32 KiB
/// as its dictionary and ends on a byte boundary (a sync flush), and their Adler-32 checksums
/// are combined, so threads never split one deflate block. Rows arrive band by band while
/// the next bands render; `rx`'s bound (one band) keeps the renderer from running ahead.
/// On an H200 machine (16 cores), 32768² full view, 256-row bands: end to end 1.31–1.55 s
/// and 55.1 MB with "Up", 1.56–1.79 s and 56.6 MB with libpng's adaptive choice per row
/// With 1024-row bands, "None" made this discrete-colour view smaller (45.3 MB) in about
/// the same time, but smooth colouring's gradients are what filters are for; "Sub" gave
/// 58.5 MB. png's single-threaded `Fast` level took 3.05–3.31 s in the same session.
fn encode_png(
    file: std::fs::File,
    width: u32,
    height: u32,
    level: PngCompression,
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
) -> Result<Duration> {
    let mut busy = Duration::ZERO;
    let mut options = mtpng::encoder::Options::new();
    options
        .set_compression_level(level.level())
        .and_then(|()| options.set_streaming(true))
        .and_then(|()| options.set_filter_mode(mtpng::Mode::Fixed(mtpng::Filter::Up)))
        .context("setting the PNG encoder's options")?;
    let mut header = mtpng::Header::new();
    header
        .set_size(width, height)
        .and_then(|()| header.set_color(mtpng::ColorType::Truecolor, 8))
        .context("describing the PNG image")?;
    // No BufWriter: the encoder hands the file whole IDAT chunks.
    let mut encoder = mtpng::encoder::Encoder::new(file, &options);
    encoder
        .write_header(&header)
        .context("writing the PNG header")?;
    let mut received = 0u64;
    for rgb in rx {
        let t = Instant::now();
        encoder
            .write_image_rows(&rgb)
            .context("encoding PNG rows")?;
        received += rgb.len() as u64;
        busy += t.elapsed();
    }
    if received != 3 * u64::from(width) * u64::from(height) {
        // Rendering stopped early (error or Ctrl-C): the caller reports why.
        bail!("rendering stopped before the image was complete");
    }
    let t = Instant::now();
    encoder.finish().context("finishing the PNG")?;
    Ok(busy + t.elapsed())
}
