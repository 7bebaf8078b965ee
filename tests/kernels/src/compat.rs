//! Test kernels for Rust-CUDA source compatibility on the device side, written the way
//! Rust-CUDA's samples write them: shared memory as `#[address_space(shared)] static mut`
//! arrays sized by function-local constants, `shared_array!` with a local constant, and
//! `cuda_std::glam` vector types. `tests/tests/compat.rs` compares their results with CPU
//! references and checks the `.shared` declarations in the PTX.

use core::mem::MaybeUninit;
use cuda_std::address_space;
use cuda_std::glam::{USizeVec2, UVec2};
use cuda_std::prelude::*;
use cuda_std::shared::SharedArray;
use cuda_std::thread;

/// Tile edge of [`compat_tiled_matmul`]; launch it with `COMPAT_TILE × COMPAT_TILE` blocks.
pub const COMPAT_TILE: usize = 16;

/// `c = a · b` (`a`: m×k, `b`: k×n, `c`: m×n, row-major) through two shared tiles declared as
/// Rust-CUDA's `matmul` sample declares them (`[[MaybeUninit<f32>; T]; T]`, `T` a local
/// constant, written with `write`, read with `assume_init`). Each `c` element is the sum of
/// `a[row][i] · b[i][col]` for `i` in increasing order, with no FMA: the same bits as the
/// CPU loop in that order.
///
/// Block (x, y) computes the tile of rows `16·y ..` and columns `16·x ..`.
///
/// # Safety
/// Launch with 16×16-thread blocks and a grid covering `n` columns (x) and `m` rows (y); `c`
/// holds `m · n` elements; `a` holds `m · k`, `b` `k · n`.
#[kernel]
pub unsafe fn compat_tiled_matmul(a: &[f32], b: &[f32], c: *mut f32, m: u32, n: u32, k: u32) {
    const TILE: usize = 16;

    #[address_space(shared)]
    static mut TILE_A: [[MaybeUninit<f32>; TILE]; TILE] =
        [[const { MaybeUninit::uninit() }; TILE]; TILE];
    #[address_space(shared)]
    static mut TILE_B: [[MaybeUninit<f32>; TILE]; TILE] =
        [[const { MaybeUninit::uninit() }; TILE]; TILE];

    let (m, n, k) = (m as usize, n as usize, k as usize);
    let tx = thread::thread_idx_x() as usize;
    let ty = thread::thread_idx_y() as usize;
    let row = thread::block_idx_y() as usize * TILE + ty;
    let col = thread::block_idx_x() as usize * TILE + tx;

    let mut sum = 0.0f32;
    for kk in (0..k).step_by(TILE) {
        let a_val = if row < m && kk + tx < k {
            a[row * k + kk + tx]
        } else {
            0.0
        };
        let b_val = if col < n && kk + ty < k {
            b[(kk + ty) * n + col]
        } else {
            0.0
        };
        // SAFETY: each thread writes its own element; the barrier below orders the writes
        // before the other threads' reads.
        unsafe {
            TILE_A[ty][tx].write(a_val);
            TILE_B[ty][tx].write(b_val);
        }
        thread::sync_threads();
        for i in 0..TILE.min(k - kk) {
            // SAFETY: every element was written before the barrier above.
            sum += unsafe { TILE_A[ty][i].assume_init() * TILE_B[i][tx].assume_init() };
        }
        thread::sync_threads();
    }
    if row < m && col < n {
        // SAFETY: row < m, col < n: in bounds of `c` (m · n elements).
        unsafe { *c.add(row * n + col) = sum };
    }
}

/// Threads per block of [`compat_block_sum`].
pub const COMPAT_SUM_BLOCK: u32 = 256;

/// Per-block wrapping sum of `input` (`sums[b]` = the sum of block `b`'s 256 elements, 0
/// past the end), by a tree reduction in a `#[address_space(shared)] static mut [u32; N]`
/// (initialised with zeros, as Rust-CUDA samples write it) whose length is a local constant
/// expression. Thread 0 also reads the array through `addr_of_mut!(PARTIAL) as *mut u32` and
/// `PARTIAL.len()`, which must see the array, not the binding.
///
/// # Safety
/// Launch with 256-thread blocks; `sums` holds one element per block.
#[kernel]
pub unsafe fn compat_block_sum(input: &[u32], sums: *mut u32) {
    const WARPS: usize = 8;
    const BLOCK: usize = WARPS * 32;

    #[address_space(shared)]
    static mut PARTIAL: [u32; BLOCK] = [0; BLOCK];

    let t = thread::thread_idx_x() as usize;
    let i = index_1d();
    let mut stride = BLOCK / 2;
    // SAFETY: each thread writes its own slot before the first barrier.
    unsafe { PARTIAL[t] = input.get(i).copied().unwrap_or(0) };
    sync_threads();
    while stride > 0 {
        if t < stride {
            // SAFETY: slots t and t + stride are written by no other thread in this round;
            // rounds are separated by barriers.
            unsafe { PARTIAL[t] = PARTIAL[t].wrapping_add(PARTIAL[t + stride]) };
        }
        sync_threads();
        stride /= 2;
    }
    if t == 0 {
        // SAFETY: after the last barrier; the pointer is the array's first element, and
        // `len()` its length (both would be the binding's if not rewritten).
        unsafe {
            let first = core::ptr::addr_of_mut!(PARTIAL) as *mut u32;
            let total = *first;
            let len_ok = PARTIAL.len() == BLOCK;
            *sums.add(block_idx_x() as usize) = if len_ok { total } else { u32::MAX };
        }
    }
}

/// Reverses each block's 128-element chunk (`out[b·128 + t] = input[b·128 + 127 - t]`)
/// through `shared_array!([u32; N])` with `N` a local constant, indexed directly.
///
/// # Safety
/// Launch with 128-thread blocks and exactly `input.len()` threads; `out` holds
/// `input.len()` elements.
#[kernel]
pub unsafe fn compat_shared_array_reverse(input: &[u32], out: *mut u32) {
    const N: usize = 128;
    // SAFETY: each thread writes its own element, then reads another after the barrier.
    let chunk: &mut SharedArray<u32, N> = unsafe { shared_array!([u32; N]) };
    let t = thread::thread_idx_x() as usize;
    let i = index_1d();
    chunk[t] = input[i];
    sync_threads();
    // SAFETY: i < input.len() = out's length.
    unsafe { *out.add(i) = chunk[N - 1 - t] };
}

/// Threads per block of [`compat_shared_array_reverse`].
pub const COMPAT_REVERSE_BLOCK: u32 = 128;

/// For a 2D launch, writes the linear index of each thread's `(x, y)` into a `width`-wide
/// grid at that index (`out[y·width + x] = y·width + x`), computed with
/// `cuda_std::glam::USizeVec2` and `UVec2` (the types Rust-CUDA's samples use).
///
/// # Safety
/// `out` holds `width · height` elements; the launch covers at least that many threads in x
/// and y.
#[kernel]
pub unsafe fn compat_glam_index(out: *mut u32, width: u32, height: u32) {
    let (x, y) = index_2d();
    let p = UVec2::new(x, y);
    if p.x < width && p.y < height {
        let q = USizeVec2::new(p.x as usize, p.y as usize);
        let linear = q.y * width as usize + q.x;
        // SAFETY: x < width, y < height: in bounds.
        unsafe { *out.add(linear) = linear as u32 };
    }
}
