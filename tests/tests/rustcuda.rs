//! The device API added for Rust-CUDA kernels (issue 34 item 5), run on the GPU when one is
//! present and on the CPU emulator otherwise (`tests::probes`), against CPU references
//! computed independently: `libm` and std's methods on the host for the float traits, exact
//! integer sums for the atomic floats, segment arithmetic for the shuffles, hand-written
//! cross and dot products for `vek`. The `compute_NN` cfg test reads the PTX (no GPU).

use core::f64::consts::PI;
use cust::function::LaunchConfig;
use probes::rustcuda::{
    RC_FLOAT_FUNCTIONS, RC_SHUFFLE_WORDS, rc_atomic_floats, rc_float_f32, rc_float_f64,
    rc_only_compute_80, rc_vek, rc_warp_shuffles,
};
use tests::{PROBES, PROBES_SM80, dtoh, htod, launch_probe as launch, probes as gpu, zeros};

/// Inputs for the float traits: negatives, fractions, near and at (half-)integers, large.
fn float_inputs() -> Vec<f64> {
    let mut v = vec![
        0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, -7.75, 123.456, -1e4, 9.999,
    ];
    for i in 1..40 {
        let x = f64::from(i) * 0.37 - 6.0;
        v.extend([x, x * 13.1]);
    }
    v
}

/// Same bits, or both NaN.
fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `cos(π·x)` and `sin(π·x)` in `f64` with `x` reduced modulo 2 first (exact), an
/// independent reference for `cospi`/`sinpi`: the rounding of `π·r` (`|r| < 2`) makes it
/// accurate to about `7e-16` absolute.
fn cos_sin_pi(x: f64) -> (f64, f64) {
    let r = x % 2.0;
    ((PI * r).cos(), (PI * r).sin())
}

