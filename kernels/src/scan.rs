//! Inclusive and exclusive prefix sums (scans) of `f32` and `u32` in **one pass** with
//! decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
//! Look-back", NVIDIA NVR-2016-002).
//!
//! Each block scans one tile of [`SCAN_TILE`] elements ([`SCAN_THREADS`] threads ×
//! [`SCAN_ITEMS`]). Tiles are handed out in launch order by an atomic counter (so every tile a
//! block waits for belongs to a block that is already running: no deadlock whatever order the
//! hardware starts blocks in). Per tile:
//!
//! 1. each warp loads 512 consecutive elements, lane `l` the 16-byte packs `p·32 + l`
//!    (`p < 4`: fully coalesced `ld.global.nc.v4`), scans each pack in registers, and scans
//!    the pack totals across the warp with `shfl.sync.up` ([`cuda_std::warp`]);
//! 2. the warp totals go through shared memory and warp 0 scans them: the tile aggregate;
//! 3. warp 0 publishes the aggregate in the tile's status word, then looks back over the
//!    status words of the 32 previous tiles at a time (one per lane, device-scope atomic
//!    loads), summing aggregates until it meets a tile whose inclusive prefix is published;
//!    it then publishes this tile's inclusive prefix;
//! 4. every thread adds the tile's exclusive prefix, the warp's and the pack's, and stores
//!    its packs (coalesced `st.v4`).
//!
//! Traffic: each element is read once and written once (2 words per element), against 3 for
//! reduce-then-scan. The status words are tiny (8 bytes per 4,096 elements).
//!
//! A status word is `(epoch << 1 | inclusive) << 32 | value bits` ([`status_word`]). The host
//! passes a fresh `epoch` per launch, so words left by earlier launches are never mistaken
//! for this one's, and no reset is needed between launches; the counter is never reset
//! either: the host passes the value it had before the launch (`base`), and tile =
//! `counter - base` (wrapping).
//!
//! Integer scans wrap modulo 2^32 and are exact in any order; every float output is a sum of
//! exactly its input terms over some tree of additions (no subtraction), so its error is
//! within the bound of any summation order, and exact when every partial sum is.

use crate::reduce::{Op, Sum, require_whole_warps, warp_reduce};
use crate::vector::{Elem, Pack, aligned16};
use cuda_std::atomic::{self, Device, Ordering};
use cuda_std::prelude::*;

/// Threads per block the host launches the scan kernels with (any multiple of 32 up to 1024
/// works; the tile is `block size × SCAN_ITEMS` elements).
pub const SCAN_THREADS: u32 = 256;
/// Elements per thread per tile: four 16-byte packs of 32-bit elements.
pub const SCAN_ITEMS: usize = 16;
/// Elements per tile (one block) at [`SCAN_THREADS`].
pub const SCAN_TILE: usize = SCAN_THREADS as usize * SCAN_ITEMS;
/// Packs per thread.
const PACKS: usize = SCAN_ITEMS / 4;

/// The largest epoch a status word can carry (31 bits); the host starts again at 1 after
/// zeroing the status words.
pub const MAX_EPOCH: u32 = (1 << 31) - 1;

/// The status word of a tile for `epoch`: its aggregate (`inclusive == false`) or its
/// inclusive prefix (`true`), as 32 value bits.
#[inline(always)]
pub const fn status_word(epoch: u32, inclusive: bool, bits: u32) -> u64 {
    (((epoch << 1) | inclusive as u32) as u64) << 32 | bits as u64
}

/// A 32-bit element type with scan kernels.
pub trait ScanElem: Elem<Array = [Self; 4]>
where
    Sum: Op<Self>,
{
    /// The value's bits.
    fn to_bits32(self) -> u32;
    /// The value with these bits.
    fn from_bits32(bits: u32) -> Self;
}

impl ScanElem for f32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

