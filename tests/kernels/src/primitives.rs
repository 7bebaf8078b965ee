//! Test kernels for the `cuda_std` primitives: each exercises one family (indices, shuffles,
//! votes, match, block reductions, shared memory, atomics, fences, clocks, printf, assert,
//! vector loads, math) and writes what it saw to output buffers, which
//! `tests/tests/primitives.rs` compares with a CPU model of the instruction.
//!
//! Kernels `prim_redux` and `prim_cp_async` use sm_80 instructions (`redux.sync`, `cp.async`) and exist
//! only in a PTX built for sm_80 or later (`cfg(target_feature = "sm_80")`; the tests crate
//! builds that variant, with fast math, in its `build.rs`).
//!
//! Conventions: 1D launches unless stated; `out` buffers are laid out `[thread][slot]`
//! (`out[i * SLOTS + k]`).

use cuda_std::atomic::{self, Block, Device, Ordering, System};
use cuda_std::math;
use cuda_std::mem;
use cuda_std::prelude::*;
use cuda_std::thread;
use cuda_std::warp;

/// Slots per thread written by [`prim_indices`].
pub const INDEX_SLOTS: usize = 10;

/// For a 3D launch: writes, at `out[g * INDEX_SLOTS ..]` with `g = block_linear ·
/// threads_per_block + thread_idx_linear`, the values `[tid.x, tid.y, tid.z, index_3d.x,
/// index_3d.y, index_3d.z, thread_idx_linear, lane_id, warp_id, sm_id < 4096]`.
///
/// # Safety
/// `out` holds `INDEX_SLOTS` `u32` per thread of the launch.
#[kernel]
pub unsafe fn prim_indices(out: *mut u32) {
    let block_linear =
        (block_idx_z() * grid_dim_y() + block_idx_y()) * grid_dim_x() + block_idx_x();
    let threads = block_dim_x() * block_dim_y() * block_dim_z();
    let linear = thread::thread_idx_linear();
    let g = block_linear as usize * threads as usize + linear as usize;
    let (x, y, z) = index_3d();
    let values = [
        thread_idx_x(),
        thread_idx_y(),
        thread_idx_z(),
        x,
        y,
        z,
        linear,
        lane_id(),
        warp::warp_id(),
        u32::from(thread::sm_id() < 4096),
    ];
    for (k, v) in values.into_iter().enumerate() {
        // SAFETY: `g` is unique per thread and within the buffer (caller contract).
        unsafe { *out.add(g * INDEX_SLOTS + k) = v };
    }
}

