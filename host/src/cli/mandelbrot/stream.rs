//! The bands of a `mandelbrot` run streamed into the PNG encoder: [`BandStream`] renders
//! them in image order (on the GPU pool, or on the CPU), checks each against the CPU under
//! `--verify`, counts progress, and hands the rows to the encoder on its own thread.

use super::{
    MandelbrotArgs,
    png::{EncoderStopped, encode_png},
    verify::verify_band,
};
use crate::cli::{OutputFile, check_interrupt};
use anyhow::{Context, Result};
use common::Band;
use host::mandelbrot::{
    BandImage, BandJob, BandKernel, CopyTimes,
    pool::{GpuPool, PoolError, PoolReport, Prepared},
};
use std::{
    sync::mpsc::SyncSender,
    time::{Duration, Instant},
};

/// What rendering the bands took, added up as they reach the encoder.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Sum of the bands' kernel times (GPU: CUDA events; CPU: wall time).
    pub kernel: Duration,
    /// Sum of the GPU bands' copies between host and device (zero on the CPU).
    pub copies: CopyTimes,
    /// Wall time of the `--verify` CPU renders.
    pub verify_time: Duration,
    /// The pool's per-GPU shares and wall time, when the GPUs rendered.
    pub report: Option<PoolReport>,
}

/// One run's bands and where they are rendered.
pub(super) struct BandStream<'a> {
    args: &'a MandelbrotArgs,
    pool: Option<&'a GpuPool>,
    band_job: BandJob<'a>,
    bands: &'a [Band],
    verify: bool,
    /// The GPUs' buffers, made beforehand ([`BandStream::with_prepared`]).
    prepared: Option<Prepared>,
    progress: crate::cli::Progress,
}

impl<'a> BandStream<'a> {
    /// The bands `bands` of `band_job` for `args`' image, on `pool`'s GPUs or (`None`) the
    /// CPU; `verify`: render each again on the CPU and compare. Starts the progress line: the
    /// GPU path counts finished bands, the CPU path its finished pixels (of a deep image,
    /// samples) within rows; both in pixels.
    pub(super) fn new(
        args: &'a MandelbrotArgs,
        pool: Option<&'a GpuPool>,
        band_job: BandJob<'a>,
        bands: &'a [Band],
        verify: bool,
    ) -> Self {
        let pixels = u64::from(args.width) * u64::from(args.height);
        let progress = match pool {
            Some(_) => crate::cli::Progress::new(pixels, "pixels"),
            None => crate::cli::Progress::watch(
                pixels,
                "pixels",
                &crate::cli::CONTROL.samples_done,
                band_job.buffer_px_per_px() as u64,
            ),
        };
        Self {
            args,
            pool,
            band_job,
            bands,
            verify,
            prepared: None,
            progress,
        }
    }

    /// The GPUs render with `prepared` buffers, if any ([`GpuPool::render_prepared`]).
    pub(super) fn with_prepared(self, prepared: Option<Prepared>) -> Self {
        Self { prepared, ..self }
    }

    /// Renders every band and streams it into the PNG encoder (on its own thread, writing
    /// `output`'s file), adding to `tally`; returns the encoder's time. The progress line
    /// ends when this returns.
    ///
    /// # Errors
    /// The first failing band, `--verify` difference or interruption; when the encoder
    /// failed first, its error.
    pub(super) fn into_png(mut self, output: &OutputFile, tally: &mut Tally) -> Result<Duration> {
        let prepared = self.prepared.take();
        std::thread::scope(|scope| -> Result<Duration> {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
            let file = output
                .file()
                .try_clone()
                .context("opening the output file")?;
            let (width, height) = (self.args.width, self.args.height);
            let level = self.args.png_compression;
            let encoder = scope.spawn(move || encode_png(file, width, height, level, rx));
            let rendered = self.render(&tx, tally, prepared);
            drop(tx);
            let encoded = encoder.join().expect("the PNG encoder thread panicked");
            match rendered {
                // The encoder failed first: its error says why.
                Err(e) if e.is::<EncoderStopped>() => encoded,
                Err(e) => Err(e),
                Ok(()) => encoded,
            }
        })
    }

    /// Renders every band in order and hands each to `tx`: checked against the CPU under
    /// `--verify`, counted in the progress line when the GPUs render (with `prepared`
    /// buffers, if any).
    fn render(
        &self,
        tx: &SyncSender<Vec<u8>>,
        tally: &mut Tally,
        prepared: Option<Prepared>,
    ) -> Result<()> {
        let count_bands = self.pool.is_some();
        let width = self.args.width;
        let mut sink = |b: BandImage| -> Result<()> {
            check_interrupt()?;
            tally.kernel += b.kernel;
            tally.copies += b.copies;
            if self.verify {
                let t = Instant::now();
                verify_band(&self.band_job, &b)?;
                tally.verify_time += t.elapsed();
            }
            tx.send(b.rgb).map_err(|_| EncoderStopped)?;
            if count_bands {
                self.progress.inc(u64::from(b.band.rows) * u64::from(width));
            }
            Ok(())
        };
        let (job, bands, want_counts) = (self.band_job, self.bands, self.verify);
        match self.pool {
            Some(pool) => {
                let rendered = match prepared {
                    Some(p) => pool.render_prepared(job, bands, want_counts, p, &mut sink),
                    None => pool.render(job, bands, want_counts, &mut sink),
                };
                match rendered {
                    Ok(r) => {
                        tally.report = Some(r);
                        Ok(())
                    }
                    Err(PoolError::Sink(e)) => Err(e),
                    Err(e) => Err(anyhow::Error::new(e)),
                }
            }
            None => self.bands.iter().try_for_each(|&band| {
                match self
                    .band_job
                    .render_cpu_until(band, false, &crate::cli::CONTROL)
                {
                    Some(b) => sink(b),
                    None => check_interrupt(),
                }
            }),
        }
    }
}
