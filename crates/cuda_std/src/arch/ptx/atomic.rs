//! `atomic` on the GPU: `atom`, `ld`/`st` with a memory-model order and scope (PTX ISA
//! §9.7.13.5 "atom", §9.7.9.8 "ld", §8 "Memory Consistency Model"), and `fence`. A
//! `SeqCst` operation is `fence.sc` followed by the acquire form, as the PTX ISA's
//! mapping of C++'s `memory_order_seq_cst` prescribes.

use crate::atomic::{Ordering, ScopeKind};
use core::arch::asm;

/// Calls `$m!(fence, sem, scope, rest...)` with the PTX strings of a read-modify-write of
/// `$order` at `$scope`.
macro_rules! rmw_dispatch {
    ($scope:expr, $order:expr, $m:ident!($($rest:tt)*)) => {
        match ($scope, $order) {
            (ScopeKind::Block, Ordering::Relaxed) => $m!("", ".relaxed", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::Acquire) => $m!("", ".acquire", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::Release) => $m!("", ".release", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::AcqRel) => $m!("", ".acq_rel", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::SeqCst) => $m!("fence.sc.cta; ", ".acquire", ".cta", $($rest)*),
            (ScopeKind::Device, Ordering::Relaxed) => $m!("", ".relaxed", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::Acquire) => $m!("", ".acquire", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::Release) => $m!("", ".release", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::AcqRel) => $m!("", ".acq_rel", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::SeqCst) => $m!("fence.sc.gpu; ", ".acquire", ".gpu", $($rest)*),
            (ScopeKind::System, Ordering::Relaxed) => $m!("", ".relaxed", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::Acquire) => $m!("", ".acquire", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::Release) => $m!("", ".release", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::AcqRel) => $m!("", ".acq_rel", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::SeqCst) => $m!("fence.sc.sys; ", ".acquire", ".sys", $($rest)*),
            (_, _) => panic!("unsupported atomic ordering"),
        }
    };
}

/// Like `rmw_dispatch` for loads: Relaxed, Acquire, SeqCst (fence.sc + ld.acquire).
macro_rules! load_dispatch {
    ($scope:expr, $order:expr, $m:ident!($($rest:tt)*)) => {
        match ($scope, $order) {
            (ScopeKind::Block, Ordering::Relaxed) => $m!("", ".relaxed", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::Acquire) => $m!("", ".acquire", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::SeqCst) => $m!("fence.sc.cta; ", ".acquire", ".cta", $($rest)*),
            (ScopeKind::Device, Ordering::Relaxed) => $m!("", ".relaxed", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::Acquire) => $m!("", ".acquire", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::SeqCst) => $m!("fence.sc.gpu; ", ".acquire", ".gpu", $($rest)*),
            (ScopeKind::System, Ordering::Relaxed) => $m!("", ".relaxed", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::Acquire) => $m!("", ".acquire", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::SeqCst) => $m!("fence.sc.sys; ", ".acquire", ".sys", $($rest)*),
            (_, _) => panic!("there is no such thing as a release (or acq_rel) atomic load"),
        }
    };
}

/// Like `rmw_dispatch` for stores: Relaxed, Release, SeqCst (fence.sc + st.relaxed).
macro_rules! store_dispatch {
    ($scope:expr, $order:expr, $m:ident!($($rest:tt)*)) => {
        match ($scope, $order) {
            (ScopeKind::Block, Ordering::Relaxed) => $m!("", ".relaxed", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::Release) => $m!("", ".release", ".cta", $($rest)*),
            (ScopeKind::Block, Ordering::SeqCst) => $m!("fence.sc.cta; ", ".relaxed", ".cta", $($rest)*),
            (ScopeKind::Device, Ordering::Relaxed) => $m!("", ".relaxed", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::Release) => $m!("", ".release", ".gpu", $($rest)*),
            (ScopeKind::Device, Ordering::SeqCst) => $m!("fence.sc.gpu; ", ".relaxed", ".gpu", $($rest)*),
            (ScopeKind::System, Ordering::Relaxed) => $m!("", ".relaxed", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::Release) => $m!("", ".release", ".sys", $($rest)*),
            (ScopeKind::System, Ordering::SeqCst) => $m!("fence.sc.sys; ", ".relaxed", ".sys", $($rest)*),
            (_, _) => panic!("there is no such thing as an acquire (or acq_rel) atomic store"),
        }
    };
}

/// `atom{sem}{scope}.{op}.{ty} old, [ptr], val;`
macro_rules! atom_asm {
    ($fence:literal, $sem:literal, $scope:literal, $op:literal, $ty:literal, $rc:ident, $old:ident, $ptr:ident, $val:ident) => {
        // SAFETY: the caller guarantees `ptr` is valid for an atomic access (module docs).
        unsafe {
            asm!(
                concat!($fence, "atom", $sem, $scope, ".", $op, ".", $ty, " {old}, [{ptr}], {val};"),
                old = out($rc) $old, ptr = in(reg64) $ptr, val = in($rc) $val,
                options(nostack),
            )
        }
    };
}

macro_rules! cas_asm {
    ($fence:literal, $sem:literal, $scope:literal, $ty:literal, $rc:ident, $old:ident, $ptr:ident, $cmp:ident, $new:ident) => {
        // SAFETY: as in `atom_asm`.
        unsafe {
            asm!(
                concat!($fence, "atom", $sem, $scope, ".cas.", $ty, " {old}, [{ptr}], {cmp}, {new};"),
                old = out($rc) $old, ptr = in(reg64) $ptr, cmp = in($rc) $cmp, new = in($rc) $new,
                options(nostack),
            )
        }
    };
}

