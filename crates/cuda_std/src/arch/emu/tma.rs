//! `tma` on the CPU emulator: not emulated yet (the launch fails with
//! `EmuError::NotEmulated` naming the call).

use super::not_emulated;
use crate::barrier::MBarrier;
use cust_core::TensorMap;

/// # Safety
/// As `tma::load_2d`.
#[track_caller]
pub(crate) unsafe fn load_2d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, bar: &MBarrier) {
    not_emulated!("tma::load_2d", dst, map, x, y, bar)
}

/// # Safety
/// As `tma::load_2d_multicast`.
#[track_caller]
pub(crate) unsafe fn load_2d_multicast(
    dst: *mut u8,
    map: *const TensorMap,
    x: i32,
    y: i32,
    bar: &MBarrier,
    cta_mask: u16,
) {
    not_emulated!("tma::load_2d_multicast", dst, map, x, y, bar, cta_mask)
}

/// # Safety
/// As `tma::store_2d`.
#[track_caller]
pub(crate) unsafe fn store_2d(map: *const TensorMap, x: i32, y: i32, src: *const u8) {
    not_emulated!("tma::store_2d", map, x, y, src)
}

#[track_caller]
pub(crate) fn commit_group() {
    not_emulated!("tma::commit_group")
}

#[track_caller]
pub(crate) fn wait_group_read<const N: u32>() {
    not_emulated!("tma::wait_group_read")
}

#[track_caller]
pub(crate) fn fence_proxy_async_shared() {
    not_emulated!("tma::fence_proxy_async_shared")
}

/// # Safety
/// As `tma::prefetch_descriptor`.
#[track_caller]
pub(crate) unsafe fn prefetch_descriptor(map: *const TensorMap) {
    not_emulated!("tma::prefetch_descriptor", map)
}
