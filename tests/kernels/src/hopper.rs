//! Probes of the Hopper modules of `cuda_std` (`wgmma`, `barrier`, `tma`, `cluster`,
//! `mma::stmatrix_*`, and `thread`'s grid dependency control): they exist only in the PTX built for sm_90a
//! (`cfg(target_feature = "sm_90a")`, the `PROBES_SM90A` module of `tests/build.rs`);
//! `tests/tests/hopper.rs` compares their output with CPU models, bit for bit.
//!
//! Matrices are row-major. The `wgmma` probes run one warpgroup (128 threads, one block) on
//! `A` 64×KT and `B` given as `Bᵀ` N×KT (K-major, as `wgmma` reads it without transpose),
//! where a row of KT elements is 128 bytes (KT = 64 for 16-bit types, 32 for tf32), in four
//! `wgmma` k-steps of 32 bytes each; `C`/`D` 64×N.
#![cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]

use cuda_std::barrier::{self, MBarrier, Phase};
use cuda_std::prelude::*;
use cuda_std::shared::shared_addr;
use cuda_std::tile::{Pipeline, PipelineState, SmemTile, Tile, swizzle};
use cuda_std::tma::{self, TensorMap};
use cuda_std::wgmma::{self, MatrixDescriptor, Swizzle, layout};
use cuda_std::{cluster, mma};

/// Bytes per operand row (the K extent of the probes' tiles): one 128-byte swizzle span.
pub const ROW_BYTES: u32 = 128;
/// Byte offset between core matrices adjacent in K in the no-swizzle layout of the probes.
pub const NO_SWIZZLE_LBO: u32 = 128;
/// Byte offset between 8-row groups, both layouts (8 rows × 128 bytes).
pub const SBO: u32 = 1024;

/// Byte offset of byte `k_bytes` of row `row` of an operand tile staged in `mode` (0: no
/// swizzle with [`NO_SWIZZLE_LBO`] / [`SBO`], 1: 128-byte swizzle).
#[must_use]
pub const fn staged_offset(mode: u32, row: u32, k_bytes: u32) -> u32 {
    if mode == 0 {
        layout::offset_no_swizzle(row, k_bytes, NO_SWIZZLE_LBO, SBO)
    } else {
        layout::offset_swizzle_128b(row, k_bytes)
    }
}

/// The descriptor of a tile staged at `tile` in `mode`, advanced to k-step `step` (32 bytes
/// of K per step: two core matrices in the no-swizzle layout, 32 bytes inside the swizzled
/// rows).
fn descriptor(tile: *const u8, mode: u32, step: u32) -> MatrixDescriptor {
    let addr = shared_addr(tile);
    if mode == 0 {
        MatrixDescriptor::new(addr, NO_SWIZZLE_LBO, SBO, Swizzle::None).add_bytes(step * 2 * 128)
    } else {
        MatrixDescriptor::new(addr, 16, SBO, Swizzle::B128).add_bytes(step * 32)
    }
}

/// Copies `rows` × 128 bytes of the row-major matrix `src` (elements of `T`) into the shared
/// tile at `dst` in `mode`'s layout, all 128 threads sharing the work.
///
/// # Safety
/// `dst` is shared memory with room for `rows · 128` bytes; `src` holds `rows · 128` bytes.
unsafe fn stage<T: Copy>(dst: *mut u8, src: &[T], rows: u32, mode: u32) {
    let size = core::mem::size_of::<T>() as u32;
    let per_row = ROW_BYTES / size;
    let mut e = thread_idx_x();
    while e < rows * per_row {
        let (row, k) = (e / per_row, e % per_row);
        let off = staged_offset(mode, row, k * size) as usize;
        // SAFETY: in bounds (caller contract); `off` is a multiple of `size`.
        unsafe { dst.add(off).cast::<T>().write(src[e as usize]) };
        e += 128;
    }
}

/// The shared tiles of the `wgmma` probes, 1024-byte aligned: `A` (64 rows × 128 bytes) and
/// `Bᵀ` (up to 256 rows × 128 bytes). One function, so one pair of `.shared` arrays for all
/// the probe kernels (a `shared_array!` inside `macro_rules!` would be one call site).
fn wgmma_tiles() -> (*mut u8, *mut u8) {
    (
        shared_array!(u8, 64 * 128, align = 1024),
        shared_array!(u8, 256 * 128, align = 1024),
    )
}

