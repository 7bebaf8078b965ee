//! The Hopper GEMM (**sm_90a**): `C = A·Bᵀ` on `wgmma.mma_async`, fed by TMA through a ring of
//! shared-memory stages guarded by mbarriers, warp specialised and persistent. bf16 and f16
//! (`m64n256k16`), TF32 (`m64n256k8`) and FP8 (`m64n128k32`, e4m3 or e5m2 inputs, bf16 or
//! f32 out, per-tensor scales); layouts and precisions: [the parent module](super).
//!
//! One body (`gemm`) serves every type: it is generic over the input element (`WgmmaElem`:
//! its stage tiles and `wgmma`) and the output element (`WgmmaOut`: its TMA store box). The FP8 entry points (`gemm_wgmma_{e4m3,e5m2}_{bf16,f32}`) take a
//! `scale` that the epilogue multiplies every accumulator by before rounding to the output
//! type: `C = scale·(A·Bᵀ)`, with `scale = scale_a·scale_b` (cuBLASLt's scaled matmul,
//! `D = scale_a·scale_b·(A·B)`; the host computes the product in `f32`). FP8 stages hold
//! 128 elements of K per row (128 bytes, as for every type). FP8 sums in `f32` registers
//! (`operand::PromotedA`): per stage and half of `B`, four `m64n128k32` into a fresh partial
//! tile, then `acc += partial`, as cuBLASLt does without fast accumulation; summing all of K
//! in the `wgmma` accumulator (four `m64n256k32` per stage, as before) erred up to 2.5×
//! cuBLASLt's, and was 1.2–1.4× faster (README).
//!
//! Two forms for bf16 and f16. The *cooperative* body (`gemm`, below): both consumer
//! warpgroups split one 128 × 256 tile. The *ping-pong* body (`gemm_pingpong`, the
//! `gemm_wgmma_{bf16,f16}_pp` and `_pp_c2` entry points; its own module docs): each consumer
//! warpgroup computes 128 × 176 tiles of its own and the two take turns, so one stores while
//! the other's `wgmma` run. cuBLASLt's fastest kernels for the bench's transformer shapes on
//! an H200 have that form (`nvjet_sm90_tst_168x128_64x5_1x2_h_bz_TNN` for 8192×8192×2048,
//! `…_176x128_…` for 4096×14336×4096, tensor pipes 96–97 % active under Nsight Compute
//! against 87–92 % for cuBLASLt's cooperative `coopA`/`coopB` kernels and 83 % for ours,
//! 2026-11-29). Measured against the cooperative body (one H200, two bench runs of both
//! forms interleaved): ahead at K = 2048 (8192×8192×2048: 0.928 / 0.973× cuBLASLt in
//! clusters of two, 0.919 / 0.965× without, against 0.898 / 0.957×), level at
//! 4096×14336×4096 (0.917 / 0.912× against 0.922 / 0.921×), behind at 4096³ and 8192³
//! (0.89–0.92× against 0.94–0.98×): its main loop is slower, its epilogue hidden. Storing
//! `C` from registers instead of through shared memory by TMA cost it 5–9 % (Nsight
//! Compute: half of every 32-byte sector written per store, twice the L2 write sectors).
//!
//! Design. A block of [`WG_THREADS`] threads is three warpgroups:
//! - warpgroup 0, the *producer*, lowers its register limit to 40 (`setmaxnreg.dec`); one
//!   of its threads issues, per K step, two TMA loads (the [`WG_BM`] rows of `A` and the
//!   [`WG_BN`] rows of `B`, [`WG_BK_BYTES`] of each: the tiles `WgmmaElem::AStage` and
//!   `WgmmaElem::BStage`) into the next free stage, after waiting on that stage's *empty*
//!   barrier, having announced the stage's bytes on its *full* barrier
//!   (`mbarrier.arrive.expect_tx`, the two tiles' bytes); the ring's barriers are a
//!   `cuda_std::tile::Pipeline`;
//! - warpgroups 1 and 2, the *consumers*, raise their limit to 232 (`setmaxnreg.inc`); each
//!   owns 64 rows of the 128×256 block tile (128 `f32` accumulators per thread), waits on a
//!   stage's full barrier, issues 4 `wgmma` of K = 32 bytes each on it (`A` from shared
//!   memory, or for the TF32 RS form from registers: see TF32 below), commits, and with
//!   `wgmma.wait_group 1` releases the *previous* stage (one arrival per warp on its empty
//!   barrier), so one group of `wgmma` is always in flight.
//!
//! Clusters. The body takes the cluster size along M as a parameter: the entry points
//! `gemm_wgmma_*` run without clusters (every block on its own), the `gemm_wgmma_*_c2`
//! ones with clusters of [`WG_CLUSTER_M`] = 2 blocks that compute vertically adjacent
//! tiles with the same `B` tile. There each block's producer loads its `A` tile and 128 of
//! the 256 rows of `B` (the tile `WgmmaElem::BHalf`) and multicasts the `B` half into the same
//! stage of both blocks (`cp.async.bulk.tensor … multicast::cluster`), which halves the
//! L2→SM traffic of `B` (two thirds of a stage). A stage of a block is then written by both
//! producers, so its empty barrier counts the consumer warps of both blocks (16 arrivals)
//! and each consumer warp arrives on both (`mbarrier.arrive.release.cluster`); a producer
//! refills a stage only after both blocks' consumers released it, which they do after the
//! stage's full phase completed in both, so no multicast lands in a phase that does not
//! expect it. A cluster barrier after the barrier inits and another before exit keep each
//! block's barriers alive while the other uses them (exited producer threads count as
//! arrived).
//!
//! TF32. `wgmma` reads its `f32` operands straight from shared memory and ignores their 13
//! low mantissa bits (truncation, twice the input error of rounding). So the TF32 entry
//! points take inputs already rounded to TF32 ([`Tf32Rounded`]), which [`round_tf32`]
//! writes (to nearest, ties away from zero, as `cvt.rna.tf32.f32`) and the host's TF32 path
//! (`host::matmul`) runs before each product, over copies of `A` and `B`: a memory-bound
//! pass, then the bf16/f16 kernels' shape. The earlier design rounded each stage in shared
//! memory with three producer warps between TMA and the consumers: every stage read and
//! written once more, 70 % of warp stall cycles on shared-memory loads (Nsight Compute,
//! H100), 0.48–0.53× cuBLAS on an H200 at the bench's five shapes, against 0.62–0.90×
//! (cluster form) for the separate pass in the same H200 bench a session later. Both give
//! the same products and sums, so the same bits; errors equal cuBLAS's. Rounding only `A` in
//! the kernel (each consumer warpgroup its own 8 KiB of a stage: 4 16-byte loads and stores per
//! thread, `fence.proxy.async`, a warpgroup barrier) and `B` by the pass was tried too
//! (2026-11-29, two H200 runs, each alternating with this design, ratios to cuBLASLt, c2 in
//! parentheses): with the rounding between a stage's full wait and its `wgmma`, 0.75–0.76×
//! (0.75–0.76×) at 2048³ against 0.71× (0.72×), but 0.82× (0.82–0.83×) at 8192³ against 0.88×
//! (0.92×); with the next stage's `A` rounded while the current stage's `wgmma` ran, 0.72–0.74×
//! (0.69–0.71×) at 2048³ and 0.78× (0.75–0.76×) at 8192³. Either way the product kernel itself
//! ran 6–11 % slower (8192³: 3.50–3.65 ms against 3.27–3.34 ms), more than the pass over `A`
//! saves except at 2048³, so it was not kept.
//!
//! TF32 with `A` from registers (the RS form; fixed after wrong results on a GPU, below, and
//! not yet re-measured): the entry points `gemm_wgmma_tf32_rs` and `gemm_wgmma_tf32_rs_c2`
//! are the same body with [`RegA`] instead of [`SmemA`] as its `A` operand. `A` comes in plain `f32` (the host
//! passes it unrounded: no pass and no copy of `A`); per stage each consumer warpgroup loads
//! its 64 rows of `A` from the stage with four `ldmatrix.x4` (one per K step of 8: an `f32`
//! is a pair of 16-bit elements, so the four 8×8 16-bit matrices are rows `16w..16w+8` and
//! `16w+8..16w+16` of warp `w` times the step's two 16-byte chunks, which is the
//! `m64nNk8` `.tf32` `A` fragment, `cuda_std::wgmma::layout::a_row_col_tf32`; the 8 rows of
//! each matrix fall in 8 different swizzled chunks, free of bank conflicts), rounds the 16
//! values to TF32 (`cvt.rna.tf32.f32`: the same rounding as [`round_tf32`]), fences and
//! issues four `m64n256k8` with `A` in registers. `B` stays in shared memory, where `wgmma`
//! would truncate it, so the host still rounds `B` by the pass (half the pass's bytes of a
//! square product). Same products and sums as the SS form, so the same bits.
//!
//! The first version (one K step per loop trip) was wrong on an H200: max relative error
//! ~1e-1 at every shape, the integer, RS == SS, random and rounding tests failing, yet the
//! integer test passing under compute-sanitizer synccheck and racecheck, which slow the
//! kernel down: a timing hazard. The loop's `ldmatrix` and `cvt.rna` wrote the same PTX
//! registers on every trip, so the next stage's fragments overwrote (R152–R167 in the SASS)
//! the `A` registers of the previous stage's `wgmma` group while `wait_group 1` left it
//! running, which PTX ISA §9.7.15.5.2 leaves undefined. Now the loop takes two K steps per
//! trip (a third copy for an odd `k_tiles`), so consecutive stages' fragments are made at
//! different places and live in different registers, and each stage's fragments go through
//! `wgmma::fence_operand` after the `wait_group` that covers their group (the next stage's
//! `wait_group 1`, or the final `wait_group 0`), CUTLASS's `warpgroup_fence_operand`, which
//! keeps LLVM from ending their life earlier (it emits no instruction: what gives ptxas
//! other registers is the two-step loop). ptxas 12.9: 168 registers, 0 spills, no
//! serialisation warning; in the SASS the even steps' `LDSM`/`HGMMA` use R152–R167, the odd
//! steps' R168–R183, the odd tail's R184–R199, and no instruction between a group's `HGMMA`
//! and the `WARPGROUP.DEPBAR` that retires it writes its `A` registers. On an H200
//! (2026-11-29) the fixed form passed every `matmul` GPU test (integer inputs bit for bit)
//! and compute-sanitizer's memcheck, synccheck and racecheck.
//!
//! TF32 and programmatic dependent launch (H200, 2026-11-29, three rounds alternating with
//! the build before in one run: the RS form at 2048³ 0.887 / 0.849 / 0.866× cuBLASLt against
//! 0.841 / 0.832 / 0.831×, the larger shapes within noise): the host launches
//! the TF32 product (every TF32 entry point, SS and RS, with or without clusters) right
//! after the rounding pass over `B`, with programmatic stream serialization
//! (`cust::function::LaunchAttributes::programmatic_stream_serialization`), so that its
//! blocks may start while the pass's last blocks run: [`round_tf32`] lets them
//! (`griddepcontrol.launch_dependents` at its start; a scheduling hint only), and the
//! product's prologue (barrier init, `setmaxnreg`, the tensor maps' prefetch) overlaps the
//! pass. The producer thread then waits for the pass (`griddepcontrol.wait`:
//! `cuda_std::thread::grid_dependency_sync`, the whole pass completed and its writes
//! visible) before its first TMA load, the first read of anything the pass writes (the
//! SS form's `A` copy was written by the pass before it, which had completed when the
//! `B` pass started). The consumers read only shared memory and the map of `C` before a
//! stage's full phase, which those loads complete, and the pass does not touch `C`, so
//! nothing else needs to wait. The product waits in every block, so it completes after the
//! pass. Launched without the attribute (or on the emulator, whose launches run in order)
//! the wait returns at once. The other types' kernels have no wait
//! (`WgmmaElem::AFTER_ROUNDING`).

