//! Warp-level primitives: lane ids and masks, warp barrier, shuffles, votes, `match.sync`
//! and `redux.sync`.
//!
//! A warp is 32 threads (lanes) of a block with consecutive linear thread indices
//! ([`crate::thread::thread_idx_linear`]). The `*_sync` collectives take a `mask` of the lanes
//! that take part (bit `i` = lane `i`; [`FULL_MASK`] for the whole warp).
//!
//! # Safety of the collectives
//! The PTX ISA leaves the result undefined (and a hang possible) unless, for every call:
//! 1. the calling lane is in `mask`;
//! 2. every non-exited lane in `mask` executes a `*_sync` operation of the same kind, with
//!    the same qualifiers (mode, width/clamp, type) and the same `mask`, before any of them
//!    proceeds (on sm_70+ they need not execute the same *instance* of it);
//! 3. `mask` does not name lanes that will never execute it (lanes that skip the call in
//!    divergent code, or lanes past the end of a partial last warp of the block — those do
//!    not exist and count as exited, which is fine for shuffles and votes but leaves their
//!    shuffle sources undefined).
//!
//! [`active_mask`] gives the lanes executing the current instruction, but it is not a safe
//! substitute for a mask computed from the program's control flow (lanes may reconverge
//! later than you expect); prefer masks derived from data, e.g. a [`vote_ballot_sync`] over
//! the condition that caused divergence.
//!
//! Everything here needs sm_70+ (our baseline) unless noted; [`redux_sync_add`] and friends
//! need sm_80.

/// Threads per warp on every NVIDIA GPU so far (PTX `WARP_SZ`).
pub const WARP_SIZE: u32 = 32;

/// The mask naming all 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

macro_rules! lane_register {
    ($(#[$doc:meta])* $name:ident, $reg:literal, |$lane:ident| $host:expr) => {
        $(#[$doc])*
        #[doc = concat!("\n\nPTX: `mov.u32 d, ", $reg, "` (PTX ISA §10, \"Special Registers\"); \
            all compute capabilities.")]
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub fn $name() -> u32 {
            crate::arch::warp::$name()
        }
    };
}

lane_register!(
    /// This thread's lane within its warp, `0..32`.
    lane_id,
    "%laneid",
    |lane| lane
);
lane_register!(
    /// Mask of the lanes below this one (`(1 << lane_id) - 1`): with a ballot, the number of
    /// lower lanes with a property is `(ballot & lanemask_lt()).count_ones()` (stream
    /// compaction).
    lanemask_lt,
    "%lanemask_lt",
    |lane| (1u32 << lane) - 1
);
lane_register!(
    /// Mask of this lane and the lanes below it.
    lanemask_le,
    "%lanemask_le",
    |lane| u32::MAX >> (31 - lane)
);
lane_register!(
    /// Mask of this lane only (`1 << lane_id`).
    lanemask_eq,
    "%lanemask_eq",
    |lane| 1u32 << lane
);
lane_register!(
    /// Mask of this lane and the lanes above it.
    lanemask_ge,
    "%lanemask_ge",
    |lane| u32::MAX << lane
);
lane_register!(
    /// Mask of the lanes above this one.
    lanemask_gt,
    "%lanemask_gt",
    |lane| (u32::MAX << lane) << 1
);

/// Index of this thread's warp within its block: `thread_idx_linear() / 32`.
///
/// Computed from `%tid`/`%ntid`, not read from PTX `%warpid` (which is a volatile hardware
/// slot number, not a stable index).
#[inline(always)]
#[must_use]
pub fn warp_id() -> u32 {
    crate::thread::thread_idx_linear() / WARP_SIZE
}

/// The lanes of this warp executing this instruction (CUDA C `__activemask()`).
///
/// PTX: `activemask.b32` (PTX ISA §9.7, "Parallel Synchronization and Communication
/// Instructions: activemask"); sm_30+, PTX ISA 6.2+. Not a synchronisation: see the module
/// docs before using it as a collective's mask.
#[inline(always)]
#[must_use]
pub fn active_mask() -> u32 {
    crate::arch::warp::active_mask()
}

/// Warp barrier: waits until every lane in `mask` has reached a `sync_warp` with the same
/// mask, and orders memory among them (CUDA C `__syncwarp(mask)`). Use it between writing and
/// reading shared memory within a warp.
///
/// PTX: `bar.warp.sync` (PTX ISA §9.7, "bar.warp.sync"); sm_30+, PTX ISA 6.0+.
///
/// # Safety
/// The calling lane is in `mask`, and every non-exited lane in `mask` calls `sync_warp` with
/// the same `mask` (module docs, rules 1–3). Otherwise the behaviour is undefined.
#[inline(always)]
#[track_caller]
pub unsafe fn sync_warp(mask: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::warp::sync_warp(mask) }
}

mod sealed {
    pub trait Sealed {}
}

#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Xor,
}

