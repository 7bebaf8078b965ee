//! `f32` / `f64` math functions for kernels *and* host code, with two backends:
//!
//! - **exact** (default): the pure-Rust [`libm`] crate on both sides, so a kernel and its CPU
//!   reference calling the same function get **bit-identical** results (BRIEF: verified on
//!   an H200 over 4,194,304 inputs each for `sinf`, `expf`, `logf`, `fmaf`, `powf`, `sin`,
//!   `log`, `log2`). The std methods (`f32::sin`, ...) call the platform's libm on the host
//!   and differ: use these functions on both sides when you compare.
//! - **fast** (GPU only, `cfg(cuda_std_fast_math)`, set by `cuda_builder`'s
//!   `CudaBuilder::fast_math(true)`, which also links NVIDIA's libdevice): the transcendental
//!   functions call libdevice's `__nv_*` implementations, CUDA C's math library — several
//!   times faster than `libm`'s software algorithms, with the maximum errors of the CUDA C
//!   Programming Guide, appendix "Mathematical Functions" (e.g. `sinf`, `cosf`, `expf`: 2 ulp;
//!   `logf`, `log2f`: 1 ulp; `powf`: 4 ulp; double `sin`, `cos`: 2 ulp, `exp`, `log`: 1 ulp).
//!   Host code always uses the exact backend.
//!
//! Correctly rounded operations — [`sqrtf`]/[`sqrt`], [`fmaf`]/[`fma`] — and exact ones —
//! [`floorf`], [`ceilf`], [`truncf`], [`roundf`], [`fabsf`], [`copysignf`] and their `f64`
//! twins — give the same bits in every backend; on the GPU they compile to one instruction
//! (`sqrt.rn`, `fma.rn`, `cvt.rmi`, ...); on the host they are `libm`'s, or with this crate's
//! `std` feature std's methods (hardware instructions where the CPU has them).
//!
//! This module is the one place that picks a math backend: `common` and the kernels call it,
//! never `libm` or `core::f32::math` directly.
//!
//! Names are C's (`sinf` for `f32`, `sin` for `f64`), as in `libm`, so that they cannot be
//! confused with the std methods.

