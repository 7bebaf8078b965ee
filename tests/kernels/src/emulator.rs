//! Probes for the CPU emulator (`cuda_emu`): one kernel per bug class the emulator
//! reports, each with the bug planted on purpose (so a test can assert the report), and a
//! correct block reduction that uses shuffles, shared memory through the checked accessors
//! and atomics across blocks. The shared-array probes (transpose, histogram, indexed
//! uninitialised read) are written the idiomatic way, with plain indexing of a
//! `shared_array!([T; N])`, and take a parameter that plants the bug or leaves the kernel
//! correct (the correct twin, which must stay clean).
//!
//! These kernels also build for the GPU (they are valid PTX), but the planted bugs make
//! their results undefined there: they are for the emulator's tests only.

use cuda_std::atomic::{self, Block, Device, Ordering};
use cuda_std::prelude::*;
use cuda_std::{mem, shared};

/// Shared-memory race: every thread writes the same shared word with no barrier (threads
/// 0 and 1 of block 0 are the first pair the emulator reports).
#[kernel]
pub fn emu_race(out: OutSlice<u32>) {
    let s = shared_array!(u32, 32);
    // SAFETY: in bounds; the race is the planted bug.
    unsafe { shared::write(s, thread_idx_x()) };
    sync_threads();
    // SAFETY: written before the barrier.
    out.write_at_thread(unsafe { shared::read(s) });
}

/// Uninitialised shared read: every thread but 5 writes its word; after the barrier each
/// reads its neighbour's, so thread 4 reads word 5, which nobody wrote.
#[kernel]
pub fn emu_uninit(out: OutSlice<u32>) {
    let s = shared_array!(u32, 32);
    let t = thread_idx_x();
    if t != 5 {
        // SAFETY: t < 32, own word.
        unsafe { shared::write(s.add(t as usize), t) };
    }
    sync_threads();
    // SAFETY: in bounds; written before the barrier (except word 5: the planted bug).
    let v = unsafe { shared::read(s.add(((t + 1) % 32) as usize)) };
    out.write_at_thread(v);
}

/// Barrier divergence: the two halves of the block wait at different barriers.
#[kernel]
pub fn emu_divergent_barrier(out: OutSlice<u32>) {
    // The two arms are the same code at two places: the planted bug.
    #[allow(clippy::if_same_then_else)]
    if thread_idx_x() < 16 {
        sync_threads();
    } else {
        sync_threads();
    }
    out.write_at_thread(1);
}

/// Barrier divergence: threads from 8 up exit; the others wait at a barrier.
#[kernel]
pub fn emu_exited_at_barrier(out: OutSlice<u32>) {
    if thread_idx_x() >= 8 {
        return;
    }
    sync_threads();
    out.write_at_thread(1);
}

/// Warp mask naming an exited lane: lane 31 exits before a full-mask shuffle.
#[kernel]
pub fn emu_shuffle_exited_lane(out: OutSlice<u32>) {
    if lane_id() == 31 {
        return;
    }
    // SAFETY: the planted bug (lane 31 of FULL_MASK has exited).
    let v = unsafe { warp::shfl_down_sync(FULL_MASK, thread_idx_x(), 1, 32) };
    out.write_at_thread(v);
}

/// Warp mask naming lanes that never arrive: lanes 0–15 vote with the full mask, lanes
/// 16–31 wait at a block barrier.
#[kernel]
pub fn emu_vote_missing_lanes(out: OutSlice<u32>) {
    if lane_id() < 16 {
        // SAFETY: the planted bug (lanes 16–31 never vote).
        let v = unsafe { warp::vote_any_sync(FULL_MASK, true) };
        out.write_at_thread(u32::from(v));
    } else {
        sync_threads();
    }
}

/// Out of bounds in shared memory: launched with 64 bytes of dynamic shared memory, thread
/// 0 reads the word at byte 64.
#[kernel]
pub fn emu_shared_oob(out: OutSlice<u32>) {
    let d = dynamic_shared::<u32>();
    if thread_idx_x() == 0 {
        // SAFETY: the planted bug: one past the end.
        let v = unsafe { shared::read(d.add(16)) };
        out.write_at_thread(v);
    }
}

