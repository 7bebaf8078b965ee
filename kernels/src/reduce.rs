//! Reductions (sum, min, max of `f32`, `f64`, `u32`) and dot products, in two passes.
//!
//! Pass 1: block `b` of a 1D grid reduces its chunk `x[b·chunk .. min((b+1)·chunk, len)]`
//! (16-byte loads, two in flight per thread) to one value, written to `out[b]`. Pass 2: the
//! same reduce kernel with one block over the pass-1 partials writes `out[0]`. There are no
//! atomics, so the result does not depend on block scheduling: the same input gives the same
//! bits every run. Within a block: per-thread fold, warp butterfly shuffles, one shared slot
//! per warp, and warp 0 combines the slots.
//!
//! Launch contract for every kernel here: 1D grid, 1D block of a multiple of 32 threads (at
//! most 1024); `chunk` a positive multiple of 4.

use crate::vector::{Elem, Pack, asm, fma_f32, fma_f64};
use cuda_std::prelude::*;

/// Entry names of this module's kernels.
pub const KERNELS: &[&str] = &[
    "reduce_sum_f32",
    "reduce_min_f32",
    "reduce_max_f32",
    "reduce_sum_f64",
    "reduce_min_f64",
    "reduce_max_f64",
    "reduce_sum_u32",
    "reduce_min_u32",
    "reduce_max_u32",
    "dot_f32",
    "dot_f64",
];

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
        // SAFETY: caller contract (whole warp).
        v = O::combine(v, unsafe { v.shfl_xor(mask) });
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
    let base = asm::block_scratch();
    // SAFETY: whole warps call this (caller contract).
    let v = unsafe { warp_reduce::<T, O>(v) };
    if lane == 0 {
        // SAFETY: warp < 32: slot `warp` (8 bytes) lies in the 272-byte scratch array.
        unsafe { v.st_shared(base + warp * 8) };
    }
    sync_threads();
    let mut r = O::IDENTITY;
    if warp == 0 {
        if lane < warps {
            // SAFETY: as above; written before the barrier.
            r = unsafe { T::ld_shared(base + lane * 8) };
        }
        // SAFETY: all of warp 0 is here (the branch is warp-uniform).
        r = unsafe { warp_reduce::<T, O>(r) };
    }
    sync_threads();
    r
}

/// This thread's fold of `x[start..end]` with `O`: packs strided by the block size, two
/// per iteration, then the tail.
///
/// # Safety
/// `x` is 16-byte aligned and valid for `end` elements; `start` is a multiple of
/// `T::LANES`.
#[inline(always)]
unsafe fn fold_chunk<T: Elem, O: Op<T>>(x: *const T, start: usize, end: usize) -> T {
    let tid = thread_idx_x() as usize;
    let step = block_dim_x() as usize;
    let first = start / T::LANES;
    let packs = (end - start) / T::LANES;
    // SAFETY: first pack of the chunk, aligned (start % LANES == 0, x aligned).
    let p = unsafe { (x as *const Pack<T>).add(first) };
    let mut acc = O::IDENTITY;
    let mut i = tid;
    while i + step < packs {
        // SAFETY: packs i and i + step are inside the chunk.
        let (u, v) = unsafe {
            (
                T::ld_global_pack(p.add(i)),
                T::ld_global_pack(p.add(i + step)),
            )
        };
        for l in 0..T::LANES {
            acc = O::combine(acc, u.0.as_ref()[l]);
        }
        for l in 0..T::LANES {
            acc = O::combine(acc, v.0.as_ref()[l]);
        }
        i += 2 * step;
    }
    if i < packs {
        // SAFETY: pack i is inside the chunk.
        let u = unsafe { T::ld_global_pack(p.add(i)) };
        for l in 0..T::LANES {
            acc = O::combine(acc, u.0.as_ref()[l]);
        }
    }
    let t = start + packs * T::LANES + tid;
    if t < end {
        // SAFETY: t < end.
        acc = O::combine(acc, unsafe { *x.add(t) });
    }
    acc
}

macro_rules! reduce_kernel {
    ($name:ident, $t:ty, $op:ty, $what:literal) => {
        #[doc = concat!("Pass of a ", $what, " of `x`: block `b` writes the ", $what,
            " of its chunk `x[b·chunk .. min((b+1)·chunk, len)]` to `out[b]` (an empty chunk \
            gives the identity). See the [module docs](self) for the launch contract.")]
        ///
        /// # Safety
        /// - `x` is a whole device allocation (16-byte aligned); `chunk` is a positive
        ///   multiple of 4.
        /// - `out` holds at least one element per block of the grid; nobody else accesses it
        ///   during the launch.
        /// - 1D block of a multiple of 32 threads, at most 1024.
        #[kernel]
        pub unsafe fn $name(x: &[$t], chunk: usize, out: *mut $t) {
            let (start, end) = chunk_bounds(x.len(), chunk);
            // SAFETY: caller contract (alignment, chunk multiple of LANES, block shape).
            let r = unsafe {
                let v = fold_chunk::<$t, $op>(x.as_ptr(), start, end);
                block_reduce::<$t, $op>(v)
            };
            if thread_idx_x() == 0 {
                // SAFETY: `out` has an element per block (caller contract).
                unsafe { *out.add(block_idx_x() as usize) = r };
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
    ($name:ident, $t:ty, $fma:ident) => {
        /// Pass 1 of a dot product: block `b` writes `Σ a[i]·b[i]` over its chunk
        /// `[b·chunk, min((b+1)·chunk, len))` to `out[b]` (per thread a fused multiply-add
        /// chain, then a block sum); `len = min(a.len(), b.len())`. Pass 2 is the sum
        /// reduction of the partials.
        ///
        /// # Safety
        /// As for the reduce kernels, for `a` and `b`.
        #[kernel]
        pub unsafe fn $name(a: &[$t], b: &[$t], chunk: usize, out: *mut $t) {
            const LANES: usize = <$t as Elem>::LANES;
            let len = a.len().min(b.len());
            let (start, end) = chunk_bounds(len, chunk);
            let tid = thread_idx_x() as usize;
            let step = block_dim_x() as usize;
            let packs = (end - start) / LANES;
            // SAFETY: first pack of the chunk in each input, aligned (caller contract).
            let (pa, pb) = unsafe {
                (
                    (a.as_ptr() as *const Pack<$t>).add(start / LANES),
                    (b.as_ptr() as *const Pack<$t>).add(start / LANES),
                )
            };
            let mut acc: $t = 0.0;
            let mut i = tid;
            while i < packs {
                // SAFETY: pack i is inside the chunk of both inputs.
                let (u, v) = unsafe {
                    (
                        <$t as Elem>::ld_global_pack(pa.add(i)),
                        <$t as Elem>::ld_global_pack(pb.add(i)),
                    )
                };
                for l in 0..LANES {
                    acc = $fma(u.0[l], v.0[l], acc);
                }
                i += step;
            }
            let t = start + packs * LANES + tid;
            if t < end {
                // SAFETY: t < end <= len.
                acc = unsafe { $fma(*a.as_ptr().add(t), *b.as_ptr().add(t), acc) };
            }
            // SAFETY: every thread of the block reaches this (caller contract on the block).
            let r = unsafe { block_reduce::<$t, Sum>(acc) };
            if thread_idx_x() == 0 {
                // SAFETY: `out` has an element per block (caller contract).
                unsafe { *out.add(block_idx_x() as usize) = r };
            }
        }
    };
}

dot_kernel!(dot_f32, f32, fma_f32);
dot_kernel!(dot_f64, f64, fma_f64);
