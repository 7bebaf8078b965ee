//! Kernels written with the safe API only (no `unsafe` anywhere): atomics on an output
//! ([`AtomicSlice`]) and on a shared array (`shared_array!(atomic [T; N])`), reductions over
//! the coalesced lanes of a warp (`warp::coalesced_*`) and grid-strided writes to an
//! [`OutSlice`]. The tests in `tests/tests/safe_api.rs` compare them with CPU results, and
//! check that this file has no `unsafe`.

use cuda_std::launch::global_linear_id;
use cuda_std::prelude::*;

/// Bins of [`safe_histogram`].
pub const HISTOGRAM_BINS: usize = 64;

// ANCHOR: safe_histogram
/// Histogram of `input` modulo [`HISTOGRAM_BINS`] into `bins`: each block counts into a
/// shared atomic array, then its threads add the block's counts to `bins` (device-scope
/// atomics). Any grid and block size; the host zeroes `bins` (at least `HISTOGRAM_BINS`
/// elements; the rest stay untouched).
#[kernel]
pub fn safe_histogram(input: &[u32], bins: AtomicSlice<u32>) {
    let counts = shared_array!(atomic [u32; HISTOGRAM_BINS]);
    counts.fill_block(0, Ordering::Relaxed);
    sync_threads();
    let step = (block_dim_x() * grid_dim_x()) as usize;
    let mut i = index_1d();
    while let Some(&x) = input.get(i) {
        let _ = counts.fetch_add(x as usize % HISTOGRAM_BINS, 1, Ordering::Relaxed);
        i += step;
    }
    sync_threads();
    let mut b = thread_idx_x() as usize;
    while b < HISTOGRAM_BINS {
        let c = counts.load(b, Ordering::Relaxed).unwrap_or(0);
        if c != 0 {
            let _ = bins.fetch_add(b, c, Ordering::Relaxed);
        }
        b += block_dim_x() as usize;
    }
}
// ANCHOR_END: safe_histogram

/// `out[i] = 3 · input[i] + 1` for every `i < out.len()` (0 past `input`'s end), by a
/// grid-stride loop: any grid and block size covers the whole output.
#[kernel]
pub fn safe_grid_stride_loop(input: &[u32], out: OutSlice<u32>) {
    out.write_grid_stride_loop(|i| input.get(i).map_or(0, |&x| x.wrapping_mul(3) + 1));
}

/// Step by step with [`OutSlice::write_grid_strided`]: `out[t + k·T] = t · 1000 + k`
/// (`t` = [`global_linear_id`], `T` the launch's thread count) for every `k` in bounds.
#[kernel]
pub fn safe_grid_strided(out: OutSlice<u32>) {
    let t = global_linear_id() as u32;
    let mut k = 0usize;
    while out.write_grid_strided(k, t * 1000 + k as u32) {
        k += 1;
    }
}

/// Warp-aggregated counting in divergent code: threads whose input is odd (the others take
/// no part) reduce over their coalesced lanes, and each group's leader adds the group's
/// sum to `totals[0]` and its size to `totals[1]`; `totals[3]` counts the groups. A second
/// collective, a ballot, adds each of its groups' count to `totals[2]` (its groups may
/// differ from the reduction's: each call has its own). `totals[0..3]` must come out as
/// the CPU's sum and count of odd inputs whatever the partition into coalesced groups (on
/// the emulator every lane is its own group). The host zeroes `totals` (4 elements).
/// sm_80 (`redux.sync`).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub fn safe_warp_aggregated(input: &[u32], totals: AtomicSlice<u32>) {
    let Some(&x) = input.get(index_1d()) else {
        return;
    };
    if x % 2 == 1 {
        let sum = warp::coalesced_reduce_add(x);
        let votes = warp::coalesced_ballot(true);
        if sum.is_leader() {
            let _ = totals.fetch_add(0, sum.value, Ordering::Relaxed);
            let _ = totals.fetch_add(1, sum.size(), Ordering::Relaxed);
            let _ = totals.fetch_add(3, 1, Ordering::Relaxed);
        }
        if votes.is_leader() {
            let _ = totals.fetch_add(2, votes.value.count_ones(), Ordering::Relaxed);
        }
    }
}

/// The bounds checks: thread `t` adds 1 to `counts[t]` and stores `t` to `counts[t]` of a
/// shared atomic array of 8, both only where in bounds; `misses[0]` counts the threads whose
/// global index was out of bounds (the methods returned `None` / `false`), `misses[1]` those
/// whose shared index was. The host zeroes both.
#[kernel]
pub fn safe_atomic_bounds(counts: AtomicSlice<u32>, misses: AtomicSlice<u32>) {
    let t = index_1d();
    if counts.fetch_add(t, 1, Ordering::Relaxed).is_none() {
        let _ = misses.fetch_add(0, 1, Ordering::Relaxed);
    }
    let shared = shared_array!(atomic [u32; 8]);
    if !shared.store(thread_idx_x() as usize, 1, Ordering::Relaxed) {
        let _ = misses.fetch_add(1, 1, Ordering::Relaxed);
    }
}
