//! Probes for `cuda_std::half`: each applies the packed arithmetic or a scalar conversion to
//! arrays, element by element, and `tests/tests/half.rs` compares the results with the same
//! functions run on the host, bit for bit.
//!
//! The `f16` probes use sm_53 instructions and are in the baseline module; the `bf16` probes
//! use `fma.rn.bf16x2` and `cvt.rn.bf16.f32` (sm_80) and exist only in the sm_80 variant
//! (`cfg(target_feature = "sm_80")`, `PROBES_SM80`).

use cuda_std::half::{self, F16x2, f16};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
use cuda_std::half::{Bf16x2, bf16};
use cuda_std::prelude::*;

/// Results per input element written by [`half_f16x2_ops`] and [`half_bf16x2_ops`].
pub const OPS_SLOTS: usize = 3;

/// For each `i < a.len()`: `out[3i] = a[i].mul_add(b[i], c[i])` (`fma.rn.f16x2`),
/// `out[3i + 1] = a[i] + b[i]` (`add.rn.f16x2`), `out[3i + 2] = a[i] * b[i]`
/// (`mul.rn.f16x2`).
///
/// # Safety
/// `b` and `c` are at least as long as `a`; `out` holds `OPS_SLOTS · a.len()` elements.
#[kernel]
pub unsafe fn half_f16x2_ops(a: &[F16x2], b: &[F16x2], c: &[F16x2], out: *mut F16x2) {
    let i = index_1d();
    if i >= a.len() {
        return;
    }
    let (x, y, z) = (a[i], b[i], c[i]);
    // SAFETY: i < a.len(), and `out` holds 3 slots per element (caller contract).
    unsafe {
        *out.add(OPS_SLOTS * i) = x.mul_add(y, z);
        *out.add(OPS_SLOTS * i + 1) = x + y;
        *out.add(OPS_SLOTS * i + 2) = x * y;
    }
}

/// For each `i < x.len()`: `out_h[i] = f16_from_f32(x[i])` (`cvt.rn.f16.f32`) and
/// `out_f[i] = f16_to_f32(h[i])` (`cvt.f32.f16`).
///
/// # Safety
/// `h` is at least as long as `x`; `out_h` and `out_f` hold `x.len()` elements each.
#[kernel]
pub unsafe fn half_f16_convert(x: &[f32], h: &[f16], out_h: *mut f16, out_f: *mut f32) {
    let i = index_1d();
    if i >= x.len() {
        return;
    }
    // SAFETY: i < x.len() ≤ the outputs' lengths (caller contract).
    unsafe {
        *out_h.add(i) = half::f16_from_f32(x[i]);
        *out_f.add(i) = half::f16_to_f32(h[i]);
    }
}

/// The `bf16` twin of [`half_f16x2_ops`] (sm_80: `fma.rn.bf16x2`, with `add`/`mul` as
/// `fma.rn.bf16x2` by `1.0`/`-0.0`): for each `i < a.len()`,
/// `out[3i..3i + 3] = [a·b + c, a + b, a·b]`.
///
/// # Safety
/// `b` and `c` are at least as long as `a`; `out` holds `OPS_SLOTS · a.len()` elements.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub unsafe fn half_bf16x2_ops(a: &[Bf16x2], b: &[Bf16x2], c: &[Bf16x2], out: *mut Bf16x2) {
    let i = index_1d();
    if i >= a.len() {
        return;
    }
    let (p, q, r) = (a[i], b[i], c[i]);
    // SAFETY: i < a.len(), and `out` holds 3 slots per element (caller contract).
    unsafe {
        *out.add(OPS_SLOTS * i) = p.mul_add(q, r);
        *out.add(OPS_SLOTS * i + 1) = p + q;
        *out.add(OPS_SLOTS * i + 2) = p * q;
    }
}

/// The `bf16` twin of [`half_f16_convert`]: for each `i < x.len()`,
/// `out_h[i] = bf16_from_f32(x[i])` (`cvt.rn.bf16.f32`, sm_80) and
/// `out_f[i] = bf16_to_f32(h[i])` (a 16-bit shift).
///
/// # Safety
/// `h` is at least as long as `x`; `out_h` and `out_f` hold `x.len()` elements each.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub unsafe fn half_bf16_convert(x: &[f32], h: &[bf16], out_h: *mut bf16, out_f: *mut f32) {
    let i = index_1d();
    if i >= x.len() {
        return;
    }
    // SAFETY: i < x.len() ≤ the outputs' lengths (caller contract).
    unsafe {
        *out_h.add(i) = half::bf16_from_f32(x[i]);
        *out_f.add(i) = half::bf16_to_f32(h[i]);
    }
}
