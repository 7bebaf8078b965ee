//! Tensor cores on the CPU emulator (`cuda_emu`): the `mma.sync`, `ldmatrix` and
//! `stmatrix` probes that `tests/tests/mma.rs` and `tests/tests/hopper.rs` run on a GPU,
//! here run through `cuda_emu::launch` and compared with the same CPU models, bit for
//! bit; a tensor-core call in a partial warp; and a TMA copy through a tensor map it cannot
//! read (`EmuError::AsyncUnit`). (`wgmma`, TMA and clusters themselves are checked against
//! the CPU models by `tests/tests/{hopper,matmul}.rs`, on the emulator without a GPU.)
//!
//! Inputs are those of `tests/tests/mma.rs`: `A`, `B` small integers in -3..=3 and `C` an
//! integer plus one half, so every product and partial sum is exact in `f32` and the
//! emulator's `f64` accumulation gives the GPU's bits whatever order the hardware adds in.

use std::any::Any;
use std::ffi::c_void;

use cuda_emu::{self as emu, Dim3, EmuError, EmuOptions, EmuReport};
use cuda_std::launch::{Kernel, ParamSizes};
use cuda_std::mma::layout::{self, ldmatrix_b16};
use cuda_std::mma::{M16N8K8, M16N8K16, Shape};
use probes::hopper::{self as sm90, STMATRIX_WORDS, stmatrix_value};
use probes::mma::{self as probe, LDMATRIX_RAW_WORDS};

/// The bytes of a slice parameter: (pointer, length).
fn slice<T>(v: &[T]) -> (usize, usize) {
    (v.as_ptr() as usize, v.len())
}

/// Launches `$kernel` on the emulator with the parameters `$arg` (each an owned value with
/// the parameter's device bytes: a `slice(..)` pair, a raw pointer, a scalar).
macro_rules! emulate {
    ($kernel:expr, $grid:expr, $block:expr, $options:expr; $($arg:expr),* $(,)?) => {{
        let mut params: Vec<Box<dyn Any>> = vec![$(Box::new($arg)),*];
        let args: Vec<*mut c_void> = params
            .iter_mut()
            .map(|p| (&raw mut **p).cast::<c_void>())
            .collect();
        // SAFETY: each test passes its kernel's parameters, in order, pointing to live
        // vectors of the lengths the kernel's contract asks for.
        unsafe { run(&$kernel, $grid, $block, &args, $options) }
    }};
}

/// # Safety
/// As `emu::launch`.
unsafe fn run<P: ParamSizes, S>(
    kernel: &Kernel<P, S>,
    grid: Dim3,
    block: Dim3,
    args: &[*mut c_void],
    options: &EmuOptions,
) -> Result<EmuReport, EmuError> {
    // SAFETY: forwarded.
    unsafe { emu::launch(kernel, grid, block, 0, args, options) }
}

// ---------------------------------------------------------------------------------------
// The CPU model of tests/tests/mma.rs

/// A deterministic integer in `lo..=hi` for index `i` of stream `seed`.
fn small_int(seed: u32, i: usize, lo: i32, hi: i32) -> f32 {
    let mut x = (i as u32).wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    (lo + (x % (hi - lo + 1) as u32) as i32) as f32
}

/// `count` row-major matrices of `len` small integers each (`A` or `B`).
fn operand(seed: u32, count: usize, len: usize) -> Vec<f32> {
    (0..count * len)
        .map(|i| small_int(seed, i, -3, 3))
        .collect()
}

/// `count` 16×8 accumulators: integers in -8..=8 plus 0.5.
fn accumulator(seed: u32, count: usize) -> Vec<f32> {
    (0..count * 128)
        .map(|i| small_int(seed, i, -8, 8) + 0.5)
        .collect()
}

/// `D = A·B + C` for `count` consecutive problems of shape `S` (row-major, in `f32`: exact
/// for the inputs above).
fn mma_reference<S: Shape>(a: &[f32], b: &[f32], c: &[f32], count: usize) -> Vec<u32> {
    let (m, n, k) = (S::M as usize, S::N as usize, S::K as usize);
    let mut d = c.to_vec();
    for p in 0..count {
        for i in 0..m {
            for j in 0..n {
                for q in 0..k {
                    d[p * m * n + i * n + j] += a[p * m * k + i * k + q] * b[p * k * n + q * n + j];
                }
            }
        }
    }
    d.iter().map(|x| x.to_bits()).collect()
}

