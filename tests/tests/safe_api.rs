//! The safe device API against CPU results (`tests/kernels/src/safe_api.rs` holds the
//! kernels, written without `unsafe`): atomics on an output (`AtomicSlice`) and on a shared
//! array (`shared_array!(atomic [T; N])`), coalesced-lane reductions (`warp::coalesced_*`)
//! and grid-strided writes to an `OutSlice`. On the GPU when one is present, else on the
//! CPU emulator (with its race checks on), as every kernel test.
use cust::{function::LaunchConfig, module::Module};
use host::Gpu;
use probes::safe_api::{self as safe, HISTOGRAM_BINS};
use tests::{dtoh, htod, probes as gpu, sm80_module, zeros};

/// Launches a safe kernel with `launch` (no `unsafe`), then synchronises; panics with the
/// kernel's error.
macro_rules! launch_safe {
    ($gpu:expr, $module:expr, $kernel:expr, $cfg:expr, ($($arg:expr),* $(,)?)) => {{
        let gpu: &Gpu = $gpu;
        let module: &Module = $module;
        let cfg: LaunchConfig = $cfg;
        let kernel = module.kernel($kernel).unwrap_or_else(|e| panic!("{e}"));
        kernel
            .launch(gpu.stream(), cfg, ($($arg,)*))
            .unwrap_or_else(|e| panic!("{e}"));
        gpu.stream()
            .synchronize_after(kernel.name(), cfg)
            .unwrap_or_else(|e| panic!("{e}"));
    }};
}

/// splitmix64-derived test input: `n` words.
fn input(n: usize, salt: u64) -> Vec<u32> {
    (0..n).map(|i| (tests::mix(salt, i) >> 16) as u32).collect()
}

#[test]
fn the_safe_kernels_hold_no_unsafe() {
    let text = include_str!("../kernels/src/safe_api.rs");
    let unsafe_lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && l.contains("unsafe"))
        .collect();
    assert!(
        unsafe_lines.is_empty(),
        "tests/kernels/src/safe_api.rs shows the safe API: no `unsafe` in its code: {unsafe_lines:?}"
    );
}

#[test]
fn a_histogram_with_atomic_slice_and_shared_atomics_matches_the_cpu() {
    let gpu = gpu();
    // Partial blocks, more blocks than needed, a grid-stride loop when fewer.
    for (n, grid, block) in [(10_000usize, 13u32, 256u32), (1_000, 2, 100), (7, 4, 64)] {
        let data = input(n, n as u64);
        let mut expected = vec![0u32; HISTOGRAM_BINS + 3];
        for &x in &data {
            expected[x as usize % HISTOGRAM_BINS] += 1;
        }
        let d_in = htod(&gpu, &data);
        // Three spare bins past HISTOGRAM_BINS: they must stay 0.
        let mut bins = zeros::<u32>(&gpu, HISTOGRAM_BINS + 3);
        launch_safe!(
            &gpu,
            gpu.module(),
            safe::safe_histogram,
            LaunchConfig::new(grid, block, 0),
            (&d_in, &mut bins)
        );
        assert_eq!(dtoh(&bins), expected, "n {n}, grid {grid}, block {block}");
    }
}

#[test]
fn a_grid_stride_loop_covers_the_output_for_any_grid() {
    let gpu = gpu();
    for (n, grid, block) in [
        (5_000usize, 3u32, 128u32),
        (100, 1, 32),
        (64, 8, 32),
        (1, 2, 2),
    ] {
        let data = input(n.saturating_sub(3), 7);
        let expected: Vec<u32> = (0..n)
            .map(|i| data.get(i).map_or(0, |&x| x.wrapping_mul(3) + 1))
            .collect();
        let d_in = htod(&gpu, &data);
        let mut out = zeros::<u32>(&gpu, n);
        launch_safe!(
            &gpu,
            gpu.module(),
            safe::safe_grid_stride_loop,
            LaunchConfig::new(grid, block, 0),
            (&d_in, &mut out)
        );
        assert_eq!(dtoh(&out), expected, "n {n}, grid {grid}, block {block}");
    }
}

#[test]
fn grid_strided_writes_give_each_element_to_one_thread_and_step() {
    let gpu = gpu();
    // 2D grid and block: the launch's thread count is the product of all dimensions.
    let (grid, block) = ((3u32, 2u32, 1u32), (16u32, 2u32, 1u32));
    let threads = 3 * 2 * 16 * 2;
    for n in [1usize, threads - 1, threads, 5 * threads + 17] {
        let mut out = zeros::<u32>(&gpu, n);
        launch_safe!(
            &gpu,
            gpu.module(),
            safe::safe_grid_strided,
            LaunchConfig::new(grid, block, 0),
            (&mut out)
        );
        let expected: Vec<u32> = (0..n)
            .map(|i| ((i % threads) * 1000 + i / threads) as u32)
            .collect();
        assert_eq!(dtoh(&out), expected, "n {n}");
    }
}

#[test]
fn out_of_bounds_atomics_touch_nothing_and_say_so() {
    let gpu = gpu();
    let (threads, len) = (2 * 16u32, 20usize);
    let mut counts = zeros::<u32>(&gpu, len);
    let mut misses = zeros::<u32>(&gpu, 2);
    launch_safe!(
        &gpu,
        gpu.module(),
        safe::safe_atomic_bounds,
        LaunchConfig::new(2, 16, 0),
        (&mut counts, &mut misses)
    );
    assert_eq!(dtoh(&counts), vec![1u32; len]);
    // Global: threads 20..32 miss; shared (8 elements): lanes 8..16 of both blocks.
    assert_eq!(dtoh(&misses), [threads - len as u32, 2 * 8]);
}

#[test]
fn warp_aggregated_atomics_over_coalesced_lanes_match_the_cpu() {
    let gpu = gpu();
    let Some(module) = sm80_module(&gpu) else {
        return;
    };
    // A partial last warp (100 threads per block) and divergence (only odd inputs).
    for (n, block) in [(1_000usize, 100u32), (4_096, 256), (33, 64)] {
        let data = input(n, 3);
        let odd: Vec<(usize, u32)> = data
            .iter()
            .copied()
            .enumerate()
            .filter(|&(_, x)| x % 2 == 1)
            .collect();
        let sum = odd.iter().fold(0u32, |a, &(_, x)| a.wrapping_add(x));
        let count = odd.len() as u32;
        // At least one coalesced group per warp holding an odd input, at most one per lane.
        let mut warps: Vec<(usize, usize)> = odd
            .iter()
            .map(|&(i, _)| (i / block as usize, (i % block as usize) / 32))
            .collect();
        warps.dedup();
        let d_in = htod(&gpu, &data);
        let mut totals = zeros::<u32>(&gpu, 4);
        launch_safe!(
            &gpu,
            &module,
            safe::safe_warp_aggregated,
            LaunchConfig::new((n as u32).div_ceil(block), block, 0),
            (&d_in, &mut totals)
        );
        let got = dtoh(&totals);
        assert_eq!(
            &got[..3],
            &[sum, count, count],
            "n {n}, block {block}: [sum, lanes, ballot]"
        );
        assert!(
            (warps.len() as u32..=count).contains(&got[3]),
            "n {n}, block {block}: {} groups, expected {} to {count}",
            got[3],
            warps.len()
        );
        if gpu.is_emulator() {
            // The emulator's active mask is the calling lane alone.
            assert_eq!(got[3], count, "one group per lane on the emulator");
        }
    }
}
