//! Rust-CUDA's float traits: [`GpuFloat`] (std's `f32`/`f64` methods, which `no_std` code
//! lacks: `x.log10()`, `x.powi(3)`, `x.sin_cos()`) and [`FloatExt`] (CUDA C's extra functions:
//! `cospi`, `sinpi`, the error functions, `frexp`, `ldexp`, `lgamma`, Bessel functions).
//!
//! Both are implemented with [`crate::math`], so a kernel and its CPU reference get the same
//! bits: `libm` on both sides by default (libdevice in GPU code built with `cuda_builder`'s
//! `fast_math(true)`, for the functions `math` routes there). Functions `libm` lacks are
//! composed from `libm` functions and exact operations, each documented with its method;
//! they are deterministic (the same bits on the CPU and the GPU) but not correctly rounded.
//!
//! **Calling them.** Inherent methods win over trait methods in Rust, so where a type has an
//! inherent method of the same name, `x.sin()` calls that one:
//! - On the host, std's `f32::sin` & co. are inherent methods whenever `std` is linked (also
//!   in a `no_std` kernels crate built for the CPU emulator): they call the platform's libm
//!   and can differ from the GPU in the last bit. Write `GpuFloat::sin(x)` (or
//!   `<f32 as GpuFloat>::sin(x)`) where the bits must match; the method form still compiles
//!   and is close.
//! - On the GPU, `core`'s `floor`, `ceil`, `round`, `trunc`, `fract`, `mul_add`, `sqrt`,
//!   `powi`, `cbrt`, `div_euclid`, `rem_euclid` are unstable inherent methods (feature
//!   `core_float_math`): without that feature the trait's method is called (rustc warns
//!   `unstable_name_collisions`); with it, `core`'s.
//!
//! **The erf family that `libm` lacks** — [`FloatExt::inv_error_function`] (CUDA C's
//! `erfinv`), [`inv_complementary_error_function`](FloatExt::inv_complementary_error_function)
//! (`erfcinv`), [`scaled_complementary_error_function`](FloatExt::scaled_complementary_error_function)
//! (`erfcx`) and [`inv_norm_cdf`](FloatExt::inv_norm_cdf) (`normcdfinv`) — is computed in `f64`
//! (the `f32` versions round that result once):
//! - `erfcx(x) = e^(x²)·erfc(x)`: below `x = 12`, `exp(x²)·erfc(x)` with `x²` split into
//!   `hi + lo` by an FMA and `exp(hi + lo) = exp(hi)·(1 + lo)`, so the large factor keeps its
//!   relative accuracy; from 12 on, 12 terms of the asymptotic series of `erfc` (DLMF
//!   7.12.1), which neither overflows nor underflows. For `x < 0` the product is
//!   `2·e^(x²) - erfcx(-x)` (`erfc(x)` is in `[1, 2]` there: no cancellation) and overflows
//!   to `+∞` where that does, as CUDA C's does.
//! - `erfinv`, `erfcinv`: the starting value of S. Winitzki's closed form ("A handy
//!   approximation for the error function and its inverse", 2008, with his `a = 0.147`;
//!   relative error below `2.3e-3`, measured with mpmath), then two Halley steps (cubic
//!   convergence: `2.3e-3` becomes about `1e-8`, then below `1e-20`). For `|x| <= 1/2` the
//!   steps solve `erf(y) = x`; in the tails, with `q = 1 - |x| < 1/2` (exact by Sterbenz's
//!   lemma, as are `1 - q` and `2 - q` in `erfcinv`), they solve `ln erfc(y) = ln q`, through
//!   `erfcx` below `q = 1e-300` so that the residual keeps its accuracy where `erfc(y)`
//!   would be subnormal (down to `erfcinv(5e-324) = 27.2`). The cost: at most two `erf`
//!   or `erfc`, two `exp`, three `log` and one `log1p` calls.
//! - `normcdfinv(p) = -√2·erfcinv(2p)` (`2p` is exact), with `√2` as the sum of two doubles.
//!
//! Their largest errors, measured against mpmath at 60 digits over about 50,000 `f64` and
//! 37,000 `f32` arguments (uniform over each domain, log-uniform toward 0, 1, 2 and ±∞,
//! subnormals included): `f64` `erfinv` 1.8 ulp, `erfcinv` 1.9 ulp, `erfcx` 3.2 ulp,
//! `normcdfinv` 2.8 ulp; every `f32` result was correctly rounded (below 0.5 ulp). Not a
//! proof: other arguments may do slightly worse.

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// std's float methods for `f32` and `f64` in `no_std` code (Rust-CUDA's `GpuFloat`), with
/// the same bits on the CPU and the GPU (see the [module docs](self) for how to call them).
/// Angles are radians. Each method names the [`crate::math`] function it calls (`f32`
/// name first); exact operations (`floor`, `abs`, `copysign`, `sqrt`, `mul_add` ...) are one
/// PTX instruction on the GPU.
pub trait GpuFloat: Copy + PartialOrd + sealed::Sealed {
    /// Largest integer `<= self` (`floorf` / `floor`).
    #[must_use]
    fn floor(self) -> Self;
    /// Smallest integer `>= self` (`ceilf` / `ceil`).
    #[must_use]
    fn ceil(self) -> Self;
    /// Nearest integer, ties away from zero (`roundf` / `round`).
    #[must_use]
    fn round(self) -> Self;
    /// Integer part, rounded toward zero (`truncf` / `trunc`).
    #[must_use]
    fn trunc(self) -> Self;
    /// `self - self.trunc()` (std's definition; the sign of `self`).
    #[must_use]
    fn fract(self) -> Self;
    /// Absolute value (`fabsf` / `fabs`).
    #[must_use]
    fn abs(self) -> Self;
    /// `1.0` for positive values, `+0.0` and `+∞`; `-1.0` for negative ones, `-0.0` and `-∞`;
    /// NaN for NaN (std's definition).
    #[must_use]
    fn signum(self) -> Self;
    /// `self`'s magnitude with `sign`'s sign (`copysignf` / `copysign`).
    #[must_use]
    fn copysign(self, sign: Self) -> Self;
    /// `self·a + b` with one rounding (`fmaf` / `fma`; PTX `fma.rn`).
    #[must_use]
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// Euclidean division: the integer `n` with `self = n·rhs + self.rem_euclid(rhs)`
    /// (std's definition, with the exact `fmodf` / `fmod` for `%`).
    #[must_use]
    fn div_euclid(self, rhs: Self) -> Self;
    /// The least non-negative remainder of `self` modulo `rhs` (std's definition, with the
    /// exact `fmodf` / `fmod`); it can round to `rhs.abs()` for tiny negative `self`.
    #[must_use]
    fn rem_euclid(self, rhs: Self) -> Self;
    /// `self^n` by binary exponentiation: square-and-multiply from the lowest bit of `|n|`,
    /// then one division for `n < 0` — the algorithm of compiler-rt's `__powisf2` /
    /// `__powidf2`, which std's `powi` calls on x86-64 for a non-constant `n`. Not correctly
    /// rounded (about `log2|n|` roundings), but the same bits everywhere.
    #[must_use]
    fn powi(self, n: i32) -> Self;
    /// `self^n` (`powf` / `pow`).
    #[must_use]
    fn powf(self, n: Self) -> Self;
    /// Square root, correctly rounded (`sqrtf` / `sqrt`).
    #[must_use]
    fn sqrt(self) -> Self;
    /// `e^self` (`expf` / `exp`).
    #[must_use]
    fn exp(self) -> Self;
    /// `2^self` (`exp2f` / `exp2`).
    #[must_use]
    fn exp2(self) -> Self;
    /// Natural logarithm (`logf` / `log`).
    #[must_use]
    fn ln(self) -> Self;
    /// Logarithm in base `base`: `self.ln() / base.ln()` (std's definition).
    #[must_use]
    fn log(self, base: Self) -> Self;
    /// Base-2 logarithm (`log2f` / `log2`).
    #[must_use]
    fn log2(self) -> Self;
    /// Base-10 logarithm (`log10f` / `log10`).
    #[must_use]
    fn log10(self) -> Self;
    /// Cube root (`cbrtf` / `cbrt`).
    #[must_use]
    fn cbrt(self) -> Self;
    /// `sqrt(self² + other²)` without undue overflow (`hypotf` / `hypot`).
    #[must_use]
    fn hypot(self, other: Self) -> Self;
    /// Sine (`sinf` / `sin`).
    #[must_use]
    fn sin(self) -> Self;
    /// Cosine (`cosf` / `cos`).
    #[must_use]
    fn cos(self) -> Self;
    /// Tangent (`tanf` / `tan`).
    #[must_use]
    fn tan(self) -> Self;
    /// Arcsine, in `[-π/2, π/2]` (`asinf` / `asin`).
    #[must_use]
    fn asin(self) -> Self;
    /// Arccosine, in `[0, π]` (`acosf` / `acos`).
    #[must_use]
    fn acos(self) -> Self;
    /// Arctangent, in `[-π/2, π/2]` (`atanf` / `atan`).
    #[must_use]
    fn atan(self) -> Self;
    /// The angle of the point `(other, self)`, in `[-π, π]`: `self` is `y`, `other` is `x`,
    /// as in std (`atan2f(self, other)` / `atan2`).
    #[must_use]
    fn atan2(self, other: Self) -> Self;
    /// `(sin, cos)` in one call (`sincosf` / `sincos`, `libm`'s own routine in every backend).
    #[must_use]
    fn sin_cos(self) -> (Self, Self);
    /// `e^self - 1`, accurate near 0 (`expm1f` / `expm1`).
    #[must_use]
    fn exp_m1(self) -> Self;
    /// `ln(1 + self)`, accurate near 0 (`log1pf` / `log1p`).
    #[must_use]
    fn ln_1p(self) -> Self;
    /// Hyperbolic sine (`sinhf` / `sinh`).
    #[must_use]
    fn sinh(self) -> Self;
    /// Hyperbolic cosine (`coshf` / `cosh`).
    #[must_use]
    fn cosh(self) -> Self;
    /// Hyperbolic tangent (`tanhf` / `tanh`).
    #[must_use]
    fn tanh(self) -> Self;
    /// Inverse hyperbolic sine (`asinhf` / `asinh`).
    #[must_use]
    fn asinh(self) -> Self;
    /// Inverse hyperbolic cosine, `self >= 1` (`acoshf` / `acosh`).
    #[must_use]
    fn acosh(self) -> Self;
    /// Inverse hyperbolic tangent, `|self| <= 1` (`atanhf` / `atanh`).
    #[must_use]
    fn atanh(self) -> Self;
}

