//! GPU tests of every `cuda_std` primitive against a CPU model of the PTX instruction
//! (`kernels/src/primitives.rs` holds the kernels), plus the tiled matrix multiply of the
//! CUDA C Programming Guide.
//!
//! The sm_80 tests (`redux.sync`, `cp.async`) and the fast-math test run the second PTX
//! variant built by `tests/build.rs` (`PROBES_SM80`: sm_80, libdevice where found) and
//! are skipped, with a message, on GPUs older than sm_80; the fast-math test also when the
//! variant was built without libdevice.
//!
//! `printf` and assertion tests run the kernel in a child process (this test binary,
//! re-executed with `FERROCUDA_PRIMITIVES_CHILD` set), because the driver prints straight to
//! the process's stdout and a failed assertion leaves the CUDA context unusable.

use cust::{
    CudaResult,
    function::LaunchConfig,
    launch::{Launch, LaunchUnchecked},
    memory::{DeviceBuffer, DeviceCopy, ValidAsZeroBits},
};
use host::Gpu;
use probes::primitives::{
    self as prim, INDEX_SLOTS, LAYOUT_SLOTS, MATH_F32_FUNCTIONS, MATH_F64_FUNCTIONS, MESSAGE_WORDS,
    TILE, hash32, math_f32, math_f64, shared_layout,
};
use tests::{PROBES, PROBES_SM80, assert_identical, f32_bits, matmul_f32, probes as gpu};
use tests::{dtoh, htod, launch_probe as launch, sm80_module, zeros};

/// Whether the sm_80 variant of the kernels module ([`PROBES_SM80`]) links libdevice
/// (`tests/build.rs` found it).
const SM80_FAST_MATH: bool = matches!(env!("PROBES_SM80_FAST_MATH").as_bytes(), b"1");

/// Environment variable naming the child-process scenario to run.
const CHILD_ENV: &str = "FERROCUDA_PRIMITIVES_CHILD";

fn cfg_1d(threads: u32, block: u32) -> LaunchConfig {
    LaunchConfig::new(threads.div_ceil(block), block, 0)
}

// ---------------------------------------------------------------------------------------
// Indices

#[test]
fn indices_3d_match_the_launch() {
    let gpu = gpu();
    let (grid, block) = ((3u32, 2u32, 2u32), (8u32, 4u32, 2u32));
    let per_block = (block.0 * block.1 * block.2) as usize;
    let threads = per_block * (grid.0 * grid.1 * grid.2) as usize;
    let mut out = zeros::<u32>(&gpu, threads * INDEX_SLOTS);
    let cfg = LaunchConfig::new(grid, block, 0);
    launch!(&gpu, gpu.module(), prim::prim_indices, cfg, (&mut out));
    let got = dtoh(&out);
    let mut expected = vec![0u32; threads * INDEX_SLOTS];
    for bz in 0..grid.2 {
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                for tz in 0..block.2 {
                    for ty in 0..block.1 {
                        for tx in 0..block.0 {
                            let linear = (tz * block.1 + ty) * block.0 + tx;
                            let b = (bz * grid.1 + by) * grid.0 + bx;
                            let g = b as usize * per_block + linear as usize;
                            let v = [
                                tx,
                                ty,
                                tz,
                                bx * block.0 + tx,
                                by * block.1 + ty,
                                bz * block.2 + tz,
                                linear,
                                linear % 32,
                                linear / 32,
                                1,
                            ];
                            expected[g * INDEX_SLOTS..(g + 1) * INDEX_SLOTS].copy_from_slice(&v);
                        }
                    }
                }
            }
        }
    }
    assert_identical("indices", &expected, &got);
}

// ---------------------------------------------------------------------------------------
// Shuffles

/// A shuffled type: test values and bits for comparison.
trait ShuffleValue: DeviceCopy + ValidAsZeroBits + Copy + Default + std::fmt::Debug {
    fn make(i: usize) -> Self;
    fn bits(self) -> u64;
}

macro_rules! shuffle_value {
    ($t:ty, |$i:ident| $make:expr, |$v:ident| $bits:expr) => {
        impl ShuffleValue for $t {
            fn make($i: usize) -> Self {
                $make
            }
            fn bits(self) -> u64 {
                let $v = self;
                $bits
            }
        }
    };
}
shuffle_value!(u32, |i| hash32(i as u32), |v| u64::from(v));
shuffle_value!(i32, |i| hash32(i as u32) as i32, |v| v as u32 as u64);
shuffle_value!(f32, |i| i as f32 * 1.25 - 100.0, |v| u64::from(v.to_bits()));
shuffle_value!(
    u64,
    |i| (u64::from(hash32(i as u32)) << 32) | u64::from(hash32(!(i as u32))),
    |v| v
);
shuffle_value!(
    i64,
    |i| -((u64::from(hash32(i as u32)) << 31) as i64) - i as i64,
    |v| v as u64
);
shuffle_value!(f64, |i| i as f64 * -3.5e100 + 0.125, |v| v.to_bits());

/// Launches a resolved `prim_shfl_*` probe: `(input, out, cfg, [mode, arg, width, mask])`.
type ShuffleLaunch<'a, T> =
    dyn Fn(&DeviceBuffer<T>, &mut DeviceBuffer<T>, LaunchConfig, [u32; 4]) -> CudaResult<()> + 'a;

/// The source lane of `shfl.sync` for `lane`, from the PTX ISA's pseudo-code (mode 0 = idx,
/// 1 = up, 2 = down, 3 = bfly), with `c` encoded as CUDA C's `__shfl_*_sync` do.
fn shfl_source(mode: u32, lane: u32, b: u32, width: u32) -> u32 {
    let clamp = if mode == 1 { 0 } else { 0x1f };
    let c = ((32 - width) << 8) | clamp;
    let segmask = (c >> 8) & 0x1f;
    let cval = c & 0x1f;
    let bval = b & 0x1f;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, pval) = match mode {
        0 => {
            let j = min_lane | (bval & !segmask);
            (j as i64, j <= max_lane)
        }
        1 => {
            let j = lane as i64 - bval as i64;
            (j, j >= max_lane as i64)
        }
        2 => {
            let j = lane + bval;
            (j as i64, j <= max_lane)
        }
        _ => {
            let j = lane ^ bval;
            (j as i64, j <= max_lane)
        }
    };
    if pval { j as u32 } else { lane }
}

/// Whether lanes of the last warp of a `block`-thread block call a collective with `mask`
/// that names lanes past the end of the block. A GPU runs it (the missing lanes count as
/// exited there); the emulator reports it (`EmuError::WarpMask`: a full-mask collective in a
/// partial warp is a classic bug).
fn names_missing_lanes(block: u32, mask: u32) -> bool {
    let rem = block % 32;
    let live = if rem == 0 { u32::MAX } else { (1 << rem) - 1 };
    mask & live != 0 && mask & !live != 0
}

/// The emulator's report of a collective naming missing lanes, from a launch's result.
fn assert_missing_lanes_reported(result: CudaResult<()>, what: &str) {
    let err = result.expect_err(what).to_string();
    assert!(
        err.contains("do not exist (they are past the end of the block)"),
        "{what}: {err}"
    );
}

