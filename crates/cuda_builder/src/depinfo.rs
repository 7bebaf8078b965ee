//! Step 2 of a build: the files the kernels build read, from rustc's dep-info file, and the
//! `cargo::rerun-if-*` directives that make the host crate's build script rerun when one
//! changes.

use crate::ptxas;
use std::path::{Path, PathBuf};

/// Every input listed in the dep-info file outside the toolchain's sysroot (the kernels
/// crate's sources and those of its path and registry dependencies), then the kernels
/// manifest.
pub(crate) fn source_inputs(dep_info: &Path, manifest: &Path, sysroot: &Path) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = listed(dep_info)
        .into_iter()
        .filter(|path| !path.starts_with(sysroot))
        .collect();
    inputs.push(manifest.to_path_buf());
    inputs
}

/// The files a dep-info file lists (none if it cannot be read), as written there: cargo's
/// copy names them by absolute paths, rustc's own relative to rustc's working directory.
pub(crate) fn listed(dep_info: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(dep_info)
        .map(|text| parse_dep_info(&text))
        .unwrap_or_default()
}

/// Prints `rerun-if-changed` for every input of the kernels build ([`source_inputs`]) and
/// `rerun-if-env-changed` for what the builder reads.
pub(crate) fn emit_rerun_directives(inputs: &[PathBuf]) {
    for path in inputs {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    // ptxas and libdevice are optional and looked up on every build: notice when they appear
    // (a pip install of NVIDIA's wheel, a toolkit install) or go away.
    for path in ptxas::watch_paths() {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    for var in [
        "PTXAS",
        "CUDA_HOME",
        "CUDA_PATH",
        "PATH",
        crate::LINE_TABLES_ENV,
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }
}

/// The prerequisites of a Makefile-style dep-info file (`target: dep dep ...`), with `\ `
/// escapes for spaces.
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut deps = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        deps.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                _ => current.push(c),
            }
        }
        if !current.is_empty() {
            deps.push(PathBuf::from(current));
        }
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_parsing_handles_escaped_spaces_and_multiple_lines() {
        let text = "/t/k.ptx: /a/b.rs /c\\ d/e.rs\n\n/a/b.rs:\n";
        assert_eq!(
            parse_dep_info(text),
            vec![PathBuf::from("/a/b.rs"), PathBuf::from("/c d/e.rs")]
        );
    }
}