/// A value that can be shuffled between lanes: `u32`, `i32`, `f32` (one `shfl.sync`) and
/// `u64`, `i64`, `f64` (two `shfl.sync`, low and high halves, with the same lane mapping).
pub trait Shuffle: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn shuffle(self, mode: ShflMode, mask: u32, b: u32, c: u32) -> Self;
}

macro_rules! shuffle_32 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn shuffle(self, mode: ShflMode, mask: u32, b: u32, c: u32) -> Self {
                // SAFETY: forwarded to the caller.
                let bits = unsafe {
                    crate::arch::warp::shfl_32(mode, mask, self.to_bits_compat(), b, c)
                };
                <$t>::from_bits_compat(bits)
            }
        }
    )*};
}

macro_rules! shuffle_64 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn shuffle(self, mode: ShflMode, mask: u32, b: u32, c: u32) -> Self {
                // SAFETY: forwarded to the caller.
                let bits = unsafe {
                    crate::arch::warp::shfl_64(mode, mask, self.to_bits_compat(), b, c)
                };
                <$t>::from_bits_compat(bits)
            }
        }
    )*};
}

/// Bit conversions used by the generic collectives (`to_bits` exists only for floats).
trait Bits: Copy {
    type Bits;
    fn to_bits_compat(self) -> Self::Bits;
    fn from_bits_compat(bits: Self::Bits) -> Self;
}

macro_rules! bits_int {
    ($($t:ty => $b:ty),*) => {$(
        impl Bits for $t {
            type Bits = $b;
            #[inline(always)]
            fn to_bits_compat(self) -> $b { self as $b }
            #[inline(always)]
            fn from_bits_compat(bits: $b) -> Self { bits as $t }
        }
    )*};
}
bits_int!(u32 => u32, i32 => u32, u64 => u64, i64 => u64);

macro_rules! bits_float {
    ($($t:ty => $b:ty),*) => {$(
        impl Bits for $t {
            type Bits = $b;
            #[inline(always)]
            fn to_bits_compat(self) -> $b { self.to_bits() }
            #[inline(always)]
            fn from_bits_compat(bits: $b) -> Self { <$t>::from_bits(bits) }
        }
    )*};
}
bits_float!(f32 => u32, f64 => u64);

shuffle_32!(u32, i32, f32);
shuffle_64!(u64, i64, f64);

/// The `c` operand of `shfl.sync`: segment mask `(32 - width) << 8` and clamp (CUDA C's
/// `__shfl_*_sync` encoding, CUDA C Programming Guide "Warp Shuffle Functions").
#[inline(always)]
fn shfl_c(width: u32, clamp: u32) -> u32 {
    ((WARP_SIZE - width) << 8) | clamp
}

/// Returns `value` of lane `src_lane` (CUDA C `__shfl_sync`). With `width < 32` the warp is
/// split into segments of `width` lanes and `src_lane` is taken modulo `width` within the
/// caller's segment: the source is `(lane_id & !(width-1)) + (src_lane % width)`.
///
/// `width` must be a power of two in `1..=32`. PTX: `shfl.sync.idx.b32` (PTX ISA §9.7,
/// "shfl.sync"); sm_30+, PTX ISA 6.0+.
///
/// # Safety
/// The module's collective rules: the caller is in `mask`, and every non-exited lane in
/// `mask` executes a `shfl.sync.idx` with the same `mask` and `width`. A source lane not in
/// `mask` (or exited) yields an unspecified value.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn shfl_idx_sync<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.shuffle(ShflMode::Idx, mask, src_lane, shfl_c(width, 0x1f)) }
}

