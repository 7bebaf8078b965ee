//! [`LockedBuffer`]: page-locked (pinned) host memory, and its asynchronous copies to and
//! from [`DeviceBuffer`]s.

use super::{
    AsyncCopyDestination, DeviceBuffer, DeviceCopy, ValidAsZeroBits, byte_len,
    device::KernelMemory, from_bytes, from_bytes_mut, same_len,
};
use crate::{
    backend,
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use std::{fmt, marker::PhantomData};

/// Page-locked (pinned) host memory: the GPU's copy engines read and write it directly, so
/// copies to and from it run at full bus speed and truly asynchronously.
///
/// On the CPU emulator ([`Context::emulator`]) it is ordinary host memory and every copy
/// from or into it is done when the call returns.
pub struct LockedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    /// The backend's memory, `len * size_of::<T>()` bytes; it waits for the copies queued
    /// from or into it before the host reads or writes it.
    buf: Box<dyn backend::Pinned>,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

impl<T: DeviceCopy + ValidAsZeroBits> fmt::Debug for LockedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockedBuffer")
            .field("len", &self.len())
            .field("emulator", &self.is_emulator())
            .finish_non_exhaustive()
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> LockedBuffer<T> {
    /// `len` copies of `value` in pinned memory, on the current context.
    ///
    /// # Errors
    /// [`CudaError::NoContext`], [`CudaError::SizeOverflow`], a driver error (e.g. out of
    /// pinnable memory).
    pub fn new(value: &T, len: usize) -> CudaResult<Self> {
        Self::new_in(&CurrentContext::get_current()?, value, len)
    }

    /// [`LockedBuffer::new`] on a given context.
    ///
    /// # Errors
    /// As [`LockedBuffer::new`].
    pub fn new_in(ctx: &Context, value: &T, len: usize) -> CudaResult<Self> {
        let mut b = Self::alloc(ctx, len)?;
        b.try_as_mut_slice()?.fill(*value);
        Ok(b)
    }

    /// A pinned copy of `slice`, on the current context.
    ///
    /// # Errors
    /// As [`LockedBuffer::new`].
    pub fn from_slice(slice: &[T]) -> CudaResult<Self> {
        let mut b = Self::alloc(&CurrentContext::get_current()?, slice.len())?;
        b.try_as_mut_slice()?.copy_from_slice(slice);
        Ok(b)
    }

    /// `len` elements whose contents are unset on a GPU: both callers write every element
    /// before anything reads it.
    fn alloc(ctx: &Context, len: usize) -> CudaResult<Self> {
        let bytes = byte_len::<T>("LockedBuffer", len)?;
        Ok(Self {
            buf: ctx.backend().alloc_pinned(bytes)?,
            len,
            _elem: PhantomData,
        })
    }

    /// `true` for a buffer of the CPU emulator (plain host memory).
    pub fn is_emulator(&self) -> bool {
        self.buf.is_emulator()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues on `stream` a copy of the device memory `src` (a cust buffer or view:
    /// [`DeviceBuffer`], [`DeviceSlice`](super::DeviceSlice),
    /// [`DeviceBox`](super::DeviceBox), [`UnifiedBuffer`](super::UnifiedBuffer)) of at most
    /// [`len`](Self::len) elements into the first `src.len()` elements of this buffer; the
    /// rest is left as it is. The host accessors wait for it. For a buffer reused for pieces
    /// of different sizes (e.g. bands of an image). On the emulator the copy is done when
    /// this returns.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if `src` is longer than this buffer;
    /// [`CudaError::BackendMismatch`] if `src`, `stream` and this buffer are not all of the
    /// GPU or all of the emulator; a driver error.
    pub fn async_copy_prefix_from<S: KernelMemory<T>>(
        &mut self,
        src: &S,
        stream: &Stream,
    ) -> CudaResult<()> {
        let (src_ptr, n, guard) = src.kernel_param(stream)?;
        if n > self.len {
            return Err(CudaError::LengthMismatch {
                what: "LockedBuffer::async_copy_prefix_from (at most the buffer's length)",
                src: n,
                dst: self.len,
            });
        }
        // SAFETY: `src_ptr` is the address of `n` elements of T of `src`, a buffer of
        // `stream`'s backend (`kernel_param` checked), ordered on `stream` by `guard`, which
        // lives until the copy is queued; this buffer holds `self.len >= n` elements, and
        // `&mut self` keeps it from the host until the accessors wait for the copy.
        unsafe {
            self.buf
                .copy_from_device(src_ptr, n * std::mem::size_of::<T>(), stream.queue())?;
        }
        drop(guard);
        self.buf.copy_queued(stream.queue())
    }

    /// The contents; waits first for any copy into this buffer still in flight.
    ///
    /// # Errors
    /// A driver error of that copy.
    pub fn try_as_slice(&self) -> CudaResult<&[T]> {
        let bytes = self.buf.bytes()?;
        // SAFETY: `len` `T`s, aligned (page-locked or 256-byte-aligned memory), every one
        // written by the constructors or by copies of `T`s since.
        Ok(unsafe { from_bytes(bytes, self.len) })
    }

    /// The contents, writable; waits first for any copy from or into this buffer.
    ///
    /// # Errors
    /// A driver error of that copy.
    pub fn try_as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        let bytes = self.buf.bytes_mut()?;
        // SAFETY: as in `try_as_slice`. Only the constructors see the elements before they
        // are written (unset page-locked bytes on a GPU, as cudarc's `as_mut_slice` gives
        // them), and they only write through this slice.
        Ok(unsafe { from_bytes_mut(bytes, self.len) })
    }

    /// The contents, as cust 0.3's `as_slice`; waits first for any copy into this buffer
    /// still in flight. Also reached through `Deref` (`&buf[..]`, `buf[i]`, `buf.iter()`).
    ///
    /// # Panics
    /// If that copy failed (the driver reports an asynchronous error, e.g. a kernel before
    /// it trapped): the contents would be undefined. Use [`try_as_slice`](Self::try_as_slice)
    /// to handle it.
    pub fn as_slice(&self) -> &[T] {
        match self.try_as_slice() {
            Ok(s) => s,
            Err(e) => panic!("LockedBuffer: {e}"),
        }
    }

    /// The contents, writable, as cust 0.3's `as_mut_slice`; waits first for any copy from
    /// or into this buffer. Also reached through `DerefMut`.
    ///
    /// # Panics
    /// As [`as_slice`](Self::as_slice); use [`try_as_mut_slice`](Self::try_as_mut_slice) to
    /// handle the error.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match self.try_as_mut_slice() {
            Ok(s) => s,
            Err(e) => panic!("LockedBuffer: {e}"),
        }
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> std::ops::Deref for LockedBuffer<T> {
    type Target = [T];
    /// [`LockedBuffer::as_slice`] (waits for pending copies; panics if one failed).
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> std::ops::DerefMut for LockedBuffer<T> {
    /// [`LockedBuffer::as_mut_slice`] (waits for pending copies; panics if one failed).
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> AsyncCopyDestination<LockedBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len, self.len())?;
        let (mem, _) = self.memory_mut();
        mem.write_pinned(&*source.buf, stream.queue())
    }
    fn async_copy_to(&self, dest: &mut LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len)?;
        let (mem, _) = self.memory();
        mem.read_pinned(&mut *dest.buf, stream.queue())
    }
}
