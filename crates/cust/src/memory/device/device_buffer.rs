//! [`DeviceBuffer`]: `len` `T`s in device memory; its copies and its views.

use super::{
    DeviceSlice, DeviceSliceMut, Guard, KernelMemory, KernelMemoryMut, bounds, byte_range, host_vec,
};
/// For the docs' links.
#[cfg(doc)]
use crate::error::CudaError;
use crate::{
    backend::{self, Init, Queue},
    context::{Context, CurrentContext},
    error::CudaResult,
    memory::{
        AsyncCopyDestination, CopyDestination, DeviceCopy, DevicePointer, ValidAsZeroBits,
        as_bytes, as_bytes_mut, byte_len, same_len,
    },
    stream::Stream,
};
use std::{
    fmt,
    marker::PhantomData,
    ops::{Range, RangeBounds},
};

/// A buffer of `len` `T`s in device memory, on the context it was made in: GPU memory, or
/// host memory on the CPU emulator ([`Context::emulator`]). (It implements cudarc's
/// `DevicePtr` / `DevicePtrMut`, for crates built over cudarc such as `blastoff`; those
/// panic for an emulator buffer, which has no CUDA stream.)
///
/// Where the memory comes from: every constructor but the `_unpooled` ones allocates from the
/// device's stream-ordered memory pool (`cuMemAllocAsync`; the synchronous ones then wait),
/// and the drop frees into it in order on the buffer's stream (`cuMemFreeAsync`): cheap to
/// make and free, and no device-wide synchronisation. But a process's first pool allocation
/// on a device sets the pool up, 7.7–11.8 ms on an H200. [`DeviceBuffer::zeroed_unpooled`]
/// and [`DeviceBuffer::from_slice_unpooled`] use `cuMemAlloc` (0.06–0.16 ms) and their drop
/// `cuMemFree`, which waits for the work queued on the buffer and synchronises the device:
/// for buffers made once and kept, where a fresh process's first milliseconds count.
pub struct DeviceBuffer<T: DeviceCopy> {
    /// The backend's memory, `len * size_of::<T>()` bytes.
    pub(super) mem: Box<dyn backend::Memory>,
    pub(super) len: usize,
    pub(super) _elem: PhantomData<fn() -> T>,
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("len", &self.len())
            .field("emulator", &self.is_emulator())
            .finish_non_exhaustive()
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    pub(super) fn new(mem: Box<dyn backend::Memory>, len: usize) -> Self {
        Self {
            mem,
            len,
            _elem: PhantomData,
        }
    }

    /// All of the buffer, in bytes.
    fn whole(&self) -> Range<usize> {
        byte_range::<T>(0, self.len)
    }

    /// The backend's memory and the buffer's byte range in it (for cudarc's traits).
    pub(crate) fn memory(&self) -> (&dyn backend::Memory, Range<usize>) {
        (&*self.mem, self.whole())
    }

