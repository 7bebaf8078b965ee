//! Stable LSD radix sort of `u32`, `i32`, `f32` and `u64` keys, alone or with `u32` values,
//! shaped as Onesweep (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix
//! Sort for GPUs", arXiv:2206.01784, 2022; CUB's `DeviceRadixSort`, CCCL
//! `agent_radix_sort_onesweep.cuh`): **one upsweep** that counts every digit of every pass
//! at once, then **one scatter launch per 8-bit digit**, each finding its tiles' output
//! offsets by decoupled look-back over per-tile digit counts (the look-back of
//! [`crate::scan`], one digit per thread).
//!
//! Kernels: `sort_histogram_<key>` (the upsweep), `sort_pass_<key>` (keys only) and
//! `sort_pass_pairs_<key>` (keys and `u32` values) for `<key>` in `u32`, `i32`, `f32`, `u64`.
//!
//! # Keys and bit range
//! A key is sorted by its order-preserving unsigned image, [`SortKey::ordered`]: `u32` and
//! `u64` as they are, `i32` with its sign bit flipped, `f32` in IEEE total order with every
//! NaN last: a positive float (sign bit clear) gets its sign bit set, a negative one all its
//! bits flipped, so `-inf < … < -0 < +0 < … < +inf`; every NaN, whatever its sign and
//! payload, maps to `u32::MAX`, after `+inf` (`0xff80_0000`), so NaNs sort last, among
//! themselves in input order (the sort is stable). Outputs are the input keys' own bits
//! (a NaN keeps its payload and sign).
//!
//! An optional bit range `[begin_bit, end_bit)` (`0 ≤ begin_bit ≤ end_bit ≤` the key's
//! width) selects the bits of the *ordered image* the sort compares, as CUB's
//! `begin_bit`/`end_bit` do: keys equal in those bits keep their input order. Digit pass `p`
//! takes bits `begin_bit + 8p ..` (8 bits, fewer in the last pass): [`passes`] of them.
//!
//! # Upsweep
//! `sort_histogram_<key>`: a grid of any size strides over the keys; each block counts, for
//! every pass, the keys of each of the [`RADIX`] digits in shared memory (block-scope
//! atomics), then adds its nonzero counts to the global `counts[pass · RADIX + digit]`
//! (device-scope atomics; the host zeroes `counts` first). The scatter turns a pass's
//! counts into exclusive digit offsets itself (below), so there is no scan launch between.
//!
//! # Scatter passes
//! `sort_pass[_pairs]_<key>`: each block of [`pass_threads`] threads sorts one tile of
//! [`SORT_ITEMS`] keys per thread: [`SORT_THREADS_WIDE`] (384) threads and
//! [`SORT_TILE_WIDE`] (6144) keys for 32-bit keys, [`SORT_THREADS`] (256 = [`RADIX`]) and
//! [`SORT_TILE`] (4096) for `u64`. The first [`RADIX`] threads each own one digit in steps
//! 4, 5 and 7:
//!
//! 1. **Tile index** from a device-wide counter (as the scan: tiles are handed out in the
//!    order blocks start, which makes the look-back deadlock-free).
//! 2. **Load**, warp-striped: warp `w` owns keys `w·32·ITEMS ..` of the tile, its lane `l`
//!    item `i` is key `i·32 + l` of that segment (coalesced 128-byte loads); for `u64`
//!    pairs the values likewise (32-bit pairs load their values after step 6).
//! 3. **Rank within the warp**, item by item: the lanes with equal digits are found by one
//!    ballot per digit bit (CUB's `MatchAny` by ballots, cheaper than `match.any.sync`);
//!    the group's highest lane reads and advances the warp's counter of that digit in shared
//!    memory by the group's size and broadcasts the old value; a key's rank among the
//!    warp's keys of its digit is that value plus the group's lanes below it. This visits a
//!    warp's keys in input order, so ranks are stable, and needs no atomics (one leader per
//!    digit and step). A partial (last) tile is padded with [`SortKey::LAST`], whose digit
//!    is the largest: the padding ranks after that digit's keys, so it fills the sorted
//!    tile's last places, which the scatter leaves out, and the published count of that
//!    digit leaves it out too. Full and partial tiles share one ranking, with no test per key.
//! 4. **Tile counts**: thread `d` sums digit `d`'s counters over the warps (turning them
//!    into the exclusive prefix over warps) and publishes the tile's count of digit `d`
//!    (`status_word(epoch, false, count)`, or the inclusive value at once for tile 0).
//! 5. **Block scan** of `(bins[d] << 32) | count[d]` over the digits: its low half is where
//!    digit `d` starts in the sorted tile (added to its warp counters), its high half where
//!    digit `d` starts in the output (exclusive over the pass's global `counts`).
//! 6. **Place**: each key goes to shared memory at its place in the sorted tile, its
//!    warp's start for its digit plus its rank. Pairs of 32-bit keys then issue their
//!    values' loads (warp-striped, as the keys), which complete during the look-back, and
//!    store each value at its key's place in a second buffer after it.
//! 7. **Look-back** (tiles > 0), by thread `d` for digit `d`, after the placing (which
//!    gives the tiles before time to publish their inclusive prefixes): walk back one tile
//!    at a time, waiting until its status word carries this launch's epoch, adding its
//!    value, until a word carries an inclusive prefix; publish this tile's inclusive prefix.
//!    This is Onesweep's per-digit look-back (one thread per digit, serial over tiles), with
//!    the scan's status words ([`status_word`]: epoch, inclusive flag and 32-bit value in
//!    one 8-byte relaxed store, single-copy atomic, so no fences).
//! 8. **Scatter**: threads read the sorted tile in order (striped: key `i·threads + t`) and
//!    write key `j` to `global_start[digit] + tile_prefix[digit] + j − tile_start[digit]`:
//!    consecutive threads write consecutive addresses within each digit's run; pairs of
//!    32-bit keys write each value beside its key (same slot of the values' buffer, same
//!    destination). `u64` pairs move their values after the keys through the keys' buffer.
//!
//! Shared memory: keys-only passes hold the tile in static shared memory (24 KiB for 32-bit
//! keys, 32 KiB for `u64`); 32-bit pairs hold keys and values in 48 KiB of dynamic shared
//! memory ([`pass_dynamic_shared_bytes`]), since with the warp counters the two tiles pass
//! the 48 KiB a kernel may declare statically.
//!
//! Output positions are below `len ≤ u32::MAX` and computed in wrapping `u32` arithmetic.
//!
//! # Status words and epochs
//! One `u64` per (tile, digit), tile `t`'s at `t · RADIX + digit`: [`status_words`]. As in
//! the scan, the host passes a fresh epoch per launch (every pass is a launch), so the words
//! are never cleared between launches or passes (only when [`MAX_EPOCH`] runs out), and the
//! tile counter is never reset (the host passes its value as `base`).
//!
//! # Deadlock freedom
//! As for [`crate::scan`]: tile `t` waits only for tiles `< t`, taken earlier by blocks that
//! are already resident, which each publish their counts before they wait.
//!
//! # Tuning
//! The histogram threads load [`HISTOGRAM_ITEMS`] keys before counting any, so that many
//! loads are in flight; its shared-memory counters are block-scope atomics, slow on
//! low-entropy keys, where a warp's lanes hit one counter. Tiles: CUB's sm_90 Onesweep
//! takes 384 threads × 20 keys for 32-bit keys, × 23 for pairs with 32-bit values (its
//! grids in ncu, 2^28 keys on an H200: 34,952 and 30,393 blocks). Here 384 × 16 for 32-bit
//! keys, alone or with values: on an H200 at 2^28 (one run each, against CUB in the same
//! run) the keys-only pass went from 256 × 16 (0.89× CUB, 0.83·10⁹ executed instructions
//! per pass) to 384 × 16 (0.94×, 0.72·10⁹): the per-tile work of steps 1, 4, 5 and 7 is
//! spread over 1.5 times the keys. CUB publishes a tile's counts
//! before ranking ("early counts", from shared atomics); here the ranking's own counters
//! give them, without atomics, and the look-back comes after the placing. The pass's
//! shared-memory accesses in its per-key loops go by 32-bit shared address
//! ([`cuda_std::shared::window`]: `LDS`/`STS`; generic pointers gave 64-bit generic loads and
//! an address multiply per access), and a partial tile is padded rather than tested per key
//! (step 3). Registers: see `host/build.rs` (32-bit keys, alone or with values, 80 per
//! thread: 2 blocks of 384 per multiprocessor).

