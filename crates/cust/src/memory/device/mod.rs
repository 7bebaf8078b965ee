//! Device memory: [`DeviceBuffer`], its views [`DeviceSlice`] and [`DeviceSliceMut`],
//! [`DeviceBox`], and [`SliceExt::as_dbuf`](super::SliceExt::as_dbuf).
//!
//! One file per type, as cust 0.3 splits `memory/device/`: `device_buffer`, `device_slice`,
//! `device_box`; this module holds what they share (ranges, the host copy, the kernel
//! parameter traits).

use super::DeviceCopy;
use crate::{
    backend::{self, Queue},
    error::{CudaError, CudaResult},
    stream::Stream,
};
use std::{
    mem::size_of,
    ops::{Range, RangeBounds},
};

mod device_box;
mod device_buffer;
mod device_slice;

pub use device_box::DeviceBox;
pub use device_buffer::DeviceBuffer;
pub use device_slice::{DeviceSlice, DeviceSliceMut};

/// What a kernel parameter holds until its launch is queued (see [`KernelMemory`]).
#[doc(hidden)]
pub use crate::backend::Guard;

/// The byte range of elements `start..end` of `T`s.
pub(super) fn byte_range<T>(start: usize, end: usize) -> Range<usize> {
    start * size_of::<T>()..end * size_of::<T>()
}

/// `len` `T`s of `mem`'s `range`, copied to a new `Vec`; `what` names the copy in an error.
pub(super) fn host_vec<T: DeviceCopy>(
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
