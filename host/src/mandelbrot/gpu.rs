//! The GPU renderer: [`GpuRenderer`] (band buffers allocated once, the escape and colour
//! passes, colours copied back through page-locked memory, the deep orbit and table
//! uploaded once per job), the GPU side of the band jobs ([`GpuBandKernel`]: [`FloatJob`],
//! [`PerturbedJob`], [`BandJob`]) and the whole-image wrappers ([`render_mandelbrot`] and
//! friends).
//!
//! By job: this file holds the renderer and what it runs; `gpu/kernels.rs` the kernels
//! table ([`RenderKernels`]) and a float band's launches; `gpu/copy_back.rs` the colours'
//! way back (the staging buffers, [`QueuedBand`]); `gpu/whole_image.rs` the whole-image
//! wrappers.

use super::{
    color::{COLOR_TABLE_LEN, color_table},
    job::{BandJob, FloatJob},
    precision::Precision,
};
use crate::{
    band::{BandImage, BandKernel, CopyTimes},
    deep::PerturbedJob,
    gpu::{Gpu, GpuError, queue},
    launch::for_num_elems,
};
use common::{
    Band, RenderJob, Rgb,
    palette::{Coloring, SampleGrid},
};
use copy_back::{ColorCopies, Results};
use cust::{error::GpuContext, memory::DeviceBuffer};
use std::time::Duration;

mod copy_back;
mod kernels;
mod whole_image;

pub use copy_back::QueuedBand;
pub(crate) use kernels::queue_render;
pub use kernels::{BandBuffers, RenderKernels, launch_render};
pub use whole_image::{render_mandelbrot, render_mandelbrot_banded, render_mandelbrot_styled};

/// Device bytes per band pixel of a [`GpuRenderer`]: escape time (4), `|z_n|²` (4), colour
/// (3).
pub const BAND_BYTES_PER_PX: usize = 4 + 4 + 3;

/// A [`BandKernel`] a [`GpuRenderer`] can run: the GPU side of a band job, beside the
/// renderer it drives (so [`crate::band`], below the renderer and the jobs, names neither).
/// [`GpuRenderer::render`], [`super::pool::GpuPool::render`] and
/// [`super::BandRenderer::render`] take any implementation.
pub trait GpuBandKernel: BandKernel {
    /// Queues the rows `band` of this job on `renderer` ([`GpuRenderer::queue`], which
    /// calls this once it has checked that a staging buffer is free): its uploads, kernels
    /// and the copy of its colours, and, only if `want_counts`, copies back `counts` (and
    /// for perturbed jobs `norms`) before returning.
    ///
    /// # Panics
    /// If the band holds more than the renderer's capacity or leaves the image
    /// (programming errors).
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a launch or a copy fails.
    fn queue_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError>;
}

impl GpuBandKernel for FloatJob<'_> {
    fn queue_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        renderer.queue_float(self.job, self.precision, band, want_counts)
    }
}

impl GpuBandKernel for PerturbedJob {
    fn queue_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        renderer.queue_perturbed(self, band, want_counts)
    }
}

impl GpuBandKernel for BandJob<'_> {
    fn queue_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        match self {
            Self::Float(f) => f.queue_gpu(renderer, band, want_counts),
            Self::Perturbed(p) => p.queue_gpu(renderer, band, want_counts),
        }
    }
}

impl<K: GpuBandKernel + ?Sized> GpuBandKernel for &K {
    fn queue_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        (**self).queue_gpu(renderer, band, want_counts)
    }
}

