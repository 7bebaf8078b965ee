//! [`Real`]: the floating-point operations the shared code needs, implemented for `f32` and
//! `f64` with IEEE-754 correctly rounded operations only (basic arithmetic, fused multiply-add,
//! square root), so that CPU and GPU agree bit for bit.

use core::ops::{Add, Div, Mul, Neg, Sub};
use cuda_std::math;

/// A floating-point scalar (`f32` or `f64`) usable by the shared Mandelbrot code.
///
/// Only correctly rounded IEEE-754 operations (`+ - * /`, fused multiply-add, square root,
/// comparisons, conversions) are required: they give the same bits on the CPU and the GPU,
/// which is what makes results bit-identical.
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
    /// How far below 1 the multiplier `|μ|` of the main cardioid's fixed point or the period-2
    /// bulb's cycle must be for the escape loop to take a point as inside without iterating:
    /// see [`crate::escape::in_main_cardioid`]. `1e-3` for `f32`, `1e-7` for `f64`.
    const MULTIPLIER_MARGIN: f64;
    /// The wider margin [`crate::escape::in_main_cardioid`] keeps near the cusp `c = 1/4`
    /// (where `|1 − 4c| <` [`crate::escape::CUSP_W_MIN`]): `0.05` for `f32`, `1e-4` for `f64`.
    const CUSP_MULTIPLIER_MARGIN: f64;
    /// The longest chunk for which the escape loop may test for escape at the chunk's end
    /// only ([`crate::escape::escape_chunked`]): `0` for `f32` (never), `16` for `f64`.
    const END_TEST_MAX_CHUNK: u32;
    /// Converts a `u32` (a pixel coordinate); exact below 2^24 for `f32`, always for `f64`.
    fn from_u32(v: u32) -> Self;
    /// Converts an `f64`, rounding to nearest for `f32`.
    fn from_f64(v: f64) -> Self;
    /// Converts to `f64` (exact).
    fn to_f64(self) -> f64;
    /// Converts to `f32` (exact for `f32`, rounding to nearest for `f64`).
    fn to_f32(self) -> f32;
    /// `self·a + b` with a single rounding (fused multiply-add): one `fma.rn` on the GPU, and
    /// the same bits on the CPU, since a fused multiply-add is correctly rounded by definition.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The correctly rounded square root.
    fn sqrt(self) -> Self;
    /// A key that orders non-negative numbers: `0 ≤ x < y` implies
    /// `x.order_key() ≤ y.order_key()`, and NaN and +∞ have keys at least as large as any
    /// finite number's. `f32`: all the bits (then `x < y` implies `key(x) < key(y)`); `f64`:
    /// the high 32 bits (sign, exponent and 20 significand bits), which an integer unit
    /// compares without touching the double-precision pipeline.
    fn order_key(self) -> u32;
    /// The smallest [`order_key`](Real::order_key) of any number greater than `self` (a
    /// non-negative finite number): `x > self` implies `x.order_key() ≥ self.key_above()`.
    fn key_above(self) -> u32;
    /// `2·self` for the escape loop's chunks, and a key saying whether it is exact: the first
    /// value is exactly `self + self` whenever `self` is finite, `|self| < 2^1022`, and the
    /// key is below `0x7ff0_0000` (the largest [`key_above`](Real::key_above) of a finite
    /// number). `f32`: `(self + self, 0)`. `f64` on the GPU: integer instructions only — the
    /// exponent field goes up by one (exact for normal numbers); zero and subnormal numbers
    /// (exponent field 0) get the key `0xfff0_0000`, so the caller recomputes with
    /// `self + self`. (The GPU's double-precision pipeline is the bottleneck of the `f64`
    /// loop, and integer instructions issue beside it.) `f64` on the host: `(self + self, 0)`.
    fn double_keyed(self) -> (Self, u32);
    /// Whether `self` and `other` have the same bits (an integer comparison; unlike `==`,
    /// `+0 ≠ -0` and a NaN equals the same NaN).
    fn same_bits(self, other: Self) -> bool;
}

macro_rules! impl_real {
    ($t:ty, $margin:expr, $cusp_margin:expr, $end_test:expr, $mul_add:path, $sqrt:path, $key:expr, $double:expr) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const TWO: Self = 2.0;
            const BAILOUT_SQR: Self = 4.0;
            const EPSILON: Self = <$t>::EPSILON;
            const MULTIPLIER_MARGIN: f64 = $margin;
            const CUSP_MULTIPLIER_MARGIN: f64 = $cusp_margin;
            const END_TEST_MAX_CHUNK: u32 = $end_test;
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
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self as f32
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $mul_add(self, a, b)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $sqrt(self)
            }
            #[inline(always)]
            fn order_key(self) -> u32 {
                $key(self)
            }
            #[inline(always)]
            fn key_above(self) -> u32 {
                // Non-negative finite: the next number up has the bits plus one, and keys are
                // monotonic in the bits.
                $key(<$t>::from_bits(self.to_bits() + 1))
            }
            #[inline(always)]
            fn double_keyed(self) -> (Self, u32) {
                $double(self)
            }
            #[inline(always)]
            fn same_bits(self, other: Self) -> bool {
                self.to_bits() == other.to_bits()
            }
        }
    };
}

impl_real!(
    f32,
    1e-3,
    0.05,
    0,
    math::fmaf,
    math::sqrtf,
    |x: f32| x.to_bits(),
    |x: f32| (x + x, 0)
);
impl_real!(
    f64,
    1e-7,
    1e-4,
    16,
    math::fma,
    math::sqrt,
    |x: f64| (x.to_bits() >> 32) as u32,
    double_f64_keyed
);

