//! `ferrocuda`: the command-line front end (Mandelbrot renderer, vector add, device info).

mod cli;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ferrocuda",
    version,
    about = "Rust CUDA kernels: Mandelbrot renderer, vector workloads, device info"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render the Mandelbrot set to a PNG file.
    Mandelbrot(cli::mandelbrot::MandelbrotArgs),
    /// Add two f32 vectors on the GPU, check against the CPU, print time and bandwidth.
    VectorAdd(cli::vector::VectorAddArgs),
    /// Show the CUDA driver version and every GPU.
    Info,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Mandelbrot(args) => cli::mandelbrot::run(&args),
        Command::VectorAdd(args) => cli::vector::run(&args),
        Command::Info => cli::info::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