/// Out of bounds in global memory: the last thread adds atomically one past the end of
/// `counts`.
#[kernel]
pub fn emu_atomic_oob(counts: OutSlice<u32>) {
    let i = index_1d();
    // SAFETY: in bounds for i < len; the planted bug at i == len.
    unsafe { atomic::fetch_add::<Device, u32>(counts.as_mut_ptr().add(i), 1, Ordering::Relaxed) };
}

/// A Rust panic: the last thread indexes one past the end of `input`.
#[kernel]
pub fn emu_index_panic(input: &[u32], out: OutSlice<u32>) {
    let i = index_1d();
    out.write_at_thread(input[i + 1]);
}

/// `device_assert!` fails in thread 3 of every block; thread 0 of each block prints first.
#[kernel]
pub fn emu_assert(out: OutSlice<u32>) {
    let t = thread_idx_x();
    if t == 0 {
        cuda_std::println!("block %u says hello", block_idx_x());
    }
    device_assert!(t != 3);
    out.write_at_thread(t);
}

/// `device_assert!` that never fails, and a print from thread 0 of each block.
#[kernel]
pub fn emu_print(out: OutSlice<u32>) {
    let t = thread_idx_x();
    if t == 0 {
        cuda_std::println!(
            "block %u of %u: %d %.3f",
            block_idx_x(),
            grid_dim_x(),
            -7i32,
            2.5f64
        );
    }
    device_assert!(t < 1024);
    out.write_at_thread(t);
}

/// A correct reduction: each block sums its elements (shuffles within warps, warp sums
/// through shared memory, a last warp), then thread 0 adds the block's sum to `total[0]`
/// atomically and records `sync_threads_count` of odd inputs in `odd[0]`.
///
/// Launch with blocks of a multiple of 32 threads, at most 1024.
#[kernel]
pub fn emu_block_sum(input: &[u32], total: AtomicSlice<u64>, odd: AtomicSlice<u32>) {
    let i = index_1d();
    let v = if i < input.len() { input[i] } else { 0 };
    let odd_count = sync_threads_count(v % 2 == 1);
    let mut sum = u64::from(v);
    let mut offset = 16;
    while offset > 0 {
        // SAFETY: whole warps, no lane has exited.
        sum += unsafe { warp::shfl_down_sync(FULL_MASK, sum, offset, 32) };
        offset /= 2;
    }
    let warp_sums = shared_array!(u64, 32);
    let (lane, warp_id) = (lane_id(), thread_idx_x() / 32);
    if lane == 0 {
        // SAFETY: warp_id < 32: one word per warp.
        unsafe { shared::write(warp_sums.add(warp_id as usize), sum) };
    }
    sync_threads();
    if warp_id == 0 {
        let warps = block_dim_x() / 32;
        let mut s = if lane < warps {
            // SAFETY: written before the barrier by warp `lane`.
            unsafe { shared::read(warp_sums.add(lane as usize)) }
        } else {
            0
        };
        let mut offset = 16;
        while offset > 0 {
            // SAFETY: the whole first warp.
            s += unsafe { warp::shfl_xor_sync(FULL_MASK, s, offset, 32) };
            offset /= 2;
        }
        if lane == 0 {
            let _ = total.fetch_add(0, s, Ordering::Relaxed);
            let _ = odd.fetch_add(0, odd_count, Ordering::Relaxed);
        }
    }
}

/// Tile edge of [`emu_transpose`]: blocks of 16×16 threads, one 16×16 tile at a time.
pub const EMU_TILE: usize = 16;

/// Which barrier [`emu_transpose`] leaves out (0: none, the correct kernel).
pub const SKIP_NONE: u32 = 0;
/// [`emu_transpose`] without the barrier between writing the tile and reading it
/// transposed: a thread reads elements that other threads have not written yet.
pub const SKIP_AFTER_WRITE: u32 = 1;
/// [`emu_transpose`] without the barrier after reading a tile: the next tile's writes race
/// with the previous tile's reads by other threads.
pub const SKIP_AFTER_READ: u32 = 2;

