//! The renderer's kernels on one GPU ([`RenderKernels`], each resolved once) and the
//! launches of a float band ([`queue_render`], [`launch_render`]) into device buffers
//! ([`BandBuffers`]).

use crate::{
    deep::render::PerturbParams,
    gpu::{Gpu, GpuError, QueuedKernel, queue},
    launch::{for_image, for_num_elems},
    mandelbrot::{Precision, RenderTimes},
};
use common::{
    Band, RenderJob, Rgb,
    palette::{Coloring, SampleGrid, Shading},
};
use cuda_std::launch::{Out, Safe, Slice, Value};
use cust::{
    launch::TypedFunction,
    memory::{DeviceBuffer, DeviceCopy, DeviceSlice, DeviceSliceMut},
};
use kernels::mandelbrot::{
    colorize, mandelbrot_f32, mandelbrot_f64, mandelbrot_perturb, mandelbrot_ss_f32,
    mandelbrot_ss_f64,
};

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
    pub(super) colorize: TypedFunction<ColorizeParams, Safe>,
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