    /// As [`DeviceBuffer::memory`], writable.
    pub(crate) fn memory_mut(&mut self) -> (&mut dyn backend::Memory, Range<usize>) {
        let whole = self.whole();
        (&mut *self.mem, whole)
    }

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
        let mem = ctx.backend().alloc(
            bytes,
            Init::Copy(as_bytes(slice)),
            format_args!("copying a host slice to a new device buffer"),
        )?;
        Ok(Self::new(mem, slice.len()))
    }

    /// [`DeviceBuffer::from_slice_in`] outside the stream-ordered memory pool: `cuMemAlloc`
    /// on a GPU (see [`DeviceBuffer`] for when it pays). Dropping it waits for the work queued
    /// on it and frees it by `cuMemFree`, which synchronises the device: not while another
    /// thread captures a graph on it (the capture would be invalidated). The same as
    /// [`DeviceBuffer::from_slice_in`] on the emulator.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn from_slice_unpooled(ctx: &Context, slice: &[T]) -> CudaResult<Self> {
        let bytes = byte_len::<T>("DeviceBuffer", slice.len())?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let mem = ctx.backend().alloc_unpooled(
            bytes,
            Init::Copy(as_bytes(slice)),
            format_args!("copying a host slice to a new device buffer"),
        )?;
        Ok(Self::new(mem, slice.len()))
    }

    /// A buffer of `len` uninitialised elements, on the current context (zeros on the
    /// emulator).
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
        let mem = ctx.backend().alloc(
            bytes,
            Init::Uninit,
            format_args!("allocating a device buffer"),
        )?;
        Ok(Self::new(mem, len))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `true` for a buffer of the CPU emulator (host memory).
    pub fn is_emulator(&self) -> bool {
        self.mem.is_emulator()
    }

    /// The device address of element 0, for cust-style [`launch!`](crate::launch!)
    /// (`buf.as_device_ptr(), buf.len()` for a slice parameter); a host address on the
    /// emulator.
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        DevicePointer::from_raw(self.mem.address(self.whole()))
    }

    /// A read-only view of the whole buffer.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            mem: &*self.mem,
            range: self.whole(),
            len: self.len,
            _elem: PhantomData,
        }
    }

    /// A read-only view of the elements in `range`.
    ///
    /// # Errors
    /// [`CudaError::OutOfRange`] naming the range and the length if `range` is not within
    /// `0..len` (or its start is past its end).
    pub fn index(&self, range: impl RangeBounds<usize>) -> CudaResult<DeviceSlice<'_, T>> {
        let (start, end) = bounds(&range, self.len)?;
        Ok(DeviceSlice {
            mem: &*self.mem,
            range: byte_range::<T>(start, end),
            len: end - start,
            _elem: PhantomData,
        })
    }

    /// A writable view of the elements in `range`, e.g. one band of an image that a kernel
    /// fills (`OutSlice<T>` / `*mut T` parameters take `&mut DeviceSliceMut<T>`).
    ///
    /// # Errors
    /// As [`DeviceBuffer::index`].
    pub fn index_mut(
        &mut self,
        range: impl RangeBounds<usize>,
    ) -> CudaResult<DeviceSliceMut<'_, T>> {
        let (start, end) = bounds(&range, self.len)?;
        Ok(DeviceSliceMut {
            mem: &mut *self.mem,
            range: byte_range::<T>(start, end),
            len: end - start,
            _elem: PhantomData,
        })
    }

    /// A writable view of the whole buffer.
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        let range = self.whole();
        DeviceSliceMut {
            mem: &mut *self.mem,
            range,
            len: self.len,
            _elem: PhantomData,
        }
    }

    /// Queues on `stream` setting every byte of the buffer to zero (`cuMemsetD8Async`; done
    /// at once on the emulator).
    ///
    /// # Errors
    /// A driver error; [`CudaError::NotOnEmulator`] for a GPU buffer and an emulator stream.
    pub fn set_zero(&mut self, stream: &Stream) -> CudaResult<()>
    where
        T: ValidAsZeroBits,
    {
        self.mem.set_zero(stream.queue())
    }

    /// The buffer's contents, copied to a new `Vec`.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
        host_vec(
            &*self.mem,
            self.whole(),
            self.len,
            "copying a device buffer to the host",
        )
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
        let mem = ctx.backend().alloc(
            bytes,
            Init::Zeroed,
            format_args!("allocating a zeroed device buffer"),
        )?;
        Ok(Self::new(mem, len))
    }

    /// [`DeviceBuffer::zeroed_in`] outside the stream-ordered memory pool, as
    /// [`DeviceBuffer::from_slice_unpooled`] (whose drop synchronises the device).
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    pub fn zeroed_unpooled(ctx: &Context, len: usize) -> CudaResult<Self> {
        let bytes = byte_len::<T>("DeviceBuffer", len)?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let mem = ctx.backend().alloc_unpooled(
            bytes,
            Init::Zeroed,
            format_args!("allocating a zeroed device buffer"),
        )?;
        Ok(Self::new(mem, len))
    }

    /// A buffer of `len` zeros allocated and cleared in order on `stream`
    /// (`cuMemAllocAsync` + memset where the device has a memory pool): unlike
    /// [`DeviceBuffer::zeroed_in`], it does not wait, so it suits buffers made inside a
    /// pipeline. Work queued later on `stream` sees the zeros; other streams are ordered by
    /// the buffer's events.
    ///
    /// # Errors
    /// [`CudaError::SizeOverflow`]; a driver error (e.g. out of memory).
    pub fn zeroed_async(len: usize, stream: &Stream) -> CudaResult<Self> {
        let bytes = byte_len::<T>("DeviceBuffer", len)?;
        let mem = stream.queue().alloc(
            bytes,
            Init::Zeroed,
            format_args!("allocating a zeroed device buffer of {len} elements"),
        )?;
        Ok(Self::new(mem, len))
    }
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// A buffer holding a copy of `slice`, allocated and copied in order on `stream`
    /// without waiting (cust 0.3's `from_slice_async`, safe here: `slice` is copied before
    /// this returns, as cudarc stages pageable memory).
    ///
    /// # Errors
    /// [`CudaError::SizeOverflow`]; a driver error (e.g. out of memory).
    pub fn from_slice_async(slice: &[T], stream: &Stream) -> CudaResult<Self> {
        let bytes = byte_len::<T>("DeviceBuffer", slice.len())?;
        let mem = stream.queue().alloc(
            bytes,
            Init::Copy(as_bytes(slice)),
            format_args!("copying {} elements to a new device buffer", slice.len()),
        )?;
        Ok(Self::new(mem, slice.len()))
    }
}

