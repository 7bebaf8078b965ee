//! Probes of the device API that Rust-CUDA kernels use and `cuda_std` adds for them
//! (issue 34 item 5): the float traits [`GpuFloat`] / [`FloatExt`] (with the erf family's
//! inverses and `erfcx`, composed in `cuda_std`), the atomic float types,
//! Rust-CUDA's `warp_shuffle_*` (with the in-range flag, on 8-, 16-, 32- and 128-bit
//! values), its fence names, `cuda_std::vek`, and `cfg(target_feature = "compute_NN")`.
//! `tests/tests/rustcuda.rs` compares them with CPU references computed independently
//! (`libm` and std on the host, segment arithmetic for the shuffles).

use cuda_std::atomic::{AtomicF32, AtomicF64, BlockAtomicF32, Ordering, SystemAtomicF64};
use cuda_std::prelude::*;
use cuda_std::vek::Vec3;
use cuda_std::warp::{
    activemask, warp_shuffle_down, warp_shuffle_idx, warp_shuffle_up, warp_shuffle_xor,
};
use cuda_std::{FloatExt, GpuFloat};

/// Results per input of [`rc_float_f32`] and [`rc_float_f64`], in this order.
pub const RC_FLOAT_FUNCTIONS: [&str; 16] = [
    "log10",
    "fract",
    "rem_euclid(x, 0.75)",
    "powi(x, 5)",
    "sin_cos.0",
    "sin_cos.1",
    "asinh",
    "cospi",
    "sinpi",
    "erfc",
    "frexp.0",
    "ldexp(x, 7)",
    "lgamma",
    "j1",
    "yn(3, |x| + 0.5)",
    "norm_cdf",
];

/// The functions of [`RC_FLOAT_FUNCTIONS`] of `x`, through the traits (called by path: on
/// the host a method call would reach std's inherent method, which uses the platform's libm).
macro_rules! rc_float_values {
    ($x:expr, $t:ty) => {{
        let x: $t = $x;
        let (s, c) = GpuFloat::sin_cos(x);
        [
            GpuFloat::log10(x),
            GpuFloat::fract(x),
            GpuFloat::rem_euclid(x, 0.75),
            GpuFloat::powi(x, 5),
            s,
            c,
            GpuFloat::asinh(x),
            FloatExt::cospi(x),
            FloatExt::sinpi(x),
            FloatExt::complementary_error_function(x),
            FloatExt::frexp(x).0,
            FloatExt::ldexp(x, 7),
            FloatExt::log_gamma(x),
            FloatExt::j1(x),
            FloatExt::yn(GpuFloat::abs(x) + 0.5, 3),
            FloatExt::norm_cdf(x),
        ]
    }};
}

/// `out[i·16 + j]` = function `j` of [`RC_FLOAT_FUNCTIONS`] of `x[i]` (`f32`).
///
/// # Safety
/// `out` holds `16 · x.len()` elements; one thread per element of `x` (extra threads return).
#[kernel]
pub unsafe fn rc_float_f32(x: &[f32], out: *mut f32) {
    let i = thread::index_1d() as usize;
    if i >= x.len() {
        return;
    }
    for (j, v) in rc_float_values!(x[i], f32).into_iter().enumerate() {
        // SAFETY: in bounds by the contract; one writer per element.
        unsafe { *out.add(i * RC_FLOAT_FUNCTIONS.len() + j) = v };
    }
}

/// As [`rc_float_f32`], in `f64`.
///
/// # Safety
/// `out` holds `16 · x.len()` elements; one thread per element of `x`.
#[kernel]
pub unsafe fn rc_float_f64(x: &[f64], out: *mut f64) {
    let i = thread::index_1d() as usize;
    if i >= x.len() {
        return;
    }
    for (j, v) in rc_float_values!(x[i], f64).into_iter().enumerate() {
        // SAFETY: in bounds by the contract; one writer per element.
        unsafe { *out.add(i * RC_FLOAT_FUNCTIONS.len() + j) = v };
    }
}

/// Results per input of [`rc_erf_family_f32`] and [`rc_erf_family_f64`], in this order.
pub const RC_ERF_FUNCTIONS: [&str; 4] = ["erfinv", "erfcinv", "erfcx", "normcdfinv"];

/// The functions of [`RC_ERF_FUNCTIONS`] of `x`, through [`FloatExt`] (called by path).
macro_rules! rc_erf_values {
    ($x:expr, $t:ty) => {{
        let x: $t = $x;
        [
            FloatExt::inv_error_function(x),
            FloatExt::inv_complementary_error_function(x),
            FloatExt::scaled_complementary_error_function(x),
            FloatExt::inv_norm_cdf(x),
        ]
    }};
}

