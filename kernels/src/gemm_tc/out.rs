//! The output side shared by both kernel families (sm_80+: `cvt.rn.bf16.f32`).

use cuda_std::DeviceCopy;
use cuda_std::half::{bf16, bf16_from_f32, f16, f16_from_f32};
use cuda_std::shared::window::{self, SharedAddr};

/// An output element type of the tensor-core GEMMs: `f32` accumulators rounded to it
/// (to nearest, ties to even) and stored.
pub trait OutElem: Copy + DeviceCopy {
    /// Bytes per element.
    const BYTES: u32;
    /// `x` rounded to `Self`.
    fn from_f32(x: f32) -> Self;
    /// Stores `x` and `y`, rounded to `Self`, at `p[0]` and `p[1]` with one access.
    ///
    /// # Safety
    /// `p` is valid for writing two elements and aligned to their size (`2·BYTES`).
    #[inline(always)]
    unsafe fn store_pair(p: *mut Self, x: f32, y: f32) {
        // SAFETY: caller contract.
        unsafe { *p.cast::<[Self; 2]>() = [Self::from_f32(x), Self::from_f32(y)] };
    }
    /// Stores `x` and `y`, rounded to `Self`, at the shared address `addr` and the next
    /// element with one `st.shared` (32 bits for bf16/f16, 64 for f32).
    ///
    /// # Safety
    /// `addr` is the shared address of two elements inside one shared array of this
    /// CTA, aligned to `2·BYTES`, that no other thread accesses concurrently (the rules
    /// of `cuda_std::shared::window`).
    unsafe fn store_pair_shared(addr: SharedAddr, x: f32, y: f32);
}

impl OutElem for bf16 {
    const BYTES: u32 = 2;
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        bf16_from_f32(x)
    }
    #[inline(always)]
    unsafe fn store_pair(p: *mut Self, x: f32, y: f32) {
        let bits =
            u32::from(bf16_from_f32(x).to_bits()) | (u32::from(bf16_from_f32(y).to_bits()) << 16);
        // SAFETY: caller contract (4-byte aligned): one 32-bit store, low half first.
        unsafe { *p.cast::<u32>() = bits };
    }
    #[inline(always)]
    unsafe fn store_pair_shared(addr: SharedAddr, x: f32, y: f32) {
        let bits =
            u32::from(bf16_from_f32(x).to_bits()) | (u32::from(bf16_from_f32(y).to_bits()) << 16);
        // SAFETY: caller contract (4-byte aligned), low half first.
        unsafe { window::store_b32(addr, bits) };
    }
}

impl OutElem for f16 {
    const BYTES: u32 = 2;
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        f16_from_f32(x)
    }
    #[inline(always)]
    unsafe fn store_pair(p: *mut Self, x: f32, y: f32) {
        let bits =
            u32::from(f16_from_f32(x).to_bits()) | (u32::from(f16_from_f32(y).to_bits()) << 16);
        // SAFETY: caller contract (4-byte aligned).
        unsafe { *p.cast::<u32>() = bits };
    }
    #[inline(always)]
    unsafe fn store_pair_shared(addr: SharedAddr, x: f32, y: f32) {
        let bits =
            u32::from(f16_from_f32(x).to_bits()) | (u32::from(f16_from_f32(y).to_bits()) << 16);
        // SAFETY: caller contract (4-byte aligned), low half first.
        unsafe { window::store_b32(addr, bits) };
    }
}

impl OutElem for f32 {
    const BYTES: u32 = 4;
    #[inline(always)]
    fn from_f32(x: f32) -> Self {
        x
    }
    #[inline(always)]
    unsafe fn store_pair(p: *mut Self, x: f32, y: f32) {
        // SAFETY: caller contract (8-byte aligned): one `st.v2.f32`.
        unsafe { cuda_std::mem::store_v2_f32(p, [x, y]) };
    }
    #[inline(always)]
    unsafe fn store_pair_shared(addr: SharedAddr, x: f32, y: f32) {
        // SAFETY: caller contract (8-byte aligned).
        unsafe { window::store_v2_f32(addr, [x, y]) };
    }
}
