//! `atomic` on the CPU emulator: every operation is a host atomic with `SeqCst` ordering
//! (at least as strong as any order asked for), after the bounds check; the scope and the
//! order asked for go to the race checks, for which release and acquire operations and
//! fences order plain accesses (`cuda_emu`'s `order.rs`). Loads, and
//! compare-and-swaps and read-modify-writes that leave memory unchanged, are polls: one
//! repeated at the same call lets the block's other threads run
//! (`cuda_emu::device::atomic_load`), so a spin loop built of them makes progress without
//! `nanosleep`, and one that can never end is reported as a livelock.

use crate::atomic::{Ordering, ScopeKind};
use cuda_emu::device::{self, AccessKind, MemScope, atomics::Op};

/// The emulator's name for `scope`.
pub(crate) fn mem_scope(scope: ScopeKind) -> MemScope {
    match scope {
        ScopeKind::Block => MemScope::Block,
        ScopeKind::Device => MemScope::Device,
        ScopeKind::System => MemScope::System,
    }
}

/// The `cuda_std` name of `atom`'s operation `op`, for reports.
const fn rmw_name(op: &str) -> &'static str {
    match op.as_bytes() {
        b"add" => "atomic::fetch_add",
        b"min" => "atomic::fetch_min",
        b"max" => "atomic::fetch_max",
        b"and" => "atomic::fetch_and",
        b"or" => "atomic::fetch_or",
        b"xor" => "atomic::fetch_xor",
        _ => "atomic::exchange",
    }
}

/// Defines `unsafe fn $name(ptr: *mut $t, val: $t, scope, order) -> $t` for one `atom` op.
macro_rules! raw_rmw {
    ($name:ident, $t:ty, $op:literal, $ty:literal, $rc:ident) => {
        #[track_caller]
        pub(crate) unsafe fn $name(ptr: *mut $t, val: $t, scope: ScopeKind, order: Ordering) -> $t {
            {
                device::enter("atomic::*");
                device::check_access(
                    ptr as usize,
                    core::mem::size_of::<$t>(),
                    AccessKind::Atomic,
                    core::panic::Location::caller(),
                );
                // SAFETY: forwarded to the caller (module docs); checked above on the emulator.
                unsafe {
                    device::atomic_rmw(
                        rmw_name($op),
                        ptr,
                        Op::from_ptx($op),
                        val,
                        mem_scope(scope),
                        order,
                    )
                }
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
        #[track_caller]
        pub(crate) unsafe fn $cas(
            ptr: *mut $t,
            cmp: $t,
            new: $t,
            scope: ScopeKind,
            order: Ordering,
        ) -> $t {
            {
                device::enter("atomic::compare_exchange");
                device::check_access(
                    ptr as usize,
                    core::mem::size_of::<$t>(),
                    AccessKind::Atomic,
                    core::panic::Location::caller(),
                );
                // SAFETY: as in `raw_rmw`.
                unsafe {
                    device::atomic_cas(
                        "atomic::compare_exchange",
                        ptr,
                        cmp,
                        new,
                        mem_scope(scope),
                        order,
                    )
                }
            }
        }

        #[track_caller]
        pub(crate) unsafe fn $ld(ptr: *const $t, scope: ScopeKind, order: Ordering) -> $t {
            {
                device::enter("atomic::load");
                device::check_access(
                    ptr as usize,
                    core::mem::size_of::<$t>(),
                    AccessKind::AtomicLoad,
                    core::panic::Location::caller(),
                );
                // SAFETY: as in `raw_rmw`.
                unsafe { device::atomic_load("atomic::load", ptr, mem_scope(scope), order) }
            }
        }

        #[track_caller]
        pub(crate) unsafe fn $st(ptr: *mut $t, val: $t, scope: ScopeKind, order: Ordering) {
            {
                device::enter("atomic::store");
                device::check_access(
                    ptr as usize,
                    core::mem::size_of::<$t>(),
                    AccessKind::Atomic,
                    core::panic::Location::caller(),
                );
                // SAFETY: as in `raw_rmw`.
                unsafe { device::atomic_store("atomic::store", ptr, val, mem_scope(scope), order) }
            }
        }
    };
}

raw_bits!(cas_b32, ld_b32, st_b32, u32, "b32", reg32);
raw_bits!(cas_b64, ld_b64, st_b64, u64, "b64", reg64);

#[track_caller]
pub(crate) fn fence(scope: ScopeKind, order: Ordering) {
    // A host `SeqCst` fence; the race checks learn its release and acquire.
    device::fence("atomic::fence", mem_scope(scope), order);
}