macro_rules! shfl_kernel {
    ($(#[$doc:meta])* $name:ident, $t:ty) => {
        $(#[$doc])*
        /// Thread `i` (1D launch, `input.len()` threads) takes part iff its lane is in `mask`;
        /// a participating lane writes `out[i] = shfl_<mode>_sync(mask, input[i], arg, width)`
        /// with `mode` 0 = idx, 1 = up, 2 = down, 3 = xor. Other lanes write nothing.
        ///
        /// # Safety
        /// `out` holds `input.len()` elements.
        #[kernel]
        pub unsafe fn $name(input: &[$t], out: *mut $t, mode: u32, arg: u32, width: u32, mask: u32) {
            let i = index_1d();
            if i >= input.len() || mask & (1 << lane_id()) == 0 {
                return;
            }
            let v = input[i];
            // SAFETY: every lane in `mask` reaches this point (the launch covers whole warps
            // or the missing lanes do not exist), with the same `mode`, `width` and `mask`.
            let r = unsafe {
                match mode {
                    0 => warp::shfl_idx_sync(mask, v, arg, width),
                    1 => warp::shfl_up_sync(mask, v, arg, width),
                    2 => warp::shfl_down_sync(mask, v, arg, width),
                    _ => warp::shfl_xor_sync(mask, v, arg, width),
                }
            };
            // SAFETY: i < input.len() <= out's length (caller contract).
            unsafe { *out.add(i) = r };
        }
    };
}

shfl_kernel!(/// `u32` shuffles.
    prim_shfl_u32, u32);
shfl_kernel!(/// `i32` shuffles.
    prim_shfl_i32, i32);
shfl_kernel!(/// `f32` shuffles.
    prim_shfl_f32, f32);
shfl_kernel!(/// `u64` shuffles (two 32-bit shuffles).
    prim_shfl_u64, u64);
shfl_kernel!(/// `i64` shuffles (two 32-bit shuffles).
    prim_shfl_i64, i64);
shfl_kernel!(/// `f64` shuffles (two 32-bit shuffles).
    prim_shfl_f64, f64);

/// Votes: a lane in `mask` with predicate `input[i] != 0` writes `out[i*4 ..] = [all, any,
/// ballot, uni]` (booleans as 0/1). Other lanes write nothing.
///
/// # Safety
/// `out` holds `4 · input.len()` elements.
#[kernel]
pub unsafe fn prim_vote(input: &[u32], out: *mut u32, mask: u32) {
    let i = index_1d();
    if i >= input.len() || mask & (1 << lane_id()) == 0 {
        return;
    }
    let p = input[i] != 0;
    // SAFETY: all lanes of `mask` execute the same four votes with the same mask.
    let r = unsafe {
        [
            u32::from(warp::vote_all_sync(mask, p)),
            u32::from(warp::vote_any_sync(mask, p)),
            warp::vote_ballot_sync(mask, p),
            u32::from(warp::vote_uni_sync(mask, p)),
        ]
    };
    for (k, v) in r.into_iter().enumerate() {
        // SAFETY: in bounds (caller contract).
        unsafe { *out.add(i * 4 + k) = v };
    }
}

/// `match.sync`: a lane in `mask` writes `out[i*6 ..] = [any32, all32_ok, all32_mask, any64,
/// all64_ok, all64_mask]` for the keys `keys32[i]` and `keys64[i]`.
///
/// # Safety
/// `keys64.len() >= keys32.len()`; `out` holds `6 · keys32.len()` elements.
#[kernel]
pub unsafe fn prim_match(keys32: &[u32], keys64: &[u64], out: *mut u32, mask: u32) {
    let i = index_1d();
    if i >= keys32.len() || mask & (1 << lane_id()) == 0 {
        return;
    }
    // SAFETY: all lanes of `mask` execute the same matches with the same mask.
    let (any32, all32, any64, all64) = unsafe {
        (
            warp::match_any_sync(mask, keys32[i]),
            warp::match_all_sync(mask, keys32[i]),
            warp::match_any_sync(mask, keys64[i]),
            warp::match_all_sync(mask, keys64[i]),
        )
    };
    let r = [
        any32,
        u32::from(all32.is_some()),
        all32.unwrap_or(0),
        any64,
        u32::from(all64.is_some()),
        all64.unwrap_or(0),
    ];
    for (k, v) in r.into_iter().enumerate() {
        // SAFETY: in bounds (caller contract).
        unsafe { *out.add(i * 6 + k) = v };
    }
}

/// `warp::match_any_bits`: thread `i` writes `out[3i ..] = [low 3 bits, low 8 bits, all 32
/// bits]` groups of `keys[i]`.
///
/// Launch whole warps over `keys.len()` threads; `out` holds `3 · keys.len()` elements.
#[kernel]
pub fn prim_match_bits(keys: &[u32], out: OutSlice<u32>) {
    let i = index_1d();
    let k = keys[i];
    // SAFETY: whole warps, converged (no lane returns before).
    let r = unsafe {
        [
            warp::match_any_bits::<3>(k),
            warp::match_any_bits::<8>(k),
            warp::match_any_bits::<32>(k),
        ]
    };
    for (j, v) in r.into_iter().enumerate() {
        // SAFETY: element 3i + j is this thread's alone.
        unsafe { out.write(3 * i + j, v) };
    }
}

/// Lane masks and `active_mask`: writes `out[i*7 ..] = [lanemask_lt, le, eq, ge, gt,
/// active mask inside `if lane % 3 == 0` (else 0), lane]`, after a `sync_warp(FULL_MASK)`.
///
/// # Safety
/// `out` holds `7 · n` elements; the launch has `n` threads, a multiple of 32.
#[kernel]
pub unsafe fn prim_lane_masks(out: *mut u32, n: u32) {
    let i = index_1d();
    if i >= n as usize {
        return;
    }
    let lane = lane_id();
    let active = if lane.is_multiple_of(3) {
        warp::active_mask()
    } else {
        0
    };
    // SAFETY: n is a multiple of 32, so every lane of the warp reaches this barrier.
    unsafe { warp::sync_warp(FULL_MASK) };
    let r = [
        warp::lanemask_lt(),
        warp::lanemask_le(),
        warp::lanemask_eq(),
        warp::lanemask_ge(),
        warp::lanemask_gt(),
        active,
        lane,
    ];
    for (k, v) in r.into_iter().enumerate() {
        // SAFETY: in bounds (caller contract).
        unsafe { *out.add(i * 7 + k) = v };
    }
}

/// Block barriers with reductions: thread 0 of block `b` writes `out[b*3 ..] =
/// [sync_threads_count(p), sync_threads_and(p), sync_threads_or(p)]` with `p = input[i] !=
/// 0`. Every thread of the block computes them; thread `t` of each block also checks that it
/// got the same values and writes 1 to `agree[i]` if so.
///
/// # Safety
/// The launch has exactly `input.len()` threads (whole blocks); `out` holds 3 per block,
/// `agree` one per thread.
#[kernel]
pub unsafe fn prim_block_reductions(input: &[u32], out: *mut u32, agree: *mut u32) {
    let i = index_1d();
    let p = input[i] != 0;
    let count = sync_threads_count(p);
    let all = sync_threads_and(p);
    let any = sync_threads_or(p);
    let shared = shared_array!(u32, 3);
    if thread_idx_x() == 0 {
        let b = block_idx_x() as usize;
        // SAFETY: thread 0 of each block writes its block's 3 slots (caller contract), and
        // the block's shared array before the barrier below.
        unsafe {
            *out.add(b * 3) = count;
            *out.add(b * 3 + 1) = u32::from(all);
            *out.add(b * 3 + 2) = u32::from(any);
            *shared = count;
            *shared.add(1) = u32::from(all);
            *shared.add(2) = u32::from(any);
        }
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier; read-only now.
    let same = unsafe {
        *shared == count && *shared.add(1) == u32::from(all) && *shared.add(2) == u32::from(any)
    };
    // SAFETY: one slot per thread (caller contract).
    unsafe { *agree.add(i) = u32::from(same) };
}

/// Threads per block of [`prim_shared_reverse`].
pub const REVERSE_BLOCK: usize = 256;

/// Reverses each block's 256-element chunk through two static shared arrays (to check they
/// do not alias): `out_f[b*256 + t] = input[b*256 + 255 - t]` and `out_u[b*256 + t] = 3·(255 -
/// t) + b`.
///
/// # Safety
/// Launch with 256-thread blocks and exactly `input.len()` threads; `out_f` and `out_u` hold
/// `input.len()` elements.
#[kernel]
pub unsafe fn prim_shared_reverse(input: &[f32], out_f: *mut f32, out_u: *mut u32) {
    let t = thread_idx_x() as usize;
    let i = index_1d();
    let a = shared_array!(f32, REVERSE_BLOCK);
    let b = shared_array!(u32, REVERSE_BLOCK, align = 16);
    // SAFETY: t < 256, each thread writes its own element of each array.
    unsafe {
        *a.add(t) = input[i];
        *b.add(t) = 3 * t as u32 + block_idx_x();
    }
    sync_threads();
    let r = REVERSE_BLOCK - 1 - t;
    // SAFETY: the writes are ordered before the reads by the barrier; i in bounds.
    unsafe {
        *out_f.add(i) = *a.add(r);
        *out_u.add(i) = *b.add(r);
    }
}

/// Reverses each block's chunk of `block_dim_x` elements through dynamic shared memory
/// (launch with `shared_mem_bytes = 4 · block_dim_x`); thread 0 of block 0 writes
/// `dynamic_shared_size_bytes()` to `size_out[0]` and `total_shared_size_bytes()` to
/// `size_out[1]`.
///
/// # Safety
/// Exactly `input.len()` threads in whole blocks; `out` holds `input.len()` elements,
/// `size_out` two; the dynamic shared memory holds `block_dim_x` `u32`s.
#[kernel]
pub unsafe fn prim_dynamic_shared_reverse(input: &[u32], out: *mut u32, size_out: *mut u32) {
    let t = thread_idx_x() as usize;
    let n = block_dim_x() as usize;
    let i = index_1d();
    let buf = dynamic_shared::<u32>();
    // SAFETY: t < block_dim_x, within the dynamic shared memory (caller contract).
    unsafe { *buf.add(t) = input[i] };
    sync_threads();
    // SAFETY: as above; ordered by the barrier.
    unsafe { *out.add(i) = *buf.add(n - 1 - t) };
    if i == 0 {
        // SAFETY: two slots (caller contract).
        unsafe {
            *size_out = dynamic_shared_size_bytes();
            *size_out.add(1) = cuda_std::shared::total_shared_size_bytes();
        }
    }
}

/// A `#[repr(C)]` type stored in shared memory by [`prim_shared_layout`]: 3 `f32`, a `u32`,
/// an `f64` (offset 16), 24 bytes, 8-byte aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Particle {
    /// Position.
    pub pos: [f32; 3],
    /// Identifier.
    pub id: u32,
    /// Mass.
    pub mass: f64,
}

/// Layout facts as the GPU sees them (see [`shared_layout`]), written by thread 0.
///
/// # Safety
/// `out` holds [`LAYOUT_SLOTS`] elements; launch with one block of 4 threads.
#[kernel]
pub unsafe fn prim_shared_layout(out: *mut u64) {
    let particles = shared_array!(Particle, 4);
    let wide = shared_array!(u8, 100, align = 128);
    let t = thread_idx_x() as usize;
    // SAFETY: t < 4, one element per thread.
    unsafe {
        *particles.add(t) = Particle {
            pos: [t as f32, 0.5, -1.0],
            id: t as u32,
            mass: 1.5 * t as f64,
        };
    }
    sync_threads();
    if t == 0 {
        let mut r = shared_layout();
        // SAFETY: elements written before the barrier.
        let p3 = unsafe { *particles.add(3) };
        r[8] = particles as usize as u64 % 8;
        r[9] = wide as usize as u64 % 128;
        r[10] = u64::from(p3.id) + p3.mass.to_bits() % 1000;
        for (k, v) in r.into_iter().enumerate() {
            // SAFETY: LAYOUT_SLOTS slots (caller contract).
            unsafe { *out.add(k) = v };
        }
    }
}

/// Slots written by [`prim_shared_layout`].
pub const LAYOUT_SLOTS: usize = 11;

/// `[size_of Particle, align_of Particle, offset of mass, size_of Rgb, size_of
/// Viewport<f32>, size_of Viewport<f64>, align_of Viewport<f64>, size_of Complex<f64>, 0, 0,
/// 0]`: computed by the same code on the host and the GPU (slots 8..11 are filled by the
/// kernel).
pub fn shared_layout() -> [u64; LAYOUT_SLOTS] {
    use core::mem::{align_of, offset_of, size_of};
    [
        size_of::<Particle>() as u64,
        align_of::<Particle>() as u64,
        offset_of!(Particle, mass) as u64,
        size_of::<common::Rgb>() as u64,
        size_of::<common::Viewport<f32>>() as u64,
        size_of::<common::Viewport<f64>>() as u64,
        align_of::<common::Viewport<f64>>() as u64,
        size_of::<common::Complex<f64>>() as u64,
        0,
        0,
        0,
    ]
}

/// A cheap per-thread pseudo-random value (a 32-bit integer hash, "lowbias32" by
/// C. Wellons), shared with the CPU model.
pub fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// Integer atomics under contention: every thread `i < n` applies, on the *same* locations:
/// `u32[0] += 1` (Device), `u64[0] += 1` (Device), `i32[0] -= 1` (Device), `i64[0] -= 2`
/// (System), `u32[1] min= h`, `u32[2] max= h`, `i32[1] min= h as i32`, `i32[2] max= h as
/// i32`, `u64[1] min= h64`, `u64[2] max= h64`, `i64[1] min= h64 as i64`, `i64[2] max=`,
/// `u32[3] |= 1 << (i % 32)`, `u32[4] &= !(1 << (i % 32))`, `u32[5] ^= h`, `u64[3] |= 1 << (i
/// % 64)`, `u64[4] &= !(1 << (i % 64))`, `u64[5] ^= h64`; and per block, a Block-scope
/// counter in shared memory whose total thread 0 adds to `u32[6]` (Device). With `h =
/// hash32(i)`, `h64 = h << 32 | hash32(i ^ 0x5555_5555)`.
///
/// # Safety
/// `u32s`, `u64s`, `i32s`, `i64s` hold 7, 6, 3, 3 elements initialised by the host (min
/// slots to MAX, and slots to all ones, the rest to 0); the launch covers `n` threads in
/// 1D blocks.
#[kernel]
pub unsafe fn prim_atomics_int(
    u32s: *mut u32,
    u64s: *mut u64,
    i32s: *mut i32,
    i64s: *mut i64,
    n: u32,
) {
    let i = index_1d();
    let block_counter = shared_array!(u32, 1);
    if thread_idx_x() == 0 {
        // SAFETY: thread 0 initialises before the barrier.
        unsafe { *block_counter = 0 };
    }
    sync_threads();
    if i < n as usize {
        let h = hash32(i as u32);
        let h64 = (u64::from(h) << 32) | u64::from(hash32(i as u32 ^ 0x5555_5555));
        let r = Ordering::Relaxed;
        // SAFETY: the buffers hold the slots used (caller contract); all accesses to them
        // during the launch are these device- or system-scope atomics.
        unsafe {
            atomic::fetch_add::<Device, u32>(u32s, 1, r);
            atomic::fetch_add::<Device, u64>(u64s, 1, r);
            atomic::fetch_sub::<Device, i32>(i32s, 1, r);
            atomic::fetch_sub::<System, i64>(i64s, 2, r);
            atomic::fetch_min::<Device, u32>(u32s.add(1), h, r);
            atomic::fetch_max::<Device, u32>(u32s.add(2), h, r);
            atomic::fetch_min::<Device, i32>(i32s.add(1), h as i32, r);
            atomic::fetch_max::<Device, i32>(i32s.add(2), h as i32, r);
            atomic::fetch_min::<Device, u64>(u64s.add(1), h64, r);
            atomic::fetch_max::<Device, u64>(u64s.add(2), h64, Ordering::AcqRel);
            atomic::fetch_min::<Device, i64>(i64s.add(1), h64 as i64, Ordering::SeqCst);
            atomic::fetch_max::<Device, i64>(i64s.add(2), h64 as i64, Ordering::Release);
            atomic::fetch_or::<Device, u32>(u32s.add(3), 1 << (i % 32), r);
            atomic::fetch_and::<Device, u32>(u32s.add(4), !(1 << (i % 32)), r);
            atomic::fetch_xor::<Device, u32>(u32s.add(5), h, r);
            atomic::fetch_or::<Device, u64>(u64s.add(3), 1 << (i % 64), r);
            atomic::fetch_and::<Device, u64>(u64s.add(4), !(1 << (i % 64)), r);
            atomic::fetch_xor::<Device, u64>(u64s.add(5), h64, Ordering::Acquire);
            // Block scope on shared memory: only this block's threads touch it.
            atomic::fetch_add::<Block, u32>(block_counter, 1, r);
        }
    }
    sync_threads();
    if thread_idx_x() == 0 {
        // SAFETY: ordered after every block-scope add by the barrier.
        let c = unsafe { atomic::load::<Block, u32>(block_counter, Ordering::Relaxed) };
        // SAFETY: as above.
        unsafe { atomic::fetch_add::<Device, u32>(u32s.add(6), c, Ordering::Relaxed) };
    }
}

/// Float atomics under contention, thread `i < n`: `f32s[0] += 1.0`, `f64s[0] += 0.5`,
/// `f32s[1] += x` with `x = (i % 1000) as f32 · 1e-3`, `f64s[1] += 0.1`, `f32s[2] -= 0.25`,
/// `f32s[3] min= v`, `f32s[4] max= v`, `f64s[2] min= w`, `f64s[3] max= w` with `v =
/// (hash32(i) as f32) / 2^32 - 0.5` and `w = v as f64 · 3.0`.
///
/// # Safety
/// `f32s` holds 5 and `f64s` 4 elements, initialised by the host (min slots to +inf, max
/// slots to -inf, the rest 0); the launch covers `n` threads.
#[kernel]
pub unsafe fn prim_atomics_float(f32s: *mut f32, f64s: *mut f64, n: u32) {
    let i = index_1d();
    if i >= n as usize {
        return;
    }
    let x = (i % 1000) as f32 * 1e-3;
    let v = hash32(i as u32) as f32 / 4_294_967_296.0 - 0.5;
    let w = f64::from(v) * 3.0;
    let r = Ordering::Relaxed;
    // SAFETY: the buffers hold the slots used (caller contract); only device atomics touch
    // them during the launch.
    unsafe {
        atomic::fetch_add::<Device, f32>(f32s, 1.0, r);
        atomic::fetch_add::<Device, f64>(f64s, 0.5, r);
        atomic::fetch_add::<Device, f32>(f32s.add(1), x, r);
        atomic::fetch_add::<Device, f64>(f64s.add(1), 0.1, r);
        atomic::fetch_sub::<Device, f32>(f32s.add(2), 0.25, r);
        atomic::fetch_min::<Device, f32>(f32s.add(3), v, r);
        atomic::fetch_max::<Device, f32>(f32s.add(4), v, r);
        atomic::fetch_min::<Device, f64>(f64s.add(2), w, r);
        atomic::fetch_max::<Device, f64>(f64s.add(3), w, r);
    }
}

/// `exchange`: thread `i < n` swaps `i + 1` into `slot[0]` (initially 0) and writes the value
/// it got to `olds[i]`. The olds plus the final value are a permutation of `0..=n`.
///
/// # Safety
/// `slot` holds 1 element, `olds` `n`.
#[kernel]
pub unsafe fn prim_atomic_exchange(slot: *mut u32, olds: *mut u32, n: u32) {
    let i = index_1d();
    if i < n as usize {
        // SAFETY: caller contract; only device atomics touch `slot`.
        unsafe {
            let old = atomic::exchange::<Device, u32>(slot, i as u32 + 1, Ordering::AcqRel);
            *olds.add(i) = old;
        }
    }
}

/// `compare_exchange` under contention: every thread `i < n` with `i % stride == 0`
/// increments `counter[0]` (u32) and `counter64[0]` (f64, by 1.0) with a load + CAS retry
/// loop, and records its number of failed attempts in `failures[i / stride]`.
///
/// # Safety
/// `counter`, `counter64` hold 1 element; `failures` `n.div_ceil(stride)`.
#[kernel]
pub unsafe fn prim_atomic_cas_counter(
    counter: *mut u32,
    counter64: *mut f64,
    failures: *mut u32,
    n: u32,
    stride: u32,
) {
    let i = index_1d();
    if i >= n as usize || !i.is_multiple_of(stride as usize) {
        return;
    }
    // SAFETY: caller contract; only device atomics touch the counters.
    let c = unsafe { atomic::AtomicRef::<Device, u32>::new(counter) };
    // SAFETY: as above.
    let c64 = unsafe { atomic::AtomicRef::<Device, f64>::new(counter64) };
    let mut failed = 0u32;
    let mut cur = c.load(Ordering::Relaxed);
    while let Err(seen) = c.compare_exchange(cur, cur + 1, Ordering::Relaxed) {
        cur = seen;
        failed += 1;
    }
    let mut cur = c64.load(Ordering::Acquire);
    while let Err(seen) = c64.compare_exchange(cur, cur + 1.0, Ordering::SeqCst) {
        cur = seen;
    }
    // SAFETY: one slot per participating thread (caller contract).
    unsafe { *failures.add(i / stride as usize) = failed };
}

/// Words of data per message in [`prim_message_passing`].
pub const MESSAGE_WORDS: usize = 4;

/// Message-passing litmus test across blocks. Blocks come in pairs: in pair `p`, block `2p`
/// writes, block `2p + 1` reads; thread `t` of the pair owns slot `s = p · block_dim + t`.
/// The writer stores `MESSAGE_WORDS` words `data[s*4 + k] = s·4 + k + 1` with plain stores,
/// then publishes `flags[s] = 1`: `mode` 0 = `store(Release)` at device scope, 1 =
/// `fence::<Device>(Release)` + `store(Relaxed)`, 2 = `thread::fence_device()` + relaxed
/// store. The reader polls `flags[s]` up to `polls` times (`mode` 0: `load(Acquire)`; 1 and
/// 2: `load(Relaxed)` then a fence on success) and writes `result[s]`: 0 = flag never seen,
/// 1 = flag seen and all data correct, 2 = flag seen but data stale (a violation).
///
/// # Safety
/// Even number of blocks; `data` holds `MESSAGE_WORDS` per slot, `flags` and `result` one
/// per slot, all zeroed.
#[kernel]
pub unsafe fn prim_message_passing(
    data: *mut u32,
    flags: *mut u32,
    result: *mut u32,
    mode: u32,
    polls: u32,
) {
    let pair = block_idx_x() / 2;
    let s = (pair * block_dim_x() + thread_idx_x()) as usize;
    let flag = flags.wrapping_add(s);
    if block_idx_x().is_multiple_of(2) {
        for k in 0..MESSAGE_WORDS {
            // SAFETY: slot `s` is this thread's (caller contract); the reader reads it only
            // after observing the flag, which happens-after these stores.
            unsafe {
                core::ptr::write_volatile(
                    data.add(s * MESSAGE_WORDS + k),
                    (s * MESSAGE_WORDS + k + 1) as u32,
                )
            };
        }
        // SAFETY: `flag` is accessed only atomically at device scope.
        unsafe {
            match mode {
                0 => atomic::store::<Device, u32>(flag, 1, Ordering::Release),
                1 => {
                    atomic::fence::<Device>(Ordering::Release);
                    atomic::store::<Device, u32>(flag, 1, Ordering::Relaxed);
                }
                _ => {
                    thread::fence_device();
                    atomic::store::<Device, u32>(flag, 1, Ordering::Relaxed);
                }
            }
        }
    } else {
        let mut seen = false;
        for _ in 0..polls {
            // SAFETY: `flag` is accessed only atomically at device scope.
            let f = unsafe {
                if mode == 0 {
                    atomic::load::<Device, u32>(flag, Ordering::Acquire)
                } else {
                    atomic::load::<Device, u32>(flag, Ordering::Relaxed)
                }
            };
            if f != 0 {
                seen = true;
                break;
            }
        }
        let r = if seen {
            match mode {
                0 => {}
                1 => atomic::fence::<Device>(Ordering::Acquire),
                _ => thread::fence_device(),
            }
            let mut ok = true;
            for k in 0..MESSAGE_WORDS {
                // SAFETY: the writer's stores happen-before this read (flag observed with
                // acquire semantics).
                let v = unsafe { core::ptr::read_volatile(data.add(s * MESSAGE_WORDS + k)) };
                ok &= v == (s * MESSAGE_WORDS + k + 1) as u32;
            }
            if ok { 1 } else { 2 }
        } else {
            0
        };
        // SAFETY: one slot per reader thread.
        unsafe { *result.add(s) = r };
    }
}

/// Clocks: thread `i` writes `out[i*4 ..] = [clock64 before, clock64 after a 2 µs
/// nanosleep, global_timer_ns before, global_timer_ns after]`.
///
/// # Safety
/// `out` holds `4 · n` elements; the launch has `n` threads.
#[kernel]
pub unsafe fn prim_clocks(out: *mut u64, n: u32) {
    let i = index_1d();
    if i >= n as usize {
        return;
    }
    let t0 = thread::global_timer_ns();
    let c0 = thread::clock64();
    thread::nanosleep(2000);
    let c1 = thread::clock64();
    let t1 = thread::global_timer_ns();
    // SAFETY: four slots per thread (caller contract).
    unsafe {
        *out.add(i * 4) = c0;
        *out.add(i * 4 + 1) = c1;
        *out.add(i * 4 + 2) = t0;
        *out.add(i * 4 + 3) = t1;
    }
}

/// Device `println!` of every supported argument type, from threads `0..n` (1D launch): each
/// prints `printf thread <i>: i32 <a> u32 <b> i64 <c> u64 <d> f32 <e> f64 <f> bool <g> str
/// <s>` with `a = -i - 1`, `b = i · 1000`, `c = -(i as i64) · 2^40`, `d = 2^63 + i`,
/// `e = i + 0.5`, `f = -0.25`, `g = i is odd`, `s = "ferrocuda"`.
#[kernel]
pub fn prim_printf(n: u32) {
    let i = index_1d() as u32;
    if i < n {
        cuda_std::println!(
            "printf thread %u: i32 %d u32 %u i64 %lld u64 %llu f32 %.1f f64 %.2f bool %u str %s",
            i,
            -(i as i32) - 1,
            i * 1000,
            -i64::from(i) * (1 << 40),
            (1u64 << 63) + u64::from(i),
            i as f32 + 0.5,
            -0.25f64,
            i % 2 == 1,
            c"ferrocuda",
        );
    }
}

/// Fails a `device_assert!` in thread `fail_at` (if it exists) with the message `"value %u
/// out of range"` (the value being `fail_at`), and a `device_assert_eq!` never fails.
#[kernel]
pub fn prim_assert(fail_at: u32) {
    let i = index_1d() as u32;
    device_assert_eq!(
        i / 32,
        warp::warp_id() + block_idx_x() * (block_dim_x() / 32)
    );
    device_assert!(i != fail_at, "prim_assert: value %u out of range", i);
}

/// Vectorized and read-only loads: thread `i < n/4` reads `in_f32[4i..4i+4]` with
/// `load_v4_f32` and `load_v4_f32_global_nc` and stores their sum (`2·x`, exact) with
/// `store_v4_f32` at `out_f32[4i..]`; reads `in_f64[2i..2i+2]` with `load_v2_f64` and
/// `load_v2_f64_global_nc` and stores the sum with `store_v2_f64`; reads `in_u32[4i..]` with
/// four `load_global_nc` and stores them with `store_v4_u32`; prefetches the next chunk.
///
/// # Safety
/// `in_f32`, `in_u32` have `n` elements and `in_f64` `n/2`, with `n` a multiple of 4; the
/// outputs have the same sizes; all buffers are 16-byte aligned (device allocations are 256-byte
/// aligned).
#[kernel]
pub unsafe fn prim_vector_mem(
    in_f32: &[f32],
    in_f64: &[f64],
    in_u32: &[u32],
    out_f32: *mut f32,
    out_f64: *mut f64,
    out_u32: *mut u32,
) {
    let i = index_1d();
    if i >= in_f32.len() / 4 {
        return;
    }
    // SAFETY: every access below is within the buffers and 16-byte aligned (caller contract);
    // the inputs are not written during the kernel, so the non-coherent loads are valid.
    unsafe {
        if i + 1 < in_f32.len() / 4 {
            mem::prefetch_l2(in_f32.as_ptr().add(4 * (i + 1)));
            mem::prefetch_l1(in_u32.as_ptr().add(4 * (i + 1)));
        }
        let a = mem::load_v4_f32(in_f32.as_ptr().add(4 * i));
        let b = mem::load_v4_f32_global_nc(in_f32.as_ptr().add(4 * i));
        mem::store_v4_f32(
            out_f32.add(4 * i),
            [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]],
        );
        let c = mem::load_v2_f64(in_f64.as_ptr().add(2 * i));
        let d = mem::load_v2_f64_global_nc(in_f64.as_ptr().add(2 * i));
        mem::store_v2_f64(out_f64.add(2 * i), [c[0] + d[0], c[1] + d[1]]);
        let p = in_u32.as_ptr().add(4 * i);
        let u = [
            mem::load_global_nc(p),
            mem::load_global_nc(p.add(1)),
            mem::load_global_nc(p.add(2)),
            mem::load_global_nc(p.add(3)),
        ];
        mem::store_v4_u32(out_u32.add(4 * i), u);
    }
}

/// Results per input of [`math_f32`].
pub const MATH_F32_FUNCTIONS: usize = 16;

/// The `f32` functions tested, on one input: `[sinf, cosf, tanf, expf, logf(|x|), log2f(|x|),
/// powf(|x|, 1.7), sqrtf(|x|), atan2f(x, 0.5), tanhf, cbrtf, fmaf(x, 1.5, 0.25), floorf,
/// roundf, hypotf(x, 3), exp2f]`. The same code runs on the CPU for the reference.
pub fn math_f32(x: f32) -> [f32; MATH_F32_FUNCTIONS] {
    let a = math::fabsf(x);
    [
        math::sinf(x),
        math::cosf(x),
        math::tanf(x),
        math::expf(x),
        math::logf(a),
        math::log2f(a),
        math::powf(a, 1.7),
        math::sqrtf(a),
        math::atan2f(x, 0.5),
        math::tanhf(x),
        math::cbrtf(x),
        math::fmaf(x, 1.5, 0.25),
        math::floorf(x),
        math::roundf(x),
        math::hypotf(x, 3.0),
        math::exp2f(x),
    ]
}

/// Results per input of [`math_f64`].
pub const MATH_F64_FUNCTIONS: usize = 10;

/// The `f64` functions tested: `[sin, cos, exp, log(|x|), log2(|x|), pow(|x|, 1.7), sqrt(|x|),
/// atan2(x, 0.5), fma(x, 1.5, 0.25), cbrt]`.
pub fn math_f64(x: f64) -> [f64; MATH_F64_FUNCTIONS] {
    let a = math::fabs(x);
    [
        math::sin(x),
        math::cos(x),
        math::exp(x),
        math::log(a),
        math::log2(a),
        math::pow(a, 1.7),
        math::sqrt(a),
        math::atan2(x, 0.5),
        math::fma(x, 1.5, 0.25),
        math::cbrt(x),
    ]
}

/// `out[i*16 ..] = math_f32(x[i])` (exact backend: bit-identical to the CPU; fast backend in
/// the fast-math build).
///
/// # Safety
/// `out` holds `MATH_F32_FUNCTIONS · x.len()` elements.
#[kernel]
pub unsafe fn prim_math_f32(x: &[f32], out: *mut f32) {
    let i = index_1d();
    if i < x.len() {
        for (k, v) in math_f32(x[i]).into_iter().enumerate() {
            // SAFETY: in bounds (caller contract).
            unsafe { *out.add(i * MATH_F32_FUNCTIONS + k) = v };
        }
    }
}

/// `out[i] = math::ex2_approx(x[i])`: the GPU's special-function unit (or the host's
/// `exp2f` on the emulator), checked against `2^x` within a bound.
#[kernel]
pub fn prim_ex2_approx(x: &[f32], out: OutSlice<f32>) {
    let i = index_1d();
    if i < x.len() {
        // SAFETY: element `i` is written by thread `i` only; `write` checks the bound.
        unsafe { out.write(i, math::ex2_approx(x[i])) };
    }
}

/// `out[i*10 ..] = math_f64(x[i])`.
///
/// # Safety
/// `out` holds `MATH_F64_FUNCTIONS · x.len()` elements.
#[kernel]
pub unsafe fn prim_math_f64(x: &[f64], out: *mut f64) {
    let i = index_1d();
    if i < x.len() {
        for (k, v) in math_f64(x[i]).into_iter().enumerate() {
            // SAFETY: in bounds (caller contract).
            unsafe { *out.add(i * MATH_F64_FUNCTIONS + k) = v };
        }
    }
}

/// Tile edge of [`matmul_tiled_f32`] (CUDA C Programming Guide, "Shared Memory":
/// `BLOCK_SIZE 16`).
pub const TILE: usize = 16;

/// `C = A · B` with shared-memory tiles, after the CUDA C Programming Guide's "Shared Memory"
/// example: `a` is m×k, `b` k×n, `c` m×n, all row-major `f32`. Launch with 16×16 blocks and
/// a `(n.div_ceil(16), m.div_ceil(16))` grid; thread `(x, y)` of block `(bx, by)` computes
/// `C[by·16 + y][bx·16 + x]`. Unlike the guide's version, any `m`, `k`, `n` work: tiles are
/// padded with zeros.
///
/// Each output is accumulated as `acc = 0; for k in 0..K { acc += a[i][k] · b[k][j] }` in
/// increasing `k` with separate multiply and add (rustc does not contract to FMA), then the
/// padding adds `+0.0` terms, which leave a non-zero sum unchanged; so the result equals
/// the naive CPU loop in the same order, bit for bit.
///
/// # Safety
/// `a.len() >= m·k`, `b.len() >= k·n`, `c` holds `m·n` elements.
// ANCHOR: matmul_tiled
#[kernel]
pub unsafe fn matmul_tiled_f32(a: &[f32], b: &[f32], c: *mut f32, m: u32, k: u32, n: u32) {
    let tile_a = shared_array!(f32, TILE * TILE);
    let tile_b = shared_array!(f32, TILE * TILE);
    let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
    let row = block_idx_y() as usize * TILE + ty;
    let col = block_idx_x() as usize * TILE + tx;
    let (m, k, n) = (m as usize, k as usize, n as usize);
    let mut acc = 0.0f32;
    for t in 0..k.div_ceil(TILE) {
        let a_col = t * TILE + tx;
        let b_row = t * TILE + ty;
        let va = if row < m && a_col < k {
            a[row * k + a_col]
        } else {
            0.0
        };
        let vb = if b_row < k && col < n {
            b[b_row * n + col]
        } else {
            0.0
        };
        // SAFETY: (ty, tx) < (16, 16): each thread writes its own tile element.
        unsafe {
            *tile_a.add(ty * TILE + tx) = va;
            *tile_b.add(ty * TILE + tx) = vb;
        }
        sync_threads();
        for e in 0..TILE {
            // SAFETY: within the tiles; written before the barrier above, overwritten only
            // after the barrier below.
            acc += unsafe { *tile_a.add(ty * TILE + e) * *tile_b.add(e * TILE + tx) };
        }
        sync_threads();
    }
    if row < m && col < n {
        // SAFETY: row < m, col < n: within `c` (caller contract); one thread per element.
        unsafe { *c.add(row * n + col) = acc };
    }
}
// ANCHOR_END: matmul_tiled

/// `redux.sync` (sm_80): a lane in `mask` writes `out[i*9 ..] = [add u32, min u32, max u32,
/// add i32, min i32, max i32, and, or, xor]` of `input` over the lanes of `mask` (the `i32`
/// ones on `input as i32`).
///
/// # Safety
/// `out` holds `9 · input.len()` elements.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub unsafe fn prim_redux(input: &[u32], out: *mut u32, mask: u32) {
    let i = index_1d();
    if i >= input.len() || mask & (1 << lane_id()) == 0 {
        return;
    }
    let v = input[i];
    let s = v as i32;
    // SAFETY: all lanes of `mask` execute the same reductions with the same mask.
    let r = unsafe {
        [
            warp::redux_sync_add(mask, v),
            warp::redux_sync_min(mask, v),
            warp::redux_sync_max(mask, v),
            warp::redux_sync_add(mask, s) as u32,
            warp::redux_sync_min(mask, s) as u32,
            warp::redux_sync_max(mask, s) as u32,
            warp::redux_sync_and(mask, v),
            warp::redux_sync_or(mask, v),
            warp::redux_sync_xor(mask, v),
        ]
    };
    for (k, x) in r.into_iter().enumerate() {
        // SAFETY: in bounds (caller contract).
        unsafe { *out.add(i * 9 + k) = x };
    }
}

