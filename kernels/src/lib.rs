//! ferrocuda's kernels. Each kernel is a thin entry point: it finds its element from the
//! thread indices and calls a plain function from `common`, the same function the CPU
//! reference uses.
//!
//! Conventions: images are row-major, pixel `(0, 0)` is top-left; kernels that take a
//! [`Viewport`] expect a 2D launch covering at least `width_px × height_px` threads (extra
//! threads do nothing).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use common::{Palette, Rgb, Viewport, escape_time};
use cuda_std::prelude::*;

/// The name of every kernel entry point in the PTX module, for loading and for tests.
pub const KERNEL_NAMES: [&str; 3] = ["mandelbrot_f32", "mandelbrot_f64", "vector_add_f32"];

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

/// `c[i] = a[i] + b[i]` for `i < min(a.len(), b.len())`, one thread per element (1D launch).
///
/// # Safety
/// `c` points to a device allocation of at least `min(a.len(), b.len())` `f32`s that no
/// other code accesses during the launch.
#[kernel]
pub unsafe fn vector_add_f32(a: &[f32], b: &[f32], c: *mut f32) {
    let i = index_1d();
    if i < a.len() && i < b.len() {
        // SAFETY: i is in bounds of `c` (caller contract); one thread per element.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}
