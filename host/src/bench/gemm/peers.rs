//! The cuBLAS peers of the GEMM rows, prepared for one (precision, shape): `cublasGemmEx`
//! ([`CublasGemm`], through the column-major call that computes our row-major product,
//! [`cublas_call`]) and cuBLASLt's fastest algorithm ([`Bench::cublaslt_gemm`]); and the
//! fastest of their rows ([`fastest_peer`]), which our rows' ratios are to.

use super::accuracy::Accuracy;
use super::precision::{GemmPrecision, Operand};
use super::{Operands, upload};
use crate::bench::cublaslt::LtGemm;
use crate::bench::{Bench, BenchError, report::Entry};
use blastoff::{CublasContext, MatrixOp};
use cust::memory::{DeviceBox, DeviceBuffer, DeviceCopy};
use cust::stream::Stream;

/// The column-major cuBLAS call that computes the row-major `C = A·Bᵀ` (`A` m×k, `B` n×k,
/// `C` m×n): `Cᵀ (n×m) = B (n×k) · Aᵀ (k×m)`, with `B`'s buffer (column-major `Bᵀ`, k×n) as
/// the first operand, transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CublasCall {
    /// cuBLAS's `(m, n, k)`: ours `(n, m, k)`.
    mnk: (usize, usize, usize),
    /// The first operand (`B`'s buffer): transposed, leading dimension `k`.
    op_first: MatrixOp,
    ld_first: usize,
    /// The second operand (`A`'s buffer): as stored, leading dimension `k`.
    op_second: MatrixOp,
    ld_second: usize,
    /// `C`'s leading dimension: `n`.
    ldc: usize,
}

/// See [`CublasCall`].
fn cublas_call((m, n, k): (usize, usize, usize)) -> CublasCall {
    CublasCall {
        mnk: (n, m, k),
        op_first: MatrixOp::Transpose,
        ld_first: k,
        op_second: MatrixOp::None,
        ld_second: k,
        ldc: n,
    }
}

/// cuBLAS prepared for one (precision, shape): its context with a 32 MiB workspace, `α = 1`
/// and `β = 0` on the device, and its own `C` (m×n row-major, NaN-filled).
pub(super) struct CublasGemm<T: DeviceCopy> {
    blas: CublasContext,
    alpha: DeviceBox<f32>,
    beta: DeviceBox<f32>,
    pub(super) c: DeviceBuffer<T>,
}

impl<T: Operand> CublasGemm<T> {
    /// Queues one `cublasGemmEx` at `precision` on `stream` computing the row-major
    /// `C = A·Bᵀ` of `operands` into `self.c` ([`cublas_call`]).
    ///
    /// # Errors
    /// cuBLAS's error, as text.
    pub(super) fn launch(
        &mut self,
        stream: &Stream,
        precision: GemmPrecision,
        operands: &Operands<'_, T>,
    ) -> Result<(), BenchError> {
        let call = cublas_call(operands.dims);
        let (cm, cn, ck) = call.mnk;
        self.blas
            .gemm_ex::<T>(
                stream,
                cm,
                cn,
                ck,
                &self.alpha,
                operands.b,
                call.ld_first,
                call.op_first,
                &self.beta,
                operands.a,
                call.ld_second,
                call.op_second,
                &mut self.c,
                call.ldc,
                precision.compute(),
            )
            .map_err(|e| BenchError(e.to_string()))
    }
}

