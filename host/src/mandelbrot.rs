//! The Mandelbrot renderer: escape time and colour for every pixel of a [`Viewport`](common::Viewport), on the
//! GPU ([`GpuRenderer`], [`render_mandelbrot`]) or the CPU ([`render_cpu`], rayon). Both
//! call the same `common` function, [`RenderJob::pixel`](common::RenderJob::pixel), and give bit-identical images.
//!
//! Large images are rendered in [`Band`]s of rows ([`rows_per_band`]): each band is one launch
//! into device buffers allocated once ([`GpuRenderer::new`]), copied back and handed to the
//! caller (e.g. a streaming PNG encoder), so neither device nor host memory grows with the
//! image. Bands are independent (pixel coordinates stay global), so several GPUs can share
//! them: [`pool::GpuPool`].

//!
//! One module per job: [`precision`] (which arithmetic a view needs), `params` (what to
//! render, the style, image and band sizes), `cpu` (the CPU renderer), `job` ([`FloatJob`]
//! and [`BandJob`], float or perturbed), `color` (the colour table), `gpu` ([`GpuRenderer`],
//! [`GpuBandKernel`]; its kernels table, colour copies and whole-image wrappers in `gpu/`),
//! [`pool`] (several GPUs) and [`deep`]
//! (whole deep images); their items are re-exported here.

mod color;
mod cpu;
pub mod deep;
mod gpu;
mod job;
mod params;
pub mod pool;
pub mod precision;

pub use crate::band::{BandImage, BandKernel, CopyTimes, RenderControl};
pub(crate) use crate::gpu::timed;
pub use color::COLOR_TABLE_LEN;
pub(crate) use color::color_table;
pub use cpu::{render_band_cpu, render_band_cpu_until, render_cpu, render_cpu_styled};
pub use gpu::{
    BAND_BYTES_PER_PX, BandBuffers, BufferSize, CopyBack, DIRECT_COPY_MAX_PX, GpuBandKernel,
    GpuRenderer, QueuedBand, RenderBuffers, RenderKernels, launch_render, render_mandelbrot,
    render_mandelbrot_banded, render_mandelbrot_styled,
};
pub use job::{BandJob, FloatJob};
pub use params::{
    GpuTimings, Image, MAX_ITERATIONS_PER_LAUNCH, RenderParams, RenderTimes, Style, rows_per_band,
    rows_per_launch,
};
pub use precision::Precision;

use crate::gpu::GpuError;
use common::Band;

/// Where bands are rendered: the CPU, or a GPU with its buffers. One type for the tiled
/// writers (CLI `zoom`); [`pool::GpuPool`] hands bands to several GPUs.
#[derive(Debug)]
pub enum BandRenderer<'g> {
    /// The CPU (rayon).
    Cpu,
    /// A GPU.
    Gpu(Box<GpuRenderer<'g>>),
}

impl BandRenderer<'_> {
    /// Renders the rows `band` of `work` (any [`GpuBandKernel`]); stops early, returning
    /// `None`, once `control.stop` is set: on the CPU within a pixel; on the GPU after the
    /// band's launch (keep GPU bands short, e.g. with [`rows_per_launch`]).
    ///
    /// # Errors
    /// As [`GpuRenderer::render`]; the CPU never fails.
    pub fn render(
        &mut self,
        work: impl GpuBandKernel,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Result<Option<BandImage>, GpuError> {
        match self {
            Self::Cpu => Ok(work.render_cpu_until(band, want_counts, control)),
            Self::Gpu(g) => g.render(work, band, want_counts).map(Some),
        }
    }
}
