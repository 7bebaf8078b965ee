//! Shared memory: per-block on-chip memory, shared by the threads of a block and alive for
//! the block's lifetime.
//!
//! - Static arrays, sized at compile time: [`shared_array!`](crate::shared_array), one PTX
//!   `.shared` variable per call site; or, as Rust-CUDA writes them, a
//!   [`#[address_space(shared)]`](crate::address_space) `static mut` in a function body.
//! - Dynamic shared memory, sized per launch (the launch configuration's
//!   `shared_mem_bytes`): [`dynamic_shared`].
//!
//! All of them give a *generic* address (PTX `cvta.shared.u64`), usable with ordinary loads
//! and stores. Shared memory is uninitialised at block start. Accesses from different threads
//! race unless separated by a barrier ([`crate::thread::sync_threads`], or
//! [`crate::warp::sync_warp`] within a warp) or done with [`crate::atomic`] operations at
//! [`Block`](crate::atomic::Block) scope or wider.
//! [`window`] holds loads and stores by 32-bit shared address (`ld.shared` / `st.shared`).
//!
//! Indexing: the array form of `shared_array!` (`[T; N]`, and arrays of arrays),
//! `#[address_space(shared)]` and [`dynamic_shared_slice`] give a `&mut` view
//! ([`SharedArray`], [`SharedTile`] / [`SharedRows`], [`SharedSlice`]) that indexes as an
//! array does: `tile[r][c] = v`, `let x = tile[r][c]`, `counts[d] += 1`. On the GPU an
//! indexed element is the array's own bounds check and load or store.
//!
//! On the CPU emulator (`cuda_emu`) the race, initialisation and bounds checks see each
//! indexed element of these views (`Index` a read, `IndexMut` a write: see [`SharedArray`]),
//! [`read`](fn@read) and [`write`](fn@write), `mem`'s vector accesses and `cp.async`. They
//! do **not** see a raw-pointer dereference: the pointer form `shared_array!(T, n)`,
//! [`dynamic_shared`], and `as_ptr` / `as_mut_ptr` of a view give pointers whose plain
//! loads and stores (`*p.add(i) += 1`) work but are not checked.
//!
//! Rust `core` has no address-space statics, so the declarations are PTX text emitted with
//! `global_asm!` (PTX ISA §5.1.5 "Shared State Space", §11.4 "Variable declarations").
//! Capacity: 48 KiB of static shared memory per block on every architecture; more (up to
//! 227 KiB on sm_90) only as dynamic shared memory after opting in with
//! `cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)` (CUDA C Programming Guide, "Technical
//! Specifications per Compute Capability").

mod array;
pub mod window;

pub use array::{SharedArray, SharedAtomicArray, SharedRows, SharedSlice, SharedTile};

