//! `ferrocuda bench`: time the vector workloads against memcpy, CUB, cuBLAS and the CUDA C
//! twins; print a table, write `bench.json` and `bench.svg` to `-o/--output`.

use super::outln;
use anyhow::{Context, Result};
use host::bench::{self, BenchOptions, GemmPrecision};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Folder for bench.json and bench.svg (created if needed).
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "out",
        value_name = "DIR",
        default_value = "bench-out"
    )]
    pub out: PathBuf,
    /// Elements per vector, 1 to 2^31 (default 2^28: 1 GiB per f32 array, far beyond L2).
    #[arg(long, default_value_t = 1 << 28, allow_negative_numbers = true, value_parser = super::parse_vector_len)]
    pub len: u64,
    /// SGEMM dimensions M,N,K (row-major C = A·B, A M×K, B K×N); repeat for several shapes.
    #[arg(
        long,
        value_parser = parse_dims,
        default_values = ["2048,2048,2048", "4096,4096,4096", "8192,8192,8192"]
    )]
    pub gemm: Vec<(u32, u32, u32)>,
    /// Untimed runs before timing each workload.
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_parser = super::parse_warmup)]
    pub warmup: u32,
    /// Timed runs per workload, 1 to 1000 (median, min, max and quartiles are reported).
    #[arg(long, default_value_t = 20, allow_negative_numbers = true, value_parser = super::parse_reps)]
    pub reps: u32,
    /// Skip the CUDA C twins (otherwise built with nvcc when it is on PATH).
    #[arg(long)]
    pub no_cuda_c: bool,
    /// Skip cuBLAS.
    #[arg(long)]
    pub no_cublas: bool,
    /// Skip CUB (otherwise built with nvcc when it is on PATH).
    #[arg(long)]
    pub no_cub: bool,
    /// Add GEMM rows by precision (off by default): comma-separated bf16, fp16, tf32, fp32,
    /// e4m3 (FP8 inputs, per-tensor scales 0.5 and 4, bf16 out; its only cuBLAS row is
    /// cuBLASLt's scaled matmul: cublasGemmEx takes no FP8), or `all`. Each precision is
    /// timed at every --precision-gemm-shape against two cuBLAS
    /// rows at that precision (f32 accumulation; fp32 with TF32 off): cublasGemmEx, and
    /// cuBLASLt with the fastest of the 8 algorithms its heuristic proposes for the shape
    /// (each timed first), as TFLOP/s with the ratio to the faster of the two, and the result is checked against an f64 reference on
    /// sampled elements (max relative error of ours and cuBLAS's; flagged when ours is worse
    /// than 2x cuBLAS's, over the standard bound, or not finite). Layout: row-major
    /// C = A·Bᵀ, A M×K, B N×K. Adds about a minute on an H100.
    #[arg(long, value_name = "PRECISIONS", value_parser = parse_precisions)]
    pub precision_gemm: Option<Precisions>,
    /// Shapes M,N,K of the --precision-gemm rows; repeat for several (default: 2048³,
    /// 4096³, 8192³ and the transformer shapes 8192,8192,2048 and 4096,14336,4096).
    #[arg(long, value_name = "M,N,K", value_parser = parse_dims)]
    pub precision_gemm_shape: Vec<(u32, u32, u32)>,
    /// Only the GEMM rows: skip the memcpy reference, the vector workloads and CUB (the
    /// SGEMM rows of --gemm and the --precision-gemm rows still run).
    #[arg(long)]
    pub gemm_only: bool,
    /// Only the attention rows: our forward kernels in bf16 (wgmma on sm_90, and mma.sync) at (B, H, S, D) =
    /// (4, 32, 4096, 128) non-causal and causal, (16, 16, 2048, 64), and (4, 32, 4096, 128)
    /// with 8 key/value heads, as TFLOP/s (4·B·H·S²·D, halved when causal), beside the peers
    /// of --attention-peers.
    #[arg(long)]
    pub attention: bool,
    /// The attention peers' JSON, written in the same run by
    /// `python3 bench/python/attention_peers.py --out FILE` (torch's SDPA with the cuDNN and
    /// flash backends, and FlashAttention-3 where it imports).
    #[arg(long, value_name = "FILE", requires = "attention")]
    pub attention_peers: Option<PathBuf>,
    /// Time only the workloads whose name contains one of these comma-separated texts, as
    /// the rows name them (e.g. `scan f64,scan affine` or `sort u32 2^28`); default: all.
    /// The memcpy reference always runs.
    #[arg(long, value_name = "TEXTS", value_delimiter = ',', value_parser = parse_workload)]
    pub workloads: Vec<String>,
    /// Run nothing: read a bench.json written earlier (e.g. on a GPU machine) and print its
    /// table and write bench.json and bench.svg again, with the best-peer ratios filled in.
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,
}