#[test]
fn float_traits_give_libms_bits_and_std_definitions() {
    let gpu = gpu();
    let xs = float_inputs();
    let k = RC_FLOAT_FUNCTIONS.len();
    let cfg = LaunchConfig::new((xs.len() as u32).div_ceil(64), 64, 0);

    let x32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let d_x32 = htod(&gpu, &x32);
    let mut d_out32 = zeros::<f32>(&gpu, x32.len() * k);
    launch!(
        &gpu,
        gpu.module(),
        rc_float_f32,
        cfg,
        (&d_x32, &mut d_out32)
    );
    let out32 = dtoh(&d_out32);

    let d_x64 = htod(&gpu, &xs);
    let mut d_out64 = zeros::<f64>(&gpu, xs.len() * k);
    launch!(
        &gpu,
        gpu.module(),
        rc_float_f64,
        cfg,
        (&d_x64, &mut d_out64)
    );
    let out64 = dtoh(&d_out64);

    let mut failures = Vec::new();
    for (i, (&x, &y)) in xs.iter().zip(&x32).enumerate() {
        // Run-time exponent: std's powi then calls compiler-rt's __powisf2/__powidf2.
        let five = std::hint::black_box(5);
        let (s32, c32) = libm::sincosf(y);
        let (s64, c64) = libm::sincos(x);
        // Exact references (`None`: checked against a tolerance below).
        let want32: [Option<f32>; 16] = [
            Some(libm::log10f(y)),
            Some(y.fract()),
            Some(y.rem_euclid(0.75)),
            Some(y.powi(five)),
            Some(s32),
            Some(c32),
            Some(libm::asinhf(y)),
            None,
            None,
            Some(libm::erfcf(y)),
            Some(libm::frexpf(y).0),
            Some(libm::ldexpf(y, 7)),
            Some(libm::lgammaf(y)),
            Some(libm::j1f(y)),
            Some(libm::ynf(3, y.abs() + 0.5)),
            None,
        ];
        let want64: [Option<f64>; 16] = [
            Some(libm::log10(x)),
            Some(x.fract()),
            Some(x.rem_euclid(0.75)),
            Some(x.powi(five)),
            Some(s64),
            Some(c64),
            Some(libm::asinh(x)),
            None,
            None,
            Some(libm::erfc(x)),
            Some(libm::frexp(x).0),
            Some(libm::ldexp(x, 7)),
            Some(libm::lgamma(x)),
            Some(libm::j1(x)),
            Some(libm::yn(3, x.abs() + 0.5)),
            None,
        ];
        for j in 0..k {
            let (got32, got64) = (out32[i * k + j], out64[i * k + j]);
            if let Some(w) = want32[j]
                && !same32(got32, w)
            {
                failures.push(format!(
                    "f32 {}({y:e}): {got32:e}, want {w:e}",
                    RC_FLOAT_FUNCTIONS[j]
                ));
            }
            if let Some(w) = want64[j]
                && !same64(got64, w)
            {
                failures.push(format!(
                    "f64 {}({x:e}): {got64:e}, want {w:e}",
                    RC_FLOAT_FUNCTIONS[j]
                ));
            }
        }
        // Functions libm lacks: within a tolerance of an f64 reference (the f32 results are
        // rounded once from f64, so 1 ulp of the result; f64: the rounding of π·r).
        let (c, s) = cos_sin_pi(f64::from(y));
        let ncdf = |v: f64| 0.5 * libm::erfc(-v / core::f64::consts::SQRT_2);
        for (j, want, got) in [
            (7, c, f64::from(out32[i * k + 7])),
            (8, s, f64::from(out32[i * k + 8])),
            (15, ncdf(f64::from(y)), f64::from(out32[i * k + 15])),
        ] {
            let tol = 2.0 * f64::from(f32::EPSILON) * want.abs().max(1e-6);
            if (got - want).abs() > tol {
                failures.push(format!(
                    "f32 {}({y:e}): {got:e}, want {want:e} ± {tol:e} (diff {:e})",
                    RC_FLOAT_FUNCTIONS[j],
                    got - want
                ));
            }
        }
        // f64: the reference's own error (7e-16 for cospi/sinpi) dominates; norm_cdf's
        // rounding of -x/√2 costs about 2x² ulp in the lower tail (documented): relative
        // (2x² + 16) ulp.
        let (c, s) = cos_sin_pi(x);
        for (j, want, got, tol) in [
            (7, c, out64[i * k + 7], 2e-15),
            (8, s, out64[i * k + 8], 2e-15),
            (
                15,
                ncdf(x),
                out64[i * k + 15],
                ncdf(x) * (2.0 * x * x + 16.0) * f64::EPSILON,
            ),
        ] {
            if (got - want).abs() > tol {
                failures.push(format!(
                    "f64 {}({x:e}): {got:e}, want {want:e} ± {tol:e} (diff {:e})",
                    RC_FLOAT_FUNCTIONS[j],
                    got - want
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn atomic_float_types_sum_exactly_under_contention() {
    let gpu = gpu();
    let (n, block) = (1u32 << 14, 128u32);
    let blocks = n / block;
    let start_bits = 1.5f32;
    let mut f32s = htod(&gpu, &[0.0f32, 0.0, 0.0, start_bits]);
    let mut f64s = htod(&gpu, &[0.0f64, 0.0]);
    let mut per_block = zeros::<f32>(&gpu, blocks as usize);
    launch!(
        &gpu,
        gpu.module(),
        rc_atomic_floats,
        LaunchConfig::new(blocks, block, 0),
        (&mut f32s, &mut f64s, &mut per_block, n)
    );
    // Σ (i mod 64) over i < n: small integers, exact in f32 (< 2^24) in any order.
    let sum: u32 = (0..n).map(|i| i % 64).sum();
    let sum = sum as f32;
    let bits = f32::from_bits(((start_bits.to_bits() ^ 0x8000_0000) & !1) | 2);
    assert_eq!(
        dtoh(&f32s).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [sum, -sum, 63.0, bits].map(f32::to_bits),
        "[fetch_add, fetch_sub, fetch_max, xor/and/or]"
    );
    assert_eq!(
        dtoh(&f64s),
        [2.0 * f64::from(sum), f64::from(sum)],
        "[system fetch_add, device fetch_add]"
    );
    assert_eq!(
        dtoh(&per_block),
        vec![block as f32; blocks as usize],
        "block scope"
    );
}

/// The source lane and in-range flag of a shuffle of lane `l`, by segment arithmetic (CUDA C
/// Programming Guide, "Warp Shuffle Functions"): mode 0 idx, 1 up, 2 down, 3 xor.
fn shuffle_source(mode: usize, l: u32, arg: u32, width: u32) -> (u32, bool) {
    let segment = l / width;
    match mode {
        0 => (segment * width + arg % width, true),
        1 if l % width >= arg => (l - arg, true),
        2 if l % width + arg < width => (l + arg, true),
        3 if (l ^ arg) / width <= segment => (l ^ arg, true),
        _ => (l, false),
    }
}

#[test]
fn rust_cuda_shuffles_move_narrow_and_wide_values_and_flag_the_range() {
    let gpu = gpu();
    let lanes = 32usize;
    let in8: Vec<u8> = (0..lanes as u8).map(|l| 0xa0 ^ l.wrapping_mul(7)).collect();
    let in16: Vec<i16> = (0..lanes as i16).map(|l| -1000 - 37 * l).collect();
    let in128: Vec<u32> = (0..4 * lanes as u32)
        .map(|w| w.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995)
        .collect();
    let (d8, d16, d128) = (htod(&gpu, &in8), htod(&gpu, &in16), htod(&gpu, &in128));
    for width in [32u32, 16, 8, 4, 1] {
        for arg in [0u32, 1, 3, 5, 17, 31] {
            let mut out = zeros::<u32>(&gpu, lanes * RC_SHUFFLE_WORDS);
            let mut checks = zeros::<u32>(&gpu, lanes * 5);
            launch!(
                &gpu,
                gpu.module(),
                rc_warp_shuffles,
                LaunchConfig::new(1, 32, 0),
                (&d8, &d16, &d128, &mut out, &mut checks, arg, width)
            );
            let (out, checks) = (dtoh(&out), dtoh(&checks));
            for l in 0..lanes {
                let active = checks[l * 5 + 4];
                assert_ne!(active & (1 << l), 0, "activemask of lane {l} lacks it");
                for mode in 0..4 {
                    let (src, in_range) = shuffle_source(mode, l as u32, arg, width);
                    let s = src as usize;
                    let want = [
                        u32::from(in8[s]),
                        in16[s] as u32,
                        in128[4 * s],
                        in128[4 * s + 1],
                        in128[4 * s + 2],
                        in128[4 * s + 3],
                        u32::from(in_range),
                    ];
                    let got = &out[l * RC_SHUFFLE_WORDS + mode * 7..][..7];
                    assert_eq!(
                        got, want,
                        "mode {mode} (idx/up/down/xor), lane {l}, arg {arg}, width {width}: \
                         [u8, i16, u128 words, in range]"
                    );
                    assert_eq!(
                        checks[l * 5 + mode],
                        1,
                        "flags of u8/i16/u128 differ, lane {l}"
                    );
                }
            }
        }
    }
}

#[test]
fn vek_vectors_compute_cross_and_dot_products() {
    let gpu = gpu();
    let n = 100u32;
    let v: Vec<f32> = (0..3 * n)
        .map(|i| (i as f32 * 0.731).sin_cos().0 * 4.0)
        .collect();
    let d_v = htod(&gpu, &v);
    let mut d_out = zeros::<f32>(&gpu, 4 * n as usize);
    launch!(
        &gpu,
        gpu.module(),
        rc_vek,
        LaunchConfig::new(1, 128, 0),
        (&d_v, &mut d_out, n)
    );
    let out = dtoh(&d_out);
    for i in 0..n as usize {
        let a = &v[3 * i..3 * i + 3];
        let j = (i + 1) % n as usize;
        let b = &v[3 * j..3 * j + 3];
        let want = [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
            a[0] * b[0] + a[1] * b[1] + a[2] * b[2],
        ];
        for (k, (&got, want)) in out[4 * i..4 * i + 4].iter().zip(want).enumerate() {
            // vek may sum in another order: a few roundings of terms up to 16.
            let tol = 64.0 * f32::EPSILON;
            assert!(
                (got - want).abs() <= tol,
                "vector {i}, component {k}: {got} vs {want}"
            );
        }
    }
}

/// `cfg(target_feature = "compute_80")` is set by `cuda_builder` for sm_80 builds and not
/// for the sm_70 baseline, so only the sm_80 variant defines the gated kernel.
#[test]
fn compute_nn_cfg_selects_kernels_by_architecture() {
    let entry = format!(".entry {}(", rc_only_compute_80.name());
    assert!(
        !PROBES.ptx.contains(&entry),
        "the sm_70 baseline PTX defines {entry}"
    );
    assert!(
        PROBES_SM80.ptx.contains(&entry),
        "the sm_80 variant's PTX lacks {entry}"
    );
    // Ungated kernels are in both.
    let float = format!(".entry {}(", rc_float_f32.name());
    assert!(PROBES.ptx.contains(&float) && PROBES_SM80.ptx.contains(&float));
}

/// The gated kernel runs from the sm_80 variant (on the emulator: the host body).
#[test]
fn the_compute_80_kernel_runs_from_the_sm80_variant() {
    let gpu = gpu();
    let Some(module) = tests::sm80_module(&gpu) else {
        return;
    };
    let mut out = zeros::<u32>(&gpu, 1);
    launch!(
        &gpu,
        &module,
        rc_only_compute_80,
        LaunchConfig::new(1, 1, 0),
        (&mut out)
    );
    assert_eq!(dtoh(&out), [80]);
}
