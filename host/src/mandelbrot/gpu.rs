//! The GPU renderer: [`GpuRenderer`] (band buffers allocated once, the escape and colour
//! passes, colours copied back through page-locked memory, the deep orbit and table
//! uploaded once per job), the GPU side of the band jobs ([`GpuBandKernel`]: [`FloatJob`],
//! [`PerturbedJob`], [`BandJob`]) and the whole-image wrappers ([`render_mandelbrot`] and
//! friends).

use super::{
    color::{COLOR_TABLE_LEN, color_table},
    job::{BandJob, FloatJob},
    params::{GpuTimings, Image, RenderParams, RenderTimes, Style, rows_per_band},
    precision::Precision,
};
use crate::{
    band::{BandImage, BandKernel, CopyTimes},
    deep::{PerturbedJob, render::PerturbParams},
    gpu::{Gpu, GpuError, QueuedKernel, queue},
    launch::{for_image, for_num_elems},
};
use common::{
    Band, RenderJob, Rgb,
    palette::{Coloring, SampleGrid, Shading},
};
use cuda_std::launch::{Out, Safe, Slice, Value};
use cust::{
    error::GpuContext,
    event::{Event, EventFlags},
    launch::TypedFunction,
    memory::{DeviceBuffer, DeviceCopy, DeviceSlice, DeviceSliceMut, LockedBuffer},
};
use kernels::mandelbrot::{
    colorize, mandelbrot_f32, mandelbrot_f64, mandelbrot_perturb, mandelbrot_ss_f32,
    mandelbrot_ss_f64,
};
use std::time::{Duration, Instant};

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

/// Parameter kinds of the float passes: the job in float type `F`, the band, escape times,
/// and a `T` per pixel (`|z_n|²` for the escape passes `mandelbrot_f32`/`_f64`, colours for
/// the supersampling passes `mandelbrot_ss_f32`/`_f64`).
type FloatPassParams<F, T> = (Value<RenderJob<F>>, Value<Band>, Out<u32>, Out<T>);
/// Parameter kinds of the colour pass `colorize`.
type ColorizeParams = (
    Value<Coloring>,
    Value<u32>,
    Value<SampleGrid>,
    Slice<u32>,
    Slice<u32>,
    Slice<f32>,
    Out<Rgb>,
);

/// The renderer's kernels on one GPU, each resolved once (looked up in the module and its
/// parameter layout checked) and then launched for every band, as cudarc's `load_function`
/// and Rust-CUDA's `module.get_function` are used.
pub struct RenderKernels {
    escape: FloatPass<f32>,
    supersample: FloatPass<Rgb>,
    colorize: TypedFunction<ColorizeParams, Safe>,
    pub(crate) perturb: TypedFunction<PerturbParams, Safe>,
}

impl std::fmt::Debug for RenderKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderKernels").finish_non_exhaustive()
    }
}

impl RenderKernels {
    /// Resolves the escape, supersampling, colour and perturbation passes in `gpu`'s module.
    ///
    /// # Errors
    /// As [`cust::module::Module::kernel`]: a module without one of them, or with other
    /// parameter sizes.
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        let module = gpu.module();
        Ok(Self {
            escape: FloatPass {
                f32: module.kernel(mandelbrot_f32)?,
                f64: module.kernel(mandelbrot_f64)?,
            },
            supersample: FloatPass {
                f32: module.kernel(mandelbrot_ss_f32)?,
                f64: module.kernel(mandelbrot_ss_f64)?,
            },
            colorize: module.kernel(colorize)?,
            perturb: module.kernel(mandelbrot_perturb)?,
        })
    }
}

/// A float pass resolved for both arithmetics, launched in the one a band asks for.
struct FloatPass<T> {
    f32: TypedFunction<FloatPassParams<f32, T>, Safe>,
    f64: TypedFunction<FloatPassParams<f64, T>, Safe>,
}

