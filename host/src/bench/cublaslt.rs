//! cuBLASLt, the fastest cuBLAS path for a GEMM row by precision: `cublasLtMatmul`
//! ([`blastoff::LtMatmul`]) with the algorithms its heuristic proposes for the shape, each
//! timed, the fastest kept.
//!
//! This is the path frameworks take (torch's `a @ b.t()` calls `cublasLtMatmul`), with
//! torch's default settings: a 32 MiB workspace (cuBLAS's recommendation for Hopper) and no
//! restriction on the reduction scheme (torch's `allow_bf16_reduced_precision_reduction` and
//! the FP16 one default to on, which leave `CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK`
//! unset). The layout is the bench's ([`super::gemm`]): row-major `C = A·Bᵀ`, computed as
//! the column-major `Cᵀ = op(B)·A` with `op = T` ([`super::gemm`]'s `cublas_call`).
//!
//! Selection: [`LtGemm::prepare`] asks the heuristic for up to [`CANDIDATES`] algorithms,
//! times each ([`SELECT_SAMPLES`] samples of `inner` launches between CUDA events, after one
//! warm-up sample) and keeps the one with the smallest median. The bench then times that
//! one interleaved with the other implementations.
//!
//! FP8 ([`LtGemm::prepare_fp8`]): the same with [`blastoff::LtMatmulFp8`], cuBLASLt's
//! scaled matmul (`D = scale_a·scale_b·(A·B)`, FP8 `A` and `B`, per-tensor scales in device
//! memory, `CUBLAS_COMPUTE_32F`), whose only layout, "TN", is the bench's.

use super::BenchError;
use blastoff::{
    ComputeType, CublasContext, Fp8Format, GemmExDatatype, LtMatmul, LtMatmulFp8, MatrixOp,
};
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::stream::Stream;
use std::time::Duration;

/// How many algorithms the heuristic is asked for.
pub(super) const CANDIDATES: usize = 8;

/// Timed samples per candidate during the selection.
const SELECT_SAMPLES: usize = 5;

/// Times one sample: runs the closure (which queues launches on the bench's stream) between
/// two CUDA events and waits for it.
pub(super) type TimeOne<'a> =
    dyn Fn(&mut dyn FnMut() -> Result<(), BenchError>) -> Result<Duration, BenchError> + 'a;

/// What [`LtGemm`] times: a cuBLASLt multiply of one problem and its proposed algorithms
/// ([`LtMatmul`], [`LtMatmulFp8`]), with the operand types `A` (of `A` and `B`) and `C`.
pub(super) trait LtProblem {
    /// The element type of `A` and `B` as cuBLASLt reads them.
    type A: DeviceCopy;
    /// The element type of `C`.
    type C: DeviceCopy;
    /// As [`LtMatmul::algorithms`].
    fn algorithms(&self) -> usize;
    /// As [`LtMatmul::select`].
    fn select(&mut self, index: usize) -> bool;
    /// As [`LtMatmul::matmul`].
    fn matmul(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<Self::A>,
        b: &DeviceBuffer<Self::A>,
        c: &mut DeviceBuffer<Self::C>,
    ) -> Result<(), blastoff::Error>;
}

impl<T: GemmExDatatype> LtProblem for LtMatmul<T> {
    type A = T;
    type C = T;
    fn algorithms(&self) -> usize {
        LtMatmul::algorithms(self)
    }
    fn select(&mut self, index: usize) -> bool {
        LtMatmul::select(self, index)
    }
    fn matmul(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        c: &mut DeviceBuffer<T>,
    ) -> Result<(), blastoff::Error> {
        LtMatmul::matmul(self, stream, a, b, c)
    }
}

impl<O: GemmExDatatype> LtProblem for LtMatmulFp8<O> {
    type A = u8;
    type C = O;
    fn algorithms(&self) -> usize {
        LtMatmulFp8::algorithms(self)
    }
    fn select(&mut self, index: usize) -> bool {
        LtMatmulFp8::select(self, index)
    }
    fn matmul(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<u8>,
        b: &DeviceBuffer<u8>,
        c: &mut DeviceBuffer<O>,
    ) -> Result<(), blastoff::Error> {
        LtMatmulFp8::matmul(self, stream, a, b, c)
    }
}