// A scatter pass takes the keys and values in and out, the digit counts, the look-back
// state and its launch values: 10 parameters.
#![allow(clippy::too_many_arguments)]

use crate::scan::{MAX_EPOCH, status_word};
use cuda_std::atomic::{self, Block, Device, Ordering};
use cuda_std::prelude::*;
use cuda_std::shared::window::{self, SharedAddr};
use cuda_std::{mem, shared};

/// Bits per digit.
pub const RADIX_BITS: u32 = 8;
/// Digits per pass (`2^RADIX_BITS`).
pub const RADIX: usize = 1 << RADIX_BITS;
/// Threads per block of the scatter kernels of `u64` keys and of key-value pairs: one per
/// digit.
pub const SORT_THREADS: u32 = RADIX as u32;
/// Threads per block of the keys-only scatter kernels of 32-bit keys (12 warps, CUB's
/// sm_90 Onesweep block size): the per-tile work of steps 1, 4, 5 and 7 (by the first
/// [`RADIX`] threads) spreads over 1.5 times the keys.
pub const SORT_THREADS_WIDE: u32 = 384;
/// Keys per thread in a scatter tile.
pub const SORT_ITEMS: usize = 16;
/// Keys per tile (one block) of the scatter kernels of [`SORT_THREADS`] threads.
pub const SORT_TILE: usize = SORT_THREADS as usize * SORT_ITEMS;
/// Keys per tile of the scatter kernels of [`SORT_THREADS_WIDE`] threads.
pub const SORT_TILE_WIDE: usize = SORT_THREADS_WIDE as usize * SORT_ITEMS;
/// Warps of the widest scatter block.
const MAX_WARPS: usize = SORT_THREADS_WIDE as usize / 32;
/// Warps of the digit threads (the first [`RADIX`] of a block).
const DIGIT_WARPS: usize = RADIX / 32;

/// Threads per block of `K`'s scatter kernel, keys only or `pairs`: [`SORT_THREADS_WIDE`]
/// for 32-bit keys, [`SORT_THREADS`] for `u64` (a `u64` tile of 384 · 16 keys would take
/// 48 KiB of shared memory on its own).
pub const fn pass_threads<K: SortKey>(pairs: bool) -> u32 {
    let _ = pairs;
    if K::BITS == 32 {
        SORT_THREADS_WIDE
    } else {
        SORT_THREADS
    }
}

/// Keys per tile of `K`'s scatter kernel: [`pass_threads`] · [`SORT_ITEMS`].
pub const fn pass_tile<K: SortKey>(pairs: bool) -> usize {
    pass_threads::<K>(pairs) as usize * SORT_ITEMS
}

/// Whether `K`'s pairs kernel keeps the tile's values in a shared buffer of their own
/// (32-bit keys: the values are loaded after the keys are placed and leave with them, in
/// one scatter), rather than moving them through the keys' buffer after the keys (`u64`).
pub const fn own_value_buffer<K: SortKey>(pairs: bool) -> bool {
    pairs && K::BITS == 32
}

/// Bytes of dynamic shared memory a launch of `K`'s scatter kernel must give
/// (`shared_mem_bytes`; fewer traps): with [`own_value_buffer`], the tile's keys and values,
/// 48 KiB for 32-bit keys (with the warp counters, past the 48 KiB a kernel may declare
/// statically: the launch opts in); 0 otherwise (the tile is static).
pub const fn pass_dynamic_shared_bytes<K: SortKey>(pairs: bool) -> u32 {
    if own_value_buffer::<K>(pairs) {
        (pass_tile::<K>(pairs) * (K::BITS as usize / 8 + 4)) as u32
    } else {
        0
    }
}