/// CUDA C's extra math functions for `f32` and `f64` (Rust-CUDA's `FloatExt`, its method
/// names, and `inv_error_function` for CUDA C's `erfinv`), with the same bits on the CPU and
/// the GPU. Each method names how it is computed; the [module docs](self) describe the erf
/// family's inverses and `erfcx`.
pub trait FloatExt: Sized + sealed::Sealed {
    /// `cos(π·self)`, with the multiple of π reduced exactly (see [`sinpi`](Self::sinpi)).
    #[must_use]
    fn cospi(self) -> Self;
    /// The error function `2/√π ∫₀^self e^(-t²) dt` (`erff` / `erf`).
    #[must_use]
    fn error_function(self) -> Self;
    /// `1 - erf(self)`, accurate where `erf` is near 1 (`erfcf` / `erfc`).
    #[must_use]
    fn complementary_error_function(self) -> Self;
    /// The inverse error function (CUDA C's `erfinv`): `y` with `erf(y) = self`, for `self`
    /// in `[-1, 1]`; `±∞` at `±1`, NaN outside and for NaN; odd, with `erfinv(±0) = ±0`.
    /// Winitzki's start and two Halley steps, in `f64` (see the [module docs](self));
    /// measured error: 1.8 ulp (`f64`), correctly rounded on every `f32` tried.
    #[must_use]
    fn inv_error_function(self) -> Self;
    /// The inverse complementary error function (CUDA C's `erfcinv`): `y` with
    /// `erfc(y) = self`, for `self` in `[0, 2]`; `+∞` at 0, `-∞` at 2, `+0` at 1, NaN outside
    /// and for NaN. As [`inv_error_function`](Self::inv_error_function) (`erfcinv(q)` is
    /// `erfinv(1 - q)` for `q` in `[1/2, 3/2]`, bit for bit), accurate in the tails down to
    /// the smallest subnormal; measured error: 1.9 ulp (`f64`), correctly rounded on every
    /// `f32` tried.
    #[must_use]
    fn inv_complementary_error_function(self) -> Self;
    /// The scaled complementary error function (CUDA C's `erfcx`), `e^(self²)·erfc(self)`:
    /// `~ 1/(self·√π)` for large `self`, without overflow or underflow on the way (0 at
    /// `+∞`); for negative `self`, `2·e^(self²) - erfcx(-self)`, `+∞` where that overflows
    /// (below about -26.6 for `f64`, -9.4 for `f32`); NaN for NaN. Measured error: 3.2 ulp
    /// (`f64`), correctly rounded on every `f32` tried (see the [module docs](self)).
    #[must_use]
    fn scaled_complementary_error_function(self) -> Self;
    /// The standard normal distribution's quantile (CUDA C's `normcdfinv`),
    /// `Φ⁻¹(self) = -√2·erfcinv(2·self)`, for `self` in `[0, 1]`: `-∞` at 0, `+∞` at 1, `+0`
    /// at 1/2, NaN outside and for NaN. Measured error: 2.8 ulp (`f64`), correctly rounded
    /// on every `f32` tried.
    #[must_use]
    fn inv_norm_cdf(self) -> Self;
    /// `(m, e)` with `self = m·2^e` and `|m|` in `[0.5, 1)`; `(self, 0)` for 0, ∞ and NaN
    /// (`frexpf` / `frexp`).
    #[must_use]
    fn frexp(self) -> (Self, i32);
    /// The unbiased exponent, `floor(log2|self|)` (`ilogbf` / `ilogb`: `i32::MIN` for 0 and
    /// NaN, `i32::MAX` for ±∞).
    #[must_use]
    fn unbiased_exp(self) -> i32;
    /// Bessel function of the first kind, order 0 (`j0f` / `j0`).
    #[must_use]
    fn j0(self) -> Self;
    /// Bessel function of the first kind, order 1 (`j1f` / `j1`).
    #[must_use]
    fn j1(self) -> Self;
    /// Bessel function of the first kind, order `order` (`jnf` / `jn`).
    #[must_use]
    fn jn(self, order: i32) -> Self;
    /// `self·2^exp` (`ldexpf` / `ldexp`).
    #[must_use]
    fn ldexp(self, exp: i32) -> Self;
    /// `ln|Γ(self)|` (`lgammaf` / `lgamma`).
    #[must_use]
    fn log_gamma(self) -> Self;
    /// `ln(1 + self)`, accurate near 0 (`log1pf` / `log1p`).
    #[must_use]
    fn log1p(self) -> Self;
    /// The standard normal distribution's CDF, `Φ(self) = erfc(-self/√2) / 2` (the
    /// definition CUDA C's `normcdf` documents): `erfc` of `-self·(1/√2)`, for `f32`
    /// computed in `f64` and rounded once. For `f64` the rounding of `-self/√2` is
    /// magnified by `erfc`'s slope in the lower tail: about `2·self²` ulp (e.g. 30 ulp at
    /// `self = -4`).
    #[must_use]
    fn norm_cdf(self) -> Self;
    /// `1 / cbrt(self)` (two roundings; CUDA C's `rcbrt` rounds once).
    #[must_use]
    fn rcbrt(self) -> Self;
    /// `self` clamped to `[+0.0, 1.0]`; NaN gives `+0.0` (CUDA C's `__saturatef`, PTX
    /// `cvt.sat`).
    #[must_use]
    fn saturate(self) -> Self;
    /// `self·2^exp` (`scalbnf` / `scalbn`).
    #[must_use]
    fn scale_by_n(self, exp: i32) -> Self;
    /// `(sin(π·self), cos(π·self))` (see [`sinpi`](Self::sinpi) and
    /// [`cospi`](Self::cospi)).
    #[must_use]
    fn sincospi(self) -> (Self, Self);
    /// `sin(π·self)`. The argument is reduced exactly, `self = k/2 + r` with `|r| <= 1/4`
    /// (`k` from `round(2·self)`; the subtraction is exact), so integers give `±0` and
    /// half-integers `±1` exactly; then `sin` or `cos` of `π·r`, for `f32` computed in `f64`
    /// and rounded once (`libm`'s `sin`/`cos`), for `f64` with `π·r` rounded (a few ulp).
    #[must_use]
    fn sinpi(self) -> Self;
    /// `Γ(self)` (`tgammaf` / `tgamma`).
    #[must_use]
    fn gamma(self) -> Self;
    /// Bessel function of the second kind, order 0, `self > 0` (`y0f` / `y0`).
    #[must_use]
    fn y0(self) -> Self;
    /// Bessel function of the second kind, order 1, `self > 0` (`y1f` / `y1`).
    #[must_use]
    fn y1(self) -> Self;
    /// Bessel function of the second kind, order `order`, `self > 0` (`ynf` / `yn`).
    #[must_use]
    fn yn(self, order: i32) -> Self;
}

