//! Extension traits of cust 0.3's `util`: [`SliceExt`] (`as_dbuf`, `as_unified_buf`) and
//! [`DeviceCopyExt`] (`as_dbox`), re-exported by the [prelude](crate::prelude).
//!
//! cust 0.3's array, texture and surface constructors (`as_1d_array`, `as_2d_texture`, ...)
//! are not provided: this runtime has no CUDA arrays.

use crate::{
    error::CudaResult,
    memory::{DeviceBox, DeviceBuffer, DeviceCopy, UnifiedBuffer, ValidAsZeroBits},
};

/// Copies of a host slice in device or managed memory.
pub trait SliceExt<T: DeviceCopy> {
    /// A new [`DeviceBuffer`] holding a copy of `self`, on the current context.
    ///
    /// # Errors
    /// As [`DeviceBuffer::from_slice`].
    fn as_dbuf(&self) -> CudaResult<DeviceBuffer<T>>;

    /// A new [`UnifiedBuffer`] (managed memory) holding a copy of `self`, on the current
    /// context.
    ///
    /// # Errors
    /// As [`UnifiedBuffer::from_slice`].
    fn as_unified_buf(&self) -> CudaResult<UnifiedBuffer<T>>
    where
        T: ValidAsZeroBits;
}

impl<T: DeviceCopy> SliceExt<T> for [T] {
    fn as_dbuf(&self) -> CudaResult<DeviceBuffer<T>> {
        DeviceBuffer::from_slice(self)
    }

    fn as_unified_buf(&self) -> CudaResult<UnifiedBuffer<T>>
    where
        T: ValidAsZeroBits,
    {
        UnifiedBuffer::from_slice(self)
    }
}

/// A device copy of one value.
pub trait DeviceCopyExt: DeviceCopy {
    /// A new [`DeviceBox`] holding a copy of `self`, on the current context.
    ///
    /// # Errors
    /// As [`DeviceBox::new`].
    fn as_dbox(&self) -> CudaResult<DeviceBox<Self>> {
        DeviceBox::new(self)
    }
}

impl<T: DeviceCopy> DeviceCopyExt for T {}
