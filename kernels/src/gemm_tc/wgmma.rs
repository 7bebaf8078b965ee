//! The Hopper GEMM (**sm_90a**): `C = A·Bᵀ` on `wgmma.mma_async`, fed by TMA through a ring of
//! shared-memory stages guarded by mbarriers, warp specialised and persistent. bf16 and f16
//! (`m64n256k16`), TF32 (`m64n256k8`) and FP8 (`m64n256k32`, e4m3 or e5m2 inputs, bf16 or
//! f32 out, per-tensor scales); layouts and precisions: [the parent module](super).
//!
//! One body (`gemm`) serves every type: it is generic over the input element (`WgmmaElem`:
//! its stage tiles and `wgmma`) and the output element (`WgmmaOut`: its TMA store box). The FP8 entry points (`gemm_wgmma_{e4m3,e5m2}_{bf16,f32}`) take a
//! `scale` that the epilogue multiplies every accumulator by before rounding to the output
//! type: `C = scale·(A·Bᵀ)`, with `scale = scale_a·scale_b` (cuBLASLt's scaled matmul,
//! `D = scale_a·scale_b·(A·B)`; the host computes the product in `f32`). FP8 stages hold
//! 128 elements of K per row (128 bytes, as for every type), four `m64n256k32` per stage.
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
//! and the `WARPGROUP.DEPBAR` that retires it writes its `A` registers. Not yet re-measured
//! on a GPU.
//!
//! TF32 and programmatic dependent launch (not yet measured on a GPU): the host launches
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

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use kernels_sm90a::*;

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

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
// The entry points take 8 parameters (m, n, k, three tensor maps' pointers, C, a flag);
// `#[kernel]` does not pass an `allow` on the function through to what it generates.
#[allow(clippy::too_many_arguments)]
mod kernels_sm90a {
    use super::{
        WG_A_STAGE_BYTES, WG_BK_BYTES, WG_BM, WG_BN, WG_C_BOX_BYTES, WG_C_BOX_ROWS, WG_C_BYTES,
        WG_CLUSTER_M, WG_STAGE_BYTES, WG_STAGES,
    };
    use crate::gemm_tc::{OutElem, tile_coords};
    use cuda_std::DeviceCopy;
    use cuda_std::cluster;
    use cuda_std::half::{F8E4M3, F8E5M2, bf16, f16};
    use cuda_std::mma::tf32_from_f32;
    use cuda_std::prelude::*;
    use cuda_std::shared::shared_addr;
    use cuda_std::shared::window::SharedAddr;
    use cuda_std::tile::{Pipeline, PipelineState, SmemTile, Tile, Tiles, swizzle};
    use cuda_std::tma::{self, TensorMap};
    use cuda_std::wgmma::{self, MatrixDescriptor};

    /// An input element type of the `wgmma` GEMM: its shared-memory tiles (which the host's
    /// tensor maps are built from: `TensorMapExt::for_tile`), and which instruction one
    /// 32-byte K slice takes.
    pub trait WgmmaElem: Copy + DeviceCopy {
        /// A stage of `A`, one TMA load: [`WG_BM`] rows of [`WG_BK_BYTES`] (one 128-byte
        /// swizzle row each).
        type AStage: Tile<Elem = Self>;
        /// A consumer warpgroup's part of a stage of `A`: 64 rows of [`WG_BK_BYTES`].
        type AHalf: Tile<Elem = Self>;
        /// A stage of `B`: [`WG_BN`] rows of [`WG_BK_BYTES`]; one TMA load without
        /// clusters.
        type BStage: Tile<Elem = Self>;
        /// The share of a stage of `B` that each block of a cluster of [`WG_CLUSTER_M`]
        /// loads and multicasts: `WG_BN / WG_CLUSTER_M` rows of [`WG_BK_BYTES`].
        type BHalf: Tile<Elem = Self>;
        /// Whether the epilogue multiplies the accumulators by the launch's `scale` (the
        /// FP8 types: per-tensor scales, as cuBLASLt's scaled matmul) before rounding them
        /// to the output type. `false` keeps the other types' epilogue free of it.
        const SCALED: bool = false;
        /// Whether the producer waits for the kernel's prerequisite grids
        /// (`cuda_std::thread::grid_dependency_sync`) before its first TMA load: the TF32
        /// type, whose inputs the rounding pass ([`round_tf32`]) writes just before the
        /// product, which the host launches with programmatic stream serialization (see
        /// the module docs). `false` keeps the other types' kernels free of it.
        const AFTER_ROUNDING: bool = false;
        /// `acc (+)= A·B` for a 64×256 tile and 32 bytes of K (16 bf16/f16 elements: one
        /// `m64n256k16`; 8 f32: one `m64n256k8` TF32; 32 FP8: one `m64n256k32`).
        ///
        /// # Safety
        /// As `cuda_std::wgmma::mma_m64n256k16_f32_bf16`.
        unsafe fn mma(
            acc: &mut [f32; 128],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        );
    }

    /// An output element type of the `wgmma` GEMM: its TMA store box.
    pub trait WgmmaOut: OutElem {
        /// A TMA store box of `C`: [`WG_C_BOX_ROWS`] rows of 128 bytes.
        type CBox: Tile<Elem = Self>;
    }

    impl WgmmaOut for bf16 {
        type CBox = SmemTile<bf16, { WG_C_BOX_ROWS }, 64, swizzle::B128>;
    }

    impl WgmmaOut for f16 {
        type CBox = SmemTile<f16, { WG_C_BOX_ROWS }, 64, swizzle::B128>;
    }

    impl WgmmaOut for f32 {
        type CBox = SmemTile<f32, { WG_C_BOX_ROWS }, 32, swizzle::B128>;
    }

