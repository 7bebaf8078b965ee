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
//! the condition that caused divergence. The one use that is safe, a collective over
//! exactly the lanes that read the mask, run at once, is what the `coalesced_*` functions
//! below do.
//!
//! # Safe collectives: the coalesced lanes
//! The `coalesced_*` functions ([`coalesced_reduce_add`], [`coalesced_ballot`], ...) are
//! safe. Each reads [`active_mask`] and runs its collective with that mask, in straight-line
//! code inside one function, so the rules hold by construction: the caller is in the mask,
//! every lane in it executed the `activemask` together with the caller and therefore goes
//! on to the same collective with the same mask (nothing between the two can branch), and
//! the mask never names a lane that took another branch, has exited, or lies past the end
//! of a partial warp. This is CUDA cooperative groups' `coalesced_threads()` (CUDA C
//! Programming Guide, "Cooperative Groups: coalesced_group"), without a group value that
//! could be kept and used later in other control flow.
//!
//! The lanes taking part are *those converged at the call*, which the hardware decides:
//! often the whole warp in uniform code, but any non-empty subset containing the caller is
//! allowed, and the CPU emulator takes the smallest, the caller alone (see
//! [`active_mask`]). So the result is returned with its mask ([`Coalesced`]), and correct
//! code must be correct for every partition of the warp into coalesced groups, e.g. the
//! warp-aggregated atomic: each group's leader adds the group's sum
//! (`if r.is_leader() { bins.fetch_add(b, r.value, Relaxed); }`). For a reduction over a
//! whole warp that must see all 32 lanes (a block reduction's first step), use the
//! `unsafe` `*_sync` forms with [`FULL_MASK`] in code every lane reaches.
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

/// Rust-CUDA's name for [`active_mask`]: the lanes of this warp executing this instruction
/// (CUDA C `__activemask()`, PTX `activemask.b32`).
#[inline(always)]
#[must_use]
pub fn activemask() -> u32 {
    active_mask()
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

/// A value that can be shuffled between lanes: `u32`, `i32`, `f32` (one `shfl.sync`);
/// `u8`, `i8`, `u16`, `i16`, [`f16`](crate::half::f16), [`bf16`](crate::half::bf16) (one
/// `shfl.sync` of the value widened to 32 bits, then truncated); `u64`, `i64`, `f64` (two
/// `shfl.sync`, low and high halves, with the same lane mapping); `u128`, `i128` (four).
/// Pack several narrow values into one 32-bit value where you can: each shuffle moves 32
/// bits whatever the type.
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

/// Shuffles of types narrower than 32 bits: one 32-bit shuffle of the value's bits,
/// zero-extended, truncated back (the upper bits carry nothing).
macro_rules! shuffle_narrow {
    ($($t:ty => $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn shuffle(self, mode: ShflMode, mask: u32, b: u32, c: u32) -> Self {
                // SAFETY: forwarded to the caller.
                let bits = unsafe { crate::arch::warp::shfl_32(mode, mask, $to(self), b, c) };
                $from(bits)
            }
        }
    )*};
}

shuffle_narrow! {
    u8 => u32::from, |b: u32| b as u8;
    i8 => |v: i8| u32::from(v as u8), |b: u32| b as u8 as i8;
    u16 => u32::from, |b: u32| b as u16;
    i16 => |v: i16| u32::from(v as u16), |b: u32| b as u16 as i16;
    crate::half::f16 => |v: crate::half::f16| u32::from(v.to_bits()),
        |b: u32| crate::half::f16::from_bits(b as u16);
    crate::half::bf16 => |v: crate::half::bf16| u32::from(v.to_bits()),
        |b: u32| crate::half::bf16::from_bits(b as u16);
}

/// Shuffles of 128-bit integers: two 64-bit shuffles (four `shfl.sync`), low half first.
macro_rules! shuffle_128 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn shuffle(self, mode: ShflMode, mask: u32, b: u32, c: u32) -> Self {
                let bits = self as u128;
                // SAFETY: forwarded to the caller (the same shuffle twice, same lanes).
                let (lo, hi) = unsafe {
                    (
                        crate::arch::warp::shfl_64(mode, mask, bits as u64, b, c),
                        crate::arch::warp::shfl_64(mode, mask, (bits >> 64) as u64, b, c),
                    )
                };
                ((u128::from(hi) << 64) | u128::from(lo)) as $t
            }
        }
    )*};
}
shuffle_128!(u128, i128);

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

