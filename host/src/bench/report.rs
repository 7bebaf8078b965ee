//! What a bench run measured ([`Report`], [`Entry`]), how rows are built and compared
//! (bandwidth and FLOP rates, the Rust/CUDA C ratio, best peers), and its outputs: the
//! fixed-width table and `bench.json` (with the chart, [`super::chart`]).

use super::Implementation;
use crate::timing::Stats;
use serde::{Deserialize, Serialize};

/// One timed implementation of one workload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    /// Workload, e.g. `triad f32`.
    pub workload: String,
    /// Which implementation (`rust`, `cuda-c`, `cub`, `cublas` or `memcpy` in the JSON).
    pub implementation: Implementation,
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
    pub best_peer: Option<Implementation>,
    /// Rust rate over the best peer's rate (Rust rows only).
    #[serde(default)]
    pub vs_best_peer: Option<f64>,
    /// Which of our kernels, where a workload has several (the GEMM rows by precision:
    /// `wgmma`, `mma.sync`, `sgemm`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The largest error of the result against an `f64` CPU reference on sampled elements:
    /// relative to `Σ_p |a_ip·b_pj|` for the GEMM rows by precision, the absolute
    /// `|O − O_ref|` on `bench::attention::checked_rows` for the attention rows (ours, and
    /// the script's for torch's backends); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rel_error: Option<f64>,
}

impl Entry {
    /// A bandwidth row: `bytes` moved in the median time of `stats`; `memcpy` (GB/s) fills
    /// `vs_reference`.
    pub fn bandwidth(
        workload: &str,
        implementation: Implementation,
        stats: Stats,
        bytes: u64,
        memcpy: Option<f64>,
    ) -> Self {
        let gbs = bytes as f64 / (stats.median_ms * 1e-3) / 1e9;
        Self {
            workload: workload.to_owned(),
            implementation,
            stats,
            bytes: Some(bytes),
            flops: None,
            gb_per_s: Some(gbs),
            tflop_per_s: None,
            vs_reference: memcpy.map(|m| gbs / m),
            vs_cuda_c: None,
            best_peer: None,
            vs_best_peer: None,
            variant: None,
            max_rel_error: None,
        }
    }

    /// A FLOP-rate row: `flops` in the median time of `stats`.
    pub fn flops(workload: &str, implementation: Implementation, stats: Stats, flops: f64) -> Self {
        let t = flops / (stats.median_ms * 1e-3) / 1e12;
        Self {
            workload: workload.to_owned(),
            implementation,
            stats,
            bytes: None,
            flops: Some(flops),
            gb_per_s: None,
            tflop_per_s: Some(t),
            vs_reference: None,
            vs_cuda_c: None,
            best_peer: None,
            vs_best_peer: None,
            variant: None,
            max_rel_error: None,
        }
    }

    /// Who ran the row, for the table and the chart: the implementation, and our kernel's
    /// name where the workload has several (`rust wgmma`).
    pub fn who(&self) -> String {
        match &self.variant {
            Some(v) => format!("{} {v}", self.implementation),
            None => self.implementation.name().to_owned(),
        }
    }

    /// The rate an entry is compared by: GB/s, or TFLOP/s for SGEMM.
    pub fn rate(&self) -> Option<f64> {
        self.gb_per_s.or(self.tflop_per_s)
    }

