//! [`CublasContext`]: a cuBLAS handle and the routines called through it.

use crate::check::GemmShape;
use crate::datatype::{GemmDatatype, GemmExDatatype, GpuBox, GpuBuffer, GpuBufferMut};
use crate::{ComputeType, Error, MatrixOp};
use cudarc::cublas::{CudaBlas, result, sys};
use cudarc::driver::{CudaStream, DevicePtr, DeviceSlice, SyncOnDrop};
use cust::context::CurrentContext;
use cust::error::CudaError;
use cust::memory::DeviceBuffer;
use cust::stream::Stream;
use std::sync::Arc;

/// `cublasGemmEx`'s name, for errors.
const GEMM_EX: &str = "cublasGemmEx";
/// `cublasSetWorkspace_v2`'s name, for errors.
const SET_WORKSPACE: &str = "cublasSetWorkspace_v2";

/// A cuBLAS handle: the library's workspace on one CUDA context. Make one per thread and per
/// device, and keep it: creating one allocates device memory and dropping one synchronises
/// the device (cuBLAS's own advice).
///
/// The handle runs in device pointer mode: scalars are passed as
/// [`DeviceBox`](cust::memory::DeviceBox)es.
#[derive(Debug)]
pub struct CublasContext {
    /// Declared before `workspace`, so it is dropped first: `cublasDestroy_v2` waits for the
    /// device, so no cuBLAS kernel still uses the workspace when it is freed.
    blas: CudaBlas,
    /// The stream the handle returns to after [`CublasContext::with_stream`]: the context's
    /// default stream.
    home: Arc<CudaStream>,
    /// The workspace set by [`CublasContext::set_workspace`], attached before every routine
    /// (binding a stream resets cuBLAS to its default pool); `None`: cuBLAS's default pool.
    workspace: Option<DeviceBuffer<u8>>,
}

