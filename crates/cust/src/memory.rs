//! Device, pinned and unified memory: [`DeviceBuffer`], [`DeviceSlice`], [`DeviceBox`],
//! [`LockedBuffer`], [`UnifiedBuffer`], [`UnifiedBox`], and the [`CopyDestination`] /
//! [`AsyncCopyDestination`] traits, named as in cust 0.3.
//!
//! Element types are [`DeviceCopy`] (`#[derive(DeviceCopy)]` for your own `#[repr(C)]`
//! structs); pinned and unified buffers, which the host reads in place, also need
//! [`ValidAsZeroBits`] (every bit pattern of zeros is a valid value).
//!
//! Differences from cust 0.3, and why:
//! - Copies between buffers of different lengths are a [`CudaError::LengthMismatch`], never a
//!   panic.
//! - Asynchronous copies are safe: the buffers are cudarc's, which record an event per use and
//!   make later users (host reads of a [`LockedBuffer`], other streams, `drop`) wait for it. So
//!   a pinned buffer cannot be read or freed while a copy into it is in flight, which cust
//!   leaves to the caller (`unsafe`).
//! - Constructors synchronise before returning, so a new buffer is ready on every stream.

use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
pub use cust_core::DeviceCopy;
pub use cudarc::driver::ValidAsZeroBits;
use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice as _,
    PinnedHostSlice, SyncOnDrop, UnifiedSlice, sys,
};
use std::{fmt, marker::PhantomData, sync::Arc};

/// A `T` stored in cudarc memory: `repr(transparent)`, so a `[T]` and a `[Elem<T>]` have the
/// same layout.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct Elem<T>(T);

// SAFETY: `DeviceCopy` guarantees a defined, pointer-free layout, identical on host and
// device; `Elem` is transparent.
unsafe impl<T: DeviceCopy> DeviceRepr for Elem<T> {}
// SAFETY: transparent over `T`, which is valid as zero bits.
unsafe impl<T: ValidAsZeroBits> ValidAsZeroBits for Elem<T> {}

