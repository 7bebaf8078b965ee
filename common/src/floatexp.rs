//! [`FloatExp`]: an `f64` mantissa with an `i32` binary exponent, for the tiny numbers of deep
//! zooms (pixel spacings such as `10⁻⁵⁰⁰`, far below `f64`'s `10⁻³⁰⁸`), and [`ComplexFx`].
//!
//! A value is `m · 2^e` with `0.5 ≤ |m| < 1` (or `m = 0`, `e = 0`). Each operation computes on
//! the mantissas in `f64` (correctly rounded, so CPU and GPU agree bit for bit) and then
//! renormalises by moving the mantissa's binary exponent into `e`, which is exact. Relative
//! precision is `f64`'s; the range is `2^±2³¹` (about `10^±6.4·10⁸`).

/// `m · 2^e` with `0.5 ≤ |m| < 1`, or zero (`m = 0`, `e = 0`).
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
#[repr(C)]
pub struct FloatExp {
    /// Mantissa: `0.5 ≤ |m| < 1`, or `0`.
    pub m: f64,
    /// Binary exponent.
    pub e: i32,
}

/// Bits of an `f64`'s biased exponent field.
const EXP_MASK: u64 = 0x7ff << 52;
/// The biased exponent of numbers in `[0.5, 1)`.
const HALF_BIASED: u64 = 1022;

/// `2^k` for `-1022 ≤ k ≤ 1023` (exact: a power of two built from its bits).
#[inline(always)]
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

impl FloatExp {
    /// Zero.
    pub const ZERO: Self = Self { m: 0.0, e: 0 };

    /// The binary exponent `e` (the value is `m · 2^e` with `0.5 ≤ |m| < 1`), or `i32::MIN`
    /// for zero ([`FloatExp::ZERO`] stores `e = 0`, which must not count as a magnitude).
    #[inline(always)]
    pub fn exponent(self) -> i32 {
        if self.m == 0.0 { i32::MIN } else { self.e }
    }

    /// `m · 2^e`, normalised; `m` must be finite.
    #[inline(always)]
    pub fn new(m: f64, e: i32) -> Self {
        if m == 0.0 {
            return Self::ZERO;
        }
        let mut bits = m.to_bits();
        let mut biased = ((bits & EXP_MASK) >> 52) as i32;
        let mut e = e;
        if biased == 0 {
            // Subnormal: scale into the normal range first (exact).
            bits = (m * pow2(64)).to_bits();
            biased = ((bits & EXP_MASK) >> 52) as i32;
            e -= 64;
        }
        // m = 1.f · 2^(biased − 1023) = 0.1f · 2^(biased − 1022).
        let mantissa = f64::from_bits((bits & !EXP_MASK) | (HALF_BIASED << 52));
        Self {
            m: mantissa,
            e: e.saturating_add(biased - HALF_BIASED as i32),
        }
    }

    /// `x` exactly (finite `x`).
    ///
    /// ```
    /// # use common::floatexp::FloatExp;
    /// assert_eq!(FloatExp::from_f64(3.0), FloatExp { m: 0.75, e: 2 });
    /// assert_eq!(FloatExp::from_f64(3.0).to_f64(), 3.0);
    /// ```
    #[inline(always)]
    pub fn from_f64(x: f64) -> Self {
        Self::new(x, 0)
    }

    /// The nearest `f64`: `0` below `f64`'s subnormals' range, `±∞` above its largest
    /// finite value.
    #[inline(always)]
    pub fn to_f64(self) -> f64 {
        if self.m == 0.0 || self.e < -1100 {
            return 0.0 * self.m;
        }
        if self.e > 1024 {
            return self.m * f64::INFINITY;
        }
        // Two exact scalings keep every intermediate normal or exactly representable.
        let half = self.e / 2;
        self.m * pow2(half) * pow2(self.e - half)
    }

    /// `self · 2^k` (exact).
    #[inline(always)]
    pub fn scale2(self, k: i32) -> Self {
        if self.m == 0.0 {
            self
        } else {
            Self {
                m: self.m,
                e: self.e.saturating_add(k),
            }
        }
    }

    /// `self + other`: the smaller operand's mantissa is scaled to the larger's exponent
    /// (exact unless it falls below `2⁻¹⁰⁰⁰` of it, where it cannot change the rounded sum).
    #[inline(always)]
    fn sum(self, other: Self) -> Self {
        if self.m == 0.0 {
            return other;
        }
        if other.m == 0.0 {
            return self;
        }
        let (big, small) = if self.e >= other.e {
            (self, other)
        } else {
            (other, self)
        };
        let shift = big.e - small.e;
        if shift > 1000 {
            return big;
        }
        Self::new(big.m + small.m * pow2(-shift), big.e)
    }

    /// `|self|`.
    #[inline(always)]
    pub fn abs(self) -> Self {
        Self {
            m: if self.m < 0.0 { -self.m } else { self.m },
            e: self.e,
        }
    }

    /// Whether `|self| < |other|`.
    #[inline(always)]
    pub fn abs_lt(self, other: Self) -> bool {
        let (a, b) = (self.abs(), other.abs());
        if a.m == 0.0 || b.m == 0.0 {
            return a.m < b.m;
        }
        a.e < b.e || (a.e == b.e && a.m < b.m)
    }
}

impl core::ops::Mul for FloatExp {
    type Output = Self;
    /// `self · other`: the mantissas' product (correctly rounded), renormalised.
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        Self::new(self.m * other.m, self.e.saturating_add(other.e))
    }
}

