//! Element types ([`GemmDatatype`] for `gemm`, [`GemmExDatatype`] for `gemm_ex`) and the
//! buffer kinds cuBLAS calls accept ([`GpuBuffer`], [`GpuBufferMut`], [`GpuBox`]).
//!
//! The buffer traits are sealed: they are implemented for cust's [`DeviceBuffer`],
//! [`DeviceSlice`] and [`DeviceBox`], which record each use on the stream a call runs on, so a
//! later reader on another stream or the host waits for the cuBLAS call. On the CPU emulator
//! the same traits copy the operands to the host and the result back, through cust's copies.

use cudarc::cublas::{result, sys};
use cudarc::driver::{DevicePtr, DevicePtrMut};
use cust::error::CudaResult;
use cust::memory::{CopyDestination, DeviceBox, DeviceBuffer, DeviceCopy, DeviceSlice};
use std::ffi::c_int;

pub(crate) mod sealed {
    use super::*;

    /// The typed entry points of one element type: cuBLAS's, and the CPU product's.
    pub trait Gemm: Sized + Copy + PartialEq {
        /// The routine's name, for errors.
        const GEMM: &'static str;
        /// Zero.
        const ZERO: Self;

        /// `C (m×n) ← alpha · A (m×k) · B (k×n) + beta · C` on the host (`matrixmultiply`'s
        /// `sgemm` / `dgemm`), each matrix given by its first element and its row and column
        /// strides in elements. With `beta` zero, `C` is not read. With `k` zero, `A` and `B`
        /// are not read and `C ← beta · C`.
        ///
        /// # Safety
        /// For every `i < m`, `p < k`, `j < n`: `a + i·rsa + p·csa` and `b + p·rsb + j·csb`
        /// are readable, and `c + i·rsc + j·csc` is readable and writable, distinct for
        /// distinct `(i, j)`, and overlaps neither `A` nor `B`.
        #[expect(
            clippy::too_many_arguments,
            reason = "mirrors matrixmultiply's signature"
        )]
        unsafe fn host_gemm(
            m: usize,
            k: usize,
            n: usize,
            alpha: Self,
            a: *const Self,
            rsa: isize,
            csa: isize,
            b: *const Self,
            rsb: isize,
            csb: isize,
            beta: Self,
            c: *mut Self,
            rsc: isize,
            csc: isize,
        );

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

    /// The `cudaDataType` of one element type of `cublasGemmEx`, and its conversions for
    /// the CPU product (which computes in `f32`).
    pub trait GemmEx: Copy {
        /// cuBLAS's name for the type (`CUDA_R_16BF`, `CUDA_R_16F`, `CUDA_R_32F`).
        const DATA_TYPE: sys::cudaDataType;
        /// The value as an `f32` (exact for every type).
        fn to_f32(self) -> f32;
        /// `x` rounded to the nearest value of the type, ties to even (`f32`: `x`).
        fn from_f32(x: f32) -> Self;
    }

    /// Readable device memory of `T`s.
    pub trait Read<T>: DevicePtr<T> {
        /// All the memory's `T`s, copied to the host (the CPU backend's input).
        fn clone_dtoh(&self) -> CudaResult<Vec<T>>;
        /// `Some(true)` for memory of the CPU emulator, `Some(false)` for a GPU's, `None`
        /// where cust does not say (its views and boxes have no public `is_emulator`).
        fn on_emulator(&self) -> Option<bool>;
    }
    /// One `T` in device memory.
    pub trait Scalar<T> {
        /// The value, copied to the host (the CPU backend's `alpha` and `beta`).
        fn value(&self) -> CudaResult<T>;
    }
    /// Writable device memory of `T`s.
    pub trait Write<T>: DevicePtrMut<T> + Read<T> {
        /// Overwrites all the memory's `T`s with `src`, of the same length (the CPU
        /// backend's output).
        fn copy_htod(&mut self, src: &[T]) -> CudaResult<()>;
    }
}

/// An element type of [`CublasContext::gemm`](crate::CublasContext::gemm): `f32`
/// (`cublasSgemm`) or `f64` (`cublasDgemm`). Sealed.
pub trait GemmDatatype: sealed::Gemm + DeviceCopy {}

impl GemmDatatype for f32 {}
impl GemmDatatype for f64 {}

