//! `cargo xtask new PATH`: a new kernels project a user can start from, outside this
//! workspace: a host crate with a library (the kernels run from plain slices), a binary and
//! a `tests/` file, and its kernels crate (`cuda_std`, built by `cuda_builder` from
//! `build.rs`): `saxpy`, and `block_sum` (shared memory, a shuffle and an atomic). It runs
//! on GPU 0, or on the CPU emulator without a GPU. Its dependencies on this checkout are
//! path-relative, so the checkout and the project can move together; with
//! `--registry-version V` it depends on the published packages (`ferrocuda-cust`, ...) by
//! version instead, from crates.io or a registry that replaces it.

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
    /// Depend on ferrocuda's published packages at this version (`cust = { package =
    /// "ferrocuda-cust", version = "..." }`) instead of this checkout by path. Must be this
    /// checkout's version: the template's code is written against its API.
    #[arg(long, value_name = "VERSION")]
    pub registry_version: Option<String>,
}

/// The version of ferrocuda's packages in this checkout (`[workspace.package]`).
const CHECKOUT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The published crates the template names: `(dependency key = library name, package)`.
const CRATES: &[(&str, &str)] = &[
    ("cust", "ferrocuda-cust"),
    ("cuda_std", "ferrocuda-cuda-std"),
    ("cuda_builder", "ferrocuda-cuda-builder"),
];

/// Where a new project takes ferrocuda's crates from.
#[derive(Debug)]
enum Source {
    /// This checkout, by a path relative to the project's folder (`/` separated).
    Checkout { relative: String },
    /// The published packages, by version.
    Registry { version: String },
}

impl Source {
    /// The project's `[workspace.dependencies]` table, with a comment saying where from.
    fn workspace_dependencies(&self) -> String {
        let comment = match self {
            Source::Checkout { .. } => {
                "# The ferrocuda checkout, relative to this folder: move the two together and this \
                 still\n# works (`cargo xtask new` wrote the path)."
            }
            Source::Registry { .. } => {
                "# ferrocuda's published packages, by version (crates.io, or a registry that \
                 replaces it\n# in .cargo/config.toml). Take all of them from one place: a git \
                 or path line beside\n# these makes cargo refuse the graph (two copies of \
                 `ferrocuda-cust-core`)."
            }
        };
        let mut text = format!("{comment}\n[workspace.dependencies]\n");
        for (key, package) in CRATES {
            let field = match self {
                Source::Checkout { relative } => format!("path = \"{relative}/crates/{key}\""),
                Source::Registry { version } => format!("version = \"{version}\""),
            };
            text.push_str(&format!("{key} = {{ {field}, package = \"{package}\" }}\n"));
        }
        text
    }
}

/// Checks a `--registry-version`: a version (`MAJOR.MINOR.PATCH`) and this checkout's, since
/// the template's code is written against this checkout's API.
fn check_registry_version(version: &str) -> Result<()> {
    let numbers: Vec<&str> = version.split('-').next().unwrap_or("").split('.').collect();
    let is_version = numbers.len() == 3
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    if !is_version {
        bail!(
            "--registry-version {version:?} is not a version: write MAJOR.MINOR.PATCH, as \
             --registry-version {CHECKOUT_VERSION}"
        );
    }
    if version != CHECKOUT_VERSION {
        bail!(
            "--registry-version {version}: no such release of ferrocuda's packages is known to \
             this checkout, whose packages are {CHECKOUT_VERSION} and whose template is written \
             for them. Use --registry-version {CHECKOUT_VERSION}, or run `cargo xtask new` from \
             a checkout of the {version} release"
        );
    }
    Ok(())
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
    let source = match &args.registry_version {
        Some(version) => {
            check_registry_version(version)?;
            Source::Registry {
                version: version.clone(),
            }
        }
        None => checkout_source(&dir)?,
    };
    for (rel, text) in render(&name, &source) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().expect("files are in a folder"))?;
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    match &source {
        Source::Checkout { relative } => println!(
            "created {} (ferrocuda at {relative}, relative to it)",
            dir.display()
        ),
        Source::Registry { version } => println!(
            "created {} (ferrocuda's packages at version {version})",
            dir.display()
        ),
    }
    println!(
        "build and run it: cd {} && cargo run --release",
        dir.display()
    );
    Ok(())
}

