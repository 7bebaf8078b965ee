//! Named barriers on the CPU emulator: `cuda_emu`'s `device::named_barrier`, which waits
//! until `THREADS` threads, counted by whole warps, have arrived at barrier `id`; one that
//! too few threads reach fails the launch as barrier divergence (never a hang).

use cuda_emu::device;

/// # Safety
/// As `thread::named_barrier_sync`.
#[track_caller]
pub(crate) unsafe fn named_barrier_sync<const THREADS: u32>(id: u32) {
    device::named_barrier("thread::named_barrier_sync", id, THREADS);
}
