//! SGEMM: `C = α·A·B + β·C` in `f32`, row-major, any `m`, `n`, `k`.
//!
//! `A` is m×k (`a[i·k + p]`), `B` is k×n (`b[p·n + j]`), `C` is m×n (`c[i·n + j]`).
//!
//! Each block of [`SGEMM_THREADS`] threads computes a [`SGEMM_TILE_M`]×[`SGEMM_TILE_N`] tile
//! of `C`; each thread an 8×8 sub-tile held in 64 registers, as two 4-row × two 4-column
//! strips 64 apart (so the shared-memory reads of a warp are broadcasts or conflict-free
//! 16-byte loads). The k dimension is walked in steps of 8: `A` (stored transposed, rows
//! padded by 4 floats against bank conflicts) and `B` tiles go through shared memory, double
//! buffered — the global loads of step t+1 are issued before the 512 FMAs of step t, one
//! barrier per step. Global loads are 16 bytes when `k` (for A) or `n` (for B and C) is a
//! multiple of 4 and the access is inside the matrix, else guarded 4-byte loads that fill the
//! padding with zeros. Products are accumulated with fused multiply-adds (`fma.rn.f32`).
//!
//! Launch: grid `(ceil(n / 128), ceil(m / 128), 1)`, block `(256, 1, 1)`, no dynamic shared
//! memory (16,640 bytes static).

// The parts, by job:
// - `kernel`: the `#[kernel]` entry point `sgemm`: tile loads, the double-buffered main loop
//   and the call into the epilogue, one function;
// - `epilogue`: `C = α·acc + β·C` for a thread's sub-tile (`Epilogue`).
pub(crate) mod epilogue;
mod kernel;

pub use kernel::sgemm;

/// Rows of `C` per block.
pub const SGEMM_TILE_M: u32 = 128;
/// Columns of `C` per block.
pub const SGEMM_TILE_N: u32 = 128;
/// Threads per block.
pub const SGEMM_THREADS: u32 = 256;

const BK: u32 = 8;
/// Row stride of the transposed A tile in shared memory, floats (padded).
const A_STRIDE: u32 = SGEMM_TILE_M + 4;
const A_STAGE_FLOATS: u32 = BK * A_STRIDE;
const B_STAGE_FLOATS: u32 = BK * SGEMM_TILE_N;
const STAGE_FLOATS: u32 = A_STAGE_FLOATS + B_STAGE_FLOATS;
/// Two stages of A and B: 2 · 2080 floats = 16,640 bytes of static shared memory.
const SMEM_FLOATS: usize = 2 * STAGE_FLOATS as usize;
