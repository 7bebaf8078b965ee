//! A zoom's frames rendered one at a time into the same device buffers: f32 and f64 frames
//! in bands as `mandelbrot` renders them, deep frames by perturbation from one reference
//! orbit computed at the first deep frame.

use super::{ZoomArgs, plan::Plan};
use crate::cli::{
    CONTROL, check_interrupt_with,
    mandelbrot::{DEFAULT_BAND_PX, choose_precision},
};
use anyhow::Result;
use common::{Band, Viewport};
use host::deep::SharedOrbit;
use host::mandelbrot::{
    BandKernel, BandRenderer, FloatJob, RenderParams, Style, precision, rows_per_band,
    rows_per_launch,
};
use std::time::{Duration, Instant};

/// Renders a zoom's frames, reusing its device buffers and the reference orbit, and adds up
/// the time spent.
pub(super) struct FrameRenderer<'g, 'a> {
    args: &'a ZoomArgs,
    plan: &'a Plan<'a>,
    renderer: BandRenderer<'g>,
    /// Rows of the largest band any frame uses.
    capacity_rows: u32,
    /// Samples kept per pixel on the device (`supersample²` when some frame is deep).
    samples: usize,
    /// The reference orbit of the centre, computed once (at the deepest frame's precision
    /// and iteration limit) for every deep frame: the centre does not change.
    orbit: Option<SharedOrbit>,
    style: Style,
    /// Whether the f64 warning was given (once, at the first frame that needs it).
    warned: bool,
    /// Kernel time of the f32 and f64 frames.
    pub kernel: Duration,
    /// Deep frames: how many, and their time (reference orbits, BLA tables and pixels).
    pub deep: (u32, Duration),
}

impl<'g, 'a> FrameRenderer<'g, 'a> {
    /// Allocates the device buffers (none on the CPU) for every frame of `plan`.
    ///
    /// # Errors
    /// The device buffers cannot be allocated.
    pub(super) fn new(
        args: &'a ZoomArgs,
        plan: &'a Plan<'a>,
        gpu: Option<&'g host::Gpu>,
    ) -> Result<Self> {
        // Device buffers for the largest band any frame uses (the first frame's bands are the
        // longest; deeper frames need more iterations and get shorter bands).
        let capacity_rows = rows_per_band(args.width, DEFAULT_BAND_PX).min(args.height);
        // Perturbed frames keep every sample's escape time and |z|² on the device.
        let samples = if (0..args.frames).any(|k| plan.is_deep(k)) {
            args.render.look.supersample.pow(2) as usize
        } else {
            1
        };
        let renderer = crate::cli::mandelbrot::band_renderer(
            gpu,
            args.width as usize * capacity_rows as usize,
            samples,
        )?;
        Ok(Self {
            args,
            plan,
            renderer,
            capacity_rows,
            samples,
            orbit: None,
            style: args.render.look.style(),
            warned: false,
            kernel: Duration::ZERO,
            deep: (0, Duration::ZERO),
        })
    }

    /// Frame `k`'s colours, 3 bytes a pixel, row-major; stopped by a signal between bands
    /// (`written`: what was written so far, for the message).
    ///
    /// # Errors
    /// [`crate::cli::Interrupted`]; a render or view error.
    pub(super) fn render(&mut self, k: u32, written: &dyn Fn() -> String) -> Result<Vec<u8>> {
        let log10 = self.plan.log10(k);
        let max_iter = self.plan.max_iter(log10);
        if self.plan.is_deep(k) {
            self.deep_frame(k, log10, max_iter, written)
        } else {
            self.float_frame(log10, max_iter, written)
        }
    }

    /// A frame past f64, by perturbation from the shared reference orbit.
    fn deep_frame(
        &mut self,
        k: u32,
        log10: f64,
        max_iter: u32,
        written: &dyn Fn() -> String,
    ) -> Result<Vec<u8>> {
        let args = self.args;
        let t = Instant::now();
        if self.orbit.is_none() {
            // A signal stops the orbit; the frames written so far are on disk.
            self.orbit = Some(
                self.plan
                    .deepest_orbit()
                    .map_err(|e| stopped_or(e, written))?,
            );
        }
        let view =
            super::plan::frame_view(&self.plan.center_text, k, log10, args.width, args.height)?;
        let prepared = crate::cli::deep::prepare(
            &view,
            max_iter,
            &self.style,
            args.render.look.palette,
            self.orbit.clone(),
        )
        .map_err(|e| stopped_or(e, written))?;
        let job = &prepared.job;
        let rows = prepared
            .job
            .rows_per_band(DEFAULT_BAND_PX)
            .min((self.capacity_rows * self.samples as u32 / job.buffer_px_per_px() as u32).max(1));
        let mut rgb = Vec::with_capacity(3 * args.width as usize * args.height as usize);
        for band in Band::split(args.height, rows) {
            match self.renderer.render(job, band, false, &CONTROL)? {
                Some(b) => rgb.extend_from_slice(&b.rgb),
                None => check_interrupt_with(written)?,
            }
            check_interrupt_with(written)?;
        }
        self.deep = (self.deep.0 + 1, self.deep.1 + t.elapsed());
        Ok(rgb)
    }

    /// An f32 or f64 frame.
    fn float_frame(
        &mut self,
        log10: f64,
        max_iter: u32,
        written: &dyn Fn() -> String,
    ) -> Result<Vec<u8>> {
        let args = self.args;
        let view = Viewport::from_center_scale(
            args.width,
            args.height,
            self.plan.center,
            10f64.powf(log10),
        )
        .map_err(anyhow::Error::msg)?;
        let params = RenderParams {
            view,
            max_iter,
            precision: host::mandelbrot::Precision::F64,
            palette: args.render.look.palette,
        };
        let job = params.job(&self.style);
        // Warn once, at the first frame that needs it.
        let precision = choose_precision(&job, args.render.precision, self.warned);
        let choice = precision::for_viewport(&job.samples);
        self.warned |= !choice.resolves(precision.into());
        let mut rgb = Vec::with_capacity(3 * view.len());
        let rows = rows_per_launch(&job, DEFAULT_BAND_PX).min(self.capacity_rows);
        for band in Band::split(args.height, rows) {
            let work = FloatJob {
                job: &job,
                precision,
            };
            match self.renderer.render(work, band, false, &CONTROL)? {
                Some(b) => {
                    self.kernel += b.kernel;
                    rgb.extend_from_slice(&b.rgb);
                }
                None => check_interrupt_with(written)?,
            }
            check_interrupt_with(written)?;
        }
        Ok(rgb)
    }
}

/// `e`, or, if a signal stopped the work, the interruption with what was written.
fn stopped_or(e: anyhow::Error, written: impl FnOnce() -> String) -> anyhow::Error {
    match check_interrupt_with(written) {
        Err(stopped) => stopped,
        Ok(()) => e,
    }
}
