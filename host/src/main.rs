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
    /// Time the naive and the optimized Mandelbrot kernels (CUDA events, median of
    /// repetitions) on the full view and three zooms; check they give identical escape times.
    MandelbrotBench(cli::mandelbrot_bench::BenchArgs),
    /// Render a zoom into the Mandelbrot set: PNG frames into a folder and/or an animated GIF.
    Zoom(cli::zoom::ZoomArgs),
    /// Add two f32 vectors on the GPU, check against the CPU, print time and bandwidth.
    VectorAdd(cli::vector::VectorAddArgs),
    /// Show the CUDA driver version and every GPU.
    Info,
    /// Benchmark the vector workloads against memcpy, cuBLAS and CUDA C twins (table, JSON, PNG).
    Bench(cli::bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Mandelbrot(args) => cli::mandelbrot::run(&args),
        Command::MandelbrotBench(args) => cli::mandelbrot_bench::run(&args),
        Command::Zoom(args) => cli::zoom::run(&args),
        Command::VectorAdd(args) => cli::vector::run(&args),
        Command::Info => cli::info::run(),
        Command::Bench(args) => cli::bench::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let (status, print) = cli::exit_status(&err);
            if print {
                cli::errln!("error: {err:#}");
            }
            ExitCode::from(status)
        }
    }
}
