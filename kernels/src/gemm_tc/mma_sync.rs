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

/// Where the kernel puts and reads each byte of a pipeline stage: pure functions, the model
/// the unit tests check against `cuda_std::mma::layout`'s fragment maps (and the kernel's
/// address arithmetic, which computes the same offsets incrementally).
///
/// A stage is [`MMA_BM`] rows of `A` then [`MMA_BN`] rows of `B` ("stage rows"), each
/// [`MMA_BK_BYTES`] = 4 chunks of 16 bytes of one matrix row's K slice.
pub mod layout {
    use super::{MMA_BK_BYTES, MMA_BM};

    /// Byte offset in a stage of 16-byte chunk `chunk` (0..4) of stage row `row`: stored at
    /// chunk `chunk ^ ((row / 2) % 4)` (the 8 rows one `ldmatrix` phase reads, 8
    /// consecutive rows at one logical chunk, land in 8 different 16-byte bank groups).
    #[must_use]
    pub const fn swizzled(row: u32, chunk: u32) -> u32 {
        row * MMA_BK_BYTES + ((chunk ^ ((row >> 1) & 3)) << 4)
    }

    /// `(stage row, chunk)` that thread `tid` (0..256) copies in its copy `j` of `A` (j < 2)
    /// or, with `b`, of `B` (j < 4; `B`'s rows follow `A`'s): matrix row `tid / 4 + 64·j`
    /// of the tile, chunk `tid % 4`.
    #[must_use]
    pub const fn copy(tid: u32, j: u32, b: bool) -> (u32, u32) {
        let first = if b { MMA_BM } else { 0 };
        (first + tid / 4 + 64 * j, tid % 4)
    }

    /// Byte offset of the row that lane `lane` addresses in the `ldmatrix.x4` of `A`'s
    /// 16-row tile `i` (0..4) of warp row `wm` (0..2), K half `ks` (0..2: bytes
    /// `32·ks..32·ks + 32` of the slice): row `64·wm + 16·i + lane % 16`, chunk
    /// `2·ks + lane / 16`. The registers are then an `A` fragment of `m16n8k16` (16-bit
    /// types) or `m16n8k8` (TF32).
    #[must_use]
    pub const fn ldmatrix_a(wm: u32, i: u32, lane: u32, ks: u32) -> u32 {
        swizzled(64 * wm + 16 * i + lane % 16, 2 * ks + lane / 16)
    }

