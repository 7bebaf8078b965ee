//! The `#[kernel]` entry point [`sgemm`]: the global loads of the `A` and `B` tiles, their
//! stores into the two shared-memory stages, the double-buffered main loop over k (512 FMAs
//! per step) and the call into the [epilogue](super::epilogue).

// The BLAS-style SGEMM signature has 8 parameters.
#![allow(clippy::too_many_arguments)]

use super::epilogue::Epilogue;
use super::{A_STAGE_FLOATS, A_STRIDE, BK, SGEMM_TILE_M, SGEMM_TILE_N, SMEM_FLOATS, STAGE_FLOATS};
use cuda_std::math::fmaf as fma_f32;
use cuda_std::mem;
use cuda_std::prelude::*;
use cuda_std::shared::window::{self, SharedAddr};

/// `C = α·A·B + β·C` (row-major; see the [module docs](super) for the launch shape). With
/// `beta == 0`, `C` is not read (it may hold NaNs), as in BLAS.
///
/// # Safety
/// - `a` holds at least m·k and `b` at least k·n elements; both are whole device allocations
///   (16-byte aligned).
/// - `c` points to an allocation of at least m·n `f32`s that nobody else accesses during the
///   launch.
/// - Launched with the module's launch shape (256 threads per block; the grid covers
///   `ceil(n / 128)` × `ceil(m / 128)` blocks).
#[kernel]
#[allow(clippy::needless_range_loop)]
pub unsafe fn sgemm(
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
    let row0 = block_idx_y() * SGEMM_TILE_M;
    let col0 = block_idx_x() * SGEMM_TILE_N;
    // Two stages of A (BK × A_STRIDE) and B (BK × 128), 16-byte aligned, accessed by
    // 32-bit shared address: generic loads from the `shared_array!` pointer compiled to
    // 64-bit `LD.E.128` instead of `LDS.128` in the inner loop (ptxas did not prove the
    // state space), and the kernel grew from 111 to 139 registers (one block per
    // multiprocessor instead of two).
    let smem = SharedAddr::of(shared_array!(f32, SMEM_FLOATS, align = 16));
    // Global-load coordinates: A tile 128 rows × 8 k (a float4 of one row per thread),
    // B tile 8 k × 128 columns (a float4 of one row per thread).
    let ar = tid / 2;
    let ak = (tid % 2) * 4;
    let bk = tid / 32;
    let bc = (tid % 32) * 4;
    let a_vec = k.is_multiple_of(4);
    let b_vec = n.is_multiple_of(4);
    let (ap, bp) = (a.as_ptr(), b.as_ptr());
    let (nu, ku) = (n as usize, k as usize);

    let load_a = |kt: u32| -> [f32; 4] {
        let r = row0 + ar;
        let kc = kt + ak;
        let at = r as usize * ku + kc as usize;
        if a_vec && r < m && kc < k {
            // SAFETY: k % 4 == 0 and kc % 4 == 0, so kc + 4 <= k: inside row r; 16-byte
            // aligned (at % 4 == 0, allocation aligned).
            unsafe { mem::load_v4_f32_global_nc(ap.add(at)) }
        } else {
            let mut v = [0.0; 4];
            for j in 0..4 {
                if r < m && kc + j < k {
                    // SAFETY: row r < m, column kc + j < k.
                    v[j as usize] = unsafe { *ap.add(at + j as usize) };
                }
            }
            v
        }
    };
    let load_b = |kt: u32| -> [f32; 4] {
        let r = kt + bk;
        let cc = col0 + bc;
        let at = r as usize * nu + cc as usize;
        if b_vec && r < k && cc < n {
            // SAFETY: n % 4 == 0 and cc % 4 == 0, so cc + 4 <= n; aligned as for A.
            unsafe { mem::load_v4_f32_global_nc(bp.add(at)) }
        } else {
            let mut v = [0.0; 4];
            for j in 0..4 {
                if r < k && cc + j < n {
                    // SAFETY: row r < k, column cc + j < n.
                    v[j as usize] = unsafe { *bp.add(at + j as usize) };
                }
            }
            v
        }
    };
    let store = |stage: u32, av: [f32; 4], bv: [f32; 4]| {
        let sa = smem.byte_add(stage * STAGE_FLOATS * 4);
        for j in 0..4 {
            // SAFETY: (ak + j) < 8 rows × A_STRIDE, ar < 128: inside stage `stage` of A; no
            // thread reads this stage until the barrier after the store.
            unsafe {
                window::store_f32(sa.byte_add(((ak + j) * A_STRIDE + ar) * 4), av[j as usize])
            };
        }
        // SAFETY: bk < 8, bc + 4 <= 128; 16-byte aligned (bc % 4 == 0, stage and A offsets
        // are multiples of 4 floats, the array is 16-byte aligned).
        unsafe {
            window::store_v4_f32(
                sa.byte_add((A_STAGE_FLOATS + bk * SGEMM_TILE_N + bc) * 4),
                bv,
            )
        };
    };

    let mut acc = [[0.0f32; 8]; 8];
    let k_tiles = k.div_ceil(BK);
    let mut av = load_a(0);
    let mut bv = load_b(0);
    store(0, av, bv);
    sync_threads();
    let mut t = 0;
    while t < k_tiles {
        let stage = t % 2;
        let more = t + 1 < k_tiles;
        if more {
            av = load_a((t + 1) * BK);
            bv = load_b((t + 1) * BK);
        }
        let sa = smem.byte_add(stage * STAGE_FLOATS * 4);
        let sb = sa.byte_add(A_STAGE_FLOATS * 4);
        // The eight k steps are unrolled in the source (rustc's loop unroller leaves a loop
        // of 64 FMAs rolled, and then each step waits for its own shared loads): with
        // constant offsets, ptxas issues the loads of step kk + 1 during the FMAs of kk.
        unroll!(kk: u32 in [0, 1, 2, 3, 4, 5, 6, 7] {
            // SAFETY: 16-byte aligned addresses inside this stage (ty, tx < 16; offsets are
            // multiples of 4 floats); written before the last barrier.
            let (a0, a1, b0, b1) = unsafe {
                (
                    window::load_v4_f32(sa.byte_add((kk * A_STRIDE + ty * 4) * 4)),
                    window::load_v4_f32(sa.byte_add((kk * A_STRIDE + 64 + ty * 4) * 4)),
                    window::load_v4_f32(sb.byte_add((kk * SGEMM_TILE_N + tx * 4) * 4)),
                    window::load_v4_f32(sb.byte_add((kk * SGEMM_TILE_N + 64 + tx * 4) * 4)),
                )
            };
            let af = [a0[0], a0[1], a0[2], a0[3], a1[0], a1[1], a1[2], a1[3]];
            let bf = [b0[0], b0[1], b0[2], b0[3], b1[0], b1[1], b1[2], b1[3]];
            for i in 0..8 {
                for j in 0..8 {
                    acc[i][j] = fma_f32(af[i], bf[j], acc[i][j]);
                }
            }
        });
        if more {
            // The other stage was last read in step t - 1, which every thread finished before
            // the barrier that ended it.
            store(1 - stage, av, bv);
        }
        sync_threads();
        t += 1;
    }

    // Constant indices into `acc` only (a run-time index would move it to local memory).
    let out = Epilogue {
        m,
        n,
        alpha,
        beta,
        c,
        vec: b_vec,
    };
    let col = col0 + tx * 4;
    // SAFETY: `c` holds m·n elements (caller contract); the epilogue checks the bounds.
    unsafe {
        out.row(row0 + ty * 4, col, &acc[0]);
        out.row(row0 + ty * 4 + 1, col, &acc[1]);
        out.row(row0 + ty * 4 + 2, col, &acc[2]);
        out.row(row0 + ty * 4 + 3, col, &acc[3]);
        out.row(row0 + 64 + ty * 4, col, &acc[4]);
        out.row(row0 + 64 + ty * 4 + 1, col, &acc[5]);
        out.row(row0 + 64 + ty * 4 + 2, col, &acc[6]);
        out.row(row0 + 64 + ty * 4 + 3, col, &acc[7]);
    }
}