/// Declares a static shared-memory array, unique to this call site (the same address in
/// every thread of a block; each block has its own copy).
///
/// Three forms:
/// - `shared_array!(atomic [ty; len])` evaluates to a `&` [`SharedAtomicArray<ty, len>`],
///   **safely**: every access to it is a block-scope atomic (`bins.fetch_add(d, 1,
///   Ordering::Relaxed)`), so threads cannot race on it; `ty` is one of `i32`, `u32`,
///   `i64`, `u64`, `f32`, `f64`. See [`SharedAtomicArray`] for why this is sound and how
///   to initialise it.
/// - `shared_array!([ty; len])` evaluates to a `&mut` [`SharedArray<ty, len>`], which
///   indexes like an array (`sums[i] = x`, `let y = sums[i]`, `sums[i] += x`); an array of
///   arrays `shared_array!([[ty; cols]; rows])` to a `&mut` [`SharedTile<ty, rows, cols>`]
///   (`tile[r][c]`), and three levels to [`SharedRows`] of tiles. It must be used inside
///   `unsafe` (see the safety rules below). Each indexed element is a plain shared load or
///   store on the GPU and an access the CPU emulator checks (races, reads of unwritten
///   elements, bounds), reported at the indexing line: see [`SharedArray`] for what
///   counts as a read and a write.
/// - `shared_array!(ty, len)` evaluates to a `*mut ty` to the first of `len` elements (safe:
///   a raw pointer; every access is the caller's `unsafe`). Dereferencing the pointer
///   (`*p.add(i)`, `p.read()`) is **not seen** by the emulator's race and initialisation
///   checks: use [`read`](fn@read) / [`write`](fn@write), or the `[ty; len]` form, where
///   the checks should see the accesses.
///
/// Both take an optional `align = A` (bytes, a power of two; at least the type's alignment).
///
/// ```no_run
/// # use cuda_std::prelude::*;
/// # use cuda_std::shared::SharedArray;
/// # #[kernel]
/// # pub fn tiles() {
/// # let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
/// const TILE: usize = 16;                                   // may be local to the function
/// let raw: *mut f32 = shared_array!(f32, TILE * TILE);      // align_of::<f32>(); unchecked
/// let buf: *mut f32 = shared_array!(f32, 1024, align = 16); // for 16-byte vector access
/// // SAFETY: see "Safety" below.
/// let sums: &mut SharedArray<u32, TILE> = unsafe { shared_array!([u32; TILE]) };
/// sums[thread_idx_x() as usize] = 0;
/// // SAFETY: as above.
/// let tile = unsafe { shared_array!([[f32; TILE + 1]; TILE]) }; // &mut SharedTile<f32, 16, 17>
/// tile[ty][tx] = 1.0;
/// # let _ = (raw, buf);
/// # }
/// # fn main() {}
/// ```
///
/// Expands to a `global_asm!(".shared .align A .b8 __cuda_std_shared_<id>[bytes];")` and an
/// inline `cvta.shared.u64` (the same expansion as
/// [`#[address_space(shared)]`](crate::address_space)). `<id>` is a 64-bit FNV-1a hash of
/// `module_path!()`, `file!()`, `line!()` and `column!()`, so two call sites never share an
/// array: two declarations with the same name would make `ptxas` fail with "Duplicate
/// definition" (the kernels build runs `ptxas`), never alias silently.
///
/// Rules:
/// - `ty` and `len` must be concrete (a `global_asm!` item cannot use a generic function's
///   parameters). They may name items of the enclosing module or of the function body
///   (e.g. a `const` declared in the kernel), but not local variables.
/// - One call site is one array: calling a function that contains `shared_array!` twice, or
///   in a loop, returns the same array each time (like a `__shared__` variable in a CUDA C
///   function). A `macro_rules!` macro that expands `shared_array!` twice at one call site
///   gets the same `line!()`/`column!()` for both, hence a `ptxas` error: give each expansion
///   its own call site.
/// - The contents are uninitialised; reading before writing gives unspecified values, which
///   is only sound for types valid for every bit pattern (integers, floats, `MaybeUninit`).
/// - The array form views up to three levels of nested array literals written in the
///   macro (`[[[ty; a]; b]; c]`); a deeper nesting, or an element type that is an array
///   behind a type alias, indexes its innermost arrays as whole elements.
///
/// # Safety
/// For the `[ty; len]` form, which hands out a `&mut` that every thread of the block holds at
/// once (as a CUDA C `__shared__` array, or Rust-CUDA's `static mut` in shared memory):
/// - no two threads may access the same element unless separated by a barrier
///   ([`sync_threads`](crate::thread::sync_threads)) or unless all accesses are reads;
/// - an element must be written before it is read, unless `ty` is valid for every bit
///   pattern.
///
/// On the host it gives the emulated block's array (`cuda_emu`), allocated on first use
/// and zero-filled; outside an emulated launch it panics (device-only).
#[macro_export]
macro_rules! shared_array {
    (atomic [$ty:ty; $len:expr] $(,)?) => {
        $crate::shared_array!(atomic [$ty; $len], align = ::core::mem::align_of::<$ty>())
    };
    (atomic [$ty:ty; $len:expr], align = $align:expr $(,)?) => {
        // SAFETY: the pointer is this call site's own shared array (`__atomic_array`'s
        // contract).
        unsafe {
            $crate::shared::__atomic_array::<$ty, { $len }>(
                $crate::__shared_declare!("", [$ty; $len], $align; $ty, [$len]),
            )
        }
    };
    ([[[$ty:ty; $a:expr]; $b:expr]; $c:expr] $(,)?) => {
        $crate::shared_array!([[[$ty; $a]; $b]; $c], align = ::core::mem::align_of::<$ty>())
    };
    ([[[$ty:ty; $a:expr]; $b:expr]; $c:expr], align = $align:expr $(,)?) => {
        $crate::shared::__array_mut::<
            $crate::shared::SharedRows<$crate::shared::SharedTile<$ty, { $b }, { $a }>, { $c }>,
            [[[$ty; $a]; $b]; $c],
        >($crate::__shared_declare!(
            "",
            [[[$ty; $a]; $b]; $c],
            $align;
            $ty,
            [$c, $b, $a]
        ))
    };
    ([[$ty:ty; $a:expr]; $b:expr] $(,)?) => {
        $crate::shared_array!([[$ty; $a]; $b], align = ::core::mem::align_of::<$ty>())
    };
    ([[$ty:ty; $a:expr]; $b:expr], align = $align:expr $(,)?) => {
        $crate::shared::__array_mut::<$crate::shared::SharedTile<$ty, { $b }, { $a }>, [[$ty; $a]; $b]>(
            $crate::__shared_declare!("", [[$ty; $a]; $b], $align; $ty, [$b, $a]),
        )
    };
    ([$ty:ty; $len:expr] $(,)?) => {
        $crate::shared_array!([$ty; $len], align = ::core::mem::align_of::<$ty>())
    };
    ([$ty:ty; $len:expr], align = $align:expr $(,)?) => {
        $crate::shared::__array_mut::<$crate::shared::SharedArray<$ty, { $len }>, [$ty; $len]>(
            $crate::__shared_declare!("", [$ty; $len], $align; $ty, [$len]),
        )
    };
    ($ty:ty, $len:expr $(,)?) => {
        $crate::shared_array!($ty, $len, align = ::core::mem::align_of::<$ty>())
    };
    ($ty:ty, $len:expr, align = $align:expr $(,)?) => {
        $crate::__shared_declare!("", [$ty; $len], $align; $ty, [$len]).cast::<$ty>()
    };
}

