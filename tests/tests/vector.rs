//! Vector workloads on the GPU against their CPU references.
//!
//! Exact (`assert_identical` on bits) where the arithmetic is: copy, scale, add and triad
//! (same basic operations in the same order), axpy (one fused multiply-add on both sides),
//! integer reductions and scans (wrapping arithmetic is associative), min/max (exact in any
//! order), and float sums of dyadic inputs small enough that every partial sum is exact.
//! Elsewhere a rigorous bound: a sum of `n` terms in any order (any tree of `n - 1`
//! additions, possibly fused with the products) has error at most `γ_n · Σ|terms|`, with
//! `γ_n = n·u / (1 - n·u)` and `u` the unit roundoff (2^-24 for f32, 2^-53 for f64) — Higham,
//! *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1 and §4.2. The reference is
//! computed in f64 (its own error, ~n·2^-53·Σ|terms|, is far inside the f32 bound).
//!
//! Inputs are pseudo-random (splitmix64), never zeros; outputs are poisoned (NaN with a
//! payload, or 0xdeadbeef) before each launch by the host-level functions, so an unwritten
//! element fails the comparison.

use host::vector::{
    self, Element, Float, ReduceOp, ScanKind, add_cpu, axpy_cpu, copy_cpu, scale_cpu, triad_cpu,
};
use tests::{assert_identical, gpu};

/// Lengths that exercise the tail (not a multiple of 4 or of a block), one element, and
/// more than one chunk per block.
const LENS: &[usize] = &[1, 2, 31, 1029, (1 << 20) + 7];

/// splitmix64 (Steele, Lea, Flood 2014): a small, good 64-bit generator.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1), never exactly 0.
    fn unit(&mut self) -> f64 {
        let v = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        if v == 0.0 { 0.5 } else { v }
    }
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit() as f32).collect()
    }
    fn f64s(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.unit()).collect()
    }
    /// Nonzero multiples of 1/16 in [-1/2, 1/2]: any partial sum of up to 2^20 + 7 of them
    /// is a multiple of 1/16 below 2^20 in magnitude, i.e. an integer below 2^24 times 2^-4,
    /// so it is exact in f32 (24-bit significand) whatever the summation order.
    fn dyadic(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| {
                let k = (self.next_u64() % 17) as i32 - 8;
                (if k == 0 { 1 } else { k }) as f32 / 16.0
            })
            .collect()
    }
    fn u32s(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| (self.next_u64() >> 32) as u32 | 1).collect()
    }
}

fn gamma(n: usize, u: f64) -> f64 {
    let nu = n as f64 * u;
    assert!(nu < 0.5, "bound meaningless for n = {n}");
    nu / (1.0 - nu)
}

const U32: f64 = 1.0 / (1u64 << 24) as f64;
const U64: f64 = 1.0 / (1u64 << 53) as f64;

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}
fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Asserts `|actual - expected| <= bound`, printing all three and the difference.
fn assert_within(what: &str, expected: f64, actual: f64, bound: f64) {
    let diff = (actual - expected).abs();
    assert!(
        diff <= bound,
        "{what}: expected {expected:e}, actual {actual:e}, |difference| {diff:e} > bound {bound:e}"
    );
}

