//! What to render and how it looks: [`RenderParams`], [`Style`], the [`Image`] and times a
//! render gives back, and the band and launch sizes ([`rows_per_band`], [`rows_per_launch`]).

use super::precision::Precision;
use crate::band::CopyTimes;
use common::{
    Palette, RenderJob, Viewport,
    palette::{Coloring, Shading},
};
use std::time::Duration;

/// What to render.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderParams {
    /// The view (image size and region), in f64; cast to f32 for [`Precision::F32`].
    pub view: Viewport<f64>,
    /// Iteration limit (≥ 1).
    pub max_iter: u32,
    /// Orbit precision.
    pub precision: Precision,
    /// Colour palette.
    pub palette: Palette,
}

/// How the image looks beyond [`RenderParams`]: shading, palette cycle and offset,
/// supersampling. The default (discrete shading, [`Palette::CYCLE_ITERS`], no offset, one
/// sample per pixel) gives the colours of [`Palette::color`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Discrete or smooth colouring.
    pub shading: Shading,
    /// Iterations per palette cycle (≥ 1).
    pub cycle_iters: u32,
    /// Palette offset as a fraction of a cycle.
    pub offset: f32,
    /// Samples per pixel along each axis: 1, 2 or 4.
    pub supersample: u32,
}

impl Style {
    /// The colouring of this style with `palette`.
    pub fn coloring(&self, palette: Palette) -> Coloring {
        Coloring {
            palette,
            shading: self.shading,
            cycle_iters: self.cycle_iters,
            offset: self.offset,
        }
    }
}

impl Default for Style {
    fn default() -> Self {
        Self {
            shading: Shading::Discrete,
            cycle_iters: Palette::CYCLE_ITERS,
            offset: 0.0,
            supersample: 1,
        }
    }
}

impl RenderParams {
    /// The render job (in f64) for these parameters and `style`.
    pub fn job(&self, style: &Style) -> RenderJob<f64> {
        RenderJob::new(
            &self.view,
            style.supersample,
            self.max_iter,
            style.coloring(self.palette),
        )
    }
}

/// A rendered image: per-pixel escape times and colours, row-major, top row first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width_px: u32,
    /// Height in pixels.
    pub height_px: u32,
    /// Escape time of each pixel (`width_px · height_px` values; with supersampling the sum
    /// over the pixel's samples).
    pub counts: Vec<u32>,
    /// Colour of each pixel as `[r, g, b, r, g, b, ...]` (`3 · width_px · height_px` bytes,
    /// the layout of an 8-bit RGB PNG).
    pub rgb: Vec<u8>,
}

/// Kernel times of one GPU band (CUDA events around each launch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderTimes {
    /// The escape pass (`mandelbrot_f32`/`_f64`), or the supersampling kernel, which colours
    /// too.
    pub escape: Duration,
    /// The colour pass (`colorize`); zero for supersampled jobs.
    pub color: Duration,
}

impl RenderTimes {
    /// Both passes.
    pub fn total(&self) -> Duration {
        self.escape + self.color
    }
}

/// Timings of a GPU render.
#[derive(Clone, Copy, Debug)]
pub struct GpuTimings {
    /// Kernel execution time (CUDA events around the launches).
    pub kernel: Duration,
    /// The bands' copies between host and device, by direction ([`CopyTimes`]: CUDA events
    /// for the colours, host timers for the rest).
    pub copies: CopyTimes,
    /// Whole render: allocation, launches, copies back to the host.
    pub total: Duration,
}

/// Rows per band such that one band holds at most `max_band_px` pixels (at least one row).
pub fn rows_per_band(width_px: u32, max_band_px: u64) -> u32 {
    let rows = (max_band_px / u64::from(width_px.max(1))).max(1);
    u32::try_from(rows).unwrap_or(u32::MAX)
}

/// Upper bound of escape-time iterations in one GPU launch: 2^38 ≈ 2.7·10^11, about 0.2 s of
/// the slowest case (every sample inside the set, f64) on an H200, whose optimized f64 kernel
/// ran 1.5·10^12 iterations/s on seahorse valley (`ferrocuda mandelbrot-bench`); slower GPUs
/// take proportionally longer.
pub const MAX_ITERATIONS_PER_LAUNCH: u64 = 1 << 38;

/// Rows per band for `job`: at most `max_band_px` pixels, and at most
/// [`MAX_ITERATIONS_PER_LAUNCH`] iterations in the worst case (`max_iter` for every sample),
/// so that a band's launch ends quickly and a stop request is noticed within about a second.
pub fn rows_per_launch(job: &RenderJob<f64>, max_band_px: u64) -> u32 {
    let samples_per_row = u64::from(job.width_px.max(1))
        * u64::from(job.supersample.max(1)).pow(2)
        * u64::from(job.max_iter.max(1));
    let by_work = (MAX_ITERATIONS_PER_LAUNCH / samples_per_row).max(1);
    let rows = by_work.min(u64::from(rows_per_band(job.width_px, max_band_px)));
    u32::try_from(rows)
        .unwrap_or(u32::MAX)
        .min(job.height_px.max(1))
}
