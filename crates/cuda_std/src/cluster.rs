//! Thread block clusters (**sm_90**, PTX ISA 7.8/8.0): the blocks (CTAs) of a cluster run at
//! the same time on one GPC, can synchronise with each other ([`sync`]) and read and write
//! each other's shared memory (*distributed shared memory*, [`map_shared_rank`]).
//!
//! A kernel uses clusters when launched with a cluster shape (the host's cluster launch);
//! without one, every block is a cluster of one. Indices are `u32`; a block's *rank* in its
//! cluster is its linear index there, `0..nctarank()`.
//!
//! The functions are not `cfg`-gated: inline PTX is only assembled when a kernel calls it
//! (build such kernels for sm_90 or later); on the host they are stubs that panic.

use glam::UVec3;

/// Reads a `u32` special register (constant for the launch).
/// This block's rank in its cluster, `0..nctarank()` (PTX `%cluster_ctarank`, PTX ISA §10
/// "Special Registers"; sm_90, PTX ISA 7.8).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn ctarank() -> u32 {
    crate::arch::cluster::ctarank()
}

/// The number of blocks in this cluster (PTX `%cluster_nctarank`; sm_90, PTX ISA 7.8).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn nctarank() -> u32 {
    crate::arch::cluster::nctarank()
}

/// This block's `(x, y, z)` index **within its cluster** (PTX `%cluster_ctaid`; sm_90, PTX
/// ISA 7.8); each component is below [`cluster_dim`]'s.
#[inline(always)]
#[must_use]
#[track_caller]
pub fn cluster_idx() -> UVec3 {
    crate::arch::cluster::cluster_idx()
}

/// The cluster's shape in blocks, `(x, y, z)` (PTX `%cluster_nctaid`; sm_90, PTX ISA 7.8).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn cluster_dim() -> UVec3 {
    crate::arch::cluster::cluster_dim()
}

/// This cluster's `(x, y, z)` index in the grid of clusters (PTX `%clusterid`; sm_90, PTX
/// ISA 7.8).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn cluster_id() -> UVec3 {
    crate::arch::cluster::cluster_id()
}

/// The grid's shape in clusters, `(x, y, z)` (PTX `%nclusterid`; sm_90, PTX ISA 7.8).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn grid_clusters() -> UVec3 {
    crate::arch::cluster::grid_clusters()
}

/// Arrives at the cluster barrier with release semantics (PTX
/// `barrier.cluster.arrive.release`, PTX ISA §9.7.13.3 "barrier.cluster"; sm_90, PTX ISA
/// 8.0). Pair with [`wait`]; between the two the thread may do independent work.
///
/// Each thread of the cluster arrives exactly once per barrier phase; a thread that exits
/// counts as arrived. The non-`.aligned` form on purpose, as `thread::sync_threads`: rustc
/// may duplicate a call into two branches, so threads may execute different copies of it.
#[inline(always)]
#[track_caller]
pub fn arrive() {
    crate::arch::cluster::arrive()
}

/// Waits until every non-exited thread of the cluster has [`arrive`]d, with acquire semantics
/// (PTX `barrier.cluster.wait.acquire`, PTX ISA §9.7.13.3; sm_90, PTX ISA 8.0).
/// Same convergence rules as [`arrive`]; call it once after each arrive.
#[inline(always)]
#[track_caller]
pub fn wait() {
    crate::arch::cluster::wait()
}

/// A cluster-wide barrier: [`arrive`] then [`wait`]. Orders shared-memory accesses across
/// the cluster's blocks (writes before it are visible to reads after it in every block),
/// the cluster counterpart of [`sync_threads`](crate::thread::sync_threads). Same
/// convergence rules as [`arrive`].
#[inline(always)]
#[track_caller]
pub fn sync() {
    arrive();
    wait();
}

/// The generic address of the location at `p`'s offset in the shared memory of the block of
/// rank `rank` in this cluster (PTX `mapa.u64`, PTX ISA §9.7.9.21 "mapa"; sm_90, PTX ISA
/// 7.8). The result may be dereferenced (distributed shared memory).
///
/// # Safety
/// - `p` is a generic pointer into this block's shared memory;
/// - `rank` < [`nctarank`];
/// - accesses through the result do not race (order them with [`sync`] or an
///   [`MBarrier`](crate::barrier::MBarrier) at cluster scope), and the block `rank` has not
///   exited while they happen (a final [`sync`] before exiting keeps its memory alive).
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn map_shared_rank<T>(p: *const T, rank: u32) -> *const T {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::cluster::map_shared_rank(p.cast::<u8>(), rank) }.cast()
}

/// [`map_shared_rank`] for a mutable pointer.
///
/// # Safety
/// As [`map_shared_rank`]; writes through the result must not race with other accesses to
/// that location in any block.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn map_shared_rank_mut<T>(p: *mut T, rank: u32) -> *mut T {
    // SAFETY: forwarded to the caller.
    unsafe { map_shared_rank(p.cast_const(), rank) }.cast_mut()
}
