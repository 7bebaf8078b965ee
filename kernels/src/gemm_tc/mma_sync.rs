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

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use kernels_sm80::*;

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

/// Where the kernel puts and reads each byte of a pipeline stage: pure functions, the model
/// the unit tests check against `cuda_std::mma::layout`'s fragment maps (and the kernel's
/// address arithmetic, which computes the same offsets incrementally).
///
/// A stage is [`MMA_BM`] rows of `A` then [`MMA_BN`] rows of `B` ("stage rows"), each
/// [`MMA_BK_BYTES`] = 8 chunks of 16 bytes of one matrix row's K slice.
pub mod layout {
    use super::{CHUNKS, MMA_BK_BYTES, MMA_BM};

    /// Byte offset in a stage of 16-byte chunk `chunk` (0..8) of stage row `row`: stored at
    /// chunk `chunk ^ (row % 8)` (8 consecutive rows at one logical chunk, what one
    /// `ldmatrix` phase reads, land in 8 different 16-byte bank groups).
    #[must_use]
    pub const fn swizzled(row: u32, chunk: u32) -> u32 {
        row * MMA_BK_BYTES + ((chunk ^ (row % CHUNKS)) << 4)
    }

    /// `(stage row, chunk)` that thread `tid` (0..256) copies in its copy `j` of `A` (j < 4)
    /// or, with `b`, of `B` (j < 8; `B`'s rows follow `A`'s): matrix row `tid / 8 + 32·j`
    /// of the tile, chunk `tid % 8`.
    #[must_use]
    pub const fn copy(tid: u32, j: u32, b: bool) -> (u32, u32) {
        let first = if b { MMA_BM } else { 0 };
        (first + tid / CHUNKS + 32 * j, tid % CHUNKS)
    }

    /// Byte offset of the row that lane `lane` addresses in the `ldmatrix.x4` of `A`'s
    /// 16-row tile `i` (0..4) of warp row `wm` (0..2), sub-step `ks` (0..4: bytes
    /// `32·ks..32·ks + 32` of the slice): row `64·wm + 16·i + lane % 16`, chunk
    /// `2·ks + lane / 16`. The registers are then an `A` fragment of `m16n8k16` (16-bit
    /// types) or `m16n8k8` (TF32).
    #[must_use]
    pub const fn ldmatrix_a(wm: u32, i: u32, lane: u32, ks: u32) -> u32 {
        swizzled(64 * wm + 16 * i + lane % 16, 2 * ks + lane / 16)
    }

    /// Byte offset of the row that lane `lane` addresses in the `ldmatrix.x4` of `B`'s
    /// 16-row tile `j` (0..4, i.e. `n` columns `16·j..16·j + 16` of the warp's 64) of warp
    /// column `wn` (0..4), sub-step `ks` (0..4): stage row `MMA_BM + 64·wn + 16·j + lane % 8
    /// + 8·(lane / 16)`, chunk `2·ks + (lane / 8) % 2`. Registers 0, 1 are the `B` fragment
    /// of columns `16·j..16·j + 8`, registers 2, 3 that of the next 8.
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
    use super::{CHUNKS, MMA_BK_BYTES, MMA_BM, MMA_BN, MMA_STAGE_BYTES, MMA_STAGES, MMA_THREADS};
    use crate::gemm_tc::{OutElem, tile_coords};
    use cuda_std::half::{bf16, f16};
    use cuda_std::mem::async_copy;
    use cuda_std::mma::{
        Bf16, F16, FragA, FragAcc, FragB, M16N8K8, M16N8K16, Tf32, ldmatrix_x4_window, mma_sync,
        tf32_from_f32,
    };
    use cuda_std::prelude::*;
    use cuda_std::shared::window::SharedAddr;

