//! `mbarrier` on the emulator: shared-memory transaction barriers (PTX ISA §9.7.13.15
//! "mbarrier"), the synchronisation TMA loads complete on.
//!
//! What is modelled: each barrier is identified by its host address in the block's shared
//! memory, and its state lives beside the block ([`MBarriers`](crate::unit_state::MBarriers),
//! in `unit_state.rs`), not in the 8 bytes (which the emulator never reads or writes): the
//! expected arrival count of each phase, the pending arrivals and the pending transaction
//! count (tx-count) of the current phase, and the current phase's number (its parity is
//! what waiters name). Per PTX ISA §9.7.13.15.1
//! ("Contents of the mbarrier object") and §9.7.13.15.4 ("Phase Completion"):
//! - `init(count)`: phase 0, `count` pending arrivals, tx-count 0;
//! - `expect_tx(n)`: tx-count += n; `arrive`: pending arrivals −= 1; a TMA copy completing
//!   `n` bytes (`complete_tx`): tx-count −= n (it may go negative within a phase: bytes may
//!   land before they are expected);
//! - the phase completes when pending arrivals and tx-count are both 0; the next phase
//!   starts with `count` pending arrivals and tx-count 0;
//! - `test_wait.parity p` / `try_wait.parity p`: true when the phase of parity `p` has
//!   completed, i.e. the current phase's parity is not `p` (p names the current phase or
//!   the one before it, §9.7.13.15.16).
//!
//! A poll of a phase that has not completed suspends the thread ([`Suspend::MBarrier`]):
//! the scheduler resumes it with `true` when the phase completes, or with `false` once
//! nothing else in the block can run (the "system-dependent time limit" of `try_wait`;
//! `test_wait` does not wait on a GPU, but a loop of them must let the other threads run
//! here). If such a round of timed-out polls changes nothing, the launch fails with
//! [`EmuError::MBarrierDeadlock`], naming the barrier, its state and the waiting threads:
//! never a hang.
//!
//! Checked ([`EmuError::AsyncUnit`]): the barrier is 8 bytes of this block's shared memory,
//! 8-byte aligned; it is initialised before use, with a count in 1..2²⁰; a phase is never
//! re-initialised after arrivals or transactions; arrivals never exceed the count; the
//! tx-count stays within ±(2²⁰ − 1) (§9.7.13.15.1).
//!
//! The cluster forms (`arrive_cluster`, `arrive_remote`: [`arrive_remote`]) arrive on the
//! barrier at the same offset in another block of the cluster (`cluster.rs`), with the same
//! checks there.
//!
//! Not modelled: memory ordering (the emulator's threads share the host's memory, so the
//! release/acquire semantics hold trivially); `fence.mbarrier_init` (a no-op); the checks of
//! issue 30 item 3 (a read of a TMA destination before its phase completes, an `expect_tx`
//! that differs from the bytes delivered).

use core::panic::Location;
use std::string::String;
use std::vec::Vec;

use super::state::in_block_shared;
use super::state::{BlockState, Suspend, ThreadState, suspend, thread};
use super::unit_state::{MBarrierState, MBarrierWait};
use super::{Dim3, EmuError, ThreadSite};

/// Most arrivals per phase (PTX ISA §9.7.13.15.1: the expected arrival count is in
/// `1..=2^20 - 1`).
const MAX_COUNT: u32 = (1 << 20) - 1;
/// Largest magnitude of the tx-count (same section: `-(2^20 - 1)..=2^20 - 1`).
const MAX_TX: i64 = (1 << 20) - 1;

/// Fails the running thread with an [`EmuError::AsyncUnit`] about the barrier at `address`.
#[track_caller]
fn misuse(t: &ThreadState, op: &'static str, address: usize, reason: String) -> ! {
    crate::state::async_misuse(
        t,
        op,
        std::format!("the mbarrier at {address:#x}: {reason}"),
    )
}

