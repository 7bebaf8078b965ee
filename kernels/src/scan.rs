//! Inclusive and exclusive scans (prefix sums, or prefix combinations under any associative
//! [`Op`]) in **one pass** with decoupled look-back (Merrill & Garland, "Single-pass Parallel
//! Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002), shaped as CUB's sm_90 scan
//! (CCCL `agent_scan.cuh`, `single_pass_scan_operators.cuh`, `tuning_scan.cuh`).
//!
//! Kernels: `scan_{inclusive,exclusive}_{f32,f64,u32}` (sums) and
//! `scan_{inclusive,exclusive}_affine` (the user-operator example: composition of affine maps
//! modulo 2^32, [`Affine`], which is associative but not commutative).
//!
//! # Tiles
//! Each block scans one tile of `THREADS` threads × `ITEMS` elements: [`SCAN_THREADS`]
//! (256) × [`SCAN_ITEMS`] (24) for 4-byte types ([`SCAN_TILE`] = 6144 elements, 24 KiB),
//! [`SCAN_THREADS_WIDE`] (224) × [`SCAN_ITEMS_WIDE`] (18) for 8-byte types
//! ([`SCAN_TILE_WIDE`] = 4032 elements, 31.5 KiB). CUB's sm_90 tuning (`tuning_scan.cuh`)
//! takes 128 × 24 for `float` and 224 × 12 for `double` (its grid in ncu: 24,967 blocks for
//! 2^26 `double`s). Here the 4-byte tiles have twice CUB's threads, which halves the
//! look-backs per element, and the 8-byte tiles hold 18 items because a lane's blocked
//! items then span 144 bytes, which puts the 8 lanes of each 16-byte shared-memory phase
//! in 8 different bank groups (no conflict; 24 items, 192 bytes, conflict 4-way). On an H100
//! at 2^28, same runs as CUB: 4-byte 256 × 24 at 1.02–1.09× CUB, against 0.96–0.98× with
//! 128 threads; 8-byte 224 × 18 at 0.93–0.96×, against 0.88–0.91× for 224 × 24 and 224 ×
//! 12, 0.78–0.80× for 224 × 16 (128 bytes: 8-way conflicts). Per tile:
//!
//! 1. **Load**, warp-striped: warp `w` owns `32·ITEMS` consecutive elements; its lane `l`
//!    loads items `i·32 + l` (`ld.global.nc`, one scalar per lane: every load instruction of
//!    the warp reads 128 or 256 consecutive bytes), then the warp transposes them through
//!    shared memory to a blocked layout (lane `l` holds items `l·ITEMS + i`): scalar
//!    striped accesses (conflict-free), 16-byte vector blocked accesses (each lane's 96
//!    bytes in 6, at most 2-way bank conflicts per quarter-warp phase; or 144 bytes in 9,
//!    conflict-free).
//! 2. **Thread reduction**: each thread combines its `ITEMS` values serially in registers.
//! 3. **Warp scan** of the thread totals with `shfl.sync.up` (Hillis–Steele), then the 8
//!    or 7 warp totals through shared memory: every thread combines the totals of the warps
//!    before its own, which also gives the tile aggregate.
//! 4. **Look-back** (warp 0, tiles > 0): publish the aggregate, then read the status of the
//!    32 previous tiles at once (one per lane), waiting (`nanosleep` before the first poll
//!    and between polls, in launches of 500 blocks or more) until all 32
//!    are published in this launch; combine, in tile order, the values from the nearest
//!    predecessor back to the first one that carries an inclusive prefix (a segmented
//!    reduction over `shfl.sync.down`); repeat with the next 32 if none did. Publish the
//!    tile's inclusive prefix.
//! 5. **Output**: each thread rescans its items serially from its exclusive prefix (tile
//!    prefix, warp prefix, lane prefix), the warp transposes back to striped through the same
//!    shared memory, and stores coalesced scalars.
//!
//! **8-byte types on sm_90 (the sm_90a variant, and the CPU emulator): bulk copies.** A
//! full tile whose input and output are 16-byte aligned is loaded by one `cp.async.bulk`
//! (`tma::bulk_load`, issued by thread 0 as soon as it has claimed the tile, completing on an
//! mbarrier), and each warp's segment is stored by one `cp.async.bulk` store
//! (`tma::bulk_store`) after the rescan; the thread reduction and the rescan read the items
//! from shared memory, 16 bytes at a time, so no item waits in a register through the
//! look-back. That takes the kernels from 60–64 registers (4 blocks per multiprocessor) to
//! 40 (6 blocks, then limited by the 31.5 KiB tile). Measured on an H200 at 2^28: the same
//! speed as the register path (the 8-byte scans are bound by memory there); what moved them
//! was fewer look-back polls (the delays below the kernels). Partial and unaligned tiles are
//! copied element by element. The 4-byte scans keep the register path: with bulk copies (6
//! blocks of 256 at 40 registers) they ran 1–3 % slower in the same H200 run.
//!
//! Only the last tile checks bounds (a block-uniform branch picks the full-tile or the
//! partial-tile load and store); the look-back window reads status slots `tile − 32 ..
//! tile − 1` with no bounds check, because [`STATUS_PAD`] slots precede tile 0's (a slot
//! before tile 0 reads as "inclusive prefix = identity" by a select on its index).
//!
//! # Status slots and publication
//! The host gives one `u64` buffer `status` of `3 · slots` words (`slots = STATUS_PAD +
//! tiles`); tile `t` owns slot `STATUS_PAD + t` of each third (the last third is spare: the
//! size is kept so that one buffer also serves the bench's CUDA C twin).
//!
//! A status word is `(epoch << 1 | inclusive) << 32 | 32 value bits` ([`status_word`]),
//! written by one 8-byte `st.relaxed.gpu` and read by one `ld.relaxed.gpu`. Aligned 64-bit
//! scalar accesses are single-copy atomic (PTX ISA, "Memory Consistency Model", "Memory
//! operations": naturally aligned scalar accesses up to 64 bits), so a reader sees either
//! the old word or the new one, never a mix: the tag and the value bits it carries come from
//! the same store. No fence is needed anywhere.
//!
//! - 4-byte types: one word per tile, in the first third.
//! - 8-byte types: the value's low half in the first third's word, its high half in the
//!   second third's, *each word tagged*. The reader loads both words (two independent loads,
//!   issued back to back: one round trip) and takes the slot as published only when both
//!   carry this launch's epoch *and the same inclusive flag*. In one launch a tile writes
//!   each tag at most once (its aggregate once, then its inclusive prefix once), so two words
//!   with the same tag are the two halves of the same value. A reader that catches the
//!   change from aggregate to inclusive prefix half-way sees two different tags and polls
//!   again; by coherence it then sees the newer word in both, so the wait ends.
//!   Why not a 16-byte `{flag, value}` store, as CUB does: the PTX memory model treats a
//!   vector access as one access per element in an unspecified order (PTX ISA, "Vector
//!   Data-types"), so a reader could see the new flag with the old value; and why not a
//!   value store, a `fence.acq_rel.gpu` and a flag store (a release pattern) with the
//!   matching acquire on the reader: the writer's fence waits for the value store to reach
//!   L2, and the reader needs a second round trip (flag, then value), all on the look-back's
//!   critical path (that version ran the f64 scan at 0.35× CUB).
//!
//! # Epochs: no reset between launches
//! The host passes a fresh `epoch` per launch, so words left by earlier launches are never
//! mistaken for this one's, and the status buffer is never cleared between launches (the
//! host zeroes it only when the 31-bit epochs run out, [`MAX_EPOCH`]). The tile counter is
//! never reset either: the host passes its value before the launch (`base`), and a block's
//! tile is `counter − base` (wrapping).
//!
//! # Deadlock freedom
//! A block's tile index is taken from a device-wide atomic counter when the block starts
//! running, not from `blockIdx`. So tiles are handed out in the order blocks *start*, and
//! when block B holds tile t, tiles 0 .. t − 1 were taken earlier by blocks that are already
//! resident. A block waits only for the status of smaller tiles; such a block never waits
//! for a larger tile, so by induction on the tile index every wait ends: tile 0 publishes
//! without waiting, and a tile whose predecessors have all published (at least their
//! aggregates) finishes its look-back. This holds whatever order, and however few at a time,
//! the hardware starts blocks in; `blockIdx`-ordered tiles would deadlock if a later block
//! filled the GPU while an earlier one was not yet started.
//!
//! # Results
//! Integer scans wrap modulo 2^32 and are exact in any order, as is [`Affine`] composition
//! (modulo 2^32). Every float output is the sum of exactly its input terms over some tree of
//! additions (no subtraction), so its error is within the bound of any summation order:
//! `|out − exact| ≤ (k − 1)·u·Σ|x|` for `k` terms and unit roundoff `u`, and in practice
//! about `log2(k)·u·Σ|x|` (the tree is: serial over a thread's items, then a warp and block
//! tree, then tile by tile); it is exact when every partial sum is representable.

