//! Attention forward (`host::attention`, kernels `kernels::attention`): `O` and the
//! log-sum-exp `L` against the `f64` CPU reference (`host::attention::reference_f64`, over
//! `common::attention::reference_row`), in bf16 and f16, D = 64 and 128, causal and not,
//! grouped-query, ragged `S` and `S` = 1.
//!
//! - Bound: every checked element of `O` and `L` is within `host::attention::error_bound`
//!   (stated there: the score error of an f32 dot product, `2^x`'s, the rounding of `P` to
//!   the input type before `P·V`, the f32 sum over the keys and the rounding of `O`; for
//!   bf16 the rounding of `P` dominates: about 2⁻⁸ of `max|v|`). A wrong fragment layout,
//!   mask or rescaling moves `O` by a sizeable fraction of `|v|` and fails it.
//! - Causal masking is exact: changing the keys and values at positions ≥ `p` leaves the
//!   rows before `p` unchanged bit for bit (`O` and `L`).
//! - Bad shapes are errors naming the value, before any launch.
//!
//! Each test runs every kernel the device has ([`kernels`]: `wgmma` and `mma.sync` on sm_90
//! and on the emulator, `mma.sync` on sm_80 and sm_89). Without a GPU (or with
//! `FERROCUDA_DEVICE=cpu`) the same tests run on the CPU emulator at small shapes
//! (`emulated()`); on a GPU older than sm_80 the kernel tests skip with a message.

use cuda_std::half::{bf16, f16};
use host::Gpu;
use host::attention::{
    AttentionKernel, AttentionOutput, AttentionShape, AttnElem, attention_with, error_bound,
    reference_f64,
};
use tests::{emulated, gpu, mix};

/// Whether `gpu` runs the `mma.sync` kernels (sm_80+; the emulator runs them); prints why
/// not.
fn runs(gpu: &Gpu) -> bool {
    if gpu.is_emulator() {
        return true;
    }
    let cc = gpu
        .context()
        .compute_capability()
        .expect("compute capability");
    if cc.major < 8 {
        eprintln!(
            "skipped: {} ({cc}) cannot run the attention kernels (mma.sync: sm_80+)",
            gpu.name()
        );
        return false;
    }
    true
}

/// The kernels `gpu` runs: both on compute capability 9.0 and the emulator, `mma.sync`
/// otherwise (call after [`runs`]).
fn kernels(gpu: &Gpu) -> Vec<AttentionKernel> {
    match AttentionKernel::best_for(gpu).expect("compute capability") {
        AttentionKernel::Wgmma => vec![AttentionKernel::Wgmma, AttentionKernel::MmaSync],
        AttentionKernel::MmaSync => vec![AttentionKernel::MmaSync],
    }
}

/// [`attention_with`] with `kernel`, panicking with the kernel and shape on an error.
fn attention<T: AttnElem>(
    gpu: &Gpu,
    kernel: AttentionKernel,
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
) -> AttentionOutput<T> {
    attention_with(gpu, kernel, shape, q, k, v)
        .unwrap_or_else(|e| panic!("{} {} attention ({shape}): {e}", kernel.label(), T::NAME))
}