/// Checks that `bar` is 8 aligned bytes of `block`'s shared memory.
#[track_caller]
fn check_place(t: &ThreadState, block: &BlockState, op: &'static str, bar: usize) {
    if !bar.is_multiple_of(8) {
        misuse(t, op, bar, String::from("is not 8-byte aligned"));
    }
    if !in_block_shared(block, bar, 8) {
        misuse(
            t,
            op,
            bar,
            String::from(
                "is not 8 bytes of this block's shared memory (an mbarrier lives in `.shared::cta`)",
            ),
        );
    }
}

/// Applies `f` to the initialised barrier at `bar` of block `b` (the running thread's, or
/// another block of its cluster), then completes its phase if it is done.
#[track_caller]
fn update(
    t: &ThreadState,
    b: &BlockState,
    op: &'static str,
    bar: usize,
    f: impl FnOnce(&mut MBarrierState) -> Result<(), String>,
) {
    check_place(t, b, op, bar);
    let mut all = b.mbarriers.borrow_mut();
    let Some(s) = all.0.get_mut(&bar) else {
        drop(all);
        misuse(
            t,
            op,
            bar,
            String::from("is used before `MBarrier::init` (or was never initialised)"),
        );
    };
    if let Err(reason) = f(s) {
        drop(all);
        misuse(t, op, bar, reason);
    }
    if s.tx.abs() > MAX_TX {
        let tx = s.tx;
        drop(all);
        misuse(
            t,
            op,
            bar,
            std::format!("its tx-count {tx} is outside ±(2^20 - 1) (PTX ISA §9.7.13.15.1)"),
        );
    }
    if s.pending == 0 && s.tx == 0 {
        s.phase = s.phase.wrapping_add(1);
        s.pending = s.count;
        (s.expected, s.delivered, s.expect_at) = (0, 0, None);
        b.phases_completed.set(b.phases_completed.get() + 1);
    }
    b.progress.set(b.progress.get() + 1);
}

/// `mbarrier.init`: `count` arrivals per phase, phase 0.
#[track_caller]
pub fn init(what: &'static str, bar: *mut u64, count: u32) {
    let t = thread(what);
    let bar = bar as usize;
    check_place(t, t.block(), what, bar);
    if !(1..=MAX_COUNT).contains(&count) {
        misuse(
            t,
            what,
            bar,
            std::format!("the arrival count must be in 1..=2^20 - 1; it is {count}"),
        );
    }
    let b = t.block();
    let mut all = b.mbarriers.borrow_mut();
    if let Some(s) = all.0.get(&bar)
        && (s.pending != s.count || s.tx != 0)
    {
        let s = *s;
        drop(all);
        misuse(
            t,
            what,
            bar,
            std::format!(
                "re-initialised while phase {} is in progress ({} of {} arrivals and {} \
                 transaction bytes outstanding)",
                s.phase,
                s.pending,
                s.count,
                s.tx
            ),
        );
    }
    all.0.insert(
        bar,
        MBarrierState {
            count,
            pending: count,
            tx: 0,
            phase: 0,
            expected: 0,
            delivered: 0,
            expect_at: None,
        },
    );
    b.progress.set(b.progress.get() + 1);
}

/// `mbarrier.expect_tx` (`tx` bytes), then, if `arrive`, `mbarrier.arrive`.
#[track_caller]
pub fn arrive(what: &'static str, bar: *mut u64, tx: u32, arrive: bool) {
    let t = thread(what);
    arrive_on(t, t.block(), what, bar as usize, tx, arrive);
}

/// `mbarrier.arrive` on the barrier at the same offset in the block of rank `rank` of the
/// running thread's cluster (`mapa` + `mbarrier.arrive.shared::cluster`).
#[track_caller]
pub fn arrive_remote(what: &'static str, bar: *mut u64, rank: u32) {
    let t = thread(what);
    let (b, bar) = crate::cluster::remote(t, what, bar as usize, rank);
    arrive_on(t, b, what, bar, 0, true);
}

#[track_caller]
fn arrive_on(
    t: &ThreadState,
    b: &BlockState,
    what: &'static str,
    bar: usize,
    tx: u32,
    arrive: bool,
) {
    let at = (t.tid, Location::caller());
    update(t, b, what, bar, |s| {
        s.tx += i64::from(tx);
        if tx > 0 {
            s.expected += u64::from(tx);
            s.expect_at = Some(at);
        }
        if arrive {
            if s.pending == 0 {
                return Err(std::format!(
                    "phase {} already had its {} arrivals (it waits for {} transaction \
                     bytes): arriving more often than the count is undefined behaviour",
                    s.phase,
                    s.count,
                    s.tx
                ));
            }
            s.pending -= 1;
        }
        Ok(())
    });
}

