//! Deep-zoom accuracy: escape times by perturbation (`common::perturb`: reference orbit in
//! arbitrary precision, `FloatExp` differences with rebasing), without and with bilinear
//! approximation (`common::bla`, relative accuracy 2^-40), against iterating every pixel
//! directly in arbitrary precision, at scales 1e-20, 1e-50, 1e-300 and 1e-400 (beyond `f64`'s
//! range: the differences start in `FloatExp`), in two kinds of view:
//! - **spiral**: around the Misiurewicz point c = i (offset a seventh of the scale), where the
//!   reference orbit escapes early and every pixel rebases;
//! - **minibrot**: centred on a minibrot found near c = i (ball period, then Newton's method)
//!   whose size is about the scale, so the reference orbit is periodic and many pixels never
//!   escape.
//!
//! The default size is odd, so the middle row and column have `δc` with a zero part.
//! CPU only; prints a table and every differing pixel. A minibrot view iterates at least 50
//! times its period (pixels around a minibrot escape after many multiples of it).
//!
//! `cargo run --release -p host --example 08-deep-accuracy [-- WIDTH HEIGHT MAX_ITER]`

use anyhow::{Context, Result, bail, ensure};
use common::floatexp::FloatExp;
use host::deep::{
    BLA_EPS, bla_table, find_minibrot, near_i, reference_orbit, render_direct, render_job_cpu,
    render_perturbed,
};
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<u32> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .with_context(|| format!("`{a}`: give WIDTH HEIGHT MAX_ITER"))
        })
        .collect::<Result<_>>()?;
    let (w, h, max_iter) = match args[..] {
        [] => (49, 37, 3000),
        [w, h, m] => (w, h, m),
        _ => bail!("give WIDTH HEIGHT MAX_ITER, or nothing for 49 37 3000"),
    };
    println!(
        "{w}x{h} pixels, max_iter {max_iter}, {} CPU threads",
        rayon::current_num_threads()
    );
    println!(
        "{:>9} {:>9} {:>6} {:>7} {:>8} {:>10} {:>10} {:>13} {:>8} {:>7} {:>13} {:>8} {:>11}",
        "scale",
        "view",
        "bits",
        "period",
        "max_iter",
        "perturb ms",
        "direct ms",
        "identical",
        "rebases",
        "BLA ms",
        "BLA identical",
        "skipped",
        "counts"
    );
    let mut worst: f64 = 1.0;
    for exp in [20u32, 50, 300, 400] {
        // Spiral: i + (1 + i)·scale/7.
        let spiral = near_i(exp, w, h)?;
        // Minibrot: near the spiral's centre, radius 10^-(exp/2) gives a size near 10^-exp.
        let bits = spiral.precision_bits + 64;
        let radius = FloatExp::new(
            0.5,
            -((exp as f64 / 2.0 * std::f64::consts::LOG2_10) as i32),
        );
        let m = find_minibrot(&spiral.center_re, &spiral.center_im, radius, bits, 100_000)
            .context("no minibrot found")?;
        let scale = m.frame_scale();
        let mini = m.view(w, h)?;
        for (kind, v, period) in [
            ("spiral", &spiral, None),
            ("minibrot", &mini, Some(m.period)),
        ] {
            // Near a minibrot, outside pixels escape after many multiples of its period.
            let max_iter = period.map_or(max_iter, |p| max_iter.max(50 * p));
            let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
            let t = Instant::now();
            let perturbed = render_perturbed(v, &orbit, max_iter);
            let perturb_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let direct = render_direct(v, max_iter);
            let direct_ms = t.elapsed().as_secs_f64() * 1e3;
            let same = perturbed
                .iter()
                .zip(&direct)
                .filter(|(p, d)| p.n == **d)
                .count();
            let rebases: u64 = perturbed.iter().map(|p| u64::from(p.rebases)).sum();
            let job = v.job(max_iter, 4.0);
            let table = bla_table(&orbit, &job, BLA_EPS);
            let t = Instant::now();
            let with_bla = render_job_cpu(&job, &orbit, &table);
            let bla_ms = t.elapsed().as_secs_f64() * 1e3;
            let same_bla = with_bla
                .iter()
                .zip(&direct)
                .filter(|(p, d)| p.n == **d)
                .count();
            let iters: u64 = with_bla.iter().map(|p| u64::from(p.n)).sum();
            let skipped: u64 = with_bla.iter().map(|p| u64::from(p.skipped)).sum();
            let lo = direct.iter().min().copied().unwrap_or(0);
            let hi = direct.iter().max().copied().unwrap_or(0);
            worst = worst
                .min(same as f64 / direct.len() as f64)
                .min(same_bla as f64 / direct.len() as f64);
            let label = if kind == "spiral" {
                format!("1e-{exp}")
            } else {
                scale.clone()
            };
            println!(
                "{label:>9} {kind:>9} {:>6} {:>7} {max_iter:>8} {perturb_ms:>10.1} {direct_ms:>10.0} {same:>6}/{:<6} {rebases:>8} {bla_ms:>7.1} {same_bla:>6}/{:<6} {:>7.1}% {lo:>5}-{hi}",
                v.precision_bits,
                period.map_or("-".into(), |p| p.to_string()),
                direct.len(),
                direct.len(),
                100.0 * skipped as f64 / iters.max(1) as f64,
            );
            for (i, ((p, b), d)) in perturbed.iter().zip(&with_bla).zip(&direct).enumerate() {
                if p.n != *d || b.n != *d {
                    let (x, y) = (i as u32 % w, i as u32 / w);
                    // c = i exactly: a Misiurewicz point, whose orbit (0, i, −1 + i, −i,
                    // −1 + i, ...) never escapes but is repelling, so any rounding grows until
                    // it escapes, at a time that depends on the precision.
                    let (re, im) = v.pixel(&v.spacing(), x, y);
                    let one = astro_float::BigFloat::from_u32(1, 64);
                    let why = if re.is_zero() && im.cmp(&one) == Some(0) {
                        " (c = i exactly: it never escapes, and each precision's rounding \
                         makes it escape at another time)"
                    } else {
                        ""
                    };
                    println!(
                        "    pixel ({x}, {y}): perturbation {}, with BLA {}, direct {d}{why}",
                        p.n, b.n
                    );
                }
            }
        }
    }
    ensure!(
        worst >= 0.999,
        "fewer than 99.9% of pixels identical in some view"
    );
    println!("every view: at least 99.9% of escape times identical to the direct iteration");
    Ok(())
}
