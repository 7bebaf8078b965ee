//! `ferrocuda bench`: times the vector workloads of [`crate::vector`] against references
//! measured in the same run — a device-to-device `memcpy` (bandwidth ceiling), cuBLAS SGEMM
//! with TF32 off (FP32 ceiling), and, where `nvcc` is on `PATH`, CUDA C twins of every kernel
//! (`bench/cuda/vector.cu`, embedded in the binary, compiled at run time with
//! `nvcc -O3 -arch=sm_XY -cubin`).
//!
//! Timing: `warmup` untimed runs (at least 50 ms of them, so clocks ramp up), then `reps`
//! runs each between two CUDA events on the stream (synchronised after each); median, min,
//! max and quartiles in milliseconds.
//! Bandwidth counts bytes as STREAM does (each array element read or written once: copy and
//! scale 2 words per element, add, triad and axpy 3, dot 2, reductions 1, scans 2 — the
//! single-pass scan moves exactly that); SGEMM counts 2·m·n·k flops.

use crate::gpu::{Gpu, GpuError, elapsed_ms};
use crate::vector::{Element, Float, ReduceOp, ScanKind, ScanState, Scannable, Scratch, Split};
use cudarc::driver::{CudaFunction, CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};
use cust::launch::ByValue;
use kernels::gemm::{SGEMM_THREADS, SGEMM_TILE_M, SGEMM_TILE_N};
use kernels::scan::SCAN_THREADS;
use kernels::vector::BLOCK_THREADS;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::{collections::HashMap, path::Path, time::Instant};

pub mod chart;
pub mod cub;

/// The CUDA C twins, compiled by the bench at run time when `nvcc` is available.
pub const CUDA_C_SOURCE: &str = include_str!("../../bench/cuda/vector.cu");

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
    /// Build and time CUB's reductions and scans (needs `nvcc` with CUB, as in the CUDA
    /// toolkit).
    pub cub: bool,
}

/// Summary of timed samples, milliseconds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stats {
    /// Median.
    pub median_ms: f64,
    /// Fastest.
    pub min_ms: f64,
    /// Slowest.
    pub max_ms: f64,
    /// First quartile.
    pub q1_ms: f64,
    /// Third quartile.
    pub q3_ms: f64,
    /// Number of samples.
    pub samples: usize,
}

impl Stats {
    /// From samples (not empty).
    pub fn from_samples(mut ms: Vec<f64>) -> Self {
        assert!(!ms.is_empty(), "no samples");
        ms.sort_by(f64::total_cmp);
        let q = |f: f64| ms[((ms.len() - 1) as f64 * f).round() as usize];
        Self {
            median_ms: q(0.5),
            min_ms: ms[0],
            max_ms: ms[ms.len() - 1],
            q1_ms: q(0.25),
            q3_ms: q(0.75),
            samples: ms.len(),
        }
    }
}

/// One timed implementation of one workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    /// Workload, e.g. `triad f32`.
    pub workload: String,
    /// `rust`, `cuda-c`, `memcpy` or `cublas`.
    pub implementation: String,
    /// Timing.
    pub stats: Stats,
    /// Bytes moved as STREAM counts them (bandwidth workloads).
    pub bytes: Option<u64>,
    /// Floating-point operations (SGEMM).
    pub flops: Option<f64>,
    /// Bandwidth at the median time, GB/s (10^9 bytes/s).
    pub gb_per_s: Option<f64>,
    /// Rate at the median time, TFLOP/s.
    pub tflop_per_s: Option<f64>,
    /// Rate over the reference's rate in this run (memcpy bandwidth, or cuBLAS for SGEMM).
    pub vs_reference: Option<f64>,
    /// Rust rate over the CUDA C twin's rate (Rust rows only).
    pub vs_cuda_c: Option<f64>,
    /// The fastest other implementation of this workload in this run, i.e. what a user
    /// could call instead (Rust rows only; absent from reports written before it existed):
    /// `cuda-c`, `cub`, `cublas`, or `memcpy` for the copy workloads. (For the other
    /// bandwidth workloads memcpy is a bound, in `vs_reference`, not a substitute.)
    #[serde(default)]
    pub best_peer: Option<String>,
    /// Rust rate over the best peer's rate (Rust rows only).
    #[serde(default)]
    pub vs_best_peer: Option<f64>,
}

/// Everything a bench run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// GPU name.
    pub device: String,
    /// Compute capability.
    pub compute_capability: (u32, u32),
    /// Elements per vector.
    pub len: usize,
    /// SGEMM shapes `(m, n, k)` (reports before several shapes were timed hold one).
    #[serde(deserialize_with = "one_or_many_shapes")]
    pub gemm: Vec<(u32, u32, u32)>,
    /// Warm-up runs.
    pub warmup: u32,
    /// Timed runs.
    pub reps: u32,
    /// Time to create the context and load the Rust kernels module, ms.
    pub rust_module_load_ms: f64,
    /// What `Gpu::new` loaded the kernels from: `cubin sm_XY` or `PTX JIT`.
    pub module_source: String,
    /// Loading the kernels module from the PTX (driver JIT), timed explicitly, ms.
    pub ptx_jit_load_ms: Option<f64>,
    /// Loading the build-time cubin for this GPU, timed explicitly, ms (`None`: no cubin
    /// for this compute capability in the binary).
    pub cubin_load_ms: Option<f64>,
    /// Time to compile the CUDA C twins with nvcc and load the cubin, ms.
    pub cuda_c_build_ms: Option<f64>,
    /// What was skipped and why, checks that were made.
    pub notes: Vec<String>,
    /// The measurements.
    pub entries: Vec<Entry>,
}

/// Warm-up lasts at least this long, whatever `warmup` says: after an idle stretch (e.g. while
/// the host prepares the next inputs) the GPU's clocks take a moment to come back up, which
/// showed as a slow, noisy first workload (sum u32: median 0.279 ms, min 0.246 ms, H200).
const MIN_WARMUP: std::time::Duration = std::time::Duration::from_millis(50);

