//! The `#[kernel]` entry point [`sgemm_cp_async`]: the `cp.async` copies into the ring's
//! stages, the main loop over them and the call into the [epilogue](super::epilogue).

use super::epilogue::Epilogue;
use super::*;
use cuda_std::math::fmaf as fma_f32;
use cuda_std::mem::{self, async_copy};
use cuda_std::prelude::*;
use cuda_std::shared::window::{self, SharedAddr};

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