/// `out[i·4 + j]` = function `j` of [`RC_ERF_FUNCTIONS`] of `x[i]` (`f32`): the composed
/// functions of [`FloatExt`] that `libm` lacks.
///
/// # Safety
/// `out` holds `4 · x.len()` elements; one thread per element of `x` (extra threads return).
#[kernel]
pub unsafe fn rc_erf_family_f32(x: &[f32], out: *mut f32) {
    let i = thread::index_1d() as usize;
    if i >= x.len() {
        return;
    }
    for (j, v) in rc_erf_values!(x[i], f32).into_iter().enumerate() {
        // SAFETY: in bounds by the contract; one writer per element.
        unsafe { *out.add(i * RC_ERF_FUNCTIONS.len() + j) = v };
    }
}

/// As [`rc_erf_family_f32`], in `f64`.
///
/// # Safety
/// `out` holds `4 · x.len()` elements; one thread per element of `x`.
#[kernel]
pub unsafe fn rc_erf_family_f64(x: &[f64], out: *mut f64) {
    let i = thread::index_1d() as usize;
    if i >= x.len() {
        return;
    }
    for (j, v) in rc_erf_values!(x[i], f64).into_iter().enumerate() {
        // SAFETY: in bounds by the contract; one writer per element.
        unsafe { *out.add(i * RC_ERF_FUNCTIONS.len() + j) = v };
    }
}

/// The atomic float types under contention, thread `i < n`, with `v = (i % 64) as f32`
/// (small integers: every sum is exact, whatever the order):
/// - `f32s[0] += v` ([`AtomicF32::fetch_add`]); `f32s[1] -= v` (`fetch_sub`);
///   `f32s[2] max= v` (`fetch_max`);
/// - `f64s[0] += 2·v` ([`SystemAtomicF64::fetch_add`], system scope); `f64s[1] += v` through
///   [`AtomicF64`];
/// - `per_block[block] += 1` through [`BlockAtomicF32`] (only this block touches it);
/// - `f32s[3]`: thread 0 flips its sign with `fetch_xor(-0.0)` and clears bit 0 with
///   `fetch_and`, then sets bit 1 with `fetch_or`, after device, grid and system fences.
///
/// # Safety
/// `f32s` holds 4 and `f64s` 2 elements, `per_block` one per block; all zero except
/// `f32s[3]`; the launch covers `n` threads.
#[kernel]
pub unsafe fn rc_atomic_floats(f32s: *mut f32, f64s: *mut f64, per_block: *mut f32, n: u32) {
    let i = thread::index_1d();
    if i >= n as usize {
        return;
    }
    let v = (i % 64) as f32;
    // SAFETY: the contract: live, aligned global memory, accessed only atomically here.
    let (sum, diff, max, bits, sys, dev, block) = unsafe {
        (
            AtomicF32::from_ptr(f32s),
            AtomicF32::from_ptr(f32s.add(1)),
            AtomicF32::from_ptr(f32s.add(2)),
            AtomicF32::from_ptr(f32s.add(3)),
            SystemAtomicF64::from_ptr(f64s),
            AtomicF64::from_ptr(f64s.add(1)),
            BlockAtomicF32::from_ptr(per_block.add(thread::block_idx_x() as usize)),
        )
    };
    sum.fetch_add(v, Ordering::Relaxed);
    diff.fetch_sub(v, Ordering::Relaxed);
    max.fetch_max(v, Ordering::Relaxed);
    sys.fetch_add(2.0 * f64::from(v), Ordering::Relaxed);
    dev.fetch_add(f64::from(v), Ordering::Relaxed);
    // SAFETY: `per_block[block]` is accessed by this block's threads only.
    unsafe { block.fetch_add(1.0, Ordering::Relaxed) };
    if i == 0 {
        thread::device_fence();
        thread::grid_fence();
        thread::system_fence();
        bits.fetch_xor(-0.0, Ordering::Relaxed);
        bits.fetch_and(f32::from_bits(!1), Ordering::Relaxed);
        bits.fetch_or(f32::from_bits(2), Ordering::AcqRel);
    }
}

/// Words per lane written by [`rc_warp_shuffles`]: for each of the 4 modes, the `u8`, `i16`
/// and `u128` (4 words) results and the in-range flag (`u8` and `i16`'s flags must agree
/// with it; the probe writes the `u128` one).
pub const RC_SHUFFLE_WORDS: usize = 4 * 7;

