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
    color::color_table,
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
    Band, RenderJob,
    palette::{Coloring, SampleGrid},
};
use copy_back::Results;
use std::time::Duration;

mod buffers;
mod copy_back;
mod kernels;
mod whole_image;

pub use buffers::{BufferSize, RenderBuffers};
pub use copy_back::{CopyBack, DIRECT_COPY_MAX_PX, QueuedBand};
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
/// supersampled perturbed bands), allocated once and reused for every band and every frame
/// ([`RenderBuffers`]), and up to two page-locked staging buffers the colours come back
/// through (none for small renders: [`CopyBack::Direct`]).
///
/// A band is rendered in two steps, so that the host's work on one band overlaps the GPU's
/// work on the next: [`GpuRenderer::queue`] queues its uploads, kernels and the copy of its
/// colours into a staging buffer, and returns; [`GpuRenderer::finish`] waits for them and
/// moves the colours out. The staging buffers are used in turn, so one band can be queued
/// while the previous one is being finished ([`GpuRenderer::render`] does both at once).
pub struct GpuRenderer<'g> {
    gpu: &'g Gpu,
    kernels: RenderKernels,
    bufs: RenderBuffers,
    /// The colouring and iteration limit the colour table was filled for.
    table_for: Option<(Coloring, u32)>,
    /// The reference orbit and BLA table of the last perturbed job, on this GPU.
    deep: crate::deep::render::DeepUpload,
}

