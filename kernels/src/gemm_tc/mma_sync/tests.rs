//! Unit tests: the stage layout (`layout`) against `cuda_std::mma::layout`'s fragment
//! maps and for bank conflicts, and the kernels on the CPU emulator against the CPU, bit
//! for bit (integer inputs; TF32 inputs that tell rounding from truncation).

extern crate std;
use super::layout::{copy, ldmatrix_a, ldmatrix_b, swizzled};
use super::{
    CHUNKS, MMA_BK_BYTES, MMA_BM, MMA_BN, MMA_SHARED_BYTES, MMA_STAGE_BYTES, MMA_THREADS,
    gemm_mma_bf16, gemm_mma_f16, gemm_mma_tf32,
};
use crate::gemm_tc::OutElem;
use core::any::Any;
use core::ffi::c_void;
use cuda_emu::{self as emu, EmuOptions, HostBuffer};
use cuda_std::half::{bf16, f16};
use cuda_std::launch::{Kernel, ParamSizes};
use cuda_std::mma::layout as frag;
use cuda_std::mma::tf32_from_f32;
use std::boxed::Box;
use std::collections::BTreeSet;
use std::vec;
use std::vec::Vec;

/// Copies per thread and stage of `A` (`b` false) or `B`.
fn copies(b: bool) -> u32 {
    (if b { MMA_BN } else { MMA_BM }) * CHUNKS / MMA_THREADS
}

/// A stage as the copies leave it, for a K slice whose byte `kb` of stage row `r` holds
/// `value(r, kb)`: every thread's copies placed at their swizzled offsets.
fn stage_image(value: impl Fn(u32, u32) -> u8) -> Vec<u8> {
    let mut img = vec![0u8; MMA_STAGE_BYTES as usize];
    let mut written = vec![0u32; MMA_STAGE_BYTES as usize];
    for tid in 0..MMA_THREADS {
        for b in [false, true] {
            for j in 0..copies(b) {
                let (row, chunk) = copy(tid, j, b);
                let dst = swizzled(row, chunk);
                // The kernel's incremental form: tile row tid / 8, then 32 rows per copy.
                let first = if b { MMA_BM } else { 0 };
                assert_eq!(
                    dst,
                    (first + 32 * j) * MMA_BK_BYTES + swizzled(tid / 8, tid % 8)
                );
                for byte in 0..16 {
                    img[(dst + byte) as usize] = value(row, chunk * 16 + byte);
                    written[(dst + byte) as usize] += 1;
                }
            }
        }
    }
    assert!(
        written.iter().all(|&w| w == 1),
        "every stage byte written once"
    );
    img
}

/// `ldmatrix.x4` on `img`: register `q` of lane `l` is the 4 bytes at
/// `addr[8q + l / 4] + 4·(l % 4)` (PTX ISA "ldmatrix": thread `l` holds row `l / 4`,
/// elements `2·(l % 4)`, `+1` of each 8×8 matrix of 16-bit elements).
fn ldmatrix_x4(img: &[u8], addr: impl Fn(u32) -> u32) -> [[u32; 4]; 32] {
    core::array::from_fn(|l| {
        core::array::from_fn(|q| {
            let at = (addr(8 * q as u32 + l as u32 / 4) + 4 * (l as u32 % 4)) as usize;
            u32::from_le_bytes([img[at], img[at + 1], img[at + 2], img[at + 3]])
        })
    })
}

/// Element `(row, k)` of a K slice, as stored: a code of the stage row and the element's
/// index in the slice (< 64), so any misplaced element shows.
fn code(row: u32, k: u32) -> u32 {
    (row << 8) | k
}

/// The 16-byte bank groups (bytes mod 128) of a set of stage offsets.
fn groups(offsets: impl Iterator<Item = u32>) -> BTreeSet<u32> {
    offsets.map(|o| (o % 128) / 16).collect()
}

#[test]
fn ldmatrix_phases_are_free_of_bank_conflicts() {
    // The 8 rows of an ldmatrix phase (8 consecutive lanes' addresses) hit 8 distinct
    // 16-byte bank groups, for every warp, tile and sub-step.
    for ks in 0..4 {
        for lane0 in [0, 8, 16, 24] {
            for (w, t) in [(0, 0), (1, 3), (0, 2)] {
                let a = groups((lane0..lane0 + 8).map(|l| ldmatrix_a(w, t, l, ks)));
                assert_eq!(
                    a.len(),
                    8,
                    "A warp row {w} tile {t} ks {ks} lanes {lane0}.."
                );
            }
            for (w, t) in [(0, 0), (3, 1), (2, 3)] {
                let b = groups((lane0..lane0 + 8).map(|l| ldmatrix_b(w, t, l, ks)));
                assert_eq!(
                    b.len(),
                    8,
                    "B warp col {w} tile {t} ks {ks} lanes {lane0}.."
                );
            }
        }
    }
}