/// Checks the shuffle probe `kernel` (launched by `launch`) for `T` against [`shfl_source`].
fn check_shuffles<T: ShuffleValue>(gpu: &Gpu, kernel: &str, launch: &ShuffleLaunch<'_, T>) {
    const POISON: u64 = 0;
    let modes: [(u32, &str, &[u32]); 4] = [
        (0, "idx", &[0, 5, 31, 37]),
        (1, "up", &[1, 3, 16]),
        (2, "down", &[1, 3, 16]),
        (3, "xor", &[1, 2, 16, 31]),
    ];
    // (threads, block, mask): full warps with full and partial masks, and a block of 48
    // threads whose second warp has only 16 lanes (the missing ones count as exited on a
    // GPU; the emulator reports a mask naming them: `names_missing_lanes`).
    let launches: [(usize, u32, u32); 4] = [
        (256, 128, u32::MAX),
        (256, 128, 0x0000_ffff),
        (256, 128, 0x5555_5555),
        (48, 48, u32::MAX),
    ];
    let mut checked = 0usize;
    for (n, block, mask) in launches {
        let input: Vec<T> = (0..n).map(T::make).collect();
        let d_in = htod(gpu, &input);
        for width in [32u32, 16, 8] {
            for (mode, mode_name, args) in modes {
                for &arg in args {
                    let mut out = zeros::<T>(gpu, n);
                    let cfg = cfg_1d(n as u32, block);
                    let result = launch(&d_in, &mut out, cfg, [mode, arg, width, mask]);
                    if gpu.is_emulator() && names_missing_lanes(block, mask) {
                        assert_missing_lanes_reported(result, kernel);
                        continue;
                    }
                    result.unwrap_or_else(|e| panic!("{e}"));
                    gpu.stream()
                        .synchronize_after(kernel, cfg)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let got = dtoh(&out);
                    for (i, &g) in got.iter().enumerate() {
                        let lane = (i % block as usize % 32) as u32;
                        let warp_base = i - lane as usize;
                        let warp_len = (block as usize - (warp_base % block as usize)).min(32);
                        if mask & (1 << lane) == 0 {
                            assert_eq!(g.bits(), POISON, "non-participating lane {i} wrote");
                            continue;
                        }
                        let src = shfl_source(mode, lane, arg, width);
                        if mask & (1 << src) == 0 || src as usize >= warp_len {
                            continue; // undefined: source lane not participating or absent
                        }
                        let expected = input[warp_base + src as usize];
                        assert_eq!(
                            g.bits(),
                            expected.bits(),
                            "{} {mode_name}({arg}) width {width} mask {mask:#010x} n {n}: \
                             thread {i} (lane {lane}) expected lane {src}'s {expected:?}, got {:?}",
                            kernel,
                            g
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 10_000, "too few checked lanes: {checked}");
}

#[test]
fn shuffles_match_the_ptx_model_for_every_type_mode_width_and_mask() {
    let gpu = gpu();
    // Resolves the probe once, then checks it through a closure over the typed function.
    macro_rules! check {
        ($t:ty, $kernel:expr) => {{
            let kernel = gpu
                .module()
                .kernel($kernel)
                .unwrap_or_else(|e| panic!("{e}"));
            check_shuffles::<$t>(&gpu, kernel.name(), &|input, out, cfg, [m, a, w, k]| {
                // SAFETY: `out` holds as many elements as `input` (`check_shuffles` makes
                // both `n` long), the kernel's contract.
                unsafe { kernel.launch_unchecked(gpu.stream(), cfg, (input, out, m, a, w, k)) }
            });
        }};
    }
    check!(u32, prim::prim_shfl_u32);
    check!(i32, prim::prim_shfl_i32);
    check!(f32, prim::prim_shfl_f32);
    check!(u64, prim::prim_shfl_u64);
    check!(i64, prim::prim_shfl_i64);
    check!(f64, prim::prim_shfl_f64);
}

#[test]
fn shuffle_model_agrees_with_cuda_semantics() {
    // __shfl_sync: srcLane % width within the segment.
    assert_eq!(shfl_source(0, 19, 37, 16), 16 + 5);
    // __shfl_up_sync: below the segment start, own value.
    assert_eq!(shfl_source(1, 17, 3, 16), 17);
    assert_eq!(shfl_source(1, 20, 3, 16), 17);
    // __shfl_down_sync: past the segment end, own value.
    assert_eq!(shfl_source(2, 14, 3, 16), 14);
    assert_eq!(shfl_source(2, 12, 3, 16), 15);
    // __shfl_xor_sync: a later segment gives the own value; an earlier one is read.
    assert_eq!(shfl_source(3, 3, 16, 16), 3);
    assert_eq!(shfl_source(3, 19, 16, 16), 3);
}

// ---------------------------------------------------------------------------------------
// Votes, match, lane masks

/// The lanes of the warp starting at `base` that exist (`< n`, within the block) and are in
/// `mask`.
fn participants(base: usize, n: usize, block: usize, mask: u32) -> u32 {
    let warp_len = (block - base % block).min(32).min(n - base);
    let exists = if warp_len == 32 {
        u32::MAX
    } else {
        (1u32 << warp_len) - 1
    };
    exists & mask
}

#[test]
fn votes_match_the_cpu_model() {
    let gpu = gpu();
    type Pattern = (&'static str, fn(usize) -> u32);
    let patterns: [Pattern; 4] = [
        ("all set", |_| 1),
        ("none set", |_| 0),
        ("hashed", |i| hash32(i as u32) & 1),
        ("one lane", |i| u32::from(i % 32 == 7)),
    ];
    for (n, block) in [(256usize, 128u32), (40, 40)] {
        for mask in [u32::MAX, 0xffff_0000, 0x0f0f_0f0f] {
            for (name, pattern) in patterns {
                let input: Vec<u32> = (0..n).map(pattern).collect();
                let d_in = htod(&gpu, &input);
                let mut out = zeros::<u32>(&gpu, 4 * n);
                if gpu.is_emulator() && names_missing_lanes(block, mask) {
                    let kernel = gpu.module().kernel(prim::prim_vote).expect("prim_vote");
                    // SAFETY: as `launch!` below.
                    let result = unsafe {
                        kernel.launch_unchecked(
                            gpu.stream(),
                            cfg_1d(n as u32, block),
                            (&d_in, &mut out, mask),
                        )
                    };
                    assert_missing_lanes_reported(result, "prim_vote");
                    continue;
                }
                launch!(
                    &gpu,
                    gpu.module(),
                    prim::prim_vote,
                    cfg_1d(n as u32, block),
                    (&d_in, &mut out, mask)
                );
                let got = dtoh(&out);
                for base in (0..n).step_by(32) {
                    let part = participants(base, n, block as usize, mask);
                    let ballot = (0..32)
                        .filter(|l| part & (1 << l) != 0 && input[base + l] != 0)
                        .fold(0u32, |b, l| b | 1 << l);
                    let all = u32::from(ballot == part);
                    let any = u32::from(ballot != 0);
                    let uni = u32::from(ballot == part || ballot == 0);
                    for l in (0..32).filter(|l| part & (1 << l) != 0) {
                        let i = base + l;
                        assert_eq!(
                            &got[4 * i..4 * i + 4],
                            &[all, any, ballot, uni],
                            "{name}, mask {mask:#010x}, n {n}, thread {i}: [all, any, ballot, uni]"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn match_any_and_all_group_equal_keys() {
    let gpu = gpu();
    let n = 256usize;
    // Even warps: one key everywhere; odd warps: lane % 3 (32-bit) and lane % 4 in the high
    // half (64-bit, so the upper bits matter).
    let keys32: Vec<u32> = (0..n)
        .map(|i| {
            if (i / 32) % 2 == 0 {
                7
            } else {
                (i % 32 % 3) as u32
            }
        })
        .collect();
    let keys64: Vec<u64> = (0..n)
        .map(|i| {
            if (i / 32) % 2 == 0 {
                1 << 40
            } else {
                ((i % 32 % 4) as u64) << 33
            }
        })
        .collect();
    let d32 = htod(&gpu, &keys32);
    let d64 = htod(&gpu, &keys64);
    for mask in [u32::MAX, 0x0000_ffff, 0xaaaa_aaaa] {
        let mut out = zeros::<u32>(&gpu, 6 * n);
        launch!(
            &gpu,
            gpu.module(),
            prim::prim_match,
            cfg_1d(n as u32, 128),
            (&d32, &d64, &mut out, mask)
        );
        let got = dtoh(&out);
        for i in (0..n).filter(|i| mask & (1 << (i % 32)) != 0) {
            let base = i - i % 32;
            let group = |keys: &dyn Fn(usize) -> u64| {
                (0..32)
                    .filter(|l| mask & (1 << l) != 0 && keys(base + l) == keys(i))
                    .fold(0u32, |m, l| m | 1 << l)
            };
            let any32 = group(&|j| u64::from(keys32[j]));
            let any64 = group(&|j| keys64[j]);
            let (ok32, ok64) = (any32 == mask, any64 == mask);
            let expected = [
                any32,
                u32::from(ok32),
                if ok32 { mask } else { 0 },
                any64,
                u32::from(ok64),
                if ok64 { mask } else { 0 },
            ];
            assert_eq!(
                &got[6 * i..6 * i + 6],
                &expected,
                "mask {mask:#010x}, thread {i}: [any32, all32?, all32, any64, all64?, all64]"
            );
        }
    }
}

#[test]
fn match_any_bits_groups_lanes_by_their_low_bits() {
    let gpu = gpu();
    let n = 128usize;
    // Low bits that repeat within a warp, under high bits that differ (so ignoring them
    // matters), and one warp of equal keys.
    let keys: Vec<u32> = (0..n as u32)
        .map(|i| {
            if i / 32 == 3 {
                0xdead_beef
            } else {
                (i % 32).wrapping_mul(0x9e37_79b9) & 0xffff_ff00 | (i * 7 % 11)
            }
        })
        .collect();
    let d = htod(&gpu, &keys);
    let mut out = zeros::<u32>(&gpu, 3 * n);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_match_bits,
        cfg_1d(n as u32, 64),
        (&d, &mut out)
    );
    let got = dtoh(&out);
    for i in 0..n {
        let base = i - i % 32;
        for (j, low) in [0b111u32, 0xff, u32::MAX].into_iter().enumerate() {
            let expected = (0..32)
                .filter(|&l| keys[base + l] & low == keys[i] & low)
                .fold(0u32, |m, l| m | 1 << l);
            assert_eq!(got[3 * i + j], expected, "thread {i}, low bits {low:#x}");
        }
    }
}

#[test]
fn lane_masks_and_active_mask() {
    let gpu = gpu();
    let n = 128u32;
    let mut out = zeros::<u32>(&gpu, 7 * n as usize);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_lane_masks,
        cfg_1d(n, 64),
        (&mut out, n)
    );
    let got = dtoh(&out);
    let cond: u32 = (0..32).filter(|l| l % 3 == 0).fold(0, |m, l| m | 1 << l);
    for i in 0..n as usize {
        let lane = (i % 32) as u32;
        let eq = 1u32 << lane;
        let r = &got[7 * i..7 * i + 7];
        assert_eq!(
            &r[..5],
            &[eq - 1, (eq - 1) | eq, eq, !(eq - 1), !((eq - 1) | eq)],
            "thread {i}: lanemask lt, le, eq, ge, gt"
        );
        assert_eq!(r[6], lane, "thread {i}: lane id");
        if lane.is_multiple_of(3) {
            // Only lanes inside the branch can be active there, and this one is.
            assert!(
                r[5] & eq != 0 && r[5] & !cond == 0,
                "thread {i}: active mask {:#x}",
                r[5]
            );
        } else {
            assert_eq!(r[5], 0);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Block barriers, shared memory

#[test]
fn block_barrier_reductions_count_and_or() {
    let gpu = gpu();
    let (blocks, block) = (64usize, 256usize);
    let n = blocks * block;
    let input: Vec<u32> = (0..n)
        .map(|i| {
            let (b, t) = (i / block, i % block);
            u32::from(match b % 4 {
                0 => true,
                1 => false,
                2 => t == 17,
                _ => hash32(i as u32) & 1 == 1,
            })
        })
        .collect();
    let d_in = htod(&gpu, &input);
    let mut out = zeros::<u32>(&gpu, 3 * blocks);
    let mut agree = zeros::<u32>(&gpu, n);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_block_reductions,
        cfg_1d(n as u32, block as u32),
        (&d_in, &mut out, &mut agree)
    );
    let got = dtoh(&out);
    let expected: Vec<u32> = input
        .chunks(block)
        .flat_map(|c| {
            let count = c.iter().filter(|&&p| p != 0).count() as u32;
            [
                count,
                u32::from(count == block as u32),
                u32::from(count > 0),
            ]
        })
        .collect();
    assert_identical("[count, and, or] per block", &expected, &got);
    assert_identical(
        "every thread got the same results",
        &vec![1; n],
        &dtoh(&agree),
    );
}

#[test]
fn static_shared_arrays_reverse_blocks_without_aliasing() {
    let gpu = gpu();
    let block = probes::primitives::REVERSE_BLOCK;
    let n = block * 40;
    let input: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let d_in = htod(&gpu, &input);
    let mut out_f = zeros::<f32>(&gpu, n);
    let mut out_u = zeros::<u32>(&gpu, n);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_shared_reverse,
        cfg_1d(n as u32, block as u32),
        (&d_in, &mut out_f, &mut out_u)
    );
    let expected_f: Vec<u32> = (0..n)
        .map(|i| input[i - i % block + block - 1 - i % block].to_bits())
        .collect();
    let expected_u: Vec<u32> = (0..n)
        .map(|i| 3 * (block - 1 - i % block) as u32 + (i / block) as u32)
        .collect();
    let bits: Vec<u32> = dtoh(&out_f).iter().map(|x| x.to_bits()).collect();
    assert_identical("reversed f32 (first array)", &expected_f, &bits);
    assert_identical("reversed u32 (second array)", &expected_u, &dtoh(&out_u));
}

#[test]
fn dynamic_shared_memory_reverses_blocks_and_reports_its_size() {
    let gpu = gpu();
    for block in [32u32, 128, 1024] {
        let n = block as usize * 7;
        let input: Vec<u32> = (0..n as u32).map(hash32).collect();
        let d_in = htod(&gpu, &input);
        let mut out = zeros::<u32>(&gpu, n);
        let mut sizes = zeros::<u32>(&gpu, 2);
        let cfg = cfg_1d(n as u32, block).with_shared_mem_bytes(4 * block);
        launch!(
            &gpu,
            gpu.module(),
            prim::prim_dynamic_shared_reverse,
            cfg,
            (&d_in, &mut out, &mut sizes)
        );
        let b = block as usize;
        let expected: Vec<u32> = (0..n).map(|i| input[i - i % b + b - 1 - i % b]).collect();
        assert_identical(&format!("block {block}"), &expected, &dtoh(&out));
        let s = dtoh(&sizes);
        assert_eq!(s[0], 4 * block, "dynamic shared size");
        assert!(
            s[1] >= 4 * block,
            "total shared size {} < {}",
            s[1],
            4 * block
        );
    }
}

#[test]
fn repr_c_layout_is_the_same_on_host_and_gpu_and_shared_arrays_are_aligned() {
    let gpu = gpu();
    let mut out = zeros::<u64>(&gpu, LAYOUT_SLOTS);
    let cfg = LaunchConfig::new(1, 4, 0);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_shared_layout,
        cfg,
        (&mut out)
    );
    let got = dtoh(&out);
    let host = shared_layout();
    assert_eq!(
        &got[..8],
        &host[..8],
        "sizes/alignments/offsets: GPU vs host"
    );
    assert_eq!(got[8], 0, "Particle shared array is 8-byte aligned");
    assert_eq!(got[9], 0, "align = 128 shared array is 128-byte aligned");
    assert_eq!(got[10], 3 + 4.5f64.to_bits() % 1000, "Particle round trip");
}

#[test]
fn repr_c_layout_on_the_host() {
    let l = shared_layout();
    assert_eq!(
        &l[..3],
        &[24, 8, 16],
        "Particle size, align, offset of mass"
    );
}

// ---------------------------------------------------------------------------------------
// Atomics

#[test]
fn integer_atomics_are_exact_under_contention() {
    let gpu = gpu();
    let n: u32 = 1 << 20;
    let mut u32s = htod(&gpu, &[0, u32::MAX, 0, 0, u32::MAX, 0, 0]);
    let mut u64s = htod(&gpu, &[0, u64::MAX, 0, 0, u64::MAX, 0]);
    let mut i32s = htod(&gpu, &[0, i32::MAX, i32::MIN]);
    let mut i64s = htod(&gpu, &[0, i64::MAX, i64::MIN]);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_atomics_int,
        cfg_1d(n, 256),
        (&mut u32s, &mut u64s, &mut i32s, &mut i64s, n)
    );
    let h = |i: u32| hash32(i);
    let h64 = |i: u32| (u64::from(hash32(i)) << 32) | u64::from(hash32(i ^ 0x5555_5555));
    let all = 0..n;
    let xor32 = all.clone().fold(0, |x, i| x ^ h(i));
    let xor64 = all.clone().fold(0, |x, i| x ^ h64(i));
    let expected_u32 = [
        n,
        all.clone().map(h).min().unwrap(),
        all.clone().map(h).max().unwrap(),
        u32::MAX,
        0,
        xor32,
        n,
    ];
    let expected_u64 = [
        u64::from(n),
        all.clone().map(h64).min().unwrap(),
        all.clone().map(h64).max().unwrap(),
        u64::MAX,
        0,
        xor64,
    ];
    let expected_i32 = [
        -(n as i32),
        all.clone().map(|i| h(i) as i32).min().unwrap(),
        all.clone().map(|i| h(i) as i32).max().unwrap(),
    ];
    let expected_i64 = [
        -2 * i64::from(n),
        all.clone().map(|i| h64(i) as i64).min().unwrap(),
        all.clone().map(|i| h64(i) as i64).max().unwrap(),
    ];
    assert_eq!(
        dtoh(&u32s),
        expected_u32,
        "u32: [add, min, max, or, and, xor, block add]"
    );
    assert_eq!(
        dtoh(&u64s),
        expected_u64,
        "u64: [add, min, max, or, and, xor]"
    );
    assert_eq!(dtoh(&i32s), expected_i32, "i32: [sub, min, max]");
    assert_eq!(
        dtoh(&i64s),
        expected_i64,
        "i64: [sub (system scope), min, max]"
    );
}

#[test]
fn float_atomics_under_contention() {
    let gpu = gpu();
    let n: u32 = 1 << 20;
    let mut f32s = htod(&gpu, &[0.0f32, 0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY]);
    let mut f64s = htod(&gpu, &[0.0f64, 0.0, f64::INFINITY, f64::NEG_INFINITY]);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_atomics_float,
        cfg_1d(n, 256),
        (&mut f32s, &mut f64s, n)
    );
    let got32 = dtoh(&f32s);
    let got64 = dtoh(&f64s);
    // Exact whatever the order: every partial sum is an integer (or a multiple of 0.25/0.5)
    // far below 2^24 (f32) / 2^53 (f64), hence representable.
    assert_eq!(got32[0], n as f32, "f32 += 1.0");
    assert_eq!(got64[0], 0.5 * f64::from(n), "f64 += 0.5");
    assert_eq!(got32[2], -0.25 * n as f32, "f32 -= 0.25");
    // Inexact sums: n - 1 additions in an unknown order of non-negative terms with exact sum
    // S have |error| <= γ_{n-1}·S, γ_k = k·u / (1 - k·u), u = 2^-24 (f32) or 2^-53 (f64)
    // (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §4.2, eq. 4.4).
    let gamma = |k: f64, u: f64| k * u / (1.0 - k * u);
    let s32: f64 = (0..n).map(|i| f64::from((i % 1000) as f32 * 1e-3)).sum();
    let bound32 = gamma(f64::from(n - 1), 2f64.powi(-24)) * s32;
    let err32 = (f64::from(got32[1]) - s32).abs();
    assert!(
        err32 <= bound32,
        "f32 sum: expected {s32} ± {bound32}, got {} (error {err32})",
        got32[1]
    );
    let s64 = f64::from(n) * 0.1; // exact: n is a power of two
    let bound64 = gamma(f64::from(n - 1), 2f64.powi(-53)) * s64;
    let err64 = (got64[1] - s64).abs();
    assert!(
        err64 <= bound64,
        "f64 sum: expected {s64} ± {bound64:e}, got {} (error {err64:e})",
        got64[1]
    );
    let v = |i: u32| hash32(i) as f32 / 4_294_967_296.0 - 0.5;
    let vs: Vec<f32> = (0..n).map(v).collect();
    let min32 = vs.iter().copied().fold(f32::INFINITY, f32::min);
    let max32 = vs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(
        (got32[3], got32[4]),
        (min32, max32),
        "f32 [min, max] (CAS loops)"
    );
    let (min64, max64) = (f64::from(min32) * 3.0, f64::from(max32) * 3.0);
    assert_eq!(
        (got64[2], got64[3]),
        (min64, max64),
        "f64 [min, max] (CAS loops)"
    );
}

#[test]
fn exchange_hands_out_every_value_once() {
    let gpu = gpu();
    let n: u32 = 1 << 16;
    let mut slot = zeros::<u32>(&gpu, 1);
    let mut olds = zeros::<u32>(&gpu, n as usize);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_atomic_exchange,
        cfg_1d(n, 256),
        (&mut slot, &mut olds, n)
    );
    let mut all = dtoh(&olds);
    all.push(dtoh(&slot)[0]);
    all.sort_unstable();
    let expected: Vec<u32> = (0..=n).collect();
    assert_identical("olds + final value, sorted", &expected, &all);
}

#[test]
fn compare_exchange_loops_count_exactly() {
    let gpu = gpu();
    let (n, stride) = (1u32 << 20, 256u32);
    let participants = n.div_ceil(stride);
    let mut counter = zeros::<u32>(&gpu, 1);
    let mut counter64 = zeros::<f64>(&gpu, 1);
    let mut failures = zeros::<u32>(&gpu, participants as usize);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_atomic_cas_counter,
        cfg_1d(n, 256),
        (&mut counter, &mut counter64, &mut failures, n, stride)
    );
    assert_eq!(dtoh(&counter)[0], participants, "u32 CAS counter");
    assert_eq!(
        dtoh(&counter64)[0],
        f64::from(participants),
        "f64 CAS counter"
    );
    let failed: u64 = dtoh(&failures).iter().map(|&f| u64::from(f)).sum();
    eprintln!("{participants} CAS increments, {failed} failed attempts (contention)");
}

#[test]
fn message_passing_never_observes_the_flag_without_the_data() {
    let gpu = gpu();
    let (pairs, block) = (264u32, 256u32);
    let slots = (pairs * block) as usize;
    let polls: u32 = 100_000;
    for (mode, name) in [
        (0u32, "release/acquire"),
        (1, "acq_rel fences"),
        (2, "fence.sc"),
    ] {
        let mut data = zeros::<u32>(&gpu, slots * MESSAGE_WORDS);
        let mut flags = zeros::<u32>(&gpu, slots);
        let mut result = zeros::<u32>(&gpu, slots);
        let cfg = LaunchConfig::new(2 * pairs, block, 0);
        launch!(
            &gpu,
            gpu.module(),
            prim::prim_message_passing,
            cfg,
            (&mut data, &mut flags, &mut result, mode, polls)
        );
        let r = dtoh(&result);
        let count = |v: u32| r.iter().filter(|&&x| x == v).count();
        let (unseen, ok, stale) = (count(0), count(1), count(2));
        eprintln!("{name}: {ok} messages received intact, {unseen} flags not seen in time");
        assert_eq!(
            stale, 0,
            "{name}: {stale} readers saw the flag but stale data"
        );
        assert!(
            ok > 0,
            "{name}: no reader ever saw a flag; the test observed nothing"
        );
        assert_eq!(ok + unseen, slots);
    }
}

// ---------------------------------------------------------------------------------------
// Clocks, memory access, math

#[test]
fn clocks_advance() {
    let gpu = gpu();
    let n = 256u32;
    let mut out = zeros::<u64>(&gpu, 4 * n as usize);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_clocks,
        cfg_1d(n, 128),
        (&mut out, n)
    );
    for (i, r) in dtoh(&out).chunks(4).enumerate() {
        assert!(r[1] > r[0], "thread {i}: clock64 {} then {}", r[0], r[1]);
        assert!(
            r[3] >= r[2],
            "thread {i}: globaltimer {} then {}",
            r[2],
            r[3]
        );
    }
}

#[test]
fn vectorized_and_read_only_loads_copy_exactly() {
    let gpu = gpu();
    let n = 4096usize;
    let in_f32: Vec<f32> = (0..n)
        .map(|i| hash32(i as u32) as f32 * 1e-7 - 3.0)
        .collect();
    let in_f64: Vec<f64> = (0..n / 2)
        .map(|i| f64::from(hash32(i as u32)) * -1e-3)
        .collect();
    let in_u32: Vec<u32> = (0..n as u32).map(|i| hash32(i ^ 0xabcd)).collect();
    let (a, b, c) = (
        htod(&gpu, &in_f32),
        htod(&gpu, &in_f64),
        htod(&gpu, &in_u32),
    );
    let mut out_f32 = zeros::<f32>(&gpu, n);
    let mut out_f64 = zeros::<f64>(&gpu, n / 2);
    let mut out_u32 = zeros::<u32>(&gpu, n);
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_vector_mem,
        cfg_1d((n / 4) as u32, 128),
        (&a, &b, &c, &mut out_f32, &mut out_f64, &mut out_u32)
    );
    let bits32 = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let bits64 = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let twice32: Vec<f32> = in_f32.iter().map(|x| x + x).collect();
    let twice64: Vec<f64> = in_f64.iter().map(|x| x + x).collect();
    assert_identical(
        "f32 v4 + v4.nc",
        &bits32(&twice32),
        &bits32(&dtoh(&out_f32)),
    );
    assert_identical(
        "f64 v2 + v2.nc",
        &bits64(&twice64),
        &bits64(&dtoh(&out_f64)),
    );
    assert_identical("u32 nc -> v4 store", &in_u32, &dtoh(&out_u32));
}

/// Inputs for the math tests: a sweep of [-10, 10], tiny, huge and special values.
fn math_inputs() -> Vec<f64> {
    let mut x: Vec<f64> = (0..4000)
        .map(|i| -10.0 + f64::from(i) * 0.005_123)
        .collect();
    x.extend([
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
        0.5,
        1.0,
        std::f64::consts::PI,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        88.0,
        -87.0,
        1e-40,
    ]);
    x
}

/// Bits, with every NaN mapped to one value: hardware differs in the NaN it produces
/// (x86 0xFFC00000, NVIDIA 0x7FFFFFFF), and NaN payloads are not part of the contract.
fn canon32(x: f32) -> u32 {
    if x.is_nan() { 0x7fc0_0000 } else { x.to_bits() }
}
fn canon64(x: f64) -> u64 {
    if x.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        x.to_bits()
    }
}

/// `math::ex2_approx` is within a relative 2⁻²² of `2^x` over `[-126, 128)` (the `2u` that
/// `host::attention::error_bound` allows its `2^x`), flushes results below `f32`'s smallest
/// normal to `+0`, and maps ±∞ and NaN as `2^x` does: on the GPU, the special-function
/// unit's `ex2.approx.ftz.f32`; on the emulator, the host's `exp2f`.
#[test]
fn ex2_approx_is_within_its_bound() {
    let gpu = gpu();
    // 2^20 points evenly over [-126, 128), then the edges.
    let n = 1usize << 20;
    let mut xs: Vec<f32> = (0..n)
        .map(|i| -126.0 + 254.0 * i as f32 / n as f32)
        .collect();
    let specials = [
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NAN,
        -126.5,
        -150.0,
        0.0,
        -0.0,
        1e-40,
        128.0,
    ];
    xs.extend(specials);
    let dx = htod(&gpu, &xs);
    let mut out = zeros::<f32>(&gpu, xs.len());
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_ex2_approx,
        cfg_1d(xs.len() as u32, 256),
        (&dx, &mut out)
    );
    let got = dtoh(&out);
    // The worst relative error, and the worst error in units in the last place.
    let (mut rel, mut ulps) = ((0.0f64, 0.0f32), (0.0f64, 0.0f32));
    for (&x, &y) in xs[..n].iter().zip(&got) {
        let exact = f64::from(x).exp2();
        let err = (f64::from(y) - exact).abs();
        if err / exact > rel.0 {
            rel = (err / exact, x);
        }
        // One ulp of an f32 near `exact` (a normal number here).
        let ulp = 2f64.powi(exact.log2().floor() as i32 - 23);
        if err / ulp > ulps.0 {
            ulps = (err / ulp, x);
        }
    }
    println!(
        "ex2_approx: relative error at most {:.3}·2^-23 (at x = {}), {:.3} ulp (at x = {})",
        rel.0 * 2f64.powi(23),
        rel.1,
        ulps.0,
        ulps.1
    );
    assert!(
        rel.0 <= 2f64.powi(-22),
        "ex2_approx({}) is off by a relative {:e}, more than 2^-22",
        rel.1,
        rel.0
    );
    let edges = &got[n..];
    assert_eq!(edges[0].to_bits(), 0, "2^-inf");
    assert_eq!(edges[1], f32::INFINITY, "2^inf");
    assert!(edges[2].is_nan(), "2^NaN");
    assert_eq!(edges[3].to_bits(), 0, "2^-126.5 (subnormal) flushes to +0");
    assert_eq!(edges[4].to_bits(), 0, "2^-150 flushes to +0");
    assert_eq!(
        (edges[5], edges[6], edges[7]),
        (1.0, 1.0, 1.0),
        "2^0, 2^-0, 2^subnormal"
    );
    assert_eq!(edges[8], f32::INFINITY, "2^128 overflows");
}

#[test]
fn exact_math_is_bit_identical_to_the_cpu() {
    let gpu = gpu();
    let xs64 = math_inputs();
    let xs32: Vec<f32> = xs64.iter().map(|&x| x as f32).collect();
    let (d32, d64) = (htod(&gpu, &xs32), htod(&gpu, &xs64));
    let mut out32 = zeros::<f32>(&gpu, xs32.len() * MATH_F32_FUNCTIONS);
    let mut out64 = zeros::<f64>(&gpu, xs64.len() * MATH_F64_FUNCTIONS);
    let n = xs32.len() as u32;
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_math_f32,
        cfg_1d(n, 128),
        (&d32, &mut out32)
    );
    launch!(
        &gpu,
        gpu.module(),
        prim::prim_math_f64,
        cfg_1d(n, 128),
        (&d64, &mut out64)
    );
    let expected32: Vec<u32> = xs32
        .iter()
        .flat_map(|&x| math_f32(x))
        .map(canon32)
        .collect();
    let expected64: Vec<u64> = xs64
        .iter()
        .flat_map(|&x| math_f64(x))
        .map(canon64)
        .collect();
    let got32: Vec<u32> = dtoh(&out32).into_iter().map(canon32).collect();
    let got64: Vec<u64> = dtoh(&out64).into_iter().map(canon64).collect();
    // Report per function, so a mismatch names it.
    for k in 0..MATH_F32_FUNCTIONS {
        let e: Vec<u32> = expected32
            .iter()
            .skip(k)
            .step_by(MATH_F32_FUNCTIONS)
            .copied()
            .collect();
        let g: Vec<u32> = got32
            .iter()
            .skip(k)
            .step_by(MATH_F32_FUNCTIONS)
            .copied()
            .collect();
        assert_identical(&format!("f32 function #{k} of math_f32 (bits)"), &e, &g);
    }
    for k in 0..MATH_F64_FUNCTIONS {
        let e: Vec<u64> = expected64
            .iter()
            .skip(k)
            .step_by(MATH_F64_FUNCTIONS)
            .copied()
            .collect();
        let g: Vec<u64> = got64
            .iter()
            .skip(k)
            .step_by(MATH_F64_FUNCTIONS)
            .copied()
            .collect();
        assert_identical(&format!("f64 function #{k} of math_f64 (bits)"), &e, &g);
    }
}

/// Distance in units in the last place between two finite floats of the same type, through
/// their order-preserving integer images.
fn ulps32(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let b = x.to_bits() as i32;
        i64::from(if b < 0 { i32::MIN - b } else { b })
    };
    key(a).abs_diff(key(b))
}
fn ulps64(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        i128::from(if b < 0 { i64::MIN - b } else { b })
    };
    key(a).abs_diff(key(b)) as u64
}

