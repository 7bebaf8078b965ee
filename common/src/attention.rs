//! Scaled dot-product attention: the rules the GPU kernels (`kernels::attention`) and the CPU
//! reference share, written once.
//!
//! Layout: `Q`, `K`, `V` and `O` are `(B, H, S, D)` row-major (batch, head, sequence
//! position, head dimension): element `(b, h, s, d)` of a tensor with `heads` heads at
//! `((b·heads + h)·S + s)·D + d`. `K` and `V` have `kv_heads` heads (grouped-query
//! attention: `kv_heads` divides `heads`, and query head `h` reads key/value head
//! `h / (heads / kv_heads)`, [`kv_head`]). The log-sum-exp `L` is `(B, H, S)`.
//!
//! For query row `i` of one head, with `scale` = 1/√D ([`softmax_scale`]) and the visible
//! keys `j` ([`visible`]: all `S`, or `j ≤ i` when causal):
//! `O[i] = Σ_j softmax_j(scale·q_i·k_j) · v_j` and `L[i] = ln Σ_j exp(scale·q_i·k_j)`.

use cuda_std::math::{exp, floorf, fmaf, log, sqrtf};

/// `log2(e)`: the kernels evaluate `exp(x)` as `exp2(x·log2(e))`.
pub const LOG2_E: f32 = core::f32::consts::LOG2_E;

/// `2^x` with the same bits on the CPU and the GPU, for a softmax that must reproduce
/// exactly (the attention kernel used it until it took the faster
/// `cuda_std::math::ex2_approx`, which agrees only within a relative 2⁻²²): relative error
/// below 2⁻²³ for `x` in [−126, 128) (the unit test measures it over 2²⁰ points of
/// [−126, 0]); 0 below −126 (results under `f32`'s smallest normal flush to zero, as PTX
/// `ex2.approx.ftz` does, and `−∞`, a masked score, gives 0); NaN for NaN.
///
/// `x = n + f` with `n = floor(x)`: a degree-6 polynomial in `f` ∈ [0, 1) (interpolating
/// `2^f` at the 7 Chebyshev nodes of [0, 1], coefficients rounded to `f32`), evaluated with
/// fused multiply-adds (`cuda_std::math::fmaf`: one `fma.rn` on the GPU, correctly rounded
/// on the CPU, so both give the same bits), times `2^n` built from its exponent bits. About
/// ten instructions on the GPU, against `libm`'s table-driven `exp2f` in `f64`.
///
/// ```
/// use common::attention::softmax_exp2;
/// assert_eq!(softmax_exp2(0.0), 1.0);
/// assert_eq!(softmax_exp2(-3.0), 0.125);
/// assert_eq!(softmax_exp2(f32::NEG_INFINITY), 0.0);
/// assert!(softmax_exp2(f32::NAN).is_nan());
/// ```
#[inline(always)]
#[must_use]
pub fn softmax_exp2(x: f32) -> f32 {
    // Interpolation coefficients (c0 = 1 exactly), lowest degree first.
    const C: [f32; 7] = [
        1.0,
        0.693_146_94,
        0.240_230_46,
        0.055_480_63,
        0.009_684_186,
        0.001_239_133_2,
        0.000_218_657_85,
    ];
    if x < -126.0 {
        return 0.0;
    }
    if x >= 128.0 {
        return f32::INFINITY;
    }
    let n = floorf(x);
    let f = x - n;
    let mut p = C[6];
    p = fmaf(p, f, C[5]);
    p = fmaf(p, f, C[4]);
    p = fmaf(p, f, C[3]);
    p = fmaf(p, f, C[2]);
    p = fmaf(p, f, C[1]);
    p = fmaf(p, f, C[0]);
    // n in −126..=127 here (NaN converts to 0 and stays NaN through `p`): a normal power
    // of two.
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    p * scale
}

/// The softmax scale for head dimension `head_dim`: `1/√head_dim` (the convention of
/// "Attention Is All You Need", §3.2.1, and of torch's `scaled_dot_product_attention`).
///
/// ```
/// assert_eq!(common::attention::softmax_scale(64), 0.125);
/// ```
#[must_use]
pub fn softmax_scale(head_dim: u32) -> f32 {
    1.0 / sqrtf(head_dim as f32)
}

/// The key/value head that query head `head` reads when `heads` query heads share
/// `kv_heads` key/value heads (`kv_heads` divides `heads`; `kv_heads == heads` is ordinary
/// multi-head attention).
///
/// ```
/// use common::attention::kv_head;
/// assert_eq!(kv_head(5, 32, 32), 5); // multi-head
/// assert_eq!(kv_head(5, 32, 8), 1); // 4 query heads per key/value head
/// assert_eq!(kv_head(31, 32, 1), 0); // multi-query
/// ```
#[must_use]
pub const fn kv_head(head: u32, heads: u32, kv_heads: u32) -> u32 {
    head / (heads / kv_heads)
}

