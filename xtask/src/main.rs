//! `cargo xtask`: ferrocuda's project commands. One module per command; paths come from
//! [`project_root`], cargo from `$CARGO`.

mod bench;
mod build;
mod bundle;
mod emu_speed;
mod gallery;
mod new;
mod profile;
mod test;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use std::{
    path::{Path, PathBuf},
    process::Command,
};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ferrocuda project commands")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the kernels (PTX) and the host in release mode; print the artifact paths and the
    /// ptxas resource usage of every kernel.
    Build,
    /// Run the test suite (no GPU needed); with --gpu also the GPU tests.
    Test(test::Args),
    /// Render a Mandelbrot image in release mode: `cargo xtask render -- --width 4096 ...`
    /// (arguments after `--` go to `ferrocuda mandelbrot`).
    Render {
        /// Arguments for `ferrocuda mandelbrot`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Bundle release binaries, GPU test binaries, the PTX and a run script into `bundle/`,
    /// for a GPU machine without a Rust toolchain.
    Bundle(bundle::Args),
    /// Render the gallery of named views into assets/gallery/*.png (release ferrocuda,
    /// --backend auto).
    Gallery(gallery::Args),
    /// Benchmark the vector workloads in release mode (needs a CUDA GPU):
    /// `cargo xtask bench -- -o bench-out --len 268435456 ...` (arguments after `--` go to
    /// `ferrocuda bench`).
    Bench(bench::Args),
    /// Print the CPU emulator's speed (thread-steps/s; release build, no GPU needed).
    EmuSpeed,
    /// Build the kernels with line tables and run Nsight Compute (source page of the
    /// Mandelbrot and wgmma GEMM kernels) and compute-sanitizer (a planted out-of-bounds
    /// write named by its `.rs` line); needs a CUDA GPU, `ncu` and `compute-sanitizer`.
    Profile(profile::Args),
    /// Create a new kernels project (host crate + kernels crate, typed launch, CPU check)
    /// outside this workspace: `cargo xtask new ../my-gpu-app`.
    New(new::Args),
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Cmd::Build => build::exec(),
        Cmd::Test(args) => test::exec(&args),
        Cmd::Render { args } => {
            let mut cmd = cargo();
            cmd.args([
                "run",
                "--release",
                "--package",
                "host",
                "--bin",
                "ferrocuda",
                "--",
            ])
            .arg("mandelbrot")
            .args(args);
            run(&mut cmd)
        }
        Cmd::Bundle(args) => bundle::exec(&args),
        Cmd::Gallery(args) => gallery::exec(&args),
        Cmd::Bench(args) => bench::exec(&args),
        Cmd::EmuSpeed => emu_speed::exec(),
        Cmd::New(args) => new::exec(&args),
        Cmd::Profile(args) => profile::exec(&args),
    }
}

/// The workspace root (the parent of this crate's folder).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in a workspace folder")
        .to_path_buf()
}

/// `$CARGO` (the cargo running us), in the project root.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(project_root());
    cmd
}

/// Runs `cmd`, failing with its command line if it fails.
pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}
