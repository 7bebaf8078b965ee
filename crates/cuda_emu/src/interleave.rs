//! The interleaving generator: splitmix64 (Steele, Lea and Flood, "Fast Splittable
//! Pseudorandom Number Generators", OOPSLA 2014), seeded per block. The scheduler
//! (`block.rs`) draws a seeded launch's thread order from it, and `ctx.rs` the accesses a
//! thread yields before; a leaf, so that neither imports the other for it.

use crate::Dim3;

/// splitmix64: the seed's permutation of a block's threads, and its choice of the memory
/// accesses threads yield before (`ctx::check_access`).
/// The interleaving generator's first state for block `idx` under `seed`: nonzero, and
/// different per block.
pub(crate) fn interleave_state(seed: u64, idx: Dim3) -> u64 {
    let mut state = seed
        ^ (u64::from(idx[0]) | u64::from(idx[1]) << 21 | u64::from(idx[2]) << 42)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    splitmix(&mut state) | 1
}

/// The generator a block without a seed interleaves by once a thread runs too long alone
/// (`ctx::interleave`): fixed, so a run replays.
pub(crate) fn unseeded_interleave(idx: Dim3) -> u64 {
    interleave_state(0x5eed, idx)
}

pub(crate) fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
