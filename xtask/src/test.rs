//! `cargo xtask test [--gpu]`.

use crate::{cargo, run};
use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Also run the GPU tests (`#[ignore = "needs a CUDA GPU"]`); needs a CUDA GPU.
    #[arg(long)]
    gpu: bool,
}

pub fn run_tests(args: &Args) -> Result<()> {
    let mut cmd = cargo();
    cmd.args(["test", "--workspace"]);
    if args.gpu {
        cmd.args(["--release", "--", "--include-ignored"]);
    }
    run(&mut cmd)
}

pub fn exec(args: &Args) -> Result<()> {
    run_tests(args)?;
    if !args.gpu {
        println!(
            "GPU tests were skipped (they are marked `ignored`): run `cargo xtask test --gpu` on a \
             machine with a CUDA GPU, or `cargo xtask bundle` to run them on one without Rust."
        );
    }
    Ok(())
}