/// `cp.async` (sm_80): each 256-thread block copies its 1024 `f32` of `input` to shared
/// memory (thread `t` copies elements `4t..4t+4` with one 16-byte copy, in one group), and
/// 256 `u32` of `input_u32` (thread `t`: two 4-byte copies into element `t` of two arrays
/// and one 8-byte copy of elements `2t..2t+2` of a third, in a second group), waits, and
/// writes the block's `f32`s reversed to `out` and `a[t] + b[255-t]` and the 8-byte pair to
/// `out_u32[3·(256·blk + t) ..]`.
///
/// # Safety
/// `input.len() = 1024 · blocks`, `input_u32.len() = 512 · blocks`, `out` holds `input.len()`
/// and `out_u32` `768 · blocks` elements; 256-thread blocks.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[kernel]
pub unsafe fn prim_cp_async(input: &[f32], input_u32: &[u32], out: *mut f32, out_u32: *mut u32) {
    use cuda_std::mem::async_copy;
    let t = thread_idx_x() as usize;
    let blk = block_idx_x() as usize;
    let tile = shared_array!(f32, 1024, align = 16);
    let ua = shared_array!(u32, 256);
    let ub = shared_array!(u32, 256);
    let pairs = shared_array!(u32, 512, align = 8);
    let base = blk * 1024;
    let ubase = blk * 512;
    // SAFETY: shared destinations and global sources are in bounds and aligned (16 bytes for
    // the f32 tile, 8 for `pairs`); nothing reads them before the wait and barrier below.
    unsafe {
        async_copy::copy_16(
            tile.add(4 * t).cast(),
            input.as_ptr().add(base + 4 * t).cast(),
        );
        async_copy::commit_group();
        async_copy::copy_4(ua.add(t).cast(), input_u32.as_ptr().add(ubase + t).cast());
        async_copy::copy_4(
            ub.add(t).cast(),
            input_u32.as_ptr().add(ubase + 256 + t).cast(),
        );
        async_copy::copy_8(
            pairs.add(2 * t).cast(),
            input_u32.as_ptr().add(ubase + 2 * t).cast(),
        );
        async_copy::commit_group();
    }
    async_copy::wait_group::<1>();
    async_copy::wait_all();
    sync_threads();
    // SAFETY: the copies completed (wait) and are visible block-wide (barrier); indices in
    // bounds.
    unsafe {
        for e in 0..4 {
            let j = 4 * t + e;
            *out.add(base + j) = *tile.add(1023 - j);
        }
        let o = 3 * (256 * blk + t);
        *out_u32.add(o) = (*ua.add(t)).wrapping_add(*ub.add(255 - t));
        *out_u32.add(o + 1) = *pairs.add(2 * t);
        *out_u32.add(o + 2) = *pairs.add(2 * t + 1);
    }
}

