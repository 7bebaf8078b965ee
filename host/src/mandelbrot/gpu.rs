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
    gpu::{Gpu, GpuError, run},
    launch::{for_image, for_num_elems},
};
use common::{
    Band, RenderJob, Rgb,
    palette::{Coloring, SampleGrid, Shading},
};
use cuda_std::launch::{Out, Safe, Slice, Value};
use cust::{
    error::GpuContext,
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
    /// Renders the rows `band` of this job on `renderer` and copies them back (`counts`,
    /// and for perturbed jobs `norms`, only if `want_counts`).
    ///
    /// # Panics
    /// If the band holds more than the renderer's capacity or leaves the image
    /// (programming errors).
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a kernel or a copy fails.
    fn render_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError>;
}

impl GpuBandKernel for FloatJob<'_> {
    /// [`GpuRenderer::render_band`].
    fn render_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        renderer.render_band(self.job, self.precision, band, want_counts)
    }
}

impl GpuBandKernel for PerturbedJob {
    /// [`GpuRenderer::render_perturbed`].
    fn render_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        renderer.render_perturbed(self, band, want_counts)
    }
}

impl GpuBandKernel for BandJob<'_> {
    fn render_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        match self {
            Self::Float(f) => f.render_gpu(renderer, band, want_counts),
            Self::Perturbed(p) => p.render_gpu(renderer, band, want_counts),
        }
    }
}

impl<K: GpuBandKernel + ?Sized> GpuBandKernel for &K {
    fn render_gpu(
        &self,
        renderer: &mut GpuRenderer<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        (**self).render_gpu(renderer, band, want_counts)
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
    /// Launches the pass in `precision` (`job` cast to f32 for [`Precision::F32`]) on `band`,
    /// one thread per pixel ([`for_image`]), writing `counts` and `out`, and waits; returns
    /// the kernel time ([`crate::gpu::run`]).
    fn run(
        &self,
        gpu: &Gpu,
        precision: Precision,
        job: &RenderJob<f64>,
        band: Band,
        counts: &mut DeviceSliceMut<'_, u32>,
        out: &mut DeviceSliceMut<'_, T>,
    ) -> Result<Duration, GpuError> {
        let cfg = for_image(job.width_px, band.rows);
        match precision {
            Precision::F32 => run(gpu, &self.f32, cfg, (job.cast(), band, counts, out)),
            Precision::F64 => run(gpu, &self.f64, cfg, (*job, band, counts, out)),
        }
    }
}

/// Device buffers for rendering bands of up to `capacity_px` pixels, allocated once and reused
/// for every band and every frame.
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
    /// Page-locked host memory the colours are copied into: a pageable copy of a 100 MB band
    /// ran at about 1 GB/s on an H200 machine while the PNG encoder's threads were busy.
    staging: LockedBuffer<Rgb>,
    capacity_px: usize,
    /// The reference orbit and BLA table of the last perturbed job, on this GPU.
    deep: crate::deep::render::DeepUpload,
}

impl std::fmt::Debug for GpuRenderer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRenderer")
            .field("capacity_px", &self.capacity_px)
            .finish_non_exhaustive()
    }
}

