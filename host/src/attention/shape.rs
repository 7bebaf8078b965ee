//! The shape of one attention ([`AttentionShape`]) and the rules it is checked against
//! (listed in the [module docs](super)).

use crate::gpu::GpuError;
use kernels::attention::{ATTN_BR, ATTN_HEAD_DIMS};

/// The shape of one attention: batch `B`, query heads `H`, key/value heads `H_kv`, sequence
/// length `S` (queries and keys alike), head dimension `D`, and whether it is causal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttentionShape {
    /// `B`.
    pub batch: usize,
    /// `H`, query heads.
    pub heads: usize,
    /// `H_kv`, key/value heads (= `heads` for multi-head attention).
    pub kv_heads: usize,
    /// `S`.
    pub seq_len: usize,
    /// `D` (64 or 128).
    pub head_dim: usize,
    /// Causal masking: query `i` sees keys `j ≤ i` only.
    pub causal: bool,
}

impl AttentionShape {
    /// Multi-head attention (`H_kv` = `H`), not causal.
    #[must_use]
    pub const fn new(batch: usize, heads: usize, seq_len: usize, head_dim: usize) -> Self {
        Self {
            batch,
            heads,
            kv_heads: heads,
            seq_len,
            head_dim,
            causal: false,
        }
    }

    /// The same shape with `kv_heads` key/value heads.
    #[must_use]
    pub const fn with_kv_heads(self, kv_heads: usize) -> Self {
        Self { kv_heads, ..self }
    }

    /// The same shape, causal or not.
    #[must_use]
    pub const fn with_causal(self, causal: bool) -> Self {
        Self { causal, ..self }
    }

    /// Elements of `Q` and of `O`: `B·H·S·D`.
    #[must_use]
    pub const fn q_len(&self) -> usize {
        self.batch * self.heads * self.seq_len * self.head_dim
    }

    /// Elements of `K` and of `V`: `B·H_kv·S·D`.
    #[must_use]
    pub const fn kv_len(&self) -> usize {
        self.batch * self.kv_heads * self.seq_len * self.head_dim
    }

    /// Elements of `L`: `B·H·S`.
    #[must_use]
    pub const fn lse_len(&self) -> usize {
        self.batch * self.heads * self.seq_len
    }

    /// Floating-point operations of the forward pass as FlashAttention's papers and
    /// benchmarks count them: `4·B·H·S²·D` (two matrix products of `2·S²·D` per head),
    /// halved when causal.
    #[must_use]
    pub fn flops(&self) -> f64 {
        let full = 4.0
            * self.batch as f64
            * self.heads as f64
            * (self.seq_len as f64).powi(2)
            * self.head_dim as f64;
        if self.causal { full / 2.0 } else { full }
    }

    /// Checks the rules of the [module docs](super), naming the value that breaks one.
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value and what is allowed.
    pub fn check(&self) -> Result<(), GpuError> {
        let fail = |what: String| Err(GpuError::LaunchConfig(format!("attention: {what}")));
        if !ATTN_HEAD_DIMS.iter().any(|&d| d as usize == self.head_dim) {
            return fail(format!(
                "head dim D = {} is not supported; allowed: {ATTN_HEAD_DIMS:?}",
                self.head_dim
            ));
        }
        for (name, v) in [
            ("batch B", self.batch),
            ("heads H", self.heads),
            ("key/value heads H_kv", self.kv_heads),
            ("sequence length S", self.seq_len),
        ] {
            if v == 0 || v >= 1 << 31 {
                return fail(format!("{name} = {v} must be in 1..2^31"));
            }
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return fail(format!(
                "heads H = {} is not a multiple of key/value heads H_kv = {} (grouped-query \
                 attention needs H_kv to divide H)",
                self.heads, self.kv_heads
            ));
        }
        let blocks = self.seq_len.div_ceil(ATTN_BR as usize) as u128
            * self.batch as u128
            * self.heads as u128;
        if blocks >= 1 << 31 {
            return fail(format!(
                "B·H·ceil(S / {ATTN_BR}) = {blocks} blocks (one per head and {ATTN_BR} query \
                 rows), more than a grid holds (2^31 - 1)"
            ));
        }
        Ok(())
    }

    /// [`AttentionShape::check`], then the buffer lengths: `Q` and `O` at least
    /// [`q_len`](Self::q_len), `K` and `V` at least [`kv_len`](Self::kv_len), `L` at least
    /// [`lse_len`](Self::lse_len) elements (in `lens`, in that order).
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value or the buffer.
    pub fn check_buffers(&self, lens: [usize; 5]) -> Result<(), GpuError> {
        self.check()?;
        let need = [
            self.q_len(),
            self.kv_len(),
            self.kv_len(),
            self.q_len(),
            self.lse_len(),
        ];
        for ((name, len), need) in ["Q", "K", "V", "O", "L"].into_iter().zip(lens).zip(need) {
            if len < need {
                return Err(GpuError::LaunchConfig(format!(
                    "attention: {name} has {len} elements, fewer than the {need} its shape needs \
                     ({self})"
                )));
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for AttentionShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "B = {}, H = {}, H_kv = {}, S = {}, D = {}{}",
            self.batch,
            self.heads,
            self.kv_heads,
            self.seq_len,
            self.head_dim,
            if self.causal { ", causal" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(shape: AttentionShape) -> String {
        shape.check().expect_err("must be refused").to_string()
    }

    #[test]
    fn shapes_outside_the_rules_are_refused_by_value() {
        let ok = AttentionShape::new(2, 8, 100, 64);
        ok.check().expect("a supported shape");
        let e = err(AttentionShape { head_dim: 96, ..ok });
        assert!(e.contains("D = 96") && e.contains("[64, 128]"), "{e}");
        let e = err(ok.with_kv_heads(3));
        assert!(e.contains("H = 8") && e.contains("H_kv = 3"), "{e}");
        let e = err(AttentionShape { seq_len: 0, ..ok });
        assert!(e.contains("S = 0") && e.contains("1..2^31"), "{e}");
        let e = err(ok.with_kv_heads(0));
        assert!(e.contains("H_kv = 0"), "{e}");
        // Huge counts are refused without overflowing anything.
        let e = err(AttentionShape::new(1 << 30, 1 << 30, 1 << 30, 128));
        assert!(e.contains("more than a grid holds"), "{e}");
        let e = ok
            .with_kv_heads(2)
            .check_buffers([
                ok.q_len(),
                ok.kv_len(),
                ok.kv_len() / 4 - 1,
                ok.q_len(),
                1600,
            ])
            .expect_err("V too short")
            .to_string();
        assert!(
            e.contains("V has 25599 elements") && e.contains("25600"),
            "{e}"
        );
    }

    #[test]
    fn flops_count_both_products_and_halve_when_causal() {
        let s = AttentionShape::new(4, 32, 4096, 128);
        assert_eq!(s.flops(), 4.0 * 4.0 * 32.0 * 4096.0 * 4096.0 * 128.0);
        assert_eq!(s.with_causal(true).flops(), s.flops() / 2.0);
    }
}