/// Transposes an `n × n` row-major `f32` matrix (`n` a multiple of 16) through a padded
/// shared tile, `tile[ty][tx] = x`, barrier, `out = tile[tx][ty]`, barrier: block `(bx,
/// by)` handles the tiles of block row `by` from column `bx` on, `grid.x` apart (a loop, so
/// the tile is reused). `skip` ([`SKIP_AFTER_WRITE`], [`SKIP_AFTER_READ`]) leaves out one
/// of the two barriers: the planted bug; [`SKIP_NONE`] is the correct kernel.
///
/// # Safety
/// Launch with 16×16-thread blocks and a grid of `n / 16` rows (y); `out` holds `n · n`
/// elements, `input` at least as many.
#[kernel]
pub unsafe fn emu_transpose(input: &[f32], out: OutSlice<f32>, n: u32, skip: u32) {
    // SAFETY: each element is written by one thread and read by another after a barrier
    // (unless `skip` plants the bug).
    let tile = unsafe { shared_array!([[f32; EMU_TILE + 1]; EMU_TILE]) };
    let n = n as usize;
    let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
    let row = block_idx_y() as usize * EMU_TILE;
    let mut col = block_idx_x() as usize * EMU_TILE;
    while col < n {
        tile[ty][tx] = input[(row + ty) * n + col + tx];
        if skip != SKIP_AFTER_WRITE {
            sync_threads();
        }
        // SAFETY: element (col + ty, row + tx) of the transpose is this thread's alone.
        unsafe { out.write((col + ty) * n + row + tx, tile[tx][ty]) };
        if skip != SKIP_AFTER_READ {
            sync_threads();
        }
        col += grid_dim_x() as usize * EMU_TILE;
    }
}

/// Bins of [`emu_histogram`].
pub const EMU_BINS: usize = 16;

/// Histogram of `input` modulo 16 into `bins` (16 counters): per block in a shared array
/// of counters, then added to `bins` atomically. With `atomic` 0 each thread counts with
/// `counts[d] += 1`, a plain read-modify-write that many threads make on one counter: the
/// planted bug (updates are lost on a GPU). With `atomic` 1 it adds with a block-scope
/// atomic: the correct twin.
///
/// Launch with 1D blocks of at least 16 threads.
#[kernel]
pub fn emu_histogram(input: &[u32], bins: OutSlice<u32>, atomic: u32) {
    // SAFETY: zeroed by one thread each, barrier, updated (atomically in the correct
    // twin), barrier, read by one thread each.
    let counts = unsafe { shared_array!([u32; EMU_BINS]) };
    let t = thread_idx_x() as usize;
    if t < EMU_BINS {
        counts[t] = 0;
    }
    sync_threads();
    let i = index_1d();
    if i < input.len() {
        let d = (input[i] % EMU_BINS as u32) as usize;
        if atomic == 0 {
            counts[d] += 1;
        } else {
            // SAFETY: d < 16: inside the array; every update of the counters in this
            // barrier interval is atomic.
            unsafe {
                atomic::fetch_add::<Block, u32>(counts.as_mut_ptr().add(d), 1, Ordering::Relaxed)
            };
        }
    }
    sync_threads();
    if t < EMU_BINS && t < bins.len() {
        // SAFETY: t < bins.len(); device-scope atomics only.
        unsafe {
            atomic::fetch_add::<Device, u32>(bins.as_mut_ptr().add(t), counts[t], Ordering::Relaxed)
        };
    }
}

