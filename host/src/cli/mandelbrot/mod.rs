//! `ferrocuda mandelbrot`: render the Mandelbrot set to a PNG file.
//!
//! The image is rendered in bands of rows and each band is streamed into the PNG encoder (on
//! its own thread, overlapping the next band's render), so memory stays bounded whatever the
//! size: sides up to 65536 pixels (2^32 pixels). With several GPUs (`--gpus`), each renders
//! bands as it becomes free and the bands are put back in order before encoding. Ctrl-C stops
//! between bands and removes the temporary file.

mod args;
mod memory;
mod png;
mod verify;
mod view;

use super::device::open_pool;
use super::{OutputFile, check_interrupt, outln};
use anyhow::{Context, Result};
use common::{Band, RenderJob};
use host::mandelbrot::{
    BandImage, BandJob, BandKernel, FloatJob, Precision,
    pool::{GpuPool, PoolError},
};
use std::time::{Duration, Instant};

pub use super::MAX_ITER_LIMIT;
pub use args::{CenterParts, LookArgs, MandelbrotArgs, PrecisionArg, check_size_and_iter};
pub use memory::{DEFAULT_BAND_PX, band_renderer};
pub use view::{check_scale, choose_precision, view_error};

use memory::{BandMemory, BandRenderers, default_band_rows, default_deep_band_rows};
use png::{EncoderStopped, encode_png};
use verify::verify_band;
use view::{deep_location, float_job};

/// Peak resident memory of this process (`VmHWM` in /proc/self/status), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The image a `mandelbrot` run renders: an f32/f64 job or a perturbed one, both rendered
/// band by band through [`BandJob`].
enum Work {
    Float {
        job: RenderJob<f64>,
        precision: Precision,
    },
    Deep(Box<super::deep::DeepPrepared>),
}

impl Work {
    fn band_job(&self) -> BandJob<'_> {
        match self {
            Self::Float { job, precision } => BandJob::Float(FloatJob {
                job,
                precision: *precision,
            }),
            Self::Deep(d) => BandJob::Perturbed(&d.job),
        }
    }
}

