//! `cargo xtask build`.

use crate::{cargo, project_root, run};
use anyhow::{Context, Result};
use cuda_builder::{ComputeCapability, ptxas};

/// The PTX the host build script produces (see `host/build.rs` and `cuda_builder`'s default
/// target dir).
pub fn ptx_path() -> std::path::PathBuf {
    project_root().join("target/cuda_builder/nvptx64-nvidia-cuda/release/kernels.ptx")
}

pub fn run_build() -> Result<()> {
    run(cargo().args([
        "build",
        "--release",
        "--package",
        "host",
        "--bin",
        "ferrocuda",
    ]))
}

pub fn exec() -> Result<()> {
    run_build()?;
    let ptx = ptx_path();
    println!("PTX:    {}", ptx.display());
    println!(
        "binary: {}",
        project_root().join("target/release/ferrocuda").display()
    );
    match ptxas::find() {
        None => println!(
            "ptxas not found, no resource report. {}",
            ptxas::INSTALL_HINT
        ),
        Some(path) => {
            println!("ptxas:  {}", path.display());
            for arch in [ComputeCapability(7, 0), ComputeCapability(9, 0)] {
                for k in ptxas::assemble(&path, &ptx, arch, None)
                    .with_context(|| format!("assembling {}", ptx.display()))?
                {
                    println!("  {k}");
                }
            }
        }
    }
    Ok(())
}