/// An atomic and a plain access to one shared word in one barrier interval: thread 0 zeroes
/// a shared counter (plain store), barrier, every thread adds 1 atomically, then thread 0
/// reads the counter with a plain load into `out[0]`. With `plant` 0 a barrier comes
/// between the adds and the read (the correct twin: `out[0]` is the block's size). With
/// `plant` 1 it does not (the planted bug: on a GPU the read may see any partial count).
/// With `plant` 2 thread 0 zeroes the counter again, plainly, after the barrier, while the
/// others add (the planted bug: the store and the adds are unordered).
///
/// Launch with 1D blocks.
#[kernel]
pub fn emu_atomic_plain_mix(out: OutSlice<u32>, plant: u32) {
    // SAFETY: one counter; its accesses are ordered by barriers except where `plant`
    // plants the bug.
    let counter = unsafe { shared_array!([u32; 1]) };
    let t = thread_idx_x();
    if t == 0 {
        counter[0] = 0;
    }
    sync_threads();
    if plant == 2 && t == 0 {
        counter[0] = 0;
    }
    // SAFETY: the counter lies in the shared array.
    unsafe { atomic::fetch_add::<Block, u32>(counter.as_mut_ptr(), 1, Ordering::Relaxed) };
    if plant == 0 {
        sync_threads();
    }
    if t == 0 && !out.is_empty() {
        // SAFETY: 0 < out.len(); only thread 0 writes.
        unsafe { out.write(0, counter[0]) };
    }
}

/// A lost update: every thread reads a shared counter and writes it back plus one, with no
/// atomic (the planted bug). Thread 0 writes the final count to `out[0]`.
///
/// Launch with one 1D block.
#[kernel]
pub fn emu_lost_update(out: OutSlice<u32>) {
    // SAFETY: one counter, zeroed by thread 0 before the barrier; the updates race (the bug).
    let counter = unsafe { shared_array!([u32; 1]) };
    if thread_idx_x() == 0 {
        counter[0] = 0;
    }
    sync_threads();
    let seen = counter[0];
    counter[0] = seen + 1;
    sync_threads();
    if thread_idx_x() == 0 {
        out.write_at_thread(counter[0]);
    }
}

/// Stores to a global output, by `plant`:
/// - 0, the correct twin: thread `t` of block `b` writes element `b·n + t` (`n` threads per
///   block), then after a barrier thread 0 of the block writes element `b·n` again (ordered
///   by the barrier);
/// - 1: thread 0 of every block writes element 0 (a race between blocks);
/// - 2: threads 0 and 1 of block 0 write element 0 with no barrier between (a race within
///   a block);
/// - 3: thread 0 of block 0 adds 1 to element 0 atomically, thread 0 of block 1 stores to
///   it (an atomic and a plain store of one word);
/// - 4: thread 0 of block 0 loads elements 0–3, then thread 1 stores element 0 with no
///   barrier between (a load, then another thread's store);
/// - 5: the twin of 4: a barrier between the load and the store;
/// - 6: thread 0 of block 0 adds 1 to element 0 atomically, then thread 1 loads it with a
///   plain load, no barrier between (an atomic, then a plain load).
///
/// Launch with 1D blocks; `out` holds at least `grid · n` elements, 16-byte aligned.
#[kernel]
pub fn emu_global_stores(out: OutSlice<u32>, plant: u32) {
    let (b, t, n) = (block_idx_x(), thread_idx_x(), block_dim_x());
    let mine = (b * n + t) as usize;
    match plant {
        0 => {
            // SAFETY: one element per thread; the second store is ordered by the barrier.
            unsafe { out.write(mine, t) };
            sync_threads();
            if t == 0 {
                // SAFETY: as above.
                unsafe { out.write(mine, n) };
            }
        }
        1 if t == 0 => {
            // SAFETY: none: the planted race.
            unsafe { out.write(0, b) };
        }
        2 if b == 0 && t < 2 => {
            // SAFETY: none: the planted race.
            unsafe { out.write(0, t) };
        }
        3 if t == 0 && b == 0 => {
            // SAFETY: in bounds (the launch contract); the planted race is with block 1.
            unsafe { atomic::fetch_add::<Device, u32>(out.as_mut_ptr(), 1, Ordering::Relaxed) };
        }
        3 if t == 0 && b == 1 => {
            // SAFETY: none: the planted race.
            unsafe { out.write(0, 7) };
        }
        4 | 5 => {
            if b == 0 && t == 0 {
                // SAFETY: 16-byte aligned, in bounds (the launch contract); for plant 4
                // the planted race is with thread 1's store.
                let v = unsafe { mem::load_v4_u32(out.as_mut_ptr().cast_const()) };
                // SAFETY: element 1 is thread 0's alone.
                unsafe { out.write(1, v[1]) };
            }
            if plant == 5 {
                sync_threads();
            }
            if b == 0 && t == 1 {
                // SAFETY: none for plant 4: the planted race; for 5 ordered by the barrier.
                unsafe { out.write(0, 9) };
            }
        }
        6 if b == 0 && t < 2 => {
            if t == 0 {
                // SAFETY: in bounds (the launch contract).
                unsafe { atomic::fetch_add::<Device, u32>(out.as_mut_ptr(), 1, Ordering::Relaxed) };
            } else {
                // SAFETY: none: the planted race with thread 0's atomic.
                let v = unsafe { mem::load_v4_u32(out.as_mut_ptr().cast_const()) };
                // SAFETY: element 1 is thread 1's alone.
                unsafe { out.write(1, v[0]) };
            }
        }
        _ => {}
    }
}

