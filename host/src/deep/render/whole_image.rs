//! The whole-image CPU helpers for small views: every pixel by perturbation
//! ([`render_job_cpu`], [`render_perturbed`]) and the colours of escape times
//! ([`colorize`]).

use crate::deep::view::DeepView;
use common::{
    Complex, Escape,
    bla::Bla,
    palette::Coloring,
    perturb::{DeepJob, Perturbed},
};
use rayon::prelude::*;

/// Escape times of every pixel (row-major) by perturbation from `orbit` (the reference
/// orbit of the view's centre), on all CPU cores.
pub fn render_perturbed(view: &DeepView, orbit: &[Complex<f64>], max_iter: u32) -> Vec<Perturbed> {
    render_job_cpu(&view.job(max_iter, 4.0), orbit, &[])
}

/// Every pixel of `job` (row-major) by perturbation from `orbit`, skipping iterations with
/// `bla` ([`bla_table`](crate::deep::bla_table); empty: none), on all CPU cores. For small images: it holds every
/// pixel (the CLI renders in bands, [`PerturbedJob`](super::PerturbedJob)).
pub fn render_job_cpu(job: &DeepJob, orbit: &[Complex<f64>], bla: &[Bla]) -> Vec<Perturbed> {
    let w = u64::from(job.width_px);
    (0..w * u64::from(job.height_px))
        .into_par_iter()
        .map(|i| job.escape(orbit, bla, (i % w) as u32, (i / w) as u32))
        .collect()
}

/// The colours of escape times `counts` and `|z_n|²` `norms` (row-major, as [`crate::mandelbrot::deep::render`] gives
/// them) with `coloring`, as `[r, g, b, ...]` (3 bytes per pixel).
pub fn colorize(counts: &[u32], norms: &[f32], coloring: &Coloring, max_iter: u32) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(3 * counts.len());
    for (&n, &norm_sqr) in counts.iter().zip(norms) {
        rgb.extend_from_slice(&coloring.color(Escape { n, norm_sqr }, max_iter));
    }
    rgb
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deep::{BLA_EPS, bla_table, find_minibrot, near_i, reference_orbit, render_direct};
    use common::floatexp::FloatExp;

    /// Perturbation against the direct arbitrary-precision iteration, at a shallow depth
    /// that runs quickly; the deep scales are checked by the `deep-accuracy` example.
    #[test]
    fn perturbation_matches_direct_iteration_near_a_misiurewicz_point() {
        let v = DeepView::new(
            "-0.0000000000000000003",
            "1.0000000000000000002",
            &crate::deep::Decimal::parse("1e-18").unwrap(),
            16,
            12,
        )
        .unwrap();
        let max_iter = 400;
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let perturbed: Vec<u32> = render_perturbed(&v, &orbit, max_iter)
            .iter()
            .map(|p| p.n)
            .collect();
        let direct = render_direct(&v, max_iter);
        let same = perturbed
            .iter()
            .zip(&direct)
            .filter(|(a, b)| a == b)
            .count();
        assert!(
            same * 100 >= direct.len() * 99,
            "{same} of {}",
            direct.len()
        );
        // Structure, not a flat image: several different counts.
        let mut counts = direct.clone();
        counts.sort_unstable();
        counts.dedup();
        assert!(counts.len() > 5, "{counts:?}");
    }

    /// With the BLA table, a minibrot view at 1e-300 (period 401, where `|δz|²` underflows
    /// f64 for most of the orbit) gives the escape times of plain perturbation, and skips
    /// most iterations.
    #[test]
    fn bla_keeps_escape_times_and_skips_most_iterations_at_1e_300() {
        let near = near_i(150, 24, 16).unwrap();
        let m = find_minibrot(
            &near.center_re,
            &near.center_im,
            FloatExp::new(0.5, -498),
            2 * near.precision_bits + 64,
            10_000,
        )
        .expect("a minibrot near i");
        let v = m.view(24, 16).unwrap();
        let max_iter = 30 * m.period;
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let job = v.job(max_iter, 4.0);
        let table = bla_table(&orbit, &job, BLA_EPS);
        let plain = render_job_cpu(&job, &orbit, &[]);
        let skipping = render_job_cpu(&job, &orbit, &table);
        let same = plain
            .iter()
            .zip(&skipping)
            .filter(|(a, b)| a.n == b.n)
            .count();
        assert_eq!(same, plain.len(), "BLA changed escape times");
        assert!(plain.iter().any(|p| p.n < max_iter), "nothing escaped");
        let skipped: u64 = skipping.iter().map(|p| u64::from(p.skipped)).sum();
        let total: u64 = skipping.iter().map(|p| u64::from(p.n)).sum();
        assert!(skipped * 10 > total * 9, "skipped {skipped} of {total}");
    }

    /// Beyond f64's range (a minibrot view at about 6e-401, pixel spacing 2^-1333): the
    /// escape times by perturbation, with and without BLA, equal the direct iteration's. An
    /// odd size puts a row and a column at δc.im = 0 and δc.re = 0 exactly. Two faults this
    /// caught: a zero part of δc counted as exponent 0 (so δc "fitted" f64 and entered as
    /// 0), and f64 steps whose result fell far below f64's range at once (near the
    /// minibrot, Z passes close to 0 and 2·Z·δz and δz² underflow while δc matters again):
    /// every pixel then reached max_iter.
    #[test]
    fn perturbation_matches_direct_iteration_beyond_f64_at_a_minibrot() {
        let (w, h) = (7, 5);
        let near = near_i(200, w, h).unwrap();
        let m = find_minibrot(
            &near.center_re,
            &near.center_im,
            FloatExp::new(0.5, -664),
            2 * near.precision_bits + 64,
            100_000,
        )
        .expect("a minibrot near i");
        let v = m.view(w, h).unwrap();
        assert!(
            v.spacing().exponent() < Some(-1100),
            "not beyond f64's range"
        );
        let max_iter = 20 * m.period;
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let job = v.job(max_iter, 4.0);
        let table = bla_table(&orbit, &job, BLA_EPS);
        let direct = render_direct(&v, max_iter);
        assert!(direct.iter().any(|&n| n < max_iter), "nothing escaped");
        for (what, bla) in [("perturbation", &[][..]), ("with BLA", &table[..])] {
            let got: Vec<u32> = render_job_cpu(&job, &orbit, bla)
                .iter()
                .map(|p| p.n)
                .collect();
            assert_eq!(got, direct, "{what} against the direct iteration");
        }
    }
}
