//! The kernel body, [`gemm`], that every entry point calls: the `cp.async` ring of stages,
//! the double-buffered `ldmatrix` fragments, the `mma.sync` sub-steps and the epilogue;
//! with the shared-memory addressing they use (`Smem`).

use super::elem::MmaElem;
use super::layout::{ldmatrix_a, ldmatrix_b, swizzled};
use super::{CHUNKS, MMA_BK_BYTES, MMA_BM, MMA_BN, MMA_STAGE_BYTES, MMA_STAGES, MMA_THREADS};
use crate::gemm_tc::tile_coords;
use cuda_std::mem::async_copy;
use cuda_std::mma::ldmatrix_x4_window;
use cuda_std::prelude::*;
use cuda_std::shared::window::SharedAddr;

/// The block's dynamic shared memory as the loop's loads and copies address it: its
/// 32-bit shared address, so that the constant parts of an offset fold into the
/// instructions' immediates (`cuda_std::mma::ldmatrix_x4` and `async_copy::copy_16` take
/// generic pointers and convert each in 64-bit arithmetic).
#[derive(Clone, Copy)]
struct Smem {
    addr: SharedAddr,
}

impl Smem {
    /// The dynamic shared memory of this block.
    #[inline(always)]
    fn new() -> Self {
        Self {
            addr: SharedAddr::of(dynamic_shared::<u8>()),
        }
    }

    /// `ldmatrix.sync.aligned.m8n8.x4.shared.b16` of the rows at byte `off` of the
    /// dynamic shared memory (per lane): `cuda_std::mma::ldmatrix_x4_window`.
    ///
    /// # Safety
    /// As `cuda_std::mma::ldmatrix_x4_window`: all 32 lanes call it convergently; `off`
    /// is 16-byte aligned and 16 bytes from it lie inside the dynamic shared memory; no
    /// other thread writes them concurrently.
    #[inline(always)]
    unsafe fn ldmatrix_x4(self, off: u32) -> [u32; 4] {
        // SAFETY: caller contract.
        unsafe { ldmatrix_x4_window(self.addr.byte_add(off)) }
    }

    /// Where `enabled`: starts an asynchronous 16-byte copy global → shared, to byte
    /// `off` of the dynamic shared memory, of `src`'s 16 bytes if `full`, else of none,
    /// zero-filling the rest; where not, nothing (`async_copy::copy_16_zero_fill`: both
    /// conditions are operands of the one instruction, no branch). Completion as
    /// `async_copy::copy_16`'s (`commit_group`, `wait_group`).
    ///
    /// # Safety
    /// Where `enabled`: `off` is 16-byte aligned and 16 bytes from it lie inside the
    /// dynamic shared memory; if `full`, `src` points to **global** memory, 16-byte
    /// aligned and valid for 16 bytes; neither range is accessed by other code until
    /// the copy has completed.
    #[inline(always)]
    unsafe fn copy_16_zfill(self, off: u32, src: *const u8, full: bool, enabled: bool) {
        let src_bytes = if full { 16 } else { 0 };
        // SAFETY: caller contract.
        unsafe { async_copy::copy_16_zero_fill(self.addr.byte_add(off), src, src_bytes, enabled) };
    }
}

/// Copies of 16 bytes each thread issues per stage: `A`'s 128 rows × 8 chunks, then
/// `B`'s 256 × 8, over 256 threads.
const A_COPIES: usize = (MMA_BM * CHUNKS / MMA_THREADS) as usize;
const B_COPIES: usize = (MMA_BN * CHUNKS / MMA_THREADS) as usize;
const _: () = assert!(A_COPIES == 4 && B_COPIES == 8 && MMA_THREADS / CHUNKS == 32);