/// Copies `input[i] + 1` to `out[i]`, one element per thread: correct with two buffers;
/// the planted bug is on the host, which passes one buffer as both (a store into memory
/// the kernel holds as `&[T]`).
///
/// Launch with 1D blocks covering `out.len()` threads; `input` holds as many elements.
#[kernel]
pub fn emu_add_one(input: &[u32], out: OutSlice<u32>) {
    let i = index_1d();
    if i < out.len() {
        // SAFETY: one element per thread.
        unsafe { out.write(i, input[i] + 1) };
    }
}

/// A handover through plain shared accesses (the planted bug: a data race, and on a GPU
/// the load may be hoisted out of the loop): thread 0 spins on `word[0] == 0`; thread 1
/// sets the word after the barrier. On the emulator without a seed thread 0 runs first and
/// alone, until its long step makes the block interleave: thread 1's store then ends the
/// spin (checks off) or is reported as the race it is (checks on).
///
/// Launch with one block of at least 2 threads; `out` holds 1 element.
#[kernel]
pub fn emu_plain_handover(out: OutSlice<u32>) {
    // SAFETY: one word, zeroed before the barrier.
    let word = unsafe { shared_array!([u32; 1]) };
    let t = thread_idx_x();
    if t == 0 {
        word[0] = 0;
    }
    sync_threads();
    if t == 0 {
        #[allow(clippy::while_immutable_condition)]
        while word[0] == 0 {}
        out.write_at_thread(word[0]);
    } else if t == 1 {
        // The planted race: nothing orders this store and thread 0's reads.
        word[0] = 7;
    }
}

/// An uninitialised read through plain indexing: every thread but `skip` writes its element
/// of a `shared_array!([u32; 32])`; after the barrier each reads its neighbour's, so with
/// `skip` 5 thread 4 reads element 5, which nobody wrote (the planted bug); with `skip` 32
/// every element is written (the correct twin).
///
/// Launch with one block of 32 threads.
#[kernel]
pub fn emu_uninit_indexed(out: OutSlice<u32>, skip: u32) {
    // SAFETY: each thread writes its own element, then reads another after the barrier.
    let s = unsafe { shared_array!([u32; 32]) };
    let t = thread_idx_x();
    if t != skip {
        s[t as usize] = t;
    }
    sync_threads();
    out.write_at_thread(s[((t + 1) % 32) as usize]);
}

/// [`emu_uninit_indexed`] on the launch's dynamic shared memory viewed as a
/// `SharedSlice<u32>` ([`shared::dynamic_shared_slice`]): launch with one block of 32
/// threads and 128 bytes of dynamic shared memory; `skip` 5 plants the bug, 32 is the
/// correct twin.
#[kernel]
pub fn emu_dynamic_indexed(out: OutSlice<u32>, skip: u32) {
    // SAFETY: each thread writes its own element, then reads another after the barrier.
    let s = unsafe { shared::dynamic_shared_slice::<u32>() };
    let t = thread_idx_x();
    if t != skip {
        s[t as usize] = t;
    }
    sync_threads();
    out.write_at_thread(s[((t + 1) % 32) as usize]);
}