/// Generates one `wgmma` probe kernel: stages `A` (64 rows) and `Bᵀ` (`$n` rows) into 1024-byte
/// aligned shared tiles, loads `C` into the accumulators by `acc_row_col`, runs four k-steps
/// (the first with `accumulate = scale_d != 0`), stores `D` by `acc_row_col`.
macro_rules! wgmma_probe {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal, $call:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// One block of 128 threads; `a`: 64·KT elements, `b`: N·KT, `c` and `d`: 64·N `f32`.
        #[kernel]
        pub unsafe fn $name(a: &[$t], b: &[$t], c: &[f32], d: *mut f32, mode: u32, scale_d: u32) {
            let (a_s, b_s) = wgmma_tiles();
            let t = thread_idx_x();
            // SAFETY: tile sizes as declared; inputs sized by the caller.
            unsafe {
                stage(a_s, a, 64, mode);
                stage(b_s, b, $n, mode);
            }
            tma::fence_proxy_async_shared();
            sync_threads();
            let mut acc = [0.0f32; $n / 2];
            for (i, v) in acc.iter_mut().enumerate() {
                let (row, col) = layout::acc_row_col(t, i as u32);
                *v = c[(row * $n + col) as usize];
            }
            wgmma::fence();
            for step in 0..4 {
                let (da, db) = (descriptor(a_s, mode, step), descriptor(b_s, mode, step));
                let accumulate = step > 0 || scale_d != 0;
                // SAFETY: the whole warpgroup is here; tiles staged and fenced above, not
                // written again.
                unsafe { $call(&mut acc, da, db, accumulate) };
            }
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            for (i, v) in acc.iter().enumerate() {
                let (row, col) = layout::acc_row_col(t, i as u32);
                // SAFETY: `d` holds 64·N elements (caller contract).
                unsafe { d.add((row * $n + col) as usize).write(*v) };
            }
        }
    };
}

wgmma_probe!(
    /// `wgmma` m64n64k16 `.bf16` (`a`, `b`: bit patterns).
    wgmma_bf16_n64, u16, 64, wgmma::mma_m64n64k16_f32_bf16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n128k16 `.bf16`.
    wgmma_bf16_n128, u16, 128, wgmma::mma_m64n128k16_f32_bf16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n176k16 `.bf16` (attention's key tile of 176).
    wgmma_bf16_n176, u16, 176, wgmma::mma_m64n176k16_f32_bf16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n256k16 `.bf16`.
    wgmma_bf16_n256, u16, 256, wgmma::mma_m64n256k16_f32_bf16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n64k16 `.f16`.
    wgmma_f16_n64, u16, 64, wgmma::mma_m64n64k16_f32_f16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n128k16 `.f16`.
    wgmma_f16_n128, u16, 128, wgmma::mma_m64n128k16_f32_f16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n176k16 `.f16` (attention's key tile of 176).
    wgmma_f16_n176, u16, 176, wgmma::mma_m64n176k16_f32_f16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n256k16 `.f16`.
    wgmma_f16_n256, u16, 256, wgmma::mma_m64n256k16_f32_f16::<false, false>
);
wgmma_probe!(
    /// `wgmma` m64n64k8 `.tf32` (`a`, `b`: `f32`).
    wgmma_tf32_n64, f32, 64, wgmma::mma_m64n64k8_f32_tf32
);
wgmma_probe!(
    /// `wgmma` m64n128k8 `.tf32`.
    wgmma_tf32_n128, f32, 128, wgmma::mma_m64n128k8_f32_tf32
);
wgmma_probe!(
    /// `wgmma` m64n256k8 `.tf32`.
    wgmma_tf32_n256, f32, 256, wgmma::mma_m64n256k8_f32_tf32
);

/// Largest TMA box of the probe, bytes (the shared tile's size).
pub const TMA_TILE_BYTES: u32 = 16384;

/// Polls of [`MBarrier::wait_bounded`] before the TMA probes give up on a phase (about a
/// second): a phase that never completes fails the test instead of hanging it.
pub const TMA_MAX_POLLS: u32 = 100_000_000;

/// [`tma_roundtrip`]'s `status` bits: phase 0 (the TMA load) did not complete in
/// [`TMA_MAX_POLLS`] polls.
pub const TMA_LOAD_TIMEOUT: u32 = 1;
/// Phase 1 (a plain arrival) did not complete in [`TMA_MAX_POLLS`] polls.
pub const TMA_ARRIVE_TIMEOUT: u32 = 2;
/// `try_wait` on the completed phase 1 returned `false`.
pub const TMA_TRY_WAIT_FALSE: u32 = 4;

/// Sets `bits` in `*status` (device-scope atomic OR).
///
/// # Safety
/// `status` is a valid `u32` in global memory.
unsafe fn flag(status: *mut u32, bits: u32) {
    // SAFETY: caller contract.
    unsafe {
        cuda_std::atomic::fetch_or::<cuda_std::atomic::Device, u32>(
            status,
            bits,
            cuda_std::atomic::Ordering::Relaxed,
        )
    };
}

/// Whether this is thread 0 of the block, read from `%tid.x` by an `asm!` block that is not
/// `pure`: opaque to MIR and LLVM, so a test of it after a block or cluster barrier cannot
/// be correlated with a `t == 0` test before the barrier. Jump threading would otherwise
/// copy the barrier into both arms of the first test, and thread 0 and the rest of its warp
/// would reach different instances of an `.aligned` barrier (undefined behaviour; on an
/// H100 the first version of [`tma_roundtrip`] hung there). On the host: `thread_idx_x()`.
#[inline(always)]
fn is_thread_0() -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let t: u32;
        // SAFETY: reads a special register; no memory access. Not `pure`, on purpose.
        unsafe {
            core::arch::asm!("mov.u32 {t}, %tid.x;", t = out(reg32) t, options(nomem, nostack))
        };
        t == 0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        thread_idx_x() == 0
    }
}

