//! [`Real`]: the floating-point operations the shared code needs, implemented for `f32` and
//! `f64` with core-only operations (no libm), so that CPU and GPU agree bit for bit.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// A floating-point scalar (`f32` or `f64`) usable by the shared Mandelbrot code.
///
/// Only IEEE-754 basic operations (`+ - * /`, comparisons, conversions) are required: these
/// are correctly rounded on both CPU and GPU, which is what makes results bit-identical.
pub trait Real:
    Copy
    + PartialOrd
    + core::fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// `0.0`
    const ZERO: Self;
    /// `1.0`
    const ONE: Self;
    /// `2.0`
    const TWO: Self;
    /// The square of the bailout radius: an orbit has escaped once `|z|² > 4`.
    const BAILOUT_SQR: Self;
    /// Machine epsilon (distance from 1.0 to the next representable number).
    const EPSILON: Self;
    /// Converts a `u32` (a pixel coordinate); exact below 2^24 for `f32`, always for `f64`.
    fn from_u32(v: u32) -> Self;
    /// Converts an `f64`, rounding to nearest for `f32`.
    fn from_f64(v: f64) -> Self;
    /// Converts to `f64` (exact).
    fn to_f64(self) -> f64;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const TWO: Self = 2.0;
            const BAILOUT_SQR: Self = 4.0;
            const EPSILON: Self = <$t>::EPSILON;
            #[inline(always)]
            fn from_u32(v: u32) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

impl_real!(f32);
impl_real!(f64);

#[cfg(test)]
mod tests {
    use super::*;

    fn constants<F: Real>() {
        assert_eq!(F::ZERO.to_f64(), 0.0);
        assert_eq!(F::ONE.to_f64(), 1.0);
        assert_eq!(F::TWO.to_f64(), 2.0);
        assert_eq!(F::BAILOUT_SQR.to_f64(), 4.0);
        // EPSILON is the gap above 1: 1 + ε ≠ 1, 1 + ε/2 rounds back to 1 (ties to even).
        assert!(F::ONE + F::EPSILON > F::ONE);
        assert_eq!(F::ONE + F::EPSILON / F::TWO, F::ONE);
    }

    #[test]
    fn constants_f32_f64() {
        constants::<f32>();
        constants::<f64>();
        assert_eq!(<f32 as Real>::EPSILON.to_f64(), 2.0_f64.powi(-23));
        assert_eq!(<f64 as Real>::EPSILON, 2.0_f64.powi(-52));
    }

    #[test]
    fn conversions() {
        // u32 → f32 is exact up to 2^24; 2^24 + 1 rounds to even (2^24).
        assert_eq!(<f32 as Real>::from_u32(16_777_215), 16_777_215.0);
        assert_eq!(<f32 as Real>::from_u32(16_777_217), 16_777_216.0);
        assert_eq!(<f64 as Real>::from_u32(u32::MAX), 4_294_967_295.0);
        // f64 → f32 rounds to nearest; f32 → f64 is exact.
        assert_eq!(<f32 as Real>::from_f64(0.1), 0.1_f32);
        assert_eq!(<f32 as Real>::from_f64(1.0 + 2.0_f64.powi(-30)), 1.0);
        assert_eq!(0.1_f32.to_f64(), f64::from(0.1_f32));
        assert_eq!(<f64 as Real>::from_f64(0.1), 0.1);
    }
}