    /// The rate as text for the log: `1234.5 GB/s` or `12.34 TFLOP/s`.
    pub(crate) fn rate_text(&self) -> String {
        self.gb_per_s
            .map(|g| format!("{g:.1} GB/s"))
            .or(self.tflop_per_s.map(|t| format!("{t:.2} TFLOP/s")))
            .unwrap_or_default()
    }
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
    /// Time to compile the CUDA C twins with nvcc (or copy them from its cache,
    /// [`crate::nvcc::cache_dir`]) and load the cubin, ms.
    pub cuda_c_build_ms: Option<f64>,
    /// What was skipped and why, checks that were made.
    pub notes: Vec<String>,
    /// The measurements.
    pub entries: Vec<Entry>,
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

/// Fills `best_peer` / `vs_best_peer` of every Rust row: the fastest non-Rust entry of the
/// same workload, or for `copy` workloads the memcpy row if that is faster.
pub fn fill_best_peers(entries: &mut [Entry]) {
    use Implementation::{Memcpy, Rust};
    let memcpy = entries
        .iter()
        .find(|e| e.implementation == Memcpy)
        .and_then(|e| e.gb_per_s);
    let peers: Vec<(String, Implementation, f64)> = entries
        .iter()
        .filter(|e| e.implementation != Rust && e.implementation != Memcpy)
        .filter_map(|e| Some((e.workload.clone(), e.implementation, e.rate()?)))
        .collect();
    for e in entries.iter_mut().filter(|e| e.implementation == Rust) {
        let Some(ours) = e.rate() else { continue };
        let mut best: Option<(Implementation, f64)> = peers
            .iter()
            .filter(|(w, _, _)| *w == e.workload)
            .map(|(_, i, r)| (*i, *r))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some(m) = memcpy
            && e.workload.starts_with("copy ")
            && best.as_ref().is_none_or(|(_, r)| m > *r)
        {
            best = Some((Memcpy, m));
        }
        if let Some((name, r)) = best {
            e.best_peer = Some(name);
            e.vs_best_peer = Some(ours / r);
        }
    }
}

/// `12.3 ms`, or `-` for `None`.
pub(crate) fn ms_or_dash(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |v| format!("{v:.1} ms"))
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
        "{:<26} {:<14} {:>9} {:>9} {:>9} {:>12} {:>8} {:>9} {:>9}  best peer",
        "workload",
        "impl",
        "median ms",
        "min ms",
        "max ms",
        "rate",
        "vs ref",
        "vs CUDA C",
        "max err"
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
        let err = e
            .max_rel_error
            .map(|x| format!("{x:.2e}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{:<26} {:<14} {:>9.3} {:>9.3} {:>9.3} {:>12} {:>8} {:>9} {err:>9}{best}",
            e.workload,
            e.who(),
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
        "vs ref: bandwidth over device-to-device memcpy, or TFLOP/s over cuBLAS (TF32 off for \
         sgemm and gemm fp32; gemm rows: the faster of cublasGemmEx and cuBLASLt's fastest \
         algorithm at that precision); best peer: \
         ours over the fastest other implementation in this run (the CUDA C twin, CUB, cuBLAS; \
         memcpy for copies); max err: largest error on sampled elements against an f64 \
         reference, relative to Σ|a·b| (gemm rows), or largest |O − O_ref| on 64 rows of the \
         same inputs (attention rows, ours and torch's)"
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

/// The files `ferrocuda bench` writes, as (file name, contents): `bench.json` (the report,
/// pretty-printed) and `bench.svg` (the chart, [`super::chart::svg`]).
/// The caller writes them (atomically: a full disk must not leave a truncated file).
///
/// # Errors
/// The chart's drawing error, or the report's serialisation error, as text.
pub fn output_files(report: &Report) -> Result<[(&'static str, String); 2], String> {
    let json = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    Ok([
        ("bench.json", json),
        ("bench.svg", super::chart::svg(report)?),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use Implementation::{Cub, CudaC, Memcpy, Rust};

    fn entry(workload: &str, imp: Implementation, ms: f64, vs: Option<f64>) -> Entry {
        Entry::bandwidth(
            workload,
            imp,
            Stats::from_samples(vec![ms, ms * 1.1, ms * 0.9]),
            1 << 30,
            None,
        )
        .with_reference(vs)
    }

    impl Entry {
        fn with_reference(mut self, vs: Option<f64>) -> Self {
            // Rates are 1000/ms in these reports.
            self.gb_per_s = Some(1e3 / self.stats.median_ms);
            self.vs_reference = vs;
            self
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
                entry("memcpy d2d f32", Memcpy, 0.5, None),
                entry("triad f32", Rust, 0.8, Some(0.93)),
                entry("triad f32", CudaC, 0.79, Some(0.94)),
                entry("sum f32", Rust, 0.4, Some(1.25)),
                entry("sum f32", Cub, 0.45, Some(1.11)),
                entry("sgemm 4096x4096x4096", Rust, 9.0, Some(0.71)),
            ],
        }
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
        let [(_, json_text), (_, svg)] = output_files(&r).unwrap();
        let json: serde_json::Value = serde_json::from_str(&json_text).unwrap();
        assert_eq!(json["entries"].as_array().unwrap().len(), 6);
        assert_eq!(json["entries"][1]["best_peer"], "cuda-c");
        assert_eq!(json["entries"][0]["implementation"], "memcpy");
        assert!(
            svg.starts_with("<svg") && svg.contains("sum f32 cub"),
            "{svg}"
        );
        assert!(svg.contains("device-to-device memcpy 2000 GB/s"));
    }

    /// GEMM rows by precision: two of our kernels of one workload, each compared with
    /// cuBLAS, named in the table and in their own chart panel, with their errors.
    #[test]
    fn precision_gemm_rows() {
        use super::super::Implementation::Cublas;
        let flops = 2.0 * 4096f64.powi(3);
        let row = |imp, ms: f64, variant: Option<&str>, err: f64| {
            let mut e = Entry::flops(
                "gemm bf16 4096x4096x4096",
                imp,
                Stats::from_samples(vec![ms]),
                flops,
            );
            e.variant = variant.map(str::to_owned);
            e.max_rel_error = Some(err);
            e
        };
        let mut r = report();
        r.entries = vec![
            row(Rust, 0.2, Some("wgmma"), 1.5e-3),
            row(Rust, 0.3, Some("mma.sync"), 1.4e-3),
            row(Cublas, 0.19, None, 1.5e-3),
        ];
        fill_best_peers(&mut r.entries);
        assert_eq!(r.entries[0].best_peer, Some(Cublas));
        assert_eq!(r.entries[1].vs_best_peer, Some(0.19 / 0.3));
        let t = table(&r);
        assert!(
            t.contains("rust wgmma") && t.contains("rust mma.sync") && t.contains("1.50e-3"),
            "{t}"
        );
        let [(_, json_text), (_, svg)] = output_files(&r).unwrap();
        assert!(
            svg.contains("GEMM by precision")
                && svg.contains("gemm bf16 4096x4096x4096 rust wgmma"),
            "{svg}"
        );
        let json: Report = serde_json::from_str(&json_text).unwrap();
        assert_eq!(json.entries[1].variant.as_deref(), Some("mma.sync"));
        assert_eq!(json.entries[2].max_rel_error, Some(1.5e-3));
    }

    /// Attention rows: ours beside torch's backends (variants) and FlashAttention-3; the
    /// best peer is the fastest of them, and they get their own chart panel.
    #[test]
    fn attention_rows() {
        use super::super::Implementation::{FlashAttn3, Torch};
        let row = |imp, ms: f64, variant: Option<&str>| {
            let mut e = Entry::flops(
                "attention bf16 16x16x2048x64",
                imp,
                Stats::from_samples(vec![ms]),
                2.2e12,
            );
            e.variant = variant.map(str::to_owned);
            e
        };
        let mut r = report();
        r.entries = vec![
            row(Rust, 8.0, Some("mma.sync")),
            row(Torch, 5.0, Some("cudnn")),
            row(Torch, 7.0, Some("flash")),
            row(FlashAttn3, 4.0, None),
        ];
        fill_best_peers(&mut r.entries);
        assert_eq!(r.entries[0].best_peer, Some(FlashAttn3));
        assert_eq!(r.entries[0].vs_best_peer, Some(4.0 / 8.0));
        let [(_, json_text), (_, svg)] = output_files(&r).unwrap();
        assert!(
            svg.contains("Attention forward")
                && svg.contains("attention bf16 16x16x2048x64 torch cudnn")
                && !svg.contains("SGEMM"),
            "{svg}"
        );
        let json: Report = serde_json::from_str(&json_text).unwrap();
        assert_eq!(json.entries[3].implementation, FlashAttn3);
    }

    /// Sort rows (ours and CUB's, as `bench::sort` makes them) get their best peer, a line
    /// in the table, their place in the JSON and a bar in the bandwidth panel.
    #[test]
    fn sort_rows_in_table_json_and_chart() {
        use super::super::sort::{KeyDistribution, sort_workload};
        let mut r = report();
        for (dist, pairs) in [
            (KeyDistribution::Uniform, false),
            (KeyDistribution::FourValues, true),
        ] {
            let w = sort_workload(1 << 28, dist, pairs);
            r.entries.push(entry(&w, Rust, 9.0, Some(0.1)));
            r.entries.push(entry(&w, Cub, 8.0, Some(0.11)));
        }
        fill_best_peers(&mut r.entries);
        let ours = r
            .entries
            .iter()
            .find(|e| e.workload == "sort u32 2^28 uniform" && e.implementation == Rust)
            .unwrap();
        assert_eq!(ours.best_peer, Some(Cub));
        assert!((ours.vs_best_peer.unwrap() - 8.0 / 9.0).abs() < 1e-12);
        let t = table(&r);
        assert!(t.contains("sort pairs u32 2^28 4 values"), "{t}");
        let [(_, json_text), (_, svg)] = output_files(&r).unwrap();
        let json: Report = serde_json::from_str(&json_text).unwrap();
        assert!(
            json.entries
                .iter()
                .any(|e| e.workload == "sort u32 2^28 uniform")
        );
        assert!(
            svg.contains("sort u32 2^28 uniform rust")
                && svg.contains("sort pairs u32 2^28 4 values cub"),
            "{svg}"
        );
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
        std::fs::write(out.join("bench.svg"), super::super::chart::svg(&r).unwrap()).unwrap();
    }
}
