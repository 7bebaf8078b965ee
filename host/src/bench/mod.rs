//! `ferrocuda bench`: times the vector workloads of [`crate::vector`] against references
//! measured in the same run — a device-to-device `memcpy` (bandwidth ceiling), cuBLAS SGEMM
//! with TF32 off (FP32 ceiling), CUB, and, where `nvcc` is on `PATH`, CUDA C twins of every
//! kernel ([`twins`]).
//!
//! Timing ([`crate::timing`]): `warmup` untimed runs (at least 50 ms of them, so clocks ramp
//! up), then `reps` runs each between two CUDA events on the stream (synchronised after
//! each); median, min, max and quartiles in milliseconds.
//! Bandwidth counts bytes as STREAM does (each array element read or written once: copy and
//! scale 2 words per element, add, triad and axpy 3, dot 2, reductions 1, scans 2 — the
//! single-pass scan moves exactly that; sorts 2 per key and per value, [`sort`]); SGEMM
//! counts 2·m·n·k flops.
//!
//! A run ([`run`]) builds a [`Bench`] and walks the jobs in order: the memcpy reference,
//! the vector workloads (`vectors.rs`), the radix sorts ([`sort`]: 2^20, 2^24, 2^28 `u32`
//! keys and pairs, uniform and 4-valued), SGEMM (`sgemm.rs`, with `cublas.rs`), CUB ([`cub`]),
//! the GEMM rows by precision if asked for (`gemm/`: BF16, FP16, TF32, FP32 against
//! cuBLAS's `cublasGemmEx`, see [`GemmPrecision`]), then the best peers and the [`Report`]
//! ([`report`], drawn by [`chart`]). With `attention` set it runs only the attention rows
//! ([`attention`]: our kernel against torch's SDPA backends and FlashAttention-3, measured
//! by a Python script in the same bundle run).

use crate::gpu::{Gpu, GpuError};
use crate::timing::{Repeat, Stats};
use crate::vector::Element;
use cust::{error::GpuContext, memory::DeviceBuffer, module::Module};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

pub mod attention;
pub mod chart;
pub mod cub;
mod cublas;
mod cublaslt;
mod elementwise;
mod gemm;
pub mod mandelbrot;
pub mod report;
mod sgemm;
pub mod sort;
pub mod twins;
pub mod vector_add;
mod vectors;

pub use gemm::{DEFAULT_PRECISION_GEMM_SHAPES, GemmPrecision};
pub use report::{Entry, Report, fill_best_peers, output_files, shapes, table};

/// What to run.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Elements per vector (default 2^28: 1 GiB per f32 array, well beyond L2).
    pub len: usize,
    /// SGEMM shapes `(m, n, k)`, each timed in turn.
    pub gemm: Vec<(u32, u32, u32)>,
    /// Untimed runs before timing.
    pub warmup: u32,
    /// Timed runs.
    pub reps: u32,
    /// Build and time the CUDA C twins (needs `nvcc`).
    pub cuda_c: bool,
    /// Time cuBLAS SGEMM (needs `libcublas.so` on the loader path).
    pub cublas: bool,
    /// Build and time CUB's reductions, scans and radix sorts (needs `nvcc` with CUB, as
    /// in the CUDA toolkit).
    pub cub: bool,
    /// The precisions of the GEMM rows by precision (`gemm/`); empty: none (the default).
    pub precision_gemm: Vec<GemmPrecision>,
    /// Their shapes `(m, n, k)` (row-major `C = A·Bᵀ`, `A` m×k, `B` n×k), each timed for
    /// every precision; usually [`DEFAULT_PRECISION_GEMM_SHAPES`].
    pub precision_gemm_shapes: Vec<(u32, u32, u32)>,
    /// Skip the memcpy reference, the vector workloads and CUB: only the SGEMM rows and
    /// the GEMM rows by precision.
    pub gemm_only: bool,
    /// Run only the attention rows ([`attention`]), nothing else.
    pub attention: bool,
    /// The attention peers measured by `bench/python/attention_peers.py` (its JSON, read).
    pub attention_peers: Option<attention::PeerFile>,
    /// Time only the workloads whose name contains one of these texts (e.g. `scan f64`,
    /// `sort`); empty: all. The memcpy reference always runs.
    pub workloads: Vec<String>,
}

/// Who implemented a timed row. In the JSON as `rust`, `cuda-c`, `cub`, `cublas`, `memcpy`,
/// `torch`, `flash-attn-3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Implementation {
    /// ferrocuda's Rust kernel.
    Rust,
    /// Its CUDA C twin ([`twins`]).
    CudaC,
    /// CUB's device-wide algorithm ([`cub`]).
    Cub,
    /// cuBLAS SGEMM.
    Cublas,
    /// A device-to-device `memcpy` (the bandwidth reference).
    Memcpy,
    /// torch's `scaled_dot_product_attention` (the attention rows; the backend, `cudnn` or
    /// `flash`, is the entry's variant), measured by `bench/python/attention_peers.py`.
    Torch,
    /// FlashAttention-3's `flash_attn_interface.flash_attn_func`, measured by the same
    /// script where it imports.
    FlashAttn3,
}