/// This checkout as seen from the project folder `dir`.
fn checkout_source(dir: &Path) -> Result<Source> {
    let root = project_root();
    let relative = relative_path(dir, &root);
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
    Ok(Source::Checkout {
        relative: ferrocuda,
    })
}

/// The template's files, `(path in the project, text)`, for the package `name` with the
/// ferrocuda crates from `source`.
fn render(name: &str, source: &Source) -> Vec<(&'static str, String)> {
    let snake = name.replace('-', "_");
    let dependencies = source.workspace_dependencies();
    FILES
        .iter()
        .map(|(rel, template)| {
            let text = template
                .replace("{name_snake}", &snake)
                .replace("{upper}", &snake.to_uppercase())
                .replace("{name}", name)
                .replace("{workspace_dependencies}", &dependencies);
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
        let files = render(
            "my-app",
            &Source::Checkout {
                relative: "../../ferrocuda".to_owned(),
            },
        );
        let text = |path: &str| {
            &files
                .iter()
                .find(|(p, _)| *p == path)
                .unwrap_or_else(|| panic!("no {path}"))
                .1
        };
        let root = text("Cargo.toml");
        for krate in ["cust", "cuda_std", "cuda_builder"] {
            let package = format!("ferrocuda-{}", krate.replace('_', "-"));
            let line = format!(
                "{krate} = {{ path = \"../../ferrocuda/crates/{krate}\", package = \"{package}\" }}"
            );
            assert!(root.contains(&line), "{line} missing from:\n{root}");
        }
        assert!(
            root.contains("my-app-kernels = { path = \"kernels\" }"),
            "{root}"
        );
        // The kernels crate takes the path from the workspace: one place to change.
        assert!(text("kernels/Cargo.toml").contains("cuda_std.workspace = true"));
        for (path, text) in &files {
            for placeholder in [
                "{name}",
                "{name_snake}",
                "{upper}",
                "{workspace_dependencies}",
            ] {
                assert!(!text.contains(placeholder), "{path} keeps {placeholder}");
            }
        }
        assert!(text("src/lib.rs").contains("include!(env!(\"MY_APP_KERNELS_MODULE\"))"));
        assert!(text("src/main.rs").contains("use my_app::{Kernels"));
    }

    #[test]
    fn registry_projects_name_the_packages_by_version_only() {
        let files = render(
            "my-app",
            &Source::Registry {
                version: CHECKOUT_VERSION.to_owned(),
            },
        );
        let root = &files.iter().find(|(p, _)| *p == "Cargo.toml").unwrap().1;
        for (krate, package) in CRATES {
            let line = format!(
                "{krate} = {{ version = \"{CHECKOUT_VERSION}\", package = \"{package}\" }}"
            );
            assert!(root.contains(&line), "{line} missing from:\n{root}");
        }
        assert!(
            !root.contains("path = \"..") && !root.contains("git ="),
            "{root}"
        );
    }

    #[test]
    fn registry_versions_other_than_the_checkouts_are_refused() {
        assert!(check_registry_version(CHECKOUT_VERSION).is_ok());
        for (bad, says) in [
            ("9.9.9", "no such release"),
            ("0.1", "is not a version"),
            ("latest", "is not a version"),
        ] {
            let error = check_registry_version(bad).unwrap_err().to_string();
            assert!(error.contains(says), "{bad}: {error}");
            assert!(error.contains(CHECKOUT_VERSION), "{bad}: {error}");
        }
    }
}
