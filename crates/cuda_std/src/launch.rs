//! Typed kernel handles and the parameter types that cross from the host to a kernel.
//!
//! On the host, `#[kernel] fn k(a: &[f32], out: OutSlice<f32>, n: u32)` generates a constant
//! `k: Kernel<(Slice<f32>, Out<f32>, Value<u32>), Safe>`: the kernel's entry name plus, at the
//! type level, what each parameter is. The host crate implements launching for it, accepting
//! only matching host arguments (a device buffer for a slice, a mutable device buffer for an
//! output, a value of the same type for a value), so a wrong argument type or count is a
//! compile error. The handle and the kinds live in `cust_core`; [`OutSlice`] and
//! [`AtomicSlice`] are the device side's own.
//!
//! # Writable parameters and why their safe methods are sound
//! A kernel's threads run concurrently, so a buffer every thread can write is sound to
//! write from safe code only where no two threads can touch the same element with at least
//! one plain (non-atomic) write between them, which would be a data race (undefined
//! behaviour in Rust and in the PTX memory model). Two parameter types keep that rule by
//! construction:
//! - [`OutSlice<T>`]: plain writes, each to an element only the calling thread can name
//!   ([`OutSlice::write_at_thread`], [`OutSlice::write_2d`],
//!   [`OutSlice::write_grid_strided`], [`OutSlice::write_grid_stride_loop`]); any other
//!   index needs the `unsafe` [`OutSlice::write`].
//! - [`AtomicSlice<T>`]: any thread may update any element, because every access to it is
//!   an atomic of device scope ([`AtomicSlice::fetch_add`] and friends): atomics never race
//!   with atomics. It has no plain access at all, which is why it is a kind of its own
//!   rather than atomic methods on `OutSlice` (those would race with another thread's safe
//!   plain `write_at_thread` to the same element).
//!
//! The host launch passes a mutable device buffer (`&mut DeviceBuffer<T>`) for either, so the
//! launch holds the buffer's only borrow: no other parameter aliases it.

use crate::DeviceCopy;
use crate::atomic::{Atomic, AtomicRef, Device};
use core::marker::PhantomData;

