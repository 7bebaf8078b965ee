//! Band sizes and the host memory the bands of one render may hold.

use anyhow::Result;
use common::{RenderJob, perturb::DeepJob};
use host::{
    Gpu,
    deep::PerturbedJob,
    mandelbrot::{BandRenderer, GpuRenderer, rows_per_launch},
};

/// Pixels per band by default: 2^23 (32768 × 256), 88 MiB of device buffers, 24 MiB of
/// colours per band in host memory. Bands of colours below glibc's largest mmap threshold
/// (32 MiB) reuse freed heap memory instead of faulting in fresh pages for every band: on an
/// H200 machine (16 cores) a 32768² render took 1.3–1.8 s end to end with 256-row bands and
/// 2.3–2.8 s with 1024-row bands.
pub const DEFAULT_BAND_PX: u64 = 1 << 23;
/// Most host memory the bands of one render may hold at once: 1.5 GiB, counted by
/// [`BandMemory`]. `--band-rows` is refused above it and the default rows are capped by it
/// (device buffers are checked against the GPU's free memory when they are allocated).
pub const MAX_BAND_HOST_BYTES: u64 = 3 << 29;

/// Where the bands of a render are rendered, as far as their host memory is concerned.
#[derive(Clone, Copy, Debug)]
pub enum BandRenderers {
    /// The CPU: one band rendered at a time.
    Cpu,
    /// A pool of `count` GPUs whose sink lets at most `reorder_window` bands past the next
    /// one start ([`GpuPool::reorder_window`](host::mandelbrot::pool::GpuPool::reorder_window)).
    Gpus { count: u64, reorder_window: u64 },
}

/// What the bands of one `mandelbrot` render hold in host memory at their peak, per image
/// pixel of a band: the one rule `--band-rows` and the default rows are bounded by
/// ([`MAX_BAND_HOST_BYTES`]). Every buffer a band has on the host is counted:
///
/// - every band in flight holds its colours, 3 bytes a pixel ([`BandImage::rgb`](host::mandelbrot::BandImage::rgb)). On the
///   CPU three bands are in flight: one being rendered, one queued for the PNG encoder and
///   one being encoded. On GPUs, the bands the pool may render ahead (its reorder window)
///   and the same two;
/// - the band being rendered on the CPU holds escape times, 4 bytes a pixel, for f32/f64
///   (`host::mandelbrot::cpu`), and escape times and `|z|²` of every sample, 8 bytes a
///   sample, for perturbation (`PerturbedJob`'s `BandKernel::render_cpu_until`);
/// - each GPU holds page-locked memory for colours, two staging buffers of 3 bytes a pixel
///   (`GpuRenderer::with_samples`: one band's colours come back while the previous band's
///   are moved out; counted even for a small render, which has none:
///   `host::mandelbrot::CopyBack::Direct`); perturbed bands are coloured on the GPU, so their samples' escape
///   times and `|z|²` stay there;
/// - with `--verify`, every band in flight keeps its escape times (and `|z|²` of perturbed
///   samples), and the check renders one band on the CPU again.
#[derive(Clone, Copy, Debug)]
pub struct BandMemory {
    /// Samples per pixel of a perturbed image (1, 4 or 16); `None` for f32/f64.
    pub perturbed_samples: Option<u64>,
    /// Where the bands are rendered.
    pub renderers: BandRenderers,
    /// Whether `--verify` checks each GPU band on the CPU.
    pub verify: bool,
}

impl BandMemory {
    /// Bytes of colour per pixel of a band.
    const COLOR_BYTES: u64 = 3;

    /// Escape times (and `|z|²` of every sample, for perturbation) per pixel.
    fn count_bytes(self) -> u64 {
        match self.perturbed_samples {
            Some(samples) => 8 * samples,
            None => 4,
        }
    }

    /// Bands holding colours at once.
    fn bands_in_flight(self) -> u64 {
        match self.renderers {
            BandRenderers::Cpu => 3,
            BandRenderers::Gpus { reorder_window, .. } => reorder_window + 2,
        }
    }

    /// Host bytes per pixel of a band at the peak of a render.
    pub fn bytes_per_px(self) -> u64 {
        let colors = self.bands_in_flight() * Self::COLOR_BYTES;
        let counts = self.count_bytes();
        match self.renderers {
            BandRenderers::Cpu => colors + counts,
            BandRenderers::Gpus { count, .. } => {
                let staging = 2 * Self::COLOR_BYTES;
                let verify = if self.verify {
                    // Kept by every band in flight (the GPU's copies among them), and the
                    // check's own CPU band.
                    self.bands_in_flight() * counts + counts + Self::COLOR_BYTES
                } else {
                    0
                };
                colors + count * staging + verify
            }
        }
    }