#[test]
fn stream_f32_identical_to_cpu() {
    let gpu = gpu();
    let mut rng = Rng(1);
    for &n in LENS {
        let (a, b, c) = (rng.f32s(n), rng.f32s(n), rng.f32s(n));
        let q = 3.0f32.sqrt(); // inexact, so products round
        let w = |op: &str| format!("{op} f32 n = {n}");
        let run = |r: Result<Vec<f32>, _>| r.unwrap_or_else(|e| panic!("n = {n}: {e}"));
        assert_identical(
            &w("copy"),
            &bits32(&copy_cpu(&a)),
            &bits32(&run(host::vector::copy(&gpu, &a))),
        );
        assert_identical(
            &w("scale"),
            &bits32(&scale_cpu(&c, q)),
            &bits32(&run(host::vector::scale(&gpu, &c, q))),
        );
        assert_identical(
            &w("add"),
            &bits32(&add_cpu(&a, &b)),
            &bits32(&run(host::vector::add(&gpu, &a, &b))),
        );
        assert_identical(
            &w("triad"),
            &bits32(&triad_cpu(&b, &c, q)),
            &bits32(&run(host::vector::triad(&gpu, &b, &c, q))),
        );
        assert_identical(
            &w("axpy"),
            &bits32(&axpy_cpu(q, &a, &b)),
            &bits32(&run(host::vector::axpy(&gpu, q, &a, &b))),
        );
    }
}

#[test]
fn stream_f64_identical_to_cpu() {
    let gpu = gpu();
    let mut rng = Rng(2);
    for &n in LENS {
        let (a, b, c) = (rng.f64s(n), rng.f64s(n), rng.f64s(n));
        let q = 3.0f64.sqrt();
        let w = |op: &str| format!("{op} f64 n = {n}");
        let run = |r: Result<Vec<f64>, _>| r.unwrap_or_else(|e| panic!("n = {n}: {e}"));
        assert_identical(
            &w("copy"),
            &bits64(&copy_cpu(&a)),
            &bits64(&run(host::vector::copy(&gpu, &a))),
        );
        assert_identical(
            &w("scale"),
            &bits64(&scale_cpu(&c, q)),
            &bits64(&run(host::vector::scale(&gpu, &c, q))),
        );
        assert_identical(
            &w("add"),
            &bits64(&add_cpu(&a, &b)),
            &bits64(&run(host::vector::add(&gpu, &a, &b))),
        );
        assert_identical(
            &w("triad"),
            &bits64(&triad_cpu(&b, &c, q)),
            &bits64(&run(host::vector::triad(&gpu, &b, &c, q))),
        );
        assert_identical(
            &w("axpy"),
            &bits64(&axpy_cpu(q, &a, &b)),
            &bits64(&run(host::vector::axpy(&gpu, q, &a, &b))),
        );
    }
}

#[test]
fn reduce_u32_identical_to_cpu() {
    let gpu = gpu();
    let mut rng = Rng(3);
    for &n in LENS {
        let x = rng.u32s(n);
        for op in ReduceOp::ALL {
            let got = host::vector::reduce(&gpu, op, &x).unwrap_or_else(|e| panic!("n = {n}: {e}"));
            assert_eq!(
                got,
                vector::reduce_u32_cpu(op, &x),
                "{} u32 n = {n}",
                op.name()
            );
        }
    }
}

fn check_float_reduce<T: Float + PartialOrd>(u: f64, mut xs: impl FnMut(usize) -> Vec<T>) {
    let gpu = gpu();
    for &n in LENS {
        let x = xs(n);
        for op in ReduceOp::ALL {
            let what = format!("{} {} n = {n}", op.name(), T::NAME);
            let got: f64 = host::vector::reduce(&gpu, op, &x)
                .unwrap_or_else(|e| panic!("{what}: {e}"))
                .into();
            if op == ReduceOp::Sum {
                // n - 1 additions in some tree order, then the result is already in T.
                let (sum, abs) = vector::sum_f64(&x);
                assert_within(&what, sum, got, gamma(n, u) * abs);
            } else {
                assert_eq!(got, vector::min_max_cpu(op, &x), "{what} (exact)");
            }
        }
    }
}

#[test]
fn reduce_f32_within_bound() {
    let mut rng = Rng(4);
    check_float_reduce::<f32>(U32, |n| rng.f32s(n));
}

#[test]
fn reduce_f64_within_bound() {
    let mut rng = Rng(5);
    check_float_reduce::<f64>(U64, |n| rng.f64s(n));
}