/// Times `f` (which queues GPU work on `gpu`'s stream) with CUDA events: at least `warmup`
/// untimed runs lasting at least 50 ms together (`MIN_WARMUP`), then `reps` timed runs.
pub fn time_events<E: From<GpuError>>(
    gpu: &Gpu,
    warmup: u32,
    reps: u32,
    mut f: impl FnMut() -> Result<(), E>,
) -> Result<Stats, E> {
    let sync = || {
        gpu.stream()
            .as_cudarc()
            .synchronize()
            .map_err(GpuError::driver("synchronising after a timed run"))
    };
    let warm_start = std::time::Instant::now();
    let mut runs = 0;
    while runs < warmup || warm_start.elapsed() < MIN_WARMUP {
        f()?;
        sync()?;
        runs += 1;
    }
    let mut ms = Vec::with_capacity(reps as usize);
    for _ in 0..reps.max(1) {
        let start = gpu.record_event()?;
        f()?;
        let end = gpu.record_event()?;
        sync()?;
        ms.push(f64::from(elapsed_ms(&start, &end)?));
    }
    Ok(Stats::from_samples(ms))
}

/// Compiles CUDA C `source` for `gpu`'s architecture with `nvcc -O3 -arch=sm_XY -cubin` (in a
/// temporary folder, as `<stem>.cu`) and loads the cubin. `Err` says why not: no nvcc on
/// `PATH`, a compile error (with nvcc's messages), a load error.
pub fn nvcc_module(
    gpu: &Gpu,
    stem: &str,
    source: &str,
) -> Result<std::sync::Arc<cudarc::driver::CudaModule>, String> {
    let (major, minor) = gpu
        .context()
        .compute_capability()
        .map_err(|e| format!("reading the compute capability: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let src = dir.path().join(format!("{stem}.cu"));
    let cubin = dir.path().join(format!("{stem}.cubin"));
    std::fs::write(&src, source).map_err(|e| format!("writing {}: {e}", src.display()))?;
    let out = std::process::Command::new("nvcc")
        .args(["-O3", &format!("-arch=sm_{major}{minor}"), "-cubin", "-o"])
        .arg(&cubin)
        .arg(&src)
        .output()
        .map_err(|e| format!("cannot run nvcc ({e}): put the CUDA toolkit's bin folder on PATH"))?;
    if !out.status.success() {
        return Err(format!(
            "nvcc failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let bytes = std::fs::read(&cubin).map_err(|e| format!("reading the cubin: {e}"))?;
    gpu.context()
        .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
        .map_err(|e| format!("loading the CUDA C cubin: {e}"))
}

/// The CUDA C twins: a module built from [`CUDA_C_SOURCE`] by `nvcc`.
pub struct CudaC {
    functions: HashMap<String, CudaFunction>,
}

impl std::fmt::Debug for CudaC {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaC")
            .field("functions", &self.functions.len())
            .finish()
    }
}

impl CudaC {
    /// Compiles the twins for `gpu`'s architecture with `nvcc -O3 -arch=sm_XY -cubin` and
    /// loads them. `Err` says why not (no nvcc, compile error, load error).
    pub fn build(gpu: &Gpu) -> Result<Self, String> {
        let module = nvcc_module(gpu, "vector", CUDA_C_SOURCE)?;
        let mut functions = HashMap::new();
        for name in CUDA_C_KERNELS {
            let f = module
                .load_function(name)
                .map_err(|e| format!("CUDA C kernel `{name}`: {e}"))?;
            functions.insert((*name).to_owned(), f);
        }
        Ok(Self { functions })
    }

    fn args<'a>(&'a self, gpu: &'a Gpu, name: &str) -> LaunchArgs<'a> {
        gpu.stream().launch_builder(&self.functions[name])
    }
}

const CUDA_C_KERNELS: &[&str] = &[
    "cu_copy_f32",
    "cu_scale_f32",
    "cu_add_f32",
    "cu_triad_f32",
    "cu_axpy_f32",
    "cu_copy_f64",
    "cu_scale_f64",
    "cu_add_f64",
    "cu_triad_f64",
    "cu_axpy_f64",
    "cu_reduce_sum_f32",
    "cu_reduce_min_f32",
    "cu_reduce_max_f32",
    "cu_reduce_sum_f64",
    "cu_reduce_min_f64",
    "cu_reduce_max_f64",
    "cu_reduce_sum_u32",
    "cu_reduce_min_u32",
    "cu_reduce_max_u32",
    "cu_dot_f32",
    "cu_dot_f64",
    "cu_scan_inclusive_f32",
    "cu_scan_exclusive_f32",
    "cu_scan_inclusive_u32",
    "cu_scan_exclusive_u32",
    "cu_sgemm",
];

/// Static name of a CUDA C twin (for error messages, which need `&'static str`).
fn cu_name(rust_kernel: &str) -> &'static str {
    CUDA_C_KERNELS
        .iter()
        .find(|n| n.strip_prefix("cu_") == Some(rust_kernel))
        .copied()
        .unwrap_or("cu_unknown")
}

fn cfg_1d(blocks: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (BLOCK_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// A STREAM-style operation, for launching either implementation with the same shape.
#[derive(Clone, Copy, Debug)]
enum StreamOp {
    Copy,
    Scale,
    Add,
    Triad,
    Axpy,
}

impl StreamOp {
    const ALL: [StreamOp; 5] = [Self::Copy, Self::Scale, Self::Add, Self::Triad, Self::Axpy];
    fn index(self) -> usize {
        self as usize
    }
    fn name(self) -> &'static str {
        ["copy", "scale", "add", "triad", "axpy"][self.index()]
    }
    /// Words moved per element (STREAM counting).
    fn words(self) -> u64 {
        [2, 2, 3, 3, 3][self.index()]
    }
}

/// Device buffers for the vector workloads of one element type.
struct Vectors<T> {
    a: CudaSlice<T>,
    b: CudaSlice<T>,
    c: CudaSlice<T>,
    scratch: Scratch<T>,
}

/// Pseudo-random, nonzero, bounded inputs (splitmix64 of the index) — never zeros, which
/// can run faster than real data.
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

/// Runs the benchmark.
///
/// # Errors
/// GPU failures of the Rust kernels or the memcpy reference; missing CUDA C / cuBLAS are
/// reported in [`Report::notes`] instead.
pub fn run(opts: &BenchOptions, mut log: impl FnMut(&str)) -> Result<Report, GpuError> {
    let t0 = Instant::now();
    let gpu = Gpu::new(0)?;
    let rust_module_load_ms = t0.elapsed().as_secs_f64() * 1e3;
    let cc = gpu.context().compute_capability()?;
    let mut notes = Vec::new();
    let mut entries = Vec::new();
    log(&format!("GPU {} (sm_{}{})", gpu.name(), cc.0, cc.1));
    let (ptx_jit_load_ms, cubin_load_ms) = module_load_times(&gpu, cc, &mut notes);
    log(&format!(
        "kernels module: {} ({:.1} ms in Gpu::new); PTX JIT load {}, cubin load {}",
        gpu.module_source(),
        gpu.module_load_time().as_secs_f64() * 1e3,
        ms_or_dash(ptx_jit_load_ms),
        ms_or_dash(cubin_load_ms)
    ));

    let mut cuda_c_build_ms = None;
    let cuda_c = if opts.cuda_c {
        let t = Instant::now();
        match CudaC::build(&gpu) {
            Ok(m) => {
                cuda_c_build_ms = Some(t.elapsed().as_secs_f64() * 1e3);
                Some(m)
            }
            Err(e) => {
                notes.push(format!("CUDA C twins skipped: {e}"));
                log(&format!("CUDA C twins skipped: {e}"));
                None
            }
        }
    } else {
        notes.push("CUDA C twins skipped (--no-cuda-c)".into());
        None
    };

    let n = opts.len.max(1);
    let (w, r) = (opts.warmup, opts.reps);

    // Reference: device-to-device copy of n f32 (reads and writes 4 bytes per element).
    let memcpy = {
        let src = crate::vector::upload(
            &gpu,
            &random_f64(1, n)
                .iter()
                .map(|&v| v as f32)
                .collect::<Vec<_>>(),
        )?;
        let mut dst = crate::vector::poisoned::<f32>(&gpu, n)?;
        let stats = time_events(&gpu, w, r, || {
            gpu.stream()
                .memcpy_dtod(&src, &mut dst)
                .map_err(GpuError::driver("device-to-device copy"))
        })?;
        let bytes = 8 * n as u64;
        let e = bandwidth_entry("memcpy d2d f32", "memcpy", stats, bytes, None);
        log(&format!("memcpy: {:.1} GB/s", e.gb_per_s.unwrap_or(0.0)));
        entries.push(e);
        entries[0].gb_per_s.unwrap_or(f64::NAN)
    };

    {
        let mut v = bench_float::<f32>(
            &gpu,
            cuda_c.as_ref(),
            n,
            w,
            r,
            memcpy,
            &mut entries,
            &mut log,
        )?;
        let (x, out, scratch) = (&v.a, &mut v.c, &mut v.scratch);
        scans(
            &gpu,
            cuda_c.as_ref(),
            x,
            out,
            scratch,
            n,
            w,
            r,
            memcpy,
            &mut entries,
            &mut log,
        )?;
    }
    // f64 after the f32 buffers are freed.
    drop(bench_float::<f64>(
        &gpu,
        cuda_c.as_ref(),
        n,
        w,
        r,
        memcpy,
        &mut entries,
        &mut log,
    )?);
    bench_u32(
        &gpu,
        cuda_c.as_ref(),
        n,
        w,
        r,
        memcpy,
        &mut entries,
        &mut log,
    )?;
    for &shape in &opts.gemm {
        bench_sgemm(
            &gpu,
            cuda_c.as_ref(),
            shape,
            opts,
            &mut entries,
            &mut notes,
            &mut log,
        )?;
    }
    if opts.cub {
        match cub::Cub::build(&gpu) {
            Ok(peers) => {
                let (v0, v1, v2) = peers.version;
                log(&format!("CUB {v0}.{v1}.{v2}: reductions and scans"));
                notes.push(format!("CUB {v0}.{v1}.{v2} (built with nvcc at run time)"));
                cub::entries::<f32>(
                    &gpu,
                    &peers,
                    n,
                    true,
                    (w, r),
                    memcpy,
                    &mut entries,
                    &mut notes,
                )?;
                cub::entries::<f64>(
                    &gpu,
                    &peers,
                    n,
                    false,
                    (w, r),
                    memcpy,
                    &mut entries,
                    &mut notes,
                )?;
                cub::entries::<u32>(
                    &gpu,
                    &peers,
                    n,
                    true,
                    (w, r),
                    memcpy,
                    &mut entries,
                    &mut notes,
                )?;
            }
            Err(e) => {
                log(&format!("CUB skipped: {e}"));
                notes.push(format!("CUB skipped: {e}"));
            }
        }
    } else {
        notes.push("CUB skipped (--no-cub)".into());
    }
    fill_best_peers(&mut entries);

    Ok(Report {
        device: gpu.name(),
        compute_capability: cc,
        len: n,
        gemm: opts.gemm.clone(),
        warmup: w,
        reps: r,
        rust_module_load_ms,
        module_source: gpu.module_source().to_string(),
        ptx_jit_load_ms,
        cubin_load_ms,
        cuda_c_build_ms,
        notes,
        entries,
    })
}

fn ms_or_dash(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |v| format!("{v:.1} ms"))
}

/// Loads the kernels module once more from the PTX (driver JIT) and, if the binary has one
/// for this compute capability, from the cubin, timing each load (the modules are dropped).
/// Failures become notes.
fn module_load_times(
    gpu: &Gpu,
    cc: (u32, u32),
    notes: &mut Vec<String>,
) -> (Option<f64>, Option<f64>) {
    let mut time = |what: &str, ptx: cudarc::nvrtc::Ptx| {
        let t = Instant::now();
        match gpu.context().load_module(ptx) {
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
    let ptx = time("PTX", cudarc::nvrtc::Ptx::from_src(crate::PTX));
    let cubin = crate::KERNELS
        .cubins
        .iter()
        .find(|c| (c.arch.major, c.arch.minor) == cc)
        .and_then(|c| time("cubin", cudarc::nvrtc::Ptx::from_binary(c.bytes.to_vec())));
    (ptx, cubin)
}

fn bandwidth_entry(
    workload: &str,
    imp: &str,
    stats: Stats,
    bytes: u64,
    memcpy: Option<f64>,
) -> Entry {
    let gbs = bytes as f64 / (stats.median_ms * 1e-3) / 1e9;
    Entry {
        workload: workload.to_owned(),
        implementation: imp.to_owned(),
        stats,
        bytes: Some(bytes),
        flops: None,
        gb_per_s: Some(gbs),
        tflop_per_s: None,
        vs_reference: memcpy.map(|m| gbs / m),
        vs_cuda_c: None,
        best_peer: None,
        vs_best_peer: None,
    }
}

/// Pushes the Rust entry and, if timed, the CUDA C entry, filling the Rust/CUDA C ratio.
fn push_pair(
    entries: &mut Vec<Entry>,
    mut rust: Entry,
    cuda: Option<Entry>,
    log: &mut impl FnMut(&str),
) {
    if let Some(c) = &cuda {
        rust.vs_cuda_c = match (rust.gb_per_s, c.gb_per_s, rust.tflop_per_s, c.tflop_per_s) {
            (Some(a), Some(b), _, _) | (_, _, Some(a), Some(b)) => Some(a / b),
            _ => None,
        };
    }
    let rate = |e: &Entry| {
        e.gb_per_s
            .map(|g| format!("{g:.1} GB/s"))
            .or(e.tflop_per_s.map(|t| format!("{t:.2} TFLOP/s")))
            .unwrap_or_default()
    };
    log(&format!(
        "{}: rust {}{}",
        rust.workload,
        rate(&rust),
        cuda.as_ref()
            .map(|c| format!(", cuda-c {}", rate(c)))
            .unwrap_or_default()
    ));
    entries.push(rust);
    entries.extend(cuda);
}

#[allow(clippy::too_many_arguments)]
fn bench_float<T: Float>(
    gpu: &Gpu,
    cuda_c: Option<&CudaC>,
    n: usize,
    w: u32,
    r: u32,
    memcpy: f64,
    entries: &mut Vec<Entry>,
    log: &mut impl FnMut(&str),
) -> Result<Vectors<T>, GpuError> {
    let size = std::mem::size_of::<T>() as u64;
    let mk = |seed| -> Result<CudaSlice<T>, GpuError> {
        let v: Vec<T> = random_f64(seed, n).into_iter().map(T::from_f64).collect();
        crate::vector::upload(gpu, &v)
    };
    let mut v = Vectors {
        a: mk(2)?,
        b: mk(3)?,
        c: mk(4)?,
        scratch: crate::vector::scratch::<T>(gpu, n)?,
    };
    let q = T::from_f64(0.75);
    let cfg = crate::vector::stream_config::<T>(n);
    for op in StreamOp::ALL {
        let workload = format!("{} {}", op.name(), T::NAME);
        let bytes = op.words() * size * n as u64;
        let stats = time_events(gpu, w, r, || rust_stream(gpu, op, q, &mut v))?;
        let rust = bandwidth_entry(&workload, "rust", stats, bytes, Some(memcpy));
        let cuda = match cuda_c {
            Some(cu) => {
                let stats = time_events(gpu, w, r, || cuda_stream(gpu, cu, op, q, cfg, n, &mut v))?;
                Some(bandwidth_entry(
                    &workload,
                    "cuda-c",
                    stats,
                    bytes,
                    Some(memcpy),
                ))
            }
            None => None,
        };
        push_pair(entries, rust, cuda, log);
    }
    // Dot: 2 words per element.
    {
        let workload = format!("dot {}", T::NAME);
        let bytes = 2 * size * n as u64;
        let stats = time_events(gpu, w, r, || {
            crate::vector::dot_dev(gpu, &v.a, &v.b, &mut v.scratch)
        })?;
        let rust = bandwidth_entry(&workload, "rust", stats, bytes, Some(memcpy));
        let cuda = match cuda_c {
            Some(cu) => {
                let stats = time_events(gpu, w, r, || cuda_dot(gpu, cu, n, &mut v))?;
                Some(bandwidth_entry(
                    &workload,
                    "cuda-c",
                    stats,
                    bytes,
                    Some(memcpy),
                ))
            }
            None => None,
        };
        push_pair(entries, rust, cuda, log);
    }
    reductions(
        gpu,
        cuda_c,
        &v.a,
        &mut v.scratch,
        n,
        w,
        r,
        memcpy,
        entries,
        log,
    )?;
    Ok(v)
}

fn rust_stream<T: Float>(
    gpu: &Gpu,
    op: StreamOp,
    q: T,
    v: &mut Vectors<T>,
) -> Result<(), GpuError> {
    match op {
        StreamOp::Copy => crate::vector::copy_dev(gpu, &v.a, &mut v.c),
        StreamOp::Scale => crate::vector::scale_dev(gpu, &v.c, q, &mut v.b),
        StreamOp::Add => crate::vector::add_dev(gpu, &v.a, &v.b, &mut v.c),
        StreamOp::Triad => crate::vector::triad_dev(gpu, &v.b, &v.c, q, &mut v.a),
        // y = q·x + y grows y by ~1 per run: fine for timing, values stay finite.
        StreamOp::Axpy => crate::vector::axpy_dev(gpu, q, &v.a, &mut v.b),
    }
}

fn cuda_stream<T: Float>(
    gpu: &Gpu,
    cu: &CudaC,
    op: StreamOp,
    q: T,
    cfg: LaunchConfig,
    n: usize,
    v: &mut Vectors<T>,
) -> Result<(), GpuError> {
    let name = cu_name(T::STREAM[op.index()]);
    let mut args = cu.args(gpu, name);
    let (q, n) = (ByValue(q), n);
    match op {
        StreamOp::Copy => args.arg(&v.a).arg(&mut v.c).arg(&n),
        StreamOp::Scale => args.arg(&v.c).arg(&q).arg(&mut v.b).arg(&n),
        StreamOp::Add => args.arg(&v.a).arg(&v.b).arg(&mut v.c).arg(&n),
        StreamOp::Triad => args.arg(&v.b).arg(&v.c).arg(&q).arg(&mut v.a).arg(&n),
        StreamOp::Axpy => args.arg(&q).arg(&v.a).arg(&mut v.b).arg(&n),
    };
    // SAFETY: matches the `cu_<op>_<T>` signatures in bench/cuda/vector.cu (pointers, the
    // scalar by value, `size_t n`); every buffer holds n elements.
    unsafe { cust::launch::launch_built(name, cfg, args) }
}

fn cuda_reduce_pass<T: Element>(
    gpu: &Gpu,
    cu: &CudaC,
    name: &'static str,
    x: &CudaSlice<T>,
    split: Split,
    out: &mut CudaSlice<T>,
) -> Result<(), GpuError> {
    let (len, chunk) = (x.len(), split.chunk);
    let mut args = cu.args(gpu, name);
    args.arg(x).arg(&len).arg(&chunk).arg(out);
    // SAFETY: `cu_reduce_*(const T* x, size_t n, size_t chunk, T* out)`; `out` has an
    // element per block; chunk a positive multiple of 4.
    unsafe { cust::launch::launch_built(name, cfg_1d(split.blocks), args) }
}

fn cuda_dot<T: Float>(gpu: &Gpu, cu: &CudaC, n: usize, v: &mut Vectors<T>) -> Result<(), GpuError> {
    let split = v.scratch.split();
    let name = cu_name(T::STREAM[5]);
    {
        let chunk = split.chunk;
        let mut args = cu.args(gpu, name);
        args.arg(&v.a)
            .arg(&v.b)
            .arg(&n)
            .arg(&chunk)
            .arg(v.scratch.reduce_buffers().0);
        // SAFETY: `cu_dot_*(const T* a, const T* b, size_t n, size_t chunk, T* out)`.
        unsafe { cust::launch::launch_built(name, cfg_1d(split.blocks), args)? };
    }
    let second = Split {
        blocks: 1,
        chunk: (split.blocks as usize).div_ceil(4) * 4,
    };
    let sum = cu_name(T::REDUCE[0]);
    let (partials, result) = v.scratch.reduce_buffers();
    cuda_reduce_pass(gpu, cu, sum, partials, second, result)
}

#[allow(clippy::too_many_arguments)]
fn reductions<T: Element>(
    gpu: &Gpu,
    cuda_c: Option<&CudaC>,
    x: &CudaSlice<T>,
    scratch: &mut Scratch<T>,
    n: usize,
    w: u32,
    r: u32,
    memcpy: f64,
    entries: &mut Vec<Entry>,
    log: &mut impl FnMut(&str),
) -> Result<(), GpuError> {
    let bytes = (std::mem::size_of::<T>() * n) as u64;
    for op in ReduceOp::ALL {
        let workload = format!("{} {}", op.name(), T::NAME);
        let stats = time_events(gpu, w, r, || crate::vector::reduce_dev(gpu, op, x, scratch))?;
        let rust_value = download_one(gpu, &scratch.result)?;
        let rust = bandwidth_entry(&workload, "rust", stats, bytes, Some(memcpy));
        let cuda = match cuda_c {
            Some(cu) => {
                let name = cu_name(T::REDUCE[op as usize]);
                let split = scratch.split();
                let second = Split {
                    blocks: 1,
                    chunk: (split.blocks as usize).div_ceil(4) * 4,
                };
                let stats = time_events(gpu, w, r, || {
                    cuda_reduce_pass(gpu, cu, name, x, split, scratch.reduce_buffers().0)?;
                    let (p, res) = scratch.reduce_buffers();
                    cuda_reduce_pass(gpu, cu, name, p, second, res)
                })?;
                let cuda_value = download_one(gpu, &scratch.result)?;
                if cuda_value != rust_value {
                    log(&format!(
                        "{workload}: rust {rust_value:?} vs cuda-c {cuda_value:?} (float sums may differ in the last bits)"
                    ));
                }
                Some(bandwidth_entry(
                    &workload,
                    "cuda-c",
                    stats,
                    bytes,
                    Some(memcpy),
                ))
            }
            None => None,
        };
        push_pair(entries, rust, cuda, log);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn scans<T: Scannable>(
    gpu: &Gpu,
    cuda_c: Option<&CudaC>,
    x: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
    scratch: &mut Scratch<T>,
    n: usize,
    w: u32,
    r: u32,
    memcpy: f64,
    entries: &mut Vec<Entry>,
    log: &mut impl FnMut(&str),
) -> Result<(), GpuError> {
    let bytes = (2 * std::mem::size_of::<T>() * n) as u64;
    for (kind, label, idx) in [
        (ScanKind::Inclusive, "inclusive scan", 0),
        (ScanKind::Exclusive, "exclusive scan", 1),
    ] {
        let workload = format!("{label} {}", T::NAME);
        let stats = time_events(gpu, w, r, || {
            crate::vector::scan_dev(gpu, kind, x, scratch, out)
        })?;
        let rust = bandwidth_entry(&workload, "rust", stats, bytes, Some(memcpy));
        let rust_out = gpu
            .stream()
            .clone_dtoh(&*out)
            .map_err(GpuError::driver("copying the scan result back"))?;
        let cuda = match cuda_c {
            Some(cu) => {
                let name = cu_name(T::SCAN[idx]);
                let stats = time_events(gpu, w, r, || {
                    cuda_scan(gpu, cu, name, x, scratch.scan_state(), out)
                })?;
                let cuda_out = gpu
                    .stream()
                    .clone_dtoh(&*out)
                    .map_err(GpuError::driver("copying the scan result back"))?;
                let differ = rust_out
                    .par_iter()
                    .zip(&cuda_out)
                    .filter(|(a, b)| a != b)
                    .count();
                if differ > 0 {
                    log(&format!(
                        "{workload}: rust and cuda-c differ in {differ} of {n} elements (float \
                         sums may differ in the last bits; u32 must not)"
                    ));
                }
                Some(bandwidth_entry(
                    &workload,
                    "cuda-c",
                    stats,
                    bytes,
                    Some(memcpy),
                ))
            }
            None => None,
        };
        push_pair(entries, rust, cuda, log);
    }
    Ok(())
}

/// The CUDA C single-pass scan twin: the same tile size, look-back protocol and scratch
/// (status words and counter, booked like the Rust launch).
fn cuda_scan<T: Scannable>(
    gpu: &Gpu,
    cu: &CudaC,
    name: &'static str,
    x: &CudaSlice<T>,
    st: &mut ScanState,
    out: &mut CudaSlice<T>,
) -> Result<(), GpuError> {
    let len = x.len().min(out.len());
    let l = st.book(gpu, len)?;
    let status_len = st.status.len();
    let mut args = cu.args(gpu, name);
    args.arg(x)
        .arg(&len)
        .arg(out)
        .arg(&mut st.status)
        .arg(&status_len)
        .arg(&mut st.counter)
        .arg(&l.epoch)
        .arg(&l.base);
    let cfg = LaunchConfig {
        grid_dim: (l.tiles, 1, 1),
        block_dim: (SCAN_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `cu_scan_*(const T* x, size_t n, T* out, unsigned long long* status,
    // size_t status_len, unsigned* counter, unsigned epoch, unsigned base)`; `out` holds
    // `len` elements; a fresh epoch and the counter's value before the launch (`book`).
    unsafe { cust::launch::launch_built(name, cfg, args) }
}

#[allow(clippy::too_many_arguments)]
fn bench_u32(
    gpu: &Gpu,
    cuda_c: Option<&CudaC>,
    n: usize,
    w: u32,
    r: u32,
    memcpy: f64,
    entries: &mut Vec<Entry>,
    log: &mut impl FnMut(&str),
) -> Result<(), GpuError> {
    let host: Vec<u32> = random_f64(5, n).iter().map(|&v| (v * 1e6) as u32).collect();
    let x = crate::vector::upload(gpu, &host)?;
    let mut out = crate::vector::poisoned::<u32>(gpu, n)?;
    let mut scratch = crate::vector::scratch::<u32>(gpu, n)?;
    reductions(gpu, cuda_c, &x, &mut scratch, n, w, r, memcpy, entries, log)?;
    scans(
        gpu,
        cuda_c,
        &x,
        &mut out,
        &mut scratch,
        n,
        w,
        r,
        memcpy,
        entries,
        log,
    )
}

fn bench_sgemm(
    gpu: &Gpu,
    cuda_c: Option<&CudaC>,
    (m, n, k): (u32, u32, u32),
    opts: &BenchOptions,
    entries: &mut Vec<Entry>,
    notes: &mut Vec<String>,
    log: &mut impl FnMut(&str),
) -> Result<(), GpuError> {
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    // Random floats in [-0.5, 0.5) with full 24-bit significands (not small integers, whose
    // products and sums would be exact and hide rounding differences).
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
    let entry = |imp: &str, stats: Stats| {
        let t = flops / (stats.median_ms * 1e-3) / 1e12;
        Entry {
            workload: workload.clone(),
            implementation: imp.to_owned(),
            stats,
            bytes: None,
            flops: Some(flops),
            gb_per_s: None,
            tflop_per_s: Some(t),
            vs_reference: None,
            vs_cuda_c: None,
            best_peer: None,
            vs_best_peer: None,
        }
    };
    let (w, r) = (opts.warmup, opts.reps);
    let stats = time_events(gpu, w, r, || {
        crate::vector::sgemm_dev(gpu, (m, n, k), 1.0, &a, &b, 0.0, &mut c)
    })?;
    let mut rust = entry("rust", stats);
    let rust_c = gpu
        .stream()
        .clone_dtoh(&c)
        .map_err(GpuError::driver("copying C back"))?;

    let mut cuda = None;
    if let Some(cu) = cuda_c {
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(SGEMM_TILE_N), m.div_ceil(SGEMM_TILE_M), 1),
            block_dim: (SGEMM_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let dims = (m as i32, n as i32, k as i32, 1.0f32, 0.0f32);
        let stats = time_events(gpu, w, r, || {
            let mut args = cu.args(gpu, "cu_sgemm");
            args.arg(&dims.0)
                .arg(&dims.1)
                .arg(&dims.2)
                .arg(&dims.3)
                .arg(&a)
                .arg(&b)
                .arg(&dims.4)
                .arg(&mut c);
            // SAFETY: `cu_sgemm(int m, int n, int k, float alpha, const float* A,
            // const float* B, float beta, float* C)`; buffer sizes m·k, k·n, m·n.
            unsafe { cust::launch::launch_built("cu_sgemm", cfg, args) }
        })?;
        cuda = Some(entry("cuda-c", stats));
    }

    let mut cublas = None;
    if !opts.cublas {
        notes.push("cuBLAS skipped (--no-cublas)".into());
    } else {
        // A buffer of its own, poisoned: an unwritten C cannot pass for a result.
        let mut c_blas = crate::vector::poisoned::<f32>(gpu, mu * nu)?;
        match cublas_sgemm(gpu, (m, n, k), &a, &b, &mut c_blas, w, r) {
            Ok(stats) => {
                let e = entry("cublas", stats);
                let blas_c = gpu
                    .stream()
                    .clone_dtoh(&c_blas)
                    .map_err(GpuError::driver("copying C back"))?;
                for line in compare_sgemm(&rust_c, &blas_c, &a_host, &b_host, (mu, nu, ku)) {
                    log(&line);
                    notes.push(line);
                }
                cublas = Some(e);
            }
            Err(why) => {
                notes.push(format!("cuBLAS skipped: {why}"));
                log(&format!("cuBLAS skipped: {why}"));
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
    push_pair(entries, rust, cuda, log);
    entries.extend(cublas);
    Ok(())
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

/// Times cuBLAS SGEMM (TF32 off: `CUBLAS_DEFAULT_MATH`) on the row-major problem, computed
/// as the column-major `Cᵀ = Bᵀ·Aᵀ`.
#[allow(clippy::too_many_arguments)]
fn cublas_sgemm(
    gpu: &Gpu,
    (m, n, k): (u32, u32, u32),
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
    w: u32,
    r: u32,
) -> Result<Stats, String> {
    use cudarc::cublas::{CudaBlas, Gemm, GemmConfig, sys};
    // SAFETY: only tries to dlopen the library by its known names.
    if !unsafe { sys::is_culib_present() } {
        return Err("libcublas.so not found on the loader path (set LD_LIBRARY_PATH to the folder of libcublas.so, e.g. the nvidia-cublas Python package's lib/)".into());
    }
    let blas = CudaBlas::new(gpu.stream().as_cudarc().clone())
        .map_err(|e| format!("cublasCreate: {e:?}"))?;
    // SAFETY: a valid handle; CUBLAS_DEFAULT_MATH is a valid mode (no TF32 tensor-op math).
    unsafe { sys::cublasSetMathMode(*blas.handle(), sys::cublasMath_t::CUBLAS_DEFAULT_MATH) }
        .result()
        .map_err(|e| format!("cublasSetMathMode: {e:?}"))?;
    let to_i32 =
        |x: u32| i32::try_from(x).map_err(|_| format!("dimension {x} too large for cuBLAS"));
    let cfg = GemmConfig {
        transa: sys::cublasOperation_t::CUBLAS_OP_N,
        transb: sys::cublasOperation_t::CUBLAS_OP_N,
        m: to_i32(n)?,
        n: to_i32(m)?,
        k: to_i32(k)?,
        alpha: 1.0f32,
        lda: to_i32(n)?,
        ldb: to_i32(k)?,
        beta: 0.0f32,
        ldc: to_i32(n)?,
    };
    time_events(gpu, w, r, || {
        // SAFETY: column-major view of the row-major buffers: B is n×k (ld n), A is k×m
        // (ld k), C is n×m (ld n); sizes k·n, m·k, m·n.
        unsafe { blas.gemm(cfg, b, a, c) }.map_err(|e| BenchError(format!("cublasSgemm: {e:?}")))
    })
    .map_err(|e| e.0)
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

/// The SGEMM shapes of a report for its table and chart: each `(m, n, k)` as `MxNxK`, joined
/// by `", "`, e.g. `2048x2048x2048, 4096x4096x4096`.
pub fn shapes(gemm: &[(u32, u32, u32)]) -> String {
    gemm.iter()
        .map(|(m, n, k)| format!("{m}x{n}x{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads `gemm` as one `[m, n, k]` (older reports) or a list of them.
fn one_or_many_shapes<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<(u32, u32, u32)>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shapes {
        One((u32, u32, u32)),
        Many(Vec<(u32, u32, u32)>),
    }
    Ok(match Shapes::deserialize(d)? {
        Shapes::One(s) => vec![s],
        Shapes::Many(v) => v,
    })
}

/// The rate an entry is compared by: GB/s, or TFLOP/s for SGEMM.
fn rate(e: &Entry) -> Option<f64> {
    e.gb_per_s.or(e.tflop_per_s)
}

/// Fills `best_peer` / `vs_best_peer` of every Rust row: the fastest non-Rust entry of the
/// same workload, or for `copy` workloads the memcpy row if that is faster.
pub fn fill_best_peers(entries: &mut [Entry]) {
    let memcpy = entries
        .iter()
        .find(|e| e.implementation == "memcpy")
        .and_then(|e| e.gb_per_s);
    let peers: Vec<(String, String, f64)> = entries
        .iter()
        .filter(|e| e.implementation != "rust" && e.implementation != "memcpy")
        .filter_map(|e| Some((e.workload.clone(), e.implementation.clone(), rate(e)?)))
        .collect();
    for e in entries.iter_mut().filter(|e| e.implementation == "rust") {
        let Some(ours) = rate(e) else { continue };
        let mut best: Option<(String, f64)> = peers
            .iter()
            .filter(|(w, _, _)| *w == e.workload)
            .map(|(_, i, r)| (i.clone(), *r))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some(m) = memcpy
            && e.workload.starts_with("copy ")
            && best.as_ref().is_none_or(|(_, r)| m > *r)
        {
            best = Some(("memcpy".into(), m));
        }
        if let Some((name, r)) = best {
            e.best_peer = Some(name);
            e.vs_best_peer = Some(ours / r);
        }
    }
}

fn download_one<T: Element>(gpu: &Gpu, x: &CudaSlice<T>) -> Result<T, GpuError> {
    let v = gpu
        .stream()
        .clone_dtoh(x)
        .map_err(GpuError::driver("copying a result to the host"))?;
    Ok(v[0])
}

/// The report as a fixed-width table (one line per entry).
pub fn table(report: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (sm_{}{}), {} elements per vector, SGEMM {}, median of {} runs after {} warm-ups",
        report.device,
        report.compute_capability.0,
        report.compute_capability.1,
        report.len,
        shapes(&report.gemm),
        report.reps,
        report.warmup
    );
    let _ = writeln!(
        s,
        "{:<24} {:<7} {:>9} {:>9} {:>9} {:>12} {:>8} {:>9}  best peer",
        "workload", "impl", "median ms", "min ms", "max ms", "rate", "vs ref", "vs CUDA C"
    );
    for e in &report.entries {
        let rate = e
            .gb_per_s
            .map(|g| format!("{g:.1} GB/s"))
            .or(e.tflop_per_s.map(|t| format!("{t:.2} TF/s")))
            .unwrap_or_default();
        let pct = |x: Option<f64>| x.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_default();
        let best = match (&e.best_peer, e.vs_best_peer) {
            (Some(p), Some(r)) => format!("  {r:.3}x {p}"),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "{:<24} {:<7} {:>9.3} {:>9.3} {:>9.3} {:>12} {:>8} {:>9}{best}",
            e.workload,
            e.implementation,
            e.stats.median_ms,
            e.stats.min_ms,
            e.stats.max_ms,
            rate,
            pct(e.vs_reference),
            pct(e.vs_cuda_c)
        );
    }
    let _ = writeln!(
        s,
        "vs ref: bandwidth over device-to-device memcpy, or TFLOP/s over cuBLAS (TF32 off); \
         best peer: ours over the fastest other implementation in this run (the CUDA C twin, \
         CUB, cuBLAS; memcpy for copies)"
    );
    let _ = writeln!(
        s,
        "Rust kernels module: {} (context + load {:.1} ms); load from PTX (JIT) {}, from cubin {}",
        report.module_source,
        report.rust_module_load_ms,
        ms_or_dash(report.ptx_jit_load_ms),
        ms_or_dash(report.cubin_load_ms)
    );
    for n in &report.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// Writes `bench.json` and `bench.svg` (the chart, [`chart::draw`]) into `dir` (created if
/// needed).
pub fn write_outputs(report: &Report, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("bench.json"), json)?;
    chart::draw(report, &dir.join("bench.svg")).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(workload: &str, imp: &str, ms: f64, vs: Option<f64>) -> Entry {
        Entry {
            workload: workload.into(),
            implementation: imp.into(),
            stats: Stats::from_samples(vec![ms, ms * 1.1, ms * 0.9]),
            bytes: Some(1 << 30),
            flops: None,
            gb_per_s: Some(1e3 / ms),
            tflop_per_s: None,
            vs_reference: vs,
            vs_cuda_c: None,
            best_peer: None,
            vs_best_peer: None,
        }
    }

    fn report() -> Report {
        Report {
            device: "Test GPU".into(),
            compute_capability: (9, 0),
            len: 1 << 28,
            gemm: vec![(4096, 4096, 4096)],
            warmup: 3,
            reps: 20,
            rust_module_load_ms: 12.0,
            module_source: "cubin sm_90".into(),
            ptx_jit_load_ms: Some(350.0),
            cubin_load_ms: Some(4.0),
            cuda_c_build_ms: None,
            notes: vec!["a note".into()],
            entries: vec![
                entry("memcpy d2d f32", "memcpy", 0.5, None),
                entry("triad f32", "rust", 0.8, Some(0.93)),
                entry("triad f32", "cuda-c", 0.79, Some(0.94)),
                entry("sum f32", "rust", 0.4, Some(1.25)),
                entry("sum f32", "cub", 0.45, Some(1.11)),
                entry("sgemm 4096x4096x4096", "rust", 9.0, Some(0.71)),
            ],
        }
    }

    #[test]
    fn stats_quantiles() {
        let s = Stats::from_samples(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(
            (s.min_ms, s.q1_ms, s.median_ms, s.q3_ms, s.max_ms),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
    }

    #[test]
    fn table_json_and_chart() {
        let mut r = report();
        fill_best_peers(&mut r.entries);
        let t = table(&r);
        assert!(
            t.contains("triad f32") && t.contains("93.0%") && t.contains("note: a note"),
            "{t}"
        );
        // triad: the CUDA C twin (1266 GB/s; memcpy's 2000 is a bound, not a substitute);
        // sum: CUB's 2222 beats the twin's absence. Rates are 1000/ms in this report.
        assert!(
            t.contains(&format!("{:.3}x cuda-c", 1250.0 / (1e3 / 0.79))),
            "{t}"
        );
        assert!(
            t.contains(&format!("{:.3}x cub", 2500.0 / (1e3 / 0.45))),
            "{t}"
        );
        let dir = tempfile::tempdir().unwrap();
        write_outputs(&r, dir.path()).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("bench.json")).unwrap())
                .unwrap();
        assert_eq!(json["entries"].as_array().unwrap().len(), 6);
        assert_eq!(json["entries"][1]["best_peer"], "cuda-c");
        let svg = std::fs::read_to_string(dir.path().join("bench.svg")).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("sum f32 cub"),
            "{svg}"
        );
        assert!(svg.contains("device-to-device memcpy 2000 GB/s"));
    }

    /// The committed GPU report still parses, and its chart draws.
    #[test]
    fn the_committed_report_redraws() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bench/bench.json");
        let mut r: Report = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        fill_best_peers(&mut r.entries);
        assert!(r.entries.iter().any(|e| e.best_peer.is_some()));
        let out = std::env::var_os("BENCH_CHART_OUT").map_or_else(
            || tempfile::tempdir().unwrap().keep(),
            std::path::PathBuf::from,
        );
        chart::draw(&r, &out.join("bench.svg")).unwrap();
    }

    #[test]
    fn every_cuda_c_kernel_is_in_the_source() {
        // Names are spelled out, or made by STREAM_KERNELS from `cu_<op>_##S`.
        for name in CUDA_C_KERNELS {
            let by_macro = ["copy", "scale", "add", "triad", "axpy"].iter().any(|op| {
                name.starts_with(&format!("cu_{op}_"))
                    && CUDA_C_SOURCE.contains(&format!("cu_{op}_##S"))
            });
            assert!(by_macro || CUDA_C_SOURCE.contains(name), "{name}");
        }
        assert_eq!(cu_name("triad_f32"), "cu_triad_f32");
        assert_eq!(cu_name("reduce_max_u32"), "cu_reduce_max_u32");
    }
}