#[test]
fn fast_math_is_within_the_cuda_error_bounds() {
    if !SM80_FAST_MATH {
        eprintln!(
            "skipped: the test kernels were built without libdevice (install the \
             nvidia-cuda-nvcc-cu12 wheel or a CUDA toolkit, then rebuild)"
        );
        return;
    }
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    // Bounds: CUDA C Programming Guide, appendix "Mathematical Functions", maximum ulp error
    // of the single/double-precision functions (libdevice implements them), plus 1 ulp for
    // libm's own error on the CPU side. Order as in `math_f32` / `math_f64`.
    const F32_ULPS: [u64; MATH_F32_FUNCTIONS] = [3, 3, 5, 3, 2, 2, 5, 1, 4, 3, 2, 1, 1, 1, 4, 3];
    const F64_ULPS: [u64; MATH_F64_FUNCTIONS] = [3, 3, 2, 2, 2, 3, 1, 3, 1, 2];
    // Moderate inputs only: the bounds hold on the whole domain, but tiny results (e.g. sin
    // near multiples of π) make an ulp comparison against a different algorithm meaningless.
    let xs64: Vec<f64> = math_inputs()
        .into_iter()
        .filter(|x| x.is_finite() && x.abs() <= 50.0 && (x.abs() >= 1e-3 || *x == 0.0))
        .collect();
    let xs32: Vec<f32> = xs64.iter().map(|&x| x as f32).collect();
    let (d32, d64) = (htod(&gpu, &xs32), htod(&gpu, &xs64));
    let mut out32 = zeros::<f32>(&gpu, xs32.len() * MATH_F32_FUNCTIONS);
    let mut out64 = zeros::<f64>(&gpu, xs64.len() * MATH_F64_FUNCTIONS);
    let n = xs32.len() as u32;
    launch!(
        &gpu,
        &module,
        prim::prim_math_f32,
        cfg_1d(n, 128),
        (&d32, &mut out32)
    );
    launch!(
        &gpu,
        &module,
        prim::prim_math_f64,
        cfg_1d(n, 128),
        (&d64, &mut out64)
    );
    let got32 = dtoh(&out32);
    let got64 = dtoh(&out64);
    let mut differing = 0usize;
    for (i, &x) in xs32.iter().enumerate() {
        for (k, e) in math_f32(x).into_iter().enumerate() {
            let g = got32[i * MATH_F32_FUNCTIONS + k];
            if !e.is_finite() {
                assert_eq!(canon32(e), canon32(g), "f32 #{k}({x}) special value");
                continue;
            }
            assert!(g.is_finite(), "f32 #{k}({x}): libm {e}, libdevice {g}");
            if e.abs() > 1e-6 {
                let d = ulps32(e, g);
                differing += usize::from(d > 0);
                assert!(
                    d <= F32_ULPS[k],
                    "f32 #{k}({x}): libm {e}, libdevice {g}: {d} ulp"
                );
            }
        }
    }
    for (i, &x) in xs64.iter().enumerate() {
        for (k, e) in math_f64(x).into_iter().enumerate() {
            let g = got64[i * MATH_F64_FUNCTIONS + k];
            if !e.is_finite() {
                assert_eq!(canon64(e), canon64(g), "f64 #{k}({x}) special value");
                continue;
            }
            assert!(g.is_finite(), "f64 #{k}({x}): libm {e}, libdevice {g}");
            if e.abs() > 1e-12 {
                let d = ulps64(e, g);
                assert!(
                    d <= F64_ULPS[k],
                    "f64 #{k}({x}): libm {e}, libdevice {g}: {d} ulp"
                );
            }
        }
    }
    eprintln!("fast math: {differing} f32 results differ from libm (within bounds)");
}

