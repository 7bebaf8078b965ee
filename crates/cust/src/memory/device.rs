//! Device memory: [`DeviceBuffer`], its views [`DeviceSlice`] and [`DeviceSliceMut`],
//! [`DeviceBox`], and [`SliceExt::as_dbuf`](super::SliceExt::as_dbuf).

use super::{
    AsyncCopyDestination, CopyDestination, DeviceCopy, DevicePointer, Elem, LockedBuffer,
    ValidAsZeroBits, byte_len, elems, elems_mut, locked::Pinned, same_len,
};
use crate::cpu::{self, CpuDevice, CpuMem};
use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, SyncOnDrop};
use std::{fmt, marker::PhantomData, ops::RangeBounds, sync::Arc};

/// A buffer of `len` `T`s in device memory, on the context it was made in: GPU memory, or
/// host memory on the CPU emulator ([`Context::emulator`]). (It implements cudarc's
/// `DevicePtr` / `DevicePtrMut`, for crates built over cudarc such as `blastoff`; those
/// panic for an emulator buffer, which has no CUDA stream.)
pub struct DeviceBuffer<T: DeviceCopy> {
    buf: Storage<T>,
}

/// Where a [`DeviceBuffer`] lives.
enum Storage<T> {
    Cuda(CudaSlice<Elem<T>>),
    Cpu { mem: CpuMem, len: usize },
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("len", &self.len())
            .field("emulator", &self.is_emulator())
            .finish_non_exhaustive()
    }
}

/// A host pointer and length standing for device memory of the emulator.
struct HostView<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> HostView<'a, T> {
    fn new(mem: &'a CpuMem, len: usize) -> Self {
        HostView {
            ptr: mem.as_ptr().cast(),
            len,
            _borrow: PhantomData,
        }
    }

    fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` points to `len` initialised `T`s (zeroed or copied in, and
        // `DeviceCopy`) of a live emulator allocation borrowed for `'a`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `self` was made from an exclusive borrow where written.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// The emulator buffer of `len` zeroed `T`s on `device`.
fn cpu_zeroed<T: DeviceCopy>(device: &Arc<CpuDevice>, len: usize) -> CudaResult<DeviceBuffer<T>> {
    let bytes = byte_len::<T>("DeviceBuffer", len)?;
    let mem = CpuMem::zeroed(device, "DeviceBuffer", bytes)?;
    Ok(DeviceBuffer {
        buf: Storage::Cpu { mem, len },
    })
}

/// An emulator buffer holding a copy of `slice`.
fn cpu_from_slice<T: DeviceCopy>(
    device: &Arc<CpuDevice>,
    slice: &[T],
) -> CudaResult<DeviceBuffer<T>> {
    let buf = cpu_zeroed(device, slice.len())?;
    if let Some(mut h) = buf.host() {
        h.as_mut_slice().copy_from_slice(slice);
    }
    Ok(buf)
}

