//! Attention forward pass on warp-level tensor cores (`mma.sync`, **sm_80+**), the structure
//! of FlashAttention-2 (Dao, "FlashAttention-2: Faster Attention with Better Parallelism and
//! Work Partitioning", 2023, Algorithm 1).
//!
//! Inputs and outputs (the rules and layouts of [`common::attention`]): `Q` `(B, H, S, D)`,
//! `K` and `V` `(B, H_kv, S, D)`, row-major, in [`bf16`](cuda_std::half::bf16) or
//! [`f16`](cuda_std::half::f16), head dimension `D` ∈ {64, 128}; the output `O` `(B, H, S,
//! D)` in the input type (rounded to nearest even) and the log-sum-exp `L` `(B, H, S)` in
//! `f32`. Causal or not (a runtime argument), grouped-query (`H_kv` divides `H`).
//!
//! Design. A block of [`ATTN_THREADS`] threads (4 warps) owns [`ATTN_BR`] = 64 query rows of
//! one head; each warp owns 16 of them. The block walks the key/value sequence in tiles of
//! [`ATTN_BC`] = 64 keys (for causal attention only up to the tile holding its last row,
//! [`common::attention::key_tiles`]); `K` and `V` tiles are copied with 16-byte `cp.async`
//! into a ring of two stages of dynamic shared memory, the next tile's copies in flight
//! while the tensor cores work on the current one. Per tile and warp:
//! 1. `S = Q·Kᵀ`: 16×64 scores in 8 `m16n8` accumulator fragments (`f32`), from the warp's
//!    `Q` fragments (loaded once, `ldmatrix`, kept in registers) and `K` read by `ldmatrix`
//!    (`K` rows are the columns of `Kᵀ`: the `B` operand's `.col` layout);
//! 2. online softmax in `f32`: scores scaled by `log2(e)/√D`, masked to −∞ where a key is
//!    not visible (past `S`, or in the future when causal), the running row maximum `m`
//!    updated (a max over the 4 lanes of a quad with two shuffles), the row's running sum
//!    `l` and output accumulators rescaled by `2^(m_old − m_new)`, `P = 2^(S − m_new)`;
//! 3. `O += P·V`: `P` rounded to the input type and reused in registers as the `A`
//!    fragments (an `m16n8` accumulator pair is exactly an `m16n8k16` `A` fragment), `V`
//!    read by `ldmatrix.trans` (row-major `V` is the `B` operand's transpose).
//!
//! At the end each row is divided by its sum `l` and stored, and `L = m·ln 2 + ln l`.
//! `2^x` is [`cuda_std::math::ex2_approx`]: one `ex2.approx.ftz.f32` on the GPU's
//! special-function unit, within a relative 2⁻²² (on the emulator, the host's `exp2f`, so the
//! two agree within the error bound `host::attention::error_bound`, not bit for bit). The
//! polynomial that gave the same bits on both ([`common::attention::softmax_exp2`], about 14
//! instructions per element) held this kernel at 143 / 102 TFLOP/s at 4×32×4096×128 /
//! 16×16×2048×64 on an H200, against 221–233 / 174–175 with `ex2_approx` in the same run:
//! its integer and FMA work made the ALU the busiest pipe (41 %, Nsight Compute). `ln l` is
//! `cuda_std::math::logf` (once per row).
//!
//! Shared memory ([`shared_bytes`]): the block's `Q` tile (64 rows) and two stages of a `K`
//! and a `V` tile (64 rows each); a row is `D` elements, `D/8` chunks of 16 bytes, chunk `c`
//! of row `r` stored at chunk `c ^ (r % 8)` ([`layout::swizzled`]), so the 8 rows one
//! `ldmatrix` phase reads, and the 8 chunks 8 consecutive threads copy, fall in 8 different
//! 16-byte bank groups.
//!
//! Edges: rows past `S` (of `Q`, `K` or `V`) are zero-filled by the copies (`cp.async` with
//! a source size of 0), masked out of the softmax (keys) and not stored (queries). Every
//! row sees key 0, so its maximum is finite after the first tile.
//!
//! Launch ([`grid_blocks`]): a 1-D grid of `ceil(S / 64) · B · H` blocks, block `x` taking
//! head `x / ceil(S / 64)` and query tile `ceil(S / 64) − 1 − x % ceil(S / 64)`
//! ([`common::attention::block_tile`]): the blocks of one head are neighbours, so the blocks resident together read the `K` and `V` of a few
//! heads, from L2; within a head the last query tiles, which do the most work when causal,
//! start first. With the head fastest instead, `K` and `V` came from DRAM (81 % of its
//! throughput, Nsight Compute), and on an H200 this order ran 1.04–1.10× faster (243 / 232 /
//! 193 TFLOP/s against 221–233 / 221–226 / 174–175 at 4×32×4096×128, causal, 16×16×2048×64;
//! 0.99× with 8 key/value heads), though it had been 0.81–0.98× with the slower polynomial
//! `2^x`. [`ATTN_THREADS`] threads,
//! [`shared_bytes`]`(D)` of dynamic shared memory (80 KiB for `D` = 128: above the default
//! 48 KiB, which the host raises).

