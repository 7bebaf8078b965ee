//! The GPU backend: a cuBLAS handle (cudarc's [`CudaBlas`]) and the cuBLAS calls of each
//! routine.

use crate::check::GemmShape;
use crate::datatype::{GemmDatatype, GemmExDatatype, GpuBox, GpuBuffer, GpuBufferMut};
use crate::{ComputeType, Error};
use cudarc::cublas::{CudaBlas, result, sys};
use cudarc::driver::{CudaStream, DevicePtr, DeviceSlice, SyncOnDrop};
use cust::context::Context;
use cust::error::CudaError;
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use std::sync::Arc;

/// `cublasGemmEx`'s name, for errors.
pub(crate) const GEMM_EX: &str = "cublasGemmEx";
/// `cublasSetWorkspace_v2`'s name, for errors.
pub(crate) const SET_WORKSPACE: &str = "cublasSetWorkspace_v2";
/// `cublasGetVersion_v2`'s name, for errors.
pub(crate) const GET_VERSION: &str = "cublasGetVersion_v2";
/// `cublasSetStream_v2`'s name, for errors.
pub(crate) const SET_STREAM: &str = "cublasSetStream_v2";

/// A cuBLAS handle on one CUDA context, in device pointer mode.
#[derive(Debug)]
pub(crate) struct Gpu {
    /// Declared before `workspace`, so it is dropped first: `cublasDestroy_v2` waits for the
    /// device, so no cuBLAS kernel still uses the workspace when it is freed.
    blas: CudaBlas,
    /// The stream the handle returns to after [`Gpu::unbind`]: the context's default stream.
    home: Arc<CudaStream>,
    /// The workspace set by [`Gpu::set_workspace`], attached before every routine (binding a
    /// stream resets cuBLAS to its default pool); `None`: cuBLAS's default pool.
    workspace: Option<DeviceBuffer<u8>>,
}

impl Gpu {
    /// A new cuBLAS handle on `ctx` (a GPU's), in device pointer mode.
    ///
    /// # Errors
    /// [`Error::Cublas`] if cuBLAS cannot be loaded or initialised (`cublasCreate_v2`,
    /// `cublasSetPointerMode_v2`).
    pub(crate) fn open(ctx: &Context) -> Result<Self, Error> {
        let home = ctx.as_cudarc().default_stream();
        let blas = CudaBlas::new(home.clone()).map_err(Error::cublas("cublasCreate_v2"))?;
        blas.set_pointer_mode(sys::cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE)
            .map_err(Error::cublas("cublasSetPointerMode_v2"))?;
        Ok(Self {
            blas,
            home,
            workspace: None,
        })
    }