use crate::reduce::{Op, Sum, require_whole_warps};
use cuda_std::atomic::{self, Device, Ordering};
use cuda_std::barrier::{self, MBarrier, Phase};
use cuda_std::prelude::*;
use cuda_std::thread::nanosleep;
use cuda_std::{mem, shared, tma};

/// Threads per block of the 4-byte scan kernels (8 warps; see the [module docs](self) for
/// why not CUB's 128).
pub const SCAN_THREADS: u32 = 256;
/// Items per thread for 4-byte elements (as CUB's sm_90 tuning for `float`).
pub const SCAN_ITEMS: usize = 24;
/// Threads per block of the 8-byte scan kernels (7 warps, as CUB's sm_90 tuning for
/// `double`).
pub const SCAN_THREADS_WIDE: u32 = 224;
/// Items per thread for 8-byte elements: 144 bytes per lane, so the blocked 16-byte
/// shared-memory accesses are free of bank conflicts (see the [module docs](self)).
pub const SCAN_ITEMS_WIDE: usize = 18;
/// Elements per tile (one block) of a 4-byte type: 24 KiB.
pub const SCAN_TILE: usize = SCAN_THREADS as usize * SCAN_ITEMS;
/// Elements per tile of an 8-byte type: 31.5 KiB.
pub const SCAN_TILE_WIDE: usize = SCAN_THREADS_WIDE as usize * SCAN_ITEMS_WIDE;
/// The most warps a scan block has (the warp-totals array's length).
const MAX_WARPS: usize = 8;
const _: () = assert!(SCAN_THREADS_WIDE as usize / 32 <= MAX_WARPS);
/// Status slots before tile 0's in each third of the status buffer (one look-back window),
/// so the window's loads never leave the buffer.
pub const STATUS_PAD: usize = 32;
/// Words of the transpose buffer (`u32` units) of a 4-byte kernel: its tile, 24 KiB.
const EXCHANGE_WORDS: usize = SCAN_TILE;
/// Words of the transpose buffer of an 8-byte kernel: its tile, 31.5 KiB.
const EXCHANGE_WORDS_WIDE: usize = 2 * SCAN_TILE_WIDE;
// A block's static shared memory (transpose buffer, warp totals, tile index and prefix)
// stays within the 48 KiB a kernel may declare statically.
const _: () = assert!(4 * EXCHANGE_WORDS_WIDE + 8 * MAX_WARPS + 16 <= 48 * 1024);

/// Whether this build moves the 8-byte scans' tiles with bulk copies (`cp.async.bulk`,
/// sm_90, [`tma::AVAILABLE`]): the sm_90a variant and the CPU emulator; older targets load
/// and store through registers.
const BULK_WIDE: bool = tma::AVAILABLE;

