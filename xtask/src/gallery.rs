//! `cargo xtask gallery`: renders a handful of named views into `assets/gallery/*.png` with
//! the release `ferrocuda` binary (`--backend auto`: the GPU where there is one, else the CPU).

use crate::{cargo, project_root, run};
use anyhow::{Context, Result};
use std::process::Command;

/// `(file stem, what it shows, ferrocuda mandelbrot arguments)`.
const VIEWS: &[(&str, &str, &[&str])] = &[
    (
        "full-set",
        "the whole set, smooth colouring",
        &[
            "--center",
            "-0.75,0",
            "--scale",
            "3.2",
            "--max-iter",
            "500",
            "--smooth",
            "--palette",
            "classic",
        ],
    ),
    (
        "seahorse-valley",
        "seahorse valley between the cardioid and the period-2 bulb",
        &[
            "--center",
            "-0.7435,0.1314",
            "--scale",
            "0.02",
            "--max-iter",
            "1500",
            "--smooth",
            "--palette",
            "ocean",
        ],
    ),
    (
        "elephant-valley",
        "elephant valley at the cardioid's right side",
        &[
            "--center",
            "0.2925,0.0149",
            "--scale",
            "0.02",
            "--max-iter",
            "1500",
            "--smooth",
            "--palette",
            "fire",
        ],
    ),
    (
        "deep-f64-zoom",
        "a 1e-10-wide view: f64 chosen automatically",
        &[
            "--center",
            "-0.743643887037151,0.13182590420533",
            "--scale",
            "1e-10",
            "--max-iter",
            "6000",
            "--smooth",
            "--palette",
            "electric",
            "--palette-cycle",
            "256",
        ],
    ),
    (
        "spiral",
        "a double spiral, smooth colouring with an offset palette",
        &[
            "--center",
            "-0.761574,-0.0847596",
            "--scale",
            "0.003",
            "--max-iter",
            "3000",
            "--smooth",
            "--palette",
            "viridis",
            "--palette-cycle",
            "96",
            "--palette-offset",
            "0.3",
        ],
    ),
    (
        "minibrot",
        "the period-3 minibrot on the real axis, discrete colouring",
        &[
            "--center",
            "-1.7549,0",
            "--scale",
            "0.04",
            "--max-iter",
            "1000",
            "--palette",
            "classic",
        ],
    ),
];

#[derive(clap::Args)]
pub struct Args {
    /// Image width in pixels.
    #[arg(long, default_value_t = 800)]
    width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 600)]
    height: u32,
    /// Supersampling (1, 2 or 4).
    #[arg(long, default_value_t = 2)]
    supersample: u32,
    /// Backend passed to ferrocuda (auto, gpu or cpu).
    #[arg(long, default_value = "auto")]
    backend: String,
}

pub fn exec(args: &Args) -> Result<()> {
    run(cargo().args([
        "build",
        "--release",
        "--package",
        "host",
        "--bin",
        "ferrocuda",
    ]))?;
    let exe = project_root().join("target/release/ferrocuda");
    let dir = project_root().join("assets/gallery");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut total = 0;
    for (stem, what, view) in VIEWS {
        let path = dir.join(format!("{stem}.png"));
        println!("gallery: {stem}: {what}");
        let width = args.width.to_string();
        let height = args.height.to_string();
        let supersample = args.supersample.to_string();
        run(Command::new(&exe)
            .arg("mandelbrot")
            .args([
                "--backend",
                &args.backend,
                "--width",
                &width,
                "--height",
                &height,
            ])
            .args(["--supersample", &supersample])
            .args(*view)
            .arg("-o")
            .arg(&path))?;
        total += path.metadata().map_or(0, |m| m.len());
    }
    println!(
        "gallery: {} images in {} ({:.1} MiB)",
        VIEWS.len(),
        dir.display(),
        total as f64 / f64::from(1 << 20)
    );
    Ok(())
}
