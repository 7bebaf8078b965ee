//! Minibrot search: the lowest-period minibrot near a point, its nucleus by Newton's
//! method and its size, all in arbitrary precision.

use super::{
    arith::{BigComplex, RM},
    view::{DeepError, DeepView, decimal},
};
use astro_float::{BigFloat, Consts, Radix};
use common::floatexp::{ComplexFx, FloatExp};

/// A minibrot found near a point: its nucleus, period and approximate size.
#[derive(Clone, Debug)]
pub struct Minibrot {
    /// Real part of the nucleus (the centre: `z_period(c) = 0`).
    pub re: BigFloat,
    /// Imaginary part of the nucleus.
    pub im: BigFloat,
    /// The period.
    pub period: u32,
    /// Approximate radius (the standard estimate `1/|β·λ²|` from the orbit's derivatives,
    /// as in Claude Heiland-Allen's "minibrot size" method).
    pub size: FloatExp,
}

/// How many times its size ([`Minibrot::size`]) the scale of a minibrot's view is
/// ([`Minibrot::view`]): the minibrot and its nearest decorations fill the image.
pub const MINIBROT_FRAME: f64 = 6.0;

impl Minibrot {
    /// The scale of [`Minibrot::view`]: [`MINIBROT_FRAME`] times the size, as a decimal with
    /// 4 significant digits ([`decimal`]), e.g. `"6.058e-401"`.
    pub fn frame_scale(&self) -> String {
        decimal(self.size * FloatExp::from_f64(MINIBROT_FRAME))
    }

    /// The `width_px` × `height_px` view centred on the nucleus at [`Minibrot::frame_scale`].
    ///
    /// # Errors
    /// As [`DeepView::at`]: [`DeepError::EmptyImage`] for a zero size.
    pub fn view(&self, width_px: u32, height_px: u32) -> Result<DeepView, DeepError> {
        let scale = super::view::generated_scale(self.frame_scale())?;
        DeepView::at(&self.re, &self.im, &scale, width_px, height_px)
    }

    /// The nucleus as decimal strings with `digits` significant digits.
    pub fn center_strings(&self, digits: usize) -> (String, String) {
        let fmt = |x: &BigFloat| {
            let mut cc = Consts::new().expect("astro-float constants cache");
            let p = digits * 4;
            let mut v = x.clone();
            let _ = v.set_precision(p, RM);
            v.format(Radix::Dec, RM, &mut cc).unwrap_or_default()
        };
        (fmt(&self.re), fmt(&self.im))
    }
}

/// Finds the lowest-period minibrot whose atom lies within `radius` of `(c_re, c_im)` and
/// locates its nucleus, at `bits` of precision (enough for `radius`, plus some).
///
/// Period: the first `n ≤ max_period` at which the disk of radius `radius` around `c`, mapped
/// to first order by the orbit (`Z_n + Z_n'·δ`), contains 0: `|Z_n| < |Z_n'|·radius` ("ball
/// period", after Robert Munafo's box period). Nucleus: Newton's method on `z_p(c) = 0`
/// (`c ← c − z_p/z_p'`) from `c`, until the step is below `2^-bits` of the size estimate or
/// 64 steps.
///
/// `None` if no period is found up to `max_period`, or Newton's method leaves the disk.
pub fn find_minibrot(
    c_re: &BigFloat,
    c_im: &BigFloat,
    radius: FloatExp,
    bits: usize,
    max_period: u32,
) -> Option<Minibrot> {
    let p = bits;
    let c = BigComplex {
        re: c_re.clone(),
        im: c_im.clone(),
    };
    // Ball period, with the derivative in FloatExp (it grows far beyond f64).
    let mut z = BigComplex::zero(p);
    let mut dz = ComplexFx::ZERO;
    let one = ComplexFx::from_f64(1.0, 0.0);
    let mut period = None;
    for n in 1..=max_period {
        let zf = z.to_fx();
        dz = ComplexFx::from_f64(2.0, 0.0) * zf * dz + one;
        z = z.square_add(&c, p);
        let zf = z.to_fx();
        if zf.norm_sqr().to_f64() > 65_536.0 {
            return None;
        }
        if zf.abs().abs_lt(dz.abs() * radius) {
            period = Some(n);
            break;
        }
    }
    let period = period?;
    // Newton's method for the nucleus.
    let mut c = c;
    for _ in 0..64 {
        let mut z = BigComplex::zero(p);
        let mut dz = BigComplex::zero(p);
        let one = BigComplex {
            re: BigFloat::from_u32(1, p),
            im: BigFloat::from_u32(0, p),
        };
        let two = BigFloat::from_u32(2, p);
        for _ in 0..period {
            // dz ← 2·z·dz + 1, z ← z² + c
            let zdz = z.mul(&dz, p);
            dz = BigComplex {
                re: zdz.re.mul(&two, p, RM),
                im: zdz.im.mul(&two, p, RM),
            }
            .add(&one, p);
            z = z.square_add(&c, p);
        }
        let step = z.div(&dz, p);
        c = c.sub(&step, p);
        let s = step.to_fx().abs();
        if s.m == 0.0 || s.e < -(i32::try_from(bits).unwrap_or(i32::MAX)) + 8 {
            break;
        }
    }
    // Left the disk: a different minibrot, or no convergence.
    let start = BigComplex {
        re: c_re.clone(),
        im: c_im.clone(),
    };
    let moved = c.sub(&start, p).to_fx().abs();
    if (radius * FloatExp::from_f64(4.0)).abs_lt(moved) {
        return None;
    }
    // Size: b = Σ 1/λ_k, λ_k = Π 2·z_j; size = 1/|b·λ_p²|.
    let mut z = BigComplex::zero(p);
    let mut l = ComplexFx::from_f64(1.0, 0.0);
    let mut b = ComplexFx::from_f64(1.0, 0.0);
    for _ in 1..period {
        z = z.square_add(&c, p);
        l = ComplexFx::from_f64(2.0, 0.0) * z.to_fx() * l;
        b = b + inverse(l);
    }
    let size = inverse_abs(b * l * l);
    Some(Minibrot {
        re: c.re,
        im: c.im,
        period,
        size,
    })
}

