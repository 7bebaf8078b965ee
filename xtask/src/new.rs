//! `cargo xtask new PATH`: a new kernels project a user can start from, outside this
//! workspace: a host crate with a library (the kernels run from plain slices), a binary and
//! a `tests/` file, and its kernels crate (`cuda_std`, built by `cuda_builder` from
//! `build.rs`): `saxpy`, and `block_sum` (shared memory, a shuffle and an atomic). It runs
//! on GPU 0, or on the CPU emulator without a GPU. Its dependencies on this checkout are
//! path-relative, so the checkout and the project can move together.

use crate::project_root;
use anyhow::{Context, Result, bail};
use std::{
    fs,
    path::{Component, Path, PathBuf},
};

#[derive(clap::Args)]
pub struct Args {
    /// Folder to create; its name is the package name (letters, digits, `-`, `_`; starting
    /// with a letter).
    pub path: PathBuf,
}

const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("template/Cargo.toml.tmpl")),
    (".gitignore", include_str!("template/gitignore.tmpl")),
    ("build.rs", include_str!("template/build.rs.tmpl")),
    ("src/lib.rs", include_str!("template/lib.rs.tmpl")),
    ("src/main.rs", include_str!("template/main.rs.tmpl")),
    ("tests/kernels.rs", include_str!("template/tests.rs.tmpl")),
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
    let relative = relative_path(&dir, &root);
    // Written into TOML strings: `/` between components (on every OS), no quotes.
    let ferrocuda = relative
        .iter()
        .map(|c| c.to_str())
        .collect::<Option<Vec<_>>>()
        .context("the checkout's path is not UTF-8")?
        .join("/");
    if ferrocuda.contains(['"', '\\']) {
        bail!(
            "the path from the project to the checkout, {ferrocuda}, has a `\"` or `\\`: \
             move one of them"
        );
    }
    for (rel, text) in render(&name, &ferrocuda) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("files are in a folder"))?;
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "created {} (ferrocuda at {ferrocuda}, relative to it)",
        dir.display()
    );
    println!(
        "build and run it: cd {} && cargo run --release",
        dir.display()
    );
    Ok(())
}

/// The template's files, `(path in the project, text)`, for the package `name` with the
/// ferrocuda checkout at `ferrocuda` (a path relative to the project's folder).
fn render(name: &str, ferrocuda: &str) -> Vec<(&'static str, String)> {
    let snake = name.replace('-', "_");
    FILES
        .iter()
        .map(|(rel, template)| {
            let text = template
                .replace("{name_snake}", &snake)
                .replace("{upper}", &snake.to_uppercase())
                .replace("{name}", name)
                .replace("{ferrocuda}", ferrocuda);
            (*rel, text)
        })
        .collect()
}

/// The path from the folder `from` to `to`, both absolute: `..` for each of `from`'s
/// components after the common prefix, then the rest of `to` (`.` if they are the same).
/// Both are normalised lexically first (`a/./b/../c` is `a/c`), as cargo resolves a
/// relative `path` dependency against the manifest's folder.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let (from, to) = (normalise(from), normalise(to));
    let common = from
        .iter()
        .zip(to.iter())
        .take_while(|(a, b)| a == b)
        .count();
    let mut rel: PathBuf =
        std::iter::repeat_n(Component::ParentDir.as_os_str(), from.len() - common).collect();
    rel.extend(&to[common..]);
    if rel.as_os_str().is_empty() {
        rel.push(".");
    }
    rel
}

/// `path`'s components with `.` dropped and each `..` removing the component before it.
fn normalise(path: &Path) -> Vec<Component<'_>> {
    let mut out = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        for (from, to, rel) in [
            ("/work/fh/proj", "/work/ferrocuda", "../../ferrocuda"),
            ("/work/ferrocuda/proj", "/work/ferrocuda", ".."),
            ("/work/ferrocuda", "/work/ferrocuda", "."),
            ("/tmp/a/b/c", "/work/wt/first", "../../../../work/wt/first"),
            ("/work/x/../proj/./", "/work/ferrocuda", "../ferrocuda"),
            ("/", "/work/ferrocuda", "work/ferrocuda"),
        ] {
            assert_eq!(
                relative_path(Path::new(from), Path::new(to)),
                Path::new(rel),
                "from {from} to {to}"
            );
        }
    }

    #[test]
    fn manifests_name_the_checkout_by_the_relative_path_only() {
        let files = render("my-app", "../../ferrocuda");
        let text = |path: &str| {
            &files
                .iter()
                .find(|(p, _)| *p == path)
                .unwrap_or_else(|| panic!("no {path}"))
                .1
        };
        let root = text("Cargo.toml");
        for krate in ["cust", "cuda_std", "cuda_builder"] {
            let line = format!("{krate} = {{ path = \"../../ferrocuda/crates/{krate}\" }}");
            assert!(root.contains(&line), "{line} missing from:\n{root}");
        }
        assert!(
            root.contains("my-app-kernels = { path = \"kernels\" }"),
            "{root}"
        );
        // The kernels crate takes the path from the workspace: one place to change.
        assert!(text("kernels/Cargo.toml").contains("cuda_std.workspace = true"));
        for (path, text) in &files {
            for placeholder in ["{name}", "{name_snake}", "{upper}", "{ferrocuda}"] {
                assert!(!text.contains(placeholder), "{path} keeps {placeholder}");
            }
        }
        assert!(text("src/lib.rs").contains("include!(env!(\"MY_APP_KERNELS_MODULE\"))"));
        assert!(text("src/main.rs").contains("use my_app::{Kernels"));
    }
}
