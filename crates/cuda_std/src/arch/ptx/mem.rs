//! `mem` on the GPU: vector and read-only loads (PTX ISA §9.7.9.8 "ld", "ld.global.nc"),
//! stores, prefetches and `cp.async` (§9.7.9.25).

use core::arch::asm;

macro_rules! vec_load {
    ($name:ident, $t:ty, $n:literal, $ptx:literal, $rc:ident, [$($r:ident),+]) => {
        /// # Safety
        /// As the `mem` function of the same name.
        #[inline(always)]
        pub(crate) unsafe fn $name(ptr: *const $t) -> [$t; $n] {
            $( let $r: $t; )+
            // SAFETY: caller contract; `readonly`: the asm only reads memory.
            unsafe {
                asm!($ptx, p = in(reg64) ptr as u64, $( $r = out($rc) $r, )+
                    options(pure, readonly, nostack))
            };
            [$($r),+]
        }
    };
}

macro_rules! vec_store {
    ($name:ident, $t:ty, $n:literal, $ptx:literal, $rc:ident, [$($r:ident),+]) => {
        /// # Safety
        /// As the `mem` function of the same name.
        #[inline(always)]
        pub(crate) unsafe fn $name(ptr: *mut $t, value: [$t; $n]) {
            let [$($r),+] = value;
            // SAFETY: caller contract.
            unsafe {
                asm!($ptx, p = in(reg64) ptr as u64, $( $r = in($rc) $r, )+
                    options(nostack))
            };
        }
    };
}

vec_load!(
    load_v4_f32,
    f32,
    4,
    "ld.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
    reg32,
    [a, b, c, d]
);
vec_load!(
    load_v4_u32,
    u32,
    4,
    "ld.v4.u32 {{{a}, {b}, {c}, {d}}}, [{p}];",
    reg32,
    [a, b, c, d]
);
vec_load!(
    load_v2_f32,
    f32,
    2,
    "ld.v2.f32 {{{a}, {b}}}, [{p}];",
    reg32,
    [a, b]
);
vec_load!(
    load_v2_f64,
    f64,
    2,
    "ld.v2.f64 {{{a}, {b}}}, [{p}];",
    reg64,
    [a, b]
);
vec_load!(
    load_v4_f32_global_nc,
    f32,
    4,
    "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v4.f32 {{{a}, {b}, {c}, {d}}}, [g]; }}",
    reg32,
    [a, b, c, d]
);
vec_load!(
    load_v2_f64_global_nc,
    f64,
    2,
    "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; ld.global.nc.v2.f64 {{{a}, {b}}}, [g]; }}",
    reg64,
    [a, b]
);
vec_store!(
    store_v4_f32,
    f32,
    4,
    "st.v4.f32 [{p}], {{{a}, {b}, {c}, {d}}};",
    reg32,
    [a, b, c, d]
);
vec_store!(
    store_v4_u32,
    u32,
    4,
    "st.v4.u32 [{p}], {{{a}, {b}, {c}, {d}}};",
    reg32,
    [a, b, c, d]
);
vec_store!(
    store_v2_f32,
    f32,
    2,
    "st.v2.f32 [{p}], {{{a}, {b}}};",
    reg32,
    [a, b]
);
vec_store!(
    store_v2_f64,
    f64,
    2,
    "st.v2.f64 [{p}], {{{a}, {b}}};",
    reg64,
    [a, b]
);

/// A read-only global load of one 4- or 8-byte value (`ld.global.nc.b32` / `.b64`).
pub(crate) trait LoadNc: Copy {
    /// # Safety
    /// As `mem::load_global_nc`.
    unsafe fn load_nc(ptr: *const Self) -> Self;
}

macro_rules! load_nc {
    ($ty:literal, $rc:ident, $($t:ty),*) => {$(
        impl LoadNc for $t {
            #[inline(always)]
            unsafe fn load_nc(ptr: *const Self) -> Self {
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
        }
    )*};
}
load_nc!("b32", reg32, u32, i32, f32);
load_nc!("b64", reg64, u64, i64, f64);

/// # Safety
/// As `mem::load_global_nc`.
#[inline(always)]
pub(crate) unsafe fn load_nc<T: LoadNc>(ptr: *const T) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::load_nc(ptr) }
}

/// # Safety
/// As `mem::prefetch_l2`.
#[inline(always)]
pub(crate) unsafe fn prefetch_l2(ptr: *const u8) {
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; prefetch.global.L2 [g]; }}",
            p = in(reg64) ptr as u64,
            options(readonly, nostack),
        )
    }
}

/// # Safety
/// As `mem::prefetch_l1`.
#[inline(always)]
pub(crate) unsafe fn prefetch_l1(ptr: *const u8) {
    // SAFETY: caller contract.
    unsafe {
        asm!(
            "{{ .reg .b64 g; cvta.to.global.u64 g, {p}; prefetch.global.L1 [g]; }}",
            p = in(reg64) ptr as u64,
            options(readonly, nostack),
        )
    }
}

macro_rules! cp_async {
    ($($name:ident, $bytes:literal, $ptx:literal;)*) => {$(
        /// # Safety
        /// As `mem::async_copy`'s function of the same name.
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub(crate) unsafe fn $name(dst: *mut u8, src: *const u8) {
            // SAFETY: caller contract.
            unsafe {
                asm!(
                    concat!("{{ .reg .b64 s, g; cvta.to.shared.u64 s, {d}; \
                        cvta.to.global.u64 g, {s}; ", $ptx, " [s], [g], ", $bytes, "; }}"),
                    d = in(reg64) dst as u64, s = in(reg64) src as u64,
                    options(nostack),
                )
            }
        }
    )*};
}

cp_async!(
    copy_4, "4", "cp.async.ca.shared.global";
    copy_8, "8", "cp.async.ca.shared.global";
    copy_16, "16", "cp.async.cg.shared.global";
);

#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn commit_group() {
    // SAFETY: no operands; orders nothing by itself.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn wait_group<const N: u32>() {
    // SAFETY: no memory operands; not `nomem`: it makes the copied data visible to this
    // thread, so accesses must not move across it.
    unsafe { asm!("cp.async.wait_group {n};", n = const N, options(nostack)) }
}

#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn wait_all() {
    // SAFETY: as for `wait_group`.
    unsafe { asm!("cp.async.wait_all;", options(nostack)) }
}

/// A plain store of `size` bytes at `ptr` through a checked path (`OutSlice::write`): a
/// plain `st.global` on the GPU, so nothing to do here.
#[inline(always)]
pub(crate) fn note_store(_ptr: *const u8, _size: usize) {}
