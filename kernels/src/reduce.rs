//! Reductions (sum, min, max of `f32`, `f64`, `u32`) and dot products, in two passes.
//!
//! Pass 1: block `b` of a 1D grid reduces its chunk `x[b·chunk .. min((b+1)·chunk, len)]`
//! (16-byte loads, four in flight per thread) to one value, written to `out[b]`. Pass 2: the
//! same reduce kernel with one block over the pass-1 partials writes `out[0]`. There are no
//! atomics, so the result does not depend on block scheduling: the same input gives the same
//! bits every run. Within a block: per-thread fold, warp butterfly shuffles, one shared slot
//! per warp, and warp 0 combines the slots.
//!
//! Launch contract for every kernel here: 1D grid, 1D block of a multiple of 32 threads (at
//! most 1024; another block size traps, a launch error). The kernels are safe: any `chunk`
//! works (a multiple of 4 with 16-byte aligned inputs takes the 16-byte path), and block `b`
//! writes `out[b]` only, from its thread 0.

use crate::vector::{Elem, Pack, aligned16};
use cuda_std::prelude::*;
use cuda_std::{math, shared};

/// An associative reduction operator with its identity element.
pub trait Op<T> {
    /// `combine(IDENTITY, x) == x`.
    const IDENTITY: T;
    /// The operator.
    fn combine(a: T, b: T) -> T;
}

/// Addition (wrapping for integers, so the result is exact modulo 2^32 in any order).
#[derive(Debug)]
pub struct Sum;
/// Minimum (`f32::min`: IEEE minNum, a NaN operand is ignored).
#[derive(Debug)]
pub struct Min;
/// Maximum (`f32::max`: IEEE maxNum).
#[derive(Debug)]
pub struct Max;

macro_rules! float_ops {
    ($t:ty) => {
        impl Op<$t> for Sum {
            const IDENTITY: $t = 0.0;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a + b
            }
        }
        impl Op<$t> for Min {
            const IDENTITY: $t = <$t>::INFINITY;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a.min(b)
            }
        }
        impl Op<$t> for Max {
            const IDENTITY: $t = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn combine(a: $t, b: $t) -> $t {
                a.max(b)
            }
        }
    };
}
float_ops!(f32);
float_ops!(f64);