/// The (head, query tile) of block `block` of an attention grid of `heads_total` = `B·H`
/// heads of `q_tiles` query tiles each, or `None` past the grid.
///
/// The blocks of one head are neighbours, so the blocks resident together read the `K` and
/// `V` of a few heads, from L2; within a head the last query tiles, which visit the most key
/// tiles when causal, come first.
///
/// Tried and not kept (H200, `ferrocuda bench --attention`, the `wgmma` kernel, eight rounds
/// alternating in one run): groups of 8 or 16 heads with the tile before the head, which a
/// greedy-dispatch model of the causal 4 × 32 × 4096 × 128 grid on 132 multiprocessors
/// puts at 1.002× the ideal balance against 1.033× for this order: causal medians 512 and
/// 506 TFLOP/s against 507 (within noise), and the non-causal shape 2–5 % slower (561 and 546
/// against 572).
///
/// ```
/// use common::attention::block_tile;
/// // 2 heads of 3 tiles: head 0's tiles last first, then head 1's.
/// let order: Vec<_> = (0..6).map(|b| block_tile(b, 3, 2).unwrap()).collect();
/// assert_eq!(order, [(0, 2), (0, 1), (0, 0), (1, 2), (1, 1), (1, 0)]);
/// assert_eq!(block_tile(6, 3, 2), None);
/// ```
#[must_use]
pub const fn block_tile(block: u32, q_tiles: u32, heads_total: u32) -> Option<(u32, u32)> {
    let head = block / q_tiles;
    if head >= heads_total {
        return None;
    }
    Some((head, q_tiles - 1 - block % q_tiles))
}

/// Whether query row `query` sees key `key` in a sequence of `seq_len`: the key exists, and
/// with `causal` it is not in the future (`key ≤ query`).
///
/// ```
/// use common::attention::visible;
/// assert!(visible(3, 3, 10, true) && !visible(3, 4, 10, true));
/// assert!(visible(3, 9, 10, false) && !visible(3, 10, 10, false));
/// ```
#[must_use]
pub const fn visible(query: u32, key: u32, seq_len: u32, causal: bool) -> bool {
    key < seq_len && (!causal || key <= query)
}

/// How many key tiles of `tile_cols` keys the query tile `query_tile` (rows
/// `query_tile·tile_rows ..`) must visit in a sequence of `seq_len`: all of them, or with
/// `causal` those up to the one holding the tile's last row (the later ones are wholly in
/// the future of every row of the tile).
///
/// ```
/// use common::attention::key_tiles;
/// assert_eq!(key_tiles(0, 64, 64, 130, false), 3);
/// assert_eq!(key_tiles(0, 64, 64, 130, true), 1);
/// assert_eq!(key_tiles(2, 64, 64, 130, true), 3); // the last, ragged tile
/// ```
#[must_use]
pub const fn key_tiles(
    query_tile: u32,
    tile_rows: u32,
    tile_cols: u32,
    seq_len: u32,
    causal: bool,
) -> u32 {
    let all = seq_len.div_ceil(tile_cols);
    if !causal {
        return all;
    }
    let last_row = (query_tile + 1) * tile_rows - 1;
    let last_row = if last_row < seq_len {
        last_row
    } else {
        seq_len - 1
    };
    let upto = last_row / tile_cols + 1;
    if upto < all { upto } else { all }
}