/// Device buffers for rendering bands of up to `capacity_px` elements (pixels, or samples of
/// supersampled perturbed bands), allocated once and reused for every band and every frame,
/// and two page-locked staging buffers the colours come back through.
///
/// A band is rendered in two steps, so that the host's work on one band overlaps the GPU's
/// work on the next: [`GpuRenderer::queue`] queues its uploads, kernels and the copy of its
/// colours into a staging buffer, and returns; [`GpuRenderer::finish`] waits for them and
/// moves the colours out. The staging buffers are used in turn, so one band can be queued
/// while the previous one is being finished ([`GpuRenderer::render`] does both at once).
pub struct GpuRenderer<'g> {
    gpu: &'g Gpu,
    kernels: RenderKernels,
    counts: DeviceBuffer<u32>,
    norms: DeviceBuffer<f32>,
    rgb: DeviceBuffer<Rgb>,
    /// The colour table of discrete shading ([`COLOR_TABLE_LEN`] entries), and the colouring
    /// and iteration limit it was filled for.
    table: DeviceBuffer<u32>,
    table_for: Option<(Coloring, u32)>,
    /// The colours' way back: staging buffers and the bands queued in them.
    copies: ColorCopies,
    capacity_px: usize,
    /// The reference orbit and BLA table of the last perturbed job, on this GPU.
    deep: crate::deep::render::DeepUpload,
}

impl std::fmt::Debug for GpuRenderer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRenderer")
            .field("capacity_px", &self.capacity_px)
            .field("staging_px", &self.copies.staging_px)
            .finish_non_exhaustive()
    }
}

impl<'g> GpuRenderer<'g> {
    /// Allocates buffers for bands of up to `capacity_px` pixels (11 bytes per pixel: escape
    /// time, `|z_n|²` for smooth colouring, colour), and 6 bytes per pixel of page-locked
    /// host memory (two staging buffers) for copying colours back.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] if they do not fit, [`GpuError::Driver`] if allocation fails.
    pub fn new(gpu: &'g Gpu, capacity_px: usize) -> Result<Self, GpuError> {
        Self::with_samples(gpu, capacity_px, 1)
    }

    /// [`GpuRenderer::new`] for bands of up to `capacity_px` pixels of `samples_per_px`
    /// samples each ([`BandKernel::buffer_px_per_px`]): device buffers for every sample,
    /// page-locked staging for the pixels' colours only.
    ///
    /// # Errors
    /// As [`GpuRenderer::new`].
    pub fn with_samples(
        gpu: &'g Gpu,
        capacity_px: usize,
        samples_per_px: usize,
    ) -> Result<Self, GpuError> {
        let staging_px = capacity_px.max(1);
        let capacity_px = staging_px * samples_per_px.max(1);
        gpu.check_free("the band buffers", capacity_px * BAND_BYTES_PER_PX)?;
        let stream = gpu.stream();
        let counts = DeviceBuffer::zeroed_async(capacity_px, stream)
            .gpu_context("allocating the escape-time buffer")?;
        let norms = DeviceBuffer::zeroed_async(capacity_px, stream)
            .gpu_context("allocating the |z|² buffer")?;
        let rgb = DeviceBuffer::zeroed_async(capacity_px, stream)
            .gpu_context("allocating the colour buffer")?;
        let copies = ColorCopies::new(gpu, staging_px)?;
        let table = DeviceBuffer::zeroed_async(COLOR_TABLE_LEN, stream)
            .gpu_context("allocating the colour table")?;
        Ok(Self {
            gpu,
            kernels: RenderKernels::new(gpu)?,
            counts,
            norms,
            rgb,
            table,
            table_for: None,
            copies,
            capacity_px,
            deep: crate::deep::render::DeepUpload::default(),
        })
    }

    /// The GPU.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// Renders the rows `band` of `work` (any [`GpuBandKernel`]: [`FloatJob`],
    /// [`PerturbedJob`], [`BandJob`]) and copies them back (`counts`, and for perturbed
    /// jobs `norms`, only if `want_counts`): [`GpuRenderer::queue`], then
    /// [`GpuRenderer::finish`].
    ///
    /// # Panics
    /// As [`GpuRenderer::queue`].
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a kernel or a copy fails.
    pub fn render(
        &mut self,
        work: impl GpuBandKernel,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        let queued = self.queue(work, band, want_counts)?;
        self.finish(queued)
    }