/// Returns `value` of lane `lane_id - delta` within the caller's `width`-lane segment, or the
/// caller's own `value` when that lane is below the segment (CUDA C `__shfl_up_sync`; the
/// building block of inclusive scans).
///
/// `width` must be a power of two in `1..=32`. PTX: `shfl.sync.up.b32`; sm_30+, PTX ISA 6.0+.
///
/// # Safety
/// As for [`shfl_idx_sync`] (same `mask` and `width` across the participating lanes).
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn shfl_up_sync<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.shuffle(ShflMode::Up, mask, delta, shfl_c(width, 0)) }
}

/// Returns `value` of lane `lane_id + delta` within the caller's `width`-lane segment, or the
/// caller's own `value` when that lane is past the segment (CUDA C `__shfl_down_sync`; the
/// building block of tree reductions).
///
/// `width` must be a power of two in `1..=32`. PTX: `shfl.sync.down.b32`; sm_30+,
/// PTX ISA 6.0+.
///
/// # Safety
/// As for [`shfl_idx_sync`].
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn shfl_down_sync<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.shuffle(ShflMode::Down, mask, delta, shfl_c(width, 0x1f)) }
}

/// Returns `value` of lane `lane_id ^ lane_mask` (CUDA C `__shfl_xor_sync`; butterfly
/// reductions leave the result in every lane). With `width < 32`, a source lane in a *later*
/// segment is replaced by the caller's own `value`; a source in an earlier segment is read
/// (PTX ISA pseudo-code: the source must be `<=` the segment's last lane).
///
/// `width` must be a power of two in `1..=32`. PTX: `shfl.sync.bfly.b32`; sm_30+,
/// PTX ISA 6.0+.
///
/// # Safety
/// As for [`shfl_idx_sync`].
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn shfl_xor_sync<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { value.shuffle(ShflMode::Xor, mask, lane_mask, shfl_c(width, 0x1f)) }
}

macro_rules! vote_pred {
    ($(#[$doc:meta])* $name:ident, $mode:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The module's collective rules: the caller is in `mask`, and every non-exited lane
        /// in `mask` executes the same kind of vote with the same `mask`.
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub unsafe fn $name(mask: u32, predicate: bool) -> bool {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::warp::$name(mask, predicate) }
        }
    };
}

vote_pred!(
    /// `true` iff `predicate` is `true` in every non-exited lane of `mask` (CUDA C
    /// `__all_sync`). PTX: `vote.sync.all.pred` (PTX ISA §9.7, "vote.sync"); sm_30+,
    /// PTX ISA 6.0+.
    vote_all_sync,
    "all"
);
vote_pred!(
    /// `true` iff `predicate` is `true` in at least one non-exited lane of `mask` (CUDA C
    /// `__any_sync`). PTX: `vote.sync.any.pred`; sm_30+, PTX ISA 6.0+.
    vote_any_sync,
    "any"
);
vote_pred!(
    /// `true` iff `predicate` has the same value in every non-exited lane of `mask` (CUDA C
    /// `__uni_sync`). PTX: `vote.sync.uni.pred`; sm_30+, PTX ISA 6.0+.
    vote_uni_sync,
    "uni"
);

/// The set of lanes in `mask` whose `predicate` is `true` (bit `i` = lane `i`; CUDA C
/// `__ballot_sync`). Lanes outside `mask` or exited contribute 0.
///
/// PTX: `vote.sync.ballot.b32` (PTX ISA §9.7, "vote.sync"); sm_30+, PTX ISA 6.0+.
///
/// # Safety
/// The module's collective rules: the caller is in `mask`, and every non-exited lane in
/// `mask` executes a ballot with the same `mask`.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn vote_ballot_sync(mask: u32, predicate: bool) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::warp::vote_ballot_sync(mask, predicate) }
}

/// A value `match.sync` can compare: `u32`, `i32`, `f32` (as `.b32` bits) and `u64`, `i64`,
/// `f64` (as `.b64` bits). Floats compare by bits: `0.0` and `-0.0` differ, equal NaNs match.
pub trait MatchValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn match_any(self, mask: u32) -> u32;
    #[doc(hidden)]
    #[track_caller]
    unsafe fn match_all(self, mask: u32) -> Option<u32>;
}

macro_rules! match_value {
    ($w:ident, $($t:ty),*) => {$(
        impl MatchValue for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn match_any(self, mask: u32) -> u32 {
                // SAFETY: forwarded to the caller.
                unsafe { crate::arch::warp::match_any::$w(mask, self.to_bits_compat()) }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn match_all(self, mask: u32) -> Option<u32> {
                // SAFETY: forwarded to the caller.
                unsafe { crate::arch::warp::match_all::$w(mask, self.to_bits_compat()) }
            }
        }
    )*};
}
match_value!(b32, u32, i32, f32);
match_value!(b64, u64, i64, f64);