impl Bench<'_> {
    /// Times one queued cuBLASLt call by events on the bench's stream, waiting for it: the
    /// [`TimeOne`](crate::bench::cublaslt::TimeOne) that [`LtGemm`] takes.
    ///
    /// # Errors
    /// GPU errors of the events or the wait, and those of `f`.
    pub(super) fn time_lt(
        &self,
        f: &mut dyn FnMut() -> Result<(), BenchError>,
    ) -> Result<std::time::Duration, BenchError> {
        let stream = self.gpu.stream();
        crate::timing::event_time(self.gpu.context(), stream, f, || {
            stream
                .synchronize()
                .map_err(|e| BenchError(format!("waiting for cuBLASLt: {e}")))
        })
    }

    /// Prepares cuBLASLt for `C = A·Bᵀ` of `operands` at `precision` and picks its fastest
    /// algorithm for the shape ([`LtGemm::prepare`], timed on the bench's stream), with a
    /// NaN-filled `C` (m×n row-major) of its own.
    ///
    /// # Errors
    /// Why not, as text: no `libcublasLt.so`, a cuBLASLt error, a GPU error.
    pub(super) fn cublaslt_gemm<T: Operand>(
        &self,
        precision: GemmPrecision,
        operands: &Operands<'_, T>,
    ) -> Result<LtGemm<blastoff::LtMatmul<T>>, BenchError> {
        let (m, n, _) = operands.dims;
        let c = upload(self, &vec![T::NAN; m * n])?;
        let time = |f: &mut dyn FnMut() -> Result<(), BenchError>| self.time_lt(f);
        LtGemm::prepare(
            precision.compute(),
            operands.dims,
            operands.a,
            operands.b,
            c,
            self.gpu.stream(),
            operands.inner,
            &time,
        )
    }

    /// Prepares cuBLAS (`cublasGemmEx`, through [`blastoff`]) for `C = A·Bᵀ` at `dims`
    /// (`(m, n, k)`): a context with a 32 MiB workspace, `α = 1` and `β = 0` on the device,
    /// and a NaN-filled `C` (m×n row-major). Nothing is launched.
    ///
    /// # Errors
    /// Why not, as text: no `libcublas.so`, a cuBLAS error, a GPU error.
    pub(super) fn cublas_gemm_ex<T: Operand>(
        &self,
        (m, n, _): (usize, usize, usize),
    ) -> Result<CublasGemm<T>, BenchError> {
        let text = |e: blastoff::Error| BenchError(e.to_string());
        let mut blas = CublasContext::new().map_err(text)?;
        blas.set_workspace(CublasContext::HOPPER_WORKSPACE_BYTES)
            .map_err(text)?;
        Ok(CublasGemm {
            blas,
            alpha: DeviceBox::new(&1.0f32)?,
            beta: DeviceBox::new(&0.0f32)?,
            c: upload(self, &vec![T::NAN; m * n])?,
        })
    }
}

/// The variant names of the two cuBLAS rows: `cublasGemmEx`, and cuBLASLt's fastest of
/// its heuristic's candidates ([`crate::bench::cublaslt`]).
pub(super) const GEMM_EX: &str = "gemmex";
pub(super) const LT: &str = "lt";

/// The fastest of the cuBLAS rows (smallest median; the first of equal ones), the one our
/// rows' ratios are to.
pub(super) fn fastest_peer(peers: &[(Entry, Accuracy)]) -> Option<(Entry, Accuracy)> {
    peers
        .iter()
        .filter(|(e, _)| e.tflop_per_s.is_some())
        .max_by(|(x, _), (y, _)| {
            let (x, y) = (x.tflop_per_s.unwrap_or(0.0), y.tflop_per_s.unwrap_or(0.0));
            // Equal rates keep the first (max_by returns the last of equals).
            x.partial_cmp(&y)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(std::cmp::Ordering::Greater)
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column-major GEMM on the CPU, interpreting buffers as cuBLAS does:
    /// `C = op(X)·op(Y)`, `C` m×n with leading dimension `ldc`.
    fn column_major(call: &CublasCall, x: &[f64], y: &[f64]) -> Vec<f64> {
        let (m, n, k) = call.mnk;
        let mut c = vec![f64::NAN; call.ldc * n];
        for j in 0..n {
            for i in 0..m {
                let mut sum = 0.0;
                for p in 0..k {
                    // op(X) is m×k: X stored k×m when transposed.
                    let x_ip = if call.op_first.transposes() {
                        x[p + i * call.ld_first]
                    } else {
                        x[i + p * call.ld_first]
                    };
                    let y_pj = if call.op_second.transposes() {
                        y[j + p * call.ld_second]
                    } else {
                        y[p + j * call.ld_second]
                    };
                    sum += x_ip * y_pj;
                }
                c[i + j * call.ldc] = sum;
            }
        }
        c
    }

    /// The cuBLAS call on `B`'s and `A`'s row-major buffers writes the row-major
    /// `C = A·Bᵀ`, exactly, on a small non-square case.
    #[test]
    fn cublas_call_computes_row_major_a_times_b_transposed() {
        let (m, n, k) = (3, 5, 4);
        let a: Vec<f64> = (0..m * k).map(|i| (i * 7 % 9) as f64 - 4.0).collect();
        let b: Vec<f64> = (0..n * k).map(|i| (i * 5 % 11) as f64 - 5.0).collect();
        let call = cublas_call((m, n, k));
        let got = column_major(&call, &b, &a);
        let mut want = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[j * k + p]).sum();
            }
        }
        assert_eq!(got, want);
    }
}
