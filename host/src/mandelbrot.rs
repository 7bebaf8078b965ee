//! The Mandelbrot renderer: escape time and colour for every pixel of a [`Viewport`], on the
//! GPU ([`GpuRenderer`], [`render_mandelbrot`]) or the CPU ([`render_cpu`], rayon). Both
//! call the same `common` function, [`RenderJob::pixel`], and give bit-identical images.
//!
//! Large images are rendered in [`Band`]s of rows ([`rows_per_band`]): each band is one launch
//! into device buffers allocated once ([`GpuRenderer::new`]), copied back and handed to the
//! caller (e.g. a streaming PNG encoder), so neither device nor host memory grows with the
//! image. Bands are independent (pixel coordinates stay global), so several GPUs can share
//! them: [`pool::GpuPool`].

use crate::{
    gpu::{Gpu, GpuError},
    launch::{Launch, for_image, for_num_elems},
};
use common::{
    Band, Palette, Real, RenderJob, Rgb, Viewport,
    palette::{Coloring, Shading},
};
use cust::{
    error::GpuContext,
    memory::{DeviceBuffer, DeviceSlice, LockedBuffer},
};
use kernels::mandelbrot::{
    colorize, mandelbrot_f32, mandelbrot_f64, mandelbrot_ss_f32, mandelbrot_ss_f64,
};
use rayon::prelude::*;
use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::{Duration, Instant},
};

pub mod deep;
pub mod pool;
pub mod precision;

pub use crate::band::{BandImage, RenderControl};
pub(crate) use crate::gpu::timed;

use precision::{Arithmetic, F64_MAX_COORD, center_magnitude, max_coordinate};

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

    /// The float precision for a view by the one rule ([`precision::for_viewport`]): `f32`
    /// or `f64`, and `true` when the rule says the view needs perturbation instead (f64
    /// would show blocky artefacts). For a supersampled image pass the sample grid
    /// ([`RenderJob::samples`]).
    pub fn for_view(view: &Viewport<f64>) -> (Self, bool) {
        let choice = precision::for_viewport(view);
        let float = choice.arithmetic.float().unwrap_or(Self::F64);
        (float, choice.arithmetic == Arithmetic::Perturbed)
    }

    /// Whether any precision renders `view` correctly: every coordinate small enough for f64
    /// to square (at most 2^500 ≈ 3.3·10^150 in magnitude), and pixels at least one unit in
    /// the last place of f64 apart at the centre (spacing ≥ 2^-52 of the centre's magnitude;
    /// closer pixels would all get the same coordinates, one flat colour).
    ///
    /// # Errors
    /// A message naming the value that is out of range and what is allowed.
    pub fn check_view(view: &Viewport<f64>) -> Result<(), String> {
        let reach = max_coordinate(view);
        if !reach.is_finite() || reach > F64_MAX_COORD {
            return Err(format!(
                "the view reaches coordinates of magnitude {reach:e}: no precision renders it \
                 (f64 squares numbers up to 2^500 = {F64_MAX_COORD:e}); choose a centre and \
                 scale within that"
            ));
        }
        let magnitude = center_magnitude(view.center());
        let step = view.min_step();
        let resolved = step / magnitude >= 2f64.powi(-52);
        if !resolved {
            return Err(format!(
                "pixel spacing {step:e} is below f64's resolution at this centre ({:e}): every \
                 pixel would get the same coordinate; zooms this deep need perturbation \
                 (`ferrocuda mandelbrot --center/--scale` or `--center-re/--center-im`, or \
                 host::deep)",
                magnitude * 2f64.powi(-52)
            ));
        }
        Ok(())
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

/// How the image looks beyond [`RenderParams`]: shading, palette cycle and offset,
/// supersampling. The default (discrete shading, [`Palette::CYCLE_ITERS`], no offset, one
/// sample per pixel) gives the colours of [`Palette::color`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Discrete or smooth colouring.
    pub shading: Shading,
    /// Iterations per palette cycle (≥ 1).
    pub cycle_iters: u32,
    /// Palette offset as a fraction of a cycle.
    pub offset: f32,
    /// Samples per pixel along each axis: 1, 2 or 4.
    pub supersample: u32,
}

