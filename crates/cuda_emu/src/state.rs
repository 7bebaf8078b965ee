//! The state every part of the emulator shares: the launch ([`Launch`]), each block's and
//! thread's state ([`BlockState`], [`ThreadState`]), the running thread in a thread-local
//! ([`current`], [`thread`]), the suspend/resume vocabulary of the scheduler and the
//! operations ([`Suspend`] and its wait records, [`Resume`], [`Unwind`]; [`suspend`],
//! [`fail`]), and the host stub's panic ([`gpu_only`]). It imports only the crate root's
//! types and the low data modules (`shared_mem.rs`, `unit_state.rs`, `clock.rs`,
//! `global_shadow.rs`), never an operation.

use core::cell::{Cell, RefCell};
use core::ffi::c_void;
use core::panic::Location;
use core::sync::atomic::{AtomicU64, Ordering};
use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

use corosensei::Yielder;
use cust_core::launch::HostEntry;

use crate::shared_mem::SharedMem;
use crate::unit_state::{AsyncState, MBarrierWait, MBarriers, TensorOp};
use crate::{Dim3, EmuError, EmuOptions, Printed, SourceLocation};

/// Where a thread is: its scheduling state (`block.rs`), which the thread itself sets to
/// `Wait` when it suspends ([`suspend`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum St {
    Ready(u64),
    Wait(Suspend),
    Done,
}

/// What a thread waits for when it suspends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Suspend {
    /// A block barrier.
    Barrier(BarrierWait),
    /// A warp collective.
    Warp(WarpWait),
    /// A spin: `nanosleep`, or a repeated poll (an atomic load, or an atomic
    /// read-modify-write or compare-and-swap that left memory unchanged, at a call the
    /// thread polled at since it last spun: `ctx.rs`). Runnable again at once, behind the
    /// block's other ready threads (`block.rs` reports a block that does nothing else for a
    /// second while the launch makes no progress: a livelock).
    Spin(SpinWait),
    /// A yield before a memory access, with a seed (`ctx.rs`): runnable again at once,
    /// behind the block's other ready threads. Progress, not a spin.
    Yield,
    /// An `mbarrier` poll (`try_wait`/`test_wait`) of a phase that has not completed:
    /// runnable again when the phase completes (resumed with 1) or, when nothing else can
    /// run, once with 0 (the poll's time limit; see `block.rs`).
    MBarrier(MBarrierWait),
    /// A warpgroup collective (`wgmma.mma_async`): completes when the 128 threads of the
    /// warpgroup have arrived (see `wgmma.rs`).
    Group(GroupWait),
    /// A named barrier (`barrier.sync id, threads`): completes when `threads` threads have
    /// arrived at barrier `id`.
    Named(NamedWait),
    /// The cluster barrier's wait (`barrier.cluster.wait`): runnable again when the
    /// cluster's phase `phase` has completed (see `cluster.rs`).
    Cluster(ClusterWait),
}

/// A thread that spun: the intrinsic and its call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpinWait {
    pub(crate) what: &'static str,
    pub(crate) location: &'static Location<'static>,
}

/// A thread waiting at the cluster barrier.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClusterWait {
    /// The cluster barrier phase the thread arrived in; it waits for that phase to complete.
    pub(crate) phase: u32,
    pub(crate) location: &'static Location<'static>,
}

/// A thread waiting at a named barrier.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NamedWait {
    /// The barrier, 0..16.
    pub(crate) id: u32,
    /// The threads it waits for.
    pub(crate) threads: u32,
    pub(crate) location: &'static Location<'static>,
}

/// A thread waiting at a warpgroup collective.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupWait {
    /// The address of the thread's record (on its suspended stack).
    pub(crate) record: usize,
    /// The intrinsic.
    pub(crate) what: &'static str,
    pub(crate) location: &'static Location<'static>,
}

/// What a suspended thread is resumed with.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resume {
    /// Go on; the collective's result (0 where there is none).
    Value(u64),
    /// Unwind: the block is being abandoned.
    Cancel,
}

/// The kinds of block barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    Sync,
    Count,
    And,
    Or,
}