impl std::fmt::Debug for GpuRenderer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRenderer")
            .field("buffers", &self.bufs)
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
        let size = BufferSize {
            band_px: capacity_px,
            samples_per_px,
            copy_back: CopyBack::Staged,
        };
        Self::from_buffers(gpu, RenderBuffers::new(gpu, size)?)
    }

    /// A renderer on `gpu` with buffers made already ([`RenderBuffers::new`] on this GPU):
    /// resolves its kernels ([`RenderKernels::new`]).
    ///
    /// # Panics
    /// If `bufs` are on another GPU (a programming error).
    ///
    /// # Errors
    /// As [`RenderKernels::new`].
    pub fn from_buffers(gpu: &'g Gpu, bufs: RenderBuffers) -> Result<Self, GpuError> {
        assert_eq!(
            bufs.ordinal(),
            gpu.context().ordinal(),
            "render buffers used on another GPU"
        );
        Ok(Self {
            gpu,
            kernels: RenderKernels::new(gpu)?,
            bufs,
            table_for: None,
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
    /// returns) or the renderer copies colours back directly ([`CopyBack::Direct`]: then
    /// they are copied back before it returns). [`GpuRenderer::finish`] gives the band. At
    /// most two bands may be queued and not yet finished (any number with
    /// [`CopyBack::Direct`]).
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
            self.bufs.copies.has_room(),
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
        self.bufs.copies.finish(self.gpu, queued)
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
            len <= self.bufs.capacity_px && px <= self.bufs.copies.staging_px,
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
            &mut self.bufs.table,
            &mut self.table_for,
        )?;
        let escape = crate::deep::render::launch_perturbed(
            self.gpu,
            &self.kernels.perturb,
            &mut self.deep,
            p,
            band,
            &mut self.bufs.counts,
            &mut self.bufs.norms,
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
            let table = self.bufs.table.index(0..table.len)?;
            let counts = self.bufs.counts.index(0..len)?;
            let norms = self.bufs.norms.index(0..len)?;
            let mut rgb = self.bufs.rgb.index_mut(0..px)?;
            let args = (coloring, max_iter, grid, &table, &counts, &norms, &mut rgb);
            queue(
                self.gpu,
                &self.kernels.colorize,
                for_num_elems(px, 256)?,
                args,
            )?
        };
        let from = Results {
            rgb: self.bufs.rgb.index(0..px)?,
            counts: want_counts
                .then(|| self.bufs.counts.index(0..len))
                .transpose()?,
            norms: want_counts
                .then(|| self.bufs.norms.index(0..len))
                .transpose()?,
        };
        let kernels = vec![escape.kernel, color];
        self.bufs
            .copies
            .queue(self.gpu, band, from, kernels, copies)
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
            len <= self.bufs.capacity_px && len <= self.bufs.copies.staging_px,
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
            &mut self.bufs.table,
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
                counts: &mut self.bufs.counts,
                norms: &mut self.bufs.norms,
                table: self.bufs.table.index(0..table.len)?,
                rgb: &mut self.bufs.rgb,
            },
        )?;
        let from = Results {
            rgb: self.bufs.rgb.index(0..len)?,
            counts: want_counts
                .then(|| self.bufs.counts.index(0..len))
                .transpose()?,
            norms: None,
        };
        self.bufs
            .copies
            .queue(self.gpu, band, from, kernels, copies)
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
            renderer.bufs.copies.staging[1].is_none(),
            "made for bands one at a time"
        );
        let first = renderer.queue(work, bands[0], false).unwrap();
        let second = renderer.queue(work, bands[1], false).unwrap();
        assert!(renderer.bufs.copies.staging[1].is_some());
        renderer.finish(first).unwrap();
        renderer.finish(second).unwrap();
    }

    /// Both copy backs give the CPU's bytes, colours and escape times, band by band; the
    /// direct one makes no page-locked buffer and lets any number of bands be queued.
    #[test]
    fn staged_and_direct_copies_give_the_cpu_bytes() {
        let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
        let job = small_f64_job();
        let work = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        let cpu = |band, want_counts| {
            crate::mandelbrot::render_band_cpu(&job, Precision::F64, band, want_counts)
        };
        for copy_back in [CopyBack::Staged, CopyBack::Direct] {
            let size = BufferSize {
                band_px: 8 * 3,
                samples_per_px: 1,
                copy_back,
            };
            let bufs = RenderBuffers::new(&gpu, size).unwrap();
            let mut renderer = GpuRenderer::from_buffers(&gpu, bufs).unwrap();
            for want_counts in [false, true] {
                for band in TWO_BANDS {
                    let b = renderer.render(work, band, want_counts).unwrap();
                    let want = cpu(band, want_counts);
                    assert_eq!(b.rgb, want.rgb, "{copy_back:?} {band:?}");
                    assert_eq!(b.counts, want.counts, "{copy_back:?} {band:?}");
                }
            }
            let staged = renderer.bufs.copies.staging.iter().flatten().count();
            assert_eq!(staged, usize::from(copy_back == CopyBack::Staged));
        }
        let size = BufferSize {
            band_px: 8 * 3,
            samples_per_px: 1,
            copy_back: CopyBack::Direct,
        };
        let mut renderer =
            GpuRenderer::from_buffers(&gpu, RenderBuffers::new(&gpu, size).unwrap()).unwrap();
        let queued: Vec<_> = [TWO_BANDS[0], TWO_BANDS[1], TWO_BANDS[0]]
            .into_iter()
            .map(|band| renderer.queue(work, band, false).unwrap())
            .collect();
        for q in queued.into_iter().rev() {
            let band = q.band();
            assert_eq!(renderer.finish(q).unwrap().rgb, cpu(band, false).rgb);
        }
    }

    /// A direct copy back's first band comes back in the host colours made, pages written,
    /// with the buffers (moved out, not copied; cut to the band when the buffers are sized
    /// for more), later bands in new `Vec`s, all with the CPU's bytes; the staged copy back
    /// makes none.
    #[test]
    fn direct_copy_back_uses_the_colours_made_beforehand() {
        let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
        let job = small_f64_job();
        let work = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        let size = BufferSize {
            band_px: 8 * 4,
            samples_per_px: 1,
            copy_back: CopyBack::Direct,
        };
        let mut bufs = RenderBuffers::new(&gpu, size).unwrap();
        let made = bufs
            .copies
            .host_colors_addr()
            .expect("made for a direct copy");
        let mut renderer = GpuRenderer::from_buffers(&gpu, bufs).unwrap();
        for (i, band) in TWO_BANDS.into_iter().enumerate() {
            let b = renderer.render(work, band, true).unwrap();
            let want = crate::mandelbrot::render_band_cpu(&job, Precision::F64, band, true);
            assert_eq!(b.rgb, want.rgb, "{band:?}");
            assert_eq!(b.counts, want.counts, "{band:?}");
            assert_eq!(b.rgb.as_ptr() as usize == made, i == 0, "{band:?}");
        }
        assert_eq!(renderer.bufs.copies.host_colors_addr(), None, "taken");
        let staged = BufferSize {
            copy_back: CopyBack::Staged,
            ..size
        };
        let mut bufs = RenderBuffers::new(&gpu, staged).unwrap();
        assert_eq!(bufs.copies.host_colors_addr(), None);
    }

    /// The copy-back rule: directly for a render of at most [`DIRECT_COPY_MAX_PX`] pixels in
    /// at most 4 bands' worth, through staging otherwise.
    #[test]
    fn small_renders_copy_back_directly() {
        let hd = 1920 * 1080;
        assert_eq!(CopyBack::for_render(hd, hd), CopyBack::Direct);
        assert_eq!(CopyBack::for_render(hd, hd / 4), CopyBack::Direct);
        assert_eq!(CopyBack::for_render(hd, hd / 5), CopyBack::Staged);
        let big = DIRECT_COPY_MAX_PX + 1;
        assert_eq!(CopyBack::for_render(big, big), CopyBack::Staged);
    }
}