impl core::ops::Add for FloatExp {
    type Output = Self;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.sum(other)
    }
}

impl core::ops::Neg for FloatExp {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self {
            m: -self.m,
            e: self.e,
        }
    }
}

impl core::ops::Sub for FloatExp {
    type Output = Self;
    #[inline(always)]
    fn sub(self, other: Self) -> Self {
        self.sum(-other)
    }
}

/// A complex number of [`FloatExp`] parts.
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
#[repr(C)]
pub struct ComplexFx {
    /// Real part.
    pub re: FloatExp,
    /// Imaginary part.
    pub im: FloatExp,
}

impl ComplexFx {
    /// Zero.
    pub const ZERO: Self = Self {
        re: FloatExp::ZERO,
        im: FloatExp::ZERO,
    };

    /// From parts.
    #[inline(always)]
    pub fn new(re: FloatExp, im: FloatExp) -> Self {
        Self { re, im }
    }

    /// The larger [`FloatExp::exponent`] of the two parts (`i32::MIN` for zero): the
    /// magnitude's binary order within a factor of 2, with a zero part ignored.
    #[inline(always)]
    pub fn exponent(self) -> i32 {
        self.re.exponent().max(self.im.exponent())
    }

    /// From `f64` parts (exact).
    #[inline(always)]
    pub fn from_f64(re: f64, im: f64) -> Self {
        Self::new(FloatExp::from_f64(re), FloatExp::from_f64(im))
    }

    /// `|self|²`.
    #[inline(always)]
    pub fn norm_sqr(self) -> FloatExp {
        self.re * self.re + self.im * self.im
    }

    /// `|self|`: the square root of [`norm_sqr`](Self::norm_sqr), taken on the mantissa
    /// after making the exponent even (exact scaling).
    #[inline(always)]
    pub fn abs(self) -> FloatExp {
        let n = self.norm_sqr();
        if n.m == 0.0 {
            return FloatExp::ZERO;
        }
        let (m, e) = if n.e % 2 == 0 {
            (n.m, n.e)
        } else {
            (n.m * 2.0, n.e - 1)
        };
        FloatExp::new(crate::Real::sqrt(m), e / 2)
    }

    /// The parts as `f64` ([`FloatExp::to_f64`]).
    #[inline(always)]
    pub fn to_f64(self) -> (f64, f64) {
        (self.re.to_f64(), self.im.to_f64())
    }
}

impl core::ops::Add for ComplexFx {
    type Output = Self;
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        Self::new(self.re + other.re, self.im + other.im)
    }
}

impl core::ops::Mul for ComplexFx {
    type Output = Self;
    /// Four products, then a difference and a sum.
    #[inline(always)]
    fn mul(self, other: Self) -> Self {
        Self::new(
            self.re * other.re - self.im * other.im,
            self.re * other.im + self.im * other.re,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_normalises() {
        for x in [
            1.0,
            -1.0,
            0.75,
            3.0,
            1e-300,
            -2.5e300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let f = FloatExp::from_f64(x);
            assert!(f.m.abs() >= 0.5 && f.m.abs() < 1.0, "{x}: {f:?}");
            assert_eq!(f.to_f64(), x, "{x}");
        }
        assert_eq!(FloatExp::from_f64(0.0), FloatExp::ZERO);
        assert_eq!(FloatExp::new(0.75, -2000).to_f64(), 0.0);
        assert_eq!(FloatExp::new(0.75, 2000).to_f64(), f64::INFINITY);
    }

    #[test]
    fn arithmetic_matches_f64_where_f64_is_exact_and_reaches_far_below_it() {
        let (a, b) = (1.375_f64, -0.3125_f64);
        let (fa, fb) = (FloatExp::from_f64(a), FloatExp::from_f64(b));
        assert_eq!((fa * fb).to_f64(), a * b);
        assert_eq!((fa + fb).to_f64(), a + b);
        assert_eq!((fa - fb).to_f64(), a - b);
        // 10⁻²⁵⁰ squared is 10⁻⁵⁰⁰: zero in f64, kept here. Scaled back by 2¹⁶⁶¹ it is
        // 10⁻⁵⁰⁰·2¹⁶⁶¹ ≈ 0.2.
        let tiny = FloatExp::from_f64(1e-250);
        let sq = tiny * tiny;
        assert_eq!(1e-250_f64 * 1e-250, 0.0);
        let back = sq.scale2(1661).to_f64();
        let want = 1e-250 * (1e-250 * 2f64.powi(1000)) * 2f64.powi(661);
        assert!((back - want).abs() <= want * 1e-15, "{back} vs {want}");
        // Adding a far smaller number changes nothing; cancellation is exact.
        let one = FloatExp::from_f64(1.0);
        assert_eq!(one + sq, one);
        assert_eq!(sq - sq, FloatExp::ZERO);
        assert!(sq.abs_lt(tiny) && !tiny.abs_lt(sq) && FloatExp::ZERO.abs_lt(sq));
    }

    #[test]
    fn complex_product() {
        // (1 + 2i)(3 - i) = 5 + 5i
        let p = ComplexFx::from_f64(1.0, 2.0) * ComplexFx::from_f64(3.0, -1.0);
        assert_eq!(p.to_f64(), (5.0, 5.0));
        assert_eq!(ComplexFx::from_f64(3.0, 4.0).norm_sqr().to_f64(), 25.0);
        assert_eq!(ComplexFx::from_f64(3.0, 4.0).abs().to_f64(), 5.0);
    }
}
