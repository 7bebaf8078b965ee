//! What a band job is, what every band renderer hands back and how its caller steers it,
//! below both the Mandelbrot renderer ([`crate::mandelbrot`]) and the deep-zoom jobs
//! ([`crate::deep`]): [`BandKernel`] (a float or perturbed job: its size, its elements per
//! pixel, its CPU render), [`BandImage`] (one rendered band) and [`RenderControl`] (stop
//! requests and progress).
//!
//! This module names neither a job type nor a GPU renderer, so both sides depend on it and
//! not on each other: the float job ([`crate::mandelbrot::FloatJob`]) and the perturbed job
//! ([`crate::deep::PerturbedJob`]) implement [`BandKernel`] where they are defined, and the
//! GPU renderer's own extension of it ([`crate::mandelbrot::GpuBandKernel`]) lives beside the
//! renderer.

use common::Band;
use std::{
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    time::Duration,
};

/// A band job: what a band renderer computes for rows of one image, float or perturbed.
/// Every band renderer (the CPU here, [`crate::mandelbrot::GpuRenderer`],
/// [`crate::mandelbrot::pool::GpuPool`], [`crate::mandelbrot::BandRenderer`]) takes any
/// implementation, so bands of either arithmetic go through the same renderers and the same
/// callers (streaming PNG, progress, stop checks).
///
/// Implemented by [`crate::mandelbrot::FloatJob`] (escape times in `f32` or `f64`),
/// [`crate::deep::PerturbedJob`] (perturbation from a reference orbit),
/// [`crate::mandelbrot::BandJob`] (either, chosen at run time) and references to them.
pub trait BandKernel: Sync {
    /// Image width in pixels.
    fn width_px(&self) -> u32;

    /// Image height in pixels.
    fn height_px(&self) -> u32;

    /// Elements per band pixel a band renderer holds: the samples per pixel (`s²`) for
    /// perturbed jobs, whose samples are averaged after the escape pass; one for float jobs,
    /// whose supersampling kernels average within a pixel's work. A
    /// [`crate::mandelbrot::GpuRenderer`] needs this many device buffer elements per pixel,
    /// and a CPU render adds this many to [`RenderControl::samples_done`] per pixel.
    fn buffer_px_per_px(&self) -> usize;

    /// Renders the rows `band` on the CPU (rayon), giving up (`None`) once `control.stop`
    /// is set (checked before every pixel or sample) and counting finished pixels or
    /// samples in `control.samples_done` ([`BandKernel::buffer_px_per_px`] per pixel).
    /// `counts` (and for perturbed jobs `norms`) of the result are empty unless
    /// `want_counts`.
    fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage>;
}

impl<K: BandKernel + ?Sized> BandKernel for &K {
    fn width_px(&self) -> u32 {
        (**self).width_px()
    }

    fn height_px(&self) -> u32 {
        (**self).height_px()
    }

    fn buffer_px_per_px(&self) -> usize {
        (**self).buffer_px_per_px()
    }

    fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage> {
        (**self).render_cpu_until(band, want_counts, control)
    }
}

/// One rendered band of an image: rows `band.first_row ..` of [`crate::mandelbrot::Image`]'s layout.
#[derive(Clone, Debug, PartialEq)]
pub struct BandImage {
    /// Which rows.
    pub band: Band,
    /// Escape times (`width · band.rows` values), or empty when not requested. For a
    /// perturbed job ([`crate::deep::PerturbedJob`]) one per sample (`s² · width · band.rows`).
    pub counts: Vec<u32>,
    /// `|z_n|²` at escape, one per sample, for perturbed jobs when counts were requested
    /// (for checking the GPU against the CPU bit for bit); otherwise empty.
    pub norms: Vec<f32>,
    /// Colours (`3 · width · band.rows` bytes).
    pub rgb: Vec<u8>,
    /// Kernel time (GPU: CUDA events around the escape and colour launches; CPU: wall time).
    pub kernel: Duration,
    /// The band's copies between host and device (zero on the CPU).
    pub copies: CopyTimes,
}

/// Time of a GPU band's copies, by direction: the colours' copy back between CUDA events
/// around it (GPU time, as kernels are timed: the copy is queued behind the band's kernels
/// and not waited for at once), the other copies by host timers around the copy and the
/// wait for it (the transfer with its driver overhead). Zero for CPU bands. The copies of
/// several bands add up with `+=`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyTimes {
    /// Host to device: a deep job's reference orbit and BLA table when a band uploads them
    /// (the first band of a job on each GPU; device allocation included), and the colour
    /// table when the colouring changes.
    pub htod: Duration,
    /// Device to host: the colours (through page-locked staging memory; CUDA events), and
    /// escape times (and `|z_n|²` of perturbed samples) when they were asked for.
    pub dtoh: Duration,
}

impl CopyTimes {
    /// Both directions.
    pub fn total(&self) -> Duration {
        self.htod + self.dtoh
    }
}

impl std::ops::AddAssign for CopyTimes {
    fn add_assign(&mut self, other: Self) {
        self.htod += other.htod;
        self.dtoh += other.dtoh;
    }
}

/// Lets the caller of a CPU render stop it early and watch its progress.
#[derive(Debug, Default)]
pub struct RenderControl {
    /// Set to stop: checked before every pixel.
    pub stop: AtomicBool,
    /// Samples finished so far, counted within rows (every CPU render with this control adds
    /// to it, a few at a time, after 64 samples or 2^16 iterations): one per pixel of an f32/f64 job (its
    /// supersamples are one pixel's work), one per sample of a perturbed job
    /// ([`BandKernel::buffer_px_per_px`] per pixel).
    pub samples_done: AtomicU64,
}

impl RenderControl {
    /// Not stopped, nothing done.
    pub const fn new() -> Self {
        Self {
            stop: AtomicBool::new(false),
            samples_done: AtomicU64::new(0),
        }
    }
}

/// Finished samples of one CPU thread, added to [`RenderControl::samples_done`] in batches:
/// after 64 samples or 2^16 iterations, whichever comes first, and when dropped. Cheap
/// samples so share one atomic addition (every thread adding per pixel would contend for
/// it), while a slow sample (a deep one at 10^7 iterations may take seconds) shows at once.
pub(crate) struct SampleTally<'a> {
    done: &'a AtomicU64,
    samples: u64,
    iterations: u64,
}

impl<'a> SampleTally<'a> {
    const SAMPLES: u64 = 64;
    const ITERATIONS: u64 = 1 << 16;

    /// Nothing counted yet, for `control`.
    pub(crate) fn new(control: &'a RenderControl) -> Self {
        Self {
            done: &control.samples_done,
            samples: 0,
            iterations: 0,
        }
    }

    /// Counts one finished sample that took `iterations` iterations (its escape time).
    #[inline]
    pub(crate) fn add(&mut self, iterations: u32) {
        self.samples += 1;
        self.iterations += u64::from(iterations);
        if self.samples >= Self::SAMPLES || self.iterations >= Self::ITERATIONS {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.samples > 0 {
            self.done.fetch_add(self.samples, Ordering::Relaxed);
        }
        self.samples = 0;
        self.iterations = 0;
    }
}

impl Drop for SampleTally<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}
