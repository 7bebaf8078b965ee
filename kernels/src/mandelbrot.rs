//! Mandelbrot kernels: one thread per pixel over a 2D grid covering the image (or a band of
//! its rows).
//!
//! - `mandelbrot_f32` / `mandelbrot_f64`: the renderer's escape pass, one sample per pixel.
//!   Each thread calls [`RenderJob::escape_single`]: cardioid/bulb tests, the plain prefix and
//!   the chunked escape loop with periodicity checking ([`common::escape::escape`]) — the same
//!   function the CPU renderer calls — and writes the escape time (and `|z_n|²` for smooth
//!   colouring).
//! - `colorize`: the colour pass, one thread per pixel of the escape pass's output
//!   ([`Coloring::color`]), averaging supersampled deep bands' samples. Keeping it out of the escape kernel keeps that kernel's registers
//!   and instructions to the escape loop; the pass is memory-bound.
//! - `mandelbrot_ss_f32` / `mandelbrot_ss_f64`: escape time and colour with supersampling
//!   ([`RenderJob::pixel`]): each pixel averages its samples' colours, so colouring stays in
//!   the kernel.
//! - `mandelbrot_perturb`: the escape pass of deep zooms, by perturbation from a reference
//!   orbit ([`DeepJob::escape`]).
//! - `mandelbrot_naive_f32` / `mandelbrot_naive_f64`: the plain escape-time loop
//!   ([`escape_time`]) and [`Palette::color`], kept as the baseline the benchmark compares
//!   against (same counts and colours as the renderer with discrete colouring, no
//!   supersampling).
//!
//! All are safe to launch: outputs are [`OutSlice`]s, each thread writes only its own pixel.

use common::{
    Band, Complex, Escape, Palette, Real, RenderJob, Rgb, Viewport,
    bla::Bla,
    escape_time,
    palette::{Coloring, SampleGrid, unpack_rgb},
    perturb::DeepJob,
};
use cuda_std::prelude::*;

/// The escape pass for the rows `band` of `job` (one sample per pixel: `job.supersample ≤
/// 1`), `f32` arithmetic, one thread per pixel; launch a 2D grid covering
/// `job.width_px × band.rows` threads (e.g. `host::launch::for_image`).
///
/// Writes, for image pixel `(x, band.first_row + r)`, `counts[r·width + x]` (its escape time)
/// and `norms[r·width + x]` (`|z_n|²` at escape as `f32`, `0` inside; what smooth colouring
/// needs): see [`RenderJob::escape_single`]. Pixels beyond a buffer's length are not written
/// to it: give `counts` at least `job.width_px · band.rows` elements, and `norms` as many or
/// none (discrete colouring needs no norms). [`colorize`] turns both into colours.
///
/// # Panics
/// If `job.supersample > 1` (use [`mandelbrot_ss_f32`]): the launch fails with a trap.
#[kernel]
pub fn mandelbrot_f32(
    job: RenderJob<f32>,
    band: Band,
    counts: OutSlice<u32>,
    norms: OutSlice<f32>,
) {
    assert!(job.supersample <= 1);
    escape_pixel(&job, band, &counts, &norms);
}

/// [`mandelbrot_f32`] with `f64` arithmetic.
///
/// # Panics
/// If `job.supersample > 1` (use [`mandelbrot_ss_f64`]).
#[kernel]
pub fn mandelbrot_f64(
    job: RenderJob<f64>,
    band: Band,
    counts: OutSlice<u32>,
    norms: OutSlice<f32>,
) {
    assert!(job.supersample <= 1);
    escape_pixel(&job, band, &counts, &norms);
}

/// The deep-zoom escape pass by perturbation: for image pixel `(x, band.first_row + r)`,
/// [`DeepJob::escape`] against the reference orbit `orbit` (`orbit[k] = Z_k` of the view's
/// centre, rounded to `f64`; at least 2 entries) and its bilinear-approximation table `bla`
/// (empty: no skipping), the same function the CPU renderer calls.
/// Writes `counts[r·width + x]` and `norms[r·width + x]` (`|z_n|²` at escape as `f32`, `0`
/// inside) as [`mandelbrot_f64`] does; one thread per pixel, a 2D grid covering
/// `job.width_px × band.rows` threads.
#[kernel]
pub fn mandelbrot_perturb(
    job: DeepJob,
    band: Band,
    orbit: &[Complex<f64>],
    bla: &[Bla],
    counts: OutSlice<u32>,
    norms: OutSlice<f32>,
) {
    let (x, r) = index_2d();
    if x < job.width_px && r < band.rows && band.first_row + r < job.height_px {
        let p = job.escape(orbit, bla, x, band.first_row + r);
        // Element r·width + x: this thread's own (write_2d), bounds-checked.
        counts.write_2d(job.width_px, p.n);
        norms.write_2d(job.width_px, p.norm_sqr as f32);
    }
}

/// The body of the escape kernels: this thread's pixel of `band`.
#[inline(always)]
fn escape_pixel<F: Real>(
    job: &RenderJob<F>,
    band: Band,
    counts: &OutSlice<u32>,
    norms: &OutSlice<f32>,
) {
    let (x, r) = index_2d();
    if x < job.width_px && r < band.rows && band.first_row + r < job.height_px {
        let e = job.escape_single(x, band.first_row + r);
        // Element r·width + x: this thread's own (write_2d), bounds-checked; an empty `norms`
        // takes no write.
        counts.write_2d(job.width_px, e.n);
        norms.write_2d(job.width_px, e.norm_sqr);
    }
}

/// The colour pass: for pixel `i` of a band, `rgb[i]` is the colour
/// `coloring.color(Escape { n: counts[k], norm_sqr: norms[k] }, max_iter)` of its sample
/// `k = i`, or with `grid.supersample > 1` the rounded average of its `s × s` samples'
/// colours ([`SampleGrid::pixel_color`], the function the CPU's deep bands call). One thread
/// per pixel (1D launch), for `i < min(counts.len() / s², rgb.len())`. With `norms` empty
/// (discrete colouring) `norm_sqr` is 0; otherwise `norms` must be as long as `counts`
/// (missing elements read as 0). `table`: for discrete colouring, the colours of escape times
/// `0 .. table.len()` from [`Coloring::fill_discrete_table`] (packed `r | g << 8 | b << 16`),
/// looked up instead of computed; empty otherwise. Float bands (one sample per pixel) and
/// deep bands (any supersampling) both go through this kernel.
#[kernel]
pub fn colorize(
    coloring: Coloring,
    max_iter: u32,
    grid: SampleGrid,
    table: &[u32],
    counts: &[u32],
    norms: &[f32],
    rgb: OutSlice<Rgb>,
) {
    let i = index_1d();
    if i < counts.len() / grid.samples_per_px() {
        let color = grid.pixel_color(i, |k| {
            let n = counts[k];
            if (n as usize) < table.len() {
                unpack_rgb(table[n as usize])
            } else {
                let norm_sqr = if k < norms.len() { norms[k] } else { 0.0 };
                coloring.color(Escape { n, norm_sqr }, max_iter)
            }
        });
        // Element i: this thread's own, bounds-checked.
        rgb.write_at_thread(color);
    }
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
