//! The accuracy check of the GEMM rows: the largest sampled error of a `C` against an `f64`
//! reference ([`accuracy`]) and what is wrong with ours ([`flags`]).

use super::precision::Exact;
use rayon::prelude::*;

/// Elements of `C` whose error is checked (plus the four corners).
const SAMPLES: u64 = 256;

/// The error check of one result: the largest sampled relative error and how many
/// elements of `C` are not finite.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Accuracy {
    pub(super) max_rel: f64,
    pub(super) non_finite: usize,
}

/// Checks row-major `c` (m×n) = `scale`·`a`·`b`ᵀ (`a` m×k, `b` n×k, row-major) on
/// [`SAMPLES`] pseudo-random elements and the four corners, against an `f64` reference from
/// the same inputs; relative errors are to `scale·Σ_p |a_ip·b_jp|`. Non-finite elements are
/// counted over all of `c`.
pub(super) fn accuracy<A: Exact, C: Exact>(
    c: &[C],
    a: &[A],
    b: &[A],
    (m, n, k): (usize, usize, usize),
    scale_c: f64,
) -> Accuracy {
    let non_finite = c.par_iter().filter(|x| !x.to_f64().is_finite()).count();
    let corners = [0, n - 1, (m - 1) * n, m * n - 1];
    let max_rel = (0..SAMPLES)
        .map(|s| (s.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize % (m * n))
        .chain(corners)
        .map(|idx| {
            let (i, j) = (idx / n, idx % n);
            let (row_a, row_b) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
            let (mut v, mut abs) = (0.0f64, 0.0f64);
            for (&x, &y) in row_a.iter().zip(row_b) {
                let prod = x.to_f64() * y.to_f64();
                v += prod;
                abs += prod.abs();
            }
            let (v, abs) = (v * scale_c, abs * scale_c);
            let err = (c[idx].to_f64() - v).abs() / abs.max(f64::MIN_POSITIVE);
            // A NaN must not vanish in `max`.
            if err.is_nan() { f64::INFINITY } else { err }
        })
        .fold(0.0f64, f64::max);
    Accuracy {
        max_rel,
        non_finite,
    }
}

/// What is wrong with our result `ours`, given cuBLAS's (`blas`, if it ran) and the
/// standard `bound`: non-finite elements, an error above 2× cuBLAS's, an error above the
/// bound. Empty when nothing is. (`max_rel` is never NaN: [`accuracy`] makes it infinite.)
pub(super) fn flags(ours: &Accuracy, blas: Option<&Accuracy>, bound: f64) -> Vec<String> {
    let mut out = Vec::new();
    if ours.non_finite > 0 {
        out.push(format!("{} non-finite elements in C", ours.non_finite));
    }
    if let Some(b) = blas
        && ours.max_rel > 2.0 * b.max_rel
    {
        out.push(format!(
            "max err {:.2e} is worse than 2x cuBLAS's {:.2e}",
            ours.max_rel, b.max_rel
        ));
    }
    if ours.max_rel > bound {
        out.push(format!(
            "max err {:.2e} exceeds the standard bound {bound:.2e}",
            ours.max_rel
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::precision::{FP8_SCALES, GemmPrecision};
    use super::super::random_operand;
    use super::*;
    use crate::bench::random_f64;
    use cuda_std::half::{F8E4M3, bf16};

    #[test]
    fn accuracy_finds_errors_and_non_finite_elements() {
        let (m, n, k) = (4, 6, 5);
        let a: Vec<f32> = random_operand(1, m * k);
        let b: Vec<f32> = random_operand(2, n * k);
        let mut c: Vec<f32> = (0..m * n)
            .map(|idx| {
                let (i, j) = (idx / n, idx % n);
                (0..k)
                    .map(|p| f64::from(a[i * k + p]) * f64::from(b[j * k + p]))
                    .sum::<f64>() as f32
            })
            .collect();
        let exact = accuracy(&c, &a, &b, (m, n, k), 1.0);
        assert_eq!(exact.non_finite, 0);
        assert!(exact.max_rel < 1e-7, "{exact:?}");
        // A corner is always sampled: spoil it.
        c[m * n - 1] += 0.5;
        let spoiled = accuracy(&c, &a, &b, (m, n, k), 1.0);
        assert!(spoiled.max_rel > 1e-3, "{spoiled:?}");
        c[0] = f32::NAN;
        let nan = accuracy(&c, &a, &b, (m, n, k), 1.0);
        assert_eq!(nan.non_finite, 1);
        assert_eq!(nan.max_rel, f64::INFINITY);
    }

    #[test]
    fn flags_name_what_is_wrong() {
        let good = Accuracy {
            max_rel: 1e-3,
            non_finite: 0,
        };
        assert!(flags(&good, Some(&good), 4e-3).is_empty());
        let worse = Accuracy {
            max_rel: 2.5e-3,
            ..good
        };
        let f = flags(&worse, Some(&good), 4e-3);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].contains("worse than 2x cuBLAS"), "{f:?}");
        let nan = Accuracy {
            max_rel: f64::INFINITY,
            non_finite: 3,
        };
        assert_eq!(flags(&nan, None, 4e-3).len(), 2);
    }

    /// The FP8 rows' check: E4M3 inputs, a bf16 `C` scaled by `scale_a·scale_b`; a `C`
    /// that left out the scale is far off.
    #[test]
    fn fp8_accuracy_applies_the_scale() {
        let (m, n, k) = (3, 5, 32);
        let fp8 = |seed, len| -> Vec<F8E4M3> {
            random_f64(seed, len)
                .into_iter()
                .map(|v| F8E4M3::from_f32((2.0 * (v - 1.0)) as f32))
                .collect()
        };
        let (a, b) = (fp8(1, m * k), fp8(2, n * k));
        let scale = f64::from(FP8_SCALES.0) * f64::from(FP8_SCALES.1);
        let product = |s: f64| -> Vec<bf16> {
            (0..m * n)
                .map(|idx| {
                    let (i, j) = (idx / n, idx % n);
                    let v: f64 = (0..k)
                        .map(|p| a[i * k + p].to_f64() * b[j * k + p].to_f64())
                        .sum();
                    bf16::from_f64(s * v)
                })
                .collect()
        };
        let good = accuracy(&product(scale), &a, &b, (m, n, k), scale);
        assert!(
            good.max_rel <= GemmPrecision::E4m3.error_bound(k),
            "{good:?}"
        );
        let unscaled = accuracy(&product(1.0), &a, &b, (m, n, k), scale);
        assert!(unscaled.max_rel > 0.1, "{unscaled:?}");
        assert_eq!(GemmPrecision::from_name("E4M3"), Some(GemmPrecision::E4m3));
    }
}