/// Whether the source lane of a shuffle is in range, the predicate `p` of `shfl.sync d|p`:
/// the PTX ISA's pseudo-code for `shfl.sync` (§9.7, "shfl.sync"), evaluated for the calling `lane`
/// with the instruction's `b` and `c` operands. When it is `false` the shuffle returns the
/// caller's own value. Computed here rather than read from the instruction so that the
/// GPU and the CPU emulator share one definition.
#[inline(always)]
fn shfl_source_in_range(mode: ShflMode, lane: u32, b: u32, c: u32) -> bool {
    let bval = b & 0x1f;
    let cval = c & 0x1f;
    let segmask = (c >> 8) & 0x1f;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    match mode {
        ShflMode::Up => lane as i32 - bval as i32 >= max_lane as i32,
        ShflMode::Down => lane + bval <= max_lane,
        ShflMode::Xor => (lane ^ bval) <= max_lane,
        ShflMode::Idx => (min_lane | (bval & !segmask)) <= max_lane,
    }
}

/// Rust-CUDA's shuffles: the value and whether the source lane was in range.
#[inline(always)]
#[track_caller]
unsafe fn shuffle_with_range<T: Shuffle>(
    mode: ShflMode,
    mask: u32,
    value: T,
    b: u32,
    width: u32,
) -> (T, bool) {
    assert!(
        width.is_power_of_two() && width <= WARP_SIZE,
        "warp shuffle width must be a power of two in 1..=32"
    );
    let clamp = if matches!(mode, ShflMode::Up) {
        0
    } else {
        0x1f
    };
    let c = shfl_c(width, clamp);
    // SAFETY: forwarded to the caller.
    let out = unsafe { value.shuffle(mode, mask, b, c) };
    (out, shfl_source_in_range(mode, lane_id(), b, c))
}