/// A [`CudaError::BackendMismatch`] for `what`, the buffer on the CPU emulator or not.
pub(super) fn mismatch(what: &'static str, buffer_on_cpu: bool) -> CudaError {
    let (buffer, stream) = if buffer_on_cpu {
        (cpu::CPU, cpu::GPU)
    } else {
        (cpu::GPU, cpu::CPU)
    };
    CudaError::BackendMismatch {
        what,
        buffer,
        stream,
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
        if let Some(device) = ctx.cpu() {
            return cpu_from_slice(device, slice);
        }
        let bytes = byte_len::<T>("DeviceBuffer", slice.len())?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let stream = sync_stream(ctx);
        let buf = stream.clone_htod(elems(slice)).map_err(CudaError::driver(
            "copying a host slice to a new device buffer",
        ))?;
        stream.synchronize().map_err(CudaError::driver(
            "copying a host slice to a new device buffer",
        ))?;
        Ok(Self {
            buf: Storage::Cuda(buf),
        })
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
        if let Some(device) = ctx.cpu() {
            return cpu_zeroed(device, len);
        }
        let bytes = byte_len::<T>("DeviceBuffer", len)?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let stream = sync_stream(&ctx);
        // SAFETY: forwarded to the caller (contents are uninitialised).
        let buf = unsafe { stream.alloc::<Elem<T>>(len) }
            .map_err(CudaError::driver("allocating a device buffer"))?;
        stream
            .synchronize()
            .map_err(CudaError::driver("allocating a device buffer"))?;
        Ok(Self {
            buf: Storage::Cuda(buf),
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.buf {
            Storage::Cuda(b) => b.len(),
            Storage::Cpu { len, .. } => *len,
        }
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `true` for a buffer of the CPU emulator (host memory).
    pub fn is_emulator(&self) -> bool {
        matches!(self.buf, Storage::Cpu { .. })
    }

    /// The emulator view of the whole buffer, `None` on a GPU.
    fn host(&self) -> Option<HostView<'_, T>> {
        match &self.buf {
            Storage::Cpu { mem, len } => Some(HostView {
                ptr: mem.as_ptr().cast(),
                len: *len,
                _borrow: PhantomData,
            }),
            Storage::Cuda(_) => None,
        }
    }

    /// The GPU buffer, for cudarc's traits.
    ///
    /// # Panics
    /// For an emulator buffer.
    fn cuda(&self) -> &CudaSlice<Elem<T>> {
        match &self.buf {
            Storage::Cuda(b) => b,
            Storage::Cpu { .. } => panic!("{}", NO_CUDARC),
        }
    }

    /// As [`DeviceBuffer::cuda`], writable.
    fn cuda_mut(&mut self) -> &mut CudaSlice<Elem<T>> {
        match &mut self.buf {
            Storage::Cuda(b) => b,
            Storage::Cpu { .. } => panic!("{}", NO_CUDARC),
        }
    }

    /// The device address of element 0, for cust-style [`launch!`](crate::launch!)
    /// (`buf.as_device_ptr(), buf.len()` for a slice parameter); a host address on the
    /// emulator.
    pub fn as_device_ptr(&self) -> DevicePointer<T> {
        match self.host() {
            Some(h) => DevicePointer::from_raw(h.ptr as u64),
            None => device_address(self),
        }
    }

    /// A read-only view of the whole buffer.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice {
            view: match self.host() {
                Some(h) => View::Cpu(h),
                None => View::Cuda(self.cuda().as_view()),
            },
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
            view: match self.host() {
                Some(h) => View::Cpu(h.sub(start, end)),
                None => View::Cuda(self.cuda().slice(start..end)),
            },
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
            view: match &mut self.buf {
                Storage::Cpu { mem, len } => ViewMut::Cpu(HostView::new(mem, *len).sub(start, end)),
                Storage::Cuda(b) => ViewMut::Cuda(b.slice_mut(start..end)),
            },
        })
    }

    /// A writable view of the whole buffer.
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            view: match &mut self.buf {
                Storage::Cpu { mem, len } => ViewMut::Cpu(HostView::new(mem, *len)),
                Storage::Cuda(b) => ViewMut::Cuda(b.as_view_mut()),
            },
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
        if let Some(h) = self.host() {
            // SAFETY: `len` elements of a live allocation; zero bits are a valid `T`.
            unsafe { h.ptr.write_bytes(0, h.len) };
            return Ok(());
        }
        stream
            .cuda("a GPU memset on a CPU-emulator stream")?
            .memset_zeros(self.cuda_mut())
            .map_err(CudaError::driver("queueing a memset of a device buffer"))
    }

    /// The buffer's contents, copied to a new `Vec`.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
        match self.host() {
            Some(h) => Ok(h.as_slice().to_vec()),
            None => host_vec(self.cuda(), "copying a device buffer to the host"),
        }
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
        if let Some(device) = ctx.cpu() {
            return cpu_zeroed(device, len);
        }
        let bytes = byte_len::<T>("DeviceBuffer", len)?;
        ctx.check_free("DeviceBuffer", bytes)?;
        let stream = sync_stream(ctx);
        let buf = stream
            .alloc_zeros::<Elem<T>>(len)
            .map_err(CudaError::driver("allocating a zeroed device buffer"))?;
        stream
            .synchronize()
            .map_err(CudaError::driver("allocating a zeroed device buffer"))?;
        Ok(Self {
            buf: Storage::Cuda(buf),
        })
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
        if let Some(device) = stream.cpu() {
            return cpu_zeroed(device, len);
        }
        byte_len::<T>("DeviceBuffer", len)?;
        let buf = stream
            .as_cudarc()
            .alloc_zeros::<Elem<T>>(len)
            .map_err(CudaError::driver(format!(
                "allocating a zeroed device buffer of {len} elements"
            )))?;
        Ok(Self {
            buf: Storage::Cuda(buf),
        })
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
        if let Some(device) = stream.cpu() {
            return cpu_from_slice(device, slice);
        }
        byte_len::<T>("DeviceBuffer", slice.len())?;
        let buf = stream
            .as_cudarc()
            .clone_htod(elems(slice))
            .map_err(CudaError::driver(format!(
                "copying {} elements to a new device buffer",
                slice.len()
            )))?;
        Ok(Self {
            buf: Storage::Cuda(buf),
        })
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

