//! Device memory: [`DeviceBuffer`], its views [`DeviceSlice`] and [`DeviceSliceMut`],
//! [`DeviceBox`], and [`SliceExt::as_dbuf`](super::SliceExt::as_dbuf).

use super::{
    AsyncCopyDestination, CopyDestination, DeviceCopy, DevicePointer, ValidAsZeroBits, as_bytes,
    as_bytes_mut, byte_len, same_len,
};
use crate::{
    backend::{self, Init, Queue},
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use std::{
    fmt,
    marker::PhantomData,
    mem::size_of,
    ops::{Range, RangeBounds},
};

/// What a kernel parameter holds until its launch is queued (see [`KernelMemory`]).
#[doc(hidden)]
pub use crate::backend::Guard;

/// A buffer of `len` `T`s in device memory, on the context it was made in: GPU memory, or
/// host memory on the CPU emulator ([`Context::emulator`]). (It implements cudarc's
/// `DevicePtr` / `DevicePtrMut`, for crates built over cudarc such as `blastoff`; those
/// panic for an emulator buffer, which has no CUDA stream.)
pub struct DeviceBuffer<T: DeviceCopy> {
    /// The backend's memory, `len * size_of::<T>()` bytes.
    mem: Box<dyn backend::Memory>,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("len", &self.len())
            .field("emulator", &self.is_emulator())
            .finish_non_exhaustive()
    }
}

/// The byte range of elements `start..end` of `T`s.
fn byte_range<T>(start: usize, end: usize) -> Range<usize> {
    start * size_of::<T>()..end * size_of::<T>()
}

/// `len` `T`s of `mem`'s `range`, copied to a new `Vec`; `what` names the copy in an error.
fn host_vec<T: DeviceCopy>(
    mem: &dyn backend::Memory,
    range: Range<usize>,
    len: usize,
    what: &'static str,
) -> CudaResult<Vec<T>> {
    let mut v = Vec::<T>::with_capacity(len);
    let spare = &mut v.spare_capacity_mut()[..len];
    // SAFETY: `len` `MaybeUninit<T>`s of the vector's spare capacity, seen as bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(spare.as_mut_ptr().cast(), std::mem::size_of_val(spare))
    };
    mem.read(range, bytes, Queue::Own, what)?;
    // SAFETY: the copy wrote all `len` elements: the bytes of `T`s from device memory.
    unsafe { v.set_len(len) };
    Ok(v)
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    fn new(mem: Box<dyn backend::Memory>, len: usize) -> Self {
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

/// `range` as Rust writes it (`2..9`, `..=4`, `3..`).
fn show_range(range: &impl RangeBounds<usize>) -> String {
    use std::ops::Bound;
    let start = match range.start_bound() {
        Bound::Included(s) => s.to_string(),
        Bound::Excluded(s) => format!("{}", s.saturating_add(1)),
        Bound::Unbounded => String::new(),
    };
    match range.end_bound() {
        Bound::Included(e) => format!("{start}..={e}"),
        Bound::Excluded(e) => format!("{start}..{e}"),
        Bound::Unbounded => format!("{start}.."),
    }
}

/// `range` as `start..end` within `0..len`.
pub(crate) fn bounds(range: &impl RangeBounds<usize>, len: usize) -> CudaResult<(usize, usize)> {
    use std::ops::Bound;
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e)),
        _ => Err(CudaError::OutOfRange {
            range: show_range(range),
            len,
        }),
    }
}

/// A buffer as a kernel parameter on `stream`: `(address, length, guard)`; the guard
/// orders the buffer's use on `stream` (GPU only).
///
/// # Errors
/// [`CudaError::BackendMismatch`] when the buffer and `stream` are of different backends.
#[doc(hidden)]
pub trait KernelMemory<T> {
    /// For a read-only parameter.
    fn kernel_param<'a>(
        &'a self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)>;
}

/// As [`KernelMemory`], for a parameter the kernel writes.
#[doc(hidden)]
pub trait KernelMemoryMut<T> {
    /// For a written parameter.
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)>;
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