/// `complete_tx` of an asynchronous copy issued by `t`: `bytes` delivered to the barrier at
/// host address `bar` of block `b` (`t`'s, or another of its cluster for a multicast).
#[track_caller]
pub(crate) fn complete_tx(
    t: &ThreadState,
    b: &BlockState,
    what: &'static str,
    bar: usize,
    bytes: u32,
) {
    update(t, b, what, bar, |s| {
        s.tx -= i64::from(bytes);
        s.delivered += u64::from(bytes);
        Ok(())
    });
}

/// `mbarrier.try_wait.parity` / `mbarrier.test_wait.parity` (`what` names which): whether
/// the phase of parity `parity` has completed; when it has not, the thread waits (it
/// yields to the block's other threads; a phase that can never complete is an
/// [`EmuError::MBarrierDeadlock`]).
#[track_caller]
pub fn poll(what: &'static str, bar: *mut u64, parity: u32) -> bool {
    let t = thread(what);
    let address = bar as usize;
    check_place(t, t.block(), what, address);
    let b = t.block();
    {
        let all = b.mbarriers.borrow();
        if !all.0.contains_key(&address) {
            drop(all);
            misuse(
                t,
                what,
                address,
                String::from("is waited on before `MBarrier::init` (or was never initialised)"),
            );
        }
        if all.phase_done(address, parity) {
            return true;
        }
    }
    let wait = MBarrierWait {
        address,
        parity,
        what: if what.contains("test_wait") {
            "mbarrier test_wait"
        } else {
            "mbarrier try_wait"
        },
        location: Location::caller(),
    };
    suspend(t, Suspend::MBarrier(wait)) != 0
}

/// The deadlock error for the block, whose thread `site` polls `w`'s barrier (with the
/// threads `waiters`), while `elsewhere` (if any) waits at something else.
pub(crate) fn deadlock(
    block: &BlockState,
    w: MBarrierWait,
    site: ThreadSite,
    waiters: Vec<Dim3>,
    elsewhere: Option<ThreadSite>,
) -> EmuError {
    let s = block.mbarriers.borrow().0.get(&w.address).copied();
    let mem = block.mem.borrow();
    if let Some(s) = s
        && s.pending == 0
        && s.tx != 0
        && block.launch().options.checks.async_proxy
    {
        // Every arrival came: only the byte count keeps the phase open.
        let (thread, location) = s.expect_at.unwrap_or((site.thread, w.location));
        let problem = std::format!(
            "phase {} of the mbarrier at {:#x} can never complete: its `expect_tx` asked for \
             {} bytes and its TMA copies delivered {}, and every arrival has come ({} \
             thread(s) wait for it; the expected byte count must equal the bytes of the copies \
             that complete on the barrier)",
            s.phase,
            w.address,
            s.expected,
            s.delivered,
            waiters.len()
        );
        return super::proxy::hazard(block, &mem, thread, problem, w.address, location, None);
    }
    let allocation = mem.describe(w.address).map_or_else(
        || String::from("not shared memory"),
        |(name, start, _)| std::format!("{name} + {}", w.address - start),
    );
    let state = s.map_or_else(
        || String::from("not initialised"),
        |s| {
            std::format!(
                "in phase {} (parity {}) with {} of {} arrivals and {} transaction bytes \
                 outstanding",
                s.phase,
                s.phase & 1,
                s.pending,
                s.count,
                s.tx
            )
        },
    );
    EmuError::MBarrierDeadlock {
        kernel: block.launch().kernel,
        block: block.idx,
        address: w.address,
        allocation,
        parity: w.parity,
        state,
        waiting: Box::new(site),
        waiters: waiters.into_boxed_slice(),
        elsewhere: elsewhere.map(Box::new),
    }
}

use std::boxed::Box;

