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
    Escape, Palette,
    floatexp::FloatExp,
    palette::{Coloring, Shading},
};
use host::deep::{
    BLA_EPS, DeepView, bla_table, decimal, find_minibrot, reference_orbit, render_gpu,
    render_job_cpu,
};
use host::gpu::Gpu;
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
    let near = DeepView::new(
        &format!("1.4285714285714285714e-{}", half + 1),
        &format!("1.{}14285714285714285714", "0".repeat(half as usize)),
        &format!("1e-{half}"),
        w,
        h,
    )?;
    let radius = FloatExp::new(0.5, -((f64::from(half) * std::f64::consts::LOG2_10) as i32));
    let bits = 2 * near.precision_bits + 64;
    let m = find_minibrot(&near.center_re, &near.center_im, radius, bits, 1_000_000)
        .context("no minibrot found near i")?;
    let find = t0.elapsed();
    let scale = decimal(m.size * FloatExp::from_f64(6.0));
    let view = DeepView::at(&m.re, &m.im, &scale, w, h)?;
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

    let t = Instant::now();
    let orbit = reference_orbit(
        &view.center_re,
        &view.center_im,
        view.precision_bits,
        max_iter,
    );
    let orbit_time = t.elapsed();
    let job = view.job(max_iter, f64::from(common::escape::SMOOTH_BAILOUT_SQR));
    let t = Instant::now();
    let bla = bla_table(&orbit, &job, BLA_EPS);
    let bla_time = t.elapsed();
    let t = Instant::now();
    let (counts, norms, skipped, device) = match &gpu {
        Some(g) => {
            let (c, n) = render_gpu(g, &job, &orbit, &bla, 32)?;
            // The GPU reports counts only; the skipped share comes from a CPU run of a
            // sample row (the same code).
            let sample = render_job_cpu(
                &common::perturb::DeepJob {
                    height_px: 1,
                    ..job
                },
                &orbit,
                &bla,
            );
            let frac = sample.iter().map(|p| f64::from(p.skipped)).sum::<f64>()
                / sample.iter().map(|p| f64::from(p.n)).sum::<f64>().max(1.0);
            (c, n, frac, format!("GPU {}", g.name()))
        }
        None => {
            let p = render_job_cpu(&job, &orbit, &bla);
            let frac = p.iter().map(|p| f64::from(p.skipped)).sum::<f64>()
                / p.iter().map(|p| f64::from(p.n)).sum::<f64>().max(1.0);
            (
                p.iter().map(|p| p.n).collect::<Vec<_>>(),
                p.iter().map(|p| p.norm_sqr as f32).collect::<Vec<_>>(),
                frac,
                "CPU".to_owned(),
            )
        }
    };
    let pixels_time = t.elapsed();
    let coloring = Coloring {
        palette: Palette::Electric,
        shading: Shading::Smooth,
        cycle_iters: (m.period * 2).max(16),
        offset: 0.0,
    };
    let mut rgb = Vec::with_capacity(counts.len() * 3);
    for (&n, &norm_sqr) in counts.iter().zip(&norms) {
        rgb.extend_from_slice(&coloring.color(Escape { n, norm_sqr }, max_iter));
    }
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
        orbit.len() - 1,
        orbit_time.as_secs_f64() * 1e3,
        bla.len(),
        bla_time.as_secs_f64() * 1e3,
        pixels_time.as_secs_f64() * 1e3,
        iterations as f64,
        iterations as f64 / pixels_time.as_secs_f64(),
        100.0 * skipped,
        t0.elapsed().as_secs_f64() * 1e3,
        path.display()
    );
    Ok(())
}
