//! Kernels that exercise the launch layer: every parameter kind, the safe output methods,
//! and by-value `#[repr(C)]` structs (their layout on the GPU is compared with the host's).

use common::{Complex, Palette, Viewport};
use cuda_std::prelude::*;

/// `out[i] = a · x[i] + b` for `i < min(x.len(), out.len())` (1D launch, one thread per
/// element). Safe: reads a slice, writes only this thread's element of `out`.
#[kernel]
pub fn scale_offset_f32(x: &[f32], out: OutSlice<f32>, a: f32, b: f32) {
    let i = index_1d();
    if i < x.len() {
        out.write_at_thread(a * x[i] + b);
    }
}

/// Writes `y · width + x` at pixel `(x, y)` of a row-major `width`-wide image (2D launch).
#[kernel]
pub fn iota_2d_u32(out: OutSlice<u32>, width: u32) {
    let (x, y) = index_2d();
    out.write_2d(width, y * width + x);
}

/// Writes the bits of every field of its by-value parameters to `out` (thread 0 only), so the
/// host can check that the GPU sees exactly the bytes it sent:
/// `[width_px, height_px, origin.re, origin.im, step_re, step_im, palette, c.re, c.im, flag]`
/// (floats as their IEEE bits widened to u64).
#[kernel]
pub fn abi_probe(
    view: Viewport<f64>,
    palette: Palette,
    c: Complex<f32>,
    flag: u8,
    out: OutSlice<u64>,
) {
    if index_1d() == 0 {
        let fields = [
            u64::from(view.width_px),
            u64::from(view.height_px),
            view.origin.re.to_bits(),
            view.origin.im.to_bits(),
            view.step_re.to_bits(),
            view.step_im.to_bits(),
            palette as u64,
            u64::from(c.re.to_bits()),
            u64::from(c.im.to_bits()),
            u64::from(flag),
        ];
        for (i, v) in fields.into_iter().enumerate() {
            // SAFETY: only thread 0 writes, and it writes each element once.
            unsafe { out.write(i, v) };
        }
    }
}

/// `dst[i] = src[i]` for `i < n` through raw pointers (1D launch).
///
/// # Safety
/// `src` and `dst` point to device buffers of at least `n` `u32`s that do not overlap, and
/// nothing else writes `dst` during the launch.
#[kernel]
pub unsafe fn raw_copy_u32(src: *const u32, dst: *mut u32, n: u32) {
    let i = index_1d();
    if i < n as usize {
        // SAFETY: i < n, within both buffers (caller contract).
        unsafe { *dst.add(i) = *src.add(i) };
    }
}
