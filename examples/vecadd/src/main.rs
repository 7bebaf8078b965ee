//! Adds two vectors on the GPU with cust's API, then checks every element against the CPU.
use cust::prelude::*;
use std::error::Error;

/// Elements per vector.
const NUMBERS_LEN: usize = 100_000;

static PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

fn main() -> Result<(), Box<dyn Error>> {
    // Inputs with varied exponents and signs (deterministic, so runs are comparable).
    let lhs: Vec<f32> = (0..NUMBERS_LEN).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
    let rhs: Vec<f32> = (0..NUMBERS_LEN).map(|i| (i as f32).sqrt() - 150.0).collect();

    // The first GPU's context; it must stay alive while the GPU is used.
    let _ctx = cust::quick_init()?;
    let module = Module::from_ptx(PTX, &[])?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;

    let lhs_gpu = lhs.as_slice().as_dbuf()?;
    let rhs_gpu = rhs.as_slice().as_dbuf()?;
    let mut out = vec![0.0f32; NUMBERS_LEN];
    let out_buf = out.as_slice().as_dbuf()?;

    // The occupancy calculator's block size for this kernel on this GPU.
    let vecadd = module.get_function("vecadd")?;
    let (_, block_size) = vecadd.suggested_launch_configuration(0, 0.into())?;
    let grid_size = (NUMBERS_LEN as u32).div_ceil(block_size);
    println!("using {grid_size} blocks and {block_size} threads per block");

    // SAFETY: `out_buf` holds NUMBERS_LEN floats, as many as `lhs_gpu` and `rhs_gpu`, and
    // nothing else uses it until the stream is synchronised below.
    unsafe {
        // Slices go as two arguments, pointer and length, as in Rust-CUDA.
        launch!(vecadd<<<grid_size, block_size, 0, stream>>>(
            lhs_gpu.as_device_ptr(),
            lhs_gpu.len(),
            rhs_gpu.as_device_ptr(),
            rhs_gpu.len(),
            out_buf.as_device_ptr(),
        ))?;
    }
    stream.synchronize()?;
    out_buf.copy_to(&mut out)?;
    println!("{} + {} = {}", lhs[0], rhs[0], out[0]);

    // IEEE addition is exact-rounded on both sides: every element must be bit-identical.
    let differing = (0..NUMBERS_LEN)
        .filter(|&i| out[i].to_bits() != (lhs[i] + rhs[i]).to_bits())
        .count();
    if differing != 0 {
        return Err(format!("{differing} of {NUMBERS_LEN} elements differ from the CPU").into());
    }
    println!("vecadd: {NUMBERS_LEN} elements, identical to the CPU");
    Ok(())
}