#[test]
fn sum_and_dot_of_dyadic_f32_exact() {
    // Every partial sum of these inputs is exact (see `Rng::dyadic`); the dot multiplies
    // them by ±1, which keeps them dyadic values of the same kind.
    let gpu = gpu();
    let mut rng = Rng(6);
    for &n in LENS {
        let x = rng.dyadic(n);
        let signs: Vec<f32> = rng
            .u32s(n)
            .iter()
            .map(|&v| if v & 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let (sum, _) = vector::sum_f64(&x);
        let got = host::vector::reduce(&gpu, ReduceOp::Sum, &x).expect("sum");
        assert_eq!(f64::from(got), sum, "dyadic sum n = {n}");
        let (dot, _) = vector::dot_f64(&x, &signs);
        let got = host::vector::dot(&gpu, &x, &signs).expect("dot");
        assert_eq!(f64::from(got), dot, "dyadic dot n = {n}");
    }
}

fn check_dot<T: Float>(u: f64, mut xs: impl FnMut(usize) -> Vec<T>) {
    let gpu = gpu();
    for &n in LENS {
        let (a, b) = (xs(n), xs(n));
        let what = format!("dot {} n = {n}", T::NAME);
        let got: f64 = host::vector::dot(&gpu, &a, &b)
            .unwrap_or_else(|e| panic!("{what}: {e}"))
            .into();
        // n products and n - 1 additions, each product rounded at most once (fused or
        // not): γ_n · Σ|a_i·b_i| (Higham §3.1).
        let (dot, abs) = vector::dot_f64(&a, &b);
        assert_within(&what, dot, got, gamma(n, u) * abs);
    }
}

#[test]
fn dot_f32_within_bound() {
    let mut rng = Rng(7);
    check_dot::<f32>(U32, |n| rng.f32s(n));
}

#[test]
fn dot_f64_within_bound() {
    let mut rng = Rng(8);
    check_dot::<f64>(U64, |n| rng.f64s(n));
}

#[test]
fn scan_u32_identical_to_cpu() {
    let gpu = gpu();
    let mut rng = Rng(9);
    for &n in LENS.iter().chain(&[(1 << 22) + 3]) {
        let x = rng.u32s(n);
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let got = host::vector::scan(&gpu, kind, &x).unwrap_or_else(|e| panic!("n = {n}: {e}"));
            assert_identical(
                &format!("{kind:?} scan u32 n = {n}"),
                &vector::scan_u32_cpu(kind, &x),
                &got,
            );
        }
    }
}

#[test]
fn scan_f32_within_bound_and_exact_on_dyadic_input() {
    let gpu = gpu();
    let mut rng = Rng(10);
    for &n in LENS {
        for dyadic in [false, true] {
            let x = if dyadic { rng.dyadic(n) } else { rng.f32s(n) };
            for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
                let what = format!("{kind:?} scan f32 n = {n} dyadic = {dyadic}");
                let got =
                    host::vector::scan(&gpu, kind, &x).unwrap_or_else(|e| panic!("{what}: {e}"));
                let reference = vector::scan_f64(kind, &x);
                for (i, (&g, &(v, abs))) in got.iter().zip(&reference).enumerate() {
                    // Element i sums at most i + 1 terms in some tree order: γ_{i+1}·Σ|x|;
                    // 0 for dyadic inputs (every partial sum exact).
                    let bound = if dyadic { 0.0 } else { gamma(i + 1, U32) * abs };
                    assert_within(&format!("{what}, element {i}"), v, f64::from(g), bound);
                }
            }
        }
    }
}