/// Slots per thread written by the `prim_acc_tile_*` probes: the thread's two row maxima,
/// then its two row sums.
pub const ACC_TILE_SLOTS: usize = 4;

/// Defines `prim_acc_tile_n{N}`: one warpgroup (a block of 128 threads) loads the 64×N
/// row-major `input` into a `cuda_std::tile::AccTile` by its fragment layout, reduces its
/// rows (`row_max`, `row_sum`), writes them at `out[t·ACC_TILE_SLOTS..]` (`[max0, max1,
/// sum0, sum1]` for thread `t`'s `AccTile::rows(t)`), subtracts each row's maximum with
/// `map_rows`, maps element `(row, col)` to `2·x + row − col` with `map`, and stores the tile
/// back to `tile_out` (64×N row-major) by the same layout, a pair of neighbours at a time
/// (`for_each_pair`).
macro_rules! acc_tile_probe {
    ($name:ident, $regs:literal) => {
        /// See [`ACC_TILE_SLOTS`] and the macro's description above.
        ///
        /// # Safety
        /// Launched as one block of 128 threads; `input` holds 64·N `f32`; `out` holds
        /// `128·ACC_TILE_SLOTS` and `tile_out` 64·N.
        #[kernel]
        pub unsafe fn $name(input: &[f32], out: *mut f32, tile_out: *mut f32) {
            use cuda_std::tile::AccTile;
            type Acc = AccTile<$regs>;
            let t = thread_idx_x();
            let n = Acc::COLS;
            // SAFETY: `input` holds 64·N elements (the caller's contract) and (row, col) is
            // inside the 64×N tile.
            let mut acc = Acc::from_fn(t, |row, col| unsafe {
                *input.get_unchecked((row * n + col) as usize)
            });
            // SAFETY: all 128 threads (whole warps) run this convergently.
            let (max, sum) = unsafe { (acc.row_max(), acc.row_sum()) };
            acc.map_rows(max, |x, m| x - m);
            acc.map(t, |row, col, x| 2.0 * x + row as f32 - col as f32);
            // SAFETY: the buffers' sizes are the caller's contract; each thread writes its
            // own slots and its own elements of the tile (the layout is a bijection).
            unsafe {
                let o = out.add(t as usize * ACC_TILE_SLOTS);
                *o = max[0];
                *o.add(1) = max[1];
                *o.add(2) = sum[0];
                *o.add(3) = sum[1];
            }
            acc.for_each_pair(t, |row, col, v0, v1| {
                // SAFETY: as above; `col + 1 < N` (`col` is even).
                unsafe {
                    *tile_out.add((row * n + col) as usize) = v0;
                    *tile_out.add((row * n + col + 1) as usize) = v1;
                }
            });
        }
    };
}

acc_tile_probe!(prim_acc_tile_n64, 32);
acc_tile_probe!(prim_acc_tile_n256, 128);
