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