impl Implementation {
    /// The name in the table, the JSON and the chart.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rust => "rust",
            Self::CudaC => "cuda-c",
            Self::Cub => "cub",
            Self::Cublas => "cublas",
            Self::Memcpy => "memcpy",
            Self::Torch => "torch",
            Self::FlashAttn3 => "flash-attn-3",
        }
    }
}

impl std::fmt::Display for Implementation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A peer's failure (cuBLAS, CUB, or a GPU error while timing it), as text.
#[derive(Debug)]
pub struct BenchError(pub String);

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<GpuError> for BenchError {
    fn from(e: GpuError) -> Self {
        Self(e.to_string())
    }
}

/// Warm-up lasts at least this long, whatever `warmup` says: after an idle stretch (e.g. while
/// the host prepares the next inputs) the GPU's clocks take a moment to come back up, which
/// showed as a slow, noisy first workload (sum u32: median 0.279 ms, min 0.246 ms, H200).
const MIN_WARMUP: Duration = Duration::from_millis(50);

/// One bench run's context: the GPU, what to run, how often, the peers that were built, and
/// what has been measured so far. Each job module adds methods.
pub struct Bench<'a> {
    gpu: Gpu,
    opts: BenchOptions,
    /// Elements per vector (at least 1).
    len: usize,
    repeat: Repeat,
    /// The memcpy row's bandwidth, GB/s (NaN until measured).
    memcpy_gb_per_s: f64,
    cuda_c: Option<twins::CudaC>,
    entries: Vec<Entry>,
    notes: Vec<String>,
    log: &'a mut dyn FnMut(&str),
}

impl std::fmt::Debug for Bench<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench")
            .field("opts", &self.opts)
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

/// Runs the benchmark; `log` gets progress lines.
///
/// # Errors
/// GPU failures of the Rust kernels or the memcpy reference; missing CUDA C / cuBLAS / CUB
/// are reported in [`Report::notes`] instead.
pub fn run(opts: &BenchOptions, mut log: impl FnMut(&str)) -> Result<Report, GpuError> {
    let t0 = Instant::now();
    let gpu = Gpu::new(0)?;
    let rust_module_load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let cc = gpu.context().compute_capability()?;
    let mut bench = Bench {
        gpu,
        opts: opts.clone(),
        len: opts.len.max(1),
        repeat: Repeat::new(opts.warmup, opts.reps).min_warmup(MIN_WARMUP),
        memcpy_gb_per_s: f64::NAN,
        cuda_c: None,
        entries: Vec::new(),
        notes: Vec::new(),
        log: &mut log,
    };
    bench.log(&format!("GPU {} ({cc})", bench.gpu.name()));
    let (ptx_jit_load_ms, cubin_load_ms) = bench.module_load_times(cc);
    if opts.attention {
        bench.attention(opts.attention_peers.as_ref())?;
        fill_best_peers(&mut bench.entries);
        return Ok(bench.report(
            cc,
            rust_module_load_ms,
            (ptx_jit_load_ms, cubin_load_ms),
            None,
        ));
    }
    let cuda_c_build_ms = bench.build_twins();
    if opts.gemm_only {
        bench
            .notes
            .push("memcpy, vector workloads and CUB skipped (--gemm-only)".into());
    } else {
        bench.memcpy()?;
        bench.vectors()?;
        bench.sorts()?;
    }
    for shape in opts.gemm.clone() {
        bench.sgemm(shape)?;
    }
    if !opts.gemm_only {
        bench.cub()?;
    }
    for &precision in &opts.precision_gemm {
        for &shape in &opts.precision_gemm_shapes {
            bench.precision_gemm(precision, shape)?;
        }
    }
    fill_best_peers(&mut bench.entries);
    Ok(bench.report(
        cc,
        rust_module_load_ms,
        (ptx_jit_load_ms, cubin_load_ms),
        cuda_c_build_ms,
    ))
}

