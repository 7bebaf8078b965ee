//! `cargo xtask build`: the release host build, and what cuda_builder recorded in its manifest
//! (PTX, cubins, per-kernel resources from ptxas).

use crate::{cargo, project_root};
use anyhow::{Context, Result, bail};
use cuda_builder::manifest::Manifest;
use std::{io::BufRead, path::PathBuf, process::Stdio};

/// Builds the release `ferrocuda` binary and returns the kernels manifest that `host`'s build
/// script wrote (found from the `KERNELS_MODULE` variable it exported, so no path or
/// architecture is kept here).
pub fn run_build() -> Result<Manifest> {
    let mut child = cargo()
        .args([
            "build",
            "--release",
            "--package",
            "host",
            "--bin",
            "ferrocuda",
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .context("starting cargo build")?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut module: Option<PathBuf> = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        if msg["reason"] != "build-script-executed" {
            continue;
        }
        for pair in msg["env"].as_array().into_iter().flatten() {
            if pair[0] == "KERNELS_MODULE" {
                module = pair[1].as_str().map(PathBuf::from);
            }
        }
    }
    if !child.wait()?.success() {
        bail!("cargo build --release -p host failed");
    }
    let module = module.context(
        "host's build script did not report KERNELS_MODULE (the build was fresh: run \
         `touch host/build.rs` and retry)",
    )?;
    Manifest::read(&module.with_extension("json")).map_err(anyhow::Error::msg)
}

pub fn exec() -> Result<()> {
    let manifest = run_build()?;
    println!("PTX:    {}", manifest.ptx.display());
    println!(
        "binary: {}",
        project_root().join("target/release/ferrocuda").display()
    );
    for ((major, minor), path) in &manifest.cubins {
        println!("cubin:  sm_{major}{minor} {}", path.display());
    }
    println!("{} kernels", manifest.entries.len());
    if manifest.resources.is_empty() {
        println!(
            "no ptxas resource report (ptxas was not found at build time). {}",
            cuda_builder::ptxas::INSTALL_HINT
        );
    }
    for r in &manifest.resources {
        println!("  {r}");
    }
    Ok(())
}
