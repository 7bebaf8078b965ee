//! Mandelbrot kernels: one thread per pixel over a 2D grid covering the [`Viewport`].

use common::{Palette, Rgb, Viewport, escape_time};
use cuda_std::prelude::*;

/// Entry names of this module's kernels.
pub const KERNELS: &[&str] = &["mandelbrot_f32", "mandelbrot_f64"];

/// Mandelbrot escape time and colour, `f32` arithmetic, one thread per pixel.
///
/// Writes `counts[y·width + x] = escape_time(...)` and `rgb[y·width + x] = palette.color(...)`.
///
/// # Safety
/// - `counts` and `rgb` point to device allocations of at least `view.len()` elements each,
///   which no other code reads or writes during the launch.
/// - `palette` is a valid [`Palette`] discriminant.
#[kernel]
pub unsafe fn mandelbrot_f32(
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

/// Mandelbrot escape time and colour, `f64` arithmetic, one thread per pixel. Same contract
/// as [`mandelbrot_f32`].
///
/// # Safety
/// As for [`mandelbrot_f32`].
#[kernel]
pub unsafe fn mandelbrot_f64(
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
        // SAFETY: as in `mandelbrot_f32`.
        unsafe {
            *counts.add(i) = n;
            *rgb.add(i) = palette.color(n, max_iter);
        }
    }
}