/// cuBLASLt for one (precision, shape) with its chosen algorithm, and its own `C`.
pub(super) struct LtGemm<L: LtProblem> {
    lt: L,
    /// `C`, m×n row-major, NaN-filled before the timing.
    pub c: DeviceBuffer<L::C>,
    /// What the selection found, for the bench log.
    pub selection: Selection,
}

/// The result of the selection.
#[derive(Clone, Debug)]
pub(super) struct Selection {
    /// Per candidate, in the heuristic's order: its median time per launch, or `None` if it
    /// failed to launch.
    pub medians_ms: Vec<Option<f64>>,
    /// The index of the fastest.
    pub chosen: usize,
}

impl Selection {
    /// One line for the bench log, e.g. `8 algorithms proposed, #2 fastest (0.151 ms; the
    /// heuristic's first: 0.163 ms)`.
    pub fn describe(&self) -> String {
        let ms = |i: usize| {
            self.medians_ms
                .get(i)
                .copied()
                .flatten()
                .map_or_else(|| "failed".to_owned(), |m| format!("{m:.4} ms"))
        };
        format!(
            "{} algorithms proposed, #{} fastest ({}; the heuristic's first: {})",
            self.medians_ms.len(),
            self.chosen + 1,
            ms(self.chosen),
            ms(0)
        )
    }
}

/// The index of the smallest of `medians` (`None`s skipped; the first of equal ones), or
/// `None` if every one is `None`.
fn fastest(medians: &[Option<f64>]) -> Option<usize> {
    medians
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.map(|m| (i, m)))
        .fold(None, |best: Option<(usize, f64)>, (i, m)| match best {
            Some((_, b)) if b <= m => best,
            _ => Some((i, m)),
        })
        .map(|(i, _)| i)
}

/// A cuBLASLt error as the bench's text.
fn text(e: blastoff::Error) -> BenchError {
    BenchError(e.to_string())
}

impl<T: GemmExDatatype> LtGemm<LtMatmul<T>> {
    /// Prepares cuBLASLt for the row-major `C = A·Bᵀ` (`a` m×k, `b` n×k) at `compute` and
    /// chooses its algorithm by timing the heuristic's candidates with `time` (each sample
    /// `inner` launches on `stream`), writing `c` (m×n, which it then owns).
    ///
    /// # Errors
    /// Why not, as text: no `libcublasLt.so`, a cuBLASLt error, no algorithm for the shape,
    /// every candidate failing.
    #[expect(
        clippy::too_many_arguments,
        reason = "the problem (compute, dims, operands, output) and how to time it"
    )]
    pub fn prepare(
        compute: ComputeType,
        (m, n, k): (usize, usize, usize),
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        c: DeviceBuffer<T>,
        stream: &Stream,
        inner: u32,
        time: &TimeOne<'_>,
    ) -> Result<Self, BenchError> {
        // Column-major: Cᵀ (n×m, ld n) = op(B's buffer, k×n stored, ld k; T) · (A's buffer,
        // k×m, ld k).
        let lt = LtMatmul::<T>::new(
            (MatrixOp::Transpose, MatrixOp::None),
            (n, m, k),
            k,
            k,
            n,
            compute,
            CublasContext::HOPPER_WORKSPACE_BYTES,
            CANDIDATES,
        )
        .map_err(text)?;
        Self::choose(lt, (m, n, k), a, b, c, stream, inner, time)
    }
}

impl<O: GemmExDatatype> LtGemm<LtMatmulFp8<O>> {
    /// As [`LtGemm::prepare`] for FP8 `a` and `b` (codes of `format`, as bytes) with the
    /// per-tensor scales `scales` (`(scale_a, scale_b)`): `C = scale_a·scale_b·(A·Bᵀ)`.
    ///
    /// # Errors
    /// As [`LtGemm::prepare`]; a scale that is not positive and finite.
    #[expect(
        clippy::too_many_arguments,
        reason = "the problem (format, dims, scales, operands, output) and how to time it"
    )]
    pub fn prepare_fp8(
        format: Fp8Format,
        (m, n, k): (usize, usize, usize),
        scales: (f32, f32),
        a: &DeviceBuffer<u8>,
        b: &DeviceBuffer<u8>,
        c: DeviceBuffer<O>,
        stream: &Stream,
        inner: u32,
        time: &TimeOne<'_>,
    ) -> Result<Self, BenchError> {
        // Column-major: Cᵀ = Bᵀ… as `prepare`: B's buffer is cuBLASLt's `A` (transposed,
        // the "TN" layout FP8 requires); cuBLASLt's `A` scale is then `B`'s.
        let lt = LtMatmulFp8::<O>::new(
            format,
            (n, m, k),
            k,
            k,
            n,
            (scales.1, scales.0),
            CublasContext::HOPPER_WORKSPACE_BYTES,
            CANDIDATES,
        )
        .map_err(text)?;
        Self::choose(lt, (m, n, k), a, b, c, stream, inner, time)
    }
}

