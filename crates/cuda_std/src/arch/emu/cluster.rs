//! `cluster` on the CPU emulator: a cluster's blocks run together on one worker, with the
//! cluster barrier and distributed shared memory (`cuda_emu`'s `cluster` module: what is and
//! is not modelled).

use cuda_emu::device;
use glam::UVec3;

#[track_caller]
pub(crate) fn ctarank() -> u32 {
    device::ctarank("cluster::ctarank")
}

#[track_caller]
pub(crate) fn nctarank() -> u32 {
    device::nctarank("cluster::nctarank")
}

#[track_caller]
pub(crate) fn cluster_idx() -> UVec3 {
    UVec3::from_array(device::cluster_ctaid("cluster::cluster_idx"))
}

#[track_caller]
pub(crate) fn cluster_dim() -> UVec3 {
    UVec3::from_array(device::cluster_dim("cluster::cluster_dim"))
}

#[track_caller]
pub(crate) fn cluster_id() -> UVec3 {
    UVec3::from_array(device::cluster_id("cluster::cluster_id"))
}

#[track_caller]
pub(crate) fn grid_clusters() -> UVec3 {
    UVec3::from_array(device::grid_clusters("cluster::grid_clusters"))
}

#[track_caller]
pub(crate) fn arrive() {
    device::cluster_arrive("cluster::arrive");
}

#[track_caller]
pub(crate) fn wait() {
    device::cluster_wait("cluster::wait");
}

/// # Safety
/// As `cluster::map_shared_rank`.
#[track_caller]
pub(crate) unsafe fn map_shared_rank(p: *const u8, rank: u32) -> *const u8 {
    device::map_shared_rank("cluster::map_shared_rank", p, rank).cast_const()
}
