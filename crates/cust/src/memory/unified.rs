//! Managed ("unified") memory: [`UnifiedBuffer`], [`UnifiedBox`], [`MemoryAdvice`].

use super::{DeviceCopy, Elem, ValidAsZeroBits, byte_len, unelems, unelems_mut};
use crate::{
    context::CurrentContext,
    cpu::CpuMem,
    error::{CudaError, CudaResult},
};
use cudarc::driver::{SyncOnDrop, UnifiedSlice, sys};
use std::fmt;

/// Managed ("unified") memory: one address valid on the host and the GPU; the driver
/// migrates pages on demand. The host may read it ([`UnifiedBuffer::as_slice`]) once the GPU
/// work that used it has finished, which the accessors wait for.
///
/// On the CPU emulator it is one host allocation that emulated kernels and the host share;
/// the migration hints and prefetches do nothing there.
pub struct UnifiedBuffer<T: DeviceCopy + ValidAsZeroBits> {
    buf: Managed<T>,
}

/// Where a [`UnifiedBuffer`] lives.
enum Managed<T> {
    Cuda(UnifiedSlice<Elem<T>>),
    /// An emulator allocation of `len` `T`s, registered with its device (so emulated
    /// launches may use it).
    Cpu {
        mem: CpuMem,
        len: usize,
    },
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
        if let Some(device) = ctx.cpu() {
            let mem = CpuMem::zeroed(device, "UnifiedBuffer", bytes)?;
            return Ok(Self {
                buf: Managed::Cpu { mem, len },
            });
        }
        ctx.check_free("UnifiedBuffer", bytes)?;
        // SAFETY: uninitialised memory; both callers initialise every element first.
        let buf = unsafe {
            ctx.cuda("unified memory")?
                .alloc_unified::<Elem<T>>(len, true)
        }
        .map_err(CudaError::driver("allocating managed memory"))?;
        Ok(Self {
            buf: Managed::Cuda(buf),
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.buf {
            Managed::Cuda(b) => b.len(),
            Managed::Cpu { len, .. } => *len,
        }
    }

    /// `true` if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `true` for a buffer of the CPU emulator.
    pub fn is_emulator(&self) -> bool {
        matches!(self.buf, Managed::Cpu { .. })
    }

    /// The cudarc slice of a GPU buffer; for cudarc's traits, which cannot fail.
    fn cuda(&self) -> &UnifiedSlice<Elem<T>> {
        match &self.buf {
            Managed::Cuda(b) => b,
            Managed::Cpu { .. } => panic!("{}", super::device::NO_CUDARC),
        }
    }

    /// The contents, read in place on the host; waits for GPU work that used the buffer.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_slice(&self) -> CudaResult<&[T]> {
        match &self.buf {
            Managed::Cuda(b) => b
                .as_slice()
                .map(unelems)
                .map_err(CudaError::driver("reading managed memory on the host")),
            Managed::Cpu { mem, len } => {
                // SAFETY: `len` initialised `T`s (zeroed, valid as zero bits, or written
                // since) of a live allocation that `&self` borrows; emulated launches that
                // wrote it have returned.
                let s = unsafe { std::slice::from_raw_parts(mem.as_ptr().cast(), *len) };
                Ok(s)
            }
        }
    }

    /// The contents, writable in place on the host; waits for GPU work that used the buffer.
    ///
    /// # Errors
    /// A driver error.
    pub fn as_mut_slice(&mut self) -> CudaResult<&mut [T]> {
        match &mut self.buf {
            Managed::Cuda(b) => b
                .as_mut_slice()
                .map(unelems_mut)
                .map_err(CudaError::driver("writing managed memory on the host")),
            Managed::Cpu { mem, len } => {
                // SAFETY: as in `as_slice`, borrowed exclusively through `&mut self`.
                let s = unsafe { std::slice::from_raw_parts_mut(mem.as_ptr().cast(), *len) };
                Ok(s)
            }
        }
    }

    /// Starts migrating the pages to the device (`cuMemPrefetchAsync`), so that the next
    /// kernel does not fault them in one by one.
    ///
    /// # Errors
    /// A driver error, e.g. `CUDA_ERROR_NOT_PERMITTED` on a device without concurrent managed
    /// access.
    pub fn prefetch_to_device(&self) -> CudaResult<()> {
        let Managed::Cuda(buf) = &self.buf else {
            return Ok(());
        };
        buf.prefetch().map_err(CudaError::driver(
            "prefetching managed memory to the device",
        ))
    }