/// `1/z` in [`ComplexFx`].
fn inverse(z: ComplexFx) -> ComplexFx {
    let n = z.norm_sqr();
    let inv = FloatExp::new(1.0 / n.m, -n.e);
    ComplexFx::new(z.re * inv, -(z.im * inv))
}

/// `1/|z|` in [`FloatExp`].
fn inverse_abs(z: ComplexFx) -> FloatExp {
    let a = z.abs();
    FloatExp::new(1.0 / a.m, -a.e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deep::DeepView;

    /// Near c = i, the minibrot in a disk of radius 10^-k has period about 2.66·k and size
    /// about 10^-2k (Misiurewicz-point scaling); Newton's nucleus satisfies z_p(c) ≈ 0.
    #[test]
    fn finds_minibrots_near_i() {
        for exp in [20i32, 50] {
            let v = DeepView::new(
                &format!("1.4285714285714285714e-{}", exp + 1),
                &format!("1.{}14285714285714285714", "0".repeat(exp as usize + 1)),
                &crate::deep::Decimal::parse(&format!("1e-{exp}")).unwrap(),
                64,
                64,
            )
            .unwrap();
            let radius = FloatExp::from_f64(10f64.powi(-exp));
            // Twice the view's precision: the minibrot is about 10^-2k across.
            let bits = 2 * v.precision_bits;
            let m = find_minibrot(&v.center_re, &v.center_im, radius, bits, 10_000)
                .expect("a minibrot");
            let log10_size = (f64::from(m.size.e) + m.size.m.log2()) * std::f64::consts::LOG10_2;
            assert!(
                (log10_size + 2.0 * f64::from(exp)).abs() < 3.0,
                "1e-{exp}: size 10^{log10_size}"
            );
            // Converged: one more Newton step z_p/z_p' is far below the minibrot's size.
            let p = bits;
            let c = BigComplex {
                re: m.re.clone(),
                im: m.im.clone(),
            };
            let (mut z, mut dz) = (BigComplex::zero(p), BigComplex::zero(p));
            let one = BigComplex {
                re: BigFloat::from_u32(1, p),
                im: BigFloat::from_u32(0, p),
            };
            for _ in 0..m.period {
                let zdz = z.mul(&dz, p);
                dz = zdz.add(&zdz, p).add(&one, p);
                z = z.square_add(&c, p);
            }
            let step = z.div(&dz, p).to_fx().abs();
            assert!(
                step.abs_lt(m.size * FloatExp::from_f64(1e-20)),
                "1e-{exp}: {step:?}"
            );
        }
    }
}