fn elems<T>(s: &[T]) -> &[Elem<T>] {
    // SAFETY: `Elem<T>` is `repr(transparent)` over `T`: same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

fn elems_mut<T>(s: &mut [T]) -> &mut [Elem<T>] {
    // SAFETY: as in `elems`; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

fn unelems<T>(s: &[Elem<T>]) -> &[T] {
    // SAFETY: as in `elems`.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

fn unelems_mut<T>(s: &mut [Elem<T>]) -> &mut [T] {
    // SAFETY: as in `elems_mut`.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

fn byte_len<T>(what: &'static str, len: usize) -> CudaResult<usize> {
    len.checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(CudaError::SizeOverflow {
            what,
            len,
            elem_bytes: std::mem::size_of::<T>(),
        })
}

fn same_len(what: &'static str, src: usize, dst: usize) -> CudaResult<()> {
    if src == dst {
        Ok(())
    } else {
        Err(CudaError::LengthMismatch { what, src, dst })
    }
}

/// A device address of a `T`, as cust's `launch!` takes for a `*mut T` / `*const T` kernel
/// parameter (`buf.as_device_ptr()`). Carries no lifetime: keep the buffer alive until the
/// kernel has finished.
#[repr(transparent)]
pub struct DevicePointer<T> {
    addr: sys::CUdeviceptr,
    _marker: PhantomData<*mut T>,
}

impl<T> DevicePointer<T> {
    /// The address as an integer.
    pub fn as_raw(&self) -> sys::CUdeviceptr {
        self.addr
    }
    /// Wraps a raw device address.
    pub fn from_raw(addr: sys::CUdeviceptr) -> Self {
        Self {
            addr,
            _marker: PhantomData,
        }
    }
}
impl<T> Clone for DevicePointer<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePointer<T> {}
impl<T> fmt::Debug for DevicePointer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePointer({:#x})", self.addr)
    }
}
// SAFETY: a device address is a plain 64-bit integer on both sides.
unsafe impl<T> DeviceRepr for DevicePointer<T> {}
// SAFETY: a device address, not a host pointer; any bit pattern is a value.
unsafe impl<T> DeviceCopy for DevicePointer<T> {}
// SAFETY: only the address is shared; dereferencing needs the GPU and `unsafe`.
unsafe impl<T> Send for DevicePointer<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for DevicePointer<T> {}

/// Synchronous copies between host memory and a device buffer (cust 0.3's trait).
pub trait CopyDestination<O: ?Sized> {
    /// Copies all of `source` into `self`; returns once done.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    fn copy_from(&mut self, source: &O) -> CudaResult<()>;
    /// Copies all of `self` into `dest`; returns once done.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    fn copy_to(&self, dest: &mut O) -> CudaResult<()>;
}

/// Copies queued on a stream (cust 0.3's trait; safe here, see the [module docs](self)).
pub trait AsyncCopyDestination<O: ?Sized> {
    /// Queues a copy of `source` into `self` on `stream`.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    fn async_copy_from(&mut self, source: &O, stream: &Stream) -> CudaResult<()>;
    /// Queues a copy of `self` into `dest` on `stream`.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    fn async_copy_to(&self, dest: &mut O, stream: &Stream) -> CudaResult<()>;
}

/// A buffer of `len` `T`s in device memory, on the context it was made in. It implements
/// cudarc's `DevicePtr` / `DevicePtrMut`, so cudarc's own copies and launches accept it.
pub struct DeviceBuffer<T: DeviceCopy> {
    buf: CudaSlice<Elem<T>>,
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("len", &self.buf.len())
            .finish_non_exhaustive()
    }
}

fn sync_stream(ctx: &Context) -> Arc<CudaStream> {
    ctx.default_stream()
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// A buffer holding a copy of `slice`, on the current context.
    ///
    /// # Errors
    /// [`CudaError::NoContext`]; [`CudaError::OutOfMemory`] if it does not fit; a driver
    /// error.
    pub fn from_slice(slice: &[T]) -> CudaResult<Self> {
        Self::from_slice_in(&CurrentContext::get_current()?, slice)
    }

    /// [`DeviceBuffer::from_slice`] on a given context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn from_slice_in(ctx: &Context, slice: &[T]) -> CudaResult<Self> {
        let bytes = byte_len::<T>("DeviceBuffer", slice.len())?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let stream = sync_stream(ctx);
        let buf = stream.clone_htod(elems(slice)).map_err(CudaError::driver(
            "copying a host slice to a new device buffer",
        ))?;
        stream.synchronize().map_err(CudaError::driver(
            "copying a host slice to a new device buffer",
        ))?;
        Ok(Self { buf })
    }

    /// A buffer of `len` uninitialised elements, on the current context.
    ///
    /// # Safety
    /// The contents are arbitrary bytes: do not read an element (on the host or the GPU)
    /// before writing it, unless every bit pattern is a valid `T`.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub unsafe fn uninitialized(len: usize) -> CudaResult<Self> {
        let ctx = CurrentContext::get_current()?;
        let bytes = byte_len::<T>("DeviceBuffer", len)?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let stream = sync_stream(&ctx);
        // SAFETY: forwarded to the caller (contents are uninitialised).
        let buf = unsafe { stream.alloc::<Elem<T>>(len) }
            .map_err(CudaError::driver("allocating a device buffer"))?;
        stream
            .synchronize()
            .map_err(CudaError::driver("allocating a device buffer"))?;
        Ok(Self { buf })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }

    /// The device address of element 0, for cust-style [`launch!`](crate::launch!)
    /// (`buf.as_device_ptr(), buf.len()` for a slice parameter).
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        DevicePointer::from_raw(raw_ptr(&self.buf))
    }

    /// A read-only view of the whole buffer.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            view: self.buf.as_view(),
        }
    }

    /// A read-only view of `range`, or `None` if it is out of bounds.
    pub fn index(&self, range: impl std::ops::RangeBounds<usize>) -> Option<DeviceSlice<'_, T>> {
        self.buf.try_slice(range).map(|view| DeviceSlice { view })
    }

    /// The buffer's contents, copied to a new `Vec`.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
        let mut out = Vec::with_capacity(self.len());
        let stream = self.buf.stream().clone();
        let v: Vec<Elem<T>> = stream
            .clone_dtoh(&self.buf)
            .map_err(CudaError::driver("copying a device buffer to the host"))?;
        out.extend(v.into_iter().map(|e| e.0));
        Ok(out)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> DeviceBuffer<T> {
    /// A buffer of `len` zeros, on the current context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn zeroed(len: usize) -> CudaResult<Self> {
        Self::zeroed_in(&CurrentContext::get_current()?, len)
    }

    /// [`DeviceBuffer::zeroed`] on a given context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn zeroed_in(ctx: &Context, len: usize) -> CudaResult<Self> {
        let bytes = byte_len::<T>("DeviceBuffer", len)?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let stream = sync_stream(ctx);
        let buf = stream
            .alloc_zeros::<Elem<T>>(len)
            .map_err(CudaError::driver("allocating a zeroed device buffer"))?;
        stream
            .synchronize()
            .map_err(CudaError::driver("allocating a zeroed device buffer"))?;
        Ok(Self { buf })
    }
}