#[test]
fn scan_f64_within_bound() {
    let gpu = gpu();
    let mut rng = Rng(14);
    for &n in LENS.iter().chain(&[(1 << 21) + 3]) {
        let x = rng.f64s(n);
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let what = format!("{kind:?} scan f64 n = {n}");
            let got = host::vector::scan(&gpu, kind, &x).unwrap_or_else(|e| panic!("{what}: {e}"));
            let reference = vector::scan_f64(kind, &x);
            for (i, (&g, &(v, abs))) in got.iter().zip(&reference).enumerate() {
                // The GPU's tree order and the reference's sequential order each err by at
                // most γ_{i+1}·Σ|x| (both round in f64).
                let bound = 2.0 * gamma(i + 1, U64) * abs;
                assert_within(&format!("{what}, element {i}"), v, g, bound);
            }
        }
    }
}

#[test]
fn affine_scan_identical_to_cpu() {
    // The user-operator scan: composition of affine maps mod 2^32 is exact and not
    // commutative, so any reordering of the look-back or the warp scans shows up.
    let gpu = gpu();
    let mut rng = Rng(15);
    for &n in LENS.iter().chain(&[(1 << 22) + 3]) {
        let x: Vec<u64> = (0..n)
            .map(|_| {
                let r = rng.next_u64();
                kernels::scan::affine(r as u32 | 1, (r >> 32) as u32)
            })
            .collect();
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let got = host::vector::affine_scan(&gpu, kind, &x)
                .unwrap_or_else(|e| panic!("n = {n}: {e}"));
            assert_identical(
                &format!("{kind:?} affine scan n = {n}"),
                &vector::affine_scan_cpu(kind, &x),
                &got,
            );
        }
    }
}

#[test]
fn sgemm_within_bound() {
    let gpu = gpu();
    let mut rng = Rng(11);
    let shapes = [
        (1, 1, 1),
        (1, 7, 3),
        (129, 67, 33),
        (128, 128, 128),
        (64, 4, 8),
        (257, 511, 100),
        (300, 260, 517),
        // k and n multiples of 4: the sm_80 `cp.async` kernel on sm_80+ devices (partial
        // tiles in m, n and k, k below one stage).
        (257, 516, 100),
        (300, 260, 516),
        (5, 8, 4),
    ];
    for &(m, n, k) in &shapes {
        for (alpha, beta) in [(1.0f32, 0.0f32), (-0.75, 1.5)] {
            let what = format!("sgemm m={m} n={n} k={k} alpha={alpha} beta={beta}");
            let a = rng.f32s(m * k);
            let b = rng.f32s(k * n);
            // With beta = 0, C must not be read: NaNs in it must not reach the result.
            let c: Vec<f32> = if beta == 0.0 {
                vec![<f32 as Element>::POISON; m * n]
            } else {
                rng.f32s(m * n)
            };
            let dims = (m as u32, n as u32, k as u32);
            let got = host::vector::sgemm(&gpu, dims, alpha, &a, &b, beta, &c)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let c0: Vec<f32> = if beta == 0.0 {
                vec![0.0; m * n]
            } else {
                c.clone()
            };
            let reference = vector::sgemm_f64((m, n, k), alpha, &a, &b, beta, &c0);
            for (idx, (&g, &(v, scale))) in got.iter().zip(&reference).enumerate() {
                // k fused multiply-adds into the accumulator (γ_k), then α·acc and the fused
                // β·c + (α·acc): two more roundings — γ_{k+2}·(|α|Σ|a·b| + |β||c|).
                assert_within(
                    &format!("{what}, C[{}][{}]", idx / n, idx % n),
                    v,
                    f64::from(g),
                    gamma(k + 2, U32) * scale,
                );
            }
        }
    }
}

/// `alpha · a·b + beta · c` in `f32` as both SGEMM kernels compute it: each output
/// accumulated over k in increasing order with fused multiply-adds from 0, then `alpha · acc`
/// and, when `beta != 0`, `fma(beta, c, alpha · acc)`.
fn sgemm_fma_in_order(
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &[f32],
) -> Vec<f32> {
    let mut out = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let acc = (0..k).fold(0.0f32, |acc, p| a[i * k + p].mul_add(b[p * n + j], acc));
            let ab = alpha * acc;
            out[i * n + j] = if beta == 0.0 {
                ab
            } else {
                beta.mul_add(c[i * n + j], ab)
            };
        }
    }
    out
}

