//! The GPU renderer: [`GpuRenderer`] (band buffers allocated once, the escape and colour
//! passes, colours copied back through page-locked memory, the deep orbit and table
//! uploaded once per job) and the whole-image wrappers ([`render_mandelbrot`] and friends).

use super::{
    color::{COLOR_TABLE_LEN, color_table},
    job::BandJob,
    params::{GpuTimings, Image, RenderParams, RenderTimes, Style, rows_per_band},
    precision::Precision,
};
use crate::{
    band::BandImage,
    gpu::{Gpu, GpuError, timed},
    launch::{Launch, for_image, for_num_elems},
};
use common::{
    Band, RenderJob, Rgb,
    palette::{Coloring, Shading},
};
use cust::{
    error::GpuContext,
    memory::{DeviceBuffer, DeviceSlice, LockedBuffer},
};
use kernels::mandelbrot::{
    colorize, mandelbrot_f32, mandelbrot_f64, mandelbrot_ss_f32, mandelbrot_ss_f64,
};
use std::time::{Duration, Instant};

/// Device bytes per band pixel of a [`GpuRenderer`]: escape time (4), `|z_n|²` (4), colour
/// (3).
pub const BAND_BYTES_PER_PX: usize = 4 + 4 + 3;

/// Device buffers for rendering bands of up to `capacity_px` pixels, allocated once and reused
/// for every band and every frame.
pub struct GpuRenderer<'g> {
    gpu: &'g Gpu,
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

    /// Renders the rows `band` of `work` and copies them back (`counts`, and for perturbed
    /// jobs `norms`, only if `want_counts`).
    ///
    /// Perturbed jobs: the reference orbit and BLA table are uploaded at the first band of
    /// a job and kept for later jobs sharing them; `mandelbrot_perturb` writes each sample's
    /// escape time and `|z_n|²`, which are copied back and coloured on the host
    /// ([`crate::deep::PerturbedJob::finish_band`], the CPU's code).
    ///
    /// # Panics
    /// If the band holds more than the capacity's pixels (samples, for perturbed jobs) or
    /// leaves the image (programming errors).
    ///
    /// # Errors
    /// [`GpuError`] if an upload, a kernel or a copy fails.
    pub fn render(
        &mut self,
        work: BandJob<'_>,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        let p = match work {
            BandJob::Float { job, precision } => {
                return self.render_band(job, precision, band, want_counts);
            }
            BandJob::Perturbed(p) => p,
        };
        let len = p.job.width_px as usize * band.rows as usize * work.buffer_px_per_px();
        assert!(
            len <= self.capacity_px,
            "band of {len} samples exceeds the buffers"
        );
        assert!(
            band.first_row + band.rows <= p.job.height_px,
            "band leaves the image"
        );
        let kernel = crate::deep::render::launch_perturbed(
            self.gpu,
            &mut self.deep,
            p,
            band,
            &mut self.counts,
            &mut self.norms,
        )?;
        let counts = self
            .counts
            .index(0..len)?
            .as_host_vec()
            .gpu_context("copying escape times to the host")?;
        let norms = self
            .norms
            .index(0..len)?
            .as_host_vec()
            .gpu_context("copying |z|² to the host")?;
        Ok(p.finish_band(band, counts, norms, want_counts, kernel))
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
        let table_len = color_table(self.gpu, job, &mut self.table, &mut self.table_for)?;
        let times = launch_render(
            self.gpu,
            job,
            precision,
            band,
            BandBuffers {
                counts: &mut self.counts,
                norms: &mut self.norms,
                table: self.table.index(0..table_len)?,
                rgb: &mut self.rgb,
            },
        )?;
        let stream = self.gpu.stream();
        // Only this band's bytes; `as_slice` waits for the copy.
        self.staging
            .async_copy_prefix_from(&self.rgb.index(0..len)?, stream)?;
        let rgb = self.staging.try_as_slice()?[..len].as_flattened().to_vec();
        let counts = if want_counts {
            self.counts
                .index(0..len)?
                .as_host_vec()
                .gpu_context("copying escape times to the host")?
        } else {
            Vec::new()
        };
        Ok(BandImage {
            band,
            counts,
            norms: Vec::new(),
            rgb,
            kernel: times.total(),
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
    let cfg = for_image(job.width_px, band.rows);
    let mut counts = counts.index_mut(0..len)?;
    let mut rgb = rgb.index_mut(0..len)?;
    if job.supersample > 1 {
        let escape = match precision {
            Precision::F32 => timed(gpu, mandelbrot_ss_f32.name(), cfg, || {
                let args = (job.cast::<f32>(), band, &mut counts, &mut rgb);
                mandelbrot_ss_f32.launch(gpu.module(), gpu.stream(), cfg, args)
            }),
            Precision::F64 => timed(gpu, mandelbrot_ss_f64.name(), cfg, || {
                let args = (*job, band, &mut counts, &mut rgb);
                mandelbrot_ss_f64.launch(gpu.module(), gpu.stream(), cfg, args)
            }),
        }?;
        return Ok(RenderTimes {
            escape,
            color: Duration::ZERO,
        });
    }
    // Discrete colouring needs no |z_n|²: an empty `norms` takes no writes.
    let mut norms = norms.index_mut(0..if smooth { len } else { 0 })?;
    let escape = match precision {
        Precision::F32 => timed(gpu, mandelbrot_f32.name(), cfg, || {
            let args = (job.cast::<f32>(), band, &mut counts, &mut norms);
            mandelbrot_f32.launch(gpu.module(), gpu.stream(), cfg, args)
        }),
        Precision::F64 => timed(gpu, mandelbrot_f64.name(), cfg, || {
            let args = (*job, band, &mut counts, &mut norms);
            mandelbrot_f64.launch(gpu.module(), gpu.stream(), cfg, args)
        }),
    }?;
    let color_cfg = for_num_elems(len, 256)?;
    let color = timed(gpu, colorize.name(), color_cfg, || {
        let args = (job.coloring, job.max_iter, table, &counts, &norms, &mut rgb);
        colorize.launch(gpu.module(), gpu.stream(), color_cfg, args)
    })?;
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
    for band in Band::split(job.height_px, rows) {
        let b = renderer.render_band(&job, params.precision, band, true)?;
        kernel += b.kernel;
        image.counts.extend_from_slice(&b.counts);
        image.rgb.extend_from_slice(&b.rgb);
    }
    let timings = GpuTimings {
        kernel,
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