/// The kernel handle type, its safety markers and the parameter kinds, defined in
/// `cust_core` (the contract crate the host runtime shares) and re-exported here.
pub use cust_core::launch::{
    AtomicOut, ConstPtr, Kernel, MutPtr, Out, ParamKind, ParamSizes, Safe, Slice, Unsafe, Value,
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

    /// Writes `value` at element `global_linear_id() + k · total_threads` (the `k`-th step of
    /// a grid-stride loop, where `total_threads` is the launch's thread count: grid size ×
    /// block size), if it is in bounds; returns whether it wrote (`false` also when the
    /// index overflows `usize`).
    ///
    /// Safe because the index is unique per `(thread, k)`: with `t = global_linear_id()`
    /// below `total_threads`, `t + k · total_threads` names each element for exactly one
    /// thread, whatever `k` each thread passes.
    ///
    /// ```no_run
    /// # use cuda_std::{OutSlice, kernel};
    /// # #[kernel]
    /// # pub fn fill_ones(out: OutSlice<f32>) {
    /// // n elements with any grid: thread t writes t, t + T, t + 2T, ...
    /// let mut k = 0;
    /// while out.write_grid_strided(k, 1.0) { k += 1; }
    /// # }
    /// # fn main() {}
    /// ```
    #[inline(always)]
    pub fn write_grid_strided(&self, k: usize, value: T) -> bool {
        let Some(i) = grid_strided_index(k) else {
            return false;
        };
        // SAFETY: unique per thread (see above); bounds are checked.
        i < self.len && unsafe { self.write_unchecked_race(i, value) }
    }

    /// A grid-stride loop over the whole buffer: for each element `i` this thread owns
    /// (`i = global_linear_id() + k · total_threads`, `k = 0, 1, ...` while `i < len`), writes
    /// `f(i)` at `i`. Returns the number of elements written.
    ///
    /// Every element is written by exactly one thread of the launch, whatever the grid and
    /// block sizes (as [`write_grid_strided`](Self::write_grid_strided), which it calls).
    ///
    /// ```no_run
    /// # use cuda_std::{OutSlice, kernel};
    /// # #[kernel]
    /// # pub fn double(a: &[f32], out: OutSlice<f32>) {
    /// out.write_grid_stride_loop(|i| a[i] * 2.0);
    /// # }
    /// # fn main() {}
    /// ```
    #[inline(always)]
    pub fn write_grid_stride_loop(&self, mut f: impl FnMut(usize) -> T) -> usize {
        let mut k = 0;
        while let Some(i) = grid_strided_index(k).filter(|&i| i < self.len) {
            // SAFETY: unique per thread (see `write_grid_strided`); `i < len`.
            unsafe { self.write_unchecked_race(i, f(i)) };
            k += 1;
        }
        k
    }

    /// Writes `value` at element `i` (bounds-checked: returns `false` and writes nothing when
    /// `i >= len`).
    ///
    /// On the CPU emulator the store is checked for races with the launch's other
    /// threads: another thread's earlier store, atomic or checked load of the same bytes,
    /// not ordered by a barrier of their block or by release/acquire synchronisation, is an
    /// `EmuError::GlobalRace` naming both sites; a store into memory the kernel also holds
    /// as a `&[T]` is an `EmuError::ReadOnlyWrite`.
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

    /// The raw device pointer to element 0. The CPU emulator's race check does not see a
    /// dereference of it (`*p = v`, `p.write(v)`): only accesses through
    /// [`write`](Self::write), [`crate::mem`] and [`crate::atomic`] are checked.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

/// The number of threads of the launch: grid size × block size (all dimensions).
#[inline(always)]
pub fn total_threads() -> usize {
    use crate::thread::*;
    grid_dim_x() as usize
        * grid_dim_y() as usize
        * grid_dim_z() as usize
        * block_dim_x() as usize
        * block_dim_y() as usize
        * block_dim_z() as usize
}

/// `global_linear_id() + k · total_threads()`, or `None` if it overflows.
#[inline(always)]
fn grid_strided_index(k: usize) -> Option<usize> {
    k.checked_mul(total_threads())?
        .checked_add(global_linear_id())
}

/// A device buffer for a kernel's output that every thread may update at any element,
/// because every access to it is **atomic** (device scope, PTX `.gpu`): histogram bins,
/// counters, maxima, flags.
///
/// Soundness: the elements are only ever accessed through [`crate::atomic`] operations of
/// [`Device`] scope, which include every thread of the launch, and atomics never race with
/// one another; the type has no plain load or store (unlike [`OutSlice`], whose safe plain
/// writes would race with another thread's atomic on the same element), and the host
/// passes a mutable device buffer, so no other parameter of the launch aliases it. Every
/// method is bounds-checked: an index `i >= len()` returns `None` (or `false`) and touches
/// nothing. The ordering argument is `core`'s: `Relaxed` is enough for counting; see
/// [`crate::atomic`] for what the others order.
///
/// On the CPU emulator each operation is the same [`crate::atomic`] call as with a raw
/// pointer, so its checks see it as an atomic on the launch's buffer.
///
/// Layout: `(pointer, length in elements)`, the same as `&[T]`. Kernel parameter kind:
/// [`AtomicOut<T>`]; host argument: `&mut DeviceBuffer<T>` (or another mutable device
/// buffer). `T`: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`.
///
/// ```no_run
/// # use cuda_std::prelude::*;
/// #[kernel]
/// pub fn histogram(data: &[u32], bins: AtomicSlice<u32>) {
///     if let Some(&x) = data.get(index_1d()) {
///         bins.fetch_add(x as usize % bins.len(), 1, Ordering::Relaxed);
///     }
/// }
/// # fn main() {}
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct AtomicSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    // Shared access with interior (atomic) mutability, like `&'a [AtomicU32]`. Methods use
    // `?`, not `Option::map`: a closure would hide the caller's line from the emulator's
    // reports (`#[track_caller]` does not pass through closures).
    _marker: PhantomData<&'a [core::cell::UnsafeCell<T>]>,
}

impl<'a, T: Atomic> AtomicSlice<'a, T> {
    /// Number of elements.
    #[inline(always)]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if the buffer has no elements.
    #[inline(always)]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A device-scope atomic handle on element `i`, or `None` if `i >= len()`.
    #[inline(always)]
    #[must_use]
    pub fn get(&self, i: usize) -> Option<AtomicRef<'_, Device, T>> {
        if i >= self.len {
            return None;
        }
        // SAFETY: `i < len`, so the element lies in the buffer the host passed (aligned to
        // `T`: a device buffer of `T`s); every access to that buffer during the launch goes
        // through this type's atomics of device scope (see the type's docs).
        Some(unsafe { AtomicRef::new(self.ptr.add(i)) })
    }
}

crate::atomic::element_atomics!([] AtomicSlice<'_, T>);

impl<T> AtomicSlice<'_, T> {
    /// The raw device pointer to element 0 (for `unsafe` code: accesses through it must be
    /// atomic too, see [`crate::atomic`]'s safety rules).
    #[inline(always)]
    #[must_use]
    pub fn as_ptr(&self) -> *mut T {
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