impl<T: DeviceCopy> KernelMemory<T> for DeviceBuffer<T> {
    fn kernel_param<'a>(
        &'a self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        let (ptr, guard) = self.mem.use_on(self.whole(), stream.queue())?;
        Ok((ptr, self.len, guard))
    }
}

impl<T: DeviceCopy> KernelMemoryMut<T> for DeviceBuffer<T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        let whole = self.whole();
        let (ptr, guard) = self.mem.use_mut_on(whole, stream.queue())?;
        Ok((ptr, self.len, guard))
    }
}

impl<T: DeviceCopy, I: AsRef<[T]> + AsMut<[T]> + ?Sized> CopyDestination<I> for DeviceBuffer<T> {
    fn copy_from(&mut self, source: &I) -> CudaResult<()> {
        let source = source.as_ref();
        same_len("DeviceBuffer::copy_from", source.len(), self.len)?;
        let whole = self.whole();
        self.mem.write(
            whole,
            as_bytes(source),
            Queue::Sync,
            "copying a host slice into a device buffer",
        )
    }
    fn copy_to(&self, dest: &mut I) -> CudaResult<()> {
        let dest = dest.as_mut();
        same_len("DeviceBuffer::copy_to", self.len, dest.len())?;
        self.mem.read(
            self.whole(),
            // SAFETY: the copy writes the bytes of the buffer's `T`s.
            unsafe { as_bytes_mut(dest) },
            Queue::Sync,
            "copying a device buffer to a host slice",
        )
    }
}

impl<T: DeviceCopy> CopyDestination<DeviceBuffer<T>> for DeviceBuffer<T> {
    fn copy_from(&mut self, source: &DeviceBuffer<T>) -> CudaResult<()> {
        same_len("DeviceBuffer::copy_from", source.len, self.len)?;
        self.mem
            .copy_from(&*source.mem, Queue::Sync, "copying between device buffers")
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
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len)?;
        let whole = self.whole();
        self.mem.write(
            whole,
            as_bytes(source),
            Queue::On(stream.queue()),
            "queueing a host-to-device copy",
        )
    }
    fn async_copy_to(&self, dest: &mut I, stream: &Stream) -> CudaResult<()> {
        let dest = dest.as_mut();
        same_len("DeviceBuffer::async_copy_to", self.len, dest.len())?;
        self.mem.read(
            self.whole(),
            // SAFETY: the copy writes the bytes of the buffer's `T`s.
            unsafe { as_bytes_mut(dest) },
            Queue::On(stream.queue()),
            "queueing a device-to-host copy",
        )
    }
}

impl<T: DeviceCopy> AsyncCopyDestination<DeviceBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &DeviceBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len, self.len)?;
        self.mem.copy_from(
            &*source.mem,
            Queue::On(stream.queue()),
            "queueing a device-to-device copy",
        )
    }
    fn async_copy_to(&self, dest: &mut DeviceBuffer<T>, stream: &Stream) -> CudaResult<()> {
        dest.async_copy_from(self, stream)
    }
}
