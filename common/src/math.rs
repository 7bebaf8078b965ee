//! The one place that picks how floating-point operations beyond `+ - * /` are computed
//! (glam style: the rest of the crate calls these functions and never a backend directly).
//!
//! Every function here is either **correctly rounded** by definition (fused multiply-add,
//! square root, floor), so any backend gives the same bits, or comes from `libm` on every
//! target (`log2f`), which is bit-identical between the CPU and the GPU (BRIEF, verified on an
//! H200 over 4,194,304 inputs). std's `log2` (glibc) is *not* used: it differs from `libm`.
//!
//! Backends:
//! - `nvptx64`: `core::f32::math` / `core::f64::math` (feature `core_float_math`), which compile
//!   to single PTX instructions: `fma.rn`, `sqrt.rn`, `cvt.rmi` (IEEE-754 correctly rounded,
//!   PTX ISA §9.7.3).
//! - host with the `std` feature: std's `mul_add` / `sqrt` / `floor` (LLVM intrinsics: one
//!   instruction where the CPU has it, e.g. `vfmadd` inside code compiled with the `fma` target
//!   feature, else a call to the C library's correctly rounded `fma`).
//! - host without `std`: `libm` (pure Rust, correctly rounded `fma`/`sqrt`, slower).

#[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
extern crate std;

/// `a·b + c` with a single rounding (fused multiply-add), `f32`.
#[inline(always)]
pub(crate) fn mul_add_f32(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return core::f32::math::mul_add(a, b, c);
    #[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
    return a.mul_add(b, c);
    #[cfg(all(not(feature = "std"), not(target_arch = "nvptx64")))]
    return libm::fmaf(a, b, c);
}

/// `a·b + c` with a single rounding (fused multiply-add), `f64`.
#[inline(always)]
pub(crate) fn mul_add_f64(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    return core::f64::math::mul_add(a, b, c);
    #[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
    return a.mul_add(b, c);
    #[cfg(all(not(feature = "std"), not(target_arch = "nvptx64")))]
    return libm::fma(a, b, c);
}

/// Correctly rounded square root, `f32`.
#[inline(always)]
pub(crate) fn sqrt_f32(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return core::f32::math::sqrt(x);
    #[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
    return x.sqrt();
    #[cfg(all(not(feature = "std"), not(target_arch = "nvptx64")))]
    return libm::sqrtf(x);
}

/// Correctly rounded square root, `f64`.
#[inline(always)]
pub(crate) fn sqrt_f64(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    return core::f64::math::sqrt(x);
    #[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
    return x.sqrt();
    #[cfg(all(not(feature = "std"), not(target_arch = "nvptx64")))]
    return libm::sqrt(x);
}

/// Largest integer not above `x` (exact), `f32`.
#[inline(always)]
pub(crate) fn floor_f32(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return core::f32::math::floor(x);
    #[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
    return x.floor();
    #[cfg(all(not(feature = "std"), not(target_arch = "nvptx64")))]
    return libm::floorf(x);
}

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

/// Base-2 logarithm, `f32`: `libm` on every target (not correctly rounded, but the same code
/// and so the same bits on the CPU and the GPU).
#[inline(always)]
pub(crate) fn log2_f32(x: f32) -> f32 {
    libm::log2f(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_multiply_add_rounds_once() {
        // (1 + 2⁻²⁷)(1 - 2⁻²⁷) = 1 - 2⁻⁵⁴: the product alone rounds to 1 in f64, so
        // fl(fl(a·b) - 1) = 0, while the fused result keeps -2⁻⁵⁴ exactly.
        let e = 2f64.powi(-27);
        assert_eq!((1.0 + e) * (1.0 - e) - 1.0, 0.0);
        assert_eq!(mul_add_f64(1.0 + e, 1.0 - e, -1.0), -(2f64.powi(-54)));
        let e = 2f32.powi(-13);
        assert_eq!((1.0 + e) * (1.0 - e) - 1.0, 0.0);
        assert_eq!(mul_add_f32(1.0 + e, 1.0 - e, -1.0), -(2f32.powi(-26)));
        // Exact cases.
        assert_eq!(mul_add_f64(3.0, 4.0, 5.0), 17.0);
        assert_eq!(mul_add_f32(-1.5, 2.0, 0.25), -2.75);
    }

    #[test]
    fn backends_agree_with_libm() {
        // Whatever backend is compiled in, it must give libm's correctly rounded bits.
        let vals = [0.1, -0.7, 1.0 / 3.0, 2.5e-7, 123.456, -1e-3, 7.0];
        for a in vals {
            for b in vals {
                for c in vals {
                    assert_eq!(mul_add_f64(a, b, c).to_bits(), libm::fma(a, b, c).to_bits());
                    let (a, b, c) = (a as f32, b as f32, c as f32);
                    assert_eq!(
                        mul_add_f32(a, b, c).to_bits(),
                        libm::fmaf(a, b, c).to_bits()
                    );
                }
            }
            assert_eq!(sqrt_f64(a.abs()).to_bits(), libm::sqrt(a.abs()).to_bits());
            let a32 = a as f32;
            assert_eq!(
                sqrt_f32(a32.abs()).to_bits(),
                libm::sqrtf(a32.abs()).to_bits()
            );
            assert_eq!(floor_f32(a32).to_bits(), libm::floorf(a32).to_bits());
        }
    }

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

    #[test]
    fn sqrt_floor_log2_by_hand() {
        assert_eq!(sqrt_f32(16.0), 4.0);
        assert_eq!(sqrt_f64(0.25), 0.5);
        assert_eq!(floor_f32(-0.5), -1.0);
        assert_eq!(floor_f32(2.999), 2.0);
        assert_eq!(floor_f32(3.0), 3.0);
        // Powers of two have exact base-2 logarithms.
        assert_eq!(log2_f32(65536.0), 16.0);
        assert_eq!(log2_f32(0.125), -3.0);
        assert_eq!(log2_f32(1.0), 0.0);
    }
}
