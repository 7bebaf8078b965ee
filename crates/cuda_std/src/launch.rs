//! Typed kernel handles and the parameter types that cross from the host to a kernel.
//!
//! On the host, `#[kernel] fn k(a: &[f32], out: OutSlice<f32>, n: u32)` generates a constant
//! `k: Kernel<(Slice<f32>, Out<f32>, Value<u32>), Safe>`: the kernel's entry name plus, at the
//! type level, what each parameter is. The host crate implements launching for it, accepting
//! only matching host arguments (a device buffer for a slice, a mutable device buffer for an
//! output, a value of the same type for a value), so a wrong argument type or count is a
//! compile error. The handle and the kinds live in `cust_core`; [`OutSlice`] is the
//! device side's own.

use crate::DeviceCopy;
use core::marker::PhantomData;

/// The kernel handle type, its safety markers and the parameter kinds, defined in
/// `cust_core` (the contract crate the host runtime shares) and re-exported here.
pub use cust_core::launch::{
    ConstPtr, Kernel, MutPtr, Out, ParamKind, ParamSizes, Safe, Slice, Unsafe, Value,
};

#[doc(hidden)]
pub use cust_core::launch::__assert_device_copy;

/// A writable device buffer for a kernel's output, shared by all threads of the launch.
///
/// `&mut [T]` cannot be a kernel parameter: every thread would hold an aliasing mutable
/// reference. The safe methods of `OutSlice` write only to an element that belongs to the
/// calling thread alone — a distinct index for every thread of the grid — so threads cannot
/// race; [`OutSlice::write`] is the `unsafe` escape hatch for other patterns.
///
/// Layout: `(pointer, length in elements)`, the same as `&[T]`.
#[repr(C)]
#[derive(Debug)]
pub struct OutSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _marker: PhantomData<&'a mut [T]>,
}

impl<T: DeviceCopy> OutSlice<'_, T> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if the buffer has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes `value` at this thread's unique linear index in the whole grid,
    /// [`global_linear_id`], if it is in bounds; returns whether it wrote.
    ///
    /// For a 1D launch the index equals [`crate::thread::index_1d`].
    #[inline(always)]
    pub fn write_at_thread(&self, value: T) -> bool {
        let i = global_linear_id();
        // SAFETY: `i` is unique to this thread within the launch, so no other thread writes
        // (or, through this OutSlice, reads) element `i`; bounds are checked.
        i < self.len && unsafe { self.write_unchecked_race(i, value) }
    }

    /// For a 2D launch over an image `width` elements wide (row-major): writes `value` at
    /// `y · width + x`, where `(x, y)` = [`crate::thread::index_2d`], if `x < width`, the
    /// element is in bounds, and the thread's z indices are 0; returns whether it wrote.
    ///
    /// Threads with distinct `(x, y)` and `x < width` get distinct elements, which is what
    /// makes this safe.
    #[inline(always)]
    pub fn write_2d(&self, width: u32, value: T) -> bool {
        let (x, y) = crate::thread::index_2d();
        if x >= width || crate::thread::thread_idx_z() != 0 || crate::thread::block_idx_z() != 0 {
            return false;
        }
        let i = y as usize * width as usize + x as usize;
        // SAFETY: unique per thread (see above); bounds are checked.
        i < self.len && unsafe { self.write_unchecked_race(i, value) }
    }

    /// Writes `value` at element `i` (bounds-checked: returns `false` and writes nothing when
    /// `i >= len`).
    ///
    /// On the CPU emulator the store is checked for races with the launch's other
    /// threads: another thread's earlier store or atomic on the same bytes, not ordered by a
    /// barrier of their block (threads of different blocks are never ordered), is an
    /// `EmuError::GlobalRace` naming both sites.
    ///
    /// # Safety
    /// No other thread of the launch may read or write element `i` through this buffer
    /// during the launch (unless all such accesses are ordered by barriers or atomics).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn write(&self, i: usize, value: T) -> bool {
        if i >= self.len {
            return false;
        }
        crate::arch::mem::note_store(
            // SAFETY: in bounds (checked above).
            unsafe { self.ptr.add(i) }.cast::<u8>(),
            core::mem::size_of::<T>(),
        );
        // SAFETY: in bounds of the buffer the host passed; exclusivity is the caller's.
        unsafe { self.ptr.add(i).write(value) };
        true
    }

    /// [`OutSlice::write`] without the emulator's race check, for the safe methods, whose
    /// indices are unique per thread by construction.
    ///
    /// # Safety
    /// `i < len`, and as for [`OutSlice::write`].
    #[inline(always)]
    unsafe fn write_unchecked_race(&self, i: usize, value: T) -> bool {
        // SAFETY: forwarded to the caller.
        unsafe { self.ptr.add(i).write(value) };
        true
    }

    /// The raw device pointer to element 0.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

/// This thread's index among all threads of the launch, unique per thread:
/// `block_linear · threads_per_block + thread_linear`, where blocks and threads are numbered
/// x fastest, then y, then z. Equals [`crate::thread::index_1d`] for 1D launches.
#[inline(always)]
pub fn global_linear_id() -> usize {
    use crate::thread::*;
    let block = (block_idx_z() as usize * grid_dim_y() as usize + block_idx_y() as usize)
        * grid_dim_x() as usize
        + block_idx_x() as usize;
    let per_block = block_dim_x() as usize * block_dim_y() as usize * block_dim_z() as usize;
    let thread = (thread_idx_z() as usize * block_dim_y() as usize + thread_idx_y() as usize)
        * block_dim_x() as usize
        + thread_idx_x() as usize;
    block * per_block + thread
}