/// Rust-CUDA's shuffles of the whole warp (`FULL_MASK`) with segment width `width` and
/// operand `arg` (source lane for idx, delta for up/down, lane mask for xor), for lane `l`
/// of the block (launch with 32-thread blocks): values `in8[l]` (`u8`), `in16[l]` (`i16`),
/// `in128[l]` (`u128`, as 4 little-endian words). Per mode `m` (idx, up, down, xor),
/// `out[l·28 + m·7 ..]` = `[u8 as u32, i16 as u32, u128 word 0..4, in_range as u32]`, and
/// `checks[l·5 + m]` = whether the `u8` and `i16` shuffles reported the `u128` one's flag;
/// `checks[l·5 + 4]` = [`activemask`].
///
/// # Safety
/// One block of 32 threads; `in8`, `in16` hold 32 elements, `in128` 128 words; `out` holds
/// `32 · 28`, `checks` `32 · 5`; `width` a power of two in `1..=32`.
#[kernel]
pub unsafe fn rc_warp_shuffles(
    in8: &[u8],
    in16: &[i16],
    in128: &[u32],
    out: *mut u32,
    checks: *mut u32,
    arg: u32,
    width: u32,
) {
    let l = thread::thread_idx_x() as usize;
    let w = |k: usize| u128::from(in128[4 * l + k]) << (32 * k);
    let v128 = w(0) | w(1) | w(2) | w(3);
    let (v8, v16) = (in8[l], in16[l]);
    // SAFETY: the whole warp runs every shuffle, with the same mask, operands and width.
    let results = unsafe {
        [
            (
                warp_shuffle_idx(FULL_MASK, v8, arg, width),
                warp_shuffle_idx(FULL_MASK, v16, arg, width),
                warp_shuffle_idx(FULL_MASK, v128, arg, width),
            ),
            (
                warp_shuffle_up(FULL_MASK, v8, arg, width),
                warp_shuffle_up(FULL_MASK, v16, arg, width),
                warp_shuffle_up(FULL_MASK, v128, arg, width),
            ),
            (
                warp_shuffle_down(FULL_MASK, v8, arg, width),
                warp_shuffle_down(FULL_MASK, v16, arg, width),
                warp_shuffle_down(FULL_MASK, v128, arg, width),
            ),
            (
                warp_shuffle_xor(FULL_MASK, v8, arg, width),
                warp_shuffle_xor(FULL_MASK, v16, arg, width),
                warp_shuffle_xor(FULL_MASK, v128, arg, width),
            ),
        ]
    };
    for (m, ((r8, p8), (r16, p16), (r128, p128))) in results.into_iter().enumerate() {
        let words = [
            u32::from(r8),
            r16 as u32,
            r128 as u32,
            (r128 >> 32) as u32,
            (r128 >> 64) as u32,
            (r128 >> 96) as u32,
            u32::from(p128),
        ];
        for (k, word) in words.into_iter().enumerate() {
            // SAFETY: in bounds by the contract; one writer per element.
            unsafe { *out.add(l * RC_SHUFFLE_WORDS + m * 7 + k) = word };
        }
        // SAFETY: as above.
        unsafe { *checks.add(l * 5 + m) = u32::from(p8 == p128 && p16 == p128) };
    }
    // SAFETY: as above.
    unsafe { *checks.add(l * 5 + 4) = activemask() };
}

/// `cuda_std::vek`: thread `i` writes `out[i·4 ..] = [cross.x, cross.y, cross.z, dot]` of
/// `a = Vec3(v[3i..3i+3])` and `b = Vec3(v[3i+3..3i+6])` (wrapping at the end of `v`).
///
/// # Safety
/// `v` holds `3 · n` elements, `out` `4 · n`; the launch covers `n` threads.
#[kernel]
pub unsafe fn rc_vek(v: &[f32], out: *mut f32, n: u32) {
    let i = thread::index_1d();
    if i >= n as usize {
        return;
    }
    let at = |k: usize| {
        let k = (k % n as usize) * 3;
        Vec3::new(v[k], v[k + 1], v[k + 2])
    };
    let (a, b) = (at(i), at(i + 1));
    let c = a.cross(b);
    for (k, x) in [c.x, c.y, c.z, a.dot(b)].into_iter().enumerate() {
        // SAFETY: in bounds by the contract; one writer per element.
        unsafe { *out.add(i * 4 + k) = x };
    }
}

/// A kernel that only a build for compute capability 8.0 or later defines: gated on
/// Rust-CUDA's `cfg(target_feature = "compute_80")`, which `cuda_builder` sets (the host
/// always has its handle). Writes `out[0] = 80`.
///
/// # Safety
/// `out` holds 1 element.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "compute_80"))]
#[kernel]
pub unsafe fn rc_only_compute_80(out: *mut u32) {
    if thread::index_1d() == 0 {
        // SAFETY: in bounds by the contract.
        unsafe { *out = 80 };
    }
}
