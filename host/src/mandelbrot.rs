//! The Mandelbrot renderer: escape time and colour for every pixel of a [`Viewport`], on the
//! GPU ([`Gpu::render_mandelbrot`]) or the CPU ([`render_cpu`], rayon). Both call the same
//! `common` functions and give bit-identical images.

use crate::gpu::{ByValue, Gpu, GpuError, elapsed_ms, launch_config_2d};
use common::{Palette, Viewport, escape_time};
use cudarc::driver::PushKernelArg;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// Floating-point precision of the orbit computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// 32-bit floats: fastest; enough while the pixel spacing is well above f32's resolution
    /// at the view's coordinates.
    F32,
    /// 64-bit floats.
    F64,
}

impl Precision {
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    /// The precision a view needs: `f32` while the pixel spacing is at least 2^-16 of the
    /// largest coordinate magnitude (f32 has 24 significand bits: this leaves 8 bits to
    /// resolve within a pixel), else `f64`. The second value is `true` when even f64 falls
    /// short by the same rule (spacing below 2^-44 of the magnitude), i.e. the image will
    /// show blocky artefacts.
    pub fn for_view(view: &Viewport<f64>) -> (Self, bool) {
        let c = view.center();
        let magnitude = c.re.abs().max(c.im.abs()).max(1.0);
        let relative = view.min_step() / magnitude;
        let precision = if relative >= 2f64.powi(-16) {
            Self::F32
        } else {
            Self::F64
        };
        (precision, relative < 2f64.powi(-44))
    }
}

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

/// A rendered image: per-pixel escape times and colours, row-major, top row first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width_px: u32,
    /// Height in pixels.
    pub height_px: u32,
    /// Escape time of each pixel (`width_px · height_px` values).
    pub counts: Vec<u32>,
    /// Colour of each pixel as `[r, g, b, r, g, b, ...]` (`3 · width_px · height_px` bytes,
    /// the layout of an 8-bit RGB PNG).
    pub rgb: Vec<u8>,
}

/// Timings of a GPU render.
#[derive(Clone, Copy, Debug)]
pub struct GpuTimings {
    /// Kernel execution time (CUDA events around the launch).
    pub kernel: Duration,
    /// Whole render: allocation, launch, copy back to the host.
    pub total: Duration,
}

/// Renders on the CPU with rayon (one task per row).
pub fn render_cpu(params: &RenderParams) -> Image {
    match params.precision {
        Precision::F32 => render_cpu_with(params.view.cast::<f32>(), params),
        Precision::F64 => render_cpu_with(params.view, params),
    }
}

fn render_cpu_with<F: common::Real + Send + Sync>(
    view: Viewport<F>,
    params: &RenderParams,
) -> Image {
    let width = view.width_px as usize;
    let mut counts = vec![0u32; view.len()];
    let mut rgb = vec![0u8; 3 * view.len()];
    counts
        .par_chunks_mut(width)
        .zip(rgb.par_chunks_mut(3 * width))
        .enumerate()
        .for_each(|(y, (count_row, rgb_row))| {
            for (x, (count, color)) in count_row
                .iter_mut()
                .zip(rgb_row.chunks_exact_mut(3))
                .enumerate()
            {
                let n = escape_time(view.pixel_to_complex(x as u32, y as u32), params.max_iter);
                *count = n;
                color.copy_from_slice(&params.palette.color(n, params.max_iter));
            }
        });
    Image {
        width_px: view.width_px,
        height_px: view.height_px,
        counts,
        rgb,
    }
}

impl Gpu {
    /// Renders on this GPU: one thread per pixel, 16×16 blocks.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] if the image buffers (7 bytes per pixel) do not fit,
    /// [`GpuError::Launch`] if the kernel fails, [`GpuError::Driver`] for allocation or copy
    /// failures.
    pub fn render_mandelbrot(
        &self,
        params: &RenderParams,
    ) -> Result<(Image, GpuTimings), GpuError> {
        let start = Instant::now();
        let view = params.view;
        let len = view.len();
        self.check_free("the image", len * (4 + 3))?;
        let stream = self.stream();
        let mut counts = stream
            .alloc_zeros::<u32>(len)
            .map_err(GpuError::driver("allocating the escape-time buffer"))?;
        let mut rgb = stream
            .alloc_zeros::<u8>(len * 3)
            .map_err(GpuError::driver("allocating the colour buffer"))?;
        let cfg = launch_config_2d(view.width_px, view.height_px);
        let max_iter = params.max_iter;
        let palette = ByValue(params.palette);
        let view32 = ByValue(view.cast::<f32>());
        let view64 = ByValue(view);
        let kernel = match params.precision {
            Precision::F32 => "mandelbrot_f32",
            Precision::F64 => "mandelbrot_f64",
        };
        let mut args = self.launch_builder(kernel);
        match params.precision {
            Precision::F32 => args.arg(&view32),
            Precision::F64 => args.arg(&view64),
        };
        args.arg(&max_iter)
            .arg(&palette)
            .arg(&mut counts)
            .arg(&mut rgb);
        let start_event = self.record_event()?;
        // SAFETY: arguments match `kernels::mandelbrot_f32/f64(view, max_iter, palette,
        // counts, rgb)`; both buffers hold `len` pixels; nothing else uses them.
        unsafe { self.launch(kernel, cfg, args)? };
        let end_event = self.record_event()?;
        self.sync_after(kernel, cfg)?;
        let kernel_ms = elapsed_ms(&start_event, &end_event)?;
        let counts = stream
            .clone_dtoh(&counts)
            .map_err(GpuError::driver("copying escape times to the host"))?;
        let rgb = stream
            .clone_dtoh(&rgb)
            .map_err(GpuError::driver("copying colours to the host"))?;
        let image = Image {
            width_px: view.width_px,
            height_px: view.height_px,
            counts,
            rgb,
        };
        let timings = GpuTimings {
            kernel: Duration::from_secs_f64(f64::from(kernel_ms) / 1e3),
            total: start.elapsed(),
        };
        Ok((image, timings))
    }
}