fn parse_dims(s: &str) -> Result<(u32, u32, u32), String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [m, n, k] = parts.as_slice() else {
        return Err(format!("`{s}` is not M,N,K (e.g. 4096,4096,4096)"));
    };
    let p = |v: &str| -> Result<u32, String> {
        match v.parse::<u32>() {
            Ok(x) if (1..=65_536).contains(&x) => Ok(x),
            _ => Err(format!(
                "`{v}` in `{s}` is not allowed: dimensions are 1 to 65536"
            )),
        }
    };
    Ok((p(m)?, p(n)?, p(k)?))
}

/// One text of `--workloads`: not empty (an empty text would match every row).
fn parse_workload(s: &str) -> Result<String, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err(
            "an empty text in the list: name part of a workload, e.g. `scan f64` or `sort`".into(),
        );
    }
    Ok(t.to_owned())
}

/// The value of `--precision-gemm`: one list (a newtype, so that clap takes the whole
/// comma-separated value as one argument).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Precisions(pub Vec<GemmPrecision>);

/// `bf16,fp16,tf32,fp32,e4m3` (any subset, any order, no repeats) or `all`.
fn parse_precisions(s: &str) -> Result<Precisions, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(Precisions(GemmPrecision::ALL.to_vec()));
    }
    let mut out = Vec::new();
    for name in s.split(',').map(str::trim) {
        let p = GemmPrecision::from_name(name).ok_or_else(|| {
            format!("`{name}` in `{s}` is not a precision: use bf16, fp16, tf32, fp32, e4m3 or all")
        })?;
        if out.contains(&p) {
            return Err(format!("`{name}` appears twice in `{s}`"));
        }
        out.push(p);
    }
    Ok(Precisions(out))
}

pub fn run(args: &BenchArgs) -> Result<()> {
    if let Some(path) = &args.from_json {
        let text = read_bench_json(path)?;
        let mut report: bench::Report = serde_json::from_str(&text).with_context(|| {
            format!(
                "--from-json {}: not a bench.json written by `ferrocuda bench`",
                path.display()
            )
        })?;
        bench::fill_best_peers(&mut report.entries);
        return finish(&report, args);
    }
    let opts = BenchOptions {
        len: usize::try_from(args.len)?,
        gemm: args.gemm.clone(),
        warmup: args.warmup,
        reps: args.reps,
        cuda_c: !args.no_cuda_c,
        cublas: !args.no_cublas,
        cub: !args.no_cub,
        precision_gemm: args.precision_gemm.clone().map(|p| p.0).unwrap_or_default(),
        precision_gemm_shapes: if args.precision_gemm_shape.is_empty() {
            bench::DEFAULT_PRECISION_GEMM_SHAPES.to_vec()
        } else {
            args.precision_gemm_shape.clone()
        },
        gemm_only: args.gemm_only,
        attention: args.attention,
        attention_peers: match &args.attention_peers {
            Some(path) => Some(read_attention_peers(path)?),
            None => None,
        },
        workloads: args.workloads.clone(),
    };
    let report =
        bench::run(&opts, |line| super::errln!("{line}")).context("bench runs on the GPU")?;
    if !args.workloads.is_empty()
        && report
            .entries
            .iter()
            .all(|e| e.implementation == bench::Implementation::Memcpy)
    {
        anyhow::bail!(
            "--workloads {}: no workload's name contains any of these texts (rows are named \
             e.g. `exclusive scan f64`, `sum f32`, `sort pairs u32 2^28 uniform`, \
             `sgemm 4096x4096x4096`); nothing written",
            args.workloads.join(",")
        );
    }
    finish(&report, args)
}

/// Largest `--from-json` file: 64 MiB (a bench.json is tens of KiB; this bounds what a wrong
/// path such as `/dev/zero` can make the program read).
pub const MAX_BENCH_JSON_BYTES: u64 = 64 << 20;

/// Reads a `--from-json` file, at most [`MAX_BENCH_JSON_BYTES`] of it.
///
/// # Errors
/// The file cannot be read (the operating system's error), or it is larger than
/// [`MAX_BENCH_JSON_BYTES`] (a usage error naming the file, the limit and its size) or not
/// UTF-8.
fn read_bench_json(path: &std::path::Path) -> Result<String> {
    let shown = path.display();
    let bytes = super::read_bounded(
        "--from-json",
        path,
        MAX_BENCH_JSON_BYTES,
        "a bench.json may be",
        "64 MiB",
    )?;
    String::from_utf8(bytes).map_err(|e| {
        super::UsageError(format!(
            "--from-json `{shown}` is not a bench.json written by `ferrocuda bench`: invalid \
             UTF-8 at byte {}",
            e.utf8_error().valid_up_to()
        ))
        .into()
    })
}

/// Reads and parses an `--attention-peers` file (bounded as `--from-json` files are).
///
/// # Errors
/// The file cannot be read, is too large, or is not the script's JSON (naming the file).
fn read_attention_peers(path: &std::path::Path) -> Result<bench::attention::PeerFile> {
    let bytes = super::read_bounded(
        "--attention-peers",
        path,
        MAX_BENCH_JSON_BYTES,
        "a peers file may be",
        "64 MiB",
    )?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "--attention-peers {}: not the JSON of bench/python/attention_peers.py",
            path.display()
        )
    })
}