/// Loads the box at `(x, y)` of `map_in` with TMA into a 1024-byte aligned shared tile
/// (completion on an `MBarrier` with `box_bytes` transaction bytes), copies the tile's raw
/// bytes to `raw` (so the test sees the swizzled layout), and stores the tile back with TMA to
/// `(x, y)` of `map_out`. Also runs `prefetch_descriptor`, `try_wait` and a second phase
/// (a plain `arrive` by thread 0, waited for with the flipped phase). Waits are bounded
/// ([`TMA_MAX_POLLS`]): a phase that does not complete sets a bit of `status`
/// ([`TMA_LOAD_TIMEOUT`], …) and the threads return.
///
/// The issuing thread initialises the barrier, fences the init and issues the load in one
/// branch, before the block barrier that publishes the init to the other threads, and the
/// thread-0 tests after barriers use `is_thread_0` (an opaque `%tid.x` read). (The first version had `if t == 0`
/// on both sides of a `sync_threads`; MIR jump threading copied the `bar.sync` into both
/// arms, so thread 0 and the rest of warp 0 reached different instances of an `.aligned`
/// barrier, and it hung.)
///
/// # Safety
/// One block of 128 threads; `map_in`, `map_out`: valid 2-D maps of 4-byte elements in
/// global memory with the same box of `box_bytes` ≤ [`TMA_TILE_BYTES`] bytes; `raw` holds
/// `box_bytes / 4` `u32`; `status` one `u32`, zeroed.
#[kernel]
pub unsafe fn tma_roundtrip(
    map_in: *const TensorMap,
    map_out: *const TensorMap,
    x: i32,
    y: i32,
    box_bytes: u32,
    raw: *mut u32,
    status: *mut u32,
) {
    let tile = shared_array!(u32, 4096, align = 1024);
    let bar_p = shared_array!(MBarrier, 1);
    let t = thread_idx_x();
    // SAFETY: `bar_p` is this block's shared memory; one initialising thread, which fences
    // the init before its own (async-proxy) use; the block barrier below orders it before
    // the other threads' uses.
    let bar = unsafe { &*bar_p };
    if t == 0 {
        // SAFETY: as above; `map_in` is a valid map (caller contract); the tile has room for
        // the box; phase 0 expects exactly its bytes.
        unsafe {
            tma::prefetch_descriptor(map_in);
            bar.init(1);
            barrier::fence_init();
            bar.arrive_expect_tx(box_bytes);
            tma::load_2d(tile, map_in, x, y, bar);
        }
    }
    sync_threads();
    let mut phase = Phase::ZERO;
    // SAFETY: initialised; phase 0 is the current one.
    if !unsafe { bar.wait_bounded(phase, TMA_MAX_POLLS) } {
        // SAFETY: `status` is valid (caller contract).
        unsafe { flag(status, TMA_LOAD_TIMEOUT) };
        return;
    }
    phase = phase.flip();
    let mut i = t;
    while i < box_bytes / 4 {
        // SAFETY: in bounds of the tile and of `raw`.
        unsafe { raw.add(i as usize).write(tile.add(i as usize).read()) };
        i += 128;
    }
    // Phase 1 with a plain arrival: the count is 1, so thread 0 arrives alone. The block
    // barrier first: without it thread 0 could complete phase 1 while another thread has
    // not yet seen phase 0 complete; that thread would then poll parity 0 in phase 2, two
    // phases on, which `test_wait.parity` does not allow (PTX ISA 9.7.13.15.16) and which
    // never completes (the CPU emulator reported this deadlock).
    sync_threads();
    if is_thread_0() {
        // SAFETY: phase 1 expects one arrival.
        unsafe { bar.arrive() };
    }
    // SAFETY: phase 1 is the current phase or has just completed.
    if !unsafe { bar.wait_bounded(phase, TMA_MAX_POLLS) } {
        // SAFETY: `status` is valid (caller contract).
        unsafe { flag(status, TMA_ARRIVE_TIMEOUT) };
        return;
    }
    // SAFETY: phase 1 has completed, so `try_wait` on it returns true at once.
    if !unsafe { bar.try_wait(phase) } {
        // SAFETY: `status` is valid (caller contract).
        unsafe { flag(status, TMA_TRY_WAIT_FALSE) };
    }
    // The tile was written by the async proxy and only read since: no generic writes to
    // order before the store, but the fence is what a real kernel needs after writing it.
    tma::fence_proxy_async_shared();
    sync_threads();
    if is_thread_0() {
        // SAFETY: the tile holds the box, fenced for the async proxy above; waited for below.
        unsafe { tma::store_2d(map_out, x, y, tile) };
        tma::commit_group();
        tma::wait_group_read::<0>();
    }
}