fn raw_ptr<T>(buf: &CudaSlice<T>) -> sys::CUdeviceptr {
    let stream = buf.stream().clone();
    let (ptr, _sync) = buf.device_ptr(&stream);
    ptr
}

impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        self.buf.len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.buf.stream()
    }
}

impl<T: DeviceCopy> DevicePtr<T> for DeviceBuffer<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buf.device_ptr(stream)
    }
}

impl<T: DeviceCopy> DevicePtrMut<T> for DeviceBuffer<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buf.device_ptr_mut(stream)
    }
}

impl<T: DeviceCopy, I: AsRef<[T]> + AsMut<[T]> + ?Sized> CopyDestination<I> for DeviceBuffer<T> {
    fn copy_from(&mut self, source: &I) -> CudaResult<()> {
        let source = source.as_ref();
        same_len("DeviceBuffer::copy_from", source.len(), self.len())?;
        let stream = self.buf.stream().clone();
        stream
            .memcpy_htod(elems(source), &mut self.buf)
            .and_then(|()| stream.synchronize())
            .map_err(CudaError::driver(
                "copying a host slice into a device buffer",
            ))
    }
    fn copy_to(&self, dest: &mut I) -> CudaResult<()> {
        let dest = dest.as_mut();
        same_len("DeviceBuffer::copy_to", self.len(), dest.len())?;
        let stream = self.buf.stream().clone();
        stream
            .memcpy_dtoh(&self.buf, elems_mut(dest))
            .and_then(|()| stream.synchronize())
            .map_err(CudaError::driver("copying a device buffer to a host slice"))
    }
}

impl<T: DeviceCopy> CopyDestination<DeviceBuffer<T>> for DeviceBuffer<T> {
    fn copy_from(&mut self, source: &DeviceBuffer<T>) -> CudaResult<()> {
        same_len("DeviceBuffer::copy_from", source.len(), self.len())?;
        let stream = self.buf.stream().clone();
        stream
            .memcpy_dtod(&source.buf, &mut self.buf)
            .and_then(|()| stream.synchronize())
            .map_err(CudaError::driver("copying between device buffers"))
    }
    fn copy_to(&self, dest: &mut DeviceBuffer<T>) -> CudaResult<()> {
        dest.copy_from(self)
    }
}

impl<T: DeviceCopy, I: AsRef<[T]> + AsMut<[T]> + ?Sized> AsyncCopyDestination<I>
    for DeviceBuffer<T>
{
    fn async_copy_from(&mut self, source: &I, stream: &Stream) -> CudaResult<()> {
        let source = source.as_ref();
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len())?;
        stream
            .memcpy_htod(elems(source), &mut self.buf)
            .map_err(CudaError::driver("queueing a host-to-device copy"))
    }
    fn async_copy_to(&self, dest: &mut I, stream: &Stream) -> CudaResult<()> {
        let dest = dest.as_mut();
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len())?;
        stream
            .memcpy_dtoh(&self.buf, elems_mut(dest))
            .map_err(CudaError::driver("queueing a device-to-host copy"))
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> AsyncCopyDestination<LockedBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len())?;
        stream
            .memcpy_htod(&source.buf, &mut self.buf)
            .map_err(CudaError::driver("queueing a pinned host-to-device copy"))?;
        source.copy_queued(stream)
    }
    fn async_copy_to(&self, dest: &mut LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len())?;
        stream
            .memcpy_dtoh(&self.buf, &mut dest.buf)
            .map_err(CudaError::driver("queueing a device-to-pinned-host copy"))?;
        dest.copy_queued(stream)
    }
}