/// The panic message of cudarc's traits on emulator memory.
pub(super) const NO_CUDARC: &str = "cudarc's DevicePtr/DeviceSlice traits need GPU memory: this buffer \
                         lives on the CPU emulator (cudarc-based libraries such as cuBLAS need \
                         a GPU)";

impl<'a, T> HostView<'a, T> {
    /// Elements `start..end` (within `0..len`, checked by the caller).
    fn sub(self, start: usize, end: usize) -> Self {
        HostView {
            // SAFETY: `start <= len`: within (or one past) the allocation.
            ptr: unsafe { self.ptr.add(start) },
            len: end - start,
            _borrow: PhantomData,
        }
    }
}

impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        DeviceBuffer::len(self)
    }
    fn stream(&self) -> &Arc<CudaStream> {
        cudarc::driver::DeviceSlice::stream(self.cuda())
    }
}

impl<T: DeviceCopy> DevicePtr<T> for DeviceBuffer<T> {
    fn device_ptr<'a>(
        &'a self,
        stream: &'a CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.cuda().device_ptr(stream)
    }
}

impl<T: DeviceCopy> cudarc::driver::DevicePtrMut<T> for DeviceBuffer<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.cuda_mut().device_ptr_mut(stream)
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
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)>;
}

/// As [`KernelMemory`], for a parameter the kernel writes.
#[doc(hidden)]
pub trait KernelMemoryMut<T> {
    /// For a written parameter.
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)>;
}

/// `mem` (GPU memory) as a parameter on `stream`.
pub(crate) fn cuda_param<'a, T>(
    mem: &'a impl DevicePtr<T>,
    stream: &'a Stream,
) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
    let s = stream
        .cuda("")
        .map_err(|_| mismatch("launching a kernel", false))?;
    let (ptr, sync) = mem.device_ptr(s);
    Ok((ptr, mem.len(), Some(sync)))
}

/// `mem` (GPU memory) as a written parameter on `stream`.
pub(crate) fn cuda_param_mut<'a, T>(
    mem: &'a mut impl cudarc::driver::DevicePtrMut<T>,
    stream: &'a Stream,
) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
    let s = stream
        .cuda("")
        .map_err(|_| mismatch("launching a kernel", false))?;
    let len = mem.len();
    let (ptr, sync) = mem.device_ptr_mut(s);
    Ok((ptr, len, Some(sync)))
}