    /// Queues the rows `band` of `work` on the GPU's stream: uploads (the colour table, a
    /// perturbed job's orbit and BLA table), the kernels, and the copy of the colours into
    /// a free staging buffer; returns without waiting for the kernels, unless `want_counts`
    /// (then escape times, and for perturbed jobs `|z_n|²`, are copied back before it
    /// returns). [`GpuRenderer::finish`] gives the band. At most two bands may be queued
    /// and not yet finished.
    ///
    /// # Panics
    /// If two bands are queued and not finished, or if the band holds more than the
    /// capacity's pixels (samples, for perturbed jobs) or leaves the image (programming
    /// errors).
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a launch or a copy fails (a kernel's failure may only be
    /// reported by [`GpuRenderer::finish`]).
    pub fn queue(
        &mut self,
        work: impl GpuBandKernel,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        assert!(
            self.copies.has_room(),
            "two bands are queued on this renderer already: finish one first"
        );
        work.queue_gpu(self, band, want_counts)
    }

    /// Waits for the queued band `queued` (its kernels and the copy of its colours) and
    /// returns it, its colours moved out of the staging buffer. The host's move overlaps
    /// the GPU's work on a band queued after this one.
    ///
    /// # Panics
    /// If `queued` was not queued on this renderer, or was finished already.
    ///
    /// # Errors
    /// [`GpuError::Launch`] naming the kernel if one of the band's kernels failed, or a
    /// driver error of the copy.
    pub fn finish(&mut self, queued: QueuedBand) -> Result<BandImage, GpuError> {
        self.copies.finish(self.gpu, queued)
    }

    /// Renders the rows `band` of the perturbed job `p` and copies them back (`counts` and
    /// `norms`, one per sample, only if `want_counts`): [`GpuRenderer::render`] for a
    /// perturbed job.
    ///
    /// The reference orbit and BLA table are uploaded at the first band of a job and kept
    /// for later jobs sharing them; `mandelbrot_perturb` writes each sample's escape time
    /// and `|z_n|²`, and the colour pass of float bands (`colorize`) colours them,
    /// averaging supersampled pixels on the device ([`SampleGrid::pixel_color`], the
    /// function the CPU's [`PerturbedJob::finish_band`] calls). Only the colours come back,
    /// and the samples' escape times and `|z_n|²` if `want_counts`.
    ///
    /// # Panics
    /// As [`GpuRenderer::queue`].
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a kernel or a copy fails.
    pub fn render_perturbed(
        &mut self,
        p: &PerturbedJob,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        self.render(p, band, want_counts)
    }

    /// [`GpuRenderer::queue`] for a perturbed job ([`GpuRenderer::render_perturbed`]).
    fn queue_perturbed(
        &mut self,
        p: &PerturbedJob,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        let px = p.job.width_px as usize * band.rows as usize;
        let len = px * p.buffer_px_per_px();
        assert!(
            len <= self.capacity_px && px <= self.copies.staging_px,
            "band of {len} samples exceeds the buffers"
        );
        assert!(
            band.first_row + band.rows <= p.job.height_px,
            "band leaves the image"
        );
        let (coloring, max_iter) = (p.coloring, p.job.max_iter);
        let table = color_table(
            self.gpu,
            coloring,
            max_iter,
            &mut self.table,
            &mut self.table_for,
        )?;
        let escape = crate::deep::render::launch_perturbed(
            self.gpu,
            &self.kernels.perturb,
            &mut self.deep,
            p,
            band,
            &mut self.counts,
            &mut self.norms,
        )?;
        let copies = CopyTimes {
            htod: escape.htod + table.htod,
            dtoh: Duration::ZERO,
        };
        let grid = SampleGrid {
            width_px: p.job.width_px,
            supersample: p.supersample,
        };
        let color = {
            let table = self.table.index(0..table.len)?;
            let counts = self.counts.index(0..len)?;
            let norms = self.norms.index(0..len)?;
            let mut rgb = self.rgb.index_mut(0..px)?;
            let args = (coloring, max_iter, grid, &table, &counts, &norms, &mut rgb);
            queue(
                self.gpu,
                &self.kernels.colorize,
                for_num_elems(px, 256)?,
                args,
            )?
        };
        let from = Results {
            rgb: self.rgb.index(0..px)?,
            counts: want_counts.then(|| self.counts.index(0..len)).transpose()?,
            norms: want_counts.then(|| self.norms.index(0..len)).transpose()?,
        };
        let kernels = vec![escape.kernel, color];
        self.copies.queue(self.gpu, band, from, kernels, copies)
    }

    /// Renders the rows `band` of `job` and copies them back (`counts` only if
    /// `want_counts`): [`GpuRenderer::render`] for a float job.
    ///
    /// # Panics
    /// As [`GpuRenderer::queue`].
    ///
    /// # Errors
    /// [`GpuError::Launch`] if the kernel fails, [`GpuError::Driver`] if a copy fails.
    pub fn render_band(
        &mut self,
        job: &RenderJob<f64>,
        precision: Precision,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        self.render(FloatJob { job, precision }, band, want_counts)
    }

    /// [`GpuRenderer::queue`] for a float job ([`GpuRenderer::render_band`]).
    fn queue_float(
        &mut self,
        job: &RenderJob<f64>,
        precision: Precision,
        band: Band,
        want_counts: bool,
    ) -> Result<QueuedBand, GpuError> {
        let len = job.width_px as usize * band.rows as usize;
        assert!(
            len <= self.capacity_px && len <= self.copies.staging_px,
            "band of {len} pixels exceeds the buffers"
        );
        assert!(
            band.first_row + band.rows <= job.height_px,
            "band leaves the image"
        );
        let table = color_table(
            self.gpu,
            job.coloring,
            job.max_iter,
            &mut self.table,
            &mut self.table_for,
        )?;
        let copies = CopyTimes {
            htod: table.htod,
            dtoh: Duration::ZERO,
        };
        let kernels = queue_render(
            self.gpu,
            &self.kernels,
            job,
            precision,
            band,
            BandBuffers {
                counts: &mut self.counts,
                norms: &mut self.norms,
                table: self.table.index(0..table.len)?,
                rgb: &mut self.rgb,
            },
        )?;
        let from = Results {
            rgb: self.rgb.index(0..len)?,
            counts: want_counts.then(|| self.counts.index(0..len)).transpose()?,
            norms: None,
        };
        self.copies.queue(self.gpu, band, from, kernels, copies)
    }
}
#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mandelbrot::{RenderParams, Style};
    use common::{Complex, Palette, Viewport};

