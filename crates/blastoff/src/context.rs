//! [`CublasContext`]: a cuBLAS handle (or, on the CPU emulator, its host stand-in) and the
//! routines called through it.

use crate::backend::{Backend, CPU, GPU, gpu};
use crate::check::GemmShape;
use crate::datatype::{GemmDatatype, GemmExDatatype, GpuBox, GpuBuffer, GpuBufferMut};
use crate::{ComputeType, Error, MatrixOp};
use cudarc::driver::DeviceSlice;
use cust::context::CurrentContext;
use cust::stream::Stream;

/// A cuBLAS handle: the library's workspace on one CUDA context. Make one per thread and per
/// device, and keep it: creating one allocates device memory and dropping one synchronises
/// the device (cuBLAS's own advice).
///
/// The handle runs in device pointer mode: scalars are passed as
/// [`DeviceBox`](cust::memory::DeviceBox)es.
///
/// Made on a context of cust's CPU emulator
/// ([`Context::emulator`](cust::context::Context::emulator), or
/// [`Context::from_env`](cust::context::Context::from_env) without a GPU), the handle has no
/// cuBLAS: [`CublasContext::gemm`] and [`CublasContext::gemm_ex`] compute on the host with
/// cuBLAS's argument semantics, checks and errors, and are done when they return. Sums may
/// be added in another order than on the GPU, so results equal the GPU's wherever every
/// partial sum is exact (e.g. small integers); `gemm_ex` computes TF32 requests in full
/// `f32`. [`CublasContext::version`] is [`Error::NotOnEmulator`] there.
#[derive(Debug)]
pub struct CublasContext {
    /// Where the routines run, chosen once by [`CublasContext::new`].
    backend: Backend,
}

impl CublasContext {
    /// A new cuBLAS handle on the current context (see
    /// [`CurrentContext`]), in device pointer mode; on a context of the CPU emulator, the
    /// host stand-in described at [`CublasContext`].
    ///
    /// # Errors
    /// [`Error::Cuda`] with [`CudaError::NoContext`](cust::error::CudaError::NoContext) if
    /// no context is current (call `cust::quick_init()` or `Context::from_env(0)` first);
    /// [`Error::Cublas`] if cuBLAS cannot be loaded or initialised (`cublasCreate_v2`,
    /// `cublasSetPointerMode_v2`).
    pub fn new() -> Result<Self, Error> {
        let ctx = CurrentContext::get_current()?;
        Ok(Self {
            backend: Backend::open(&ctx)?,
        })
    }

    /// The workspace size cuBLAS recommends for Hopper GPUs (sm_90), bytes: 32 MiB (cuBLAS
    /// documentation, `cublasSetWorkspace`; 4 MiB is its figure for earlier architectures).
    pub const HOPPER_WORKSPACE_BYTES: usize = 32 << 20;

