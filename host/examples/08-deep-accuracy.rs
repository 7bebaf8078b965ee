//! Deep-zoom accuracy: escape times by perturbation (`common::perturb`, reference orbit in
//! arbitrary precision, `FloatExp` differences with rebasing) against iterating every pixel
//! directly in arbitrary precision, at scales 1e-20, 1e-50 and 1e-300 around the Misiurewicz
//! point c = i (where the set has detail at every depth). CPU only; prints a table.
//!
//! `cargo run --release -p host --example 08-deep-accuracy [-- WIDTH HEIGHT MAX_ITER]`

use anyhow::{Context, Result, ensure};
use host::deep::{DeepView, reference_orbit, render_direct, render_perturbed};
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
        [] => (48, 36, 20_000),
        [w, h, m] => (w, h, m),
        _ => anyhow::bail!("give WIDTH HEIGHT MAX_ITER, or nothing for 48 36 20000"),
    };
    println!(
        "{w}x{h} pixels, max_iter {max_iter}, centre i + 1/7·scale·(1 + i) (off the symmetry), \
         {} CPU threads",
        rayon::current_num_threads()
    );
    println!(
        "{:>8} {:>6} {:>10} {:>10} {:>10} {:>14} {:>8} {:>12}",
        "scale", "bits", "orbit ms", "perturb ms", "direct ms", "identical", "rebases", "counts"
    );
    let mut worst: f64 = 1.0;
    for exp in [20u32, 50, 300] {
        let scale = format!("1e-{exp}");
        // Offsets of a seventh of the scale keep the image off the exact symmetry of c = i.
        let off = format!("1.4285714285714285714e-{}", exp + 1);
        let v = DeepView::new(
            &off,
            &format!(
                "1.{}",
                "0".repeat(exp as usize + 1) + "14285714285714285714"
            ),
            &scale,
            w,
            h,
        )?;
        let t = Instant::now();
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let orbit_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let perturbed = render_perturbed(&v, &orbit, max_iter);
        let perturb_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let direct = render_direct(&v, max_iter);
        let direct_ms = t.elapsed().as_secs_f64() * 1e3;
        let same = perturbed
            .iter()
            .zip(&direct)
            .filter(|(p, d)| p.n == **d)
            .count();
        let rebases: u64 = perturbed.iter().map(|p| u64::from(p.rebases)).sum();
        let (lo, hi) = (
            direct.iter().min().copied().unwrap_or(0),
            direct.iter().max().copied().unwrap_or(0),
        );
        let share = same as f64 / direct.len() as f64;
        worst = worst.min(share);
        println!(
            "{scale:>8} {:>6} {orbit_ms:>10.1} {perturb_ms:>10.1} {direct_ms:>10.0} {:>7}/{:<6} {rebases:>8} {lo:>5}-{hi}",
            v.precision_bits,
            same,
            direct.len(),
        );
        for (i, (p, d)) in perturbed.iter().zip(&direct).enumerate() {
            if p.n != *d {
                println!(
                    "    pixel ({}, {}): perturbation {}, direct {d}",
                    i as u32 % w,
                    i as u32 / w,
                    p.n
                );
            }
        }
    }
    ensure!(
        worst >= 0.999,
        "fewer than 99.9% of pixels identical at some scale"
    );
    println!("every scale: at least 99.9% of escape times identical to the direct iteration");
    Ok(())
}