/// The tile of [`tma_tile_roundtrip`]: 16 rows of 32 `u32` (128-byte rows) in the 128-byte
/// swizzle. The test builds its tensor maps from this type (`TensorMapExt::for_tile`).
pub type ProbeTile = SmemTile<u32, 16, 32, swizzle::B128>;

/// [`tma_roundtrip`] through the typed copies: thread 0 expects the bytes of one
/// [`ProbeTile`] (`tma::expect_tiles`) and loads the tile at `(x, y)` of `map_in`
/// (`tma::load_tile`) into a 1024-byte aligned shared tile; all threads wait (bounded: a
/// timeout sets [`TMA_LOAD_TIMEOUT`] in `status`) and copy the tile's raw words to `raw`;
/// thread 0 stores the tile to `(x, y)` of `map_out` (`tma::store_tile`). On the CPU
/// emulator a map whose box or swizzle is not the tile's fails the launch.
///
/// # Safety
/// One block of 128 threads; `map_in`, `map_out`: valid 2-D maps of 4-byte elements in
/// global memory (for the copies to succeed on a GPU, with [`ProbeTile`]'s box and swizzle);
/// `raw` holds `ProbeTile::BYTES / 4` `u32`; `status` one `u32`, zeroed.
#[kernel]
pub unsafe fn tma_tile_roundtrip(
    map_in: *const TensorMap,
    map_out: *const TensorMap,
    x: i32,
    y: i32,
    raw: *mut u32,
    status: *mut u32,
) {
    let tile = shared_array!(u32, 512, align = 1024);
    let bar_p = shared_array!(MBarrier, 1);
    // SAFETY: this block's shared memory; one initialising thread, fenced before its own
    // (async-proxy) use; the block barrier below orders it before the other threads' waits.
    let bar = unsafe { &*bar_p };
    if thread_idx_x() == 0 {
        // SAFETY: as above; the tile is 1024-byte aligned with room for a `ProbeTile`;
        // phase 0 expects exactly its bytes; `map_in` is valid (caller contract).
        unsafe {
            bar.init(1);
            barrier::fence_init();
            tma::expect_tiles::<ProbeTile>(bar);
            tma::load_tile::<ProbeTile>(tile, map_in, [x, y], bar);
        }
    }
    sync_threads();
    // SAFETY: initialised; phase 0 is the current one.
    if !unsafe { bar.wait_bounded(Phase::ZERO, TMA_MAX_POLLS) } {
        // SAFETY: `status` is valid (caller contract).
        unsafe { flag(status, TMA_LOAD_TIMEOUT) };
        return;
    }
    let mut i = thread_idx_x();
    while i < ProbeTile::BYTES / 4 {
        // SAFETY: in bounds of the tile and of `raw`.
        unsafe { raw.add(i as usize).write(tile.add(i as usize).read()) };
        i += 128;
    }
    tma::fence_proxy_async_shared();
    sync_threads();
    if is_thread_0() {
        // SAFETY: the tile holds the box (phase completed), fenced above; waited for below.
        unsafe { tma::store_tile::<ProbeTile>(map_out, [x, y], tile) };
        tma::commit_group();
        tma::wait_group_read::<0>();
    }
}

