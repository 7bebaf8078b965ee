//! `mem` on the CPU emulator: loads and stores are host accesses, checked for bounds (and,
//! in shared memory, races and uninitialised reads); `cp.async` copies at once (its waits
//! are no-ops); prefetches do nothing.

use core::panic::Location;
use cuda_emu::device::{self, AccessKind};

macro_rules! vec_load {
    ($name:ident, $t:ty, $n:literal) => {
        /// # Safety
        /// As the `mem` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name(ptr: *const $t) -> [$t; $n] {
            device::enter(concat!("mem::", stringify!($name)));
            device::check_access(
                ptr as usize,
                core::mem::size_of::<[$t; $n]>(),
                AccessKind::Read,
                Location::caller(),
            );
            // SAFETY: caller contract.
            unsafe { ptr.cast::<[$t; $n]>().read() }
        }
    };
}

macro_rules! vec_store {
    ($name:ident, $t:ty, $n:literal) => {
        /// # Safety
        /// As the `mem` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name(ptr: *mut $t, value: [$t; $n]) {
            device::enter(concat!("mem::", stringify!($name)));
            device::check_access(
                ptr as usize,
                core::mem::size_of::<[$t; $n]>(),
                AccessKind::Write,
                Location::caller(),
            );
            // SAFETY: caller contract.
            unsafe { ptr.cast::<[$t; $n]>().write(value) }
        }
    };
}

vec_load!(load_v4_f32, f32, 4);
vec_load!(load_v4_u32, u32, 4);
vec_load!(load_v2_f32, f32, 2);
vec_load!(load_v2_f64, f64, 2);
vec_load!(load_v4_f32_global_nc, f32, 4);
vec_load!(load_v2_f64_global_nc, f64, 2);
vec_store!(store_v4_f32, f32, 4);
vec_store!(store_v4_u32, u32, 4);
vec_store!(store_v2_f32, f32, 2);
vec_store!(store_v2_f64, f64, 2);

/// # Safety
/// As `mem::load_global_nc`.
#[track_caller]
pub(crate) unsafe fn load_nc<T: Copy>(ptr: *const T) -> T {
    device::enter("mem::load_global_nc");
    device::check_access(
        ptr as usize,
        core::mem::size_of::<T>(),
        AccessKind::Read,
        Location::caller(),
    );
    // SAFETY: forwarded to the caller.
    unsafe { ptr.read() }
}

/// A hint: nothing to do on the emulator.
///
/// # Safety
/// None here; the `mem` function's contract is the GPU's.
#[track_caller]
pub(crate) unsafe fn prefetch_l2(ptr: *const u8) {
    let _ = ptr;
    device::enter("mem::prefetch_l2");
}

/// A hint: nothing to do on the emulator.
///
/// # Safety
/// None here; the `mem` function's contract is the GPU's.
#[track_caller]
pub(crate) unsafe fn prefetch_l1(ptr: *const u8) {
    let _ = ptr;
    device::enter("mem::prefetch_l1");
}

macro_rules! cp_async {
    ($($name:ident, $bytes:literal;)*) => {$(
        /// The source is read now; the copy lands at the wait that retires its group.
        ///
        /// # Safety
        /// As `mem::async_copy`'s function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name(dst: *mut u8, src: *const u8) {
            // SAFETY: caller contract: both ranges valid, not overlapping (shared and
            // global memory).
            unsafe { device::cp_async_copy("mem::async_copy::copy_*", dst, src, $bytes, $bytes) }
        }
    )*};
}

cp_async!(copy_4, 4; copy_8, 8; copy_16, 16;);

#[track_caller]
pub(crate) fn commit_group() {
    device::cp_async_commit("mem::async_copy::commit_group");
}

#[track_caller]
pub(crate) fn wait_group<const N: u32>() {
    device::cp_async_wait("mem::async_copy::wait_group", Some(N));
}

#[track_caller]
pub(crate) fn wait_all() {
    device::cp_async_wait("mem::async_copy::wait_all", None);
}

/// A plain store of `size` bytes at `ptr` through a checked path (`OutSlice::write`): the
/// emulator's bounds and global race checks (nothing outside a launch).
#[track_caller]
#[inline]
pub(crate) fn note_store(ptr: *const u8, size: usize) {
    device::check_access(ptr as usize, size, AccessKind::Write, Location::caller());
}
