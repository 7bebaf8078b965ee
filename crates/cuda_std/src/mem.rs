//! Memory access helpers for bandwidth-bound kernels: vectorized loads and stores, loads
//! through the read-only (non-coherent) data cache, prefetches, and asynchronous
//! global-to-shared copies (`cp.async`, sm_80).
//!
//! Why: one 16-byte `ld.v4.f32` moves as much as four 4-byte loads with a quarter of the
//! instructions, and `ld.global.nc` serves data that does not change during the kernel from
//! the texture/L1 path (CUDA C Best Practices Guide, "Memory Optimizations"; CUDA C
//! Programming Guide, "Global Memory" access-size rules: 1, 2, 4, 8 or 16 bytes, naturally
//! aligned).
//!
//! Instructions: `ld`, `st`, `ld.global.nc`, `prefetch`, `cp.async` (PTX ISA §9.7 "Data
//! Movement and Conversion Instructions"). The loads/stores here use generic addresses
//! unless the name says `global`; `*_global_nc` converts to a global address with
//! `cvta.to.global.u64`.
//!
//! # Safety (all loads and stores)
//! - `ptr` is aligned to the whole access (16 bytes for `v4` of 32-bit elements and `v2` of
//!   64-bit ones, 8 for `v2` of 32-bit), and valid for reads (loads) or writes (stores) of
//!   the whole vector;
//! - the access does not race with other threads' writes (ordinary, non-atomic access).

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

macro_rules! vec_load {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal, $ptx:literal, $rc:ident, [$($r:ident),+]) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The [module's rules](self): `ptr` aligned to the vector's size, valid for reading
        /// it, no racing writes.
        #[inline(always)]
        #[must_use]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: *const $t) -> [$t; $n] {
            #[cfg(target_arch = "nvptx64")]
            {
                $( let $r: $t; )+
                // SAFETY: caller contract; `readonly`: the asm only reads memory.
                unsafe {
                    asm!($ptx, p = in(reg64) ptr as u64, $( $r = out($rc) $r, )+
                        options(pure, readonly, nostack))
                };
                [$($r),+]
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = crate::emu::thread(concat!("mem::", stringify!($name)));
                crate::emu::check_access(ptr as usize, core::mem::size_of::<[$t; $n]>(),
                    crate::emu::AccessKind::Read, core::panic::Location::caller());
                // SAFETY: caller contract.
                unsafe { ptr.cast::<[$t; $n]>().read() }
            }
        }
    };
}

macro_rules! vec_store {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal, $ptx:literal, $rc:ident, [$($r:ident),+]) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The [module's rules](self): `ptr` aligned to the vector's size, valid for writing
        /// it, no racing accesses.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(ptr: *mut $t, value: [$t; $n]) {
            #[cfg(target_arch = "nvptx64")]
            {
                let [$($r),+] = value;
                // SAFETY: caller contract.
                unsafe {
                    asm!($ptx, p = in(reg64) ptr as u64, $( $r = in($rc) $r, )+
                        options(nostack))
                };
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let _ = crate::emu::thread(concat!("mem::", stringify!($name)));
                crate::emu::check_access(ptr as usize, core::mem::size_of::<[$t; $n]>(),
                    crate::emu::AccessKind::Write, core::panic::Location::caller());
                // SAFETY: caller contract.
                unsafe { ptr.cast::<[$t; $n]>().write(value) }
            }
        }
    };
}

