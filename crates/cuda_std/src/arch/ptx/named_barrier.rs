//! Named barriers on the GPU: `barrier.sync a, b` (PTX ISA §9.7.13.1 "bar, barrier"), the
//! non-`.aligned` form for the reason given at `thread::sync_threads` (`arch/ptx/thread.rs`).

/// # Safety
/// As `thread::named_barrier_sync`.
#[inline(always)]
pub(crate) unsafe fn named_barrier_sync<const THREADS: u32>(id: u32) {
    // SAFETY: caller contract (id 0..=15, every participant passes the same count). No
    // `nomem`: the barrier orders the participants' memory accesses, so the asm is a
    // compiler memory barrier too. The count is an immediate.
    unsafe {
        core::arch::asm!("barrier.sync {id}, {n};", id = in(reg32) id, n = const THREADS,
            options(nostack))
    };
}
