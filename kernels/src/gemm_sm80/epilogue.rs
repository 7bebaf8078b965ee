//! The epilogue of [`sgemm_cp_async`](super::sgemm_cp_async): `C = α·acc + β·C` for the
//! rows of a thread's 8×16 sub-tile, in 16-byte accesses.

use crate::gemm::epilogue::axpby_quad;

/// Writes `C = α·acc + β·C` for one row of a thread's sub-tile, each quad with
/// `crate::gemm`'s 16-byte step ([`axpby_quad`]). The row walk stays this kernel's own:
/// with `crate::gemm`'s whole epilogue made generic over the strip count and used here
/// (`vec: true`), LLVM scheduled this kernel's main loop differently and it ran 4–5 %
/// slower (one H200 run, 2026-11-29, two alternating rounds: 0.865–0.885× cuBLAS against
/// 0.895–0.922×; results bit-identical either way); sharing only the quad step leaves the
/// PTX as it was.
pub(super) struct Epilogue {
    pub(super) m: u32,
    pub(super) n: u32,
    pub(super) alpha: f32,
    pub(super) beta: f32,
    pub(super) c: *mut f32,
}

impl Epilogue {
    /// Row `r`, columns `col + 64·q..col + 64·q + 4` from `vals[4·q..4·q + 4]` (q < 4),
    /// skipping what lies outside the matrix.
    ///
    /// # Safety
    /// `c` holds m·n elements, 16-byte aligned; `n % 4 == 0`; `col % 4 == 0`.
    #[inline(always)]
    pub(super) unsafe fn row(&self, r: u32, col: u32, vals: &[f32; 16]) {
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
        let at = r as usize * self.n as usize + c0 as usize;
        // SAFETY: columns c0..c0 + 4 of row r < m, 16-byte aligned (n, c0 multiples of 4);
        // this thread's own elements.
        unsafe { axpby_quad(self.c.add(at), v, self.alpha, self.beta) };
    }
}
