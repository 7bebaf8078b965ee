//! A deep zoom onto a minibrot: finds a minibrot of size about `10^-EXP` near the Misiurewicz
//! point c = i (ball period, Newton's method in arbitrary precision), frames it at six times
//! its size, and renders it by perturbation on the GPU (on the CPU without one): the
//! reference orbit in `astro-float`, every pixel from the same `common::perturb` code on
//! either side. Prints the location, the time of each stage, and the iterations per second;
//! writes `deep-zoom-1e-EXP.png` into `$OUT` (or the current folder).
//!
//! `cargo run --release -p host --example 09-deep-zoom [-- EXP [WIDTH HEIGHT MAX_ITER]]`
//! (defaults: 400, and 1920 1080 100000 on a GPU, 320 180 20000 on the CPU).

use anyhow::{Context, Result, bail};
use common::{
    Palette,
    floatexp::FloatExp,
    palette::{Coloring, Shading},
};
use host::deep::{colorize, decimal, find_minibrot, near_i, render_job_cpu};
use host::gpu::Gpu;
use host::mandelbrot::deep::render;
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<u32> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .with_context(|| format!("`{a}`: give EXP [WIDTH HEIGHT MAX_ITER]"))
        })
        .collect::<Result<_>>()?;
    let exp = args.first().copied().unwrap_or(400);
    if !(10..=5000).contains(&exp) {
        bail!("EXP {exp}: give 10 to 5000 (a minibrot of size about 10^-EXP)");
    }
    let gpu = Gpu::new(0).ok();
    let (w, h, max_iter) = match (&args[..], &gpu) {
        ([_, w, h, m], _) => (*w, *h, *m),
        ([] | [_], Some(_)) => (1920, 1080, 100_000),
        ([] | [_], None) => (320, 180, 20_000),
        _ => bail!("give EXP [WIDTH HEIGHT MAX_ITER]"),
    };
    let t0 = Instant::now();
    // The disk to search: radius 10^-(EXP/2) around i + (1 + i)·radius/7; minibrots near i
    // are about the square of their distance to it.
    let half = exp / 2;
    let near = near_i(half, w, h)?;
    let radius = FloatExp::new(0.5, -((f64::from(half) * std::f64::consts::LOG2_10) as i32));
    let bits = 2 * near.precision_bits + 64;
    let m = find_minibrot(&near.center_re, &near.center_im, radius, bits, 1_000_000)
        .context("no minibrot found near i")?;
    let find = t0.elapsed();
    let scale = m.frame_scale();
    let view = m.view(w, h)?;
    // The nucleus is within 10^-(EXP/2) of i: print its offset from i.
    let off = host::deep::Minibrot {
        im: m.im.sub(
            &astro_float::BigFloat::from_u32(1, bits),
            bits,
            astro_float::RoundingMode::ToEven,
        ),
        ..m.clone()
    };
    let (re, im) = off.center_strings(24);
    println!(
        "minibrot of period {} and size {} at i + ({re} + {im} i) (leading digits; {} bits), found \
         in {:.0} ms",
        m.period,
        decimal(m.size),
        view.precision_bits,
        find.as_secs_f64() * 1e3
    );

    let coloring = Coloring {
        palette: Palette::Electric,
        shading: Shading::Smooth,
        cycle_iters: (m.period * 2).max(16),
        offset: 0.0,
    };
    let r = render(&view, max_iter, coloring.bailout_sqr::<f64>(), gpu.as_ref())?;
    let (counts, norms) = (&r.counts, &r.norms);
    let device = gpu
        .as_ref()
        .map_or_else(|| "CPU".to_owned(), |g| format!("GPU {}", g.name()));
    // The skipped share: counted on the CPU; the kernel reports only counts, so for the GPU a
    // CPU run of one sample row (the same code) gives it.
    let skipped = match r.skipped {
        Some(s) => s as f64 / counts.iter().map(|&n| f64::from(n)).sum::<f64>().max(1.0),
        None => {
            let sample = render_job_cpu(
                &common::perturb::DeepJob {
                    height_px: 1,
                    ..r.job
                },
                &r.orbit,
                &r.bla,
            );
            sample.iter().map(|p| f64::from(p.skipped)).sum::<f64>()
                / sample.iter().map(|p| f64::from(p.n)).sum::<f64>().max(1.0)
        }
    };
    let rgb = colorize(counts, norms, &coloring, max_iter);
    let path = std::env::var_os("OUT")
        .map_or_else(std::path::PathBuf::new, std::path::PathBuf::from)
        .join(format!("deep-zoom-1e-{exp}.png"));
    image::save_buffer(&path, &rgb, w, h, image::ExtendedColorType::Rgb8)?;
    let iterations: u64 = counts.iter().map(|&n| u64::from(n)).sum();
    let inside = counts.iter().filter(|&&n| n == max_iter).count();
    println!(
        "{device}: {w}x{h}, scale {scale}, max_iter {max_iter}: reference orbit {} steps in \
         {:.0} ms; BLA table {} entries in {:.0} ms; pixels in {:.0} ms ({:.2e} iterations, \
         {:.2e} per second, {:.1}% of them skipped by BLA (sampled on the CPU for the GPU); \
         {inside} pixels reached max_iter); end to end {:.0} ms; wrote {}",
        r.orbit.len() - 1,
        r.orbit_time.as_secs_f64() * 1e3,
        r.bla.len(),
        r.bla_time.as_secs_f64() * 1e3,
        r.pixels_time.as_secs_f64() * 1e3,
        iterations as f64,
        iterations as f64 / r.pixels_time.as_secs_f64(),
        100.0 * skipped,
        t0.elapsed().as_secs_f64() * 1e3,
        path.display()
    );
    Ok(())
}