/// An emulator view as a parameter on `stream`.
fn host_param<'a, T>(
    h: &HostView<'_, T>,
    stream: &Stream,
) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
    if stream.is_emulator() {
        Ok((h.ptr as u64, h.len, None))
    } else {
        Err(mismatch("launching a kernel", true))
    }
}

impl<T: DeviceCopy> KernelMemory<T> for DeviceBuffer<T> {
    fn kernel_param<'a>(
        &'a self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
        match self.host() {
            Some(h) => host_param(&h, stream),
            None => cuda_param(self, stream),
        }
    }
}

impl<T: DeviceCopy> KernelMemoryMut<T> for DeviceBuffer<T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
        match self.host() {
            Some(h) => host_param(&h, stream),
            None => cuda_param_mut(self, stream),
        }
    }
}

/// Copies `src` to `dest` (same length, checked by the caller) on the emulator.
fn host_copy<T: DeviceCopy>(src: &[T], dest: *mut T) {
    // SAFETY: `dest` points to `src.len()` writable `T`s of a live allocation; `copy`
    // allows overlap (a buffer copied onto itself).
    unsafe { std::ptr::copy(src.as_ptr(), dest, src.len()) };
}

impl<T: DeviceCopy, I: AsRef<[T]> + AsMut<[T]> + ?Sized> CopyDestination<I> for DeviceBuffer<T> {
    fn copy_from(&mut self, source: &I) -> CudaResult<()> {
        let source = source.as_ref();
        same_len("DeviceBuffer::copy_from", source.len(), self.len())?;
        if let Some(h) = self.host() {
            host_copy(source, h.ptr);
            return Ok(());
        }
        let buf = self.cuda_mut();
        let stream = buf.stream().clone();
        stream
            .memcpy_htod(elems(source), buf)
            .and_then(|()| stream.synchronize())
            .map_err(CudaError::driver(
                "copying a host slice into a device buffer",
            ))
    }
    fn copy_to(&self, dest: &mut I) -> CudaResult<()> {
        let dest = dest.as_mut();
        if let Some(h) = self.host() {
            same_len("DeviceBuffer::copy_to", h.len, dest.len())?;
            dest.copy_from_slice(h.as_slice());
            return Ok(());
        }
        copy_to_host(
            self.cuda(),
            dest,
            "DeviceBuffer::copy_to",
            "copying a device buffer to a host slice",
        )
    }
}

impl<T: DeviceCopy> CopyDestination<DeviceBuffer<T>> for DeviceBuffer<T> {
    fn copy_from(&mut self, source: &DeviceBuffer<T>) -> CudaResult<()> {
        same_len("DeviceBuffer::copy_from", source.len(), self.len())?;
        match (self.host(), source.host()) {
            (Some(d), Some(s)) => {
                host_copy(s.as_slice(), d.ptr);
                return Ok(());
            }
            (None, None) => {}
            (d, _) => return Err(mismatch("copying between device buffers", d.is_none())),
        }
        let src = source.cuda();
        let buf = self.cuda_mut();
        let stream = buf.stream().clone();
        stream
            .memcpy_dtod(src, buf)
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
        if let Some(h) = self.host() {
            host_copy(source, h.ptr);
            return Ok(());
        }
        stream
            .cuda("")
            .map_err(|_| mismatch("queueing a host-to-device copy", false))?
            .memcpy_htod(elems(source), self.cuda_mut())
            .map_err(CudaError::driver("queueing a host-to-device copy"))
    }
    fn async_copy_to(&self, dest: &mut I, stream: &Stream) -> CudaResult<()> {
        let dest = dest.as_mut();
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len())?;
        if let Some(h) = self.host() {
            dest.copy_from_slice(h.as_slice());
            return Ok(());
        }
        stream
            .cuda("")
            .map_err(|_| mismatch("queueing a device-to-host copy", false))?
            .memcpy_dtoh(self.cuda(), elems_mut(dest))
            .map_err(CudaError::driver("queueing a device-to-host copy"))
    }
}

