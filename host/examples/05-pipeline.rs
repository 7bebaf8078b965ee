//! An asynchronous pipeline with the `cust` runtime: `y = q·x` (STREAM scale) over 2 GiB of
//! `f32` in pinned host memory, in 32 chunks of 64 MiB, each chunk copied to the GPU,
//! scaled and copied back. The GPU holds only the chunks in flight, never the whole array.
//! - Serial: one stream, chunk after chunk (each copy waits for the previous step).
//! - Overlapped: 4 streams, chunk `i` on stream `i mod 4` with its own device buffers, so
//!   one chunk's upload, another's kernel and a third's download run at once (the GPU has
//!   separate copy engines for each direction). Completion is awaited as Rust futures
//!   (`Stream::synchronize_async`, joined on one thread by `futures`' executor).
//!
//! Prints both times and the speed-up, the copy engines' limits measured in the same run
//! (uploads alone, downloads alone, both directions at once: the ceiling of any schedule),
//! and a per-chunk timeline from CUDA events (start and
//! end of each upload, kernel and download, in ms from the first upload), which it also draws
//! as `pipeline-timeline.svg` (plotters) in `$OUT` or the current folder; checks every
//! element against the CPU.
//!
//! `cargo run --release -p host --example 05-pipeline` (needs a CUDA GPU).

use anyhow::{Result, ensure};
use cust::prelude::*;
use host::launch::for_num_elems;
use host::timing::Repeat;
use kernels::vector::scale_f32;
use std::time::Instant;

const CHUNK: usize = 1 << 24; // 64 MiB of f32
const CHUNKS: usize = 32;
const STREAMS: usize = 4;
const Q: f32 = 0.75;

/// Events around one chunk's three steps.
struct ChunkEvents {
    stream: usize,
    /// Before the upload, after it, after the kernel, after the download.
    marks: Vec<Event>,
}

fn main() -> Result<()> {
    let ctx = cust::quick_init()?;
    let module = Module::from_image(&host::KERNELS)?;
    let n = CHUNK * CHUNKS;
    let x: Vec<f32> = (0..n).map(|i| (i % 4093) as f32 - 2000.0).collect();
    let x_pinned = LockedBuffer::from_slice(&x)?;
    let mut y_pinned = LockedBuffer::new(&0f32, n)?;
    let cfg = for_num_elems(CHUNK, 256)?;
    let streams: Vec<Stream> = (0..STREAMS)
        .map(|_| Stream::new(StreamFlags::NON_BLOCKING, None))
        .collect::<CudaResult<_>>()?;
    // Device buffers for the chunks in flight: one input and one output per stream.
    let mut bufs: Vec<(DeviceBuffer<f32>, DeviceBuffer<f32>)> = streams
        .iter()
        .map(|s| {
            Ok((
                DeviceBuffer::zeroed_async(CHUNK, s)?,
                DeviceBuffer::zeroed_async(CHUNK, s)?,
            ))
        })
        .collect::<CudaResult<_>>()?;

    // Queues every chunk, chunk i on stream i mod `lanes`; returns the events.
    let mut run = |lanes: usize,
                   y_pinned: &mut LockedBuffer<f32>|
     -> Result<(f64, Vec<ChunkEvents>, Event)> {
        let origin = Event::new(EventFlags::DEFAULT)?;
        origin.record(&streams[0])?;
        for s in &streams[1..lanes] {
            s.wait_event(&origin)?;
        }
        let t = Instant::now();
        let mut events = Vec::new();
        let x_all = x_pinned.try_as_slice()?;
        let y_all = y_pinned.try_as_mut_slice()?;
        for (i, (x_chunk, y_chunk)) in x_all.chunks(CHUNK).zip(y_all.chunks_mut(CHUNK)).enumerate()
        {
            let lane = i % lanes;
            let stream = &streams[lane];
            let (d_in, d_out) = &mut bufs[lane];
            let marks = (0..4)
                .map(|_| Event::new(EventFlags::DEFAULT))
                .collect::<CudaResult<Vec<_>>>()?;
            marks[0].record(stream)?;
            // Pinned memory: the copies are truly asynchronous.
            d_in.async_copy_from(x_chunk, stream)?;
            marks[1].record(stream)?;
            scale_f32.launch(&module, stream, cfg, (&*d_in, Q, &mut *d_out))?;
            marks[2].record(stream)?;
            d_out.async_copy_to(y_chunk, stream)?;
            marks[3].record(stream)?;
            events.push(ChunkEvents {
                stream: lane,
                marks,
            });
        }
        // Await every stream without blocking a thread per stream.
        let waits = streams[..lanes]
            .iter()
            .map(Stream::synchronize_async)
            .collect::<CudaResult<Vec<_>>>()?;
        for r in futures::executor::block_on(futures::future::join_all(waits)) {
            r?;
        }
        Ok((t.elapsed().as_secs_f64() * 1e3, events, origin))
    };

    let mut report = Vec::new();
    for lanes in [1, STREAMS, 1, STREAMS] {
        y_pinned.try_as_mut_slice()?.fill(0.0);
        let (ms, events, origin) = run(lanes, &mut y_pinned)?;
        let y = y_pinned.try_as_slice()?;
        ensure!(
            y.iter()
                .zip(&x)
                .all(|(y, x)| y.to_bits() == (Q * x).to_bits()),
            "{lanes} stream(s): y differs from q·x on the CPU"
        );
        report.push((lanes, ms, events, origin));
    }
    // The second run of each (the first pays for first-touch costs).
    let serial = report[2].1;
    let overlapped = report[3].1;

    // The copy engines' limits in this run: all uploads alone, all downloads alone, and both
    // at once on two streams (no kernel). No schedule of the pipeline can beat the last.
    let mut copies = |up: bool, down: bool| -> Result<f64> {
        let best_of_two = Repeat::new(0, 2).wall(|| {
            let x_all = x_pinned.try_as_slice()?;
            let y_all = y_pinned.try_as_mut_slice()?;
            let [(d_up, _), (d_down, _), ..] = &mut bufs[..] else {
                unreachable!("STREAMS >= 2")
            };
            for (x_chunk, y_chunk) in x_all.chunks(CHUNK).zip(y_all.chunks_mut(CHUNK)) {
                if up {
                    d_up.async_copy_from(x_chunk, &streams[0])?;
                }
                if down {
                    d_down.async_copy_to(y_chunk, &streams[1])?;
                }
            }
            streams[0].synchronize()?;
            streams[1].synchronize()?;
            Ok::<_, anyhow::Error>(())
        })?;
        Ok(best_of_two.min_ms)
    };
    let up_only = copies(true, false)?;
    let down_only = copies(false, true)?;
    let both = copies(true, true)?;
    let gib = (2 * n * 4) as f64 / f64::from(1u32 << 30);
    println!(
        "{} on {}: {CHUNKS} chunks of {} MiB ({:.0} GiB each way), pinned host memory",
        scale_f32.name(),
        ctx.name(),
        (CHUNK * 4) >> 20,
        gib / 2.0
    );
    println!(
        "  serial, 1 stream:       {serial:8.1} ms  ({:.1} GB/s of copies)",
        gib * 1.073_741_824 / (serial / 1e3)
    );
    println!(
        "  overlapped, {STREAMS} streams:  {overlapped:8.1} ms  ({:.1} GB/s of copies)",
        gib * 1.073_741_824 / (overlapped / 1e3)
    );
    println!(
        "  speed-up {:.2}x; every element identical to the CPU",
        serial / overlapped
    );
    let rate = |ms: f64| gib / 2.0 * 1.073_741_824 / (ms / 1e3);
    println!(
        "  copy limits (best of 2, no kernel): uploads alone {up_only:.1} ms ({:.1} GB/s), \
         downloads alone {down_only:.1} ms ({:.1} GB/s), both directions at once {both:.1} ms",
        rate(up_only),
        rate(down_only)
    );
    println!(
        "  so no schedule can beat {both:.1} ms: the speed-up's ceiling is {:.2}x, and the \
         overlapped pipeline runs at {:.0}% of that limit",
        serial / both,
        100.0 * both / overlapped
    );
    let svg = std::env::var_os("OUT")
        .map_or_else(std::path::PathBuf::new, std::path::PathBuf::from)
        .join("pipeline-timeline.svg");
    draw_timeline(&svg, &report[2], &report[3], serial / overlapped)?;
    println!("  timeline drawn in {}", svg.display());
    println!(
        "  timeline of the overlapped run (ms from the first upload: upload, kernel, download):"
    );
    let (_, _, events, origin) = &report[3];
    for (i, e) in events.iter().enumerate() {
        let at = |k: usize| e.marks[k].elapsed_time_f32(origin).map(f64::from);
        println!(
            "    chunk {i:2} stream {}: up {:7.2}-{:7.2}  kernel {:7.2}-{:7.2}  down {:7.2}-{:7.2}",
            e.stream,
            at(0)?,
            at(1)?,
            at(1)?,
            at(2)?,
            at(2)?,
            at(3)?
        );
    }
    Ok(())
}

