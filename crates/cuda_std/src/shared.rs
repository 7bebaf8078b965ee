//! Shared memory: per-block on-chip memory, shared by the threads of a block and alive for
//! the block's lifetime.
//!
//! - Static arrays, sized at compile time: [`shared_array!`](crate::shared_array), one PTX
//!   `.shared` variable per call site.
//! - Dynamic shared memory, sized per launch (the launch configuration's
//!   `shared_mem_bytes`): [`dynamic_shared`].
//!
//! Both give a *generic* raw pointer (PTX `cvta.shared.u64`), usable with ordinary loads and
//! stores. Shared memory is uninitialised at block start. Accesses from different threads
//! race unless separated by a barrier ([`crate::thread::sync_threads`], or
//! [`crate::warp::sync_warp`] within a warp) or done with [`crate::atomic`] operations at
//! [`Block`](crate::atomic::Block) scope or wider.
//!
//! Rust `core` has no address-space statics, so the declarations are PTX text emitted with
//! `global_asm!` (PTX ISA §5.1.5 "Shared State Space", §11.4 "Variable declarations").
//! Capacity: 48 KiB of static shared memory per block on every architecture; more (up to
//! 227 KiB on sm_90) only as dynamic shared memory after opting in with
//! `cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)` (CUDA C Programming Guide, "Technical
//! Specifications per Compute Capability").

#[cfg(target_arch = "nvptx64")]
core::arch::global_asm!(
    "// cuda_std::shared::dynamic_shared: the launch's dynamic shared memory.",
    ".extern .shared .align 16 .b8 __cuda_std_dynamic_shared[];",
);

/// Declares a static shared-memory array of `len` elements of type `ty`, unique to this call
/// site, and evaluates to a `*mut ty` to its first element (the same address in every thread
/// of a block; each block has its own copy).
///
/// ```ignore
/// let tile: *mut f32 = shared_array!(f32, 16 * 16);          // align_of::<f32>()
/// let buf: *mut f32 = shared_array!(f32, 1024, align = 16);  // for 16-byte vector access
/// ```
///
/// Expands to a `global_asm!(".shared .align A .b8 __cuda_std_shared_<id>[bytes];")` and an
/// inline `cvta.shared.u64`. `<id>` is a 64-bit FNV-1a hash of `module_path!()`, `file!()`,
/// `line!()` and `column!()`, so two call sites never share an array: two declarations with
/// the same name would make `ptxas` fail with "Duplicate definition" (the kernels build runs
/// `ptxas`), never alias silently.
///
/// Rules:
/// - `ty` and `len` must be concrete (a `global_asm!` item cannot use a generic function's
///   parameters), and nameable from the enclosing *module* (they are resolved in a module
///   nested in the expansion, which glob-imports `super::*`): module-level types and
///   constants work, items declared inside the function body do not.
/// - One call site is one array: calling a function that contains `shared_array!` twice, or
///   in a loop, returns the same array each time (like a `__shared__` variable in a CUDA C
///   function). A `macro_rules!` macro that expands `shared_array!` twice at one call site
///   gets the same `line!()`/`column!()` for both, hence a `ptxas` error: give each expansion
///   its own call site.
/// - The contents are uninitialised; reading before writing gives unspecified values, which
///   is only sound for types valid for every bit pattern (integers, floats).
///
/// On the host, evaluating it panics (device-only).
#[macro_export]
macro_rules! shared_array {
    ($ty:ty, $len:expr $(,)?) => {
        $crate::shared_array!($ty, $len, align = ::core::mem::align_of::<$ty>())
    };
    ($ty:ty, $len:expr, align = $align:expr $(,)?) => {{
        // `global_asm!` is only accepted in item position: declare it in a module (one per
        // expansion; each expansion is its own block, so the module names do not clash).
        #[doc(hidden)]
        mod __cuda_std_shared {
            #[allow(unused_imports)]
            use super::*;
            pub(super) const ID: u64 =
                $crate::shared::__symbol_id(module_path!(), file!(), line!(), column!());
            const BYTES: usize = ::core::mem::size_of::<[$ty; $len]>();
            const ALIGN: usize = $crate::shared::__align($align, ::core::mem::align_of::<$ty>());
            #[cfg(target_arch = "nvptx64")]
            ::core::arch::global_asm!(
                ".shared .align {align} .b8 __cuda_std_shared_{id}[{bytes}];",
                align = const ALIGN,
                id = const ID,
                bytes = const BYTES,
            );
        }
        #[cfg(target_arch = "nvptx64")]
        let __cuda_std_shared_ptr: *mut $ty = {
            let p: u64;
            // SAFETY: computes the generic address of the array declared above; no memory
            // access. `pure`: the address is a constant of the block.
            unsafe {
                ::core::arch::asm!(
                    "cvta.shared.u64 {p}, __cuda_std_shared_{id};",
                    p = out(reg64) p,
                    id = const __cuda_std_shared::ID,
                    options(pure, nomem, nostack),
                )
            };
            p as usize as *mut $ty
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let __cuda_std_shared_ptr: *mut $ty = {
            let _ = __cuda_std_shared::ID;
            $crate::shared::__host_stub()
        };
        __cuda_std_shared_ptr
    }};
}

/// FNV-1a over the call site's path, file, line and column, masked to 62 bits (a short,
/// valid PTX identifier suffix). Used by [`shared_array!`](crate::shared_array).
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
        "shared_array!: align must be a power of two"
    );
    if requested > type_align {
        requested
    } else {
        type_align
    }
}

