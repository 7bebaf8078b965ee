//! Device memory: [`DeviceBuffer`], its views [`DeviceSlice`] and [`DeviceSliceMut`],
//! [`DeviceBox`], and [`SliceExt::as_dbuf`](super::SliceExt::as_dbuf).

use super::{
    AsyncCopyDestination, CopyDestination, DeviceCopy, DevicePointer, Elem, LockedBuffer,
    ValidAsZeroBits, byte_len, elems, elems_mut, same_len,
};
use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr};
use std::{fmt, ops::RangeBounds, sync::Arc};

/// A buffer of `len` `T`s in device memory, on the context it was made in. (It implements
/// cudarc's `DevicePtr` / `DevicePtrMut`, for crates built over cudarc such as `blastoff`.)
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
    ctx.as_cudarc().default_stream()
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
        device_address(self)
    }

    /// A read-only view of the whole buffer.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            view: self.buf.as_view(),
        }
    }

    /// A read-only view of the elements in `range`.
    ///
    /// # Errors
    /// [`CudaError::OutOfRange`] naming the range and the length if `range` is not within
    /// `0..len` (or its start is past its end).
    pub fn index(&self, range: impl RangeBounds<usize>) -> CudaResult<DeviceSlice<'_, T>> {
        let (start, end) = bounds(&range, self.len())?;
        Ok(DeviceSlice {
            view: self.buf.slice(start..end),
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
        let (start, end) = bounds(&range, self.len())?;
        Ok(DeviceSliceMut {
            view: self.buf.slice_mut(start..end),
        })
    }

    /// A writable view of the whole buffer.
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            view: self.buf.as_view_mut(),
        }
    }

    /// Queues on `stream` setting every byte of the buffer to zero (`cuMemsetD8Async`).
    ///
    /// # Errors
    /// A driver error.
    pub fn set_zero(&mut self, stream: &Stream) -> CudaResult<()>
    where
        T: ValidAsZeroBits,
    {
        stream
            .as_cudarc()
            .memset_zeros(&mut self.buf)
            .map_err(CudaError::driver("queueing a memset of a device buffer"))
    }

    /// The buffer's contents, copied to a new `Vec`.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
        host_vec(&self.buf, "copying a device buffer to the host")
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

    /// A buffer of `len` zeros allocated and cleared in order on `stream`
    /// (`cuMemAllocAsync` + memset where the device has a memory pool): unlike
    /// [`DeviceBuffer::zeroed_in`], it does not wait, so it suits buffers made inside a
    /// pipeline. Work queued later on `stream` sees the zeros; other streams are ordered by
    /// the buffer's events.
    ///
    /// # Errors
    /// [`CudaError::SizeOverflow`]; a driver error (e.g. out of memory).
    pub fn zeroed_async(len: usize, stream: &Stream) -> CudaResult<Self> {
        byte_len::<T>("DeviceBuffer", len)?;
        let buf = stream
            .as_cudarc()
            .alloc_zeros::<Elem<T>>(len)
            .map_err(CudaError::driver(format!(
                "allocating a zeroed device buffer of {len} elements"
            )))?;
        Ok(Self { buf })
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
        byte_len::<T>("DeviceBuffer", slice.len())?;
        let buf = stream
            .as_cudarc()
            .clone_htod(elems(slice))
            .map_err(CudaError::driver(format!(
                "copying {} elements to a new device buffer",
                slice.len()
            )))?;
        Ok(Self { buf })
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

/// The device address of `mem`'s first element, read on its own stream.
fn device_address<E>(mem: &impl DevicePtr<E>) -> DevicePointer<E> {
    let stream = mem.stream().clone();
    let (ptr, _sync) = mem.device_ptr(&stream);
    DevicePointer::from_raw(ptr)
}

/// Copies all of `src` into `dest` on `src`'s own stream; returns once done. `call` names the
/// method in a length error, `what` the copy in a driver error.
fn copy_to_host<T: DeviceCopy>(
    src: &impl DevicePtr<Elem<T>>,
    dest: &mut [T],
    call: &'static str,
    what: &'static str,
) -> CudaResult<()> {
    same_len(call, src.len(), dest.len())?;
    let stream = src.stream().clone();
    stream
        .memcpy_dtoh(src, elems_mut(dest))
        .and_then(|()| stream.synchronize())
        .map_err(CudaError::driver(what))
}

/// `mem`'s contents, copied to a new `Vec` on its own stream; returns once done. `what`
/// names the copy in an error.
fn host_vec<T: DeviceCopy>(
    mem: &impl DevicePtr<Elem<T>>,
    what: &'static str,
) -> CudaResult<Vec<T>> {
    let stream = mem.stream().clone();
    let v: Vec<Elem<T>> = stream.clone_dtoh(mem).map_err(CudaError::driver(what))?;
    Ok(v.into_iter().map(|e| e.0).collect())
}

forward_cudarc_memory!([T: DeviceCopy] DeviceBuffer<T> => mut buf);

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
        copy_to_host(
            &self.buf,
            dest.as_mut(),
            "DeviceBuffer::copy_to",
            "copying a device buffer to a host slice",
        )
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
            .as_cudarc()
            .memcpy_htod(elems(source), &mut self.buf)
            .map_err(CudaError::driver("queueing a host-to-device copy"))
    }
    fn async_copy_to(&self, dest: &mut I, stream: &Stream) -> CudaResult<()> {
        let dest = dest.as_mut();
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len())?;
        stream
            .as_cudarc()
            .memcpy_dtoh(&self.buf, elems_mut(dest))
            .map_err(CudaError::driver("queueing a device-to-host copy"))
    }
}