/// The largest epoch a status word can carry (31 bits); the host starts again at 1 after
/// zeroing the status words.
pub const MAX_EPOCH: u32 = (1 << 31) - 1;

/// Launches of at least this many blocks sleep in the look-back (CUB's `delay<>` threshold,
/// `GridThreshold = 500` in `single_pass_scan_operators.cuh`); smaller ones spin.
const SLEEP_GRID_BLOCKS: u32 = 500;

/// The status word of a 4-byte type's tile for `epoch`: its aggregate (`inclusive ==
/// false`) or its inclusive prefix (`true`), as 32 value bits.
#[inline(always)]
pub const fn status_word(epoch: u32, inclusive: bool, bits: u32) -> u64 {
    (((epoch << 1) | inclusive as u32) as u64) << 32 | bits as u64
}

/// What a look-back reads from a slot: `(tag, value bits)` of its word `lo` (4-byte types)
/// or of its two words `lo`, `hi` (8-byte types: low and high halves). Tag 0 (epoch 0:
/// never ready) when the two halves carry different tags, i.e. come from different
/// publications.
#[inline(always)]
pub const fn slot_value(wide: bool, lo: u64, hi: u64) -> (u32, u64) {
    let tag = (lo >> 32) as u32;
    if !wide {
        (tag, lo & 0xffff_ffff)
    } else if (hi >> 32) as u32 == tag {
        (tag, hi << 32 | lo & 0xffff_ffff)
    } else {
        (0, 0)
    }
}

/// Status words needed for `tiles` tiles: three thirds of [`STATUS_PAD`]` + tiles` slots
/// (the kernels use the first two; see the [module docs](self)).
pub const fn status_words(tiles: usize) -> usize {
    3 * (STATUS_PAD + tiles)
}

/// An element type of the scan kernels: 4 or 8 bytes, moved (loaded, shuffled, published)
/// as its bits.
pub trait ScanValue: Copy + DeviceCopy {
    /// `u32` for 4-byte types, `u64` for 8-byte ones.
    type Bits: Copy + warp::Shuffle + mem::NcValue;
    /// Whether the type is 8 bytes (published as two tagged halves: [module docs](self)).
    const WIDE: bool;
    /// The value's bits.
    fn to_bits(self) -> Self::Bits;
    /// The value with these bits.
    fn from_bits(bits: Self::Bits) -> Self;
    /// The bits as a `u64` (zero-extended).
    fn bits_u64(bits: Self::Bits) -> u64;
    /// The low `size` bits of `w` as bits.
    fn bits_from_u64(w: u64) -> Self::Bits;
}

macro_rules! scan_value {
    ($t:ty, $bits:ty, $wide:literal, $to:expr, $from:expr) => {
        impl ScanValue for $t {
            type Bits = $bits;
            const WIDE: bool = $wide;
            #[inline(always)]
            fn to_bits(self) -> $bits {
                $to(self)
            }
            #[inline(always)]
            fn from_bits(bits: $bits) -> Self {
                $from(bits)
            }
            #[inline(always)]
            fn bits_u64(bits: $bits) -> u64 {
                bits as u64
            }
            #[inline(always)]
            fn bits_from_u64(w: u64) -> $bits {
                w as $bits
            }
        }
    };
}
scan_value!(f32, u32, false, f32::to_bits, f32::from_bits);
scan_value!(u32, u32, false, |x| x, |x| x);
scan_value!(f64, u64, true, f64::to_bits, f64::from_bits);
scan_value!(u64, u64, true, |x| x, |x| x);

/// The user-operator example: affine maps `x ↦ a·x + b` modulo 2^32, packed in a `u64` as
/// `a | b << 32` (see [`affine`]). Composition in scan order: `combine(f, g)` is "`f`, then
/// `g`", `x ↦ g(f(x))` = `(g.a·f.a, g.a·f.b + g.b)`. Associative (exactly, in wrapping
/// arithmetic), not commutative; identity `(1, 0)`.
#[derive(Debug)]
pub struct Affine;

/// The packed affine map `x ↦ a·x + b` (mod 2^32) for [`Affine`].
#[inline(always)]
pub const fn affine(a: u32, b: u32) -> u64 {
    a as u64 | (b as u64) << 32
}

impl Op<u64> for Affine {
    const IDENTITY: u64 = affine(1, 0);
    #[inline(always)]
    fn combine(f: u64, g: u64) -> u64 {
        let (fa, fb) = (f as u32, (f >> 32) as u32);
        let (ga, gb) = (g as u32, (g >> 32) as u32);
        affine(ga.wrapping_mul(fa), ga.wrapping_mul(fb).wrapping_add(gb))
    }
}

/// Inclusive scan of `v` over the warp in lane order (Hillis–Steele over `shfl.sync.up`;
/// the lower lane's value on the left, so any associative `O` works).
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_scan<T: ScanValue, O: Op<T>>(mut v: T) -> T {
    let lane = lane_id();
    let mut d = 1;
    while d < 32 {
        // SAFETY: caller contract (whole warp, same mask and width).
        let y = T::from_bits(unsafe { warp::shfl_up_sync(FULL_MASK, v.to_bits(), d, 32) });
        if lane >= d {
            v = O::combine(y, v);
        }
        d <<= 1;
    }
    v
}

/// Lane 0 gets `combine(v[31], …, v[1], v[0])` (higher lanes on the left: lane `l` holds the
/// `l`-th tile back); other lanes get partial values.
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_reduce_back<T: ScanValue, O: Op<T>>(mut v: T) -> T {
    let lane = lane_id();
    let mut d = 1;
    while d < 32 {
        // SAFETY: caller contract.
        let y = T::from_bits(unsafe { warp::shfl_down_sync(FULL_MASK, v.to_bits(), d, 32) });
        if lane + d < 32 {
            v = O::combine(y, v);
        }
        d <<= 1;
    }
    v
}

