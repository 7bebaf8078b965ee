//! The Mandelbrot bench (`ferrocuda mandelbrot-bench`): the baseline `mandelbrot_naive_*`
//! kernel and its CPU twin, the renderer's optimized passes, and the CUDA C reference kernels
//! (`bench/cuda/mandelbrot.cu`, built by [`crate::nvcc`]), timed with [`crate::timing`].

use crate::gpu::{Gpu, GpuError, run};
use crate::launch::for_image;
use crate::mandelbrot::{
    BandBuffers, COLOR_TABLE_LEN, Image, Precision, RenderKernels, RenderParams, Style,
    color_table, launch_render, timed,
};
use crate::timing::{Repeat, Stats};
use common::Rgb;
use common::{Band, Palette, Real, Viewport};
use cuda_std::launch::{Out, Safe, Value};
use cust::{error::GpuContext, launch::TypedFunction, memory::DeviceBuffer, module::Module};
use kernels::mandelbrot::{mandelbrot_naive_f32, mandelbrot_naive_f64};
use rayon::prelude::*;
use std::time::Duration;

/// Parameter kinds of the baseline kernels `mandelbrot_naive_f32`/`_f64`.
type NaiveParams<F> = (
    Value<Viewport<F>>,
    Value<u32>,
    Value<Palette>,
    Out<u32>,
    Out<Rgb>,
);

/// The baseline kernels `mandelbrot_naive_f32`/`_f64`, resolved once in a module.
pub struct NaiveKernels {
    f32: TypedFunction<NaiveParams<f32>, Safe>,
    f64: TypedFunction<NaiveParams<f64>, Safe>,
}

impl std::fmt::Debug for NaiveKernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NaiveKernels").finish_non_exhaustive()
    }
}

impl NaiveKernels {
    /// Resolves both in `gpu`'s module.
    ///
    /// # Errors
    /// As [`cust::module::Module::kernel`].
    pub fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        Ok(Self {
            f32: gpu.module().kernel(mandelbrot_naive_f32)?,
            f64: gpu.module().kernel(mandelbrot_naive_f64)?,
        })
    }
}

/// Launches the baseline `mandelbrot_naive_f32`/`_f64` (of `kernels`) over the whole view of
/// `params` (its iteration limit, palette and precision) into `counts`/`rgb` (at least
/// `params.view.len()` pixels) and waits; returns the kernel time.
///
/// # Panics
/// If the buffers are smaller than the view (a programming error).
///
/// # Errors
/// As [`launch_render`].
pub fn launch_naive(
    gpu: &Gpu,
    kernels: &NaiveKernels,
    params: &RenderParams,
    counts: &mut DeviceBuffer<u32>,
    rgb: &mut DeviceBuffer<Rgb>,
) -> Result<Duration, GpuError> {
    let RenderParams {
        ref view,
        max_iter,
        precision,
        palette,
    } = *params;
    let len = view.len();
    assert!(
        counts.len() >= len && rgb.len() >= len,
        "buffers too small for the view"
    );
    let cfg = for_image(view.width_px, view.height_px);
    let mut counts = counts.index_mut(0..len)?;
    let mut rgb = rgb.index_mut(0..len)?;
    match precision {
        Precision::F32 => {
            let args = (view.cast::<f32>(), max_iter, palette, &mut counts, &mut rgb);
            run(gpu, &kernels.f32, cfg, args)
        }
        Precision::F64 => {
            let args = (*view, max_iter, palette, &mut counts, &mut rgb);
            run(gpu, &kernels.f64, cfg, args)
        }
    }
}

/// The CUDA C reference kernels of `bench/cuda/mandelbrot.cu` (the textbook loop, and the
/// loop after the cardioid/bulb test), built with nvcc for the GPU at hand.
pub struct CudaCReference {
    module: Module,
}

impl std::fmt::Debug for CudaCReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaCReference").finish_non_exhaustive()
    }
}

/// Which CUDA C reference kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaCKernel {
    /// The textbook escape-time loop.
    Naive,
    /// The loop after the main-cardioid / period-2-bulb test.
    Cardioid,
}

/// The CUDA C source of [`CudaCReference`].
pub const CUDA_C_MANDELBROT: &str = include_str!("../../../bench/cuda/mandelbrot.cu");