/// `2·x` for `f64` with integer instructions only, and a key: the result is exactly `x + x`
/// when the key is below `0x7ff0_0000` and `|x| < 2^1022`. Doubling a normal binary
/// floating-point number adds one to its exponent field, exactly (below the overflow); the key
/// is the exponent field minus one, in the high bits, which wraps around to `0xfff0_0000` for
/// zero and subnormal numbers (exponent field 0), where adding to the exponent field is wrong.
/// Only the high word changes: one integer addition.
///
/// Used on the GPU, where it takes a double-precision instruction off the bottleneck pipeline,
/// and in this crate's unit tests (so that the escape-loop tests exercise it); elsewhere on
/// the host `x + x` (key 0) is faster (no moves between float and integer registers). Both are
/// exact, so the results are the same bits.
#[inline(always)]
pub(crate) fn double_f64_keyed(x: f64) -> (f64, u32) {
    #[cfg(not(any(target_arch = "nvptx64", test)))]
    return (x + x, 0);
    #[cfg(any(target_arch = "nvptx64", test))]
    return double_f64_bits(x);
}

/// The integer doubling of [`double_f64_keyed`].
#[cfg(any(target_arch = "nvptx64", test))]
#[inline(always)]
fn double_f64_bits(x: f64) -> (f64, u32) {
    const EXPONENT_FIELD: u32 = 0x7ff0_0000;
    const EXPONENT_ONE: u32 = 0x0010_0000;
    let bits = x.to_bits();
    let hi = (bits >> 32) as u32;
    let doubled = (u64::from(hi.wrapping_add(EXPONENT_ONE)) << 32) | (bits & 0xffff_ffff);
    let key = (hi & EXPONENT_FIELD).wrapping_sub(EXPONENT_ONE);
    (f64::from_bits(doubled), key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_doubling_is_exact_or_flagged() {
        extern crate std;
        let mut values = std::vec![
            0.0,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 2.0,
            f64::MIN_POSITIVE - f64::from_bits(1), // the largest subnormal
            f64::from_bits(1),                     // the smallest subnormal
            1.0,
            1.5,
            2.0 - f64::EPSILON,
            256.0,
            0.1,
            1e300,
            2f64.powi(1021),
        ];
        // A deterministic spread of magnitudes and significands (xorshift).
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
            values.push(f64::from_bits(state >> 12)); // subnormals
            values.push(f64::from_bits(state >> 2) % 300.0); // the escape loop's range
        }
        let mut flagged = 0;
        for x in values {
            for x in [x, -x] {
                let (d, key) = double_f64_bits(x);
                if key >= 0x7ff0_0000 {
                    flagged += 1;
                    // Only zeros, subnormals, ∞ and NaN are flagged.
                    assert!(x.abs() < f64::MIN_POSITIVE || !x.is_finite(), "x = {x:e}");
                } else if x.abs() < 2f64.powi(1022) {
                    assert_eq!(d.to_bits(), (x + x).to_bits(), "x = {x:e}");
                }
                if x.abs() < f64::MIN_POSITIVE {
                    assert_eq!(key, 0xfff0_0000, "x = {x:e}");
                }
            }
        }
        assert!(flagged > 100_000, "{flagged}");
    }

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
        assert_eq!(Real::to_f32(0.1_f64), 0.1_f32);
        assert_eq!(Real::to_f32(0.1_f32), 0.1_f32);
    }

    #[test]
    fn mul_add_and_sqrt() {
        // 0.1·10 - 1: the rounded product is exactly 1 (so the unfused result is 0), the fused
        // result is the rounding error of fl(0.1) times 10: 2⁻⁵⁴ in f64.
        assert_eq!(0.1_f64 * 10.0 - 1.0, 0.0);
        assert_eq!(Real::mul_add(0.1_f64, 10.0, -1.0), 2f64.powi(-54));
        assert_eq!(0.1_f32 * 10.0 - 1.0, 0.0);
        assert_eq!(Real::mul_add(0.1_f32, 10.0, -1.0), 2f32.powi(-26));
        assert_eq!(Real::sqrt(2.25_f64), 1.5);
        assert_eq!(Real::sqrt(6.25_f32), 2.5);
    }

    #[test]
    fn order_keys_order_non_negative_numbers() {
        fn check<F: Real>(values: &[F]) {
            for &x in values {
                for &y in values {
                    if x < y {
                        assert!(x.order_key() <= y.order_key(), "{x:?} < {y:?}");
                    }
                    if x > y {
                        assert!(x.order_key() >= y.key_above(), "{x:?} > {y:?}");
                    }
                }
            }
        }
        let v64 = [
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            3.999_999_999,
            4.0,
            4.0 + 2.0_f64.powi(-50),
            4.000_001,
            65_536.0,
            1e300,
            f64::INFINITY,
        ];
        check(&v64);
        check(&v64.map(|v| v as f32));
        // f32 keys are exact: only numbers above 4 reach 4's key_above; f64 keys are coarse.
        assert_eq!(4.0_f32.key_above(), 4.0_f32.order_key() + 1);
        assert_eq!(4.0_f64.key_above(), 0x4010_0000);
        assert!(f32::NAN.order_key() >= 4.0_f32.key_above());
        assert!(f64::NAN.order_key() >= 4.0_f64.key_above());
    }
}