/// One query row of attention in `f64`: writes `O[i]` (`d` values) to `out` and returns
/// `L[i] = ln Σ_j exp(scale·q·k_j)`, over the first `keys` rows of `k` and `v` (`keys`×`d`,
/// row-major; pass `i + 1` for causal attention, `S` otherwise). The maximum score is
/// subtracted before `exp` (the sum is then at least 1 and cannot overflow).
///
/// # Panics
/// If `keys` is 0, or `q`, `out` hold fewer than `d` values or `k`, `v` fewer than
/// `keys·d`.
///
/// ```
/// use common::attention::reference_row;
/// // Two keys with equal scores: O is the mean of the values, L = ln 2 + score.
/// let (q, k, v) = ([1.0, 0.0], [1.0, 0.0, 1.0, 0.0], [2.0, 4.0, 6.0, 8.0]);
/// let mut o = [0.0; 2];
/// let l = reference_row(&q, &k, &v, 2, 2, 0.5, &mut o);
/// assert_eq!(o, [4.0, 6.0]);
/// assert!((l - (2f64.ln() + 0.5)).abs() < 1e-15);
/// ```
pub fn reference_row(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    d: usize,
    keys: usize,
    scale: f64,
    out: &mut [f64],
) -> f64 {
    assert!(keys > 0, "attention over no keys");
    let q = &q[..d];
    let out = &mut out[..d];
    let score = |j: usize| -> f64 {
        let kj = &k[j * d..(j + 1) * d];
        scale * q.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>()
    };
    let max = (0..keys).map(score).fold(f64::NEG_INFINITY, f64::max);
    out.fill(0.0);
    let mut sum = 0.0;
    for j in 0..keys {
        let p = exp(score(j) - max);
        sum += p;
        for (o, x) in out.iter_mut().zip(&v[j * d..(j + 1) * d]) {
            *o += p * x;
        }
    }
    for o in out.iter_mut() {
        *o /= sum;
    }
    max + log(sum)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn causal_tiles_stop_at_the_diagonal_and_cover_every_visible_key() {
        for seq_len in [1u32, 2, 63, 64, 65, 130, 200] {
            for (rows, cols) in [(64u32, 64u32), (128, 64), (64, 32)] {
                for causal in [false, true] {
                    for tile in 0..seq_len.div_ceil(rows) {
                        let tiles = key_tiles(tile, rows, cols, seq_len, causal);
                        assert!(tiles >= 1 && tiles <= seq_len.div_ceil(cols));
                        // Every key a row of the tile sees lies in the visited tiles.
                        for row in tile * rows..((tile + 1) * rows).min(seq_len) {
                            for key in 0..seq_len {
                                if visible(row, key, seq_len, causal) {
                                    assert!(key / cols < tiles, "{seq_len} {row} {key}");
                                }
                            }
                        }
                        // The last visited tile holds a key some row sees.
                        let first_key = (tiles - 1) * cols;
                        let last_row = ((tile + 1) * rows).min(seq_len) - 1;
                        assert!(visible(last_row, first_key, seq_len, causal));
                    }
                }
            }
        }
    }

    #[test]
    fn every_head_and_query_tile_has_exactly_one_block() {
        for q_tiles in [1u32, 2, 3, 7, 32] {
            for heads_total in [1u32, 2, 7, 8, 9, 17, 128] {
                let blocks = q_tiles * heads_total;
                let mut seen = vec![false; blocks as usize];
                for block in 0..blocks {
                    let (bh, tile) = block_tile(block, q_tiles, heads_total).unwrap();
                    assert!(bh < heads_total && tile < q_tiles);
                    let at = (bh * q_tiles + tile) as usize;
                    assert!(!seen[at], "{q_tiles} {heads_total}: {bh} {tile} twice");
                    seen[at] = true;
                }
                assert_eq!(block_tile(blocks, q_tiles, heads_total), None);
                assert_eq!(block_tile(blocks + 5, q_tiles, heads_total), None);
            }
        }
    }

    #[test]
    fn softmax_exp2_is_within_its_stated_error() {
        // 2²⁰ points over [−126, 0], plus integers and their neighbours.
        let mut worst = 0.0f64;
        let n = 1 << 20;
        let mut check = |x: f32| {
            if x < -126.0 {
                return; // flushed to zero, by design
            }
            let want = 2f64.powf(f64::from(x));
            let got = f64::from(softmax_exp2(x));
            worst = worst.max((got - want).abs() / want);
        };
        for i in 0..=n {
            check(-126.0 * i as f32 / n as f32);
        }
        for k in -126..=0 {
            let x = k as f32;
            check(x);
            // The neighbours on both sides (for x = 0: the smallest subnormals).
            check(f32::from_bits(x.to_bits() + 1));
            if k < 0 {
                check(f32::from_bits(x.to_bits() - 1));
            }
        }
        assert!(worst < 2f64.powi(-23), "largest relative error {worst:e}");
        assert_eq!(softmax_exp2(-126.5), 0.0);
        assert_eq!(softmax_exp2(-1.0), 0.5);
        assert_eq!(softmax_exp2(10.0), 1024.0);
    }

    #[test]
    fn one_key_gives_its_value_and_its_score() {
        let mut o = [0.0; 3];
        let l = reference_row(
            &[1.0, 2.0, 3.0],
            &[1.0, 1.0, 1.0],
            &[7.0, -1.0, 0.5],
            3,
            1,
            0.5,
            &mut o,
        );
        assert_eq!(o, [7.0, -1.0, 0.5]);
        assert_eq!(l, 3.0);
    }
}
