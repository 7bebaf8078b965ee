//! The bilinear-approximation (BLA) table of a reference orbit, which lets pixels skip
//! many perturbation steps at once (`common::bla`).

use common::{
    Complex,
    bla::{self, Bla},
    floatexp::FloatExp,
    perturb::DeepJob,
};
use std::sync::atomic::{AtomicBool, Ordering};

/// Relative accuracy of the bilinear approximations: `2⁻⁴⁰`. Each skip's neglected `δz²`
/// terms are below `2⁻⁴⁰` of the step's linear part (see `common::bla`).
pub const BLA_EPS: f64 = 9.094_947_017_729_282e-13;

/// The bilinear-approximation table of `orbit` for `job`'s pixels (`|δc|` up to the image's
/// half-diagonal), relative accuracy `eps` ([`BLA_EPS`]): level 0 has one entry per
/// reference step `1 ..= L − 2`, each next level merges pairs (`common::bla`).
pub fn bla_table(orbit: &[Complex<f64>], job: &DeepJob, eps: f64) -> Vec<Bla> {
    bla_table_until(orbit, job, eps, &AtomicBool::new(false))
        .expect("not stopped: the flag is never set")
}

/// [`bla_table`] that gives up, returning `None`, once `stop` is set (checked every 65,536
/// entries: a few milliseconds).
pub fn bla_table_until(
    orbit: &[Complex<f64>],
    job: &DeepJob,
    eps: f64,
    stop: &AtomicBool,
) -> Option<Vec<Bla>> {
    const CHECK_EVERY: usize = 1 << 16;
    let n0 = bla::level0_len(orbit.len());
    if n0 == 0 {
        return Some(Vec::new());
    }
    let half_diag =
        (f64::from(job.width_px).powi(2) + f64::from(job.height_px).powi(2)).sqrt() / 2.0;
    let dc_max = job.spacing * FloatExp::from_f64(half_diag);
    // Exactly the entries of every level: the table is never reallocated (copied).
    let len = (0..32).map(|k| bla::level_len(n0, k) as usize).sum();
    let mut table: Vec<Bla> = Vec::with_capacity(len);
    for (m, z) in orbit.iter().enumerate().take(n0 as usize + 1).skip(1) {
        if m % CHECK_EVERY == 0 && stop.load(Ordering::Relaxed) {
            return None;
        }
        table.push(bla::single(z.re, z.im, eps, job.bailout_sqr));
    }
    let mut start = 0usize;
    let mut k = 0;
    while bla::level_len(n0, k + 1) > 0 {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        for j in 0..bla::level_len(n0, k + 1) as usize {
            if j % CHECK_EVERY == CHECK_EVERY - 1 && stop.load(Ordering::Relaxed) {
                return None;
            }
            let merged = bla::merge(table[start + 2 * j], table[start + 2 * j + 1], dc_max);
            table.push(merged);
        }
        start += bla::level_len(n0, k) as usize;
        k += 1;
    }
    Some(table)
}