    /// Starts migrating the pages back to host memory on `stream` (`cuMemPrefetchAsync` to
    /// the CPU), so that host reads after the GPU work do not fault them in one by one.
    ///
    /// # Errors
    /// A driver error; [`CudaError::BackendMismatch`] for a GPU buffer and an emulator
    /// stream or the reverse.
    pub fn prefetch_to_host(&self, stream: &crate::stream::Stream) -> CudaResult<()> {
        let buf = match (&self.buf, stream.is_emulator()) {
            (Managed::Cpu { .. }, true) => return Ok(()),
            (Managed::Cuda(b), false) => b,
            (b, _) => {
                return Err(super::device::mismatch(
                    "prefetching managed memory",
                    matches!(b, Managed::Cpu { .. }),
                ));
            }
        };
        let cuda = stream.cuda("prefetching managed memory")?;
        let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(buf, cuda);
        let host = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        // SAFETY: the whole managed allocation of this buffer, queued on `stream`.
        unsafe {
            cudarc::driver::result::mem_prefetch_async(
                ptr,
                buf.num_bytes(),
                host,
                stream.as_inner(),
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
        let Managed::Cuda(buf) = &self.buf else {
            return Ok(());
        };
        let ordinal = cudarc::driver::DeviceSlice::stream(buf).context().ordinal() as i32;
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
        let stream = cudarc::driver::DeviceSlice::stream(buf).clone();
        let (ptr, _record) = cudarc::driver::DevicePtr::device_ptr(buf, &stream);
        // SAFETY: the whole managed allocation of this buffer.
        unsafe { cudarc::driver::result::mem_advise(ptr, buf.num_bytes(), what, location) }.map_err(
            CudaError::driver(format!("advising managed memory ({advice:?})")),
        )
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

// cudarc's traits, for crates built over cudarc (GPU buffers only: they panic for an
// emulator buffer, as `DeviceBuffer`'s do).
impl<T: DeviceCopy + ValidAsZeroBits> cudarc::driver::DeviceSlice<T> for UnifiedBuffer<T> {
    fn len(&self) -> usize {
        UnifiedBuffer::len(self)
    }
    fn stream(&self) -> &std::sync::Arc<cudarc::driver::CudaStream> {
        cudarc::driver::DeviceSlice::stream(self.cuda())
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> cudarc::driver::DevicePtr<T> for UnifiedBuffer<T> {
    fn device_ptr<'a>(
        &'a self,
        stream: &'a cudarc::driver::CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        cudarc::driver::DevicePtr::device_ptr(self.cuda(), stream)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> cudarc::driver::DevicePtrMut<T> for UnifiedBuffer<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a cudarc::driver::CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        match &mut self.buf {
            Managed::Cuda(b) => cudarc::driver::DevicePtrMut::device_ptr_mut(b, stream),
            Managed::Cpu { .. } => panic!("{}", super::device::NO_CUDARC),
        }
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> UnifiedBuffer<T> {
    /// The emulator allocation as a kernel parameter on `stream`: `(address, length)`.
    fn host_param(&self, stream: &crate::stream::Stream) -> Option<CudaResult<(u64, usize)>> {
        let Managed::Cpu { mem, len } = &self.buf else {
            return None;
        };
        Some(if stream.is_emulator() {
            Ok((mem.as_ptr() as u64, *len))
        } else {
            Err(super::device::mismatch("launching a kernel", true))
        })
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> super::device::KernelMemory<T> for UnifiedBuffer<T> {
    fn kernel_param<'a>(
        &'a self,
        stream: &'a crate::stream::Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
        match self.host_param(stream) {
            Some(p) => p.map(|(a, n)| (a, n, None)),
            None => super::device::cuda_param(self, stream),
        }
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> super::device::KernelMemoryMut<T> for UnifiedBuffer<T> {
    fn kernel_param_mut<'a>(
        &'a mut self,
        stream: &'a crate::stream::Stream,
    ) -> CudaResult<(u64, usize, Option<SyncOnDrop<'a>>)> {
        match self.host_param(stream) {
            Some(p) => p.map(|(a, n)| (a, n, None)),
            None => super::device::cuda_param_mut(self, stream),
        }
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
