//! The types a shared array indexes through: [`SharedArray`] (`[T; N]`), [`SharedRows`]
//! (an array of arrays; `[[T; C]; R]` is a [`SharedTile`]) and [`SharedSlice`] (dynamic
//! shared memory). Each has the layout of the array it views (`#[repr(transparent)]`); an
//! element access asks the backend to record it (`arch::shared::indexed_read` /
//! `indexed_write`: nothing on the GPU, a checked access on the CPU emulator).

use crate::atomic::{Atomic, AtomicRef, Block, Ordering};
use core::cell::UnsafeCell;
use core::fmt;
use core::ops::{Index, IndexMut};

/// A shared array of `N` elements of `T`: what `shared_array!([T; N])` and
/// `#[address_space(shared)] static mut A: [T; N]` give (as `&mut SharedArray<T, N>`).
///
/// It has the layout of `[T; N]` and lives where the array does: a kernel holds a `&mut`
/// to it, never a value. Indices are `usize` and panic past the end, as an array's do.
/// Indexing an element is a plain load or store on the GPU (the same code as indexing the
/// array itself: a bounds check, then a load or store at the array's `cvta.shared`
/// address); on the CPU emulator it is also a checked access, reported at the indexing
/// expression's line:
/// - `Index` (`let x = a[i]`, `a[i].method()` taking `&self`) is a read: bounds, races and
///   reads of elements never written are checked;
/// - `IndexMut` (`a[i] = x`, `a[i] += x`, `a[i].write(x)` on a `MaybeUninit`) is a write:
///   bounds and races are checked and the element counts as written. `IndexMut` cannot
///   tell `=` from `+=`, so a `+=` is recorded as a write only: it races with any access of
///   another thread in the same barrier interval (reported), but a `+=` on an element that
///   nobody wrote is not reported as an uninitialised read.
///
/// One access is checked per indexing expression: a reference kept from it (`let r = &mut
/// a[i];`, then `*r` several times) is seen once, at the expression. The element is the
/// unit: a field of a struct element counts as the whole element.
///
/// Not seen by the emulator: accesses through a raw pointer ([`as_ptr`](Self::as_ptr),
/// [`as_mut_ptr`](Self::as_mut_ptr), `addr_of_mut!`), unless they go through
/// [`shared::read`](super::read) / [`shared::write`](super::write).
#[repr(transparent)]
pub struct SharedArray<T, const N: usize>([T; N]);

/// A shared array of `N` rows, each a shared array view `R` ([`SharedArray`], or
/// `SharedRows` again for three dimensions): what `shared_array!([[T; C]; R])` and
/// `#[address_space(shared)] static mut A: [[T; C]; R]` give.
///
/// `a[r]` is row `r` (no memory access: an address), so `a[r][c]` reads and `a[r][c] = v`
/// writes one element, each checked as [`SharedArray`]'s are. Layout: row-major, as Rust
/// lays out `[[T; C]; R]`.
#[repr(transparent)]
pub struct SharedRows<R, const N: usize>([R; N]);

/// A `ROWS × COLS` shared tile of `T`, row-major: `[[T; COLS]; ROWS]` as
/// `shared_array!` gives it; `tile[row][col]`.
pub type SharedTile<T, const ROWS: usize, const COLS: usize> =
    SharedRows<SharedArray<T, COLS>, ROWS>;

/// A run of shared memory viewed as elements of `T`, with its length known at run time:
/// what [`dynamic_shared_slice`](super::dynamic_shared_slice) gives. Indexed as
/// [`SharedArray`] is.
#[repr(transparent)]
pub struct SharedSlice<T>([T]);

