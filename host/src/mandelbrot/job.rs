//! [`BandJob`]: what a band renderer computes, float or perturbed work, one interface for
//! every renderer (CPU, one GPU, the pool).

use super::{
    cpu::render_band_cpu_until,
    precision::{Arithmetic, Precision},
};
use crate::band::{BandImage, RenderControl};
use common::{Band, RenderJob};

/// What a band renderer computes: one interface for every arithmetic. Bands of either kind
/// go through the same renderers ([`super::BandRenderer`], [`super::GpuRenderer::render`],
/// [`super::pool::GpuPool::render`]) and the same callers (streaming PNG, progress, stop checks).
#[derive(Clone, Copy, Debug)]
pub enum BandJob<'a> {
    /// Escape times in `f32` or `f64` (`mandelbrot_f32`/`_f64`/`_ss_*` on the GPU).
    Float {
        /// The image.
        job: &'a RenderJob<f64>,
        /// The float format.
        precision: Precision,
    },
    /// Perturbation from a reference orbit (`mandelbrot_perturb` on the GPU).
    Perturbed(&'a crate::deep::PerturbedJob),
}

impl BandJob<'_> {
    /// Image width in pixels.
    pub fn width_px(&self) -> u32 {
        match self {
            Self::Float { job, .. } => job.width_px,
            Self::Perturbed(p) => p.job.width_px,
        }
    }

    /// Image height in pixels.
    pub fn height_px(&self) -> u32 {
        match self {
            Self::Float { job, .. } => job.height_px,
            Self::Perturbed(p) => p.job.height_px,
        }
    }

    /// The arithmetic.
    pub fn arithmetic(&self) -> Arithmetic {
        match self {
            Self::Float { precision, .. } => (*precision).into(),
            Self::Perturbed(_) => Arithmetic::Perturbed,
        }
    }

    /// Device buffer elements per band pixel of a [`super::GpuRenderer`] for this job: the
    /// samples per pixel for perturbed jobs (their samples are averaged on the host), one for
    /// float jobs (their supersampling kernels average on the device). Also what a CPU render
    /// adds to [`RenderControl::samples_done`] per pixel.
    pub fn buffer_px_per_px(&self) -> usize {
        match self {
            Self::Float { .. } => 1,
            Self::Perturbed(p) => (p.supersample * p.supersample) as usize,
        }
    }

    /// Renders the rows `band` on the CPU, giving up (`None`) once `control.stop` is set
    /// (checked before every pixel or sample) and counting finished pixels or samples in
    /// `control.samples_done` ([`BandJob::buffer_px_per_px`] per pixel).
    pub fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage> {
        match self {
            Self::Float { job, precision } => {
                render_band_cpu_until(job, *precision, band, want_counts, control)
            }
            Self::Perturbed(p) => p.render_band_cpu_until(band, want_counts, control),
        }
    }
}
