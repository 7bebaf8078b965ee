//! Attention forward pass on the Hopper tensor cores (`wgmma.mma_async`, **sm_90a**): the
//! structure of FlashAttention-2 (Dao, 2023, Algorithm 1) with both products on `wgmma` and
//! `P` fed to the second product from registers, as FlashAttention-3 does (Shah et al.,
//! "FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision", 2024,
//! §3.1).
//!
//! Inputs, outputs and rules are those of [the `mma.sync` kernels](super): `Q`, `O` `(B, H,
//! S, D)`, `K`, `V` `(B, H_kv, S, D)` row-major in bf16 or f16, `D` ∈ {64, 128}, `L` `(B, H,
//! S)` in `f32`, causal or not, grouped-query; the entry points take the same parameters.
//!
//! Design. A block of [`WG_ATTN_THREADS`] threads is two warpgroups, each owning 64 of the
//! block's [`WG_ATTN_BR`] = 128 query rows of one head. The block walks the keys in tiles of
//! [`WG_ATTN_BC`] = 128 (for causal attention only up to its diagonal tile), with `K` and `V`
//! tiles copied by all threads with 16-byte `cp.async` into a ring of two stages, the next
//! tile's copies in flight while the tensor cores work on the current one. Per tile and
//! warpgroup:
//! 1. `S = Q·Kᵀ` (64×128 `f32`, 64 registers a thread): `D/16` `m64n128k16` with both
//!    operands in shared memory, K-major;
//! 2. the online softmax of the `mma.sync` kernel on the accumulator layout
//!    ([`cuda_std::wgmma::layout::acc_row_col`]: a thread holds two rows, and a row is
//!    spread over the 4 lanes of a quad, so the row maximum takes two shuffles);
//! 3. `O += P·V`: `P` rounded to the input type and packed in pairs is already the `A`
//!    operand of `m64nDk16` from registers ([`cuda_std::wgmma::layout::a_row_col`]), so
//!    `P` never goes through shared memory; `V` (row-major: N-major for this product) is read
//!    transposed by the descriptor.
//!
//! Shared memory ([`wg_shared_bytes`]): the `Q` tile (128 rows) and two stages of a `K` and
//! a `V` tile (128 rows each), every tile split into column blocks of 64 elements (128
//! bytes a row), each block a run of 128-byte rows in the 128-byte swizzle (16-byte chunk
//! `c` of row `r` at chunk `c ^ (r % 8)`), 1024-byte aligned: the layout `wgmma`'s
//! descriptors name, K-major for `Q` and `K` (stride byte offset 1024: 8 rows) and N-major
//! for `V` (leading byte offset: the next column block; stride byte offset 1024: 8 keys).
//! `cp.async` writes through the generic proxy, so every thread fences
//! (`fence.proxy.async`) after its copies land and before the barrier that lets `wgmma`
//! read them.
//!
//! Edges: rows past `S` are zero-filled by the copies, keys past `S` masked out of the
//! softmax, query rows past `S` not stored. Launch ([`wg_grid_blocks`]): one block per head
//! and 128 query rows, in the order of the `mma.sync` kernels (the blocks of a head
//! neighbours, its last query tiles first); [`WG_ATTN_THREADS`] threads,
//! [`wg_shared_bytes`]`(D)` of dynamic shared memory.

/// Query rows per block: two warpgroups of 64.
pub const WG_ATTN_BR: u32 = 128;
/// Keys per `K`/`V` tile (the `N` of `S = Q·Kᵀ`, the `K` of `P·V`).
pub const WG_ATTN_BC: u32 = 128;
/// Threads per block: two warpgroups.
pub const WG_ATTN_THREADS: u32 = 256;

/// Dynamic shared memory per block, bytes, for head dimension `d`: the `Q` tile, two stages
/// of a `K` and a `V` tile, and 1024 bytes of slack to align the tiles (161 KiB for 128, 81
/// KiB for 64).
#[must_use]
pub const fn wg_shared_bytes(d: u32) -> u32 {
    (WG_ATTN_BR + 2 * 2 * WG_ATTN_BC) * d * 2 + 1024
}

