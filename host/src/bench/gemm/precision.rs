//! The precisions of the GEMM rows ([`GemmPrecision`]: names, cuBLAS's compute type, the
//! standard error bound), the number types they store ([`Operand`], [`Exact`]) and the FP8
//! rows' scales ([`FP8_SCALES`]).

use blastoff::{ComputeType, GemmExDatatype};
use cuda_std::half::{F8E4M3, bf16, f16};
use cust::memory::DeviceCopy;
use serde::{Deserialize, Serialize};

/// The precision of a GEMM row: storage type of `A`, `B`, `C` and how products are summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GemmPrecision {
    /// `bf16` operands and result, `f32` accumulation (tensor cores).
    Bf16,
    /// `f16` operands and result, `f32` accumulation (tensor cores).
    Fp16,
    /// `f32` operands and result, products of TF32-rounded operands, `f32` accumulation
    /// (tensor cores; cuBLAS `CUBLAS_COMPUTE_32F_FAST_TF32`).
    Tf32,
    /// `f32` throughout, TF32 off (cuBLAS `CUBLAS_COMPUTE_32F`, default math mode).
    Fp32,
    /// FP8 E4M3 `A` and `B`, per-tensor scales, `bf16` `C`, `f32` accumulation (tensor
    /// cores; cuBLASLt's scaled matmul, [`crate::matmul_fp8`]).
    E4m3,
}

impl GemmPrecision {
    /// Every precision, in table order.
    pub const ALL: [Self; 5] = [Self::Bf16, Self::Fp16, Self::Tf32, Self::Fp32, Self::E4m3];

    /// The name in workloads and on the command line: `bf16`, `fp16`, `tf32`, `fp32`,
    /// `e4m3`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bf16 => "bf16",
            Self::Fp16 => "fp16",
            Self::Tf32 => "tf32",
            Self::Fp32 => "fp32",
            Self::E4m3 => "e4m3",
        }
    }

    /// The precision named `name` (as [`GemmPrecision::name`], ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// cuBLAS's compute type for this precision.
    pub const fn compute(self) -> ComputeType {
        match self {
            Self::Tf32 => ComputeType::F32FastTf32,
            Self::Bf16 | Self::Fp16 | Self::Fp32 | Self::E4m3 => ComputeType::F32,
        }
    }

    /// The standard worst-case bound on `|ĉ_ij − c_ij| / Σ_p |a_ip·b_jp|` for a length-`k`
    /// dot product whose inputs are exact in the storage type (Higham, *Accuracy and
    /// Stability of Numerical Algorithms*, 2nd ed., §3.1: `γ_k = k·u / (1 − k·u)`):
    /// `u_products + u_output + γ_k(u_accumulate)`, where
    /// - `u_accumulate` = 2⁻²⁴ for FP32 (FFMA, round to nearest), 2⁻²³ on tensor cores
    ///   (their `f32` adder need not round to nearest: truncation doubles `u`);
    /// - `u_output` = 2⁻⁸ for `bf16` (8 significand bits), 2⁻¹¹ for `f16` (11), 0 for `f32`
    ///   (the accumulator's own rounding);
    /// - `u_products` = 2·2⁻¹⁰ for TF32 (each operand cut to 11 significand bits, by
    ///   truncation at worst), 0 otherwise (products of `bf16`/`f16`/FP8 are exact in
    ///   `f32`).
    ///
    /// For E4M3 the bound is `bf16`'s (`bf16` output, products exact) with the `f32`
    /// accumulation assumed: NVIDIA does not specify the tensor cores' accumulator width for
    /// FP8 inputs, and a narrower one shows as errors above it, in both the cuBLAS row and
    /// ours. The scales are powers of two (`FP8_SCALES`) and add no error.
    ///
    /// Typical errors are far smaller (√k rather than k growth, and rounding errors
    /// cancel); the bound is what no correct kernel can exceed.
    pub fn error_bound(self, k: usize) -> f64 {
        let u_acc = match self {
            Self::Fp32 => 2f64.powi(-24),
            Self::Bf16 | Self::Fp16 | Self::Tf32 | Self::E4m3 => 2f64.powi(-23),
        };
        let gamma = k as f64 * u_acc / (1.0 - k as f64 * u_acc);
        let (u_products, u_output) = match self {
            Self::Bf16 | Self::E4m3 => (0.0, 2f64.powi(-8)),
            Self::Fp16 => (0.0, 2f64.powi(-11)),
            Self::Tf32 => (2.0 * 2f64.powi(-10), 0.0),
            Self::Fp32 => (0.0, 0.0),
        };
        u_products + u_output + gamma
    }
}

impl std::fmt::Display for GemmPrecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A number type whose values the accuracy check reads: the storage types and FP8.
pub(super) trait Exact: Copy + Send + Sync {
    /// The value, exactly.
    fn to_f64(self) -> f64;
}

/// A storage type of the GEMM rows: `bf16`, `f16` or `f32`.
pub(super) trait Operand:
    GemmExDatatype + DeviceCopy + Exact + Copy + Send + Sync + 'static
{
    /// A quiet NaN: `C` starts as this, so an unwritten element cannot pass for a result.
    const NAN: Self;
    /// `x` rounded to this type (to nearest).
    fn from_f64(x: f64) -> Self;
}

impl Exact for bf16 {
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
}

impl Operand for bf16 {
    const NAN: Self = bf16::NAN;
    fn from_f64(x: f64) -> Self {
        bf16::from_f64(x)
    }
}

impl Exact for f16 {
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
}

impl Operand for f16 {
    const NAN: Self = f16::NAN;
    fn from_f64(x: f64) -> Self {
        f16::from_f64(x)
    }
}

impl Exact for f32 {
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Operand for f32 {
    const NAN: Self = f32::NAN;
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Exact for F8E4M3 {
    fn to_f64(self) -> f64 {
        f64::from(self.to_f32())
    }
}

/// The per-tensor scales `(scale_a, scale_b)` of the FP8 rows, ours and cuBLASLt's: powers
/// of two, so that scaling adds no rounding, and not 1, so that a kernel that ignored one
/// would show in the accuracy check.
pub const FP8_SCALES: (f32, f32) = (0.5, 4.0);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_names() {
        // bf16 output rounding dominates at k = 4096: 2^-8 + γ_4096 with u = 2^-23, where
        // γ_k = k·u / (1 − k·u) ≈ 4.88e-4; ≈ 4.4e-3 in all.
        let b = GemmPrecision::Bf16.error_bound(4096);
        let ku = 4096.0 * 2f64.powi(-23);
        assert!((b - (2f64.powi(-8) + ku / (1.0 - ku))).abs() < 1e-15, "{b}");
        assert!(GemmPrecision::Fp32.error_bound(4096) < GemmPrecision::Tf32.error_bound(4096));
        assert!(GemmPrecision::Fp16.error_bound(4096) < b);
        for p in GemmPrecision::ALL {
            assert_eq!(GemmPrecision::from_name(p.name()), Some(p));
        }
        assert_eq!(GemmPrecision::from_name("BF16"), Some(GemmPrecision::Bf16));
        assert_eq!(GemmPrecision::from_name("fp64"), None);
        assert_eq!(GemmPrecision::Tf32.compute(), ComputeType::F32FastTf32);
    }
}