impl<T: DeviceCopy> AsyncCopyDestination<DeviceBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &DeviceBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len())?;
        stream
            .as_cudarc()
            .memcpy_dtod(&source.buf, &mut self.buf)
            .map_err(CudaError::driver("queueing a device-to-device copy"))
    }
    fn async_copy_to(&self, dest: &mut DeviceBuffer<T>, stream: &Stream) -> CudaResult<()> {
        dest.async_copy_from(self, stream)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> AsyncCopyDestination<LockedBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len())?;
        stream
            .as_cudarc()
            .memcpy_htod(&source.buf, &mut self.buf)
            .map_err(CudaError::driver("queueing a pinned host-to-device copy"))?;
        source.copy_queued(stream)
    }
    fn async_copy_to(&self, dest: &mut LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len())?;
        stream
            .as_cudarc()
            .memcpy_dtoh(&self.buf, &mut dest.buf)
            .map_err(CudaError::driver("queueing a device-to-pinned-host copy"))?;
        dest.copy_queued(stream)
    }
}

/// What [`DeviceSlice`] and [`DeviceSliceMut`] share over their `view` field: `Debug`,
/// `len`, `is_empty`, `as_device_ptr`, `as_host_vec` and cudarc's traits (`DevicePtrMut` too
/// with `mut`).
macro_rules! view_common {
    ($view:ident $(, $mut:tt)?) => {
        impl<T: DeviceCopy> fmt::Debug for $view<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($view))
                    .field("len", &self.view.len())
                    .finish_non_exhaustive()
            }
        }

        impl<T: DeviceCopy> $view<'_, T> {
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
                device_address(self)
            }
            /// The view's contents, copied to a new `Vec`; returns once done.
            ///
            /// # Errors
            /// A driver error.
            pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
                host_vec(&self.view, "copying a device slice to the host")
            }
        }

        forward_cudarc_memory!([T: DeviceCopy] $view<'_, T> => $($mut)? view);
    };
}

/// A read-only view of part of a [`DeviceBuffer`].
pub struct DeviceSlice<'a, T: DeviceCopy> {
    view: CudaView<'a, Elem<T>>,
}

view_common!(DeviceSlice);

impl<T: DeviceCopy> DeviceSlice<'_, T> {
    /// Copies the view into `dest`; returns once done.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn copy_to(&self, dest: &mut [T]) -> CudaResult<()> {
        copy_to_host(
            &self.view,
            dest,
            "DeviceSlice::copy_to",
            "copying a device slice to a host slice",
        )
    }
}

/// A writable view of part of a [`DeviceBuffer`] ([`DeviceBuffer::index_mut`]): a kernel
/// argument for `OutSlice<T>` / `*mut T` parameters, and a copy destination.
pub struct DeviceSliceMut<'a, T: DeviceCopy> {
    view: CudaViewMut<'a, Elem<T>>,
}

view_common!(DeviceSliceMut, mut);

impl<T: DeviceCopy> DeviceSliceMut<'_, T> {
    /// Queues on `stream` a copy of `source` into the view.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn async_copy_from(&mut self, source: &[T], stream: &Stream) -> CudaResult<()> {
        same_len("DeviceSliceMut::async_copy_from", source.len(), self.len())?;
        stream
            .as_cudarc()
            .memcpy_htod(elems(source), &mut self.view)
            .map_err(CudaError::driver("queueing a host-to-device copy"))
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

// `len` is the inner buffer's, always 1.
forward_cudarc_memory!([T: DeviceCopy] DeviceBox<T> => mut buf);

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