impl Bench<'_> {
    /// Whether `workload` is timed in this run ([`BenchOptions::workloads`]).
    fn wants(&self, workload: &str) -> bool {
        self.opts.workloads.is_empty() || self.opts.workloads.iter().any(|w| workload.contains(w))
    }

    /// The report of what was measured.
    fn report(
        self,
        cc: cust::module::ComputeCapability,
        rust_module_load_ms: f64,
        (ptx_jit_load_ms, cubin_load_ms): (Option<f64>, Option<f64>),
        cuda_c_build_ms: Option<f64>,
    ) -> Report {
        Report {
            device: self.gpu.name(),
            compute_capability: (cc.major, cc.minor),
            len: self.len,
            gemm: if self.opts.attention {
                Vec::new()
            } else {
                self.opts.gemm.clone()
            },
            warmup: self.opts.warmup,
            reps: self.opts.reps,
            rust_module_load_ms,
            module_source: self.gpu.module_source().to_string(),
            ptx_jit_load_ms,
            cubin_load_ms,
            cuda_c_build_ms,
            notes: self.notes,
            entries: self.entries,
        }
    }

    /// A progress line.
    fn log(&mut self, line: &str) {
        (self.log)(line);
    }

    /// Times `f` (work queued on the bench's stream) with this run's repetitions.
    fn time<E: From<GpuError>>(&self, f: impl FnMut() -> Result<(), E>) -> Result<Stats, E> {
        self.repeat.events(self.gpu.context(), self.gpu.stream(), f)
    }

    /// Builds the CUDA C twins unless skipped; returns the build time in ms.
    fn build_twins(&mut self) -> Option<f64> {
        if !self.opts.cuda_c {
            self.notes.push("CUDA C twins skipped (--no-cuda-c)".into());
            return None;
        }
        let t = Instant::now();
        match twins::CudaC::build(&self.gpu) {
            Ok(m) => {
                self.cuda_c = Some(m);
                Some(t.elapsed().as_secs_f64() * 1e3)
            }
            Err(e) => {
                self.notes.push(format!("CUDA C twins skipped: {e}"));
                self.log(&format!("CUDA C twins skipped: {e}"));
                None
            }
        }
    }

    /// Loads the kernels module once more from the PTX (driver JIT) and, if the binary has
    /// one for this compute capability, from the cubin, timing each load (the modules are
    /// dropped). Failures become notes.
    fn module_load_times(
        &mut self,
        cc: cust::module::ComputeCapability,
    ) -> (Option<f64>, Option<f64>) {
        let gpu = &self.gpu;
        let notes = &mut self.notes;
        let mut time = |what: &str, load: &dyn Fn() -> Result<Module, GpuError>| {
            let t = Instant::now();
            match load() {
                Ok(m) => {
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    drop(m);
                    Some(ms)
                }
                Err(e) => {
                    notes.push(format!("{what} load failed: {e}"));
                    None
                }
            }
        };
        let ptx = time("PTX", &|| {
            Module::from_ptx_in(gpu.context(), crate::KERNELS.ptx)
        });
        let cubin = crate::KERNELS.cubin(cc).map(|c| c.bytes).and_then(|c| {
            time("cubin", &|| {
                Module::from_cubin_in(gpu.context(), c, "the kernels module's cubin")
            })
        });
        let line = format!(
            "kernels module: {} ({:.1} ms in Gpu::new); PTX JIT load {}, cubin load {}",
            self.gpu.module_source(),
            self.gpu.module_load_time().as_secs_f64() * 1e3,
            report::ms_or_dash(ptx),
            report::ms_or_dash(cubin)
        );
        self.log(&line);
        (ptx, cubin)
    }

    /// Pushes the Rust entry and, if timed, the CUDA C entry, filling the Rust/CUDA C ratio.
    fn push_pair(&mut self, mut rust: Entry, cuda: Option<Entry>) {
        if let Some(c) = &cuda {
            rust.vs_cuda_c = match (rust.gb_per_s, c.gb_per_s, rust.tflop_per_s, c.tflop_per_s) {
                (Some(a), Some(b), _, _) | (_, _, Some(a), Some(b)) => Some(a / b),
                _ => None,
            };
        }
        let line = format!(
            "{}: rust {}{}",
            rust.workload,
            rust.rate_text(),
            cuda.as_ref()
                .map(|c| format!(", cuda-c {}", c.rate_text()))
                .unwrap_or_default()
        );
        self.log(&line);
        self.entries.push(rust);
        self.entries.extend(cuda);
    }
}

/// Pseudo-random, nonzero, bounded inputs in [0.5, 1.5) (splitmix64 of the index) — never
/// zeros, which can run faster than real data.
fn random_f64(seed: u64, n: usize) -> Vec<f64> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let mut z = (i as u64 ^ seed.rotate_left(17)).wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 11) as f64 / (1u64 << 53) as f64) + 0.5 // [0.5, 1.5)
        })
        .collect()
}

/// The first element of `x`, copied to the host.
fn download_one<T: Element>(x: &DeviceBuffer<T>) -> Result<T, GpuError> {
    let v = x
        .index(0..1)?
        .as_host_vec()
        .gpu_context("copying a result to the host")?;
    Ok(v[0])
}
