//! The CPU side the tests compare with: the `f64` reference of a product
//! ([`reference_f64`]) and the error bound of one output element ([`error_bound`]).

use super::elem::TcElem;

/// `C[i][j] = Σ_p A[i][p]·B[j][p]` in `f64` (exact for the products; the sum rounded in
/// `f64`) for the elements `(i, j)` in `at` (`a` m×k, `b` n×k, row-major). TF32's
/// rounding of the inputs is not modelled: the f32 values are used as given, and
/// [`error_bound`] covers the difference.
pub fn reference_f64<T: TcElem>(
    k: usize,
    a: &[T::Elem],
    b: &[T::Elem],
    at: &[(usize, usize)],
) -> Vec<f64> {
    rows_dot_f64(k, a, b, at, T::to_f64)
}

/// `Σ_p f(A[i][p])·f(B[j][p])` in `f64` for the elements `(i, j)` in `at` (`a` m×k, `b` n×k,
/// row-major): the reference of every GEMM here, `f` widening one element to `f64`.
pub(crate) fn rows_dot_f64<T: Copy>(
    k: usize,
    a: &[T],
    b: &[T],
    at: &[(usize, usize)],
    f: impl Fn(T) -> f64,
) -> Vec<f64> {
    at.iter()
        .map(|&(i, j)| {
            let (ra, rb) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
            ra.iter().zip(rb).map(|(&x, &y)| f(x) * f(y)).sum()
        })
        .collect()
}

/// The error bound of one output element against the exact product: with
/// `s = Σ_p |a_ip|·|b_jp|` and `c` the exact value,
/// `|ĉ − c| ≤ (2·u_in + u_in² + γ_k)·s + u_out·(|c| + (2·u_in + u_in² + γ_k)·s)`,
/// where `u_in` is [`TcElem::INPUT_UNIT`] (each input's relative error on its way into the
/// tensor core), `γ_k = k·u/(1 − k·u)` with `u = 2⁻²³` (the standard bound of a `k`-term
/// f32 sum, Higham, "Accuracy and Stability of Numerical Algorithms", §3.1, with `u` doubled
/// because the tensor cores' f32 accumulation may truncate instead of rounding to nearest)
/// and `u_out` is [`TcElem::OUTPUT_UNIT`] (the final rounding to the output type).
#[must_use]
pub fn error_bound<T: TcElem>(k: usize, abs_sum: f64, exact: f64) -> f64 {
    let u = 2f64.powi(-23);
    let ku = k as f64 * u;
    let gamma = ku / (1.0 - ku);
    let inputs = 2.0 * T::INPUT_UNIT + T::INPUT_UNIT * T::INPUT_UNIT;
    let accumulate = (inputs + gamma) * abs_sum;
    accumulate + T::OUTPUT_UNIT * (exact.abs() + accumulate)
}

#[cfg(test)]
mod tests {
    use super::super::elem::Tf32;
    use super::*;
    use cuda_std::half::bf16;

    #[test]
    fn the_bound_grows_with_k_and_the_output_unit() {
        let small = error_bound::<bf16>(64, 100.0, 10.0);
        assert!(
            small > 10.0 / 256.0 && small < 10.0 / 256.0 + 0.01,
            "{small}"
        );
        assert!(error_bound::<Tf32>(4096, 100.0, 10.0) > error_bound::<Tf32>(64, 100.0, 10.0));
        // TF32 inputs dominate: two inputs rounded to nearest, about 2·2⁻¹¹ = 2⁻¹⁰ of
        // Σ|a||b|.
        let tf = error_bound::<Tf32>(64, 1000.0, 0.0);
        assert!((0.95..1.05).contains(&tf), "{tf}");
    }

    #[test]
    fn the_reference_sums_rows_of_a_and_b() {
        let a: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0];
        let b: Vec<f32> = vec![5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        // m = 1, n = 2, k = 4.
        assert_eq!(
            reference_f64::<Tf32>(4, &a, &b, &[(0, 0), (0, 1)]),
            [70.0, 110.0]
        );
    }
}
