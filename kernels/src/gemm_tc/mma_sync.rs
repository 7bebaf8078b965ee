//! The `mma.sync` GEMM (**sm_80+**): `C = A·Bᵀ` on the warp-level tensor-core instructions
//! of `cuda_std::mma`, in bf16, f16 (`m16n8k16`) and TF32 (`m16n8k8`). Layouts and
//! precisions: [the parent module](super).
//!
//! Design. A block of [`MMA_THREADS`] threads (8 warps, 2 × 4) computes a
//! [`MMA_BM`]×[`MMA_BN`] tile of `C`; each warp a 64×64 sub-tile held as 4 × 8 `m16n8`
//! accumulator fragments (128 `f32` registers per thread). K is walked in steps of 64 bytes
//! per row (32 bf16/f16 or 16 f32 elements): `A`'s 128×64-byte and `B`'s 256×64-byte slices
//! are copied with 16-byte `cp.async.cg` into a ring of [`MMA_STAGES`] stages of dynamic
//! shared memory ([`MMA_SHARED_BYTES`]); each iteration waits for the oldest stage, issues
//! the copy of the stage `MMA_STAGES - 1` ahead, and computes on the oldest, with one
//! barrier per step. In shared memory a row is 4 chunks of 16 bytes, stored at chunk
//! `c ^ ((row / 2) % 4)`: the 8 rows an `ldmatrix` phase reads, and the 8 chunks a warp's
//! copies write, then fall in 8 different 16-byte bank groups (no bank conflicts). Each
//! 16-byte-per-row K slice gives `A` fragments by `ldmatrix.x4` (16 rows) and two `B`
//! fragments by one `ldmatrix.x4` (16 columns), whatever the element type: in bytes, a
//! bf16 `m16n8k16` step and a TF32 `m16n8k8` step read the same 16×32-byte tiles.
//!
//! Edges: rows of `A` past `m` (of `B` past `n`) are read from row `m - 1` (`n - 1`), so the
//! extra accumulators hold values that are never stored; chunks past `k` are zero-filled in
//! shared memory with plain stores. Blocks take their tiles in the grouped order of
//! [`super::tile_coords`] (1-D grid of `ceil(m / 128) · ceil(n / 256)` blocks).
//!
//! Launch: grid `(ceil(m / MMA_BM) · ceil(n / MMA_BN), 1, 1)`, block `(MMA_THREADS, 1, 1)`,
//! [`MMA_SHARED_BYTES`] of dynamic shared memory (above the default 48 KiB limit: the host
//! raises the kernel's limit first).

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use kernels_sm80::*;

