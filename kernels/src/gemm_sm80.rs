//! SGEMM for sm_80 and later: `C = α·A·B + β·C` in `f32` with a `cp.async` pipeline.
//!
//! Same layouts and semantics as [`crate::gemm::sgemm`]: `A` is m×k row-major
//! (`a[i·k + p]`), `B` is k×n (`b[p·n + j]`), `C` is m×n (`c[i·n + j]`); with `beta == 0`,
//! `C` is not read. Restricted to `k % 4 == 0` and `n % 4 == 0` (every 16-byte chunk of a
//! row of `A` or `B` is then aligned and either wholly inside the matrix or wholly outside);
//! the host falls back to [`crate::gemm::sgemm`] otherwise.
//!
//! Design. A block of [`SGEMM80_THREADS`] threads computes a
//! [`SGEMM80_TILE_M`]×[`SGEMM80_TILE_N`] tile of `C`; each thread an 8×16 sub-tile in 128
//! registers: rows `4·ty..4·ty + 4` and `64 + 4·ty..` (`ty = tid / 16`), columns
//! `4·tx + 64·q..4·tx + 64·q + 4` for `q` in 0..4 (`tx = tid % 16`). K is walked in steps of
//! [`SGEMM80_BK`] = 16: per step, `A`'s 128×16 slice, stored transposed (one row of 128 `A`
//! rows per k value, padded to [`SGEMM80_A_STRIDE`] = 132 floats) with 4-byte
//! `cp.async.ca`, and `B`'s 16×256 slice with 16-byte `cp.async.cg`, go into a ring of
//! [`SGEMM80_STAGES`] stages of dynamic shared memory ([`SGEMM80_SHARED_BYTES`]). Each step
//! waits for its oldest stage, issues the copies of the stage `SGEMM80_STAGES - 1` ahead, and
//! computes on the oldest, with one barrier per step.
//!
//! Shared-memory reads, per k value: two `A` quads (4 consecutive rows each, rows `4·ty`
//! and `64 + 4·ty`: the two `ty` of a warp read 2 quads, the other lanes broadcast) and four
//! `B` quads (16 consecutive lanes cover 256 contiguous bytes), then 128 FMAs: 24 registers
//! of operands per k. The transposed `A` is what makes that few: with `A` stored as it lies
//! in memory (four k values of one row per quad), a thread held 32 `A` values for four k
//! values at once and ptxas used all 255 registers; transposed, it uses 226 (ptxas 12.9,
//! sm_90a), and on an H200 (2026-11-29, three alternating rounds of `ferrocuda bench
//! --gemm-only`, cuBLAS in the same process) SGEMM went from 0.820–0.833× to 0.897–0.909×
//! cuBLAS at 2048³, 4096³ and 8192³. The transposing store costs 8 4-byte copies per thread
//! and stage instead of 2 16-byte ones; the two k values 8 apart that a warp writes share
//! banks (2-way conflicts, on the copies only).
//!
//! Every output is accumulated over k in increasing order with `fma.rn.f32`, from 0 (the
//! first FMA is the rounded product), so results equal [`crate::gemm::sgemm`]'s bit for bit.
//!
//! Edges: elements of `A` rows past `m` or past `k`, and chunks of `B` rows past `k` or
//! columns past `n`, are zero-filled in shared memory with plain stores (they add exact
//! zeros).
//!
//! Launch: grid `(ceil(n / 256), ceil(m / 128), 1)`, block `(256, 1, 1)`,
//! [`SGEMM80_SHARED_BYTES`] of dynamic shared memory (above the default 48 KiB: the host's
//! launch raises the kernel's limit). 226 registers per thread: one block per
//! multiprocessor.