/// The layout of one shared array, implemented by [`__shared_declare!`] in the function body
/// (where the array's type can name the body's items) for a marker type of the module that
/// holds its `global_asm!`.
#[doc(hidden)]
pub trait __SharedLayout {
    /// Bytes of the `.shared` declaration.
    const BYTES: usize;
    /// Its `.align`.
    const ALIGN: usize;
}

/// The `[ty; len]` form of [`shared_array!`](crate::shared_array) and the binding of
/// [`#[address_space(shared)]`](crate::address_space): the array `A` behind `ptr`, as its
/// view `V` ([`SharedArray`], [`SharedTile`], [`SharedRows`]: the same layout).
///
/// # Safety
/// `ptr` is a shared array declared by `shared_array!` or `#[address_space(shared)]`; the
/// caller follows that macro's safety rules.
#[doc(hidden)]
#[inline(always)]
#[must_use]
pub unsafe fn __array_mut<'a, V, A>(ptr: *mut A) -> &'a mut V {
    const {
        assert!(
            size_of::<V>() == size_of::<A>() && align_of::<V>() == align_of::<A>(),
            "a shared array view has its array's layout"
        );
    }
    // SAFETY: `ptr` is the non-null, aligned generic address of a shared array of type `A`
    // (by the caller's contract), and `V` is a `repr(transparent)` view of `A` (same size
    // and alignment, checked above); races and initialisation are the caller's rules.
    unsafe { &mut *ptr.cast::<V>() }
}

/// The `atomic [ty; len]` form of [`shared_array!`](crate::shared_array): the shared array
/// behind `ptr` as a [`SharedAtomicArray`], whose every access is atomic.
///
/// # Safety
/// `ptr` is a `[T; N]` shared array declared by `shared_array!` for its call site, and
/// every access to it goes through the returned view (nothing else names it).
#[doc(hidden)]
#[inline(always)]
#[must_use]
pub unsafe fn __atomic_array<'a, T: crate::atomic::Atomic, const N: usize>(
    ptr: *mut [T; N],
) -> &'a SharedAtomicArray<T, N> {
    // SAFETY: `ptr` is the non-null, aligned generic address of a `[T; N]` shared array that
    // `__shared_declare!` declared for one call site (the caller's contract), alive for the
    // whole block; `SharedAtomicArray<T, N>` is `repr(transparent)` over
    // `[UnsafeCell<T>; N]`, which has `[T; N]`'s layout; and the view allows only atomic
    // accesses, so the references all threads hold never take part in a data race.
    unsafe { &*ptr.cast::<SharedAtomicArray<T, N>>() }
}