/// A flag handed over inside one block with no `nanosleep`: thread 0 spins on an atomic
/// load of a shared flag until thread 32 (another warp, which the emulator resumes after
/// thread 0) stores `value` there, then writes what it saw to `out[0]`. `value` 0 plants
/// the bug: the flag is never set, so thread 0 spins forever (a livelock).
///
/// Launch with one block of 64 threads; `out` holds 1 element.
#[kernel]
pub fn emu_flag_handover(out: OutSlice<u32>, value: u32) {
    // One shared word, every access to it a block-scope atomic (safe: no plain access).
    let word = shared_array!(atomic [u32; 1]);
    let Some(flag) = word.get(0) else { return };
    let t = thread_idx_x();
    if t == 0 {
        flag.store(0, Ordering::Relaxed);
    }
    sync_threads();
    if t == 0 {
        let seen = loop {
            let v = flag.load(Ordering::Acquire);
            if v != 0 {
                break v;
            }
        };
        out.write_at_thread(seen);
    } else if t == 32 && value != 0 {
        flag.store(value, Ordering::Release);
    }
}

/// A spin lock taken with `compare_exchange` by every thread of the block: inside it, each
/// adds 1 to `cells[1]` by an atomic load and store (a read-modify-write that is only
/// correct under the lock), sleeping between the two, so the others find the lock taken. `cells[0]` is the lock; the host zeroes both. The block's
/// threads end with `cells[1]` = the number of threads.
///
/// Launch with one block; `cells` holds 2 elements.
#[kernel]
pub fn emu_spin_lock(cells: AtomicSlice<u32>) {
    // Two words of `cells`, touched only through atomics (an `AtomicSlice` has no other
    // access).
    let (Some(lock), Some(count)) = (cells.get(0), cells.get(1)) else {
        return;
    };
    while lock.compare_exchange(0, 1, Ordering::Acquire).is_err() {}
    let c = count.load(Ordering::Relaxed);
    thread::nanosleep(100);
    count.store(c + 1, Ordering::Relaxed);
    lock.store(0, Ordering::Release);
}

// How the handover probes below publish and await their flag, by `plant`:
// - 0: a release store, and an acquire load in the wait (correct);
// - 1: a release fence then a relaxed store; a relaxed load in the wait then an acquire
//   fence (correct);
// - 2: a relaxed store with no fence before it (the writer's bug: the data stores may
//   become visible after the flag);
// - 3: a release store, but a relaxed load with no fence after the wait (the reader's bug:
//   its data loads may be satisfied before the flag's);
// - 4 (between blocks only): fences of block scope (`.cta`), which order nothing for
//   another block (the bug).

/// Publishes `flag` (set to 1) after the data stores, as `plant` says (above).
///
/// # Safety
/// `flag` is valid and aligned; every concurrent access to it is atomic.
#[track_caller]
unsafe fn publish<S: atomic::Scope>(flag: *mut u32, plant: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        match plant {
            0 | 3 => atomic::store::<S, u32>(flag, 1, Ordering::Release),
            1 => {
                atomic::fence::<S>(Ordering::Release);
                atomic::store::<S, u32>(flag, 1, Ordering::Relaxed);
            }
            4 => {
                atomic::fence::<Block>(Ordering::Release);
                atomic::store::<S, u32>(flag, 1, Ordering::Relaxed);
            }
            _ => atomic::store::<S, u32>(flag, 1, Ordering::Relaxed),
        }
    }
}

/// Spins until `flag` is 1, then orders the data loads after it as `plant` says (above).
///
/// # Safety
/// As [`publish`].
#[track_caller]
unsafe fn wait_for<S: atomic::Scope>(flag: *mut u32, plant: u32) {
    // SAFETY: the caller's contract.
    unsafe {
        match plant {
            0 | 2 => while atomic::load::<S, u32>(flag, Ordering::Acquire) == 0 {},
            1 => {
                while atomic::load::<S, u32>(flag, Ordering::Relaxed) == 0 {}
                atomic::fence::<S>(Ordering::Acquire);
            }
            4 => {
                while atomic::load::<S, u32>(flag, Ordering::Relaxed) == 0 {}
                atomic::fence::<Block>(Ordering::Acquire);
            }
            _ => while atomic::load::<S, u32>(flag, Ordering::Relaxed) == 0 {},
        }
    }
}

