//! The GEMM rows of one (precision, shape) ([`Bench::precision_gemm`]): the inputs made,
//! cuBLAS, cuBLASLt and our kernels prepared and timed interleaved
//! ([`Bench::time_interleaved`]), each `C` checked, the rows logged and added to the
//! report.

use super::accuracy::{Accuracy, accuracy, flags};
use super::ours::{OurKernels, sgemm_kernel, tensor_core_kernels};
use super::peers::{GEMM_EX, LT, fastest_peer};
use super::precision::{FP8_SCALES, GemmPrecision, Operand};
use super::{Launch, Operands, download, random_operand, upload};
use crate::bench::cublaslt::LtGemm;
use crate::bench::{Bench, BenchError, Implementation, random_f64, report::Entry};
use crate::gpu::GpuError;
use crate::matmul::Tf32;
use crate::timing::Stats;
use cuda_std::half::{F8E4M3, bf16, f16};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process's bench log has the cluster kernel's launch line
/// ([`Prepared::launch_note`]): it is printed once per run.
///
/// [`Prepared::launch_note`]: super::ours::Prepared::launch_note
static CLUSTER_LAUNCH_LOGGED: AtomicBool = AtomicBool::new(false);

/// Back-to-back launches per timed sample: enough for about 2·10¹¹ flops (0.3 ms at
/// 700 TFLOP/s), 1 to 64.
pub(super) fn launches_per_sample(flops: f64) -> u32 {
    (2e11 / flops).ceil().clamp(1.0, 64.0) as u32
}

/// `stats` of samples of `inner` launches, as per-launch times.
fn per_launch(stats: Stats, inner: u32) -> Stats {
    let d = f64::from(inner.max(1));
    Stats {
        median_ms: stats.median_ms / d,
        min_ms: stats.min_ms / d,
        max_ms: stats.max_ms / d,
        q1_ms: stats.q1_ms / d,
        q3_ms: stats.q3_ms / d,
        samples: stats.samples,
    }
}

/// The result of a launch that was never timed (which [`Bench::time_interleaved`] rules
/// out: it returns one result per launch).
fn not_timed() -> Result<Stats, BenchError> {
    Err(BenchError("not timed".to_owned()))
}