/// The byte size of a `.shared` declaration: `size` (of the Rust type), at least 1 (`ptxas`
/// rejects an array of 0 bytes; a zero-sized type is never read).
#[doc(hidden)]
#[must_use]
pub const fn __bytes(size: usize) -> usize {
    if size == 0 { 1 } else { size }
}

/// FNV-1a over the call site's path, file, line and column, masked to 62 bits (a short,
/// valid PTX identifier suffix). Used by [`shared_array!`](crate::shared_array) and
/// [`#[address_space(shared)]`](crate::address_space).
#[doc(hidden)]
#[must_use]
pub const fn __symbol_id(module: &str, file: &str, line: u32, column: u32) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let parts: [&[u8]; 2] = [module.as_bytes(), file.as_bytes()];
    let mut p = 0;
    while p < parts.len() {
        let bytes = parts[p];
        let mut i = 0;
        while i < bytes.len() {
            h ^= bytes[i] as u64;
            h = h.wrapping_mul(PRIME);
            i += 1;
        }
        // Separator, so ("ab", "c") and ("a", "bc") differ.
        h ^= 0xff;
        h = h.wrapping_mul(PRIME);
        p += 1;
    }
    let nums = [line, column];
    let mut n = 0;
    while n < nums.len() {
        let bytes = nums[n].to_le_bytes();
        let mut i = 0;
        while i < 4 {
            h ^= bytes[i] as u64;
            h = h.wrapping_mul(PRIME);
            i += 1;
        }
        n += 1;
    }
    h & ((1 << 62) - 1)
}

/// The `.align` of a shared array: the requested alignment, at least the type's, and a
/// power of two (checked at compile time).
#[doc(hidden)]
#[must_use]
pub const fn __align(requested: usize, type_align: usize) -> usize {
    assert!(
        requested.is_power_of_two(),
        "shared memory: align must be a power of two"
    );
    if requested > type_align {
        requested
    } else {
        type_align
    }
}

/// Reads a `T` from shared memory: `ptr.read()`, checked on the CPU emulator.
///
/// On the GPU this is exactly `ptr.read()`. On the emulator (`cuda_emu`) the access is
/// also checked, with this call's source location in the report: that `ptr..ptr+size_of::<T>()`
/// lies in one shared allocation of the block, that every byte was written (through
/// [`write`](fn@write) or another checked access), and that no other thread wrote it since the last
/// barrier. Plain `*ptr` / `ptr.read()` are not checked: use `read`/`write` where the checks
/// should see the accesses.
///
/// # Safety
/// `ptr` is aligned and valid for reads of a `T` (shared memory of this block), and the
/// read does not race (see the [module docs](self)).
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn read<T: Copy>(ptr: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::shared::read(ptr) }
}

/// Writes a `T` to shared memory: `ptr.write(value)`, checked on the CPU emulator (bounds
/// and races, as [`read`]; the bytes count as written afterwards).
///
/// # Safety
/// `ptr` is aligned and valid for writes of a `T` (shared memory of this block), and the
/// write does not race (see the [module docs](self)).
#[inline(always)]
#[track_caller]
pub unsafe fn write<T: Copy>(ptr: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::shared::write(ptr, value) }
}

/// The launch's dynamic shared memory as a `*mut T`: `shared_mem_bytes` bytes (from the launch
/// configuration) starting at a 16-byte-aligned address, the same for every thread of the
/// block (CUDA C `extern __shared__ T buf[];`).
///
/// Every call returns the same address; to hold several arrays, offset into it yourself.
/// [`dynamic_shared_size_bytes`] gives the size. The pointer is valid for `align_of::<T>()
/// <= 16`; for larger alignments, round the address up. Dereferencing it is not seen by
/// the CPU emulator's race and initialisation checks: use [`read`](fn@read) /
/// [`write`](fn@write), or [`dynamic_shared_slice`] (indexed, checked).
///
/// PTX: `.extern .shared .align 16 .b8 __cuda_std_dynamic_shared[]` (declared once by
/// `cuda_std`) and `cvta.shared.u64` (PTX ISA §5.1.5, §9.7 "cvta"); all compute capabilities.
#[inline(always)]
#[must_use]
#[track_caller]
pub fn dynamic_shared<T>() -> *mut T {
    crate::arch::shared::dynamic_shared().cast()
}

