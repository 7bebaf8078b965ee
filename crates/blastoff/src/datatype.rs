//! Element types ([`GemmDatatype`] for `gemm`, [`GemmExDatatype`] for `gemm_ex`) and the
//! buffer kinds cuBLAS calls accept ([`GpuBuffer`], [`GpuBufferMut`], [`GpuBox`]).
//!
//! The buffer traits are sealed: they are implemented for cust's [`DeviceBuffer`],
//! [`DeviceSlice`] and [`DeviceBox`], which record each use on the stream a call runs on, so a
//! later reader on another stream or the host waits for the cuBLAS call.

use cudarc::cublas::{result, sys};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use cust::memory::{DeviceBox, DeviceBuffer, DeviceCopy, DeviceSlice};
use std::ffi::c_int;

pub(crate) mod sealed {
    use super::*;

    /// The typed cuBLAS entry points of one element type.
    pub trait Gemm: Sized {
        /// The routine's name, for errors.
        const GEMM: &'static str;

        /// `cublas<t>gemm_v2` on raw device addresses.
        ///
        /// # Safety
        /// `handle` is a live cuBLAS handle in device pointer mode, bound to a stream of the
        /// current context; `alpha`, `beta` address one `Self` each and `a`, `b`, `c` hold
        /// at least the elements their shapes need (checked by `GemmShape::check`), all on
        /// that context; `c` overlaps none of the others.
        #[expect(clippy::too_many_arguments, reason = "mirrors cuBLAS's C signature")]
        unsafe fn gemm(
            handle: sys::cublasHandle_t,
            transa: sys::cublasOperation_t,
            transb: sys::cublasOperation_t,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: *const Self,
            a: *const Self,
            lda: c_int,
            b: *const Self,
            ldb: c_int,
            beta: *const Self,
            c: *mut Self,
            ldc: c_int,
        ) -> Result<(), result::CublasError>;
    }

    /// The `cudaDataType` of one element type of `cublasGemmEx`.
    pub trait GemmEx {
        /// cuBLAS's name for the type (`CUDA_R_16BF`, `CUDA_R_16F`, `CUDA_R_32F`).
        const DATA_TYPE: sys::cudaDataType;
    }

    /// Readable device memory of `T`s.
    pub trait Read<T>: DevicePtr<T> {}
    /// Writable device memory of `T`s.
    pub trait Write<T>: DevicePtrMut<T> + Read<T> {}
}

/// An element type of [`CublasContext::gemm`](crate::CublasContext::gemm): `f32`
/// (`cublasSgemm`) or `f64` (`cublasDgemm`). Sealed.
pub trait GemmDatatype: sealed::Gemm + DeviceCopy {}

impl GemmDatatype for f32 {}
impl GemmDatatype for f64 {}

/// Implements [`sealed::Gemm`] for `$t` by forwarding to cudarc's `result::$gemm`, the
/// cuBLAS routine `$name`.
macro_rules! impl_gemm {
    ($t:ty, $name:literal, $gemm:ident) => {
        impl sealed::Gemm for $t {
            const GEMM: &'static str = $name;
            unsafe fn gemm(
                handle: sys::cublasHandle_t,
                transa: sys::cublasOperation_t,
                transb: sys::cublasOperation_t,
                m: c_int,
                n: c_int,
                k: c_int,
                alpha: *const Self,
                a: *const Self,
                lda: c_int,
                b: *const Self,
                ldb: c_int,
                beta: *const Self,
                c: *mut Self,
                ldc: c_int,
            ) -> Result<(), result::CublasError> {
                // SAFETY: forwarded to the caller (see `sealed::Gemm::gemm`).
                unsafe {
                    result::$gemm(
                        handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                    )
                }
            }
        }
    };
}

/// An element type of [`CublasContext::gemm_ex`](crate::CublasContext::gemm_ex): the type of
/// `A`, `B` and `C` alike, with the [`ComputeType`](crate::ComputeType) picking how products
/// are summed. Sealed.
///
/// | type | cuBLAS | storage |
/// |---|---|---|
/// | [`half::bf16`] | `CUDA_R_16BF` | bfloat16: 8-bit exponent, 8-bit significand |
/// | [`half::f16`] | `CUDA_R_16F` | IEEE 754 binary16 |
/// | `f32` | `CUDA_R_32F` | IEEE 754 binary32 |
pub trait GemmExDatatype: sealed::GemmEx + DeviceCopy {
    /// The type's name in errors and tables: `bf16`, `f16`, `f32`.
    const NAME: &'static str;
}

impl sealed::GemmEx for half::bf16 {
    const DATA_TYPE: sys::cudaDataType = sys::cudaDataType::CUDA_R_16BF;
}
impl GemmExDatatype for half::bf16 {
    const NAME: &'static str = "bf16";
}
impl sealed::GemmEx for half::f16 {
    const DATA_TYPE: sys::cudaDataType = sys::cudaDataType::CUDA_R_16F;
}
impl GemmExDatatype for half::f16 {
    const NAME: &'static str = "f16";
}
impl sealed::GemmEx for f32 {
    const DATA_TYPE: sys::cudaDataType = sys::cudaDataType::CUDA_R_32F;
}
impl GemmExDatatype for f32 {
    const NAME: &'static str = "f32";
}

impl_gemm!(f32, "cublasSgemm_v2", sgemm);
impl_gemm!(f64, "cublasDgemm_v2", dgemm);

/// A matrix operand cuBLAS reads: [`DeviceBuffer`] or [`DeviceSlice`] (Rust-CUDA's
/// `GpuBuffer`). Sealed.
pub trait GpuBuffer<T: DeviceCopy>: sealed::Read<T> {}

/// A matrix operand cuBLAS writes: [`DeviceBuffer`]. Sealed.
pub trait GpuBufferMut<T: DeviceCopy>: GpuBuffer<T> + sealed::Write<T> {}

/// A scalar operand in device memory: [`DeviceBox`] (Rust-CUDA's `GpuBox`). Sealed.
pub trait GpuBox<T: DeviceCopy>: sealed::Read<T> {}

impl<T: DeviceCopy> sealed::Read<T> for DeviceBuffer<T> {}
impl<T: DeviceCopy> sealed::Write<T> for DeviceBuffer<T> {}
impl<T: DeviceCopy> GpuBuffer<T> for DeviceBuffer<T> {}
impl<T: DeviceCopy> GpuBufferMut<T> for DeviceBuffer<T> {}

impl<T: DeviceCopy> sealed::Read<T> for DeviceSlice<'_, T> {}
impl<T: DeviceCopy> GpuBuffer<T> for DeviceSlice<'_, T> {}

impl<T: DeviceCopy> sealed::Read<T> for DeviceBox<T> {}
impl<T: DeviceCopy> GpuBox<T> for DeviceBox<T> {}
