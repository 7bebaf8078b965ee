//! Inclusive and exclusive prefix sums (scans) of `f32` and `u32`, reduce-then-scan in three
//! launches:
//!
//! 1. [`crate::reduce`]'s sum kernel with chunk `C` writes the total of each block's chunk;
//! 2. one block runs [`scan_exclusive_f32`] (or `_u32`) over those totals, with carry 0,
//!    giving each chunk's starting offset;
//! 3. the grid runs the scan kernel over the input with the same chunk `C` and the offsets as
//!    carries: block `b` scans its chunk tile by tile (8 consecutive elements per thread, two
//!    16-byte loads; warp shuffles for the thread totals; one shared slot per warp) and carries
//!    the running total from tile to tile.
//!
//! Traffic: 3 passes over the data (read, read + write) against 2 for a single-pass scan with
//! decoupled look-back. Integer scans wrap modulo 2^32 and are exact in any order; float
//! scans differ from a sequential sum by rounding only.
//!
//! Launch contract: 1D grid, 1D block of a multiple of 32 threads (at most 1024), `chunk` a
//! positive multiple of [`SCAN_ITEMS`].

use crate::reduce::{Op, Sum, chunk_bounds};
use crate::vector::{Elem, Pack, asm};
use cuda_std::prelude::*;

/// Entry names of this module's kernels.
pub const KERNELS: &[&str] = &[
    "scan_inclusive_f32",
    "scan_exclusive_f32",
    "scan_inclusive_u32",
    "scan_exclusive_u32",
];

/// Consecutive elements per thread per tile.
pub const SCAN_ITEMS: usize = 8;

