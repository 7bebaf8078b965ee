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

//!
//! Split as cust 0.3 splits it: [`pointer`](mod@pointer) ([`DevicePointer`]), [`device`]
//! ([`DeviceBuffer`], [`DeviceSlice`], [`DeviceSliceMut`], [`DeviceBox`]), [`locked`]
//! ([`LockedBuffer`]), [`unified`] ([`UnifiedBuffer`], [`UnifiedBox`], [`MemoryAdvice`]).

use crate::{
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::DeviceRepr;
pub use cudarc::driver::ValidAsZeroBits;
pub use cust_core::DeviceCopy;

/// Implements cudarc's `DeviceSlice` and `DevicePtr` (and, with `mut`, `DevicePtrMut`) of
/// `T` for a wrapper type by forwarding to its field `$field`, which implements them for
/// `Elem<T>` or `T`. This is what lets crates built over cudarc (such as `blastoff`) take our
/// buffers. Usage: `forward_cudarc_memory!([T: DeviceCopy] DeviceBuffer<T> => mut buf);`.
macro_rules! forward_cudarc_memory {
    ([$($generics:tt)*] $ty:ty => $field:ident) => {
        impl<$($generics)*> ::cudarc::driver::DeviceSlice<T> for $ty {
            fn len(&self) -> usize {
                ::cudarc::driver::DeviceSlice::len(&self.$field)
            }
            fn stream(&self) -> &::std::sync::Arc<::cudarc::driver::CudaStream> {
                ::cudarc::driver::DeviceSlice::stream(&self.$field)
            }
        }

        impl<$($generics)*> ::cudarc::driver::DevicePtr<T> for $ty {
            fn device_ptr<'a>(
                &'a self,
                stream: &'a ::cudarc::driver::CudaStream,
            ) -> (
                ::cudarc::driver::sys::CUdeviceptr,
                ::cudarc::driver::SyncOnDrop<'a>,
            ) {
                ::cudarc::driver::DevicePtr::device_ptr(&self.$field, stream)
            }
        }
    };
    ([$($generics:tt)*] $ty:ty => mut $field:ident) => {
        forward_cudarc_memory!([$($generics)*] $ty => $field);

        impl<$($generics)*> ::cudarc::driver::DevicePtrMut<T> for $ty {
            fn device_ptr_mut<'a>(
                &'a mut self,
                stream: &'a ::cudarc::driver::CudaStream,
            ) -> (
                ::cudarc::driver::sys::CUdeviceptr,
                ::cudarc::driver::SyncOnDrop<'a>,
            ) {
                ::cudarc::driver::DevicePtrMut::device_ptr_mut(&mut self.$field, stream)
            }
        }
    };
}

pub mod device;
pub mod locked;
pub mod pointer;
pub mod unified;

pub use crate::util::SliceExt;
pub use device::{DeviceBox, DeviceBuffer, DeviceSlice, DeviceSliceMut};
pub use locked::LockedBuffer;
pub use pointer::DevicePointer;
pub use unified::{MemoryAdvice, UnifiedBox, UnifiedBuffer};

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

pub(crate) fn elems<T>(s: &[T]) -> &[Elem<T>] {
    // SAFETY: `Elem<T>` is `repr(transparent)` over `T`: same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

pub(crate) fn elems_mut<T>(s: &mut [T]) -> &mut [Elem<T>] {
    // SAFETY: as in `elems`; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

pub(crate) fn unelems<T>(s: &[Elem<T>]) -> &[T] {
    // SAFETY: as in `elems`.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), s.len()) }
}

pub(crate) fn unelems_mut<T>(s: &mut [Elem<T>]) -> &mut [T] {
    // SAFETY: as in `elems_mut`.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), s.len()) }
}

pub(crate) fn byte_len<T>(what: &'static str, len: usize) -> CudaResult<usize> {
    len.checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(CudaError::SizeOverflow {
            what,
            len,
            elem_bytes: std::mem::size_of::<T>(),
        })
}

pub(crate) fn same_len(what: &'static str, src: usize, dst: usize) -> CudaResult<()> {
    if src == dst {
        Ok(())
    } else {
        Err(CudaError::LengthMismatch { what, src, dst })
    }
}

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