impl BarrierKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Sync => "sync_threads",
            Self::Count => "sync_threads_count",
            Self::And => "sync_threads_and",
            Self::Or => "sync_threads_or",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct BarrierWait {
    pub(crate) kind: BarrierKind,
    pub(crate) predicate: bool,
    pub(crate) location: &'static Location<'static>,
}

/// The kinds of warp collective, with the qualifiers that must agree across lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpKind {
    /// `shfl.sync` with its mode (0 idx, 1 up, 2 down, 3 bfly) and `c` operand.
    Shfl {
        mode: u8,
        c: u32,
    },
    VoteAll,
    VoteAny,
    VoteUni,
    Ballot,
    MatchAny,
    MatchAll,
    /// `redux.sync`: op (0 add, 1 min, 2 max, 3 and, 4 or, 5 xor), signed.
    Redux {
        op: u8,
        signed: bool,
    },
    SyncWarp,
    /// A tensor-core collective (`mma.sync`, `ldmatrix`, `stmatrix`): each lane's value is
    /// the address of its record (`tensor::complete`).
    Tensor(TensorOp),
}

impl WarpKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Shfl { mode: 0, .. } => "shfl_idx_sync",
            Self::Shfl { mode: 1, .. } => "shfl_up_sync",
            Self::Shfl { mode: 2, .. } => "shfl_down_sync",
            Self::Shfl { .. } => "shfl_xor_sync",
            Self::VoteAll => "vote_all_sync",
            Self::VoteAny => "vote_any_sync",
            Self::VoteUni => "vote_uni_sync",
            Self::Ballot => "vote_ballot_sync",
            Self::MatchAny => "match_any_sync",
            Self::MatchAll => "match_all_sync",
            Self::Redux { .. } => "redux_sync",
            Self::SyncWarp => "sync_warp",
            Self::Tensor(op) => op.name(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct WarpWait {
    pub(crate) kind: WarpKind,
    pub(crate) mask: u32,
    /// The lane's value (predicate as 0/1, 32-bit values zero-extended).
    pub(crate) value: u64,
    /// The lane's `b` operand (shuffle source lane, delta or xor mask).
    pub(crate) b: u32,
    pub(crate) location: &'static Location<'static>,
}

/// How a thread's coroutine is unwound by the emulator itself (payloads of
/// `resume_unwind`, never seen by the panic hook).
#[derive(Debug)]
pub(crate) enum Unwind {
    /// The block is abandoned (another thread failed, or a deadlock).
    Cancel,
    /// This thread failed a check or an assertion; the error is recorded in its block.
    Abort,
}

/// One emulated thread.
pub(crate) struct ThreadState {
    pub(crate) tid: Dim3,
    pub(crate) linear: u32,
    pub(crate) block: *const BlockState,
    pub(crate) yielder: Cell<*const Yielder<Resume, ()>>,
    /// The coroutine stack's address range `[start, end)` (set when the thread starts):
    /// accesses to locals are in bounds.
    pub(crate) stack: Cell<(usize, usize)>,
    /// Cluster barrier arrivals (`barrier.cluster.arrive`) so far.
    pub(crate) cluster_arrivals: Cell<u32>,
    /// Cluster barrier waits (`barrier.cluster.wait`) so far.
    pub(crate) cluster_waits: Cell<u32>,
    /// The calls (`Location` addresses; 0: none) of the thread's polls since its last spin
    /// (`ctx.rs`: a poll at one of them again is a spin).
    pub(crate) polls: Cell<[usize; POLL_SITES]>,
    /// Where the next new poll site goes in `polls` (modulo its length).
    pub(crate) polls_next: Cell<u8>,
    /// One more than the block interval of the thread's last checked access (0: none):
    /// a release carries the thread's own component only when it is the current one.
    pub(crate) accessed: Cell<u32>,
    /// The addresses the thread read at its last seeded yields (0: none), and the block's
    /// write count then (`ctx::interleave`: a read yield that repeats one with nothing
    /// written since is a spin).
    pub(crate) yield_reads: Cell<[usize; POLL_SITES]>,
    pub(crate) yield_written: Cell<u64>,
    /// Checked memory accesses since the thread last suspended (counted only without a
    /// seed: `ctx::interleave`).
    pub(crate) run_accesses: Cell<u32>,
    /// Where the thread writes its stack pointer when it suspends, in its block's
    /// scheduler (which prefetches the stack lines the thread's resumption reads, and
    /// reads the stack pointers from one dense array, not from the threads' states).
    pub(crate) sp: *const Cell<usize>,
    /// The thread's scheduling state, in its block's scheduler (set before the thread
    /// starts; the scheduler outlives the thread's coroutine).
    pub(crate) state: *const Cell<St>,
}

/// How many distinct poll calls a thread's spin loop may make and still be seen as one.
pub(crate) const POLL_SITES: usize = 4;

/// A warp's `sync_warp`s in one barrier interval: the masks, in completion order.
#[derive(Clone, Debug, Default)]
pub(crate) struct WarpSyncs {
    /// The block's barrier interval (`BlockState::epoch`) they belong to.
    pub(crate) epoch: u32,
    pub(crate) masks: Vec<u32>,
}

impl WarpSyncs {
    /// How many `sync_warp`s of interval `epoch` have completed: an access records it, to
    /// know later which came after it.
    pub(crate) fn count(&self, epoch: u32) -> u32 {
        if self.epoch == epoch {
            self.masks.len() as u32
        } else {
            0
        }
    }

    /// Whether a `sync_warp` completed after the first `since` of interval `epoch` named
    /// both lanes `a` and `b`: it orders an access by `a` before it (when `a` had seen
    /// `since` of them) before any access by `b` after it.
    pub(crate) fn orders(&self, epoch: u32, since: u32, a: u32, b: u32) -> bool {
        let both = (1u32 << (a % 32)) | (1u32 << (b % 32));
        self.epoch == epoch
            && self
                .masks
                .get(since as usize..)
                .is_some_and(|m| m.iter().any(|&mask| mask & both == both))
    }
}

/// One block being run, shared by its threads (one OS thread runs them all, one at a time).
pub(crate) struct BlockState {
    pub(crate) launch: *const Launch,
    pub(crate) idx: Dim3,
    /// The block's cluster (a cluster of one without a cluster launch).
    pub(crate) cluster: *const ClusterState,
    /// The block's rank in its cluster (`%cluster_ctarank`).
    pub(crate) rank: u32,
    pub(crate) mem: RefCell<SharedMem>,
    /// Barrier intervals completed.
    pub(crate) epoch: Cell<u32>,
    /// The `sync_warp`s completed in the current barrier interval, per warp.
    pub(crate) warp_syncs: RefCell<Vec<WarpSyncs>>,
    /// The first uninitialised read of the current barrier interval, reported when the
    /// interval ends unless a race on it (another thread writing it in the same interval)
    /// is found first: that race is the bug.
    pub(crate) pending_uninit: RefCell<Option<EmuError>>,
    /// Lanes that have not exited, per warp.
    pub(crate) live: RefCell<Vec<u32>>,
    pub(crate) error: RefCell<Option<EmuError>>,
    /// Whether `error` holds an error ([`BlockState::record`] sets it): what the scheduler
    /// checks after every step, without the `RefCell`'s borrow.
    pub(crate) failed: Cell<bool>,
    pub(crate) printed: RefCell<Vec<Printed>>,
    pub(crate) steps: Cell<u64>,
    /// The block's `mbarrier` objects, by host address (operated on by `mbarrier.rs`).
    pub(crate) mbarriers: RefCell<MBarriers>,
    /// Counts every change a waiting thread could be waiting for (an `mbarrier` operation,
    /// a barrier or collective completing, a thread exiting): the scheduler reports a
    /// deadlock only when a round of timed-out `mbarrier` polls changed nothing.
    pub(crate) progress: Cell<u64>,
    /// `mbarrier` phases completed (the scheduler wakes the threads polling them).
    pub(crate) phases_completed: Cell<u64>,
    /// Atomics by the block's threads that changed memory (published to the launch's
    /// progress count by the scheduler: `block.rs`).
    pub(crate) writes: Cell<u64>,
    /// The progress slot of the worker that runs the block ([`Launch::note_progress`]).
    pub(crate) worker: usize,
    /// The seeded generator that picks the memory accesses a thread yields before (0, and
    /// no yields, without a seed): `ctx::check_access`.
    pub(crate) interleave: Cell<u64>,
    /// The asynchronous-proxy state: fences, `wgmma` groups in flight, accumulator writes
    /// not yet visible (`proxy.rs`).
    pub(crate) asyncs: RefCell<AsyncState>,
    /// What the block's threads released and acquired (`order.rs`).
    pub(crate) order: RefCell<crate::clock::BlockOrder>,
    /// Checked plain stores by the block's threads (counted only with a seed:
    /// `ctx::interleave`).
    pub(crate) stores: Cell<u64>,
}

impl BlockState {
    pub(crate) fn launch(&self) -> &Launch {
        // SAFETY: the launch outlives every block it runs.
        unsafe { &*self.launch }
    }

    pub(crate) fn cluster(&self) -> &ClusterState {
        // SAFETY: the cluster outlives its blocks' runs.
        unsafe { &*self.cluster }
    }

    /// The block of rank `rank` in this block's cluster, if there is one.
    pub(crate) fn sibling(&self, rank: u32) -> Option<&BlockState> {
        let blocks = self.cluster().blocks.get()?;
        // SAFETY: the cluster's blocks live as long as the cluster.
        blocks.get(rank as usize).map(|&b| unsafe { &*b })
    }

    /// The in-block index `(x, y, z)` of linear thread `linear`.
    pub(crate) fn tid_of(&self, linear: u32) -> Dim3 {
        let [bx, by, _] = self.launch().block;
        [linear % bx, (linear / bx) % by, linear / (bx * by)]
    }

    /// Records `err` unless an earlier error is recorded. A pending uninitialised read
    /// (see [`BlockState::pending_uninit`]) comes first unless `err` is a race: what follows
    /// such a read (a panic on its garbage value, a divergence) is its consequence.
    pub(crate) fn record(&self, err: EmuError) {
        let mut slot = self.error.borrow_mut();
        self.failed.set(true);
        if slot.is_none() {
            let pending = self.pending_uninit.borrow_mut().take();
            *slot = Some(match pending {
                Some(uninit) if !matches!(err, EmuError::SharedRace { .. }) => uninit,
                _ => err,
            });
        }
    }

    /// The barrier interval ends: a pending uninitialised read is reported now.
    pub(crate) fn end_interval(&self) {
        let pending = self.pending_uninit.borrow_mut().take();
        if let Some(uninit) = pending {
            self.record(uninit);
        }
        self.order.borrow_mut().end_interval();
    }
}

/// Whether `size` bytes at `addr` lie inside one of `block`'s shared allocations.
pub(crate) fn in_block_shared(block: &BlockState, addr: usize, size: usize) -> bool {
    let mem = block.mem.borrow();
    mem.statics
        .iter()
        .map(|(_, a)| a)
        .chain(core::iter::once(&mem.dynamic))
        .any(|a| {
            let start = a.ptr as usize;
            addr >= start && addr + size <= start + a.bytes
        })
}

/// The blocks of one cluster, run together on one worker, and their cluster barrier
/// (`barrier.cluster`: complete when every thread of the cluster has arrived or exited).
pub(crate) struct ClusterState {
    /// `%clusterid`: the cluster's index in the grid of clusters.
    pub(crate) id: Dim3,
    /// The cluster's blocks, by rank (set once they exist).
    pub(crate) blocks: core::cell::OnceCell<Vec<*const BlockState>>,
    /// Threads of the cluster, in all its blocks.
    pub(crate) threads: u32,
    /// Threads that arrived in the current phase and have not exited.
    pub(crate) arrived: Cell<u32>,
    /// Threads that exited.
    pub(crate) exited: Cell<u32>,
    /// The current phase's number (phases completed so far).
    pub(crate) phase: Cell<u32>,
}

std::thread_local! {
    static CURRENT: Cell<*const ThreadState> = const { Cell::new(core::ptr::null()) };
    /// The last panic's message and location in an emulated thread, set by the hook.
    pub(crate) static LAST_PANIC: RefCell<Option<(String, SourceLocation)>> =
        const { RefCell::new(None) };
}

/// Makes `t` the running thread (null: none).
pub(crate) fn set_current(t: *const ThreadState) {
    CURRENT.with(|c| c.set(t));
}

/// The running emulated thread, if any.
#[inline]
pub(crate) fn current() -> Option<&'static ThreadState> {
    let p = CURRENT.with(Cell::get);
    // SAFETY: set by the scheduler to a thread state that lives until it is reset to null
    // (after the block); the reference does not escape the intrinsic that asked for it.
    unsafe { p.as_ref() }
}