    /// The stage tiles of an input type whose 128-byte row holds `$cols` elements.
    macro_rules! stage_tiles {
        ($t:ty, $cols:literal) => {
            type AStage = SmemTile<$t, { WG_BM }, $cols, swizzle::B128>;
            type AHalf = SmemTile<$t, { WG_BM / 2 }, $cols, swizzle::B128>;
            type BStage = SmemTile<$t, { WG_BN }, $cols, swizzle::B128>;
            type BHalf = SmemTile<$t, { WG_BN / WG_CLUSTER_M }, $cols, swizzle::B128>;
        };
    }

    impl WgmmaElem for bf16 {
        stage_tiles!(bf16, 64);
        #[inline(always)]
        unsafe fn mma(
            acc: &mut [f32; 128],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded.
            unsafe { wgmma::mma_m64n256k16_f32_bf16::<false, false>(acc, a, b, accumulate) }
        }
    }

    impl WgmmaElem for f16 {
        stage_tiles!(f16, 64);
        #[inline(always)]
        unsafe fn mma(
            acc: &mut [f32; 128],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded.
            unsafe { wgmma::mma_m64n256k16_f32_f16::<false, false>(acc, a, b, accumulate) }
        }
    }

    /// An `f32` already rounded to TF32 (its 13 low mantissa bits clear, as
    /// [`round_tf32`] writes them), so that `wgmma`'s reading of the top bits loses
    /// nothing: the input of the `gemm_wgmma_tf32*` kernels (whose `C` is `f32`). Any
    /// other `f32` would be truncated.
    #[repr(transparent)]
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct Tf32Rounded(pub f32);

    // SAFETY: a transparent `f32`: plain bits, valid for every bit pattern, no pointers.
    unsafe impl DeviceCopy for Tf32Rounded {}

    impl WgmmaElem for Tf32Rounded {
        stage_tiles!(Tf32Rounded, 32);
        const AFTER_ROUNDING: bool = true;
        #[inline(always)]
        unsafe fn mma(
            acc: &mut [f32; 128],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded.
            unsafe { wgmma::mma_m64n256k8_f32_tf32(acc, a, b, accumulate) }
        }
    }

    /// `out[i] = x[i]` rounded to TF32, to nearest with ties away from zero (as
    /// `cvt.rna.tf32.f32`; NaNs stay NaNs), for `i < min(x.len(), out.len())`: the inputs
    /// of `gemm_wgmma_tf32*`. The STREAM kernels' element loop (`crate::vector`:
    /// 16-byte packs, grid-stride, any 1-D grid).
    ///
    /// Each block first lets the kernel after it start early
    /// (`cuda_std::thread::trigger_programmatic_launch_completion`, a scheduling hint): the
    /// TF32 product the host launches next, with programmatic stream serialization, then
    /// runs its prologue while this pass finishes, and waits for the pass before it reads
    /// `out` (see the module docs).
    #[kernel]
    pub fn round_tf32(x: &[f32], out: OutSlice<f32>) {
        cuda_std::thread::trigger_programmatic_launch_completion();
        crate::vector::map1(x, &out, |v| f32::from_bits(tf32_rna_bits(v.to_bits())));
    }

    /// Where a consumer warpgroup's `wgmma` reads `A` from: the kernel body's parameter for
    /// the two forms, `SmemA` (shared memory through a descriptor, every input type) and
    /// `RegA` (registers, rounded there on the way: TF32).
    pub trait AOperand<T: WgmmaElem> {
        /// Per-thread state kept across stages (the `ldmatrix` offsets of `RegA`).
        type Lanes: Copy;
        /// The registers a stage's `wgmma` read `A` from (`RegA`: the four fragments), kept
        /// by the kernel body until the `wgmma.wait_group` that covers them returned.
        type Held: Copy + Default;
        /// Whether `A` comes from registers (the kernel body then calls
        /// [`AOperand::stage_mma`]; for `false` it inlines `SmemA`'s sequence itself).
        const IN_REGISTERS: bool;
        /// The state of thread `t` (0..128) of a consumer warpgroup.
        fn lanes(t: u32) -> Self::Lanes;
        /// `acc (+)= A·B` for the stage of K step `kt` (`acc =` for `kt` = 0): this
        /// warpgroup's 64 rows of `A` at shared address
        /// `a_half` (the tile `T::AHalf`; `a` its descriptor) times the stage's `B` (`b`, 256
        /// rows), 4 × 32 bytes of K, `wgmma.fence` included, the commit not. Returns the
        /// registers the `wgmma` read `A` from, for [`AOperand::fence_held`] after the wait
        /// that covers them.
        ///
        /// # Safety
        /// The whole warpgroup runs this convergently with equal `a_half`, `a`, `b` and
        /// `kt`; the stage was written by TMA and its full phase completed, and is
        /// not overwritten before a `wgmma.wait_group` covering these operations returned.
        unsafe fn stage_mma(
            acc: &mut [f32; 128],
            lanes: Self::Lanes,
            a_half: u32,
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            kt: u32,
        ) -> Self::Held;
        /// Keeps `held` (a stage's [`AOperand::stage_mma`] result) live up to here: call it
        /// after the `wgmma.wait_group` that covers that stage's `wgmma` (PTX ISA
        /// §9.7.15.5.2: its register operands must not be rewritten before).
        fn fence_held(held: &mut Self::Held);
    }

    /// `A` read by `wgmma` from shared memory (the SS form).
    #[derive(Debug)]
    pub enum SmemA {}

    impl<T: WgmmaElem> AOperand<T> for SmemA {
        type Lanes = ();
        type Held = ();
        const IN_REGISTERS: bool = false;
        #[inline(always)]
        fn lanes(_t: u32) {}
        #[inline(always)]
        fn fence_held((): &mut ()) {}
        #[inline(always)]
        unsafe fn stage_mma(
            acc: &mut [f32; 128],
            (): (),
            _a_half: u32,
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            kt: u32,
        ) {
            wgmma::fence();
            // SAFETY: the caller's contract; `a` names this warpgroup's `A` half.
            unsafe {
                T::mma(acc, a, b, kt != 0);
                T::mma(acc, a.add_bytes(32), b.add_bytes(32), true);
                T::mma(acc, a.add_bytes(64), b.add_bytes(64), true);
                T::mma(acc, a.add_bytes(96), b.add_bytes(96), true);
            }
        }
    }