/// `B` (k×n, row-major) of each problem transposed to column-major.
fn col_major(b: &[f32], k: usize, n: usize) -> Vec<f32> {
    b.chunks(k * n)
        .flat_map(|m| (0..n * k).map(move |i| m[(i % k) * n + i / k]))
        .collect()
}

fn f16_bits(x: &[f32]) -> Vec<u16> {
    x.iter()
        .map(|&v| half::f16::from_f32(v).to_bits())
        .collect()
}

fn bf16_bits(x: &[f32]) -> Vec<u16> {
    x.iter()
        .map(|&v| half::bf16::from_f32(v).to_bits())
        .collect()
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

fn opts() -> EmuOptions {
    EmuOptions::default()
}

// ---------------------------------------------------------------------------------------
// mma.sync, ldmatrix, stmatrix

#[test]
fn mma_from_global_memory_matches_the_cpu_bit_for_bit() {
    let warps = 4;
    for seed in [0, 3] {
        let options = EmuOptions { seed, ..opts() };
        for col in [0u32, 1] {
            // m16n8k16, f16 and bf16.
            let (a, b, c) = (
                operand(11, warps, 256),
                operand(12, warps, 128),
                accumulator(13, warps),
            );
            let expected = mma_reference::<M16N8K16>(&a, &b, &c, warps);
            let b_in = if col == 1 {
                col_major(&b, 16, 8)
            } else {
                b.clone()
            };
            for (what, kernel, a16, b16) in [
                ("f16", probe::mma_global_f16, f16_bits(&a), f16_bits(&b_in)),
                (
                    "bf16",
                    probe::mma_global_bf16,
                    bf16_bits(&a),
                    bf16_bits(&b_in),
                ),
            ] {
                let mut d = vec![0f32; warps * 128];
                emulate!(kernel, [1, 1, 1], [128, 1, 1], &options;
                    slice(&a16), slice(&b16), slice(&c), d.as_mut_ptr(), col)
                .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    bits(&d),
                    expected,
                    "{what}, B column-major {col}, seed {seed}"
                );
            }
            // m16n8k8, tf32.
            let (a, b) = (operand(14, warps, 128), operand(15, warps, 64));
            let expected = mma_reference::<M16N8K8>(&a, &b, &c, warps);
            let b_in = if col == 1 {
                col_major(&b, 8, 8)
            } else {
                b.clone()
            };
            let mut d = vec![0f32; warps * 128];
            emulate!(probe::mma_global_tf32, [1, 1, 1], [128, 1, 1], &options;
                slice(&a), slice(&b_in), slice(&c), d.as_mut_ptr(), col)
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                bits(&d),
                expected,
                "tf32, B column-major {col}, seed {seed}"
            );
        }
    }
}

#[test]
fn tf32_inputs_lose_their_13_low_mantissa_bits() {
    // A = 1 + 2^-12 (below tf32's 10 mantissa bits) everywhere, B = identity-like ones:
    // the tensor core reads A as 1.0, so D = C + K·1.
    let a = vec![f32::from_bits(1.0f32.to_bits() | 0x800); 128];
    let b = vec![1.0f32; 64];
    let c = vec![0.5f32; 128];
    let mut d = vec![0f32; 128];
    emulate!(probe::mma_global_tf32, [1, 1, 1], [32, 1, 1], &opts();
        slice(&a), slice(&b), slice(&c), d.as_mut_ptr(), 0u32)
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(d.iter().all(|&x| x == 8.5), "{d:?}");
}

#[test]
fn mma_through_ldmatrix_matches_the_cpu_bit_for_bit() {
    let blocks = 3;
    let c = accumulator(23, blocks);
    let (a, b) = (operand(21, blocks, 256), operand(22, blocks, 128));
    let expected = mma_reference::<M16N8K16>(&a, &b, &c, blocks);
    let expected_twice: Vec<u32> = expected
        .chunks(128)
        .flat_map(|d| d.iter().chain(d).copied())
        .collect();
    for (what, kernel, a16, b16) in [
        ("f16", probe::mma_ldmatrix_f16, f16_bits(&a), f16_bits(&b)),
        (
            "bf16",
            probe::mma_ldmatrix_bf16,
            bf16_bits(&a),
            bf16_bits(&b),
        ),
    ] {
        let mut d = vec![0f32; blocks * 256];
        emulate!(kernel, [blocks as u32, 1, 1], [32, 1, 1], &opts();
            slice(&a16), slice(&b16), slice(&c), d.as_mut_ptr())
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            bits(&d),
            expected_twice,
            "{what}: per block, D with B row-major (x2.trans) then column-major (x2)"
        );
    }
    let (a, b) = (operand(31, blocks, 128), operand(32, blocks, 64));
    let expected = mma_reference::<M16N8K8>(&a, &b, &c, blocks);
    let mut d = vec![0f32; blocks * 128];
    emulate!(probe::mma_ldmatrix_tf32, [blocks as u32, 1, 1], [32, 1, 1], &opts();
        slice(&a), slice(&b), slice(&c), d.as_mut_ptr())
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(bits(&d), expected, "tf32 through ldmatrix");
}