//! A stage holds 128 bytes of every row of `A` and `B` (64 bf16/f16, 32 f32 or 128 FP8
//! elements: [`WG_BK_BYTES`]), stored by TMA with the 128-byte swizzle (16-byte chunk `c` of
//! row `r` at chunk `c ^ (r % 8)`), which is also the layout the `wgmma` descriptors name
//! (stride byte offset 1024: 8 rows of 128 bytes); every stage and operand starts 1024-byte
//! aligned. The ring has [`WG_STAGES`] stages of 48 KiB. Rows past `m` or `n` and columns
//! past `k` are zero-filled by TMA (the tensor maps hold the true extents).
//!
//! The grid has one block per multiprocessor (or fewer when there are fewer tiles); block
//! `b` computes tiles `b`, `b + gridDim`, … in the grouped order of
//! [`super::tile_coords`]. With clusters of `c` blocks along M the walk is over groups of
//! `c` tile rows (⌈tile rows / c⌉ × tile columns): cluster `q = b / c` takes groups `q`,
//! `q + gridDim / c`, … and its block of rank `r` computes tile row `c·g + r` of group `g`;
//! where the tile rows do not divide by `c`, the blocks past the last row read zeros (TMA's
//! out-of-bounds fill), still multicast their part of `B`, and store nothing. Producer and
//! consumers walk the same tile sequence, and the ring's stage index and phases carry on
//! from tile to tile, so the producer fetches the next tile's first stages while the
//! consumers store the previous tile. The epilogue converts
//! the accumulators to `T` (the `wgmma` accumulator layout:
//! [`cuda_std::wgmma::layout::acc_row_col`]) and, where `C`'s rows are a multiple of 16
//! bytes (`c_by_tma`), writes each consumer's 64×256 part into shared memory in boxes of 64
//! rows × 128 bytes (128-byte swizzle, conflict-free) that TMA stores to `C`
//! (`cp.async.bulk.tensor` store, clipped at `C`'s edges), double buffered per consumer in
//! a [`WG_C_BYTES`] buffer after the stages, so the stores drain while the consumer goes on
//! to the next tile and the writes to `C` are whole 128-byte lines; otherwise it stores
//! pairs of adjacent elements straight from registers, skipping elements outside `C`.
//!
//! Launch: grid `(min(#SMs, tiles), 1, 1)` without clusters; for the `_c2` entry points,
//! clusters of `(WG_CLUSTER_M, 1, 1)` and a grid of `WG_CLUSTER_M · min(clusters that fit
//! at once, groups)` blocks (`cuOccupancyMaxActiveClusters`: on H100 not every pair of
//! multiprocessors can hold a cluster, and a larger grid runs as a second wave); block
//! `(WG_THREADS, 1, 1)`,
//! [`WG_SHARED_BYTES`] of dynamic shared memory (the kernel's limit raised first), built with
//! at most 168 registers per thread (`.maxnreg 168`, so that 384 threads fit the 64 K
//! register file before the warpgroups rebalance).