/// 16 bytes of a thread's blocked items, for the vector shared-memory accesses of the
/// transpose (`ld.v4` / `st.v4`: a thread's 96 or 144 bytes move in 6 or 9 accesses).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Quad([u32; 4]);

/// Copies this thread's `ITEMS` blocked values between registers and shared memory as
/// `ITEMS · size_of::<T>() / 16` 16-byte accesses: `to_shared` writes `v` to `blk`,
/// otherwise reads `blk` into `v`.
///
/// # Safety
/// `blk` is 16-byte aligned and valid for `ITEMS · size_of::<T>()` bytes of shared memory
/// that no other thread accesses until the next barrier; that size is a multiple of 16.
#[inline(always)]
unsafe fn blocked_copy<T: ScanValue, const ITEMS: usize>(
    v: &mut [T; ITEMS],
    blk: *mut Quad,
    to_shared: bool,
) {
    let regs = v.as_mut_ptr().cast::<Quad>();
    for k in 0..ITEMS * size_of::<T>() / 16 {
        // SAFETY: caller contract; `v` holds that many quads (read and written unaligned: a
        // register array has only T's alignment).
        unsafe {
            if to_shared {
                shared::write(blk.add(k), regs.add(k).read_unaligned());
            } else {
                regs.add(k).write_unaligned(shared::read(blk.add(k)));
            }
        }
    }
}

/// Folds this thread's `ITEMS` blocked values in shared memory, 16 bytes at a time, in item
/// order. `rescan = None`: returns their combination. `rescan = Some((run, inclusive))`:
/// replaces each value in place by its inclusive (`run` ⊕ items up to it) or exclusive
/// (`run` ⊕ the items before it) prefix, and returns `run` ⊕ all items.
///
/// # Safety
/// As [`blocked_copy`].
#[inline(always)]
unsafe fn blocked_fold<T: ScanValue, O: Op<T>, const ITEMS: usize>(
    blk: *mut Quad,
    rescan: Option<(T, bool)>,
) -> T {
    let per = 16 / size_of::<T>();
    let mut acc = rescan.map_or(O::IDENTITY, |(run, _)| run);
    for k in 0..ITEMS / per {
        // SAFETY: caller contract (quad k of this thread's blocked bytes).
        let mut q = unsafe { shared::read(blk.add(k)) };
        let vals = core::ptr::from_mut(&mut q).cast::<T>();
        for j in 0..per {
            // SAFETY: a quad holds `per` values of `T` (read and written unaligned: a quad
            // is 16-byte aligned, T's alignment may be that of its bits).
            let vi = unsafe { vals.add(j).read_unaligned() };
            // The first item starts the reduction (no identity term: an identity of +0
            // would turn a sum of −0s into +0).
            let next = if rescan.is_none() && k == 0 && j == 0 {
                vi
            } else {
                O::combine(acc, vi)
            };
            if let Some((_, inclusive)) = rescan {
                // SAFETY: as above.
                unsafe {
                    vals.add(j)
                        .write_unaligned(if inclusive { next } else { acc })
                };
            }
            acc = next;
        }
        if rescan.is_some() {
            // SAFETY: caller contract.
            unsafe { shared::write(blk.add(k), q) };
        }
    }
    acc
}

/// Publishes tile `tile`'s value (aggregate or inclusive prefix) for `epoch`: one relaxed
/// 8-byte store for 4-byte types, two (one per 32-bit half) for 8-byte types.
///
/// # Safety
/// `st` points to `3 · slots` status words, `STATUS_PAD + tile < slots`; status words are
/// only accessed atomically.
#[inline(always)]
unsafe fn publish<T: ScanValue>(
    st: *mut u64,
    slots: usize,
    tile: usize,
    epoch: u32,
    inclusive: bool,
    v: T,
) {
    let s = STATUS_PAD + tile;
    let bits = T::bits_u64(v.to_bits());
    // SAFETY: s < slots and slots + s < 3·slots (caller contract); atomic accesses only.
    unsafe {
        atomic::store::<Device, u64>(
            st.add(s),
            status_word(epoch, inclusive, bits as u32),
            Ordering::Relaxed,
        );
        if T::WIDE {
            atomic::store::<Device, u64>(
                st.add(slots + s),
                status_word(epoch, inclusive, (bits >> 32) as u32),
                Ordering::Relaxed,
            );
        }
    }
}

