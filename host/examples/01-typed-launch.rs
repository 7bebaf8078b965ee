//! Launch a safe kernel through its typed handle: `out[i] = a · x[i] + b`.
//!
//! `cargo run --release -p host --example 01-typed-launch` (needs a CUDA GPU).

use anyhow::{Result, ensure};
use host::{
    Gpu,
    launch::{Launch, for_num_elems},
};
use kernels::launch_checks::scale_offset_f32;

fn main() -> Result<()> {
    let gpu = Gpu::new(0)?;
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let x_dev = gpu.stream().clone_htod(&x)?;
    let mut out = gpu.stream().alloc_zeros::<f32>(n)?;

    // The handle's type lists the kernel's parameters; these arguments must match them:
    // `&[f32]` ← `&CudaSlice<f32>`, `OutSlice<f32>` ← `&mut CudaSlice<f32>`, `f32` ← `f32`.
    scale_offset_f32.launch(
        &gpu,
        for_num_elems(n, 256)?,
        (&x_dev, &mut out, 2.0f32, 1.0f32),
    )?;
    gpu.synchronize()?;

    let out = gpu.stream().clone_dtoh(&out)?;
    ensure!(
        out.iter().zip(&x).all(|(o, x)| *o == 2.0 * x + 1.0),
        "mismatch"
    );
    println!(
        "{} on {}: {n} elements, identical to the CPU",
        scale_offset_f32.name(),
        gpu.name()
    );
    Ok(())
}
