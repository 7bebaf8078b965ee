//! The `mma.sync` GEMM (**sm_80+**): `C = A·Bᵀ` on the warp-level tensor-core instructions
//! of `cuda_std::mma`, in bf16, f16 (`m16n8k16`) and TF32 (`m16n8k8`). Layouts and
//! precisions: [the parent module](super).
//!
//! Design (the structure of CUTLASS's sm80 multistage GEMM). A block of [`MMA_THREADS`]
//! threads (8 warps, 2 × 4) computes a [`MMA_BM`]×[`MMA_BN`] tile of `C`; each warp a 64×64
//! sub-tile held as 4 × 8 `m16n8` accumulator fragments (128 `f32` registers per thread).
//! K is walked in steps of [`MMA_BK_BYTES`] = 128 bytes per row (64 bf16/f16 or 32 f32
//! elements): `A`'s 128×128-byte and `B`'s 256×128-byte slices are copied with 16-byte
//! `cp.async.cg` into a ring of [`MMA_STAGES`] stages of dynamic shared memory
//! ([`MMA_SHARED_BYTES`]), `MMA_STAGES - 1` steps ahead of the stage being computed on.
//!
//! A step is 4 sub-steps of 32 bytes per row (one `m16n8k16`, or one TF32 `m16n8k8`, per
//! `m16n8` tile): 32 `mma.sync` per warp each. Fragments are double-buffered in registers:
//! before issuing sub-step `s`'s 32 MMAs a warp loads, with `ldmatrix.x4`, the fragments of
//! sub-step `s + 1` (4 `A` tiles of 16 rows, 4 `B` tiles of 16 columns), so the shared
//! memory latency hides behind the tensor cores. The copies of the stage ahead are spread
//! over sub-steps 0–2 (`A` at 0, `B`'s halves at 1 and 2) and committed as one group; at
//! sub-step 3 each thread waits for the next stage's copies (`cp.async.wait_group`), the
//! block passes its one barrier of the step, and the warps load the next stage's first
//! fragments before issuing sub-step 3's MMAs. The barrier also frees the slot the next
//! step's copies overwrite: every warp has read it into registers before arriving.
//!
//! TF32: each `f32` operand is rounded to TF32 to nearest (ties away from zero,
//! [`cuda_std::mma::tf32_from_f32`], `cvt.rna.tf32.f32`) in registers after `ldmatrix`:
//! the tensor core alone would truncate (ignore the 13 low mantissa bits), which doubles the
//! inputs' relative error (2⁻¹⁰ instead of 2⁻¹¹).
//!
//! Shared memory: a row of a stage is 8 chunks of 16 bytes (all 32 banks), chunk `c` of
//! stage row `r` stored at chunk `c ^ (r % 8)` ([`layout::swizzled`]). An `ldmatrix` phase
//! reads one logical chunk of 8 consecutive rows, and 8 consecutive threads' copies write
//! the 8 chunks of one row: either way the 8 accesses of 16 bytes land in 8 different
//! 16-byte bank groups (no bank conflicts; the unit tests check both).
//!
//! Edges: copies of rows of `A` past `m` (of `B` past `n`) are skipped, so the accumulators
//! of those rows (columns) hold garbage that is never stored (each element of `C` depends
//! only on its own row of `A` and of `B`); chunks past `k` are zero-filled in shared memory
//! by the same `cp.async` with a source size of 0, so K needs only be a multiple of 16
//! bytes. Both conditions are predicates of the copy instruction, not branches, so the
//! copies interleave with the MMAs. Blocks take their tiles in the grouped order of [`super::tile_coords`] (1-D grid
//! of `ceil(m / 128) · ceil(n / 256)` blocks).
//!
//! Launch: grid `(ceil(m / MMA_BM) · ceil(n / MMA_BN), 1, 1)`, block `(MMA_THREADS, 1, 1)`,
//! [`MMA_SHARED_BYTES`] (144 KiB) of dynamic shared memory (above the default 48 KiB limit:
//! the host raises the kernel's limit first; sm_80 and sm_90 allow up to 163 and 227 KiB
//! per block, CUDA C++ Programming Guide, "Technical Specifications per Compute
//! Capability").

// The parts, by job (all but `layout` and `tests` need sm_80, or the host's build):
// - `layout` (public): where each byte of a stage goes, as pure functions;
// - `elem`: the element types (`MmaElem`): their operand registers and `mma.sync`;
// - `body`: the kernel body, `gemm` (the `cp.async` ring, fragments, MMAs, epilogue),
//   and the shared-memory addressing it uses (`Smem`);
// - `entries`: the `#[kernel]` entry points `gemm_mma_*`;
// - `tests`: the layout's unit tests and the kernels on the CPU emulator.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod body;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod elem;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod entries;
pub mod layout;
#[cfg(test)]
mod tests;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use self::{elem::MmaElem, entries::*};

/// Rows of `C` per block.
pub const MMA_BM: u32 = 128;
/// Columns of `C` per block.
pub const MMA_BN: u32 = 256;
/// Bytes of each row of `A` and `B` per pipeline stage (64 bf16/f16 or 32 f32 elements):
/// 8 chunks of 16 bytes, 4 MMA sub-steps of 32 bytes.
pub const MMA_BK_BYTES: u32 = 128;
/// Pipeline stages (the `cp.async` ring). Three stages of 48 KiB: 144 KiB fits the 163 KiB
/// an sm_80 block may have as well as Hopper's 227 KiB; the copies run two steps (8 MMA
/// sub-steps) ahead of the tensor cores.
pub const MMA_STAGES: u32 = 3;
/// Threads per block (8 warps).
pub const MMA_THREADS: u32 = 256;
/// Bytes of one stage: the `A` slice then the `B` slice (48 KiB).
pub const MMA_STAGE_BYTES: u32 = (MMA_BM + MMA_BN) * MMA_BK_BYTES;
/// Dynamic shared memory per block, bytes: [`MMA_STAGES`] · [`MMA_STAGE_BYTES`] (144 KiB).
pub const MMA_SHARED_BYTES: u32 = MMA_STAGES * MMA_STAGE_BYTES;

/// 16-byte chunks per stage row.
const CHUNKS: u32 = MMA_BK_BYTES / 16;