/// A read-only view of part of a [`DeviceBuffer`].
pub struct DeviceSlice<'a, T: DeviceCopy> {
    view: CudaView<'a, Elem<T>>,
}

impl<T: DeviceCopy> fmt::Debug for DeviceSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceSlice")
            .field("len", &self.view.len())
            .finish_non_exhaustive()
    }
}

impl<T: DeviceCopy> DeviceSlice<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.view.len()
    }
    /// `true` if the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.view.len() == 0
    }
    /// The device address of the view's first element.
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        let stream = self.view.stream().clone();
        let (ptr, _sync) = self.view.device_ptr(&stream);
        DevicePointer::from_raw(ptr)
    }
    /// Copies the view into `dest`; returns once done.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn copy_to(&self, dest: &mut [T]) -> CudaResult<()> {
        same_len("DeviceSlice::copy_to", self.len(), dest.len())?;
        let stream = self.view.stream().clone();
        stream
            .memcpy_dtoh(&self.view, elems_mut(dest))
            .and_then(|()| stream.synchronize())
            .map_err(CudaError::driver("copying a device slice to a host slice"))
    }
}

impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for DeviceSlice<'_, T> {
    fn len(&self) -> usize {
        self.view.len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.view.stream()
    }
}

impl<T: DeviceCopy> DevicePtr<T> for DeviceSlice<'_, T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.view.device_ptr(stream)
    }
}

/// One `T` in device memory.
pub struct DeviceBox<T: DeviceCopy> {
    buf: DeviceBuffer<T>,
}

impl<T: DeviceCopy> fmt::Debug for DeviceBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBox").finish_non_exhaustive()
    }
}

impl<T: DeviceCopy> DeviceBox<T> {
    /// A device copy of `value`, on the current context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn new(value: &T) -> CudaResult<Self> {
        Ok(Self {
            buf: DeviceBuffer::from_slice(std::slice::from_ref(value))?,
        })
    }

    /// The device address of the value (for a `*mut T` / `*const T` kernel parameter).
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        self.buf.as_device_ptr()
    }

    /// The value, copied to the host.
    ///
    /// # Errors
    /// A driver error.
    pub fn get(&self) -> CudaResult<T> {
        Ok(self.buf.as_host_vec()?[0])
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> DeviceBox<T> {
    /// A zeroed `T` on the device, on the current context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn zeroed() -> CudaResult<Self> {
        Ok(Self {
            buf: DeviceBuffer::zeroed(1)?,
        })
    }
}

impl<T: DeviceCopy> DeviceBox<T> {
    /// Replaces the value on the device with `source`; returns once done.
    ///
    /// # Errors
    /// A driver error.
    pub fn copy_from(&mut self, source: &T) -> CudaResult<()> {
        CopyDestination::<[T]>::copy_from(&mut self.buf, std::slice::from_ref(source))
    }

    /// Copies the value into `dest`; returns once done.
    ///
    /// # Errors
    /// A driver error.
    pub fn copy_to(&self, dest: &mut T) -> CudaResult<()> {
        CopyDestination::<[T]>::copy_to(&self.buf, std::slice::from_mut(dest))
    }
}

impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for DeviceBox<T> {
    fn len(&self) -> usize {
        1
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.buf.buf.stream()
    }
}

impl<T: DeviceCopy> DevicePtr<T> for DeviceBox<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buf.device_ptr(stream)
    }
}

impl<T: DeviceCopy> DevicePtrMut<T> for DeviceBox<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buf.device_ptr_mut(stream)
    }
}

