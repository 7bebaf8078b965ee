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
//! - Asynchronous copies are safe: on a GPU the buffers are cudarc's, which record an event
//!   per use and make later users (host reads of a [`LockedBuffer`], other streams, `drop`)
//!   wait for it. So a pinned buffer cannot be read or freed while a copy into it is in
//!   flight, which cust leaves to the caller (`unsafe`).
//! - Constructors synchronise before returning, so a new buffer is ready on every stream.
//!
//! Each buffer holds its backend's memory (`crate::backend`): cudarc's on a GPU, registered
//! host memory on the CPU emulator. It keeps the length and element type; the backend works
//! in bytes.
//!
//! Split as cust 0.3 splits it: [`pointer`](mod@pointer) ([`DevicePointer`]), [`device`]
//! ([`DeviceBuffer`], [`DeviceSlice`], [`DeviceSliceMut`], [`DeviceBox`]), [`locked`]
//! ([`LockedBuffer`]), [`unified`] ([`UnifiedBuffer`], [`UnifiedBox`], [`MemoryAdvice`]).

use crate::{
    backend::Bytes,
    error::{CudaError, CudaResult},
    stream::Stream,
};
pub use cust_core::DeviceCopy;

pub mod device;
pub mod locked;
pub mod pointer;
pub mod unified;

pub use crate::util::SliceExt;
pub use device::{DeviceBox, DeviceBuffer, DeviceSlice, DeviceSliceMut};
pub use locked::LockedBuffer;
pub use pointer::DevicePointer;
pub use unified::{MemoryAdvice, UnifiedBox, UnifiedBuffer};

/// Every bit pattern of zeros is a valid value of the type: required of the elements of
/// zeroed, pinned and unified buffers, which are filled with zero bytes and read as `T`.
/// Implemented for the primitive integers and floats, `bool`, `half`'s `f16` and `bf16`,
/// arrays and tuples (up to 8) of such types.
///
/// # Safety
/// Implement it only for a type for which `size_of::<T>()` zero bytes are a valid value:
/// no references, no `NonZero*` or `NonNull` fields, no enum without a variant of
/// discriminant 0. `#[derive(DeviceCopy)]` does not imply it.
pub unsafe trait ValidAsZeroBits {}

macro_rules! zero_bits {
    ($($t:ty),* $(,)?) => {
        // SAFETY: zero bytes are `false`, `0` or `+0.0` of each of these types.
        $(unsafe impl ValidAsZeroBits for $t {})*
    };
}
zero_bits!(
    bool,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    cust_core::half::f16,
    cust_core::half::bf16,
);

// SAFETY: zero bytes of an array are zero bytes of each element.
unsafe impl<T: ValidAsZeroBits, const N: usize> ValidAsZeroBits for [T; N] {}

macro_rules! zero_bits_tuple {
    ($($t:ident),+) => {
        // SAFETY: zero bytes of a tuple are zero bytes of each field (padding is never
        // read as a value).
        unsafe impl<$($t: ValidAsZeroBits),+> ValidAsZeroBits for ($($t,)+) {}
    };
}
zero_bits_tuple!(A);
zero_bits_tuple!(A, B);
zero_bits_tuple!(A, B, C);
zero_bits_tuple!(A, B, C, D);
zero_bits_tuple!(A, B, C, D, E);
zero_bits_tuple!(A, B, C, D, E, F);
zero_bits_tuple!(A, B, C, D, E, F, G);
zero_bits_tuple!(A, B, C, D, E, F, G, H);

/// `s` as the bytes a copy reads.
pub(crate) fn as_bytes<T: DeviceCopy>(s: &[T]) -> &Bytes {
    // SAFETY: `size_of_val(s)` bytes of a live slice, read as `MaybeUninit<u8>` (padding
    // included), for the borrow's lifetime.
    unsafe { std::slice::from_raw_parts(s.as_ptr().cast(), std::mem::size_of_val(s)) }
}

/// `s` as the bytes a copy writes.
///
/// # Safety
/// Only the bytes of valid `T`s (a device copy of `T`s, or another `T` slice's bytes) may be
/// written through it.
pub(crate) unsafe fn as_bytes_mut<T: DeviceCopy>(s: &mut [T]) -> &mut Bytes {
    let len = std::mem::size_of_val(s);
    // SAFETY: `len` bytes of a live slice, borrowed exclusively; the caller writes only the
    // bytes of valid `T`s.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr().cast(), len) }
}

/// The first `len` `T`s of `bytes`.
///
/// # Safety
/// `bytes` is aligned for `T`, holds at least `len` `T`s, and every one of them is
/// initialised (written, or zeros where `T: ValidAsZeroBits`).
pub(crate) unsafe fn from_bytes<T>(bytes: &Bytes, len: usize) -> &[T] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), len) }
}

/// As [`from_bytes`], writable.
///
/// # Safety
/// As [`from_bytes`].
pub(crate) unsafe fn from_bytes_mut<T>(bytes: &mut Bytes, len: usize) -> &mut [T] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract; the borrow is exclusive.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast(), len) }
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
    fn byte_views_keep_contents() {
        let mut v = [1.5f32, -2.0, 3.25];
        let copy = as_bytes(&v).to_vec();
        assert_eq!(copy.len(), 12);
        // SAFETY: the bytes of three valid f32s.
        let w = unsafe { from_bytes::<f32>(as_bytes(&v), 3) };
        assert_eq!(w, &v);
        let mut other = [0.0f32; 3];
        // SAFETY: only the bytes of `v`'s f32s are written.
        unsafe { as_bytes_mut(&mut other) }.copy_from_slice(&copy);
        assert_eq!(other, v);
        v[1] = 7.0;
        // SAFETY: the bytes of three valid f32s, as above.
        let w = unsafe { from_bytes::<f32>(as_bytes(&v), 3) };
        assert_eq!(w, [1.5, 7.0, 3.25]);
    }

    #[test]
    fn sizes_that_overflow_are_errors() {
        assert!(byte_len::<u64>("x", usize::MAX / 4).is_err());
        assert_eq!(byte_len::<u64>("x", 3).unwrap(), 24);
        let err = same_len("copy", 3, 4).unwrap_err();
        assert!(err.to_string().contains("3 elements"), "{err}");
    }
}