pub mod wgmma;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use kernels_sm80::*;

/// Query rows per block.
pub const ATTN_BR: u32 = 64;
/// Keys per `K`/`V` tile.
pub const ATTN_BC: u32 = 64;
/// Warps per block (each owns 16 query rows).
pub const ATTN_WARPS: u32 = ATTN_BR / 16;
/// Threads per block.
pub const ATTN_THREADS: u32 = 32 * ATTN_WARPS;
/// Stages of the `K`/`V` ring.
pub const ATTN_STAGES: u32 = 2;
/// The head dimensions the kernels are built for.
pub const ATTN_HEAD_DIMS: [u32; 2] = [64, 128];

/// Dynamic shared memory per block, bytes, for head dimension `d` (16-bit elements): the
/// `Q` tile and [`ATTN_STAGES`] stages of a `K` and a `V` tile (40 KiB for 64, 80 KiB for
/// 128).
#[must_use]
pub const fn shared_bytes(d: u32) -> u32 {
    (ATTN_BR + 2 * ATTN_STAGES * ATTN_BC) * d * 2
}

/// Blocks of the 1-D grid for `batch`·`heads` heads of `seq_len` rows (see the [module
/// docs](self)).
#[must_use]
pub const fn grid_blocks(batch: u32, heads: u32, seq_len: u32) -> u32 {
    seq_len.div_ceil(ATTN_BR) * batch * heads
}

/// Where the kernels put and read each byte: pure functions, checked by the unit tests
/// against `cuda_std::mma::layout`'s fragment maps.
pub mod layout {
    /// Byte offset of 16-byte chunk `chunk` of row `row` in a tile whose rows are
    /// `row_bytes` long (`D`·2): stored at chunk `chunk ^ (row % 8)`.
    #[must_use]
    pub const fn swizzled(row: u32, chunk: u32, row_bytes: u32) -> u32 {
        row * row_bytes + ((chunk ^ (row % 8)) << 4)
    }

    /// `(row, chunk)` of the `Q` tile that lane `lane` addresses in the `ldmatrix.x4` of
    /// warp `warp`'s `A` fragment for head-dimension step `kk` (elements `16·kk..16·kk+16`):
    /// row `16·warp + lane % 16`, chunk `2·kk + lane / 16`.
    #[must_use]
    pub const fn q_lane(warp: u32, lane: u32, kk: u32) -> (u32, u32) {
        (16 * warp + lane % 16, 2 * kk + lane / 16)
    }

