//! `cargo xtask bench [-- ARGS]`: builds the release `ferrocuda` binary and runs
//! `ferrocuda bench ARGS` (vector workloads against memcpy, CUB, cuBLAS and the CUDA C twins;
//! table on stdout, JSON and SVG chart in `-o/--output`, default `bench-out/`).

use crate::{build, project_root};
use anyhow::{Result, bail};
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// Arguments for `ferrocuda bench` (e.g. `-- --len 67108864 --gemm 2048,2048,2048`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

pub fn exec(args: &Args) -> Result<()> {
    build::run_build()?;
    let exe = project_root().join("target/release/ferrocuda");
    let mut cmd = Command::new(&exe);
    cmd.current_dir(project_root())
        .arg("bench")
        .args(&args.args);
    let status = cmd
        .status()
        .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", exe.display()))?;
    if !status.success() {
        bail!(
            "`ferrocuda bench` failed ({status}). It needs a CUDA GPU and driver; for cuBLAS, \
             libcublas.so on LD_LIBRARY_PATH; for the CUDA C twins, nvcc on PATH. On a machine \
             without a GPU, run `cargo xtask bundle` and then bundle/run.sh on a GPU machine \
             (its `bench` step writes $OUT/bench/bench.json and bench.svg)."
        );
    }
    Ok(())
}