macro_rules! warp_shuffle_fn {
    ($(#[$doc:meta])* $name:ident, $mode:ident, $b:ident, $sync:ident) => {
        $(#[$doc])*
        ///
        /// Returns the shuffled value and whether the source lane was in range (`true`) or
        /// the caller's own `value` was returned (`false`), the predicate of
        /// `shfl.sync d|p` (PTX ISA §9.7, "shfl.sync"); whether the source lane was *active* is not
        /// reported (an exited or masked-out source gives an unspecified value).
        /// Rust-CUDA's signature; the same shuffle as
        #[doc = concat!("[`", stringify!($sync), "`]")]
        /// , which returns the value alone.
        ///
        /// `width`: a power of two in `1..=32`, the size of the lane segments (32: the whole
        /// warp). Each 32 bits of `T` cost one `shfl.sync` (see [`Shuffle`]).
        ///
        /// # Panics
        /// If `width` is not a power of two in `1..=32` (a `trap` on the GPU; with a
        /// constant `width` the check compiles away).
        ///
        /// # Safety
        /// The module's collective rules: the caller is in `mask`, and every non-exited lane
        /// in `mask` executes the same shuffle (mode, `width`, type) with the same `mask`.
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub unsafe fn $name<T: Shuffle>(mask: u32, value: T, $b: u32, width: u32) -> (T, bool) {
            // SAFETY: forwarded to the caller.
            unsafe { shuffle_with_range(ShflMode::$mode, mask, value, $b, width) }
        }
    };
}

warp_shuffle_fn!(
    /// The `value` of lane `idx` of the caller's `width`-lane segment (CUDA C `__shfl_sync`);
    /// `idx` is taken modulo `width`, so the source is always in range.
    warp_shuffle_idx, Idx, idx, shfl_idx_sync
);
warp_shuffle_fn!(
    /// The `value` of lane `lane_id - delta` (CUDA C `__shfl_up_sync`); out of range (`false`)
    /// below the caller's segment.
    warp_shuffle_up, Up, delta, shfl_up_sync
);
warp_shuffle_fn!(
    /// The `value` of lane `lane_id + delta` (CUDA C `__shfl_down_sync`); out of range
    /// (`false`) past the caller's segment.
    warp_shuffle_down, Down, delta, shfl_down_sync
);
warp_shuffle_fn!(
    /// The `value` of lane `lane_id ^ lane_mask` (CUDA C `__shfl_xor_sync`); out of range
    /// (`false`) when that lane is in a later segment.
    warp_shuffle_xor, Xor, lane_mask, shfl_xor_sync
);

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

/// The result of a `coalesced_*` collective and the lanes that took part: `mask` has a bit
/// per lane of the coalesced group (always including the caller's), `value` is the same in
/// all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coalesced<T> {
    /// The collective's result.
    pub value: T,
    /// The lanes that took part (bit `i` = lane `i`), the caller's included.
    pub mask: u32,
}

impl<T> Coalesced<T> {
    /// Whether the caller is the group's leader: its lowest lane (exactly one lane of each
    /// group is), e.g. the one that publishes the group's result.
    #[inline(always)]
    #[must_use]
    pub fn is_leader(&self) -> bool {
        lane_id() == self.mask.trailing_zeros()
    }

    /// The number of lanes that took part (1 to 32).
    #[inline(always)]
    #[must_use]
    pub fn size(&self) -> u32 {
        self.mask.count_ones()
    }

    /// The caller's rank in the group: the number of group lanes below it (0 for the
    /// leader), as cooperative groups' `thread_rank()`.
    #[inline(always)]
    #[must_use]
    pub fn rank(&self) -> u32 {
        (self.mask & lanemask_lt()).count_ones()
    }
}

/// The lanes of the caller's warp that take part in a `coalesced_*` call: those converged
/// with it here (see the module docs, "Safe collectives").
#[inline(always)]
#[track_caller]
fn coalesced_mask() -> u32 {
    active_mask()
}

/// [`vote_ballot_sync`] over the coalesced lanes (module docs, "Safe collectives"): bit `i`
/// of `value` is set iff lane `i` took part and passed a true `predicate`. With
/// `value.count_ones()`, a count of the group's lanes for which `predicate` holds.
#[inline(always)]
#[must_use]
#[track_caller]
pub fn coalesced_ballot(predicate: bool) -> Coalesced<u32> {
    let mask = coalesced_mask();
    // SAFETY: `mask` is the active mask read just now, in straight-line code: the module's
    // rules 1–3 hold (module docs, "Safe collectives").
    let value = unsafe { vote_ballot_sync(mask, predicate) };
    Coalesced { value, mask }
}

/// [`vote_any_sync`] over the coalesced lanes: whether `predicate` is true in any of them.
#[inline(always)]
#[must_use]
#[track_caller]
pub fn coalesced_any(predicate: bool) -> Coalesced<bool> {
    let mask = coalesced_mask();
    // SAFETY: as in `coalesced_ballot`.
    let value = unsafe { vote_any_sync(mask, predicate) };
    Coalesced { value, mask }
}

/// [`vote_all_sync`] over the coalesced lanes: whether `predicate` is true in all of them.
#[inline(always)]
#[must_use]
#[track_caller]
pub fn coalesced_all(predicate: bool) -> Coalesced<bool> {
    let mask = coalesced_mask();
    // SAFETY: as in `coalesced_ballot`.
    let value = unsafe { vote_all_sync(mask, predicate) };
    Coalesced { value, mask }
}

macro_rules! coalesced_redux_fn {
    ($(#[$doc:meta])* $name:ident, $sync:ident) => {
        $(#[$doc])*
        #[doc = concat!("\n\n[`", stringify!($sync), "`] with the coalesced lanes as its mask \
            (module docs, \"Safe collectives\"); **sm_80+** as it is.")]
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub fn $name<T: ReduxInt>(value: T) -> Coalesced<T> {
            let mask = coalesced_mask();
            // SAFETY: as in `coalesced_ballot`.
            let value = unsafe { $sync(mask, value) };
            Coalesced { value, mask }
        }
    };
}

coalesced_redux_fn!(
    /// The wrapping sum of `value` over the coalesced lanes, returned to each of them.
    coalesced_reduce_add, redux_sync_add
);
coalesced_redux_fn!(
    /// The minimum of `value` over the coalesced lanes (signed for `i32`).
    coalesced_reduce_min, redux_sync_min
);
coalesced_redux_fn!(
    /// The maximum of `value` over the coalesced lanes (signed for `i32`).
    coalesced_reduce_max, redux_sync_max
);
coalesced_redux_fn!(
    /// The bitwise AND of `value` over the coalesced lanes.
    coalesced_reduce_and, redux_sync_and
);
coalesced_redux_fn!(
    /// The bitwise OR of `value` over the coalesced lanes.
    coalesced_reduce_or, redux_sync_or
);
coalesced_redux_fn!(
    /// The bitwise XOR of `value` over the coalesced lanes.
    coalesced_reduce_xor, redux_sync_xor
);