impl<'g> GpuRenderer<'g> {
    /// Allocates buffers for bands of up to `capacity_px` pixels (11 bytes per pixel: escape
    /// time, `|z_n|²` for smooth colouring, colour), and 3 bytes per pixel of page-locked
    /// host memory for copying colours back.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] if they do not fit, [`GpuError::Driver`] if allocation fails.
    pub fn new(gpu: &'g Gpu, capacity_px: usize) -> Result<Self, GpuError> {
        let capacity_px = capacity_px.max(1);
        gpu.check_free("the band buffers", capacity_px * BAND_BYTES_PER_PX)?;
        let stream = gpu.stream();
        let counts = DeviceBuffer::zeroed_async(capacity_px, stream)
            .gpu_context("allocating the escape-time buffer")?;
        let norms = DeviceBuffer::zeroed_async(capacity_px, stream)
            .gpu_context("allocating the |z|² buffer")?;
        let rgb = DeviceBuffer::zeroed_async(capacity_px, stream)
            .gpu_context("allocating the colour buffer")?;
        let staging = LockedBuffer::new_in(gpu.context(), &[0u8; 3], capacity_px)?;
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
    /// jobs `norms`, only if `want_counts`): [`GpuRenderer::render_band`] or
    /// [`GpuRenderer::render_perturbed`].
    ///
    /// # Panics
    /// If the band holds more than the capacity's pixels (samples, for perturbed jobs) or
    /// leaves the image (programming errors).
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a kernel or a copy fails.
    pub fn render(
        &mut self,
        work: impl GpuBandKernel,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        work.render_gpu(self, band, want_counts)
    }

    /// Renders the rows `band` of the perturbed job `p` and copies them back (`counts` and
    /// `norms`, one per sample, only if `want_counts`).
    ///
    /// The reference orbit and BLA table are uploaded at the first band of a job and kept
    /// for later jobs sharing them; `mandelbrot_perturb` writes each sample's escape time
    /// and `|z_n|²`, and the colour pass of float bands (`colorize`) colours them,
    /// averaging supersampled pixels on the device ([`SampleGrid::pixel_color`], the
    /// function the CPU's [`PerturbedJob::finish_band`] calls). Only the colours come back,
    /// and the samples' escape times and `|z_n|²` if `want_counts`.
    ///
    /// # Panics
    /// If the band holds more than the capacity's samples or leaves the image (programming
    /// errors).
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a kernel or a copy fails.
    pub fn render_perturbed(
        &mut self,
        p: &PerturbedJob,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        let px = p.job.width_px as usize * band.rows as usize;
        let len = px * p.buffer_px_per_px();
        assert!(
            len <= self.capacity_px,
            "band of {len} samples exceeds the buffers"
        );
        assert!(
            band.first_row + band.rows <= p.job.height_px,
            "band leaves the image"
        );
        let escape = crate::deep::render::launch_perturbed(
            self.gpu,
            &self.kernels.perturb,
            &mut self.deep,
            p,
            band,
            &mut self.counts,
            &mut self.norms,
        )?;
        let (coloring, max_iter) = (p.coloring, p.job.max_iter);
        let table = color_table(
            self.gpu,
            coloring,
            max_iter,
            &mut self.table,
            &mut self.table_for,
        )?;
        let mut copies = CopyTimes {
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
            run(
                self.gpu,
                &self.kernels.colorize,
                for_num_elems(px, 256)?,
                args,
            )?
        };
        let rgb = self.rgb_to_host(px, &mut copies)?;
        let (counts, norms) = if want_counts {
            let started = Instant::now();
            let counts = self.counts.index(0..len)?.as_host_vec();
            let norms = self.norms.index(0..len)?.as_host_vec();
            copies.dtoh += started.elapsed();
            (
                counts.gpu_context("copying escape times to the host")?,
                norms.gpu_context("copying |z|² to the host")?,
            )
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(BandImage {
            band,
            counts,
            norms,
            rgb,
            kernel: escape.kernel + color,
            copies,
        })
    }

    /// The first `len` colours of the colour buffer, copied through the page-locked staging
    /// buffer (only these bytes; waits for the copy). The copy, from queuing it to its end,
    /// is added to `copies.dtoh`; the move out of the staging buffer into the returned
    /// `Vec` (host memory only) is not.
    fn rgb_to_host(&mut self, len: usize, copies: &mut CopyTimes) -> Result<Vec<u8>, GpuError> {
        let started = Instant::now();
        self.staging
            .async_copy_prefix_from(&self.rgb.index(0..len)?, self.gpu.stream())?;
        let staged = self.staging.try_as_slice()?;
        copies.dtoh += started.elapsed();
        Ok(staged[..len].as_flattened().to_vec())
    }

    /// Renders the rows `band` of `job` and copies them back (`counts` only if
    /// `want_counts`).
    ///
    /// # Panics
    /// If the band holds more than the capacity's pixels or leaves the image (programming
    /// errors).
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
        let len = job.width_px as usize * band.rows as usize;
        assert!(
            len <= self.capacity_px,
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
        let mut copies = CopyTimes {
            htod: table.htod,
            dtoh: Duration::ZERO,
        };
        let times = launch_render(
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
        let rgb = self.rgb_to_host(len, &mut copies)?;
        let counts = if want_counts {
            let started = Instant::now();
            let counts = self
                .counts
                .index(0..len)?
                .as_host_vec()
                .gpu_context("copying escape times to the host")?;
            copies.dtoh += started.elapsed();
            counts
        } else {
            Vec::new()
        };
        Ok(BandImage {
            band,
            counts,
            norms: Vec::new(),
            rgb,
            kernel: times.total(),
            copies,
        })
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

/// Renders `band` of `job` into `bufs` and waits; returns the kernel times from CUDA events.
///
/// One sample per pixel: the escape pass `mandelbrot_f32`/`_f64` writes escape times (and,
/// for smooth colouring, `|z_n|²`), then the colour pass `colorize`, which looks discrete
/// colours up in `bufs.table`. Supersampled: `mandelbrot_ss_*`, one kernel for both.
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
            .run(gpu, precision, job, band, &mut counts, &mut rgb)?;
        return Ok(RenderTimes {
            escape,
            color: Duration::ZERO,
        });
    }
    // Discrete colouring needs no |z_n|²: an empty `norms` takes no writes.
    let mut norms = norms.index_mut(0..if smooth { len } else { 0 })?;
    let escape = k
        .escape
        .run(gpu, precision, job, band, &mut counts, &mut norms)?;
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
    let color = run(gpu, &k.colorize, for_num_elems(len, 256)?, args)?;
    Ok(RenderTimes { escape, color })
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
