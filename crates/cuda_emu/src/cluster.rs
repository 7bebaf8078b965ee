//! Thread-block clusters on the emulator (PTX ISA §9.7.13.3 "barrier.cluster", §9.7.9.21
//! "mapa", and the special registers `%cluster_ctarank`, `%cluster_nctarank`,
//! `%cluster_ctaid`, `%cluster_nctaid`, `%clusterid`, `%nclusterid`).
//!
//! What is modelled: a launch with clusters of `cluster` blocks runs each cluster's blocks
//! together on one worker (`block.rs`: the blocks take turns, each running its threads
//! until none can run), so blocks of a cluster can wait for each other as on a GPU, where a
//! cluster's blocks are co-scheduled on one GPC. A block's rank is its linear index in its
//! cluster, x fastest. Without a cluster launch every block is a cluster of one, as on a
//! GPU.
//! - **The cluster barrier** (`barrier.cluster.arrive` / `.wait`): each thread arrives once
//!   per phase; the phase completes when every thread of the cluster has arrived or exited
//!   (an exited thread counts as arrived, PTX ISA §9.7.13.3); a wait returns when the
//!   phase its thread arrived in has completed.
//! - **Distributed shared memory** (`mapa`): an address in this block's shared memory maps
//!   to the same offset of the same allocation (the same `shared_array!` declaration, or the
//!   dynamic shared memory) in the block of the given rank; a static array the other block
//!   has not used yet is allocated there then, zero-filled, as its first use would.
//!   Accesses through the result are checked for bounds against that block's allocations;
//!   the race and initialisation checks do not follow them.
//! - **Remote `mbarrier` arrivals** and **TMA multicast** act on the barrier and the box at
//!   the same offsets in the blocks they name (`mbarrier.rs`, `tma.rs`).
//!
//! Checked ([`EmuError::AsyncUnit`]): a rank below the cluster's block count; an address
//! in this block's shared memory; a thread arriving twice in one phase, or waiting without
//! having arrived. A cluster barrier that can never complete (a thread of the cluster waits
//! at something else that never completes) is reported as the deadlock of that block,
//! never a hang.
//!
//! Not modelled: the memory ordering of `.release`/`.acquire` (the blocks share the host's
//! memory and run one at a time); `.aligned` (the emulator's barrier is the non-aligned
//! form, which is the stricter contract).

use core::panic::Location;
use std::string::String;

use super::Dim3;
use super::state::{BlockState, ClusterWait, Suspend, ThreadState, async_misuse, suspend, thread};

/// `%cluster_ctarank`: the running block's rank in its cluster.
#[track_caller]
pub fn ctarank(what: &str) -> u32 {
    thread(what).block().rank
}

/// `%cluster_nctarank`: the number of blocks in the running block's cluster.
#[track_caller]
pub fn nctarank(what: &str) -> u32 {
    let [x, y, z] = thread(what).block().launch().cluster;
    x * y * z
}

/// `%cluster_ctaid`: the running block's index in its cluster.
#[track_caller]
pub fn cluster_ctaid(what: &str) -> Dim3 {
    let b = thread(what).block();
    let c = b.launch().cluster;
    [b.idx[0] % c[0], b.idx[1] % c[1], b.idx[2] % c[2]]
}

/// `%cluster_nctaid`: the cluster's shape in blocks.
#[track_caller]
pub fn cluster_dim(what: &str) -> Dim3 {
    thread(what).block().launch().cluster
}

/// `%clusterid`: the running block's cluster's index in the grid of clusters.
#[track_caller]
pub fn cluster_id(what: &str) -> Dim3 {
    thread(what).block().cluster().id
}

/// `%nclusterid`: the grid's shape in clusters.
#[track_caller]
pub fn grid_clusters(what: &str) -> Dim3 {
    let l = thread(what).block().launch();
    [
        l.grid[0] / l.cluster[0],
        l.grid[1] / l.cluster[1],
        l.grid[2] / l.cluster[2],
    ]
}

/// Completes the cluster barrier's phase if every thread has arrived or exited.
fn complete_if_done(b: &BlockState) {
    let c = b.cluster();
    if c.arrived.get() + c.exited.get() == c.threads {
        c.phase.set(c.phase.get() + 1);
        c.arrived.set(0);
    }
    b.progress.set(b.progress.get() + 1);
}

/// `barrier.cluster.arrive`: the running thread arrives in the cluster barrier's current
/// phase.
#[track_caller]
pub fn arrive(what: &'static str) {
    let t = thread(what);
    let b = t.block();
    let c = b.cluster();
    let arrivals = t.cluster_arrivals.get();
    if arrivals != c.phase.get() {
        async_misuse(
            t,
            what,
            std::format!(
                "the thread already arrived in the cluster barrier's phase {} (each thread \
                 arrives once per phase: wait before arriving again)",
                c.phase.get()
            ),
        );
    }
    t.cluster_arrivals.set(arrivals + 1);
    c.arrived.set(c.arrived.get() + 1);
    complete_if_done(b);
}

