//! `barrier` on the CPU emulator: `mbarrier` is not emulated yet (the launch fails with
//! `EmuError::NotEmulated` naming the call).

use super::not_emulated;

#[track_caller]
pub(crate) fn fence_init() {
    not_emulated!("barrier::fence_init")
}

/// # Safety
/// As `MBarrier::init`.
#[track_caller]
pub(crate) unsafe fn init(bar: *mut u64, n: u32) {
    not_emulated!("barrier::MBarrier::init", bar, n)
}

/// # Safety
/// As `MBarrier::arrive`.
#[track_caller]
pub(crate) unsafe fn arrive(bar: *mut u64) {
    not_emulated!("barrier::MBarrier::arrive", bar)
}

/// # Safety
/// As `MBarrier::arrive_expect_tx`.
#[track_caller]
pub(crate) unsafe fn arrive_expect_tx(bar: *mut u64, tx: u32) {
    not_emulated!("barrier::MBarrier::arrive_expect_tx", bar, tx)
}

/// # Safety
/// As `MBarrier::expect_tx`.
#[track_caller]
pub(crate) unsafe fn expect_tx(bar: *mut u64, tx: u32) {
    not_emulated!("barrier::MBarrier::expect_tx", bar, tx)
}

/// # Safety
/// As `MBarrier::try_wait`.
#[track_caller]
pub(crate) unsafe fn try_wait(bar: *mut u64, parity: u32) -> bool {
    not_emulated!("barrier::MBarrier::try_wait", bar, parity)
}

/// # Safety
/// As `MBarrier::test_wait`.
#[track_caller]
pub(crate) unsafe fn test_wait(bar: *mut u64, parity: u32) -> bool {
    not_emulated!("barrier::MBarrier::test_wait", bar, parity)
}

/// # Safety
/// As `MBarrier::arrive_cluster`.
#[track_caller]
pub(crate) unsafe fn arrive_cluster(bar: *mut u64, cta_rank: u32) {
    not_emulated!("barrier::MBarrier::arrive_cluster", bar, cta_rank)
}

/// # Safety
/// As `MBarrier::arrive_remote`.
#[track_caller]
pub(crate) unsafe fn arrive_remote(bar: *mut u64, cta_rank: u32) {
    not_emulated!("barrier::MBarrier::arrive_remote", bar, cta_rank)
}
