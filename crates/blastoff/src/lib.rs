//! cuBLAS on ferrocuda's [`cust`] buffers, with the API of Rust-CUDA's `blastoff`, so
//! Rust-CUDA programs that call cuBLAS port with Cargo.toml edits only.
//!
//! ```no_run
//! use blastoff::{CublasContext, MatrixOp};
//! use cust::memory::{CopyDestination as _, DeviceBox, DeviceBuffer};
//! use cust::stream::{Stream, StreamFlags};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let _ctx = cust::quick_init()?;
//! let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! let mut blas = CublasContext::new()?;
//! // Column-major 2×2 matrices: a = [[1, 2], [3, 4]] is stored as [1, 3, 2, 4].
//! let a = DeviceBuffer::from_slice(&[1.0f32, 3.0, 2.0, 4.0])?;
//! let b = DeviceBuffer::from_slice(&[5.0f32, 7.0, 6.0, 8.0])?;
//! let mut c = DeviceBuffer::<f32>::zeroed(4)?;
//! let (alpha, beta) = (DeviceBox::new(&1.0f32)?, DeviceBox::new(&0.0f32)?);
//! blas.gemm::<f32>(
//!     &stream, 2, 2, 2, &alpha, &a, 2, MatrixOp::None, &beta, &b, 2, MatrixOp::None, &mut c, 2,
//! )?;
//! stream.synchronize()?;
//! let mut out = [0.0f32; 4];
//! c.copy_to(&mut out)?;
//! assert_eq!(out, [19.0, 43.0, 22.0, 50.0]);
//! # Ok(())
//! # }
//! ```
//!
//! # Conventions
//!
//! - **Column-major**, as cuBLAS: element (row `i`, column `j`) of a matrix with leading
//!   dimension `ld` is at index `i + j * ld`, and `ld` is at least the number of rows *as
//!   stored*. A row-major `C = A·B` is the column-major `Cᵀ = Bᵀ·Aᵀ`: pass `b` as the first
//!   operand and `a` as the second, with `m` and `n` swapped (Rust-CUDA's `gemm` example does
//!   this).
//! - Dimensions and lengths are in elements. Scalars (`alpha`, `beta`) live in device memory
//!   ([`DeviceBox`](cust::memory::DeviceBox)): the handle runs in cuBLAS's device pointer
//!   mode, as Rust-CUDA's does.
//! - Calls are queued on the [`Stream`](cust::stream::Stream) they are given and return
//!   before the GPU has finished; synchronise the stream before reading results on the host.
//!   cust's buffers record their use, so another stream or a host copy waits for the call.
//! - On cust's **CPU emulator** (a handle made while the current context is
//!   [`Context::emulator`](cust::context::Context::emulator), e.g. through
//!   [`Context::from_env`](cust::context::Context::from_env) on a machine without a GPU),
//!   there is no cuBLAS: [`CublasContext::gemm`] and [`CublasContext::gemm_ex`] compute on
//!   the host with `matrixmultiply`, with cuBLAS's argument semantics, checks and errors, and
//!   are done when they return. Sums may be added in another order than cuBLAS adds them, so
//!   results equal the GPU's where every partial sum is exact (e.g. small integers);
//!   [`CublasContext::version`] is an error there. The [`CublasContext`] docs say what else
//!   differs.
//!
//! # Differences from Rust-CUDA's `blastoff`, and why
//!
//! - Bad dimensions, buffers too short for them, and operands on another context than the
//!   stream are an [`Error`] naming the call, the value and the bound, not a panic.
//! - [`GemmDatatype`] is `f32` and `f64`: cust has no `DeviceCopy` for `num_complex` types,
//!   so the complex variants are left out. Half precision goes through
//!   [`CublasContext::gemm_ex`] instead (`cublasGemmEx`, which Rust-CUDA does not wrap):
//!   `bf16`, `f16` or `f32` operands ([`GemmExDatatype`]) with a [`ComputeType`] (`f32`
//!   accumulation, TF32 on or off).
//! - Only `new`, `with_stream`, `version`, the Level 3 `gemm`, and the additions `gemm_ex`
//!   and `set_workspace` are provided (Rust-CUDA's samples call `new` and `gemm`); the
//!   Level 1 routines, the math and atomics modes, the logger and the fallible
//!   `CublasContext::drop` are not. The handle keeps cuBLAS's default math mode, so
//!   `f32` products never use TF32 unless [`ComputeType::F32FastTf32`] asks for it.
//! - [`CublasContext::version`] returns a `Result` instead of panicking.
//! - No raw cuBLAS types in the API (Rust-CUDA's `raw` module, `MatrixOp::to_raw`,
//!   `cublas_sys`): cuBLAS is reached through cudarc, and the handle stays inside
//!   [`CublasContext`].

mod backend;
mod check;
mod context;
mod datatype;
mod error;
mod lt;

pub use context::CublasContext;
pub use datatype::{GemmDatatype, GemmExDatatype, GpuBox, GpuBuffer, GpuBufferMut};
pub use error::Error;
pub use lt::{Fp8Format, LtMatmul, LtMatmulFp8};

