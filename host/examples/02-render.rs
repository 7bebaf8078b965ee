//! Render a Mandelbrot view with the library API, on the GPU when there is one, and check it
//! against the CPU render.
//!
//! `cargo run --release -p host --example 02-render`

use anyhow::Result;
use common::{Complex, Palette, Viewport};
use host::{
    Gpu,
    mandelbrot::{Precision, RenderParams, render_cpu},
};

fn main() -> Result<()> {
    let view = Viewport::from_center_scale(640, 480, Complex::new(-0.7435, 0.1314), 0.01)?;
    let params = RenderParams {
        view,
        max_iter: 1000,
        precision: Precision::for_view(&view).0,
        palette: Palette::Fire,
    };
    let cpu = render_cpu(&params);
    match Gpu::new(0) {
        Ok(gpu) => {
            let (image, timings) = host::mandelbrot::render_mandelbrot(&gpu, &params)?;
            println!(
                "{}: kernel {:.3} ms; identical to the CPU: {}",
                gpu.name(),
                timings.kernel.as_secs_f64() * 1e3,
                image == cpu
            );
        }
        Err(e) => println!("no GPU ({e}); rendered on the CPU only"),
    }
    Ok(())
}