impl<T: DeviceCopy> AsyncCopyDestination<DeviceBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &DeviceBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len())?;
        if self.is_emulator() || source.is_emulator() {
            return self.copy_from(source);
        }
        stream
            .cuda("")
            .map_err(|_| mismatch("queueing a device-to-device copy", false))?
            .memcpy_dtod(source.cuda(), self.cuda_mut())
            .map_err(CudaError::driver("queueing a device-to-device copy"))
    }
    fn async_copy_to(&self, dest: &mut DeviceBuffer<T>, stream: &Stream) -> CudaResult<()> {
        dest.async_copy_from(self, stream)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> AsyncCopyDestination<LockedBuffer<T>> for DeviceBuffer<T> {
    fn async_copy_from(&mut self, source: &LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_from", source.len(), self.len())?;
        match (&source.buf, self.host()) {
            (Pinned::Host(v), Some(h)) => {
                host_copy(v, h.ptr);
                return Ok(());
            }
            (Pinned::Cuda(pinned), None) => {
                stream
                    .cuda("")
                    .map_err(|_| mismatch("queueing a pinned host-to-device copy", false))?
                    .memcpy_htod(pinned, self.cuda_mut())
                    .map_err(CudaError::driver("queueing a pinned host-to-device copy"))?;
            }
            (_, h) => return Err(mismatch("copying from pinned host memory", h.is_some())),
        }
        source.copy_queued(stream)
    }
    fn async_copy_to(&self, dest: &mut LockedBuffer<T>, stream: &Stream) -> CudaResult<()> {
        same_len("DeviceBuffer::async_copy_to", self.len(), dest.len())?;
        match (&mut dest.buf, self.host()) {
            (Pinned::Host(v), Some(h)) => {
                v.copy_from_slice(h.as_slice());
                return Ok(());
            }
            (Pinned::Cuda(pinned), None) => {
                stream
                    .cuda("")
                    .map_err(|_| mismatch("queueing a device-to-pinned-host copy", false))?
                    .memcpy_dtoh(self.cuda(), pinned)
                    .map_err(CudaError::driver("queueing a device-to-pinned-host copy"))?;
            }
            (_, h) => return Err(mismatch("copying to pinned host memory", h.is_some())),
        }
        dest.copy_queued(stream)
    }
}

/// A view's storage: a cudarc view, or a host view on the emulator.
enum View<'a, T> {
    Cuda(CudaView<'a, Elem<T>>),
    Cpu(HostView<'a, T>),
}

/// As [`View`], writable.
enum ViewMut<'a, T> {
    Cuda(CudaViewMut<'a, Elem<T>>),
    Cpu(HostView<'a, T>),
}

/// What [`DeviceSlice`] and [`DeviceSliceMut`] share over their `view` field: `Debug`,
/// `len`, `is_empty`, `as_device_ptr`, `as_host_vec` and cudarc's traits (`DevicePtrMut` too
/// with `mut`).
macro_rules! view_common {
    ($view:ident, $storage:ident) => {
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
                match &self.view {
                    $storage::Cuda(v) => v.len(),
                    $storage::Cpu(h) => h.len,
                }
            }
            /// `true` if the view has no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            /// The device address of the view's first element (a host address on the
            /// emulator).
            pub fn as_device_ptr(&self) -> DevicePointer<T> {
                match &self.view {
                    $storage::Cuda(_) => device_address(self),
                    $storage::Cpu(h) => DevicePointer::from_raw(h.ptr as u64),
                }
            }
            /// The view's contents, copied to a new `Vec`; returns once done.
            ///
            /// # Errors
            /// A driver error.
            pub fn as_host_vec(&self) -> CudaResult<Vec<T>> {
                match &self.view {
                    $storage::Cuda(v) => host_vec(v, "copying a device slice to the host"),
                    $storage::Cpu(h) => Ok(h.as_slice().to_vec()),
                }
            }
        }

        impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for $view<'_, T> {
            fn len(&self) -> usize {
                $view::len(self)
            }
            fn stream(&self) -> &Arc<CudaStream> {
                match &self.view {
                    $storage::Cuda(v) => cudarc::driver::DeviceSlice::stream(v),
                    $storage::Cpu(_) => panic!("{}", NO_CUDARC),
                }
            }
        }

        impl<T: DeviceCopy> DevicePtr<T> for $view<'_, T> {
            fn device_ptr<'a>(
                &'a self,
                stream: &'a CudaStream,
            ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'a>) {
                match &self.view {
                    $storage::Cuda(v) => v.device_ptr(stream),
                    $storage::Cpu(_) => panic!("{}", NO_CUDARC),
                }
            }
        }

        impl<T: DeviceCopy> KernelMemory<T> for $view<'_, T> {
            fn kernel_param<'a>(
                &'a self,
                stream: &'a Stream,
            ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
                match &self.view {
                    $storage::Cuda(v) => cuda_param(v, stream),
                    $storage::Cpu(h) => host_param(h, stream),
                }
            }
        }
    };
}

