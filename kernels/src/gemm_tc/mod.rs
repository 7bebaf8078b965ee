//! Tensor-core GEMM: `C = A·Bᵀ` with `A` m×k row-major, `B` n×k row-major ("TN": both
//! operands K-major, element `(i, p)` of `A` at `a[i·k + p]`, element `(j, p)` of `B` at
//! `b[j·k + p]`) and `C` m×n row-major (`c[i·n + j]`), accumulated in `f32`.
//!
//! Precisions (the element type `T` of `A`, `B` and `C`):
//! - [`bf16`](cuda_std::half::bf16) and [`f16`](cuda_std::half::f16): products exact, sums
//!   in `f32`, the result rounded once to `T` (round to nearest even);
//! - `f32` as TF32: each input rounded to TF32 (sign, exponent, top 10 mantissa bits) to
//!   nearest, ties away from zero, as cuBLAS's TF32 results show it does (the tensor cores
//!   alone would ignore the low 13 bits, i.e. truncate, which doubles the inputs' relative
//!   error); products and sums in `f32`, `C` in `f32`. [`mma_sync`] rounds in registers
//!   after `ldmatrix`, [`wgmma`] in shared memory before the `wgmma` reads it.
//!
//! Two kernel families:
//! - [`mma_sync`]: warp-level `mma.sync` (sm_80+, built into the sm_80 variant of the
//!   module): `cp.async` multi-stage pipeline, swizzled shared memory read by `ldmatrix`;
//! - [`wgmma`]: Hopper's `wgmma.mma_async` fed by TMA through an mbarrier ring, warp
//!   specialised, persistent (sm_90a variant).
//!
//! Shape rules, shared by both: `k` is a multiple of 8 (bf16/f16) or 4 (f32), so that every
//! row of `A` and `B` is a whole number of 16-byte chunks (`cp.async` and TMA move 16-byte
//! units; TMA also needs 16-byte row strides); `m`, `n` are any positive values (the tiles at
//! the edges are clipped: rows of `A`/`B` past the matrix are read clamped or zero-filled and
//! never stored). The host wrappers (`host::matmul`) check these rules before a launch.
//!
//! The tile order ([`tile_coords`]) is plain Rust shared with the host and its tests.

// The parts, by job: the two kernel families, `mma_sync` (sm_80) and `wgmma` (sm_90a);
// `out`, the output element types (`OutElem`, sm_80 or the host's build); and here, the
// grouped order of the output tiles (`tile_coords`), plain Rust.
pub mod mma_sync;
pub mod wgmma;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use out::OutElem;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod out;

/// Output tiles of `GROUP_M` consecutive tile rows are walked column by column, so that a
/// wave of blocks reuses the same `A` rows and `B` columns from L2 (the "grouped" order).
pub const GROUP_M: u32 = 8;

/// `(tile_row, tile_col)` of the output tile number `index` (0-based) in a
/// `tiles_m`×`tiles_n` grid of tiles, in grouped order: tile rows are taken [`GROUP_M`] at a
/// time, and within such a band the tiles are numbered column-major. Every tile is hit
/// exactly once for `index` in `0..tiles_m·tiles_n`.
///
/// ```
/// use kernels::gemm_tc::tile_coords;
/// // 3×2 tiles: one band of 3 rows, walked column by column.
/// let order: Vec<_> = (0..6).map(|i| tile_coords(i, 3, 2)).collect();
/// assert_eq!(order, [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
/// ```
#[inline(always)]
#[must_use]
pub const fn tile_coords(index: u32, tiles_m: u32, tiles_n: u32) -> (u32, u32) {
    let band_tiles = GROUP_M * tiles_n;
    let band = index / band_tiles;
    let first_row = band * GROUP_M;
    let rows = if tiles_m - first_row < GROUP_M {
        tiles_m - first_row
    } else {
        GROUP_M
    };
    let within = index % band_tiles;
    (first_row + within % rows, within / rows)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn grouped_order_visits_every_tile_once() {
        for (tm, tn) in [(1, 1), (7, 3), (8, 8), (9, 5), (32, 16), (17, 1), (1, 17)] {
            let mut seen = vec![0u32; (tm * tn) as usize];
            for i in 0..tm * tn {
                let (r, c) = tile_coords(i, tm, tn);
                assert!(r < tm && c < tn, "{tm}x{tn}: tile {i} -> ({r}, {c})");
                seen[(r * tn + c) as usize] += 1;
            }
            assert!(seen.iter().all(|&s| s == 1), "{tm}x{tn}: {seen:?}");
        }
    }
}