    /// `(row, chunk)` of the `K` tile that lane `lane` addresses in the `ldmatrix.x4` of
    /// keys `16·jj..16·jj+16`, head-dimension step `kk`: registers 0, 1 are the `B`
    /// fragment (`Kᵀ`, K×N = dim × key) of keys `16·jj..+8`, registers 2, 3 that of the
    /// next 8.
    #[must_use]
    pub const fn k_lane(lane: u32, jj: u32, kk: u32) -> (u32, u32) {
        (
            16 * jj + lane % 8 + 8 * (lane / 16),
            2 * kk + (lane / 8) % 2,
        )
    }

    /// `(row, chunk)` of the `V` tile that lane `lane` addresses in the `ldmatrix.x4.trans`
    /// of keys `16·kk..16·kk+16`, dims `16·nn..16·nn+16`: registers 0, 1 are the `B`
    /// fragment (K×N = key × dim) of dims `16·nn..+8`, registers 2, 3 that of the next 8.
    #[must_use]
    pub const fn v_lane(lane: u32, kk: u32, nn: u32) -> (u32, u32) {
        (
            16 * kk + lane % 8 + 8 * ((lane / 8) % 2),
            2 * nn + lane / 16,
        )
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod kernels_sm80 {
    #![allow(clippy::too_many_arguments)]
    use super::layout::{k_lane, q_lane, swizzled, v_lane};
    use super::{ATTN_BC, ATTN_BR, ATTN_STAGES, ATTN_THREADS};
    use crate::gemm_tc::OutElem;
    use common::attention::{LOG2_E, block_tile, key_tiles, kv_head, softmax_scale, visible};
    use cuda_std::half::{bf16, bf16x2_from_f32, f16, f16x2_from_f32};
    use cuda_std::math::{ex2_approx, logf};
    use cuda_std::mem::async_copy;
    use cuda_std::mma::{
        Bf16, Element, F16, FragA, FragAcc, FragB, M16N8K16, MmaShape, ldmatrix_x4_trans,
        ldmatrix_x4_window, mma_sync,
    };
    use cuda_std::prelude::*;
    use cuda_std::shared::window::SharedAddr;
    use cuda_std::warp::shfl_xor_sync;

    /// An input type of the attention kernels: the tensor core's element marker and the
    /// rounding of `P` to it.
    pub trait AttnElem: OutElem {
        /// The `cuda_std::mma` element marker (`Bf16`, `F16`).
        type Mma: Element;
        /// `lo` and `hi` rounded to the type (nearest even) and packed into one register,
        /// `lo` in bits 0–15 (the lower column of an `A` fragment register).
        fn pack(lo: f32, hi: f32) -> u32;
    }

    impl AttnElem for bf16 {
        type Mma = Bf16;
        #[inline(always)]
        fn pack(lo: f32, hi: f32) -> u32 {
            bf16x2_from_f32(lo, hi).to_bits()
        }
    }

    impl AttnElem for f16 {
        type Mma = F16;
        #[inline(always)]
        fn pack(lo: f32, hi: f32) -> u32 {
            f16x2_from_f32(lo, hi).to_bits()
        }
    }

    /// `acc += a·b` for one `m16n8k16` tile.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it convergently.
    #[inline(always)]
    unsafe fn mma<T: AttnElem>(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2])
    where
        M16N8K16: MmaShape<T::Mma>,
    {
        let a = FragA::<M16N8K16, T::Mma>::from_regs(a);
        let b = FragB::<M16N8K16, T::Mma>::from_regs(b);
        // SAFETY: converged warp (caller contract).
        *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
    }

    /// The maximum of `x` over the 4 lanes of this lane's quad (the lanes holding one row
    /// of an accumulator fragment, of `mma.sync` and of `wgmma` alike).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it convergently.
    #[inline(always)]
    pub(super) unsafe fn quad_max(x: f32) -> f32 {
        // SAFETY: converged warp (caller contract).
        let x = x.max(unsafe { shfl_xor_sync(u32::MAX, x, 1, 32) });
        // SAFETY: as above.
        x.max(unsafe { shfl_xor_sync(u32::MAX, x, 2, 32) })
    }

    /// The sum of `x` over the 4 lanes of this lane's quad.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it convergently.
    #[inline(always)]
    pub(super) unsafe fn quad_sum(x: f32) -> f32 {
        // SAFETY: converged warp (caller contract).
        let x = x + unsafe { shfl_xor_sync(u32::MAX, x, 1, 32) };
        // SAFETY: as above.
        x + unsafe { shfl_xor_sync(u32::MAX, x, 2, 32) }
    }

    /// The arguments of one launch, as the entry points receive them.
    #[derive(Clone, Copy)]
    struct Args<T> {
        batch: u32,
        seq_len: u32,
        heads: u32,
        kv_heads: u32,
        causal: bool,
        q: *const T,
        k: *const T,
        v: *const T,
        o: *mut T,
        lse: *mut f32,
    }

    /// The kernel body for element type `T` and head dimension `D`; see the [module
    /// docs](super).
    ///
    /// # Safety
    /// As the entry points' `# Safety` sections.
    #[inline(always)]
    unsafe fn forward<T: AttnElem, const D: u32>(args: Args<T>)
    where
        M16N8K16: MmaShape<T::Mma>,
    {
        let Args {
            batch,
            seq_len,
            heads,
            kv_heads,
            causal,
            q,
            k,
            v,
            o,
            lse,
        } = args;
        // Head-dimension steps of 16 (Q·Kᵀ's K steps) and 8-column blocks of O.
        let d_steps = D / 16;
        let row_bytes = D * 2;
        let chunks = D / 8;
        let tile_bytes = ATTN_BC * row_bytes;
        let q_bytes = ATTN_BR * row_bytes;
        let stage_bytes = 2 * tile_bytes;

        let tid = thread_idx_x();
        let lane = tid % 32;
        let warp = tid / 32;
        let (group, quad) = (lane / 4, lane % 4);
        let q_tiles = seq_len.div_ceil(ATTN_BR);
        let Some((bh, q_tile)) = block_tile(block_idx_x(), q_tiles, batch * heads) else {
            // A block past `grid_blocks` (a larger grid than the contract's): the whole
            // block leaves before its first barrier.
            return;
        };
        let (b, h) = (bh / heads, bh % heads);
        let q0 = q_tile * ATTN_BR;
        let head_elems = seq_len as usize * D as usize;
        let q_head = (b * heads + h) as usize * head_elems;
        let kv_index = (b * kv_heads + kv_head(h, heads, kv_heads)) as usize * head_elems;
        let tiles = key_tiles(q_tile, ATTN_BR, ATTN_BC, seq_len, causal);

        let smem_ptr = dynamic_shared::<u8>();
        let smem = SharedAddr::of(smem_ptr);

        // Copy duty: chunk `tid % chunks` of rows `tid / chunks + pass·rows_per_pass`.
        let copy_chunk = tid % chunks;
        let copy_row = tid / chunks;
        let rows_per_pass = ATTN_THREADS / chunks;
        let passes = ATTN_BR * chunks / ATTN_THREADS;

        // Copies the 64 rows from sequence row `row0` of the head at element `head` of `src`
        // into the tile at shared byte `dst`: 16 bytes per chunk, zeros for rows past S.
        let copy_tile = |src: *const T, head: usize, row0: u32, dst: u32| {
            let mut pass = 0;
            while pass < passes {
                let row = copy_row + pass * rows_per_pass;
                let inside = row0 + row < seq_len;
                let at = head + (row0 + row) as usize * D as usize + (copy_chunk * 8) as usize;
                let from = if inside { src.wrapping_add(at) } else { src };
                // SAFETY: `dst` + the swizzled offset is a 16-byte chunk of the tile, inside
                // the dynamic shared memory (`shared_bytes(D)`); where `inside`, `from` is the
                // chunk's 16 bytes inside the tensor (row < S of an existing head), 16-byte
                // aligned (D·2 and the allocation are); otherwise nothing is read. The
                // destination is not read before this thread's `wait_group` and the barrier
                // after it, and no thread reads it concurrently (the barrier that ends the
                // previous use of the stage).
                unsafe {
                    async_copy::copy_16_zero_fill(
                        smem.byte_add(dst + swizzled(row, copy_chunk, row_bytes)),
                        from.cast(),
                        if inside { 16 } else { 0 },
                        true,
                    );
                }
                pass += 1;
            }
        };
        let k_at = |slot: u32| q_bytes + slot * stage_bytes;
        let v_at = |slot: u32| q_bytes + slot * stage_bytes + tile_bytes;

        copy_tile(q, q_head, q0, 0);
        copy_tile(k, kv_index, 0, k_at(0));
        copy_tile(v, kv_index, 0, v_at(0));
        async_copy::commit_group();

        let scale_log2 = softmax_scale(D) * LOG2_E;
        let mut q_frag = [[0u32; 4]; 8];
        let mut acc = [[0.0f32; 4]; 16];
        // Rows `group` and `group + 8` of the warp's 16: running max (log2 units) and this
        // lane's part of the running sum.
        let mut row_max = [f32::NEG_INFINITY; 2];
        let mut row_sum = [0.0f32; 2];

        let mut tile = 0;
        while tile < tiles {
            let slot = tile % ATTN_STAGES;
            if tile + 1 < tiles {
                let next = (tile + 1) % ATTN_STAGES;
                copy_tile(k, kv_index, (tile + 1) * ATTN_BC, k_at(next));
                copy_tile(v, kv_index, (tile + 1) * ATTN_BC, v_at(next));
            }
            // Always one group per tile (possibly empty), so that `wait_group::<1>` leaves
            // exactly the next tile's copies in flight.
            async_copy::commit_group();
            async_copy::wait_group::<1>();
            sync_threads();

            if tile == 0 {
                unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
                    if (kk as u32) < d_steps {
                        let (row, chunk) = q_lane(warp, lane, kk as u32);
                        // SAFETY: converged warp (block-uniform branch); a 16-byte chunk of
                        // the Q tile, copied before the barrier above.
                        q_frag[kk] = unsafe {
                            ldmatrix_x4_window(smem.byte_add(swizzled(row, chunk, row_bytes)))
                        };
                    }
                });
            }

            // 1. S = Q·Kᵀ for the warp's 16 rows × 64 keys.
            let mut s = [[0.0f32; 4]; 8];
            let k_tile = k_at(slot);
            unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
                if (kk as u32) < d_steps {
                    unroll!(jj in [0, 1, 2, 3] {
                        let (row, chunk) = k_lane(lane, jj as u32, kk as u32);
                        // SAFETY: converged warp; a chunk of this stage's K tile, whose
                        // copies the wait and barrier above completed.
                        let r = unsafe {
                            ldmatrix_x4_window(
                                smem.byte_add(k_tile + swizzled(row, chunk, row_bytes)),
                            )
                        };
                        // SAFETY: converged warp.
                        unsafe {
                            mma::<T>(&mut s[2 * jj], q_frag[kk], [r[0], r[1]]);
                            mma::<T>(&mut s[2 * jj + 1], q_frag[kk], [r[2], r[3]]);
                        }
                    });
                }
            });

            // 2. Online softmax. Scores in log2 units; masked where a key is not visible
            // (only the causal diagonal and the last, ragged tile have such keys).
            let k0 = tile * ATTN_BC;
            let needs_mask = k0 + ATTN_BC > seq_len || (causal && k0 + ATTN_BC > q0 + 1);
            unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                unroll!(r in [0, 1, 2, 3] {
                    let x = s[j][r] * scale_log2;
                    let key = k0 + 8 * j as u32 + 2 * quad + (r as u32 % 2);
                    let query = q0 + 16 * warp + group + 8 * (r as u32 / 2);
                    s[j][r] = if needs_mask && !visible(query, key, seq_len, causal) {
                        f32::NEG_INFINITY
                    } else {
                        x
                    };
                });
            });
            let mut alpha = [0.0f32; 2];
            unroll!(hr in [0, 1] {
                let mut m = row_max[hr];
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                    m = m.max(s[j][2 * hr]).max(s[j][2 * hr + 1]);
                });
                // SAFETY: converged warp.
                let m = unsafe { quad_max(m) };
                // A row with no visible key yet keeps −∞; subtract 0 then (every p is 0).
                let base = if m == f32::NEG_INFINITY { 0.0 } else { m };
                alpha[hr] = ex2_approx(row_max[hr] - base);
                row_max[hr] = m;
                let mut sum = 0.0f32;
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                    unroll!(c in [0, 1] {
                        let p = ex2_approx(s[j][2 * hr + c] - base);
                        s[j][2 * hr + c] = p;
                        sum += p;
                    });
                });
                row_sum[hr] = row_sum[hr] * alpha[hr] + sum;
            });
            unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                if (n as u32) < 2 * d_steps {
                    unroll!(r in [0, 1, 2, 3] {
                        acc[n][r] *= alpha[r / 2];
                    });
                }
            });

            // 3. O += P·V: P (rounded to T) as A fragments, V by ldmatrix.trans.
            let v_tile = v_at(slot);
            unroll!(kk in [0, 1, 2, 3] {
                let p = [
                    T::pack(s[2 * kk][0], s[2 * kk][1]),
                    T::pack(s[2 * kk][2], s[2 * kk][3]),
                    T::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                    T::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]),
                ];
                unroll!(nn in [0, 1, 2, 3, 4, 5, 6, 7] {
                    if (nn as u32) < d_steps {
                        let (row, chunk) = v_lane(lane, kk as u32, nn as u32);
                        let off = v_tile + swizzled(row, chunk, row_bytes);
                        // SAFETY: converged warp; `off` is a 16-byte chunk of this stage's
                        // V tile (generic address of the dynamic shared memory), copied
                        // before the barrier above.
                        let r = unsafe {
                            ldmatrix_x4_trans(smem_ptr.wrapping_add(off as usize).cast())
                        };
                        // SAFETY: converged warp.
                        unsafe {
                            mma::<T>(&mut acc[2 * nn], p, [r[0], r[1]]);
                            mma::<T>(&mut acc[2 * nn + 1], p, [r[2], r[3]]);
                        }
                    }
                });
            });
            // Every warp has read this stage before the next iteration's copies refill it.
            sync_threads();
            tile += 1;
        }
        async_copy::wait_all();

        // Epilogue: O = acc / l, L = m·ln 2 + ln l, for rows inside S.
        unroll!(hr in [0, 1] {
            // SAFETY: converged warp.
            let l = unsafe { quad_sum(row_sum[hr]) };
            let inv = 1.0 / l;
            let row = q0 + 16 * warp + group + 8 * hr as u32;
            if row < seq_len {
                let out_row = q_head + row as usize * D as usize;
                unroll!(n in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    if (n as u32) < 2 * d_steps {
                        let col = 8 * n + 2 * quad as usize;
                        // SAFETY: (row, col), (row, col + 1) inside this head's O rows
                        // (row < S, col + 1 < D); 4-byte aligned (col even, O's allocation
                        // aligned); no other thread writes them (one block per (head,
                        // query tile), one lane per pair).
                        unsafe {
                            T::store_pair(
                                o.add(out_row + col),
                                acc[n][2 * hr] * inv,
                                acc[n][2 * hr + 1] * inv,
                            );
                        }
                    }
                });
                if quad == 0 {
                    let value = row_max[hr] * core::f32::consts::LN_2 + logf(l);
                    // SAFETY: element (b, h, row) of L, row < S; written by this lane only.
                    unsafe { *lse.add(bh as usize * seq_len as usize + row as usize) = value };
                }
            }
        });
    }

    macro_rules! entry {
        ($name:ident, $t:ty, $d:literal) => {
            #[doc = concat!("Attention forward, ", stringify!($t), " inputs, head dimension ",
                            stringify!($d), ", on `mma.sync` (sm_80+); see the ",
                            "[module docs](super) for the layouts, design and launch shape.")]
            ///
            /// `causal` nonzero: causal masking. `o` receives `O` (`batch·heads·seq_len·D`
            /// elements), `lse` the log-sum-exp `L` (`batch·heads·seq_len`, natural log).
            ///
            /// # Safety
            /// - `q` holds at least `batch·heads·seq_len·D` elements, `k` and `v` at least
            ///   `batch·kv_heads·seq_len·D`, all 16-byte aligned (whole device allocations
            ///   are); `o` and `lse` point to allocations of at least `batch·heads·seq_len·D`
            ///   and `batch·heads·seq_len` elements, 4-byte aligned, that nothing else
            ///   accesses during the launch;
            /// - `batch`, `seq_len`, `heads`, `kv_heads` ≥ 1, `kv_heads` divides `heads`,
            ///   and `grid_blocks(batch, heads, seq_len)` < 2³¹;
            /// - launched with the [module's launch shape](super): a 1-D grid of
            ///   `grid_blocks(batch, heads, seq_len)` blocks of `ATTN_THREADS` threads,
            #[doc = concat!("  `shared_bytes(", stringify!($d), ")` of dynamic shared memory.")]
            #[kernel]
            pub unsafe fn $name(
                batch: u32,
                seq_len: u32,
                heads: u32,
                kv_heads: u32,
                causal: u32,
                q: &[$t],
                k: &[$t],
                v: &[$t],
                o: *mut $t,
                lse: *mut f32,
            ) {
                let args = Args {
                    batch,
                    seq_len,
                    heads,
                    kv_heads,
                    causal: causal != 0,
                    q: q.as_ptr(),
                    k: k.as_ptr(),
                    v: v.as_ptr(),
                    o,
                    lse,
                };
                // SAFETY: forwarded from the kernel's contract.
                unsafe { forward::<$t, $d>(args) }
            }
        };
    }

    entry!(attention_fwd_bf16_d64, bf16, 64);
    entry!(attention_fwd_bf16_d128, bf16, 128);
    entry!(attention_fwd_f16_d64, f16, 64);
    entry!(attention_fwd_f16_d128, f16, 128);
}

