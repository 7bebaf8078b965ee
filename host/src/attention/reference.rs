//! The CPU side the tests compare with: the `f64` reference ([`reference_f64`], over
//! `common::attention::reference_row`) and the kernels' stated [`error_bound`].

use super::{AttentionShape, AttnElem};

/// One query row of the `f64` reference: `O[row]` (`D` values) and `L[row]`, with the
/// quantities [`error_bound`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceRow {
    /// `O` of the row, exact up to `f64` rounding.
    pub o: Vec<f64>,
    /// `L` of the row.
    pub lse: f64,
    /// `max_j |v_jd|` over the visible keys, per column `d`.
    pub v_max: Vec<f64>,
    /// `max_j Σ_d |q_d·k_jd|` over the visible keys (the scores' condition).
    pub score_abs: f64,
    /// The number of visible keys.
    pub keys: usize,
}

/// Attention in `f64` for the query rows `rows` (each `(head, row)`, `head` in `0..B·H`
/// counting batch-major as the layout does), from the inputs as stored (each element
/// exactly as `f64`), with `common::attention::reference_row`.
///
/// # Panics
/// If the buffers are shorter than `shape` needs or a row is outside it.
pub fn reference_f64<T: AttnElem>(
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
    rows: &[(usize, usize)],
) -> Vec<ReferenceRow> {
    let AttentionShape {
        heads,
        kv_heads,
        seq_len: s,
        head_dim: d,
        causal,
        ..
    } = shape;
    rows.iter()
        .map(|&(head, row)| {
            let (b, h) = (head / heads, head % heads);
            let kv = b * kv_heads
                + common::attention::kv_head(h as u32, heads as u32, kv_heads as u32) as usize;
            let keys = if causal { row + 1 } else { s };
            let to = |x: &[T]| x.iter().map(|e| e.to_f64()).collect::<Vec<_>>();
            let qr = to(&q[(head * s + row) * d..][..d]);
            let kr = to(&k[kv * s * d..][..keys * d]);
            let vr = to(&v[kv * s * d..][..keys * d]);
            let mut o = vec![0.0; d];
            let scale = 1.0 / (d as f64).sqrt();
            let lse = common::attention::reference_row(&qr, &kr, &vr, d, keys, scale, &mut o);
            let v_max = (0..d)
                .map(|c| (0..keys).map(|j| vr[j * d + c].abs()).fold(0.0, f64::max))
                .collect();
            let score_abs = (0..keys)
                .map(|j| (0..d).map(|c| (qr[c] * kr[j * d + c]).abs()).sum::<f64>())
                .fold(0.0, f64::max);
            ReferenceRow {
                o,
                lse,
                v_max,
                score_abs,
                keys,
            }
        })
        .collect()
}

/// Error bounds `(on O[row][col], on L[row])` of the kernels against [`reference_f64`]'s
/// row `r`, column `col`, for element type `T` and head dimension `d`. With `u = 2⁻²³` (the
/// f32 unit doubled, since tensor-core f32 accumulation may truncate), `γ_n = n·u/(1 − n·u)`
/// (Higham, "Accuracy and Stability of Numerical Algorithms", §3.1) and `u_T` the type's
/// unit roundoff ([`AttnElem::UNIT`]):
/// - each score `x_j = q·k_j/√D` is off by at most `ε = (γ_D + 4u)·A/√D` with
///   `A = max_j Σ|q||k_j|` (the f32 dot product; the 4u the scaling by `log2(e)/√D` and the
///   subtraction of the maximum), and `2^x` adds a relative `2u`
///   (`cuda_std::math::ex2_approx`, checked within 2⁻²² by `ex2_approx_is_within_its_bound`):
///   each weight `p_j` is off by a relative `η = ε + 2u` (to first order), the normalised
///   weights by `2η`, which moves `O` by at most `2η·V` where `V = max_j |v_jd|`;
/// - `P` is rounded to `T` before `P·V` (the sum `l` is not): at most `u_T·V`;
/// - `P·V` sums `n` (visible keys) products in f32: `γ_n·(1 + u_T)·V`;
/// - the division by `l` and the rounding of `O` to `T`: `u·|o| + u_T·(|o| + the above)`.
///
/// `L = m·ln 2 + ln l` is off by `η + γ_n + 2u` (the relative error of `l`, as an
/// absolute error of its log) plus `4u·|L|` (its f32 arithmetic).
#[must_use]
pub fn error_bound<T: AttnElem>(d: usize, r: &ReferenceRow, col: usize) -> (f64, f64) {
    let u = 2f64.powi(-23);
    let gamma = |n: usize| {
        let nu = n as f64 * u;
        nu / (1.0 - nu)
    };
    let eps = (gamma(d) + 4.0 * u) * r.score_abs / (d as f64).sqrt();
    let eta = eps + 2.0 * u;
    let v = r.v_max[col];
    let o = r.o[col].abs();
    let inner = 2.0 * eta * v + T::UNIT * v + gamma(r.keys) * (1.0 + T::UNIT) * v;
    let o_bound = inner + u * o + T::UNIT * (o + inner);
    let l_bound = eta + gamma(r.keys) + 2.0 * u + 4.0 * u * r.lse.abs();
    (o_bound, l_bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_std::half::bf16;

    #[test]
    fn the_reference_reads_the_shared_kv_head_and_stops_at_the_diagonal() {
        // B = 1, H = 2, H_kv = 1, S = 2, D = 64: both query heads read K/V head 0.
        let shape = AttentionShape::new(1, 2, 2, 64).with_kv_heads(1);
        let q = vec![bf16::from_f32(0.0); shape.q_len()];
        let k = vec![bf16::from_f32(0.0); shape.kv_len()];
        let v: Vec<bf16> = (0..shape.kv_len())
            .map(|i| bf16::from_f32(if i < 64 { 1.0 } else { 3.0 }))
            .collect();
        let rows = reference_f64(shape, &q, &k, &v, &[(1, 1), (1, 0)]);
        // Equal scores: the mean of the visible values, L = ln(keys).
        assert_eq!(rows[0].o[5], 2.0);
        assert!((rows[0].lse - 2f64.ln()).abs() < 1e-15);
        let causal = reference_f64(shape.with_causal(true), &q, &k, &v, &[(1, 0)]);
        assert_eq!(
            (causal[0].o[0], causal[0].lse, causal[0].keys),
            (1.0, 0.0, 1)
        );
        assert_eq!(rows[1].keys, 2);
    }
}
