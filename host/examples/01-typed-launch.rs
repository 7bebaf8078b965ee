//! Launch a safe kernel through its typed handle with the `cust` runtime:
//! STREAM triad, `a[i] = b[i] + q · c[i]`.
//!
//! `cargo run --release -p host --example 01-typed-launch` (needs a CUDA GPU).

use anyhow::{Result, ensure};
use cust::prelude::*;
use host::launch::for_num_elems;
use kernels::vector::triad_f32;

fn main() -> Result<()> {
    let ctx = cust::quick_init()?;
    // ferrocuda's kernels, as cuda_builder's manifest describes them (cubin or PTX).
    let module = Module::from_image(&host::KERNELS)?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;

    let n = 1 << 20;
    let b: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let c: Vec<f32> = (0..n).map(|i| (i % 97) as f32 - 48.0).collect();
    let b_dev = DeviceBuffer::from_slice(&b)?;
    let c_dev = DeviceBuffer::from_slice(&c)?;
    let mut a_dev = DeviceBuffer::<f32>::zeroed(n)?;

    // The handle's type lists the kernel's parameters; these arguments must match them:
    // `&[f32]` ← `&DeviceBuffer<f32>`, `f32` ← `f32`, `OutSlice<f32>` ← `&mut DeviceBuffer<f32>`.
    let q = 3.0f32;
    triad_f32.launch(
        &module,
        &stream,
        for_num_elems(n, 256)?,
        (&b_dev, &c_dev, q, &mut a_dev),
    )?;
    stream.synchronize()?;

    let a = a_dev.as_host_vec()?;
    // Rust does not contract `b + q * c` into an FMA, on the CPU or the GPU: same bits.
    ensure!(
        a.iter()
            .zip(b.iter().zip(&c))
            .all(|(a, (b, c))| a.to_bits() == (b + q * c).to_bits()),
        "GPU result differs from the CPU"
    );
    println!(
        "{} on {} ({}): {n} elements, identical to the CPU",
        triad_f32.name(),
        ctx.name(),
        module.source()
    );
    Ok(())
}
