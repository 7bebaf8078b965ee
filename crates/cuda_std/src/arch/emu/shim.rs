//! `#[kernel]`'s host shim: reads the parameters from the argument-pointer array the
//! emulator passes (the same array `cuLaunchKernel` takes).

use core::ffi::c_void;

/// Whether the CPU has FMA3 and the OS saves its registers (checked once, as
/// `cuda_std::math::fmaf` checks it): `#[kernel]`'s host shim then runs the body compiled
/// with the `fma` target feature, where `fmaf` and `fma` inline to one instruction.
#[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
#[inline(always)]
#[must_use]
pub fn fma_available() -> bool {
    crate::math::host_fma_available()
}

/// Reads a `&[T]` parameter from its `(pointer, length)` bytes (used by `#[kernel]`'s host
/// shim).
///
/// # Safety
/// `arg` points to a `(pointer, length)` pair describing `length` valid `T`s (or length 0).
#[must_use]
pub unsafe fn arg_slice<'a, T>(arg: *mut c_void) -> &'a [T] {
    // SAFETY: the caller's contract.
    let (ptr, len) = unsafe { arg.cast::<(*const T, usize)>().read_unaligned() };
    if len == 0 || ptr.is_null() {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { core::slice::from_raw_parts(ptr, len) }
    }
}

/// Reads an `OutSlice<T>` parameter from its `(pointer, length)` bytes (used by
/// `#[kernel]`'s host shim).
///
/// # Safety
/// As [`arg_slice`], for writable memory.
#[must_use]
pub unsafe fn arg_out<'a, T>(arg: *mut c_void) -> crate::launch::OutSlice<'a, T> {
    // SAFETY: `OutSlice` is `repr(C)` { ptr, len, PhantomData }: the same bytes as the
    // (pointer, length) pair; the caller's contract for the rest.
    unsafe {
        arg.cast::<crate::launch::OutSlice<'a, T>>()
            .read_unaligned()
    }
}

/// Reads an `AtomicSlice<T>` parameter from its `(pointer, length)` bytes (used by
/// `#[kernel]`'s host shim).
///
/// # Safety
/// As [`arg_slice`], for writable memory.
#[must_use]
pub unsafe fn arg_atomic<'a, T>(arg: *mut c_void) -> crate::launch::AtomicSlice<'a, T> {
    // SAFETY: `AtomicSlice` is `repr(C)` { ptr, len, PhantomData }: the same bytes as the
    // (pointer, length) pair; the caller's contract for the rest.
    unsafe {
        arg.cast::<crate::launch::AtomicSlice<'a, T>>()
            .read_unaligned()
    }
}

/// Reads a pointer or value parameter from its bytes (used by `#[kernel]`'s host shim).
///
/// # Safety
/// `arg` points to a valid `T`.
#[must_use]
pub unsafe fn arg_value<T>(arg: *mut c_void) -> T {
    // SAFETY: the caller's contract.
    unsafe { arg.cast::<T>().read_unaligned() }
}

/// The host side of `shared_array!` and `#[address_space(shared)]`: the emulated block's
/// array for the declaration `id` (`bytes`, aligned to `align`), which the emulator's
/// reports call `name` (its type and declaration site), its elements laid out as `shape`
/// (for naming the element a report is about); outside an emulated launch, panics
/// (device-only).
#[track_caller]
#[must_use]
pub fn shared_static<T>(
    id: u64,
    bytes: usize,
    align: usize,
    name: &'static str,
    shape: &'static SharedShape,
) -> *mut T {
    cuda_emu::device::shared_static(id, bytes, align, name, shape).cast()
}

pub use cuda_emu::device::SharedShape;
