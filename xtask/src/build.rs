//! `cargo xtask build`: the release host build, and what cuda_builder recorded in its manifest
//! (PTX, cubins, per-kernel resources from ptxas).

use crate::{cargo, project_root};
use anyhow::{Context, Result, bail};
use cuda_builder::ModuleImage;
use std::{io::BufRead, path::PathBuf, process::Stdio};

/// Builds the release `ferrocuda` binary and returns the kernels manifest that `host`'s build
/// script wrote (found from the `KERNELS_MANIFEST` variable it exported, so no path or
/// architecture is kept here).
pub fn run_build() -> Result<ModuleImage> {
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
    let mut manifest_path: Option<PathBuf> = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        if msg["reason"] != "build-script-executed" {
            continue;
        }
        for pair in msg["env"].as_array().into_iter().flatten() {
            if pair[0] == "KERNELS_MANIFEST" {
                manifest_path = pair[1].as_str().map(PathBuf::from);
            }
        }
    }
    if !child.wait()?.success() {
        bail!("cargo build --release -p host failed");
    }
    let manifest_path = manifest_path.context(
        "host's build script did not report KERNELS_MANIFEST (the build was fresh: run \
         `touch host/build.rs` and retry)",
    )?;
    Ok(cuda_builder::manifest::read(&manifest_path)?)
}

pub fn exec() -> Result<()> {
    let manifest = run_build()?;
    println!("PTX:    {}", manifest.ptx_file);
    println!(
        "binary: {}",
        project_root().join("target/release/ferrocuda").display()
    );
    for cubin in &manifest.cubins {
        println!("cubin:  {} {}", cubin.arch, cubin.file);
    }
    println!("{} kernels", manifest.entries.len());
    if manifest.entries.iter().all(|e| e.resources.is_empty()) {
        println!(
            "no ptxas resource report (ptxas was not found at build time). {}",
            cuda_builder::ptxas::INSTALL_HINT
        );
    }
    for entry in &manifest.entries {
        for r in &entry.resources {
            println!("  {} on {r}", entry.name);
        }
    }
    Ok(())
}
