//! Attention forward pass on the Hopper tensor cores (`wgmma.mma_async`, **sm_90a**): the
//! structure of FlashAttention-2 (Dao, 2023, Algorithm 1) with both products on `wgmma` and
//! `P` fed to the second product from registers, as FlashAttention-3 does (Shah et al.,
//! "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision", 2024,
//! §3.1).
//!
//! Inputs, outputs and rules are those of [the `mma.sync` kernels](super): `Q`, `O` `(B, H,
//! S, D)`, `K`, `V` `(B, H_kv, S, D)` row-major in bf16 or f16, `D` ∈ {64, 128}, `L` `(B, H,
//! S)` in `f32`, causal or not, grouped-query; the entry points take the same scalars, and
//! `Q`, `K`, `V` as TMA tensor maps (the host's `AttentionPlan` encodes them).
//!
//! Design (FlashAttention-3's warp specialisation and intra-warpgroup overlap, §3.1–3.2). A
//! block is a producer warpgroup and [`wg_attn_consumers`]`(D)` consumer warpgroups (two
//! for D = 128, three for D = 64) and owns 64 query rows of one head per consumer
//! ([`wg_attn_rows`]):
//! - warpgroup 0, the *producer*, lowers its register limit to 40 (`setmaxnreg.dec`); one of
//!   its threads loads the block's `Q` tile by TMA once, then, per tile of [`WG_ATTN_BC`] =
//!   128 keys (for causal attention only up to the block's diagonal tile), waits until a
//!   stage of the [`WG_ATTN_STAGES`]-stage ring is free (its *empty* mbarrier) and loads the
//!   `K` and the `V` tile into it by TMA, each announced on its own *full* mbarrier;
//! - the other warpgroups, the *consumers*, raise their limit to 232 (two consumers) or 160
//!   (three; the producer then lowers its own to 24) and own 64 query rows each. Per key tile `j` a consumer issues `S_j = Q·K_jᵀ` (`D/16` `m64n128k16`, both
//!   operands K-major in shared memory) and then `O += P_{j−1}·V_{j−1}` (8 `m64nDk16` with
//!   `A` = `P` from registers, the RS form: `P` rounded to the input type and packed in
//!   pairs is already that operand's layout, [`cuda_std::wgmma::layout::a_row_col`], so it
//!   never goes through shared memory; `V`, row-major, is N-major for this product), waits
//!   for `S_j` only (`wait_group 1`), runs the online softmax of the `mma.sync` kernel on
//!   it, then waits for that product, releases its stage, rescales `O` and packs `P_j`. The
//!   consumers take turns to issue (an mbarrier each: FlashAttention-3's ping-pong), so the
//!   tensor cores run one consumer's products while the others run their softmax.
//!
//!   In the SASS (`ptxas` 12.9) the softmax does **not** overlap the consumer's own
//!   `P_{j−1}·V_{j−1}`: `ptxas` hoists the `wait_group 0` above it (the
//!   `WARPGROUP.DEPBAR.LE gsb0, 0x0` comes before the first `MUFU.EX2`), so the overlap is
//!   the ping-pong's alone. Keeping the wait after the softmax is possible but did not pay
//!   (the "tried" list below).
//!
//! Shared memory ([`wg_shared_bytes`]): the `Q` tile (128 rows) and the stages' `K` and `V`
//! tiles (128 rows each), every tile split into column blocks of 64 elements (128 bytes a
//! row) that TMA writes with the 128-byte swizzle (16-byte chunk `c` of row `r` at chunk
//! `c ^ (r % 8)`), 1024-byte aligned: the layout `wgmma`'s descriptors name, K-major for
//! `Q` and `K` (stride byte offset 1024: 8 rows) and N-major for `V` (leading byte offset:
//! the next column block; stride byte offset 1024: 8 keys); then the mbarriers.
//!
//! The tile layer (`cuda_std::tile`) names all of it: the tiles are [`QBlock`] and
//! [`KvBlock`] (one 64-element column block each: their sizes, swizzled offsets and `wgmma`
//! descriptors, K-major `Tile::descriptor` for `Q` and `K`, `Tile::descriptor_mn_major` for
//! `V`), TMA loads them with `tma::load_tile` (on the emulator each load checks the tensor
//! map's box and swizzle against the tile type, and the host encodes the maps from the same
//! types), the `K`/`V` ring is a `Pipeline` (full barriers: `K`'s; `V`'s full barriers
//! beside it, so that `S` starts before `V` lands), and `S` and `O` are `AccTile`s: the
//! masks through `AccTile::map`, the row maxima and sums as trees over each thread's
//! elements and then the quad (`AccTile::row_max`, `thread_row_sum`, `quad_sum`), `O`'s
//! rescale through `map_rows`, its store through `for_each_pair`. Against the hand-built
//! kernel before it (one H200, 2026-11-29, four processes each, alternating, TFLOP/s,
//! medians): 586 / 529 / 456 / 623 against 589 / 546 / 452 / 595 at 4×32×4096×128 /
//! causal / 16×16×2048×64 / 8 `K`/`V` heads, within the spread between processes (ours
//! 509–641 per process at D = 128); cuDNN in the same run 656 / 558 / 418 / 656.
//!
//! Edges. The tensor maps see `Q` and `O` as `B·H·S` rows of `D` elements and `K`, `V` as
//! `B·H_kv·S` rows, so a tile that runs past `S` reads the next head's first rows (or
//! TMA's zeros past the tensor). Those query rows are computed and not stored, those keys
//! are masked out of the softmax (`−∞` whatever their score, NaN included); their values
//! would meet `P = 0`, which still makes NaN of an infinite or NaN value in another head,
//! so on a ragged last tile the consumers overwrite those `V` rows with zeros (each its
//! share, `fence.proxy.async`, a barrier of all consumer threads) before the last `P·V`.
//!
//! What moved it (one H200, bf16, `ferrocuda bench --attention`, each change alternated with
//! the build before it in one run; TFLOP/s at 4×32×4096×128 / causal / 16×16×2048×64):
//! - all 256 threads copying `K`, `V` by `cp.async`, two block barriers a tile, no overlap:
//!   277 / 256 / 168 (the `mma.sync` kernel: 246 / 235 / 194);
//! - warp specialisation on TMA and mbarriers, `S_{j+1}` issued with `P_j·V_j`: 391 / 339 / 212;
//! - `P` packed by `cvt.rn.bf16x2.f32` (one instruction a pair, six before) and the scale
//!   folded into the `ex2`'s `fma`: 497 / 428 / 322;
//! - the ping-pong: 506 / 434 / 337 (within noise but for D = 64);
//! - three stages instead of two: 547–637 / 507–547 / 370–374;
//! - the row maximum and sum as trees (depth 5) instead of chains of 32: 608–651 / 513–527 /
//!   390–393 against 566–592 / 514–542 / 368–372;
//! - three consumer warpgroups for D = 64 (192 rows, `setmaxnreg` 24 / 160): 16×16×2048×64 at
//!   438–442 against 391 (the D = 128 kernels keep two);
//! - the consumer's index made provably warp-uniform (a shuffle from lane 0), so that the
//!   `Q` address and the descriptors live in uniform registers (`R2UR` moves 40 → 9 in the
//!   bf16 D = 128 kernel's SASS): 16×16×2048×64 at 450 against 438 (medians of four rounds
//!   alternating in one run, every round above), the D = 128 rows within noise (613 / 527 /
//!   603 against 616 / 532 / 581).
//!
//! Tried and not kept:
//! - freeing a stage's `K` as soon as its `S` is computed (separate empty barriers for `K`
//!   and `V`) with four stages for D = 64: 561–587 / 510–516 / 364–365 against 557–637 /
//!   507–547 / 370–372 in the same run;
//! - skipping `O`'s rescale when no row maximum of the warp moved (a warp vote; exact, since
//!   `alpha` is then 1): 574 / 539 / 446 / 571 against 616 / 532 / 438 / 581 (medians of
//!   four rounds, the grouped-query shape last);
//! - a persistent grid in the hand-built kernel before the tile layer: with the work-tile
//!   loop around the consumers' body `ptxas` spilled (256–316 bytes) and serialised every
//!   `wgmma` (its warning C7512, "insufficient register resources"), with or without the
//!   uniform index, `setmaxnreg` 24 / 240, or `O` and `S` carried across tiles instead of
//!   zeroed; not run (the kernel on the tile layer has the loop without either: below);
//! - a dynamic tile scheduler for the persistent grid (the producer takes each next work
//!   tile from a device-wide atomic counter and hands it to the consumers through shared
//!   memory, before its `Q` arrival): 556 / 482 / 447 / 550 TFLOP/s against 587 / 532 / 448 /
//!   611 for the fixed stride (non-causal, causal, D = 64, 8 `K`/`V` heads; medians of four
//!   processes alternating, one H200, 2026-11-29 night; causal with the persistent grid 515),
//!   and compute-sanitizer's racecheck reported 10 hazards on the shared slot; not kept;
//! - the persistent grid for causal attention: 524 against 545 TFLOP/s (medians of five
//!   processes, below), likely because a fixed stride balances the unequal causal work
//!   tiles worse than the hardware's block scheduler does;
//! - FlashAttention-3's key tile for non-causal D = 128, 176 keys (`m64n176k16`, 88 scores
//!   a thread, two stages in 209 KiB, `setmaxnreg` 24 / 240; 0 spills, no serialisation):
//!   508 / 505 / 509 TFLOP/s at 4×32×4096×128 and 514 / 511 / 516 with 8 `K`/`V` heads
//!   against 574 / 599 / 569 and 578 / 594 / 572 for this kernel with the same masks (three
//!   processes each, alternating in one H200 run, 2026-11-29);
//! - the masks as a column limit per row (one comparison with a constant a score, as
//!   FlashAttention-3; 224 fewer SASS instructions in the D = 128 kernel), which the 176-key
//!   tile needed to stay free of spills: 574 / 508 / 578 TFLOP/s (non-causal, causal, 8
//!   `K`/`V` heads; medians of three processes) against 581 / 550 / 600 for the row and column
//!   test of this kernel in the same run;
//! - `setmaxnreg` 24 / 240 for D = 128, as FlashAttention-3 (this kernel: 40 / 232; ptxas
//!   12.9 the same 168 registers, no spills): 652 / 587 / 595, 535 / 524 / 573, 451 / 447 /
//!   455 and 596 / 586 / 597 TFLOP/s (non-causal, causal, D = 64, 8 `K`/`V` heads) against
//!   640 / 608 / 584, 574 / 529 / 524, 444 / 453 / 445 and 656 / 600 / 657 (three processes
//!   each, alternating in one H200 run, 2026-11-29): within the spread between processes, and
//!   lower with 8 `K`/`V` heads;
//! - the softmax kept between the two waits, so that it overlaps the consumer's own
//!   `P_{j−1}·V_{j−1}` (FlashAttention-3's intra-warpgroup overlap, which the design above
//!   intends but `ptxas` 12.9 undoes by hoisting the `wait_group 0`): a shared-memory store
//!   of the row sums, which need every `P` of the tile, just before the wait keeps all 66
//!   `MUFU.EX2` of the D = 128 loop between `WARPGROUP.DEPBAR.LE gsb0, 0x1` and `…0x0`, with
//!   no spills; 587–592 TFLOP/s at 4×32×4096×128 against 590–661 for this kernel (four
//!   processes each, alternating, one H200, 2026-11-30; causal 511–558 against 510–564, the
//!   other shapes within 1 %).
//!
//! Persistence ([`wg_persistent`]): a block walks the work tiles `blockIdx.x`, `blockIdx.x +
//! gridDim.x`, … (a work tile: one head's [`wg_attn_rows`]`(D)` query rows); the producer
//! loads the next work tile's `Q` once the consumers' last `S = Q·Kᵀ` of the current one
//! completed (a `Q` empty barrier, one arrival per consumer warp) and its `K`/`V` into the
//! ring's stages as they free, so they are in shared memory when the consumers finish the
//! current tile's last `P·V` and epilogue; the ping-pong's issue count and the ring carry on
//! from tile to tile. The host launches at most one block per multiprocessor for D = 128
//! non-causal, and one block per work tile otherwise (the loop then runs once; for D = 64
//! it is compiled out: at 128 registers a thread it spilled 68 bytes). Against one block per
//! work tile (one H200, 2026-11-29, five processes each, alternating, TFLOP/s, medians):
//! 4×32×4096×128 597 against 583 (higher in each of the five pairs), with 8 `K`/`V` heads 612
//! against 601; cuDNN in that run 652 / 653. The emulator found the first version's
//! deadlock: the last `P·V` of a work tile was not counted as an issue, so the ping-pong's
//! parities went wrong on the next tile.
//!
//! Launch ([`wg_grid_blocks`] work tiles): in the order of the `mma.sync` kernels (the blocks
//! of a head neighbours, its last query tiles first); [`wg_attn_threads`]`(D)` threads, [`wg_shared_bytes`]`(D)` of dynamic shared
//! memory, built with at most [`wg_attn_max_registers`]`(D)` registers a thread (`.maxnreg`,
//! so that the block fits before the warpgroups rebalance).

