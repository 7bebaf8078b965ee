//! Complex numbers in arbitrary precision (`astro-float`) and the one step `z ← z² + c`
//! that the reference orbit, the direct check and the minibrot search all iterate.

use astro_float::{BigFloat, RoundingMode, Sign};
use common::floatexp::{ComplexFx, FloatExp};

/// Rounding of every arbitrary-precision operation.
pub(crate) const RM: RoundingMode = RoundingMode::ToEven;

/// `x` as [`FloatExp`] (its leading 53 bits, truncated).
pub fn to_floatexp(x: &BigFloat) -> FloatExp {
    let Some((words, _, sign, exponent, _)) = x.as_raw_parts() else {
        return FloatExp { m: f64::NAN, e: 0 };
    };
    let Some(&top) = words.last() else {
        return FloatExp::ZERO;
    };
    if top == 0 {
        return FloatExp::ZERO;
    }
    // The value is 0.top… · 2^exponent with the top bit of `top` set: the mantissa's leading
    // 53 bits as an integer over 2^53 lie in [0.5, 1).
    let m = (top >> 11) as f64 / (1u64 << 53) as f64;
    let m = if sign == Sign::Neg { -m } else { m };
    FloatExp::new(m, exponent)
}

/// A complex number in arbitrary precision.
#[derive(Clone, Debug)]
pub(crate) struct BigComplex {
    pub(crate) re: BigFloat,
    pub(crate) im: BigFloat,
}

impl BigComplex {
    pub(crate) fn zero(p: usize) -> Self {
        Self {
            re: BigFloat::from_u32(0, p),
            im: BigFloat::from_u32(0, p),
        }
    }

    /// The Mandelbrot step `z² + c` at `p` bits: `re = (re² − im²) + c.re`,
    /// `im = (re·im + re·im) + c.im`, each operation rounded to nearest even. Every
    /// arbitrary-precision iteration of the crate goes through here.
    pub(crate) fn square_add(&self, c: &Self, p: usize) -> Self {
        let re2 = self.re.mul(&self.re, p, RM);
        let im2 = self.im.mul(&self.im, p, RM);
        let reim = self.re.mul(&self.im, p, RM);
        Self {
            re: re2.sub(&im2, p, RM).add(&c.re, p, RM),
            im: reim.add(&reim, p, RM).add(&c.im, p, RM),
        }
    }

    pub(crate) fn add(&self, o: &Self, p: usize) -> Self {
        Self {
            re: self.re.add(&o.re, p, RM),
            im: self.im.add(&o.im, p, RM),
        }
    }

    pub(crate) fn sub(&self, o: &Self, p: usize) -> Self {
        Self {
            re: self.re.sub(&o.re, p, RM),
            im: self.im.sub(&o.im, p, RM),
        }
    }

    pub(crate) fn mul(&self, o: &Self, p: usize) -> Self {
        Self {
            re: self
                .re
                .mul(&o.re, p, RM)
                .sub(&self.im.mul(&o.im, p, RM), p, RM),
            im: self
                .re
                .mul(&o.im, p, RM)
                .add(&self.im.mul(&o.re, p, RM), p, RM),
        }
    }

    pub(crate) fn div(&self, o: &Self, p: usize) -> Self {
        let d = o.re.mul(&o.re, p, RM).add(&o.im.mul(&o.im, p, RM), p, RM);
        let re = self
            .re
            .mul(&o.re, p, RM)
            .add(&self.im.mul(&o.im, p, RM), p, RM);
        let im = self
            .im
            .mul(&o.re, p, RM)
            .sub(&self.re.mul(&o.im, p, RM), p, RM);
        Self {
            re: re.div(&d, p, RM),
            im: im.div(&d, p, RM),
        }
    }

    pub(crate) fn to_fx(&self) -> ComplexFx {
        ComplexFx::new(to_floatexp(&self.re), to_floatexp(&self.im))
    }

    /// Both parts rounded to `f64` (by way of [`to_floatexp`]).
    pub(crate) fn to_f64(&self) -> common::Complex<f64> {
        common::Complex::new(
            to_floatexp(&self.re).to_f64(),
            to_floatexp(&self.im).to_f64(),
        )
    }
}