impl<T: DeviceCopy> FloatPass<T> {
    /// Queues the pass in `precision` (`job` cast to f32 for [`Precision::F32`]) on `band`,
    /// one thread per pixel ([`for_image`]), writing `counts` and `out`
    /// ([`crate::gpu::queue`]: not waited for).
    fn queue(
        &self,
        gpu: &Gpu,
        precision: Precision,
        job: &RenderJob<f64>,
        band: Band,
        counts: &mut DeviceSliceMut<'_, u32>,
        out: &mut DeviceSliceMut<'_, T>,
    ) -> Result<QueuedKernel, GpuError> {
        let cfg = for_image(job.width_px, band.rows);
        match precision {
            Precision::F32 => queue(gpu, &self.f32, cfg, (job.cast(), band, counts, out)),
            Precision::F64 => queue(gpu, &self.f64, cfg, (*job, band, counts, out)),
        }
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
    /// Page-locked host memory the colours are copied into, one colour per band pixel: a
    /// pageable copy of a 100 MB band ran at about 1 GB/s on an H200 machine while the PNG
    /// encoder's threads were busy. Two, the first free one taking the next queued band;
    /// the second is allocated when a band is queued while the first is taken (one
    /// 1920×1080 buffer took 3.5–5 ms to allocate on an H200 machine, so a render of one band
    /// does not pay for two).
    staging: [Option<LockedBuffer<Rgb>>; 2],
    /// Pixels a staging buffer holds.
    staging_px: usize,
    /// The ticket of the queued band whose colours each staging buffer holds (`None`: free).
    in_slot: [Option<u64>; 2],
    /// The ticket of the next queued band.
    next_ticket: u64,
    capacity_px: usize,
    /// The reference orbit and BLA table of the last perturbed job, on this GPU.
    deep: crate::deep::render::DeepUpload,
}

impl std::fmt::Debug for GpuRenderer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRenderer")
            .field("capacity_px", &self.capacity_px)
            .field("staging_px", &self.staging_px)
            .finish_non_exhaustive()
    }
}

/// A band whose work is queued on its renderer's stream ([`GpuRenderer::queue`]): its
/// kernels, between CUDA events, and the copy of its colours into a staging buffer, between
/// two more. [`GpuRenderer::finish`] waits for them and returns the band.
#[derive(Debug)]
#[must_use = "a queued band's colours come back through GpuRenderer::finish"]
pub struct QueuedBand {
    band: Band,
    /// Pixels, and the staging buffer holding their colours.
    px: usize,
    slot: usize,
    ticket: u64,
    kernels: Vec<QueuedKernel>,
    /// Events around the colours' copy into the staging buffer.
    copy_start: Event,
    copy_end: Event,
    /// Escape times and `|z_n|²`, copied back already when asked for.
    counts: Vec<u32>,
    norms: Vec<f32>,
    /// The uploads, and the copies of `counts` and `norms`.
    copies: CopyTimes,
}

impl QueuedBand {
    /// The band's rows.
    pub fn band(&self) -> Band {
        self.band
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
        let staging = [
            Some(LockedBuffer::new_in(gpu.context(), &[0u8; 3], staging_px)?),
            None,
        ];
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
            staging,
            staging_px,
            in_slot: [None; 2],
            next_ticket: 0,
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
            self.in_slot.iter().any(Option::is_none),
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
        assert!(
            self.in_slot[queued.slot] == Some(queued.ticket),
            "finishing a band that is not queued on this renderer"
        );
        self.in_slot[queued.slot] = None;
        let mut kernel = Duration::ZERO;
        for k in &queued.kernels {
            kernel += k.time(self.gpu)?;
        }
        let staged = self.staging[queued.slot]
            .as_ref()
            .expect("a queued band's staging buffer exists")
            .try_as_slice()?;
        let mut copies = queued.copies;
        copies.dtoh += queued.copy_end.elapsed(&queued.copy_start)?;
        Ok(BandImage {
            band: queued.band,
            counts: queued.counts,
            norms: queued.norms,
            rgb: staged[..queued.px].as_flattened().to_vec(),
            kernel,
            copies,
        })
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
            len <= self.capacity_px && px <= self.staging_px,
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
        let counts_len = if want_counts { len } else { 0 };
        self.queue_copies(
            band,
            px,
            vec![escape.kernel, color],
            copies,
            counts_len,
            true,
        )
    }