    /// What [`BandMemory::bytes_per_px`] counts, in words.
    fn describe(self) -> String {
        let counts = match self.perturbed_samples {
            Some(1) => "escape times and |z|² of 1 sample per pixel".to_owned(),
            Some(s) => format!("escape times and |z|² of {s} samples per pixel"),
            None => "escape times".to_owned(),
        };
        let bands = self.bands_in_flight();
        match self.renderers {
            BandRenderers::Cpu => {
                format!("{counts} while a band renders, and the colours of {bands} bands in flight")
            }
            BandRenderers::Gpus { count, .. } => {
                let verify = if self.verify {
                    format!(", and --verify's {counts} of every band and its CPU render")
                } else {
                    String::new()
                };
                format!(
                    "the colours of {bands} bands in flight, page-locked memory for colours on \
                     each of {count} GPUs{verify}"
                )
            }
        }
    }

    /// Most rows per band of a `width_px`-wide image within [`MAX_BAND_HOST_BYTES`] (at
    /// least 1).
    pub fn max_rows(self, width_px: u32) -> u32 {
        let per_row = self.bytes_per_px() * u64::from(width_px.max(1));
        u32::try_from(MAX_BAND_HOST_BYTES / per_row)
            .unwrap_or(u32::MAX)
            .max(1)
    }

    /// Refuses `rows` per band of a `width_px × height_px` image (`deep`: rendered by
    /// perturbation) when they hold more than [`MAX_BAND_HOST_BYTES`], naming the value,
    /// the bytes per pixel and the allowed range.
    pub(super) fn check_rows(
        self,
        rows: u32,
        width_px: u32,
        height_px: u32,
        deep: bool,
    ) -> Result<()> {
        let max = self.max_rows(width_px);
        let band_rows = rows.min(height_px);
        if band_rows <= max {
            return Ok(());
        }
        let gib = |bytes: u64| bytes as f64 / f64::from(1u32 << 30);
        let per_px = self.bytes_per_px();
        let kind = if deep { "deep " } else { "" };
        let on = match self.renderers {
            BandRenderers::Cpu => "on the CPU".to_owned(),
            BandRenderers::Gpus { count: 1, .. } => "on 1 GPU".to_owned(),
            BandRenderers::Gpus { count, .. } => format!("on {count} GPUs"),
        };
        crate::cli::usage!(
            "--band-rows {rows} is not allowed for this {width_px}-pixel-wide {kind}image {on}: \
             a band of {band_rows} rows would hold up to {:.1} GiB of host memory ({per_px} \
             bytes per pixel: {}), more than the {:.1} GiB allowed; allowed: --band-rows 1 to \
             {max}",
            gib(per_px * u64::from(band_rows) * u64::from(width_px)),
            self.describe(),
            gib(MAX_BAND_HOST_BYTES)
        );
    }
}

/// Rows per band by default: as many as fit in [`DEFAULT_BAND_PX`] pixels and in
/// [`host::mandelbrot::MAX_ITERATIONS_PER_LAUNCH`] worst-case iterations (so a stop request
/// is noticed between launches within about a second) and, with several GPUs, at most 1/8 of
/// the image per GPU (so that work stealing can even out unequal bands).
pub fn default_band_rows(job: &RenderJob<f64>, gpus: usize) -> u32 {
    let rows = rows_per_launch(job, DEFAULT_BAND_PX);
    if gpus <= 1 {
        return rows;
    }
    let per_gpu = u32::try_from(8 * gpus).unwrap_or(u32::MAX);
    rows.min(job.height_px.div_ceil(per_gpu)).max(1)
}

/// The band renderer: `gpu` with band buffers of `capacity_px` pixels of `samples_per_px`
/// samples each (page-locked staging for the pixels' colours only), or the CPU.
pub fn band_renderer(
    gpu: Option<&Gpu>,
    capacity_px: usize,
    samples_per_px: usize,
) -> Result<BandRenderer<'_>> {
    Ok(match gpu {
        Some(gpu) => BandRenderer::Gpu(Box::new(GpuRenderer::with_samples(
            gpu,
            capacity_px,
            samples_per_px,
        )?)),
        None => BandRenderer::Cpu,
    })
}

/// Rows per band by default for a perturbed job (`job`'s image, `supersample²` samples per
/// pixel; its reference orbit need not exist yet): as many as fit in [`DEFAULT_BAND_PX`]
/// pixels and in [`host::deep::MAX_PERTURBED_ITERATIONS_PER_LAUNCH`] worst-case iterations
/// and, with several GPUs, at most 1/8 of the image per GPU.
pub fn default_deep_band_rows(job: &DeepJob, supersample: u32, gpus: usize) -> u32 {
    let rows = PerturbedJob::rows_per_band_of(job, supersample, DEFAULT_BAND_PX);
    if gpus <= 1 {
        return rows;
    }
    let per_gpu = u32::try_from(8 * gpus).unwrap_or(u32::MAX);
    rows.min(job.height_px.div_ceil(per_gpu)).max(1)
}