#[cfg(test)]
mod tests {
    use super::layout::{k_lane, q_lane, swizzled, v_lane};
    use cuda_std::mma::layout as frag;

    /// The matrix (of the four an `ldmatrix.x4` loads) and row that lane `l` addresses, and
    /// the element `(row, col)` of the 8×8 matrix that register `reg`, half `half` of lane
    /// `lane` receives (PTX ISA "ldmatrix"; `.trans` swaps row and column).
    fn ldmatrix_element(lane: u32, reg: u32, half: u32, trans: bool) -> (u32, u32, u32) {
        let (r, c) = frag::ldmatrix_b16(lane, half);
        let (r, c) = if trans { (c, r) } else { (r, c) };
        (reg, r, c)
    }

    /// The tile element `(row, col)` (col in elements) lane `lane`'s register `reg`, half
    /// `half` holds after an `ldmatrix.x4` whose lanes address `(row, chunk)` = `addr(l)`.
    fn loaded(
        addr: impl Fn(u32) -> (u32, u32),
        lane: u32,
        reg: u32,
        half: u32,
        trans: bool,
    ) -> (u32, u32) {
        let (m, r, c) = ldmatrix_element(lane, reg, half, trans);
        let (row, chunk) = addr(8 * m + r);
        (row, 8 * chunk + c)
    }

