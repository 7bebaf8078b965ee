//! `mandelbrot`'s options: the argument structs (`MandelbrotArgs`, and `RenderArgs`,
//! `LookArgs` and `CenterParts`, which `zoom` flattens too), their value parsers and the size check.

use crate::cli::decimal::{DecimalPoint, parse_decimal_text, parse_scale};
use crate::cli::device::Backend;
use crate::cli::{MAX_ITER_LIMIT, MAX_SIDE_PX, parse_complex, parse_palette};
use anyhow::Result;
use clap::ValueEnum;
use common::{Complex, Palette, palette::Shading};
use host::{
    deep::Decimal,
    mandelbrot::{Style, pool::GpuSelection},
};
use std::path::PathBuf;

/// Largest palette cycle in iterations.
const MAX_CYCLE_ITERS: u32 = 1_000_000;

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

/// How and where to render: the precision, the look and the backend, shared with
/// `ferrocuda zoom` (which words `--precision`'s help itself, with `mut_arg`).
#[derive(clap::Args, Clone)]
pub struct RenderArgs {
    /// Arithmetic precision.
    #[arg(long, value_enum, default_value_t = PrecisionArg::Auto)]
    pub precision: PrecisionArg,
    #[command(flatten)]
    pub look: LookArgs,
    /// Where to compute.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
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
    #[arg(long, default_value_t = 1200, allow_negative_numbers = true, value_parser = crate::cli::parse_side)]
    pub width: u32,
    /// Image height in pixels (1 to 65536).
    #[arg(long, default_value_t = 900, allow_negative_numbers = true, value_parser = crate::cli::parse_side)]
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
    #[arg(long, allow_negative_numbers = true, value_parser = crate::cli::parse_max_iter)]
    pub max_iter: Option<u32>,
    #[command(flatten)]
    pub render: RenderArgs,
    /// GPUs to render on: `all`, or N for the first N (each takes the next band when free).
    #[arg(long, value_name = "all|N", default_value = "all", allow_negative_numbers = true, value_parser = crate::cli::device::parse_gpus)]
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
    pub(super) fn level(self) -> mtpng::CompressionLevel {
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
        crate::cli::usage!(
            "image size {width}x{height} is not allowed: width and height must be 1 to {MAX_SIDE_PX} pixels"
        );
    }
    if max_iter == 0 || max_iter > MAX_ITER_LIMIT {
        crate::cli::usage!(
            "--max-iter {max_iter} is not allowed: it must be 1 to {MAX_ITER_LIMIT}"
        );
    }
    Ok(())
}