#[test]
fn copy_phases_are_free_of_bank_conflicts() {
    // cp.async of 16 bytes per thread: each 8 consecutive threads of a warp write 8
    // distinct bank groups (one whole 128-byte row), for every copy of A and B.
    for b in [false, true] {
        for j in 0..copies(b) {
            for tid0 in (0..MMA_THREADS).step_by(8) {
                let g = groups((tid0..tid0 + 8).map(|t| {
                    let (row, chunk) = copy(t, j, b);
                    swizzled(row, chunk)
                }));
                assert_eq!(g.len(), 8, "b {b} copy {j} threads {tid0}..");
            }
        }
    }
}

#[test]
fn sub_steps_and_tiles_are_offsets_of_the_first() {
    // The kernel's address arithmetic: tile t of sub-step ks at (tile 0, ks 0) ^ 32·ks
    // + 16 rows per tile.
    for ks in 0..4 {
        for t in 0..4 {
            for l in 0..32 {
                for wm in 0..2 {
                    assert_eq!(
                        ldmatrix_a(wm, t, l, ks),
                        (ldmatrix_a(wm, 0, l, 0) ^ (32 * ks)) + t * 16 * MMA_BK_BYTES
                    );
                }
                for wn in 0..4 {
                    assert_eq!(
                        ldmatrix_b(wn, t, l, ks),
                        (ldmatrix_b(wn, 0, l, 0) ^ (32 * ks)) + t * 16 * MMA_BK_BYTES
                    );
                }
            }
        }
    }
}

