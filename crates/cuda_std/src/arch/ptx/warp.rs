//! `warp` on the GPU: lane registers (PTX ISA §10), `activemask`, `bar.warp.sync`,
//! `shfl.sync`, `vote.sync`, `match.sync` and `redux.sync` (§9.7 "Parallel Synchronization
//! and Communication Instructions").

use crate::warp::{ReduxOp, ShflMode};
use core::arch::asm;

macro_rules! lane_register {
    ($($name:ident, $reg:literal;)*) => {$(
        #[inline(always)]
        pub(crate) fn $name() -> u32 {
            let r: u32;
            // SAFETY: reads a per-thread constant special register.
            unsafe {
                asm!(concat!("mov.u32 {r}, ", $reg, ";"), r = out(reg32) r,
                    options(pure, nomem, nostack))
            };
            r
        }
    )*};
}

lane_register!(
    lane_id, "%laneid";
    lanemask_lt, "%lanemask_lt";
    lanemask_le, "%lanemask_le";
    lanemask_eq, "%lanemask_eq";
    lanemask_ge, "%lanemask_ge";
    lanemask_gt, "%lanemask_gt";
);

#[inline(always)]
pub(crate) fn active_mask() -> u32 {
    let m: u32;
    // SAFETY: no operands besides the result. Not `pure`: the value depends on control
    // flow, so it must not be hoisted or merged.
    unsafe { asm!("activemask.b32 {m};", m = out(reg32) m, options(nomem, nostack)) };
    m
}

/// # Safety
/// As `warp::sync_warp`.
#[inline(always)]
pub(crate) unsafe fn sync_warp(mask: u32) {
    // SAFETY: caller contract. Not `nomem`: it orders memory accesses.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) mask, options(nostack)) }
}

/// One `shfl.sync` of 32 bits.
///
/// # Safety
/// As `warp::shfl_idx_sync` and friends.
#[inline(always)]
pub(crate) unsafe fn shfl_32(mode: ShflMode, mask: u32, a: u32, b: u32, c: u32) -> u32 {
    let d: u32;
    macro_rules! shfl {
        ($mode:literal) => {
            // SAFETY: caller contract (module docs); register operands only.
            unsafe {
                asm!(
                    concat!("shfl.sync.", $mode, ".b32 {d}, {a}, {b}, {c}, {m};"),
                    d = out(reg32) d, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c,
                    m = in(reg32) mask, options(nomem, nostack),
                )
            }
        };
    }
    match mode {
        ShflMode::Idx => shfl!("idx"),
        ShflMode::Up => shfl!("up"),
        ShflMode::Down => shfl!("down"),
        ShflMode::Xor => shfl!("bfly"),
    }
    d
}

/// A 64-bit shuffle: two 32-bit shuffles with the same lane mapping.
///
/// # Safety
/// As [`shfl_32`].
#[inline(always)]
pub(crate) unsafe fn shfl_64(mode: ShflMode, mask: u32, a: u64, b: u32, c: u32) -> u64 {
    // SAFETY: forwarded to the caller; both halves use the same lane mapping.
    let (lo, hi) = unsafe {
        (
            shfl_32(mode, mask, a as u32, b, c),
            shfl_32(mode, mask, (a >> 32) as u32, b, c),
        )
    };
    u64::from(lo) | (u64::from(hi) << 32)
}

macro_rules! vote_pred {
    ($($name:ident, $mode:literal;)*) => {$(
        /// # Safety
        /// As the `warp` function of the same name.
        #[inline(always)]
        pub(crate) unsafe fn $name(mask: u32, predicate: bool) -> bool {
            let r: u32;
            // SAFETY: caller contract; register operands only.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p, q; setp.ne.u32 p, {x}, 0; vote.sync.",
                        $mode, ".pred q, p, {m}; selp.u32 {r}, 1, 0, q; }}"),
                    x = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r,
                    options(nomem, nostack),
                )
            };
            r != 0
        }
    )*};
}

vote_pred!(vote_all_sync, "all"; vote_any_sync, "any"; vote_uni_sync, "uni";);

/// # Safety
/// As `warp::vote_ballot_sync`.
#[inline(always)]
pub(crate) unsafe fn vote_ballot_sync(mask: u32, predicate: bool) -> u32 {
    let r: u32;
    // SAFETY: caller contract; register operands only.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {x}, 0; vote.sync.ballot.b32 {r}, p, {m}; }}",
            x = in(reg32) predicate as u32, m = in(reg32) mask, r = out(reg32) r,
            options(nomem, nostack),
        )
    };
    r
}