macro_rules! ld_asm {
    ($fence:literal, $sem:literal, $scope:literal, $ty:literal, $rc:ident, $val:ident, $ptr:ident) => {
        // SAFETY: as in `atom_asm`.
        unsafe {
            asm!(
                concat!($fence, "ld", $sem, $scope, ".", $ty, " {val}, [{ptr}];"),
                val = out($rc) $val, ptr = in(reg64) $ptr,
                options(nostack),
            )
        }
    };
}

macro_rules! st_asm {
    ($fence:literal, $sem:literal, $scope:literal, $ty:literal, $rc:ident, $ptr:ident, $val:ident) => {
        // SAFETY: as in `atom_asm`.
        unsafe {
            asm!(
                concat!($fence, "st", $sem, $scope, ".", $ty, " [{ptr}], {val};"),
                ptr = in(reg64) $ptr, val = in($rc) $val,
                options(nostack),
            )
        }
    };
}

/// Defines `unsafe fn $name(ptr: *mut $t, val: $t, scope, order) -> $t` for one `atom` op.
macro_rules! raw_rmw {
    ($name:ident, $t:ty, $op:literal, $ty:literal, $rc:ident) => {
        #[inline(always)]
        pub(crate) unsafe fn $name(ptr: *mut $t, val: $t, scope: ScopeKind, order: Ordering) -> $t {
            {
                let old: $t;
                let ptr = ptr as u64;
                rmw_dispatch!(scope, order, atom_asm!($op, $ty, $rc, old, ptr, val));
                old
            }
        }
    };
}

raw_rmw!(add_u32, u32, "add", "u32", reg32);
raw_rmw!(add_u64, u64, "add", "u64", reg64);
raw_rmw!(add_f32, f32, "add", "f32", reg32);
raw_rmw!(add_f64, f64, "add", "f64", reg64);
raw_rmw!(min_u32, u32, "min", "u32", reg32);
raw_rmw!(min_s32, i32, "min", "s32", reg32);
raw_rmw!(min_u64, u64, "min", "u64", reg64);
raw_rmw!(min_s64, i64, "min", "s64", reg64);
raw_rmw!(max_u32, u32, "max", "u32", reg32);
raw_rmw!(max_s32, i32, "max", "s32", reg32);
raw_rmw!(max_u64, u64, "max", "u64", reg64);
raw_rmw!(max_s64, i64, "max", "s64", reg64);
raw_rmw!(and_b32, u32, "and", "b32", reg32);
raw_rmw!(or_b32, u32, "or", "b32", reg32);
raw_rmw!(xor_b32, u32, "xor", "b32", reg32);
raw_rmw!(and_b64, u64, "and", "b64", reg64);
raw_rmw!(or_b64, u64, "or", "b64", reg64);
raw_rmw!(xor_b64, u64, "xor", "b64", reg64);
raw_rmw!(exch_b32, u32, "exch", "b32", reg32);
raw_rmw!(exch_b64, u64, "exch", "b64", reg64);

macro_rules! raw_bits {
    ($cas:ident, $ld:ident, $st:ident, $t:ty, $ty:literal, $rc:ident) => {
        #[inline(always)]
        pub(crate) unsafe fn $cas(
            ptr: *mut $t,
            cmp: $t,
            new: $t,
            scope: ScopeKind,
            order: Ordering,
        ) -> $t {
            {
                let old: $t;
                let ptr = ptr as u64;
                rmw_dispatch!(scope, order, cas_asm!($ty, $rc, old, ptr, cmp, new));
                old
            }
        }

        #[inline(always)]
        pub(crate) unsafe fn $ld(ptr: *const $t, scope: ScopeKind, order: Ordering) -> $t {
            {
                let val: $t;
                let ptr = ptr as u64;
                load_dispatch!(scope, order, ld_asm!($ty, $rc, val, ptr));
                val
            }
        }

        #[inline(always)]
        pub(crate) unsafe fn $st(ptr: *mut $t, val: $t, scope: ScopeKind, order: Ordering) {
            {
                let ptr = ptr as u64;
                store_dispatch!(scope, order, st_asm!($ty, $rc, ptr, val));
            }
        }
    };
}

raw_bits!(cas_b32, ld_b32, st_b32, u32, "b32", reg32);
raw_bits!(cas_b64, ld_b64, st_b64, u64, "b64", reg64);

#[inline(always)]
pub(crate) fn fence(scope: ScopeKind, order: Ordering) {
    macro_rules! f {
        ($ptx:literal) => {
            // SAFETY: a fence has no operands and no preconditions.
            unsafe { asm!($ptx, options(nostack)) }
        };
    }
    match (scope, order) {
        (_, Ordering::Relaxed) => panic!("there is no such thing as a relaxed fence"),
        (ScopeKind::Block, Ordering::SeqCst) => f!("fence.sc.cta;"),
        (ScopeKind::Device, Ordering::SeqCst) => f!("fence.sc.gpu;"),
        (ScopeKind::System, Ordering::SeqCst) => f!("fence.sc.sys;"),
        (ScopeKind::Block, _) => f!("fence.acq_rel.cta;"),
        (ScopeKind::Device, _) => f!("fence.acq_rel.gpu;"),
        (ScopeKind::System, _) => f!("fence.acq_rel.sys;"),
    }
}
