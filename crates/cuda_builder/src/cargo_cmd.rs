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
    let (isa_major, isa_minor) = builder.effective_ptx_isa();
    let mut flags = vec![
        format!("-Ctarget-cpu={}", builder.arch),
        format!("-Ctarget-feature=+ptx{isa_major}{isa_minor}"),
        "-Zunstable-options".to_owned(),
        // A panic becomes a `trap`, with no formatting code (BRIEF: verified).
        "-Cpanic=immediate-abort".to_owned(),
    ];
    // Rust-CUDA's `cfg(target_feature = "compute_NN")`. rustc refuses a built-in cfg set by
    // `--cfg` unless its (deny-by-default) lint is allowed; the values are declared so that
    // testing them does not warn in the kernels build.
    flags.push("-Aexplicit_builtin_cfgs_in_flags".to_owned());
    for name in crate::compute_features(builder.arch) {
        flags.push("--cfg".to_owned());
        flags.push(format!("target_feature=\"{name}\""));
    }
    let declared: Vec<String> = crate::all_compute_features()
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect();
    flags.push("--check-cfg".to_owned());
    flags.push(format!(
        "cfg(target_feature, values({}))",
        declared.join(", ")
    ));
    if builder.fast_math {
        let libdevice = find_libdevice().ok_or(BuildError::LibdeviceNotFound)?;
        flags.push("--cfg".to_owned());
        flags.push("cuda_std_fast_math".to_owned());
        flags.push(format!("-Clink-arg={}", libdevice.display()));
    }
    // Cargo strips debug information from a profile without it (`-Cstrip=debuginfo`, so
    // `llvm-bitcode-linker` runs `opt --strip-debug`): asking for it keeps it (these flags
    // come after the profile's).
    if builder.wants_line_tables() {
        flags.push("-Cdebuginfo=line-tables-only".to_owned());
        flags.push("-Cstrip=none".to_owned());
    } else if let Some(on) = builder.debug_info {
        flags.push(format!("-Cdebuginfo={}", if on { 2 } else { 0 }));
        if on {
            flags.push("-Cstrip=none".to_owned());
        }
    }
    for cfg in &builder.cfgs {
        flags.push("--cfg".to_owned());
        flags.push(cfg.clone());
    }
    Ok(flags)
}

/// The `cargo rustc` command that compiles `krate` to PTX in `target_dir`, with `rustc` as
/// the compiler, [`rustflags`], and an environment from which the outer cargo's settings
/// are removed ([`SCRUBBED_ENV`], every `CARGO_TARGET_*` and `CARGO_PROFILE_*`), then
/// `extra_env` set (watch mode's, which may replace `RUSTC`).
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
    extra_env: &[(&str, std::ffi::OsString)],
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
        .envs(
            (builder.wants_line_tables() || builder.debug_info == Some(true))
                .then_some((crate::link::KEEP_LINES_ENV, "1")),
        )
        .envs(extra_env.iter().map(|(k, v)| (k, v)))
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
    let mut diagnostics = Diagnostics::new(emit);
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        let Ok(msg) = serde_json::from_str::<CargoMessage>(&line) else {
            continue;
        };
        if msg.reason != "compiler-message" {
            continue;
        }
        if let Some(diag) = msg.message {
            diagnostics.add(&diag);
        }
    }
    let status = child
        .wait()
        .map_err(|e| BuildError::CargoNotStarted(cargo, e))?;
    let stderr_text = stderr_thread.join().unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    Err(diagnostics.into_error(crate_name, &stderr_text))
}

/// The compiler's diagnostics of one build, as they arrive: errors kept, each distinct
/// warning forwarded as `cargo::warning=` lines when `emit`.
pub(crate) struct Diagnostics {
    emit: bool,
    errors: Vec<String>,
    seen_warnings: std::collections::HashSet<String>,
}

impl Diagnostics {
    pub(crate) fn new(emit: bool) -> Self {
        Self {
            emit,
            errors: Vec::new(),
            seen_warnings: std::collections::HashSet::new(),
        }
    }

    /// Takes one diagnostic.
    pub(crate) fn add(&mut self, diag: &Diagnostic) {
        let rendered = strip_ansi(diag.rendered.as_deref().unwrap_or(&diag.message));
        match diag.level.as_str() {
            "error" | "error: internal compiler error" => {
                self.errors.push(explained(diag, rendered));
            }
            // Our own `+ptxXY` flag is reported as unstable on every crate: expected.
            "warning"
                if diag
                    .message
                    .starts_with("unstable feature specified for `-Ctarget-feature`") => {}
            "warning" if self.emit && self.seen_warnings.insert(rendered.clone()) => {
                for l in rendered.lines().filter(|l| !l.trim().is_empty()) {
                    println!("cargo::warning=[kernels] {l}");
                }
            }
            _ => {}
        }
    }