/// A 1-D bulk copy round trip: thread 0 loads `bytes` bytes from `src` into shared memory
/// with `tma::bulk_load` (completing on an `MBarrier`), every thread waits for the phase,
/// then thread 0 stores them to `dst` with `tma::bulk_store`. A wait that does not end sets
/// [`TMA_LOAD_TIMEOUT`] in `status` (bounded as in [`tma_roundtrip`]).
///
/// # Safety
/// One block of 32 threads; `src` and `dst` valid for `bytes` ≤ 4096 bytes, 16-byte aligned,
/// `bytes` a multiple of 16 (the emulator reports a violation of these); `status` one `u32`,
/// zeroed.
#[kernel]
pub unsafe fn bulk_roundtrip(src: *const u8, dst: *mut u8, bytes: u32, status: *mut u32) {
    let tile = shared_array!(u32, 1024, align = 16).cast::<u8>();
    let bar_p = shared_array!(MBarrier, 1);
    // SAFETY: this block's shared memory; one initialising thread, fenced before its own
    // (async-proxy) use; the block barrier below orders it before the other threads' waits.
    let bar = unsafe { &*bar_p };
    if thread_idx_x() == 0 {
        // SAFETY: caller contract (sizes and alignment); phase 0 expects exactly these bytes.
        unsafe {
            bar.init(1);
            barrier::fence_init();
            bar.arrive_expect_tx(bytes);
            tma::bulk_load(tile, src, bytes, bar);
        }
    }
    sync_threads();
    // SAFETY: initialised; phase 0 is the current one.
    if !unsafe { bar.wait_bounded(Phase::ZERO, TMA_MAX_POLLS) } {
        // SAFETY: `status` is valid (caller contract).
        unsafe { flag(status, TMA_LOAD_TIMEOUT) };
        return;
    }
    // Only the async proxy wrote the tile: the fence is what a kernel that wrote it needs.
    tma::fence_proxy_async_shared();
    sync_threads();
    if is_thread_0() {
        // SAFETY: the tile holds the bytes (phase completed), fenced above; waited for below.
        unsafe { tma::bulk_store(dst, tile, bytes) };
        tma::commit_group();
        tma::wait_group_read::<0>();
    }
}

/// `u32` words per item of the [`pipeline_ring_2`] / [`pipeline_ring_3`] probes: 256 bytes,
/// one bulk copy, one word per consumer thread.
pub const PIPE_ITEM_WORDS: u32 = 64;
/// Threads per block of the pipeline probes: a producer warp and two consumer warps.
pub const PIPE_THREADS: u32 = 32 + PIPE_ITEM_WORDS;

