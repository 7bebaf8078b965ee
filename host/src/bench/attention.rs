//! The attention rows (`--attention`): our forward kernels ([`crate::attention`]: `wgmma`
//! on sm_90, and `mma.sync`, each its own row, named in its variant) in bf16 at the shapes of [`ATTENTION_SHAPES`], and the peers
//! measured in the same bundle run by `bench/python/attention_peers.py` (torch's
//! `scaled_dot_product_attention` with the cuDNN and the flash backend, and
//! FlashAttention-3's `flash_attn_interface.flash_attn_func` where it imports), read from
//! the JSON that script writes (`--attention-peers FILE`, [`PeerFile`]).
//!
//! Rate: TFLOP/s = `4·B·H·S²·D` (halved when causal) / median time
//! ([`AttentionShape::flops`], FlashAttention's count, which the script uses too). Inputs
//! are uniform in [−1, 1), rounded to bf16. Each sample is one launch between two CUDA
//! events (a launch at these shapes takes milliseconds).
//!
//! Accuracy ("max err"): after timing, each kernel's `O` is checked against the f64
//! reference ([`crate::attention::reference_f64`]) on the [`CHECKED_ROWS`] rows of
//! [`checked_rows`], as the largest `|O − O_ref|` over their elements; the script checks
//! torch's backends the same way on the same rows of the same inputs (it regenerates ours:
//! [`INPUT_SEEDS`] through the bench's generator, `random_f64`), so the two are errors
//! against the same reference. The script reports its first input values, and a mismatch
//! with ours is a note instead of a comparison.
//!
//! The peers are timed by the script, not here: torch's own CUDA events around each call,
//! after warm-up, as many samples as our `--reps`; their rows carry those samples. A peer
//! that did not run (a backend that refuses a shape, FlashAttention-3 not installed) is a
//! note of the script's, copied into the report's notes.

use super::{Bench, Entry, Implementation};
use crate::attention::{AttentionKernel, AttentionPlan, AttentionShape};
use crate::gpu::GpuError;
use crate::timing::Stats;
use cuda_std::half::bf16;
use cust::error::GpuContext;
use cust::memory::DeviceBuffer;
use serde::{Deserialize, Serialize};

/// The shapes of the attention rows (the issue's: FlashAttention-3's and cuDNN's usual
/// benchmark points, and one grouped-query shape with 4 query heads per key/value head).
pub const ATTENTION_SHAPES: [AttentionShape; 4] = [
    AttentionShape::new(4, 32, 4096, 128),
    AttentionShape::new(4, 32, 4096, 128).with_causal(true),
    AttentionShape::new(16, 16, 2048, 64),
    AttentionShape::new(4, 32, 4096, 128).with_kv_heads(8),
];

/// The seeds of `Q`, `K` and `V` (the bench's `random_f64`, mapped from [0.5, 1.5) to
/// [−1, 1) and rounded to f32, then bf16, each to nearest); `attention_peers.py` makes the
/// same inputs from them.
pub const INPUT_SEEDS: [u64; 3] = [1, 2, 3];

/// How many rows [`checked_rows`] names.
pub const CHECKED_ROWS: usize = 64;

/// The `(head, row)` pairs whose `O` the accuracy check compares with the f64 reference
/// (`head` in `0..B·H`): `head = j·B·H / 64`, `row = (977·j + 13) mod S` for `j` in
/// `0..64`. `attention_peers.py` checks the same rows.
#[must_use]
pub fn checked_rows(shape: &AttentionShape) -> Vec<(usize, usize)> {
    let heads = shape.batch * shape.heads;
    (0..CHECKED_ROWS)
        .map(|j| (j * heads / CHECKED_ROWS, (977 * j + 13) % shape.seq_len))
        .collect()
}

/// The bench's attention input of seed `seed`: `len` values of `random_f64`, mapped from
/// [0.5, 1.5) to [−1, 1) and rounded to f32, then bf16.
fn input_values(seed: u64, len: usize) -> Vec<bf16> {
    super::random_f64(seed, len)
        .into_iter()
        .map(|x| bf16::from_f32((2.0 * (x - 1.0)) as f32))
        .collect()
}

