//! `shared` on the GPU: `.shared` declarations (PTX ISA §5.1.5 "Shared State Space", §11.4
//! "Variable declarations") and `cvta` (§9.7 "cvta").

core::arch::global_asm!(
    "// cuda_std::shared::dynamic_shared: the launch's dynamic shared memory.",
    ".extern .shared .align 16 .b8 __cuda_std_dynamic_shared[];",
);

/// The common expansion of [`shared_array!`](crate::shared_array) and
/// [`#[address_space(shared)]`](crate::address_space): declares a `.shared` array of type
/// `$array` (a concrete type nameable in the calling block) with symbol
/// `__cuda_std_shared_<$prefix><id>` and evaluates to a `*mut $array` (its generic address).
/// `$prefix` is a string literal (`""`, or a Rust name and `_` for readable PTX).
#[doc(hidden)]
#[macro_export]
macro_rules! __shared_declare {
    // `$elem` and `$dim`s describe the elements for the emulator's reports; unused here.
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
            ::core::arch::global_asm!(
                concat!(
                    ".shared .align {align} .b8 __cuda_std_shared_",
                    $prefix,
                    "{id}[{bytes}];"
                ),
                align = const <Layout as $crate::shared::__SharedLayout>::ALIGN,
                id = const ID,
                bytes = const <Layout as $crate::shared::__SharedLayout>::BYTES,
            );
        }
        impl $crate::shared::__SharedLayout for __cuda_std_shared::Layout {
            const BYTES: usize = $crate::shared::__bytes(::core::mem::size_of::<$array>());
            const ALIGN: usize =
                $crate::shared::__align($align, ::core::mem::align_of::<$array>());
        }
        let __cuda_std_shared_ptr: *mut $array = {
            let p: u64;
            // SAFETY: computes the generic address of the array declared above; no memory
            // access. `pure`: the address is a constant of the block.
            unsafe {
                ::core::arch::asm!(
                    concat!("cvta.shared.u64 {p}, __cuda_std_shared_", $prefix, "{id};"),
                    p = out(reg64) p,
                    id = const __cuda_std_shared::ID,
                    options(pure, nomem, nostack),
                )
            };
            p as usize as *mut $array
        };
        __cuda_std_shared_ptr
    }};
}

/// An element of a shared array view is read (`SharedArray`'s `Index`): on the GPU the
/// read itself is all there is.
#[inline(always)]
pub(crate) fn indexed_read(_element: *const u8, _bytes: usize) {}

/// An element of a shared array view is written (`IndexMut`): nothing to record.
#[inline(always)]
pub(crate) fn indexed_write(_element: *mut u8, _bytes: usize) {}

/// # Safety
/// As `shared::read`.
#[inline(always)]
pub(crate) unsafe fn read<T: Copy>(ptr: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { ptr.read() }
}

/// # Safety
/// As `shared::write`.
#[inline(always)]
pub(crate) unsafe fn write<T: Copy>(ptr: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { ptr.write(value) }
}

#[inline(always)]
pub(crate) fn dynamic_shared() -> *mut u8 {
    let p: u64;
    // SAFETY: computes an address; no memory access.
    unsafe {
        core::arch::asm!(
            "cvta.shared.u64 {p}, __cuda_std_dynamic_shared;",
            p = out(reg64) p,
            options(pure, nomem, nostack),
        )
    };
    p as usize as *mut u8
}

#[inline(always)]
pub(crate) fn dynamic_shared_size_bytes() -> u32 {
    let n: u32;
    // SAFETY: reads a special register, constant for the launch.
    unsafe {
        core::arch::asm!(
            "mov.u32 {n}, %dynamic_smem_size;",
            n = out(reg32) n,
            options(pure, nomem, nostack),
        )
    };
    n
}

#[inline(always)]
pub(crate) fn total_shared_size_bytes() -> u32 {
    let n: u32;
    // SAFETY: reads a special register, constant for the launch.
    unsafe {
        core::arch::asm!(
            "mov.u32 {n}, %total_smem_size;",
            n = out(reg32) n,
            options(pure, nomem, nostack),
        )
    };
    n
}

#[inline(always)]
pub(crate) fn shared_addr(p: *const u8) -> u32 {
    let a: u32;
    // SAFETY: address arithmetic only; no memory access.
    unsafe {
        core::arch::asm!(
            "{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; }}",
            p = in(reg64) p as u64,
            a = out(reg32) a,
            options(pure, nomem, nostack),
        )
    };
    a
}