/// `barrier.cluster.wait`: waits until the phase the running thread last arrived in has
/// completed.
#[track_caller]
pub fn wait(what: &'static str) {
    let t = thread(what);
    let waits = t.cluster_waits.get() + 1;
    let arrivals = t.cluster_arrivals.get();
    if waits > arrivals {
        async_misuse(
            t,
            what,
            String::from(
                "waits at the cluster barrier without having arrived (call `cluster::arrive` \
                 before each `cluster::wait`)",
            ),
        );
    }
    t.cluster_waits.set(waits);
    let phase = arrivals - 1;
    if t.block().cluster().phase.get() > phase {
        return;
    }
    suspend(
        t,
        Suspend::Cluster(ClusterWait {
            phase,
            location: Location::caller(),
        }),
    );
}

/// Counts thread `t`'s exit in its cluster barrier: it arrives in every later phase.
pub(crate) fn thread_exited(t: &ThreadState) {
    let b = t.block();
    let c = b.cluster();
    if t.cluster_arrivals.get() == c.phase.get() + 1 {
        // Arrived in the current phase: it now counts as exited instead.
        c.arrived.set(c.arrived.get() - 1);
    }
    c.exited.set(c.exited.get() + 1);
    complete_if_done(b);
}

/// The block of rank `rank` in `t`'s cluster and the host address there of `p`, an
/// address in `t`'s block's shared memory (`mapa`). Fails `t` with an
/// [`EmuError::AsyncUnit`](crate::EmuError::AsyncUnit) for a rank outside the cluster or an
/// address outside this block's shared memory.
#[track_caller]
pub(crate) fn remote(
    t: &ThreadState,
    what: &'static str,
    p: usize,
    rank: u32,
) -> (&'static BlockState, usize) {
    let b = t.block();
    let [x, y, z] = b.launch().cluster;
    let Some(other) = b.sibling(rank).filter(|_| rank < x * y * z) else {
        async_misuse(
            t,
            what,
            std::format!(
                "cluster rank {rank} does not exist: the cluster has {} blocks",
                x * y * z
            ),
        );
    };
    // SAFETY: the cluster's blocks live as long as the block running `t`.
    let other: &'static BlockState = unsafe { &*core::ptr::from_ref(other) };
    if core::ptr::eq(other, b) {
        if b.mem.borrow().locate(p).is_none() {
            not_shared(t, what, p);
        }
        return (other, p);
    }
    let mem = b.mem.borrow();
    let Some((id, a, offset)) = mem.locate(p) else {
        drop(mem);
        not_shared(t, what, p)
    };
    let (bytes, align, name, shape) = (a.bytes, a.align(), a.name.clone(), a.shape);
    drop(mem);
    let checks = b.launch().options.checks;
    let mut theirs = other.mem.borrow_mut();
    let base = match id {
        None => Some(theirs.dynamic.ptr),
        Some(id) => theirs.static_alloc(id, bytes, align, &name, shape, checks.shadow()),
    };
    drop(theirs);
    match base {
        Some(base) => (other, base as usize + offset),
        None => async_misuse(
            t,
            what,
            std::format!("cannot allocate {bytes} bytes of shared memory for cluster rank {rank}"),
        ),
    }
}

#[track_caller]
fn not_shared(t: &ThreadState, what: &'static str, p: usize) -> ! {
    async_misuse(
        t,
        what,
        std::format!("{p:#x} is not in this block's shared memory"),
    )
}

/// `mapa`: the host address of `p`'s offset in the shared memory of the block of rank
/// `rank` in the running block's cluster.
#[track_caller]
pub fn map_shared_rank(what: &'static str, p: *const u8, rank: u32) -> *mut u8 {
    let t = thread(what);
    remote(t, what, p as usize, rank).1 as *mut u8
}

#[cfg(test)]
mod tests {
    use crate::device::{self, BarrierKind};
    use crate::{Dim3, EmuError, EmuOptions, launch_cluster};
    use core::ffi::c_void;
    use core::sync::atomic::{AtomicU32, Ordering};
    use cust_core::launch::Kernel;

    /// Runs `body` on `grid` blocks of 64 threads in clusters of `cluster`, with 256 bytes of
    /// dynamic shared memory.
    fn run(
        name: &'static str,
        body: unsafe fn(*const *mut c_void),
        grid: Dim3,
        cluster: Dim3,
    ) -> Result<(), EmuError> {
        let kernel: Kernel<(), ()> = Kernel::__new_with_host(name, body);
        // SAFETY: the bodies take no parameters and touch only shared memory and `SEEN`.
        unsafe {
            launch_cluster(
                &kernel,
                grid,
                [64, 1, 1],
                cluster,
                256,
                &[],
                &EmuOptions::default(),
            )
        }
        .map(|_| ())
    }

    fn tid() -> u32 {
        device::thread_idx("test")[0]
    }

    fn words() -> *mut u32 {
        device::dynamic_shared("test").0.cast()
    }