/// `math`'s `f32` functions under the `f64` names, so one macro body serves both types.
mod f32_fns {
    pub(super) use crate::math::{
        acosf as acos, acoshf as acosh, asinf as asin, asinhf as asinh, atan2f as atan2,
        atanf as atan, atanhf as atanh, cbrtf as cbrt, ceilf as ceil, copysignf as copysign,
        cosf as cos, coshf as cosh, erfcf as erfc, erff as erf, exp2f as exp2, expf as exp,
        expm1f as expm1, fabsf as fabs, floorf as floor, fmaf as fma, fmodf as fmod,
        frexpf as frexp, hypotf as hypot, ilogbf as ilogb, j0f as j0, j1f as j1, jnf as jn,
        ldexpf as ldexp, lgammaf as lgamma, log1pf as log1p, log2f as log2, log10f as log10,
        logf as log, powf as pow, roundf as round, scalbnf as scalbn, sincosf as sincos,
        sinf as sin, sinhf as sinh, sqrtf as sqrt, tanf as tan, tanhf as tanh, tgammaf as tgamma,
        truncf as trunc, y0f as y0, y1f as y1, ynf as yn,
    };

    /// `(sin(π·r), cos(π·r))` for `|r| <= 1/4`, computed in `f64` and rounded once.
    #[inline(always)]
    pub(super) fn sincos_pi_reduced(r: f32) -> (f32, f32) {
        let (s, c) = crate::math::sincos(core::f64::consts::PI * f64::from(r));
        (s as f32, c as f32)
    }

