//! `thread` on the CPU emulator.

use cuda_emu::device::{self, BarrierKind};

macro_rules! special_register {
    ($($name:ident => $op:ident[$i:literal]),* $(,)?) => {$(
        #[track_caller]
        #[inline]
        pub(crate) fn $name() -> u32 {
            device::$op(concat!("thread::", stringify!($name)))[$i]
        }
    )*};
}

special_register!(
    thread_idx_x => thread_idx[0], thread_idx_y => thread_idx[1], thread_idx_z => thread_idx[2],
    block_dim_x => block_dim[0], block_dim_y => block_dim[1], block_dim_z => block_dim[2],
    block_idx_x => block_idx[0], block_idx_y => block_idx[1], block_idx_z => block_idx[2],
    grid_dim_x => grid_dim[0], grid_dim_y => grid_dim[1], grid_dim_z => grid_dim[2],
);

#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn sync_threads() {
    device::barrier("thread::sync_threads", BarrierKind::Sync, false);
}

#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn sync_threads_count(predicate: bool) -> u32 {
    device::barrier("thread::sync_threads_count", BarrierKind::Count, predicate) as u32
}

#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn sync_threads_and(predicate: bool) -> bool {
    device::barrier("thread::sync_threads_and", BarrierKind::And, predicate) != 0
}

#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn sync_threads_or(predicate: bool) -> bool {
    device::barrier("thread::sync_threads_or", BarrierKind::Or, predicate) != 0
}

macro_rules! fence_fn {
    ($($name:ident, $scope:ident);*) => {$(
        #[track_caller]
        pub(crate) fn $name() {
            // A host `SeqCst` fence; the race checks learn its release and acquire
            // (`fence.sc`).
            device::fence(
                concat!("thread::", stringify!($name)),
                device::MemScope::$scope,
                core::sync::atomic::Ordering::SeqCst,
            );
        }
    )*};
}

fence_fn!(fence_block, Block; fence_device, Device; fence_system, System);

/// Nothing to wait for: the emulator's launches run to completion in stream order, so
/// every earlier grid has completed (its writes visible) before this one starts.
#[track_caller]
pub(crate) fn grid_dependency_sync() {
    device::enter("thread::grid_dependency_sync");
}

/// Nothing to schedule: the next launch starts after this one completes.
#[track_caller]
pub(crate) fn trigger_programmatic_launch_completion() {
    device::enter("thread::trigger_programmatic_launch_completion");
}

#[track_caller]
pub(crate) fn nanosleep(ns: u32) {
    // The emulator yields to the block's other threads (spin loops make progress).
    let _ = ns;
    device::spin("thread::nanosleep");
}

/// The emulator counts nanoseconds of host time (monotonic within the process).
#[track_caller]
pub(crate) fn clock64() -> u64 {
    device::enter("thread::clock64");
    device::host_nanos()
}

#[track_caller]
pub(crate) fn global_timer_ns() -> u64 {
    device::enter("thread::global_timer_ns");
    device::host_nanos()
}

/// The emulator: the rayon worker running the block.
#[track_caller]
pub(crate) fn sm_id() -> u32 {
    device::sm_id("thread::sm_id")
}
