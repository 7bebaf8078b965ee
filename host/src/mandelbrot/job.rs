//! The band jobs of the Mandelbrot renderer: [`FloatJob`] (escape times in `f32` or `f64`)
//! and [`BandJob`] (a float or a perturbed job, chosen at run time). Both are
//! [`BandKernel`]s; their GPU side ([`super::GpuBandKernel`]) is beside the GPU renderer
//! (`gpu`), which uses this module, not the other way round.

use super::{cpu::render_band_cpu_until, precision::Precision};
use crate::{
    band::{BandImage, BandKernel, RenderControl},
    deep::PerturbedJob,
};
use common::{Band, RenderJob};

/// Escape times in `f32` or `f64`, one [`RenderJob::pixel`] per pixel (supersampled pixels
/// average their samples within the pixel's work): `mandelbrot_f32`/`_f64`/`_ss_*` on the
/// GPU, [`render_band_cpu_until`] on the CPU.
#[derive(Clone, Copy, Debug)]
pub struct FloatJob<'a> {
    /// The image.
    pub job: &'a RenderJob<f64>,
    /// The float format (`job` is cast to `f32` for [`Precision::F32`]).
    pub precision: Precision,
}

impl BandKernel for FloatJob<'_> {
    fn width_px(&self) -> u32 {
        self.job.width_px
    }

    fn height_px(&self) -> u32 {
        self.job.height_px
    }

    /// One: supersampled pixels average their samples within the pixel's work.
    fn buffer_px_per_px(&self) -> usize {
        1
    }

    fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage> {
        render_band_cpu_until(self.job, self.precision, band, want_counts, control)
    }
}

/// A float or a perturbed job, chosen at run time (the CLI's arithmetic rule picks one per
/// view): a [`BandKernel`] that hands every call to the job it holds.
#[derive(Clone, Copy, Debug)]
pub enum BandJob<'a> {
    /// Escape times in `f32` or `f64`.
    Float(FloatJob<'a>),
    /// Perturbation from a reference orbit (`mandelbrot_perturb` on the GPU).
    Perturbed(&'a PerturbedJob),
}

impl BandJob<'_> {
    /// [`BandKernel::render_cpu_until`], callable without importing the trait.
    pub fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage> {
        self.kernel().render_cpu_until(band, want_counts, control)
    }

    /// The job it holds.
    fn kernel(&self) -> &dyn BandKernel {
        match self {
            Self::Float(f) => f,
            Self::Perturbed(p) => *p,
        }
    }
}

impl BandKernel for BandJob<'_> {
    fn width_px(&self) -> u32 {
        self.kernel().width_px()
    }

    fn height_px(&self) -> u32 {
        self.kernel().height_px()
    }

    fn buffer_px_per_px(&self) -> usize {
        self.kernel().buffer_px_per_px()
    }

    fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage> {
        self.kernel().render_cpu_until(band, want_counts, control)
    }
}
