//! The one place blastoff picks where a routine runs, in the manner of cust's backend seam:
//! [`Backend::Gpu`] calls cuBLAS through cudarc ([`gpu`]), [`Backend::Cpu`] computes the
//! same routine on the host for cust's CPU emulator ([`cpu`]).
//!
//! [`CublasContext::new`](crate::CublasContext::new) chooses once, from whether the current
//! cust context is the emulator ([`Context::is_emulator`]); the public methods check their
//! arguments (the same checks on both) and then call the methods here, each one `match` over
//! the two. Nothing else in the crate asks which backend it has.

pub(crate) mod cpu;
pub(crate) mod gpu;

use crate::check::GemmShape;
use crate::datatype::{GemmDatatype, GemmExDatatype, GpuBox, GpuBuffer, GpuBufferMut};
use crate::{ComputeType, Error};
use cust::context::Context;
use cust::stream::Stream;

/// [`Error::DeviceMismatch`]'s name for a GPU.
pub(crate) const GPU: &str = "a CUDA GPU";
/// [`Error::DeviceMismatch`]'s name for the emulator.
pub(crate) const CPU: &str = "the CPU emulator";

/// Where a [`CublasContext`](crate::CublasContext)'s routines run.
#[derive(Debug)]
pub(crate) enum Backend {
    /// A cuBLAS handle on a GPU's context.
    Gpu(gpu::Gpu),
    /// The host, for a context of cust's CPU emulator.
    Cpu(cpu::Cpu),
}

impl Backend {
    /// The backend for `ctx`: the CPU for the emulator's, else a new cuBLAS handle.
    ///
    /// # Errors
    /// Those of [`gpu::Gpu::open`] (the CPU backend cannot fail).
    pub(crate) fn open(ctx: &Context) -> Result<Self, Error> {
        if ctx.is_emulator() {
            Ok(Self::Cpu(cpu::Cpu::default()))
        } else {
            gpu::Gpu::open(ctx).map(Self::Gpu)
        }
    }

    /// The device's name in [`Error::DeviceMismatch`]: [`GPU`] or [`CPU`].
    pub(crate) fn device(&self) -> &'static str {
        match self {
            Self::Gpu(_) => GPU,
            Self::Cpu(_) => CPU,
        }
    }

    /// `true` for the CPU backend.
    pub(crate) fn is_emulator(&self) -> bool {
        matches!(self, Self::Cpu(_))
    }

    /// See [`CublasContext::set_workspace`](crate::CublasContext::set_workspace); `bytes` is
    /// at least 1.
    pub(crate) fn set_workspace(&mut self, bytes: usize) -> Result<(), Error> {
        match self {
            Self::Gpu(gpu) => gpu.set_workspace(bytes),
            Self::Cpu(cpu) => {
                cpu.set_workspace(bytes);
                Ok(())
            }
        }
    }

    /// See [`CublasContext::workspace_bytes`](crate::CublasContext::workspace_bytes).
    pub(crate) fn workspace_bytes(&self) -> Option<usize> {
        match self {
            Self::Gpu(gpu) => gpu.workspace_bytes(),
            Self::Cpu(cpu) => cpu.workspace_bytes(),
        }
    }

    /// See [`CublasContext::version`](crate::CublasContext::version).
    pub(crate) fn version(&self) -> Result<(u32, u32, u32), Error> {
        match self {
            Self::Gpu(gpu) => gpu.version(),
            Self::Cpu(_) => Err(Error::NotOnEmulator {
                call: gpu::GET_VERSION,
            }),
        }
    }

    /// Binds the handle to `stream` (nothing to do on the CPU, whose routines run at once).
    pub(crate) fn bind(&mut self, stream: &Stream) -> Result<(), Error> {
        match self {
            Self::Gpu(gpu) => gpu.bind(stream.as_cudarc()),
            Self::Cpu(_) => Ok(()),
        }
    }

    /// Binds the handle back to its context's default stream.
    pub(crate) fn unbind(&mut self) -> Result<(), Error> {
        match self {
            Self::Gpu(gpu) => gpu.unbind(),
            Self::Cpu(_) => Ok(()),
        }
    }

    /// See [`CublasContext::gemm`](crate::CublasContext::gemm); `shape` has been checked and
    /// `stream` is of this backend's device.
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
        match self {
            Self::Gpu(gpu) => gpu.gemm(stream, shape, alpha, a, beta, b, c),
            Self::Cpu(_) => cpu::gemm(shape, alpha, a, beta, b, c),
        }
    }

    /// See [`CublasContext::gemm_ex`](crate::CublasContext::gemm_ex); `shape` has been
    /// checked, `compute` takes `T`, and `stream` is of this backend's device.
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
        match self {
            Self::Gpu(gpu) => gpu.gemm_ex(stream, shape, alpha, a, beta, b, c, compute),
            Self::Cpu(_) => cpu::gemm_ex(shape, alpha, a, beta, b, c),
        }
    }
}