/// A read-only view of part of a [`DeviceBuffer`].
pub struct DeviceSlice<'a, T: DeviceCopy> {
    view: View<'a, T>,
}

view_common!(DeviceSlice, View);

impl<T: DeviceCopy> DeviceSlice<'_, T> {
    /// Copies the view into `dest`; returns once done.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn copy_to(&self, dest: &mut [T]) -> CudaResult<()> {
        match &self.view {
            View::Cuda(v) => copy_to_host(
                v,
                dest,
                "DeviceSlice::copy_to",
                "copying a device slice to a host slice",
            ),
            View::Cpu(h) => {
                same_len("DeviceSlice::copy_to", h.len, dest.len())?;
                dest.copy_from_slice(h.as_slice());
                Ok(())
            }
        }
    }
}

/// A writable view of part of a [`DeviceBuffer`] ([`DeviceBuffer::index_mut`]): a kernel
/// argument for `OutSlice<T>` / `*mut T` parameters, and a copy destination.
pub struct DeviceSliceMut<'a, T: DeviceCopy> {
    view: ViewMut<'a, T>,
}

view_common!(DeviceSliceMut, ViewMut);

impl<T: DeviceCopy> cudarc::driver::DevicePtrMut<T> for DeviceSliceMut<'_, T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'a>) {
        match &mut self.view {
            ViewMut::Cuda(v) => v.device_ptr_mut(stream),
            ViewMut::Cpu(_) => panic!("{}", NO_CUDARC),
        }
    }
}

impl<T: DeviceCopy> KernelMemoryMut<T> for DeviceSliceMut<'_, T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
        match &mut self.view {
            ViewMut::Cuda(v) => cuda_param_mut(v, stream),
            ViewMut::Cpu(h) => host_param(h, stream),
        }
    }
}

impl<T: DeviceCopy> DeviceSliceMut<'_, T> {
    /// Queues on `stream` a copy of `source` into the view.
    ///
    /// # Errors
    /// [`CudaError::LengthMismatch`] if the lengths differ; a driver error.
    pub fn async_copy_from(&mut self, source: &[T], stream: &Stream) -> CudaResult<()> {
        same_len("DeviceSliceMut::async_copy_from", source.len(), self.len())?;
        match &mut self.view {
            ViewMut::Cpu(h) => {
                h.as_mut_slice().copy_from_slice(source);
                Ok(())
            }
            ViewMut::Cuda(v) => stream
                .cuda("")
                .map_err(|_| mismatch("queueing a host-to-device copy", false))?
                .memcpy_htod(elems(source), v)
                .map_err(CudaError::driver("queueing a host-to-device copy")),
        }
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

impl<T: DeviceCopy> KernelMemory<T> for DeviceBox<T> {
    fn kernel_param<'a>(
        &'a self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
        self.buf.kernel_param(stream)
    }
}

impl<T: DeviceCopy> KernelMemoryMut<T> for DeviceBox<T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
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