    /// Queues the copy of the band's `px` colours into the next staging buffer after
    /// `kernels`, and, when `counts_len` > 0, waits for `kernels` and copies back the first
    /// `counts_len` escape times (and `|z_n|²` if `with_norms`).
    fn queue_copies(
        &mut self,
        band: Band,
        px: usize,
        kernels: Vec<QueuedKernel>,
        mut copies: CopyTimes,
        counts_len: usize,
        with_norms: bool,
    ) -> Result<QueuedBand, GpuError> {
        // The first free staging buffer (`queue` checked that one is), the second made on
        // its first use.
        let slot = usize::from(self.in_slot[0].is_some());
        if self.staging[slot].is_none() {
            self.staging[slot] = Some(LockedBuffer::new_in(
                self.gpu.context(),
                &[0u8; 3],
                self.staging_px,
            )?);
        }
        let staging = self.staging[slot].as_mut().expect("made above");
        let stream = self.gpu.stream();
        let copy_start = Event::new_in(self.gpu.context(), EventFlags::DEFAULT)?;
        copy_start.record(stream)?;
        staging.async_copy_prefix_from(&self.rgb.index(0..px)?, stream)?;
        let copy_end = Event::new_in(self.gpu.context(), EventFlags::DEFAULT)?;
        copy_end.record(stream)?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let (mut counts, mut norms) = (Vec::new(), Vec::new());
        if counts_len > 0 {
            for k in &kernels {
                k.wait(self.gpu)?;
            }
            // The colours' copy ahead of these in the stream is timed by its events already.
            copy_end.synchronize()?;
            let started = Instant::now();
            counts = self
                .counts
                .index(0..counts_len)?
                .as_host_vec()
                .gpu_context("copying escape times to the host")?;
            if with_norms {
                norms = self
                    .norms
                    .index(0..counts_len)?
                    .as_host_vec()
                    .gpu_context("copying |z|² to the host")?;
            }
            copies.dtoh += started.elapsed();
        }
        // Taken only now: a failure above leaves the slot free (its copy is stream-ordered
        // before any later one into it, and nothing reads it).
        self.in_slot[slot] = Some(ticket);
        Ok(QueuedBand {
            band,
            px,
            slot,
            ticket,
            kernels,
            copy_start,
            copy_end,
            counts,
            norms,
            copies,
        })
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
            len <= self.capacity_px && len <= self.staging_px,
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
        let counts_len = if want_counts { len } else { 0 };
        self.queue_copies(band, len, kernels, copies, counts_len, false)
    }
}

/// The device buffers of one band render ([`launch_render`]).
#[derive(Debug)]
pub struct BandBuffers<'a> {
    /// Escape times: at least the band's pixels.
    pub counts: &'a mut DeviceBuffer<u32>,
    /// `|z_n|²` at escape: at least the band's pixels for smooth colouring (unused otherwise).
    pub norms: &'a mut DeviceBuffer<f32>,
    /// Discrete colours by escape time ([`Coloring::fill_discrete_table`]); empty to compute
    /// every colour.
    pub table: DeviceSlice<'a, u32>,
    /// Colours: at least one per band pixel.
    pub rgb: &'a mut DeviceBuffer<Rgb>,
}

