//! Complex numbers over [`Real`] (`f32` or `f64`).

use crate::Real;
use core::ops::{Add, Mul, Neg, Sub};

/// A complex number `re + im·i`. `#[repr(C)]`: two consecutive scalars, so it can be passed to
/// kernels by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, cuda_std::DeviceCopy)]
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

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    #[test]
    fn constructors_and_zero() {
        assert_eq!(Complex::<f64>::ZERO, c(0.0, 0.0));
        assert_eq!(Complex::<f32>::default(), Complex::new(0.0_f32, 0.0));
        let z = Complex::new(1.5_f32, -2.5);
        assert_eq!((z.re, z.im), (1.5, -2.5));
    }

    #[test]
    fn arithmetic_by_hand() {
        let a = c(1.0, 2.0);
        let b = c(3.0, 4.0);
        assert_eq!(a + b, c(4.0, 6.0));
        assert_eq!(a - b, c(-2.0, -2.0));
        // (1 + 2i)(3 + 4i) = 3 + 4i + 6i + 8i² = -5 + 10i
        assert_eq!(a * b, c(-5.0, 10.0));
        assert_eq!(-a, c(-1.0, -2.0));
        // i·i = -1
        assert_eq!(c(0.0, 1.0) * c(0.0, 1.0), c(-1.0, 0.0));
        // |3 - 4i|² = 25
        assert_eq!(c(3.0, -4.0).norm_sqr(), 25.0);
        // (2 - 3i)² = 4 - 12i + 9i² = -5 - 12i
        assert_eq!(c(2.0, -3.0).square(), c(-5.0, -12.0));
    }

    #[test]
    fn identities() {
        let zs = [
            c(1.0, 2.0),
            c(-0.5, 0.25),
            c(3.0, -7.0),
            c(0.0, 0.0),
            c(-1.25, -1.5),
        ];
        for a in zs {
            // Additive identity, inverse and multiplicative identity (exact).
            assert_eq!(a + Complex::ZERO, a);
            assert_eq!(a - a, Complex::ZERO);
            assert_eq!(a + (-a), Complex::ZERO);
            assert_eq!(a * c(1.0, 0.0), a);
            assert_eq!(a * Complex::ZERO, Complex::ZERO);
            // Conjugate: involution, z·conj z = |z|² (exact for these small dyadic values).
            assert_eq!(a.conj().conj(), a);
            assert_eq!(a.conj(), c(a.re, -a.im));
            assert_eq!(a * a.conj(), c(a.norm_sqr(), 0.0));
            assert_eq!(a.conj().norm_sqr(), a.norm_sqr());
            for b in zs {
                // Commutativity is exact in IEEE arithmetic.
                assert_eq!(a + b, b + a);
                assert_eq!(a * b, b * a);
                assert_eq!(a - b, -(b - a));
                // conj(ab) = conj(a)·conj(b), conj(a + b) = conj a + conj b.
                assert_eq!((a * b).conj(), a.conj() * b.conj());
                assert_eq!((a + b).conj(), a.conj() + b.conj());
            }
        }
    }

    #[test]
    fn square_equals_self_times_self_bitwise() {
        // square: im = (2·re)·im; mul: im = re·im + im·re. Doubling is exact (no overflow
        // here), so both are 2·fl(re·im): identical bits, even for non-dyadic inputs.
        let vals = [0.1, -0.7, 1.0 / 3.0, 2.5e-7, -1e-3, 123.456, 0.0];
        for re in vals {
            for im in vals {
                let z = c(re, im);
                assert_eq!(z.square(), z * z, "z = {z:?}");
                let z32 = z.cast::<f32>();
                assert_eq!(z32.square(), z32 * z32, "z = {z32:?}");
            }
        }
    }

    #[test]
    fn cast_rounds_to_nearest() {
        let z = c(0.1, -1.0 / 3.0);
        let z32 = z.cast::<f32>();
        assert_eq!(z32, Complex::new(0.1_f32, -1.0_f32 / 3.0));
        // Widening is exact.
        assert_eq!(
            z32.cast::<f64>(),
            c(f64::from(0.1_f32), f64::from(-1.0_f32 / 3.0))
        );
        assert_eq!(z.cast::<f64>(), z);
    }
}