/// Prints the table and writes the files.
fn finish(report: &bench::Report, args: &BenchArgs) -> Result<()> {
    let table = bench::table(report);
    outln!("{}", table.trim_end_matches('\n'));
    let files =
        bench::output_files(report).map_err(|e| anyhow::anyhow!("drawing the chart: {e}"))?;
    std::fs::create_dir_all(&args.out).map_err(|e| {
        anyhow::anyhow!(
            "cannot create the output folder `{}`: {}",
            args.out.display(),
            super::os_message(&e)
        )
    })?;
    // Each file replaced atomically: a full disk leaves the earlier file, never a truncated one.
    for (name, text) in files {
        super::OutputFile::open(&args.out.join(name), "bench file", ".part")?
            .write_bytes(text.as_bytes())?;
    }
    outln!(
        "wrote {} and {}",
        args.out.join("bench.json").display(),
        args.out.join("bench.svg").display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{BenchArgs, GemmPrecision, Precisions, parse_dims, parse_precisions};
    use clap::Parser;

    #[test]
    fn precisions() {
        assert_eq!(
            parse_precisions("all"),
            Ok(Precisions(GemmPrecision::ALL.to_vec()))
        );
        assert_eq!(
            parse_precisions("tf32, bf16"),
            Ok(Precisions(vec![GemmPrecision::Tf32, GemmPrecision::Bf16]))
        );
        let err = parse_precisions("bf16,fp8").unwrap_err();
        assert!(err.contains("`fp8`") && err.contains("e4m3"), "{err}");
        assert_eq!(
            parse_precisions("e4m3"),
            Ok(Precisions(vec![GemmPrecision::E4m3]))
        );
        assert!(parse_precisions("fp16,fp16").is_err());
    }

    #[test]
    fn attention_flags_parse_and_peers_need_attention() {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            bench: BenchArgs,
        }
        let cli = Cli::try_parse_from(["bench", "--attention", "--attention-peers", "p.json"])
            .expect("flags parse");
        assert!(cli.bench.attention);
        assert_eq!(
            cli.bench.attention_peers.as_deref(),
            Some(std::path::Path::new("p.json"))
        );
        let err = Cli::try_parse_from(["bench", "--attention-peers", "p.json"])
            .err()
            .expect("--attention-peers alone is refused")
            .to_string();
        assert!(err.contains("--attention"), "{err}");
    }

    #[test]
    fn a_peers_file_that_is_not_the_scripts_json_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("peers.json");
        std::fs::write(&path, "{\"rows\": 3}").expect("write");
        let err = format!("{:#}", super::read_attention_peers(&path).unwrap_err());
        assert!(
            err.contains("--attention-peers") && err.contains("peers.json"),
            "{err}"
        );
        std::fs::write(&path, "{\"torch\": \"2.11\", \"rows\": [], \"notes\": []}").expect("write");
        let peers = super::read_attention_peers(&path).expect("the script's format");
        assert_eq!(peers.torch, "2.11");
    }

    /// The flags parse as the bench takes them (clap checks the field types at run time).
    #[test]
    fn precision_flags_parse() {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            bench: BenchArgs,
        }
        let cli = Cli::try_parse_from([
            "bench",
            "--precision-gemm",
            "bf16,fp32",
            "--precision-gemm-shape",
            "8192,8192,2048",
            "--precision-gemm-shape",
            "4096,14336,4096",
            "--gemm-only",
        ])
        .expect("flags parse");
        assert_eq!(
            cli.bench.precision_gemm,
            Some(Precisions(vec![GemmPrecision::Bf16, GemmPrecision::Fp32]))
        );
        assert_eq!(
            cli.bench.precision_gemm_shape,
            vec![(8192, 8192, 2048), (4096, 14336, 4096)]
        );
        assert!(cli.bench.gemm_only);
        let none = Cli::try_parse_from(["bench"]).expect("defaults parse");
        assert_eq!(none.bench.precision_gemm, None);
        assert!(!none.bench.gemm_only);
        assert!(none.bench.workloads.is_empty());
        let some = Cli::try_parse_from(["bench", "--workloads", "scan f64, sort u32 2^28"])
            .expect("workloads parse");
        assert_eq!(some.bench.workloads, ["scan f64", "sort u32 2^28"]);
        let err = Cli::try_parse_from(["bench", "--workloads", "scan f64,,sort"])
            .err()
            .expect("an empty text is refused")
            .to_string();
        assert!(err.contains("an empty text"), "{err}");
    }

    #[test]
    fn dims() {
        assert_eq!(parse_dims("129, 67,33"), Ok((129, 67, 33)));
        assert!(parse_dims("1,2").is_err());
        assert!(parse_dims("0,1,1").is_err());
    }
}