impl<L: LtProblem> LtGemm<L> {
    /// Times each of `lt`'s algorithms on the row-major `C = A·Bᵀ` (`a` m×k, `b` n×k,
    /// writing `c`) with `time` (each sample `inner` launches on `stream`) and keeps the
    /// fastest.
    ///
    /// # Errors
    /// Every candidate failing.
    #[expect(
        clippy::too_many_arguments,
        reason = "the problem (multiply, dims, operands, output) and how to time it"
    )]
    fn choose(
        mut lt: L,
        (m, n, k): (usize, usize, usize),
        a: &DeviceBuffer<L::A>,
        b: &DeviceBuffer<L::A>,
        mut c: DeviceBuffer<L::C>,
        stream: &Stream,
        inner: u32,
        time: &TimeOne<'_>,
    ) -> Result<Self, BenchError> {
        let mut medians = Vec::new();
        // The first failure's message, for the error when every candidate fails.
        let mut first_error: Option<String> = None;
        for i in 0..lt.algorithms() {
            lt.select(i);
            let mut sample = || -> Result<(), BenchError> {
                for _ in 0..inner {
                    lt.matmul(stream, b, a, &mut c).map_err(text)?;
                }
                Ok(())
            };
            let median = (|| {
                time(&mut sample)?;
                let mut ms: Vec<f64> = (0..SELECT_SAMPLES)
                    .map(|_| time(&mut sample).map(|d| d.as_secs_f64() * 1e3))
                    .collect::<Result<_, _>>()?;
                ms.sort_by(f64::total_cmp);
                Ok::<_, BenchError>(ms[ms.len() / 2] / f64::from(inner.max(1)))
            })();
            medians.push(match median {
                Ok(ms) => Some(ms),
                Err(e) => {
                    first_error.get_or_insert_with(|| format!("#{}: {}", i + 1, e.0));
                    None
                }
            });
        }
        let Some(chosen) = fastest(&medians) else {
            return Err(BenchError(format!(
                "every one of cuBLASLt's {} algorithms failed for {m}x{n}x{k} (the first \
                 failure, {})",
                lt.algorithms(),
                first_error.as_deref().unwrap_or("none recorded")
            )));
        };
        lt.select(chosen);
        Ok(Self {
            lt,
            c,
            selection: Selection {
                medians_ms: medians,
                chosen,
            },
        })
    }

    /// Queues one `cublasLtMatmul` with the chosen algorithm on `stream`, writing
    /// `self.c` from `a` and `b` (the operands given to [`LtGemm::prepare`]).
    ///
    /// # Errors
    /// cuBLASLt's error, as text.
    pub fn launch(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<L::A>,
        b: &DeviceBuffer<L::A>,
    ) -> Result<(), BenchError> {
        self.lt.matmul(stream, b, a, &mut self.c).map_err(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_candidate_is_chosen_and_failures_are_skipped() {
        assert_eq!(fastest(&[Some(0.3), Some(0.2), None, Some(0.25)]), Some(1));
        assert_eq!(fastest(&[None, Some(0.4), Some(0.4)]), Some(1));
        assert_eq!(fastest(&[None, None]), None);
        assert_eq!(fastest(&[]), None);
        let s = Selection {
            medians_ms: vec![Some(0.163), None, Some(0.151)],
            chosen: 2,
        };
        assert_eq!(
            s.describe(),
            "3 algorithms proposed, #3 fastest (0.1510 ms; the heuristic's first: 0.1630 ms)"
        );
    }
}