    /// The failed build's error: the compiler's rendered errors, or `output` (what the
    /// failing process printed) when there were none.
    pub(crate) fn into_error(self, crate_name: &str, output: &str) -> BuildError {
        BuildError::Compile {
            crate_name: crate_name.to_owned(),
            messages: if self.errors.is_empty() {
                output.to_owned()
            } else {
                self.errors.join("\n")
            },
            module: None,
        }
    }
}

/// What [`explained`] adds to rustc's E0599 on a float method (`x.exp()`, `f32::sin(x)`):
/// rustc's own hint there (import `compiler_builtins`' `Float` trait) is wrong for kernels.
pub(crate) const FLOAT_METHOD_NOTE: &str = "std's float functions (`x.exp()`, `x.sin()`, \
    `x.powf(y)`, ...) are not on the GPU: use `cuda_std::math` (C names: `math::expf(x)` for \
    an `f32`, `math::exp(x)` for an `f64`), which gives the same bits on the CPU";

/// `rendered` (the diagnostic `diag` as rustc printed it) with one more line where rustc's
/// message misleads in a kernel: for E0599 on an `f32`/`f64` method or associated function,
/// a `= note:` line with [`FLOAT_METHOD_NOTE`], indented as rustc's own `= help:` lines.
fn explained(diag: &Diagnostic, rendered: String) -> String {
    let code = diag.code.as_ref().map(|c| c.code.as_str());
    let on_float = [
        "`f32`",
        "`f64`",
        "`{float}`",
        "`&f32`",
        "`&f64`",
        "`&mut f32`",
        "`&mut f64`",
    ]
    .iter()
    .any(|t| {
        diag.message
            .ends_with(&format!("found for type {t} in the current scope"))
            || diag
                .message
                .ends_with(&format!("found for reference {t} in the current scope"))
    });
    if code != Some("E0599") || !on_float {
        return rendered;
    }
    // rustc's gutter: the spaces before the `|` of its source lines (wider for longer line
    // numbers).
    let gutter = rendered
        .lines()
        .find_map(|l| {
            let trimmed = l.trim_start_matches(' ');
            (trimmed.starts_with('|') && trimmed.len() < l.len())
                .then(|| &l[..l.len() - trimmed.len()])
        })
        .unwrap_or(" ");
    let mut out = rendered.trim_end().to_owned();
    out.push_str(&format!("\n{gutter}= note: {FLOAT_METHOD_NOTE}\n"));
    out
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

/// A compiler diagnostic, as rustc's JSON carries it (also inside cargo's messages).
#[derive(serde::Deserialize)]
pub(crate) struct Diagnostic {
    level: String,
    message: String,
    code: Option<DiagnosticCode>,
    rendered: Option<String>,
}

#[derive(serde::Deserialize)]
struct DiagnosticCode {
    code: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Debug information and line tables survive cargo's stripping of a profile without
    /// them (`-Cstrip=none` after the profile's `-Cstrip=debuginfo`).
    #[test]
    fn line_tables_and_debug_info_are_not_stripped() {
        let flags = |b: CudaBuilder| rustflags(&b).unwrap();
        let lines = flags(CudaBuilder::new("kernels").line_tables(true));
        assert!(
            lines.contains(&"-Cdebuginfo=line-tables-only".to_owned()),
            "{lines:?}"
        );
        assert!(lines.contains(&"-Cstrip=none".to_owned()), "{lines:?}");
        let debug = flags(CudaBuilder::new("kernels").debug_info(true));
        assert!(debug.contains(&"-Cdebuginfo=2".to_owned()), "{debug:?}");
        assert!(debug.contains(&"-Cstrip=none".to_owned()), "{debug:?}");
        let off = flags(CudaBuilder::new("kernels").debug_info(false));
        assert!(!off.iter().any(|f| f.starts_with("-Cstrip")), "{off:?}");
    }

    /// `arch(..)` raises the PTX ISA to what the target needs (LLVM aborts on sm_90 with PTX
    /// 7.0) and never lowers an explicit newer one; the `compute_NN` cfgs follow the target.
    #[test]
    fn arch_raises_the_ptx_isa_and_sets_the_compute_cfgs() {
        let flags = |b: CudaBuilder| rustflags(&b).unwrap();
        let sm90 = flags(CudaBuilder::new("k").arch(crate::NvvmArch::Compute90));
        assert!(sm90.contains(&"-Ctarget-cpu=sm_90".to_owned()), "{sm90:?}");
        assert!(
            sm90.contains(&"-Ctarget-feature=+ptx78".to_owned()),
            "{sm90:?}"
        );
        let newer = flags(
            CudaBuilder::new("k")
                .arch(crate::NvvmArch::Compute90)
                .ptx_isa(8, 3),
        );
        assert!(
            newer.contains(&"-Ctarget-feature=+ptx83".to_owned()),
            "{newer:?}"
        );
        let base = flags(CudaBuilder::new("k"));
        assert!(
            base.contains(&"-Ctarget-feature=+ptx70".to_owned()),
            "{base:?}"
        );

        // `--cfg` is followed by its value; collect the compute names set.
        let cfgs = |f: &[String]| -> Vec<String> {
            f.windows(2)
                .filter(|w| w[0] == "--cfg")
                .filter_map(|w| w[1].strip_prefix("target_feature="))
                .map(|v| v.trim_matches('"').to_owned())
                .collect()
        };
        let set = cfgs(&sm90);
        assert!(set.contains(&"compute_70".to_owned()) && set.contains(&"compute_90".to_owned()));
        assert!(
            !set.iter().any(|n| n == "compute_100" || n.ends_with('a')),
            "{set:?}"
        );
        assert!(sm90.contains(&"-Aexplicit_builtin_cfgs_in_flags".to_owned()));
        let i = sm90.iter().position(|f| f == "--check-cfg").unwrap();
        assert!(sm90[i + 1].contains("\"compute_121a\""), "{}", sm90[i + 1]);
        assert!(!cfgs(&base).contains(&"compute_72".to_owned()));
    }

    #[test]
    fn ansi_escapes_are_removed() {
        assert_eq!(
            strip_ansi("\u{1b}[0m\u{1b}[1m\u{1b}[33mwarning\u{1b}[0m: x"),
            "warning: x"
        );
    }

    /// rustc 1.95's E0599 for `(a * x).exp()` in a kernel built for nvptx64, as cargo's
    /// JSON carries it (the rendered text without colours).
    const E0599_EXP: &str = r#"{"reason":"compiler-message","message":{"level":"error","message":"no method named `exp` found for type `f32` in the current scope","code":{"code":"E0599","explanation":"..."},"rendered":"error[E0599]: no method named `exp` found for type `f32` in the current scope\n  --> kernels/src/lib.rs:10:13\n   |\n10 |     (a * x).exp() + y\n   |             ^^^\n   |\n  ::: /rust/library/compiler-builtins/compiler-builtins/src/float/traits.rs:79:8\n   |\n79 |     fn exp(self) -> Self::ExpInt;\n   |        --- the method is available for `f32` here\n   |\n   = help: items from traits can only be used if the trait is in scope\nhelp: trait `Float` which provides `exp` is implemented but not in scope; perhaps you want to import it\n   |\n 5 + use compiler_builtins::float::traits::Float;\n   |\n\n"}}"#;

    fn diagnostic(json: &str) -> Diagnostic {
        serde_json::from_str::<CargoMessage>(json)
            .unwrap()
            .message
            .unwrap()
    }

    #[test]
    fn e0599_on_a_float_method_gets_one_line_naming_cuda_std_math() {
        let diag = diagnostic(E0599_EXP);
        let rendered = diag.rendered.clone().unwrap();
        let out = explained(&diag, rendered.clone());
        // rustc's text, then exactly one line, in its gutter.
        assert_eq!(
            out,
            format!("{}\n   = note: {FLOAT_METHOD_NOTE}\n", rendered.trim_end())
        );
        assert!(FLOAT_METHOD_NOTE.contains("cuda_std::math"));
        assert_eq!(out.matches(FLOAT_METHOD_NOTE).count(), 1);

        // The associated-function form, and `f64`.
        let assoc = E0599_EXP.replace(
            "no method named `exp` found for type `f32`",
            "no function or associated item named `exp` found for type `f64`",
        );
        let diag = diagnostic(&assoc);
        assert!(explained(&diag, "x".into()).contains(FLOAT_METHOD_NOTE));

        // Other E0599s and other errors are left as they are.
        for (from, to) in [
            ("found for type `f32`", "found for struct `Foo`"),
            ("\"code\":\"E0599\"", "\"code\":\"E0425\""),
        ] {
            let diag = diagnostic(&E0599_EXP.replace(from, to));
            assert_eq!(explained(&diag, "text\n".into()), "text\n", "{to}");
        }
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
