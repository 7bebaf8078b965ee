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
//!
//! # Differences from Rust-CUDA's `blastoff`, and why
//!
//! - Bad dimensions, buffers too short for them, and operands on another context than the
//!   stream are an [`Error`] naming the call, the value and the bound, not a panic.
//! - [`GemmDatatype`] is `f32` and `f64`: cust has no `DeviceCopy` for `num_complex` or
//!   `half` types yet, so the complex and `f16` variants are left out.
//! - Only `new`, `with_stream`, `version` and the Level 3 `gemm` are provided (Rust-CUDA's
//!   samples call `new` and `gemm`); the Level 1 routines, the math and atomics modes, the
//!   logger and the fallible `CublasContext::drop` are not.
//! - [`CublasContext::version`] returns a `Result` instead of panicking.
//! - No raw cuBLAS types in the API (Rust-CUDA's `raw` module, `MatrixOp::to_raw`,
//!   `cublas_sys`): cuBLAS is reached through cudarc, and the handle stays inside
//!   [`CublasContext`].

mod check;
mod context;
mod datatype;
mod error;

pub use context::CublasContext;
pub use datatype::{GemmDatatype, GpuBox, GpuBuffer, GpuBufferMut};
pub use error::Error;

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
