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
