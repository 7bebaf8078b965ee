//! The CPU renderer: rayon over rows, one task per row, calling the same `common`
//! function as the GPU kernels ([`RenderJob::pixel`]), so the images are bit-identical.

use super::{
    params::{Image, RenderParams, Style},
    precision::Precision,
};
use crate::band::{BandImage, CopyTimes, RenderControl, SampleTally};
use common::{Band, Real, RenderJob};
use rayon::prelude::*;
use std::{sync::atomic::Ordering, time::Instant};

/// Renders on the CPU with rayon (one task per row), default [`Style`].
pub fn render_cpu(params: &RenderParams) -> Image {
    render_cpu_styled(params, &Style::default())
}

/// Renders on the CPU with rayon (one task per row).
pub fn render_cpu_styled(params: &RenderParams, style: &Style) -> Image {
    let job = params.job(style);
    let band = Band {
        first_row: 0,
        rows: job.height_px,
    };
    let b = render_band_cpu(&job, params.precision, band, true);
    Image {
        width_px: job.width_px,
        height_px: job.height_px,
        counts: b.counts,
        rgb: b.rgb,
    }
}

/// Renders the rows `band` of `job` on the CPU (rayon, one task per row). `counts` is empty
/// unless `want_counts`.
pub fn render_band_cpu(
    job: &RenderJob<f64>,
    precision: Precision,
    band: Band,
    want_counts: bool,
) -> BandImage {
    render_band_cpu_until(job, precision, band, want_counts, &RenderControl::new())
        .expect("not stopped: the flag is never set")
}

/// [`render_band_cpu`] that gives up as soon as `control.stop` is set (checked before every
/// pixel, so it returns within one pixel's escape-time loop per thread), and counts finished
/// pixels in `control.samples_done` (within rows): `None` when stopped.
pub fn render_band_cpu_until(
    job: &RenderJob<f64>,
    precision: Precision,
    band: Band,
    want_counts: bool,
    control: &RenderControl,
) -> Option<BandImage> {
    let start = Instant::now();
    let (counts, rgb) = match precision {
        Precision::F32 => band_cpu_with(&job.cast::<f32>(), band, want_counts, control),
        Precision::F64 => band_cpu_with(job, band, want_counts, control),
    };
    if control.stop.load(Ordering::Relaxed) {
        return None;
    }
    Some(BandImage {
        band,
        counts,
        norms: Vec::new(),
        rgb,
        kernel: start.elapsed(),
        copies: CopyTimes::default(),
    })
}

fn band_cpu_with<F: Real + Send + Sync>(
    job: &RenderJob<F>,
    band: Band,
    want_counts: bool,
    control: &RenderControl,
) -> (Vec<u32>, Vec<u8>) {
    let width = job.width_px as usize;
    let len = width * band.rows as usize;
    let mut counts = vec![0u32; len];
    let mut rgb = vec![0u8; 3 * len];
    counts
        .par_chunks_mut(width)
        .zip(rgb.par_chunks_mut(3 * width))
        .enumerate()
        .for_each(|(r, (count_row, rgb_row))| {
            cpu_row(job, band.first_row + r as u32, count_row, rgb_row, control);
        });
    if !want_counts {
        counts = Vec::new();
    }
    (counts, rgb)
}

/// One image row on the CPU. The fused multiply-adds of the orbit are LLVM `fma` intrinsics:
/// on x86-64 CPUs with FMA (checked at run time) the row is compiled with the `fma` target
/// feature, so each is one `vfmadd` instead of a call to the C library's `fma`. Both are
/// correctly rounded: the bits are the same.
fn cpu_row<F: Real>(
    job: &RenderJob<F>,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
    control: &RenderControl,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports FMA (checked just above).
        unsafe { cpu_row_fma(job, y, counts, rgb, control) };
        return;
    }
    cpu_row_plain(job, y, counts, rgb, control);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn cpu_row_fma<F: Real>(
    job: &RenderJob<F>,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
    control: &RenderControl,
) {
    cpu_row_plain(job, y, counts, rgb, control);
}

#[inline(always)]
fn cpu_row_plain<F: Real>(
    job: &RenderJob<F>,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
    control: &RenderControl,
) {
    let mut tally = SampleTally::new(control);
    for (x, (count, color)) in counts.iter_mut().zip(rgb.chunks_exact_mut(3)).enumerate() {
        if control.stop.load(Ordering::Relaxed) {
            return;
        }
        let (n, c) = job.pixel(x as u32, y);
        *count = n;
        color.copy_from_slice(&c);
        tally.add(n);
    }
}