/// The body of the pipeline probes: a `STAGES`-stage [`Pipeline`] passes `items` items of
/// [`PIPE_ITEM_WORDS`] words from `src` to `out` (item `i` at `[i · 64, (i + 1) · 64)` of
/// both). Thread 0 (the producer warp's lane 0) waits for each stage to be free
/// (`producer_acquire`), announces its bytes (`producer_expect`) and fills it with a bulk
/// copy of the next item completing on the stage's full barrier; each of the 64 consumer
/// threads (warps 1 and 2) waits for the stage (`consumer_wait`), copies its word to `out`
/// and releases the stage (`consumer_release`: 64 arrivals per round).
///
/// With a phase one round off, either a wait never ends (the CPU emulator reports the
/// deadlock; on a GPU the launch hangs) or a consumer reads a stage before it is filled or
/// after it was refilled: its word is then another item's, and `out` differs from `src`.
///
/// # Safety
/// One block of [`PIPE_THREADS`] threads; `STAGES` ≤ 3; `src` and `out` hold
/// `items · 64` `u32`, `src` 16-byte aligned.
#[inline(always)]
pub unsafe fn pipeline_ring<const STAGES: u32>(src: *const u32, items: u32, out: *mut u32) {
    let stages = shared_array!(u32, 3 * PIPE_ITEM_WORDS as usize, align = 128);
    let bars = shared_array!(MBarrier, 6);
    // SAFETY: `bars` is this block's shared memory with room for 2 · 3 barriers, used for
    // nothing else; every thread passes the same pointer.
    let pipe = unsafe { Pipeline::<STAGES>::from_ptr(bars) };
    let t = thread_idx_x();
    let item_bytes = PIPE_ITEM_WORDS * 4;
    let stage = |s: u32| stages.wrapping_add((s * PIPE_ITEM_WORDS) as usize);
    if t == 0 {
        // SAFETY: one thread, before the block barrier below; 64 consumer threads each
        // release every stage once per round.
        unsafe { pipe.init(PIPE_ITEM_WORDS) };
    }
    sync_threads();
    if t < 32 {
        if is_thread_0() {
            let mut p = PipelineState::<STAGES>::PRODUCER_START;
            for i in 0..items {
                // SAFETY: initialised and ordered (block barrier); `p` walks the ring in
                // order from the producer's start; the stage's buffer holds an item (256
                // bytes, 128-byte aligned) and is free once acquired; the phase expects
                // exactly the copy's bytes; `src` holds item `i` (caller contract).
                unsafe {
                    pipe.producer_acquire(p);
                    pipe.producer_expect(p, item_bytes);
                    tma::bulk_load(
                        stage(p.stage()),
                        src.add((i * PIPE_ITEM_WORDS) as usize),
                        item_bytes,
                        pipe.full(p.stage()),
                    );
                }
                p.advance();
            }
        }
        return;
    }
    let c = t - 32;
    let mut s = PipelineState::<STAGES>::START;
    for i in 0..items {
        // SAFETY: initialised and ordered; `s` walks the ring in order from the start and
        // this thread released each stage's previous round; the word is read before this
        // thread's release of the stage; `out` holds item `i` (caller contract).
        unsafe {
            pipe.consumer_wait(s);
            let v = stage(s.stage()).add(c as usize).read_volatile();
            out.add((i * PIPE_ITEM_WORDS + c) as usize).write(v);
            pipe.consumer_release(s);
        }
        s.advance();
    }
}

/// [`pipeline_ring`] with 2 stages.
///
/// # Safety
/// As [`pipeline_ring`].
#[kernel]
pub unsafe fn pipeline_ring_2(src: *const u32, items: u32, out: *mut u32) {
    // SAFETY: forwarded.
    unsafe { pipeline_ring::<2>(src, items, out) }
}

/// [`pipeline_ring`] with 3 stages.
///
/// # Safety
/// As [`pipeline_ring`].
#[kernel]
pub unsafe fn pipeline_ring_3(src: *const u32, items: u32, out: *mut u32) {
    // SAFETY: forwarded.
    unsafe { pipeline_ring::<3>(src, items, out) }
}

