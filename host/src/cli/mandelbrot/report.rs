//! The lines a `mandelbrot` run prints once the file is written: what was rendered and
//! where the time went (per GPU for a pool, the CPU's render time otherwise), the
//! `--verify` result, the file, and the encode and end-to-end times.

use super::{MandelbrotArgs, Work, peak_rss_bytes, stream::Tally};
use crate::cli::outln;
use anyhow::Result;
use host::mandelbrot::pool::GpuPool;
use std::time::{Duration, Instant};

/// What was rendered: `640x480, max_iter 1000, f64`, or for a deep view
/// `deep zoom 640x480, max_iter 1000, ` and the deep job's summary.
pub(super) fn describe(work: &Work, width: u32, height: u32) -> String {
    match work {
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
    }
}

/// Prints where `what` was rendered and how long it took: the GPUs' kernel and copy times
/// and the render's wall time, then each GPU's bands, kernel time, copies by direction
/// (`htod` up, `dtoh` down), setup and busy time (the rest is waiting); or the CPU's
/// threads and render time.
///
/// # Errors
/// As [`crate::cli::write_line`]: a closed standard output, or a failed write.
pub(super) fn print_render(what: &str, pool: Option<&GpuPool>, tally: &Tally) -> Result<()> {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    match (pool, &tally.report) {
        (Some(pool), Some(report)) => {
            let names: Vec<&str> = pool.devices().iter().map(|(_, n)| n.as_str()).collect();
            let device = if pool.len() == 1 {
                format!("GPU {}", names[0])
            } else {
                format!("{} GPUs ({})", pool.len(), names.join(", "))
            };
            outln!(
                "{device}: {what}: kernel {:.2} ms, copies {:.2} ms, render wall {:.1} ms",
                ms(tally.kernel),
                ms(tally.copies.total()),
                ms(report.wall)
            );
            // Where the wall goes, per GPU: its setup (buffers, page-locked staging, kernels)
            // and its bands (uploads, launches, kernels, copies back); the rest is waiting.
            // Buffers made beside a deep view's reference orbit are not in the wall, except
            // the time the render waited for them (in the wall).
            for share in &report.gpus {
                let prepared = share.prepared.map_or_else(String::new, |took| {
                    format!(
                        " (+ {:.1} ms prepared beside the reference orbit, {:.1} ms waited)",
                        ms(took),
                        ms(report.waited)
                    )
                });
                outln!(
                    "  GPU {}: {} bands ({} rows), kernel {:.2} ms, copies htod {:.2} ms + dtoh \
                     {:.2} ms, setup {:.1} ms{prepared}, busy {:.1} ms",
                    share.ordinal,
                    share.bands,
                    share.rows,
                    ms(share.kernel),
                    ms(share.copies.htod),
                    ms(share.copies.dtoh),
                    ms(share.setup),
                    ms(share.busy)
                );
            }
        }
        _ => outln!(
            "CPU ({} threads): {what}: render {:.2} ms",
            rayon::current_num_threads(),
            ms(tally.kernel)
        ),
    }
    Ok(())
}

/// Prints the `--verify` result (when the GPUs were checked), then the file written with
/// the encoder's time (`encode`), the time since `start` and the peak memory.
///
/// # Errors
/// As [`crate::cli::write_line`].
pub(super) fn print_written(
    args: &MandelbrotArgs,
    verify: bool,
    tally: &Tally,
    encode: Duration,
    start: Instant,
) -> Result<()> {
    if verify {
        outln!(
            "verify: CPU render ({:.0} ms) is identical (escape times, |z|² of perturbed \
             samples, and colours)",
            tally.verify_time.as_secs_f64() * 1e3
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