/// A shared array of `N` elements of `T` every access of which is **atomic** (block scope,
/// PTX `.cta`): what `shared_array!(atomic [T; N])` gives, safely, as a shared reference.
/// Any thread of the block may update any element at any time: shared-memory histogram
/// bins, counters, flags.
///
/// Soundness: the elements are reached only through [`crate::atomic`] operations of
/// [`Block`] scope, which includes every thread that can see the array (shared memory is
/// per block), and atomics never race with one another; the type has no plain access (a
/// plain `+=` on one element by two threads would be a data race, which is why the
/// `[T; N]` form of `shared_array!` needs `unsafe`). Indices are bounds-checked: `i >= N`
/// returns `None` (or `false`) and touches nothing. Each access is an `atom`/`ld`/`st`
/// instruction whose result is a defined value whatever the memory held, so reading an
/// element before any thread wrote it gives an unspecified number (the GPU's shared memory
/// starts with stale contents; the CPU emulator's with zeros), never undefined behaviour:
/// initialise it ([`fill_block`](Self::fill_block), then
/// [`sync_threads`](crate::thread::sync_threads)) before counting.
///
/// `T`: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`. Layout: `[T; N]`.
///
/// ```no_run
/// # use cuda_std::prelude::*;
/// # #[kernel]
/// # pub fn byte_histogram(data: &[u8]) {
/// # let byte = data[index_1d()];
/// let bins = shared_array!(atomic [u32; 256]);
/// bins.fill_block(0, Ordering::Relaxed);
/// sync_threads();
/// bins.fetch_add(byte as usize, 1, Ordering::Relaxed);
/// sync_threads();
/// # }
/// # fn main() {}
/// ```
#[repr(transparent)]
pub struct SharedAtomicArray<T, const N: usize>([UnsafeCell<T>; N]);

impl<T: Atomic, const N: usize> SharedAtomicArray<T, N> {
    /// `N`, the number of elements.
    #[must_use]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N` is 0.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// A block-scope atomic handle on element `i`, or `None` if `i >= N`.
    #[inline(always)]
    #[must_use]
    pub fn get(&self, i: usize) -> Option<AtomicRef<'_, Block, T>> {
        let cell = self.0.get(i)?;
        // SAFETY: the element is an aligned `T` in this block's shared memory, and every
        // access to it is a block-scope atomic (the type's soundness argument).
        Some(unsafe { AtomicRef::new(cell.get()) })
    }

    /// This thread's share of an initialisation: stores `val` (atomically) at elements
    /// `thread_idx_linear() + k · threads_per_block`, `k = 0, 1, ...` (a block-stride loop),
    /// so that when every thread of the block has called it, every element holds `val`.
    /// Follow it with [`sync_threads`](crate::thread::sync_threads) in every thread before
    /// the elements are used.
    #[inline(always)]
    #[track_caller]
    pub fn fill_block(&self, val: T, order: Ordering) {
        use crate::thread::{block_dim_x, block_dim_y, block_dim_z, thread_idx_linear};
        let step = block_dim_x() as usize * block_dim_y() as usize * block_dim_z() as usize;
        let mut i = thread_idx_linear() as usize;
        while i < N {
            // The loop bound keeps `i < N`.
            self.store(i, val, order);
            i += step;
        }
    }

    /// The first element's address (for `unsafe` code: accesses through it must be atomic
    /// too, see [`crate::atomic`]'s safety rules).
    #[must_use]
    pub const fn as_ptr(&self) -> *mut T {
        UnsafeCell::raw_get(self.0.as_ptr())
    }
}

crate::atomic::element_atomics!([, const N: usize] SharedAtomicArray<T, N>);

impl<T, const N: usize> fmt::Debug for SharedAtomicArray<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedAtomicArray")
            .field("len", &N)
            .finish_non_exhaustive()
    }
}

impl<T, const N: usize> SharedArray<T, N> {
    /// `N`, the number of elements.
    #[must_use]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N` is 0.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The first element's address (a generic pointer into shared memory). Accesses through
    /// it are not seen by the emulator's checks unless made with [`read`](super::read) /
    /// [`write`](super::write).
    #[must_use]
    pub const fn as_ptr(&self) -> *const T {
        self.0.as_ptr()
    }

    /// The first element's address, writable; unchecked as [`as_ptr`](Self::as_ptr).
    #[must_use]
    pub const fn as_mut_ptr(&mut self) -> *mut T {
        self.0.as_mut_ptr()
    }
}

impl<R, const N: usize> SharedRows<R, N> {
    /// `N`, the number of rows.
    #[must_use]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N` is 0.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The first row's address; accesses through it are unchecked (see
    /// [`SharedArray::as_ptr`]).
    #[must_use]
    pub const fn as_ptr(&self) -> *const R {
        self.0.as_ptr()
    }