/// What [`DeviceSlice`] and [`DeviceSliceMut`] share over their `mem`, `range` and `len`
/// fields: `Debug`, `len`, `is_empty`, `as_device_ptr`, `as_host_vec`, the backend memory
/// for cudarc's traits, and [`KernelMemory`].
macro_rules! view_common {
    ($view:ident) => {
        impl<T: DeviceCopy> fmt::Debug for $view<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($view))
                    .field("len", &self.len())
                    .finish_non_exhaustive()
            }
        }

        impl<T: DeviceCopy> $view<'_, T> {
            /// Number of elements.
            pub fn len(&self) -> usize {
                self.len
            }
            /// `true` if the view has no elements.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
            /// The device address of the view's first element (a host address on the
            /// emulator).
            pub fn as_device_ptr(&self) -> DevicePointer<T> {
                DevicePointer::from_raw(self.mem.address(self.range.clone()))
            }
            /// The view's contents, copied to a new `Vec`; returns once done.
            ///
            /// # Errors
            /// A driver error.
            pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
                host_vec(
                    &*self.mem,
                    self.range.clone(),
                    self.len,
                    "copying a device slice to the host",
                )
            }
            /// The backend's memory and the view's byte range in it (for cudarc's traits).
            pub(crate) fn memory(&self) -> (&dyn backend::Memory, Range<usize>) {
                (&*self.mem, self.range.clone())
            }
        }

        impl<T: DeviceCopy> KernelMemory<T> for $view<'_, T> {
            fn kernel_param<'a>(
                &'a self,
                stream: &'a Stream,
            ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
                let (ptr, guard) = self.mem.use_on(self.range.clone(), stream.queue())?;
                Ok((ptr, self.len, guard))
            }
        }
    };
}

/// A read-only view of part of a [`DeviceBuffer`].
pub struct DeviceSlice<'a, T: DeviceCopy> {
    mem: &'a dyn backend::Memory,
    /// The view's bytes in `mem`.
    range: Range<usize>,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

view_common!(DeviceSlice);

impl<T: DeviceCopy> DeviceSlice<'_, T> {
    /// Copies the view into `dest`; returns once done.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn copy_to(&self, dest: &mut [T]) -> CudaResult<()> {
        same_len("DeviceSlice::copy_to", self.len, dest.len())?;
        self.mem.read(
            self.range.clone(),
            // SAFETY: the copy writes the bytes of the view's `T`s.
            unsafe { as_bytes_mut(dest) },
            Queue::Sync,
            "copying a device slice to a host slice",
        )
    }
}

/// A writable view of part of a [`DeviceBuffer`] ([`DeviceBuffer::index_mut`]): a kernel
/// argument for `OutSlice<T>` / `*mut T` parameters, and a copy destination.
pub struct DeviceSliceMut<'a, T: DeviceCopy> {
    mem: &'a mut dyn backend::Memory,
    /// The view's bytes in `mem`.
    range: Range<usize>,
    len: usize,
    _elem: PhantomData<fn() -> T>,
}

view_common!(DeviceSliceMut);

impl<T: DeviceCopy> KernelMemoryMut<T> for DeviceSliceMut<'_, T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        let (ptr, guard) = self.mem.use_mut_on(self.range.clone(), stream.queue())?;
        Ok((ptr, self.len, guard))
    }
}

impl<T: DeviceCopy> DeviceSliceMut<'_, T> {
    /// Queues on `stream` a copy of `source` into the view.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn async_copy_from(&mut self, source: &[T], stream: &Stream) -> CudaResult<()> {
        same_len("DeviceSliceMut::async_copy_from", source.len(), self.len)?;
        self.mem.write(
            self.range.clone(),
            as_bytes(source),
            Queue::On(stream.queue()),
            "queueing a host-to-device copy",
        )
    }

    /// As [`DeviceSlice::memory`], writable.
    pub(crate) fn memory_mut(&mut self) -> (&mut dyn backend::Memory, Range<usize>) {
        (&mut *self.mem, self.range.clone())
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

    /// The buffer of one element (for cudarc's traits).
    pub(crate) fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buf
    }

    /// As [`DeviceBox::buffer`], writable.
    pub(crate) fn buffer_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buf
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

impl<T: DeviceCopy> KernelMemory<T> for DeviceBox<T> {
    fn kernel_param<'a>(
        &'a self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        self.buf.kernel_param(stream)
    }
}

impl<T: DeviceCopy> KernelMemoryMut<T> for DeviceBox<T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<Guard<'a>>)> {
        self.buf.kernel_param_mut(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_outside_the_buffer_are_errors_naming_range_and_length() {
        assert_eq!(bounds(&(2..9), 10).unwrap(), (2, 9));
        assert_eq!(bounds(&(..), 10).unwrap(), (0, 10));
        assert_eq!(bounds(&(3..=3), 10).unwrap(), (3, 4));
        let err = bounds(&(4..11), 10).unwrap_err().to_string();
        assert_eq!(
            err,
            "range 4..11 is out of bounds for a buffer of 10 elements"
        );
        let err = bounds(&(..=usize::MAX), 10).unwrap_err().to_string();
        assert!(err.contains(&format!("..={}", usize::MAX)), "{err}");
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = bounds(&(5..2), 10);
        assert!(reversed.unwrap_err().to_string().contains("5..2"));
    }
}