vec_load!(
    /// Loads 4 `f32` with one 16-byte access (PTX `ld.v4.f32`, CUDA C `float4` load; all
    /// compute capabilities). `ptr` must be 16-byte aligned.
    load_v4_f32, f32, 4, "ld.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];", reg32, [a, b, c, d]
);
vec_load!(
    /// Loads 4 `u32` with one 16-byte access (PTX `ld.v4.u32`). `ptr` must be 16-byte aligned.
    load_v4_u32, u32, 4, "ld.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];", reg32, [a, b, c, d]
);
vec_load!(
    /// Loads 2 `f32` with one 8-byte access (PTX `ld.v2.f32`). `ptr` must be 8-byte aligned.
    load_v2_f32, f32, 2, "ld.v2.f32 {{{a}, {b}}}, [{p}];", reg32, [a, b]
);
vec_load!(
    /// Loads 2 `f64` with one 16-byte access (PTX `ld.v2.f64`, CUDA C `double2` load).
    /// `ptr` must be 16-byte aligned.
    load_v2_f64, f64, 2, "ld.v2.f64 {{{a}, {b}}}, [{p}];", reg64, [a, b]
);
vec_load!(
    /// Loads 4 `f32` from global memory through the read-only data cache (PTX
    /// `ld.global.nc.v4.f32`, CUDA C `__ldg(float4*)`; sm_35+). `ptr` must be 16-byte aligned,
    /// point to **global** memory, and the data must not be written by any thread during the
    /// kernel (the non-coherent cache may return stale values otherwise).
    load_v4_f32_global_nc, f32, 4,
    "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v4.f32 {{{a}, {b}, {c}, {d}}}, [g]; }}",
    reg32, [a, b, c, d]
);
vec_load!(
    /// Loads 2 `f64` from global memory through the read-only data cache (PTX
    /// `ld.global.nc.v2.f64`; sm_35+). Same rules as [`load_v4_f32_global_nc`].
    load_v2_f64_global_nc, f64, 2,
    "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v2.f64 {{{a}, {b}}}, [g]; }}",
    reg64, [a, b]
);
vec_store!(
    /// Stores 4 `f32` with one 16-byte access (PTX `st.v4.f32`). `ptr` must be 16-byte
    /// aligned.
    store_v4_f32, f32, 4, "st.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};", reg32, [a, b, c, d]
);
vec_store!(
    /// Stores 4 `u32` with one 16-byte access (PTX `st.v4.u32`). `ptr` must be 16-byte
    /// aligned.
    store_v4_u32, u32, 4, "st.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};", reg32, [a, b, c, d]
);
vec_store!(
    /// Stores 2 `f32` with one 8-byte access (PTX `st.v2.f32`). `ptr` must be 8-byte aligned.
    store_v2_f32, f32, 2, "st.v2.f32 [{p}], {{{a}, {b}}};", reg32, [a, b]
);
vec_store!(
    /// Stores 2 `f64` with one 16-byte access (PTX `st.v2.f64`). `ptr` must be 16-byte
    /// aligned.
    store_v2_f64, f64, 2, "st.v2.f64 [{p}], {{{a}, {b}}};", reg64, [a, b]
);

/// A 4- or 8-byte value for [`load_global_nc`]: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
pub trait NcValue: Copy {
    #[doc(hidden)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn load_nc(ptr: *const Self) -> Self;
}

macro_rules! nc_value {
    ($ty:literal, $rc:ident, $($t:ty),*) => {$(
        impl NcValue for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn load_nc(ptr: *const Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                {
                    let v: $t;
                    // SAFETY: forwarded to the caller.
                    unsafe {
                        asm!(concat!("{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.",
                                $ty, " {v}, [g]; }}"),
                            p = in(reg64) ptr as u64, v = out($rc) v,
                            options(pure, readonly, nostack))
                    };
                    v
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = crate::emu::thread("mem::load_global_nc");
                    crate::emu::check_access(ptr as usize, core::mem::size_of::<$t>(),
                        crate::emu::AccessKind::Read, core::panic::Location::caller());
                    // SAFETY: forwarded to the caller.
                    unsafe { ptr.read() }
                }
            }
        }
    )*};
}
nc_value!("b32", reg32, u32, i32, f32);
nc_value!("b64", reg64, u64, i64, f64);

/// Loads one value from global memory through the read-only data cache (PTX
/// `ld.global.nc.b32` / `.b64`, CUDA C `__ldg`; sm_35+).
///
/// # Safety
/// `ptr` is aligned, points to **global** memory valid for reads, and no thread writes the
/// location during the kernel (the non-coherent cache may return stale values otherwise).
#[inline(always)]
#[must_use]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_global_nc<T: NcValue>(ptr: *const T) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::load_nc(ptr) }
}

/// Hints the memory system to bring the line holding `ptr` into the L2 cache (PTX
/// `prefetch.global.L2`; sm_20+). No effect on results, only on timing.
///
/// # Safety
/// `ptr` is an address inside a global-memory allocation (it is not dereferenced, but the
/// PTX ISA leaves prefetches of invalid addresses undefined).
#[inline(always)]
pub unsafe fn prefetch_l2<T>(ptr: *const T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; prefetch.global.L2 [g]; }}",
            p = in(reg64) ptr as u64,
            options(readonly, nostack),
        )
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // A hint: nothing to do on the emulator.
        let _ = (ptr, crate::emu::thread("mem::prefetch_l2"));
    }
}

/// Hints the memory system to bring the line holding `ptr` into the L1 cache (PTX
/// `prefetch.global.L1`; sm_20+).
///
/// # Safety
/// As for [`prefetch_l2`].
#[inline(always)]
pub unsafe fn prefetch_l1<T>(ptr: *const T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; prefetch.global.L1 [g]; }}",
            p = in(reg64) ptr as u64,
            options(readonly, nostack),
        )
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // A hint: nothing to do on the emulator.
        let _ = (ptr, crate::emu::thread("mem::prefetch_l1"));
    }
}

