//! Managed ("unified") memory: [`UnifiedBuffer`], [`UnifiedBox`], [`MemoryAdvice`].

use super::{
    DeviceCopy, ValidAsZeroBits, byte_len,
    device::{Guard, KernelMemory, KernelMemoryMut},
    from_bytes, from_bytes_mut,
};
use crate::{backend, context::CurrentContext, error::CudaResult, stream::Stream};
use std::{fmt, marker::PhantomData};

/// A usage hint for managed memory ([`UnifiedBuffer::advise`]; `cuMemAdvise`).
pub use crate::backend::MemoryAdvice;

/// Managed ("unified") memory: one address valid on the host and the GPU; the driver
/// migrates pages on demand. The host may read it ([`UnifiedBuffer::as_slice`]) once the GPU
/// work that used it has finished, which the accessors wait for.
///
/// On the CPU emulator it is one host allocation that emulated kernels and the host share;
/// the migration hints and prefetches do nothing there.
pub struct UnifiedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    /// The backend's memory, `len * size_of::<T>()` bytes (registered with the emulator's
    /// device there, so emulated launches may use it).
    buf: Box<dyn backend::Managed>,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

impl<T: DeviceCopy + ValidAsZeroBits> fmt::Debug for UnifiedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnifiedBuffer")
            .field("len", &self.len())
            .field("emulator", &self.is_emulator())
            .finish_non_exhaustive()
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> UnifiedBuffer<T> {
    /// `len` copies of `value` in managed memory, on the current context.
    ///
    /// # Errors
    /// [`CudaError::NoContext`](crate::CudaError::NoContext);
    /// [`CudaError::OutOfMemory`](crate::CudaError::OutOfMemory) when it exceeds the device's
    /// free memory (managed memory could oversubscribe it, which this runtime refuses); a
    /// driver error, e.g. `CUDA_ERROR_NOT_PERMITTED` on a device without managed memory.
    pub fn new(value: &T, len: usize) -> CudaResult<Self> {
        let mut b = Self::alloc(len)?;
        b.as_mut_slice()?.fill(*value);
        Ok(b)
    }

    /// A managed copy of `slice`, on the current context.
    ///
    /// # Errors
    /// As [`UnifiedBuffer::new`].
    pub fn from_slice(slice: &[T]) -> CudaResult<Self> {
        let mut b = Self::alloc(slice.len())?;
        b.as_mut_slice()?.copy_from_slice(slice);
        Ok(b)
    }

    /// `len` elements whose contents are unset on a GPU: both callers write every element
    /// before anything reads it.
    fn alloc(len: usize) -> CudaResult<Self> {
        let ctx = CurrentContext::get_current()?;
        let bytes = byte_len::<T>("UnifiedBuffer", len)?;
        ctx.check_free("UnifiedBuffer", bytes)?;
        Ok(Self {
            buf: ctx.backend().alloc_managed(bytes)?,
            len,
            _elem: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `true` for a buffer of the CPU emulator.
    pub fn is_emulator(&self) -> bool {
        self.buf.is_emulator()
    }

    /// The backend's memory (for cudarc's traits).
    pub(crate) fn managed(&self) -> &dyn backend::Managed {
        &*self.buf
    }

    /// As [`UnifiedBuffer::managed`], writable.
    pub(crate) fn managed_mut(&mut self) -> &mut dyn backend::Managed {
        &mut *self.buf
    }

    /// The contents, read in place on the host; waits for GPU work that used the buffer.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_slice(&self) -> CudaResult<&[T]> {
        let bytes = self.buf.bytes()?;
        // SAFETY: `len` `T`s, aligned (managed or 256-byte-aligned memory), every one written
        // by the constructors or by the host and kernels since.
        Ok(unsafe { from_bytes(bytes, self.len) })
    }

    /// The contents, writable in place on the host; waits for GPU work that used the buffer.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        let bytes = self.buf.bytes_mut()?;
        // SAFETY: as in `as_slice`. Only the constructors see the elements before they are
        // written (unset managed bytes on a GPU, as cudarc's `as_mut_slice` gives them), and
        // they only write through this slice.
        Ok(unsafe { from_bytes_mut(bytes, self.len) })
    }

    /// Starts migrating the pages to the device (`cuMemPrefetchAsync`), so that the next
    /// kernel does not fault them in one by one.
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_NOT_PERMITTED` on a device without concurrent managed
    /// access.
    pub fn prefetch_to_device(&self) -> CudaResult<()> {
        self.buf.prefetch_to_device()
    }

    /// Starts migrating the pages back to host memory on `stream` (`cuMemPrefetchAsync` to
    /// the CPU), so that host reads after the GPU work do not fault them in one by one.
    ///
    /// # Errors
    /// A driver error; [`CudaError::BackendMismatch`](crate::CudaError::BackendMismatch) for
    /// a GPU buffer and an emulator stream or the reverse.
    pub fn prefetch_to_host(&self, stream: &Stream) -> CudaResult<()> {
        self.buf.prefetch_to_host(stream.queue())
    }

    /// Gives the driver a hint about how the buffer will be used (`cuMemAdvise` over the whole
    /// buffer); results never depend on it, only migration traffic does.
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_INVALID_DEVICE` for a device without concurrent
    /// managed access.
    pub fn advise(&self, advice: MemoryAdvice) -> CudaResult<()> {
        self.buf.advise(advice)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> KernelMemory<T> for UnifiedBuffer<T> {
    fn kernel_param<'a>(
        &'a self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        let (ptr, guard) = self.buf.use_on(stream.queue())?;
        Ok((ptr, self.len, guard))
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> KernelMemoryMut<T> for UnifiedBuffer<T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        let (ptr, guard) = self.buf.use_mut_on(stream.queue())?;
        Ok((ptr, self.len, guard))
    }
}

/// One `T` in managed memory (see [`UnifiedBuffer`]).
#[derive(Debug)]
pub struct UnifiedBox<T: DeviceCopy + ValidAsZeroBits> {
    buf: UnifiedBuffer<T>,
}

impl<T: DeviceCopy + ValidAsZeroBits> UnifiedBox<T> {
    /// `value` in managed memory, on the current context.
    ///
    /// # Errors
    /// As [`UnifiedBuffer::new`].
    pub fn new(value: T) -> CudaResult<Self> {
        Ok(Self {
            buf: UnifiedBuffer::new(&value, 1)?,
        })
    }

    /// The value, read in place; waits for GPU work that used it.
    ///
    /// # Errors
    /// A driver error.
    pub fn get(&self) -> CudaResult<T> {
        Ok(self.buf.as_slice()?[0])
    }

    /// Replaces the value in place; waits for GPU work that used it.
    ///
    /// # Errors
    /// A driver error.
    pub fn set(&mut self, value: T) -> CudaResult<()> {
        self.buf.as_mut_slice()?[0] = value;
        Ok(())
    }

    /// The buffer of one element, for kernel arguments.
    pub fn as_buffer(&mut self) -> &mut UnifiedBuffer<T> {
        &mut self.buf
    }
}
