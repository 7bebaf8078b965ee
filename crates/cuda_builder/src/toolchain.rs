//! The Rust toolchain: sysroot, required components, package names.

use crate::BuildError;
use std::{
    ffi::OsStr,
    path::{Path, PathBuf},
    process::Command,
};

/// The sysroot of `rustc`, asked once per process and `rustc` (watch mode rebuilds ask again
/// on every edit otherwise).
pub(crate) fn sysroot(rustc: &OsStr) -> Result<PathBuf, BuildError> {
    use std::sync::{Mutex, OnceLock};
    static KNOWN: OnceLock<Mutex<Vec<(std::ffi::OsString, PathBuf)>>> = OnceLock::new();
    let known = KNOWN.get_or_init(|| Mutex::new(Vec::new()));
    if let Some((_, s)) = known
        .lock()
        .ok()
        .and_then(|k| k.iter().find(|(r, _)| r == rustc).cloned())
    {
        return Ok(s);
    }
    let sysroot = ask_sysroot(rustc)?;
    if let Ok(mut k) = known.lock() {
        k.push((rustc.to_owned(), sysroot.clone()));
    }
    Ok(sysroot)
}

fn ask_sysroot(rustc: &OsStr) -> Result<PathBuf, BuildError> {
    let fail = |why: String| BuildError::Sysroot(rustc.to_string_lossy().into_owned(), why);
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !out.status.success() {
        return Err(fail(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The components the NVPTX build needs that are missing from the toolchain at `sysroot`.
fn missing_components(sysroot: &Path) -> Vec<&'static str> {
    let rustlib = sysroot.join("lib").join("rustlib");
    let mut missing = Vec::new();
    if !rustlib.join("src/rust/library/core/Cargo.toml").is_file() {
        missing.push("rust-src");
    }
    // The linker lives in `lib/rustlib/<host>/bin/[self-contained/]`.
    let has = |name: &str| {
        std::fs::read_dir(&rustlib).is_ok_and(|entries| {
            entries.filter_map(Result::ok).any(|e| {
                let bin = e.path().join("bin");
                bin.join(name).is_file() || bin.join("self-contained").join(name).is_file()
            })
        })
    };
    if !has("llvm-bitcode-linker") {
        missing.push("llvm-bitcode-linker");
    }
    if !has("llvm-objcopy") {
        missing.push("llvm-tools");
    }
    missing
}

/// Makes sure the toolchain of `rustc` has the components the NVPTX build needs: `rust-src`
/// for `-Zbuild-std=core`, and the `llvm-bitcode-linker` (with `llvm-tools`, which it drives)
/// that links nvptx64 crates; running `rustup component add`
/// when `install` is set. Returns the sysroot.
pub(crate) fn ensure_components(rustc: &OsStr, install: bool) -> Result<PathBuf, BuildError> {
    let sysroot = sysroot(rustc)?;
    let missing = missing_components(&sysroot);
    if missing.is_empty() {
        return Ok(sysroot);
    }
    // The toolchain's name: rustup sets RUSTUP_TOOLCHAIN for the processes it starts; else
    // the sysroot's folder name is the toolchain's name.
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").ok().unwrap_or_else(|| {
        sysroot
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let command = format!(
        "rustup component add --toolchain {toolchain} {}",
        missing.join(" ")
    );
    let error = |reason: String| BuildError::MissingComponents {
        sysroot: sysroot.clone(),
        missing: missing.join(" "),
        command: command.clone(),
        reason,
    };
    if !install {
        return Err(error("automatic installation is disabled".into()));
    }
    let status = Command::new("rustup")
        .args(["component", "add", "--toolchain", &toolchain])
        .args(&missing)
        .status()
        .map_err(|e| error(format!("could not run rustup: {e}")))?;
    if !status.success() {
        return Err(error(format!("rustup exited with {status}")));
    }
    let still = missing_components(&sysroot);
    if !still.is_empty() {
        return Err(error(format!(
            "still missing after rustup: {}",
            still.join(" ")
        )));
    }
    Ok(sysroot)
}

/// The `[package] name` of a manifest.
pub(crate) fn package_name(manifest: &Path) -> Result<String, BuildError> {
    let text = std::fs::read_to_string(manifest).map_err(|e| BuildError::Io(manifest.into(), e))?;
    let table: toml::Table = text
        .parse()
        .map_err(|_| BuildError::NoPackageName(manifest.into()))?;
    table
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_owned)
        .ok_or_else(|| BuildError::NoPackageName(manifest.into()))
}

/// The library root file of a crate: `[lib] path`, else `src/lib.rs`.
pub(crate) fn crate_root(manifest: &Path) -> Result<PathBuf, BuildError> {
    let text = std::fs::read_to_string(manifest).map_err(|e| BuildError::Io(manifest.into(), e))?;
    let table: toml::Table = text
        .parse()
        .map_err(|_| BuildError::NoPackageName(manifest.into()))?;
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let rel = table
        .get("lib")
        .and_then(|l| l.get("path"))
        .and_then(|p| p.as_str())
        .unwrap_or("src/lib.rs");
    Ok(dir.join(rel))
}