#[test]
fn ldmatrix_registers_follow_the_ptx_layout() {
    // 32 rows × 8 columns, element (r, c) = 100·r + c: four 8×8 matrices stacked.
    let src: Vec<u16> = (0..256u16).map(|i| 100 * (i / 8) + i % 8).collect();
    let mut out = vec![0u32; 32 * LDMATRIX_RAW_WORDS];
    emulate!(probe::mma_ldmatrix_raw, [1, 1, 1], [32, 1, 1], &opts();
        slice(&src), out.as_mut_ptr())
    .unwrap_or_else(|e| panic!("{e}"));
    let word = |lane: u32, i: u32, trans: bool| -> u32 {
        (0..2)
            .map(|h| {
                let (r, c) = layout::ldmatrix_b16(lane, h);
                let (r, c) = if trans { (c, r) } else { (r, c) };
                u32::from(src[((8 * i + r) * 8 + c) as usize]) << (16 * h)
            })
            .fold(0, |x, y| x | y)
    };
    for lane in 0..32u32 {
        let mut expected = Vec::new();
        for trans in [false, true] {
            for count in [1, 2, 4] {
                expected.extend((0..count).map(|i| word(lane, i, trans)));
            }
        }
        let l = lane as usize;
        assert_eq!(
            &out[l * LDMATRIX_RAW_WORDS..(l + 1) * LDMATRIX_RAW_WORDS],
            &expected[..],
            "lane {lane}: x1, x2, x4, x1.trans, x2.trans, x4.trans"
        );
    }
}

#[test]
fn stmatrix_stores_follow_the_ptx_layout() {
    // The model of tests/tests/hopper.rs: matrix `m`'s element (row, col) comes from half
    // `h` of register `m` of the lane with ldmatrix_b16(lane, h) == (row, col); transposed,
    // it is stored at (col, row).
    let mut expected = vec![0u16; STMATRIX_WORDS];
    for m in 0..4 {
        for lane in 0..32 {
            for h in 0..2 {
                let (row, col) = ldmatrix_b16(lane, h);
                let v = stmatrix_value(m, lane, h);
                expected[(m * 64 + row * 8 + col) as usize] = v;
                expected[(256 + m * 64 + col * 8 + row) as usize] = v;
            }
        }
    }
    let mut out = vec![0u16; STMATRIX_WORDS];
    emulate!(sm90::stmatrix_probe, [1, 1, 1], [32, 1, 1], &opts(); out.as_mut_ptr())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, expected);
}

#[test]
fn mma_in_a_partial_warp_is_a_warp_mask_error() {
    // 16 threads: lanes 16..32 of the warp do not exist, and `mma.sync` is `.aligned`.
    let (a, b, c) = (vec![0u16; 256], vec![0u16; 128], vec![0f32; 128]);
    let mut d = vec![0f32; 128];
    let err = emulate!(probe::mma_global_f16, [1, 1, 1], [16, 1, 1], &opts();
        slice(&a), slice(&b), slice(&c), d.as_mut_ptr(), 0u32)
    .expect_err("reported");
    let EmuError::WarpMask {
        kernel,
        thread,
        op,
        lanes,
        location,
        ..
    } = &err
    else {
        panic!("expected a warp mask error, got {err}")
    };
    assert_eq!(
        (*kernel, *thread, *op, *lanes),
        (
            "mma_global_f16",
            [0, 0, 0],
            "mma_sync (m16n8k16 f16)",
            0xffff_0000
        )
    );
    assert_eq!(location.file, "tests/kernels/src/mma.rs");
    println!("mma in a partial warp: {err}");
}

