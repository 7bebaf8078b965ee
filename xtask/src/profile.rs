//! `cargo xtask profile`: NVIDIA's profilers on Rust source lines. Builds the release
//! `ferrocuda` binary and the planted-bug test (`tests/tests/sanitizer.rs`) with line tables
//! (`FERROCUDA_LINE_TABLES=1`, in their own target folder so the ordinary build stays as it
//! is), then runs `profile.sh` (also shipped in the bundle): Nsight Compute's full set with
//! the sources imported on the Mandelbrot escape kernel and the BF16 `wgmma` GEMM, printing
//! each report's source page (`.rs` lines with their warp stall samples), and
//! compute-sanitizer on the planted out-of-bounds write, which must name its `.rs` line.
//! Needs a CUDA GPU, `ncu` and `compute-sanitizer`; on a machine without one,
//! `cargo xtask bundle` carries the same steps to a GPU machine (`run.sh`'s `ncu-source-*`,
//! `sanitizer-names-the-line` and `lines-timing-*` steps).

use crate::{cargo, project_root, run};
use anyhow::{Context, Result, bail};
use std::{
    io::BufRead,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// The script that runs the profilers (copied into the bundle as `profile.sh`).
pub const PROFILE_SH: &str = include_str!("profile.sh");

/// The target folder of the line-tables build, under the project root.
const TARGET: &str = "target/line-tables";

#[derive(clap::Args)]
pub struct Args {
    /// Output folder for the reports and logs.
    #[arg(long, default_value = "profile-out")]
    out: PathBuf,
}

/// What a line-tables build made.
pub struct LineTables {
    /// The release `ferrocuda` binary, its kernels with line tables.
    pub ferrocuda: PathBuf,
    /// The release test binary of `tests/tests/sanitizer.rs` (the planted out-of-bounds
    /// write), its probe kernels with line tables.
    pub sanitizer_test: PathBuf,
}

/// Builds [`LineTables`] in `target/line-tables` (a cold build the first time: its own
/// copies of every dependency).
pub fn build_line_tables() -> Result<LineTables> {
    let target = project_root().join(TARGET);
    let with_lines = |cmd: &mut Command| {
        cmd.env(cuda_builder::LINE_TABLES_ENV, "1")
            .env("CARGO_TARGET_DIR", &target);
    };
    let mut build = cargo();
    with_lines(&mut build);
    run(build.args(["build", "--release", "-p", "host", "--bin", "ferrocuda"]))?;
    let mut test = cargo();
    with_lines(&mut test);
    let mut child = test
        .args([
            "test",
            "--release",
            "-p",
            "tests",
            "--test",
            "sanitizer",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .context("starting cargo test --no-run (line tables)")?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut sanitizer_test = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == "sanitizer"
            && let Some(exe) = msg["executable"].as_str()
        {
            sanitizer_test = Some(PathBuf::from(exe));
        }
    }
    if !child.wait()?.success() {
        bail!("cargo test --release -p tests --test sanitizer --no-run (line tables) failed");
    }
    Ok(LineTables {
        ferrocuda: target.join("release/ferrocuda"),
        sanitizer_test: sanitizer_test.context("cargo reported no `sanitizer` test binary")?,
    })
}

pub fn exec(args: &Args) -> Result<()> {
    let built = build_line_tables()?;
    let out = project_root().join(&args.out);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let script = out.join("profile.sh");
    std::fs::write(&script, PROFILE_SH)?;
    let steps: [(&str, &Path); 3] = [
        ("ncu-mandelbrot", &built.ferrocuda),
        ("ncu-gemm", &built.ferrocuda),
        ("sanitizer", &built.sanitizer_test),
    ];
    let mut failed = Vec::new();
    for (step, exe) in steps {
        println!("=== {step}");
        // The sources are where the build recorded them: no source folder needed.
        let status = Command::new("bash")
            .arg(&script)
            .args([std::ffi::OsStr::new(step), exe.as_os_str(), out.as_os_str()])
            .current_dir(project_root())
            .status()
            .with_context(|| format!("running {}", script.display()))?;
        if !status.success() {
            failed.push(step);
        }
    }
    println!("reports and logs: {}", out.display());
    if !failed.is_empty() {
        bail!(
            "failed: {} (these need a CUDA GPU with ncu and compute-sanitizer on PATH; \
             without one, run `cargo xtask bundle` and bundle/run.sh on a GPU machine)",
            failed.join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::PROFILE_SH;

    /// `profile.sh`'s case for `step` exists.
    fn has_step(step: &str) -> bool {
        PROFILE_SH.contains(&format!("\n{step})\n"))
    }

    /// The steps `exec` and the bundle's `run.sh` ask `profile.sh` for exist, and the test
    /// its sanitizer step runs is the planted-bug test's name.
    #[test]
    fn the_steps_called_are_the_steps_profile_sh_has() {
        for step in ["ncu-mandelbrot", "ncu-gemm", "sanitizer"] {
            assert!(has_step(step), "profile.sh has no `{step})` case");
        }
        let run_sh = include_str!("run.sh");
        let called: Vec<&str> = run_sh
            .lines()
            .filter_map(|l| l.split("./profile.sh ").nth(1))
            .filter_map(|rest| rest.split_whitespace().next())
            .collect();
        assert_eq!(called, ["ncu-mandelbrot", "ncu-gemm", "sanitizer"]);
        assert!(!has_step("no-such-step"));
        let test = include_str!("../../tests/tests/sanitizer.rs");
        let name = "planted_out_of_bounds_write_for_compute_sanitizer";
        assert!(test.contains(&format!("fn {name}()")) && PROFILE_SH.contains(name));
    }
}