impl Style {
    /// The colouring of this style with `palette`.
    pub fn coloring(&self, palette: Palette) -> Coloring {
        Coloring {
            palette,
            shading: self.shading,
            cycle_iters: self.cycle_iters,
            offset: self.offset,
        }
    }
}

impl Default for Style {
    fn default() -> Self {
        Self {
            shading: Shading::Discrete,
            cycle_iters: Palette::CYCLE_ITERS,
            offset: 0.0,
            supersample: 1,
        }
    }
}

impl RenderParams {
    /// The render job (in f64) for these parameters and `style`.
    pub fn job(&self, style: &Style) -> RenderJob<f64> {
        RenderJob::new(
            &self.view,
            style.supersample,
            self.max_iter,
            style.coloring(self.palette),
        )
    }
}

/// A rendered image: per-pixel escape times and colours, row-major, top row first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width_px: u32,
    /// Height in pixels.
    pub height_px: u32,
    /// Escape time of each pixel (`width_px · height_px` values; with supersampling the sum
    /// over the pixel's samples).
    pub counts: Vec<u32>,
    /// Colour of each pixel as `[r, g, b, r, g, b, ...]` (`3 · width_px · height_px` bytes,
    /// the layout of an 8-bit RGB PNG).
    pub rgb: Vec<u8>,
}

/// Kernel times of one GPU band (CUDA events around each launch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenderTimes {
    /// The escape pass (`mandelbrot_f32`/`_f64`), or the supersampling kernel, which colours
    /// too.
    pub escape: Duration,
    /// The colour pass (`colorize`); zero for supersampled jobs.
    pub color: Duration,
}

impl RenderTimes {
    /// Both passes.
    pub fn total(&self) -> Duration {
        self.escape + self.color
    }
}

/// Timings of a GPU render.
#[derive(Clone, Copy, Debug)]
pub struct GpuTimings {
    /// Kernel execution time (CUDA events around the launches).
    pub kernel: Duration,
    /// Whole render: allocation, launches, copies back to the host.
    pub total: Duration,
}

/// Rows per band such that one band holds at most `max_band_px` pixels (at least one row).
pub fn rows_per_band(width_px: u32, max_band_px: u64) -> u32 {
    let rows = (max_band_px / u64::from(width_px.max(1))).max(1);
    u32::try_from(rows).unwrap_or(u32::MAX)
}

/// Renders on the CPU with rayon (one task per row), default [`Style`].
pub fn render_cpu(params: &RenderParams) -> Image {
    render_cpu_styled(params, &Style::default())
}

/// Renders on the CPU with rayon (one task per row).
pub fn render_cpu_styled(params: &RenderParams, style: &Style) -> Image {
    let job = params.job(style);
    let band = Band {
        first_row: 0,
        rows: job.height_px,
    };
    let b = render_band_cpu(&job, params.precision, band, true);
    Image {
        width_px: job.width_px,
        height_px: job.height_px,
        counts: b.counts,
        rgb: b.rgb,
    }
}

/// Renders the rows `band` of `job` on the CPU (rayon, one task per row). `counts` is empty
/// unless `want_counts`.
pub fn render_band_cpu(
    job: &RenderJob<f64>,
    precision: Precision,
    band: Band,
    want_counts: bool,
) -> BandImage {
    render_band_cpu_until(job, precision, band, want_counts, &RenderControl::new())
        .expect("not stopped: the flag is never set")
}

