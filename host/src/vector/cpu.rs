//! CPU references of the vector workloads (re-exported from [`crate::vector`]): exact ones
//! in the GPU's operation order (copy, scale, add, triad, axpy, integer reductions and scans)
//! and `f64` ones with the scale of their error bound (float sums, dot products, float scans,
//! SGEMM). Parallel with rayon where the order does not matter.

use super::{Float, ReduceOp, ScanKind};
use rayon::prelude::*;

/// `a` (the STREAM copy reference).
pub fn copy_cpu<T: Copy + Send + Sync>(a: &[T]) -> Vec<T> {
    a.par_iter().copied().collect()
}

/// `q · c[i]` for every `i` (STREAM scale reference).
pub fn scale_cpu<T: Float>(c: &[T], q: T) -> Vec<T> {
    c.par_iter().map(|&x| q * x).collect()
}

/// `a[i] + b[i]` for every `i` on the CPU (rayon); the reference for the GPU result.
///
/// # Panics
/// If `a` and `b` differ in length.
pub fn add_cpu<T: Float>(a: &[T], b: &[T]) -> Vec<T> {
    assert_eq!(
        a.len(),
        b.len(),
        "add_cpu: a and b must have the same length"
    );
    a.par_iter().zip(b).map(|(&x, &y)| x + y).collect()
}

/// `b[i] + q · c[i]`, product and sum rounded separately (STREAM triad reference).
pub fn triad_cpu<T: Float>(b: &[T], c: &[T], q: T) -> Vec<T> {
    b.par_iter().zip(c).map(|(&x, &y)| x + q * y).collect()
}

/// `fma(alpha, x[i], y[i])` (axpy reference, one rounding per element as on the GPU).
pub fn axpy_cpu<T: Float>(alpha: T, x: &[T], y: &[T]) -> Vec<T> {
    x.par_iter()
        .zip(y)
        .map(|(&xi, &yi)| alpha.mul_add(xi, yi))
        .collect()
}

