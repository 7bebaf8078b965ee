//! `barrier` on the GPU: `mbarrier` (PTX ISA §9.7.13.15) and `fence.mbarrier_init`.

use core::arch::asm;

use crate::shared::shared_addr;

#[inline(always)]
pub(crate) fn fence_init() {
    // SAFETY: no operands; a fence (not `nomem`).
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) };
}

/// # Safety
/// As `MBarrier::init`.
#[inline(always)]
pub(crate) unsafe fn init(bar: *mut u64, n: u32) {
    // SAFETY: caller contract. Writes shared memory: not `nomem`.
    unsafe {
        asm!("mbarrier.init.shared::cta.b64 [{a}], {n};", a = in(reg32) shared_addr(bar), n = in(reg32) n, options(nostack))
    };
}

/// # Safety
/// As `MBarrier::arrive`.
#[inline(always)]
pub(crate) unsafe fn arrive(bar: *mut u64) {
    // SAFETY: caller contract.
    unsafe {
        asm!("mbarrier.arrive.shared::cta.b64 _, [{a}];", a = in(reg32) shared_addr(bar), options(nostack))
    };
}

/// # Safety
/// As `MBarrier::arrive_expect_tx`.
#[inline(always)]
pub(crate) unsafe fn arrive_expect_tx(bar: *mut u64, tx: u32) {
    // SAFETY: caller contract.
    unsafe {
        asm!("mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {tx};", a = in(reg32) shared_addr(bar), tx = in(reg32) tx, options(nostack))
    };
}

/// # Safety
/// As `MBarrier::expect_tx`.
#[inline(always)]
pub(crate) unsafe fn expect_tx(bar: *mut u64, tx: u32) {
    // SAFETY: caller contract.
    unsafe {
        asm!("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{a}], {tx};", a = in(reg32) shared_addr(bar), tx = in(reg32) tx, options(nostack))
    };
}

/// # Safety
/// As `MBarrier::try_wait`.
#[inline(always)]
pub(crate) unsafe fn try_wait(bar: *mut u64, parity: u32) -> bool {
    let done: u32;
    // SAFETY: caller contract. An acquire: not `nomem`, not `pure`.
    unsafe {
        asm!(
            "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {ph}; \
             selp.u32 {d}, 1, 0, p; }}",
            a = in(reg32) shared_addr(bar), ph = in(reg32) parity,
            d = out(reg32) done, options(nostack))
    };
    done != 0
}

/// # Safety
/// As `MBarrier::test_wait`.
#[inline(always)]
pub(crate) unsafe fn test_wait(bar: *mut u64, parity: u32) -> bool {
    let done: u32;
    // SAFETY: caller contract. An acquire: not `nomem`, not `pure`.
    unsafe {
        asm!(
            "{{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [{a}], {ph}; \
             selp.u32 {d}, 1, 0, p; }}",
            a = in(reg32) shared_addr(bar), ph = in(reg32) parity,
            d = out(reg32) done, options(nostack))
    };
    done != 0
}

/// # Safety
/// As `MBarrier::arrive_cluster`.
#[inline(always)]
pub(crate) unsafe fn arrive_cluster(bar: *mut u64, cta_rank: u32) {
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "{{ .reg .b32 r; mapa.shared::cluster.u32 r, {a}, {rank}; \
             mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r]; }}",
            a = in(reg32) shared_addr(bar), rank = in(reg32) cta_rank, options(nostack))
    };
}

/// # Safety
/// As `MBarrier::arrive_remote`.
#[inline(always)]
pub(crate) unsafe fn arrive_remote(bar: *mut u64, cta_rank: u32) {
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "{{ .reg .b32 r; mapa.shared::cluster.u32 r, {a}, {rank}; \
             mbarrier.arrive.shared::cluster.b64 _, [r]; }}",
            a = in(reg32) shared_addr(bar), rank = in(reg32) cta_rank, options(nostack))
    };
}