impl Op<u32> for Sum {
    const IDENTITY: u32 = 0;
    #[inline(always)]
    fn combine(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
}
impl Op<u32> for Min {
    const IDENTITY: u32 = u32::MAX;
    #[inline(always)]
    fn combine(a: u32, b: u32) -> u32 {
        a.min(b)
    }
}
impl Op<u32> for Max {
    const IDENTITY: u32 = 0;
    #[inline(always)]
    fn combine(a: u32, b: u32) -> u32 {
        a.max(b)
    }
}

/// `(start, end)` of this block's chunk of a `len`-element input (empty past the end).
#[inline(always)]
pub(crate) fn chunk_bounds(len: usize, chunk: usize) -> (usize, usize) {
    let start = (block_idx_x() as usize).saturating_mul(chunk).min(len);
    let end = start.saturating_add(chunk).min(len);
    (start, end)
}

/// Reduces `v` over the warp with `O`; every lane gets the result.
///
/// # Safety
/// All 32 lanes of the warp call it together.
#[inline(always)]
pub(crate) unsafe fn warp_reduce<T: Elem, O: Op<T>>(mut v: T) -> T {
    let mut mask = 16;
    while mask > 0 {
        // SAFETY: caller contract (whole warp, same mask and width).
        v = O::combine(v, unsafe { warp::shfl_xor_sync(FULL_MASK, v, mask, 32) });
        mask >>= 1;
    }
    v
}

/// Reduces `v` over the block with `O`; thread 0 gets the result (other threads get a
/// partial value). Ends with a barrier, so it can be called again.
///
/// # Safety
/// Every thread of the block calls it (non-divergent); the block size is a multiple of 32,
/// at most 1024.
#[inline(always)]
pub(crate) unsafe fn block_reduce<T: Elem, O: Op<T>>(v: T) -> T {
    let lane = thread_idx_x() % 32;
    let warp = thread_idx_x() / 32;
    let warps = block_dim_x() / 32;
    // One 8-byte slot per warp (at most 32 warps), holding a `T` (generic, so a raw
    // pointer: `shared_array!`'s element type must be concrete). The slots are accessed
    // with `shared::read` / `shared::write`, which the CPU emulator checks (races,
    // initialisation, bounds) and which are plain loads and stores on the GPU.
    let slots: *mut u64 = shared_array!(u64, 32);
    // SAFETY: whole warps call this (caller contract).
    let v = unsafe { warp_reduce::<T, O>(v) };
    if lane == 0 {
        // SAFETY: warp < 32: slot `warp` lies in the array (8-byte slots hold any Elem).
        unsafe { shared::write(slots.add(warp as usize).cast::<T>(), v) };
    }
    sync_threads();
    let mut r = O::IDENTITY;
    if warp == 0 {
        if lane < warps {
            // SAFETY: as above; written before the barrier.
            r = unsafe { shared::read(slots.add(lane as usize).cast::<T>()) };
        }
        // SAFETY: all of warp 0 is here (the branch is warp-uniform).
        r = unsafe { warp_reduce::<T, O>(r) };
    }
    sync_threads();
    r
}

/// Traps (a launch error the host reports) unless the block is 1D with a multiple of 32
/// threads, the shape the warp shuffles and shared slots of [`block_reduce`] and the scans
/// need.
#[inline(always)]
pub(crate) fn require_whole_warps() {
    if !block_dim_x().is_multiple_of(32) || block_dim_y() != 1 || block_dim_z() != 1 {
        panic!("block size must be a multiple of 32 threads, 1D");
    }
}

/// This thread's fold of `x[start..end]` with `O`: 16-byte packs strided by the block size,
/// four per iteration (64 bytes in flight per thread), then the rest; element by element when
/// `x` or `start` is not 16-byte aligned.
#[inline(always)]
fn fold_chunk<T: Elem, O: Op<T>>(x: &[T], start: usize, end: usize) -> T {
    let tid = thread_idx_x() as usize;
    let step = block_dim_x() as usize;
    let xp = x.as_ptr();
    let mut acc = O::IDENTITY;
    let vec = aligned16(&[xp as usize]) && start.is_multiple_of(T::LANES);
    let packs = if vec { (end - start) / T::LANES } else { 0 };
    // Packs `i < packs` of the chunk lie inside `x[start..end]`, 16-byte aligned (checked
    // above); `x` is read-only.
    let p = xp.wrapping_add(start) as *const Pack<T>;
    let mut i = tid;
    while i + 3 * step < packs {
        // SAFETY: packs i .. i + 3·step < packs (see above).
        let (u0, u1, u2, u3) = unsafe {
            (
                T::load_pack_nc(p.add(i)),
                T::load_pack_nc(p.add(i + step)),
                T::load_pack_nc(p.add(i + 2 * step)),
                T::load_pack_nc(p.add(i + 3 * step)),
            )
        };
        for u in [u0, u1, u2, u3] {
            for l in 0..T::LANES {
                acc = O::combine(acc, u.0.as_ref()[l]);
            }
        }
        i += 4 * step;
    }
    while i < packs {
        // SAFETY: pack i < packs (see above).
        let u = unsafe { T::load_pack_nc(p.add(i)) };
        for l in 0..T::LANES {
            acc = O::combine(acc, u.0.as_ref()[l]);
        }
        i += step;
    }
    let mut t = start + packs * T::LANES + tid;
    while t < end {
        acc = O::combine(acc, x[t]);
        t += step;
    }
    acc
}

macro_rules! reduce_kernel {
    ($name:ident, $t:ty, $op:ty, $what:literal) => {
        #[doc = concat!("Pass of a ", $what, " of `x`: block `b` writes the ", $what,
            " of its chunk `x[b·chunk .. min((b+1)·chunk, len)]` to `out[b]` (an empty chunk \
            gives the identity; blocks past `out.len()` write nothing). See the \
            [module docs](self) for the launch contract.")]
        #[kernel]
        pub fn $name(x: &[$t], chunk: usize, out: OutSlice<$t>) {
            require_whole_warps();
            let (start, end) = chunk_bounds(x.len(), chunk);
            let v = fold_chunk::<$t, $op>(x, start, end);
            // SAFETY: every thread of the block gets here (no early return; the block shape
            // is checked above).
            let r = unsafe { block_reduce::<$t, $op>(v) };
            if thread_idx_x() == 0 {
                // SAFETY: element `b` is written by thread 0 of block `b` only; `write`
                // checks the bound.
                unsafe { out.write(block_idx_x() as usize, r) };
            }
        }
    };
}

