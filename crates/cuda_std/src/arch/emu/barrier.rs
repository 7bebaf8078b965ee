//! `barrier` on the CPU emulator: `mbarrier` objects with phases, arrivals and transaction
//! counts, modelled beside the block by `cuda_emu` (its `mbarrier` module: what is and is
//! not modelled). A poll of a phase that has not completed lets the block's other threads
//! run; one that can never complete fails the launch as a deadlock. The cluster forms arrive
//! on the barrier at the same offset in another block of the cluster.

use cuda_emu::device;

#[track_caller]
pub(crate) fn fence_init() {
    // Inits are visible to the block's other threads and to the emulated TMA at once.
    device::enter("barrier::fence_init");
}

/// # Safety
/// As `MBarrier::init`.
#[track_caller]
pub(crate) unsafe fn init(bar: *mut u64, n: u32) {
    device::mbarrier_init("barrier::MBarrier::init", bar, n);
}

/// # Safety
/// As `MBarrier::arrive`.
#[track_caller]
pub(crate) unsafe fn arrive(bar: *mut u64) {
    device::mbarrier_arrive("barrier::MBarrier::arrive", bar, 0, true);
}

/// # Safety
/// As `MBarrier::arrive_expect_tx`.
#[track_caller]
pub(crate) unsafe fn arrive_expect_tx(bar: *mut u64, tx: u32) {
    device::mbarrier_arrive("barrier::MBarrier::arrive_expect_tx", bar, tx, true);
}

/// # Safety
/// As `MBarrier::expect_tx`.
#[track_caller]
pub(crate) unsafe fn expect_tx(bar: *mut u64, tx: u32) {
    device::mbarrier_arrive("barrier::MBarrier::expect_tx", bar, tx, false);
}

/// # Safety
/// As `MBarrier::try_wait`.
#[track_caller]
pub(crate) unsafe fn try_wait(bar: *mut u64, parity: u32) -> bool {
    device::mbarrier_poll("barrier::MBarrier::try_wait", bar, parity)
}

/// # Safety
/// As `MBarrier::test_wait`.
#[track_caller]
pub(crate) unsafe fn test_wait(bar: *mut u64, parity: u32) -> bool {
    device::mbarrier_poll("barrier::MBarrier::test_wait", bar, parity)
}

/// # Safety
/// As `MBarrier::arrive_cluster`.
#[track_caller]
pub(crate) unsafe fn arrive_cluster(bar: *mut u64, cta_rank: u32) {
    device::mbarrier_arrive_remote("barrier::MBarrier::arrive_cluster", bar, cta_rank);
}

/// # Safety
/// As `MBarrier::arrive_remote`.
#[track_caller]
pub(crate) unsafe fn arrive_remote(bar: *mut u64, cta_rank: u32) {
    device::mbarrier_arrive_remote("barrier::MBarrier::arrive_remote", bar, cta_rank);
}