    /// Gives the handle a workspace of its own, `bytes` long, allocated on the context the
    /// handle was made on and used by every later routine (`cublasSetWorkspace_v2`). Some of
    /// cuBLAS's fastest kernels (e.g. split-k ones) need a workspace, and cuBLAS's default
    /// pool may be smaller than they want; see [`CublasContext::HOPPER_WORKSPACE_BYTES`]. A
    /// second call replaces the first workspace. On the CPU emulator the size is recorded
    /// and nothing is allocated: the host product packs its blocks in buffers of its own.
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
                call: gpu::SET_WORKSPACE,
            });
        }
        self.backend.set_workspace(bytes)
    }

    /// The size of the workspace set by [`CublasContext::set_workspace`], bytes; `None` when
    /// cuBLAS uses its default pool.
    pub fn workspace_bytes(&self) -> Option<usize> {
        self.backend.workspace_bytes()
    }

    /// The cuBLAS library's version as (major, minor, patch), e.g. `(12, 8, 4)`.
    ///
    /// # Errors
    /// [`Error::Cublas`] if `cublasGetVersion_v2` fails; [`Error::NotOnEmulator`] on the CPU
    /// emulator, which has no cuBLAS.
    pub fn version(&self) -> Result<(u32, u32, u32), Error> {
        self.backend.version()
    }

    /// Runs `func` with the handle bound to `stream`, then binds it back to the context's
    /// default stream (Rust-CUDA's `with_stream`). Routines that take a stream, such as
    /// [`CublasContext::gemm`], bind it themselves, so this is only needed for code written
    /// against Rust-CUDA's API.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] if `stream` is not on the handle's kind of device (a GPU or
    /// the CPU emulator); `func`'s error; [`Error::Cublas`] if `cublasSetStream_v2` fails.
    pub fn with_stream<T, F: FnOnce(&mut Self) -> Result<T, Error>>(
        &mut self,
        stream: &Stream,
        func: F,
    ) -> Result<T, Error> {
        self.same_device(gpu::SET_STREAM, "stream", Some(stream.is_emulator()))?;
        self.backend.bind(stream)?;
        let out = func(self);
        self.backend.unbind()?;
        out
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
    /// host. As in cuBLAS, `beta = 0` means `C` is not read (a NaN there does not
    /// propagate). On the CPU emulator the product is computed on the host before the call
    /// returns (see [`CublasContext`]).
    ///
    /// # Errors
    /// Checked before anything is queued: [`Error::ZeroDimension`] (`m`, `n` or `k` is 0),
    /// [`Error::DimensionTooLarge`] (over `i32::MAX`), [`Error::LeadingDimension`],
    /// [`Error::BufferTooShort`], [`Error::DeviceMismatch`] (`stream` or a
    /// [`DeviceBuffer`](cust::memory::DeviceBuffer) operand on a GPU for a handle on the
    /// CPU emulator, or the reverse), [`Error::ContextMismatch`] (an operand allocated on
    /// another GPU context than `stream`'s). Then [`Error::Cuda`] if the stream's context
    /// cannot be bound (or, on the emulator, a copy fails), and [`Error::Cublas`] if cuBLAS
    /// rejects the call (`cublasSgemm_v2` / `cublasDgemm_v2`, `cublasSetStream_v2`).
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
        let shape = GemmShape {
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
        };
        shape.check(T::GEMM)?;
        self.same_devices(
            T::GEMM,
            [
                ("stream", Some(stream.is_emulator())),
                ("alpha", alpha.on_emulator()),
                ("beta", beta.on_emulator()),
                ("A", a.on_emulator()),
                ("B", b.on_emulator()),
                ("C", c.on_emulator()),
            ],
        )?;
        self.backend.gemm(stream, &shape, alpha, a, beta, b, c)
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
    /// `beta = 0` means `C` is not read. On the CPU emulator the operands are widened to
    /// `f32`, multiplied and summed in `f32` (TF32 requests too) and rounded back to `T`,
    /// before the call returns (see [`CublasContext`]).
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
    /// [`Error::DeviceMismatch`], [`Error::ContextMismatch`]. Then [`Error::Cuda`] if the
    /// stream's context cannot be bound (or, on the emulator, a copy fails), and [`Error::Cublas`] if cuBLAS rejects the call (`cublasGemmEx`,
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
                call: gpu::GEMM_EX,
                compute,
                datatype: T::NAME,
            });
        }
        let shape = GemmShape {
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
        };
        shape.check(gpu::GEMM_EX)?;
        self.same_devices(
            gpu::GEMM_EX,
            [
                ("stream", Some(stream.is_emulator())),
                ("alpha", alpha.on_emulator()),
                ("beta", beta.on_emulator()),
                ("A", a.on_emulator()),
                ("B", b.on_emulator()),
                ("C", c.on_emulator()),
            ],
        )?;
        self.backend
            .gemm_ex(stream, &shape, alpha, a, beta, b, c, compute)
    }

    /// Checks that `operand` (`on_emulator`: whether it is the CPU emulator's; `None` where
    /// cust does not say) is on the handle's kind of device.
    fn same_device(
        &self,
        call: &'static str,
        operand: &'static str,
        on_emulator: Option<bool>,
    ) -> Result<(), Error> {
        match on_emulator {
            Some(on_emulator) if on_emulator != self.backend.is_emulator() => {
                Err(Error::DeviceMismatch {
                    call,
                    operand,
                    operand_device: if on_emulator { CPU } else { GPU },
                    handle_device: self.backend.device(),
                })
            }
            _ => Ok(()),
        }
    }

    /// [`CublasContext::same_device`] for each of `operands`.
    fn same_devices<const N: usize>(
        &self,
        call: &'static str,
        operands: [(&'static str, Option<bool>); N],
    ) -> Result<(), Error> {
        operands
            .into_iter()
            .try_for_each(|(operand, on_emulator)| self.same_device(call, operand, on_emulator))
    }
}