/// Warp 0's look-back for tile `tile > 0`: the combination of all earlier tiles' elements
/// (every lane gets it).
///
/// # Safety
/// All of warp 0 calls it; `st` as for [`publish`], `tile < slots − STATUS_PAD`.
#[inline(always)]
unsafe fn look_back<T: ScanValue, O: Op<T>>(
    st: *mut u64,
    slots: usize,
    tile: usize,
    epoch: u32,
    sleep: bool,
    (delay_ns, l2_write_ns): (u32, u32),
) -> T {
    let lane = lane_id() as usize;
    let mut prefix = O::IDENTITY;
    let mut end = tile; // this window: tiles end − 32 .. end − 1, lane l = tile end − 1 − l
    if sleep {
        // Give the predecessors' stores time to reach L2 before the first poll (CUB's
        // `L2WriteLatency` delay, which CUB itself sleeps only on sm_80; on an H100 the
        // scans ran 10 % faster with it than with an immediate first poll).
        nanosleep(l2_write_ns);
    }
    loop {
        let before_first = end < lane + 1;
        // Slot STATUS_PAD + end − 1 − lane ≥ 1: inside the buffer (end ≥ 1, lane ≤ 31).
        let slot = STATUS_PAD + end - 1 - lane;
        let (f, value) = loop {
            // SAFETY: slot < slots (caller contract); atomic access only.
            let w = unsafe { atomic::load::<Device, u64>(st.add(slot), Ordering::Relaxed) };
            let h = if T::WIDE {
                // SAFETY: slots + slot < 2·slots (caller contract); atomic access only.
                unsafe { atomic::load::<Device, u64>(st.add(slots + slot), Ordering::Relaxed) }
            } else {
                0
            };
            let (f, bits) = slot_value(T::WIDE, w, h);
            // A slot before tile 0: the inclusive prefix of nothing.
            let f = if before_first { (epoch << 1) | 1 } else { f };
            let ready = f >> 1 == epoch;
            // SAFETY: all of warp 0 runs this loop together (the exit is warp-uniform).
            if unsafe { warp::vote_all_sync(FULL_MASK, ready) } {
                let value = if before_first {
                    O::IDENTITY
                } else {
                    T::from_bits(T::bits_from_u64(bits))
                };
                break (f, value);
            }
            if sleep {
                nanosleep(delay_ns);
            }
        };
        let inclusive = f & 1 == 1;
        // SAFETY: all of warp 0.
        let incl_lanes = unsafe { warp::vote_ballot_sync(FULL_MASK, inclusive) };
        // The nearest predecessor is lane 0: lanes up to the first inclusive one count.
        let counts = incl_lanes == 0 || lane as u32 <= incl_lanes.trailing_zeros();
        let v = if counts { value } else { O::IDENTITY };
        // SAFETY: all of warp 0.
        let window = unsafe { warp_reduce_back::<T, O>(v) };
        // SAFETY: all of warp 0.
        let window =
            T::from_bits(unsafe { warp::shfl_idx_sync(FULL_MASK, window.to_bits(), 0, 32) });
        prefix = O::combine(window, prefix);
        if incl_lanes != 0 {
            return prefix;
        }
        end -= 32;
    }
}

/// The scan kernels' body; see the [module docs](self). With `BULK`, a full tile whose
/// input and output are 16-byte aligned moves by bulk copies (the tile in, each warp's
/// segment out), and the items are read from shared memory again for the rescan instead of
/// waiting in registers through the look-back.
///
/// # Safety
/// As for the kernels (liveness and correctness only: memory safety holds for any
/// arguments).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn scan_tile<
    T: ScanValue,
    O: Op<T>,
    const THREADS: u32,
    const ITEMS: usize,
    const INCLUSIVE: bool,
    const BULK: bool,