/// Scans this block's chunk of `x` into `out`, starting from `carry_in[block]` (identity if
/// `carry_in` is shorter).
///
/// # Safety
/// `x` and `out` are 16-byte aligned device allocations of at least `x.len()` elements;
/// `chunk` is a positive multiple of [`SCAN_ITEMS`]; every thread of the block calls this;
/// block size a multiple of 32, at most 1024.
#[inline(always)]
unsafe fn scan_chunk<T: Elem, const INCLUSIVE: bool>(
    x: &[T],
    chunk: usize,
    carry_in: &[T],
    out: *mut T,
) where
    Sum: Op<T>,
{
    let (start, end) = chunk_bounds(x.len(), chunk);
    let id = <Sum as Op<T>>::IDENTITY;
    let add = <Sum as Op<T>>::combine;
    let mut carry = carry_in.get(block_idx_x() as usize).copied().unwrap_or(id);
    let tid = thread_idx_x();
    let lane = tid % 32;
    let warp = tid / 32;
    let warps = block_dim_x() / 32;
    let base = asm::block_scratch();
    let tile = block_dim_x() as usize * SCAN_ITEMS;
    let xp = x.as_ptr();
    let mut tile_start = start;
    while tile_start < end {
        let i0 = tile_start + tid as usize * SCAN_ITEMS;
        let full = i0 + SCAN_ITEMS <= end;
        let mut v = [id; SCAN_ITEMS];
        if full {
            for p in 0..SCAN_ITEMS / T::LANES {
                // SAFETY: i0 is a multiple of SCAN_ITEMS (chunk and tile are), so the packs
                // are aligned and inside [start, end).
                let pk = unsafe { T::ld_global_pack((xp.add(i0) as *const Pack<T>).add(p)) };
                for l in 0..T::LANES {
                    v[p * T::LANES + l] = pk.0.as_ref()[l];
                }
            }
        } else {
            for (j, vj) in v.iter_mut().enumerate() {
                if i0 + j < end {
                    // SAFETY: i0 + j < end <= len.
                    *vj = unsafe { *xp.add(i0 + j) };
                }
            }
        }
        for j in 1..SCAN_ITEMS {
            v[j] = add(v[j - 1], v[j]);
        }
        // Inclusive warp scan of the thread totals (Hillis-Steele over shfl.up).
        let mut w = v[SCAN_ITEMS - 1];
        let mut d = 1;
        while d < 32 {
            // SAFETY: the whole block runs this loop (the tile loop is block-uniform).
            let y = unsafe { w.shfl_up(d) };
            if lane >= d {
                w = add(y, w);
            }
            d <<= 1;
        }
        // SAFETY: as above.
        let mut excl = unsafe { w.shfl_up(1) };
        if lane == 0 {
            excl = id;
        }
        if lane == 31 {
            // SAFETY: slot `warp` < 32 of the 272-byte scratch array.
            unsafe { w.st_shared(base + warp * 8) };
        }
        sync_threads();
        if warp == 0 {
            let mut s = if lane < warps {
                // SAFETY: slots written before the barrier; lanes < warps <= 32.
                unsafe { T::ld_shared(base + lane * 8) }
            } else {
                id
            };
            let mut d = 1;
            while d < 32 {
                // SAFETY: all of warp 0 runs this (warp-uniform branch).
                let y = unsafe { s.shfl_up(d) };
                if lane >= d {
                    s = add(y, s);
                }
                d <<= 1;
            }
            if lane < warps {
                // SAFETY: as above.
                unsafe { s.st_shared(base + lane * 8) };
            }
        }
        sync_threads();
        // SAFETY: slots < warps, written before the barrier.
        let (warp_prefix, tile_total) = unsafe {
            (
                if warp > 0 {
                    T::ld_shared(base + (warp - 1) * 8)
                } else {
                    id
                },
                T::ld_shared(base + (warps - 1) * 8),
            )
        };
        let prefix = add(carry, add(warp_prefix, excl));
        let mut o = [id; SCAN_ITEMS];
        for j in 0..SCAN_ITEMS {
            o[j] = if INCLUSIVE {
                add(prefix, v[j])
            } else if j == 0 {
                prefix
            } else {
                add(prefix, v[j - 1])
            };
        }
        if full {
            for p in 0..SCAN_ITEMS / T::LANES {
                let mut pk = Pack::<T>(Default::default());
                for l in 0..T::LANES {
                    pk.0.as_mut()[l] = o[p * T::LANES + l];
                }
                // SAFETY: i0 is a multiple of SCAN_ITEMS, the pack inside [start, end); `out`
                // has `len` elements.
                unsafe { (out.add(i0) as *mut Pack<T>).add(p).write(pk) };
            }
        } else {
            for (j, oj) in o.iter().enumerate() {
                if i0 + j < end {
                    // SAFETY: i0 + j < end <= len.
                    unsafe { *out.add(i0 + j) = *oj };
                }
            }
        }
        carry = add(carry, tile_total);
        // The scratch slots are rewritten by the next tile.
        sync_threads();
        tile_start += tile;
    }
}

macro_rules! scan_kernel {
    ($name:ident, $t:ty, $inclusive:literal, $what:literal) => {
        #[doc = concat!($what, " prefix sum of block `b`'s chunk `x[b·chunk .. min((b+1)·chunk, \
            len)]` into the same range of `out`, offset by `carry_in[b]` (0 if `carry_in` has \
            no element `b`). See the [module docs](self) for the three-launch scheme.")]
        ///
        /// # Safety
        /// - `x` is a whole device allocation (16-byte aligned); `out` is one of at least
        ///   `x.len()` elements that nobody else accesses during the launch.
        /// - `chunk` is a positive multiple of [`SCAN_ITEMS`].
        /// - 1D block of a multiple of 32 threads, at most 1024.
        #[kernel]
        pub unsafe fn $name(x: &[$t], chunk: usize, carry_in: &[$t], out: *mut $t) {
            // SAFETY: caller contract.
            unsafe { scan_chunk::<$t, $inclusive>(x, chunk, carry_in, out) }
        }
    };
}

scan_kernel!(scan_inclusive_f32, f32, true, "Inclusive");
scan_kernel!(scan_exclusive_f32, f32, false, "Exclusive");
scan_kernel!(scan_inclusive_u32, u32, true, "Inclusive");
scan_kernel!(scan_exclusive_u32, u32, false, "Exclusive");