// The parts, by job (each needs sm_90a, or the host's emulator build):
// - `elem`: the input and output element types (`WgmmaElem`, `WgmmaOut`): their stage
//   tiles, store box and `wgmma` instruction;
// - `tf32`: `Tf32Rounded` and the integer TF32 rounding of the pass over the inputs;
// - `operand`: where the consumers' `wgmma` read `A` from (`AOperand`: `SmemA`, `RegA`);
// - `body`: the kernel body, `gemm` (prologue, producer, consumers, epilogue);
// - `epilogue`: the epilogue's helpers (accumulator walk, warpgroup barrier, scale);
// - `pingpong`: the ping-pong body (bf16/f16: each consumer warpgroup its own 128×176
//   tiles, taking turns; its constants `PP_*` are here);
// - `entries`: the `#[kernel]` entry points (the GEMMs and the rounding pass `round_tf32`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
// `gemm` takes the entry points' 8 parameters and `scale`.
#[allow(clippy::too_many_arguments)]
mod body;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod elem;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
// The entry points take 8 parameters (m, n, k, three tensor maps' pointers, C, a flag);
// `#[kernel]` does not pass an `allow` on the function through to what it generates.
#[allow(clippy::too_many_arguments)]
mod entries;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod epilogue;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod operand;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
// `gemm_pingpong` takes the entry points' 8 parameters.
#[allow(clippy::too_many_arguments)]
mod pingpong;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod tf32;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use self::{
    elem::{WgmmaElem, WgmmaOut},
    entries::*,
    operand::{AOperand, RegA, SmemA},
    pingpong::PingpongElem,
    tf32::Tf32Rounded,
};