>(
    exchange: *mut T,
    x: &[T],
    out: &OutSlice<T>,
    status: &OutSlice<u64>,
    counter: &AtomicSlice<u32>,
    epoch: u32,
    base: u32,
    delays: (u32, u32),
) {
    require_whole_warps();
    if block_dim_x() != THREADS {
        panic!("a scan kernel runs with its own block size (SCAN_THREADS or SCAN_THREADS_WIDE)");
    }
    let warps = THREADS as usize / 32;
    let id = O::IDENTITY;
    let tid = thread_idx_x() as usize;
    let (lane, warp) = (tid % 32, tid / 32);
    let tile_elems = THREADS as usize * ITEMS;
    let len = x.len().min(out.len());
    let slots = status.len() / 3;
    let tiles = len
        .div_ceil(tile_elems)
        .min(slots.saturating_sub(STATUS_PAD));

    // Shared memory: the tile index; the warp totals; the tile's exclusive prefix; and the
    // caller's transpose buffer (one tile, 16-byte aligned). The tile index is indexed
    // (`SharedArray`); the others hold a generic `T`, so they are raw pointers accessed with
    // `shared::read` / `shared::write`: on the CPU emulator every shared access of the scan
    // is checked (races, initialisation, bounds); on the GPU all are plain loads and stores.
    // SAFETY: written by thread 0 only, read by the block after a barrier (below).
    let sh_tile = unsafe { shared_array!([u32; 1]) };
    let sh_warp: *mut u64 = shared_array!(u64, MAX_WARPS);
    let sh_prefix: *mut u64 = shared_array!(u64, 1);
    // The bulk load's barrier (used with `BULK` only).
    // SAFETY: this block's shared memory; initialised by thread 0 before its own use, which
    // the block barrier below orders before the other threads' waits.
    let bar = unsafe { &*shared_array!(MBarrier, 1) };
    // Warp w's segment: items w·32·ITEMS .. (w + 1)·32·ITEMS; lane l's blocked items start
    // at l·ITEMS (96 or 144 bytes per lane: 16-byte aligned).
    // SAFETY: inside the buffer (warps·32·ITEMS elements: one tile).
    let seg_sh = unsafe { exchange.add(warp * 32 * ITEMS) };
    // SAFETY: as above.
    let blk = unsafe { seg_sh.add(lane * ITEMS) }.cast::<Quad>();

    let xp = x.as_ptr();
    let op = out.as_mut_ptr();
    // Bulk copies need 16-byte aligned global addresses (every tile and segment is a
    // multiple of 16 bytes: `exchange_buffer_holds_a_tile_of_either_width`).
    let bulk_ok = BULK && (xp as usize | op as usize).is_multiple_of(16);
    let tile_bytes = (tile_elems * size_of::<T>()) as u32;
    if tid == 0 {
        // An empty `counter` gives no tile.
        let t = counter
            .fetch_add(0, 1, Ordering::Relaxed)
            .map_or(u32::MAX, |c| c.wrapping_sub(base));
        sh_tile[0] = t;
        let t = t as usize;
        if bulk_ok && t < tiles && (t + 1) * tile_elems <= len {
            // The whole tile in one bulk copy, issued as soon as the tile is known (the
            // initialising thread issues before the block barrier: `barrier`'s pitfall).
            // SAFETY: one initialising thread, fenced before its own use; phase 0 expects the
            // tile's bytes; the tile is inside `x` (full), 16-byte aligned (`bulk_ok`), and
            // the buffer holds one tile and is not touched before the wait below.
            unsafe {
                bar.init(1);
                barrier::fence_init();
                bar.arrive_expect_tx(tile_bytes);
                tma::bulk_load(exchange, xp.add(t * tile_elems), tile_bytes, bar);
            }
        }
    }
    sync_threads();
    // Written by thread 0 before the barrier, never written again.
    let tile = sh_tile[0] as usize;
    if tile >= tiles {
        // The whole block leaves (block-uniform): nothing to scan, nothing published.
        return;
    }

    // 1. Load, warp-striped, then transpose to blocked. `T` has the size of `T::Bits` (4
    //    or 8 bytes, by the ScanValue impls), so the shared buffer holds 32·ITEMS·warps
    //    values of `T` (24 or 31.5 KiB) plus the padding.
    let seg = tile * tile_elems + warp * 32 * ITEMS;
    let full = (tile + 1) * tile_elems <= len;
    let bulk = bulk_ok && full;
    let mut v = [id; ITEMS];
    if bulk {
        // SAFETY: initialised by thread 0 before the block barrier; phase 0 completes when
        // the tile's bytes have landed.
        unsafe { bar.wait(Phase::ZERO) };
    } else if BULK {
        // A partial or unaligned tile of a bulk kernel: element by element into shared
        // memory (no register array, whose registers would count for the whole kernel).
        for i in 0..ITEMS {
            let e = seg + i * 32 + lane;
            let vi = if e < len { x[e] } else { id };
            // SAFETY: index < the tile's length; slots of this warp's segment only.
            unsafe { shared::write(seg_sh.add(i * 32 + lane), vi) };
        }
    } else if full {
        for (i, vi) in v.iter_mut().enumerate() {
            // SAFETY: seg + i·32 + lane < (tile + 1)·tile_elems ≤ len: inside `x`, aligned
            // (a `&[T]`); `x` is read-only during the launch.
            *vi = T::from_bits(unsafe {
                mem::load_global_nc(xp.add(seg + i * 32 + lane) as *const T::Bits)
            });
        }
    } else {
        for (i, vi) in v.iter_mut().enumerate() {
            let e = seg + i * 32 + lane;
            if e < len {
                *vi = x[e];
            }
        }
    }
    if !BULK {
        for (i, &vi) in v.iter().enumerate() {
            // SAFETY: index < the tile's length (the buffer's length in T);
            // slots of this warp's segment only.
            unsafe { shared::write(seg_sh.add(i * 32 + lane), vi) };
        }
    }
    if !bulk {
        // SAFETY: the whole warp (no divergence: the branches above are block-uniform).
        unsafe { warp::sync_warp(FULL_MASK) };
    }
    // 2. Serial reduction of the thread's items: with `BULK` straight from shared memory,
    //    16 bytes at a time, otherwise into registers, where they wait for the rescan.
    let total = if BULK {
        // SAFETY: this lane's ITEMS · size_of::<T>() blocked bytes (96 or 144: 16-byte
        // aligned and a multiple of 16), written by this warp before the warp barrier, or
        // by the bulk copy whose phase completed; only this thread writes them, later.
        unsafe { blocked_fold::<T, O, ITEMS>(blk, None::<(T, bool)>) }
    } else {
        // SAFETY: as above.
        unsafe { blocked_copy(&mut v, blk, false) };
        let mut total = v[0];
        for &vi in &v[1..] {
            total = O::combine(total, vi);
        }
        total
    };
    // 3. Warp scan; warp totals through shared memory.
    // SAFETY: whole warps.
    let incl = unsafe { warp_scan::<T, O>(total) };
    // SAFETY: whole warps.
    let excl_bits = unsafe { warp::shfl_up_sync(FULL_MASK, incl.to_bits(), 1, 32) };
    let lane_prefix = if lane == 0 {
        id
    } else {
        T::from_bits(excl_bits)
    };
    if lane == 31 {
        // SAFETY: warp < warps ≤ MAX_WARPS.
        unsafe { shared::write(sh_warp.add(warp).cast::<T>(), incl) };
    }
    sync_threads();
    let mut warp_prefix = id;
    let mut aggregate = id;
    for w in 0..warps {
        // SAFETY: written before the barrier.
        let t = unsafe { shared::read(sh_warp.add(w).cast::<T>()) };
        if w == warp {
            warp_prefix = aggregate;
        }
        aggregate = O::combine(aggregate, t);
    }

    // 4. Look-back.
    let tile_prefix = if tile == 0 {
        if tid == 0 {
            // SAFETY: STATUS_PAD + tile < slots (tile < tiles).
            unsafe { publish::<T>(status.as_mut_ptr(), slots, 0, epoch, true, aggregate) };
        }
        id
    } else {
        if warp == 0 {
            let st = status.as_mut_ptr();
            // Every lane of warp 0 stores the same word (one transaction): a branch on the
            // lane here lets rustc's MIR jump threading (rust-lang/rust#137086) duplicate the
            // whole look-back into a lane-0 copy and a copy for the other lanes, which then
            // run every vote and shuffle diverged, through the hardware's slow path. On an
            // H100 (ncu) both copies ran once per tile, and removing the branch took the
            // 4-byte scans from 0.96x to 1.04x CUB at 2^28.
            // SAFETY: as above; status words are only accessed atomically.
            unsafe { publish::<T>(st, slots, tile, epoch, false, aggregate) };
            let sleep = grid_dim_x() >= SLEEP_GRID_BLOCKS;
            // SAFETY: all of warp 0 (warp-uniform branch); tile < slots − STATUS_PAD.
            let prefix = unsafe { look_back::<T, O>(st, slots, tile, epoch, sleep, delays) };
            // SAFETY: as above (every lane, the same word).
            unsafe { publish::<T>(st, slots, tile, epoch, true, O::combine(prefix, aggregate)) };
            if lane == 0 {
                // SAFETY: read by the block after the barrier.
                unsafe { shared::write(sh_prefix.cast::<T>(), prefix) };
            }
        }
        sync_threads();
        // SAFETY: written by warp 0 before the barrier.
        unsafe { shared::read(sh_prefix.cast::<T>()) }
    };

    // 5. Rescan the items from the thread's exclusive prefix, transpose back, store.
    let run = O::combine(O::combine(tile_prefix, warp_prefix), lane_prefix);
    if BULK {
        // The items again from shared memory (still there: only this thread writes its
        // blocked bytes), so they held no registers through the look-back; rescanned in
        // place, 16 bytes at a time.
        // SAFETY: as for the first read.
        unsafe { blocked_fold::<T, O, ITEMS>(blk, Some((run, INCLUSIVE))) };
    } else {
        let mut run = run;
        for vi in v.iter_mut() {
            let next = O::combine(run, *vi);
            *vi = if INCLUSIVE { next } else { run };
            run = next;
        }
        // SAFETY: this thread's own blocked bytes, which only it read above (as above).
        unsafe { blocked_copy(&mut v, blk, true) };
    }
    if bulk {
        // Each warp's segment in one bulk store, once its lanes' writes are visible to the
        // async proxy.
        tma::fence_proxy_async_shared();
        // SAFETY: whole warp.
        unsafe { warp::sync_warp(FULL_MASK) };
        if lane == 0 {
            let seg_bytes = (32 * ITEMS * size_of::<T>()) as u32;
            // SAFETY: the segment is inside `out` (full tile) and written only by this warp
            // (unique tile), 16-byte aligned (`bulk_ok`; segments are multiples of 16
            // bytes); its shared source was fenced above and is not written again; the
            // wait keeps the block until the store has read it.
            unsafe { tma::bulk_store(op.add(seg), seg_sh, seg_bytes) };
            tma::commit_group();
            tma::wait_group_read::<0>();
        }
        return;
    }
    // SAFETY: whole warp.
    unsafe { warp::sync_warp(FULL_MASK) };
    for i in 0..ITEMS {
        let e = seg + i * 32 + lane;
        // SAFETY: written by this warp before the warp barrier.
        let o = unsafe { shared::read(seg_sh.add(i * 32 + lane)) };
        if full {
            // SAFETY: e < len (full tile); tile indices are unique (atomic counter), so no
            // other thread writes this element.
            unsafe { op.add(e).write(o) };
        } else if e < len {
            // SAFETY: unique element (as above); `write` checks the bound.
            unsafe { out.write(e, o) };
        }
    }
}