/// Rows of `C` per block.
pub const MMA_BM: u32 = 128;
/// Columns of `C` per block.
pub const MMA_BN: u32 = 256;
/// Bytes of each row of `A` and `B` per pipeline stage (32 bf16/f16 or 16 f32 elements).
pub const MMA_BK_BYTES: u32 = 64;
/// Pipeline stages (the `cp.async` ring).
pub const MMA_STAGES: u32 = 4;
/// Threads per block (8 warps).
pub const MMA_THREADS: u32 = 256;
/// Bytes of one stage: the `A` slice then the `B` slice.
pub const MMA_STAGE_BYTES: u32 = (MMA_BM + MMA_BN) * MMA_BK_BYTES;
/// Dynamic shared memory per block, bytes: [`MMA_STAGES`] · [`MMA_STAGE_BYTES`] (96 KiB).
pub const MMA_SHARED_BYTES: u32 = MMA_STAGES * MMA_STAGE_BYTES;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod kernels_sm80 {
    use super::{MMA_BK_BYTES, MMA_BM, MMA_BN, MMA_STAGE_BYTES, MMA_STAGES, MMA_THREADS};
    use crate::gemm_tc::{OutElem, tile_coords};
    use cuda_std::half::{bf16, f16};
    use cuda_std::mem::{self, async_copy};
    use cuda_std::mma::{
        Bf16, F16, FragA, FragAcc, FragB, M16N8K8, M16N8K16, Tf32, ldmatrix_x4, mma_sync,
    };
    use cuda_std::prelude::*;

    /// Expands `$body` once per listed value with `$v` bound to it: a guaranteed full unroll,
    /// so that fragment arrays are indexed by constants only (they stay in registers).
    macro_rules! unroll {
        ($v:ident in [$($n:literal),*] $body:block) => {
            $({
                let $v: usize = $n;
                $body
            })*
        };
    }

    /// An element type of the `mma.sync` GEMM: how one warp MMA is issued on raw fragment
    /// registers, and how results are written.
    pub trait MmaElem: OutElem {
        /// `acc += A·B` for one `m16n8` tile and one 16-byte-per-row K slice: `a`, `b` the
        /// `ldmatrix` registers (one `m16n8k16`, or one `m16n8k8` for TF32).
        ///
        /// # Safety
        /// All 32 lanes of the warp call it convergently.
        unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]);
    }

    impl MmaElem for bf16 {
        #[inline(always)]
        unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
            let (a, b) = (
                FragA::<M16N8K16, Bf16>::from_regs(a),
                FragB::<M16N8K16, Bf16>::from_regs(b),
            );
            // SAFETY: converged warp (caller contract).
            *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
        }
    }

    impl MmaElem for f16 {
        #[inline(always)]
        unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
            let (a, b) = (
                FragA::<M16N8K16, F16>::from_regs(a),
                FragB::<M16N8K16, F16>::from_regs(b),
            );
            // SAFETY: converged warp (caller contract).
            *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
        }
    }

    impl MmaElem for f32 {
        #[inline(always)]
        unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
            let (a, b) = (
                FragA::<M16N8K8, Tf32>::from_regs(a),
                FragB::<M16N8K8, Tf32>::from_regs(b),
            );
            // SAFETY: converged warp (caller contract).
            *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
        }
    }

    /// Byte offset in a stage slice of 16-byte chunk `chunk` (0..4) of row `row`: the
    /// swizzle of the [module docs](super).
    #[inline(always)]
    const fn swizzled(row: u32, chunk: u32) -> u32 {
        row * MMA_BK_BYTES + ((chunk ^ ((row >> 1) & 3)) << 4)
    }

    /// Rows of `A` (then of `B`) each thread copies per stage: 128 (256) rows × 4 chunks
    /// over 256 threads.
    const A_COPIES: usize = (MMA_BM * 4 / MMA_THREADS) as usize;
    const B_COPIES: usize = (MMA_BN * 4 / MMA_THREADS) as usize;

    /// The kernel body for element type `T`; see the [module docs](super).
    ///
    /// # Safety
    /// As the entry points' `# Safety` sections.
    #[inline(always)]
    unsafe fn gemm<T: MmaElem>(m: u32, n: u32, k: u32, a: *const T, b: *const T, c: *mut T) {
        let tid = thread_idx_x();
        let lane = tid % 32;
        let warp = tid / 32;
        let (wm, wn) = (warp / 4, warp % 4);
        let (tile_m, tile_n) = tile_coords(block_idx_x(), m.div_ceil(MMA_BM), n.div_ceil(MMA_BN));
        let (m0, n0) = (tile_m * MMA_BM, tile_n * MMA_BN);
        let row_bytes = (k * T::BYTES) as usize;
        let k_tiles = (k * T::BYTES).div_ceil(MMA_BK_BYTES);
        let smem: *mut u8 = dynamic_shared::<u8>();

        // Copy duty: chunk `tid % 4` of rows `tid / 4 + 64·j`; the swizzled chunk is the
        // same for every j (64 rows keep `(row / 2) % 4`).
        let copy_chunk = tid % 4;
        let copy_row = tid / 4;
        let copy_dst = swizzled(copy_row, copy_chunk) as usize;
        let a_src = a.cast::<u8>();
        let b_src = b.cast::<u8>();
        let a_rows: [usize; A_COPIES] = core::array::from_fn(|j| {
            let row = (m0 + copy_row + 64 * j as u32).min(m - 1);
            row as usize * row_bytes + (copy_chunk * 16) as usize
        });
        let b_rows: [usize; B_COPIES] = core::array::from_fn(|j| {
            let row = (n0 + copy_row + 64 * j as u32).min(n - 1);
            row as usize * row_bytes + (copy_chunk * 16) as usize
        });

        // Issues the copies of K slice `kt` into stage `slot`.
        let load = |kt: u32, slot: u32| {
            let k_off = (kt * MMA_BK_BYTES) as usize;
            let inside = k_off + ((copy_chunk * 16) as usize) < row_bytes;
            // SAFETY: `slot < MMA_STAGES`: inside the dynamic shared memory.
            let stage = unsafe { smem.add((slot * MMA_STAGE_BYTES) as usize + copy_dst) };
            unroll!(j in [0, 1] {
                // SAFETY: row `64·j + copy_row` of the A slice; the source is inside `a`
                // (clamped row, chunk inside the row when `inside`).
                unsafe {
                    let dst = stage.add(j * 64 * MMA_BK_BYTES as usize);
                    if inside {
                        async_copy::copy_16(dst, a_src.add(a_rows[j] + k_off));
                    } else {
                        mem::store_v4_u32(dst.cast(), [0; 4]);
                    }
                }
            });
            unroll!(j in [0, 1, 2, 3] {
                // SAFETY: as for A, in the B slice after the A slice.
                unsafe {
                    let dst = stage.add(((MMA_BM + 64 * j as u32) * MMA_BK_BYTES) as usize);
                    if inside {
                        async_copy::copy_16(dst, b_src.add(b_rows[j] + k_off));
                    } else {
                        mem::store_v4_u32(dst.cast(), [0; 4]);
                    }
                }
            });
        };

        // ldmatrix addresses. A: lane l reads row `l % 16` of a 16-row tile, chunk
        // `2·ks + l / 16` of K slice half `ks`; B (two n8 fragments per x4): row
        // `l % 8 + 8·(l / 16)` of a 16-row tile, chunk `2·ks + (l / 8) % 2`. Tiles 16 rows
        // apart keep the swizzle, so these offsets are per lane and `ks` only.
        let a_row = wm * 64 + lane % 16;
        let b_row = MMA_BM + wn * 64 + lane % 8 + 8 * (lane / 16);
        let a_off = [swizzled(a_row, lane / 16), swizzled(a_row, 2 + lane / 16)];
        let b_off = [
            swizzled(b_row, (lane / 8) % 2),
            swizzled(b_row, 2 + (lane / 8) % 2),
        ];

        let mut acc = [[[0.0f32; 4]; 8]; 4];

        for s in 0..MMA_STAGES - 1 {
            if s < k_tiles {
                load(s, s);
            }
            async_copy::commit_group();
        }

        let mut slot = 0;
        for kt in 0..k_tiles {
            async_copy::wait_group::<{ MMA_STAGES - 2 }>();
            sync_threads();
            let next = kt + MMA_STAGES - 1;
            if next < k_tiles {
                load(next, (slot + MMA_STAGES - 1) % MMA_STAGES);
            }
            async_copy::commit_group();

            // SAFETY: inside the dynamic shared memory.
            let stage = unsafe { smem.add((slot * MMA_STAGE_BYTES) as usize) };
            unroll!(ks in [0, 1] {
                let mut af = [[0u32; 4]; 4];
                let mut bf = [[0u32; 4]; 4];
                unroll!(i in [0, 1, 2, 3] {
                    // SAFETY: converged warp; 16-byte aligned rows of this stage, written
                    // by the copies the barrier above made visible.
                    af[i] = unsafe {
                        ldmatrix_x4(stage.add((a_off[ks] + i as u32 * 16 * MMA_BK_BYTES) as usize).cast())
                    };
                });
                unroll!(j in [0, 1, 2, 3] {
                    // SAFETY: as for A.
                    bf[j] = unsafe {
                        ldmatrix_x4(stage.add((b_off[ks] + j as u32 * 16 * MMA_BK_BYTES) as usize).cast())
                    };
                });
                unroll!(i in [0, 1, 2, 3] {
                    unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                        let b = [bf[j / 2][2 * (j % 2)], bf[j / 2][2 * (j % 2) + 1]];
                        // SAFETY: every lane of the warp runs this unconditionally.
                        unsafe { T::mma(&mut acc[i][j], af[i], b) };
                    });
                });
            });
            slot = if slot + 1 == MMA_STAGES { 0 } else { slot + 1 };
        }
        async_copy::wait_all();

        // Epilogue: fragment element r of tile (i, j) is C[row0 + 8·(r / 2)][col + r % 2].
        let pairs = n.is_multiple_of(2);
        unroll!(i in [0, 1, 2, 3] {
            unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                let row0 = m0 + wm * 64 + i as u32 * 16 + lane / 4;
                let col = n0 + wn * 64 + j as u32 * 8 + 2 * (lane % 4);
                unroll!(h in [0, 1] {
                    let row = row0 + 8 * h as u32;
                    let v = [acc[i][j][2 * h], acc[i][j][2 * h + 1]];
                    if row < m && col < n {
                        // SAFETY: (row, col) inside C; with `pairs`, col + 1 < n too (col
                        // and n even) and the pair is aligned to its size (C's allocation is).
                        unsafe {
                            let p = c.add(row as usize * n as usize + col as usize);
                            if pairs {
                                T::store_pair(p, v[0], v[1]);
                            } else {
                                *p = T::from_f32(v[0]);
                                if col + 1 < n {
                                    *p.add(1) = T::from_f32(v[1]);
                                }
                            }
                        }
                    }
                });
            });
        });
    }

    macro_rules! entry {
        ($name:ident, $t:ty, $what:literal) => {
            #[doc = concat!("`C = A·Bᵀ` in ", $what, " on `mma.sync` (sm_80+); see the ",
                            "[module docs](super) for the design and the launch shape.")]
            ///
            /// # Safety
            /// - `a` holds at least m·k and `b` at least n·k elements, `c` points to an
            ///   allocation of at least m·n elements that nothing else accesses during the
            ///   launch; all three 16-byte aligned (whole device allocations are);
            /// - `m`, `n` ≥ 1 and `k` a multiple of 8 (bf16/f16) or 4 (f32), ≥ 1;
            /// - launched with the [module's launch shape](super): `MMA_THREADS` threads,
            ///   a 1-D grid of `ceil(m / MMA_BM) · ceil(n / MMA_BN)` blocks,
            ///   `MMA_SHARED_BYTES` of dynamic shared memory.
            #[kernel]
            pub unsafe fn $name(m: u32, n: u32, k: u32, a: &[$t], b: &[$t], c: *mut $t) {
                // SAFETY: forwarded from the kernel's contract.
                unsafe { gemm::<$t>(m, n, k, a.as_ptr(), b.as_ptr(), c) }
            }
        };
    }

    entry!(gemm_mma_bf16, bf16, "bf16 (f32 accumulation, bf16 out)");
    entry!(gemm_mma_f16, f16, "f16 (f32 accumulation, f16 out)");
    entry!(gemm_mma_tf32, f32, "TF32 (f32 in and out)");
}
