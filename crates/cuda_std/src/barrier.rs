//! Shared-memory transaction barriers: `mbarrier` (PTX ISA §9.7.13.15 "Parallel
//! Synchronization and Communication Instructions: mbarrier"), with the transaction counts
//! that TMA loads complete (**sm_90**, PTX ISA 8.0).
//!
//! An [`MBarrier`] is 8 bytes of shared memory tracking one *phase* at a time: a phase
//! completes when its pending arrival count reaches zero **and** its pending transaction
//! count (bytes expected from asynchronous copies, [`MBarrier::expect_tx`]) reaches zero;
//! the barrier then starts the next phase with the arrival count it was initialised with.
//! Waiters name the phase they wait for by its parity, as a [`Phase`] value they carry and
//! [`Phase::flip`] after each completed wait (a pipeline stage's barrier completes phases
//! 0, 1, 0, 1, …).
//!
//! Typical TMA use: one thread [`MBarrier::init`]s with count 1, [`fence_init`], block
//! barrier; then per stage the producer thread calls [`MBarrier::arrive_expect_tx`] with the
//! tile's bytes and issues [`tma::load_2d`](crate::tma::load_2d), and consumers
//! [`MBarrier::wait`] for the stage's phase.
//!
//! **Pitfall** (the hang of the first TMA probe): do not test the same thread condition on
//! both sides of a block barrier, as in `if t == 0 { init } sync_threads(); if t == 0 {
//! issue }`. MIR jump threading (which knows nothing of convergence) may copy the barrier
//! into both arms of the first test; thread 0 and the rest of its warp then reach different
//! instances of `bar.sync`, which is `barrier.sync.aligned` (PTX ISA §9.7.13.1: all threads
//! must execute the *same* aligned barrier instruction), and the block deadlocks. Either let
//! the initialising thread also issue its first copy before the barrier (its own init is
//! ordered before its own use; [`fence_init`] covers the async proxy), or compute the second
//! condition from a value the optimisers cannot relate to the first. For tests that must
//! fail rather than hang, [`MBarrier::wait_bounded`] gives up after a number of polls.
//!
//! The functions are not `cfg`-gated: inline PTX is only assembled when a kernel calls it
//! (build kernels using them for sm_90 or later); on the host they are stubs that panic.

use core::cell::UnsafeCell;

/// An `mbarrier` object: 8 bytes, 8-byte aligned, living in **shared memory** (PTX ISA
/// §9.7.13.15.1 "Size and alignment of mbarrier object"). Obtain one by casting a
/// shared-memory pointer (e.g. from [`shared_array!`](crate::shared_array)`(MBarrier, 4)`)
/// and initialise it with [`MBarrier::init`]; its contents are opaque and only changed by
/// `mbarrier` instructions.
#[repr(C, align(8))]
pub struct MBarrier(UnsafeCell<u64>);

impl core::fmt::Debug for MBarrier {
    /// `MBarrier { .. }`: the state is opaque (and in GPU shared memory).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MBarrier").finish_non_exhaustive()
    }
}

/// The parity of a barrier phase that a waiter waits for: [`Phase::ZERO`] for a barrier's
/// first phase, then [`Phase::flip`] after each completed wait on that barrier.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Phase(u32);

impl Phase {
    /// The phase of a freshly initialised barrier (parity 0).
    pub const ZERO: Self = Self(0);

    /// The next phase (the other parity).
    #[must_use]
    pub const fn flip(self) -> Self {
        Self(self.0 ^ 1)
    }

    /// The parity, 0 or 1, as `mbarrier.try_wait.parity` takes it.
    #[must_use]
    pub const fn parity(self) -> u32 {
        self.0
    }
}

/// Makes prior [`MBarrier::init`]s visible to other threads of the cluster and to the async
/// proxy (TMA) (PTX `fence.mbarrier_init.release.cluster`, PTX ISA §9.7.13.4 "membar/fence";
/// sm_90, PTX ISA 8.0). Call it in the initialising thread after the inits, then a block
/// (or cluster) barrier before anyone uses the barriers.
#[inline(always)]
#[track_caller]
pub fn fence_init() {
    crate::arch::barrier::fence_init()
}

