//! `warp` on the CPU emulator: every collective is a rendezvous of the lanes its mask
//! names (`cuda_emu::device::warp_op`); lane registers come from the thread's index.

use crate::warp::{ReduxOp, ShflMode};
use cuda_emu::device::{self, WarpKind};

macro_rules! lane_register {
    ($($name:ident: |$lane:ident| $host:expr;)*) => {$(
        #[track_caller]
        pub(crate) fn $name() -> u32 {
            let $lane = device::lane_id(concat!("warp::", stringify!($name)));
            $host
        }
    )*};
}

lane_register!(
    lane_id: |lane| lane;
    lanemask_lt: |lane| (1u32 << lane) - 1;
    lanemask_le: |lane| u32::MAX >> (31 - lane);
    lanemask_eq: |lane| 1u32 << lane;
    lanemask_ge: |lane| u32::MAX << lane;
    lanemask_gt: |lane| (u32::MAX << lane) << 1;
);

/// The emulator: the calling lane alone (it cannot tell which lanes would run together in
/// a branch; one lane is always a legal answer).
#[track_caller]
pub(crate) fn active_mask() -> u32 {
    device::active_mask("warp::active_mask")
}

/// # Safety
/// As `warp::sync_warp`.
#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn sync_warp(mask: u32) {
    device::warp_op("warp::sync_warp", WarpKind::SyncWarp, mask, 0, 0);
}

/// # Safety
/// As `warp::shfl_idx_sync` and friends.
#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn shfl_32(mode: ShflMode, mask: u32, a: u32, b: u32, c: u32) -> u32 {
    let kind = WarpKind::Shfl {
        mode: mode as u8,
        c,
    };
    device::warp_op("warp::shfl_*_sync", kind, mask, u64::from(a), b) as u32
}

/// # Safety
/// As `warp::shfl_idx_sync` and friends.
#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn shfl_64(mode: ShflMode, mask: u32, a: u64, b: u32, c: u32) -> u64 {
    let kind = WarpKind::Shfl {
        mode: mode as u8,
        c,
    };
    device::warp_op("warp::shfl_*_sync", kind, mask, a, b)
}

macro_rules! vote_pred {
    ($($name:ident, $kind:ident;)*) => {$(
        /// # Safety
        /// As the `warp` function of the same name.
        #[track_caller]
        #[cfg_attr(not(debug_assertions), inline(always))]
        pub(crate) unsafe fn $name(mask: u32, predicate: bool) -> bool {
            device::warp_op(concat!("warp::", stringify!($name)), WarpKind::$kind, mask,
                u64::from(predicate), 0) != 0
        }
    )*};
}

vote_pred!(vote_all_sync, VoteAll; vote_any_sync, VoteAny; vote_uni_sync, VoteUni;);

/// # Safety
/// As `warp::vote_ballot_sync`.
#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) unsafe fn vote_ballot_sync(mask: u32, predicate: bool) -> u32 {
    device::warp_op(
        "warp::vote_ballot_sync",
        WarpKind::Ballot,
        mask,
        u64::from(predicate),
        0,
    ) as u32
}

/// As `warp::match_any_bits`: `match.any` over the full warp on the value's low `BITS` bits.
#[track_caller]
pub(crate) unsafe fn match_any_bits<const BITS: u32>(value: u32) -> u32 {
    let low = if BITS >= 32 {
        u32::MAX
    } else {
        (1u32 << BITS) - 1
    };
    device::warp_op(
        "warp::match_any_bits",
        WarpKind::MatchAny,
        u32::MAX,
        u64::from(value & low),
        0,
    ) as u32
}

macro_rules! match_fns {
    ($($w:ident: $t:ty;)*) => {
        /// `match.any.sync` by operand width.
        pub(crate) mod match_any {
            use cuda_emu::device::{self, WarpKind};
            $(
                /// # Safety
                /// As `warp::match_any_sync`.
                #[track_caller]
                pub(crate) unsafe fn $w(mask: u32, a: $t) -> u32 {
                    device::warp_op("warp::match_any_sync", WarpKind::MatchAny, mask,
                        u64::from(a), 0) as u32
                }
            )*
        }
        /// `match.all.sync` by operand width.
        pub(crate) mod match_all {
            use cuda_emu::device::{self, WarpKind};
            $(
                /// # Safety
                /// As `warp::match_all_sync`.
                #[track_caller]
                pub(crate) unsafe fn $w(mask: u32, a: $t) -> Option<u32> {
                    let r = device::warp_op("warp::match_all_sync", WarpKind::MatchAll, mask,
                        u64::from(a), 0);
                    if r >> 32 != 0 { Some(r as u32) } else { None }
                }
            )*
        }
    };
}

match_fns!(b32: u32; b64: u64;);

/// `redux.sync` by operand type.
pub(crate) mod redux {
    use super::ReduxOp;
    use cuda_emu::device::{self, WarpKind};

    macro_rules! redux_int {
        ($($f:ident: $t:ty, $signed:literal;)*) => {$(
            /// # Safety
            /// As the `warp::redux_sync_*` functions.
            #[track_caller]
            pub(crate) unsafe fn $f(op: ReduxOp, mask: u32, a: $t) -> $t {
                let kind = WarpKind::Redux { op: op as u8, signed: $signed };
                device::warp_op("warp::redux_sync_*", kind, mask, u64::from(a as u32), 0) as $t
            }
        )*};
    }

    redux_int!(u32: u32, false; s32: i32, true;);
}