/// `len` values uniform in `[-amp, amp)`, rounded to `T`.
fn uniform<T: AttnElem>(seed: u64, len: usize, amp: f32) -> Vec<T> {
    (0..len)
        .map(|i| {
            let x = (mix(seed, i) >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
            T::from_f32(amp * x)
        })
        .collect()
}

/// The inputs of one case: `Q` in ±2 (so that softmax is peaked enough for the maximum's
/// rescaling to matter), `K` and `V` in ±1.
fn inputs<T: AttnElem>(shape: AttentionShape, seed: u64) -> (Vec<T>, Vec<T>, Vec<T>) {
    (
        uniform(seed, shape.q_len(), 2.0),
        uniform(seed + 1, shape.kv_len(), 1.0),
        uniform(seed + 2, shape.kv_len(), 1.0),
    )
}

/// The rows checked: every row on the emulator, on a GPU the first and last two of each
/// head and 64 others.
fn rows(gpu: &Gpu, shape: AttentionShape) -> Vec<(usize, usize)> {
    let (heads, s) = (shape.batch * shape.heads, shape.seq_len);
    if gpu.is_emulator() || heads * s <= 4096 {
        return (0..heads)
            .flat_map(|h| (0..s).map(move |r| (h, r)))
            .collect();
    }
    let mut out: Vec<(usize, usize)> = (0..heads)
        .flat_map(|h| [0, 1, s - 2, s - 1].map(|r| (h, r)))
        .collect();
    out.extend((0..64).map(|i| ((mix(7, i) as usize) % heads, (mix(8, i) as usize) % s)));
    out
}

/// Runs `shape` and checks `O` and `L` on [`rows`] against the bound; panics naming the
/// first element out of it, with expected, actual and the difference.
fn check_case<T: AttnElem + std::fmt::Debug>(
    gpu: &Gpu,
    kernel: AttentionKernel,
    shape: AttentionShape,
    seed: u64,
) {
    let (q, k, v) = inputs::<T>(shape, seed);
    let out = attention(gpu, kernel, shape, &q, &k, &v);
    let name = format!("{} {}", kernel.label(), T::NAME);
    let at = rows(gpu, shape);
    let reference = reference_f64(shape, &q, &k, &v, &at);
    let d = shape.head_dim;
    let (mut worst_o, mut worst_l) = (0.0f64, 0.0f64);
    for (&(head, row), r) in at.iter().zip(&reference) {
        let base = (head * shape.seq_len + row) * d;
        for (col, &want) in r.o.iter().enumerate() {
            let got = out.o[base + col].to_f64();
            let (bound, _) = error_bound::<T>(d, r, col);
            let diff = (got - want).abs();
            assert!(
                diff <= bound,
                "{name} attention ({shape}): O[head {head}][row {row}][{col}] = {got}, \
                 expected {want} (f64), difference {diff:e} > bound {bound:e}"
            );
            worst_o = worst_o.max(diff / bound);
        }
        let got = f64::from(out.lse[head * shape.seq_len + row]);
        let (_, bound) = error_bound::<T>(d, r, 0);
        let diff = (got - r.lse).abs();
        assert!(
            diff <= bound,
            "{name} attention ({shape}): L[head {head}][row {row}] = {got}, expected {} \
             (f64), difference {diff:e} > bound {bound:e}",
            r.lse
        );
        worst_l = worst_l.max(diff / bound);
    }
    // Every element written (the outputs start as NaN).
    let unwritten = out.o.iter().filter(|x| x.to_f64().is_nan()).count()
        + out.lse.iter().filter(|x| x.is_nan()).count();
    assert_eq!(unwritten, 0, "{name} attention ({shape}): NaN outputs");
    eprintln!(
        "{name} attention ({shape}): {} rows within the bound (largest error / bound: O \
         {worst_o:.3}, L {worst_l:.3})",
        at.len()
    );
}

/// The shapes of the bound test, on the emulator and on a GPU.
fn shapes() -> Vec<AttentionShape> {
    if emulated() {
        vec![
            // Ragged S (two query and key tiles, the second of 6 rows), GQA 2:1.
            AttentionShape::new(1, 2, 70, 64).with_kv_heads(1),
            AttentionShape::new(1, 2, 70, 64)
                .with_kv_heads(1)
                .with_causal(true),
            AttentionShape::new(1, 1, 1, 128).with_causal(true),
            AttentionShape::new(1, 2, 33, 128),
            // Four key tiles of 64 (`mma.sync`), two of 128 (`wgmma`): each stage of the K/V
            // ring is refilled (the emulator checks the copies against the other warps'
            // reads of the previous tile).
            AttentionShape::new(1, 2, 200, 64).with_kv_heads(1),
            // Three key tiles of 128, the last ragged: the `wgmma` kernel's ring refilled,
            // causal, with 3 query tiles of 128 (2 blocks' diagonals).
            AttentionShape::new(1, 1, 300, 64).with_causal(true),
        ]
    } else {
        vec![
            AttentionShape::new(2, 4, 1000, 128).with_kv_heads(2),
            AttentionShape::new(2, 4, 1000, 128)
                .with_kv_heads(2)
                .with_causal(true),
            AttentionShape::new(1, 8, 2048, 64),
            AttentionShape::new(1, 8, 2048, 64).with_causal(true),
            AttentionShape::new(3, 2, 1, 64),
            AttentionShape::new(1, 4, 130, 128)
                .with_kv_heads(1)
                .with_causal(true),
        ]
    }
}

#[test]
fn bf16_attention_is_within_the_error_bound() {
    let gpu = gpu();
    if !runs(&gpu) {
        return;
    }
    for kernel in kernels(&gpu) {
        for (i, shape) in shapes().into_iter().enumerate() {
            check_case::<bf16>(&gpu, kernel, shape, 10 + i as u64);
        }
    }
}

#[test]
fn f16_attention_is_within_the_error_bound() {
    let gpu = gpu();
    if !runs(&gpu) {
        return;
    }
    for kernel in kernels(&gpu) {
        for (i, shape) in shapes().into_iter().enumerate() {
            // Alternate D, so f16 meets both head dimensions on the emulator too.
            let shape = AttentionShape {
                head_dim: if shape.head_dim == 64 { 128 } else { 64 },
                ..shape
            };
            check_case::<f16>(&gpu, kernel, shape, 20 + i as u64);
        }
    }
}

/// Perturbs `K` and `V` at sequence positions ≥ `p` of every key/value head (new random
/// values) and checks that `O` and `L` of the query rows before `p` are unchanged bit for
/// bit, while some later row changes (so the perturbation is seen at all).
fn causal_case<T: AttnElem + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    shape: AttentionShape,
    p: usize,
) {
    for kernel in kernels(gpu) {
        causal_case_with::<T>(gpu, kernel, shape, p);
    }
}