/// The launch's dynamic shared memory as a [`SharedSlice<T>`]: its
/// `dynamic_shared_size_bytes() / size_of::<T>()` elements (0 for a zero-sized `T`),
/// indexed as a [`SharedArray`] is: plain loads and stores on the GPU, accesses the CPU
/// emulator checks (races, reads of unwritten elements, bounds against the launch's
/// `shared_mem_bytes`). For several arrays in one dynamic allocation, use
/// [`dynamic_shared`] and offset the pointer yourself (unchecked).
///
/// On the GPU this is [`dynamic_shared`] plus a read of `%dynamic_smem_size` for the
/// length.
///
/// # Safety
/// As the `[ty; len]` form of [`shared_array!`](crate::shared_array): every thread of the
/// block holds the returned `&mut` at once, so no two threads may access the same element
/// unless separated by a barrier or all accesses are reads, and an element must be
/// written before it is read unless `T` is valid for every bit pattern. `T`'s alignment
/// is at most 16 (checked at compile time).
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn dynamic_shared_slice<'a, T>() -> &'a mut SharedSlice<T> {
    const {
        assert!(
            align_of::<T>() <= 16,
            "dynamic shared memory is 16-byte aligned"
        );
    }
    let len = (dynamic_shared_size_bytes() as usize)
        .checked_div(size_of::<T>())
        .unwrap_or(0);
    // SAFETY: the dynamic shared memory is `len · size_of::<T>()` bytes or more at a
    // 16-byte-aligned address (aligned for `T`, checked above); the caller follows the
    // rules for the `&mut` every thread holds.
    unsafe { SharedSlice::from_raw_parts(dynamic_shared::<T>(), len) }
}

/// Bytes of dynamic shared memory of this launch (`shared_mem_bytes` of the launch
/// configuration).
///
/// PTX: `mov.u32 d, %dynamic_smem_size` (PTX ISA §10, "Special Registers:
/// %dynamic_smem_size"); sm_20+, PTX ISA 4.1+.
#[inline(always)]
#[must_use]
#[track_caller]
pub fn dynamic_shared_size_bytes() -> u32 {
    crate::arch::shared::dynamic_shared_size_bytes()
}

/// Total bytes of shared memory (static and dynamic) of this block (`%total_smem_size`,
/// PTX ISA §10; sm_20+, PTX ISA 4.1+).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn total_shared_size_bytes() -> u32 {
    crate::arch::shared::total_shared_size_bytes()
}

/// The 32-bit `.shared` state-space address of `p`, a generic pointer into this block's
/// shared memory, for instructions that take a shared address (`mbarrier`, TMA, `wgmma`
/// matrix descriptors, `stmatrix`).
///
/// PTX: `cvta.to.shared.u64` then `cvt.u32.u64` (PTX ISA §9.7.9.18 "cvta"; shared
/// addresses fit 32 bits, §5.1.5 "Shared State Space"); all compute capabilities. Computes
/// an address only: no memory is accessed, and it is safe to call with any pointer, but the
/// result is meaningful only when `p` points into shared memory (otherwise it is
/// unspecified).
///
/// On the CPU emulator the block's shared allocations are placed in one emulated window:
/// the dynamic shared memory first, then each static array in the order the block first
/// uses it, at 1024-byte-aligned addresses from `0x400` up (the first 1 KiB is reserved, as
/// on sm_80 and later), so an address is stable for the block's life and equal to the host
/// address modulo 1024 (swizzles computed on either agree); a pointer outside the block's
/// shared memory gives 0.
#[inline(always)]
#[must_use]
pub fn shared_addr<T>(p: *const T) -> u32 {
    crate::arch::shared::shared_addr(p.cast())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_ids_differ_per_call_site_and_fit_62_bits() {
        let a = __symbol_id("k::m", "src/m.rs", 10, 5);
        assert_ne!(a, __symbol_id("k::m", "src/m.rs", 10, 6));
        assert_ne!(a, __symbol_id("k::m", "src/m.rs", 11, 5));
        assert_ne!(a, __symbol_id("k::n", "src/m.rs", 10, 5));
        assert_ne!(__symbol_id("ab", "c", 1, 1), __symbol_id("a", "bc", 1, 1));
        assert!(a < (1 << 62));
    }

    #[test]
    fn alignment_is_at_least_the_types() {
        assert_eq!(__align(4, 8), 8);
        assert_eq!(__align(16, 4), 16);
    }
}