#[cfg(test)]
mod tests {
    use crate::device::{self, BarrierKind};
    use crate::{EmuError, EmuOptions, launch};
    use core::ffi::c_void;
    use cust_core::launch::Kernel;

    /// Runs `body` as a kernel of one block of `threads` threads with 64 bytes of dynamic
    /// shared memory (the barrier at its start).
    fn run(
        name: &'static str,
        body: unsafe fn(*const *mut c_void),
        threads: u32,
    ) -> Result<(), EmuError> {
        let kernel: Kernel<(), ()> = Kernel::__new_with_host(name, body);
        // SAFETY: the bodies take no parameters and touch only shared memory.
        unsafe {
            launch(
                &kernel,
                [1, 1, 1],
                [threads, 1, 1],
                64,
                &[],
                &EmuOptions::default(),
            )
        }
        .map(|_| ())
    }

    fn bar() -> *mut u64 {
        device::dynamic_shared("test").0.cast()
    }

    fn tid() -> u32 {
        device::thread_idx("test")[0]
    }

    /// Thread 0 initialises the barrier for `count` arrivals, then a block barrier.
    fn init(count: u32) {
        if tid() == 0 {
            super::init("init", bar(), count);
        }
        device::barrier("test", BarrierKind::Sync, false);
    }

    /// Every thread arrives and waits, for two phases: both complete.
    unsafe fn phases(_: *const *mut c_void) {
        init(64);
        for parity in [0, 1] {
            super::arrive("arrive", bar(), 0, true);
            while !super::poll("try_wait", bar(), parity) {}
            // The phase before the current one counts as completed too.
            assert!(super::poll("test_wait", bar(), parity));
        }
    }

    #[test]
    fn phases_complete_when_every_arrival_came() {
        run("phases", phases, 64).expect("both phases complete");
    }

    /// Two arrivals expected, one comes; thread 0 also expects 64 bytes that never come.
    unsafe fn one_short(_: *const *mut c_void) {
        init(2);
        if tid() == 0 {
            super::arrive("arrive_expect_tx", bar(), 64, true);
        }
        while !super::poll("try_wait", bar(), 0) {}
    }

    #[test]
    fn a_phase_that_cannot_complete_is_a_deadlock_naming_the_barrier() {
        let start = std::time::Instant::now();
        let err = run("one_short", one_short, 40).expect_err("deadlock");
        assert!(start.elapsed().as_secs() < 5, "reported, not hung");
        let EmuError::MBarrierDeadlock {
            kernel,
            parity,
            ref state,
            ref waiters,
            ref allocation,
            ..
        } = err
        else {
            panic!("expected MBarrierDeadlock, got {err}")
        };
        assert_eq!((kernel, parity), ("one_short", 0));
        assert_eq!(waiters.len(), 40);
        assert!(
            state.contains("phase 0")
                && state.contains("1 of 2 arrivals")
                && state.contains("64 transaction bytes"),
            "{err}"
        );
        assert_eq!(allocation, "dynamic shared memory + 0");
    }

    /// Arrives on a barrier nobody initialised.
    unsafe fn uninitialised(_: *const *mut c_void) {
        super::arrive("barrier::MBarrier::arrive", bar(), 0, true);
    }

    /// Arrives three times on a barrier of two arrivals per phase, with bytes outstanding.
    unsafe fn too_many(_: *const *mut c_void) {
        init(2);
        if tid() == 0 {
            super::arrive("barrier::MBarrier::arrive_expect_tx", bar(), 16, true);
            super::arrive("barrier::MBarrier::arrive", bar(), 0, true);
            super::arrive("barrier::MBarrier::arrive", bar(), 0, true);
        }
    }

    #[test]
    fn misuse_is_reported_with_the_operation() {
        let err = run("uninitialised", uninitialised, 1).expect_err("refused");
        assert!(
            matches!(&err, EmuError::AsyncUnit { op, reason, .. }
                if *op == "barrier::MBarrier::arrive" && reason.contains("before `MBarrier::init`")),
            "{err}"
        );
        let err = run("too_many", too_many, 1).expect_err("refused");
        assert!(
            matches!(&err, EmuError::AsyncUnit { reason, .. }
                if reason.contains("already had its 2 arrivals")),
            "{err}"
        );
    }
}
