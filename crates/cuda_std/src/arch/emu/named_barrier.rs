//! Named barriers on the CPU emulator: not emulated. `cuda_emu`'s block barrier
//! (`device::barrier`) waits for every thread of the block at one barrier; it has no barrier
//! id and no participant count, so "these `THREADS` threads at barrier `id`" cannot be
//! expressed. A call fails the launch with `EmuError::NotEmulated` (outside a launch, the
//! host stub's panic).

use super::not_emulated;

/// # Safety
/// As `thread::named_barrier_sync`.
#[track_caller]
pub(crate) unsafe fn named_barrier_sync<const THREADS: u32>(id: u32) {
    not_emulated!("thread::named_barrier_sync", id, THREADS)
}
