//! Where the kernel puts and reads each byte of a pipeline stage: pure functions, the model
//! the unit tests check against `cuda_std::mma::layout`'s fragment maps (and the kernel's
//! address arithmetic, which computes the same offsets incrementally).
//!
//! A stage is [`MMA_BM`] rows of `A` then [`MMA_BN`](super::MMA_BN) rows of `B` ("stage
//! rows"), each [`MMA_BK_BYTES`] = 8 chunks of 16 bytes of one matrix row's K slice.

use super::{CHUNKS, MMA_BK_BYTES, MMA_BM};

/// Byte offset in a stage of 16-byte chunk `chunk` (0..8) of stage row `row`: stored at
/// chunk `chunk ^ (row % 8)` (8 consecutive rows at one logical chunk, what one
/// `ldmatrix` phase reads, land in 8 different 16-byte bank groups).
#[must_use]
pub const fn swizzled(row: u32, chunk: u32) -> u32 {
    row * MMA_BK_BYTES + ((chunk ^ (row % CHUNKS)) << 4)
}

/// `(stage row, chunk)` that thread `tid` (0..256) copies in its copy `j` of `A` (j < 4)
/// or, with `b`, of `B` (j < 8; `B`'s rows follow `A`'s): matrix row `tid / 8 + 32·j`
/// of the tile, chunk `tid % 8`.
#[must_use]
pub const fn copy(tid: u32, j: u32, b: bool) -> (u32, u32) {
    let first = if b { MMA_BM } else { 0 };
    (first + tid / CHUNKS + 32 * j, tid % CHUNKS)
}

/// Byte offset of the row that lane `lane` addresses in the `ldmatrix.x4` of `A`'s
/// 16-row tile `i` (0..4) of warp row `wm` (0..2), sub-step `ks` (0..4: bytes
/// `32·ks..32·ks + 32` of the slice): row `64·wm + 16·i + lane % 16`, chunk
/// `2·ks + lane / 16`. The registers are then an `A` fragment of `m16n8k16` (16-bit
/// types) or `m16n8k8` (TF32).
#[must_use]
pub const fn ldmatrix_a(wm: u32, i: u32, lane: u32, ks: u32) -> u32 {
    swizzled(64 * wm + 16 * i + lane % 16, 2 * ks + lane / 16)
}

/// Byte offset of the row that lane `lane` addresses in the `ldmatrix.x4` of `B`'s
/// 16-row tile `j` (0..4, i.e. `n` columns `16·j..16·j + 16` of the warp's 64) of warp
/// column `wn` (0..4), sub-step `ks` (0..4): stage row `MMA_BM + 64·wn + 16·j + lane % 8
/// + 8·(lane / 16)`, chunk `2·ks + (lane / 8) % 2`. Registers 0, 1 are the `B` fragment
/// of columns `16·j..16·j + 8`, registers 2, 3 that of the next 8.
#[must_use]
pub const fn ldmatrix_b(wn: u32, j: u32, lane: u32, ks: u32) -> u32 {
    swizzled(
        MMA_BM + 64 * wn + 16 * j + lane % 8 + 8 * (lane / 16),
        2 * ks + (lane / 8) % 2,
    )
}