impl CublasContext {
    /// A new cuBLAS handle on the current context (see
    /// [`CurrentContext`]), in device pointer mode.
    ///
    /// # Errors
    /// [`Error::Cuda`] with [`CudaError::NoContext`] if no context is current (call
    /// `cust::quick_init()` first); [`Error::Cublas`] if cuBLAS cannot be loaded or
    /// initialised (`cublasCreate_v2`, `cublasSetPointerMode_v2`).
    pub fn new() -> Result<Self, Error> {
        let ctx = CurrentContext::get_current()?;
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

    /// The workspace size cuBLAS recommends for Hopper GPUs (sm_90), bytes: 32 MiB (cuBLAS
    /// documentation, `cublasSetWorkspace`; 4 MiB is its figure for earlier architectures).
    pub const HOPPER_WORKSPACE_BYTES: usize = 32 << 20;

    /// Gives the handle a workspace of its own, `bytes` long, allocated on the context the
    /// handle was made on and used by every later routine (`cublasSetWorkspace_v2`). Some of
    /// cuBLAS's fastest kernels (e.g. split-k ones) need a workspace, and cuBLAS's default
    /// pool may be smaller than they want; see [`CublasContext::HOPPER_WORKSPACE_BYTES`]. A
    /// second call replaces the first workspace.
    ///
    /// Routines on any stream share the one workspace; their uses of it are ordered like
    /// their operands' (cust's buffers record each use), so two streams never use it at once.
    ///
    /// # Errors
    /// [`Error::EmptyWorkspace`] if `bytes` is 0; [`Error::Cuda`] if the context cannot be
    /// bound or the allocation fails (e.g. out of memory).
    pub fn set_workspace(&mut self, bytes: usize) -> Result<(), Error> {
        if bytes == 0 {
            return Err(Error::EmptyWorkspace {
                call: SET_WORKSPACE,
            });
        }
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

    /// The size of the workspace set by [`CublasContext::set_workspace`], bytes; `None` when
    /// cuBLAS uses its default pool.
    pub fn workspace_bytes(&self) -> Option<usize> {
        self.workspace.as_ref().map(DeviceSlice::len)
    }

    /// The cuBLAS library's version as (major, minor, patch), e.g. `(12, 8, 4)`.
    ///
    /// # Errors
    /// [`Error::Cublas`] if `cublasGetVersion_v2` fails.
    pub fn version(&self) -> Result<(u32, u32, u32), Error> {
        let mut raw: std::ffi::c_int = 0;
        // SAFETY: the handle is live; `raw` is a valid place for one int.
        unsafe { sys::cublasGetVersion_v2(*self.blas.handle(), &mut raw) }
            .result()
            .map_err(Error::cublas("cublasGetVersion_v2"))?;
        let raw = u32::try_from(raw).unwrap_or(0);
        Ok((raw / 1000, (raw % 1000) / 100, raw % 100))
    }

    /// Runs `func` with the handle bound to `stream`, then binds it back to the context's
    /// default stream (Rust-CUDA's `with_stream`). Routines that take a stream, such as
    /// [`CublasContext::gemm`], bind it themselves, so this is only needed for code written
    /// against Rust-CUDA's API.
    ///
    /// # Errors
    /// `func`'s error; [`Error::Cublas`] if `cublasSetStream_v2` fails.
    pub fn with_stream<T, F: FnOnce(&mut Self) -> Result<T, Error>>(
        &mut self,
        stream: &Stream,
        func: F,
    ) -> Result<T, Error> {
        self.bind(stream.as_cudarc())?;
        let out = func(self);
        let home = self.home.clone();
        self.bind(&home)?;
        out
    }

    /// Binds the handle to `stream`.
    fn bind(&mut self, stream: &Arc<CudaStream>) -> Result<(), Error> {
        stream
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver("binding the stream's context for cuBLAS"))?;
        // SAFETY: cudarc marks this unsafe because work on two streams may race. Every
        // operand of a blastoff call is a cust buffer whose `device_ptr` makes `stream` wait
        // for the buffer's previous uses and records this one, so the calls are ordered.
        unsafe { self.blas.set_stream(stream.clone()) }.map_err(Error::cublas("cublasSetStream_v2"))
    }

    /// General matrix multiplication, queued on `stream`:
    /// `C = alpha · op_a(A) · op_b(B) + beta · C`, column-major (see the
    /// [crate docs](crate#conventions)).
    ///
    /// Shapes: `op_a(A)` is `m×k`, `op_b(B)` is `k×n`, `C` is `m×n`. `A` is stored `m×k`
    /// (`lda ≥ m`) for [`MatrixOp::None`] and `k×m` (`lda ≥ k`) otherwise; `B` is stored
    /// `k×n` (`ldb ≥ k`) or `n×k` (`ldb ≥ n`); `C` is stored `m×n` (`ldc ≥ m`). A matrix
    /// stored `rows×cols` with leading dimension `ld` needs a buffer of at least
    /// `ld × (cols − 1) + rows` elements. `alpha` and `beta` are device scalars.
    ///
    /// The argument order is Rust-CUDA's (`alpha, a, lda, op_a, beta, b, ldb, op_b, c,
    /// ldc`). The call returns once queued; synchronise `stream` before reading `c` on the
    /// host.
    ///
    /// # Errors
    /// Checked before anything is queued: [`Error::ZeroDimension`] (`m`, `n` or `k` is 0),
    /// [`Error::DimensionTooLarge`] (over `i32::MAX`), [`Error::LeadingDimension`],
    /// [`Error::BufferTooShort`], [`Error::ContextMismatch`] (an operand allocated on
    /// another context than `stream`'s). Then [`Error::Cuda`] if the stream's context cannot be
    /// bound, and [`Error::Cublas`] if cuBLAS rejects the call (`cublasSgemm_v2` /
    /// `cublasDgemm_v2`, `cublasSetStream_v2`).
    #[expect(
        clippy::too_many_arguments,
        reason = "Rust-CUDA's blastoff signature, kept so its programs port unchanged"
    )]
    pub fn gemm<T: GemmDatatype>(
        &mut self,
        stream: &Stream,
        m: usize,
        n: usize,
        k: usize,
        alpha: &impl GpuBox<T>,
        a: &impl GpuBuffer<T>,
        lda: usize,
        op_a: MatrixOp,
        beta: &impl GpuBox<T>,
        b: &impl GpuBuffer<T>,
        ldb: usize,
        op_b: MatrixOp,
        c: &mut impl GpuBufferMut<T>,
        ldc: usize,
    ) -> Result<(), Error> {
        GemmShape {
            m,
            n,
            k,
            lda,
            op_a,
            a_len: DeviceSlice::len(a),
            ldb,
            op_b,
            b_len: DeviceSlice::len(b),
            ldc,
            c_len: DeviceSlice::len(c),
        }
        .check(T::GEMM)?;
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
        // mode; `alpha` and `beta` are `DeviceBox<T>`s (one `T` each); the shape check above
        // proves `a`, `b` and `c` hold every element the routine reads or writes; `c` is
        // borrowed mutably, so it overlaps neither `a` nor `b`; the guards keep the buffers'
        // uses ordered with other streams.
        unsafe {
            T::gemm(
                *self.blas.handle(),
                op_a.to_raw(),
                op_b.to_raw(),
                int(m),
                int(n),
                int(k),
                alpha_ptr as *const T,
                a_ptr as *const T,
                int(lda),
                b_ptr as *const T,
                int(ldb),
                beta_ptr as *const T,
                c_ptr as *mut T,
                int(ldc),
            )
        }
        .map_err(Error::cublas(T::GEMM))
    }

    /// Mixed-precision general matrix multiplication (`cublasGemmEx`), queued on `stream`:
    /// `C = alpha · op_a(A) · op_b(B) + beta · C`, column-major (see the
    /// [crate docs](crate#conventions)), with `A`, `B` and `C` all of type `T` (`bf16`, `f16`
    /// or `f32`, [`GemmExDatatype`]) and the products summed as `compute` says:
    ///
    /// | `T` | `compute` | what runs |
    /// |---|---|---|
    /// | `bf16` / `f16` | [`ComputeType::F32`] | tensor cores, `f32` accumulation, result rounded to `T` |
    /// | `f32` | [`ComputeType::F32FastTf32`] | tensor cores on TF32-rounded inputs, `f32` accumulation |
    /// | `f32` | [`ComputeType::F32`] | FP32 without TF32, as [`CublasContext::gemm`] |
    ///
    /// Shapes, leading dimensions and buffer lengths are as for [`CublasContext::gemm`];
    /// `alpha` and `beta` are `f32` device scalars whatever `T` is. cuBLAS picks its algorithm
    /// (`CUBLAS_GEMM_DEFAULT`) and uses the workspace of [`CublasContext::set_workspace`] if
    /// one was set. The call returns once queued; synchronise `stream` before reading `c`.
    ///
    /// A row-major product `C = A·Bᵀ` (`A` m×k, `B` n×k, `C` m×n, all row-major) is the
    /// column-major `Cᵀ = B·Aᵀ`: pass `b` as the first operand with [`MatrixOp::Transpose`]
    /// and `a` as the second with [`MatrixOp::None`], and `(m, n, k) = (n, m, k)`,
    /// `lda = ldb = k`, `ldc = n`.
    ///
    /// # Errors
    /// Checked before anything is queued: [`Error::UnsupportedCompute`] (`compute` does not
    /// take `T`), then as [`CublasContext::gemm`]: [`Error::ZeroDimension`],
    /// [`Error::DimensionTooLarge`], [`Error::LeadingDimension`], [`Error::BufferTooShort`],
    /// [`Error::ContextMismatch`]. Then [`Error::Cuda`] if the stream's context cannot be
    /// bound, and [`Error::Cublas`] if cuBLAS rejects the call (`cublasGemmEx`,
    /// `cublasSetStream_v2`, `cublasSetWorkspace_v2`), e.g. `CUBLAS_STATUS_ARCH_MISMATCH`
    /// for `bf16` on a GPU older than sm_80.
    #[expect(
        clippy::too_many_arguments,
        reason = "the argument order of `gemm` (Rust-CUDA's), plus the compute type"
    )]
    pub fn gemm_ex<T: GemmExDatatype>(
        &mut self,
        stream: &Stream,
        m: usize,
        n: usize,
        k: usize,
        alpha: &impl GpuBox<f32>,
        a: &impl GpuBuffer<T>,
        lda: usize,
        op_a: MatrixOp,
        beta: &impl GpuBox<f32>,
        b: &impl GpuBuffer<T>,
        ldb: usize,
        op_b: MatrixOp,
        c: &mut impl GpuBufferMut<T>,
        ldc: usize,
        compute: ComputeType,
    ) -> Result<(), Error> {
        if !compute.supports(T::DATA_TYPE) {
            return Err(Error::UnsupportedCompute {
                call: GEMM_EX,
                compute,
                datatype: T::NAME,
            });
        }
        GemmShape {
            m,
            n,
            k,
            lda,
            op_a,
            a_len: DeviceSlice::len(a),
            ldb,
            op_b,
            b_len: DeviceSlice::len(b),
            ldc,
            c_len: DeviceSlice::len(c),
        }
        .check(GEMM_EX)?;
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
        // elements of `a`, `b` and `c`, and `compute` takes it (checked above); the shape
        // check proves `a`, `b` and `c` hold every element the routine reads or writes; `c`
        // is borrowed mutably, so it overlaps neither `a` nor `b`; the guards keep the
        // buffers' and the workspace's uses ordered with other streams.
        unsafe {
            result::gemm_ex(
                *self.blas.handle(),
                op_a.to_raw(),
                op_b.to_raw(),
                int(m),
                int(n),
                int(k),
                alpha_ptr as *const std::ffi::c_void,
                a_ptr as *const std::ffi::c_void,
                T::DATA_TYPE,
                int(lda),
                b_ptr as *const std::ffi::c_void,
                T::DATA_TYPE,
                int(ldb),
                beta_ptr as *const std::ffi::c_void,
                c_ptr as *mut std::ffi::c_void,
                T::DATA_TYPE,
                int(ldc),
                compute.to_raw(),
                sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(Error::cublas(GEMM_EX))
    }

    /// Points the handle at the workspace of [`CublasContext::set_workspace`], if any, for a
    /// routine `call` about to be queued on `stream` (binding a stream resets cuBLAS to its
    /// default pool). The guard makes `stream` wait for the workspace's earlier uses and,
    /// when dropped after the routine is queued, records this one.
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
fn same_context<T>(
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