/// Blocks of the 1-D grid for `batch`·`heads` heads of `seq_len` rows.
#[must_use]
pub const fn wg_grid_blocks(batch: u32, heads: u32, seq_len: u32) -> u32 {
    seq_len.div_ceil(WG_ATTN_BR) * batch * heads
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub use kernels_sm90a::*;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
mod kernels_sm90a {
    #![allow(clippy::too_many_arguments)]
    use super::{WG_ATTN_BC, WG_ATTN_BR, WG_ATTN_THREADS};
    use crate::attention::AttnElem;
    use common::attention::{LOG2_E, key_tiles, kv_head, softmax_scale, visible};
    use cuda_std::half::{bf16, f16};
    use cuda_std::math::{ex2_approx, logf};
    use cuda_std::mem::async_copy;
    use cuda_std::prelude::*;
    use cuda_std::shared::shared_addr;
    use cuda_std::shared::window::SharedAddr;
    use cuda_std::tile::Swizzle;
    use cuda_std::tma::fence_proxy_async_shared;
    use cuda_std::warp::shfl_xor_sync;
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

    /// The maximum of `x` over the 4 lanes of this lane's quad (one accumulator row).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it convergently.
    #[inline(always)]
    unsafe fn quad_max(x: f32) -> f32 {
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
    unsafe fn quad_sum(x: f32) -> f32 {
        // SAFETY: converged warp (caller contract).
        let x = x + unsafe { shfl_xor_sync(u32::MAX, x, 1, 32) };
        // SAFETY: as above.
        x + unsafe { shfl_xor_sync(u32::MAX, x, 2, 32) }
    }

    /// A descriptor of a 128-byte-swizzled operand at shared address `start` with leading
    /// byte offset `lbo` (K-major: unused; N-major: the next 64-element column block) and
    /// stride byte offset 1024 (8 rows of 128 bytes).
    #[inline(always)]
    fn desc(start: u32, lbo: u32) -> MatrixDescriptor {
        MatrixDescriptor::new(start, lbo, 1024, Swizzle::B128)
    }

    /// The kernel body for element type `T` and head dimension `D`.
    ///
    /// # Safety
    /// As the entry points' `# Safety` sections.
    #[inline(always)]
    unsafe fn forward<T: WgAttnElem, const D: u32>(
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
    ) {
        let tid = thread_idx_x();
        let wg = tid / 128;
        let t = tid % 128;
        let lane = tid % 32;
        let quad = lane % 4;
        let q_tiles = seq_len.div_ceil(WG_ATTN_BR);
        let bh = block_idx_x() / q_tiles;
        if bh >= batch * heads {
            return;
        }
        let q_tile = q_tiles - 1 - block_idx_x() % q_tiles;
        let (b, h) = (bh / heads, bh % heads);
        let q0 = q_tile * WG_ATTN_BR;
        // This warpgroup's first query row.
        let row0 = q0 + 64 * wg;
        let head_elems = seq_len as usize * D as usize;
        let q_head = (b * heads + h) as usize * head_elems;
        let kv_index = (b * kv_heads + kv_head(h, heads, kv_heads)) as usize * head_elems;
        let tiles = key_tiles(q_tile, WG_ATTN_BR, WG_ATTN_BC, seq_len, causal);

        // Tiles from the first 1024-byte boundary (the swizzle's period).
        let raw = dynamic_shared::<u8>();
        let base = shared_addr(raw);
        let smem = (base + 1023) & !1023;
        let q_bytes = WG_ATTN_BR * D * 2;
        let tile_bytes = WG_ATTN_BC * D * 2;
        let k_at = |slot: u32| smem + q_bytes + slot * 2 * tile_bytes;
        let v_at = |slot: u32| k_at(slot) + tile_bytes;

        // Copies `rows` rows from sequence row `first` of the head at element `head` of
        // `src` into the tile at shared address `dst`: column block `c / 8` of 16-byte chunk
        // `c` of row `r` at `dst + (c / 8)·rows·128 + r·128 + ((c % 8) ^ (r % 8))·16`, zeros
        // for rows past S.
        let chunks = D / 8;
        let copy_tile = |src: *const T, head: usize, first: u32, rows: u32, dst: u32| {
            let mut id = tid;
            while id < rows * chunks {
                let (r, c) = (id / chunks, id % chunks);
                let inside = first + r < seq_len;
                let at = head + (first + r) as usize * D as usize + (c * 8) as usize;
                let from = if inside { src.wrapping_add(at) } else { src };
                let to = dst + (c / 8) * rows * 128 + r * 128 + (((c % 8) ^ (r % 8)) << 4);
                // SAFETY: `to` is a 16-byte chunk of the tile inside the dynamic shared
                // memory (`wg_shared_bytes(D)`); where `inside`, `from` is 16 bytes inside
                // the tensor (row < S of an existing head), 16-byte aligned; otherwise
                // nothing is read. Nobody reads the chunk before this thread's wait and the
                // barrier after it, and nobody still reads the stage (the barrier that ends
                // its previous use).
                unsafe {
                    async_copy::copy_16_zero_fill(
                        SharedAddr::from_bits(to),
                        from.cast(),
                        if inside { 16 } else { 0 },
                        true,
                    );
                }
                id += WG_ATTN_THREADS;
            }
        };

        copy_tile(q, q_head, q0, WG_ATTN_BR, smem);
        copy_tile(k, kv_index, 0, WG_ATTN_BC, k_at(0));
        copy_tile(v, kv_index, 0, WG_ATTN_BC, v_at(0));
        async_copy::commit_group();

        let scale_log2 = softmax_scale(D) * LOG2_E;
        // Rows `group` and `group + 8` of this warp's 16: the running maximum (log2 units)
        // and this lane's part of the running sum.
        let mut row_max = [f32::NEG_INFINITY; 2];
        let mut row_sum = [0.0f32; 2];
        // O: 64×D, D/2 accumulators a thread (the second half unused for D = 64).
        let mut acc = [[0.0f32; 32]; 2];
        let mut s = [0.0f32; 64];

        let mut tile = 0;
        while tile < tiles {
            let slot = tile % 2;
            if tile + 1 < tiles {
                let next = (tile + 1) * WG_ATTN_BC;
                copy_tile(k, kv_index, next, WG_ATTN_BC, k_at(1 - slot));
                copy_tile(v, kv_index, next, WG_ATTN_BC, v_at(1 - slot));
            }
            async_copy::commit_group();
            async_copy::wait_group::<1>();
            fence_proxy_async_shared();
            sync_threads();

            // 1. S = Q·Kᵀ: D/16 steps of 16 dims, 4 per 128-byte column block.
            let q_tile_at = smem + 64 * wg * 128;
            let k_tile = k_at(slot);
            wgmma::fence();
            unroll!(st: u32 in [0, 1, 2, 3, 4, 5, 6, 7] {
                if st < D / 16 {
                    let a = desc(q_tile_at + (st / 4) * WG_ATTN_BR * 128 + (st % 4) * 32, 16);
                    let bd = desc(k_tile + (st / 4) * WG_ATTN_BC * 128 + (st % 4) * 32, 16);
                    // SAFETY: the whole warpgroup runs this convergently with equal
                    // arguments; Q and this stage's K tile were copied, fenced for the
                    // async proxy and published by the barrier above; the stage is not
                    // rewritten before the barrier that ends this iteration, after the
                    // wait below.
                    unsafe { T::qk(&mut s, a, bd, st == 0) };
                }
            });
            wgmma::commit_group();
            wgmma::wait_group::<0>();

            // 2. Online softmax, scores in log2 units; masked where a key is not visible
            // (only the causal diagonal and the last, ragged tile have such keys).
            let k0 = tile * WG_ATTN_BC;
            let needs_mask =
                k0 + WG_ATTN_BC > seq_len || (causal && k0 + WG_ATTN_BC - 1 > row0);
            unroll!(i: u32 in [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                62, 63
            ] {
                let x = s[i as usize] * scale_log2;
                let (r, c) = acc_row_col(t, i);
                s[i as usize] = if needs_mask && !visible(row0 + r, k0 + c, seq_len, causal) {
                    f32::NEG_INFINITY
                } else {
                    x
                };
            });
            let mut alpha = [0.0f32; 2];
            unroll!(hr in [0, 1] {
                // Element i is in row half (i / 2) % 2.
                let mut m = row_max[hr];
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    m = m.max(s[4 * j + 2 * hr]).max(s[4 * j + 2 * hr + 1]);
                });
                // SAFETY: converged warp.
                let m = unsafe { quad_max(m) };
                // A row with no visible key yet keeps −∞; subtract 0 then (every p is 0).
                let base = if m == f32::NEG_INFINITY { 0.0 } else { m };
                alpha[hr] = ex2_approx(row_max[hr] - base);
                row_max[hr] = m;
                let mut sum = 0.0f32;
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    unroll!(c in [0, 1] {
                        let p = ex2_approx(s[4 * j + 2 * hr + c] - base);
                        s[4 * j + 2 * hr + c] = p;
                        sum += p;
                    });
                });
                row_sum[hr] = row_sum[hr] * alpha[hr] + sum;
            });
            unroll!(i in [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
                42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61,
                62, 63
            ] {
                if (i as u32) < D / 2 {
                    acc[i / 32][i % 32] *= alpha[(i / 2) % 2];
                }
            });

            // 3. O += P·V: keys 16·kk..16·kk + 16 of P are accumulator elements
            // 8·kk..8·kk + 8, packed in pairs into the A registers.
            let v_tile = v_at(slot);
            let mut p = [[0u32; 4]; 8];
            unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
                p[kk] = [
                    T::pack(s[8 * kk], s[8 * kk + 1]),
                    T::pack(s[8 * kk + 2], s[8 * kk + 3]),
                    T::pack(s[8 * kk + 4], s[8 * kk + 5]),
                    T::pack(s[8 * kk + 6], s[8 * kk + 7]),
                ];
            });
            wgmma::fence();
            unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
                // Keys 16·kk.. are rows 16·kk.. of every column block of V: 2048 bytes on.
                let bd = desc(v_tile + kk as u32 * 2048, WG_ATTN_BC * 128);
                // SAFETY: as for Q·Kᵀ, for this stage's V tile; `acc` is this warpgroup's O.
                unsafe {
                    if D == 64 {
                        T::pv64(&mut acc[0], p[kk], bd);
                    } else {
                        // SAFETY: `[[f32; 32]; 2]` and `[f32; 64]` have the same layout.
                        T::pv128(&mut *(&raw mut acc).cast::<[f32; 64]>(), p[kk], bd);
                    }
                }
            });
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            // Every warpgroup has read this stage before the next iteration's copies refill
            // it.
            sync_threads();
            tile += 1;
        }
        async_copy::wait_all();

        // Epilogue: O = acc / l, L = m·ln 2 + ln l, for rows inside S.
        let mut inv = [0.0f32; 2];
        unroll!(hr in [0, 1] {
            // SAFETY: converged warp.
            let l = unsafe { quad_sum(row_sum[hr]) };
            inv[hr] = 1.0 / l;
            let (r, _) = acc_row_col(t, 2 * hr as u32);
            let row = row0 + r;
            if quad == 0 && row < seq_len {
                let value = row_max[hr] * core::f32::consts::LN_2 + logf(l);
                // SAFETY: element (b, h, row) of L, row < S; written by this lane only.
                unsafe { *lse.add(bh as usize * seq_len as usize + row as usize) = value };
            }
        });
        unroll!(i in [
            0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42,
            44, 46, 48, 50, 52, 54, 56, 58, 60, 62
        ] {
            if (i as u32) < D / 2 {
                let (r, c) = acc_row_col(t, i as u32);
                let row = row0 + r;
                if row < seq_len {
                    let f = inv[(i / 2) % 2];
                    // SAFETY: (row, c), (row, c + 1) inside this head's O rows (row < S,
                    // c + 1 < D); 4-byte aligned (c even); one lane per pair.
                    unsafe {
                        T::store_pair(
                            o.add(q_head + row as usize * D as usize + c as usize),
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
                            stringify!($d), ", on `wgmma` (sm_90a); see the ",
                            "[module docs](super) for the design and launch shape.")]
            ///
            /// Parameters and results as the `mma.sync` entry point of the same type and `D`.
            ///
            /// # Safety
            /// - `q` holds at least `batch·heads·seq_len·D` elements, `k` and `v` at least
            ///   `batch·kv_heads·seq_len·D`, all 16-byte aligned (whole device allocations
            ///   are); `o` and `lse` point to allocations of at least `batch·heads·seq_len·D`
            ///   and `batch·heads·seq_len` elements, 4-byte aligned, that nothing else
            ///   accesses during the launch;
            /// - `batch`, `seq_len`, `heads`, `kv_heads` ≥ 1, `kv_heads` divides `heads`,
            ///   and `wg_grid_blocks(batch, heads, seq_len)` < 2³¹;
            /// - launched with a 1-D grid of `wg_grid_blocks(batch, heads, seq_len)` blocks
            #[doc = concat!("  of `WG_ATTN_THREADS` threads, `wg_shared_bytes(", stringify!($d),
                            ")` of dynamic shared memory, on an sm_90a build.")]
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
                // SAFETY: forwarded from the kernel's contract.
                unsafe {
                    forward::<$t, $d>(
                        batch,
                        seq_len,
                        heads,
                        kv_heads,
                        causal != 0,
                        q.as_ptr(),
                        k.as_ptr(),
                        v.as_ptr(),
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