    /// An element type of the `mma.sync` GEMM: how one warp MMA is issued on raw fragment
    /// registers, and how results are written.
    pub trait MmaElem: OutElem {
        /// The `ldmatrix` registers of an operand made ready for [`MmaElem::mma`]: as they
        /// are for bf16/f16, each `f32` rounded to TF32 (to nearest, ties away from zero)
        /// for TF32.
        fn operand(regs: [u32; 4]) -> [u32; 4];

        /// `acc += A·B` for one `m16n8` tile and one 32-byte-per-row K sub-step: `a`, `b` the
        /// [`MmaElem::operand`] registers (one `m16n8k16`, or one `m16n8k8` for TF32).
        ///
        /// # Safety
        /// All 32 lanes of the warp call it convergently.
        unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]);
    }

    impl MmaElem for bf16 {
        #[inline(always)]
        fn operand(regs: [u32; 4]) -> [u32; 4] {
            regs
        }

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
        fn operand(regs: [u32; 4]) -> [u32; 4] {
            regs
        }

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
        fn operand(regs: [u32; 4]) -> [u32; 4] {
            regs.map(|r| tf32_from_f32(f32::from_bits(r)).to_bits())
        }

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
            unsafe {
                async_copy::copy_16_zero_fill(self.addr.byte_add(off), src, src_bytes, enabled)
            };
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
    unsafe fn gemm<T: MmaElem>(m: u32, n: u32, k: u32, a: *const T, b: *const T, c: *mut T) {
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
    use super::{
        CHUNKS, MMA_BK_BYTES, MMA_BM, MMA_BN, MMA_SHARED_BYTES, MMA_STAGE_BYTES, MMA_THREADS,
        gemm_mma_bf16, gemm_mma_f16, gemm_mma_tf32,
    };
    use crate::gemm_tc::OutElem;
    use core::any::Any;
    use core::ffi::c_void;
    use cuda_emu::{self as emu, EmuOptions, HostBuffer};
    use cuda_std::half::{bf16, f16};
    use cuda_std::launch::{Kernel, ParamSizes};
    use cuda_std::mma::layout as frag;
    use cuda_std::mma::tf32_from_f32;
    use std::boxed::Box;
    use std::collections::BTreeSet;
    use std::vec;
    use std::vec::Vec;

    /// Copies per thread and stage of `A` (`b` false) or `B`.
    fn copies(b: bool) -> u32 {
        (if b { MMA_BN } else { MMA_BM }) * CHUNKS / MMA_THREADS
    }

    /// A stage as the copies leave it, for a K slice whose byte `kb` of stage row `r` holds
    /// `value(r, kb)`: every thread's copies placed at their swizzled offsets.
    fn stage_image(value: impl Fn(u32, u32) -> u8) -> Vec<u8> {
        let mut img = vec![0u8; MMA_STAGE_BYTES as usize];
        let mut written = vec![0u32; MMA_STAGE_BYTES as usize];
        for tid in 0..MMA_THREADS {
            for b in [false, true] {
                for j in 0..copies(b) {
                    let (row, chunk) = copy(tid, j, b);
                    let dst = swizzled(row, chunk);
                    // The kernel's incremental form: tile row tid / 8, then 32 rows per copy.
                    let first = if b { MMA_BM } else { 0 };
                    assert_eq!(
                        dst,
                        (first + 32 * j) * MMA_BK_BYTES + swizzled(tid / 8, tid % 8)
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

    /// Element `(row, k)` of a K slice, as stored: a code of the stage row and the element's
    /// index in the slice (< 64), so any misplaced element shows.
    fn code(row: u32, k: u32) -> u32 {
        (row << 8) | k
    }

    /// The 16-byte bank groups (bytes mod 128) of a set of stage offsets.
    fn groups(offsets: impl Iterator<Item = u32>) -> BTreeSet<u32> {
        offsets.map(|o| (o % 128) / 16).collect()
    }

    #[test]
    fn ldmatrix_phases_are_free_of_bank_conflicts() {
        // The 8 rows of an ldmatrix phase (8 consecutive lanes' addresses) hit 8 distinct
        // 16-byte bank groups, for every warp, tile and sub-step.
        for ks in 0..4 {
            for lane0 in [0, 8, 16, 24] {
                for (w, t) in [(0, 0), (1, 3), (0, 2)] {
                    let a = groups((lane0..lane0 + 8).map(|l| ldmatrix_a(w, t, l, ks)));
                    assert_eq!(
                        a.len(),
                        8,
                        "A warp row {w} tile {t} ks {ks} lanes {lane0}.."
                    );
                }
                for (w, t) in [(0, 0), (3, 1), (2, 3)] {
                    let b = groups((lane0..lane0 + 8).map(|l| ldmatrix_b(w, t, l, ks)));
                    assert_eq!(
                        b.len(),
                        8,
                        "B warp col {w} tile {t} ks {ks} lanes {lane0}.."
                    );
                }
            }
        }
    }

    #[test]
    fn copy_phases_are_free_of_bank_conflicts() {
        // cp.async of 16 bytes per thread: each 8 consecutive threads of a warp write 8
        // distinct bank groups (one whole 128-byte row), for every copy of A and B.
        for b in [false, true] {
            for j in 0..copies(b) {
                for tid0 in (0..MMA_THREADS).step_by(8) {
                    let g = groups((tid0..tid0 + 8).map(|t| {
                        let (row, chunk) = copy(t, j, b);
                        swizzled(row, chunk)
                    }));
                    assert_eq!(g.len(), 8, "b {b} copy {j} threads {tid0}..");
                }
            }
        }
    }

    #[test]
    fn sub_steps_and_tiles_are_offsets_of_the_first() {
        // The kernel's address arithmetic: tile t of sub-step ks at (tile 0, ks 0) ^ 32·ks
        // + 16 rows per tile.
        for ks in 0..4 {
            for t in 0..4 {
                for l in 0..32 {
                    for wm in 0..2 {
                        assert_eq!(
                            ldmatrix_a(wm, t, l, ks),
                            (ldmatrix_a(wm, 0, l, 0) ^ (32 * ks)) + t * 16 * MMA_BK_BYTES
                        );
                    }
                    for wn in 0..4 {
                        assert_eq!(
                            ldmatrix_b(wn, t, l, ks),
                            (ldmatrix_b(wn, 0, l, 0) ^ (32 * ks)) + t * 16 * MMA_BK_BYTES
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn ldmatrix_reads_the_mma_fragments_of_16_bit_elements() {
        // 16-bit elements: element k of stage row r is bytes 2k, 2k+1 (64 per row).
        let img = stage_image(|r, kb| (code(r, kb / 2) >> (8 * (kb % 2))) as u8);
        let half = |reg: u32, h: u32| (reg >> (16 * h)) & 0xffff;
        for ks in 0..4 {
            for wm in 0..2 {
                for i in 0..4 {
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
        // 32-bit elements: element k of stage row r is bytes 4k..4k+4 (32 per row).
        let img = stage_image(|r, kb| (code(r, kb / 4) >> (8 * (kb % 4))) as u8);
        for ks in 0..4 {
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

    /// A 16-byte aligned copy of `v` (the kernels' `cp.async` sources and paired stores
    /// need it, as device allocations give it).
    fn aligned<T: Copy>(v: &[T]) -> Vec<u128> {
        let mut out = vec![0u128; (size_of_val(v)).div_ceil(16)];
        // SAFETY: `out` holds at least `size_of_val(v)` bytes; plain data.
        unsafe {
            core::ptr::copy_nonoverlapping(
                v.as_ptr().cast::<u8>(),
                out.as_mut_ptr().cast(),
                size_of_val(v),
            );
        }
        out
    }

    /// `C = A·Bᵀ` (`a` m×k, `b` n×k, row-major) by `kernel` on the CPU emulator with every
    /// check on (races between the copies and `ldmatrix`, barrier divergence, bounds), and
    /// with `seed` ordering the threads; `C` starts as NaN so unwritten elements show.
    fn emulate<T: OutElem, P: ParamSizes, S>(
        kernel: &Kernel<P, S>,
        (m, n, k): (usize, usize, usize),
        a: &[T],
        b: &[T],
        seed: u64,
    ) -> Vec<T> {
        let (a_dev, b_dev) = (aligned(a), aligned(b));
        let mut c_dev = aligned(&vec![T::from_f32(f32::NAN); m * n]);
        let c_ptr = c_dev.as_mut_ptr().cast::<T>();
        let mut params: Vec<Box<dyn Any>> = vec![
            Box::new(m as u32),
            Box::new(n as u32),
            Box::new(k as u32),
            Box::new((a_dev.as_ptr() as usize, a.len())),
            Box::new((b_dev.as_ptr() as usize, b.len())),
            Box::new(c_ptr as usize),
        ];
        let args: Vec<*mut c_void> = params
            .iter_mut()
            .map(|p| (&raw mut **p).cast::<c_void>())
            .collect();
        let options = EmuOptions {
            seed,
            buffers: vec![HostBuffer {
                address: c_ptr as usize,
                bytes: m * n * size_of::<T>(),
            }],
            ..EmuOptions::default()
        };
        let tiles = (m.div_ceil(MMA_BM as usize) * n.div_ceil(MMA_BN as usize)) as u32;
        // SAFETY: the kernel's parameters in order; `a`, `b` hold m·k and n·k elements, `c`
        // m·n, all 16-byte aligned; k is a multiple of 8 (4 for f32); the module's launch
        // shape.
        let report = unsafe {
            emu::launch(
                kernel,
                [tiles, 1, 1],
                [MMA_THREADS, 1, 1],
                MMA_SHARED_BYTES,
                &args,
                &options,
            )
        };
        if let Err(e) = report {
            panic!("{} {m}×{n}×{k}: {e}", kernel.name());
        }
        // SAFETY: `c_dev` holds m·n elements of `T` from `c_ptr`.
        unsafe { core::slice::from_raw_parts(c_ptr, m * n) }.to_vec()
    }

    /// A deterministic integer in -3..=3 for index `i` of stream `seed`.
    fn small_int(seed: u32, i: usize) -> f32 {
        let mut x = (i as u32).wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b);
        x ^= x >> 15;
        x = x.wrapping_mul(0x2c1b_3c6d);
        x ^= x >> 12;
        (x % 7) as f32 - 3.0
    }

    /// Checks `c` (m×n) against `Σ_p a(i, p)·b(j, p)`, summed in `f64` and rounded once to
    /// `T` (exact for the inputs of these tests: every partial sum fits `f32`).
    fn check<T: OutElem + PartialEq + core::fmt::Debug>(
        what: &str,
        (m, n, k): (usize, usize, usize),
        c: &[T],
        a: impl Fn(usize, usize) -> f64,
        b: impl Fn(usize, usize) -> f64,
    ) {
        for i in 0..m {
            for j in 0..n {
                let sum: f64 = (0..k).map(|p| a(i, p) * b(j, p)).sum();
                let want = T::from_f32(sum as f32);
                let got = c[i * n + j];
                // `==` on floats: NaN (an unwritten element) never matches, ±0 do.
                assert!(
                    got == want,
                    "{what} {m}×{n}×{k}: C[{i}][{j}] = {got:?}, expected {want:?}"
                );
            }
        }
    }

    /// Shapes of the emulated tests: ragged m and n (two tiles each way, the second
    /// partial), k with a partial last step (136 bf16 = 2 steps + 16 bytes; 136 f32 = 4
    /// steps + 32 bytes), one element, and one step exactly.
    const SHAPES: [(usize, usize, usize); 3] = [(136, 264, 136), (1, 1, 8), (40, 24, 64)];

    fn integer_case<T: OutElem + PartialEq + core::fmt::Debug, P: ParamSizes, S>(
        kernel: &Kernel<P, S>,
        seed: u64,
    ) {
        for (s, (m, n, k)) in SHAPES.into_iter().enumerate() {
            let a: Vec<T> = (0..m * k)
                .map(|i| T::from_f32(small_int(s as u32, i)))
                .collect();
            let b: Vec<T> = (0..n * k)
                .map(|i| T::from_f32(small_int(100 + s as u32, i)))
                .collect();
            let c = emulate(kernel, (m, n, k), &a, &b, seed);
            let (fa, fb) = (
                |i: usize, p: usize| f64::from(small_int(s as u32, i * k + p)),
                |j: usize, p: usize| f64::from(small_int(100 + s as u32, j * k + p)),
            );
            check(kernel.name(), (m, n, k), &c, fa, fb);
        }
    }

    #[test]
    fn the_kernels_equal_the_cpu_on_integer_inputs_on_the_emulator() {
        // Integers in -3..=3: every product and partial sum is exact in f32 (|sum| ≤ 9·k),
        // and TF32 holds the inputs exactly; the one rounding is the output's, as the CPU's.
        integer_case::<bf16, _, _>(&gemm_mma_bf16, 0);
        integer_case::<f16, _, _>(&gemm_mma_f16, 0);
        // Another thread order, to shake out ordering bugs in the pipeline.
        integer_case::<f32, _, _>(&gemm_mma_tf32, 7);
    }

    #[test]
    fn tf32_operands_are_rounded_to_nearest_on_the_emulator() {
        // One operand an integer in -3..=3 plus h·2⁻¹² (h < 16), which TF32 cannot hold from
        // 1 upward (its unit there is 2⁻¹⁰ or 2⁻⁹, so many are ties), the other an integer.
        // Rounded, every product is a multiple of 2⁻¹² below 12 and |sum| < 2¹¹: exact in
        // f32. The emulated tensor core truncates like the hardware, so a kernel that does
        // not round its operands fails here.
        let (m, n, k) = (40, 24, 72);
        let frac = |i: usize| {
            let h = (i as u32).wrapping_mul(0x2c1b_3c6d) >> 28;
            tf32_input(small_int(5, i) + h as f32 / 4096.0)
        };
        let int = |i: usize| small_int(6, i);
        for fractional_a in [true, false] {
            let (fa, fb): (&dyn Fn(usize) -> f32, &dyn Fn(usize) -> f32) = if fractional_a {
                (&frac, &int)
            } else {
                (&int, &frac)
            };
            let a: Vec<f32> = (0..m * k).map(fa).collect();
            let b: Vec<f32> = (0..n * k).map(fb).collect();
            let c = emulate(&gemm_mma_tf32, (m, n, k), &a, &b, 0);
            let rounded = |x: f32| f64::from(tf32_from_f32(x));
            let ra = |i: usize, p: usize| rounded(a[i * k + p]);
            let rb = |j: usize, p: usize| rounded(b[j * k + p]);
            check("gemm_mma_tf32 (fractional inputs)", (m, n, k), &c, ra, rb);
            // The test can fail: truncation gives another product.
            let truncated = |x: f32| f64::from(f32::from_bits(x.to_bits() & !0x1fff));
            let differs = (0..m).any(|i| {
                let t: f64 = (0..k)
                    .map(|p| truncated(a[i * k + p]) * truncated(b[p]))
                    .sum();
                t as f32 != c[i * n]
            });
            assert!(differs, "the inputs do not tell rounding from truncation");
        }
    }

    /// `x`, asserted to be what the test means: a multiple of 2⁻¹² below 4 in magnitude.
    fn tf32_input(x: f32) -> f32 {
        assert!(x.abs() < 4.0 && (x * 4096.0).fract() == 0.0, "{x}");
        x
    }
}