use cuda_std::tile::{Pipeline, SmemTile, Tile, swizzle};

/// Consumer warpgroups per block for head dimension `d`: 3 for 64 (FlashAttention-3's 192
/// rows: the softmax, not the tensor cores, bounds D = 64, and a third warpgroup hides more
/// of its latency), 2 for 128 (registers: 64 accumulators each for `S` and `O`).
#[must_use]
pub const fn wg_attn_consumers(d: u32) -> u32 {
    if d == 64 { 3 } else { 2 }
}

/// Query rows per block for head dimension `d`: 64 per consumer warpgroup.
#[must_use]
pub const fn wg_attn_rows(d: u32) -> u32 {
    64 * wg_attn_consumers(d)
}

/// Whether the kernel for head dimension `d` is persistent (a grid of at most one block per
/// multiprocessor, each block walking the work tiles in steps of the grid, the producer
/// loading the next work tile's `Q`, `K` and `V` while the consumers finish the last one):
/// for D = 128 (the host launches it so for non-causal attention only). The D = 64 kernel
/// (three consumers at 128 registers a thread) spills with the work-tile loop (ptxas 12.9:
/// 68 bytes), so it keeps one work tile a block.
#[must_use]
pub const fn wg_persistent(d: u32) -> bool {
    wg_attn_consumers(d) == 2
}

