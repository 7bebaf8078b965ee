//! Probes of `cuda_std::mma` (warp `mma.sync` and `ldmatrix`, sm_80): they exist only in
//! the PTX built for sm_80 or later (`cfg(target_feature = "sm_80")`, the `PROBES_SM80`
//! module of `tests/build.rs`); `tests/tests/mma.rs` compares their output with a CPU
//! model, bit for bit.
//!
//! Matrices are row-major unless stated: `A` M×K (`a[row * K + col]`), `B` K×N
//! (`b[k * N + n]`), `C`/`D` 16×8. Problem `p` (one per warp, or one per block for the
//! `ldmatrix` probes) uses the `p`-th consecutive matrix of each buffer.
#![cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]

use cuda_std::mma::{
    self, Bf16, Element, F16, FragA, FragAcc, FragB, M16N8K8, M16N8K16, MmaShape, Tf32,
};
use cuda_std::prelude::*;

/// `u32` words per lane written by [`mma_ldmatrix_raw`]: x1, x2, x4, then the same
/// transposed (1 + 2 + 4 + 1 + 2 + 4).
pub const LDMATRIX_RAW_WORDS: usize = 14;

/// One `D = A·B + C` per warp, fragments loaded from global memory by the documented
/// lane-to-element map (`FragA::load`, `FragB::load`, `FragAcc::load`) and `D` stored by
/// it. `B` is column-major (`b[n * K + k]`) when `b_col_major` is nonzero.
///
/// # Safety
/// Whole warps only (every lane of every warp runs the `mma`); warp `w` reads
/// `a[w·M·K ..]`, `b[w·K·N ..]`, `c[w·128 ..]` and writes `d[w·128 .. (w+1)·128]`, all in
/// bounds.
// ANCHOR: mma_global
#[inline(always)]
unsafe fn mma_global<S: MmaShape<E>, E: Element>(
    a: &[E::Storage],
    b: &[E::Storage],
    c: &[f32],
    d: *mut f32,
    b_col_major: u32,
) {
    let w = (index_1d() / 32) as usize;
    let (m, n, k) = (S::M as usize, S::N as usize, S::K as usize);
    let b_ld = if b_col_major != 0 { k } else { n };
    // SAFETY: the warp's matrices are in bounds (caller contract); all 32 lanes of the
    // warp reach the `mma` together.
    unsafe {
        let fa = FragA::<S, E>::load(a.as_ptr().add(w * m * k), k);
        let fb = FragB::<S, E>::load(b.as_ptr().add(w * k * n), b_ld, b_col_major != 0);
        let fc = FragAcc::<S>::load(c.as_ptr().add(w * m * n), n);
        mma::mma_sync(&fa, &fb, &fc).store(d.add(w * m * n), n);
    }
}

/// `mma_global` for `m16n8k16` `.f16` (`a`, `b`: `u16` bit patterns).
///
/// # Safety
/// As `mma_global`.
#[kernel]
pub unsafe fn mma_global_f16(a: &[u16], b: &[u16], c: &[f32], d: *mut f32, b_col_major: u32) {
    // SAFETY: forwarded.
    unsafe { mma_global::<M16N8K16, F16>(a, b, c, d, b_col_major) }
}

/// `mma_global` for `m16n8k16` `.bf16` (`a`, `b`: `u16` bit patterns).
///
/// # Safety
/// As `mma_global`.
#[kernel]
pub unsafe fn mma_global_bf16(a: &[u16], b: &[u16], c: &[f32], d: *mut f32, b_col_major: u32) {
    // SAFETY: forwarded.
    unsafe { mma_global::<M16N8K16, Bf16>(a, b, c, d, b_col_major) }
}
// ANCHOR_END: mma_global

/// `mma_global` for `m16n8k8` `.tf32` (`a`, `b`: `f32`).
///
/// # Safety
/// As `mma_global`.
#[kernel]
pub unsafe fn mma_global_tf32(a: &[f32], b: &[f32], c: &[f32], d: *mut f32, b_col_major: u32) {
    // SAFETY: forwarded.
    unsafe { mma_global::<M16N8K8, Tf32>(a, b, c, d, b_col_major) }
}

