//! SGEMM for sm_80 and later: `C = α·A·B + β·C` in `f32` with a `cp.async` pipeline.
//!
//! Same layouts and semantics as [`crate::gemm::sgemm`]: `A` is m×k row-major
//! (`a[i·k + p]`), `B` is k×n (`b[p·n + j]`), `C` is m×n (`c[i·n + j]`); with `beta == 0`,
//! `C` is not read. Restricted to `k % 4 == 0` and `n % 4 == 0` (every 16-byte chunk of a
//! row of `A` or `B` is then aligned and either wholly inside the matrix or wholly outside);
//! the host falls back to [`crate::gemm::sgemm`] otherwise.
//!
//! Design. A block of [`SGEMM80_THREADS`] threads computes a
//! [`SGEMM80_TILE_M`]×[`SGEMM80_TILE_N`] tile of `C`; each thread an 8×16 sub-tile in 128
//! registers: rows `4·ty..4·ty + 4` and `64 + 4·ty..` (`ty = tid / 16`), columns
//! `4·tx + 64·q..4·tx + 64·q + 4` for `q` in 0..4 (`tx = tid % 16`). K is walked in steps of
//! [`SGEMM80_BK`] = 16: per step, `A`'s 128×16 slice, stored transposed (one row of 128 `A`
//! rows per k value, padded to [`SGEMM80_A_STRIDE`] = 132 floats) with 4-byte
//! `cp.async.ca`, and `B`'s 16×256 slice with 16-byte `cp.async.cg`, go into a ring of
//! [`SGEMM80_STAGES`] stages of dynamic shared memory ([`SGEMM80_SHARED_BYTES`]). Each step
//! waits for its oldest stage, issues the copies of the stage `SGEMM80_STAGES - 1` ahead, and
//! computes on the oldest, with one barrier per step.
//!
//! Shared-memory reads, per k value: two `A` quads (4 consecutive rows each, rows `4·ty`
//! and `64 + 4·ty`: the two `ty` of a warp read 2 quads, the other lanes broadcast) and four
//! `B` quads (16 consecutive lanes cover 256 contiguous bytes), then 128 FMAs: 24 registers
//! of operands per k. The transposed `A` is what makes that few: with `A` stored as it lies
//! in memory (four k values of one row per quad), a thread held 32 `A` values for four k
//! values at once and ptxas used all 255 registers; transposed, it uses 226 (ptxas 12.9,
//! sm_90a), and on an H200 (2026-11-29, three alternating rounds of `ferrocuda bench
//! --gemm-only`, cuBLAS in the same process) SGEMM went from 0.820–0.833× to 0.897–0.909×
//! cuBLAS at 2048³, 4096³ and 8192³. The transposing store costs 8 4-byte copies per thread
//! and stage instead of 2 16-byte ones; the two k values 8 apart that a warp writes share
//! banks (2-way conflicts, on the copies only).
//!
//! Every output is accumulated over k in increasing order with `fma.rn.f32`, from 0 (the
//! first FMA is the rounded product), so results equal [`crate::gemm::sgemm`]'s bit for bit.
//!
//! Edges: elements of `A` rows past `m` or past `k`, and chunks of `B` rows past `k` or
//! columns past `n`, are zero-filled in shared memory with plain stores (they add exact
//! zeros).
//!
//! Launch: grid `(ceil(n / 256), ceil(m / 128), 1)`, block `(256, 1, 1)`,
//! [`SGEMM80_SHARED_BYTES`] of dynamic shared memory (above the default 48 KiB: the host's
//! launch raises the kernel's limit). 226 registers per thread: one block per
//! multiprocessor.

/// Rows of `C` per block.
pub const SGEMM80_TILE_M: u32 = 128;
/// Columns of `C` per block.
pub const SGEMM80_TILE_N: u32 = 256;
/// Threads per block.
pub const SGEMM80_THREADS: u32 = 256;
/// k values per pipeline stage.
pub const SGEMM80_BK: u32 = 16;
/// Pipeline stages (the `cp.async` ring).
pub const SGEMM80_STAGES: u32 = 4;
/// Row stride of the `A` slice in shared memory, floats: the slice is stored transposed,
/// one row of 128 `A` rows per k value, padded by 4 floats.
pub const SGEMM80_A_STRIDE: u32 = SGEMM80_TILE_M + 4;
/// Floats of one stage: the `A` slice (16 × 132, transposed) then the `B` slice (16 × 256).
pub const SGEMM80_STAGE_FLOATS: u32 = SGEMM80_BK * SGEMM80_A_STRIDE + SGEMM80_BK * SGEMM80_TILE_N;
/// Dynamic shared memory per block, bytes: [`SGEMM80_STAGES`] · 4 · [`SGEMM80_STAGE_FLOATS`]
/// (97 KiB).
pub const SGEMM80_SHARED_BYTES: u32 = SGEMM80_STAGES * SGEMM80_STAGE_FLOATS * 4;

/// Floats of the `A` slice of a stage.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
const A_FLOATS: u32 = SGEMM80_BK * SGEMM80_A_STRIDE;

// The parts, by job (both need sm_80, or the host's build):
// - `kernel`: the `#[kernel]` entry point `sgemm_cp_async`: the `cp.async` copies of a
//   stage, the ring's main loop and the call into the epilogue, one function;
// - `epilogue`: `C = α·acc + β·C` for a thread's sub-tile (`Epilogue`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod epilogue;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
// The BLAS-style SGEMM signature has 8 parameters.
#[allow(clippy::too_many_arguments)]
mod kernel;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use kernel::sgemm_cp_async;
