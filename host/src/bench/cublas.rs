//! cuBLAS, the FP32 ceiling of the SGEMM rows: `cublasSgemm` with TF32 off
//! (`CUBLAS_DEFAULT_MATH`), on the bench's stream, loaded from `libcublas.so` at run time.

use super::{Bench, BenchError};
use crate::timing::Stats;
use blastoff::{CublasContext, MatrixOp};
use cust::memory::{DeviceBox, DeviceBuffer};

impl Bench<'_> {
    /// Times cuBLAS SGEMM (through [`blastoff`]) on the row-major problem `C = A·B` (`A` m×k,
    /// `B` k×n, `C` m×n), computed as the column-major `Cᵀ = Bᵀ·Aᵀ`. cuBLAS's default math
    /// mode (`CUBLAS_DEFAULT_MATH`) never uses TF32 for `cublasSgemm`.
    ///
    /// # Errors
    /// Why not, as text: no `libcublas.so`, a cuBLAS error, a dimension cuBLAS cannot take.
    pub(super) fn cublas_sgemm(
        &self,
        (m, n, k): (u32, u32, u32),
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<Stats, String> {
        let mut blas = CublasContext::new().map_err(|e| e.to_string())?;
        let alpha = DeviceBox::new(&1.0f32).map_err(|e| e.to_string())?;
        let beta = DeviceBox::new(&0.0f32).map_err(|e| e.to_string())?;
        let (m, n, k) = (m as usize, n as usize, k as usize);
        let stream = self.gpu.stream();
        self.time(|| {
            // Column-major view of the row-major buffers: B is n×k (ld n), A is k×m (ld k),
            // C is n×m (ld n).
            blas.gemm::<f32>(
                stream,
                n,
                m,
                k,
                &alpha,
                b,
                n,
                MatrixOp::None,
                &beta,
                a,
                k,
                MatrixOp::None,
                c,
                n,
            )
            .map_err(|e| BenchError(e.to_string()))
        })
        .map_err(|e| e.0)
    }
}