impl ScanElem for u32 {
    #[inline(always)]
    fn to_bits32(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits32(bits: u32) -> Self {
        bits
    }
}

/// Inclusive scan of `v` over the warp (Hillis–Steele over `shfl.sync.up`).
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
unsafe fn warp_scan<T: ScanElem>(mut v: T) -> T
where
    Sum: Op<T>,
{
    let lane = lane_id();
    let mut d = 1;
    while d < 32 {
        // SAFETY: caller contract (whole warp, same mask and width).
        let y = unsafe { warp::shfl_up_sync(FULL_MASK, v, d, 32) };
        if lane >= d {
            v = <Sum as Op<T>>::combine(y, v);
        }
        d <<= 1;
    }
    v
}

/// The scan kernels' body; see the [module docs](self).
///
/// # Safety
/// As for the kernels (liveness only: memory safety holds for any arguments).
#[inline(always)]
unsafe fn scan_tile<T: ScanElem, const INCLUSIVE: bool>(
    x: &[T],
    out: &OutSlice<T>,
    status: &OutSlice<u64>,
    counter: &OutSlice<u32>,
    epoch: u32,
    base: u32,
) where
    Sum: Op<T>,
{
    require_whole_warps();
    let id = <Sum as Op<T>>::IDENTITY;
    let add = <Sum as Op<T>>::combine;
    let tid = thread_idx_x();
    let (lane, warp, warps) = (tid % 32, tid / 32, block_dim_x() / 32);
    let tile_elems = block_dim_x() as usize * SCAN_ITEMS;
    let len = x.len().min(out.len());
    let tiles = len.div_ceil(tile_elems).min(status.len());

    // Shared memory: the tile index, one slot per warp, the tile's exclusive prefix.
    let sh_tile: *mut u32 = shared_array!(u32, 1);
    let sh_warp: *mut u32 = shared_array!(u32, 32);
    let sh_prefix: *mut u32 = shared_array!(u32, 1);

    if tid == 0 {
        let t = if counter.is_empty() {
            u32::MAX
        } else {
            // SAFETY: element 0 exists; every access to it is a device-scope atomic.
            let c = unsafe {
                atomic::fetch_add::<Device, u32>(counter.as_mut_ptr(), 1, Ordering::Relaxed)
            };
            c.wrapping_sub(base)
        };
        // SAFETY: a 1-element shared array; read by the block after the barrier.
        unsafe { sh_tile.write(t) };
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier, never written again.
    let tile = unsafe { sh_tile.read() } as usize;
    if tile >= tiles {
        // The whole block leaves (block-uniform): nothing to scan, nothing published.
        return;
    }

    // 1. Load: warp `w` owns elements [tile_start + w·512, +512); lane `l` pack `p` holds
    //    elements `warp_start + (p·32 + l)·4 + j`, j < 4.
    let tile_start = tile * tile_elems;
    let warp_start = tile_start + warp as usize * 32 * SCAN_ITEMS;
    let (xp, op) = (x.as_ptr(), out.as_mut_ptr());
    let full = tile_start + tile_elems <= len && aligned16(&[xp as usize, op as usize]);
    let elem = |p: usize, j: usize| warp_start + (p * 32 + lane as usize) * 4 + j;
    let mut v = [[id; 4]; PACKS];
    if full {
        for (p, vp) in v.iter_mut().enumerate() {
            // SAFETY: the pack lies inside x[..len] (full tile), 16-byte aligned (elem(p, 0)
            // is a multiple of 4, x aligned); `x` is read-only.
            *vp = unsafe { T::load_pack_nc(xp.add(elem(p, 0)) as *const Pack<T>) }.0;
        }
    } else {
        for (p, vp) in v.iter_mut().enumerate() {
            for (j, vj) in vp.iter_mut().enumerate() {
                if elem(p, j) < len {
                    *vj = x[elem(p, j)];
                }
            }
        }
    }

    // Per pack: inclusive scan in registers, then across the warp.
    let mut incl = [id; PACKS];
    for p in 0..PACKS {
        for j in 1..4 {
            v[p][j] = add(v[p][j - 1], v[p][j]);
        }
        // SAFETY: the whole block runs this (no divergence so far).
        incl[p] = unsafe { warp_scan(v[p][3]) };
    }
    // Pack p's prefix within the warp: the totals of packs < p, plus lanes < l of pack p.
    let mut pre = [id; PACKS];
    let mut carry = id;
    for p in 0..PACKS {
        // SAFETY: whole warps (as above).
        let (excl, total) = unsafe {
            (
                warp::shfl_up_sync(FULL_MASK, incl[p], 1, 32),
                warp::shfl_idx_sync(FULL_MASK, incl[p], 31, 32),
            )
        };
        pre[p] = if lane == 0 { carry } else { add(carry, excl) };
        carry = add(carry, total);
    }

    // 2. Warp totals → shared; warp 0 scans them.
    if lane == 0 {
        // SAFETY: warp < 32.
        unsafe { sh_warp.add(warp as usize).write(carry.to_bits32()) };
    }
    sync_threads();
    if warp == 0 {
        let s = if lane < warps {
            // SAFETY: written before the barrier.
            T::from_bits32(unsafe { sh_warp.add(lane as usize).read() })
        } else {
            id
        };
        // SAFETY: all of warp 0 (warp-uniform branch).
        let s = unsafe { warp_scan(s) };
        // SAFETY: as above.
        let aggregate = unsafe { warp::shfl_idx_sync(FULL_MASK, s, warps - 1, 32) };
        // 3. Look-back.
        let st = status.as_mut_ptr();
        let mut prefix = id;
        if tile == 0 {
            if lane == 0 {
                // SAFETY: tile < status.len(); status words are only accessed atomically.
                unsafe {
                    atomic::store::<Device, u64>(
                        st,
                        status_word(epoch, true, aggregate.to_bits32()),
                        Ordering::Relaxed,
                    )
                };
            }
        } else {
            if lane == 0 {
                // SAFETY: as above. Relaxed suffices: value and flag travel in one word.
                unsafe {
                    atomic::store::<Device, u64>(
                        st.add(tile),
                        status_word(epoch, false, aggregate.to_bits32()),
                        Ordering::Relaxed,
                    )
                };
            }
            let mut end = tile; // this window covers tiles end-32 .. end-1
            loop {
                let pred = end as isize - 1 - lane as isize;
                let word = loop {
                    let w = if pred < 0 {
                        // Before tile 0: an inclusive prefix of nothing.
                        status_word(epoch, true, id.to_bits32())
                    } else {
                        // SAFETY: pred < tile < status.len(); atomic access only.
                        unsafe {
                            atomic::load::<Device, u64>(st.add(pred as usize), Ordering::Relaxed)
                        }
                    };
                    let ready = (w >> 33) as u32 == epoch;
                    // SAFETY: all of warp 0 runs this loop together (the exit is uniform).
                    if unsafe { warp::vote_all_sync(FULL_MASK, ready) } {
                        break w;
                    }
                };
                let inclusive = (word >> 32) & 1 == 1;
                // SAFETY: all of warp 0.
                let incl_lanes = unsafe { warp::vote_ballot_sync(FULL_MASK, inclusive) };
                // The nearest predecessor is lane 0: lanes up to the first inclusive one count.
                let counts = incl_lanes == 0 || lane <= incl_lanes.trailing_zeros();
                let val = if counts {
                    T::from_bits32(word as u32)
                } else {
                    id
                };
                // SAFETY: all of warp 0.
                prefix = add(unsafe { warp_reduce::<T, Sum>(val) }, prefix);
                if incl_lanes != 0 {
                    break;
                }
                end -= 32;
            }
            if lane == 0 {
                // SAFETY: as above.
                unsafe {
                    atomic::store::<Device, u64>(
                        st.add(tile),
                        status_word(epoch, true, add(prefix, aggregate).to_bits32()),
                        Ordering::Relaxed,
                    )
                };
            }
        }
        // Each lane < warps keeps the inclusive scan of the warp totals; lane 0 the prefix.
        if lane < warps {
            // SAFETY: slot `lane` < 32; read after the barrier below.
            unsafe { sh_warp.add(lane as usize).write(s.to_bits32()) };
        }
        if lane == 0 {
            // SAFETY: a 1-element shared array.
            unsafe { sh_prefix.write(prefix.to_bits32()) };
        }
    }
    sync_threads();

    // 4. Outputs.
    // SAFETY: written by warp 0 before the barrier.
    let (tile_prefix, warp_prefix) = unsafe {
        (
            T::from_bits32(sh_prefix.read()),
            if warp > 0 {
                T::from_bits32(sh_warp.add(warp as usize - 1).read())
            } else {
                id
            },
        )
    };
    let base_prefix = add(tile_prefix, warp_prefix);
    for p in 0..PACKS {
        let pp = add(base_prefix, pre[p]);
        let mut o = [id; 4];
        for j in 0..4 {
            o[j] = if INCLUSIVE {
                add(pp, v[p][j])
            } else if j == 0 {
                pp
            } else {
                add(pp, v[p][j - 1])
            };
        }
        if full {
            // SAFETY: the pack lies inside out[..len], 16-byte aligned; tile indices are
            // unique (atomic counter), so no other thread writes these elements.
            unsafe { (op.add(elem(p, 0)) as *mut Pack<T>).write(Pack(o)) };
        } else {
            for (j, &oj) in o.iter().enumerate() {
                if elem(p, j) < len {
                    // SAFETY: element unique to this thread (as above); `write` checks bounds.
                    unsafe { out.write(elem(p, j), oj) };
                }
            }
        }
    }
}

macro_rules! scan_kernel {
    ($name:ident, $t:ty, $inclusive:literal, $what:literal) => {
        #[doc = concat!($what, " prefix sum of `x` into `out` (the first `min(x.len(), \
            out.len())` elements), in one pass with decoupled look-back: see the \
            [module docs](self).")]
        ///
        /// Launch: 1D grid of at least `ceil(len / tile)` blocks of a multiple of 32 threads
        /// (tile = block size × [`SCAN_ITEMS`]; [`SCAN_THREADS`] is what the host uses);
        /// `status` holds one word per tile (tiles past `status.len()` are not scanned),
        /// `counter` one `u32`.
        ///
        /// # Safety
        /// Memory safety holds for any arguments (every output element is written by one
        /// thread; `status` and `counter` are only accessed atomically). What the caller
        /// must ensure is progress and correctness:
        /// - `base` is the value of `counter[0]` when the launch starts, and no other launch
        ///   uses `counter` or `status` concurrently (otherwise a block can wait forever for
        ///   a tile that no block claims: the launch hangs);
        /// - `epoch` is in `1..=MAX_EPOCH` and no word of `status[..tiles]` already carries
        ///   it (zeroed words carry epoch 0), otherwise stale words give wrong sums.
        #[kernel]
        pub unsafe fn $name(
            x: &[$t],
            out: OutSlice<$t>,
            status: OutSlice<u64>,
            counter: OutSlice<u32>,
            epoch: u32,
            base: u32,
        ) {
            // SAFETY: caller contract.
            unsafe { scan_tile::<$t, $inclusive>(x, &out, &status, &counter, epoch, base) }
        }
    };
}

scan_kernel!(scan_inclusive_f32, f32, true, "Inclusive");
scan_kernel!(scan_exclusive_f32, f32, false, "Exclusive");
scan_kernel!(scan_inclusive_u32, u32, true, "Inclusive");
scan_kernel!(scan_exclusive_u32, u32, false, "Exclusive");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words() {
        let w = status_word(5, true, 0xdead_beef);
        assert_eq!((w >> 33) as u32, 5);
        assert_eq!((w >> 32) & 1, 1);
        assert_eq!(w as u32, 0xdead_beef);
        assert_eq!(status_word(MAX_EPOCH, false, 0) >> 33, u64::from(MAX_EPOCH));
        assert_eq!(SCAN_TILE, 4096);
    }
}
