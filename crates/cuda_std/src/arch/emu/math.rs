//! The GPU's approximate transcendental functions on the host: `libm`'s function (musl's,
//! within 1 ulp), with the GPU's flush of subnormal results to zero. Not the special-function
//! unit's bits (NVIDIA does not publish its algorithm), only within its error bound.

/// `2^x` as `libm::exp2f` computes it, a result below `f32`'s smallest normal flushed to `+0`
/// (as `ex2.approx.ftz.f32`; `2^x` is never negative).
#[inline(always)]
pub(crate) fn ex2_approx_ftz(x: f32) -> f32 {
    let y = libm::exp2f(x);
    if y < f32::MIN_POSITIVE { 0.0 } else { y }
}