/// `as_dbuf`: a device copy of a host slice (cust 0.3's `SliceExt`).
pub trait SliceExt<T: DeviceCopy> {
    /// A new [`DeviceBuffer`] holding a copy of `self`, on the current context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    fn as_dbuf(&self) -> CudaResult<DeviceBuffer<T>>;
}

impl<T: DeviceCopy> SliceExt<T> for [T] {
    fn as_dbuf(&self) -> CudaResult<DeviceBuffer<T>> {
        DeviceBuffer::from_slice(self)
    }
}

/// Page-locked (pinned) host memory: the GPU's copy engines read and write it directly, so
/// copies to and from it run at full bus speed and truly asynchronously.
pub struct LockedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    buf: PinnedHostSlice<Elem<T>>,
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
        b.as_mut_slice()?.fill(*value);
        Ok(b)
    }

    /// A pinned copy of `slice`, on the current context.
    ///
    /// # Errors
    /// As [`LockedBuffer::new`].
    pub fn from_slice(slice: &[T]) -> CudaResult<Self> {
        let mut b = Self::alloc(&CurrentContext::get_current()?, slice.len())?;
        b.as_mut_slice()?.copy_from_slice(slice);
        Ok(b)
    }

    fn alloc(ctx: &Context, len: usize) -> CudaResult<Self> {
        byte_len::<T>("LockedBuffer", len)?;
        // SAFETY: the memory is uninitialised; both callers initialise every element
        // before anything reads it. No write-combining flag: the host also reads it.
        let buf = unsafe { ctx.alloc_pinned_with_flags::<Elem<T>>(len, 0) }
            .map_err(CudaError::driver("allocating pinned host memory"))?;
        Ok(Self {
            buf,
            pending: std::sync::Mutex::new(None),
        })
    }

    /// Records that a copy from or into this buffer was just queued on `stream`.
    fn copy_queued(&self, stream: &Stream) -> CudaResult<()> {
        let event = stream
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
            .context()
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
                stream.cu_stream(),
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
    pub fn as_slice(&self) -> CudaResult<&[T]> {
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
    pub fn as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        self.wait_for_copies()?;
        self.buf
            .as_mut_slice()
            .map(unelems_mut)
            .map_err(CudaError::driver("waiting for a copy from pinned memory"))
    }
}

/// Managed ("unified") memory: one address valid on the host and the GPU; the driver
/// migrates pages on demand. The host may read it ([`UnifiedBuffer::as_slice`]) once the GPU
/// work that used it has finished, which the accessors wait for.
pub struct UnifiedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    buf: UnifiedSlice<Elem<T>>,
}