    /// Byte offset of the row that lane `lane` addresses in the `ldmatrix.x4` of `B`'s
    /// 16-row tile `j` (0..4, i.e. `n` columns `16·j..16·j + 16` of the warp's 64) of warp
    /// column `wn` (0..4), K half `ks`: stage row `MMA_BM + 64·wn + 16·j + lane % 8 +
    /// 8·(lane / 16)`, chunk `2·ks + (lane / 8) % 2`. Registers 0, 1 are the `B` fragment of
    /// columns `16·j..16·j + 8`, registers 2, 3 that of the next 8.
    #[must_use]
    pub const fn ldmatrix_b(wn: u32, j: u32, lane: u32, ks: u32) -> u32 {
        swizzled(
            MMA_BM + 64 * wn + 16 * j + lane % 8 + 8 * (lane / 16),
            2 * ks + (lane / 8) % 2,
        )
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod kernels_sm80 {
    use super::layout::{ldmatrix_a, ldmatrix_b, swizzled};
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

        // ldmatrix addresses (`layout::ldmatrix_a`/`_b`): tiles 16 rows apart keep the
        // swizzle, so the offsets of tile 0 plus 16 rows per tile serve every tile.
        let a_off = [ldmatrix_a(wm, 0, lane, 0), ldmatrix_a(wm, 0, lane, 1)];
        let b_off = [ldmatrix_b(wn, 0, lane, 0), ldmatrix_b(wn, 0, lane, 1)];

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

#[cfg(test)]
mod tests {
    extern crate std;
    use super::layout::{copy, ldmatrix_a, ldmatrix_b, swizzled};
    use super::{MMA_BK_BYTES, MMA_BM, MMA_BN, MMA_STAGE_BYTES, MMA_THREADS};
    use cuda_std::mma::layout as frag;
    use std::vec;
    use std::vec::Vec;

    /// A stage as the copies leave it, for a K slice whose byte `kb` of stage row `r` holds
    /// `value(r, kb)`: every thread's copies placed at their swizzled offsets.
    fn stage_image(value: impl Fn(u32, u32) -> u8) -> Vec<u8> {
        let mut img = vec![0u8; MMA_STAGE_BYTES as usize];
        let mut written = vec![0u32; MMA_STAGE_BYTES as usize];
        for tid in 0..MMA_THREADS {
            for (b, copies) in [
                (false, MMA_BM * 4 / MMA_THREADS),
                (true, MMA_BN * 4 / MMA_THREADS),
            ] {
                for j in 0..copies {
                    let (row, chunk) = copy(tid, j, b);
                    let dst = swizzled(row, chunk);
                    // The kernel's incremental form: tile row tid / 4, then 64 rows per copy.
                    let first = if b { MMA_BM } else { 0 };
                    assert_eq!(
                        dst,
                        (first + 64 * j) * MMA_BK_BYTES + swizzled(tid / 4, tid % 4)
                    );
                    for byte in 0..16 {
                        img[(dst + byte) as usize] = value(row, chunk * 16 + byte);
                        written[(dst + byte) as usize] += 1;
                    }
                }
            }
        }
        assert!(
            written.iter().all(|&w| w == 1),
            "every stage byte written once"
        );
        img
    }

    /// `ldmatrix.x4` on `img`: register `q` of lane `l` is the 4 bytes at
    /// `addr[8q + l / 4] + 4·(l % 4)` (PTX ISA "ldmatrix": thread `l` holds row `l / 4`,
    /// elements `2·(l % 4)`, `+1` of each 8×8 matrix of 16-bit elements).
    fn ldmatrix_x4(img: &[u8], addr: impl Fn(u32) -> u32) -> [[u32; 4]; 32] {
        core::array::from_fn(|l| {
            core::array::from_fn(|q| {
                let at = (addr(8 * q as u32 + l as u32 / 4) + 4 * (l as u32 % 4)) as usize;
                u32::from_le_bytes([img[at], img[at + 1], img[at + 2], img[at + 3]])
            })
        })
    }

    /// Element `(row, k)` of a K slice of 16-bit (`bytes == 2`) or 32-bit elements, as
    /// stored: a code of the stage row and the element's index in the slice, so any
    /// misplaced element shows.
    fn code(row: u32, k: u32) -> u32 {
        (row << 8) | k
    }

    #[test]
    fn the_shared_layout_is_free_of_bank_conflicts() {
        // The 8 rows of an ldmatrix phase (8 consecutive lanes' addresses) hit 8 distinct
        // 16-byte bank groups (bytes mod 128).
        for ks in 0..2 {
            for lane0 in [0, 8, 16, 24] {
                let groups: std::collections::BTreeSet<u32> = (lane0..lane0 + 8)
                    .map(|l| (ldmatrix_a(1, 2, l, ks) % 128) / 16)
                    .collect();
                assert_eq!(groups.len(), 8, "A ks {ks} lanes {lane0}..");
                let groups: std::collections::BTreeSet<u32> = (lane0..lane0 + 8)
                    .map(|l| (ldmatrix_b(3, 1, l, ks) % 128) / 16)
                    .collect();
                assert_eq!(groups.len(), 8, "B ks {ks} lanes {lane0}..");
            }
        }
    }

    #[test]
    fn ldmatrix_reads_the_mma_fragments_of_16_bit_elements() {
        // 16-bit elements: element k of stage row r is bytes 2k, 2k+1 (32 per row).
        let img = stage_image(|r, kb| (code(r, kb / 2) >> (8 * (kb % 2))) as u8);
        let half = |reg: u32, h: u32| (reg >> (16 * h)) & 0xffff;
        for ks in 0..2 {
            for wm in 0..2 {
                for i in 0..4 {
                    // The kernel adds 16 rows per tile to tile 0's offsets.
                    for l in 0..32 {
                        assert_eq!(
                            ldmatrix_a(wm, i, l, ks),
                            ldmatrix_a(wm, 0, l, ks) + i * 1024
                        );
                    }
                    let regs = ldmatrix_x4(&img, |l| ldmatrix_a(wm, i, l, ks));
                    for l in 0..32 {
                        for q in 0..4 {
                            for h in 0..2 {
                                let (row, col) = frag::a_m16n8k16(l, q, h);
                                let want = code(64 * wm + 16 * i + row, 16 * ks + col) & 0xffff;
                                assert_eq!(half(regs[l as usize][q as usize], h), want);
                            }
                        }
                    }
                }
            }
            for wn in 0..4 {
                for j in 0..4 {
                    for l in 0..32 {
                        assert_eq!(
                            ldmatrix_b(wn, j, l, ks),
                            ldmatrix_b(wn, 0, l, ks) + j * 1024
                        );
                    }
                    let regs = ldmatrix_x4(&img, |l| ldmatrix_b(wn, j, l, ks));
                    for l in 0..32 {
                        for q in 0..4 {
                            // Registers 2q', 2q'+1 are the fragment of n block 2j + q'.
                            let (nb, reg) = (2 * j + q / 2, q % 2);
                            for h in 0..2 {
                                let (k, n) = frag::b_m16n8k16(l, reg, h);
                                let row = MMA_BM + 64 * wn + 8 * nb + n;
                                let want = code(row, 16 * ks + k) & 0xffff;
                                assert_eq!(half(regs[l as usize][q as usize], h), want);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ldmatrix_reads_the_mma_fragments_of_tf32_elements() {
        // 32-bit elements: element k of stage row r is bytes 4k..4k+4 (16 per row).
        let img = stage_image(|r, kb| (code(r, kb / 4) >> (8 * (kb % 4))) as u8);
        for ks in 0..2 {
            for wm in 0..2 {
                for i in 0..4 {
                    let regs = ldmatrix_x4(&img, |l| ldmatrix_a(wm, i, l, ks));
                    for l in 0..32 {
                        for q in 0..4 {
                            let (row, col) = frag::a_m16n8k8_tf32(l, q);
                            let want = code(64 * wm + 16 * i + row, 8 * ks + col);
                            assert_eq!(regs[l as usize][q as usize], want);
                        }
                    }
                }
            }
            for wn in 0..4 {
                for j in 0..4 {
                    let regs = ldmatrix_x4(&img, |l| ldmatrix_b(wn, j, l, ks));
                    for l in 0..32 {
                        for q in 0..4 {
                            let (nb, reg) = (2 * j + q / 2, q % 2);
                            let (k, n) = frag::b_m16n8k8_tf32(l, reg);
                            let row = MMA_BM + 64 * wn + 8 * nb + n;
                            assert_eq!(regs[l as usize][q as usize], code(row, 8 * ks + k));
                        }
                    }
                }
            }
        }
    }
}