/// [`causal_case`] for one kernel.
fn causal_case_with<T: AttnElem + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    kernel: AttentionKernel,
    shape: AttentionShape,
    p: usize,
) {
    let (q, k, v) = inputs::<T>(shape, 31);
    let before = attention(gpu, kernel, shape, &q, &k, &v);
    let (mut k2, mut v2) = (k.clone(), v.clone());
    let (s, d) = (shape.seq_len, shape.head_dim);
    let (new_k, new_v) = (
        uniform::<T>(41, k.len(), 3.0),
        uniform::<T>(42, v.len(), 3.0),
    );
    for head in 0..shape.batch * shape.kv_heads {
        for row in p..s {
            for c in 0..d {
                let i = (head * s + row) * d + c;
                k2[i] = new_k[i];
                v2[i] = new_v[i];
            }
        }
    }
    let after = attention(gpu, kernel, shape, &q, &k2, &v2);
    let mut later_changed = false;
    for head in 0..shape.batch * shape.heads {
        for row in 0..s {
            let o = |x: &[T]| x[(head * s + row) * d..][..d].to_vec();
            let l = |x: &[f32]| x[head * s + row].to_bits();
            let same = o(&before.o) == o(&after.o) && l(&before.lse) == l(&after.lse);
            if row < p {
                assert!(
                    same,
                    "{} {} causal ({shape}): head {head} row {row} < {p} changed when keys ≥ \
                     {p} did: L {} → {}",
                    kernel.label(),
                    T::NAME,
                    before.lse[head * s + row],
                    after.lse[head * s + row]
                );
            } else {
                later_changed |= !same;
            }
        }
    }
    assert!(
        later_changed,
        "{}: the perturbation changed no row at all",
        kernel.label()
    );
}

#[test]
fn causal_outputs_do_not_depend_on_future_keys() {
    let gpu = gpu();
    if !runs(&gpu) {
        return;
    }
    if emulated() {
        // p inside the second key tile and inside the first.
        let shape = AttentionShape::new(1, 2, 80, 64)
            .with_kv_heads(1)
            .with_causal(true);
        causal_case::<bf16>(&gpu, shape, 67);
        causal_case::<f16>(
            &gpu,
            AttentionShape {
                head_dim: 128,
                ..shape
            },
            5,
        );
    } else {
        let shape = AttentionShape::new(2, 8, 1000, 128)
            .with_kv_heads(4)
            .with_causal(true);
        for p in [1, 63, 64, 500, 999] {
            causal_case::<bf16>(&gpu, shape, p);
        }
        causal_case::<f16>(
            &gpu,
            AttentionShape {
                head_dim: 64,
                ..shape
            },
            300,
        );
    }
}