    /// `Φ(x) = erfc(-x/√2)/2` (CUDA C Programming Guide, "normcdf"), computed in `f64`.
    #[inline(always)]
    pub(super) fn norm_cdf(x: f32) -> f32 {
        (0.5 * crate::math::erfc(-f64::from(x) * core::f64::consts::FRAC_1_SQRT_2)) as f32
    }

    /// The `f64` function of `erf_family`, rounded once to `f32`.
    macro_rules! via_f64 {
        ($($name:ident),+) => {$(
            #[inline(always)]
            pub(super) fn $name(x: f32) -> f32 {
                super::erf_family::$name(f64::from(x)) as f32
            }
        )+};
    }
    via_f64!(erfinv, erfcinv, erfcx, normcdfinv);
}

/// `math`'s `f64` functions.
mod f64_fns {
    pub(super) use super::erf_family::{erfcinv, erfcx, erfinv, normcdfinv};
    pub(super) use crate::math::{
        acos, acosh, asin, asinh, atan, atan2, atanh, cbrt, ceil, copysign, cos, cosh, erf, erfc,
        exp, exp2, expm1, fabs, floor, fma, fmod, frexp, hypot, ilogb, j0, j1, jn, ldexp, lgamma,
        log, log1p, log2, log10, pow, round, scalbn, sin, sincos, sinh, sqrt, tan, tanh, tgamma,
        trunc, y0, y1, yn,
    };

    /// `(sin(π·r), cos(π·r))` for `|r| <= 1/4`.
    #[inline(always)]
    pub(super) fn sincos_pi_reduced(r: f64) -> (f64, f64) {
        sincos(core::f64::consts::PI * r)
    }

    /// `Φ(x) = erfc(-x/√2)/2` (CUDA C Programming Guide, "normcdf").
    #[inline(always)]
    pub(super) fn norm_cdf(x: f64) -> f64 {
        0.5 * erfc(-x * core::f64::consts::FRAC_1_SQRT_2)
    }
}

/// The inverses of `erf`, `erfc` and `Φ`, and the scaled `erfc`, in `f64`, from
/// [`crate::math`] functions and exact operations (the methods are described in the module
/// docs of `float`).
mod erf_family {
    use crate::math::{copysign, erf, erfc, exp, fabs, fma, log, log1p, sqrt};
    use core::f64::consts::{FRAC_2_SQRT_PI, PI, SQRT_2};

    /// From here on `erfcx` uses the asymptotic series, to its 12th term: `t = 1/(2x²) <=
    /// 1/288`, so the first term left out, `25!!·t¹³`, is below `1e-19`.
    const ERFCX_ASYMPTOTIC_FROM: f64 = 12.0;

    /// Below this `q`, `erfcinv_tail`'s residual goes through `erfcx`: `erfc(y)` near `q`
    /// would be subnormal (`erfcinv(1e-300) = 26.2`, while `erfc` is subnormal from 26.55).
    const DEEP_TAIL_BELOW: f64 = 1e-300;

    /// `a` of S. Winitzki, "A handy approximation for the error function and its inverse"
    /// (2008): `erfinv(x)² ≈ √((2/(πa) + ln(1-x²)/2)² - ln(1-x²)/a) - (2/(πa) + ln(1-x²)/2)`.
    /// Measured against mpmath: relative error below `2.3e-3` over `(0, 1)`, and for
    /// `erfcinv` down to `q = 1e-323`.
    const WINITZKI_A: f64 = 0.147;

    /// `√2 - SQRT_2` (mpmath at 50 digits: `sqrt(2) - mpf(1.4142135623730951)`).
    const SQRT_2_LO: f64 = -9.667_293_313_452_913e-17;

    /// `x² = hi + lo` with `hi = x·x` rounded and `lo` its rounding error (one FMA); exact
    /// unless `x²` overflows or is subnormal.
    #[inline(always)]
    fn square_split(x: f64) -> (f64, f64) {
        let hi = x * x;
        (hi, fma(x, x, -hi))
    }

    /// `e^(x²)·erfc(x)` (see the module docs for the method).
    #[inline(always)]
    pub(super) fn erfcx(x: f64) -> f64 {
        if x.is_nan() {
            return x;
        }
        if x < ERFCX_ASYMPTOTIC_FROM {
            let (hi, lo) = square_split(x);
            let e = exp(hi);
            if e == f64::INFINITY {
                // x < -26.6: e^(x²)·erfc(x) > e^(x²) overflows.
                return f64::INFINITY;
            }
            return fma(e, lo, e) * erfc(x);
        }
        // DLMF 7.12.1: erfc(x) ~ e^(-x²)/(x√π) · Σ (-1)^k (2k-1)!!/(2x²)^k, in Horner form.
        // x·x overflows to +∞ from x > 1.3e154: t = 0, the series is 1.
        let t = 0.5 / (x * x);
        let mut s = 1.0;
        for odd in [
            23.0, 21.0, 19.0, 17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0, 1.0,
        ] {
            s = 1.0 - odd * t * s;
        }
        (0.5 * FRAC_2_SQRT_PI / x) * s
    }