/// Keys per `K`/`V` tile (the `N` of `S = Q·Kᵀ`, the `K` of `P·V`).
pub const WG_ATTN_BC: u32 = 128;
/// Stages of the `K`/`V` ring.
pub const WG_ATTN_STAGES: u32 = 3;

/// Threads per block for head dimension `d`: the producer and the consumer warpgroups.
#[must_use]
pub const fn wg_attn_threads(d: u32) -> u32 {
    128 * (1 + wg_attn_consumers(d))
}

/// Registers a thread the kernel for head dimension `d` is built with (`.maxnreg`): its
/// threads × this ≤ 65,536 (168 for 384 threads, 128 for 512).
#[must_use]
pub const fn wg_attn_max_registers(d: u32) -> u32 {
    if wg_attn_consumers(d) == 3 { 128 } else { 168 }
}

/// Dynamic shared memory per block, bytes, for head dimension `d`: the `Q` tile
/// ([`QBlock`]s), the stages' `K` and `V` tiles ([`KvBlock`]s), 1024 bytes of slack to align
/// them, and the mbarriers: `Q`'s, the `K`/`V` ring's [`Pipeline`] (full: `K`; empty), `V`'s
/// full barriers and one turn barrier per consumer (225 KiB for 128, 121 KiB for 64).
#[must_use]
pub const fn wg_shared_bytes(d: u32) -> u32 {
    let blocks = d / 64;
    wg_attn_consumers(d) * blocks * <QBlock<u16> as Tile>::BYTES
        + WG_ATTN_STAGES * 2 * blocks * <KvBlock<u16> as Tile>::BYTES
        + 1024
        + Pipeline::<WG_ATTN_STAGES>::SHARED_BYTES
        + 8 * (2 + WG_ATTN_STAGES + wg_attn_consumers(d))
}

const _: () = assert!(
    wg_shared_bytes(128) <= 227 * 1024 && wg_shared_bytes(64) <= 227 * 1024,
    "a block has at most 227 KiB"
);

/// One column block of a consumer's `Q` rows in shared memory: 64 query rows × 64 elements
/// (128 bytes a row, the 128-byte swizzle), `E` bf16 or f16. It is the `Q` tensor map's box
/// (the host encodes the map from this type: `TensorMapExt::for_tile`), and a `Q` tile is
/// `D / 64` column blocks of every consumer's rows: block `kc` of consumer `c` is tile
/// `kc · C + c`.
pub type QBlock<E> = SmemTile<E, 64, 64, swizzle::B128>;
/// One column block of a `K` or `V` tile: [`WG_ATTN_BC`] keys × 64 elements, the `K` and `V`
/// tensor maps' box; a stage's `K` (and its `V`) is `D / 64` of them, one after another.
pub type KvBlock<E> = SmemTile<E, WG_ATTN_BC, 64, swizzle::B128>;