#[test]
fn bad_shapes_are_errors_naming_the_value_before_any_launch() {
    let gpu = gpu();
    let ok = AttentionShape::new(1, 4, 8, 64);
    let (q, k, v) = inputs::<bf16>(ok, 1);
    let fails = |shape: AttentionShape, q: &[bf16], k: &[bf16], v: &[bf16], words: &[&str]| {
        let e = host::attention::attention(&gpu, shape, q, k, v)
            .expect_err("a bad shape must be refused")
            .to_string();
        for w in words {
            assert!(e.contains(w), "`{w}` not in: {e}");
        }
    };
    fails(
        AttentionShape { head_dim: 96, ..ok },
        &q,
        &k,
        &v,
        &["D = 96", "[64, 128]"],
    );
    fails(ok.with_kv_heads(3), &q, &k, &v, &["H = 4", "H_kv = 3"]);
    fails(AttentionShape { seq_len: 0, ..ok }, &q, &k, &v, &["S = 0"]);
    fails(AttentionShape { batch: 0, ..ok }, &q, &k, &v, &["B = 0"]);
    fails(ok, &q, &k[1..], &v, &["K has 2047 elements", "2048"]);
    fails(ok, &q[..100], &k, &v, &["Q has 100 elements"]);
}

#[test]
fn a_nan_key_makes_the_rows_that_see_it_nan_and_no_other() {
    // torch's softmax over scores with a NaN is NaN in every element, so the rows that see
    // the key get NaN in O and L; causal rows before it stay finite. (Nothing hangs or
    // traps: the kernel's control flow does not depend on values.)
    let gpu = gpu();
    if !runs(&gpu) {
        return;
    }
    let shape = AttentionShape::new(1, 2, 70, 64)
        .with_kv_heads(1)
        .with_causal(true);
    let (q, mut k, v) = inputs::<bf16>(shape, 51);
    let nan_key = 10;
    k[nan_key * 64 + 3] = bf16::from_f32(f32::NAN);
    for kernel in kernels(&gpu) {
        nan_case(&gpu, kernel, shape, &q, &k, &v, nan_key);
    }
}

/// The rows of `shape` (S = 70, causal) that see key `nan_key` are NaN, the others finite.
fn nan_case(
    gpu: &Gpu,
    kernel: AttentionKernel,
    shape: AttentionShape,
    q: &[bf16],
    k: &[bf16],
    v: &[bf16],
    nan_key: usize,
) {
    let out = attention(gpu, kernel, shape, q, k, v);
    for head in 0..2 {
        for row in 0..70 {
            let o = &out.o[(head * 70 + row) * 64..][..64];
            let l = out.lse[head * 70 + row];
            if row < nan_key {
                assert!(
                    o.iter().all(|x| x.to_f32().is_finite()) && l.is_finite(),
                    "{}: head {head} row {row} does not see key {nan_key} but is not finite",
                    kernel.label()
                );
            } else {
                assert!(
                    o.iter().all(|x| x.to_f32().is_nan()) && l.is_nan(),
                    "{}: head {head} row {row} sees the NaN key {nan_key}: O and L must be NaN, \
                     L = {l}",
                    kernel.label()
                );
            }
        }
    }
}

#[test]
fn a_nan_value_in_one_head_stays_in_that_head() {
    // The `wgmma` kernel's tiles run past S into the next head's rows (its tensor maps see
    // all heads as one matrix); a NaN value there must not reach this head through P = 0.
    let gpu = gpu();
    if !runs(&gpu) {
        return;
    }
    let shape = AttentionShape::new(1, 2, 70, 64);
    let (q, k, mut v) = inputs::<bf16>(shape, 61);
    // Head 1, key 0, dim 5.
    v[70 * 64 + 5] = bf16::from_f32(f32::NAN);
    for kernel in kernels(&gpu) {
        let out = attention(&gpu, kernel, shape, &q, &k, &v);
        for row in 0..70 {
            let head0 = &out.o[row * 64..][..64];
            assert!(
                head0.iter().all(|x| x.to_f32().is_finite()),
                "{}: head 0 row {row} is not finite though only head 1 has a NaN value",
                kernel.label()
            );
            // Every row of head 1 sees key 0: its column 5 is NaN, the others finite.
            let head1 = &out.o[(70 + row) * 64..][..64];
            assert!(
                head1[5].to_f32().is_nan() && head1[4].to_f32().is_finite(),
                "{}: head 1 row {row}: column 5 must be NaN, column 4 finite",
                kernel.label()
            );
        }
    }
}