use cuda_std::tile::{Pipeline, SmemTile, Tile, Tiles, swizzle};

/// Rows of `C` per block tile (two consumer warpgroups of 64 rows).
pub const WG_BM: u32 = 128;
/// Columns of `C` per block tile (`wgmma` N = 256).
pub const WG_BN: u32 = 256;
/// Bytes of each row of `A` and `B` per stage: one 128-byte swizzle row (64 bf16/f16 or 32
/// f32 elements).
pub const WG_BK_BYTES: u32 = 128;
/// Stages of the TMA ring.
pub const WG_STAGES: u32 = 4;
/// Blocks per cluster, along M, of the `gemm_wgmma_*_c2` entry points: the blocks of a
/// cluster compute vertically adjacent tiles and share the `B` tile (each loads
/// `WG_BN / WG_CLUSTER_M` of its rows and multicasts them to all).
pub const WG_CLUSTER_M: u32 = 2;
/// Threads per block: one producer and two consumer warpgroups.
pub const WG_THREADS: u32 = 384;
/// Registers per thread the kernel is built with (`.maxnreg`): 384 × 168 ≤ 65,536.
pub const WG_MAX_REGISTERS: u32 = 168;
/// The `A` part of a stage as bytes: [`WG_BM`] rows of [`WG_BK_BYTES`] in the 128-byte
/// swizzle. Every input type's `WgmmaElem::AStage` is this layout with its own element
/// type (64 bf16/f16, 32 f32 or 128 FP8 elements per row), checked where the kernel is
/// instantiated.
pub type AStageBytes = SmemTile<u8, WG_BM, WG_BK_BYTES, swizzle::B128>;
/// The `B` part of a stage as bytes: [`WG_BN`] rows of [`WG_BK_BYTES`] (as
/// [`AStageBytes`], for `WgmmaElem::BStage`).
pub type BStageBytes = SmemTile<u8, WG_BN, WG_BK_BYTES, swizzle::B128>;
/// Bytes of `A` per stage.
pub const WG_A_STAGE_BYTES: u32 = AStageBytes::BYTES;
/// Bytes of `B` per stage.
pub const WG_B_STAGE_BYTES: u32 = BStageBytes::BYTES;
/// Bytes of one stage (`A` then `B`): what a stage's full barrier expects.
pub const WG_STAGE_BYTES: u32 = <(AStageBytes, BStageBytes) as Tiles>::TX_BYTES;
/// Rows of one TMA store box of `C` (a consumer warpgroup's 64 rows).
pub const WG_C_BOX_ROWS: u32 = 64;
/// Bytes of one TMA store box of `C`: [`WG_C_BOX_ROWS`] rows of 128 bytes (64 bf16/f16 or
/// 32 f32 columns), in the 128-byte swizzle.
pub const WG_C_BOX_BYTES: u32 = WG_C_BOX_ROWS * 128;
/// Bytes of the epilogue buffer: two boxes (double buffered) per consumer warpgroup.
pub const WG_C_BYTES: u32 = 2 * 2 * WG_C_BOX_BYTES;
/// Dynamic shared memory per block, bytes: the stages, the epilogue buffer, 1024 bytes of
/// alignment slack (the dynamic shared window is only 16-byte aligned) and the
/// 2 × [`WG_STAGES`] barriers (full, empty: a [`Pipeline`]): 230,464 of the 232,448 (227
/// KiB) a block may have.
pub const WG_SHARED_BYTES: u32 =
    WG_STAGES * WG_STAGE_BYTES + WG_C_BYTES + 1024 + Pipeline::<WG_STAGES>::SHARED_BYTES;
