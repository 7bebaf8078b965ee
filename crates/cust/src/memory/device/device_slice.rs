//! [`DeviceSlice`] and [`DeviceSliceMut`]: views of part of a
//! [`DeviceBuffer`](super::DeviceBuffer).

use super::{Guard, KernelMemory, KernelMemoryMut, host_vec};
/// For the docs' links.
#[cfg(doc)]
use crate::error::CudaError;
use crate::{
    backend::{self, Queue},
    error::CudaResult,
    memory::{DeviceCopy, DevicePointer, as_bytes, as_bytes_mut, same_len},
    stream::Stream,
};
use std::{fmt, marker::PhantomData, ops::Range};

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

/// A read-only view of part of a [`DeviceBuffer`](super::DeviceBuffer).
pub struct DeviceSlice<'a, T: DeviceCopy> {
    pub(super) mem: &'a dyn backend::Memory,
    /// The view's bytes in `mem`.
    pub(super) range: Range<usize>,
    pub(super) len: usize,
    pub(super) _elem: PhantomData<fn() -> T>,
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

/// A writable view of part of a [`DeviceBuffer`](super::DeviceBuffer)
/// ([`DeviceBuffer::index_mut`](super::DeviceBuffer::index_mut)): a kernel
/// argument for `OutSlice<T>` / `*mut T` parameters, and a copy destination.
pub struct DeviceSliceMut<'a, T: DeviceCopy> {
    pub(super) mem: &'a mut dyn backend::Memory,
    /// The view's bytes in `mem`.
    pub(super) range: Range<usize>,
    pub(super) len: usize,
    pub(super) _elem: PhantomData<fn() -> T>,
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