/// Rows of `C` per block.
pub const SGEMM80_TILE_M: u32 = 128;
/// Columns of `C` per block.
pub const SGEMM80_TILE_N: u32 = 256;
/// Threads per block.
pub const SGEMM80_THREADS: u32 = 256;
/// k values per pipeline stage.
pub const SGEMM80_BK: u32 = 16;
/// Pipeline stages (the `cp.async` ring).
pub const SGEMM80_STAGES: u32 = 4;
/// Row stride of the `A` slice in shared memory, floats: the slice is stored transposed,
/// one row of 128 `A` rows per k value, padded by 4 floats.
pub const SGEMM80_A_STRIDE: u32 = SGEMM80_TILE_M + 4;
/// Floats of one stage: the `A` slice (16 × 132, transposed) then the `B` slice (16 × 256).
pub const SGEMM80_STAGE_FLOATS: u32 = SGEMM80_BK * SGEMM80_A_STRIDE + SGEMM80_BK * SGEMM80_TILE_N;
/// Dynamic shared memory per block, bytes: [`SGEMM80_STAGES`] · 4 · [`SGEMM80_STAGE_FLOATS`]
/// (97 KiB).
pub const SGEMM80_SHARED_BYTES: u32 = SGEMM80_STAGES * SGEMM80_STAGE_FLOATS * 4;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use kernel_sm80::*;

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
mod kernel_sm80 {
    // The BLAS-style SGEMM signature has 8 parameters.
    #![allow(clippy::too_many_arguments)]

    use super::{
        SGEMM80_A_STRIDE, SGEMM80_BK, SGEMM80_STAGE_FLOATS, SGEMM80_STAGES, SGEMM80_TILE_M,
        SGEMM80_TILE_N,
    };
    use cuda_std::math::fmaf as fma_f32;
    use cuda_std::mem::{self, async_copy};
    use cuda_std::prelude::*;
    use cuda_std::shared::window::{self, SharedAddr};

    /// Floats of the `A` slice of a stage.
    const A_FLOATS: u32 = SGEMM80_BK * SGEMM80_A_STRIDE;

    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    struct F4([f32; 4]);