/// The host side of [`shared_array!`](crate::shared_array): panics (device-only).
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
pub fn __host_stub<T>() -> *mut T {
    crate::gpu_only("shared_array!")
}

/// The launch's dynamic shared memory as a `*mut T`: `shared_mem_bytes` bytes (from the launch
/// configuration) starting at a 16-byte-aligned address, the same for every thread of the
/// block (CUDA C `extern __shared__ T buf[];`).
///
/// Every call returns the same address; to hold several arrays, offset into it yourself.
/// [`dynamic_shared_size_bytes`] gives the size. The pointer is valid for `align_of::<T>()
/// <= 16`; for larger alignments, round the address up.
///
/// PTX: `.extern .shared .align 16 .b8 __cuda_std_dynamic_shared[]` (declared once by
/// `cuda_std`) and `cvta.shared.u64` (PTX ISA §5.1.5, §9.7 "cvta"); all compute capabilities.
#[inline(always)]
#[must_use]
pub fn dynamic_shared<T>() -> *mut T {
    #[cfg(target_arch = "nvptx64")]
    {
        let p: u64;
        // SAFETY: computes an address; no memory access.
        unsafe {
            core::arch::asm!(
                "cvta.shared.u64 {p}, __cuda_std_dynamic_shared;",
                p = out(reg64) p,
                options(pure, nomem, nostack),
            )
        };
        p as usize as *mut T
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::gpu_only("shared::dynamic_shared")
}

/// Bytes of dynamic shared memory of this launch (`shared_mem_bytes` of the launch
/// configuration).
///
/// PTX: `mov.u32 d, %dynamic_smem_size` (PTX ISA §10, "Special Registers:
/// %dynamic_smem_size"); sm_20+, PTX ISA 4.1+.
#[inline(always)]
#[must_use]
pub fn dynamic_shared_size_bytes() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
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
    #[cfg(not(target_arch = "nvptx64"))]
    crate::gpu_only("shared::dynamic_shared_size_bytes")
}

/// Total bytes of shared memory (static and dynamic) of this block (`%total_smem_size`,
/// PTX ISA §10; sm_20+, PTX ISA 4.1+).
#[inline(always)]
#[must_use]
pub fn total_shared_size_bytes() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
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
    #[cfg(not(target_arch = "nvptx64"))]
    crate::gpu_only("shared::total_shared_size_bytes")
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