/// Row stride (elements) of the shared `A` tiles of the `ldmatrix` probes: 48 bytes, a
/// multiple of 16 but not the tile width, so a wrong stride shows.
const LDA_BYTES: usize = 48;

/// One block (one warp) per problem: copies `A` (row-major, padded rows of 48 bytes), `B`
/// row-major and `B` column-major to shared memory, loads `A` with `ldmatrix.x4`, `B` with
/// `ldmatrix.x2.trans` (row-major) and `ldmatrix.x2` (column-major), and writes
/// `D = A·B + C` of both `B` loads to `d[p·256 ..]` (row-major copy first).
///
/// # Safety
/// 32-thread blocks; block `p` reads problem `p` of `a`, `b`, `c` and writes
/// `d[p·256 .. (p+1)·256]`, in bounds; the three tiles are 16-byte aligned shared arrays
/// of at least `16·24`, `16·8` and `8·16` elements.
#[inline(always)]
unsafe fn mma_ldmatrix_16<E: Element<Storage = u16>>(
    a: &[u16],
    b: &[u16],
    c: &[f32],
    d: *mut f32,
    tiles: [*mut u16; 3],
) where
    M16N8K16: MmaShape<E>,
{
    let p = block_idx_x() as usize;
    let t = thread_idx_x() as usize;
    let [sa, sb, sbt] = tiles;
    let lda = LDA_BYTES / 2;
    // SAFETY: in bounds (caller contract); each shared element written by one thread.
    unsafe {
        for i in (t..256).step_by(32) {
            *sa.add((i / 16) * lda + i % 16) = a[p * 256 + i];
        }
        for i in (t..128).step_by(32) {
            let (k, n) = (i / 8, i % 8);
            *sb.add(i) = b[p * 128 + i];
            *sbt.add(n * 16 + k) = b[p * 128 + i];
        }
    }
    sync_threads();
    // SAFETY: the whole warp (block) runs these convergently; shared tiles aligned and
    // filled (barrier above); outputs in bounds.
    unsafe {
        let fa = FragA::<M16N8K16, E>::ldmatrix(sa, lda);
        let fb_row = FragB::<M16N8K16, E>::ldmatrix_row_major(sb, 8);
        let fb_col = FragB::<M16N8K16, E>::ldmatrix_col_major(sbt, 16);
        let fc = FragAcc::<M16N8K16>::load(c.as_ptr().add(p * 128), 8);
        mma::mma_sync(&fa, &fb_row, &fc).store(d.add(p * 256), 8);
        mma::mma_sync(&fa, &fb_col, &fc).store(d.add(p * 256 + 128), 8);
    }
}

/// `mma_ldmatrix_16` for `.f16`.
///
/// # Safety
/// As `mma_ldmatrix_16` (32-thread blocks, buffers for `grid` problems).
#[kernel]
pub unsafe fn mma_ldmatrix_f16(a: &[u16], b: &[u16], c: &[f32], d: *mut f32) {
    let tiles = [
        shared_array!(u16, 384, align = 16),
        shared_array!(u16, 128, align = 16),
        shared_array!(u16, 128, align = 16),
    ];
    // SAFETY: forwarded; tiles as required.
    unsafe { mma_ldmatrix_16::<F16>(a, b, c, d, tiles) }
}

/// `mma_ldmatrix_16` for `.bf16`.
///
/// # Safety
/// As `mma_ldmatrix_16` (32-thread blocks, buffers for `grid` problems).
#[kernel]
pub unsafe fn mma_ldmatrix_bf16(a: &[u16], b: &[u16], c: &[f32], d: *mut f32) {
    let tiles = [
        shared_array!(u16, 384, align = 16),
        shared_array!(u16, 128, align = 16),
        shared_array!(u16, 128, align = 16),
    ];
    // SAFETY: forwarded; tiles as required.
    unsafe { mma_ldmatrix_16::<Bf16>(a, b, c, d, tiles) }
}

