//! Mandelbrot kernels: one thread per pixel over a 2D grid covering the image (or a band of
//! its rows).
//!
//! - `mandelbrot_f32` / `mandelbrot_f64`: the renderer, one sample per pixel. Each thread
//!   calls [`RenderJob::pixel_single`]: cardioid/bulb tests, the chunked escape loop with
//!   periodicity checking ([`common::escape::escape`]), smooth or discrete colouring — the
//!   same function the CPU renderer calls.
//! - `mandelbrot_ss_f32` / `mandelbrot_ss_f64`: the same with supersampling
//!   ([`RenderJob::pixel`]); a separate kernel so that the common case needs fewer registers.
//! - `mandelbrot_naive_f32` / `mandelbrot_naive_f64`: the plain escape-time loop
//!   ([`escape_time`]) and [`Palette::color`], kept as the baseline the benchmark compares
//!   against (same counts and colours as the renderer with discrete colouring, no
//!   supersampling).
//!
//! All are safe to launch: outputs are [`OutSlice`]s, each thread writes only its own pixel.

use common::{Band, Palette, Real, RenderJob, Rgb, Viewport, escape_time};
use cuda_std::prelude::*;

/// Renders the rows `band` of `job` (one sample per pixel: `job.supersample ≤ 1`), `f32`
/// arithmetic, one thread per pixel; launch a 2D grid covering `job.width_px × band.rows`
/// threads (e.g. `host::launch::for_image`).
///
/// Writes, for image pixel `(x, band.first_row + r)`, `counts[r·width + x]` (its escape time)
/// and `rgb[r·width + x]` (its colour): see [`RenderJob::pixel_single`]. Pixels beyond the
/// buffers' lengths are not written (give both at least `job.width_px · band.rows` elements).
///
/// # Panics
/// If `job.supersample > 1` (use [`mandelbrot_ss_f32`]): the launch fails with a trap. This
/// kernel leaves out the supersampling loop to need fewer registers.
#[kernel]
pub fn mandelbrot_f32(job: RenderJob<f32>, band: Band, counts: OutSlice<u32>, rgb: OutSlice<Rgb>) {
    assert!(job.supersample <= 1);
    render_pixel(&job, band, &counts, &rgb, RenderJob::pixel_single);
}

/// [`mandelbrot_f32`] with `f64` arithmetic.
///
/// # Panics
/// If `job.supersample > 1` (use [`mandelbrot_ss_f64`]).
#[kernel]
pub fn mandelbrot_f64(job: RenderJob<f64>, band: Band, counts: OutSlice<u32>, rgb: OutSlice<Rgb>) {
    assert!(job.supersample <= 1);
    render_pixel(&job, band, &counts, &rgb, RenderJob::pixel_single);
}

/// [`mandelbrot_f32`] for any `job.supersample`: each pixel is the rounded average of its
/// `s × s` samples and its count their sum ([`RenderJob::pixel`]).
#[kernel]
pub fn mandelbrot_ss_f32(
    job: RenderJob<f32>,
    band: Band,
    counts: OutSlice<u32>,
    rgb: OutSlice<Rgb>,
) {
    render_pixel(&job, band, &counts, &rgb, RenderJob::pixel);
}

/// [`mandelbrot_ss_f32`] with `f64` arithmetic.
#[kernel]
pub fn mandelbrot_ss_f64(
    job: RenderJob<f64>,
    band: Band,
    counts: OutSlice<u32>,
    rgb: OutSlice<Rgb>,
) {
    render_pixel(&job, band, &counts, &rgb, RenderJob::pixel);
}

/// The body of the renderer kernels: this thread's pixel of `band`, coloured by `pixel`.
#[inline(always)]
fn render_pixel<F: Real>(
    job: &RenderJob<F>,
    band: Band,
    counts: &OutSlice<u32>,
    rgb: &OutSlice<Rgb>,
    pixel: impl Fn(&RenderJob<F>, u32, u32) -> (u32, Rgb),
) {
    let (x, r) = index_2d();
    if x < job.width_px && r < band.rows && band.first_row + r < job.height_px {
        let (n, color) = pixel(job, x, band.first_row + r);
        // Element r·width + x: this thread's own (write_2d), bounds-checked.
        counts.write_2d(job.width_px, n);
        rgb.write_2d(job.width_px, color);
    }
}

/// The baseline: plain escape time and discrete colour, `f32` arithmetic, one thread per pixel
/// of the whole `view` (launch a 2D grid covering `view.width_px × view.height_px` threads).
///
/// Writes `counts[y·width + x] = escape_time(...)` and `rgb[y·width + x] = palette.color(...)`
/// (elements beyond the buffers' lengths are not written; give both `view.len()`).
#[kernel]
pub fn mandelbrot_naive_f32(
    view: Viewport<f32>,
    max_iter: u32,
    palette: Palette,
    counts: OutSlice<u32>,
    rgb: OutSlice<Rgb>,
) {
    naive_pixel(&view, max_iter, palette, &counts, &rgb);
}

/// [`mandelbrot_naive_f32`] with `f64` arithmetic.
#[kernel]
pub fn mandelbrot_naive_f64(
    view: Viewport<f64>,
    max_iter: u32,
    palette: Palette,
    counts: OutSlice<u32>,
    rgb: OutSlice<Rgb>,
) {
    naive_pixel(&view, max_iter, palette, &counts, &rgb);
}

/// The body of the naive kernels: this thread's pixel of `view`.
#[inline(always)]
fn naive_pixel<F: Real>(
    view: &Viewport<F>,
    max_iter: u32,
    palette: Palette,
    counts: &OutSlice<u32>,
    rgb: &OutSlice<Rgb>,
) {
    let (x, y) = index_2d();
    if x < view.width_px && y < view.height_px {
        let n = escape_time(view.pixel_to_complex(x, y), max_iter);
        counts.write_2d(view.width_px, n);
        rgb.write_2d(view.width_px, palette.color(n, max_iter));
    }
}