/// Asynchronous global-to-shared copies (`cp.async`, **sm_80+**, PTX ISA 7.0+; PTX ISA §9.7
/// "Data Movement and Conversion Instructions: cp.async, cp.async.commit_group,
/// cp.async.wait_group"). On the GPU this module exists only when the kernels are built for
/// sm_80 or later (`cfg(target_feature = "sm_80")`); on the CPU emulator a copy happens at
/// once and the waits do nothing.
///
/// Pattern (double buffering): issue copies for the next tile, [`commit_group`](crate::mem::async_copy::commit_group), compute on
/// the current tile, [`wait_group::<1>`](crate::mem::async_copy::wait_group) (all but the newest group done), then
/// [`sync_threads`](crate::thread::sync_threads) before reading what *other* threads copied.
/// `wait_*` only covers the calling thread's own copies.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod async_copy {
    #[cfg(target_arch = "nvptx64")]
    use core::arch::asm;

    macro_rules! cp_async {
        ($(#[$doc:meta])* $name:ident, $bytes:literal, $ptx:literal) => {
            $(#[$doc])*
            ///
            /// # Safety
            #[doc = concat!("- `dst` points to **shared** memory, `src` to **global** memory, \
                both aligned to ", $bytes, " bytes and valid for ", $bytes, " bytes;")]
            /// - neither range is accessed by other code until the copy has completed
            ///   ([`wait_all`] / [`wait_group`], plus a barrier for other threads).
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn $name(dst: *mut u8, src: *const u8) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: caller contract.
                unsafe {
                    asm!(
                        concat!("{{ .reg .b64 s, g; cvta.to.shared.u64 s, {d}; \
                            cvta.to.global.u64 g, {s}; ", $ptx, " [s], [g], ", $bytes, "; }}"),
                        d = in(reg64) dst as u64, s = in(reg64) src as u64,
                        options(nostack),
                    )
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    // The emulator copies at once (the waits are then no-ops).
                    let _ = crate::emu::thread("mem::async_copy::copy_*");
                    let bytes: usize = $bytes.parse().unwrap_or(0);
                    let loc = core::panic::Location::caller();
                    crate::emu::check_access(src as usize, bytes, crate::emu::AccessKind::Read, loc);
                    crate::emu::check_access(dst as usize, bytes, crate::emu::AccessKind::Write, loc);
                    // SAFETY: caller contract: both ranges valid, not overlapping (shared
                    // and global memory).
                    unsafe { core::ptr::copy_nonoverlapping(src, dst, bytes) }
                }
            }
        };
    }

    cp_async!(
        /// Starts an asynchronous copy of 4 bytes global → shared, cached in L1 and L2 (PTX
        /// `cp.async.ca.shared.global [dst], [src], 4`).
        copy_4, "4", "cp.async.ca.shared.global"
    );
    cp_async!(
        /// Starts an asynchronous copy of 8 bytes global → shared (PTX
        /// `cp.async.ca.shared.global [dst], [src], 8`).
        copy_8, "8", "cp.async.ca.shared.global"
    );
    cp_async!(
        /// Starts an asynchronous copy of 16 bytes global → shared, bypassing L1 (PTX
        /// `cp.async.cg.shared.global [dst], [src], 16`: the streaming choice for tiles).
        copy_16, "16", "cp.async.cg.shared.global"
    );

    /// Closes the group of this thread's copies issued since the previous commit (PTX
    /// `cp.async.commit_group`).
    #[inline(always)]
    pub fn commit_group() {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: no operands; orders nothing by itself.
        unsafe {
            asm!("cp.async.commit_group;", options(nostack))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = crate::emu::thread("mem::async_copy::commit_group");
        }
    }

    /// Waits until at most `N` of this thread's committed groups are still pending (PTX
    /// `cp.async.wait_group N`). `N = 0` waits for all committed groups.
    #[inline(always)]
    pub fn wait_group<const N: u32>() {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: no memory operands; not `nomem`: it makes the copied data visible to this
        // thread, so accesses must not move across it.
        unsafe {
            asm!("cp.async.wait_group {n};", n = const N, options(nostack))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = crate::emu::thread("mem::async_copy::wait_group");
        }
    }

    /// Waits for all of this thread's copies, committed or not (PTX `cp.async.wait_all`).
    #[inline(always)]
    pub fn wait_all() {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: as for `wait_group`.
        unsafe {
            asm!("cp.async.wait_all;", options(nostack))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = crate::emu::thread("mem::async_copy::wait_all");
        }
    }
}