    /// `A` loaded into registers and rounded there (the RS form; TF32, unrounded `f32` in
    /// memory): per stage, four `ldmatrix.x4` give each thread its `m64nNk8` `A` fragment of
    /// the four K steps of 8 (`wgmma::layout::a_row_col_tf32`: an `f32` is a pair of 16-bit
    /// elements, so the four 8×8 16-bit matrices of one `ldmatrix.x4` are rows
    /// `16w..16w+8` and `16w+8..16w+16` of warp `w`, times the two 16-byte chunks of the K
    /// step), each element is rounded to TF32 (`cvt.rna.tf32.f32`), and four
    /// `m64n256k8` take `A` from the registers. The kernel body keeps a stage's registers
    /// ([`AOperand::Held`]) live until the `wait_group` after the next stage's commit and
    /// takes two stages per loop trip, so that the next stage's fragments go to other
    /// registers (the module docs: a one-stage loop overwrote them while the `wgmma` ran);
    /// two stages' fragments (32 registers) are live at once.
    #[derive(Debug)]
    pub enum RegA {}

    impl AOperand<Tf32Rounded> for RegA {
        /// Byte offsets in the `A` half of the rows this lane points `ldmatrix` at, one per
        /// K step of 8.
        type Lanes = [u32; 4];
        type Held = [[u32; 4]; 4];
        const IN_REGISTERS: bool = true;
        #[inline(always)]
        fn lanes(t: u32) -> [u32; 4] {
            type AHalf = <Tf32Rounded as WgmmaElem>::AHalf;
            // Lanes 8i..8i+8 address the rows of matrix i: rows 16w + 8·(i % 2) + l % 8,
            // 16-byte chunk 2s + i / 2 of K step s (columns 8s + 4·(i / 2)..+4), at its
            // swizzled place in the row (chunk `c ^ (row % 8)`: the 8 rows of a matrix fall
            // in 8 different chunks, so each `ldmatrix` phase is free of bank conflicts).
            let (warp, lane) = (t / 32, t % 32);
            let i = lane / 8;
            let row = 16 * warp + 8 * (i % 2) + lane % 8;
            let at =
                |s: u32| row * AHalf::ROW_BYTES + AHalf::SWIZZLE.chunk(row, 2 * s + i / 2) * 16;
            [at(0), at(1), at(2), at(3)]
        }
        #[inline(always)]
        unsafe fn stage_mma(
            acc: &mut [f32; 128],
            lanes: [u32; 4],
            a_half: u32,
            _a: MatrixDescriptor,
            b: MatrixDescriptor,
            kt: u32,
        ) -> [[u32; 4]; 4] {
            let fragment = |s: usize| {
                // SAFETY: the whole warp runs this convergently (the caller's contract);
                // every lane's address is a 16-byte chunk of this warpgroup's `A` half,
                // written by TMA (its full phase completed: visible to this thread), not
                // written again before the stage is released.
                let raw = unsafe {
                    cuda_std::mma::ldmatrix_x4_window(SharedAddr::from_bits(a_half + lanes[s]))
                };
                raw.map(|x| tf32_from_f32(f32::from_bits(x)).to_bits())
            };
            let a = [fragment(0), fragment(1), fragment(2), fragment(3)];
            // The fragments' registers were written: a fence before the `wgmma` that read
            // them (PTX ISA §9.7.15.7.1).
            wgmma::fence();
            // SAFETY: the caller's contract for `b`; the fragments are this thread's part of
            // `A` for each K step of 8, written before the fence.
            unsafe {
                wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[0], b, kt != 0);
                wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[1], b.add_bytes(32), true);
                wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[2], b.add_bytes(64), true);
                wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[3], b.add_bytes(96), true);
            }
            a
        }
        #[inline(always)]
        fn fence_held(held: &mut [[u32; 4]; 4]) {
            for fragment in held {
                wgmma::fence_operand(fragment);
            }
        }
    }

    impl WgmmaElem for F8E4M3 {
        stage_tiles!(F8E4M3, 128);
        const SCALED: bool = true;
        #[inline(always)]
        unsafe fn mma(
            acc: &mut [f32; 128],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded.
            unsafe { wgmma::mma_m64n256k32_f32_e4m3(acc, a, b, accumulate) }
        }
    }

    impl WgmmaElem for F8E5M2 {
        stage_tiles!(F8E5M2, 128);
        const SCALED: bool = true;
        #[inline(always)]
        unsafe fn mma(
            acc: &mut [f32; 128],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded.
            unsafe { wgmma::mma_m64n256k32_f32_e5m2(acc, a, b, accumulate) }
        }
    }

    /// Calls `$m!(i)` for every even accumulator index 0, 2, …, 126 (constant indices).
    macro_rules! for_even_acc {
        ($m:ident) => {
            $m!(0);
            $m!(2);
            $m!(4);
            $m!(6);
            $m!(8);
            $m!(10);
            $m!(12);
            $m!(14);
            $m!(16);
            $m!(18);
            $m!(20);
            $m!(22);
            $m!(24);
            $m!(26);
            $m!(28);
            $m!(30);
            $m!(32);
            $m!(34);
            $m!(36);
            $m!(38);
            $m!(40);
            $m!(42);
            $m!(44);
            $m!(46);
            $m!(48);
            $m!(50);
            $m!(52);
            $m!(54);
            $m!(56);
            $m!(58);
            $m!(60);
            $m!(62);
            $m!(64);
            $m!(66);
            $m!(68);
            $m!(70);
            $m!(72);
            $m!(74);
            $m!(76);
            $m!(78);
            $m!(80);
            $m!(82);
            $m!(84);
            $m!(86);
            $m!(88);
            $m!(90);
            $m!(92);
            $m!(94);
            $m!(96);
            $m!(98);
            $m!(100);
            $m!(102);
            $m!(104);
            $m!(106);
            $m!(108);
            $m!(110);
            $m!(112);
            $m!(114);
            $m!(116);
            $m!(118);
            $m!(120);
            $m!(122);
            $m!(124);
            $m!(126);
        };
    }

    /// The ring position: stage index and the parity its next wait is for.
    type Ring = PipelineState<WG_STAGES>;

    /// Waits until the 128 threads of the calling warpgroup arrive at named barrier `id`
    /// (`cuda_std::thread::named_barrier_sync::<128>`; ids 1 and 2 are the consumers', 0 is
    /// `sync_threads`'). Orders their shared-memory accesses like `sync_threads` does the
    /// block's (the CPU emulator counts the arrivals of whole warps).
    #[inline(always)]
    fn warpgroup_sync(id: u32) {
        // SAFETY: called only by the TMA epilogue, by all 128 threads of consumer warpgroup
        // `id - 1` (whole warps) with `id` = 1 or 2 (< 16), each id by one warpgroup only;
        // no other barrier of the kernel uses ids 1 and 2.
        unsafe { cuda_std::thread::named_barrier_sync::<128>(id) };
    }

    /// `w`, the bits of an `f32`, rounded to TF32 to nearest, ties away from zero, in
    /// integer arithmetic (what `cvt.rna.tf32.f32` computes, in 2 ALU operations and a
    /// select instead of a conversion): add half a TF32 unit (bit 12) to the magnitude and
    /// clear the 13 low bits; a carry into the exponent is the correct result (the next
    /// binade, or infinity past the largest finite TF32 value). Infinities are unchanged,
    /// and a NaN gets its quiet bit set, so that it stays a NaN once the low bits are gone.
    #[inline(always)]
    fn tf32_rna_bits(w: u32) -> u32 {
        // Infinities round to themselves here too (the low bits are zero, no carry).
        let rounded = w.wrapping_add(0x1000) & !0x1fff;
        if w & 0x7fff_ffff > 0x7f80_0000 {
            w | 0x0040_0000
        } else {
            rounded
        }
    }

    /// A pair of accumulators as the epilogue stores them: times `scale` for the scaled
    /// (FP8) types, unchanged otherwise (no multiplication in the other kernels).
    #[inline(always)]
    fn scaled<T: WgmmaElem>(x: f32, y: f32, scale: f32) -> (f32, f32) {
        if T::SCALED {
            (x * scale, y * scale)
        } else {
            (x, y)
        }
    }

    /// The kernel body for input element type `T`, output element type `O` and clusters of
    /// `CLUSTER` blocks along M (1: no clusters; 2: the `_c2` entry points); see the
    /// [module docs](super). With [`WgmmaElem::SCALED`] the accumulators are multiplied by
    /// `scale` before they are rounded to `O` (otherwise `scale` is not read).
    ///
    /// # Safety
    /// As the entry points' `# Safety` sections; with `CLUSTER` > 1 (then [`WG_CLUSTER_M`])
    /// the launch has clusters of `(CLUSTER, 1, 1)` and the map of `B` the tile
    /// `T::BHalf`'s box.
    #[inline(always)]
    unsafe fn gemm<T: WgmmaElem, O: WgmmaOut, A: AOperand<T>, const CLUSTER: u32>(
        m: u32,
        n: u32,
        k: u32,
        map_a: *const TensorMap,
        map_b: *const TensorMap,
        map_c: *const TensorMap,
        c: *mut O,
        c_by_tma: bool,
        scale: f32,
    ) {
        const {
            assert!(CLUSTER == 1 || CLUSTER == WG_CLUSTER_M);
            // The stage layout (`WG_STAGE_BYTES`, the `B` part after `A`) is every type's.
            assert!(<(T::AStage, T::BStage) as Tiles>::TX_BYTES == WG_STAGE_BYTES);
            assert!(T::AStage::BYTES == WG_A_STAGE_BYTES);
            assert!(O::CBox::BYTES == WG_C_BOX_BYTES);
        }
        let tid = thread_idx_x();
        let warpgroup = tid / 128;
        // Block `rank` of a cluster computes tile row `CLUSTER·g + rank` of the cluster's
        // group `g` of tile rows; the blocks share the `B` tile, each loading `b_rows` of
        // its rows and multicasting them to all (see the module docs).
        let rank = if CLUSTER == 1 { 0 } else { cluster::ctarank() };
        let b_rows = WG_BN / CLUSTER;
        let tiles_m = m.div_ceil(WG_BM);
        let tiles_n = n.div_ceil(WG_BN);
        // What the persistent loop walks: groups of `CLUSTER` tile rows × one tile column
        // (single tiles without clusters).
        let groups_m = tiles_m.div_ceil(CLUSTER);
        let tiles = groups_m * tiles_n;
        let first_tile = block_idx_x() / CLUSTER;
        let tile_step = grid_dim_x() / CLUSTER;
        // Bytes per input element (2 bf16/f16, 4 f32, 1 FP8), as the byte arithmetic the
        // kernel had before it was generic (its PTX unchanged for those types).
        let elem_bytes = size_of::<T>() as u32;
        let k_tiles = (k * elem_bytes).div_ceil(WG_BK_BYTES);
        let k_elems = WG_BK_BYTES / elem_bytes;

        // The stages start at the first 1024-byte boundary of the dynamic shared memory
        // (the 128-byte swizzle pattern repeats every 1024 bytes and TMA and `wgmma` both
        // take it from address bits 7..10); the ring's barriers follow the stages and the
        // epilogue buffer.
        let raw: *mut u8 = dynamic_shared::<u8>();
        let pad = (1024 - (shared_addr(raw) & 1023)) & 1023;
        // SAFETY: `WG_SHARED_BYTES` reserves 1024 bytes of slack for `pad`.
        let smem = unsafe { raw.add(pad as usize) };
        let smem_addr = shared_addr(smem);
        // SAFETY: `WG_SHARED_BYTES` holds the pipeline's barriers after the stages and the
        // epilogue buffer, 8-aligned (whole KiB before them), used for nothing else; every
        // thread computes the same address.
        let pipe = unsafe {
            Pipeline::<WG_STAGES>::from_ptr(
                smem.add((WG_STAGES * WG_STAGE_BYTES + WG_C_BYTES) as usize)
                    .cast(),
            )
        };
        // The epilogue buffer, 1024-aligned (the stages are whole KiB).
        let c_smem = smem_addr + WG_STAGES * WG_STAGE_BYTES;

        if tid == 0 {
            // SAFETY: one thread initialises, the barrier below before any use. One
            // arrival per consumer warp (2 warpgroups × 4 warps) of every block of the
            // cluster on each empty barrier: the stage's `B` part of each is also the
            // others'.
            unsafe { pipe.init(8 * CLUSTER) };
        }
        if CLUSTER == 1 {
            sync_threads();
        } else {
            // Every block's barriers are initialised before any block's TMA or arrivals
            // reach them.
            cluster::sync();
        }

        if warpgroup == 0 {
            // Producer.
            wgmma::reg_dealloc::<40>();
            if tid == 0 {
                // SAFETY: maps in global memory (the launch contract).
                unsafe {
                    tma::prefetch_descriptor(map_a);
                    tma::prefetch_descriptor(map_b);
                }
                if T::AFTER_ROUNDING {
                    // Launched right after the rounding pass, which may still run (the
                    // host's programmatic dependent launch): wait for it to complete, its
                    // writes visible, before the first load of what it wrote. Everything
                    // above (barrier init, `setmaxnreg`, the maps' prefetch: the maps are
                    // not the pass's) overlaps the pass. The consumers read no global
                    // memory but `map_c` (prefetched at their start, not the pass's) and
                    // store `C` (which the pass does not access) only after a stage's full
                    // phase, which these loads complete. Without that launch attribute
                    // this returns at once.
                    cuda_std::thread::grid_dependency_sync();
                }
                // Every stage starts free.
                let mut ring = Ring::PRODUCER_START;
                let mut tile = first_tile;
                while tile < tiles {
                    let (gm, tn) = tile_coords(tile, groups_m, tiles_n);
                    let tm = gm * CLUSTER + rank;
                    let row_a = (tm * WG_BM) as i32;
                    let row_b = (tn * WG_BN + rank * b_rows) as i32;
                    for kt in 0..k_tiles {
                        let s = ring.stage() as usize;
                        // SAFETY: an initialised pipeline; `ring` walks all stages in order
                        // from the producer's start; the stage is free (in every block of
                        // the cluster) once its empty phase, which counts every block's
                        // consumers, completed; this block's full barrier receives `A` and
                        // every block's part of `B`, the tiles `(AStage, BStage)` in total,
                        // at 1024-aligned destinations (the `B` part at `rank · b_rows`
                        // rows, a multiple of 8 rows of 128 bytes), through maps built from
                        // the same tile types (the launch contract); the other blocks' full
                        // barriers of this stage are in the same phase (their consumers
                        // released the stage's previous use after that phase completed).
                        unsafe {
                            pipe.producer_acquire(ring);
                            pipe.producer_expect_tiles::<(T::AStage, T::BStage)>(ring);
                            let f = pipe.full(ring.stage());
                            let stage = smem.add(s * WG_STAGE_BYTES as usize);
                            let xy = [(kt * k_elems) as i32, row_a];
                            tma::load_tile::<T::AStage>(stage.cast::<T>(), map_a, xy, f);
                            let stage_b = stage
                                .add((WG_A_STAGE_BYTES + rank * b_rows * WG_BK_BYTES) as usize)
                                .cast::<T>();
                            let xy = [xy[0], row_b];
                            if CLUSTER == 1 {
                                tma::load_tile::<T::BStage>(stage_b, map_b, xy, f);
                            } else {
                                tma::load_tile_multicast::<T::BHalf>(
                                    stage_b,
                                    map_b,
                                    xy,
                                    f,
                                    ((1u32 << CLUSTER) - 1) as u16,
                                );
                            }
                        }
                        ring.advance();
                    }
                    tile += tile_step;
                }
            }
            // With clusters, an exited thread counts as arrived at the final cluster
            // barrier.
            return;
        }

        // Consumers.
        // 384 × 168 registers in all: 128 × 40 + 256 × 232.
        wgmma::reg_alloc::<232>();
        let consumer = warpgroup - 1;
        let t = tid % 128;
        let lane = tid % 32;
        let mut ring = Ring::START;
        let mut acc = [0.0f32; 128];
        let a_lanes = A::lanes(t);
        let pairs = n.is_multiple_of(2);
        if c_by_tma && t == 0 {
            // SAFETY: a global-memory map (the launch contract).
            unsafe { tma::prefetch_descriptor(map_c) };
        }
        let mut tile = first_tile;
        while tile < tiles {
            let (gm, tn) = tile_coords(tile, groups_m, tiles_n);
            let tm = gm * CLUSTER + rank;
            // The stage the previous K step read (set before its first use: k_tiles ≥ 1).
            let mut prev = Ring::START;
            // One K step: wait for the stage, issue its `wgmma` and commit, wait until one
            // group is in flight, release the previous stage and fence `$held` (the `A`
            // registers of the group the wait just covered); evaluates to this stage's `A`
            // registers (`A::Held`).
            macro_rules! k_step {
                ($kt:expr, $held:expr) => {{
                    let kt: u32 = $kt;
                    let s = ring.stage();
                    // SAFETY: an initialised pipeline; `ring` walks all stages in order from
                    // the start, and this warpgroup released every stage's previous round
                    // before.
                    unsafe { pipe.consumer_wait(ring) };
                    let stage = smem_addr + s * WG_STAGE_BYTES;
                    // The descriptors from the tiles' constants. (Through `Tile::descriptor`,
                    // and the epilogue through `Tile::offset`, LLVM scheduled this kernel
                    // differently: 3–4 % slower in an interleaved A/B run on an H200; spelled
                    // out like this the PTX is the hand-written kernel's, register names
                    // aside.) `RegA` reads `A` through `a_half` and leaves `a` unused.
                    let a_half = stage + consumer * T::AHalf::BYTES;
                    let a = MatrixDescriptor::new(
                        a_half,
                        16,
                        8 * T::AHalf::ROW_BYTES,
                        T::AHalf::SWIZZLE,
                    );
                    let b = MatrixDescriptor::new(
                        stage + WG_A_STAGE_BYTES,
                        16,
                        8 * T::BStage::ROW_BYTES,
                        T::BStage::SWIZZLE,
                    );
                    // The whole warpgroup runs the stage's `wgmma` convergently with equal
                    // arguments; the stage was written by TMA (async proxy) and its full
                    // phase completed; it is not overwritten before this warpgroup releases
                    // it below, after the wait that covers these operations.
                    let held: A::Held = if A::IN_REGISTERS {
                        // SAFETY: as just said (`stage_mma`'s contract).
                        unsafe { A::stage_mma(&mut acc, a_lanes, a_half, a, b, kt) }
                    } else {
                        // `SmemA::stage_mma` spelled out: through the call LLVM folded the
                        // descriptors' K offsets differently (other SASS in the loop), and a
                        // change of this kernel's scheduling has cost 3–4 % before.
                        wgmma::fence();
                        // SAFETY: as just said; `a` names this warpgroup's `A` half.
                        unsafe {
                            T::mma(&mut acc, a, b, kt != 0);
                            T::mma(&mut acc, a.add_bytes(32), b.add_bytes(32), true);
                            T::mma(&mut acc, a.add_bytes(64), b.add_bytes(64), true);
                            T::mma(&mut acc, a.add_bytes(96), b.add_bytes(96), true);
                        }
                        A::Held::default()
                    };
                    wgmma::commit_group();
                    wgmma::wait_group::<1>();
                    let mut covered: A::Held = $held;
                    A::fence_held(&mut covered);
                    if kt != 0 && lane == 0 {
                        // SAFETY: the wgmma group reading stage `prev` has completed (the
                        // stage was only read by `wgmma`: no cluster-scope release is
                        // needed); this warp's one arrival of the round, in every block of
                        // the cluster (every producer wrote into this block's stage; each
                        // pipeline counts `8 · CLUSTER`); no block has exited (the final
                        // cluster barrier).
                        unsafe { pipe.consumer_release_cluster::<CLUSTER>(prev) };
                    }
                    prev = ring;
                    ring.advance();
                    held
                }};
            }
            // The `A` registers of the group in flight (`A::Held::default()` before the
            // first step: fencing it is harmless).
            let mut held = A::Held::default();
            if A::IN_REGISTERS {
                // Two steps per trip, so that consecutive stages' fragments are made at two
                // places in the code and so live in different PTX registers: a step loads
                // its fragments while the previous step's group, which reads the other
                // set, is still running (PTX ISA §9.7.15.5.2: a `wgmma`'s `A` registers
                // must not be rewritten before a wait covers it; in a one-step loop the
                // next trip's `ldmatrix` wrote the very registers the running `wgmma`
                // read, and ptxas kept that).
                let mut kt = 0;
                while kt + 1 < k_tiles {
                    let even = k_step!(kt, held);
                    held = k_step!(kt + 1, even);
                    kt += 2;
                }
                if kt < k_tiles {
                    held = k_step!(kt, held);
                }
            } else {
                for kt in 0..k_tiles {
                    held = k_step!(kt, held);
                }
            }
            wgmma::wait_group::<0>();
            A::fence_held(&mut held);
            if lane == 0 {
                // SAFETY: as above, for the last stage of the tile.
                unsafe { pipe.consumer_release_cluster::<CLUSTER>(prev) };
            }

            // Epilogue: element i of thread t is at acc_row_col(t, i) of this warpgroup's
            // 64×256 part; (i, i + 1) are adjacent columns.
            let row_base = tm * WG_BM + consumer * 64;
            let col_base = tn * WG_BN;
            if c_by_tma {
                // Through shared memory: the 64×256 part goes out in boxes of 64 rows × 128
                // bytes (64 bf16/f16 or 32 f32 columns: accumulators `per_box·b ..
                // per_box·(b + 1)` of every thread), alternating between this warpgroup's
                // two box buffers. Each box is written in the 128-byte swizzle (16-byte
                // chunk `q` of row `r` at chunk `q ^ (r % 8)`: the 8 rows a warp's store
                // touches fall in 8 different chunks, so the stores are free of bank
                // conflicts) and stored by one TMA store, which clips at the edges of `C`
                // and runs on while the warpgroup goes on to the next box and tile; a
                // buffer is rewritten only after `wait_group_read` says the store two boxes
                // back has read it.
                let box_cols = O::CBox::COLS;
                let per_box = box_cols / 2;
                let buf = c_smem + consumer * 2 * WG_C_BOX_BYTES;
                let bar = 1 + consumer;
                macro_rules! stage_pair {
                    ($i:literal) => {{
                        // Constant after inlining: `O::BYTES` is.
                        let bx = $i / per_box;
                        let slot = buf + (bx % 2) * WG_C_BOX_BYTES;
                        if $i % per_box == 0 {
                            if t == 0 {
                                // The store that last read this buffer (two boxes back, in
                                // this or the previous tile) has read it.
                                tma::wait_group_read::<1>();
                            }
                            warpgroup_sync(bar);
                        }
                        let (r, col) = wgmma::layout::acc_row_col(t, $i);
                        let x = (col % box_cols) * O::BYTES;
                        let addr = slot
                            + r * O::CBox::ROW_BYTES
                            + O::CBox::SWIZZLE.chunk(r, x / 16) * 16
                            + x % 16;
                        let (v0, v1) = scaled::<T>(acc[$i], acc[$i + 1], scale);
                        // SAFETY: inside this warpgroup's box buffer, aligned to the pair;
                        // each (r, col) belongs to one thread; the buffer's previous store
                        // has read it (above).
                        unsafe { O::store_pair_shared(SharedAddr::from_bits(addr), v0, v1) };
                        if ($i + 2) % per_box == 0 {
                            tma::fence_proxy_async_shared();
                            warpgroup_sync(bar);
                            // Boxes wholly outside C (ragged edges) are not stored.
                            let x0 = col_base + bx * box_cols;
                            if t == 0 && x0 < n && row_base < m {
                                // SAFETY: the map describes C (the launch contract) with this
                                // box; the box is written and fenced by all 128 threads; it
                                // is not rewritten before a `wait_group_read` covers this
                                // store, and the thread waits for all its stores before it
                                // exits.
                                unsafe {
                                    tma::store_tile::<O::CBox>(
                                        map_c,
                                        [x0 as i32, row_base as i32],
                                        smem.add((slot - smem_addr) as usize).cast::<O>(),
                                    )
                                };
                                tma::commit_group();
                            }
                        }
                    }};
                }
                for_even_acc!(stage_pair);
                tile += tile_step;
                continue;
            }
            macro_rules! store_pair {
                ($i:literal) => {{
                    let (r, col) = wgmma::layout::acc_row_col(t, $i);
                    let (row, col) = (row_base + r, col_base + col);
                    if row < m && col < n {
                        let (v0, v1) = scaled::<T>(acc[$i], acc[$i + 1], scale);
                        // SAFETY: (row, col) inside C; with `pairs`, col + 1 < n too (both
                        // even) and the pair is aligned to its size.
                        unsafe {
                            let p = c.add(row as usize * n as usize + col as usize);
                            if pairs {
                                O::store_pair(p, v0, v1);
                            } else {
                                *p = O::from_f32(v0);
                                if col + 1 < n {
                                    *p.add(1) = O::from_f32(v1);
                                }
                            }
                        }
                    }
                }};
            }
            for_even_acc!(store_pair);
            tile += tile_step;
        }
        if c_by_tma && t == 0 {
            // The shared memory must outlive the stores' reads of it.
            tma::wait_group_read::<0>();
        }
        if CLUSTER > 1 {
            // No block exits while another may still arrive on its empty barriers or
            // multicast into its stages.
            cluster::sync();
        }
    }

    macro_rules! entry {
        ($name:ident, $t:ty, $cluster:literal, $what:literal, $b_tile:literal, $grid:literal) => {
            entry!($name, $t, $t, SmemA, $cluster, $what, $b_tile, $grid);
        };
        ($name:ident, $t:ty, $o:ty, $a:ty, $cluster:literal, $what:literal, $b_tile:literal,
         $grid:literal) => {
            #[doc = concat!("`C = A·Bᵀ` in ", $what, " on `wgmma` + TMA (sm_90a); see the ",
                            "[module docs](super) for the design and the launch shape.")]
            ///
            /// # Safety
            /// - `map_a` and `map_b` point to 64-byte-aligned [`TensorMap`]s in global memory,
            ///   written before the launch, describing `A` (dims `[k, m]`, innermost first)
            ///   and `B` (dims `[k, n]`) with elements of this type's size, built from the
            #[doc = concat!("  tiles `WgmmaElem::AStage` / ", $b_tile, " (box and swizzle: ")]
            ///   `TensorMapExt::for_tile`);
            /// - if `c_by_tma`, `map_c` points to such a map describing `C` (dims `[n, m]`,
            ///   row stride `n` elements, a multiple of 16 bytes) at `c`, built from the
            ///   tile `WgmmaOut::CBox` (else it is not read: `C` is stored from registers);
            /// - `c` points to an allocation of at least m·n elements that nothing else
            ///   accesses during the launch, 16-byte aligned (whole device allocations are);
            /// - `m`, `n`, `k` ≥ 1, `k` a multiple of 8 (bf16/f16) or 4 (f32);
            /// - launched with the [module's launch shape](super): `WG_THREADS` threads,
            #[doc = concat!("  ", $grid, ", `WG_SHARED_BYTES` of dynamic shared memory, on an")]
            ///   sm_90a build capped at `WG_MAX_REGISTERS` registers;
            /// - if launched with programmatic stream serialization: a TF32 kernel (the
            ///   others do not wait for the kernel before them), after a kernel that does not
            ///   access `C` or the maps (the inputs it may write: the producer waits for it
            ///   before loading them; see the module docs).
            #[kernel]
            pub unsafe fn $name(
                m: u32,
                n: u32,
                k: u32,
                map_a: *const TensorMap,
                map_b: *const TensorMap,
                map_c: *const TensorMap,
                c: *mut $o,
                c_by_tma: u32,
            ) {
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    gemm::<$t, $o, $a, $cluster>(
                        m,
                        n,
                        k,
                        map_a,
                        map_b,
                        map_c,
                        c,
                        c_by_tma != 0,
                        1.0,
                    )
                }
            }
        };
    }

    /// The `# Safety` texts of the entry points without clusters.
    macro_rules! plain {
        ($name:ident, $t:ty, $what:literal) => {
            entry!(
                $name,
                $t,
                1,
                $what,
                "`WgmmaElem::BStage`",
                "a 1-D grid without clusters"
            );
        };
    }
    /// The `# Safety` texts of the entry points with clusters of two.
    macro_rules! clustered {
        ($name:ident, $t:ty, $what:literal) => {
            entry!(
                $name,
                $t,
                2,
                $what,
                "`WgmmaElem::BHalf`",
                "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
            );
        };
    }

    plain!(gemm_wgmma_bf16, bf16, "bf16 (f32 accumulation, bf16 out)");
    plain!(gemm_wgmma_f16, f16, "f16 (f32 accumulation, f16 out)");
    clustered!(
        gemm_wgmma_bf16_c2,
        bf16,
        "bf16 (f32 accumulation, bf16 out), clusters of 2 along M sharing `B`"
    );
    clustered!(
        gemm_wgmma_f16_c2,
        f16,
        "f16 (f32 accumulation, f16 out), clusters of 2 along M sharing `B`"
    );

    entry!(
        gemm_wgmma_tf32,
        Tf32Rounded,
        f32,
        SmemA,
        1,
        "TF32 (f32 in and out) on inputs already rounded to TF32 ([`round_tf32`])",
        "`WgmmaElem::BStage`",
        "a 1-D grid without clusters"
    );
    entry!(
        gemm_wgmma_tf32_c2,
        Tf32Rounded,
        f32,
        SmemA,
        2,
        "TF32 (f32 in and out) on inputs already rounded to TF32 ([`round_tf32`]), clusters \
         of 2 along M sharing `B`",
        "`WgmmaElem::BHalf`",
        "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
    );

    entry!(
        gemm_wgmma_tf32_rs,
        Tf32Rounded,
        f32,
        RegA,
        1,
        "TF32 (f32 in and out) with `A` rounded to TF32 in registers (plain `f32` in memory; \
         the RS form) and `B` already rounded ([`round_tf32`]; its elements typed \
         [`Tf32Rounded`] in the map)",
        "`WgmmaElem::BStage`",
        "a 1-D grid without clusters"
    );
    entry!(
        gemm_wgmma_tf32_rs_c2,
        Tf32Rounded,
        f32,
        RegA,
        2,
        "TF32 (f32 in and out) with `A` rounded to TF32 in registers (plain `f32` in memory; \
         the RS form) and `B` already rounded ([`round_tf32`]), clusters of 2 along M \
         sharing `B`",
        "`WgmmaElem::BHalf`",
        "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
    );

    /// The FP8 entry points: input type `$t`, output type `$o`, no clusters, a `scale`
    /// parameter.
    macro_rules! fp8_entry {
        ($name:ident, $t:ty, $o:ty, $what:literal) => {
            #[doc = concat!("`C = scale·(A·Bᵀ)` with ", $what, " on `wgmma` + TMA (sm_90a): ",
                            "the FP8 products accumulated in `f32` (or narrower: the tensor ",
                            "cores' FP8 accumulation width is not specified), multiplied by ",
                            "`scale` and rounded once to the output type (to nearest even). ",
                            "See the [module docs](super) for the design and the launch shape.")]
            ///
            /// # Safety
            /// - `map_a` and `map_b` point to 64-byte-aligned [`TensorMap`]s in global memory,
            ///   written before the launch, describing `A` (dims `[k, m]`, innermost first)
            ///   and `B` (dims `[k, n]`) as bytes (`u8`), built from the tiles
            ///   `WgmmaElem::AStage` / `WgmmaElem::BStage` (`TensorMapExt::for_tile`);
            /// - if `c_by_tma`, `map_c` points to such a map describing `C` (dims `[n, m]`,
            ///   row stride `n` elements, a multiple of 16 bytes) at `c` with the output
            ///   type, built from the tile `WgmmaOut::CBox` (else it is not read);
            /// - `c` points to an allocation of at least m·n elements that nothing else
            ///   accesses during the launch, 16-byte aligned (whole device allocations are);
            /// - `m`, `n`, `k` ≥ 1, `k` a multiple of 16 (16-byte rows for TMA);
            /// - launched with the [module's launch shape](super): `WG_THREADS` threads,
            ///   a 1-D grid without clusters, `WG_SHARED_BYTES` of dynamic shared memory,
            ///   on an sm_90a build capped at `WG_MAX_REGISTERS` registers.
            #[kernel]
            pub unsafe fn $name(
                m: u32,
                n: u32,
                k: u32,
                map_a: *const TensorMap,
                map_b: *const TensorMap,
                map_c: *const TensorMap,
                c: *mut $o,
                c_by_tma: u32,
                scale: f32,
            ) {
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    gemm::<$t, $o, SmemA, 1>(m, n, k, map_a, map_b, map_c, c, c_by_tma != 0, scale)
                }
            }
        };
    }

    fp8_entry!(gemm_wgmma_e4m3_bf16, F8E4M3, bf16, "e4m3 inputs, bf16 out");
    fp8_entry!(gemm_wgmma_e4m3_f32, F8E4M3, f32, "e4m3 inputs, f32 out");
    fp8_entry!(gemm_wgmma_e5m2_bf16, F8E5M2, bf16, "e5m2 inputs, bf16 out");
    fp8_entry!(gemm_wgmma_e5m2_f32, F8E5M2, f32, "e5m2 inputs, f32 out");

    #[cfg(test)]
    mod tests {
        use super::tf32_rna_bits;
        use cuda_std::mma::tf32_from_f32;

        /// The integer rounding equals `tf32_from_f32` (whose host twin is tested against
        /// hand-worked `cvt.rna.tf32.f32` results) on finite values and infinities, and
        /// keeps NaNs NaN after the tensor core drops the low 13 bits.
        #[test]
        fn integer_rounding_matches_cvt_rna_and_keeps_nans() {
            let mut checked = 0;
            for i in 0..200_000u32 {
                let w = i.wrapping_mul(0x9e37_79b9) ^ (i >> 3);
                let x = f32::from_bits(w);
                let got = tf32_rna_bits(w);
                if x.is_nan() {
                    let seen = f32::from_bits(got & !0x1fff);
                    assert!(seen.is_nan(), "{w:#010x} -> {got:#010x}");
                } else {
                    assert_eq!(got, tf32_from_f32(x).to_bits(), "{w:#010x}");
                    checked += 1;
                }
            }
            assert!(checked > 150_000);
            // Ties go away from zero; the largest finite values round to infinity.
            assert_eq!(tf32_rna_bits(0x3f80_1000), 0x3f80_2000);
            assert_eq!(tf32_rna_bits(0xbf80_1000), 0xbf80_2000);
            assert_eq!(tf32_rna_bits(0x7f7f_ffff), 0x7f80_0000);
            assert_eq!(tf32_rna_bits(0xff80_0000), 0xff80_0000);
            // A NaN whose payload is only in the low bits stays a NaN.
            assert_eq!(tf32_rna_bits(0x7f80_0001), 0x7fc0_0001);
        }
    }
}