/// The kernel body for element type `T`; see the [module docs](super).
///
/// # Safety
/// As the entry points' `# Safety` sections.
#[inline(always)]
pub(super) unsafe fn gemm<T: MmaElem>(m: u32, n: u32, k: u32, a: *const T, b: *const T, c: *mut T) {
    let tid = thread_idx_x();
    let lane = tid % 32;
    let warp = tid / 32;
    let (wm, wn) = (warp / 4, warp % 4);
    let (tile_m, tile_n) = tile_coords(block_idx_x(), m.div_ceil(MMA_BM), n.div_ceil(MMA_BN));
    let (m0, n0) = (tile_m * MMA_BM, tile_n * MMA_BN);
    let row_bytes = k as usize * T::BYTES as usize;
    let k_tiles = row_bytes.div_ceil(MMA_BK_BYTES as usize) as u32;
    let smem = Smem::new();

    // Copy duty (`layout::copy`): chunk `tid % 8` of tile rows `tid / 8 + 32·j`; the
    // swizzled chunk is the same for every j (32 rows keep `row % 8`). Copy j runs
    // while `32·j` < the rows left in the matrix from the thread's first row.
    let copy_chunk = tid % CHUNKS;
    let copy_row = tid / CHUNKS;
    let copy_dst = swizzled(copy_row, copy_chunk);
    let rows_a = m.saturating_sub(m0 + copy_row);
    let rows_b = n.saturating_sub(n0 + copy_row);
    let first = |row0: u32| row0 as usize * row_bytes + (copy_chunk * 16) as usize;
    // Wrapping: where the thread's first row is past the matrix (rows_a == 0) the
    // pointer is never read.
    let a_src = a.cast::<u8>().wrapping_add(first(m0 + copy_row));
    let b_src = b.cast::<u8>().wrapping_add(first(n0 + copy_row));
    let copy_stride = 32 * row_bytes;

    // Issues copy `j` (0..12: A's copies 0..4, then B's 0..8) of K slice `kt` into
    // stage `slot` if `live`: 16 bytes where the chunk lies inside `k`, zeros where past
    // it, nothing for rows past `m` (`n`). One predicated instruction, no branch, so the
    // copies mix with the MMAs around them.
    let copy = |kt: u32, slot: u32, j: usize, live: bool| {
        let (src, rows, jj, first_row) = if j < A_COPIES {
            (a_src, rows_a, j, 0)
        } else {
            (b_src, rows_b, j - A_COPIES, MMA_BM)
        };
        let row = src.wrapping_add(jj * copy_stride);
        let k_off = kt as usize * MMA_BK_BYTES as usize;
        let inside = k_off + ((copy_chunk * 16) as usize) < row_bytes;
        let dst_off =
            slot * MMA_STAGE_BYTES + (first_row + 32 * jj as u32) * MMA_BK_BYTES + copy_dst;
        // SAFETY: `slot < MMA_STAGES`: `dst_off` is inside the dynamic shared memory,
        // 16-byte aligned; no thread reads this slot until the barrier after this step's
        // `wait_group` (all reads of its previous contents were before the previous
        // step's barrier). Where it copies (row `32·jj` below the thread's first row is
        // < m, or n) and `inside`, `src` is a 16-byte chunk inside the row's k elements
        // (`row_bytes` is a multiple of 16), 16-byte aligned as `a`, `b` are; without
        // `inside` nothing is read (source size 0) from the address, the thread's chunk
        // at K offset 0 (inside the row when rows have at least 128 bytes).
        unsafe {
            smem.copy_16_zfill(
                dst_off,
                if inside { row.wrapping_add(k_off) } else { row },
                inside,
                live && 32 * (jj as u32) < rows,
            );
        }
    };

    // ldmatrix addresses (`layout::ldmatrix_a`/`_b`): tiles 16 rows apart keep the
    // swizzle, and sub-step `ks` only flips chunk bits 1–2 (`2·ks ^ c`), so tile `t` of
    // sub-step `ks` is at `(off ^ 32·ks) + 2048·t` from tile 0 of sub-step 0.
    let a_off = ldmatrix_a(wm, 0, lane, 0);
    let b_off = ldmatrix_b(wn, 0, lane, 0);
    let tile_bytes = 16 * MMA_BK_BYTES;

    // Loads the fragments of sub-step `ks` of the stage at byte `stage` of the shared
    // memory into `fa` (A tiles 0..4) and `fb` (B tiles 0..4, two n8 fragments each).
    macro_rules! load_fragments {
        ($stage:expr, $ks:expr, $fa:ident, $fb:ident) => {{
            let stage: u32 = $stage;
            let flip = 32 * ($ks as u32);
            unroll!(t in [0, 1, 2, 3] {
                // SAFETY: converged warp (every lane runs this unconditionally, under
                // block-uniform conditions); 16-byte aligned rows of a stage (`stage`
                // is a slot's offset) whose copies the last `wait_group` + barrier made
                // visible.
                $fa[t] = T::operand(unsafe {
                    smem.ldmatrix_x4(stage + (a_off ^ flip) + t as u32 * tile_bytes)
                });
                // SAFETY: as for A.
                $fb[t] = T::operand(unsafe {
                    smem.ldmatrix_x4(stage + (b_off ^ flip) + t as u32 * tile_bytes)
                });
            });
        }};
    }

    let mut acc = [[[0.0f32; 4]; 8]; 4];

    for s in 0..MMA_STAGES - 1 {
        unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] {
            copy(s, s, j, s < k_tiles);
        });
        async_copy::commit_group();
    }
    async_copy::wait_group::<{ MMA_STAGES - 2 }>();
    sync_threads();

    // Two sets of fragments: sub-steps 0 and 2 compute on set 0, 1 and 3 on set 1.
    let (mut fa0, mut fb0) = ([[0u32; 4]; 4], [[0u32; 4]; 4]);
    let (mut fa1, mut fb1) = ([[0u32; 4]; 4], [[0u32; 4]; 4]);
    let mut read_slot = 0;
    let mut write_slot = MMA_STAGES - 1;
    // k ≥ 1, so k_tiles ≥ 1: stage 0 exists.
    load_fragments!(0, 0, fa0, fb0);

    // One K step: sub-step `$ks` computes on (`$fa`, `$fb`) after loading sub-step
    // `$ks + 1` into (`$na`, `$nb`), from the next stage at sub-step 3.
    macro_rules! sub_step {
        ($kt:ident, $ks:literal, $fa:ident, $fb:ident, $na:ident, $nb:ident) => {{
            if $ks == 3 {
                // The next stage: this thread's copies, then everyone's.
                async_copy::wait_group::<{ MMA_STAGES - 2 }>();
                sync_threads();
                read_slot = if read_slot + 1 == MMA_STAGES { 0 } else { read_slot + 1 };
                if $kt + 1 < k_tiles {
                    load_fragments!(read_slot * MMA_STAGE_BYTES, 0, $na, $nb);
                }
            } else {
                load_fragments!(read_slot * MMA_STAGE_BYTES, $ks + 1, $na, $nb);
            }
            // The copies of the stage `MMA_STAGES - 1` ahead: A at sub-step 0, B's
            // halves at 1 and 2, then one commit (an empty group past the end keeps
            // the `wait_group` count).
            let next = $kt + MMA_STAGES - 1;
            if $ks < 3 {
                unroll!(q in [0, 1, 2, 3] {
                    copy(next, write_slot, 4 * $ks + q, next < k_tiles);
                });
            }
            if $ks == 2 {
                async_copy::commit_group();
                write_slot = if write_slot + 1 == MMA_STAGES { 0 } else { write_slot + 1 };
            }
            unroll!(i in [0, 1, 2, 3] {
                unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                    let b = [$fb[j / 2][2 * (j % 2)], $fb[j / 2][2 * (j % 2) + 1]];
                    // SAFETY: every lane of the warp runs this unconditionally.
                    unsafe { T::mma(&mut acc[i][j], $fa[i], b) };
                });
            });
        }};
    }

    for kt in 0..k_tiles {
        sub_step!(kt, 0, fa0, fb0, fa1, fb1);
        sub_step!(kt, 1, fa1, fb1, fa0, fb0);
        sub_step!(kt, 2, fa0, fb0, fa1, fb1);
        sub_step!(kt, 3, fa1, fb1, fa0, fb0);
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
