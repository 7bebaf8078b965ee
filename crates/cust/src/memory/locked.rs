//! [`LockedBuffer`]: page-locked (pinned) host memory.

use super::{
    DeviceCopy, Elem, ValidAsZeroBits, byte_len, device::KernelMemory, unelems, unelems_mut,
};
use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::PinnedHostSlice;
use std::fmt;

/// Page-locked (pinned) host memory: the GPU's copy engines read and write it directly, so
/// copies to and from it run at full bus speed and truly asynchronously.
///
/// On the CPU emulator ([`Context::emulator`]) it is ordinary host memory and every copy
/// from or into it is done when the call returns.
pub struct LockedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    pub(super) buf: Pinned<T>,
    /// An event after the last asynchronous copy from or into this buffer. (cudarc records
    /// its own only while the context has streams besides the default one.)
    pending: std::sync::Mutex<Option<cudarc::driver::CudaEvent>>,
}

/// Where a [`LockedBuffer`] lives.
pub(super) enum Pinned<T> {
    /// Page-locked memory of a GPU context.
    Cuda(PinnedHostSlice<Elem<T>>),
    /// Host memory of the emulator (no copy engine to pin it for).
    Host(Vec<T>),
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
        if ctx.is_emulator() {
            byte_len::<T>("LockedBuffer", len)?;
            return Ok(Self::host(vec![*value; len]));
        }
        let mut b = Self::alloc(ctx, len)?;
        b.try_as_mut_slice()?.fill(*value);
        Ok(b)
    }

    /// A pinned copy of `slice`, on the current context.
    ///
    /// # Errors
    /// As [`LockedBuffer::new`].
    pub fn from_slice(slice: &[T]) -> CudaResult<Self> {
        let ctx = CurrentContext::get_current()?;
        if ctx.is_emulator() {
            return Ok(Self::host(slice.to_vec()));
        }
        let mut b = Self::alloc(&ctx, slice.len())?;
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
            buf: Pinned::Cuda(buf),
            pending: std::sync::Mutex::new(None),
        })
    }

    /// An emulator buffer holding `v`.
    fn host(v: Vec<T>) -> Self {
        Self {
            buf: Pinned::Host(v),
            pending: std::sync::Mutex::new(None),
        }
    }

    /// `true` for a buffer of the CPU emulator (plain host memory).
    pub fn is_emulator(&self) -> bool {
        matches!(self.buf, Pinned::Host(_))
    }

    /// Records that a copy from or into this buffer was just queued on `stream` (a GPU
    /// stream: emulator copies are done before they return).
    pub(super) fn copy_queued(&self, stream: &Stream) -> CudaResult<()> {
        let event = stream
            .cuda("recording an event after a pinned copy")?
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
        match &self.buf {
            Pinned::Cuda(b) => b.len(),
            Pinned::Host(v) => v.len(),
        }
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues on `stream` a copy of the device memory `src` (a cust buffer or view:
    /// [`DeviceBuffer`](super::DeviceBuffer), [`DeviceSlice`](super::DeviceSlice),
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
        if n > self.len() {
            return Err(CudaError::LengthMismatch {
                what: "LockedBuffer::async_copy_prefix_from (at most the buffer's length)",
                src: n,
                dst: self.len(),
            });
        }
        let pinned = match &mut self.buf {
            Pinned::Host(v) => {
                if !stream.is_emulator() {
                    return Err(CudaError::BackendMismatch {
                        what: "copying into pinned host memory",
                        buffer: crate::cpu::CPU,
                        stream: crate::cpu::GPU,
                    });
                }
                // SAFETY: on the emulator `src_ptr` is the host address of `n` initialised
                // `T`s of a live allocation that `src` borrows; `v` holds at least `n`
                // (checked above) and is a distinct allocation (`&mut self`).
                unsafe {
                    std::ptr::copy_nonoverlapping(src_ptr as usize as *const T, v.as_mut_ptr(), n)
                };
                return Ok(());
            }
            Pinned::Cuda(_) if stream.is_emulator() => {
                return Err(CudaError::BackendMismatch {
                    what: "copying into pinned host memory",
                    buffer: crate::cpu::GPU,
                    stream: crate::cpu::CPU,
                });
            }
            Pinned::Cuda(b) => b,
        };
        stream
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))?;
        let dst = pinned.as_mut_ptr().map_err(CudaError::driver(
            "waiting for earlier uses of pinned memory",
        ))?;
        // SAFETY: `dst` is page-locked memory of `self.len() >= n` elements, which `&mut
        // self` keeps from the host until the accessors wait for this copy; `src_ptr` is
        // the device address of `n` elements of T on `stream` (a GPU stream:
        // `kernel_param` checked that `src` and `stream` are of the same backend), ordered
        // on it by `guard`.
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
        drop(guard);
        self.copy_queued(stream)
    }

    /// The contents; waits first for any copy into this buffer still in flight.
    ///
    /// # Errors
    /// A driver error of that copy.
    pub fn try_as_slice(&self) -> CudaResult<&[T]> {
        self.wait_for_copies()?;
        match &self.buf {
            Pinned::Cuda(b) => b
                .as_slice()
                .map(unelems)
                .map_err(CudaError::driver("waiting for a copy into pinned memory")),
            Pinned::Host(v) => Ok(v),
        }
    }

    /// The contents, writable; waits first for any copy from or into this buffer.
    ///
    /// # Errors
    /// A driver error of that copy.
    pub fn try_as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        self.wait_for_copies()?;
        match &mut self.buf {
            Pinned::Cuda(b) => b
                .as_mut_slice()
                .map(unelems_mut)
                .map_err(CudaError::driver("waiting for a copy from pinned memory")),
            Pinned::Host(v) => Ok(v),
        }
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