impl CudaCReference {
    /// Compiles and loads the reference kernels (needs `nvcc` on `PATH`).
    ///
    /// # Errors
    /// Why not, as a message (no nvcc, compile or load error).
    pub fn build(gpu: &Gpu) -> Result<Self, String> {
        let module = crate::nvcc::module(gpu, "mandelbrot", CUDA_C_MANDELBROT)?;
        Ok(Self { module })
    }

    /// Times `kernel` on `params`' view, iteration limit and precision (`warmup` untimed
    /// launches, then `reps` launches timed with CUDA events, 16×16 blocks) and returns the
    /// time statistics and the escape counts (row-major).
    ///
    /// # Errors
    /// Launch, allocation or copy failures.
    pub fn bench(
        &self,
        gpu: &Gpu,
        kernel: CudaCKernel,
        params: &RenderParams,
        warmup: u32,
        reps: u32,
    ) -> Result<(Stats, Vec<u32>), GpuError> {
        use super::twins::is_f64;
        let view = &params.view;
        let len = view.len();
        gpu.check_free("the CUDA C reference's counts", 4 * len)?;
        let mut counts = DeviceBuffer::zeroed_async(len, gpu.stream())
            .gpu_context("allocating the CUDA C reference's counts")?;
        let which = kernel as usize;
        let repeat = Repeat::new(warmup, reps);
        let times = if is_f64(params) {
            reference_times::<f64>(&self.module, gpu, which, params, repeat, &mut counts)?
        } else {
            reference_times::<f32>(&self.module, gpu, which, params, repeat, &mut counts)?
        };
        let counts = counts
            .as_host_vec()
            .gpu_context("copying the CUDA C reference's counts")?;
        Ok((Stats::from_durations(times), counts))
    }
}

/// `repeat` timed launches of the CUDA C reference `CU_MANDEL[which]` in precision `T` over
/// `params`' view, 16×16 blocks, writing escape counts into `counts`; the kernel times.
fn reference_times<T: super::twins::MandelTwins>(
    module: &Module,
    gpu: &Gpu,
    which: usize,
    params: &RenderParams,
    repeat: Repeat,
    counts: &mut DeviceBuffer<u32>,
) -> Result<Vec<Duration>, GpuError> {
    let f = module.kernel(T::CU_MANDEL[which])?;
    let view = T::view_args(params);
    let cfg = for_image(params.view.width_px, params.view.height_px);
    repeat.run(|| {
        timed(gpu, f.name(), cfg, || {
            super::twins::mandelbrot_reference(gpu, &f, cfg, view, params.max_iter, counts)
        })
    })
}

/// Escape-time statistics of a view on the CPU: the total of the plain loop's iterations
/// (`Σ escape_time`), i.e. the work the naive kernel does.
pub fn total_iterations(counts: &[u32]) -> u64 {
    counts.iter().map(|&n| u64::from(n)).sum()
}

/// The baseline on the CPU: [`common::escape_time`] (no shortcuts) and [`Palette::color`] for
/// every pixel of `params.view` — what the `mandelbrot_naive_*` kernels compute.
pub fn render_naive_cpu(params: &RenderParams) -> Image {
    fn with<F: Real + Send + Sync>(view: Viewport<F>, params: &RenderParams) -> Image {
        let width = view.width_px as usize;
        let mut counts = vec![0u32; view.len()];
        let mut rgb = vec![0u8; 3 * view.len()];
        counts
            .par_chunks_mut(width)
            .zip(rgb.par_chunks_mut(3 * width))
            .enumerate()
            .for_each(|(y, (count_row, rgb_row))| {
                naive_row(&view, params, y as u32, count_row, rgb_row);
            });
        Image {
            width_px: view.width_px,
            height_px: view.height_px,
            counts,
            rgb,
        }
    }
    match params.precision {
        Precision::F32 => with(params.view.cast::<f32>(), params),
        Precision::F64 => with(params.view, params),
    }
}