    /// Winitzki's starting value for `erfinv` given `w = -ln(1 - x²) >= 0` (so `|x|` only).
    #[inline(always)]
    fn winitzki(w: f64) -> f64 {
        let a = 2.0 / (PI * WINITZKI_A) - 0.5 * w;
        let b = w / WINITZKI_A;
        let root = sqrt(a * a + b);
        // root - a, without cancellation where a > 0 (small w).
        let y2 = if a > 0.0 { b / (root + a) } else { root - a };
        sqrt(y2)
    }

    /// `erfinv(x)` for `|x| <= 1/2`: Halley's method on `f(y) = erf(y) - x`, whose
    /// `f'(y) = 2/√π·e^(-y²)` and `f''/f' = -2y`.
    #[inline(always)]
    fn erfinv_central(x: f64) -> f64 {
        if x == 0.0 {
            return x;
        }
        let mut y = copysign(winitzki(-log1p(-x * x)), x);
        for _ in 0..2 {
            let u = (erf(y) - x) * exp(y * y) / FRAC_2_SQRT_PI;
            y -= u / (1.0 + y * u);
        }
        y
    }

    /// `erfcinv(q) > 0` for `0 < q < 1/2`: Halley's method on `g(y) = ln erfc(y) - ln q =
    /// ln erfcx(y) - y² - ln q`, whose `g'(y) = -h` with `h = 2/(√π·erfcx(y))` and
    /// `g''/g' = h - 2y`.
    #[inline(always)]
    fn erfcinv_tail(q: f64) -> f64 {
        let ln_q = log(q);
        // -ln(1 - x²) for x = 1 - q: -ln(q·(2 - q)).
        let mut y = winitzki(-(ln_q + log1p(1.0 - q)));
        for _ in 0..2 {
            let (g, h) = if q >= DEEP_TAIL_BELOW {
                let c = erfc(y);
                (log(c) - ln_q, FRAC_2_SQRT_PI * exp(-y * y) / c)
            } else {
                let e = erfcx(y);
                let (hi, lo) = square_split(y);
                (((log(e) - ln_q) - hi) - lo, FRAC_2_SQRT_PI / e)
            };
            // Halley: y - u/(1 - u·(g''/g')/2) with u = g/g' = -g/h.
            let u = -g / h;
            y -= u / (1.0 - 0.5 * u * (h - 2.0 * y));
        }
        y
    }

    /// The inverse error function: `erf(erfinv(x)) = x` for `x` in `[-1, 1]`.
    #[inline(always)]
    pub(super) fn erfinv(x: f64) -> f64 {
        let a = fabs(x);
        if a > 1.0 || a.is_nan() {
            return f64::NAN;
        }
        if a == 1.0 {
            return copysign(f64::INFINITY, x);
        }
        if a <= 0.5 {
            return erfinv_central(x);
        }
        copysign(erfcinv_tail(1.0 - a), x)
    }

    /// The inverse complementary error function: `erfc(erfcinv(q)) = q` for `q` in `[0, 2]`.
    #[inline(always)]
    pub(super) fn erfcinv(q: f64) -> f64 {
        if !(0.0..=2.0).contains(&q) {
            return f64::NAN;
        }
        if q == 0.0 {
            return f64::INFINITY;
        }
        if q == 2.0 {
            return f64::NEG_INFINITY;
        }
        if q < 0.5 {
            erfcinv_tail(q)
        } else if q <= 1.5 {
            erfinv_central(1.0 - q)
        } else {
            -erfcinv_tail(2.0 - q)
        }
    }

    /// The standard normal distribution's quantile, `Φ⁻¹(p) = -√2·erfcinv(2p)`.
    #[inline(always)]
    pub(super) fn normcdfinv(p: f64) -> f64 {
        let e = erfcinv(2.0 * p);
        if e.is_infinite() {
            return -e;
        }
        // 0 - (…): +0 for p = 1/2, as erfcinv(1) = +0.
        0.0 - fma(SQRT_2, e, SQRT_2_LO * e)
    }
}