/// `(Σ x[i], Σ |x[i]|)` in `f64` (reference and error-bound scale for float sums).
pub fn sum_f64<T: Into<f64> + Copy + Send + Sync>(x: &[T]) -> (f64, f64) {
    x.par_iter()
        .map(|&v| {
            let v: f64 = v.into();
            (v, v.abs())
        })
        .reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// `(Σ a[i]·b[i], Σ |a[i]·b[i]|)` in `f64`.
pub fn dot_f64<T: Into<f64> + Copy + Send + Sync>(a: &[T], b: &[T]) -> (f64, f64) {
    a.par_iter()
        .zip(b)
        .map(|(&x, &y)| {
            let p = x.into() * y.into();
            (p, p.abs())
        })
        .reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Exact reductions of `u32` (wrapping sum, min, max), as the GPU computes them.
pub fn reduce_u32_cpu(op: ReduceOp, x: &[u32]) -> u32 {
    let it = x.par_iter().copied();
    match op {
        ReduceOp::Sum => it.reduce(|| 0, u32::wrapping_add),
        ReduceOp::Min => it.min().unwrap_or(u32::MAX),
        ReduceOp::Max => it.max().unwrap_or(0),
    }
}

/// Min or max of floats (exact in any order for NaN-free input); `Sum` is [`sum_f64`]'s job.
///
/// # Panics
/// For [`ReduceOp::Sum`].
pub fn min_max_cpu<T: Float + PartialOrd>(op: ReduceOp, x: &[T]) -> f64 {
    let it = x.par_iter().map(|&v| v.into());
    match op {
        ReduceOp::Min => it.reduce(|| f64::INFINITY, f64::min),
        ReduceOp::Max => it.reduce(|| f64::NEG_INFINITY, f64::max),
        ReduceOp::Sum => panic!("min_max_cpu: use sum_f64 for sums"),
    }
}

/// Wrapping prefix sum of `u32` (exact reference).
pub fn scan_u32_cpu(kind: ScanKind, x: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    x.iter()
        .map(|&v| {
            let before = acc;
            acc = acc.wrapping_add(v);
            if kind == ScanKind::Inclusive {
                acc
            } else {
                before
            }
        })
        .collect()
}

/// Prefix sum of `f32` or `f64` in `f64`, with the running `Σ |x|` (for error bounds):
/// `(value, abs_sum)` per element. For `f64` input the reference itself rounds (sequential
/// order), within `(i − 1)·u·Σ|x|` at element `i`.
pub fn scan_f64<T: Into<f64> + Copy>(kind: ScanKind, x: &[T]) -> Vec<(f64, f64)> {
    let (mut s, mut a) = (0.0f64, 0.0f64);
    x.iter()
        .map(|&v| {
            let v: f64 = v.into();
            let before = (s, a);
            s += v;
            a += v.abs();
            if kind == ScanKind::Inclusive {
                (s, a)
            } else {
                before
            }
        })
        .collect()
}

/// The affine-map scan reference (`kernels::scan::Affine`): maps `x ↦ a·x + b` (mod 2^32)
/// packed as `a | b << 32`, composed in order ("`x[0]`, then `x[1]`, …"); exclusive scans
/// start from the identity `(1, 0)`. Exact (wrapping arithmetic), so the GPU must equal it.
pub fn affine_scan_cpu(kind: ScanKind, x: &[u64]) -> Vec<u64> {
    use kernels::reduce::Op;
    use kernels::scan::Affine;
    let mut acc = <Affine as Op<u64>>::IDENTITY;
    x.iter()
        .map(|&f| {
            let before = acc;
            acc = <Affine as Op<u64>>::combine(acc, f);
            if kind == ScanKind::Inclusive {
                acc
            } else {
                before
            }
        })
        .collect()
}

/// SGEMM reference in `f64`: per element of `C`, `(α·Σ_p a_ip·b_pj + β·c_ij,
/// |α|·Σ_p |a_ip·b_pj| + |β|·|c_ij|)` — the value and the scale of its error bound.
pub fn sgemm_f64(
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    a: &[f32],
    b: &[f32],
    beta: f32,
    c: &[f32],
) -> Vec<(f64, f64)> {
    let (alpha, beta) = (f64::from(alpha), f64::from(beta));
    (0..m * n)
        .into_par_iter()
        .map(|idx| {
            let (i, j) = (idx / n, idx % n);
            let (mut s, mut t) = (0.0f64, 0.0f64);
            for p in 0..k {
                let prod = f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
                s += prod;
                t += prod.abs();
            }
            let cij = f64::from(c[idx]);
            (
                alpha * s + beta * cij,
                alpha.abs() * t + beta.abs() * cij.abs(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_references() {
        let x = [3u32, u32::MAX, 5];
        assert_eq!(reduce_u32_cpu(ReduceOp::Sum, &x), 7);
        assert_eq!(reduce_u32_cpu(ReduceOp::Min, &x), 3);
        assert_eq!(reduce_u32_cpu(ReduceOp::Max, &x), u32::MAX);
        assert_eq!(scan_u32_cpu(ScanKind::Inclusive, &x), [3, 2, 7]);
        assert_eq!(scan_u32_cpu(ScanKind::Exclusive, &x), [0, 3, 2]);
    }

    #[test]
    fn affine_reference_composes_in_order() {
        use kernels::scan::affine;
        // (2x + 1), then (3x + 5): 3(2x + 1) + 5 = 6x + 8; then (x + 7): 6x + 15.
        let x = [affine(2, 1), affine(3, 5), affine(1, 7)];
        assert_eq!(
            affine_scan_cpu(ScanKind::Inclusive, &x),
            [affine(2, 1), affine(6, 8), affine(6, 15)]
        );
        assert_eq!(
            affine_scan_cpu(ScanKind::Exclusive, &x),
            [affine(1, 0), affine(2, 1), affine(6, 8)]
        );
        // Wrapping: 2^31 · 2 = 0 mod 2^32.
        let w = affine_scan_cpu(ScanKind::Inclusive, &[affine(1 << 31, 0), affine(2, 0)]);
        assert_eq!(w[1], affine(0, 0));
    }

    #[test]
    fn sgemm_reference_small() {
        // [1 2; 3 4] · [5 6; 7 8] = [19 22; 43 50]; α = 2, β = 1, C = 1.
        let r = sgemm_f64(
            (2, 2, 2),
            2.0,
            &[1., 2., 3., 4.],
            &[5., 6., 7., 8.],
            1.0,
            &[1.0; 4],
        );
        let v: Vec<f64> = r.iter().map(|p| p.0).collect();
        assert_eq!(v, [39.0, 45.0, 87.0, 101.0]);
    }
}
