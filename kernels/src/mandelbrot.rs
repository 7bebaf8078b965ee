//! Mandelbrot kernels: one thread per pixel over a 2D grid covering the image (or a band of
//! its rows).
//!
//! - `mandelbrot_f32` / `mandelbrot_f64`: the renderer. Each thread calls
//!   [`RenderJob::pixel`]: cardioid/bulb tests, periodicity checking, smooth or discrete
//!   colouring, supersampling — the same function the CPU renderer calls.
//! - `mandelbrot_naive_f32` / `mandelbrot_naive_f64`: the plain escape-time loop
//!   ([`escape_time`]) and [`Palette::color`], kept as the baseline the benchmark compares
//!   against (same counts and colours as the renderer with discrete colouring, no
//!   supersampling).

use common::{Band, Palette, RenderJob, Rgb, Viewport, escape_time};
use cuda_std::prelude::*;

/// Entry names of this module's kernels.
pub const KERNELS: &[&str] = &[
    "mandelbrot_f32",
    "mandelbrot_f64",
    "mandelbrot_naive_f32",
    "mandelbrot_naive_f64",
];

/// Renders the rows `band` of `job`, `f32` arithmetic, one thread per pixel; launch a 2D grid
/// covering `job.width_px × band.rows` threads.
///
/// Writes, for image pixel `(x, band.first_row + r)`, `counts[r·width + x]` (the sum of its
/// samples' escape times) and `rgb[r·width + x]` (its colour): see [`RenderJob::pixel`].
///
/// # Safety
/// - `counts` and `rgb` point to device allocations of at least `job.width_px · band.rows`
///   elements each, which no other code reads or writes during the launch.
/// - `job.coloring` holds valid enum discriminants (as built by host code).
#[kernel]
pub unsafe fn mandelbrot_f32(job: RenderJob<f32>, band: Band, counts: *mut u32, rgb: *mut Rgb) {
    let (x, r) = index_2d();
    if x < job.width_px && r < band.rows && band.first_row + r < job.height_px {
        let (n, color) = job.pixel(x, band.first_row + r);
        let i = r as usize * job.width_px as usize + x as usize;
        // SAFETY: i < width · rows, within both allocations (caller contract); each thread
        // writes only its own pixel.
        unsafe {
            *counts.add(i) = n;
            *rgb.add(i) = color;
        }
    }
}

/// [`mandelbrot_f32`] with `f64` arithmetic.
///
/// # Safety
/// As for [`mandelbrot_f32`].
#[kernel]
pub unsafe fn mandelbrot_f64(job: RenderJob<f64>, band: Band, counts: *mut u32, rgb: *mut Rgb) {
    let (x, r) = index_2d();
    if x < job.width_px && r < band.rows && band.first_row + r < job.height_px {
        let (n, color) = job.pixel(x, band.first_row + r);
        let i = r as usize * job.width_px as usize + x as usize;
        // SAFETY: as in `mandelbrot_f32`.
        unsafe {
            *counts.add(i) = n;
            *rgb.add(i) = color;
        }
    }
}

/// The baseline: plain escape time and discrete colour, `f32` arithmetic, one thread per pixel
/// of the whole `view`.
///
/// Writes `counts[y·width + x] = escape_time(...)` and `rgb[y·width + x] = palette.color(...)`.
///
/// # Safety
/// - `counts` and `rgb` point to device allocations of at least `view.len()` elements each,
///   which no other code reads or writes during the launch.
/// - `palette` is a valid [`Palette`] discriminant.
#[kernel]
pub unsafe fn mandelbrot_naive_f32(
    view: Viewport<f32>,
    max_iter: u32,
    palette: Palette,
    counts: *mut u32,
    rgb: *mut Rgb,
) {
    let (x, y) = index_2d();
    if x < view.width_px && y < view.height_px {
        let n = escape_time(view.pixel_to_complex(x, y), max_iter);
        let i = y as usize * view.width_px as usize + x as usize;
        // SAFETY: i < view.len(), within both allocations (caller contract); each thread
        // writes only its own pixel.
        unsafe {
            *counts.add(i) = n;
            *rgb.add(i) = palette.color(n, max_iter);
        }
    }
}

/// [`mandelbrot_naive_f32`] with `f64` arithmetic.
///
/// # Safety
/// As for [`mandelbrot_naive_f32`].
#[kernel]
pub unsafe fn mandelbrot_naive_f64(
    view: Viewport<f64>,
    max_iter: u32,
    palette: Palette,
    counts: *mut u32,
    rgb: *mut Rgb,
) {
    let (x, y) = index_2d();
    if x < view.width_px && y < view.height_px {
        let n = escape_time(view.pixel_to_complex(x, y), max_iter);
        let i = y as usize * view.width_px as usize + x as usize;
        // SAFETY: as in `mandelbrot_naive_f32`.
        unsafe {
            *counts.add(i) = n;
            *rgb.add(i) = palette.color(n, max_iter);
        }
    }
}
