//! cuBLAS, the FP32 ceiling of the SGEMM rows: `cublasSgemm` with TF32 off
//! (`CUBLAS_DEFAULT_MATH`), on the bench's stream, loaded from `libcublas.so` at run time.

use super::{Bench, BenchError};
use crate::timing::Stats;
use cudarc::driver::CudaSlice;

impl Bench<'_> {
    /// Times cuBLAS SGEMM on the row-major problem `C = A·B` (`A` m×k, `B` k×n, `C` m×n),
    /// computed as the column-major `Cᵀ = Bᵀ·Aᵀ`.
    ///
    /// # Errors
    /// Why not, as text: no `libcublas.so`, a cuBLAS error, a dimension above `i32::MAX`.
    pub(super) fn cublas_sgemm(
        &self,
        (m, n, k): (u32, u32, u32),
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<Stats, String> {
        use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys};
        // SAFETY: only tries to dlopen the library by its known names.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcublas.so not found on the loader path (set LD_LIBRARY_PATH to the folder of libcublas.so, e.g. the nvidia-cublas Python package's lib/)".into());
        }
        let blas = CudaBlas::new(self.gpu.stream().as_cudarc().clone())
            .map_err(|e| format!("cublasCreate: {e:?}"))?;
        // SAFETY: a valid handle; CUBLAS_DEFAULT_MATH is a valid mode (no TF32 tensor-op math).
        unsafe { sys::cublasSetMathMode(*blas.handle(), sys::cublasMath_t::CUBLAS_DEFAULT_MATH) }
            .result()
            .map_err(|e| format!("cublasSetMathMode: {e:?}"))?;
        let to_i32 =
            |x: u32| i32::try_from(x).map_err(|_| format!("dimension {x} too large for cuBLAS"));
        let cfg = GemmConfig {
            transa: sys::cublasOperation_t::CUBLAS_OP_N,
            transb: sys::cublasOperation_t::CUBLAS_OP_N,
            m: to_i32(n)?,
            n: to_i32(m)?,
            k: to_i32(k)?,
            alpha: 1.0f32,
            lda: to_i32(n)?,
            ldb: to_i32(k)?,
            beta: 0.0f32,
            ldc: to_i32(n)?,
        };
        self.time(|| {
            // SAFETY: column-major view of the row-major buffers: B is n×k (ld n), A is k×m
            // (ld k), C is n×m (ld n); sizes k·n, m·k, m·n.
            unsafe { blas.gemm(cfg, b, a, c) }
                .map_err(|e| BenchError(format!("cublasSgemm: {e:?}")))
        })
        .map_err(|e| e.0)
    }
}