/// TMA multicast (blocks of 128 threads in clusters of 2): rank 0's thread 0 loads the box
/// at `(x, y)` of `map` once with `load_2d_multicast` to both CTAs of its cluster (mask
/// `0b11`); each CTA's thread 0 expects the box's bytes on its own barrier; each CTA then
/// copies its tile to `out[block · box_bytes / 4 ..]`. Waits are bounded as in
/// [`tma_roundtrip`] (a timeout sets [`TMA_LOAD_TIMEOUT`] in `status`).
///
/// # Safety
/// Blocks of 128 threads in clusters of 2, 1-D grid; `map`: a valid 2-D map of 4-byte
/// elements in global memory with a box of `box_bytes` ≤ [`TMA_TILE_BYTES`] bytes; `out`
/// holds `blocks · box_bytes / 4` `u32`; `status` one `u32`, zeroed.
#[kernel]
pub unsafe fn tma_multicast(
    map: *const TensorMap,
    x: i32,
    y: i32,
    box_bytes: u32,
    out: *mut u32,
    status: *mut u32,
) {
    let tile = shared_array!(u32, 4096, align = 1024);
    let bar_p = shared_array!(MBarrier, 1);
    let t = thread_idx_x();
    let rank = cluster::ctarank();
    // SAFETY: own shared memory; one initialising thread per CTA, fenced; the cluster
    // barrier below orders every CTA's init before rank 0's multicast completes on it.
    let bar = unsafe { &*bar_p };
    if t == 0 {
        // SAFETY: as above.
        unsafe {
            bar.init(1);
            barrier::fence_init();
        }
    }
    cluster::sync();
    if t == 0 {
        // SAFETY: initialised (above); phase 0 expects the box's bytes (the multicast may
        // complete bytes before or after this: the transaction count may go negative in a
        // phase). After the cluster barrier, not straight after the init: compute-sanitizer's
        // racecheck reported thread 0's init (SYNCS.EXCH) and its own arrival
        // (SYNCS.ARRIVE.TRANS64) as 32 hazards when the two were back to back.
        unsafe { bar.arrive_expect_tx(box_bytes) };
    }
    if is_thread_0() && rank == 0 {
        // SAFETY: both CTAs' barriers are initialised and expect the box (cluster barrier
        // above); the tiles are at the same offset in both and free.
        unsafe { tma::load_2d_multicast(tile, map, x, y, bar, 0b11) };
    }
    // SAFETY: initialised; phase 0 is the current one.
    let done = unsafe { bar.wait_bounded(Phase::ZERO, TMA_MAX_POLLS) };
    if done {
        let base = block_idx_x() * (box_bytes / 4);
        let mut i = t;
        while i < box_bytes / 4 {
            // SAFETY: in bounds of the tile and of `out`.
            unsafe {
                out.add((base + i) as usize)
                    .write(tile.add(i as usize).read())
            };
            i += 128;
        }
    } else {
        // SAFETY: `status` is valid (caller contract).
        unsafe { flag(status, TMA_LOAD_TIMEOUT) };
    }
    // No CTA leaves while the other's copy may still target the cluster.
    cluster::sync();
}

/// Words per block of [`cluster_probe`]'s `info`.
pub const CLUSTER_INFO_WORDS: usize = 10;

/// Cluster probe (blocks of 128 threads, launched with clusters): each block writes
/// `1000 · rank + tid` to a shared array, and after a cluster barrier each thread reads
/// element `tid` of the next rank's array (`(rank + 1) % n`) through distributed shared
/// memory into `out[block · 128 + tid]`. Thread 0 also arrives on the next rank's
/// `MBarrier` and waits on its own (initialised to one arrival), then writes to
/// `info[block · 10 ..]`: `ctarank, nctarank, cluster_idx (3), cluster_dim (3), 1 if its
/// barrier completed, cluster_id().x`. `block` is the linear block index.
///
/// # Safety
/// Blocks of 128 threads, 1-D grid; `out`: 128 · blocks, `info`: 10 · blocks `u32`.
#[kernel]
pub unsafe fn cluster_probe(out: *mut u32, info: *mut u32) {
    let mine = shared_array!(u32, 128);
    let bar_p = shared_array!(MBarrier, 1);
    let t = thread_idx_x();
    let (rank, n) = (cluster::ctarank(), cluster::nctarank());
    let next = (rank + 1) % n;
    // SAFETY: own shared memory, one initialising thread, fenced, then a cluster barrier
    // before any (remote) use.
    let bar = unsafe { &*bar_p };
    if t == 0 {
        // SAFETY: as above.
        unsafe { bar.init(1) };
        barrier::fence_init();
    }
    // SAFETY: `t` < 128.
    unsafe { mine.add(t as usize).write(1000 * rank + t) };
    cluster::sync();
    // SAFETY: `next` < n; the neighbour wrote its array before the cluster barrier and
    // does not exit before the final one.
    let remote = unsafe { cluster::map_shared_rank(mine.cast_const(), next) };
    let block = block_idx_x() as usize;
    // SAFETY: in bounds of the neighbour's array and of `out`.
    unsafe {
        out.add(block * 128 + t as usize)
            .write(remote.add(t as usize).read())
    };
    if t == 0 {
        // SAFETY: the neighbour's barrier is initialised (before the cluster barrier) and
        // expects one arrival, ours.
        unsafe { bar.arrive_cluster(next) };
        // SAFETY: our barrier's phase 0 completes with the previous rank's arrival.
        unsafe { bar.wait(Phase::ZERO) };
        let (idx, dim) = (cluster::cluster_idx(), cluster::cluster_dim());
        let words = [
            rank,
            n,
            idx.x,
            idx.y,
            idx.z,
            dim.x,
            dim.y,
            dim.z,
            1,
            cluster::cluster_id().x,
        ];
        for (k, w) in words.iter().enumerate() {
            // SAFETY: in bounds of `info`.
            unsafe { info.add(block * CLUSTER_INFO_WORDS + k).write(*w) };
        }
    }
    cluster::sync();
}

