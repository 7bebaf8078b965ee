//! Whole images on one GPU: [`render_mandelbrot`] and friends, band by band through one
//! [`GpuRenderer`].

use super::{BufferSize, CopyBack, GpuRenderer, RenderBuffers};
use crate::{
    band::CopyTimes,
    gpu::{Gpu, GpuError},
    mandelbrot::{GpuTimings, Image, RenderParams, Style, rows_per_band},
};
use common::Band;
use std::time::{Duration, Instant};

/// Renders on this GPU with the default [`Style`]: one thread per pixel, 16×16 blocks.
///
/// # Errors
/// As [`render_mandelbrot_styled`].
pub fn render_mandelbrot(
    gpu: &Gpu,
    params: &RenderParams,
) -> Result<(Image, GpuTimings), GpuError> {
    render_mandelbrot_styled(gpu, params, &Style::default())
}

/// Renders the whole image on this GPU in bands of at most `max_band_px` pixels (`None`:
/// one band), reusing one set of device buffers; colours come back as
/// [`CopyBack::for_render`] says.
///
/// # Errors
/// [`GpuError::OutOfMemory`] if the band buffers ([`super::BAND_BYTES_PER_PX`] bytes per pixel) do not fit,
/// [`GpuError::Launch`] if a kernel fails, [`GpuError::Driver`] for allocation or copy
/// failures.
pub fn render_mandelbrot_banded(
    gpu: &Gpu,
    params: &RenderParams,
    style: &Style,
    max_band_px: Option<u64>,
) -> Result<(Image, GpuTimings), GpuError> {
    let start = Instant::now();
    let job = params.job(style);
    let rows = match max_band_px {
        Some(px) => rows_per_band(job.width_px, px),
        None => job.height_px,
    }
    .min(job.height_px);
    let band_px = job.width_px as usize * rows as usize;
    let size = BufferSize {
        band_px,
        samples_per_px: 1,
        copy_back: CopyBack::for_render(params.view.len() as u64, band_px as u64),
    };
    let mut renderer = GpuRenderer::from_buffers(gpu, RenderBuffers::new(gpu, size)?)?;
    let len = params.view.len();
    let mut image = Image {
        width_px: job.width_px,
        height_px: job.height_px,
        counts: Vec::with_capacity(len),
        rgb: Vec::with_capacity(3 * len),
    };
    let mut kernel = Duration::ZERO;
    let mut copies = CopyTimes::default();
    for band in Band::split(job.height_px, rows) {
        let b = renderer.render_band(&job, params.precision, band, true)?;
        kernel += b.kernel;
        copies += b.copies;
        image.counts.extend_from_slice(&b.counts);
        image.rgb.extend_from_slice(&b.rgb);
    }
    let timings = GpuTimings {
        kernel,
        copies,
        total: start.elapsed(),
    };
    Ok((image, timings))
}

/// Renders on this GPU in one launch.
///
/// # Errors
/// As [`render_mandelbrot_banded`].
pub fn render_mandelbrot_styled(
    gpu: &Gpu,
    params: &RenderParams,
    style: &Style,
) -> Result<(Image, GpuTimings), GpuError> {
    render_mandelbrot_banded(gpu, params, style, None)
}
