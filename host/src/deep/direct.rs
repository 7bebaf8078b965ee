//! The direct check: every pixel iterated in arbitrary precision, the slow exact reference
//! that perturbation is tested against.

use super::{arith::BigComplex, view::DeepView};
use rayon::prelude::*;

/// Escape times of every pixel (row-major) by iterating each pixel directly at the view's
/// precision: the slow, exact reference that perturbation is checked against.
pub fn render_direct(view: &DeepView, max_iter: u32) -> Vec<u32> {
    let spacing = view.spacing();
    let p = view.precision_bits;
    let w = u64::from(view.width_px);
    (0..w * u64::from(view.height_px))
        .into_par_iter()
        .map(|i| {
            let (re, im) = view.pixel(&spacing, (i % w) as u32, (i / w) as u32);
            let c = BigComplex { re, im };
            let mut z = BigComplex::zero(p);
            for n in 1..=max_iter {
                z = z.square_add(&c, p);
                let f = z.to_f64();
                if f.re * f.re + f.im * f.im > 4.0 {
                    return n;
                }
            }
            max_iter
        })
        .collect()
}
