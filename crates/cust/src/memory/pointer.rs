//! [`DevicePointer`]: a raw device address, as cust-style launches take it.

use super::DeviceCopy;
use std::{fmt, marker::PhantomData};

/// A device address of a `T`, as cust's `launch!` takes for a `*mut T` / `*const T` kernel
/// parameter (`buf.as_device_ptr()`). Carries no lifetime: keep the buffer alive until the
/// kernel has finished. The address is a `CUdeviceptr` (a 64-bit integer; a host address
/// on the CPU emulator).
#[repr(transparent)]
pub struct DevicePointer<T> {
    addr: u64,
    _marker: PhantomData<*mut T>,
}

impl<T> DevicePointer<T> {
    /// The address as an integer.
    pub fn as_raw(&self) -> u64 {
        self.addr
    }
    /// Wraps a raw device address.
    pub fn from_raw(addr: u64) -> Self {
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
// SAFETY: a device address, not a host pointer; any bit pattern is a value.
unsafe impl<T> DeviceCopy for DevicePointer<T> {}
// SAFETY: only the address is shared; dereferencing needs the GPU and `unsafe`.
unsafe impl<T> Send for DevicePointer<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for DevicePointer<T> {}
