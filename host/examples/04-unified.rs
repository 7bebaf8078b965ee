//! Unified (managed) memory with the `cust` runtime, against explicit copies, on one
//! workload: `y = q·x` (STREAM scale) over 2^27 `f32` (512 MiB each way), from "x is on the
//! host" to "y is readable on the host":
//! - explicit copies from and to pageable `Vec`s;
//! - explicit asynchronous copies from and to pinned `LockedBuffer`s;
//! - managed memory, pages migrated on demand (the host writes `x` in place, the kernel
//!   faults it in, the host reads `y` in place);
//! - managed memory with prefetches (to the device before the kernel, `y` back to the host
//!   after it).
//!
//! Prints the median wall time of 5 runs of each and checks every `y` against the CPU.
//! Managed buffers are refused if they exceed the device's free memory.
//!
//! `cargo run --release -p host --example 04-unified` (needs a CUDA GPU).

use anyhow::{Result, ensure};
use cust::{
    memory::{AsyncCopyDestination, CopyDestination},
    prelude::*,
};
use host::launch::for_num_elems;
use host::timing::{Repeat, Stats};
use kernels::vector::scale_f32;
use std::time::Instant;

const N: usize = 1 << 27;
const REPS: usize = 5;
const Q: f32 = 1.5;

/// `REPS` runs of `once` (no warm-up), each timing itself in ms: their median, ms.
fn time_reps(once: impl FnMut() -> Result<f64>) -> Result<f64> {
    let ms = Repeat::new(0, REPS as u32).run(once)?;
    Ok(Stats::from_samples(ms).median_ms)
}

fn check(y: &[f32], x: &[f32], how: &str) -> Result<()> {
    ensure!(
        y.iter()
            .zip(x)
            .all(|(y, x)| y.to_bits() == (Q * x).to_bits()),
        "{how}: y differs from q·x on the CPU"
    );
    Ok(())
}

fn main() -> Result<()> {
    let ctx = cust::quick_init()?;
    let module = Module::from_image(&host::KERNELS)?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let cfg = for_num_elems(N, 256)?;
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25 - 100.0).collect();
    let mut results = Vec::new();

    // Explicit copies, pageable host memory.
    let mut x_dev = DeviceBuffer::<f32>::zeroed(N)?;
    let mut y_dev = DeviceBuffer::<f32>::zeroed(N)?;
    let mut y = vec![0f32; N];
    let ms = time_reps(|| {
        let t = Instant::now();
        x_dev.copy_from(&x[..])?;
        scale_f32.launch(&module, &stream, cfg, (&x_dev, Q, &mut y_dev))?;
        stream.synchronize()?;
        y_dev.copy_to(&mut y[..])?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    })?;
    check(&y, &x, "pageable copies")?;
    results.push(("explicit copies, pageable Vec", ms));

    // ANCHOR: pinned
    // Explicit asynchronous copies, pinned host memory.
    let x_pinned = LockedBuffer::from_slice(&x)?;
    let mut y_pinned = LockedBuffer::new(&0f32, N)?;
    let ms = time_reps(|| {
        let t = Instant::now();
        x_dev.async_copy_from(&x_pinned, &stream)?;
        scale_f32.launch(&module, &stream, cfg, (&x_dev, Q, &mut y_dev))?;
        y_dev.async_copy_to(&mut y_pinned, &stream)?;
        let _ = y_pinned.try_as_slice()?; // waits for the copy
        Ok(t.elapsed().as_secs_f64() * 1e3)
    })?;
    check(y_pinned.try_as_slice()?, &x, "pinned copies")?;
    results.push(("explicit copies, pinned LockedBuffer", ms));
    // ANCHOR_END: pinned
    drop((x_dev, y_dev, x_pinned, y_pinned));

    // ANCHOR: unified
    // Managed memory: no copies in the program.
    for prefetch in [false, true] {
        let mut x_um = UnifiedBuffer::new(&0f32, N)?;
        let mut y_um = UnifiedBuffer::new(&0f32, N)?;
        let ms = time_reps(|| {
            // "x is on the host": written in place, so its pages start on the host.
            x_um.as_mut_slice()?.copy_from_slice(&x);
            let t = Instant::now();
            if prefetch {
                x_um.prefetch_to_device()?;
                y_um.prefetch_to_device()?;
            }
            scale_f32.launch(&module, &stream, cfg, (&x_um, Q, &mut y_um))?;
            if prefetch {
                y_um.prefetch_to_host(&stream)?;
            }
            stream.synchronize()?;
            // Touch every page of y on the host, as a reader would.
            let sum: f64 = y_um
                .as_slice()?
                .iter()
                .step_by(1024)
                .map(|&v| f64::from(v))
                .sum();
            std::hint::black_box(sum);
            Ok(t.elapsed().as_secs_f64() * 1e3)
        })?;
        check(y_um.as_slice()?, &x, "managed memory")?;
        results.push((
            if prefetch {
                "managed memory, prefetched"
            } else {
                "managed memory, on demand"
            },
            ms,
        ));
    }
    // ANCHOR_END: unified

    println!(
        "{} on {}: y = q·x over {N} f32 ({} MiB each way), host to host, median of {REPS}",
        scale_f32.name(),
        ctx.name(),
        (N * 4) >> 20
    );
    let best_explicit = results[..2].iter().map(|r| r.1).fold(f64::MAX, f64::min);
    for (what, ms) in &results {
        println!(
            "  {what:<38} {ms:>8.1} ms  (speed {:.2}x the best explicit copies)",
            best_explicit / ms
        );
    }
    println!("  every y identical to the CPU");
    Ok(())
}