    /// `C = α·A·B + β·C` (row-major) on a `cp.async` pipeline, sm_80+; see the
    /// [module docs](super) for the design and the launch shape. With `beta == 0`, `C` is
    /// not read (it may hold NaNs), as in BLAS.
    ///
    /// # Safety
    /// - `k % 4 == 0`, `n % 4 == 0`, all dimensions ≥ 1;
    /// - `a` holds at least m·k and `b` at least k·n elements; both are whole device
    ///   allocations (16-byte aligned);
    /// - `c` points to an allocation of at least m·n `f32`s (16-byte aligned) that nobody
    ///   else accesses during the launch;
    /// - launched with the module's launch shape: 256 threads per block, a grid of
    ///   `ceil(n / 256)` × `ceil(m / 128)` blocks, `SGEMM80_SHARED_BYTES` of dynamic shared
    ///   memory.
    #[kernel]
    pub unsafe fn sgemm_cp_async(
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        a: &[f32],
        b: &[f32],
        beta: f32,
        c: *mut f32,
    ) {
        let tid = thread_idx_x();
        let tx = tid % 16;
        let ty = tid / 16;
        let row0 = block_idx_y() * SGEMM80_TILE_M;
        let col0 = block_idx_x() * SGEMM80_TILE_N;
        let smem: *mut f32 = dynamic_shared::<f32>();
        // The loop's loads go by 32-bit shared address (`shared::window`): generic loads
        // from `dynamic_shared` compile to 64-bit generic `LD.E` in the inner loop.
        let base = SharedAddr::of(smem);
        let (ap, bp) = (a.as_ptr().cast::<u8>(), b.as_ptr().cast::<u8>());
        let (nu, ku) = (n as usize, k as usize);

        // Copy duty per stage. A: element k0 + `tid % 16` of tile rows `tid / 16 + 16·j`
        // (j < 8), 4-byte copies into the transposed slice. B: chunk `tid % 64` of slice
        // rows `tid / 64 + 4·j` (j < 4).
        let a_k = tid % 16;
        let a_row = tid / 16;
        let b_chunk = tid % 64;
        let b_row = tid / 64;
        let a_dst = a_k * SGEMM80_A_STRIDE + a_row;
        let b_dst = A_FLOATS + b_row * SGEMM80_TILE_N + b_chunk * 4;
        let a_src = ((row0 + a_row) as usize * ku + a_k as usize) * 4;
        let b_col = col0 + b_chunk * 4;
        let b_col_in = b_col < n;

        // Issues the copies of k slice `kt` (k values `16·kt..16·kt + 16`) into stage `slot`.
        let load = |kt: u32, slot: u32| {
            let k0 = kt * SGEMM80_BK;
            // SAFETY: `slot < SGEMM80_STAGES`: inside the dynamic shared memory.
            let stage = unsafe { smem.add((slot * SGEMM80_STAGE_FLOATS) as usize) };
            let a_k_in = k0 + a_k < k;
            unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                let row = row0 + a_row + 16 * j as u32;
                // SAFETY: element (k value a_k, row a_row + 16·j) of the transposed A slice,
                // inside the stage. When copied, the source row is < m and its column
                // k0 + a_k < k, 4-byte aligned.
                unsafe {
                    if row < m && a_k_in {
                        let dst = stage.add((a_dst + 16 * j as u32) as usize);
                        let at = a_src + (16 * j * ku + k0 as usize) * 4;
                        async_copy::copy_4(dst.cast(), ap.add(at));
                    } else {
                        let at = slot * SGEMM80_STAGE_FLOATS + a_dst + 16 * j as u32;
                        window::store_f32(base.byte_add(at * 4), 0.0);
                    }
                }
            });
            unroll!(j in [0, 1, 2, 3] {
                let kr = k0 + b_row + 4 * j as u32;
                // SAFETY: row `b_row + 4·j` of the B slice, 16-byte aligned. When copied,
                // row kr < k and columns b_col..b_col + 4 < n (n % 4 == 0), aligned.
                unsafe {
                    let dst = stage.add((b_dst + 4 * j as u32 * SGEMM80_TILE_N) as usize);
                    if b_col_in && kr < k {
                        let at = (kr as usize * nu + b_col as usize) * 4;
                        async_copy::copy_16(dst.cast(), bp.add(at));
                    } else {
                        mem::store_v4_u32(dst.cast(), [0; 4]);
                    }
                }
            });
        };

        // Per-thread read offsets (floats) inside a stage: A rows 4·ty and 64 + 4·ty, B
        // columns 4·tx (+ 64·q).
        let a_rd = ty * 4;
        let b_rd = A_FLOATS + tx * 4;

        let mut acc = [[0.0f32; 16]; 8];
        let k_tiles = k.div_ceil(SGEMM80_BK);

        for s in 0..SGEMM80_STAGES - 1 {
            if s < k_tiles {
                load(s, s);
            }
            async_copy::commit_group();
        }

        let mut slot = 0;
        let mut kt = 0;
        while kt < k_tiles {
            async_copy::wait_group::<{ SGEMM80_STAGES - 2 }>();
            sync_threads();
            let next = kt + SGEMM80_STAGES - 1;
            if next < k_tiles {
                let ns = if slot == 0 {
                    SGEMM80_STAGES - 1
                } else {
                    slot - 1
                };
                load(next, ns);
            }
            async_copy::commit_group();

            let st = slot * SGEMM80_STAGE_FLOATS * 4;
            let sa = st + a_rd * 4;
            let sb = st + b_rd * 4;
            // Per k value: two `A` quads (rows 4·ty.. and 64 + 4·ty.. of the transposed
            // slice), four `B` quads and 128 FMAs, from 24 registers of operands. Constant
            // offsets only, so ptxas can issue the loads of the next k during the FMAs of
            // this one.
            unroll!(kk in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                let kk = kk as u32;
                // SAFETY: 16-byte aligned (stride and offsets multiples of 4 floats), inside
                // this stage's A slice (k value kk < 16, rows 4·ty + 64 + 4 <= 128); written
                // before the barrier above.
                let (lo, hi) = unsafe {
                    (
                        window::load_v4_f32(base.byte_add(sa + kk * SGEMM80_A_STRIDE * 4)),
                        window::load_v4_f32(base.byte_add(sa + (kk * SGEMM80_A_STRIDE + 64) * 4)),
                    )
                };
                let af = [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]];
                let mut bf = [0.0f32; 16];
                unroll!(q in [0, 1, 2, 3] {
                    // SAFETY: 16-byte aligned, inside this stage's B slice (row kk < 16,
                    // columns 4·tx + 64·q + 4 <= 256); written before the barrier.
                    let v = unsafe {
                        window::load_v4_f32(
                            base.byte_add(sb + (kk * SGEMM80_TILE_N + 64 * q as u32) * 4),
                        )
                    };
                    bf[4 * q] = v[0];
                    bf[4 * q + 1] = v[1];
                    bf[4 * q + 2] = v[2];
                    bf[4 * q + 3] = v[3];
                });
                unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                    let ai = af[i];
                    unroll!(j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                        acc[i][j] = fma_f32(ai, bf[j], acc[i][j]);
                    });
                });
            });
            slot = if slot + 1 == SGEMM80_STAGES {
                0
            } else {
                slot + 1
            };
            kt += 1;
        }
        async_copy::wait_all();

        let out = Epilogue {
            m,
            n,
            alpha,
            beta,
            c,
        };
        let col = col0 + tx * 4;
        // SAFETY: `c` holds m·n elements (caller contract); the epilogue checks the bounds.
        unsafe {
            unroll!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
                let r = row0 + ty * 4 + (i % 4 + 64 * (i / 4)) as u32;
                out.row(r, col, &acc[i]);
            });
        }
    }

    /// Writes `C = α·acc + β·C` for one row of a thread's sub-tile. The same job as
    /// `crate::gemm`'s epilogue, kept apart on purpose: with that one made generic over
    /// the strip count and used here (`vec: true`), LLVM scheduled this kernel's main loop
    /// differently and it ran 4–5 % slower (one H200 run, 2026-11-29, two alternating
    /// rounds: 0.865–0.885× cuBLAS against 0.895–0.922×; results bit-identical either way).
    struct Epilogue {
        m: u32,
        n: u32,
        alpha: f32,
        beta: f32,
        c: *mut f32,
    }

    impl Epilogue {
        /// Row `r`, columns `col + 64·q..col + 64·q + 4` from `vals[4·q..4·q + 4]` (q < 4),
        /// skipping what lies outside the matrix.
        ///
        /// # Safety
        /// `c` holds m·n elements, 16-byte aligned; `n % 4 == 0`; `col % 4 == 0`.
        #[inline(always)]
        unsafe fn row(&self, r: u32, col: u32, vals: &[f32; 16]) {
            if r >= self.m {
                return;
            }
            unroll!(q in [0, 1, 2, 3] {
                let c0 = col + 64 * q as u32;
                if c0 < self.n {
                    let v = [vals[4 * q], vals[4 * q + 1], vals[4 * q + 2], vals[4 * q + 3]];
                    // SAFETY: forwarded; c0 < n with both multiples of 4.
                    unsafe { self.quad(r, c0, v) };
                }
            });
        }

        /// # Safety
        /// As for [`Epilogue::row`]; `r < m`, `c0 + 4 <= n`, `c0 % 4 == 0`.
        #[inline(always)]
        unsafe fn quad(&self, r: u32, c0: u32, v: [f32; 4]) {
            let (alpha, beta) = (self.alpha, self.beta);
            let at = r as usize * self.n as usize + c0 as usize;
            // SAFETY: columns c0..c0 + 4 of row r < m, 16-byte aligned (n, c0 multiples of 4).
            let cp = unsafe { self.c.add(at) as *mut F4 };
            let o = if beta == 0.0 {
                [alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]]
            } else {
                // SAFETY: as above.
                let old = unsafe { cp.read().0 };
                [
                    fma_f32(beta, old[0], alpha * v[0]),
                    fma_f32(beta, old[1], alpha * v[1]),
                    fma_f32(beta, old[2], alpha * v[2]),
                    fma_f32(beta, old[3], alpha * v[3]),
                ]
            };
            // SAFETY: as above.
            unsafe { cp.write(F4(o)) };
        }
    }
}