/// `m16n8k8` `.tf32` through shared memory: one block (one warp) per problem copies `A`
/// (16×8, rows padded to 48 bytes) and `B` column-major (`Bᵀ`, 8×8) to shared memory,
/// loads them with `ldmatrix.x4` and `ldmatrix.x2` (32-bit elements as 16-bit pairs) and
/// writes `D = A·B + C` to `d[p·128 ..]`.
///
/// # Safety
/// 32-thread blocks; block `p` reads problem `p` of `a` (128), `b` (64, row-major), `c`
/// (128) and writes `d[p·128 .. (p+1)·128]`, in bounds.
#[kernel]
pub unsafe fn mma_ldmatrix_tf32(a: &[f32], b: &[f32], c: &[f32], d: *mut f32) {
    let sa = shared_array!(f32, 192, align = 16);
    let sbt = shared_array!(f32, 64, align = 16);
    let p = block_idx_x() as usize;
    let t = thread_idx_x() as usize;
    let lda = LDA_BYTES / 4;
    // SAFETY: in bounds; each shared element written by one thread.
    unsafe {
        for i in (t..128).step_by(32) {
            *sa.add((i / 8) * lda + i % 8) = a[p * 128 + i];
        }
        for i in (t..64).step_by(32) {
            let (k, n) = (i / 8, i % 8);
            *sbt.add(n * 8 + k) = b[p * 64 + i];
        }
    }
    sync_threads();
    // SAFETY: the whole warp runs these convergently; tiles aligned and filled.
    unsafe {
        let fa = FragA::<M16N8K8, Tf32>::ldmatrix(sa, lda);
        let fb = FragB::<M16N8K8, Tf32>::ldmatrix_col_major(sbt, 8);
        let fc = FragAcc::<M16N8K8>::load(c.as_ptr().add(p * 128), 8);
        mma::mma_sync(&fa, &fb, &fc).store(d.add(p * 128), 8);
    }
}

/// Raw `ldmatrix`: one warp copies `src` (32 rows of 8 `u16`: four 8×8 matrices stacked)
/// to shared memory; lane `l` gives the address of row `l`; each lane writes its registers
/// of `ldmatrix` x1, x2, x4, x1.trans, x2.trans, x4.trans to
/// `out[l·LDMATRIX_RAW_WORDS ..]` in that order.
///
/// # Safety
/// One block of 32 threads; `src.len() = 256`; `out` holds `32·LDMATRIX_RAW_WORDS`.
#[kernel]
pub unsafe fn mma_ldmatrix_raw(src: &[u16], out: *mut u32) {
    let tile = shared_array!(u16, 256, align = 16);
    let l = thread_idx_x() as usize;
    // SAFETY: in bounds; each shared element written by one thread.
    unsafe {
        for i in (l..256).step_by(32) {
            *tile.add(i) = src[i];
        }
    }
    sync_threads();
    // SAFETY: the whole warp runs these convergently; rows 16-byte aligned and filled;
    // outputs in bounds.
    unsafe {
        let row = tile.add(8 * l).cast_const();
        let (x1, x2, x4) = (
            mma::ldmatrix_x1(row),
            mma::ldmatrix_x2(row),
            mma::ldmatrix_x4(row),
        );
        let (t1, t2, t4) = (
            mma::ldmatrix_x1_trans(row),
            mma::ldmatrix_x2_trans(row),
            mma::ldmatrix_x4_trans(row),
        );
        let words = [
            x1[0], x2[0], x2[1], x4[0], x4[1], x4[2], x4[3], t1[0], t2[0], t2[1], t4[0], t4[1],
            t4[2], t4[3],
        ];
        for (i, w) in words.into_iter().enumerate() {
            *out.add(l * LDMATRIX_RAW_WORDS + i) = w;
        }
    }
}