impl<T: DeviceCopy + ValidAsZeroBits> fmt::Debug for UnifiedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnifiedBuffer")
            .field("len", &self.buf.len())
            .finish_non_exhaustive()
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> UnifiedBuffer<T> {
    /// `len` copies of `value` in managed memory, on the current context.
    ///
    /// # Errors
    /// [`CudaError::NoContext`]; [`CudaError::OutOfMemory`] when it exceeds the device's free
    /// memory (managed memory could oversubscribe it, which this runtime refuses); a driver
    /// error, e.g. `CUDA_ERROR_NOT_PERMITTED` on a device without managed memory.
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

    fn alloc(len: usize) -> CudaResult<Self> {
        let ctx = CurrentContext::get_current()?;
        let bytes = byte_len::<T>("UnifiedBuffer", len)?;
        ctx.check_free("UnifiedBuffer", bytes)?;
        // SAFETY: uninitialised memory; both callers initialise every element first.
        let buf = unsafe { ctx.alloc_unified::<Elem<T>>(len, true) }
            .map_err(CudaError::driver("allocating managed memory"))?;
        Ok(Self { buf })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.len() == 0
    }

    /// The contents, read in place on the host; waits for GPU work that used the buffer.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_slice(&self) -> CudaResult<&[T]> {
        self.buf
            .as_slice()
            .map(unelems)
            .map_err(CudaError::driver("reading managed memory on the host"))
    }

    /// The contents, writable in place on the host; waits for GPU work that used the buffer.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        self.buf
            .as_mut_slice()
            .map(unelems_mut)
            .map_err(CudaError::driver("writing managed memory on the host"))
    }

    /// Starts migrating the pages to the device (`cuMemPrefetchAsync`), so that the next
    /// kernel does not fault them in one by one.
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_NOT_PERMITTED` on a device without concurrent managed
    /// access.
    pub fn prefetch_to_device(&self) -> CudaResult<()> {
        self.buf.prefetch().map_err(CudaError::driver(
            "prefetching managed memory to the device",
        ))
    }

    /// Starts migrating the pages back to host memory on `stream` (`cuMemPrefetchAsync` to
    /// the CPU), so that host reads after the GPU work do not fault them in one by one.
    ///
    /// # Errors
    /// A driver error.
    pub fn prefetch_to_host(&self, stream: &crate::stream::Stream) -> CudaResult<()> {
        let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(&self.buf, stream);
        let host = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        // SAFETY: the whole managed allocation of this buffer, queued on `stream`.
        unsafe {
            cudarc::driver::result::mem_prefetch_async(
                ptr,
                self.buf.num_bytes(),
                host,
                stream.cu_stream(),
            )
        }
        .map_err(CudaError::driver("prefetching managed memory to the host"))
    }

    /// Gives the driver a hint about how the buffer will be used (`cuMemAdvise` over the whole
    /// buffer); results never depend on it, only migration traffic does.
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_INVALID_DEVICE` for a device without concurrent
    /// managed access.
    pub fn advise(&self, advice: MemoryAdvice) -> CudaResult<()> {
        let ordinal = self.buf.stream().context().ordinal() as i32;
        let device = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal,
        };
        let host = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        use sys::CUmem_advise::*;
        let (what, location) = match advice {
            MemoryAdvice::ReadMostly => (CU_MEM_ADVISE_SET_READ_MOSTLY, device),
            MemoryAdvice::PreferDevice => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, device),
            MemoryAdvice::PreferHost => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host),
            MemoryAdvice::AccessedByDevice => (CU_MEM_ADVISE_SET_ACCESSED_BY, device),
        };
        let stream = self.buf.stream().clone();
        let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(&self.buf, &stream);
        // SAFETY: the whole managed allocation of this buffer.
        unsafe { cudarc::driver::result::mem_advise(ptr, self.buf.num_bytes(), what, location) }
            .map_err(CudaError::driver(format!(
                "advising managed memory ({advice:?})"
            )))
    }
}

/// A usage hint for managed memory ([`UnifiedBuffer::advise`]; `cuMemAdvise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryAdvice {
    /// Mostly read: the driver may keep read-only copies on the host and the device.
    ReadMostly,
    /// Keep the pages in this buffer's device memory; others map them rather than migrate.
    PreferDevice,
    /// Keep the pages in host memory.
    PreferHost,
    /// This buffer's device accesses the pages often: keep them mapped for it.
    AccessedByDevice,
}

impl<T: DeviceCopy + ValidAsZeroBits> cudarc::driver::DeviceSlice<T> for UnifiedBuffer<T> {
    fn len(&self) -> usize {
        self.buf.len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        cudarc::driver::DeviceSlice::stream(&self.buf)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> DevicePtr<T> for UnifiedBuffer<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buf.device_ptr(stream)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> DevicePtrMut<T> for UnifiedBuffer<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buf.device_ptr_mut(stream)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_casts_keep_contents() {
        let mut v = [1.5f32, -2.0, 3.25];
        assert_eq!(unelems(elems(&v)), &v);
        elems_mut(&mut v)[1] = Elem(7.0);
        assert_eq!(v, [1.5, 7.0, 3.25]);
    }

    #[test]
    fn sizes_that_overflow_are_errors() {
        assert!(byte_len::<u64>("x", usize::MAX / 4).is_err());
        assert_eq!(byte_len::<u64>("x", 3).unwrap(), 24);
        let err = same_len("copy", 3, 4).unwrap_err();
        assert!(err.to_string().contains("3 elements"), "{err}");
    }
}