    #[test]
    fn q_k_and_v_loads_give_the_mma_fragments() {
        for lane in 0..32 {
            for half in 0..2 {
                for kk in 0..8 {
                    for warp in 0..4 {
                        for reg in 0..4 {
                            let (row, col) = frag::a_m16n8k16(lane, reg, half);
                            let got = loaded(|l| q_lane(warp, l, kk), lane, reg, half, false);
                            assert_eq!(got, (16 * warp + row, 16 * kk + col), "Q");
                        }
                    }
                    for jj in 0..4 {
                        // K tile row = key (n), element = dim (k of Q·Kᵀ).
                        for reg in 0..4 {
                            let (kd, n) = frag::b_m16n8k16(lane, reg % 2, half);
                            let got = loaded(|l| k_lane(l, jj, kk), lane, reg, half, false);
                            assert_eq!(got, (16 * jj + 8 * (reg / 2) + n, 16 * kk + kd), "K");
                        }
                    }
                    for nn in 0..8 {
                        // V tile row = key (k of P·V), element = dim (n).
                        for reg in 0..4 {
                            let (kk_, n) = frag::b_m16n8k16(lane, reg % 2, half);
                            let got = loaded(|l| v_lane(l, kk % 4, nn), lane, reg, half, true);
                            assert_eq!(
                                got,
                                (16 * (kk % 4) + kk_, 16 * nn + 8 * (reg / 2) + n),
                                "V"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_accumulator_pair_is_an_a_fragment() {
        // The kernel packs S blocks 2kk, 2kk + 1 registers (0, 1), (2, 3) of the first, then
        // of the second, into A registers 0..4: each A element must be the score of the same
        // (row, column) of the 16×16 block.
        for lane in 0..32 {
            for reg in 0..4 {
                for half in 0..2 {
                    let (row, col) = frag::a_m16n8k16(lane, reg, half);
                    let block = reg / 2;
                    let acc_reg = 2 * (reg % 2) + half;
                    let (r, c) = frag::acc_m16n8(lane, acc_reg);
                    assert_eq!((row, col), (r, 8 * block + c));
                }
            }
        }
    }

    #[test]
    fn ldmatrix_phases_and_copies_are_free_of_bank_conflicts() {
        for row_bytes in [128, 256] {
            let chunks = row_bytes / 16;
            let group = |off: u32| (off % 128) / 16;
            // 8 consecutive lanes (one phase) hit 8 bank groups.
            for lane0 in [0, 8, 16, 24] {
                for kk in 0..chunks / 2 {
                    let mut seen = [false; 8];
                    for l in lane0..lane0 + 8 {
                        let (r, c) = k_lane(l, 1, kk);
                        seen[group(swizzled(r, c, row_bytes)) as usize] = true;
                    }
                    assert!(seen.iter().all(|&s| s), "K {row_bytes} {lane0} {kk}");
                    let mut seen = [false; 8];
                    for l in lane0..lane0 + 8 {
                        let (r, c) = v_lane(l, 2, kk);
                        seen[group(swizzled(r, c, row_bytes)) as usize] = true;
                    }
                    assert!(seen.iter().all(|&s| s), "V {row_bytes} {lane0} {kk}");
                }
            }
            // 8 consecutive threads' copies (chunks tid % chunks of row tid / chunks).
            for tid0 in (0..128).step_by(8) {
                let mut seen = [false; 8];
                for t in tid0..tid0 + 8 {
                    seen[group(swizzled(t / chunks, t % chunks, row_bytes)) as usize] = true;
                }
                assert!(seen.iter().all(|&s| s), "copy {row_bytes} {tid0}");
            }
        }
    }
}
