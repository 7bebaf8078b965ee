//! `shared` on the CPU emulator: one zero-filled host allocation per block and declaration,
//! and accesses checked for bounds, races and uninitialised reads.

use cuda_emu::device::{self, AccessKind};

/// The common expansion of [`shared_array!`](crate::shared_array) and
/// [`#[address_space(shared)]`](crate::address_space): declares a `.shared` array of type
/// `$array` (a concrete type nameable in the calling block) with symbol
/// `__cuda_std_shared_<$prefix><id>` and evaluates to a `*mut $array` (its generic address).
/// `$prefix` is a string literal (`""`, or a Rust name and `_` for readable PTX).
#[doc(hidden)]
#[macro_export]
macro_rules! __shared_declare {
    ($prefix:literal, $array:ty, $align:expr; $elem:ty, [$($dim:expr),+ $(,)?]) => {{
        // `global_asm!` is accepted in item position only, and a function body is not one:
        // it goes in a module (one per expansion; each expansion is its own block, so the
        // module names do not clash). A module does not see the items of the function body
        // (a `const` length declared in the kernel), so the layout reaches it through a
        // trait impl written here, in the body, for a marker type of the module.
        #[doc(hidden)]
        mod __cuda_std_shared {
            pub(super) struct Layout;
            pub(super) const ID: u64 =
                $crate::shared::__symbol_id(module_path!(), file!(), line!(), column!());
        }
        impl $crate::shared::__SharedLayout for __cuda_std_shared::Layout {
            const BYTES: usize = $crate::shared::__bytes(::core::mem::size_of::<$array>());
            const ALIGN: usize = $crate::shared::__align($align, ::core::mem::align_of::<$array>());
        }
        // How the reports name an element: `[7][6]` of type `f32` (a constant, so the
        // reference to it is `'static`).
        const __CUDA_STD_SHAPE: $crate::__host_shim::SharedShape = $crate::__host_shim::SharedShape {
            element: ::core::stringify!($elem),
            element_bytes: ::core::mem::size_of::<$elem>(),
            dims: &[$($dim),+],
        };
        let __cuda_std_shared_ptr: *mut $array = $crate::__host_shim::shared_static(
            __cuda_std_shared::ID,
            <__cuda_std_shared::Layout as $crate::shared::__SharedLayout>::BYTES,
            <__cuda_std_shared::Layout as $crate::shared::__SharedLayout>::ALIGN,
            // How the emulator's reports name the array: its type and declaration site.
            ::core::concat!(
                "shared array `",
                ::core::stringify!($array),
                "` declared at ",
                ::core::file!(),
                ":",
                ::core::line!(),
                ":",
                ::core::column!()
            ),
            &__CUDA_STD_SHAPE,
        );
        __cuda_std_shared_ptr
    }};
}

/// A read of `bytes` at `element` through a shared array view's `Index`: checked for
/// bounds, races and initialisation at the indexing expression.
#[track_caller]
pub(crate) fn indexed_read(element: *const u8, bytes: usize) {
    device::check_access(
        element as usize,
        bytes,
        AccessKind::Read,
        core::panic::Location::caller(),
    );
}

/// A write through `IndexMut`: checked for bounds and races; the bytes count as written.
#[track_caller]
pub(crate) fn indexed_write(element: *mut u8, bytes: usize) {
    device::check_access(
        element as usize,
        bytes,
        AccessKind::Write,
        core::panic::Location::caller(),
    );
}

/// # Safety
/// As `shared::read`.
#[track_caller]
pub(crate) unsafe fn read<T: Copy>(ptr: *const T) -> T {
    device::check_access(
        ptr as usize,
        core::mem::size_of::<T>(),
        AccessKind::Read,
        core::panic::Location::caller(),
    );
    // SAFETY: the caller's contract.
    unsafe { ptr.read() }
}

/// # Safety
/// As `shared::write`.
#[track_caller]
pub(crate) unsafe fn write<T: Copy>(ptr: *mut T, value: T) {
    device::check_access(
        ptr as usize,
        core::mem::size_of::<T>(),
        AccessKind::Write,
        core::panic::Location::caller(),
    );
    // SAFETY: the caller's contract.
    unsafe { ptr.write(value) }
}

#[track_caller]
pub(crate) fn dynamic_shared() -> *mut u8 {
    device::dynamic_shared("shared::dynamic_shared").0
}

#[track_caller]
pub(crate) fn dynamic_shared_size_bytes() -> u32 {
    device::dynamic_shared("shared::dynamic_shared_size_bytes").1 as u32
}

#[track_caller]
pub(crate) fn total_shared_size_bytes() -> u32 {
    device::total_shared_bytes("shared::total_shared_size_bytes") as u32
}

/// The emulator's shared window: a block's allocations (dynamic first, then the static
/// arrays in the order the block first uses them) lie at 1024-aligned addresses from 0x400
/// up, each congruent to its host address modulo 1024; 0 for a pointer outside the block's
/// shared memory (unspecified on a GPU). See `cuda_emu`'s `ctx::SharedMem`.
#[track_caller]
pub(crate) fn shared_addr(p: *const u8) -> u32 {
    device::shared_addr("shared::shared_addr", p)
}
