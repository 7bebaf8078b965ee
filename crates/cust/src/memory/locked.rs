//! [`LockedBuffer`]: page-locked (pinned) host memory.

use super::{DeviceCopy, Elem, ValidAsZeroBits, byte_len, unelems, unelems_mut};
use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::{DevicePtr, PinnedHostSlice};
use std::fmt;

/// Page-locked (pinned) host memory: the GPU's copy engines read and write it directly, so
/// copies to and from it run at full bus speed and truly asynchronously.
pub struct LockedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    pub(super) buf: PinnedHostSlice<Elem<T>>,
    /// An event after the last asynchronous copy from or into this buffer. (cudarc records
    /// its own only while the context has streams besides the default one.)
    pending: std::sync::Mutex<Option<cudarc::driver::CudaEvent>>,
}

impl<T: DeviceCopy + ValidAsZeroBits> fmt::Debug for LockedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockedBuffer")
            .field("len", &self.buf.len())
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

    fn alloc(ctx: &Context, len: usize) -> CudaResult<Self> {
        byte_len::<T>("LockedBuffer", len)?;
        // SAFETY: the memory is uninitialised; both callers initialise every element
        // before anything reads it. No write-combining flag: the host also reads it.
        let buf = unsafe {
            ctx.cuda("pinned host memory (use a Vec)")?
                .alloc_pinned_with_flags::<Elem<T>>(len, 0)
        }
        .map_err(CudaError::driver("allocating pinned host memory"))?;
        Ok(Self {
            buf,
            pending: std::sync::Mutex::new(None),
        })
    }

    /// Records that a copy from or into this buffer was just queued on `stream`.
    pub(super) fn copy_queued(&self, stream: &Stream) -> CudaResult<()> {
        let event = stream
            .as_cudarc()
            .record_event(None)
            .map_err(CudaError::driver("recording an event after a pinned copy"))?;
        *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = Some(event);
        Ok(())
    }

    /// Waits for the last queued copy from or into this buffer.
    fn wait_for_copies(&self) -> CudaResult<()> {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(event) = pending.as_ref() {
            event
                .synchronize()
                .map_err(CudaError::driver("waiting for a copy into pinned memory"))?;
        }
        Ok(())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }

    /// Queues on `stream` a copy of the device memory `src` (a cust or cudarc buffer or
    /// view of at most [`len`](Self::len) elements) into the first `src.len()` elements of
    /// this buffer; the rest is left as it is. The host accessors wait for it. For a buffer
    /// reused for pieces of different sizes (e.g. bands of an image).
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if `src` is longer than this buffer; a driver error.
    pub fn async_copy_prefix_from<S: DevicePtr<T>>(
        &mut self,
        src: &S,
        stream: &Stream,
    ) -> CudaResult<()> {
        let n = src.len();
        if n > self.len() {
            return Err(CudaError::LengthMismatch {
                what: "LockedBuffer::async_copy_prefix_from (at most the buffer's length)",
                src: n,
                dst: self.len(),
            });
        }
        stream
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))?;
        let dst = self.buf.as_mut_ptr().map_err(CudaError::driver(
            "waiting for earlier uses of pinned memory",
        ))?;
        let (src_ptr, _record) = src.device_ptr(stream.as_cudarc());
        // SAFETY: `dst` is page-locked memory of `self.len() >= n` elements, which `&mut
        // self` keeps from the host until the accessors wait for this copy; `src` holds `n`
        // elements of T.
        unsafe {
            cudarc::driver::sys::cuMemcpyDtoHAsync_v2(
                dst.cast(),
                src_ptr,
                n * std::mem::size_of::<T>(),
                stream.as_inner(),
            )
        }
        .result()
        .map_err(CudaError::driver("queueing a device-to-pinned-host copy"))?;
        self.copy_queued(stream)
    }

    /// The contents; waits first for any copy into this buffer still in flight.
    ///
    /// # Errors
    /// A driver error of that copy.
    pub fn try_as_slice(&self) -> CudaResult<&[T]> {
        self.wait_for_copies()?;
        self.buf
            .as_slice()
            .map(unelems)
            .map_err(CudaError::driver("waiting for a copy into pinned memory"))
    }

    /// The contents, writable; waits first for any copy from or into this buffer.
    ///
    /// # Errors
    /// A driver error of that copy.
    pub fn try_as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        self.wait_for_copies()?;
        self.buf
            .as_mut_slice()
            .map(unelems_mut)
            .map_err(CudaError::driver("waiting for a copy from pinned memory"))
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
