//! `cargo xtask new PATH`: a new kernels project a user can start from, outside this
//! workspace: a host crate (`cust`, a typed launch, a CPU check) and its kernels crate
//! (`cuda_std`, built by `cuda_builder` from `build.rs`), with path dependencies on this
//! checkout.

use crate::project_root;
use anyhow::{Context, Result, bail};
use std::{fs, path::PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Folder to create; its name is the package name (letters, digits, `-`, `_`; starting
    /// with a letter).
    pub path: PathBuf,
}

const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("template/Cargo.toml.tmpl")),
    ("build.rs", include_str!("template/build.rs.tmpl")),
    ("src/main.rs", include_str!("template/main.rs.tmpl")),
    (
        "kernels/Cargo.toml",
        include_str!("template/kernels_Cargo.toml.tmpl"),
    ),
    (
        "kernels/src/lib.rs",
        include_str!("template/kernels_lib.rs.tmpl"),
    ),
];

pub fn exec(args: &Args) -> Result<()> {
    let dir = std::path::absolute(&args.path)
        .with_context(|| format!("resolving {}", args.path.display()))?;
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .context("the path must end in a folder name")?
        .to_owned();
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        bail!(
            "`{name}` is not a usable package name: use letters, digits, `-` and `_`, starting \
             with a letter"
        );
    }
    if dir.exists() {
        bail!("{} already exists: choose a new folder", dir.display());
    }
    let root = project_root();
    let ferrocuda = root.to_str().context("the checkout's path is not UTF-8")?;
    let snake = name.replace('-', "_");
    for (rel, template) in FILES {
        let text = template
            .replace("{name_snake}", &snake)
            .replace("{upper}", &snake.to_uppercase())
            .replace("{name}", &name)
            .replace("{ferrocuda}", ferrocuda);
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("files are in a folder"))?;
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("created {}", dir.display());
    println!(
        "build and run it: cd {} && cargo run --release",
        dir.display()
    );
    Ok(())
}