/// Bytes of static shared memory of `K`'s scatter kernel: the exchange buffer (unless it is
/// dynamic), the warp counters, the digit bases and warp totals, the tile index.
pub const fn pass_shared_bytes<K: SortKey>(pairs: bool) -> usize {
    let exchange = if pass_dynamic_shared_bytes::<K>(pairs) > 0 {
        16
    } else {
        pass_tile::<K>(pairs) * (K::BITS as usize / 8)
    };
    exchange + 4 * MAX_WARPS * RADIX + 4 * RADIX + 8 * DIGIT_WARPS + 4
}

/// Threads per block of the histogram kernels.
pub const HISTOGRAM_THREADS: u32 = 256;
/// Keys a histogram thread loads before counting them (grid-strided).
pub const HISTOGRAM_ITEMS: usize = 8;
/// The most digit passes a key has (`u64`: 8).
pub const MAX_PASSES: usize = 8;
/// Runs `$body` for each of a thread's [`SORT_ITEMS`] keys, with `$i` bound to the item's
/// index: `unroll!` over 0..16, so the per-item arrays stay in registers.
macro_rules! each_item {
    ($i:ident $body:block) => {
        unroll!($i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] $body)
    };
}
// `each_item!` lists the items by hand.
const _: () = assert!(SORT_ITEMS == 16);

/// Status words a scatter launch over `tiles` tiles needs: one per tile and digit.
pub const fn status_words(tiles: usize) -> usize {
    tiles * RADIX
}

/// Scatter tiles for `len` keys in tiles of `tile` keys ([`pass_tile`]).
pub const fn sort_tiles(len: usize, tile: usize) -> usize {
    len.div_ceil(tile)
}

/// Digit passes over the bit range `[begin_bit, end_bit)`: `ceil((end − begin) / 8)`, and 1
/// for an empty range, whose one pass has a 0-bit digit (every key's digit is 0), so the
/// sort is a stable copy.
pub const fn passes(begin_bit: u32, end_bit: u32) -> u32 {
    let p = end_bit.saturating_sub(begin_bit).div_ceil(RADIX_BITS);
    if p == 0 { 1 } else { p }
}

/// What a scatter launch sorts by: pass `pass` of the bit range `[begin_bit, end_bit)`
/// takes `digit_bits` bits from `shift` ([`passes`] says how many passes there are).
/// Packed for the kernels as `shift | digit_bits << 8` ([`DigitPlace::pack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigitPlace {
    /// The digit's lowest bit in the ordered key.
    pub shift: u32,
    /// Its width, 0 ..= [`RADIX_BITS`] (0 only for an empty bit range).
    pub digit_bits: u32,
}

impl DigitPlace {
    /// Pass `pass` of `[begin_bit, end_bit)` (`pass < passes(begin_bit, end_bit)`).
    pub const fn of_pass(begin_bit: u32, end_bit: u32, pass: u32) -> Self {
        let shift = begin_bit + pass * RADIX_BITS;
        let left = end_bit.saturating_sub(shift);
        Self {
            shift,
            digit_bits: if left < RADIX_BITS { left } else { RADIX_BITS },
        }
    }

    /// `shift | digit_bits << 8`, the kernels' `place` argument.
    pub const fn pack(self) -> u32 {
        self.shift | self.digit_bits << 8
    }

    /// Unpacks [`DigitPlace::pack`].
    #[inline(always)]
    pub const fn unpack(packed: u32) -> Self {
        Self {
            shift: packed & 0xff,
            digit_bits: (packed >> 8) & 0xff,
        }
    }

    /// The mask of a digit's bits after the shift.
    #[inline(always)]
    pub const fn mask(self) -> u32 {
        if self.digit_bits >= 32 {
            u32::MAX
        } else {
            (1 << self.digit_bits) - 1
        }
    }
}

/// A key type of the sort: `u32`, `i32`, `f32`, `u64`.
pub trait SortKey: Copy + DeviceCopy + mem::NcValue {
    /// Width in bits (32 or 64): the end of the default bit range.
    const BITS: u32;
    /// The order-preserving unsigned image the sort compares (see the [module
    /// docs](self)), zero-extended to 64 bits: `a` sorts before `b` iff `a.ordered() <
    /// b.ordered()`; equal images keep their input order.
    fn ordered(self) -> u64;
    /// The digit at `place` of [`SortKey::ordered`] (computed at the key's own width; 0 for
    /// a 0-bit digit, whatever its shift).
    fn digit(self, place: DigitPlace) -> u32;
    /// A key whose ordered image is all ones: its digit at every place is the largest,
    /// [`DigitPlace::mask`]. The scatter passes pad a partial tile with it (see the [module
    /// docs](self)).
    const LAST: Self;
    /// Reads a key from shared memory at `addr` (`ld.shared`).
    ///
    /// # Safety
    /// As [`window::load_b32`] for each 4 bytes of the key.
    unsafe fn load_shared(addr: SharedAddr) -> Self;
    /// Writes the key to shared memory at `addr` (`st.shared`).
    ///
    /// # Safety
    /// As [`window::store_b32`] for each 4 bytes of the key.
    unsafe fn store_shared(self, addr: SharedAddr);
}