/// Implements [`sealed::Gemm`] for `$t` by forwarding to cudarc's `result::$gemm`, the
/// cuBLAS routine `$name`, and to `matrixmultiply::$host`.
macro_rules! impl_gemm {
    ($t:ty, $name:literal, $gemm:ident, $host:ident) => {
        impl sealed::Gemm for $t {
            const GEMM: &'static str = $name;
            const ZERO: Self = 0.0;
            unsafe fn host_gemm(
                m: usize,
                k: usize,
                n: usize,
                alpha: Self,
                a: *const Self,
                rsa: isize,
                csa: isize,
                b: *const Self,
                rsb: isize,
                csb: isize,
                beta: Self,
                c: *mut Self,
                rsc: isize,
                csc: isize,
            ) {
                // SAFETY: forwarded to the caller (see `sealed::Gemm::host_gemm`), which
                // states `matrixmultiply`'s conditions: every element in bounds, `C`'s
                // strides not aliasing, `C` not overlapping the inputs.
                unsafe {
                    matrixmultiply::$host(
                        m, k, n, alpha, a, rsa, csa, b, rsb, csb, beta, c, rsc, csc,
                    )
                }
            }
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
    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
    fn from_f32(x: f32) -> Self {
        half::bf16::from_f32(x)
    }
}
impl GemmExDatatype for half::bf16 {
    const NAME: &'static str = "bf16";
}
impl sealed::GemmEx for half::f16 {
    const DATA_TYPE: sys::cudaDataType = sys::cudaDataType::CUDA_R_16F;
    fn to_f32(self) -> f32 {
        half::f16::to_f32(self)
    }
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x)
    }
}
impl GemmExDatatype for half::f16 {
    const NAME: &'static str = "f16";
}
impl sealed::GemmEx for f32 {
    const DATA_TYPE: sys::cudaDataType = sys::cudaDataType::CUDA_R_32F;
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(x: f32) -> Self {
        x
    }
}
impl GemmExDatatype for f32 {
    const NAME: &'static str = "f32";
}

impl_gemm!(f32, "cublasSgemm_v2", sgemm, sgemm);
impl_gemm!(f64, "cublasDgemm_v2", dgemm, dgemm);

/// A matrix operand cuBLAS reads: [`DeviceBuffer`] or [`DeviceSlice`] (Rust-CUDA's
/// `GpuBuffer`). Sealed.
pub trait GpuBuffer<T: DeviceCopy>: sealed::Read<T> {}

/// A matrix operand cuBLAS writes: [`DeviceBuffer`]. Sealed.
pub trait GpuBufferMut<T: DeviceCopy>: GpuBuffer<T> + sealed::Write<T> {}

/// A scalar operand in device memory: [`DeviceBox`] (Rust-CUDA's `GpuBox`). Sealed.
pub trait GpuBox<T: DeviceCopy>: sealed::Read<T> + sealed::Scalar<T> {}

impl<T: DeviceCopy> sealed::Read<T> for DeviceBuffer<T> {
    fn clone_dtoh(&self) -> CudaResult<Vec<T>> {
        self.as_host_vec()
    }
    fn on_emulator(&self) -> Option<bool> {
        Some(self.is_emulator())
    }
}
impl<T: DeviceCopy> sealed::Write<T> for DeviceBuffer<T> {
    fn copy_htod(&mut self, src: &[T]) -> CudaResult<()> {
        CopyDestination::<[T]>::copy_from(self, src)
    }
}
impl<T: DeviceCopy> GpuBuffer<T> for DeviceBuffer<T> {}
impl<T: DeviceCopy> GpuBufferMut<T> for DeviceBuffer<T> {}

impl<T: DeviceCopy> sealed::Read<T> for DeviceSlice<'_, T> {
    fn clone_dtoh(&self) -> CudaResult<Vec<T>> {
        self.as_host_vec()
    }
    fn on_emulator(&self) -> Option<bool> {
        None
    }
}
impl<T: DeviceCopy> GpuBuffer<T> for DeviceSlice<'_, T> {}

impl<T: DeviceCopy> sealed::Read<T> for DeviceBox<T> {
    fn clone_dtoh(&self) -> CudaResult<Vec<T>> {
        Ok(vec![self.get()?])
    }
    fn on_emulator(&self) -> Option<bool> {
        None
    }
}
impl<T: DeviceCopy> sealed::Scalar<T> for DeviceBox<T> {
    fn value(&self) -> CudaResult<T> {
        self.get()
    }
}
impl<T: DeviceCopy> GpuBox<T> for DeviceBox<T> {}