const _: () = assert!(WG_SHARED_BYTES <= 227 * 1024);
// The cluster's blocks multicast one `BHalf` each: together exactly one `BStage`, the bytes
// every block's full barrier expects (`(AStage, BStage)`).
const _: () = assert!(
    WG_BN.is_multiple_of(WG_CLUSTER_M),
    "the cluster's B halves must add up to the B stage"
);

/// Rows of `C` per tile: one consumer warpgroup's two `m64` halves.
pub const PP_BM: u32 = 128;
/// Columns of `C` per tile (`wgmma` N = 176).
pub const PP_BN: u32 = 176;
/// Stages of the TMA ring.
pub const PP_STAGES: u32 = 5;
/// Threads per block: one producer and two consumer warpgroups.
pub const PP_THREADS: u32 = 384;
/// The `B` part of a stage as bytes: [`PP_BN`] rows of [`WG_BK_BYTES`] in the 128-byte
/// swizzle (for `WgmmaElem::BStagePp`).
pub type PpBStageBytes = SmemTile<u8, PP_BN, WG_BK_BYTES, swizzle::B128>;
/// Bytes of one stage (`A` then `B`): what a stage's full barrier expects.
pub const PP_STAGE_BYTES: u32 = <(AStageBytes, PpBStageBytes) as Tiles>::TX_BYTES;
/// Columns of one TMA store box of `C` in the ping-pong kernels: half a tile's 176, so
/// that a box of 64 rows (`WgmmaOut::CBoxPp`) takes 11 KiB (bf16/f16) of shared memory.
pub const PP_C_BOX_COLS: u32 = PP_BN / 2;
/// Bytes of the ping-pong kernels' epilogue buffer: one store box of 2-byte elements per
/// consumer warpgroup.
pub const PP_C_BYTES: u32 = 2 * WG_C_BOX_ROWS * PP_C_BOX_COLS * 2;
/// Dynamic shared memory per block, bytes: the stages, the epilogue buffer, 1024 bytes of
/// alignment slack, the ring's barriers and the consumers' two order barriers (8 bytes
/// each).
pub const PP_SHARED_BYTES: u32 =
    PP_STAGES * PP_STAGE_BYTES + PP_C_BYTES + 1024 + Pipeline::<PP_STAGES>::SHARED_BYTES + 2 * 8;
const _: () = assert!(PP_SHARED_BYTES <= 227 * 1024);
// Every stage starts 1024-aligned (the swizzle atom).
const _: () = assert!(PP_STAGE_BYTES.is_multiple_of(1024));
