//! The SGEMM rows: the Rust kernel, its CUDA C twin and cuBLAS on one shape, with the Rust
//! result checked against cuBLAS' and an `f64` reference.

use super::{Bench, Implementation, random_f64, report::Entry};
use crate::gpu::GpuError;
use cust::error::GpuContext;
use rayon::prelude::*;

impl Bench<'_> {
    /// Times row-major `C = A·B` (`A` m×k, `B` k×n, `C` m×n, random floats in [-0.5, 0.5))
    /// with the Rust kernel, the twin and cuBLAS; cuBLAS' rate is the rows' reference.
    pub(super) fn sgemm(&mut self, (m, n, k): (u32, u32, u32)) -> Result<(), GpuError> {
        if !self.wants(&format!("sgemm {m}x{n}x{k}")) {
            return Ok(());
        }
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        let gpu = &self.gpu;
        // Random floats in [-0.5, 0.5) with full 24-bit significands (not small integers,
        // whose products and sums would be exact and hide rounding differences).
        let a_host: Vec<f32> = random_f64(6, mu * ku)
            .iter()
            .map(|&v| (v - 1.0) as f32)
            .collect();
        let b_host: Vec<f32> = random_f64(7, ku * nu)
            .iter()
            .map(|&v| (v - 1.0) as f32)
            .collect();
        let a = crate::vector::upload(gpu, &a_host)?;
        let b = crate::vector::upload(gpu, &b_host)?;
        let mut c = crate::vector::poisoned::<f32>(gpu, mu * nu)?;
        let flops = 2.0 * mu as f64 * nu as f64 * ku as f64;
        let workload = format!("sgemm {m}x{n}x{k}");
        let stats =
            self.time(|| crate::vector::sgemm_dev(&self.gpu, (m, n, k), 1.0, &a, &b, 0.0, &mut c))?;
        let mut rust = Entry::flops(&workload, Implementation::Rust, stats, flops);
        let rust_c = c.as_host_vec().gpu_context("copying C back")?;

        let mut cuda = None;
        if let Some(cu) = &self.cuda_c {
            let stats = self.time(|| cu.sgemm(&self.gpu, (m, n, k), &a, &b, &mut c))?;
            cuda = Some(Entry::flops(&workload, Implementation::CudaC, stats, flops));
        }

        let mut cublas = None;
        if !self.opts.cublas {
            self.notes.push("cuBLAS skipped (--no-cublas)".into());
        } else {
            // A buffer of its own, poisoned: an unwritten C cannot pass for a result.
            let mut c_blas = crate::vector::poisoned::<f32>(&self.gpu, mu * nu)?;
            match self.cublas_sgemm((m, n, k), &a, &b, &mut c_blas) {
                Ok(stats) => {
                    let e = Entry::flops(&workload, Implementation::Cublas, stats, flops);
                    let blas_c = c_blas.as_host_vec().gpu_context("copying C back")?;
                    for line in compare_sgemm(&rust_c, &blas_c, &a_host, &b_host, (mu, nu, ku)) {
                        self.log(&line);
                        self.notes.push(line);
                    }
                    cublas = Some(e);
                }
                Err(why) => {
                    self.notes.push(format!("cuBLAS skipped: {why}"));
                    self.log(&format!("cuBLAS skipped: {why}"));
                }
            }
        }
        if let Some(blas) = &cublas {
            let t = blas.tflop_per_s.unwrap_or(f64::NAN);
            rust.vs_reference = rust.tflop_per_s.map(|x| x / t);
            if let Some(c) = &mut cuda {
                c.vs_reference = c.tflop_per_s.map(|x| x / t);
            }
        }
        self.push_pair(rust, cuda);
        self.entries.extend(cublas);
        Ok(())
    }
}

/// How the Rust SGEMM result compares with cuBLAS': the relative difference
/// `‖C_rust − C_cublas‖ / ‖C_cublas‖`, how many elements are bit-identical and how many are
/// not finite (unwritten poison), and, on 256 sampled elements, each one's largest error
/// against an `f64` reference relative to `Σ_p |a_ip·b_pj|`.
///
/// Bit-identical results are possible and not suspicious by themselves: both kernels
/// accumulate each element over `k` in increasing order with fused multiply-adds (cuBLAS's
/// non-split-k FP32 kernels do), then scale by α = 1; the poisoned, separate output buffer
/// and the f64 check rule out comparing a buffer with itself.
fn compare_sgemm(
    rust_c: &[f32],
    blas_c: &[f32],
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
) -> Vec<String> {
    let (num, den) = rust_c
        .par_iter()
        .zip(blas_c)
        .map(|(&x, &y)| {
            let d = f64::from(x) - f64::from(y);
            (d * d, f64::from(y) * f64::from(y))
        })
        .reduce(|| (0.0, 0.0), |p, q| (p.0 + q.0, p.1 + q.1));
    let rel = (num / den).sqrt();
    let identical = rust_c
        .par_iter()
        .zip(blas_c)
        .filter(|(x, y)| x.to_bits() == y.to_bits())
        .count();
    let bad = |c: &[f32]| c.par_iter().filter(|v| !v.is_finite()).count();
    let sample_err = |c: &[f32]| {
        (0..256u64)
            .map(|s| {
                let idx = (s.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize % (m * n);
                let (i, j) = (idx / n, idx % n);
                let (mut v, mut scale) = (0.0f64, 0.0f64);
                for p in 0..k {
                    let prod = f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
                    v += prod;
                    scale += prod.abs();
                }
                (f64::from(c[idx]) - v).abs() / scale.max(f64::MIN_POSITIVE)
            })
            .fold(0.0f64, f64::max)
    };
    vec![
        format!(
            "sgemm: ‖C_rust − C_cublas‖ / ‖C_cublas‖ = {rel:.3e}; bit-identical elements: \
             {identical} of {} (both accumulate over k in order with FMA); non-finite: rust \
             {}, cublas {}",
            m * n,
            bad(rust_c),
            bad(blas_c)
        ),
        format!(
            "sgemm: largest error vs an f64 reference over 256 sampled elements, relative \
             to Σ|a·b|: rust {:.2e}, cublas {:.2e}",
            sample_err(rust_c),
            sample_err(blas_c)
        ),
    ]
}