/// Blocks of the 1-D grid for `batch`·`heads` heads of `seq_len` rows, head dimension `d`.
#[must_use]
pub const fn wg_grid_blocks(batch: u32, heads: u32, seq_len: u32, d: u32) -> u32 {
    seq_len.div_ceil(wg_attn_rows(d)) * batch * heads
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use kernels_sm90a::*;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod kernels_sm90a {
    #![allow(clippy::too_many_arguments)]
    use super::{KvBlock, QBlock, WG_ATTN_BC, WG_ATTN_STAGES};
    use crate::attention::AttnElem;
    use common::attention::{LOG2_E, block_tile, key_tiles, kv_head, softmax_scale, visible};
    use cuda_std::barrier::{MBarrier, Phase};
    use cuda_std::half::{bf16, f16};
    use cuda_std::math::{ex2_approx, fmaf, logf};
    use cuda_std::prelude::*;
    use cuda_std::shared::shared_addr;
    use cuda_std::tile::{AccShape, AccTile, Pipeline, PipelineState, Tile};
    use cuda_std::tma::{self, TensorMap, fence_proxy_async_shared};
    use cuda_std::wgmma::{self, MatrixDescriptor};

    /// The `wgmma` instructions of an input type.
    pub trait WgAttnElem: AttnElem {
        /// `acc (+)= A·B` for `S = Q·Kᵀ`: `m64n128k16`, both operands K-major in shared
        /// memory.
        ///
        /// # Safety
        /// As `cuda_std::wgmma::mma_m64n128k16_f32_bf16`.
        unsafe fn qk(acc: &mut [f32; 64], a: MatrixDescriptor, b: MatrixDescriptor, first: bool);
        /// `acc += P·V` for `D` = 64: `m64n64k16`, `A` from registers, `B` N-major.
        ///
        /// # Safety
        /// As `cuda_std::wgmma::mma_m64n64k16_f32_bf16_rs`.
        unsafe fn pv64(acc: &mut [f32; 32], a: [u32; 4], b: MatrixDescriptor);
        /// `acc += P·V` for `D` = 128: `m64n128k16`, `A` from registers, `B` N-major.
        ///
        /// # Safety
        /// As `cuda_std::wgmma::mma_m64n128k16_f32_bf16_rs`.
        unsafe fn pv128(acc: &mut [f32; 64], a: [u32; 4], b: MatrixDescriptor);
    }

    macro_rules! wg_attn_elem {
        ($t:ty, $qk:ident, $pv64:ident, $pv128:ident) => {
            impl WgAttnElem for $t {
                #[inline(always)]
                unsafe fn qk(
                    acc: &mut [f32; 64],
                    a: MatrixDescriptor,
                    b: MatrixDescriptor,
                    first: bool,
                ) {
                    // SAFETY: forwarded.
                    unsafe { wgmma::$qk::<false, false>(acc, a, b, !first) }
                }
                #[inline(always)]
                unsafe fn pv64(acc: &mut [f32; 32], a: [u32; 4], b: MatrixDescriptor) {
                    // SAFETY: forwarded.
                    unsafe { wgmma::$pv64::<true>(acc, a, b, true) }
                }
                #[inline(always)]
                unsafe fn pv128(acc: &mut [f32; 64], a: [u32; 4], b: MatrixDescriptor) {
                    // SAFETY: forwarded.
                    unsafe { wgmma::$pv128::<true>(acc, a, b, true) }
                }
            }
        };
    }

    wg_attn_elem!(
        bf16,
        mma_m64n128k16_f32_bf16,
        mma_m64n64k16_f32_bf16_rs,
        mma_m64n128k16_f32_bf16_rs
    );
    wg_attn_elem!(
        f16,
        mma_m64n128k16_f32_f16,
        mma_m64n64k16_f32_f16_rs,
        mma_m64n128k16_f32_f16_rs
    );

    /// The ring position of the `K`/`V` stages.
    type Ring = PipelineState<WG_ATTN_STAGES>;

    /// A consumer's `O` accumulator for head dimension `D`: the 64×`D` tile `AccTile<D / 2>`,
    /// and its `P·V` step (`m64nDk16`).
    trait OAcc: Sized {
        /// `self += P·V` for one step of 16 keys: `p` the `A` registers (`pack_p`), `v` the
        /// N-major descriptor of those 16 rows of `V`.
        ///
        /// # Safety
        /// As `cuda_std::wgmma::mma_m64n128k16_f32_bf16_rs`.
        unsafe fn pv<T: WgAttnElem>(&mut self, p: [u32; 4], v: MatrixDescriptor);
    }

    impl OAcc for AccTile<32> {
        #[inline(always)]
        unsafe fn pv<T: WgAttnElem>(&mut self, p: [u32; 4], v: MatrixDescriptor) {
            // SAFETY: forwarded.
            unsafe { T::pv64(&mut self.regs, p, v) }
        }
    }

    impl OAcc for AccTile<64> {
        #[inline(always)]
        unsafe fn pv<T: WgAttnElem>(&mut self, p: [u32; 4], v: MatrixDescriptor) {
            // SAFETY: forwarded.
            unsafe { T::pv128(&mut self.regs, p, v) }
        }
    }

    /// One consumer warpgroup's online-softmax state: its thread's two rows
    /// ([`AccTile::rows`]) of the warpgroup's 64.
    struct Softmax {
        /// The running maximum of each row, log2 units (−∞ before any visible key).
        row_max: [f32; 2],
        /// This thread's part of each row's running sum ([`AccTile::thread_row_sum`]; summed
        /// over the quad at the end).
        row_sum: [f32; 2],
    }

    impl Softmax {
        /// Turns the scores `s` of the key tile from key `k0` into `P = 2^(S·scale − m)`
        /// in place (masked keys 0), updating the row maxima and sums, and returns each
        /// row's rescaling factor `2^(m_old − m_new)` for `O`. `t` is the thread's index in
        /// the warpgroup, `row0` the warpgroup's first query row.
        ///
        /// # Safety
        /// All 32 lanes of the warp call it convergently.
        #[inline(always)]
        unsafe fn step(
            &mut self,
            s: &mut AccTile<64>,
            t: u32,
            row0: u32,
            k0: u32,
            seq_len: u32,
            causal: bool,
            scale_log2: f32,
        ) -> [f32; 2] {
            // Only the causal diagonal and the last, ragged tile have keys to mask.
            let needs_mask = k0 + WG_ATTN_BC > seq_len || (causal && k0 + WG_ATTN_BC - 1 > row0);
            if needs_mask {
                s.map(t, |r, c, x| {
                    if visible(row0 + r, k0 + c, seq_len, causal) {
                        x
                    } else {
                        f32::NEG_INFINITY
                    }
                });
            }
            // The maximum of the raw scores, then scaled (the scale is positive): `p = 2^(s·
            // scale − m·scale)` is one fused multiply-add and one `ex2` a score. The
            // reductions over a row's 32 elements are trees (depth 5, not chains of 32).
            // SAFETY: converged warp (caller contract).
            let raw_max = unsafe { s.row_max() };
            let mut alpha = [0.0f32; 2];
            let mut base = [0.0f32; 2];
            unroll!(hr in [0, 1] {
                let m = (raw_max[hr] * scale_log2).max(self.row_max[hr]);
                // A row with no visible key yet keeps −∞; subtract 0 then (every p is 0).
                base[hr] = if m == f32::NEG_INFINITY { 0.0 } else { m };
                alpha[hr] = ex2_approx(self.row_max[hr] - base[hr]);
                self.row_max[hr] = m;
            });
            s.map_rows(base, |x, b| ex2_approx(fmaf(x, scale_log2, -b)));
            let sum = s.thread_row_sum();
            unroll!(hr in [0, 1] {
                self.row_sum[hr] = self.row_sum[hr] * alpha[hr] + sum[hr];
            });
            alpha
        }
    }

    /// `P` (the softmax's `s`) rounded to `T` and packed as the `A` registers of the 8
    /// `P·V` steps: keys `16·kk..16·kk + 16` are accumulator elements `8·kk..8·kk + 8`.
    #[inline(always)]
    fn pack_p<T: WgAttnElem>(s: &AccTile<64>) -> [[u32; 4]; 8] {
        let s = &s.regs;
        let mut p = [[0u32; 4]; 8];
        unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
            p[kk] = [
                T::pack(s[8 * kk], s[8 * kk + 1]),
                T::pack(s[8 * kk + 2], s[8 * kk + 3]),
                T::pack(s[8 * kk + 4], s[8 * kk + 5]),
                T::pack(s[8 * kk + 6], s[8 * kk + 7]),
            ];
        });
        p
    }

    /// The kernel body for element type `T`, head dimension `D`, `C` consumer warpgroups and
    /// `O` tiles of `OR = D / 2` accumulators a thread.
    ///
    /// # Safety
    /// As the entry points' `# Safety` sections.
    #[inline(always)]
    unsafe fn forward<T: WgAttnElem, const D: u32, const C: u32, const OR: usize>(
        batch: u32,
        seq_len: u32,
        heads: u32,
        kv_heads: u32,
        causal: bool,
        map_q: *const TensorMap,
        map_k: *const TensorMap,
        map_v: *const TensorMap,
        o: *mut T,
        lse: *mut f32,
    ) where
        AccTile<OR>: AccShape + OAcc,
    {
        const { assert!(OR as u32 == D / 2, "O is 64×D: D / 2 accumulators a thread") };
        // Query rows per block: C consumer warpgroups of 64.
        let br = 64 * C;
        // Column blocks of 64 elements in a row of Q, K or V.
        let blocks = D / 64;
        let tid = thread_idx_x();
        let wg = tid / 128;
        let q_tiles = seq_len.div_ceil(br);
        // Work tile `w` (`block_tile`'s order: a head's query tiles together, its last
        // first): its head `bh`, first query row, first `K`/`V` row and number of key tiles.
        // The grid is persistent: block `b` takes work tiles `b`, `b + grid`, …
        let work = |w: u32| {
            let (bh, q_tile) = block_tile(w, q_tiles, batch * heads)?;
            let (b, h) = (bh / heads, bh % heads);
            Some((
                bh,
                q_tile * br,
                (b * kv_heads + kv_head(h, heads, kv_heads)) * seq_len,
                key_tiles(q_tile, br, WG_ATTN_BC, seq_len, causal),
            ))
        };
        let grid = grid_dim_x();
        if work(block_idx_x()).is_none() {
            // A block past the work tiles: the whole block leaves before any barrier.
            return;
        }

        // Tiles from the first 1024-byte boundary (the swizzle's period), barriers after.
        let raw = dynamic_shared::<u8>();
        let pad = (1024 - (shared_addr(raw) & 1023)) & 1023;
        // SAFETY: `wg_shared_bytes` reserves 1024 bytes of slack for `pad`.
        let smem = unsafe { raw.add(pad as usize) };
        let smem_addr = shared_addr(smem);
        // Column block `kc` of consumer `c`'s Q rows is Q block `kc·C + c`.
        let q_block = |kc: u32, c: u32| (kc * C + c) * QBlock::<T>::BYTES;
        let q_bytes = C * blocks * QBlock::<T>::BYTES;
        // A stage's K (or V) tile: `blocks` column blocks.
        let kv_bytes = blocks * KvBlock::<T>::BYTES;
        let k_off = |s: u32| q_bytes + s * 2 * kv_bytes;
        let v_off = |s: u32| k_off(s) + kv_bytes;
        // SAFETY: after the tiles, inside `wg_shared_bytes`, 8-byte aligned.
        let bars = unsafe { smem.add((q_bytes + WG_ATTN_STAGES * 2 * kv_bytes) as usize) }
            .cast::<MBarrier>();
        // The K/V ring: full barriers (K's), then empty ones.
        // SAFETY: `2·STAGES` barriers at `bars` (`wg_shared_bytes`).
        let ring_bars = unsafe { Pipeline::<WG_ATTN_STAGES>::from_ptr(bars) };
        let bar = |i: u32| {
            // SAFETY: `2 + STAGES + C` barriers after the ring's (`wg_shared_bytes`); every
            // index below is under it (`s < STAGES`, `c < C`).
            unsafe { &*bars.add((2 * WG_ATTN_STAGES + i) as usize) }
        };
        // `Q` of a work tile loaded (full), and read by the consumers' last `S` (empty: one
        // arrival per consumer warp), so the producer may load the next work tile's `Q`.
        let q_full = bar(0);
        let q_empty = bar(1);
        let v_full = |s: u32| bar(2 + s);
        // Consumer `c`'s turn to issue its products (the ping-pong), arrived on by the
        // 128 threads of the consumer before it (`c − 1`, or `C − 1` for consumer 0).
        let turn = |c: u32| bar(2 + WG_ATTN_STAGES + c);

        if tid == 0 {
            // SAFETY: one thread initialises, fence (the ring's init) and barrier below
            // before any use.
            unsafe {
                q_full.init(1);
                q_empty.init(4 * C);
                for s in 0..WG_ATTN_STAGES {
                    v_full(s).init(1);
                }
                for c in 0..C {
                    turn(c).init(128);
                }
                // One arrival per consumer warp; ends with the init fence.
                ring_bars.init(4 * C);
            }
        }
        sync_threads();

        if wg == 0 {
            // Producer.
            if C == 3 {
                wgmma::reg_dealloc::<24>();
            } else {
                wgmma::reg_dealloc::<40>();
            }
            if tid == 0 {
                // SAFETY: the maps are in global memory (the launch contract), encoded for
                // `QBlock` and `KvBlock` (the host's `for_tile`); the barriers are
                // initialised; every destination is a 1024-aligned tile of its type inside
                // the dynamic shared memory; a stage is loaded only after its empty phase
                // (both consumers done reading it) completed, and its full barriers announce
                // exactly the bytes the loads deliver (whole boxes, zeros past the tensor
                // included).
                unsafe {
                    tma::prefetch_descriptor(map_q);
                    tma::prefetch_descriptor(map_k);
                    tma::prefetch_descriptor(map_v);
                    let mut ring = Ring::PRODUCER_START;
                    let mut w = block_idx_x();
                    // The phase of `q_empty` the next work tile's `Q` waits for: the previous
                    // work tile's release (none for the first).
                    let mut q_free: Option<Phase> = None;
                    while let Some((bh, q0, kv_row0, tiles)) = work(w) {
                        if let Some(phase) = q_free {
                            // The previous work tile's `Q` is no longer read.
                            q_empty.wait(phase);
                        }
                        q_free = Some(q_free.map_or(Phase::ZERO, Phase::flip));
                        q_full.arrive_expect_tx(q_bytes);
                        let q_row = (bh * seq_len + q0) as i32;
                        for kc in 0..blocks {
                            for c in 0..C {
                                tma::load_tile::<QBlock<T>>(
                                    smem.add(q_block(kc, c) as usize).cast(),
                                    map_q,
                                    [(kc * 64) as i32, q_row + 64 * c as i32],
                                    q_full,
                                );
                            }
                        }
                        for j in 0..tiles {
                            let s = ring.stage();
                            ring_bars.producer_acquire(ring);
                            let row = (kv_row0 + j * WG_ATTN_BC) as i32;
                            ring_bars.producer_expect(ring, kv_bytes);
                            for kc in 0..blocks {
                                tma::load_tile::<KvBlock<T>>(
                                    smem.add((k_off(s) + kc * KvBlock::<T>::BYTES) as usize)
                                        .cast(),
                                    map_k,
                                    [(kc * 64) as i32, row],
                                    ring_bars.full(s),
                                );
                            }
                            v_full(s).arrive_expect_tx(kv_bytes);
                            for kc in 0..blocks {
                                tma::load_tile::<KvBlock<T>>(
                                    smem.add((v_off(s) + kc * KvBlock::<T>::BYTES) as usize)
                                        .cast(),
                                    map_v,
                                    [(kc * 64) as i32, row],
                                    v_full(s),
                                );
                            }
                            ring.advance();
                        }
                        w += grid;
                        if !super::wg_persistent(D) {
                            break;
                        }
                    }
                }
            }
            return;
        }

        // Consumers: 384 × 168 registers in all, 128 × 40 + 256 × 232; or 512 × 128,
        // 128 × 24 + 384 × 160.
        if C == 3 {
            wgmma::reg_alloc::<160>();
        } else {
            wgmma::reg_alloc::<232>();
        }
        // The consumer's index through a shuffle from lane 0, which `ptxas` knows is equal
        // across the warp (CUTLASS's `canonical_warp_group_idx`), so that what derives from
        // it (the `Q` tile's address, the `wgmma` descriptors) may live in uniform registers.
        // SAFETY: all 32 lanes of the warp run this convergently.
        let c = unsafe { cuda_std::warp::shfl_idx_sync(u32::MAX, wg, 0, 32) } - 1;
        let t = tid % 128;
        let lane = tid % 32;
        let quad = lane % 4;
        let scale_log2 = softmax_scale(D) * LOG2_E;

        // S = Q·Kᵀ for the K tile of stage `st`: D/16 steps of 16 dims (32 bytes), 4 per
        // column block; both operands K-major.
        // The descriptors of the first `Q` and `K` column blocks, the others one addition away
        // (`add_bytes_in_window`).
        let q_desc = QBlock::<T>::descriptor(smem_addr + q_block(0, c));
        let issue_s = |s: &mut AccTile<64>, st: u32| {
            let k_desc = KvBlock::<T>::descriptor(smem_addr + k_off(st));
            unroll!(ks: u32 in [0, 1, 2, 3, 4, 5, 6, 7] {
                if ks < D / 16 {
                    let (kc, step) = (ks / 4, (ks % 4) * 32);
                    let a = q_desc.add_bytes_in_window(q_block(kc, c) - q_block(0, c) + step);
                    let bd = k_desc.add_bytes_in_window(kc * KvBlock::<T>::BYTES + step);
                    // SAFETY: the whole warpgroup runs this convergently with equal
                    // arguments; Q and this stage's K were written by TMA and their full
                    // phases completed; the stage is not reloaded before this warpgroup
                    // releases it, after the wait that covers this group.
                    unsafe { T::qk(&mut s.regs, a, bd, ks == 0) };
                }
            });
        };
        // O += P·V for the V tile of stage `st`: keys 16·kk.. are rows 16·kk.. of every
        // column block of V (N-major: the blocks lie `KvBlock::BYTES` apart along N).
        let issue_pv = |acc: &mut AccTile<OR>, p: &[[u32; 4]; 8], st: u32| {
            let v_desc = KvBlock::<T>::descriptor_mn_major(smem_addr + v_off(st));
            unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
                let bd = v_desc.add_bytes_in_window(kk as u32 * 16 * KvBlock::<T>::ROW_BYTES);
                // SAFETY: as for `issue_s`, for this stage's V tile.
                unsafe { acc.pv::<T>(p[kk], bd) };
            });
        };
        // Releases stage `st`: one arrival per warp, after the wait that retired its reads.
        let release = |st: Ring| {
            if lane == 0 {
                // SAFETY: initialised ring; this warp's one arrival of the phase, after the
                // `wgmma` groups that read the stage completed.
                unsafe { ring_bars.consumer_release(st) };
            }
        };

        // The ping-pong (FlashAttention-3's "pingpong scheduling"): the consumers take turns
        // to issue their products, so that the tensor cores run one consumer's products
        // while the other runs its softmax. Issue `n` of consumer 0 waits for the other's
        // issue `n − 1`, issue `n` of consumer 1 for consumer 0's issue `n` (neither gets
        // two turns ahead, so a turn barrier's parity is never ambiguous).
        let mut issues = 0u32;
        let my_turn = |issues: u32| {
            if c > 0 || issues > 0 {
                let phase = if c > 0 { issues } else { issues - 1 };
                // SAFETY: initialised barrier; the other consumer's 128 threads complete
                // its phase `phase` with their issue `phase` (see above).
                unsafe {
                    turn(c).wait(if phase % 2 == 0 {
                        Phase::ZERO
                    } else {
                        Phase::ZERO.flip()
                    })
                };
            }
        };
        // Every thread arrives: an arrival by one lane would leave the warp diverged at the
        // `wgmma.wait_group` (`.aligned`) that follows, which hung the GPU (not the emulator).
        let your_turn = || {
            // SAFETY: initialised barrier; this thread's one arrival of the phase.
            unsafe { turn((c + 1) % C).arrive() };
        };

        let mut ring = Ring::START;
        let mut w = block_idx_x();
        // The phase of `q_full` this work tile's `Q` completes.
        let mut q_phase = Phase::ZERO;
        // The consumer's `Q` reads of this work tile are over (its last `S` completed): one
        // arrival per warp on `q_empty`, so the producer may load the next work tile's `Q`.
        let release_q = || {
            if lane == 0 {
                // SAFETY: initialised barrier; this warp's one arrival of the phase, after
                // the `wgmma` group that read `Q` completed.
                unsafe { q_empty.arrive() };
            }
        };
        while let Some((bh, q0, _, tiles)) = work(w) {
            let row0 = q0 + 64 * c;
            let mut softmax = Softmax {
                row_max: [f32::NEG_INFINITY; 2],
                row_sum: [0.0; 2],
            };
            let mut acc = AccTile::<OR>::splat(0.0);
            let mut s = AccTile::<64>::splat(0.0);
            // SAFETY: initialised barriers (this wait and the ring's below), each waited for
            // the phase of this round of the ring (the producer fills the stages in the same
            // order), which the producer's loads complete.
            unsafe { q_full.wait(q_phase) };
            // SAFETY: as above.
            unsafe { ring_bars.consumer_wait(ring) };
            my_turn(issues);
            wgmma::fence();
            issue_s(&mut s, ring.stage());
            wgmma::commit_group();
            your_turn();
            issues += 1;
            wgmma::wait_group::<0>();
            if tiles == 1 {
                release_q();
            }
            // SAFETY: converged warp.
            unsafe { softmax.step(&mut s, t, row0, 0, seq_len, causal, scale_log2) };
            let mut p = pack_p::<T>(&s);
            let mut prev = ring;
            ring.advance();
            let mut j = 1;
            while j < tiles {
                // SAFETY: as above.
                unsafe {
                    ring_bars.consumer_wait(ring);
                    v_full(prev.stage()).wait(prev.phase());
                }
                my_turn(issues);
                wgmma::fence();
                issue_s(&mut s, ring.stage());
                wgmma::commit_group();
                issue_pv(&mut acc, &p, prev.stage());
                wgmma::commit_group();
                your_turn();
                issues += 1;
                // S_j is ready; P_{j−1}·V_{j−1} may still run while the softmax does.
                wgmma::wait_group::<1>();
                if j == tiles - 1 {
                    release_q();
                }
                // SAFETY: converged warp.
                let alpha = unsafe {
                    softmax.step(&mut s, t, row0, j * WG_ATTN_BC, seq_len, causal, scale_log2)
                };
                wgmma::wait_group::<0>();
                release(prev);
                acc.map_rows(alpha, |x, a| x * a);
                p = pack_p::<T>(&s);
                prev = ring;
                ring.advance();
                j += 1;
            }
            // SAFETY: as above.
            unsafe { v_full(prev.stage()).wait(prev.phase()) };
            let k_last = (tiles - 1) * WG_ATTN_BC;
            if k_last + WG_ATTN_BC > seq_len {
                // The ragged last tile: V rows past S (another head's, or TMA's zeros) become
                // zeros, this warpgroup's half of them (rows of its parity).
                let first = seq_len - k_last;
                let chunks = (WG_ATTN_BC - first) * (D / 8);
                let mut id = t;
                while id < chunks {
                    let r = first + id / (D / 8);
                    if r % C == c {
                        let ch = id % (D / 8);
                        let at = v_off(prev.stage())
                            + (ch / 8) * KvBlock::<T>::BYTES
                            + KvBlock::<T>::byte_offset(r, (ch % 8) * 16);
                        // SAFETY: a 16-byte chunk of this stage's V tile, whose TMA load
                        // completed (the wait above); no other thread writes it (rows of this
                        // warpgroup's parity) or reads it before the barrier below.
                        unsafe { smem.add(at as usize).cast::<[u32; 4]>().write([0; 4]) };
                    }
                    id += 128;
                }
                fence_proxy_async_shared();
                // SAFETY: both consumer warpgroups (256 threads, whole warps) reach this
                // barrier, on the same ragged last tile; id 1 is used nowhere else.
                unsafe {
                    if C == 3 {
                        cuda_std::thread::named_barrier_sync::<384>(1);
                    } else {
                        cuda_std::thread::named_barrier_sync::<256>(1);
                    }
                }
            }
            my_turn(issues);
            wgmma::fence();
            issue_pv(&mut acc, &p, prev.stage());
            wgmma::commit_group();
            your_turn();
            // Counted too: the next work tile's issues carry on the ping-pong's phases.
            issues += 1;
            wgmma::wait_group::<0>();
            release(prev);

            // Epilogue: O = acc / l, L = m·ln 2 + ln l, for rows inside S.
            // SAFETY: converged warp.
            let l = unsafe { AccTile::<64>::quad_sum(softmax.row_sum) };
            let inv = l.map(|l| 1.0 / l);
            let rows = AccTile::<OR>::rows(t);
            unroll!(hr in [0, 1] {
                let row = row0 + rows[hr];
                if quad == 0 && row < seq_len {
                    let value = softmax.row_max[hr] * core::f32::consts::LN_2 + logf(l[hr]);
                    // SAFETY: element (b, h, row) of L, row < S; written by this lane only.
                    unsafe { *lse.add(bh as usize * seq_len as usize + row as usize) = value };
                }
            });
            let q_head = bh as usize * seq_len as usize * D as usize;
            acc.map_rows(inv, |x, f| x * f);
            acc.for_each_pair(t, |r, col, v0, v1| {
                let row = row0 + r;
                if row < seq_len {
                    // SAFETY: (row, col), (row, col + 1) inside this head's O rows (row < S,
                    // col + 1 < D); 4-byte aligned (col even); one lane per pair.
                    unsafe {
                        T::store_pair(
                            o.add(q_head + row as usize * D as usize + col as usize),
                            v0,
                            v1,
                        );
                    }
                }
            });
            w += grid;
            q_phase = q_phase.flip();
            if !super::wg_persistent(D) {
                break;
            }
        }
    }

    macro_rules! entry {
        ($name:ident, $t:ty, $d:literal) => {
            #[doc = concat!("Attention forward, ", stringify!($t), " inputs, head dimension ",
                            stringify!($d), ", on `wgmma` and TMA (sm_90a); see the ",
                            "[module docs](super) for the design and launch shape.")]
            ///
            /// Parameters and results as the `mma.sync` entry point of the same type and `D`,
            /// with the inputs through tensor maps.
            ///
            /// # Safety
            /// - `map_q` points to a 64-byte-aligned [`TensorMap`] in global memory, written
            ///   before the launch, describing `Q` as `batch·heads·seq_len` rows of `D`
            ///   elements of this type (dims `[D, batch·heads·seq_len]`, innermost first), box
            ///   [`QBlock`] (its box and swizzle); `map_k` and `map_v` the same for `K`
            ///   and `V` with `batch·kv_heads·seq_len` rows and [`KvBlock`];
            /// - `o` and `lse` point to allocations of at least `batch·heads·seq_len·D`
            ///   and `batch·heads·seq_len` elements, 4-byte aligned, that nothing else
            ///   accesses during the launch;
            /// - `batch`, `seq_len`, `heads`, `kv_heads` ≥ 1, `kv_heads` divides `heads`,
            ///   `batch·heads·seq_len` < 2³¹ (TMA's row coordinates are `i32`);
            #[doc = concat!("- launched with a 1-D grid of at least 1 and at most ",
                            "`wg_grid_blocks(batch, heads, seq_len, ",
                            stringify!($d), ")` blocks (each walks the work tiles in steps of ",
                            "the grid) of `wg_attn_threads(", stringify!($d),
                            ")` threads, `wg_shared_bytes(", stringify!($d), ")` of dynamic ",
                            "shared memory, on an sm_90a build capped at `wg_attn_max_registers(",
                            stringify!($d), ")` registers.")]
            #[kernel]
            pub unsafe fn $name(
                batch: u32,
                seq_len: u32,
                heads: u32,
                kv_heads: u32,
                causal: u32,
                map_q: *const TensorMap,
                map_k: *const TensorMap,
                map_v: *const TensorMap,
                o: *mut $t,
                lse: *mut f32,
            ) {
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    forward::<$t, $d, { super::wg_attn_consumers($d) }, { $d / 2 }>(
                        batch,
                        seq_len,
                        heads,
                        kv_heads,
                        causal != 0,
                        map_q,
                        map_k,
                        map_v,
                        o,
                        lse,
                    )
                }
            }
        };
    }

    entry!(attention_fwd_wgmma_bf16_d64, bf16, 64);
    entry!(attention_fwd_wgmma_bf16_d128, bf16, 128);
    entry!(attention_fwd_wgmma_f16_d64, f16, 64);
    entry!(attention_fwd_wgmma_f16_d128, f16, 128);
}