macro_rules! scan_kernel {
    (
        $name:ident,
        $t:ty,
        $op:ty,
        ($threads:expr, $items:expr, $words:expr, $bulk:expr),
        $inclusive:literal,
        $delay:expr,
        $what:literal
    ) => {
        #[doc = concat!($what, " of `x` into `out` (the first `min(x.len(), out.len())` \
            elements), in one pass with decoupled look-back: see the [module docs](self).")]
        ///
        #[doc = concat!("Launch: 1D grid of at least `ceil(len / tile)` blocks of `",             stringify!($threads), "` threads")]
        /// (another block size traps); `status` holds [`status_words`]`(tiles)` words
        /// (tiles past what it holds are not scanned), `counter` one `u32`.
        ///
        /// # Safety
        /// Memory safety holds for any arguments (every output element is written by one
        /// thread; `status` and `counter` are only accessed atomically). What the caller
        /// must ensure is progress and correctness:
        /// - `base` is the value of `counter[0]` when the launch starts, and no other launch
        ///   uses `counter` or `status` concurrently (otherwise a block can wait forever for
        ///   a tile that no block claims: the launch hangs);
        /// - `epoch` is in `1..=MAX_EPOCH` and no word of `status` already carries it
        ///   (zeroed words carry epoch 0), otherwise stale words give wrong results.
        #[kernel]
        pub unsafe fn $name(
            x: &[$t],
            out: OutSlice<$t>,
            status: OutSlice<u64>,
            counter: AtomicSlice<u32>,
            epoch: u32,
            base: u32,
        ) {
            // The transpose buffer: one tile, 16-byte aligned.
            let exchange = shared_array!(u32, $words, align = 16).cast::<$t>();
            // SAFETY: caller contract; `exchange` holds $threads · $items values of $t.
            unsafe {
                scan_tile::<$t, $op, { $threads }, { $items }, $inclusive, { $bulk }>(
                    exchange, x, &out, &status, &counter, epoch, base, $delay,
                )
            }
        }
    };
}

