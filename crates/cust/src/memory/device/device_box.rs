//! [`DeviceBox`]: one `T` in device memory.

use super::{DeviceBuffer, Guard, KernelMemory, KernelMemoryMut};
use crate::{
    error::CudaResult,
    memory::{CopyDestination, DeviceCopy, DevicePointer, ValidAsZeroBits},
    stream::Stream,
};
use std::fmt;

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