impl ThreadState {
    pub(crate) fn block(&self) -> &'static BlockState {
        // SAFETY: the block state outlives its threads' runs.
        unsafe { &*self.block }
    }
    pub(crate) fn lane(&self) -> u32 {
        self.linear % 32
    }
    pub(crate) fn warp(&self) -> u32 {
        self.linear / 32
    }
}

/// The running thread, or the host stub's panic for `what`.
#[track_caller]
#[inline]
pub(crate) fn thread(what: &str) -> &'static ThreadState {
    match current() {
        Some(t) => t,
        None => gpu_only(what),
    }
}

/// Records `err` in the running thread's block and unwinds the thread.
pub(crate) fn fail(t: &ThreadState, err: EmuError) -> ! {
    t.block().record(err);
    std::panic::resume_unwind(Box::new(Unwind::Abort))
}

/// Fails the running thread with an [`EmuError::AsyncUnit`]: `op` (an asynchronous unit's
/// operation: `mbarrier`, TMA, `wgmma`) used against its rules, at the caller's location.
#[track_caller]
pub(crate) fn async_misuse(t: &ThreadState, op: &'static str, reason: String) -> ! {
    let b = t.block();
    fail(
        t,
        EmuError::AsyncUnit {
            kernel: b.launch().kernel,
            block: b.idx,
            thread: t.tid,
            op,
            reason,
            location: SourceLocation::from_std(Location::caller()),
        },
    )
}