reduce_kernel!(reduce_sum_f32, f32, Sum, "sum");
reduce_kernel!(reduce_min_f32, f32, Min, "minimum");
reduce_kernel!(reduce_max_f32, f32, Max, "maximum");
reduce_kernel!(reduce_sum_f64, f64, Sum, "sum");
reduce_kernel!(reduce_min_f64, f64, Min, "minimum");
reduce_kernel!(reduce_max_f64, f64, Max, "maximum");
reduce_kernel!(reduce_sum_u32, u32, Sum, "wrapping sum");
reduce_kernel!(reduce_min_u32, u32, Min, "minimum");
reduce_kernel!(reduce_max_u32, u32, Max, "maximum");

macro_rules! dot_kernel {
    ($name:ident, $t:ty, $fma:path) => {
        /// Pass 1 of a dot product: block `b` writes `Σ a[i]·b[i]` over its chunk
        /// `[b·chunk, min((b+1)·chunk, len))` to `out[b]` (per thread a fused multiply-add
        /// chain, then a block sum); `len = min(a.len(), b.len())`. Pass 2 is the sum
        /// reduction of the partials. Launch contract as for the reduce kernels.
        #[kernel]
        pub fn $name(a: &[$t], b: &[$t], chunk: usize, out: OutSlice<$t>) {
            const LANES: usize = <$t as Elem>::LANES;
            require_whole_warps();
            let len = a.len().min(b.len());
            let (start, end) = chunk_bounds(len, chunk);
            let tid = thread_idx_x() as usize;
            let step = block_dim_x() as usize;
            let (ap, bp) = (a.as_ptr(), b.as_ptr());
            let vec = aligned16(&[ap as usize, bp as usize]) && start.is_multiple_of(LANES);
            let packs = if vec { (end - start) / LANES } else { 0 };
            let (pa, pb) = (
                ap.wrapping_add(start) as *const Pack<$t>,
                bp.wrapping_add(start) as *const Pack<$t>,
            );
            let mut acc: $t = 0.0;
            let mut i = tid;
            while i < packs {
                // SAFETY: pack i is inside the chunk of both inputs, 16-byte aligned
                // (checked above); the inputs are read-only.
                let (u, v) = unsafe {
                    (
                        <$t as Elem>::load_pack_nc(pa.add(i)),
                        <$t as Elem>::load_pack_nc(pb.add(i)),
                    )
                };
                for l in 0..LANES {
                    acc = $fma(u.0[l], v.0[l], acc);
                }
                i += step;
            }
            let mut t = start + packs * LANES + tid;
            while t < end {
                acc = $fma(a[t], b[t], acc);
                t += step;
            }
            // SAFETY: every thread of the block reaches this (shape checked above).
            let r = unsafe { block_reduce::<$t, Sum>(acc) };
            if thread_idx_x() == 0 {
                // SAFETY: element `b` is written by thread 0 of block `b` only.
                unsafe { out.write(block_idx_x() as usize, r) };
            }
        }
    };
}

dot_kernel!(dot_f32, f32, math::fmaf);
dot_kernel!(dot_f64, f64, math::fma);
