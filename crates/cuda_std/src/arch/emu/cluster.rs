//! `cluster` on the CPU emulator: not emulated yet (the launch fails with
//! `EmuError::NotEmulated` naming the call).

use super::not_emulated;
use glam::UVec3;

macro_rules! not_yet {
    ($($name:ident -> $t:ty;)*) => {$(
        #[track_caller]
        pub(crate) fn $name() -> $t {
            not_emulated!(concat!("cluster::", stringify!($name)))
        }
    )*};
}

not_yet!(
    ctarank -> u32;
    nctarank -> u32;
    cluster_idx -> UVec3;
    cluster_dim -> UVec3;
    cluster_id -> UVec3;
    grid_clusters -> UVec3;
    arrive -> ();
    wait -> ();
);

/// # Safety
/// As `cluster::map_shared_rank`.
#[track_caller]
pub(crate) unsafe fn map_shared_rank(p: *const u8, rank: u32) -> *const u8 {
    not_emulated!("cluster::map_shared_rank", p, rank)
}