/// Suspends thread `t` at `s` until the scheduler resumes it; returns what it is resumed
/// with (a cancel unwinds the thread).
///
/// In a release build always inlined, through the intrinsics that suspend at every step
/// (`ctx::barrier`, `ctx::warp_op` and `cuda_std`'s wrappers of them), into the kernel's
/// own code: the scheduler resumes a thread with a `call` that the thread's next
/// suspension answers with a `ret` (corosensei pairs them), so the return-address
/// predictor stays right only if the thread returns from no function in between. With the
/// switch inside `warp_op` and `shfl_32`, each step mispredicted the returns out of both
/// and the suspension's own `ret` (`emu_speed`: 1.5x the thread steps per second of the
/// reduction, 1.7x of the SGEMM). A debug build keeps the calls: its kernels are
/// unoptimised, and would inline an unoptimised switch.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn suspend(t: &ThreadState, s: Suspend) -> u64 {
    // SAFETY: set by the coroutine's entry; valid while the coroutine runs.
    let yielder = unsafe { &*t.yielder.get() };
    t.run_accesses.set(0);
    // SAFETY: `sp` points to the thread's slot in its block's scheduler, which outlives
    // the coroutine.
    unsafe { (*t.sp).set(stack_pointer()) };
    // SAFETY: `state` points to the thread's state in its block's scheduler, which outlives
    // the coroutine and reads it only while the thread is suspended; written in place (not
    // through `Cell::set`, which would read the old value first).
    unsafe { (*t.state).as_ptr().write(St::Wait(s)) };
    match yielder.suspend(()) {
        Resume::Value(v) => v,
        Resume::Cancel => cancelled(),
    }
}