/// Renders `band` of `job` into `bufs` and waits; returns the kernel times from CUDA events
/// (`queue_render`, then a wait for each kernel).
///
/// # Panics
/// If the buffers are smaller than the band (a programming error).
///
/// # Errors
/// [`GpuError::Launch`] if a kernel fails, [`GpuError::ParamMismatch`] if the module disagrees
/// with a kernel's signature, [`GpuError::Driver`] for event failures.
pub fn launch_render(
    gpu: &Gpu,
    kernels: &RenderKernels,
    job: &RenderJob<f64>,
    precision: Precision,
    band: Band,
    bufs: BandBuffers<'_>,
) -> Result<RenderTimes, GpuError> {
    let queued = queue_render(gpu, kernels, job, precision, band, bufs)?;
    let mut times = queued.iter().map(|k| k.time(gpu));
    Ok(RenderTimes {
        escape: times.next().transpose()?.unwrap_or_default(),
        color: times.next().transpose()?.unwrap_or_default(),
    })
}

/// Queues the render of `band` of `job` into `bufs` and returns without waiting: the escape
/// pass's kernel, then the colour pass's if there is one, each between CUDA events.
///
/// One sample per pixel: the escape pass `mandelbrot_f32`/`_f64` writes escape times (and,
/// for smooth colouring, `|z_n|²`), then the colour pass `colorize`, which looks discrete
/// colours up in `bufs.table`. Supersampled: `mandelbrot_ss_*`, one kernel for both.
///
/// # Panics
/// If the buffers are smaller than the band (a programming error).
///
/// # Errors
/// [`GpuError::Launch`] if a launch fails, [`GpuError::ParamMismatch`] if the module
/// disagrees with a kernel's signature, [`GpuError::Driver`] for event failures.
pub(crate) fn queue_render(
    gpu: &Gpu,
    kernels: &RenderKernels,
    job: &RenderJob<f64>,
    precision: Precision,
    band: Band,
    bufs: BandBuffers<'_>,
) -> Result<Vec<QueuedKernel>, GpuError> {
    let BandBuffers {
        counts,
        norms,
        table,
        rgb,
    } = bufs;
    let table = &table;
    let len = job.width_px as usize * band.rows as usize;
    let smooth = job.coloring.shading == Shading::Smooth;
    assert!(
        counts.len() >= len && rgb.len() >= len && (!smooth || norms.len() >= len),
        "buffers too small for the band"
    );
    let mut counts = counts.index_mut(0..len)?;
    let mut rgb = rgb.index_mut(0..len)?;
    let k = kernels;
    if job.supersample > 1 {
        let escape = k
            .supersample
            .queue(gpu, precision, job, band, &mut counts, &mut rgb)?;
        return Ok(vec![escape]);
    }
    // Discrete colouring needs no |z_n|²: an empty `norms` takes no writes.
    let mut norms = norms.index_mut(0..if smooth { len } else { 0 })?;
    let escape = k
        .escape
        .queue(gpu, precision, job, band, &mut counts, &mut norms)?;
    let grid = SampleGrid::single(job.width_px);
    let args = (
        job.coloring,
        job.max_iter,
        grid,
        table,
        &counts,
        &norms,
        &mut rgb,
    );
    let color = queue(gpu, &k.colorize, for_num_elems(len, 256)?, args)?;
    Ok(vec![escape, color])
}

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
/// one band), reusing one set of device buffers.
///
/// # Errors
/// [`GpuError::OutOfMemory`] if the band buffers ([`BAND_BYTES_PER_PX`] bytes per pixel) do not fit,
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
    let mut renderer = GpuRenderer::new(gpu, job.width_px as usize * rows as usize)?;
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
            renderer.staging[1].is_none(),
            "made for bands one at a time"
        );
        let first = renderer.queue(work, bands[0], false).unwrap();
        let second = renderer.queue(work, bands[1], false).unwrap();
        assert!(renderer.staging[1].is_some());
        renderer.finish(first).unwrap();
        renderer.finish(second).unwrap();
    }
}
