//! Step 1 of a build: the nested `cargo rustc` that compiles the kernels crate for
//! `nvptx64-nvidia-cuda` (its flags, its scrubbed environment, the crate attributes a
//! Rust-CUDA crate lacks), run with its diagnostics forwarded.

use crate::{BuildError, CudaBuilder, KernelsCrate, TARGET, find_libdevice, toolchain};
use std::{
    ffi::OsStr,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// Environment variables of the outer cargo that must not reach the kernels build (they
/// carry host flags, wrappers such as clippy-driver, or redirect the output).
const SCRUBBED_ENV: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
];

/// The `RUSTFLAGS` of the kernels build (for every crate of it, `core` included).
///
/// # Errors
/// [`BuildError::LibdeviceNotFound`] with `fast_math(true)` and no libdevice.
pub(crate) fn rustflags(builder: &CudaBuilder) -> Result<Vec<String>, BuildError> {
    let mut flags = vec![
        format!("-Ctarget-cpu={}", builder.arch),
        format!(
            "-Ctarget-feature=+ptx{}{}",
            builder.ptx_isa.0, builder.ptx_isa.1
        ),
        "-Zunstable-options".to_owned(),
        // A panic becomes a `trap`, with no formatting code (BRIEF: verified).
        "-Cpanic=immediate-abort".to_owned(),
    ];
    if builder.fast_math {
        let libdevice = find_libdevice().ok_or(BuildError::LibdeviceNotFound)?;
        flags.push("--cfg".to_owned());
        flags.push("cuda_std_fast_math".to_owned());
        flags.push(format!("-Clink-arg={}", libdevice.display()));
    }
    if let Some(on) = builder.debug_info {
        flags.push(format!("-Cdebuginfo={}", if on { 2 } else { 0 }));
    }
    for cfg in &builder.cfgs {
        flags.push("--cfg".to_owned());
        flags.push(cfg.clone());
    }
    Ok(flags)
}

/// The `cargo rustc` command that compiles `krate` to PTX in `target_dir`, with `rustc` as
/// the compiler, [`rustflags`], and an environment from which the outer cargo's settings
/// are removed ([`SCRUBBED_ENV`], every `CARGO_TARGET_*` and `CARGO_PROFILE_*`).
///
/// # Errors
/// As [`rustflags`]; [`BuildError::Io`] if the crate root cannot be found.
pub(crate) fn command(
    builder: &CudaBuilder,
    krate: &KernelsCrate,
    cargo: &OsStr,
    rustc: &OsStr,
    target_dir: &Path,
    linker: Option<&Path>,
) -> Result<Command, BuildError> {
    let mut flags = rustflags(builder)?;
    if let Some(linker) = linker {
        // `crate::link`: the kernels' linker script (same flavor, `llbc`).
        flags.push(format!("-Clinker={}", linker.display()));
    }
    // Only for the kernels crate itself (after `--`), not its dependencies or `core`.
    let crate_attrs: Vec<String> = missing_crate_attrs(&toolchain::crate_root(&krate.manifest)?)
        .into_iter()
        .map(|attr| format!("-Zcrate-attr={attr}"))
        .collect();

    let mut cmd = Command::new(cargo);
    cmd.arg("rustc")
        .arg("--manifest-path")
        .arg(&krate.manifest)
        .args(["--crate-type", "cdylib", "--target", TARGET])
        .args([
            "-Zbuild-std=core",
            "--message-format=json-diagnostic-rendered-ansi",
        ])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(&krate.dir);
    if builder.release {
        cmd.arg("--release");
    }
    if !crate_attrs.is_empty() {
        cmd.arg("--").args(&crate_attrs);
    }
    for var in SCRUBBED_ENV {
        cmd.env_remove(var);
    }
    // Any CARGO_TARGET_<triple>_RUSTFLAGS or _LINKER would also leak in.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_TARGET_") || key.starts_with("CARGO_PROFILE_") {
            cmd.env_remove(key.as_ref());
        }
    }
    cmd.env("RUSTC", rustc)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
        .env("CARGO_TERM_COLOR", "never")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok(cmd)
}