// Look-back delays (ns) between polls and before the first poll. 4-byte types: CUB's sm_90
// tuning (`tuning_scan.cuh`, `sm90_tuning_vals<T, threads, items, L2B, L2W>`), float
// 688 / 1140, other 4-byte types 648 / 1245. 8-byte types: 2x CUB's (double 576 / 1215,
// other 8-byte types 632 / 1290), for tiles 1.5x CUB's (4032 elements against 2688) and
// 6 blocks per multiprocessor: polls that come too early only add L2 traffic, and the
// 8-byte scans are bound by memory (4 or 6 blocks per multiprocessor ran at the same speed).
// H200 runs at 2^28, ratios to CUB inclusive / exclusive for f64 (CUB in the same run):
// CUB's delays 0.992 / 0.946, first poll 2x 1.034 / 0.986, both 2x (these) 1.057 / 0.999,
// no first-poll delay 0.909 / 0.864. Longer ones gain nothing (2026-11-29, one H200 run,
// exclusive f64): 2x 0.992 / 0.999, 3x 0.992, 4x 0.976, 6x 0.977, first poll or polls 3x
// 0.991; ours then moves CUB's DRAM and L2 traffic at CUB's rate (README).
const F32_DELAYS: (u32, u32) = (688, 1140);
const U32_DELAYS: (u32, u32) = (648, 1245);
const F64_DELAYS: (u32, u32) = (2 * 576, 2 * 1215);
const U64_DELAYS: (u32, u32) = (2 * 632, 2 * 1290);
scan_kernel!(
    scan_inclusive_f32,
    f32,
    Sum,
    (SCAN_THREADS, SCAN_ITEMS, EXCHANGE_WORDS, false),
    true,
    F32_DELAYS,
    "Inclusive prefix sum"
);
scan_kernel!(
    scan_exclusive_f32,
    f32,
    Sum,
    (SCAN_THREADS, SCAN_ITEMS, EXCHANGE_WORDS, false),
    false,
    F32_DELAYS,
    "Exclusive prefix sum"
);
scan_kernel!(
    scan_inclusive_u32,
    u32,
    Sum,
    (SCAN_THREADS, SCAN_ITEMS, EXCHANGE_WORDS, false),
    true,
    U32_DELAYS,
    "Inclusive wrapping prefix sum"
);
scan_kernel!(
    scan_exclusive_u32,
    u32,
    Sum,
    (SCAN_THREADS, SCAN_ITEMS, EXCHANGE_WORDS, false),
    false,
    U32_DELAYS,
    "Exclusive wrapping prefix sum"
);
scan_kernel!(
    scan_inclusive_f64,
    f64,
    Sum,
    (
        SCAN_THREADS_WIDE,
        SCAN_ITEMS_WIDE,
        EXCHANGE_WORDS_WIDE,
        BULK_WIDE
    ),
    true,
    F64_DELAYS,
    "Inclusive prefix sum"
);
scan_kernel!(
    scan_exclusive_f64,
    f64,
    Sum,
    (
        SCAN_THREADS_WIDE,
        SCAN_ITEMS_WIDE,
        EXCHANGE_WORDS_WIDE,
        BULK_WIDE
    ),
    false,
    F64_DELAYS,
    "Exclusive prefix sum"
);
scan_kernel!(
    scan_inclusive_affine,
    u64,
    Affine,
    (
        SCAN_THREADS_WIDE,
        SCAN_ITEMS_WIDE,
        EXCHANGE_WORDS_WIDE,
        BULK_WIDE
    ),
    true,
    U64_DELAYS,
    "Inclusive scan under [`Affine`] composition (`out[i]` = the map `x[0]`, then … `x[i]`)"
);
scan_kernel!(
    scan_exclusive_affine,
    u64,
    Affine,
    (
        SCAN_THREADS_WIDE,
        SCAN_ITEMS_WIDE,
        EXCHANGE_WORDS_WIDE,
        BULK_WIDE
    ),
    false,
    U64_DELAYS,
    "Exclusive scan under [`Affine`] composition (`out[0]` = the identity map)"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_pack_epoch_flag_and_value() {
        let w = status_word(5, true, 0xdead_beef);
        assert_eq!((w >> 33) as u32, 5);
        assert_eq!((w >> 32) & 1, 1);
        assert_eq!(w as u32, 0xdead_beef);
        assert_eq!(status_word(MAX_EPOCH, false, 0) >> 33, u64::from(MAX_EPOCH));
        assert_eq!((SCAN_TILE, SCAN_TILE_WIDE), (256 * 24, 224 * 18));
        assert_eq!(status_words(10), 126);
    }

    #[test]
    fn wide_slots_need_both_halves_of_one_publication() {
        let v: u64 = 0x0123_4567_89ab_cdef;
        let half = |e, inc, w: u64| status_word(e, inc, w as u32);
        // Both halves of the aggregate, then of the inclusive prefix: whole values.
        let (agg_lo, agg_hi) = (half(7, false, v), half(7, false, v >> 32));
        let (inc_lo, inc_hi) = (half(7, true, !v), half(7, true, !v >> 32));
        assert_eq!(slot_value(true, agg_lo, agg_hi), (7 << 1, v));
        assert_eq!(slot_value(true, inc_lo, inc_hi), (7 << 1 | 1, !v));
        // Caught half-way (either order), or a half from an earlier epoch: not ready.
        assert_eq!(slot_value(true, inc_lo, agg_hi), (0, 0));
        assert_eq!(slot_value(true, agg_lo, inc_hi), (0, 0));
        assert_eq!(slot_value(true, agg_lo, half(6, false, v >> 32)), (0, 0));
        // 4-byte types: one word, the second ignored.
        assert_eq!(slot_value(false, half(3, true, 9), 0), (3 << 1 | 1, 9));
    }

    #[test]
    fn exchange_buffer_holds_a_tile_of_either_width() {
        // The buffer is one tile; a thread's items are whole 16-byte quads.
        assert_eq!(4 * SCAN_TILE, 4 * EXCHANGE_WORDS);
        assert_eq!(8 * SCAN_TILE_WIDE, 4 * EXCHANGE_WORDS_WIDE);
        assert_eq!((4 * SCAN_ITEMS) % 16, 0);
        assert_eq!((8 * SCAN_ITEMS_WIDE) % 16, 0);
    }

    #[test]
    fn affine_composition_is_associative_not_commutative() {
        let (f, g, h) = (affine(3, 5), affine(7, 11), affine(0xffff_fff1, 2));
        let c = <Affine as Op<u64>>::combine;
        assert_eq!(c(c(f, g), h), c(f, c(g, h)));
        assert_ne!(c(f, g), c(g, f));
        assert_eq!(c(<Affine as Op<u64>>::IDENTITY, f), f);
        assert_eq!(c(f, <Affine as Op<u64>>::IDENTITY), f);
        // f then g at x = 1: g(f(1)) = 7·(3 + 5) + 11 = 67.
        assert_eq!(c(f, g), affine(21, 46));
    }
}