impl Bench<'_> {
    /// The GEMM rows of one precision at one shape: cuBLAS and each of our kernels, timed
    /// interleaved, with ratios to cuBLAS and the accuracy check (see the
    /// [module docs](super)).
    ///
    /// # Errors
    /// A GPU error outside a peer (allocation, copy); cuBLAS's and our kernels' own failures
    /// become notes.
    pub(in crate::bench) fn precision_gemm(
        &mut self,
        precision: GemmPrecision,
        dims: (u32, u32, u32),
    ) -> Result<(), GpuError> {
        match precision {
            GemmPrecision::Bf16 => {
                self.precision_rows::<bf16>(precision, dims, tensor_core_kernels::<bf16>)
            }
            GemmPrecision::Fp16 => {
                self.precision_rows::<f16>(precision, dims, tensor_core_kernels::<f16>)
            }
            GemmPrecision::Tf32 => {
                self.precision_rows::<f32>(precision, dims, tensor_core_kernels::<Tf32>)
            }
            GemmPrecision::Fp32 => self.precision_rows::<f32>(precision, dims, sgemm_kernel),
            GemmPrecision::E4m3 => self.fp8_rows(precision, dims),
        }
    }

    /// [`Bench::precision_gemm`] for storage type `T`, with `ours` giving our kernels.
    fn precision_rows<T: Operand>(
        &mut self,
        precision: GemmPrecision,
        (m, n, k): (u32, u32, u32),
        ours: OurKernels<T>,
    ) -> Result<(), GpuError> {
        let dims = (m as usize, n as usize, k as usize);
        let (mu, nu, ku) = dims;
        let workload = format!("gemm {precision} {m}x{n}x{k}");
        self.log(&format!("{workload}: preparing inputs"));
        let a_host: Vec<T> = random_operand(21, mu * ku);
        let b_host: Vec<T> = random_operand(22, nu * ku);
        let a = upload(self, &a_host)?;
        let b = upload(self, &b_host)?;
        let flops = 2.0 * mu as f64 * nu as f64 * ku as f64;
        let inner = launches_per_sample(flops);
        let operands = Operands {
            dims,
            inner,
            b_host: &b_host,
            a: &a,
            b: &b,
        };
        let bound = precision.error_bound(ku);

        // Prepare every implementation, each with its own NaN-filled C; time them
        // interleaved (cuBLAS first, then ours in order); then copy each C back.
        let mut blas = self.opts.cublas.then(|| self.cublas_gemm_ex::<T>(dims));
        let mut lt = self
            .opts
            .cublas
            .then(|| self.cublaslt_gemm::<T>(precision, &operands));
        if let Some(Ok(l)) = &lt {
            self.log(&format!(
                "{workload}: cublas lt: {}",
                l.selection.describe()
            ));
        }
        let mut c_ours = Vec::new();
        let (timed, ours_meta) = {
            let prepared = ours(self, &operands, &mut c_ours)?;
            let (stream, ops) = (self.gpu.stream(), &operands);
            let mut launches: Vec<Result<Launch<'_>, BenchError>> = Vec::new();
            if let Some(Ok(g)) = blas.as_mut() {
                launches.push(Ok(Box::new(move || g.launch(stream, precision, ops))));
            }
            if let Some(Ok(l)) = lt.as_mut() {
                launches.push(Ok(Box::new(move || l.launch(stream, ops.a, ops.b))));
            }
            let mut meta = Vec::new();
            for p in prepared {
                meta.push((p.kernel, p.launch_note));
                launches.push(p.launch);
            }
            (self.time_interleaved(ops.inner, launches), meta)
        };
        let mut timed = timed.into_iter();
        // cuBLAS's result comes first where it was prepared (and so timed).
        let blas_outcome = blas.map(|prepared| {
            let g = prepared?;
            let stats = timed.next().unwrap_or_else(not_timed)?;
            Ok::<_, BenchError>((stats, download(&g.c)?))
        });
        // Then cuBLASLt's.
        let lt_outcome = lt.map(|prepared| {
            let l = prepared?;
            let stats = timed.next().unwrap_or_else(not_timed)?;
            Ok::<_, BenchError>((stats, download(&l.c)?))
        });
        let ours_outcomes: Vec<_> = ours_meta
            .into_iter()
            .zip(&c_ours)
            .map(|((kernel, launch_note), c)| {
                let outcome = timed
                    .next()
                    .unwrap_or_else(not_timed)
                    .and_then(|stats| Ok((stats, download(c)?)));
                (kernel, launch_note, outcome)
            })
            .collect();
        drop(c_ours);
        self.report_rows(
            &workload,
            flops,
            bound,
            vec![(GEMM_EX, blas_outcome), (LT, lt_outcome)],
            ours_outcomes,
            |c| accuracy(c, &a_host, &b_host, dims, 1.0),
        );
        Ok(())
    }

    /// The FP8 rows at one shape: E4M3 `A` and `B` (random in [-1, 1), rounded to E4M3),
    /// `bf16` `C`, scales [`FP8_SCALES`]: cuBLASLt's scaled matmul (its fastest of the
    /// heuristic's candidates; `cublasGemmEx` takes no FP8, so there is no `gemmex` row)
    /// and our `wgmma` kernel ([`crate::matmul_fp8::Fp8GemmPlan`]), timed interleaved and
    /// checked as the other precisions.
    ///
    /// # Errors
    /// As [`Bench::precision_gemm`].
    fn fp8_rows(
        &mut self,
        precision: GemmPrecision,
        (m, n, k): (u32, u32, u32),
    ) -> Result<(), GpuError> {
        use crate::matmul_fp8::Fp8GemmPlan;
        let dims = (m as usize, n as usize, k as usize);
        let (mu, nu, ku) = dims;
        let workload = format!("gemm {precision} {m}x{n}x{k}");
        self.log(&format!("{workload}: preparing inputs"));
        let fp8 = |seed, len| -> Vec<F8E4M3> {
            random_f64(seed, len)
                .into_par_iter()
                .map(|v| F8E4M3::from_f32((2.0 * (v - 1.0)) as f32))
                .collect()
        };
        let (a_host, b_host) = (fp8(21, mu * ku), fp8(22, nu * ku));
        let a = upload(self, &a_host)?;
        let b = upload(self, &b_host)?;
        let flops = 2.0 * mu as f64 * nu as f64 * ku as f64;
        let inner = launches_per_sample(flops);
        let bound = precision.error_bound(ku);
        let (scale_a, scale_b) = FP8_SCALES;

        let mut lt = self.opts.cublas.then(|| -> Result<_, BenchError> {
            // cuBLASLt reads the codes as bytes.
            let bytes = |x: &[F8E4M3]| x.iter().map(|v| v.to_bits()).collect::<Vec<u8>>();
            let (a8, b8) = (
                upload(self, &bytes(&a_host))?,
                upload(self, &bytes(&b_host))?,
            );
            let c = upload(self, &vec![bf16::NAN; mu * nu])?;
            let time = |f: &mut dyn FnMut() -> Result<(), BenchError>| self.time_lt(f);
            let l = LtGemm::prepare_fp8(
                blastoff::Fp8Format::E4m3,
                dims,
                FP8_SCALES,
                &a8,
                &b8,
                c,
                self.gpu.stream(),
                inner,
                &time,
            )?;
            Ok((l, a8, b8))
        });
        if let Some(Ok((l, ..))) = &lt {
            self.log(&format!(
                "{workload}: cublas lt: {}",
                l.selection.describe()
            ));
        }
        let mut c_ours = upload(self, &vec![bf16::NAN; mu * nu])?;
        let timed = {
            let gpu = &self.gpu;
            let stream = gpu.stream();
            let mut launches: Vec<Result<Launch<'_>, BenchError>> = Vec::new();
            if let Some(Ok((l, a8, b8))) = lt.as_mut() {
                let (a8, b8) = (&*a8, &*b8);
                launches.push(Ok(Box::new(move || l.launch(stream, a8, b8))));
            }
            launches.push(
                Fp8GemmPlan::<F8E4M3, bf16>::new(
                    gpu,
                    mu,
                    nu,
                    ku,
                    &a,
                    &b,
                    &mut c_ours,
                    scale_a,
                    scale_b,
                )
                .map(|mut plan| {
                    Box::new(move || plan.launch(gpu).map_err(BenchError::from)) as Launch<'_>
                })
                .map_err(BenchError::from),
            );
            self.time_interleaved(inner, launches)
        };
        let mut timed = timed.into_iter();
        let lt_outcome = lt.map(|prepared| {
            let (l, ..) = prepared?;
            let stats = timed.next().unwrap_or_else(not_timed)?;
            Ok::<_, BenchError>((stats, download(&l.c)?))
        });
        let ours = timed
            .next()
            .unwrap_or_else(not_timed)
            .and_then(|stats| Ok((stats, download(&c_ours)?)));
        drop(c_ours);
        let scale = f64::from(scale_a) * f64::from(scale_b);
        self.report_rows(
            &workload,
            flops,
            bound,
            vec![(LT, lt_outcome)],
            vec![("wgmma", None, ours)],
            |c| accuracy(c, &a_host, &b_host, dims, scale),
        );
        Ok(())
    }

    /// The rows of one (precision, shape) from what was timed: the cuBLAS rows (`peers`,
    /// by variant; `None`: not prepared, as with `--no-cublas`), ratios to the faster of
    /// them, and ours (`(kernel, launch note, outcome)`), each checked with `check`
    /// ([`accuracy`]) against `bound`, flagged ([`flags`]), logged and added to the
    /// entries; failures become notes.
    #[expect(
        clippy::type_complexity,
        reason = "the outcomes as timed: (stats, C) or why not"
    )]
    fn report_rows<C>(
        &mut self,
        workload: &str,
        flops: f64,
        bound: f64,
        outcomes: Vec<(&'static str, Option<Result<(Stats, Vec<C>), BenchError>>)>,
        ours_outcomes: Vec<(
            &'static str,
            Option<String>,
            Result<(Stats, Vec<C>), BenchError>,
        )>,
        check: impl Fn(&[C]) -> Accuracy,
    ) {
        // The cuBLAS rows (`cublasGemmEx`, cuBLASLt's fastest algorithm); ratios are to the
        // faster of the two.
        let mut peers: Vec<(Entry, Accuracy)> = Vec::new();
        for (variant, outcome) in outcomes {
            match outcome {
                Some(Ok((stats, c))) => {
                    let acc = check(&c);
                    let mut e = Entry::flops(workload, Implementation::Cublas, stats, flops);
                    e.variant = Some(variant.to_owned());
                    e.max_rel_error = Some(acc.max_rel);
                    peers.push((e, acc));
                }
                Some(Err(why)) => {
                    let line = format!("{workload}: cublas {variant} skipped: {why}");
                    self.log(&line);
                    self.notes.push(line);
                }
                None => {}
            }
        }
        let reference = fastest_peer(&peers);

        let mut rows = Vec::new();
        for (kernel, launch_note, outcome) in ours_outcomes {
            if let Some(note) = &launch_note
                && !CLUSTER_LAUNCH_LOGGED.swap(true, Ordering::Relaxed)
            {
                self.log(&format!("{workload}: rust {kernel}: {note}"));
            }
            let (stats, c_host) = match outcome {
                Ok(x) => x,
                Err(e) => {
                    let line = format!("{workload}: rust {kernel} did not run: {e}");
                    self.log(&line);
                    self.notes.push(line);
                    continue;
                }
            };
            let acc = check(&c_host);
            let mut e = Entry::flops(workload, Implementation::Rust, stats, flops);
            e.variant = Some(kernel.to_owned());
            e.max_rel_error = Some(acc.max_rel);
            let blas = reference.as_ref();
            if let Some((r, _)) = blas {
                e.vs_reference = e.tflop_per_s.zip(r.tflop_per_s).map(|(x, y)| x / y);
            }
            for flag in flags(&acc, blas.map(|(_, a)| a), bound) {
                let line = format!("FLAG {workload} rust {kernel}: {flag}");
                self.log(&line);
                self.notes.push(line);
            }
            rows.push(e);
        }

        let blas_text = if peers.is_empty() {
            "cublas -".to_owned()
        } else {
            peers
                .iter()
                .map(|(r, _)| {
                    format!(
                        "cublas {} {} (max err {:.2e})",
                        r.variant.as_deref().unwrap_or(""),
                        r.rate_text(),
                        r.max_rel_error.unwrap_or(f64::NAN)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ours_text: Vec<String> = rows
            .iter()
            .map(|e| {
                format!(
                    "rust {} {} ({}, max err {:.2e})",
                    e.variant.as_deref().unwrap_or(""),
                    e.rate_text(),
                    e.vs_reference.map_or_else(
                        || "no cuBLAS row to rate it by".to_owned(),
                        |r| { format!("{r:.3}x") }
                    ),
                    e.max_rel_error.unwrap_or(f64::NAN)
                )
            })
            .collect();
        let line = format!(
            "{workload}: {}{blas_text}; error bound {bound:.2e}",
            ours_text
                .iter()
                .map(|t| format!("{t}, "))
                .collect::<String>()
        );
        self.log(&line);
        for (e, acc) in &peers {
            if acc.non_finite > 0 || acc.max_rel > bound {
                let line = format!(
                    "FLAG {workload} cublas {}: max err {:.2e} (bound {bound:.2e}), {} non-finite",
                    e.variant.as_deref().unwrap_or(""),
                    acc.max_rel,
                    acc.non_finite
                );
                self.log(&line);
                self.notes.push(line);
            }
        }
        self.entries.extend(rows);
        self.entries.extend(peers.into_iter().map(|(e, _)| e));
    }

    /// Times `launches` (each one launch on the bench's stream; an `Err` is an
    /// implementation that could not be prepared) interleaved, with this run's repetitions
    /// ([`crate::timing::Repeat::events_interleaved`]): each sample of an implementation is
    /// `inner` back-to-back launches between two CUDA events. Returns, for each launch in
    /// order, its per-launch timing ([`per_launch`]), or its preparation's error or its
    /// first error while timed (after which it was not launched again: the others went on).
    fn time_interleaved(
        &self,
        inner: u32,
        mut launches: Vec<Result<Launch<'_>, BenchError>>,
    ) -> Vec<Result<Stats, BenchError>> {
        let mut timed = {
            let mut samples: Vec<_> = launches
                .iter_mut()
                .filter_map(|l| l.as_mut().ok())
                .map(|launch| {
                    move || -> Result<(), BenchError> {
                        for _ in 0..inner {
                            launch()?;
                        }
                        Ok(())
                    }
                })
                .collect();
            let mut fs: Vec<&mut dyn FnMut() -> Result<(), BenchError>> = samples
                .iter_mut()
                .map(|f| f as &mut dyn FnMut() -> Result<(), BenchError>)
                .collect();
            self.repeat
                .events_interleaved(self.gpu.context(), self.gpu.stream(), &mut fs)
                .into_iter()
        };
        launches
            .into_iter()
            .map(|l| {
                l.and_then(|_| timed.next().unwrap_or_else(not_timed))
                    .map(|stats| per_launch(stats, inner))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_and_per_launch_stats() {
        assert_eq!(launches_per_sample(2.0 * 2048f64.powi(3)), 12);
        assert_eq!(launches_per_sample(2.0 * 8192f64.powi(3)), 1);
        let s = per_launch(Stats::from_samples(vec![4.0, 8.0, 6.0]), 4);
        assert_eq!((s.min_ms, s.median_ms, s.max_ms), (1.0, 1.5, 2.0));
    }
}