#[test]
fn sgemm_bit_identical_to_in_order_fma() {
    // Both kernels (the `cp.async` one when k and n are multiples of 4 on sm_80+, the
    // baseline otherwise) must give exactly the in-order FMA sums: the bits cuBLAS gives.
    // The CPU emulator runs the `cp.async` kernel only (the baseline's shared-window loads
    // have no host version), so there the other shapes are skipped.
    let gpu = gpu();
    let mut rng = Rng(13);
    let shapes: [(usize, usize, usize); 7] = [
        (128, 256, 16),
        (129, 260, 20),
        (300, 516, 36),
        (1, 4, 4),
        (257, 512, 1028),
        (129, 67, 33),
        (64, 130, 64),
    ];
    for &(m, n, k) in &shapes {
        if gpu.is_emulator() && !(n.is_multiple_of(4) && k.is_multiple_of(4)) {
            continue;
        }
        for (alpha, beta) in [(1.0f32, 0.0f32), (-0.75, 1.5)] {
            let what = format!("sgemm m={m} n={n} k={k} alpha={alpha} beta={beta}");
            let a = rng.f32s(m * k);
            let b = rng.f32s(k * n);
            let c: Vec<f32> = if beta == 0.0 {
                vec![<f32 as Element>::POISON; m * n]
            } else {
                rng.f32s(m * n)
            };
            let dims = (m as u32, n as u32, k as u32);
            let got = host::vector::sgemm(&gpu, dims, alpha, &a, &b, beta, &c)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let want = sgemm_fma_in_order((m, n, k), alpha, &a, &b, beta, &c);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            assert_identical(&what, &bits(&want), &bits(&got));
        }
    }
}

#[test]
fn scan_u32_repeated_on_one_scratch() {
    // The single-pass scan keeps state between launches (status-word epochs, the tile
    // counter's base): the same scratch must give exact results launch after launch, for
    // both kinds and for a shorter input on a scratch made for a longer one.
    let gpu = gpu();
    let mut rng = Rng(12);
    let n = (1 << 21) + 5;
    let mut scratch = host::vector::scratch::<u32>(&gpu, n).expect("scratch");
    for (round, len) in [n, n, 1000, n - 4096, 1, n].into_iter().enumerate() {
        let x = rng.u32s(len);
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let x_d = host::vector::upload(&gpu, &x).expect("upload");
            let mut out = host::vector::poisoned::<u32>(&gpu, len).expect("alloc");
            host::vector::scan_dev(
                &gpu,
                kind,
                &x_d.as_slice(),
                scratch.scan_state(),
                &mut out.as_mut_slice(),
            )
            .and_then(|()| gpu.synchronize())
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let got = out.as_host_vec().expect("download");
            assert_identical(
                &format!("{kind:?} scan u32 round {round} len {len}"),
                &vector::scan_u32_cpu(kind, &x),
                &got[..len],
            );
        }
    }
}

