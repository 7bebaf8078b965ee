//! Complex numbers over [`Real`] (`f32` or `f64`).

use crate::Real;
use core::ops::{Add, Mul, Neg, Sub};

/// A complex number `re + im·i`. `#[repr(C)]`: two consecutive scalars, so it can be passed to
/// kernels by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Complex<F> {
    /// Real part.
    pub re: F,
    /// Imaginary part.
    pub im: F,
}

impl<F: Real> Complex<F> {
    /// `0 + 0i`.
    pub const ZERO: Self = Self {
        re: F::ZERO,
        im: F::ZERO,
    };

    /// Creates `re + im·i`.
    #[inline(always)]
    pub const fn new(re: F, im: F) -> Self {
        Self { re, im }
    }

    /// The squared modulus `re² + im²` (no square root, so it is exact up to one rounding per
    /// operation and identical on CPU and GPU).
    ///
    /// ```
    /// # use common::Complex;
    /// assert_eq!(Complex::new(3.0_f64, 4.0).norm_sqr(), 25.0);
    /// ```
    #[inline(always)]
    pub fn norm_sqr(self) -> F {
        self.re * self.re + self.im * self.im
    }

    /// The complex conjugate `re - im·i`.
    #[inline(always)]
    pub fn conj(self) -> Self {
        Self::new(self.re, -self.im)
    }

    /// `self²`, computed as `(re² - im²) + (2·re·im)i`.
    ///
    /// ```
    /// # use common::Complex;
    /// // (1 + 2i)² = 1 + 4i + 4i² = -3 + 4i
    /// assert_eq!(Complex::new(1.0_f32, 2.0).square(), Complex::new(-3.0, 4.0));
    /// ```
    #[inline(always)]
    pub fn square(self) -> Self {
        Self::new(
            self.re * self.re - self.im * self.im,
            F::TWO * self.re * self.im,
        )
    }

    /// Converts each part to another precision (rounding to nearest when narrowing).
    #[inline(always)]
    pub fn cast<G: Real>(self) -> Complex<G> {
        Complex::new(G::from_f64(self.re.to_f64()), G::from_f64(self.im.to_f64()))
    }
}

impl<F: Real> Add for Complex<F> {
    type Output = Self;
    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self::new(self.re + rhs.re, self.im + rhs.im)
    }
}

impl<F: Real> Sub for Complex<F> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, rhs: Self) -> Self {
        Self::new(self.re - rhs.re, self.im - rhs.im)
    }
}

impl<F: Real> Mul for Complex<F> {
    type Output = Self;
    /// `(a + bi)(c + di) = (ac - bd) + (ad + bc)i`.
    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        Self::new(
            self.re * rhs.re - self.im * rhs.im,
            self.re * rhs.im + self.im * rhs.re,
        )
    }
}

impl<F: Real> Neg for Complex<F> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Self::new(-self.re, -self.im)
    }
}