/// As `warp::match_any_bits`.
#[inline(always)]
pub(crate) unsafe fn match_any_bits<const BITS: u32>(value: u32) -> u32 {
    let mut peers = u32::MAX;
    // A constant trip count: unrolled, each `bit` an immediate after folding.
    for b in 0..BITS {
        // SAFETY: caller contract (the whole warp, converged); register operands only.
        unsafe {
            asm!(
                "{{ .reg .pred p; .reg .b32 t; and.b32 t, {v}, {bit}; setp.ne.u32 p, t, 0; \
                 vote.sync.ballot.b32 t, p, 0xffffffff; @!p not.b32 t, t; \
                 and.b32 {peers}, {peers}, t; }}",
                v = in(reg32) value, bit = in(reg32) 1u32 << b, peers = inout(reg32) peers,
                options(nomem, nostack),
            )
        };
    }
    peers
}

macro_rules! match_fns {
    ($($w:ident: $t:ty, $rc:ident, $ty:literal;)*) => {
        /// `match.any.sync` by operand width.
        pub(crate) mod match_any {
            use core::arch::asm;
            $(
                /// # Safety
                /// As `warp::match_any_sync`.
                #[inline(always)]
                pub(crate) unsafe fn $w(mask: u32, a: $t) -> u32 {
                    let d: u32;
                    // SAFETY: caller contract; register operands only.
                    unsafe {
                        asm!(concat!("match.any.sync.", $ty, " {d}, {a}, {m};"),
                            d = out(reg32) d, a = in($rc) a,
                            m = in(reg32) mask, options(nomem, nostack))
                    };
                    d
                }
            )*
        }
        /// `match.all.sync` by operand width.
        pub(crate) mod match_all {
            use core::arch::asm;
            $(
                /// # Safety
                /// As `warp::match_all_sync`.
                #[inline(always)]
                pub(crate) unsafe fn $w(mask: u32, a: $t) -> Option<u32> {
                    let (d, ok): (u32, u32);
                    // SAFETY: caller contract; register operands only.
                    unsafe {
                        asm!(concat!("{{ .reg .pred p; match.all.sync.", $ty,
                                " {d}|p, {a}, {m}; selp.u32 {ok}, 1, 0, p; }}"),
                            d = out(reg32) d, ok = out(reg32) ok, a = in($rc) a,
                            m = in(reg32) mask, options(nomem, nostack))
                    };
                    if ok != 0 { Some(d) } else { None }
                }
            )*
        }
    };
}

match_fns!(b32: u32, reg32, "b32"; b64: u64, reg64, "b64";);

/// `redux.sync` by operand type (sm_80+).
pub(crate) mod redux {
    use super::ReduxOp;
    #[cfg(target_feature = "sm_80")]
    use core::arch::asm;

    macro_rules! redux_int {
        ($($f:ident: $t:ty, $arith:literal;)*) => {$(
            /// # Safety
            /// As the `warp::redux_sync_*` functions.
            #[inline(always)]
            pub(crate) unsafe fn $f(op: ReduxOp, mask: u32, a: $t) -> $t {
                #[cfg(target_feature = "sm_80")]
                {
                    let d: $t;
                    macro_rules! redux {
                        ($op:literal, $ty:literal) => {
                            // SAFETY: caller contract; register operands only.
                            unsafe {
                                asm!(concat!("redux.sync.", $op, ".", $ty, " {d}, {a}, {m};"),
                                    d = out(reg32) d, a = in(reg32) a, m = in(reg32) mask,
                                    options(nomem, nostack))
                            }
                        };
                    }
                    match op {
                        ReduxOp::Add => redux!("add", $arith),
                        ReduxOp::Min => redux!("min", $arith),
                        ReduxOp::Max => redux!("max", $arith),
                        ReduxOp::And => redux!("and", "b32"),
                        ReduxOp::Or => redux!("or", "b32"),
                        ReduxOp::Xor => redux!("xor", "b32"),
                    }
                    d
                }
                #[cfg(not(target_feature = "sm_80"))]
                {
                    let _ = (op, mask, a);
                    // Unreachable: the public `redux_sync_*` functions do not exist below
                    // sm_80, so nothing can call this.
                    // SAFETY: `trap` has no preconditions.
                    unsafe { core::arch::nvptx::trap() }
                }
            }
        )*};
    }

    redux_int!(u32: u32, "u32"; s32: i32, "s32";);
}
