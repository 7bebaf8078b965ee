//! The reference orbit: the view's centre iterated in arbitrary precision, stored rounded
//! to `f64` for the perturbation of every pixel.

use super::arith::BigComplex;
use astro_float::BigFloat;
use common::Complex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The reference orbit `Z_0 = 0, Z_{k+1} = Z_k² + C` of `(c_re, c_im)` at `bits` of
/// precision, rounded to `f64`: `max_iter + 1` values, or fewer if it escapes (`|Z|² > 2¹⁶`;
/// the last value is the first one past that).
pub fn reference_orbit(
    c_re: &BigFloat,
    c_im: &BigFloat,
    bits: usize,
    max_iter: u32,
) -> Vec<Complex<f64>> {
    reference_orbit_until(
        c_re,
        c_im,
        bits,
        max_iter,
        &AtomicBool::new(false),
        &AtomicU64::new(0),
    )
    .expect("not stopped: the flag is never set")
}

/// [`reference_orbit`] that gives up, returning `None`, as soon as `stop` is set (checked
/// before every step: one step at the bound of [`super::MAX_PRECISION_BITS`] takes well
/// under a millisecond), and adds every step done to `steps_done` (for a progress display).
pub fn reference_orbit_until(
    c_re: &BigFloat,
    c_im: &BigFloat,
    bits: usize,
    max_iter: u32,
    stop: &AtomicBool,
    steps_done: &AtomicU64,
) -> Option<Vec<Complex<f64>>> {
    let p = bits;
    let c = BigComplex {
        re: c_re.clone(),
        im: c_im.clone(),
    };
    let mut z = BigComplex::zero(p);
    let mut out = Vec::with_capacity(max_iter as usize + 1);
    out.push(Complex::new(0.0, 0.0));
    for _ in 0..max_iter {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        z = z.square_add(&c, p);
        steps_done.fetch_add(1, Ordering::Relaxed);
        let zf = z.to_f64();
        out.push(zf);
        if zf.re * zf.re + zf.im * zf.im > 65_536.0 {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_stop_flag_ends_the_orbit_at_once() {
        let v = super::super::near_i(50, 4, 4).unwrap();
        let stop = AtomicBool::new(true);
        let t = std::time::Instant::now();
        let steps = AtomicU64::new(0);
        let got =
            reference_orbit_until(&v.center_re, &v.center_im, 4096, 10_000_000, &stop, &steps);
        assert!(got.is_none());
        assert!(t.elapsed().as_secs_f64() < 0.5);
        // Not stopped: the same orbit as the plain function.
        let a = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 50);
        let b = reference_orbit_until(
            &v.center_re,
            &v.center_im,
            v.precision_bits,
            50,
            &AtomicBool::new(false),
            &steps,
        );
        assert_eq!(Some(a), b);
        assert_eq!(steps.load(Ordering::Relaxed), 50);
    }
}
