//! ARCHITECTURE.md's invariants that a test can check by reading the tree (no GPU needed):
//! only `cust` (and `blastoff`, the cuBLAS crate beside it) talk to the CUDA driver through
//! cudarc, and nothing launches a kernel by a name string.

use std::{
    fs,
    path::{Path, PathBuf},
};

/// A path into cudarc, spelled so that this file does not contain it (a plain grep of the
/// tree for it finds the offenders only).
const CUDARC_PATH: &str = concat!("cudarc", "::");

/// The crates allowed to use cudarc: the runtime, and the cuBLAS crate built over it.
const DRIVER_CRATES: &[&str] = &["crates/cust", "crates/blastoff"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// Every file under `dir` with one of `extensions`, skipping build outputs and hidden folders.
fn files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && name != "bundle" && !name.starts_with('.') {
                files(&path, extensions, out);
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn only_the_runtime_talks_to_the_driver() {
    let root = root();
    let mut found = Vec::new();
    files(&root, &[".rs", "Cargo.toml"], &mut found);
    assert!(
        found.len() > 50,
        "the tree was not found from {}",
        root.display()
    );
    let mut offenders = Vec::new();
    for path in found {
        let rel = relative(&path);
        if rel == "Cargo.toml" || DRIVER_CRATES.iter().any(|c| rel.starts_with(c)) {
            continue;
        }
        // This file names what it forbids.
        if rel == "tests/tests/architecture.rs" {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let uses_cudarc = line.contains(CUDARC_PATH)
                || line.contains("as_cudarc")
                || (rel.ends_with("Cargo.toml") && line.trim_start().starts_with("cudarc"));
            if uses_cudarc && !line.trim_start().starts_with("//") {
                offenders.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "only {DRIVER_CRATES:?} may use cudarc (ARCHITECTURE.md); use cust's API instead:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn product_code_launches_kernels_by_handle_not_by_name() {
    let root = root();
    let mut found = Vec::new();
    for dir in ["host/src", "host/examples"] {
        files(&root.join(dir), &[".rs"], &mut found);
    }
    assert!(!found.is_empty());
    let mut offenders = Vec::new();
    for path in found {
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if line.contains("get_function(") || line.contains("launch!(") {
                offenders.push(format!("{}:{}: {}", relative(&path), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "kernels are launched through typed handles (`module.kernel(handle)?`), never by a \
         name string:\n{}",
        offenders.join("\n")
    );
}
