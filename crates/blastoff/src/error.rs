//! [`Error`]: what a blastoff call can fail with.

/// A failed blastoff call. Every variant names the cuBLAS routine it guards (`call`, e.g.
/// `cublasSgemm_v2`).
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A dimension that must be at least 1 is 0.
    #[error("{call}: {name} is 0; it must be at least 1")]
    ZeroDimension {
        /// The cuBLAS routine.
        call: &'static str,
        /// `m`, `n` or `k`.
        name: &'static str,
    },
    /// A dimension or leading dimension is larger than cuBLAS's `int` parameters hold.
    #[error("{call}: {name} = {value} exceeds cuBLAS's 32-bit limit {max}")]
    DimensionTooLarge {
        /// The cuBLAS routine.
        call: &'static str,
        /// The parameter (`m`, `n`, `k`, `lda`, `ldb` or `ldc`).
        name: &'static str,
        /// Its value.
        value: usize,
        /// `i32::MAX`.
        max: usize,
    },
    /// A leading dimension is smaller than the number of rows of the matrix as stored.
    #[error(
        "{call}: {name} = {value} is less than {min_name} = {min}, the rows of matrix {matrix} as stored"
    )]
    LeadingDimension {
        /// The cuBLAS routine.
        call: &'static str,
        /// `lda`, `ldb` or `ldc`.
        name: &'static str,
        /// Its value.
        value: usize,
        /// The dimension it must reach (`m`, `n` or `k`, depending on the operation).
        min_name: &'static str,
        /// That dimension's value.
        min: usize,
        /// `A`, `B` or `C`.
        matrix: &'static str,
    },
    /// A buffer holds fewer elements than its matrix needs.
    #[error(
        "{call}: matrix {matrix} ({rows}×{cols} as stored, leading dimension {ld}) needs {needed} elements, but its buffer holds {len}"
    )]
    BufferTooShort {
        /// The cuBLAS routine.
        call: &'static str,
        /// `A`, `B` or `C`.
        matrix: &'static str,
        /// Rows as stored.
        rows: usize,
        /// Columns as stored.
        cols: usize,
        /// Leading dimension.
        ld: usize,
        /// Elements needed: `ld × (cols − 1) + rows`.
        needed: usize,
        /// Elements in the buffer.
        len: usize,
    },
    /// An operand lives on another CUDA context than the stream the call is queued on.
    #[error(
        "{call}: {operand} was allocated on another CUDA context than the stream's (device {operand_device} vs {stream_device}); allocate it on the stream's context"
    )]
    ContextMismatch {
        /// The cuBLAS routine.
        call: &'static str,
        /// `alpha`, `beta`, `A`, `B` or `C`.
        operand: &'static str,
        /// The ordinal of the operand's device.
        operand_device: usize,
        /// The ordinal of the stream's device.
        stream_device: usize,
    },
    /// The stream or an operand is on another kind of device than the handle: GPU memory or
    /// a GPU stream given to a handle made on the CPU emulator, or the reverse. Checked for
    /// the stream and for [`DeviceBuffer`](cust::memory::DeviceBuffer) operands (cust does
    /// not say which device its views and boxes are on).
    #[error(
        "{call}: {operand} is on {operand_device}, but the handle was made on {handle_device}; make the handle (CublasContext::new), the stream and the operands on one context"
    )]
    DeviceMismatch {
        /// The cuBLAS routine.
        call: &'static str,
        /// `stream`, `alpha`, `beta`, `A`, `B` or `C`.
        operand: &'static str,
        /// `a CUDA GPU` or `the CPU emulator`.
        operand_device: &'static str,
        /// The handle's device, likewise.
        handle_device: &'static str,
    },
    /// A routine that only cuBLAS itself answers was called on a handle made on the CPU
    /// emulator, which runs `gemm` and `gemm_ex` without cuBLAS.
    #[error(
        "{call} needs cuBLAS, so a CUDA GPU: on the CPU emulator blastoff runs gemm and gemm_ex only (set FERROCUDA_DEVICE=gpu, or run on a machine with a GPU)"
    )]
    NotOnEmulator {
        /// The cuBLAS routine.
        call: &'static str,
    },
    /// `gemm_ex` was asked for a compute type cuBLAS does not offer for the operands' type.
    #[error(
        "{call}: compute type {compute} does not take {datatype} operands; use ComputeType::F32 (or F32FastTf32 for f32 only)"
    )]
    UnsupportedCompute {
        /// The cuBLAS routine.
        call: &'static str,
        /// The compute type asked for.
        compute: crate::ComputeType,
        /// The operands' type (`bf16`, `f16`, `f32`).
        datatype: &'static str,
    },
    /// An FP8 scale factor ([`crate::LtMatmulFp8`]) that is zero, negative or not finite.
    #[error("{call}: {name} = {value} must be positive and finite (D = scale_a·scale_b·(A·B))")]
    InvalidScale {
        /// The cuBLAS routine.
        call: &'static str,
        /// `scale_a` or `scale_b`.
        name: &'static str,
        /// Its value.
        value: f32,
    },
    /// A workspace of zero bytes was asked for.
    #[error(
        "{call}: a workspace of 0 bytes is not allowed; ask for at least 1 byte (cuBLAS recommends 32 MiB on Hopper, 4 MiB before)"
    )]
    EmptyWorkspace {
        /// The cuBLAS routine (`cublasSetWorkspace_v2`).
        call: &'static str,
    },
    /// cuBLAS returned an error status.
    #[error("{call} failed: {status}")]
    Cublas {
        /// The cuBLAS routine.
        call: &'static str,
        /// cuBLAS's status name, e.g. `CUBLAS_STATUS_INVALID_VALUE`.
        status: String,
    },
    /// A CUDA runtime call (context, stream) failed.
    #[error(transparent)]
    Cuda(#[from] cust::CudaError),
}

impl Error {
    /// Maps cudarc's cuBLAS status error for `call`.
    pub(crate) fn cublas(
        call: &'static str,
    ) -> impl FnOnce(cudarc::cublas::result::CublasError) -> Self {
        move |e| Error::Cublas {
            call,
            status: format!("{:?}", e.0),
        }
    }
}