/// The current stack pointer (approximately: an address in the caller's frame).
#[inline(always)]
fn stack_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let sp: usize;
        // SAFETY: reads a register.
        unsafe {
            core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
        }
        sp
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let marker = 0u8;
        core::ptr::from_ref(&marker) as usize
    }
}

/// Unwinds a thread resumed with [`Resume::Cancel`] (kept out of the inlined
/// [`suspend`]).
#[cold]
#[inline(never)]
fn cancelled() -> ! {
    std::panic::resume_unwind(Box::new(Unwind::Cancel))
}

/// Number of named barriers per block (PTX ISA §9.7.13.1 "bar, barrier": ids 0..15).
pub(crate) const NAMED_BARRIERS: u32 = 16;

/// One launch: what every block needs.
pub(crate) struct Launch {
    pub(crate) kernel: &'static str,
    pub(crate) entry: HostEntry,
    pub(crate) args: *const *mut c_void,
    pub(crate) grid: Dim3,
    pub(crate) block: Dim3,
    /// Blocks per cluster (`[1, 1, 1]` without a cluster launch).
    pub(crate) cluster: Dim3,
    pub(crate) dynamic_shared_bytes: u32,
    pub(crate) options: EmuOptions,
    /// Known device buffers `(start, bytes, description)`, sorted by start.
    pub(crate) buffers: Vec<(usize, usize, String)>,
    /// The race check's shadow of the global buffers (`None` with the check off).
    pub(crate) global: Option<crate::global_shadow::GlobalShadow>,
    /// Progress counts, one per worker of the pool that runs the blocks (see
    /// [`Launch::note_progress`]).
    pub(crate) progress: Box<[WorkerProgress]>,
    /// The release state of global memory (`order.rs`).
    pub(crate) order: crate::clock::LaunchOrder,
}