#[test]
fn ldmatrix_reads_the_mma_fragments_of_16_bit_elements() {
    // 16-bit elements: element k of stage row r is bytes 2k, 2k+1 (64 per row).
    let img = stage_image(|r, kb| (code(r, kb / 2) >> (8 * (kb % 2))) as u8);
    let half = |reg: u32, h: u32| (reg >> (16 * h)) & 0xffff;
    for ks in 0..4 {
        for wm in 0..2 {
            for i in 0..4 {
                let regs = ldmatrix_x4(&img, |l| ldmatrix_a(wm, i, l, ks));
                for l in 0..32 {
                    for q in 0..4 {
                        for h in 0..2 {
                            let (row, col) = frag::a_m16n8k16(l, q, h);
                            let want = code(64 * wm + 16 * i + row, 16 * ks + col) & 0xffff;
                            assert_eq!(half(regs[l as usize][q as usize], h), want);
                        }
                    }
                }
            }
        }
        for wn in 0..4 {
            for j in 0..4 {
                let regs = ldmatrix_x4(&img, |l| ldmatrix_b(wn, j, l, ks));
                for l in 0..32 {
                    for q in 0..4 {
                        // Registers 2q', 2q'+1 are the fragment of n block 2j + q'.
                        let (nb, reg) = (2 * j + q / 2, q % 2);
                        for h in 0..2 {
                            let (k, n) = frag::b_m16n8k16(l, reg, h);
                            let row = MMA_BM + 64 * wn + 8 * nb + n;
                            let want = code(row, 16 * ks + k) & 0xffff;
                            assert_eq!(half(regs[l as usize][q as usize], h), want);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn ldmatrix_reads_the_mma_fragments_of_tf32_elements() {
    // 32-bit elements: element k of stage row r is bytes 4k..4k+4 (32 per row).
    let img = stage_image(|r, kb| (code(r, kb / 4) >> (8 * (kb % 4))) as u8);
    for ks in 0..4 {
        for wm in 0..2 {
            for i in 0..4 {
                let regs = ldmatrix_x4(&img, |l| ldmatrix_a(wm, i, l, ks));
                for l in 0..32 {
                    for q in 0..4 {
                        let (row, col) = frag::a_m16n8k8_tf32(l, q);
                        let want = code(64 * wm + 16 * i + row, 8 * ks + col);
                        assert_eq!(regs[l as usize][q as usize], want);
                    }
                }
            }
        }
        for wn in 0..4 {
            for j in 0..4 {
                let regs = ldmatrix_x4(&img, |l| ldmatrix_b(wn, j, l, ks));
                for l in 0..32 {
                    for q in 0..4 {
                        let (nb, reg) = (2 * j + q / 2, q % 2);
                        let (k, n) = frag::b_m16n8k8_tf32(l, reg);
                        let row = MMA_BM + 64 * wn + 8 * nb + n;
                        assert_eq!(regs[l as usize][q as usize], code(row, 8 * ks + k));
                    }
                }
            }
        }
    }
}

/// A 16-byte aligned copy of `v` (the kernels' `cp.async` sources and paired stores
/// need it, as device allocations give it).
fn aligned<T: Copy>(v: &[T]) -> Vec<u128> {
    let mut out = vec![0u128; (size_of_val(v)).div_ceil(16)];
    // SAFETY: `out` holds at least `size_of_val(v)` bytes; plain data.
    unsafe {
        core::ptr::copy_nonoverlapping(
            v.as_ptr().cast::<u8>(),
            out.as_mut_ptr().cast(),
            size_of_val(v),
        );
    }
    out
}

/// `C = A·Bᵀ` (`a` m×k, `b` n×k, row-major) by `kernel` on the CPU emulator with every
/// check on (races between the copies and `ldmatrix`, barrier divergence, bounds), and
/// with `seed` ordering the threads; `C` starts as NaN so unwritten elements show.
fn emulate<T: OutElem, P: ParamSizes, S>(
    kernel: &Kernel<P, S>,
    (m, n, k): (usize, usize, usize),
    a: &[T],
    b: &[T],
    seed: u64,
) -> Vec<T> {
    let (a_dev, b_dev) = (aligned(a), aligned(b));
    let mut c_dev = aligned(&vec![T::from_f32(f32::NAN); m * n]);
    let c_ptr = c_dev.as_mut_ptr().cast::<T>();
    let mut params: Vec<Box<dyn Any>> = vec![
        Box::new(m as u32),
        Box::new(n as u32),
        Box::new(k as u32),
        Box::new((a_dev.as_ptr() as usize, a.len())),
        Box::new((b_dev.as_ptr() as usize, b.len())),
        Box::new(c_ptr as usize),
    ];
    let args: Vec<*mut c_void> = params
        .iter_mut()
        .map(|p| (&raw mut **p).cast::<c_void>())
        .collect();
    let options = EmuOptions {
        seed,
        buffers: vec![HostBuffer {
            address: c_ptr as usize,
            bytes: m * n * size_of::<T>(),
        }],
        ..EmuOptions::default()
    };
    let tiles = (m.div_ceil(MMA_BM as usize) * n.div_ceil(MMA_BN as usize)) as u32;
    // SAFETY: the kernel's parameters in order; `a`, `b` hold m·k and n·k elements, `c`
    // m·n, all 16-byte aligned; k is a multiple of 8 (4 for f32); the module's launch
    // shape.
    let report = unsafe {
        emu::launch(
            kernel,
            [tiles, 1, 1],
            [MMA_THREADS, 1, 1],
            MMA_SHARED_BYTES,
            &args,
            &options,
        )
    };
    if let Err(e) = report {
        panic!("{} {m}×{n}×{k}: {e}", kernel.name());
    }
    // SAFETY: `c_dev` holds m·n elements of `T` from `c_ptr`.
    unsafe { core::slice::from_raw_parts(c_ptr, m * n) }.to_vec()
}

/// A deterministic integer in -3..=3 for index `i` of stream `seed`.
fn small_int(seed: u32, i: usize) -> f32 {
    let mut x = (i as u32).wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    (x % 7) as f32 - 3.0
}

/// Checks `c` (m×n) against `Σ_p a(i, p)·b(j, p)`, summed in `f64` and rounded once to
/// `T` (exact for the inputs of these tests: every partial sum fits `f32`).
fn check<T: OutElem + PartialEq + core::fmt::Debug>(
    what: &str,
    (m, n, k): (usize, usize, usize),
    c: &[T],
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
) {
    for i in 0..m {
        for j in 0..n {
            let sum: f64 = (0..k).map(|p| a(i, p) * b(j, p)).sum();
            let want = T::from_f32(sum as f32);
            let got = c[i * n + j];
            // `==` on floats: NaN (an unwritten element) never matches, ±0 do.
            assert!(
                got == want,
                "{what} {m}×{n}×{k}: C[{i}][{j}] = {got:?}, expected {want:?}"
            );
        }
    }
}

/// Shapes of the emulated tests: ragged m and n (two tiles each way, the second
/// partial), k with a partial last step (136 bf16 = 2 steps + 16 bytes; 136 f32 = 4
/// steps + 32 bytes), one element, and one step exactly.
const SHAPES: [(usize, usize, usize); 3] = [(136, 264, 136), (1, 1, 8), (40, 24, 64)];

fn integer_case<T: OutElem + PartialEq + core::fmt::Debug, P: ParamSizes, S>(
    kernel: &Kernel<P, S>,
    seed: u64,
) {
    for (s, (m, n, k)) in SHAPES.into_iter().enumerate() {
        let a: Vec<T> = (0..m * k)
            .map(|i| T::from_f32(small_int(s as u32, i)))
            .collect();
        let b: Vec<T> = (0..n * k)
            .map(|i| T::from_f32(small_int(100 + s as u32, i)))
            .collect();
        let c = emulate(kernel, (m, n, k), &a, &b, seed);
        let (fa, fb) = (
            |i: usize, p: usize| f64::from(small_int(s as u32, i * k + p)),
            |j: usize, p: usize| f64::from(small_int(100 + s as u32, j * k + p)),
        );
        check(kernel.name(), (m, n, k), &c, fa, fb);
    }
}

#[test]
fn the_kernels_equal_the_cpu_on_integer_inputs_on_the_emulator() {
    // Integers in -3..=3: every product and partial sum is exact in f32 (|sum| ≤ 9·k),
    // and TF32 holds the inputs exactly; the one rounding is the output's, as the CPU's.
    integer_case::<bf16, _, _>(&gemm_mma_bf16, 0);
    integer_case::<f16, _, _>(&gemm_mma_f16, 0);
    // Another thread order, to shake out ordering bugs in the pipeline.
    integer_case::<f32, _, _>(&gemm_mma_tf32, 7);
}

#[test]
fn tf32_operands_are_rounded_to_nearest_on_the_emulator() {
    // One operand an integer in -3..=3 plus h·2⁻¹² (h < 16), which TF32 cannot hold from
    // 1 upward (its unit there is 2⁻¹⁰ or 2⁻⁹, so many are ties), the other an integer.
    // Rounded, every product is a multiple of 2⁻¹² below 12 and |sum| < 2¹¹: exact in
    // f32. The emulated tensor core truncates like the hardware, so a kernel that does
    // not round its operands fails here.
    let (m, n, k) = (40, 24, 72);
    let frac = |i: usize| {
        let h = (i as u32).wrapping_mul(0x2c1b_3c6d) >> 28;
        tf32_input(small_int(5, i) + h as f32 / 4096.0)
    };
    let int = |i: usize| small_int(6, i);
    for fractional_a in [true, false] {
        let (fa, fb): (&dyn Fn(usize) -> f32, &dyn Fn(usize) -> f32) = if fractional_a {
            (&frac, &int)
        } else {
            (&int, &frac)
        };
        let a: Vec<f32> = (0..m * k).map(fa).collect();
        let b: Vec<f32> = (0..n * k).map(fb).collect();
        let c = emulate(&gemm_mma_tf32, (m, n, k), &a, &b, 0);
        let rounded = |x: f32| f64::from(tf32_from_f32(x));
        let ra = |i: usize, p: usize| rounded(a[i * k + p]);
        let rb = |j: usize, p: usize| rounded(b[j * k + p]);
        check("gemm_mma_tf32 (fractional inputs)", (m, n, k), &c, ra, rb);
        // The test can fail: truncation gives another product.
        let truncated = |x: f32| f64::from(f32::from_bits(x.to_bits() & !0x1fff));
        let differs = (0..m).any(|i| {
            let t: f64 = (0..k)
                .map(|p| truncated(a[i * k + p]) * truncated(b[p]))
                .sum();
            t as f32 != c[i * n]
        });
        assert!(differs, "the inputs do not tell rounding from truncation");
    }
}

/// `x`, asserted to be what the test means: a multiple of 2⁻¹² below 4 in magnitude.
fn tf32_input(x: f32) -> f32 {
    assert!(x.abs() < 4.0 && (x * 4096.0).fract() == 0.0, "{x}");
    x
}