/// How [`CublasContext::gemm_ex`] computes: cuBLAS's `cublasComputeType_t`. Every variant
/// accumulates in `f32` and takes `f32` scalars (`alpha`, `beta`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComputeType {
    /// `CUBLAS_COMPUTE_32F` (the default): `f32` accumulation. `bf16` and `f16` operands run
    /// on tensor cores; `f32` operands run in full FP32, TF32 off (the handle keeps cuBLAS's
    /// default math mode, which never uses TF32 for this compute type), as `cublasSgemm`.
    #[default]
    F32,
    /// `CUBLAS_COMPUTE_32F_PEDANTIC`: as [`ComputeType::F32`], but every stage in single
    /// precision, with no reduced-precision shortcut (e.g. in a split-k reduction); may be
    /// slower.
    F32Pedantic,
    /// `CUBLAS_COMPUTE_32F_FAST_TF32`: `f32` operands rounded to TF32 (8-bit exponent, 10
    /// explicit significand bits) for the tensor cores, `f32` accumulation and output. Only
    /// for `f32` operands.
    F32FastTf32,
}

impl ComputeType {
    /// cuBLAS's name, e.g. `CUBLAS_COMPUTE_32F_FAST_TF32`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::F32 => "CUBLAS_COMPUTE_32F",
            Self::F32Pedantic => "CUBLAS_COMPUTE_32F_PEDANTIC",
            Self::F32FastTf32 => "CUBLAS_COMPUTE_32F_FAST_TF32",
        }
    }

    /// Whether `cublasGemmEx` takes this compute type for operands of `data_type` (cuBLAS
    /// documentation, `cublasGemmEx`, the table of supported type combinations):
    /// [`ComputeType::F32FastTf32`] needs `CUDA_R_32F`; the others take `CUDA_R_16BF`,
    /// `CUDA_R_16F` and `CUDA_R_32F`.
    pub(crate) fn supports(self, data_type: cudarc::cublas::sys::cudaDataType) -> bool {
        use cudarc::cublas::sys::cudaDataType as D;
        match self {
            Self::F32 | Self::F32Pedantic => {
                matches!(data_type, D::CUDA_R_16BF | D::CUDA_R_16F | D::CUDA_R_32F)
            }
            Self::F32FastTf32 => data_type == D::CUDA_R_32F,
        }
    }

    /// cuBLAS's `cublasComputeType_t` for this compute type.
    pub(crate) fn to_raw(self) -> cudarc::cublas::sys::cublasComputeType_t {
        use cudarc::cublas::sys::cublasComputeType_t as C;
        match self {
            Self::F32 => C::CUBLAS_COMPUTE_32F,
            Self::F32Pedantic => C::CUBLAS_COMPUTE_32F_PEDANTIC,
            Self::F32FastTf32 => C::CUBLAS_COMPUTE_32F_FAST_TF32,
        }
    }
}

impl std::fmt::Display for ComputeType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An operation applied to a matrix operand before the multiplication.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixOp {
    /// Use the matrix as stored (the default).
    #[default]
    None,
    /// Use the transpose.
    Transpose,
    /// Use the conjugate transpose (the transpose, for real types).
    ConjugateTranspose,
}

impl MatrixOp {
    /// cuBLAS's `cublasOperation_t` for this operation.
    pub(crate) fn to_raw(self) -> cudarc::cublas::sys::cublasOperation_t {
        use cudarc::cublas::sys::cublasOperation_t as Op;
        match self {
            MatrixOp::None => Op::CUBLAS_OP_N,
            MatrixOp::Transpose => Op::CUBLAS_OP_T,
            MatrixOp::ConjugateTranspose => Op::CUBLAS_OP_C,
        }
    }

    /// `true` for [`MatrixOp::Transpose`] and [`MatrixOp::ConjugateTranspose`]: the operand is
    /// stored with its rows and columns swapped.
    pub fn transposes(self) -> bool {
        !matches!(self, MatrixOp::None)
    }
}

#[cfg(test)]
mod tests {
    use super::ComputeType;
    use cudarc::cublas::sys::cudaDataType as D;

    #[test]
    fn tf32_takes_only_f32_operands() {
        for compute in [ComputeType::F32, ComputeType::F32Pedantic] {
            for t in [D::CUDA_R_16BF, D::CUDA_R_16F, D::CUDA_R_32F] {
                assert!(compute.supports(t), "{compute} {t:?}");
            }
            assert!(!compute.supports(D::CUDA_R_64F));
        }
        assert!(ComputeType::F32FastTf32.supports(D::CUDA_R_32F));
        assert!(!ComputeType::F32FastTf32.supports(D::CUDA_R_16BF));
        assert!(!ComputeType::F32FastTf32.supports(D::CUDA_R_16F));
        assert_eq!(
            ComputeType::F32FastTf32.to_string(),
            "CUBLAS_COMPUTE_32F_FAST_TF32"
        );
    }
}
