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
//!   it while `P_{j−1}·V_{j−1}` still runs on the tensor cores, then waits for that product,
//!   releases its stage, rescales `O` and packs `P_j`. The consumers take turns to issue (an
//!   mbarrier each: FlashAttention-3's ping-pong), so the tensor cores run one consumer's
//!   products while the others run their softmax.
//!
//! Shared memory ([`wg_shared_bytes`]): the `Q` tile (128 rows) and the stages' `K` and `V`
//! tiles (128 rows each), every tile split into column blocks of 64 elements (128 bytes a
//! row) that TMA writes with the 128-byte swizzle (16-byte chunk `c` of row `r` at chunk
//! `c ^ (r % 8)`), 1024-byte aligned: the layout `wgmma`'s descriptors name, K-major for
//! `Q` and `K` (stride byte offset 1024: 8 rows) and N-major for `V` (leading byte offset:
//! the next column block; stride byte offset 1024: 8 keys); then the mbarriers.
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
//! - a persistent grid (one block a multiprocessor walking the work tiles, the producer
//!   loading the next tile's `Q` and `K`/`V` during the consumers' epilogue, as
//!   FlashAttention-3): with the work-tile loop around the consumers' body `ptxas` spills
//!   (256–316 bytes) and serialises every `wgmma` (its warning C7512, "insufficient register
//!   resources"), with or without the uniform index, `setmaxnreg` 24 / 240, or `O` and `S`
//!   carried across tiles instead of zeroed; not run;
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
//!   lower with 8 `K`/`V` heads.
//!
//! Launch ([`wg_grid_blocks`]): one block per head and [`wg_attn_rows`]`(D)` query rows, in
//! the order of the `mma.sync` kernels (the blocks of a head neighbours, its last query tiles
//! first); [`wg_attn_threads`]`(D)` threads, [`wg_shared_bytes`]`(D)` of dynamic shared
//! memory, built with at most [`wg_attn_max_registers`]`(D)` registers a thread (`.maxnreg`,
//! so that the block fits before the warpgroups rebalance).

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

/// Dynamic shared memory per block, bytes, for head dimension `d`: the `Q` tile, the
/// stages' `K` and `V` tiles, 1024 bytes of slack to align them, and the
/// `1 + 3·STAGES + consumers` mbarriers (225 KiB for 128, 121 KiB for 64).
#[must_use]
pub const fn wg_shared_bytes(d: u32) -> u32 {
    (wg_attn_rows(d) + 2 * WG_ATTN_STAGES * WG_ATTN_BC) * d * 2
        + 1024
        + 8 * (1 + 3 * WG_ATTN_STAGES + wg_attn_consumers(d))
}

const _: () = assert!(
    wg_shared_bytes(128) <= 227 * 1024 && wg_shared_bytes(64) <= 227 * 1024,
    "a block has at most 227 KiB"
);