/// What a band renderer computes: one interface for every arithmetic. Bands of either kind
/// go through the same renderers ([`BandRenderer`], [`GpuRenderer::render`],
/// [`pool::GpuPool::render`]) and the same callers (streaming PNG, progress, stop checks).
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

    /// Device buffer elements per band pixel of a [`GpuRenderer`] for this job: the
    /// samples per pixel for perturbed jobs (their samples are averaged on the host), one for
    /// float jobs (their supersampling kernels average on the device).
    pub fn buffer_px_per_px(&self) -> usize {
        match self {
            Self::Float { .. } => 1,
            Self::Perturbed(p) => (p.supersample * p.supersample) as usize,
        }
    }

    /// Renders the rows `band` on the CPU, giving up (`None`) once `control.stop` is set
    /// (checked before every pixel or sample) and counting finished rows in
    /// `control.rows_done`.
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

/// [`render_band_cpu`] that gives up as soon as `control.stop` is set (checked before every
/// pixel, so it returns within one pixel's escape-time loop per thread), and counts finished
/// rows in `control.rows_done`: `None` when stopped.
pub fn render_band_cpu_until(
    job: &RenderJob<f64>,
    precision: Precision,
    band: Band,
    want_counts: bool,
    control: &RenderControl,
) -> Option<BandImage> {
    let start = Instant::now();
    let (counts, rgb) = match precision {
        Precision::F32 => band_cpu_with(&job.cast::<f32>(), band, want_counts, control),
        Precision::F64 => band_cpu_with(job, band, want_counts, control),
    };
    if control.stop.load(Ordering::Relaxed) {
        return None;
    }
    Some(BandImage {
        band,
        counts,
        norms: Vec::new(),
        rgb,
        kernel: start.elapsed(),
    })
}

fn band_cpu_with<F: Real + Send + Sync>(
    job: &RenderJob<F>,
    band: Band,
    want_counts: bool,
    control: &RenderControl,
) -> (Vec<u32>, Vec<u8>) {
    let width = job.width_px as usize;
    let len = width * band.rows as usize;
    let mut counts = vec![0u32; len];
    let mut rgb = vec![0u8; 3 * len];
    counts
        .par_chunks_mut(width)
        .zip(rgb.par_chunks_mut(3 * width))
        .enumerate()
        .for_each(|(r, (count_row, rgb_row))| {
            cpu_row(
                job,
                band.first_row + r as u32,
                count_row,
                rgb_row,
                &control.stop,
            );
            control.rows_done.fetch_add(1, Ordering::Relaxed);
        });
    if !want_counts {
        counts = Vec::new();
    }
    (counts, rgb)
}

/// One image row on the CPU. The fused multiply-adds of the orbit are LLVM `fma` intrinsics:
/// on x86-64 CPUs with FMA (checked at run time) the row is compiled with the `fma` target
/// feature, so each is one `vfmadd` instead of a call to the C library's `fma`. Both are
/// correctly rounded: the bits are the same.
fn cpu_row<F: Real>(
    job: &RenderJob<F>,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
    stop: &AtomicBool,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports FMA (checked just above).
        unsafe { cpu_row_fma(job, y, counts, rgb, stop) };
        return;
    }
    cpu_row_plain(job, y, counts, rgb, stop);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn cpu_row_fma<F: Real>(
    job: &RenderJob<F>,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
    stop: &AtomicBool,
) {
    cpu_row_plain(job, y, counts, rgb, stop);
}

#[inline(always)]
fn cpu_row_plain<F: Real>(
    job: &RenderJob<F>,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
    stop: &AtomicBool,
) {
    for (x, (count, color)) in counts.iter_mut().zip(rgb.chunks_exact_mut(3)).enumerate() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let (n, c) = job.pixel(x as u32, y);
        *count = n;
        color.copy_from_slice(&c);
    }
}

/// Entries of the discrete colour table ([`Coloring::fill_discrete_table`]): escape times
/// below 2^16 are looked up (256 KiB), larger ones computed.
pub const COLOR_TABLE_LEN: usize = 1 << 16;