// ---------------------------------------------------------------------------------------
// Hopper intrinsics: TMA reads only the CPU device's maps

#[test]
fn tma_through_a_driver_encoded_map_is_refused() {
    // A map whose bytes are not the CPU device's layout (as the CUDA driver's are not).
    let map = Box::new(cuda_std::tma::TensorMap {
        opaque: [0x1234; 16],
    });
    let map_ptr: *const cuda_std::tma::TensorMap = &*map;
    let mut raw = vec![0u32; 16];
    let mut status = vec![0u32; 1];
    let options = EmuOptions {
        buffers: vec![emu::HostBuffer {
            address: map_ptr as usize,
            bytes: 128,
        }],
        ..opts()
    };
    let err = emulate!(sm90::tma_roundtrip, [1, 1, 1], [128, 1, 1], &options;
        map_ptr, map_ptr, 0i32, 0i32, 64u32, raw.as_mut_ptr(), status.as_mut_ptr())
    .expect_err("reported");
    let EmuError::AsyncUnit {
        op,
        thread,
        reason,
        location,
        ..
    } = &err
    else {
        panic!("expected AsyncUnit, got {err}")
    };
    assert_eq!((*op, *thread), ("tma::load_2d", [0, 0, 0]));
    assert!(reason.contains("not encoded for the CPU device"), "{err}");
    assert_eq!(location.file, "tests/kernels/src/hopper.rs");
    println!("tma probe: {err}");
}

// ---------------------------------------------------------------------------------------
// Hopper intrinsics: 1-D bulk copies (`tma::bulk_load`, `tma::bulk_store`)

/// Runs `bulk_roundtrip` on `bytes` bytes from byte `offset` of a 16-byte aligned source to
/// a zeroed destination, both registered as launch buffers; returns the destination or the
/// emulator's error.
fn bulk_roundtrip(bytes: u32, offset: usize) -> Result<Vec<u8>, EmuError> {
    let src: Vec<u128> = (0..256u128)
        .map(|i| i.wrapping_mul(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10) ^ 0x5a)
        .collect();
    let mut dst = vec![0u128; 256];
    let mut status = vec![0u32; 1];
    let options = EmuOptions {
        buffers: vec![
            emu::HostBuffer {
                address: src.as_ptr() as usize,
                bytes: 4096,
            },
            emu::HostBuffer {
                address: dst.as_ptr() as usize,
                bytes: 4096,
            },
        ],
        ..opts()
    };
    // SAFETY: inside `src` (offset + bytes ≤ 4096 in every call below).
    let from = unsafe { src.as_ptr().cast::<u8>().add(offset) };
    emulate!(sm90::bulk_roundtrip, [1, 1, 1], [32, 1, 1], &options;
        from, dst.as_mut_ptr().cast::<u8>(), bytes, status.as_mut_ptr())?;
    assert_eq!(status[0], 0, "the phase completed");
    // SAFETY: `dst` is 4096 initialised bytes.
    let out = unsafe { std::slice::from_raw_parts(dst.as_ptr().cast::<u8>(), 4096) };
    // SAFETY: as above, for `src`.
    let want = unsafe { std::slice::from_raw_parts(from, bytes as usize) };
    assert_eq!(&out[..bytes as usize], want, "the copied bytes");
    assert!(
        out[bytes as usize..].iter().all(|&b| b == 0),
        "nothing past them"
    );
    Ok(out.to_vec())
}

#[test]
fn bulk_copies_round_trip_a_tile() {
    bulk_roundtrip(4096, 0).expect("a whole 4 KiB tile");
    bulk_roundtrip(48, 16).expect("48 bytes from a 16-byte aligned offset");
}

#[test]
fn bulk_copies_of_a_size_or_address_the_hardware_refuses_are_reported() {
    for (bytes, offset, op, why) in [
        (24, 0, "tma::bulk_load", "a non-zero multiple of 16"),
        (32, 8, "tma::bulk_load", "is not 16-byte aligned"),
    ] {
        let err = bulk_roundtrip(bytes, offset).expect_err("reported");
        let EmuError::AsyncUnit {
            op: got,
            reason,
            location,
            ..
        } = &err
        else {
            panic!("expected AsyncUnit, got {err}")
        };
        assert_eq!(*got, op, "{err}");
        assert!(reason.contains(why), "{err}");
        assert_eq!(location.file, "tests/kernels/src/hopper.rs");
        println!("bulk copy probe: {err}");
    }
}