    fn sync() {
        super::arrive("cluster::arrive");
        super::wait("cluster::wait");
    }

    /// What each thread of the `exchange` launch read from its neighbour, by global thread.
    static SEEN: [AtomicU32; 8 * 64] = [const { AtomicU32::new(0) }; 8 * 64];

    /// Each block writes `1000 · block + tid` to its shared memory, the cluster syncs, each
    /// thread reads the word of the next rank's block through `mapa`, the cluster syncs
    /// again (the neighbour's memory stays alive until everyone has read it).
    unsafe fn exchange(_: *const *mut c_void) {
        let t = tid();
        let block = device::block_idx("test")[0];
        // SAFETY: 64 words of the 256-byte dynamic shared memory, one per thread.
        unsafe { *words().add(t as usize) = 1000 * block + t };
        sync();
        let next = (super::ctarank("test") + 1) % super::nctarank("test");
        // SAFETY: as above, in the block of rank `next`, written before the cluster barrier.
        let theirs = unsafe {
            *super::map_shared_rank("test", words().add(t as usize).cast(), next).cast::<u32>()
        };
        SEEN[(block * 64 + t) as usize].store(theirs, Ordering::Relaxed);
        sync();
    }

    #[test]
    fn blocks_of_a_cluster_read_each_other_after_the_cluster_barrier() {
        run("exchange", exchange, [8, 1, 1], [4, 1, 1]).expect("runs");
        for block in 0..8u32 {
            // Ranks are x-fastest within clusters of 4 along x.
            let next = block / 4 * 4 + (block % 4 + 1) % 4;
            for t in 0..64u32 {
                assert_eq!(
                    SEEN[(block * 64 + t) as usize].load(Ordering::Relaxed),
                    1000 * next + t,
                    "block {block}, thread {t}"
                );
            }
        }
    }

    /// In the block of rank 1, the first warp waits at a block barrier while the others
    /// wait at the cluster barrier: neither can complete.
    unsafe fn divergent(_: *const *mut c_void) {
        if super::ctarank("test") == 1 && tid() < 32 {
            device::barrier("thread::sync_threads", BarrierKind::Sync, false);
        }
        sync();
    }

    /// Waits at the cluster barrier without arriving.
    unsafe fn wait_only(_: *const *mut c_void) {
        super::wait("cluster::wait");
    }

    /// Arrives twice in one phase.
    unsafe fn arrive_twice(_: *const *mut c_void) {
        super::arrive("cluster::arrive");
        super::arrive("cluster::arrive");
    }

    /// Maps to a rank past the cluster.
    unsafe fn bad_rank(_: *const *mut c_void) {
        let _ = super::map_shared_rank("cluster::map_shared_rank", words().cast(), 2);
    }

    /// Exited threads count as arrived: half of each block arrives once and exits without
    /// waiting, the rest syncs twice.
    unsafe fn half_exit(_: *const *mut c_void) {
        if tid() >= 32 {
            super::arrive("cluster::arrive");
            return;
        }
        sync();
        sync();
    }

    #[test]
    fn a_cluster_barrier_that_cannot_complete_is_reported_not_hung() {
        let start = std::time::Instant::now();
        let err = run("divergent", divergent, [2, 1, 1], [2, 1, 1]).expect_err("deadlock");
        assert!(start.elapsed().as_secs() < 1, "reported within a second");
        let EmuError::BarrierDivergence {
            block,
            waiting,
            other,
            ..
        } = &err
        else {
            panic!("expected BarrierDivergence, got {err}")
        };
        assert_eq!(*block, [1, 0, 0], "{err}");
        assert_eq!(
            (waiting.waits_at, other.waits_at),
            ("sync_threads", "cluster barrier wait"),
            "{err}"
        );
        assert_eq!(other.thread, [32, 0, 0], "{err}");
        run("half_exit", half_exit, [4, 1, 1], [2, 1, 1]).expect("exited threads arrive");
    }

    #[test]
    fn cluster_misuse_is_reported_with_the_operation() {
        for (name, body, op, reason) in [
            (
                "wait_only",
                wait_only as unsafe fn(*const *mut c_void),
                "cluster::wait",
                "without having arrived",
            ),
            (
                "arrive_twice",
                arrive_twice,
                "cluster::arrive",
                "already arrived in the cluster barrier's phase 0",
            ),
            (
                "bad_rank",
                bad_rank,
                "cluster::map_shared_rank",
                "cluster rank 2 does not exist: the cluster has 2 blocks",
            ),
        ] {
            let err = run(name, body, [2, 1, 1], [2, 1, 1]).expect_err(name);
            assert!(
                matches!(&err, EmuError::AsyncUnit { op: o, reason: r, .. }
                    if *o == op && r.contains(reason)),
                "{name}: {err}"
            );
        }
        let err = run("half_exit", half_exit, [3, 1, 1], [2, 1, 1]).expect_err("refused");
        assert!(
            matches!(&err, EmuError::InvalidConfig { reason, .. } if reason.contains("whole number of clusters")),
            "{err}"
        );
    }
}