fn naive_row<F: Real>(
    view: &Viewport<F>,
    params: &RenderParams,
    y: u32,
    counts: &mut [u32],
    rgb: &mut [u8],
) {
    #[inline(always)]
    fn plain<F: Real>(
        view: &Viewport<F>,
        params: &RenderParams,
        y: u32,
        counts: &mut [u32],
        rgb: &mut [u8],
    ) {
        for (x, (count, color)) in counts.iter_mut().zip(rgb.chunks_exact_mut(3)).enumerate() {
            let n = common::escape_time(view.pixel_to_complex(x as u32, y), params.max_iter);
            *count = n;
            color.copy_from_slice(&params.palette.color(n, params.max_iter));
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn fma<F: Real>(
        view: &Viewport<F>,
        params: &RenderParams,
        y: u32,
        counts: &mut [u32],
        rgb: &mut [u8],
    ) {
        plain(view, params, y, counts, rgb);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports FMA (checked just above).
        unsafe { fma(view, params, y, counts, rgb) };
        return;
    }
    plain(view, params, y, counts, rgb);
}

/// Timings of the naive and the optimized kernel on one view (see [`bench_kernels`]).
#[derive(Clone, Debug)]
pub struct KernelBench {
    /// Kernel times of the naive kernel (escape time and colour in one kernel).
    pub naive: Stats,
    /// Kernel times of the renderer's escape pass (escape times only, as the CUDA C
    /// references write).
    pub optimized: Stats,
    /// Kernel times of the renderer's colour pass.
    pub color: Stats,
    /// The naive kernel's image.
    pub naive_image: Image,
    /// The optimized kernel's image.
    pub optimized_image: Image,
}

/// Times `mandelbrot_naive_*` and the renderer's passes ([`launch_render`], default [`Style`])
/// on `params`:
/// `warmup` untimed launches each, then `reps` launches each timed with CUDA events; returns
/// the times and both images (to check they are identical).
///
/// # Errors
/// [`GpuError::OutOfMemory`] if the four buffers (14 bytes per pixel) do not fit, and
/// launch or copy failures.
pub fn bench_kernels(
    gpu: &Gpu,
    params: &RenderParams,
    warmup: u32,
    reps: u32,
) -> Result<KernelBench, GpuError> {
    let view = params.view;
    let len = view.len();
    gpu.check_free("the benchmark buffers", len * 14)?;
    let stream = gpu.stream();
    let alloc = |what: &'static str| {
        Ok::<_, GpuError>((
            DeviceBuffer::<u32>::zeroed_async(len, stream).gpu_context(what)?,
            DeviceBuffer::<Rgb>::zeroed_async(len, stream).gpu_context(what)?,
        ))
    };
    let (mut naive_counts, mut naive_rgb) = alloc("allocating the naive kernel's buffers")?;
    let (mut opt_counts, mut opt_rgb) = alloc("allocating the optimized kernel's buffers")?;
    // Discrete colouring (the default style): the escape pass writes no |z_n|².
    let mut no_norms = DeviceBuffer::<f32>::zeroed_async(1, stream)
        .gpu_context("allocating the optimized kernel's buffers")?;
    let mut table = DeviceBuffer::<u32>::zeroed_async(COLOR_TABLE_LEN, stream)
        .gpu_context("allocating the colour table")?;
    let job = params.job(&Style::default());
    let band = Band {
        first_row: 0,
        rows: view.height_px,
    };
    let table_len = color_table(gpu, job.coloring, job.max_iter, &mut table, &mut None)?.len;
    let kernels = RenderKernels::new(gpu)?;
    let naive = NaiveKernels::new(gpu)?;
    let times = Repeat::new(warmup, reps).run(|| {
        let t_naive = launch_naive(gpu, &naive, params, &mut naive_counts, &mut naive_rgb)?;
        let t_opt = launch_render(
            gpu,
            &kernels,
            &job,
            params.precision,
            band,
            BandBuffers {
                counts: &mut opt_counts,
                norms: &mut no_norms,
                table: table.index(0..table_len)?,
                rgb: &mut opt_rgb,
            },
        )?;
        Ok::<_, GpuError>((t_naive, t_opt))
    })?;
    let image = |counts: &DeviceBuffer<u32>, rgb: &DeviceBuffer<Rgb>| {
        Ok::<_, GpuError>(Image {
            width_px: view.width_px,
            height_px: view.height_px,
            counts: counts
                .as_host_vec()
                .gpu_context("copying escape times to the host")?,
            rgb: rgb
                .as_host_vec()
                .gpu_context("copying colours to the host")?
                .into_flattened(),
        })
    };
    Ok(KernelBench {
        naive: Stats::from_durations(times.iter().map(|t| t.0)),
        optimized: Stats::from_durations(times.iter().map(|t| t.1.escape)),
        color: Stats::from_durations(times.iter().map(|t| t.1.color)),
        naive_image: image(&naive_counts, &naive_rgb)?,
        optimized_image: image(&opt_counts, &opt_rgb)?,
    })
}