/// Runs the nested cargo `cmd` (from [`command`]) to completion: forwards each distinct
/// compiler warning as `cargo::warning=` lines when `emit`, collects the errors.
///
/// # Errors
/// [`BuildError::CargoNotStarted`] if cargo cannot be run; [`BuildError::Compile`] with the
/// compiler's rendered error messages (or cargo's stderr when it printed none) if the build
/// fails.
pub(crate) fn run(mut cmd: Command, crate_name: &str, emit: bool) -> Result<(), BuildError> {
    let cargo = PathBuf::from(cmd.get_program());
    let mut child = cmd
        .spawn()
        .map_err(|e| BuildError::CargoNotStarted(cargo.clone(), e))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(BuildError::CargoNotStarted(
            cargo,
            std::io::Error::other("its output is not piped"),
        ));
    };
    // Drain stderr on a thread so a full pipe cannot block cargo.
    let stderr_thread = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let mut errors = Vec::new();
    let mut seen_warnings = std::collections::HashSet::new();
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let Ok(msg) = serde_json::from_str::<CargoMessage>(&line) else {
            continue;
        };
        if msg.reason != "compiler-message" {
            continue;
        }
        let Some(diag) = msg.message else { continue };
        let rendered = strip_ansi(diag.rendered.as_deref().unwrap_or(&diag.message));
        match diag.level.as_str() {
            "error" | "error: internal compiler error" => errors.push(rendered),
            // Our own `+ptxXY` flag is reported as unstable on every crate: expected.
            "warning"
                if diag
                    .message
                    .starts_with("unstable feature specified for `-Ctarget-feature`") => {}
            "warning" if emit && seen_warnings.insert(rendered.clone()) => {
                for l in rendered.lines().filter(|l| !l.trim().is_empty()) {
                    println!("cargo::warning=[kernels] {l}");
                }
            }
            _ => {}
        }
    }
    let status = child
        .wait()
        .map_err(|e| BuildError::CargoNotStarted(cargo, e))?;
    let stderr_text = stderr_thread.join().unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    Err(BuildError::Compile {
        crate_name: crate_name.to_owned(),
        messages: if errors.is_empty() {
            stderr_text
        } else {
            errors.join("\n")
        },
    })
}

/// The crate attributes a kernels build needs that the crate root at `root` does not name
/// itself (a crate written for Rust-CUDA has none of them; naming a feature twice is an
/// error, so those already present are left out).
fn missing_crate_attrs(root: &Path) -> Vec<&'static str> {
    let text = inner_attributes(&std::fs::read_to_string(root).unwrap_or_default());
    let mut attrs = Vec::new();
    if !text.contains("no_std") {
        attrs.push("no_std");
    }
    for feature in ["abi_ptx", "asm_experimental_arch", "stdarch_nvptx"] {
        if !text.contains(feature) {
            attrs.push(match feature {
                "abi_ptx" => "feature(abi_ptx)",
                "asm_experimental_arch" => "feature(asm_experimental_arch)",
                _ => "feature(stdarch_nvptx)",
            });
        }
    }
    attrs
}

/// The text of every inner attribute (`#![...]`, brackets balanced) of a crate root, so that
/// words in comments or code do not count.
fn inner_attributes(source: &str) -> String {
    let mut out = String::new();
    let mut rest = source;
    while let Some(start) = rest.find("#![") {
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[start + 2..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + 2 + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push_str(&rest[start..end]);
        out.push('\n');
        rest = &rest[end..];
    }
    out
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Skip `[` ... final byte in 0x40..=0x7e.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(serde::Deserialize)]
struct CargoMessage {
    reason: String,
    message: Option<Diagnostic>,
}

#[derive(serde::Deserialize)]
struct Diagnostic {
    level: String,
    message: String,
    rendered: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_escapes_are_removed() {
        assert_eq!(
            strip_ansi("\u{1b}[0m\u{1b}[1m\u{1b}[33mwarning\u{1b}[0m: x"),
            "warning: x"
        );
    }

    #[test]
    fn crate_attributes_are_added_only_where_missing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("lib.rs");
        std::fs::write(
            &root,
            "//! mentions no_std and abi_ptx in prose\nuse x::y;\n",
        )
        .unwrap();
        assert_eq!(
            missing_crate_attrs(&root),
            [
                "no_std",
                "feature(abi_ptx)",
                "feature(asm_experimental_arch)",
                "feature(stdarch_nvptx)"
            ]
        );
        std::fs::write(
            &root,
            "#![no_std]\n#![cfg_attr(\n    target_arch = \"nvptx64\",\n    feature(abi_ptx, asm_experimental_arch)\n)]\n",
        )
        .unwrap();
        assert_eq!(missing_crate_attrs(&root), ["feature(stdarch_nvptx)"]);
    }
}
