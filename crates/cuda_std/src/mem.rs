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

macro_rules! vec_load {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The [module's rules](self): `ptr` aligned to the vector's size, valid for reading
        /// it, no racing writes.
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub unsafe fn $name(ptr: *const $t) -> [$t; $n] {
            // SAFETY: the caller's contract.
            unsafe { crate::arch::mem::$name(ptr) }
        }
    };
}

macro_rules! vec_store {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The [module's rules](self): `ptr` aligned to the vector's size, valid for writing
        /// it, no racing accesses.
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(ptr: *mut $t, value: [$t; $n]) {
            // SAFETY: the caller's contract.
            unsafe { crate::arch::mem::$name(ptr, value) }
        }
    };
}

vec_load!(
    /// Loads 4 `f32` with one 16-byte access (PTX `ld.v4.f32`, CUDA C `float4` load; all
    /// compute capabilities). `ptr` must be 16-byte aligned.
    load_v4_f32, f32, 4
);
vec_load!(
    /// Loads 4 `u32` with one 16-byte access (PTX `ld.v4.u32`). `ptr` must be 16-byte aligned.
    load_v4_u32, u32, 4
);
vec_load!(
    /// Loads 2 `f32` with one 8-byte access (PTX `ld.v2.f32`). `ptr` must be 8-byte aligned.
    load_v2_f32, f32, 2
);
vec_load!(
    /// Loads 2 `f64` with one 16-byte access (PTX `ld.v2.f64`, CUDA C `double2` load).
    /// `ptr` must be 16-byte aligned.
    load_v2_f64, f64, 2
);
vec_load!(
    /// Loads 4 `f32` from global memory through the read-only data cache (PTX
    /// `ld.global.nc.v4.f32`, CUDA C `__ldg(float4*)`; sm_35+). `ptr` must be 16-byte aligned,
    /// point to **global** memory, and the data must not be written by any thread during the
    /// kernel (the non-coherent cache may return stale values otherwise).
    load_v4_f32_global_nc, f32, 4
);
vec_load!(
    /// Loads 2 `f64` from global memory through the read-only data cache (PTX
    /// `ld.global.nc.v2.f64`; sm_35+). Same rules as [`load_v4_f32_global_nc`].
    load_v2_f64_global_nc, f64, 2
);
vec_store!(
    /// Stores 4 `f32` with one 16-byte access (PTX `st.v4.f32`). `ptr` must be 16-byte
    /// aligned.
    store_v4_f32, f32, 4
);
vec_store!(
    /// Stores 4 `u32` with one 16-byte access (PTX `st.v4.u32`). `ptr` must be 16-byte
    /// aligned.
    store_v4_u32, u32, 4
);
vec_store!(
    /// Stores 2 `f32` with one 8-byte access (PTX `st.v2.f32`). `ptr` must be 8-byte aligned.
    store_v2_f32, f32, 2
);
vec_store!(
    /// Stores 2 `f64` with one 16-byte access (PTX `st.v2.f64`). `ptr` must be 16-byte
    /// aligned.
    store_v2_f64, f64, 2
);

/// A 4- or 8-byte value for [`load_global_nc`]: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
pub trait NcValue: Copy {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn load_nc(ptr: *const Self) -> Self;
}

macro_rules! nc_value {
    ($($t:ty),*) => {$(
        impl NcValue for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn load_nc(ptr: *const Self) -> Self {
                // SAFETY: forwarded to the caller.
                unsafe { crate::arch::mem::load_nc(ptr) }
            }
        }
    )*};
}
nc_value!(u32, i32, f32, u64, i64, f64);

/// Loads one value from global memory through the read-only data cache (PTX
/// `ld.global.nc.b32` / `.b64`, CUDA C `__ldg`; sm_35+).
///
/// # Safety
/// `ptr` is aligned, points to **global** memory valid for reads, and no thread writes the
/// location during the kernel (the non-coherent cache may return stale values otherwise).
#[inline(always)]
#[must_use]
#[track_caller]
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
    // SAFETY: the caller's contract.
    unsafe { crate::arch::mem::prefetch_l2(ptr.cast()) }
}

/// Hints the memory system to bring the line holding `ptr` into the L1 cache (PTX
/// `prefetch.global.L1`; sm_20+).
///
/// # Safety
/// As for [`prefetch_l2`].
#[inline(always)]
pub unsafe fn prefetch_l1<T>(ptr: *const T) {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::mem::prefetch_l1(ptr.cast()) }
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
            #[track_caller]
            pub unsafe fn $name(dst: *mut u8, src: *const u8) {
                // SAFETY: the caller's contract.
                unsafe { crate::arch::mem::$name(dst, src) }
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

    /// Starts an asynchronous 16-byte copy global → shared that copies the first
    /// `src_bytes` bytes of `src` to the shared address `dst` and fills the rest of the 16
    /// with zeros, bypassing L1; where `guard` is false, does nothing. PTX `@p
    /// cp.async.cg.shared.global [dst], [src], 16, src_bytes` (PTX ISA §9.7.9.25 "cp.async":
    /// the optional `src-size` operand, "the remaining bytes ... are filled with zeros"):
    /// the guard is the instruction's predicate and `src_bytes` a register, so neither is a
    /// branch. With `src_bytes` 16 it is [`copy_16`] at a shared address; with 0 it writes
    /// 16 zeros without reading `src` (edge tiles of a GEMM). Completion as [`copy_16`]'s
    /// ([`commit_group`], [`wait_group`]).
    ///
    /// # Safety
    /// Where `guard` is true:
    /// - `src_bytes <= 16` (PTX: `src-size` at most the copy size);
    /// - `dst` is a shared address of this block's shared memory, 16-byte aligned, with the
    ///   16 bytes from it inside one shared array;
    /// - if `src_bytes > 0`, `src` points to **global** memory, 16-byte aligned and valid
    ///   for reading `src_bytes` bytes;
    /// - neither range is accessed by other code until the copy has completed
    ///   ([`wait_all`] / [`wait_group`], plus a barrier for other threads).
    ///
    /// On the CPU emulator the copy happens at once, as the other copies', to the `dst` of
    /// any of the block's shared allocations (see [`shared::window`](crate::shared::window)).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn copy_16_zero_fill(
        dst: crate::shared::window::SharedAddr,
        src: *const u8,
        src_bytes: u32,
        guard: bool,
    ) {
        // SAFETY: the caller's contract.
        unsafe { crate::arch::window::copy_16_zero_fill(dst.to_bits(), src, src_bytes, guard) }
    }

    /// Closes the group of this thread's copies issued since the previous commit (PTX
    /// `cp.async.commit_group`).
    #[inline(always)]
    pub fn commit_group() {
        crate::arch::mem::commit_group()
    }

    /// Waits until at most `N` of this thread's committed groups are still pending (PTX
    /// `cp.async.wait_group N`). `N = 0` waits for all committed groups.
    #[inline(always)]
    pub fn wait_group<const N: u32>() {
        crate::arch::mem::wait_group::<N>()
    }

    /// Waits for all of this thread's copies, committed or not (PTX `cp.async.wait_all`).
    #[inline(always)]
    pub fn wait_all() {
        crate::arch::mem::wait_all()
    }
}