/// The largest `|O − O_ref|` over the elements of the `rows` of `o` (`(B, H, S, D)`
/// row-major), against `reference`, the f64 reference of those rows.
fn max_abs_error(
    shape: &AttentionShape,
    reference: &[crate::attention::ReferenceRow],
    o: &[bf16],
    rows: &[(usize, usize)],
) -> f64 {
    let d = shape.head_dim;
    reference
        .iter()
        .zip(rows)
        .flat_map(|(r, &(head, row))| {
            let got = &o[(head * shape.seq_len + row) * d..][..d];
            got.iter()
                .zip(&r.o)
                .map(|(g, want)| (g.to_f64() - want).abs())
                .collect::<Vec<_>>()
        })
        .fold(0.0, f64::max)
}

/// The workload name of a shape's rows: `attention bf16 4x32x4096x128` with ` causal` and
/// ` kv8` (key/value heads) where they apply. The script writes the same names.
#[must_use]
pub fn workload(shape: &AttentionShape) -> String {
    format!(
        "attention bf16 {}x{}x{}x{}{}{}",
        shape.batch,
        shape.heads,
        shape.seq_len,
        shape.head_dim,
        if shape.causal { " causal" } else { "" },
        if shape.kv_heads == shape.heads {
            String::new()
        } else {
            format!(" kv{}", shape.kv_heads)
        }
    )
}

/// What `attention_peers.py` writes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PeerFile {
    /// torch's version (`torch.__version__`).
    #[serde(default)]
    pub torch: String,
    /// The timed peers.
    #[serde(default)]
    pub rows: Vec<PeerRow>,
    /// What did not run, and why.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The script's first four values of `Q` (seed [`INPUT_SEEDS`]`[0]`), as `f32`: equal to
    /// ours when its inputs are ours, so that its errors compare with ours.
    #[serde(default)]
    pub inputs_first: Vec<f64>,
}

/// One peer at one shape.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PeerRow {
    /// [`workload`] of the shape.
    pub workload: String,
    /// `torch` or `flash-attn-3`.
    pub implementation: String,
    /// `cudnn` or `flash` for torch's backends; absent for FlashAttention-3.
    #[serde(default)]
    pub variant: Option<String>,
    /// `4·B·H·S²·D`, halved when causal.
    pub flops: f64,
    /// The timed samples, milliseconds.
    pub samples_ms: Vec<f64>,
    /// The largest `|O − O_ref|` on the [`checked_rows`] of the same inputs as ours, if the
    /// script checked them.
    #[serde(default)]
    pub max_abs_err: Option<f64>,
}

impl PeerRow {
    /// The row as a report entry.
    fn entry(&self) -> Option<Entry> {
        let implementation = match self.implementation.as_str() {
            "torch" => Implementation::Torch,
            "flash-attn-3" => Implementation::FlashAttn3,
            _ => return None,
        };
        if self.samples_ms.is_empty() {
            return None;
        }
        let stats = Stats::from_samples(self.samples_ms.clone());
        let mut e = Entry::flops(&self.workload, implementation, stats, self.flops);
        e.variant.clone_from(&self.variant);
        e.max_rel_error = self.max_abs_err;
        Some(e)
    }
}