/// Draws both runs' chunks as bars (upload, kernel, download) on one time axis: the serial
/// run on the top row, the overlapped run's streams below.
fn draw_timeline(
    path: &std::path::Path,
    serial: &(usize, f64, Vec<ChunkEvents>, Event),
    overlapped: &(usize, f64, Vec<ChunkEvents>, Event),
    speedup: f64,
) -> Result<()> {
    use plotters::prelude::*;
    let rows = STREAMS + 1;
    let mut bars = Vec::new(); // (row, step, start ms, end ms)
    for (run, top) in [(serial, true), (overlapped, false)] {
        for e in &run.2 {
            let row = if top { STREAMS } else { e.stream };
            for step in 0..3 {
                let start = f64::from(e.marks[step].elapsed_time_f32(&run.3)?);
                let end = f64::from(e.marks[step + 1].elapsed_time_f32(&run.3)?);
                bars.push((row, step, start, end));
            }
        }
    }
    let end = bars.iter().map(|b| b.3).fold(0.0, f64::max) * 1.02;
    let root = SVGBackend::new(path, (1200, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{CHUNKS} chunks of {} MiB: 1 stream vs {STREAMS} streams ({speedup:.2}x)",
                (CHUNK * 4) >> 20
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(110)
        .build_cartesian_2d(0f64..end, 0f64..rows as f64)?;
    chart
        .configure_mesh()
        .x_desc("ms from the first upload (CUDA events)")
        .y_labels(rows * 2 + 1)
        .y_label_formatter(&|y| {
            let row = y.floor() as usize;
            if (y - y.floor() - 0.5).abs() > 0.01 {
                String::new()
            } else if row == STREAMS {
                "serial, 1 stream".into()
            } else {
                format!("stream {row}")
            }
        })
        .disable_y_mesh()
        .draw()?;
    let colors = [BLUE, GREEN, RGBColor(230, 120, 0)];
    for (step, name) in ["upload", "kernel", "download"].into_iter().enumerate() {
        let color = colors[step];
        chart
            .draw_series(bars.iter().filter(|b| b.1 == step).map(|&(row, _, s, e)| {
                let y = row as f64;
                Rectangle::new([(s, y + 0.15), (e, y + 0.85)], color.filled())
            }))?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE)
        .draw()?;
    root.present()?;
    Ok(())
}
