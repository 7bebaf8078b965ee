//! The SGEMM's epilogue: `C = α·acc + β·C` for the rows of a thread's 8×8 sub-tile, with
//! 16-byte accesses when `n % 4 == 0` and guarded 4-byte ones at the edges. Its 16-byte
//! step, [`axpby_quad`], is also [`sgemm_cp_async`](crate::gemm_sm80::sgemm_cp_async)'s.

use cuda_std::math::fmaf as fma_f32;

#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct F4([f32; 4]);

/// `C = α·v + β·C` on the four `f32` at `cp` with one 16-byte access each way (no read of
/// `C` when `β` is 0, so a `C` of NaNs or garbage is overwritten, as BLAS does): the
/// epilogues' step for a quad inside the matrix.
///
/// # Safety
/// `cp` points to four `f32` of `C`, 16-byte aligned, that no other thread accesses.
#[inline(always)]
pub(crate) unsafe fn axpby_quad(cp: *mut f32, v: [f32; 4], alpha: f32, beta: f32) {
    let cp = cp.cast::<F4>();
    let o = if beta == 0.0 {
        [alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]]
    } else {
        // SAFETY: the caller's contract.
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

/// Writes `C = α·acc + β·C` for one row of a thread's sub-tile.
pub(super) struct Epilogue {
    pub(super) m: u32,
    pub(super) n: u32,
    pub(super) alpha: f32,
    pub(super) beta: f32,
    pub(super) c: *mut f32,
    /// `n % 4 == 0`: 16-byte accesses.
    pub(super) vec: bool,
}

impl Epilogue {
    /// Row `r`, columns `col..col + 4` and `col + 64..col + 68` from `vals[0..4]` and
    /// `vals[4..8]`, skipping what lies outside the matrix.
    ///
    /// # Safety
    /// `c` holds m·n elements, 16-byte aligned.
    #[inline(always)]
    pub(super) unsafe fn row(&self, r: u32, col: u32, vals: &[f32; 8]) {
        if r >= self.m {
            return;
        }
        // SAFETY: forwarded.
        unsafe {
            self.quad(r, col, [vals[0], vals[1], vals[2], vals[3]]);
            self.quad(r, col + 64, [vals[4], vals[5], vals[6], vals[7]]);
        }
    }

    /// # Safety
    /// As for [`Epilogue::row`]; `r < m`.
    #[inline(always)]
    unsafe fn quad(&self, r: u32, c0: u32, v: [f32; 4]) {
        let (n, alpha, beta) = (self.n, self.alpha, self.beta);
        let at = r as usize * n as usize + c0 as usize;
        if self.vec && c0 < n {
            // SAFETY: n % 4 == 0 and c0 % 4 == 0: columns c0..c0 + 4 lie in row r < m;
            // 16-byte aligned; this thread's own elements.
            unsafe { axpby_quad(self.c.add(at), v, alpha, beta) };
        } else {
            for (j, vj) in v.into_iter().enumerate() {
                if c0 + (j as u32) < n {
                    // SAFETY: row r < m, column c0 + j < n.
                    unsafe {
                        let cp = self.c.add(at + j);
                        *cp = if beta == 0.0 {
                            alpha * vj
                        } else {
                            fma_f32(beta, *cp, alpha * vj)
                        };
                    }
                }
            }
        }
    }
}