// ---------------------------------------------------------------------------------------
// sm_80: redux.sync, cp.async

#[test]
fn redux_sync_matches_the_cpu_model() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    let n = 256usize;
    let input: Vec<u32> = (0..n as u32).map(hash32).collect();
    let d_in = htod(&gpu, &input);
    for mask in [u32::MAX, 0x0000_ffff, 0x5555_5555, 0x8000_0001] {
        let mut out = zeros::<u32>(&gpu, 9 * n);
        launch!(
            &gpu,
            &module,
            prim::prim_redux,
            cfg_1d(n as u32, 128),
            (&d_in, &mut out, mask)
        );
        let got = dtoh(&out);
        for base in (0..n).step_by(32) {
            let lanes: Vec<u32> = (0..32)
                .filter(|l| mask & (1 << l) != 0)
                .map(|l| input[base + l])
                .collect();
            let signed = lanes.iter().map(|&v| v as i32);
            let expected = [
                lanes.iter().fold(0u32, |a, &v| a.wrapping_add(v)),
                *lanes.iter().min().unwrap(),
                *lanes.iter().max().unwrap(),
                signed.clone().fold(0i32, |a, v| a.wrapping_add(v)) as u32,
                signed.clone().min().unwrap() as u32,
                signed.max().unwrap() as u32,
                lanes.iter().fold(u32::MAX, |a, &v| a & v),
                lanes.iter().fold(0, |a, &v| a | v),
                lanes.iter().fold(0, |a, &v| a ^ v),
            ];
            for l in (0..32).filter(|l| mask & (1 << l) != 0) {
                let i = base + l;
                assert_eq!(
                    &got[9 * i..9 * i + 9],
                    &expected,
                    "mask {mask:#010x} thread {i}: [add, min, max (u32), add, min, max (i32), and, or, xor]"
                );
            }
        }
    }
}