/// The ordered image of an `f32`'s bits: sign bit set for positives, all bits flipped for
/// negatives, `u32::MAX` for every NaN (after `+inf`).
#[inline(always)]
pub const fn f32_ordered(bits: u32) -> u32 {
    if bits & 0x7fff_ffff > 0x7f80_0000 {
        u32::MAX
    } else if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

macro_rules! sort_key32 {
    ($t:ty, $last:expr, $ordered:expr, $to_b32:expr, $from_b32:expr) => {
        impl SortKey for $t {
            const BITS: u32 = 32;
            const LAST: $t = $last;
            #[inline(always)]
            #[track_caller]
            unsafe fn load_shared(addr: SharedAddr) -> Self {
                let from: fn(u32) -> $t = $from_b32;
                // SAFETY: the caller's contract.
                from(unsafe { window::load_b32(addr) })
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn store_shared(self, addr: SharedAddr) {
                let to: fn($t) -> u32 = $to_b32;
                // SAFETY: the caller's contract.
                unsafe { window::store_b32(addr, to(self)) }
            }
            #[inline(always)]
            fn ordered(self) -> u64 {
                let f: fn($t) -> u32 = $ordered;
                f(self) as u64
            }
            #[inline(always)]
            fn digit(self, place: DigitPlace) -> u32 {
                let f: fn($t) -> u32 = $ordered;
                f(self).wrapping_shr(place.shift) & place.mask()
            }
        }
    };
}
// Key type, `LAST`, the ordered image, the key's bits and back.
sort_key32!(u32, u32::MAX, |x| x, |x| x, |b| b);
sort_key32!(
    i32,
    i32::MAX,
    |x| x as u32 ^ 0x8000_0000,
    |x| x as u32,
    |b| b as i32
);
// `LAST` a NaN: every NaN's image is `u32::MAX`.
sort_key32!(
    f32,
    f32::from_bits(0x7fff_ffff),
    |x| f32_ordered(x.to_bits()),
    f32::to_bits,
    f32::from_bits
);

impl SortKey for u64 {
    const BITS: u32 = 64;
    const LAST: u64 = u64::MAX;
    #[inline(always)]
    #[track_caller]
    unsafe fn load_shared(addr: SharedAddr) -> Self {
        // SAFETY: the caller's contract, for both halves (low half at the lower address).
        unsafe { window::load_b32(addr) as u64 | (window::load_b32(addr.byte_add(4)) as u64) << 32 }
    }
    #[inline(always)]
    #[track_caller]
    unsafe fn store_shared(self, addr: SharedAddr) {
        // SAFETY: as for `load_shared`.
        unsafe {
            window::store_b32(addr, self as u32);
            window::store_b32(addr.byte_add(4), (self >> 32) as u32);
        }
    }
    #[inline(always)]
    fn ordered(self) -> u64 {
        self
    }
    #[inline(always)]
    fn digit(self, place: DigitPlace) -> u32 {
        self.wrapping_shr(place.shift) as u32 & place.mask()
    }
}

/// The histogram kernels' body: adds, for every pass of `[begin_bit, end_bit)`, the number
/// of keys with each digit to `counts[pass · RADIX + digit]`.
#[inline(always)]
fn histogram<K: SortKey>(keys: &[K], counts: &AtomicSlice<u32>, begin_bit: u32, end_bit: u32) {
    let end_bit = end_bit.min(K::BITS);
    let begin_bit = begin_bit.min(end_bit);
    let passes = passes(begin_bit, end_bit) as usize;
    let bins = passes * RADIX;
    if counts.len() < bins {
        panic!("sort_histogram: `counts` holds fewer than passes · RADIX words");
    }
    let sh: *mut u32 = shared_array!(u32, MAX_PASSES * RADIX);
    let (tid, threads) = (thread_idx_x() as usize, block_dim_x() as usize);
    let mut i = tid;
    while i < bins {
        // SAFETY: i < bins ≤ MAX_PASSES · RADIX; this thread's own words until the barrier.
        unsafe { shared::write(sh.add(i), 0) };
        i += threads;
    }
    sync_threads();
    let stride = threads * grid_dim_x() as usize;
    let count = |k: K| {
        for p in 0..passes {
            let d = k.digit(DigitPlace::of_pass(begin_bit, end_bit, p as u32)) as usize;
            // SAFETY: p · RADIX + d < bins (d < RADIX); shared words, atomic access.
            let _ = unsafe {
                atomic::fetch_add::<Block, u32>(sh.add(p * RADIX + d), 1, Ordering::Relaxed)
            };
        }
    };
    // HISTOGRAM_ITEMS keys per thread and round, all loaded before any is counted, so that
    // that many loads are in flight.
    let mut e = block_idx_x() as usize * threads + tid;
    while e + (HISTOGRAM_ITEMS - 1) * stride < keys.len() {
        let mut k = [zero_key::<K>(); HISTOGRAM_ITEMS];
        for (j, kj) in k.iter_mut().enumerate() {
            // SAFETY: e + j · stride < keys.len() (the loop's condition); `keys` is
            // read-only during the launch.
            *kj = unsafe { mem::load_global_nc(keys.as_ptr().add(e + j * stride)) };
        }
        for kj in k {
            count(kj);
        }
        e += HISTOGRAM_ITEMS * stride;
    }
    while e < keys.len() {
        // SAFETY: e < keys.len(); `keys` is read-only during the launch.
        count(unsafe { mem::load_global_nc(keys.as_ptr().add(e)) });
        e += stride;
    }
    sync_threads();
    let mut i = tid;
    while i < bins {
        // SAFETY: written before the barrier.
        let c = unsafe { shared::read(sh.add(i)) };
        if c != 0 {
            // In bounds: i < bins ≤ counts.len() (checked above).
            let _ = counts.fetch_add(i, c, Ordering::Relaxed);
        }
        i += threads;
    }
}

/// Warp `w`'s inclusive scan of `v` (Hillis–Steele over `shfl.sync.up`).
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_scan_u64(mut v: u64) -> u64 {
    let lane = lane_id();
    let mut d = 1;
    while d < 32 {
        // SAFETY: caller contract.
        let y = unsafe { warp::shfl_up_sync(FULL_MASK, v, d, 32) };
        if lane >= d {
            v += y;
        }
        d <<= 1;
    }
    v
}

/// The buffers of one scatter launch.
struct PassArgs<'a, K: SortKey> {
    keys: &'a [K],
    keys_out: &'a OutSlice<'a, K>,
    values: &'a [u32],
    values_out: &'a OutSlice<'a, u32>,
    bins: &'a [u32],
    status: &'a OutSlice<'a, u64>,
    counter: &'a AtomicSlice<'a, u32>,
}

/// The scatter kernels' body; see the [module docs](self), for blocks of `THREADS` threads
/// ([`pass_threads`]): tiles of `THREADS · SORT_ITEMS` keys. `exchange` holds one tile of
/// `K` (16-byte aligned); `values_sh` one tile of `u32` when the values have a buffer of
/// their own ([`own_value_buffer`]), else the values take `exchange` after the keys.
///
/// # Safety
/// As for the kernels (liveness and correctness only: memory safety holds for any
/// arguments).
#[inline(always)]
unsafe fn sort_pass_tile<K: SortKey, const PAIRS: bool, const THREADS: usize>(
    exchange: *mut K,
    values_sh: *mut u32,
    a: PassArgs<'_, K>,
    place: u32,
    epoch: u32,
    base: u32,
) {
    const { assert!(THREADS.is_multiple_of(32) && THREADS >= RADIX && THREADS / 32 <= MAX_WARPS) };
    let own_values = PAIRS && own_value_buffer::<K>(PAIRS);
    let tile_keys = THREADS * SORT_ITEMS;
    if block_dim_x() as usize != THREADS {
        panic!("a sort pass runs with `pass_threads` (256 or 384) threads per block");
    }
    let place = DigitPlace::unpack(place);
    let tid = thread_idx_x() as usize;
    let (lane, warp) = (tid % 32, tid / 32);
    // The first RADIX threads (whole warps) each own one digit in steps 4, 5 and 7.
    let digit = tid;
    let is_digit = tid < RADIX;
    let mut len = a.keys.len().min(a.keys_out.len()).min(u32::MAX as usize);
    if PAIRS {
        len = len.min(a.values.len()).min(a.values_out.len());
    }
    let tiles = len.div_ceil(tile_keys).min(a.status.len() / RADIX);

    let sh_tile: *mut u32 = shared_array!(u32, 1);
    // Per warp and digit: the ranking's running count (step 3), then (steps 4, 5) where the
    // warp's keys of the digit start in the sorted tile, which step 6 reads.
    let sh_hist: *mut u32 = shared_array!(u32, MAX_WARPS * RADIX);
    // Per digit: the output offset of the tile's key `j` is `sh_base[digit] + j` (wrapping).
    let sh_base: *mut u32 = shared_array!(u32, RADIX);
    let sh_warp: *mut u64 = shared_array!(u64, DIGIT_WARPS);

    if tid == 0 {
        // An empty `counter` gives no tile.
        let t = a
            .counter
            .fetch_add(0, 1, Ordering::Relaxed)
            .map_or(u32::MAX, |c| c.wrapping_sub(base));
        // SAFETY: a 1-element shared array; read by the block after the barrier.
        unsafe { shared::write(sh_tile, t) };
    }
    // The block's warps' counters: (THREADS / 32) · RADIX words, RADIX / 32 per thread.
    for r in 0..DIGIT_WARPS {
        // SAFETY: r · THREADS + tid < THREADS · RADIX / 32 ≤ MAX_WARPS · RADIX; read after
        // the barrier.
        unsafe { shared::write(sh_hist.add(r * THREADS + tid), 0) };
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier, never written again.
    let tile = unsafe { shared::read(sh_tile) } as usize;
    if tile >= tiles {
        // The whole block leaves (block-uniform): nothing to sort, nothing published.
        return;
    }
    let tile_start = tile * tile_keys;
    let valid = (len - tile_start).min(tile_keys);
    let full = valid == tile_keys;

    // 2. Load, warp-striped (values here only when they share `exchange` with the keys;
    //    with a buffer of their own, after step 6).
    let seg = tile_start + warp * 32 * SORT_ITEMS;
    // A partial tile's slots past the input hold `K::LAST` (see step 3).
    let mut keys = [K::LAST; SORT_ITEMS];
    let mut values = [0u32; SORT_ITEMS];
    let load_values = |values: &mut [u32; SORT_ITEMS]| {
        if full {
            let vp = a.values.as_ptr().wrapping_add(seg + lane);
            each_item!(i {
                // SAFETY: seg + i·32 + lane < tile_start + tile_keys ≤ len ≤ values.len();
                // read-only during the launch.
                values[i] = unsafe { mem::load_global_nc(vp.add(i * 32)) };
            });
        } else {
            each_item!(i {
                let e = seg + i * 32 + lane;
                if e < len {
                    values[i] = a.values[e];
                }
            });
        }
    };
    // The test of `full` outside the items: one base address, sixteen loads at constant
    // offsets, no branch per item.
    if full {
        let kp = a.keys.as_ptr().wrapping_add(seg + lane);
        each_item!(i {
            // SAFETY: seg + i·32 + lane < tile_start + tile_keys ≤ len: inside `keys`;
            // read-only during the launch.
            keys[i] = unsafe { mem::load_global_nc(kp.add(i * 32)) };
        });
    } else {
        each_item!(i {
            let e = seg + i * 32 + lane;
            if e < len {
                keys[i] = a.keys[e];
            }
        });
    }
    if PAIRS && !own_values {
        load_values(&mut values);
    }

    // 3. Rank within the warp, item by item: the lanes with equal digits (8 ballots, one
    //    per digit bit: `warp::match_any_bits`) advance the warp's counter of that digit by
    //    their number, through the group's highest lane; a key's rank among the warp's keys
    //    of its digit is the counter before, plus its group's lanes below it. The counters
    //    end as the warp's digit counts. A partial tile's padding (`K::LAST`, after every
    //    key of the input in the tile) is ranked like a key, with the largest digit: it
    //    ranks after that digit's keys, so it takes the tile's last `tile_keys - valid`
    //    places, which the scatter skips, and step 4 leaves it out of the published count.
    //    Full and partial tiles share one ranking, without a test per item.
    // The hot loops reach shared memory by 32-bit shared address (`ld.shared`/`st.shared`:
    // the generic pointers gave 64-bit generic loads and stores, an address multiply each).
    let hist = SharedAddr::of(sh_hist).byte_add((warp * RADIX * 4) as u32);
    let below_mask = (1u32 << lane) - 1;
    let mut local = [0u32; SORT_ITEMS];
    each_item!(i {
        let d = keys[i].digit(place);
        // All 8 bits, whatever the digit's width: bits above it are 0 in every lane.
        // SAFETY: the whole warp, converged (no divergence above).
        let peers = unsafe { warp::match_any_bits::<RADIX_BITS>(d) };
        // The group's highest lane (`peers` holds the caller's own bit: never 0).
        let leader = 31 - peers.leading_zeros();
        let mut prior = 0;
        if leader == lane as u32 {
            let counter = hist.byte_add(d * 4);
            // SAFETY: d < RADIX: this warp's counter of d, touched only by this group's
            // leader in this step; the previous step's writes are ordered by `sync_warp`.
            unsafe {
                prior = window::load_b32(counter);
                window::store_b32(counter, prior + peers.count_ones());
            }
        }
        // SAFETY: the whole warp.
        let prior = unsafe { warp::shfl_idx_sync(FULL_MASK, prior, leader, 32) };
        local[i] = prior + (peers & below_mask).count_ones();
        // SAFETY: the whole warp.
        unsafe { warp::sync_warp(FULL_MASK) };
    });
    sync_threads();

    // 4. Tile counts, published at once; the warp counters become exclusive prefixes over
    //    the warps. 5. Block scan of (global count, tile count) over the digits; each warp
    //    counter then holds where the warp's keys of that digit start in the sorted tile.
    //    Both by the digit threads (whole warps: `is_digit` is warp-uniform).
    let st = a.status.as_mut_ptr();
    let mut own = 0u32;
    let mut v = 0u64;
    let mut incl = 0u64;
    if is_digit {
        // Over the warps; with the padding in the largest digit's.
        let mut count = 0u32;
        for w in 0..THREADS / 32 {
            // SAFETY: digit `tid`'s counters, only this thread's between the barriers.
            unsafe {
                let c = shared::read(sh_hist.add(w * RADIX + digit));
                shared::write(sh_hist.add(w * RADIX + digit), count);
                count += c;
            }
        }
        // The tile's count of the digit among the input's keys: less the padding (step 3).
        own = if digit as u32 == place.mask() {
            count - (tile_keys - valid) as u32
        } else {
            count
        };
        // SAFETY: (tile, digit) < tiles · RADIX ≤ status.len(); status words are only
        // accessed atomically.
        unsafe {
            atomic::store::<Device, u64>(
                st.add(tile * RADIX + digit),
                status_word(epoch, tile == 0, own),
                Ordering::Relaxed,
            )
        };
        let bin = a.bins.get(digit).copied().unwrap_or(0);
        v = (bin as u64) << 32 | count as u64;
        // SAFETY: whole warps (`is_digit` is warp-uniform).
        incl = unsafe { warp_scan_u64(v) };
        if lane == 31 {
            // SAFETY: warp < DIGIT_WARPS; read after the barrier.
            unsafe { shared::write(sh_warp.add(warp), incl) };
        }
    }
    sync_threads();
    let mut global_start = 0u32;
    let mut digit_start = 0u32;
    if is_digit {
        let mut excl = incl - v;
        // Over the digit warps, counting those before this one: unrolled, without a loop
        // whose trip count is the warp index.
        for w in 0..DIGIT_WARPS {
            // SAFETY: written before the barrier.
            let t = unsafe { shared::read(sh_warp.add(w)) };
            if w < warp {
                excl += t;
            }
        }
        (digit_start, global_start) = (excl as u32, (excl >> 32) as u32);
        for w in 0..THREADS / 32 {
            // SAFETY: digit `tid`'s counters, only this thread's between the barriers.
            unsafe {
                let p = shared::read(sh_hist.add(w * RADIX + digit));
                shared::write(sh_hist.add(w * RADIX + digit), p + digit_start);
            }
        }
    }
    sync_threads();

    // 6. Each key goes to its place in the sorted tile in `exchange`: its warp's start for
    //    its digit plus its rank there (the padding to the places from `valid` on).
    let exchange_at = SharedAddr::of(exchange);
    let values_at = SharedAddr::of(values_sh);
    let key_bytes = size_of::<K>() as u32;
    each_item!(i {
        // SAFETY: the digit is below RADIX: this warp's counter, final since the barrier.
        local[i] += unsafe { window::load_b32(hist.byte_add(keys[i].digit(place) * 4)) };
        // SAFETY: local < tile_keys: places in the tile are a permutation of
        // 0 .. tile_keys, so no two threads write one slot.
        unsafe { keys[i].store_shared(exchange_at.byte_add(local[i] * key_bytes)) };
    });
    // Values with a buffer of their own: loaded now, so their loads are in flight during
    // the look-back and they hold no registers through the ranking.
    if own_values {
        load_values(&mut values);
    }

    // 7. Look-back, one digit per thread (after the block scan and the placing, so the
    //    tiles before have had that long to publish their inclusive prefixes).
    if is_digit {
        let mut prefix = 0u32;
        if tile > 0 {
            let mut t = tile;
            loop {
                t -= 1;
                let w = loop {
                    // SAFETY: t < tile < tiles: inside `status`; atomic access only.
                    let w = unsafe {
                        atomic::load::<Device, u64>(st.add(t * RADIX + digit), Ordering::Relaxed)
                    };
                    if (w >> 33) as u32 == epoch {
                        break w;
                    }
                };
                prefix = prefix.wrapping_add(w as u32);
                if (w >> 32) & 1 == 1 {
                    break;
                }
            }
            // SAFETY: as for the aggregate.
            unsafe {
                atomic::store::<Device, u64>(
                    st.add(tile * RADIX + digit),
                    status_word(epoch, true, prefix.wrapping_add(own)),
                    Ordering::Relaxed,
                )
            };
        }
        // SAFETY: digit < RADIX; read after the barrier.
        unsafe {
            shared::write(
                sh_base.add(digit),
                global_start.wrapping_add(prefix).wrapping_sub(digit_start),
            );
        }
    }
    if own_values {
        each_item!(i {
            // SAFETY: local < tile_keys, a permutation (as for the keys); `values_sh`
            // holds a tile of u32.
            unsafe { window::store_b32(values_at.byte_add(local[i] * 4), values[i]) };
        });
    }
    sync_threads();

    // 8. Scatter: threads read the tile in order and write each key (and, with their own
    //    buffer, its value) out (a full tile without a test per item; a partial one up to
    //    `valid`, leaving out the padding).
    let mut dest = [0u32; SORT_ITEMS];
    let base_at = SharedAddr::of(sh_base);
    let scatter = |i: usize, dest: &mut [u32; SORT_ITEMS]| {
        let j = (i * THREADS + tid) as u32;
        // SAFETY: j < tile_keys: written before the barrier.
        let k = unsafe { K::load_shared(exchange_at.byte_add(j * key_bytes)) };
        // SAFETY: digit < RADIX; written before the barrier.
        let d = unsafe { window::load_b32(base_at.byte_add(k.digit(place) * 4)) }.wrapping_add(j);
        // SAFETY: `write` checks the bound; output positions are a permutation.
        unsafe { a.keys_out.write(d as usize, k) };
        if own_values {
            // SAFETY: j < tile_keys: written before the barrier.
            let v = unsafe { window::load_b32(values_at.byte_add(j * 4)) };
            // SAFETY: as for the key.
            unsafe { a.values_out.write(d as usize, v) };
        } else {
            dest[i] = d;
        }
    };
    if full {
        each_item!(i { scatter(i, &mut dest) });
    } else {
        each_item!(i {
            if i * THREADS + tid < valid {
                scatter(i, &mut dest);
            }
        });
    }
    if PAIRS && !own_values {
        // The values through the keys' buffer, after them.
        sync_threads();
        each_item!(i {
            // SAFETY: as for the keys (a tile of u32 fits in a tile of K).
            unsafe { window::store_b32(exchange_at.byte_add(local[i] * 4), values[i]) };
        });
        sync_threads();
        each_item!(i {
            let j = i * THREADS + tid;
            if j < valid {
                // SAFETY: as above.
                let v = unsafe { window::load_b32(exchange_at.byte_add(j as u32 * 4)) };
                // SAFETY: `write` checks the bound; output positions are a permutation.
                unsafe { a.values_out.write(dest[i] as usize, v) };
            }
        });
    }
}

/// A key's all-zero bits (the registers of keys past the end of the input).
#[inline(always)]
fn zero_key<K: SortKey>() -> K {
    // SAFETY: every key type is an integer or a float, valid for all-zero bits.
    unsafe { core::mem::zeroed() }
}

macro_rules! sort_histogram_kernel {
    ($name:ident, $t:ty) => {
        #[doc = concat!("The upsweep of the `", stringify!($t), "` sort: adds, for every pass \
            of `[begin_bit, end_bit)` (clamped to the key's width), the count of each digit \
            to `counts[pass · RADIX + digit]` (see the [module docs](self)).")]
        ///
        /// Launch: 1D grid of any size, 1D blocks of a multiple of 32 threads; `counts`
        /// holds at least `passes · RADIX` words (fewer traps), zeroed by the caller.
        #[kernel]
        pub fn $name(keys: &[$t], counts: AtomicSlice<u32>, begin_bit: u32, end_bit: u32) {
            histogram::<$t>(keys, &counts, begin_bit, end_bit);
        }
    };
}

// One macro call per kernel: a `shared_array!` is named after its call site's line, so two
// kernels expanded from one call would declare the same `.shared` symbol.
macro_rules! sort_pass_kernel {
    ($name:ident, $t:ty, $pairs:literal, $what:literal) => {
        #[doc = concat!("One digit pass of the `", stringify!($t), "` ", $what, ": `keys` \
            stably sorted by the digit at `place` ([`DigitPlace::pack`]) into `keys_out` \
            (over the first `min(keys.len(), keys_out.len())` keys, and for pairs of the \
            values' lengths too; for pairs `values[i]` goes where `keys[i]` goes); see the \
            [module docs](self).")]
        ///
        /// Launch: 1D grid of at least [`sort_tiles`]`(len, `[`pass_tile`]`)` blocks of
        /// [`pass_threads`] threads (another block size traps), with
        /// [`pass_dynamic_shared_bytes`] of dynamic shared memory (fewer traps); `bins`: this pass's `RADIX` digit counts
        /// from the upsweep; `status`: [`status_words`]`(tiles)` words (tiles past what it
        /// holds are not sorted); `counter`: one `u32`. A keys-only pass ignores `values`
        /// and `values_out`.
        ///
        /// # Safety
        /// Memory safety holds for any arguments (every output write is bounds-checked;
        /// `status` and `counter` are only accessed atomically). What the caller must
        /// ensure is progress and correctness:
        /// - `base` is `counter[0]` when the launch starts, and no other launch uses
        ///   `counter` or `status` concurrently (otherwise the launch can hang);
        /// - `epoch` is in `1..=MAX_EPOCH` and no word of `status` carries it yet
        ///   (otherwise stale words give wrong offsets);
        /// - `bins` are the digit counts of exactly these keys at `place` (otherwise keys
        ///   land in the wrong places, or collide).
        #[kernel]
        pub unsafe fn $name(
            keys: &[$t],
            keys_out: OutSlice<$t>,
            values: &[u32],
            values_out: OutSlice<u32>,
            bins: &[u32],
            status: OutSlice<u64>,
            counter: AtomicSlice<u32>,
            place: u32,
            epoch: u32,
            base: u32,
        ) {
            const THREADS: usize = pass_threads::<$t>($pairs) as usize;
            const TILE: usize = pass_tile::<$t>($pairs);
            const DYNAMIC: usize = pass_dynamic_shared_bytes::<$t>($pairs) as usize;
            // The exchange buffer: one tile of keys (and, for `u64` pairs, later of values);
            // static, or (with the values' own buffer after it) the dynamic shared memory.
            const WORDS: usize = if DYNAMIC > 0 {
                4
            } else {
                TILE * core::mem::size_of::<$t>() / 4
            };
            let (exchange, values_sh) = if DYNAMIC > 0 {
                if (shared::dynamic_shared_size_bytes() as usize) < DYNAMIC {
                    panic!("a pairs sort pass needs `pass_dynamic_shared_bytes` of dynamic shared memory");
                }
                let keys_sh = shared::dynamic_shared::<u32>();
                // SAFETY: TILE words of keys, then TILE words of values: inside the
                // DYNAMIC bytes (checked above); 16-byte aligned (TILE · 4 is a multiple
                // of 16).
                (keys_sh.cast::<$t>(), unsafe { keys_sh.add(TILE) })
            } else {
                let keys_sh = shared_array!(u32, WORDS, align = 16);
                (keys_sh.cast::<$t>(), keys_sh)
            };
            let args = PassArgs {
                keys,
                keys_out: &keys_out,
                values,
                values_out: &values_out,
                bins,
                status: &status,
                counter: &counter,
            };
            // SAFETY: caller contract; `exchange` holds one tile of keys.
            unsafe {
                sort_pass_tile::<$t, $pairs, THREADS>(exchange, values_sh, args, place, epoch, base)
            }
        }
    };
}

sort_histogram_kernel!(sort_histogram_u32, u32);
sort_histogram_kernel!(sort_histogram_i32, i32);
sort_histogram_kernel!(sort_histogram_f32, f32);
sort_histogram_kernel!(sort_histogram_u64, u64);
sort_pass_kernel!(sort_pass_u32, u32, false, "keys-only sort");
sort_pass_kernel!(sort_pass_i32, i32, false, "keys-only sort");
sort_pass_kernel!(sort_pass_f32, f32, false, "keys-only sort");
sort_pass_kernel!(sort_pass_u64, u64, false, "keys-only sort");
sort_pass_kernel!(sort_pass_pairs_u32, u32, true, "key-value sort");
sort_pass_kernel!(sort_pass_pairs_i32, i32, true, "key-value sort");
sort_pass_kernel!(sort_pass_pairs_f32, f32, true, "key-value sort");
sort_pass_kernel!(sort_pass_pairs_u64, u64, true, "key-value sort");

// The epochs are the scan's: a status word holds a 31-bit epoch.
const _: () = assert!(MAX_EPOCH == (1 << 31) - 1);
// Every scatter kernel's static shared memory stays within the 48 KiB a kernel may
// declare statically, and static and dynamic together within the 227 KiB an H100 or H200
// block may opt in to (CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability": 227 KB for 9.0), at least two blocks per multiprocessor in 228 KiB.
const _: () = {
    assert!(pass_shared_bytes::<u32>(false) <= 48 * 1024);
    assert!(pass_shared_bytes::<u32>(true) <= 48 * 1024);
    assert!(pass_shared_bytes::<u64>(false) <= 48 * 1024);
    assert!(pass_shared_bytes::<u64>(true) <= 48 * 1024);
    let pairs32 = pass_shared_bytes::<u32>(true) + pass_dynamic_shared_bytes::<u32>(true) as usize;
    assert!(2 * (pairs32 + 1024) <= 228 * 1024);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_order_puts_negative_zero_first_and_nans_last() {
        let order = [
            f32::NEG_INFINITY,
            -1.5,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::from_bits(1),
            2.0,
            f32::INFINITY,
        ];
        for w in order.windows(2) {
            assert!(w[0].ordered() < w[1].ordered(), "{} !< {}", w[0], w[1]);
        }
        for nan in [
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            f32::from_bits(!0),
        ] {
            assert_eq!(nan.ordered(), u64::from(u32::MAX));
        }
        assert!(f32::INFINITY.ordered() < f32::NAN.ordered());
    }

    #[test]
    fn i32_order_and_digits() {
        assert!((-1i32).ordered() < 0i32.ordered());
        assert!(i32::MIN.ordered() < i32::MAX.ordered());
        assert_eq!(i32::MIN.ordered(), 0);
        let p = DigitPlace::of_pass(0, 32, 3);
        assert_eq!((p.shift, p.digit_bits), (24, 8));
        assert_eq!((-1i32).digit(p), 0x7f);
        assert_eq!(
            0x1234_5678_9abc_def0u64.digit(DigitPlace::of_pass(0, 64, 7)),
            0x12
        );
    }

    #[test]
    fn bit_ranges_split_into_passes() {
        assert_eq!(passes(0, 32), 4);
        assert_eq!(passes(0, 64), 8);
        assert_eq!(passes(3, 3), 1);
        assert_eq!(DigitPlace::of_pass(3, 3, 0).mask(), 0);
        assert_eq!(passes(4, 21), 3);
        let last = DigitPlace::of_pass(4, 21, 2);
        assert_eq!((last.shift, last.digit_bits, last.mask()), (20, 1, 1));
        assert_eq!(DigitPlace::unpack(last.pack()), last);
        assert_eq!(
            status_words(sort_tiles(SORT_TILE + 1, SORT_TILE)),
            2 * RADIX
        );
        assert_eq!(pass_tile::<f32>(false), SORT_TILE_WIDE);
        assert_eq!(pass_tile::<f32>(true), SORT_TILE_WIDE);
        assert_eq!(pass_dynamic_shared_bytes::<u32>(true), 48 * 1024);
        assert_eq!(pass_dynamic_shared_bytes::<u32>(false), 0);
        assert_eq!(pass_tile::<u64>(false), SORT_TILE);
    }
}