/// The TMA box of `Q`, innermost first: 64 elements (128 bytes) × 64 rows (a consumer's
/// rows of one column block).
pub const WG_ATTN_Q_BOX: [u32; 2] = [64, 64];
/// The TMA box of `K` and `V`: 64 elements × [`WG_ATTN_BC`] rows.
pub const WG_ATTN_KV_BOX: [u32; 2] = [64, WG_ATTN_BC];

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
    use super::{WG_ATTN_BC, WG_ATTN_STAGES};
    use crate::attention::AttnElem;
    use crate::attention::kernels_sm80::{quad_max, quad_sum};
    use common::attention::{LOG2_E, block_tile, key_tiles, kv_head, softmax_scale, visible};
    use cuda_std::barrier::{MBarrier, Phase, fence_init};
    use cuda_std::half::{bf16, f16};
    use cuda_std::math::{ex2_approx, fmaf, logf};
    use cuda_std::prelude::*;
    use cuda_std::shared::shared_addr;
    use cuda_std::tile::{PipelineState, Swizzle};
    use cuda_std::tma::{self, TensorMap, fence_proxy_async_shared};
    use cuda_std::wgmma::{self, MatrixDescriptor, layout::acc_row_col};

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

    /// A descriptor of a 128-byte-swizzled operand at shared address `start` with leading
    /// byte offset `lbo` (K-major: unused; N-major: the next 64-element column block) and
    /// stride byte offset 1024 (8 rows of 128 bytes).
    #[inline(always)]
    fn desc(start: u32, lbo: u32) -> MatrixDescriptor {
        MatrixDescriptor::new(start, lbo, 1024, Swizzle::B128)
    }

    /// The ring position of the `K`/`V` stages.
    type Ring = PipelineState<WG_ATTN_STAGES>;

    /// Calls `$m!(i)` for `i` in 0..64 (constant indices: the accumulators stay in
    /// registers).
    macro_rules! each64 {
        ($i:ident => $body:block) => {
            unroll!($i: u32 in [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                62, 63
            ] $body)
        };
    }

    /// One consumer warpgroup's online-softmax state: rows `group` and `group + 8` of each
    /// of its warps' 16 rows.
    struct Softmax {
        /// The running maximum of each row, log2 units (−∞ before any visible key).
        row_max: [f32; 2],
        /// This lane's part of each row's running sum (summed over the quad at the end).
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
            s: &mut [f32; 64],
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
                each64!(i => {
                    let (r, c) = acc_row_col(t, i);
                    if !visible(row0 + r, k0 + c, seq_len, causal) {
                        s[i as usize] = f32::NEG_INFINITY;
                    }
                });
            }
            let mut alpha = [0.0f32; 2];
            unroll!(hr in [0, 1] {
                // Element i is in row half (i / 2) % 2. The maximum of the raw scores, then
                // scaled (the scale is positive): `p = 2^(s·scale − m·scale)` is one fused
                // multiply-add and one `ex2` a score.
                // Both reductions over the row's 32 elements as trees (depth 5, not a chain of
                // 32 dependent operations).
                let mut v = [0.0f32; 16];
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    v[j] = s[4 * j + 2 * hr].max(s[4 * j + 2 * hr + 1]);
                });
                let m = tree16(v, f32::max);
                // SAFETY: converged warp (caller contract).
                let m = (unsafe { quad_max(m) } * scale_log2).max(self.row_max[hr]);
                // A row with no visible key yet keeps −∞; subtract 0 then (every p is 0).
                let base = if m == f32::NEG_INFINITY { 0.0 } else { m };
                alpha[hr] = ex2_approx(self.row_max[hr] - base);
                self.row_max[hr] = m;
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    unroll!(c in [0, 1] {
                        let p = ex2_approx(fmaf(s[4 * j + 2 * hr + c], scale_log2, -base));
                        s[4 * j + 2 * hr + c] = p;
                    });
                    v[j] = s[4 * j + 2 * hr] + s[4 * j + 2 * hr + 1];
                });
                let sum = tree16(v, |a, b| a + b);
                self.row_sum[hr] = self.row_sum[hr] * alpha[hr] + sum;
            });
            alpha
        }
    }

    /// `f` over the 16 values of `v` as a balanced tree (`f` associative: `max`, `+`).
    #[inline(always)]
    fn tree16(mut v: [f32; 16], f: impl Fn(f32, f32) -> f32) -> f32 {
        unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] { v[j] = f(v[j], v[j + 8]); });
        unroll!(j in [0, 1, 2, 3] { v[j] = f(v[j], v[j + 4]); });
        unroll!(j in [0, 1] { v[j] = f(v[j], v[j + 2]); });
        f(v[0], v[1])
    }

    /// `P` (the softmax's `s`) rounded to `T` and packed as the `A` registers of the 8
    /// `P·V` steps: keys `16·kk..16·kk + 16` are accumulator elements `8·kk..8·kk + 8`.
    #[inline(always)]
    fn pack_p<T: WgAttnElem>(s: &[f32; 64]) -> [[u32; 4]; 8] {
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

    /// The kernel body for element type `T` and head dimension `D`.
    ///
    /// # Safety
    /// As the entry points' `# Safety` sections.
    #[inline(always)]
    unsafe fn forward<T: WgAttnElem, const D: u32, const C: u32>(
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
    ) {
        // Query rows per block: C consumer warpgroups of 64.
        let br = 64 * C;
        let tid = thread_idx_x();
        let wg = tid / 128;
        let q_tiles = seq_len.div_ceil(br);
        let Some((bh, q_tile)) = block_tile(block_idx_x(), q_tiles, batch * heads) else {
            // A block past `wg_grid_blocks`: the whole block leaves before any barrier.
            return;
        };
        let (b, h) = (bh / heads, bh % heads);
        let q0 = q_tile * br;
        let kv_row0 = (b * kv_heads + kv_head(h, heads, kv_heads)) * seq_len;
        let tiles = key_tiles(q_tile, br, WG_ATTN_BC, seq_len, causal);

        // Tiles from the first 1024-byte boundary (the swizzle's period), barriers after.
        let raw = dynamic_shared::<u8>();
        let pad = (1024 - (shared_addr(raw) & 1023)) & 1023;
        // SAFETY: `wg_shared_bytes` reserves 1024 bytes of slack for `pad`.
        let smem = unsafe { raw.add(pad as usize) };
        let smem_addr = shared_addr(smem);
        let q_bytes = br * D * 2;
        let tile_bytes = WG_ATTN_BC * D * 2;
        let k_off = |s: u32| q_bytes + s * 2 * tile_bytes;
        let v_off = |s: u32| k_off(s) + tile_bytes;
        // SAFETY: after the tiles, inside `wg_shared_bytes`, 8-byte aligned.
        let bars = unsafe { smem.add((q_bytes + WG_ATTN_STAGES * 2 * tile_bytes) as usize) }
            .cast::<MBarrier>();
        let bar = |i: u32| {
            // SAFETY: `1 + 3·STAGES + C` barriers after `bars` (`wg_shared_bytes`); every
            // index below is under it (`s < STAGES`, `c < C`).
            unsafe { &*bars.add(i as usize) }
        };
        let q_full = bar(0);
        let k_full = |s: u32| bar(1 + s);
        let v_full = |s: u32| bar(1 + WG_ATTN_STAGES + s);
        let empty = |s: u32| bar(1 + 2 * WG_ATTN_STAGES + s);
        // Consumer `c`'s turn to issue its products (the ping-pong), arrived on by the
        // 128 threads of the consumer before it (`c − 1`, or `C − 1` for consumer 0).
        let turn = |c: u32| bar(1 + 3 * WG_ATTN_STAGES + c);

        if tid == 0 {
            // SAFETY: one thread initialises, fence and barrier below before any use.
            unsafe {
                q_full.init(1);
                for s in 0..WG_ATTN_STAGES {
                    k_full(s).init(1);
                    v_full(s).init(1);
                    // One arrival per consumer warp.
                    empty(s).init(4 * C);
                }
                for c in 0..C {
                    turn(c).init(128);
                }
            }
            fence_init();
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
                let blocks = D / 64;
                // SAFETY: the maps are in global memory (the launch contract); the
                // barriers are initialised; every destination is a 1024-aligned column
                // block of its tile inside the dynamic shared memory; a stage is loaded only
                // after its empty phase (both consumers done reading it) completed, and its
                // full barriers announce exactly the bytes the loads deliver (whole boxes,
                // zeros past the tensor included).
                unsafe {
                    tma::prefetch_descriptor(map_q);
                    tma::prefetch_descriptor(map_k);
                    tma::prefetch_descriptor(map_v);
                    q_full.arrive_expect_tx(q_bytes);
                    let q_row = (bh * seq_len + q0) as i32;
                    for kc in 0..blocks {
                        for half in 0..C {
                            let dst = smem.add((kc * br * 128 + half * 64 * 128) as usize);
                            tma::load_2d(
                                dst.cast::<T>(),
                                map_q,
                                (kc * 64) as i32,
                                q_row + 64 * half as i32,
                                q_full,
                            );
                        }
                    }
                    let mut ring = Ring::PRODUCER_START;
                    for j in 0..tiles {
                        let s = ring.stage();
                        empty(s).wait(ring.phase());
                        let row = (kv_row0 + j * WG_ATTN_BC) as i32;
                        k_full(s).arrive_expect_tx(tile_bytes);
                        for kc in 0..blocks {
                            let dst = smem.add((k_off(s) + kc * WG_ATTN_BC * 128) as usize);
                            tma::load_2d(dst.cast::<T>(), map_k, (kc * 64) as i32, row, k_full(s));
                        }
                        v_full(s).arrive_expect_tx(tile_bytes);
                        for kc in 0..blocks {
                            let dst = smem.add((v_off(s) + kc * WG_ATTN_BC * 128) as usize);
                            tma::load_2d(dst.cast::<T>(), map_v, (kc * 64) as i32, row, v_full(s));
                        }
                        ring.advance();
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
        let row0 = q0 + 64 * c;
        let q_at = smem_addr + 64 * c * 128;
        let scale_log2 = softmax_scale(D) * LOG2_E;
        let mut softmax = Softmax {
            row_max: [f32::NEG_INFINITY; 2],
            row_sum: [0.0; 2],
        };
        // O: 64×D, D/2 accumulators a thread (the second half unused for D = 64).
        let mut acc = [[0.0f32; 32]; 2];
        let mut s = [0.0f32; 64];

        // S = Q·Kᵀ for the K tile of stage `st`: D/16 steps of 16 dims, 4 per column block.
        let issue_s = |s: &mut [f32; 64], st: u32| {
            let k_at = smem_addr + k_off(st);
            unroll!(ks: u32 in [0, 1, 2, 3, 4, 5, 6, 7] {
                if ks < D / 16 {
                    let a = desc(q_at + (ks / 4) * br * 128 + (ks % 4) * 32, 16);
                    let bd = desc(k_at + (ks / 4) * WG_ATTN_BC * 128 + (ks % 4) * 32, 16);
                    // SAFETY: the whole warpgroup runs this convergently with equal
                    // arguments; Q and this stage's K were written by TMA and their full
                    // phases completed; the stage is not reloaded before this warpgroup
                    // releases it, after the wait that covers this group.
                    unsafe { T::qk(s, a, bd, ks == 0) };
                }
            });
        };
        // O += P·V for the V tile of stage `st`: keys 16·kk.. are rows 16·kk.. of every
        // column block of V, 2048 bytes on.
        let issue_pv = |acc: &mut [[f32; 32]; 2], p: &[[u32; 4]; 8], st: u32| {
            let v_at = smem_addr + v_off(st);
            unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
                let bd = desc(v_at + kk as u32 * 2048, WG_ATTN_BC * 128);
                // SAFETY: as for `issue_s`, for this stage's V tile.
                unsafe {
                    if D == 64 {
                        T::pv64(&mut acc[0], p[kk], bd);
                    } else {
                        // SAFETY: `[[f32; 32]; 2]` and `[f32; 64]` have the same layout.
                        T::pv128(&mut *(&raw mut *acc).cast::<[f32; 64]>(), p[kk], bd);
                    }
                }
            });
        };
        // Releases stage `st`: one arrival per warp, after the wait that retired its reads.
        let release = |st: u32| {
            if lane == 0 {
                // SAFETY: initialised barrier; this warp's one arrival of the phase.
                unsafe { empty(st).arrive() };
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

        // SAFETY: initialised barriers (this wait and the ring's below), each waited for
        // the phase of this round of the ring (the producer fills the stages in the same
        // order), which the producer's loads complete.
        unsafe { q_full.wait(Phase::ZERO) };
        let mut ring = Ring::START;
        // SAFETY: as above.
        unsafe { k_full(ring.stage()).wait(ring.phase()) };
        my_turn(issues);
        wgmma::fence();
        issue_s(&mut s, ring.stage());
        wgmma::commit_group();
        your_turn();
        issues += 1;
        wgmma::wait_group::<0>();
        // SAFETY: converged warp.
        unsafe { softmax.step(&mut s, t, row0, 0, seq_len, causal, scale_log2) };
        let mut p = pack_p::<T>(&s);
        let mut prev = ring;
        ring.advance();
        let mut j = 1;
        while j < tiles {
            // SAFETY: as above.
            unsafe {
                k_full(ring.stage()).wait(ring.phase());
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
            // SAFETY: converged warp.
            let alpha = unsafe {
                softmax.step(&mut s, t, row0, j * WG_ATTN_BC, seq_len, causal, scale_log2)
            };
            wgmma::wait_group::<0>();
            release(prev.stage());
            each64!(i => {
                if i < D / 2 {
                    acc[(i / 32) as usize][(i % 32) as usize] *= alpha[((i / 2) % 2) as usize];
                }
            });
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
                        + (ch / 8) * WG_ATTN_BC * 128
                        + r * 128
                        + (((ch % 8) ^ (r % 8)) << 4);
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
        wgmma::wait_group::<0>();
        release(prev.stage());

        // Epilogue: O = acc / l, L = m·ln 2 + ln l, for rows inside S.
        let mut inv = [0.0f32; 2];
        let q_head = bh as usize * seq_len as usize * D as usize;
        unroll!(hr in [0, 1] {
            // SAFETY: converged warp.
            let l = unsafe { quad_sum(softmax.row_sum[hr]) };
            inv[hr] = 1.0 / l;
            let (r, _) = acc_row_col(t, 2 * hr as u32);
            let row = row0 + r;
            if quad == 0 && row < seq_len {
                let value = softmax.row_max[hr] * core::f32::consts::LN_2 + logf(l);
                // SAFETY: element (b, h, row) of L, row < S; written by this lane only.
                unsafe { *lse.add(bh as usize * seq_len as usize + row as usize) = value };
            }
        });
        unroll!(i in [
            0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42,
            44, 46, 48, 50, 52, 54, 56, 58, 60, 62
        ] {
            if (i as u32) < D / 2 {
                let (r, col) = acc_row_col(t, i as u32);
                let row = row0 + r;
                if row < seq_len {
                    let f = inv[(i / 2) % 2];
                    // SAFETY: (row, col), (row, col + 1) inside this head's O rows (row < S,
                    // col + 1 < D); 4-byte aligned (col even); one lane per pair.
                    unsafe {
                        T::store_pair(
                            o.add(q_head + row as usize * D as usize + col as usize),
                            acc[i / 32][i % 32] * f,
                            acc[i / 32][i % 32 + 1] * f,
                        );
                    }
                }
            }
        });
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
            ///   `WG_ATTN_Q_BOX`, the 128-byte swizzle; `map_k` and `map_v` the same for `K`
            ///   and `V` with `batch·kv_heads·seq_len` rows and box `WG_ATTN_KV_BOX`;
            /// - `o` and `lse` point to allocations of at least `batch·heads·seq_len·D`
            ///   and `batch·heads·seq_len` elements, 4-byte aligned, that nothing else
            ///   accesses during the launch;
            /// - `batch`, `seq_len`, `heads`, `kv_heads` ≥ 1, `kv_heads` divides `heads`,
            ///   `batch·heads·seq_len` < 2³¹ (TMA's row coordinates are `i32`);
            #[doc = concat!("- launched with a 1-D grid of `wg_grid_blocks(batch, heads, seq_len, ",
                            stringify!($d), ")` blocks of `wg_attn_threads(", stringify!($d),
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
                    forward::<$t, $d, { super::wg_attn_consumers($d) }>(
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