/// One worker's progress count, alone on its cache line (only that worker writes it).
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct WorkerProgress(AtomicU64);

impl WorkerProgress {
    /// Counts one unit of progress in `count`, a slot that only the running worker writes
    /// ([`Launch::progress_slot`]).
    #[inline]
    pub(crate) fn note(count: &AtomicU64) {
        // Only one worker writes the count, so a load and a store make the increment: a
        // read-modify-write (`lock xadd`) would cost this per-step call several times more.
        count.store(
            count.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Relaxed,
        );
    }
}

impl Launch {
    /// One progress slot per worker of the current rayon pool (the one `run` spreads the
    /// blocks over), plus one for a caller outside it.
    pub(crate) fn progress_slots() -> Box<[WorkerProgress]> {
        (0..=rayon::current_num_threads())
            .map(|_| WorkerProgress::default())
            .collect()
    }

    /// The progress slot of the running worker.
    pub(crate) fn worker_slot(&self) -> usize {
        let slots = self.progress.len();
        rayon::current_thread_index().map_or(slots - 1, |i| i % slots)
    }

    /// Counts progress by a block that worker `slot` runs: a thread's exit or arrival at a
    /// barrier, collective or poll, or atomics that changed memory. A block whose threads
    /// only spin is livelocked once no worker counts any for a while.
    #[inline]
    pub(crate) fn note_progress(&self, slot: usize) {
        WorkerProgress::note(self.progress_slot(slot));
    }

    /// Worker `slot`'s count, for [`WorkerProgress::note`].
    pub(crate) fn progress_slot(&self, slot: usize) -> &AtomicU64 {
        &self.progress[slot].0
    }

    /// The progress counted by every worker so far.
    pub(crate) fn total_progress(&self) -> u64 {
        self.progress
            .iter()
            .map(|p| p.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

// SAFETY: `args` is only read (by every block's threads), and `launch`'s caller keeps what
// it points to alive and unchanged for the launch; the rest is plain data.
unsafe impl Sync for Launch {}

/// Panics with a message saying that `what` only exists on the GPU: the host stub of a
/// device-only function called outside an emulated launch.
#[cold]
#[track_caller]
pub fn gpu_only(what: &str) -> ! {
    panic!(
        "cuda_std::{what} can only be called in GPU code (target nvptx64-nvidia-cuda) or \
         inside a launch on the CPU emulator; on the host it is a stub"
    )
}