    /// The first row's address, writable; unchecked.
    #[must_use]
    pub const fn as_mut_ptr(&mut self) -> *mut R {
        self.0.as_mut_ptr()
    }
}

impl<T> SharedSlice<T> {
    /// The number of elements.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds no element.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first element's address; accesses through it are unchecked (see
    /// [`SharedArray::as_ptr`]).
    #[must_use]
    pub const fn as_ptr(&self) -> *const T {
        self.0.as_ptr()
    }

    /// The first element's address, writable; unchecked.
    #[must_use]
    pub const fn as_mut_ptr(&mut self) -> *mut T {
        self.0.as_mut_ptr()
    }

    /// The slice of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned, points into this block's shared memory, and `len` elements of `T`
    /// from it lie inside the same allocation; the caller follows
    /// [`shared_array!`](crate::shared_array)'s rules for the `&mut` every thread holds.
    #[inline(always)]
    pub(crate) unsafe fn from_raw_parts<'a>(ptr: *mut T, len: usize) -> &'a mut Self {
        let slice = core::ptr::slice_from_raw_parts_mut(ptr, len) as *mut Self;
        // SAFETY: `Self` is `repr(transparent)` over `[T]`, so the cast keeps the pointer's
        // metadata and layout; validity is the caller's contract.
        unsafe { &mut *slice }
    }
}

impl<T, const N: usize> Index<usize> for SharedArray<T, N> {
    type Output = T;

    /// Element `i`, recorded as a read by the CPU emulator.
    #[inline(always)]
    #[track_caller]
    fn index(&self, i: usize) -> &T {
        read_at(&self.0[i])
    }
}

impl<T, const N: usize> IndexMut<usize> for SharedArray<T, N> {
    /// Element `i`, recorded as a write by the CPU emulator.
    #[inline(always)]
    #[track_caller]
    fn index_mut(&mut self, i: usize) -> &mut T {
        write_at(&mut self.0[i])
    }
}

impl<R, const N: usize> Index<usize> for SharedRows<R, N> {
    type Output = R;

    /// Row `i` (an address; its elements are checked when indexed).
    #[inline(always)]
    #[track_caller]
    fn index(&self, i: usize) -> &R {
        &self.0[i]
    }
}

impl<R, const N: usize> IndexMut<usize> for SharedRows<R, N> {
    /// Row `i`, writable (an address; its elements are checked when indexed).
    #[inline(always)]
    #[track_caller]
    fn index_mut(&mut self, i: usize) -> &mut R {
        &mut self.0[i]
    }
}

impl<T> Index<usize> for SharedSlice<T> {
    type Output = T;

    /// Element `i`, recorded as a read by the CPU emulator.
    #[inline(always)]
    #[track_caller]
    fn index(&self, i: usize) -> &T {
        read_at(&self.0[i])
    }
}

impl<T> IndexMut<usize> for SharedSlice<T> {
    /// Element `i`, recorded as a write by the CPU emulator.
    #[inline(always)]
    #[track_caller]
    fn index_mut(&mut self, i: usize) -> &mut T {
        write_at(&mut self.0[i])
    }
}

/// `e`, after telling the backend it is read (the emulator checks the access).
#[inline(always)]
#[track_caller]
fn read_at<T>(e: &T) -> &T {
    crate::arch::shared::indexed_read(core::ptr::from_ref(e).cast(), size_of::<T>());
    e
}

/// `e`, after telling the backend it is written (the emulator checks the access).
#[inline(always)]
#[track_caller]
fn write_at<T>(e: &mut T) -> &mut T {
    crate::arch::shared::indexed_write(core::ptr::from_mut(e).cast(), size_of::<T>());
    e
}

// `Debug` names the view and its length; it reads no element (an unchecked read would be
// invisible to the emulator, and shared memory may be uninitialised).
impl<T, const N: usize> fmt::Debug for SharedArray<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedArray")
            .field("len", &N)
            .finish_non_exhaustive()
    }
}

impl<R, const N: usize> fmt::Debug for SharedRows<R, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedRows")
            .field("len", &N)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for SharedSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedSlice")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}