/// Fills `table` for `job`'s colouring unless `filled_for` says it already is; returns how
/// many entries the colour pass may use (`0` for smooth shading).
///
/// # Errors
/// [`GpuError::Driver`] if the copy fails.
pub(crate) fn color_table(
    gpu: &Gpu,
    job: &RenderJob<f64>,
    table: &mut DeviceBuffer<u32>,
    filled_for: &mut Option<(Coloring, u32)>,
) -> Result<usize, GpuError> {
    if job.coloring.shading != Shading::Discrete {
        return Ok(0);
    }
    // Escape times 0 ..= max_iter occur; no more entries are needed.
    let len = COLOR_TABLE_LEN.min(job.max_iter as usize + 1);
    if *filled_for != Some((job.coloring, job.max_iter)) {
        let mut host = vec![0u32; len];
        job.coloring.fill_discrete_table(job.max_iter, &mut host);
        table
            .index_mut(0..len)?
            .async_copy_from(&host, gpu.stream())
            .gpu_context("copying the colour table")?;
        *filled_for = Some((job.coloring, job.max_iter));
    }
    Ok(len)
}

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
    /// Renders the rows `band` of `job`.
    ///
    /// # Errors
    /// GPU failures, as [`GpuRenderer::render_band`]; the CPU never fails.
    pub fn render_band(
        &mut self,
        job: &RenderJob<f64>,
        precision: Precision,
        band: Band,
        want_counts: bool,
    ) -> Result<BandImage, GpuError> {
        self.render_band_until(job, precision, band, want_counts, &RenderControl::new())
            .map(|b| b.expect("not stopped: the flag is never set"))
    }

    /// [`BandRenderer::render_band`] that stops early, returning `None`, once `control.stop`
    /// is set: on the CPU within a pixel; on the GPU after the band's launch (keep GPU bands
    /// short, e.g. with [`rows_per_launch`]).
    ///
    /// # Errors
    /// As [`BandRenderer::render_band`].
    pub fn render_band_until(
        &mut self,
        job: &RenderJob<f64>,
        precision: Precision,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Result<Option<BandImage>, GpuError> {
        self.render(
            BandJob::Float { job, precision },
            band,
            want_counts,
            control,
        )
    }

    /// Renders the rows `band` of `work` (any arithmetic), stopping early as
    /// [`BandRenderer::render_band_until`] does.
    ///
    /// # Errors
    /// As [`GpuRenderer::render`]; the CPU never fails.
    pub fn render(
        &mut self,
        work: BandJob<'_>,
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

/// Upper bound of escape-time iterations in one GPU launch: 2^38 ≈ 2.7·10^11, about 0.2 s of
/// the slowest case (every sample inside the set, f64) on an H200, whose optimized f64 kernel
/// ran 1.5·10^12 iterations/s on seahorse valley (`ferrocuda mandelbrot-bench`); slower GPUs
/// take proportionally longer.
pub const MAX_ITERATIONS_PER_LAUNCH: u64 = 1 << 38;

/// Rows per band for `job`: at most `max_band_px` pixels, and at most
/// [`MAX_ITERATIONS_PER_LAUNCH`] iterations in the worst case (`max_iter` for every sample),
/// so that a band's launch ends quickly and a stop request is noticed within about a second.
pub fn rows_per_launch(job: &RenderJob<f64>, max_band_px: u64) -> u32 {
    let samples_per_row = u64::from(job.width_px.max(1))
        * u64::from(job.supersample.max(1)).pow(2)
        * u64::from(job.max_iter.max(1));
    let by_work = (MAX_ITERATIONS_PER_LAUNCH / samples_per_row).max(1);
    let rows = by_work.min(u64::from(rows_per_band(job.width_px, max_band_px)));
    u32::try_from(rows)
        .unwrap_or(u32::MAX)
        .min(job.height_px.max(1))
}

/// Re-exported from [`crate::bench::mandelbrot`], where the Mandelbrot bench lives, for the
/// workspace tests that still import them from here.
pub use crate::bench::mandelbrot::{bench_kernels, render_naive_cpu};
