//! `cluster` on the GPU: cluster special registers (PTX ISA §10), `barrier.cluster`
//! (§9.7.13.4) and `mapa` (§9.7.9.21).

use core::arch::asm;
use glam::UVec3;

macro_rules! sreg {
    ($reg:expr) => {{
        let v: u32;
        // SAFETY: reads a special register.
        unsafe {
            asm!(concat!("mov.u32 {v}, ", $reg, ";"), v = out(reg32) v,
                options(pure, nomem, nostack))
        };
        v
    }};
}

#[inline(always)]
pub(crate) fn ctarank() -> u32 {
    sreg!("%cluster_ctarank")
}

#[inline(always)]
pub(crate) fn nctarank() -> u32 {
    sreg!("%cluster_nctarank")
}

macro_rules! sreg3 {
    ($($name:ident, $reg:literal;)*) => {$(
        #[inline(always)]
        pub(crate) fn $name() -> UVec3 {
            UVec3::new(sreg!(concat!($reg, ".x")), sreg!(concat!($reg, ".y")), sreg!(concat!($reg, ".z")))
        }
    )*};
}

sreg3!(
    cluster_idx, "%cluster_ctaid";
    cluster_dim, "%cluster_nctaid";
    cluster_id, "%clusterid";
    grid_clusters, "%nclusterid";
);

#[inline(always)]
pub(crate) fn arrive() {
    // SAFETY: no operands; a release (not `nomem`).
    unsafe { asm!("barrier.cluster.arrive.release;", options(nostack)) };
}

#[inline(always)]
pub(crate) fn wait() {
    // SAFETY: no operands; an acquire (not `nomem`).
    unsafe { asm!("barrier.cluster.wait.acquire;", options(nostack)) };
}

/// # Safety
/// As `cluster::map_shared_rank`.
#[inline(always)]
pub(crate) unsafe fn map_shared_rank(p: *const u8, rank: u32) -> *const u8 {
    let q: u64;
    // SAFETY: caller contract; computes an address only.
    unsafe {
        asm!("mapa.u64 {q}, {p}, {r};", q = out(reg64) q, p = in(reg64) p as u64,
            r = in(reg32) rank, options(pure, nomem, nostack))
    };
    q as usize as *const u8
}