#[test]
fn scans_on_unaligned_views_identical_to_cpu() {
    // Scans of views at element offsets (off any 16-byte boundary, and on one), five full
    // tiles and a partial one, exact types: an offset slip in a kernel's loads, stores or
    // tile bounds shows.
    let gpu = gpu();
    let mut rng = Rng(16);
    let n = 5 * kernels::scan::SCAN_TILE + 77;
    for (xo, oo) in [(1, 3), (4, 1), (2, 0), (0, 0)] {
        let x = rng.u32s(n + xo);
        let x_d = host::vector::upload(&gpu, &x).expect("upload");
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let mut out = host::vector::poisoned::<u32>(&gpu, n + oo).expect("alloc");
            let mut st = host::vector::ScanState::new(&gpu, n).expect("scan state");
            let what = format!("{kind:?} scan u32, x at +{xo}, out at +{oo}");
            x_d.index(xo..)
                .and_then(|xv| Ok((xv, out.index_mut(oo..)?)))
                .and_then(|(xv, mut ov)| host::vector::scan_dev(&gpu, kind, &xv, &mut st, &mut ov))
                .and_then(|()| gpu.synchronize())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = out.as_host_vec().expect("download");
            assert_identical(&what, &vector::scan_u32_cpu(kind, &x[xo..]), &got[oo..]);
        }
    }
    let n = 5 * kernels::scan::SCAN_TILE_WIDE + 77;
    for (xo, oo) in [(1, 0), (0, 1), (1, 1)] {
        let x: Vec<u64> = (0..n + xo)
            .map(|_| {
                let r = rng.next_u64();
                kernels::scan::affine(r as u32 | 1, (r >> 32) as u32)
            })
            .collect();
        let x_d = cust::memory::DeviceBuffer::from_slice_async(&x, gpu.stream()).expect("upload");
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let poison = vec![0xdead_beef_dead_beef_u64; n + oo];
            let mut out =
                cust::memory::DeviceBuffer::from_slice_async(&poison, gpu.stream()).expect("alloc");
            let mut st = host::vector::ScanState::new(&gpu, n).expect("scan state");
            let what = format!("{kind:?} affine scan, x at +{xo}, out at +{oo}");
            x_d.index(xo..)
                .and_then(|xv| Ok((xv, out.index_mut(oo..)?)))
                .and_then(|(xv, mut ov)| {
                    host::vector::affine_scan_dev(&gpu, kind, &xv, &mut st, &mut ov)
                })
                .and_then(|()| gpu.synchronize())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = out.as_host_vec().expect("download");
            assert_identical(&what, &vector::affine_scan_cpu(kind, &x[xo..]), &got[oo..]);
        }
    }
}

#[test]
fn stream_on_unaligned_views_identical_to_cpu() {
    // The safe STREAM kernels take views that do not start on a 16-byte boundary through
    // their element-by-element path instead of faulting.
    let gpu = gpu();
    let mut rng = Rng(13);
    let n = 10_007;
    let (a, b) = (rng.f32s(n + 1), rng.f32s(n + 3));
    let a_d = host::vector::upload(&gpu, &a).expect("upload");
    let b_d = host::vector::upload(&gpu, &b).expect("upload");
    let mut c_d = host::vector::poisoned::<f32>(&gpu, n + 2).expect("alloc");
    let cfg = cust::function::LaunchConfig::for_num_elems(n, 256).expect("config");
    {
        let (av, bv) = (
            a_d.index(1..).expect("view of a"),
            b_d.index(3..).expect("view of b"),
        );
        let mut cv = c_d.index_mut(2..).expect("view of c");
        gpu.module()
            .kernel(kernels::vector::add_f32)
            .and_then(|add| add.launch(gpu.stream(), cfg, (&av, &bv, &mut cv)))
            .and_then(|()| gpu.synchronize())
            .expect("add_f32 on views");
    }
    let got = c_d.as_host_vec().expect("download");
    assert_identical(
        "add f32 on unaligned views",
        &bits32(&add_cpu(&a[1..], &b[3..n + 3])),
        &bits32(&got[2..]),
    );
}

#[test]
fn cubins_are_elf_for_their_architecture() {
    // Present only where ptxas was found at build time; each is an ELF file (the CUDA
    // cubin container).
    for cubin in &host::KERNELS.cubins {
        let ((major, minor), bytes) = ((cubin.arch.major, cubin.arch.minor), cubin.bytes);
        assert!(
            bytes.starts_with(b"\x7fELF"),
            "cubin sm_{major}{minor} is not an ELF file"
        );
        assert!((7..=12).contains(&major), "sm_{major}{minor}");
    }
}