impl Bench<'_> {
    /// Times our kernel at every shape of [`ATTENTION_SHAPES`], then adds the peers of
    /// `peers` (if given) for the same workloads.
    pub(super) fn attention(&mut self, peers: Option<&PeerFile>) -> Result<(), GpuError> {
        let kernels: &[AttentionKernel] = match AttentionKernel::best_for(&self.gpu)? {
            AttentionKernel::Wgmma => &[AttentionKernel::Wgmma, AttentionKernel::MmaSync],
            AttentionKernel::MmaSync => &[AttentionKernel::MmaSync],
        };
        for shape in ATTENTION_SHAPES {
            let name = workload(&shape);
            let gpu = &self.gpu;
            let [sq, sk, sv] = INPUT_SEEDS;
            let (hq, hk, hv) = (
                input_values(sq, shape.q_len()),
                input_values(sk, shape.kv_len()),
                input_values(sv, shape.kv_len()),
            );
            let upload = |x: &[bf16]| {
                DeviceBuffer::from_slice_async(x, gpu.stream())
                    .gpu_context("copying an attention input to the GPU")
            };
            let (q, k, v) = (upload(&hq)?, upload(&hk)?, upload(&hv)?);
            let rows = checked_rows(&shape);
            // Once per shape: every kernel's `O` is compared with it.
            let reference = crate::attention::reference_f64(shape, &hq, &hk, &hv, &rows);
            let mut o = DeviceBuffer::<bf16>::zeroed_async(shape.q_len(), gpu.stream())
                .gpu_context("allocating O")?;
            let mut lse = DeviceBuffer::<f32>::zeroed_async(shape.lse_len(), gpu.stream())
                .gpu_context("allocating L")?;
            let mut ours = Vec::new();
            for &kernel in kernels {
                let mut plan =
                    AttentionPlan::with_kernel(gpu, kernel, shape, &q, &k, &v, &mut o, &mut lse)?;
                let stats = self.time(|| plan.launch(gpu))?;
                let cfg = plan.config();
                drop(plan);
                gpu.sync_after(&name, cfg)?;
                let mut e = Entry::flops(&name, Implementation::Rust, stats, shape.flops());
                e.variant = Some(kernel.label().into());
                let got = o.as_host_vec().gpu_context("copying O to the host")?;
                e.max_rel_error = Some(max_abs_error(&shape, &reference, &got, &rows));
                ours.push(e);
            }
            for e in ours {
                self.log(&format!("{name}: {} {}", e.who(), e.rate_text()));
                self.entries.push(e);
            }
            if let Some(peers) = peers {
                for row in peers.rows.iter().filter(|r| r.workload == name) {
                    if let Some(e) = row.entry() {
                        self.log(&format!("{name}: {} {}", e.who(), e.rate_text()));
                        self.entries.push(e);
                    }
                }
            }
        }
        match peers {
            Some(p) => {
                self.notes.extend(p.notes.iter().cloned());
                let ours: Vec<f64> = input_values(INPUT_SEEDS[0], 4)
                    .into_iter()
                    .map(|x| f64::from(x.to_f32()))
                    .collect();
                if p.rows.iter().any(|r| r.max_abs_err.is_some()) && p.inputs_first != ours {
                    self.notes.push(format!(
                        "attention peers: the script's inputs begin {:?}, ours {ours:?}: its \
                         max err is against other inputs",
                        p.inputs_first
                    ));
                }
            }
            None => self
                .notes
                .push("attention peers not measured (no --attention-peers file)".into()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first four `Q` values, computed apart from the bench (Python integers for the
    /// splitmix64 steps, `struct` for f32 and bf16 rounding to nearest even): what
    /// `attention_peers.py` must regenerate for its errors to be against our inputs.
    #[test]
    fn the_inputs_start_with_the_values_the_script_regenerates() {
        let first: Vec<f32> = input_values(INPUT_SEEDS[0], 4)
            .into_iter()
            .map(bf16::to_f32)
            .collect();
        assert_eq!(
            first,
            [-0.066_894_53, -0.679_687_5, -0.196_289_06, 0.605_468_75]
        );
    }

    #[test]
    fn checked_rows_are_inside_the_shape_and_spread_over_heads() {
        for shape in ATTENTION_SHAPES {
            let rows = checked_rows(&shape);
            assert_eq!(rows.len(), CHECKED_ROWS);
            assert!(
                rows.iter()
                    .all(|&(h, r)| h < shape.batch * shape.heads && r < shape.seq_len)
            );
            let heads: std::collections::BTreeSet<_> = rows.iter().map(|r| r.0).collect();
            assert_eq!(
                heads.len(),
                CHECKED_ROWS.min(shape.batch * shape.heads),
                "{shape}"
            );
        }
    }

    #[test]
    fn workload_names_name_causal_and_gqa() {
        let names: Vec<String> = ATTENTION_SHAPES.iter().map(workload).collect();
        assert_eq!(
            names,
            [
                "attention bf16 4x32x4096x128",
                "attention bf16 4x32x4096x128 causal",
                "attention bf16 16x16x2048x64",
                "attention bf16 4x32x4096x128 kv8",
            ]
        );
    }

    #[test]
    fn peer_rows_become_entries_with_their_variant() {
        let file: PeerFile = serde_json::from_str(
            r#"{"torch": "2.11.0", "notes": ["flash-attn-3: not importable"],
                "rows": [{"workload": "attention bf16 16x16x2048x64",
                          "implementation": "torch", "variant": "cudnn",
                          "flops": 2e12, "samples_ms": [4.0, 5.0, 4.5]},
                         {"workload": "x", "implementation": "other", "flops": 1,
                          "samples_ms": [1.0]}]}"#,
        )
        .expect("the script's format");
        let e = file.rows[0].entry().expect("a torch row");
        assert_eq!(e.implementation, Implementation::Torch);
        assert_eq!(e.who(), "torch cudnn");
        // 2e12 flops in 4.5 ms (the median).
        assert!((e.tflop_per_s.unwrap() - 2e12 / 4.5e-3 / 1e12).abs() < 1e-9);
        assert!(
            file.rows[1].entry().is_none(),
            "unknown implementations are skipped"
        );
    }
}
