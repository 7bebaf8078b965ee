//! The `#[kernel]` entry points `gemm_mma_{bf16,f16,tf32}`, each one call of the kernel
//! body `gemm` with its element type.

use super::body::gemm;
use cuda_std::half::{bf16, f16};
use cuda_std::prelude::*;

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