/// The lanes of `mask` whose `value` equals the caller's (CUDA C `__match_any_sync`); the
/// caller's own bit is always set. Groups lanes by key, e.g. to aggregate atomics per key.
///
/// PTX: `match.any.sync.b32` / `.b64` (PTX ISA §9.7, "match.sync"); **sm_70+**, PTX ISA 6.0+.
///
/// # Safety
/// The module's collective rules: the caller is in `mask`, and every non-exited lane in
/// `mask` executes a `match.any.sync` of the same width with the same `mask`.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn match_any_sync<T: MatchValue>(mask: u32, value: T) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { value.match_any(mask) }
}

/// `Some(mask)` if every non-exited lane of `mask` holds the same `value`, else `None` (CUDA C
/// `__match_all_sync`, whose predicate output becomes the `Option`).
///
/// PTX: `match.all.sync.b32` / `.b64` (PTX ISA §9.7, "match.sync"); **sm_70+**, PTX ISA 6.0+.
///
/// # Safety
/// As for [`match_any_sync`], with `match.all.sync`.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn match_all_sync<T: MatchValue>(mask: u32, value: T) -> Option<u32> {
    // SAFETY: forwarded to the caller.
    unsafe { value.match_all(mask) }
}

/// An integer `redux.sync` can reduce: `u32` (PTX `.u32`) and `i32` (PTX `.s32`). Needs
/// sm_80: see [`redux_sync_add`].
pub trait ReduxInt: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn redux(self, op: ReduxOp, mask: u32) -> Self;
}

#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

macro_rules! redux_int {
    ($t:ty, $arith:ident) => {
        impl ReduxInt for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn redux(self, op: ReduxOp, mask: u32) -> Self {
                // SAFETY: forwarded to the caller.
                unsafe { crate::arch::warp::redux::$arith(op, mask, self) }
            }
        }
    };
}
redux_int!(u32, u32);
redux_int!(i32, s32);

macro_rules! redux_fn {
    ($(#[$doc:meta])* $name:ident, $op:ident, $cuda:literal, $ptx:literal) => {
        $(#[$doc])*
        #[doc = concat!("\n\nCUDA C `", $cuda, "`. PTX: `redux.sync.", $ptx, "` (PTX ISA §9.7, \
            \"redux.sync\"); **sm_80+**, PTX ISA 7.0+. On the GPU this function exists only \
            when the kernels are built for sm_80 or later (`cfg(target_feature = \"sm_80\")`, \
            e.g. `CudaBuilder::arch(ComputeCapability(8, 0))`); on the host it is a stub.")]
        ///
        /// # Safety
        /// The module's collective rules: the caller is in `mask`, and every non-exited lane
        /// in `mask` executes the same `redux.sync` operation and type with the same `mask`.
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub unsafe fn $name<T: ReduxInt>(mask: u32, value: T) -> T {
            // SAFETY: forwarded to the caller.
            unsafe { value.redux(ReduxOp::$op, mask) }
        }
    };
}

redux_fn!(
    /// The wrapping sum of `value` over the non-exited lanes of `mask`, returned to each of
    /// them.
    redux_sync_add, Add, "__reduce_add_sync", "add.{u32,s32}"
);
redux_fn!(
    /// The minimum of `value` over the non-exited lanes of `mask` (signed for `i32`).
    redux_sync_min, Min, "__reduce_min_sync", "min.{u32,s32}"
);
redux_fn!(
    /// The maximum of `value` over the non-exited lanes of `mask` (signed for `i32`).
    redux_sync_max, Max, "__reduce_max_sync", "max.{u32,s32}"
);
redux_fn!(
    /// The bitwise AND of `value` over the non-exited lanes of `mask`.
    redux_sync_and, And, "__reduce_and_sync", "and.b32"
);
redux_fn!(
    /// The bitwise OR of `value` over the non-exited lanes of `mask`.
    redux_sync_or, Or, "__reduce_or_sync", "or.b32"
);
redux_fn!(
    /// The bitwise XOR of `value` over the non-exited lanes of `mask`.
    redux_sync_xor, Xor, "__reduce_xor_sync", "xor.b32"
);
