//! The operations `cuda_std`'s emulator backend (`cuda_std::arch::emu`, the host half of
//! every intrinsic) is built from: the running thread's indices, block barriers, warp
//! collectives, shared memory, the access checks, host atomics (scheduling points: see
//! [`atomic_load`]), tensor-core collectives and
//! `printf`, named barriers ([`named_barrier`]), the shared window ([`shared_addr`],
//! [`shared_ptr`]), and Hopper's asynchronous units: `mbarrier` ([`mbarrier_init`],
//! [`mbarrier_arrive`], [`mbarrier_arrive_remote`], [`mbarrier_poll`]), TMA
//! ([`tma_load_2d`], [`tma_load_2d_multicast`], [`tma_store_2d`], [`tma_bulk_load`],
//! [`tma_bulk_store`], [`tma_check_tile`]), `wgmma`
//! ([`wgmma_mma_async`], [`wgmma_mma_async_rs`], [`wgmma_check_warpgroup`]) and clusters ([`ctarank`],
//! [`cluster_arrive`], [`cluster_wait`], [`map_shared_rank`], ...). Kernels never call these directly; they call `cuda_std`, whose public modules
//! reach this module only through that backend.
//!
//! Every function that needs the running emulated thread takes `what`, the intrinsic's name
//! as `cuda_std` spells it: outside an emulated launch the call panics with
//! [`gpu_only`]'s message naming it. Those that report a source location are
//! `#[track_caller]`, so the location is the kernel's call of the `cuda_std` function.

use crate::Dim3;
use crate::state::thread;

pub use crate::AccessKind;
pub use crate::clock::MemScope;
pub use crate::cluster::{
    arrive as cluster_arrive, cluster_ctaid, cluster_dim, cluster_id, ctarank, grid_clusters,
    map_shared_rank, nctarank, wait as cluster_wait,
};
pub use crate::cp_async::{
    commit as cp_async_commit, copy as cp_async_copy, wait as cp_async_wait,
};
pub use crate::ctx::atomics;
pub use crate::ctx::{
    active_mask, assert_fail, atomic_cas, atomic_load, atomic_rmw, atomic_store, barrier,
    check_access, check_access_with, dynamic_shared, fence, host_nanos, live_lanes, named_barrier,
    printf, shared_addr, shared_ptr, shared_static, spin, total_shared_bytes, warp_op,
};
pub use crate::mbarrier::{
    arrive as mbarrier_arrive, arrive_remote as mbarrier_arrive_remote, init as mbarrier_init,
    poll as mbarrier_poll,
};
pub use crate::proxy::{
    bulk_commit as tma_commit_group, bulk_wait_read as tma_wait_group_read,
    fence as fence_proxy_async, wgmma_commit, wgmma_wait,
};
pub use crate::shared_mem::SharedShape;
pub use crate::state::{BarrierKind, WarpKind, gpu_only};
pub use crate::tensor::{ldmatrix, mma, stmatrix};
pub use crate::tma::{
    TileLayout as TmaTileLayout, bulk_load as tma_bulk_load, bulk_store as tma_bulk_store,
    check_tile as tma_check_tile, load_2d as tma_load_2d,
    load_2d_multicast as tma_load_2d_multicast, store_2d as tma_store_2d,
};
pub use crate::unit_state::{MmaType, TensorOp};
pub use crate::wgmma::{
    check_warpgroup as wgmma_check_warpgroup, mma_async as wgmma_mma_async,
    mma_async_rs as wgmma_mma_async_rs,
};

/// Checks that the caller is an emulated thread (the host stub's panic otherwise), for
/// intrinsics whose host form needs nothing else (fences, prefetches, `cp.async` groups).
#[track_caller]
#[inline]
pub fn enter(what: &str) {
    let _ = thread(what);
}

/// `%tid`: the running thread's index in its block `(x, y, z)`.
#[track_caller]
#[inline]
pub fn thread_idx(what: &str) -> Dim3 {
    thread(what).tid
}

/// `%ntid`: the block's dimensions in threads.
#[track_caller]
#[inline]
pub fn block_dim(what: &str) -> Dim3 {
    thread(what).block().launch().block
}

/// `%ctaid`: the running block's index in the grid.
#[track_caller]
#[inline]
pub fn block_idx(what: &str) -> Dim3 {
    thread(what).block().idx
}

/// `%nctaid`: the grid's dimensions in blocks.
#[track_caller]
#[inline]
pub fn grid_dim(what: &str) -> Dim3 {
    thread(what).block().launch().grid
}

/// `%laneid`: the running thread's lane (its linear index in the block modulo 32).
#[track_caller]
#[inline]
pub fn lane_id(what: &str) -> u32 {
    thread(what).lane()
}

/// `%smid` on the emulator: the index of the rayon worker that runs the block (0 outside
/// rayon's pool).
#[track_caller]
pub fn sm_id(what: &str) -> u32 {
    let _ = thread(what);
    rayon::current_thread_index().unwrap_or(0) as u32
}

/// The fields of a `wgmma` matrix descriptor as the emulator decodes them: `(start address,
/// leading byte offset, stride byte offset, base offset, swizzle width in bytes (0: none))`
/// (for `cuda_std`'s test that this is what `MatrixDescriptor::new` encodes).
#[must_use]
pub fn wgmma_descriptor_fields(bits: u64) -> (u32, u32, u32, u32, u32) {
    let d = crate::wgmma::Descriptor::decode(bits);
    (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle_bytes)
}