macro_rules! impl_float {
    ($t:ty, $m:ident) => {
        impl GpuFloat for $t {
            #[inline(always)]
            fn floor(self) -> Self {
                $m::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $m::ceil(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                $m::round(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                $m::trunc(self)
            }
            #[inline(always)]
            fn fract(self) -> Self {
                self - $m::trunc(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $m::fabs(self)
            }
            #[inline(always)]
            fn signum(self) -> Self {
                if self.is_nan() {
                    <$t>::NAN
                } else {
                    $m::copysign(1.0, self)
                }
            }
            #[inline(always)]
            fn copysign(self, sign: Self) -> Self {
                $m::copysign(self, sign)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $m::fma(self, a, b)
            }
            #[inline(always)]
            fn div_euclid(self, rhs: Self) -> Self {
                let q = $m::trunc(self / rhs);
                if $m::fmod(self, rhs) < 0.0 {
                    return if rhs > 0.0 { q - 1.0 } else { q + 1.0 };
                }
                q
            }
            #[inline(always)]
            fn rem_euclid(self, rhs: Self) -> Self {
                let r = $m::fmod(self, rhs);
                if r < 0.0 { r + $m::fabs(rhs) } else { r }
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                let mut base = self;
                let mut bits = n.unsigned_abs();
                let mut acc: $t = 1.0;
                loop {
                    if bits & 1 != 0 {
                        acc *= base;
                    }
                    bits >>= 1;
                    if bits == 0 {
                        break;
                    }
                    base *= base;
                }
                if n < 0 { 1.0 / acc } else { acc }
            }
            #[inline(always)]
            fn powf(self, n: Self) -> Self {
                $m::pow(self, n)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $m::sqrt(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $m::exp(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $m::exp2(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $m::log(self)
            }
            #[inline(always)]
            fn log(self, base: Self) -> Self {
                $m::log(self) / $m::log(base)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                $m::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                $m::log10(self)
            }
            #[inline(always)]
            fn cbrt(self) -> Self {
                $m::cbrt(self)
            }
            #[inline(always)]
            fn hypot(self, other: Self) -> Self {
                $m::hypot(self, other)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $m::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $m::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                $m::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                $m::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                $m::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                $m::atan(self)
            }
            #[inline(always)]
            fn atan2(self, other: Self) -> Self {
                $m::atan2(self, other)
            }
            #[inline(always)]
            fn sin_cos(self) -> (Self, Self) {
                $m::sincos(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                $m::expm1(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                $m::log1p(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                $m::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                $m::cosh(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $m::tanh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                $m::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                $m::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                $m::atanh(self)
            }
        }

        impl FloatExt for $t {
            #[inline(always)]
            fn cospi(self) -> Self {
                FloatExt::sincospi(self).1
            }
            #[inline(always)]
            fn error_function(self) -> Self {
                $m::erf(self)
            }
            #[inline(always)]
            fn complementary_error_function(self) -> Self {
                $m::erfc(self)
            }
            #[inline(always)]
            fn inv_error_function(self) -> Self {
                $m::erfinv(self)
            }
            #[inline(always)]
            fn inv_complementary_error_function(self) -> Self {
                $m::erfcinv(self)
            }
            #[inline(always)]
            fn scaled_complementary_error_function(self) -> Self {
                $m::erfcx(self)
            }
            #[inline(always)]
            fn inv_norm_cdf(self) -> Self {
                $m::normcdfinv(self)
            }
            #[inline(always)]
            fn frexp(self) -> (Self, i32) {
                $m::frexp(self)
            }
            #[inline(always)]
            fn unbiased_exp(self) -> i32 {
                $m::ilogb(self)
            }
            #[inline(always)]
            fn j0(self) -> Self {
                $m::j0(self)
            }
            #[inline(always)]
            fn j1(self) -> Self {
                $m::j1(self)
            }
            #[inline(always)]
            fn jn(self, order: i32) -> Self {
                $m::jn(order, self)
            }
            #[inline(always)]
            fn ldexp(self, exp: i32) -> Self {
                $m::ldexp(self, exp)
            }
            #[inline(always)]
            fn log_gamma(self) -> Self {
                $m::lgamma(self)
            }
            #[inline(always)]
            fn log1p(self) -> Self {
                $m::log1p(self)
            }
            #[inline(always)]
            fn norm_cdf(self) -> Self {
                $m::norm_cdf(self)
            }
            #[inline(always)]
            fn rcbrt(self) -> Self {
                1.0 / $m::cbrt(self)
            }
            #[inline(always)]
            fn saturate(self) -> Self {
                if self.is_nan() || self <= 0.0 {
                    0.0
                } else if self < 1.0 {
                    self
                } else {
                    1.0
                }
            }
            #[inline(always)]
            fn scale_by_n(self, exp: i32) -> Self {
                $m::scalbn(self, exp)
            }
            #[inline(always)]
            fn sincospi(self) -> (Self, Self) {
                if !self.is_finite() {
                    return (<$t>::NAN, <$t>::NAN);
                }
                // From 2^MANTISSA_DIGITS on, every value is an even integer.
                if $m::fabs(self) >= (1u64 << <$t>::MANTISSA_DIGITS) as $t {
                    return ($m::copysign(0.0, self), 1.0);
                }
                // self = k2/2 + r with |r| <= 1/4: 2·self is exact below the bound above, its
                // rounding to an integer is exact, and so is the difference, halved. Then
                // π·self = k2·(π/2) + π·r: k2 counts quarter turns.
                let k2 = $m::round(2.0 * self);
                let r = (2.0 * self - k2) * 0.5;
                let quarter = $m::fmod(k2, 4.0);
                let quarter = if quarter < 0.0 {
                    quarter + 4.0
                } else {
                    quarter
                } as u32;
                let (s, c) = if r == 0.0 {
                    // Exact zeros and ones, with sin's zero signed as `self`'s.
                    ($m::copysign(0.0, self), 1.0)
                } else {
                    $m::sincos_pi_reduced(r)
                };
                let (s, c) = match quarter {
                    0 => (s, c),
                    1 => (c, -s),
                    2 => (-s, -c),
                    _ => (-c, s),
                };
                // sin(π·n) of an integer n: +0 or -0 by `self`'s sign, as C's `sinpi`; cos of
                // a half-integer: +0.
                let s = if s == 0.0 { $m::copysign(0.0, self) } else { s };
                let c = if c == 0.0 { 0.0 } else { c };
                (s, c)
            }
            #[inline(always)]
            fn sinpi(self) -> Self {
                FloatExt::sincospi(self).0
            }
            #[inline(always)]
            fn gamma(self) -> Self {
                $m::tgamma(self)
            }
            #[inline(always)]
            fn y0(self) -> Self {
                $m::y0(self)
            }
            #[inline(always)]
            fn y1(self) -> Self {
                $m::y1(self)
            }
            #[inline(always)]
            fn yn(self, order: i32) -> Self {
                $m::yn(order, self)
            }
        }
    };
}

impl_float!(f32, f32_fns);
impl_float!(f64, f64_fns);

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// A spread of inputs: small, large, negative, near integers and half-integers, ±0.
    fn inputs() -> Vec<f64> {
        let mut v = Vec::new();
        for i in -40..=40 {
            let x = f64::from(i) * 0.25;
            v.extend([x, x + 1e-9, x - 3e-7, x * 7.3]);
        }
        v.extend([
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            123_456.789,
            -9.87e6,
            0.1,
            2.0f64.powi(40) + 0.5,
        ]);
        v
    }

    #[test]
    fn gpu_float_is_libm_where_libm_has_the_function() {
        for x in inputs() {
            let y = x as f32;
            let b = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let d = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            assert!(b(GpuFloat::log10(y), libm::log10f(y)), "log10f({y})");
            assert!(d(GpuFloat::log10(x), libm::log10(x)), "log10({x})");
            assert!(b(GpuFloat::sin(y), libm::sinf(y)), "sinf({y})");
            assert!(b(GpuFloat::asinh(y), libm::asinhf(y)), "asinhf({y})");
            assert!(
                d(GpuFloat::atanh(x / 20.0), libm::atanh(x / 20.0)),
                "atanh({x})"
            );
            let (s, c) = GpuFloat::sin_cos(y);
            let (ls, lc) = libm::sincosf(y);
            assert!(b(s, ls) && b(c, lc), "sincosf({y})");
            assert!(b(FloatExt::log_gamma(y), libm::lgammaf(y)), "lgammaf({y})");
            assert!(d(FloatExt::jn(x, 3), libm::jn(3, x)), "jn(3, {x})");
            assert_eq!(FloatExt::frexp(x), libm::frexp(x), "frexp({x})");
            assert_eq!(FloatExt::unbiased_exp(y), libm::ilogbf(y), "ilogbf({y})");
        }
    }

    /// std's definitions, written independently as std documents them (`%` is exact).
    #[test]
    fn std_like_methods_match_std() {
        for x in inputs() {
            for rhs in [3.0f64, -3.0, 0.75, -0.1, 1e10] {
                let d = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                assert!(
                    d(GpuFloat::rem_euclid(x, rhs), x.rem_euclid(rhs)),
                    "{x} {rhs}"
                );
                assert!(
                    d(GpuFloat::div_euclid(x, rhs), x.div_euclid(rhs)),
                    "{x} {rhs}"
                );
                let (y, r) = (x as f32, rhs as f32);
                assert_eq!(
                    GpuFloat::rem_euclid(y, r).to_bits(),
                    y.rem_euclid(r).to_bits()
                );
                assert_eq!(
                    GpuFloat::div_euclid(y, r).to_bits(),
                    y.div_euclid(r).to_bits()
                );
            }
            assert_eq!(GpuFloat::fract(x).to_bits(), x.fract().to_bits(), "{x}");
            assert_eq!(GpuFloat::signum(x).to_bits(), x.signum().to_bits(), "{x}");
            for n in [-7, -2, -1, 0, 1, 2, 3, 10, 31] {
                // A run-time exponent: std's powi then calls compiler-rt's __powidf2, the
                // algorithm GpuFloat::powi follows.
                let n = core::hint::black_box(n);
                let d = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                assert!(d(GpuFloat::powi(x, n), x.powi(n)), "{x}^{n}");
                let y = x as f32;
                let (a, b) = (GpuFloat::powi(y, n), y.powi(n));
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{y}^{n}"
                );
            }
        }
        assert!(GpuFloat::signum(f32::NAN).is_nan());
        assert_eq!(GpuFloat::log(8.0f64, 2.0), 3.0);
    }

    #[test]
    fn sinpi_and_cospi_are_exact_at_multiples_of_a_half() {
        for k in -12i32..=12 {
            let x = f64::from(k) * 0.5;
            let (s, c) = FloatExt::sincospi(x);
            let (want_s, want_c) = match k.rem_euclid(4) {
                0 => (0.0, 1.0),
                1 => (1.0, 0.0),
                2 => (0.0, -1.0),
                _ => (-1.0, 0.0),
            };
            assert_eq!((s, c), (want_s, want_c), "sincospi({x})");
            assert_eq!(FloatExt::sincospi(x as f32), (want_s as f32, want_c as f32));
        }
        assert!(FloatExt::sinpi(-2.0f64).is_sign_negative());
        assert!(FloatExt::sinpi(f32::INFINITY).is_nan());
        // Elsewhere within a few ulp of sin(π·x) computed in f64 (f32) / of a reference
        // with a reduced argument (f64: sin(π/6) = 1/2).
        for x in [0.1f32, 0.3, -0.7, 1.25, 2.9, 1000.1, -33.3] {
            let want = (core::f64::consts::PI * f64::from(x)).sin() as f32;
            let got = FloatExt::sinpi(x);
            assert!(
                (got - want).abs() <= 2.0 * f32::EPSILON * want.abs().max(1e-3),
                "{x}"
            );
            let want = (core::f64::consts::PI * f64::from(x)).cos() as f32;
            let got = FloatExt::cospi(x);
            assert!(
                (got - want).abs() <= 2.0 * f32::EPSILON * want.abs().max(1e-3),
                "{x}"
            );
        }
        let got = FloatExt::sinpi(1.0f64 / 6.0 + 4.0);
        assert!((got - 0.5).abs() < 4.0 * f64::EPSILON, "{got}");
    }

    #[test]
    fn norm_cdf_saturate_and_rcbrt() {
        assert_eq!(FloatExt::norm_cdf(0.0f64), 0.5);
        // Φ(1.96) = 0.9750021048517795 (standard normal table, to 16 digits).
        assert!((FloatExt::norm_cdf(1.96f64) - 0.975_002_104_851_779_5).abs() < 1e-15);
        assert!((FloatExt::norm_cdf(-1.96f32) - 0.024_997_895).abs() < 1e-7);
        for (x, want) in [(-0.5f32, 0.0), (0.25, 0.25), (1.5, 1.0), (f32::NAN, 0.0)] {
            assert_eq!(FloatExt::saturate(x).to_bits(), f32::to_bits(want), "{x}");
        }
        assert_eq!(FloatExt::saturate(-0.0f64).to_bits(), 0.0f64.to_bits());
        assert_eq!(FloatExt::rcbrt(8.0f64), 0.5);
        assert_eq!(FloatExt::rcbrt(-0.125f32), -2.0);
    }

    /// The limits, the domain and the signs of zero (CUDA C Programming Guide, "Mathematical
    /// Functions": `erfinv(±1) = ±∞`, `erfcinv(0) = +∞`, `erfcinv(2) = -∞`, NaN outside).
    #[test]
    fn erf_family_special_values() {
        let inf = f64::INFINITY;
        let bits = |v: f64| v.to_bits();
        assert_eq!(FloatExt::inv_error_function(1.0f64), inf);
        assert_eq!(FloatExt::inv_error_function(-1.0f64), -inf);
        assert_eq!(bits(FloatExt::inv_error_function(-0.0f64)), bits(-0.0));
        assert_eq!(bits(FloatExt::inv_error_function(0.0f64)), bits(0.0));
        assert_eq!(FloatExt::inv_complementary_error_function(0.0f64), inf);
        assert_eq!(FloatExt::inv_complementary_error_function(2.0f64), -inf);
        assert_eq!(
            bits(FloatExt::inv_complementary_error_function(1.0f64)),
            bits(0.0)
        );
        assert_eq!(FloatExt::inv_norm_cdf(0.0f64), -inf);
        assert_eq!(FloatExt::inv_norm_cdf(1.0f64), inf);
        assert_eq!(bits(FloatExt::inv_norm_cdf(0.5f64)), bits(0.0));
        assert_eq!(FloatExt::scaled_complementary_error_function(0.0f64), 1.0);
        assert_eq!(FloatExt::scaled_complementary_error_function(inf), 0.0);
        assert_eq!(FloatExt::scaled_complementary_error_function(-inf), inf);
        assert_eq!(FloatExt::scaled_complementary_error_function(-26.7f64), inf);
        assert!(FloatExt::scaled_complementary_error_function(-26.6f64).is_finite());
        assert_eq!(
            FloatExt::scaled_complementary_error_function(-9.5f32),
            f32::INFINITY
        );
        assert!(FloatExt::scaled_complementary_error_function(-9.3f32).is_finite());
        // Largest finite: 1/(x·√π) is subnormal, not 0.
        let tiny = FloatExt::scaled_complementary_error_function(f64::MAX);
        assert!(tiny > 0.0 && tiny < f64::MIN_POSITIVE);
        for bad in [1.0000001f64, -1.5, f64::NAN, inf] {
            assert!(FloatExt::inv_error_function(bad).is_nan(), "erfinv({bad})");
            assert!(
                FloatExt::inv_error_function(bad as f32).is_nan(),
                "erfinvf({bad})"
            );
        }
        for bad in [-1e-300f64, 2.0000000000000004, f64::NAN, -inf] {
            assert!(
                FloatExt::inv_complementary_error_function(bad).is_nan(),
                "{bad}"
            );
            assert!(
                FloatExt::inv_norm_cdf(bad / 2.0).is_nan(),
                "normcdfinv({bad}/2)"
            );
        }
        assert!(FloatExt::scaled_complementary_error_function(f32::NAN).is_nan());
        assert!(FloatExt::inv_norm_cdf(1.5f32).is_nan());
    }

    /// Round trips through `libm`'s `erf` and `erfc`, the symmetries, and the `f32` functions
    /// being the `f64` ones rounded once. (The tests crate's `rustcuda.rs` compares them
    /// with mpmath references.)
    #[test]
    fn erf_family_inverts_erf_and_erfc() {
        for i in 1..2000 {
            let x = f64::from(i) / 2000.0;
            // erf(y) for y = erfinv(x): the error of y (2 ulp), times erf's slope, plus
            // erf's own error and rounding: within 4 ulp of x.
            let y = FloatExt::inv_error_function(x);
            assert!(
                (libm::erf(y) - x).abs() <= 4.0 * f64::EPSILON * x,
                "erfinv({x})"
            );
            assert_eq!(FloatExt::inv_error_function(-x), -y);
            // The tails, q from 1e-1 down to 1e-320: erfc's relative slope is 2y, so 2 ulp of
            // y move erfc(y) by 4·y²·ε relative.
            let q = 10f64.powf(-f64::from(i) * 0.16);
            let y = FloatExt::inv_complementary_error_function(q);
            let back = if y < 26.0 {
                libm::erfc(y)
            } else {
                // erfc(y) is subnormal from 26.55: compare e^(-y²)·erfcx(y) in logs.
                q * libm::exp(
                    libm::log(FloatExt::scaled_complementary_error_function(y))
                        - y * y
                        - libm::log(q),
                )
            };
            let tol = (4.0 * y * y + 4.0) * f64::EPSILON * q;
            assert!((back - q).abs() <= tol, "erfcinv({q}) = {y}: erfc {back}");
            // erfcinv(2 - q) = -erfcinv(q) where 2 - q is exact.
            let d = f64::from(i) / 4096.0;
            assert_eq!(
                FloatExt::inv_complementary_error_function(2.0 - d),
                -FloatExt::inv_complementary_error_function(d)
            );
            // The central region goes through erfinv: the same bits.
            let c = 0.5 + f64::from(i) / 2000.0;
            assert_eq!(
                FloatExt::inv_complementary_error_function(c).to_bits(),
                FloatExt::inv_error_function(1.0 - c).to_bits(),
                "erfcinv({c})"
            );
            // Φ⁻¹ against erfinv: Φ⁻¹(p) = √2·erfinv(2p - 1), where 2p - 1 is exact.
            let p = 0.25 + f64::from(i) / 4000.0;
            let want = core::f64::consts::SQRT_2 * FloatExt::inv_error_function(2.0 * p - 1.0);
            let got = FloatExt::inv_norm_cdf(p);
            assert!(
                (got - want).abs() <= 2.0 * f64::EPSILON * want.abs(),
                "Φ⁻¹({p})"
            );
            // f32: the f64 function, rounded once.
            let x32 = x as f32;
            assert_eq!(
                FloatExt::inv_error_function(x32),
                FloatExt::inv_error_function(f64::from(x32)) as f32
            );
            // erfcx(-x) = 2·e^(x²) - erfcx(x) (from erfc(-x) = 2 - erfc(x)).
            let x = f64::from(i) / 100.0;
            let want = 2.0 * libm::exp(x * x) - FloatExt::scaled_complementary_error_function(x);
            let got = FloatExt::scaled_complementary_error_function(-x);
            // exp(x²) with x² rounded: up to x²·ε relative, plus a few roundings.
            let tol = (x * x + 4.0) * f64::EPSILON * want;
            assert!(
                (got - want).abs() <= tol,
                "erfcx(-{x}) = {got}, want {want}"
            );
        }
    }
}