#[test]
fn cp_async_copies_global_to_shared() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    let blocks = 8usize;
    let input: Vec<f32> = (0..1024 * blocks).map(|i| i as f32 - 0.5).collect();
    let input_u32: Vec<u32> = (0..512 * blocks as u32).map(hash32).collect();
    let (a, b) = (htod(&gpu, &input), htod(&gpu, &input_u32));
    let mut out = zeros::<f32>(&gpu, input.len());
    let mut out_u32 = zeros::<u32>(&gpu, 768 * blocks);
    launch!(
        &gpu,
        &module,
        prim::prim_cp_async,
        cfg_1d((256 * blocks) as u32, 256),
        (&a, &b, &mut out, &mut out_u32)
    );
    let expected: Vec<u32> = (0..input.len())
        .map(|i| input[i - i % 1024 + 1023 - i % 1024].to_bits())
        .collect();
    let got: Vec<u32> = dtoh(&out).iter().map(|x| x.to_bits()).collect();
    assert_identical("16-byte copies, reversed", &expected, &got);
    let mut expected_u = Vec::with_capacity(768 * blocks);
    for blk in 0..blocks {
        let u = &input_u32[512 * blk..512 * (blk + 1)];
        for t in 0..256 {
            expected_u.extend([u[t].wrapping_add(u[256 + 255 - t]), u[2 * t], u[2 * t + 1]]);
        }
    }
    assert_identical("4- and 8-byte copies", &expected_u, &dtoh(&out_u32));
}