/// A flag handover between two blocks (the GPU's classic "last block" or producer and
/// consumer pattern): thread 0 of block 0 stores `100 + i` to `data[i]` for `i` in
/// `0..32`, then publishes `flag[0]`; every thread `t` of block 1 spins on the flag, then
/// loads `data[t]` (through a checked `mem` vector load) and stores it to `out[t]`. The
/// flag is published and awaited as `plant` says (above), device scope.
///
/// Launch with 2 blocks of 32 threads; `data` and `out` hold 32 elements, 16-byte aligned,
/// `flag` 1, zeroed by the host.
#[kernel]
pub fn emu_handover_grid(data: OutSlice<u32>, flag: OutSlice<u32>, out: OutSlice<u32>, plant: u32) {
    let t = thread_idx_x();
    let flag = flag.as_mut_ptr();
    if block_idx_x() == 0 {
        if t == 0 {
            for i in 0..32 {
                // SAFETY: i < 32 = data.len(); block 1 reads it only after the flag.
                unsafe { data.write(i, 100 + i as u32) };
            }
            // SAFETY: one word, touched only through atomics during the launch.
            unsafe { publish::<Device>(flag, plant) };
        }
    } else {
        // SAFETY: as above.
        unsafe { wait_for::<Device>(flag, plant) };
        // SAFETY: the vector `t / 4` of 16-byte aligned `data`, published by block 0.
        let v = unsafe { mem::load_v4_u32(data.as_mut_ptr().add(4 * (t as usize / 4))) };
        // SAFETY: t < 32 = out.len(); one element per thread.
        unsafe { out.write(t as usize, v[t as usize % 4]) };
    }
}

/// The same handover between the two warps of one block, through shared memory: thread
/// 32 stores `100 + i` to element `i` of a shared array (plain indexing), then publishes a
/// shared flag; every thread `t` of warp 0 spins on the flag, then reads element `t` and
/// stores it to `out[t]`. The flag is published and awaited as `plant` says
/// (0 to 3, above), block scope.
///
/// Launch with one block of 64 threads; `out` holds 32 elements.
#[kernel]
pub fn emu_handover_block(out: OutSlice<u32>, plant: u32) {
    // SAFETY: the data is written by thread 32 and read after the handover; the flag is
    // zeroed before the barrier and otherwise touched only through atomics.
    let (data, word) = unsafe { (shared_array!([u32; 32]), shared_array!([u32; 1])) };
    let t = thread_idx_x();
    if t == 0 {
        word[0] = 0;
    }
    sync_threads();
    let flag = word.as_mut_ptr();
    if t == 32 {
        for i in 0..32 {
            data[i] = 100 + i as u32;
        }
        // SAFETY: the flag lies in the shared array.
        unsafe { publish::<Block>(flag, plant) };
    } else if t < 32 {
        // SAFETY: as above.
        unsafe { wait_for::<Block>(flag, plant) };
        // SAFETY: t < 32 = out.len(); one element per thread.
        unsafe { out.write(t as usize, data[t as usize]) };
    }
}

/// A busy-wait on plain reads of a flag nobody sets (the planted bug): thread 0 spins on
/// `word[0] == 0`, a shared word zeroed before the barrier, while the block's other threads
/// exit. On a GPU this hangs (or, the load hoisted, spins on a register); the emulator,
/// with a seed, reports it as a livelock naming thread 0 and its read.
///
/// Launch with one block; `out` holds 1 element.
#[kernel]
pub fn emu_plain_spin(out: OutSlice<u32>) {
    // SAFETY: one word, zeroed before the barrier, only read after it.
    let word = unsafe { shared_array!([u32; 1]) };
    let t = thread_idx_x();
    if t == 0 {
        word[0] = 0;
    }
    sync_threads();
    if t == 0 {
        // The planted bug: nothing in the loop (or in any other thread) sets the word.
        #[allow(clippy::while_immutable_condition)]
        while word[0] == 0 {}
        out.write_at_thread(1);
    }
}
