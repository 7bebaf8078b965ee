//! The escape-time algorithm.

use crate::{Complex, Real};

/// Escape time of `c`: the smallest `n` in `1..=max_iter` such that `|z_n|² > 4`, where
/// `z_0 = 0` and `z_{k+1} = z_k² + c`; `max_iter` if the orbit has not escaped after
/// `max_iter` iterations. A result equal to `max_iter` means "taken to be in the set".
///
/// The result is therefore in `1..=max_iter` (`0` only when `max_iter == 0`). The orbit is
/// computed with separate multiplications and additions (no fused multiply-add), so CPU and
/// GPU give the same count for the same `c`.
///
/// ```
/// # use common::{Complex, escape_time};
/// assert_eq!(escape_time(Complex::new(0.0_f64, 0.0), 100), 100); // in the set
/// assert_eq!(escape_time(Complex::new(3.0_f64, 0.0), 100), 1); // z1 = 3, |z1|² = 9 > 4
/// assert_eq!(escape_time(Complex::new(2.0_f64, 0.0), 100), 2); // z1 = 2 (not > 4), z2 = 6
/// ```
#[inline(always)]
pub fn escape_time<F: Real>(c: Complex<F>, max_iter: u32) -> u32 {
    let mut re = F::ZERO;
    let mut im = F::ZERO;
    let mut re2 = F::ZERO;
    let mut im2 = F::ZERO;
    let mut n = 0;
    while n < max_iter {
        // z ← z² + c, with re² and im² kept from the bailout test.
        im = F::TWO * re * im + c.im;
        re = re2 - im2 + c.re;
        re2 = re * re;
        im2 = im * im;
        n += 1;
        if re2 + im2 > F::BAILOUT_SQR {
            return n;
        }
    }
    max_iter
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = 1000;

    fn c64(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    fn c32(re: f32, im: f32) -> Complex<f32> {
        Complex::new(re, im)
    }

    /// Independent reference: the textbook loop on plain `f64`s, `z ← z² + c` written out,
    /// bailout tested after each step.
    fn reference(cr: f64, ci: f64, max_iter: u32) -> u32 {
        let (mut zr, mut zi) = (0.0_f64, 0.0_f64);
        for n in 1..=max_iter {
            let new_zr = zr * zr - zi * zi + cr;
            let new_zi = 2.0 * zr * zi + ci;
            zr = new_zr;
            zi = new_zi;
            if zr * zr + zi * zi > 4.0 {
                return n;
            }
        }
        max_iter
    }

    #[test]
    fn periodic_points_inside() {
        // c = 0: z stays 0.
        // c = -1: 0 → -1 → 0 → -1 … (period 2, |z|² ≤ 1).
        // c = -2 (the tip): 0 → -2 → 2 → 2 … ; |z|² = 4 is not > 4, so it never escapes.
        // c = i: 0 → i → -1+i → -i → -1+i … (period 2 after one step, |z|² ≤ 2).
        // c = -i: the conjugate orbit.
        // All values are small integers, so the arithmetic is exact in f32 and f64.
        for (re, im) in [
            (0.0, 0.0),
            (-1.0, 0.0),
            (-2.0, 0.0),
            (0.0, 1.0),
            (0.0, -1.0),
        ] {
            assert_eq!(escape_time(c64(re, im), MAX), MAX, "f64 c = {re}+{im}i");
            assert_eq!(
                escape_time(c32(re as f32, im as f32), MAX),
                MAX,
                "f32 c = {re}+{im}i"
            );
        }
    }

    #[test]
    fn real_segment_inside_even_with_rounding() {
        // For real c in [-2, 0]: if z ∈ [c, c² + c] then |z| ≤ |c| (because |c² + c| =
        // |c|·|c + 1| ≤ |c|), so z² ∈ [0, c²] and z² + c ∈ [c, c² + c]. Rounding to nearest is
        // monotonic and the end points are the rounded values themselves, so the interval stays
        // invariant in floating point too, and |z|² ≤ c² ≤ 4 never exceeds 4.
        // For c in [0, 1/4]: z ∈ [0, 1/2] ⇒ z² ≤ 1/4 ⇒ z² + c ≤ 1/2 (again exact end points,
        // monotonic rounding). This covers -0.75 (the cardioid/bulb junction) and 0.25 (the cusp).
        for k in 0..=144 {
            let re = -2.0 + f64::from(k) / 64.0; // -2, -2 + 1/64, …, 0.25 (all exact)
            assert_eq!(escape_time(c64(re, 0.0), MAX), MAX, "f64 c = {re}");
            assert_eq!(escape_time(c32(re as f32, 0.0), MAX), MAX, "f32 c = {re}");
        }
        assert_eq!(escape_time(c64(-0.75, 0.0), 100_000), 100_000);
        assert_eq!(escape_time(c64(0.25, 0.0), 100_000), 100_000);
    }

    /// Points of the main cardioid and the period-2 bulb, built from multipliers `μ` with
    /// `|μ| = r < 1` (rational points on the unit circle scaled by `r`, so no trigonometry):
    /// - cardioid: `c = μ/2 - μ²/4` has the fixed point `μ/2` with multiplier `2·(μ/2) = μ`;
    /// - bulb: `c = -1 + μ/4` has a 2-cycle with multiplier `4(c + 1) = μ`.
    ///
    /// An attracting cycle attracts the critical orbit (Fatou), so these `c` are in the set.
    fn interior_points(r: f64) -> impl Iterator<Item = (f64, f64)> {
        let dirs = [
            (1.0, 0.0),
            (0.0, 1.0),
            (-1.0, 0.0),
            (0.0, -1.0),
            (0.6, 0.8),
            (-0.6, 0.8),
            (5.0 / 13.0, 12.0 / 13.0),
            (-12.0 / 13.0, 5.0 / 13.0),
            (8.0 / 17.0, -15.0 / 17.0),
            (-15.0 / 17.0, -8.0 / 17.0),
        ];
        dirs.into_iter().flat_map(move |(dx, dy)| {
            let (mr, mi) = (r * dx, r * dy);
            let cardioid = (
                mr / 2.0 - (mr * mr - mi * mi) / 4.0,
                mi / 2.0 - mr * mi / 2.0,
            );
            let bulb = (-1.0 + mr / 4.0, mi / 4.0);
            [cardioid, bulb]
        })
    }

    #[test]
    fn cardioid_and_bulb_inside() {
        for r in [0.0, 0.25, 0.5, 0.8, 0.9] {
            for (re, im) in interior_points(r) {
                assert_eq!(
                    escape_time(c64(re, im), 10_000),
                    10_000,
                    "f64 c = {re}+{im}i"
                );
                assert_eq!(
                    escape_time(c32(re as f32, im as f32), 10_000),
                    10_000,
                    "f32 c = {re}+{im}i"
                );
            }
        }
    }

    /// Points outside with escape times counted by hand. All intermediate values are dyadic
    /// rationals with few bits, so f32 and f64 compute them exactly.
    const HAND_COUNTED: [(f64, f64, u32); 9] = [
        // z1 = 1 (1), z2 = 2 (4, not > 4), z3 = 5 (25).
        (1.0, 0.0, 3),
        // z1 = 3 (9).
        (3.0, 0.0, 1),
        // z1 = 2 (4, not > 4), z2 = 6 (36).
        (2.0, 0.0, 2),
        // z1 = -2.5 (6.25).
        (-2.5, 0.0, 1),
        // z1 = 2i (4, not > 4), z2 = -4 + 2i (20).
        (0.0, 2.0, 2),
        // z1 = .5, z2 = .75, z3 = 1.0625, z4 = 1.62890625 (|z|² ≈ 2.65),
        // z5 = 2.6533355712890625 + .5 ≈ 3.15 (≈ 9.94).
        (0.5, 0.0, 5),
        // z1 = 1+i (2), z2 = 2i + 1+i = 1+3i (10).
        (1.0, 1.0, 2),
        // z1 = -1+i (2), z2 = -2i + c = -1-i (2), z3 = 2i + c = -1+3i (10).
        (-1.0, 1.0, 3),
        // z1 = 2+2i (8).
        (2.0, 2.0, 1),
    ];

    #[test]
    fn hand_counted_escapes() {
        for (re, im, n) in HAND_COUNTED {
            assert_eq!(escape_time(c64(re, im), MAX), n, "f64 c = {re}+{im}i");
            assert_eq!(escape_time(c64(re, -im), MAX), n, "f64 c = {re}-{im}i");
            assert_eq!(
                escape_time(c32(re as f32, im as f32), MAX),
                n,
                "f32 c = {re}+{im}i"
            );
        }
    }

    #[test]
    fn just_past_the_tip_escapes_at_once_in_f64() {
        // c = -2 - 2⁻⁴⁰: |z1|² = (2 + 2⁻⁴⁰)² = 4 + 2⁻³⁸ + 2⁻⁸⁰, which rounds to > 4 in f64.
        let c = c64(-2.0 - 2.0_f64.powi(-40), 0.0);
        assert_eq!(escape_time(c, MAX), 1);
        // In f32 the same number rounds to -2, the tip, which is in the set.
        assert_eq!(escape_time(c.cast::<f32>(), MAX), MAX);
    }

    #[test]
    fn max_iter_zero_and_one() {
        // max_iter = 0: no iteration at all, result 0 whatever c is.
        for (re, im) in [(0.0, 0.0), (3.0, 0.0), (1.0, 0.0), (f64::NAN, 0.0)] {
            assert_eq!(escape_time(c64(re, im), 0), 0);
            assert_eq!(escape_time(c32(re as f32, im as f32), 0), 0);
        }
        // max_iter = 1: escaping at step 1 gives 1, and not escaping also gives max_iter = 1.
        assert_eq!(escape_time(c64(3.0, 0.0), 1), 1); // escapes at 1
        assert_eq!(escape_time(c64(0.0, 0.0), 1), 1); // in the set
        assert_eq!(escape_time(c64(1.0, 0.0), 1), 1); // would escape at 3
        assert_eq!(escape_time(c64(1.0, 0.0), 2), 2); // not yet escaped
        assert_eq!(escape_time(c64(1.0, 0.0), 3), 3); // escapes exactly at the last step
        assert_eq!(escape_time(c64(1.0, 0.0), 4), 3);
    }

    #[test]
    fn nan_never_escapes() {
        // NaN > 4 is false, so a NaN orbit runs to max_iter (documented here, not relied on).
        assert_eq!(escape_time(c64(f64::NAN, 0.0), 50), 50);
    }

    #[test]
    fn result_in_range_and_matches_reference_loop() {
        // Grid over [-2.5, 1] × [-1.25, 1.25]; every result is in 1..=max_iter and equals the
        // plain-f64 reference loop (same IEEE operations, so exact equality is expected:
        // 2·re·im = re·im + im·re exactly, as doubling is exact).
        for j in 0..=50 {
            for i in 0..=70 {
                let re = -2.5 + f64::from(i) * 0.05;
                let im = -1.25 + f64::from(j) * 0.05;
                let n = escape_time(c64(re, im), 300);
                assert!((1..=300).contains(&n), "c = {re}+{im}i gave {n}");
                assert_eq!(n, reference(re, im, 300), "c = {re}+{im}i");
            }
        }
    }

    /// `escape_time(conj c) == escape_time(c)`, exactly. The orbit of `conj c` is the
    /// conjugate of the orbit of `c` even in IEEE arithmetic: negation is exact and
    /// round-to-nearest is symmetric, so `fl(2·re·(-im) + (-c.im)) = -fl(2·re·im + c.im)`,
    /// and `(-im)² = im²` bit for bit; the bailout test only sees `re²` and `im²`.
    fn check_conjugate_symmetry<F: Real>() {
        let mut escaped = 0;
        let mut inside = 0;
        for j in 0..=60 {
            for i in 0..=90 {
                let re = -2.2 + f64::from(i) * (3.0 / 90.0);
                let im = f64::from(j) * (1.3 / 60.0);
                let c = Complex::new(F::from_f64(re), F::from_f64(im));
                let n = escape_time(c, 500);
                assert_eq!(n, escape_time(c.conj(), 500), "c = {c:?}");
                if n == 500 {
                    inside += 1;
                } else {
                    escaped += 1;
                }
            }
        }
        // The grid must exercise both outcomes for the test to mean anything.
        assert!(
            escaped > 100 && inside > 100,
            "{escaped} escaped, {inside} inside"
        );
    }

    #[test]
    fn conjugate_symmetry_f64() {
        check_conjugate_symmetry::<f64>();
    }

    #[test]
    fn conjugate_symmetry_f32() {
        check_conjugate_symmetry::<f32>();
    }

    #[test]
    fn f32_and_f64_agree_far_from_the_boundary() {
        // Interior points with a strongly attracting cycle (|μ| ≤ 1/2) and outside points
        // whose orbits are exact in both precisions, or that leave the radius-2 disc at once.
        for (re, im) in interior_points(0.5) {
            let n64 = escape_time(c64(re, im), 2000);
            assert_eq!(n64, 2000);
            assert_eq!(escape_time(c32(re as f32, im as f32), 2000), n64);
        }
        for (re, im, _) in HAND_COUNTED {
            assert_eq!(
                escape_time(c64(re, im), MAX),
                escape_time(c32(re as f32, im as f32), MAX)
            );
        }
        // |c|² > 4 with a wide margin: escapes at 1 in both.
        for (re, im) in [(2.1, 0.3), (-1.9, 1.1), (0.1, -2.05), (-3.3, -3.3)] {
            assert_eq!(escape_time(c64(re, im), MAX), 1);
            assert_eq!(escape_time(c32(re as f32, im as f32), MAX), 1);
        }
    }
}