pub fn run(args: &MandelbrotArgs) -> Result<()> {
    let (width, height) = (args.width, args.height);
    let cli_max_iter = args.max_iter.unwrap_or(super::DEFAULT_MAX_ITER);
    check_size_and_iter(width, height, cli_max_iter)?;
    let style = args.look.style();
    // Every value is checked before the output file is created; a deep view's reference
    // orbit is computed after (it can take long, and a signal stops it).
    let location = deep_location(args)?;
    let mut float = None;
    let mut deep = None;
    match &location {
        Some(loc) => {
            let view = super::deep::view(loc, width, height)?;
            deep = Some((view, super::deep::max_iter(args.max_iter, loc)));
        }
        None => float = Some(float_job(args, &style)?),
    }
    let samples_per_px = u64::from(style.supersample).pow(2);
    let output = OutputFile::create(&args.output)?;
    super::catch_signals();

    let pool = open_pool(args.backend, args.gpus)?;
    let verify = args.verify && pool.is_some();
    let memory = BandMemory {
        perturbed_samples: deep.is_some().then_some(samples_per_px),
        renderers: match &pool {
            None => BandRenderers::Cpu,
            Some(pool) => BandRenderers::Gpus {
                count: pool.len() as u64,
                reorder_window: pool.reorder_window() as u64,
            },
        },
        verify,
    };
    if let Some(rows) = args.band_rows {
        memory.check_rows(rows, width, height, deep.is_some())?;
    }
    let start = Instant::now();
    let work = match (float, deep) {
        (Some((job, precision)), _) => Work::Float { job, precision },
        (None, Some((view, max_iter))) => {
            let mut d = super::deep::prepare(&view, max_iter, &style, args.look.palette, None)?;
            if let Some(loc) = &location {
                d.scale = loc.scale.text();
            }
            Work::Deep(Box::new(d))
        }
        (None, None) => unreachable!("a view is either deep or not"),
    };
    let band_job = work.band_job();
    let gpus = pool.as_ref().map_or(1, GpuPool::len);
    let rows = args
        .band_rows
        .unwrap_or_else(|| {
            let default = match &work {
                Work::Float { job, .. } => default_band_rows(job, gpus),
                Work::Deep(d) => default_deep_band_rows(&d.job, gpus),
            };
            default.min(memory.max_rows(width))
        })
        .min(height);
    if args.verify && pool.is_none() {
        super::errln!(
            "note: --verify compares the GPU with the CPU; rendering on the CPU, nothing to compare"
        );
    }

    let bands: Vec<Band> = Band::split(height, rows).collect();
    // In pixels: the GPU path counts finished bands; the CPU path its finished pixels (of a
    // deep image, samples), within rows.
    let pixels = u64::from(width) * u64::from(height);
    let progress = match &pool {
        Some(_) => super::Progress::new(pixels, "pixels"),
        None => super::Progress::watch(
            pixels,
            "pixels",
            &super::CONTROL.samples_done,
            band_job.buffer_px_per_px() as u64,
        ),
    };
    let count_bands = pool.is_some();
    let mut kernel = Duration::ZERO;
    let mut verify_time = Duration::ZERO;
    let mut report = None;
    let encode = std::thread::scope(|scope| -> Result<Duration> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
        let file = output
            .file()
            .try_clone()
            .context("opening the output file")?;
        let level = args.png_compression;
        let encoder = scope.spawn(move || encode_png(file, width, height, level, rx));
        // Each rendered band, in order: check it against the CPU, hand it to the encoder.
        let mut sink = |b: BandImage| -> Result<()> {
            check_interrupt()?;
            kernel += b.kernel;
            if verify {
                let t = Instant::now();
                verify_band(&band_job, &b)?;
                verify_time += t.elapsed();
            }
            tx.send(b.rgb).map_err(|_| EncoderStopped)?;
            if count_bands {
                progress.inc(u64::from(b.band.rows) * u64::from(width));
            }
            Ok(())
        };
        let rendered = match &pool {
            Some(pool) => match pool.render(band_job, &bands, verify, &mut sink) {
                Ok(r) => {
                    report = Some(r);
                    Ok(())
                }
                Err(PoolError::Sink(e)) => Err(e),
                Err(e) => Err(anyhow::Error::new(e)),
            },
            None => bands.iter().try_for_each(|&band| {
                match band_job.render_cpu_until(band, false, &super::CONTROL) {
                    Some(b) => sink(b),
                    None => check_interrupt(),
                }
            }),
        };
        drop(tx);
        let encoded = encoder.join().expect("the PNG encoder thread panicked");
        match rendered {
            // The encoder failed first: its error says why.
            Err(e) if e.is::<EncoderStopped>() => encoded,
            Err(e) => Err(e),
            Ok(()) => encoded,
        }
    });
    drop(progress);
    let encode = encode.with_context(|| format!("writing `{}`", args.output.display()))?;
    check_interrupt()?;
    output.persist()?;

    let what = match &work {
        Work::Float { job, precision } => format!(
            "{width}x{height}, max_iter {}, {}",
            job.max_iter,
            precision.name()
        ),
        Work::Deep(d) => format!(
            "deep zoom {width}x{height}, max_iter {}, {}",
            d.job.job.max_iter,
            d.summary()
        ),
    };
    let bands_note = if bands.len() > 1 {
        format!(", {} bands of {rows} rows", bands.len())
    } else {
        String::new()
    };
    match (&pool, &report) {
        (Some(pool), Some(report)) => {
            let names: Vec<&str> = pool.devices().iter().map(|(_, n)| n.as_str()).collect();
            let device = if pool.len() == 1 {
                format!("GPU {}", names[0])
            } else {
                format!("{} GPUs ({})", pool.len(), names.join(", "))
            };
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            outln!(
                "{device}: {what}{bands_note}: kernel {:.2} ms, render wall {:.0} ms",
                ms(kernel),
                ms(report.wall)
            );
            // Where the wall goes, per GPU: its setup (buffers, page-locked staging, kernels)
            // and its bands (launches, kernels, copies back); the rest is waiting.
            for share in &report.gpus {
                outln!(
                    "  GPU {}: {} bands ({} rows), kernel {:.2} ms, setup {:.1} ms, busy {:.1} ms",
                    share.ordinal,
                    share.bands,
                    share.rows,
                    ms(share.kernel),
                    ms(share.setup),
                    ms(share.busy)
                );
            }
        }
        _ => outln!(
            "CPU ({} threads): {what}{bands_note}: render {:.2} ms",
            rayon::current_num_threads(),
            kernel.as_secs_f64() * 1e3
        ),
    }
    if verify {
        outln!(
            "verify: CPU render ({:.0} ms) is identical (escape times, |z|² of perturbed \
             samples, and colours)",
            verify_time.as_secs_f64() * 1e3
        );
    }
    let peak = peak_rss_bytes().map_or_else(String::new, |b| {
        format!(", peak memory {:.0} MiB", b as f64 / f64::from(1 << 20))
    });
    outln!(
        "wrote {} (PNG encode {:.0} ms, end to end {:.0} ms{peak})",
        args.output.display(),
        encode.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