/// `u16` written per lane-pattern by [`stmatrix_probe`]: four 8×8 matrices stored plainly,
/// then the same four transposed.
pub const STMATRIX_WORDS: usize = 512;

/// The value lane `lane` puts in half `half` of register `m` for [`stmatrix_probe`].
#[must_use]
pub const fn stmatrix_value(m: u32, lane: u32, half: u32) -> u16 {
    (m * 64 + lane * 2 + half) as u16
}

/// One warp: register `m` of lane `l` holds [`stmatrix_value`]`(m, l, 0..2)`; `stmatrix_x4`
/// stores four 8×8 matrices to a shared tile (matrix `m` at elements `64m..64m+64`,
/// row-major), copied to `out[0..256]`; `stmatrix_x4_trans` the same to `out[256..512]`;
/// `stmatrix_x1` and `_x2` (and their transposes) are exercised on the first matrices of
/// a second tile, copied to nothing (they must assemble and not fault).
///
/// # Safety
/// One block of 32 threads; `out` holds [`STMATRIX_WORDS`] `u16`.
#[kernel]
pub unsafe fn stmatrix_probe(out: *mut u16) {
    let tile = shared_array!(u16, 256, align = 16);
    let l = lane_id();
    let regs = [0, 1, 2, 3]
        .map(|m| u32::from(stmatrix_value(m, l, 0)) | (u32::from(stmatrix_value(m, l, 1)) << 16));
    // Lane l gives row l % 8 of matrix l / 8.
    // SAFETY: in bounds, 16-byte aligned rows; the whole warp runs each call.
    let row = unsafe { tile.add((l / 8 * 64 + l % 8 * 8) as usize) };
    for (pass, trans) in [false, true].into_iter().enumerate() {
        // SAFETY: as above.
        unsafe {
            if trans {
                mma::stmatrix_x4_trans(row, regs);
            } else {
                mma::stmatrix_x4(row, regs);
            }
        }
        // SAFETY: the whole warp runs the probe.
        unsafe { warp::sync_warp(FULL_MASK) };
        for k in 0..8 {
            let i = (l * 8 + k) as usize;
            // SAFETY: in bounds of the tile and `out`.
            unsafe { out.add(pass * 256 + i).write(tile.add(i).read()) };
        }
        // SAFETY: the whole warp runs the probe.
        unsafe { warp::sync_warp(FULL_MASK) };
    }
    // SAFETY: as above (lanes 0..16 give addresses inside the tile).
    unsafe {
        mma::stmatrix_x1(row, [regs[0]]);
        mma::stmatrix_x2(row, [regs[0], regs[1]]);
        mma::stmatrix_x1_trans(row, [regs[0]]);
        mma::stmatrix_x2_trans(row, [regs[0], regs[1]]);
    }
}

/// The primary of the programmatic dependent launch probe: lets the kernel after it start
/// (`thread::trigger_programmatic_launch_completion`, first, as the TF32 rounding pass
/// does), then writes `mid[i] = 2·x[i] + 1` for every element (a grid-stride loop).
#[kernel]
pub fn pdl_primary(x: &[u32], mid: OutSlice<u32>) {
    thread::trigger_programmatic_launch_completion();
    mid.write_grid_stride_loop(|i| 2 * x.get(i).copied().unwrap_or(0) + 1);
}

/// The dependent of [`pdl_primary`]: waits for its prerequisite grid
/// (`thread::grid_dependency_sync`), then writes `out[i] = mid[i] + 3`. Launched with
/// programmatic stream serialization right after the primary, it may start while the
/// primary runs; the wait makes every `mid` element the primary's.
#[kernel]
pub fn pdl_dependent(mid: &[u32], out: OutSlice<u32>) {
    thread::grid_dependency_sync();
    out.write_grid_stride_loop(|i| mid.get(i).copied().unwrap_or(0) + 3);
}