    /// Allocates a workspace of `bytes` (at least 1) on the handle's context, replacing the
    /// old one.
    ///
    /// # Errors
    /// [`Error::Cuda`] if the context cannot be bound or the allocation fails.
    pub(crate) fn set_workspace(&mut self, bytes: usize) -> Result<(), Error> {
        self.home
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver(
                "binding the handle's context for its workspace",
            ))?;
        // Drop the old workspace first, so that both never need memory at once.
        self.workspace = None;
        self.workspace = Some(DeviceBuffer::zeroed(bytes)?);
        Ok(())
    }

    /// The workspace's size, bytes; `None` for cuBLAS's default pool.
    pub(crate) fn workspace_bytes(&self) -> Option<usize> {
        self.workspace.as_ref().map(DeviceSlice::len)
    }

    /// cuBLAS's version as (major, minor, patch).
    ///
    /// # Errors
    /// [`Error::Cublas`] if `cublasGetVersion_v2` fails.
    pub(crate) fn version(&self) -> Result<(u32, u32, u32), Error> {
        let mut raw: std::ffi::c_int = 0;
        // SAFETY: the handle is live; `raw` is a valid place for one int.
        unsafe { sys::cublasGetVersion_v2(*self.blas.handle(), &mut raw) }
            .result()
            .map_err(Error::cublas(GET_VERSION))?;
        let raw = u32::try_from(raw).unwrap_or(0);
        Ok((raw / 1000, (raw % 1000) / 100, raw % 100))
    }

    /// Binds the handle back to the context's default stream.
    pub(crate) fn unbind(&mut self) -> Result<(), Error> {
        let home = self.home.clone();
        self.bind(&home)
    }

    /// Binds the handle to `stream`.
    pub(crate) fn bind(&mut self, stream: &Arc<CudaStream>) -> Result<(), Error> {
        stream
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver("binding the stream's context for cuBLAS"))?;
        // SAFETY: cudarc marks this unsafe because work on two streams may race. Every
        // operand of a blastoff call is a cust buffer whose `device_ptr` makes `stream` wait
        // for the buffer's previous uses and records this one, so the calls are ordered.
        unsafe { self.blas.set_stream(stream.clone()) }.map_err(Error::cublas(SET_STREAM))
    }

    /// `cublas<t>gemm_v2` on `stream`; `shape` has been checked.
    #[expect(
        clippy::too_many_arguments,
        reason = "the operands of `CublasContext::gemm`, its shape gathered in `shape`"
    )]
    pub(crate) fn gemm<T: GemmDatatype>(
        &mut self,
        stream: &Stream,
        shape: &GemmShape,
        alpha: &impl GpuBox<T>,
        a: &impl GpuBuffer<T>,
        beta: &impl GpuBox<T>,
        b: &impl GpuBuffer<T>,
        c: &mut impl GpuBufferMut<T>,
    ) -> Result<(), Error> {
        let cu = stream.as_cudarc();
        same_context(T::GEMM, cu, "alpha", alpha)?;
        same_context(T::GEMM, cu, "beta", beta)?;
        same_context(T::GEMM, cu, "A", a)?;
        same_context(T::GEMM, cu, "B", b)?;
        same_context(T::GEMM, cu, "C", c)?;
        self.bind(cu)?;
        let _workspace_use = self.attach_workspace(T::GEMM, cu)?;
        // Each guard records this use on `cu` when dropped, after the call is queued.
        let (alpha_ptr, _alpha_use) = alpha.device_ptr(cu);
        let (beta_ptr, _beta_use) = beta.device_ptr(cu);
        let (a_ptr, _a_use) = a.device_ptr(cu);
        let (b_ptr, _b_use) = b.device_ptr(cu);
        let (c_ptr, _c_use) = c.device_ptr_mut(cu);
        // Checked by `GemmShape::check`: every dimension fits an `int`.
        let int = |x: usize| x as std::ffi::c_int;
        // SAFETY: the handle is live, bound to `cu` on the current context, in device pointer
        // mode; `alpha` and `beta` are `DeviceBox<T>`s (one `T` each); the shape check
        // proves `a`, `b` and `c` hold every element the routine reads or writes; `c` is
        // borrowed mutably, so it overlaps neither `a` nor `b`; the guards keep the buffers'
        // uses ordered with other streams.
        unsafe {
            T::gemm(
                *self.blas.handle(),
                shape.op_a.to_raw(),
                shape.op_b.to_raw(),
                int(shape.m),
                int(shape.n),
                int(shape.k),
                alpha_ptr as *const T,
                a_ptr as *const T,
                int(shape.lda),
                b_ptr as *const T,
                int(shape.ldb),
                beta_ptr as *const T,
                c_ptr as *mut T,
                int(shape.ldc),
            )
        }
        .map_err(Error::cublas(T::GEMM))
    }

    /// `cublasGemmEx` on `stream`; `shape` has been checked and `compute` takes `T`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the operands of `CublasContext::gemm_ex`, its shape gathered in `shape`"
    )]
    pub(crate) fn gemm_ex<T: GemmExDatatype>(
        &mut self,
        stream: &Stream,
        shape: &GemmShape,
        alpha: &impl GpuBox<f32>,
        a: &impl GpuBuffer<T>,
        beta: &impl GpuBox<f32>,
        b: &impl GpuBuffer<T>,
        c: &mut impl GpuBufferMut<T>,
        compute: ComputeType,
    ) -> Result<(), Error> {
        let cu = stream.as_cudarc();
        same_context(GEMM_EX, cu, "alpha", alpha)?;
        same_context(GEMM_EX, cu, "beta", beta)?;
        same_context(GEMM_EX, cu, "A", a)?;
        same_context(GEMM_EX, cu, "B", b)?;
        same_context(GEMM_EX, cu, "C", c)?;
        self.bind(cu)?;
        let _workspace_use = self.attach_workspace(GEMM_EX, cu)?;
        // Each guard records this use on `cu` when dropped, after the call is queued.
        let (alpha_ptr, _alpha_use) = alpha.device_ptr(cu);
        let (beta_ptr, _beta_use) = beta.device_ptr(cu);
        let (a_ptr, _a_use) = a.device_ptr(cu);
        let (b_ptr, _b_use) = b.device_ptr(cu);
        let (c_ptr, _c_use) = c.device_ptr_mut(cu);
        // Checked by `GemmShape::check`: every dimension fits an `int`.
        let int = |x: usize| x as std::ffi::c_int;
        // SAFETY: the handle is live, bound to `cu` on the current context, in device pointer
        // mode; every supported compute type is a 32F one, whose scale type is `f32`, and
        // `alpha` and `beta` are `DeviceBox<f32>`s; `T::DATA_TYPE` is the type of the
        // elements of `a`, `b` and `c`, and `compute` takes it (checked by the caller); the
        // shape check proves `a`, `b` and `c` hold every element the routine reads or writes;
        // `c` is borrowed mutably, so it overlaps neither `a` nor `b`; the guards keep the
        // buffers' and the workspace's uses ordered with other streams.
        unsafe {
            result::gemm_ex(
                *self.blas.handle(),
                shape.op_a.to_raw(),
                shape.op_b.to_raw(),
                int(shape.m),
                int(shape.n),
                int(shape.k),
                alpha_ptr as *const std::ffi::c_void,
                a_ptr as *const std::ffi::c_void,
                T::DATA_TYPE,
                int(shape.lda),
                b_ptr as *const std::ffi::c_void,
                T::DATA_TYPE,
                int(shape.ldb),
                beta_ptr as *const std::ffi::c_void,
                c_ptr as *mut std::ffi::c_void,
                T::DATA_TYPE,
                int(shape.ldc),
                compute.to_raw(),
                sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(Error::cublas(GEMM_EX))
    }

    /// Points the handle at the workspace of [`Gpu::set_workspace`], if any, for a routine
    /// `call` about to be queued on `stream` (binding a stream resets cuBLAS to its default
    /// pool). The guard makes `stream` wait for the workspace's earlier uses and, when
    /// dropped after the routine is queued, records this one.
    fn attach_workspace<'a>(
        &'a self,
        call: &'static str,
        stream: &'a CudaStream,
    ) -> Result<Option<SyncOnDrop<'a>>, Error> {
        let Some(workspace) = &self.workspace else {
            return Ok(None);
        };
        same_context(call, stream, "workspace", workspace)?;
        let (ptr, guard) = workspace.device_ptr(stream);
        // SAFETY: the handle is live and bound to `stream`; `ptr` addresses
        // `DeviceSlice::len(workspace)` bytes of device memory on the stream's context
        // (checked above), allocated by the driver (so at least 256-byte aligned, as cuBLAS
        // requires), and kept alive by `self` until the handle is destroyed.
        unsafe {
            sys::cublasSetWorkspace_v2(
                *self.blas.handle(),
                ptr as *mut std::ffi::c_void,
                DeviceSlice::len(workspace),
            )
        }
        .result()
        .map_err(Error::cublas(SET_WORKSPACE))?;
        Ok(Some(guard))
    }
}

/// Checks that `operand` lives on `stream`'s CUDA context: cuBLAS would otherwise read
/// another context's addresses.
pub(crate) fn same_context<T>(
    call: &'static str,
    stream: &CudaStream,
    operand: &'static str,
    buf: &impl DeviceSlice<T>,
) -> Result<(), Error> {
    let (want, have) = (stream.context(), buf.stream().context());
    if want.cu_ctx() == have.cu_ctx() {
        Ok(())
    } else {
        Err(Error::ContextMismatch {
            call,
            operand,
            operand_device: have.ordinal(),
            stream_device: want.ordinal(),
        })
    }
}