impl MBarrier {
    /// The 32-bit shared address of this barrier.
    #[inline(always)]
    fn addr(&self) -> u32 {
        crate::shared::shared_addr(self.0.get())
    }

    /// Initialises the barrier for `arrival_count` arrivals per phase (1..=2²⁰−1), phase 0,
    /// no pending transactions (PTX `mbarrier.init.shared::cta.b64`, PTX ISA §9.7.13.15.9;
    /// sm_80).
    ///
    /// # Safety
    /// - `self` is in this CTA's shared memory (8-byte aligned by its type);
    /// - exactly one thread initialises it, and no thread uses it until that thread ran
    ///   [`fence_init`] and a barrier ([`sync_threads`](crate::thread::sync_threads), or a
    ///   cluster barrier when other CTAs use it) separated the init from the uses;
    /// - it is not re-initialised while a phase is in progress (no pending arrivals, no
    ///   copies in flight on it).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn init(&self, arrival_count: u32) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::init(self.0.get(), arrival_count) }
    }

    /// Arrives on the barrier: one of the current phase's arrivals, with release semantics
    /// at CTA scope (PTX `mbarrier.arrive.shared::cta.b64 _, [addr]`, PTX ISA
    /// §9.7.13.15.13; sm_80, PTX ISA 7.1 for the `_` sink).
    ///
    /// # Safety
    /// - `self` is an initialised barrier in this CTA's shared memory;
    /// - the current phase still expects an arrival from this thread (arriving more often
    ///   than `arrival_count` times per phase is undefined behaviour).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn arrive(&self) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::arrive(self.0.get()) }
    }

    /// [`expect_tx`](Self::expect_tx)`(tx_bytes)` then [`arrive`](Self::arrive), as one
    /// instruction (PTX `mbarrier.arrive.expect_tx.shared::cta.b64 _, [addr], tx`, PTX ISA
    /// §9.7.13.15.13; sm_90, PTX ISA 8.0): the usual call of the thread issuing a TMA load
    /// of `tx_bytes` bytes.
    ///
    /// # Safety
    /// As [`arrive`](Self::arrive), and `tx_bytes` (< 2²⁰) is exactly the number of bytes
    /// that asynchronous copies completing on this barrier will deliver in this phase
    /// (fewer and the phase never completes: waiters hang; more is undefined behaviour).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn arrive_expect_tx(&self, tx_bytes: u32) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::arrive_expect_tx(self.0.get(), tx_bytes) }
    }

    /// Adds `tx_bytes` to the current phase's pending transaction count without arriving
    /// (PTX `mbarrier.expect_tx.relaxed.cta.shared::cta.b64`, PTX ISA §9.7.13.15.11; sm_90,
    /// PTX ISA 8.0).
    ///
    /// # Safety
    /// - `self` is an initialised barrier in this CTA's shared memory whose current phase
    ///   has not completed (it still expects an arrival);
    /// - copies completing on this barrier deliver exactly the expected bytes in this phase
    ///   (see [`arrive_expect_tx`](Self::arrive_expect_tx)).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn expect_tx(&self, tx_bytes: u32) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::expect_tx(self.0.get(), tx_bytes) }
    }

    /// Whether the phase of parity `phase` has completed, waiting a hardware-chosen time
    /// for it first (PTX `mbarrier.try_wait.parity.shared::cta.b64`, PTX ISA §9.7.13.15.16;
    /// sm_90, PTX ISA 7.8). Acquire semantics at CTA scope when it returns `true`: the
    /// arrivers' writes and the completed copies' bytes are visible.
    ///
    /// # Safety
    /// - `self` is an initialised barrier in this CTA's shared memory;
    /// - `phase` is the current phase or the one just before it (the barrier cannot tell
    ///   older phases apart from newer ones of the same parity).
    #[inline(always)]
    #[must_use]
    #[track_caller]
    pub unsafe fn try_wait(&self, phase: Phase) -> bool {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::try_wait(self.0.get(), phase.parity()) }
    }

    /// Waits until the phase of parity `phase` has completed: [`try_wait`](Self::try_wait)
    /// in a loop.
    ///
    /// # Safety
    /// As [`try_wait`](Self::try_wait); and the phase must eventually complete (enough
    /// arrivals and transaction bytes), or the thread hangs.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn wait(&self, phase: Phase) {
        // SAFETY: forwarded to the caller.
        while !unsafe { self.try_wait(phase) } {}
    }

    /// Whether the phase of parity `phase` has completed, without waiting (PTX
    /// `mbarrier.test_wait.parity.shared::cta.b64`, PTX ISA §9.7.13.15.16; sm_80, PTX ISA
    /// 7.1). Acquire semantics at CTA scope when it returns `true`, as
    /// [`try_wait`](Self::try_wait). One poll costs about one shared-memory access, so a
    /// loop of them is bounded in time by its count ([`wait_bounded`](Self::wait_bounded)).
    ///
    /// # Safety
    /// As [`try_wait`](Self::try_wait).
    #[inline(always)]
    #[must_use]
    #[track_caller]
    pub unsafe fn test_wait(&self, phase: Phase) -> bool {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::test_wait(self.0.get(), phase.parity()) }
    }

    /// Waits until the phase of parity `phase` has completed, polling it at most
    /// `max_polls` times with [`test_wait`](Self::test_wait); returns whether it completed.
    /// For code that must fail rather than hang when a phase never completes (tests,
    /// watchdogs): `false` means the expected arrivals or transaction bytes did not come
    /// within the polls (about `max_polls` shared-memory accesses: 10⁸ polls take of the
    /// order of a second). After `false` the phase may still complete later (copies in
    /// flight keep writing); the caller decides how to report it.
    ///
    /// # Safety
    /// As [`try_wait`](Self::try_wait).
    #[inline(always)]
    #[must_use]
    pub unsafe fn wait_bounded(&self, phase: Phase, max_polls: u32) -> bool {
        let mut polls = 0u32;
        while polls < max_polls {
            // SAFETY: forwarded to the caller.
            if unsafe { self.test_wait(phase) } {
                return true;
            }
            polls += 1;
        }
        false
    }

    /// Arrives on the barrier at the same shared-memory offset in the CTA of rank
    /// `cta_rank` of this cluster, with release semantics at cluster scope (PTX
    /// `mapa.shared::cluster.u32` + `mbarrier.arrive.release.cluster.shared::cluster.b64 _,
    /// [remote]`, PTX ISA §9.7.9.21 "mapa" and §9.7.13.15.13; sm_90, PTX ISA 8.0). Used to
    /// tell a producer in another CTA that a multicast buffer may be refilled.
    ///
    /// # Safety
    /// - the kernel runs with clusters and `cta_rank` < [`nctarank`](crate::cluster::nctarank);
    /// - the barrier at this offset in CTA `cta_rank` is initialised (the init was ordered
    ///   before this call by [`fence_init`] and a cluster barrier), that CTA has not exited,
    ///   and its current phase still expects this arrival.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn arrive_cluster(&self, cta_rank: u32) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::arrive_cluster(self.0.get(), cta_rank) }
    }

    /// Arrives on the barrier at the same shared-memory offset in the CTA of rank
    /// `cta_rank` of this cluster with the PTX default semantics, release at CTA scope
    /// (`mapa.shared::cluster.u32` + `mbarrier.arrive.shared::cluster.b64 _, [remote]`;
    /// sm_90, PTX ISA 8.0). Unlike [`arrive_cluster`](Self::arrive_cluster) it has no
    /// cluster-scope fence before the arrival (which stalls the warp until its earlier
    /// memory accesses are visible cluster-wide): the form for handing a multicast buffer
    /// back to its producers after reading it only through the async proxy (`wgmma`,
    /// completed by `wgmma.wait_group`), as CUTLASS's `ClusterBarrier::arrive(cta_id)` does.
    /// It does not publish data this thread wrote for the other CTA: use `arrive_cluster`
    /// for that.
    ///
    /// # Safety
    /// As [`arrive_cluster`](Self::arrive_cluster).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn arrive_remote(&self, cta_rank: u32) {
        // SAFETY: forwarded to the caller.
        unsafe { crate::arch::barrier::arrive_remote(self.0.get(), cta_rank) }
    }

    /// The 32-bit shared address of this barrier, for PTX that takes it (TMA's `[mbar]`).
    #[inline(always)]
    #[must_use]
    pub fn shared_addr(&self) -> u32 {
        self.addr()
    }
}