/// Defines a public function that uses libdevice in the fast GPU backend, libm otherwise.
macro_rules! backend_fn {
    ($(#[$doc:meta])* $name:ident, $nv:ident, ($($arg:ident),+), $t:ty) => {
        $(#[$doc])*
        #[doc = concat!("\n\nExact backend: `libm::", stringify!($name), "`. Fast GPU backend: \
            libdevice `", stringify!($nv), "`.")]
        #[inline(always)]
        #[must_use]
        pub fn $name($($arg: $t),+) -> $t {
            #[cfg(all(target_arch = "nvptx64", cuda_std_fast_math))]
            {
                unsafe extern "C" {
                    fn $nv($($arg: $t),+) -> $t;
                }
                // SAFETY: a pure libdevice function, linked by `cuda_builder` whenever
                // `cuda_std_fast_math` is set; defined for every input.
                unsafe { $nv($($arg),+) }
            }
            #[cfg(not(all(target_arch = "nvptx64", cuda_std_fast_math)))]
            {
                libm::$name($($arg),+)
            }
        }
    };
}

/// Defines a public function that is exact in every backend: on the GPU a `core` operation
/// (one PTX instruction), on the host `libm`, or `$std` with the `std` feature.
macro_rules! exact_fn {
    ($(#[$doc:meta])* $name:ident, ($($arg:ident),+), $t:ty, $gpu:expr) => {
        exact_fn!($(#[$doc])* $name, ($($arg),+), $t, $gpu, libm::$name($($arg),+));
    };
    ($(#[$doc:meta])* $name:ident, ($($arg:ident),+), $t:ty, $gpu:expr, $std:expr) => {
        $(#[$doc])*
        #[doc = concat!("\n\nSame bits on every backend (GPU: `", stringify!($gpu), "`; host: \
            `libm::", stringify!($name), "`, or `", stringify!($std), "` with the `std` feature).")]
        #[inline(always)]
        #[must_use]
        pub fn $name($($arg: $t),+) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                $gpu
            }
            #[cfg(all(feature = "std", not(target_arch = "nvptx64")))]
            {
                $std
            }
            #[cfg(all(not(feature = "std"), not(target_arch = "nvptx64")))]
            {
                libm::$name($($arg),+)
            }
        }
    };
}

macro_rules! backend_fns {
    ($t:ty: $($(#[$doc:meta])* $name:ident => $nv:ident ($($arg:ident),+);)*) => {
        $( backend_fn!($(#[$doc])* $name, $nv, ($($arg),+), $t); )*
    };
}

backend_fns! { f32:
    /// Sine of `x` (radians).
    sinf => __nv_sinf(x);
    /// Cosine of `x` (radians).
    cosf => __nv_cosf(x);
    /// Tangent of `x` (radians).
    tanf => __nv_tanf(x);
    /// Arcsine, radians in `[-π/2, π/2]`.
    asinf => __nv_asinf(x);
    /// Arccosine, radians in `[0, π]`.
    acosf => __nv_acosf(x);
    /// Arctangent, radians in `[-π/2, π/2]`.
    atanf => __nv_atanf(x);
    /// Angle of the point `(x, y)`, radians in `[-π, π]` (note the argument order `y, x`).
    atan2f => __nv_atan2f(y, x);
    /// Hyperbolic sine.
    sinhf => __nv_sinhf(x);
    /// Hyperbolic cosine.
    coshf => __nv_coshf(x);
    /// Hyperbolic tangent.
    tanhf => __nv_tanhf(x);
    /// `e^x`.
    expf => __nv_expf(x);
    /// `2^x`.
    exp2f => __nv_exp2f(x);
    /// `e^x - 1`, accurate near 0.
    expm1f => __nv_expm1f(x);
    /// Natural logarithm.
    logf => __nv_logf(x);
    /// Base-2 logarithm.
    log2f => __nv_log2f(x);
    /// Base-10 logarithm.
    log10f => __nv_log10f(x);
    /// `ln(1 + x)`, accurate near 0.
    log1pf => __nv_log1pf(x);
    /// `x^y`.
    powf => __nv_powf(x, y);
    /// Cube root.
    cbrtf => __nv_cbrtf(x);
    /// `sqrt(x² + y²)` without undue overflow.
    hypotf => __nv_hypotf(x, y);
    /// Error function.
    erff => __nv_erff(x);
    /// Complementary error function, `1 - erf(x)`, accurate where `erf(x)` is near 1.
    erfcf => __nv_erfcf(x);
    /// Inverse hyperbolic sine.
    asinhf => __nv_asinhf(x);
    /// Inverse hyperbolic cosine (`x >= 1`; NaN below).
    acoshf => __nv_acoshf(x);
    /// Inverse hyperbolic tangent (`|x| <= 1`; ±∞ at ±1, NaN beyond).
    atanhf => __nv_atanhf(x);
    /// Natural logarithm of the absolute value of the gamma function.
    lgammaf => __nv_lgammaf(x);
    /// The gamma function.
    tgammaf => __nv_tgammaf(x);
    /// Bessel function of the first kind, order 0.
    j0f => __nv_j0f(x);
    /// Bessel function of the first kind, order 1.
    j1f => __nv_j1f(x);
    /// Bessel function of the second kind, order 0 (`x > 0`).
    y0f => __nv_y0f(x);
    /// Bessel function of the second kind, order 1 (`x > 0`).
    y1f => __nv_y1f(x);
}

backend_fns! { f64:
    /// Sine of `x` (radians).
    sin => __nv_sin(x);
    /// Cosine of `x` (radians).
    cos => __nv_cos(x);
    /// Tangent of `x` (radians).
    tan => __nv_tan(x);
    /// Arcsine, radians in `[-π/2, π/2]`.
    asin => __nv_asin(x);
    /// Arccosine, radians in `[0, π]`.
    acos => __nv_acos(x);
    /// Arctangent, radians in `[-π/2, π/2]`.
    atan => __nv_atan(x);
    /// Angle of the point `(x, y)`, radians in `[-π, π]` (note the argument order `y, x`).
    atan2 => __nv_atan2(y, x);
    /// Hyperbolic sine.
    sinh => __nv_sinh(x);
    /// Hyperbolic cosine.
    cosh => __nv_cosh(x);
    /// Hyperbolic tangent.
    tanh => __nv_tanh(x);
    /// `e^x`.
    exp => __nv_exp(x);
    /// `2^x`.
    exp2 => __nv_exp2(x);
    /// `e^x - 1`, accurate near 0.
    expm1 => __nv_expm1(x);
    /// Natural logarithm.
    log => __nv_log(x);
    /// Base-2 logarithm.
    log2 => __nv_log2(x);
    /// Base-10 logarithm.
    log10 => __nv_log10(x);
    /// `ln(1 + x)`, accurate near 0.
    log1p => __nv_log1p(x);
    /// `x^y`.
    pow => __nv_pow(x, y);
    /// Cube root.
    cbrt => __nv_cbrt(x);
    /// `sqrt(x² + y²)` without undue overflow.
    hypot => __nv_hypot(x, y);
    /// Error function.
    erf => __nv_erf(x);
    /// Complementary error function, `1 - erf(x)`, accurate where `erf(x)` is near 1.
    erfc => __nv_erfc(x);
    /// Inverse hyperbolic sine.
    asinh => __nv_asinh(x);
    /// Inverse hyperbolic cosine (`x >= 1`; NaN below).
    acosh => __nv_acosh(x);
    /// Inverse hyperbolic tangent (`|x| <= 1`; ±∞ at ±1, NaN beyond).
    atanh => __nv_atanh(x);
    /// Natural logarithm of the absolute value of the gamma function.
    lgamma => __nv_lgamma(x);
    /// The gamma function.
    tgamma => __nv_tgamma(x);
    /// Bessel function of the first kind, order 0.
    j0 => __nv_j0(x);
    /// Bessel function of the first kind, order 1.
    j1 => __nv_j1(x);
    /// Bessel function of the second kind, order 0 (`x > 0`).
    y0 => __nv_y0(x);
    /// Bessel function of the second kind, order 1 (`x > 0`).
    y1 => __nv_y1(x);
}

exact_fn!(
    /// Square root, correctly rounded (PTX `sqrt.rn.f32`).
    sqrtf, (x), f32, core::f32::math::sqrt(x), x.sqrt()
);
exact_fn!(
    /// Square root, correctly rounded (PTX `sqrt.rn.f64`).
    sqrt, (x), f64, core::f64::math::sqrt(x), x.sqrt()
);
/// Defines a fused multiply-add: one `fma.rn` on the GPU; on an x86-64 host the CPU's FMA3
/// instruction where it has one (enabled in the build, or detected once at run time), else
/// `libm`'s software version (or std's `mul_add` with the `std` feature). All are correctly
/// rounded, so the bits are the same.
macro_rules! fma_fn {
    ($(#[$doc:meta])* $name:ident, $t:ty, $core:path, $hw:ident) => {
        $(#[$doc])*
        ///
        /// Same bits on every backend (GPU: one `fma.rn`; x86-64 host: FMA3 where the CPU has
        /// it, else `libm`, or std's `mul_add` with the `std` feature).
        #[inline(always)]
        #[must_use]
        pub fn $name(x: $t, y: $t, z: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                $core(x, y, z)
            }
            #[cfg(all(target_arch = "x86_64", target_feature = "fma"))]
            {
                // SAFETY: the build enables FMA3.
                unsafe { host_fma::$hw(x, y, z) }
            }
            #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
            {
                if host_fma::available() {
                    // SAFETY: the CPU has FMA3 and the OS saves its registers (checked).
                    unsafe { host_fma::$hw(x, y, z) }
                } else {
                    host_fma::portable!($name, x, y, z)
                }
            }
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "x86_64")))]
            {
                host_fma::portable!($name, x, y, z)
            }
        }
    };
}

fma_fn!(
    /// `x·y + z` with one rounding (PTX `fma.rn.f32`).
    fmaf, f32, core::f32::math::mul_add, fmaf_fma3
);
fma_fn!(
    /// `x·y + z` with one rounding (PTX `fma.rn.f64`).
    fma, f64, core::f64::math::mul_add, fma_fma3
);

/// `2^x`, fast and approximate: on the GPU one `ex2.approx.ftz.f32` (PTX ISA §9.7.3,
/// "ex2"; the special-function unit), on the host `libm`'s `exp2f`. Subnormal results are
/// flushed to `+0` on both, `2^-∞ = 0`, `2^+∞ = +∞`, NaN gives NaN.
///
/// **Not the same bits on every backend**, unlike the rest of this module: NVIDIA does not
/// publish the unit's algorithm, so the host computes `2^x` within 1 ulp and the GPU within
/// its own error: `ex2_approx_is_within_its_bound` (`tests/tests/primitives.rs`, 2^20
/// points of `[-126, 128)`) found at most a relative 1.19·2⁻²³ (2.06 ulp) on an H200 and
/// checks 2⁻²². Use it where that does not matter and speed does, as in a softmax
/// (`kernels::attention`); [`exp2f`] gives the same bits on both.
#[inline(always)]
#[must_use]
pub fn ex2_approx(x: f32) -> f32 {
    crate::arch::math::ex2_approx_ftz(x)
}

/// Whether the host CPU has FMA3 (see `host_fma::available`): for `#[kernel]`'s host shim.
#[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
#[inline(always)]
pub(crate) fn host_fma_available() -> bool {
    host_fma::available()
}

/// The host's fused multiply-add: the x86-64 FMA3 instruction behind a once-made CPU check,
/// and the portable fallback.
#[cfg(not(target_arch = "nvptx64"))]
mod host_fma {
    /// `libm`'s software fused multiply-add, or std's `mul_add` with the `std` feature.
    macro_rules! portable {
        ($name:ident, $x:ident, $y:ident, $z:ident) => {{
            #[cfg(feature = "std")]
            {
                $x.mul_add($y, $z)
            }
            #[cfg(not(feature = "std"))]
            {
                libm::$name($x, $y, $z)
            }
        }};
    }
    pub(super) use portable;

    /// Whether the CPU has FMA3 and the OS saves the AVX registers it uses, checked once:
    /// CPUID leaf 1, ECX bits 12 (FMA), 27 (OSXSAVE) and 28 (AVX), then XCR0 bits 1 and 2
    /// (SSE and AVX state enabled by the OS), as Intel's Software Developer's Manual, vol. 1,
    /// §14.3 "Detection of AVX instructions" and §14.5.3 (FMA) prescribe.
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    #[inline(always)]
    pub(super) fn available() -> bool {
        use core::sync::atomic::{AtomicU8, Ordering::Relaxed};
        // 0: not checked yet; 1: no; 2: yes.
        static STATE: AtomicU8 = AtomicU8::new(0);
        match STATE.load(Relaxed) {
            2 => true,
            1 => false,
            _ => {
                let yes = detect();
                STATE.store(if yes { 2 } else { 1 }, Relaxed);
                yes
            }
        }
    }

    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    #[cold]
    fn detect() -> bool {
        use core::arch::x86_64::__cpuid;
        #[allow(unused_unsafe)]
        // SAFETY: CPUID exists on every x86-64 CPU.
        let ecx = unsafe { __cpuid(1) }.ecx;
        let (fma, osxsave, avx) = (1 << 12, 1 << 27, 1 << 28);
        if ecx & (fma | osxsave | avx) != fma | osxsave | avx {
            return false;
        }
        // SAFETY: OSXSAVE is set, so XGETBV is available.
        let xcr0 = unsafe { xcr0() };
        xcr0 & 0b110 == 0b110
    }

    /// XCR0, the OS-enabled state components.
    #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
    #[target_feature(enable = "xsave")]
    unsafe fn xcr0() -> u64 {
        // SAFETY: the caller checked CPUID's OSXSAVE bit.
        unsafe { core::arch::x86_64::_xgetbv(0) }
    }

    /// FMA3 `vfmadd` on `f32`.
    ///
    /// # Safety
    /// The CPU must have FMA3 ([`available`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    #[inline]
    pub(super) unsafe fn fmaf_fma3(x: f32, y: f32, z: f32) -> f32 {
        use core::arch::x86_64::{_mm_cvtss_f32, _mm_fmadd_ss, _mm_set_ss};
        _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(x), _mm_set_ss(y), _mm_set_ss(z)))
    }

    /// FMA3 `vfmadd` on `f64`.
    ///
    /// # Safety
    /// The CPU must have FMA3 ([`available`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    #[inline]
    pub(super) unsafe fn fma_fma3(x: f64, y: f64, z: f64) -> f64 {
        use core::arch::x86_64::{_mm_cvtsd_f64, _mm_fmadd_sd, _mm_set_sd};
        _mm_cvtsd_f64(_mm_fmadd_sd(_mm_set_sd(x), _mm_set_sd(y), _mm_set_sd(z)))
    }
}
exact_fn!(
    /// Largest integer `<= x`.
    floorf, (x), f32, core::f32::math::floor(x), x.floor()
);
exact_fn!(
    /// Largest integer `<= x`.
    floor, (x), f64, core::f64::math::floor(x), x.floor()
);
exact_fn!(
    /// Smallest integer `>= x`.
    ceilf, (x), f32, core::f32::math::ceil(x), x.ceil()
);
exact_fn!(
    /// Smallest integer `>= x`.
    ceil, (x), f64, core::f64::math::ceil(x), x.ceil()
);
exact_fn!(
    /// `x` rounded toward zero.
    truncf, (x), f32, core::f32::math::trunc(x), x.trunc()
);
exact_fn!(
    /// `x` rounded toward zero.
    trunc, (x), f64, core::f64::math::trunc(x), x.trunc()
);
exact_fn!(
    /// `x` rounded to the nearest integer, ties away from zero.
    roundf, (x), f32, core::f32::math::round(x), x.round()
);
exact_fn!(
    /// `x` rounded to the nearest integer, ties away from zero.
    round, (x), f64, core::f64::math::round(x), x.round()
);
exact_fn!(
    /// Absolute value.
    fabsf, (x), f32, x.abs()
);
exact_fn!(
    /// Absolute value.
    fabs, (x), f64, x.abs()
);
exact_fn!(
    /// `x`'s magnitude with `y`'s sign.
    copysignf, (x, y), f32, x.copysign(y)
);
exact_fn!(
    /// `x`'s magnitude with `y`'s sign.
    copysign, (x, y), f64, x.copysign(y)
);

/// Minimum; if one operand is NaN, the other (IEEE 754 `minNum`). `libm` on both sides.
#[inline(always)]
#[must_use]
pub fn fminf(x: f32, y: f32) -> f32 {
    libm::fminf(x, y)
}

/// Minimum; if one operand is NaN, the other (IEEE 754 `minNum`). `libm` on both sides.
#[inline(always)]
#[must_use]
pub fn fmin(x: f64, y: f64) -> f64 {
    libm::fmin(x, y)
}

/// Maximum; if one operand is NaN, the other (IEEE 754 `maxNum`). `libm` on both sides.
#[inline(always)]
#[must_use]
pub fn fmaxf(x: f32, y: f32) -> f32 {
    libm::fmaxf(x, y)
}

/// Maximum; if one operand is NaN, the other (IEEE 754 `maxNum`). `libm` on both sides.
#[inline(always)]
#[must_use]
pub fn fmax(x: f64, y: f64) -> f64 {
    libm::fmax(x, y)
}

/// Defines public functions that are `libm`'s on both sides, in every backend (exact
/// operations, or ones whose libdevice twin takes pointers or integers).
macro_rules! libm_fns {
    ($($(#[$doc:meta])* $name:ident ($($arg:ident: $t:ty),+) -> $r:ty;)*) => {$(
        $(#[$doc])*
        #[doc = concat!("\n\n`libm::", stringify!($name), "` on the GPU and the host, in every \
            backend (same bits on both sides).")]
        #[inline(always)]
        #[must_use]
        pub fn $name($($arg: $t),+) -> $r {
            libm::$name($($arg),+)
        }
    )*};
}

libm_fns! {
    /// Remainder of `x / y` with the sign of `x`, exact (C `fmodf`; Rust's `x % y`).
    fmodf(x: f32, y: f32) -> f32;
    /// Remainder of `x / y` with the sign of `x`, exact (C `fmod`; Rust's `x % y`).
    fmod(x: f64, y: f64) -> f64;
    /// `(sin x, cos x)`, `x` in radians.
    sincosf(x: f32) -> (f32, f32);
    /// `(sin x, cos x)`, `x` in radians.
    sincos(x: f64) -> (f64, f64);
    /// `(m, e)` with `x = m·2^e` and `|m|` in `[0.5, 1)` (`(x, 0)` for 0, ∞ and NaN).
    frexpf(x: f32) -> (f32, i32);
    /// `(m, e)` with `x = m·2^e` and `|m|` in `[0.5, 1)` (`(x, 0)` for 0, ∞ and NaN).
    frexp(x: f64) -> (f64, i32);
    /// `x·2^n`, exact unless it overflows or is subnormal.
    ldexpf(x: f32, n: i32) -> f32;
    /// `x·2^n`, exact unless it overflows or is subnormal.
    ldexp(x: f64, n: i32) -> f64;
    /// `x·2^n` (the same as [`ldexpf`]).
    scalbnf(x: f32, n: i32) -> f32;
    /// `x·2^n` (the same as [`ldexp`]).
    scalbn(x: f64, n: i32) -> f64;
    /// The unbiased exponent of `x` (`floor(log2|x|)`); `i32::MIN` for 0 and NaN, `i32::MAX`
    /// for ±∞ (C's `FP_ILOGB0` / `FP_ILOGBNAN` as `libm` defines them).
    ilogbf(x: f32) -> i32;
    /// The unbiased exponent of `x` (`floor(log2|x|)`); `i32::MIN` for 0 and NaN, `i32::MAX`
    /// for ±∞.
    ilogb(x: f64) -> i32;
    /// Bessel function of the first kind, order `n`.
    jnf(n: i32, x: f32) -> f32;
    /// Bessel function of the first kind, order `n`.
    jn(n: i32, x: f64) -> f64;
    /// Bessel function of the second kind, order `n` (`x > 0`).
    ynf(n: i32, x: f32) -> f32;
    /// Bessel function of the second kind, order `n` (`x > 0`).
    yn(n: i32, x: f64) -> f64;
}

/// Whether this build uses the fast (libdevice) backend: `true` only in GPU code built with
/// `cfg(cuda_std_fast_math)`.
pub const FAST_MATH: bool = cfg!(all(target_arch = "nvptx64", cuda_std_fast_math));

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's fused multiply-add (FMA3 where the CPU has it) gives libm's software
    /// result bit for bit: on a sweep of operand bit patterns that mixes normal, subnormal,
    /// infinite and NaN values, and products that cancel the addend.
    #[test]
    fn host_fused_multiply_add_equals_the_software_one() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            let r = next();
            let (x, y) = (f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32));
            // Every other addend is minus the rounded product: the fused result is then the
            // product's rounding error, which an unfused operation loses.
            let z = if r & 1 == 0 {
                f32::from_bits(next() as u32)
            } else {
                -(x * y)
            };
            let (got, want) = (fmaf(x, y, z), libm::fmaf(x, y, z));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fmaf({x:e}, {y:e}, {z:e}) = {got:e}, libm says {want:e}"
            );
            let (x, y) = (f64::from_bits(r), f64::from_bits(r.rotate_left(29)));
            let z = if r & 2 == 0 {
                f64::from_bits(next())
            } else {
                -(x * y)
            };
            let (got, want) = (fma(x, y, z), libm::fma(x, y, z));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "fma({x:e}, {y:e}, {z:e}) = {got:e}, libm says {want:e}"
            );
        }
    }

    #[test]
    fn fused_multiply_add_rounds_once() {
        // 1 + 2^-23 squared is 1 + 2^-22 + 2^-46: unfused, the 2^-46 term is lost before the
        // subtraction; fused, it survives.
        let a = 1.0f32 + f32::EPSILON;
        let c = -(1.0f32 + 2.0 * f32::EPSILON);
        assert_eq!(a * a + c, 0.0);
        assert_eq!(fmaf(a, a, c), f32::EPSILON * f32::EPSILON);
        let a = 1.0f64 + f64::EPSILON;
        let c = -(1.0f64 + 2.0 * f64::EPSILON);
        assert_eq!(fma(a, a, c), f64::EPSILON * f64::EPSILON);
        assert_eq!(fma(3.0, 4.0, 5.0), 17.0);
    }

    #[test]
    fn correctly_rounded_functions_give_libms_bits_in_every_backend() {
        // With or without the `std` feature: the same bits as libm's correctly rounded code.
        let vals = [0.1, -0.7, 1.0 / 3.0, 2.5e-7, 123.456, -1e-3, 7.0, -2.5];
        for a in vals {
            for b in vals {
                for c in vals {
                    assert_eq!(fma(a, b, c).to_bits(), libm::fma(a, b, c).to_bits());
                    let (a, b, c) = (a as f32, b as f32, c as f32);
                    assert_eq!(fmaf(a, b, c).to_bits(), libm::fmaf(a, b, c).to_bits());
                }
            }
            let a32 = a as f32;
            assert_eq!(sqrt(a.abs()).to_bits(), libm::sqrt(a.abs()).to_bits());
            assert_eq!(sqrtf(a32.abs()).to_bits(), libm::sqrtf(a32.abs()).to_bits());
            assert_eq!(floorf(a32).to_bits(), libm::floorf(a32).to_bits());
            assert_eq!(floor(a).to_bits(), libm::floor(a).to_bits());
            assert_eq!(roundf(a32).to_bits(), libm::roundf(a32).to_bits());
            assert_eq!(ceil(a).to_bits(), libm::ceil(a).to_bits());
            assert_eq!(trunc(a).to_bits(), libm::trunc(a).to_bits());
        }
        // Powers of two have exact base-2 logarithms.
        assert_eq!(log2f(65536.0), 16.0);
        assert_eq!(log2f(0.125), -3.0);
    }

    #[test]
    fn host_backend_is_libm() {
        const { assert!(!FAST_MATH) };
        for x in [0.1f32, 1.0, 2.5, -3.75, 100.0] {
            assert_eq!(sinf(x).to_bits(), libm::sinf(x).to_bits());
            assert_eq!(
                powf(x.abs(), 1.3).to_bits(),
                libm::powf(x.abs(), 1.3).to_bits()
            );
            assert_eq!(sqrtf(x.abs()).to_bits(), x.abs().sqrt().to_bits());
            assert_eq!(fmaf(x, 3.0, 1.0).to_bits(), x.mul_add(3.0, 1.0).to_bits());
        }
        assert_eq!(log(10.0f64).to_bits(), libm::log(10.0).to_bits());
    }
}
