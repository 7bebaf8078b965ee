//! `tma` on the GPU: `cp.async.bulk.tensor` (PTX ISA §9.7.9.25.5), `cp.async.bulk`, their
//! bulk groups, the async-proxy fence and `prefetch.tensormap`.

use core::arch::asm;

use crate::barrier::MBarrier;
use crate::shared::shared_addr;
use cust_core::TensorMap;
use cust_core::tile::Tile;

/// `tma::AVAILABLE` on the GPU: the kernels' target is sm_90 or later.
pub(crate) const AVAILABLE: bool = cfg!(target_feature = "sm_90");

/// A typed copy's check of its tile against the map: nothing on the GPU (the map is
/// opaque there; the emulator checks it).
#[inline(always)]
pub(crate) fn check_tile<Tl: Tile>(what: &'static str, map: *const TensorMap, smem: *const u8) {
    let _ = (what, map, smem);
}

/// # Safety
/// As `tma::load_2d`.
#[inline(always)]
pub(crate) unsafe fn load_2d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, bar: &MBarrier) {
    // SAFETY: caller contract. Writes shared memory asynchronously: not `nomem`.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \
             [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) shared_addr(dst),
            m = in(reg64) map as u64,
            x = in(reg32) x,
            y = in(reg32) y,
            b = in(reg32) bar.shared_addr(),
            options(nostack),
        )
    };
}

/// # Safety
/// As `tma::load_2d_multicast`.
#[inline(always)]
pub(crate) unsafe fn load_2d_multicast(
    dst: *mut u8,
    map: *const TensorMap,
    x: i32,
    y: i32,
    bar: &MBarrier,
    cta_mask: u16,
) {
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes\
             .multicast::cluster [{d}], [{m}, {{{x}, {y}}}], [{b}], {mask};",
            d = in(reg32) shared_addr(dst),
            m = in(reg64) map as u64,
            x = in(reg32) x,
            y = in(reg32) y,
            b = in(reg32) bar.shared_addr(),
            mask = in(reg16) cta_mask,
            options(nostack),
        )
    };
}

/// # Safety
/// As `tma::store_2d`.
#[inline(always)]
pub(crate) unsafe fn store_2d(map: *const TensorMap, x: i32, y: i32, src: *const u8) {
    // SAFETY: caller contract. Reads shared and writes global memory: not `nomem`.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [{m}, {{{x}, {y}}}], [{s}];",
            m = in(reg64) map as u64,
            x = in(reg32) x,
            y = in(reg32) y,
            s = in(reg32) shared_addr(src),
            options(nostack),
        )
    };
}

/// # Safety
/// As `tma::bulk_load`.
#[inline(always)]
pub(crate) unsafe fn bulk_load(dst: *mut u8, src: *const u8, bytes: u32, bar: &MBarrier) {
    // SAFETY: caller contract. Writes shared memory asynchronously: not `nomem`.
    unsafe {
        asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
            d = in(reg32) shared_addr(dst),
            s = in(reg64) src as u64,
            n = in(reg32) bytes,
            b = in(reg32) bar.shared_addr(),
            options(nostack),
        )
    };
}

/// # Safety
/// As `tma::bulk_store`.
#[inline(always)]
pub(crate) unsafe fn bulk_store(dst: *mut u8, src: *const u8, bytes: u32) {
    // SAFETY: caller contract. Reads shared and writes global memory: not `nomem`.
    unsafe {
        asm!(
            "cp.async.bulk.global.shared::cta.bulk_group [{d}], [{s}], {n};",
            d = in(reg64) dst as u64,
            s = in(reg32) shared_addr(src),
            n = in(reg32) bytes,
            options(nostack),
        )
    };
}

#[inline(always)]
pub(crate) fn commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack)) };
}

#[inline(always)]
pub(crate) fn wait_group_read<const N: u32>() {
    // SAFETY: an immediate operand. Not `nomem`: later writes to the source must stay below.
    unsafe { asm!("cp.async.bulk.wait_group.read {n};", n = const N, options(nostack)) };
}

#[inline(always)]
pub(crate) fn fence_proxy_async_shared() {
    // SAFETY: no operands; a fence.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
}

/// # Safety
/// As `tma::prefetch_descriptor`.
#[inline(always)]
pub(crate) unsafe fn prefetch_descriptor(map: *const TensorMap) {
    // SAFETY: caller contract.
    unsafe {
        asm!("prefetch.tensormap [{m}];", m = in(reg64) map as u64, options(readonly, nostack))
    };
}
