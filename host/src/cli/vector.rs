//! `ferrocuda vector-add`: add two f32 vectors on the GPU with the library's tuned `add` (the
//! kernel `ferrocuda bench` times), check against the CPU, and report its bandwidth against a
//! device-to-device copy and against the naive one-element-per-thread kernel.

use super::outln;
use anyhow::{Context, Result, bail};
use host::Gpu;

#[derive(clap::Args)]
pub struct VectorAddArgs {
    /// Number of elements (1 to 2^31).
    #[arg(long, default_value_t = 1 << 28, allow_negative_numbers = true, value_parser = super::parse_vector_len)]
    pub len: u64,
    /// Timed repetitions after one warm-up, 1 to 1000.
    #[arg(long, default_value_t = 20, allow_negative_numbers = true, value_parser = super::parse_reps)]
    pub reps: u32,
}

pub fn run(args: &VectorAddArgs) -> Result<()> {
    let gpu = Gpu::new(0).context("vector-add runs on the GPU")?;
    let n = usize::try_from(args.len)?;
    // Inputs with non-trivial bits (not zeros): a[i] = i mod 1024 / 8, b[i] = 1/3 · (i mod 7).
    let a: Vec<f32> = (0..n).map(|i| (i % 1024) as f32 / 8.0).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 / 3.0).collect();
    let run = host::bench::vector_add::vector_add(&gpu, &a, &b, args.reps)?;
    let expected = host::vector::add_cpu(&a, &b);
    let mismatches = expected
        .iter()
        .zip(&run.c)
        .filter(|(x, y)| x.to_bits() != y.to_bits())
        .count();
    if mismatches > 0 {
        bail!("GPU result differs from the CPU in {mismatches} of {n} elements");
    }
    let (add, naive, memcpy) = (
        run.add_bytes_per_s(&run.add),
        run.add_bytes_per_s(&run.naive),
        run.memcpy_bytes_per_s(),
    );
    outln!(
        "GPU {}: vector add f32, {n} elements, median of {} runs: add kernel {:.3} ms = {:.1} GB/s \
         ({:.3}x device-to-device copy: {:.3} ms = {:.1} GB/s; {:.2}x naive one-element-per-thread \
         kernel: {:.3} ms = {:.1} GB/s); result identical to the CPU",
        gpu.name(),
        args.reps,
        run.add.median_ms,
        add / 1e9,
        add / memcpy,
        run.memcpy.median_ms,
        memcpy / 1e9,
        add / naive,
        run.naive.median_ms,
        naive / 1e9,
    );
    Ok(())
}