// ---------------------------------------------------------------------------------------
// printf and assertions (child processes)

/// Runs the test `child` of this binary in a child process with `CHILD_ENV=scenario`;
/// returns its exit success and its stdout + stderr.
fn run_child(child: &str, scenario: &str) -> (bool, String) {
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([
            child,
            "--exact",
            // The child test is not ignored (it does nothing without `CHILD_ENV`); include
            // ignored ones too, so the filter finds it either way.
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, scenario)
        .output()
        .expect("run the test binary as a child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The child side of the printf and assert tests: does nothing unless `CHILD_ENV` is set.
#[test]
fn child_process_scenario() {
    let Ok(scenario) = std::env::var(CHILD_ENV) else {
        return;
    };
    let gpu = gpu();
    match scenario.as_str() {
        "printf" => {
            let n = 4u32;
            let cfg = cfg_1d(n, 32);
            prim::prim_printf
                .launch(gpu.module(), gpu.stream(), cfg, (n,))
                .and_then(|()| {
                    gpu.stream()
                        .synchronize_after(prim::prim_printf.name(), cfg)
                })
                .unwrap_or_else(|e| panic!("{e}"));
        }
        "assert" => {
            let fail_at = 37u32;
            let cfg = cfg_1d(64, 64);
            let kernel = gpu
                .module()
                .kernel(prim::prim_assert)
                .unwrap_or_else(|e| panic!("{e}"));
            let result = kernel
                .launch(gpu.stream(), cfg, (fail_at,))
                .and_then(|()| gpu.stream().synchronize_after(kernel.name(), cfg));
            match result {
                Ok(()) => println!("HOST: no error"),
                Err(e) => println!("HOST ERROR: {e} / {e:?}"),
            }
            // The context is unusable after a device assertion: exit without running the
            // destructors of `gpu` (which would report errors of their own).
            std::process::exit(0);
        }
        other => panic!("unknown scenario {other}"),
    }
}

#[test]
fn device_println_reaches_the_host_stdout() {
    let (ok, text) = run_child("child_process_scenario", "printf");
    assert!(ok, "child failed:\n{text}");
    for i in 0u32..4 {
        let expected = format!(
            "printf thread {i}: i32 {} u32 {} i64 {} u64 {} f32 {:.1} f64 -0.25 bool {} str ferrocuda",
            -(i as i32) - 1,
            i * 1000,
            -i64::from(i) * (1 << 40),
            (1u64 << 63) + u64::from(i),
            i as f32 + 0.5,
            i % 2,
        );
        // The test harness may print `test child_process_scenario ... ` on the same line
        // before the device output arrives.
        assert!(
            text.lines().any(|l| l.ends_with(&expected)),
            "missing line `{expected}` in the child's output:\n{text}"
        );
    }
}

#[test]
fn device_assert_failure_surfaces_as_a_host_error_with_its_message() {
    let (ok, text) = run_child("child_process_scenario", "assert");
    assert!(ok, "child failed:\n{text}");
    assert!(
        text.contains("HOST ERROR"),
        "the launch did not fail:\n{text}"
    );
    assert!(
        text.contains("CUDA_ERROR_ASSERT") || text.to_lowercase().contains("assert"),
        "the host error does not name the assertion:\n{text}"
    );
    assert!(
        text.contains("prim_assert: value 37 out of range"),
        "the device message did not reach stdout:\n{text}"
    );
    assert!(
        text.contains("i != fail_at"),
        "CUDA's assertion message (with the condition) did not appear:\n{text}"
    );
}

// ---------------------------------------------------------------------------------------
// The CUDA C Programming Guide's tiled matrix multiply

#[test]
fn matmul_tiled_f32_is_bit_identical_to_the_cpu_loop() {
    let gpu = gpu();
    for (m, k, n) in [
        (64usize, 64usize, 64usize),
        (100, 37, 53),
        (1, 1, 1),
        (16, 300, 17),
        (257, 129, 65),
    ] {
        let a: Vec<f32> = (0..m * k)
            .map(|i| hash32(i as u32) as f32 / 2_147_483_648.0 - 1.0)
            .collect();
        let b: Vec<f32> = (0..k * n)
            .map(|i| hash32(!(i as u32)) as f32 / 2_147_483_648.0 - 1.0)
            .collect();
        let (da, db) = (htod(&gpu, &a), htod(&gpu, &b));
        let mut dc = zeros::<f32>(&gpu, m * n);
        let cfg = LaunchConfig::new(
            (n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32),
            (TILE as u32, TILE as u32),
            0,
        );
        let (m32, k32, n32) = (m as u32, k as u32, n as u32);
        // Through the kernel's typed handle: the argument kinds are checked at compile time
        // (`&[f32]` ← `&DeviceBuffer<f32>`, `*mut f32` ← `&mut DeviceBuffer<f32>`, `u32` ←
        // `u32`); the parameter sizes at run time, when the handle is resolved.
        // SAFETY: `a` holds m·k, `b` k·n and `c` m·n elements (the kernel's contract).
        unsafe {
            prim::matmul_tiled_f32
                .launch_unchecked(
                    gpu.module(),
                    gpu.stream(),
                    cfg,
                    (&da, &db, &mut dc, m32, k32, n32),
                )
                .unwrap_or_else(|e| panic!("{e}"));
        }
        gpu.synchronize().unwrap_or_else(|e| panic!("{e}"));
        assert_identical(
            &format!("C = A·B, {m}×{k} · {k}×{n}"),
            &f32_bits(&matmul_f32(&a, &b, m, k, n)),
            &f32_bits(&dtoh(&dc)),
        );
    }
}

// ---------------------------------------------------------------------------------------
// PTX contents (no GPU needed)

#[test]
fn shared_declarations_land_in_the_ptx() {
    let shared: Vec<&str> = PROBES
        .ptx
        .lines()
        .filter(|l| l.starts_with(".shared .align"))
        .collect();
    for (align, bytes) in [(4, 1024), (16, 1024), (8, 96), (128, 100), (4, 12)] {
        let found = shared.iter().any(|l| {
            l.starts_with(&format!(".shared .align {align} .b8 __cuda_std_shared_"))
                && l.ends_with(&format!("[{bytes}];"))
        });
        assert!(
            found,
            "no `.shared .align {align}` array of {bytes} bytes in:\n{shared:#?}"
        );
    }
    let names: std::collections::HashSet<&str> = shared
        .iter()
        .filter_map(|l| l.split_whitespace().nth(4))
        .map(|n| n.split('[').next().unwrap_or(n))
        .collect();
    assert_eq!(
        names.len(),
        shared.len(),
        "every declaration has its own name"
    );
    assert!(
        PROBES
            .ptx
            .contains(".extern .shared .align 16 .b8 __cuda_std_dynamic_shared[];"),
        "dynamic shared memory declaration"
    );
}

#[test]
fn sm80_instructions_only_in_the_sm80_variant_which_links_libdevice() {
    let sm80_ptx = PROBES_SM80.ptx;
    for insn in ["redux.sync", "cp.async"] {
        assert!(!PROBES.ptx.contains(insn), "`{insn}` in the sm_70 PTX");
        assert!(
            sm80_ptx.contains(insn),
            "`{insn}` missing from the sm_80 PTX"
        );
    }
    assert!(sm80_ptx.contains(".target sm_80"));
    if !SM80_FAST_MATH {
        eprintln!("libdevice linking not checked: the sm_80 variant was built without it");
    }
    assert!(
        !SM80_FAST_MATH
            || !sm80_ptx
                .lines()
                .any(|l| l.contains(".extern") && l.contains("__nv_")),
        "libdevice functions left unresolved in the fast-math PTX"
    );
    assert!(
        !PROBES.ptx.contains("__nv_"),
        "libdevice used in the exact (default) PTX"
    );
}

// ---------------------------------------------------------------------------------------
// Warpgroup accumulator tiles (`cuda_std::tile::AccTile`)

/// The handle type of the `prim_acc_tile_*` probes: `(input: &[f32], out: *mut f32,
/// tile_out: *mut f32)`.
type AccTileProbe = cuda_std::launch::Kernel<
    (
        cuda_std::launch::Slice<f32>,
        cuda_std::launch::MutPtr<f32>,
        cuda_std::launch::MutPtr<f32>,
    ),
    cuda_std::launch::Unsafe,
>;

/// One `prim_acc_tile_*` probe on a 64×`n` matrix of integers in −50..=50 (sums exact in
/// `f32`, so the order of the quad's additions cannot matter): each thread's row maxima and
/// sums equal the rows' on the CPU, its rows being, by the PTX ISA's accumulator figure
/// (written out here, not taken from `cust_core::lanes`), `16·warp + lane / 4` and 8 below;
/// and the tile written back with each row's maximum subtracted covers every element once.
fn acc_tile_case(gpu: &Gpu, kernel: AccTileProbe, n: usize) {
    let input: Vec<f32> = (0..64 * n)
        .map(|i| ((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as f32 % 101.0 - 50.0)
        .collect();
    let d_in = htod(gpu, &input);
    let mut out = zeros::<f32>(gpu, 128 * prim::ACC_TILE_SLOTS);
    let mut tile = htod(gpu, &vec![f32::NAN; 64 * n]);
    launch!(
        gpu,
        gpu.module(),
        kernel,
        LaunchConfig::new(1, 128, 0),
        (&d_in, &mut out, &mut tile)
    );
    let (got, tile) = (dtoh(&out), dtoh(&tile));
    let row = |r: usize| &input[r * n..(r + 1) * n];
    let row_max = |r: usize| row(r).iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let row_sum = |r: usize| row(r).iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
    for t in 0..128usize {
        let (warp, lane) = (t / 32, t % 32);
        let rows = [16 * warp + lane / 4, 16 * warp + lane / 4 + 8];
        let want = [
            row_max(rows[0]),
            row_max(rows[1]),
            row_sum(rows[0]),
            row_sum(rows[1]),
        ];
        let slots = &got[t * prim::ACC_TILE_SLOTS..(t + 1) * prim::ACC_TILE_SLOTS];
        assert_eq!(
            slots, want,
            "n = {n}, thread {t} (rows {rows:?}): [max, max, sum, sum]"
        );
    }
    for r in 0..64 {
        for c in 0..n {
            assert_eq!(
                tile[r * n + c],
                2.0 * (input[r * n + c] - row_max(r)) + r as f32 - c as f32,
                "n = {n}: element ({r}, {c}) of the tile minus its row maximum, then mapped \
                 to 2·x + row − col"
            );
        }
    }
}

/// On a GPU or the CPU emulator: row maxima and sums of `m64n64` and `m64n256` accumulator
/// tiles (trees over each thread's elements, then the quad), `map_rows`, `map` and
/// `for_each_pair`, against the CPU.
#[test]
fn acc_tile_row_reductions_equal_the_cpu() {
    let gpu = gpu();
    acc_tile_case(&gpu, prim::prim_acc_tile_n64, 64);
    acc_tile_case(&gpu, prim::prim_acc_tile_n256, 256);
}

/// The accumulator tile's element loops have constant indices: the probes keep all 32 or
/// 128 elements in registers (no local memory in their PTX), as `wgmma` accumulators must.
#[test]
fn acc_tile_probes_use_no_local_memory() {
    let ptx = PROBES.ptx;
    for name in ["prim_acc_tile_n64", "prim_acc_tile_n256"] {
        let start = ptx
            .find(&format!(".entry {name}("))
            .unwrap_or_else(|| panic!("{name} is not in the probes' PTX"));
        let body = &ptx[start..];
        let body = &body[..body.find("\n}\n").unwrap_or(body.len())];
        assert!(body.contains("shfl.sync.bfly"), "{name}: no butterfly");
        assert!(
            !body.contains(".local") && !body.contains("__local_depot"),
            "{name} keeps its tile in local memory"
        );
    }
}
