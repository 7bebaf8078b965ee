//! Probes for `cuda_std::half`'s FP8 types ([`F8E4M3`], [`F8E5M2`]): the conversions from
//! `f32` (`cvt.rn.satfinite.{e4m3,e5m2}x2.f32`) and to `f32` (`cvt.rn.f16x2.{e4m3,e5m2}x2`)
//! applied element by element; `tests/tests/fp8.rs` compares them with the host's software
//! conversions, bit for bit. The instructions need sm_89, so the probes exist only in
//! variants built for sm_89 or later (`cfg(target_feature = "sm_89")`: the sm_90a variant,
//! `PROBES_SM90A`).
#![cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_89"))]

use cuda_std::half::{F8E4M3, F8E5M2};
use cuda_std::prelude::*;

/// For each `i < x.len()`: `e4m3[i]` and `e5m2[i]` are the bits of `x[i]` converted with
/// [`F8E4M3::from_f32`] and [`F8E5M2::from_f32`].
///
/// # Safety
/// `e4m3` and `e5m2` hold `x.len()` bytes each.
#[kernel]
pub unsafe fn fp8_from_f32(x: &[f32], e4m3: *mut u8, e5m2: *mut u8) {
    let i = index_1d();
    if i >= x.len() {
        return;
    }
    // SAFETY: i < x.len(), the length of both outputs (caller contract).
    unsafe {
        e4m3.add(i).write(F8E4M3::from_f32(x[i]).to_bits());
        e5m2.add(i).write(F8E5M2::from_f32(x[i]).to_bits());
    }
}

/// For each `i < codes.len()`: `e4m3[i]` and `e5m2[i]` are `codes[i]` read as an
/// [`F8E4M3`] and an [`F8E5M2`] and converted with `to_f32`.
///
/// # Safety
/// `e4m3` and `e5m2` hold `codes.len()` `f32` each.
#[kernel]
pub unsafe fn fp8_to_f32(codes: &[u8], e4m3: *mut f32, e5m2: *mut f32) {
    let i = index_1d();
    if i >= codes.len() {
        return;
    }
    // SAFETY: as above.
    unsafe {
        e4m3.add(i).write(F8E4M3::from_bits(codes[i]).to_f32());
        e5m2.add(i).write(F8E5M2::from_bits(codes[i]).to_f32());
    }
}