    /// An 8×6 f64 job of the whole set at 100 iterations, for renderer tests.
    pub(crate) fn small_f64_job() -> RenderJob<f64> {
        let params = RenderParams {
            view: Viewport::from_center_scale(8, 6, Complex::new(-0.75, 0.1), 3.0).unwrap(),
            max_iter: 100,
            precision: Precision::F64,
            palette: Palette::Fire,
        };
        params.job(&Style::default())
    }

    /// [`small_f64_job`]'s two bands of 3 rows.
    pub(crate) const TWO_BANDS: [Band; 2] = [
        Band {
            first_row: 0,
            rows: 3,
        },
        Band {
            first_row: 3,
            rows: 3,
        },
    ];

    /// A renderer makes its second staging buffer only when a band is queued while the
    /// first is taken: bands rendered one at a time use one.
    #[test]
    fn the_second_staging_buffer_is_made_only_for_a_second_queued_band() {
        let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
        let job = small_f64_job();
        let work = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        let mut renderer = GpuRenderer::new(&gpu, 8 * 3).unwrap();
        let bands = TWO_BANDS;
        for band in bands {
            renderer.render(work, band, false).unwrap();
        }
        assert!(
            renderer.copies.staging[1].is_none(),
            "made for bands one at a time"
        );
        let first = renderer.queue(work, bands[0], false).unwrap();
        let second = renderer.queue(work, bands[1], false).unwrap();
        assert!(renderer.copies.staging[1].is_some());
        renderer.finish(first).unwrap();
        renderer.finish(second).unwrap();
    }
}
