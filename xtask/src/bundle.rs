//! `cargo xtask bundle`: everything a GPU machine without Rust needs to run the GPU tests and
//! demonstrations: the release `ferrocuda` binary, the release test binaries, the PTX, and
//! `run.sh`, which runs them all and prints a summary; for the profilers, `ferrocuda` and
//! the planted-bug test built with line tables (`lines/`), the kernels' sources (`src/`)
//! and `profile.sh` (`cargo xtask profile`'s steps).

use crate::{build, cargo, project_root};
use anyhow::{Context, Result, bail};
use std::{
    fs,
    io::BufRead,
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// Test targets that cannot run from the bundle (they need no GPU; CI runs them): `cli` finds
/// the `ferrocuda` binary through a compile-time path on the build machine; `ui` (trybuild)
/// runs cargo; `architecture` and `book` read the source tree, which the bundle does not
/// carry.
const SKIPPED_TEST_TARGETS: &[&str] = &["cli", "ui", "architecture", "book"];

/// The run script copied into the bundle.
const RUN_SH: &str = include_str!("run.sh");

#[derive(clap::Args)]
pub struct Args {
    /// Output folder (emptied first). Git ignores `bundle/`.
    #[arg(long, default_value = "bundle")]
    out: PathBuf,
}

pub fn exec(args: &Args) -> Result<()> {
    let out = project_root().join(&args.out);
    if out.exists() {
        fs::remove_dir_all(&out).with_context(|| format!("emptying {}", out.display()))?;
    }
    fs::create_dir_all(out.join("tests"))?;

    let manifest = build::run_build()?;
    let tests = test_executables()?;
    copy_stripped(
        &project_root().join("target/release/ferrocuda"),
        &out.join("ferrocuda"),
    )?;
    for (name, exe) in &tests {
        copy_stripped(exe, &out.join("tests").join(name))?;
    }
    fs::create_dir_all(out.join("examples"))?;
    for (name, exe) in example_executables()? {
        copy_stripped(&exe, &out.join("examples").join(name))?;
    }
    fs::copy(&manifest.ptx_file, out.join("kernels.ptx")).context("copying the PTX")?;
    // Hot reloading: the GPU machine has no cargo, so the edits are made and rebuilt here
    // (printing the edit-to-PTX latency of this machine) and their PTX shipped; run.sh
    // copies them over a watched file there.
    crate::run(
        Command::new(out.join("examples/07-hot-reload"))
            .args(["--edits", "5", "--save-ptx"])
            .arg(out.join("hot-reload")),
    )
    .context("07-hot-reload (making the hot-reload PTX)")?;
    // The CUDA C twins of the vector kernels (`ferrocuda bench` embeds them; shipped for
    // reference and for rebuilding by hand with nvcc).
    let cuda_src = project_root().join("bench/cuda");
    fs::create_dir_all(out.join("bench/cuda"))?;
    for entry in
        fs::read_dir(&cuda_src).with_context(|| format!("reading {}", cuda_src.display()))?
    {
        let path = entry?.path();
        if let Some(name) = path.file_name() {
            fs::copy(&path, out.join("bench/cuda").join(name))
                .with_context(|| format!("copying {}", path.display()))?;
        }
    }
    // The attention peers' script (torch SDPA, FlashAttention-3), run by run.sh before
    // `ferrocuda bench --attention` reads its JSON.
    fs::create_dir_all(out.join("bench/python"))?;
    let peers = project_root().join("bench/python/attention_peers.py");
    fs::copy(&peers, out.join("bench/python/attention_peers.py"))
        .with_context(|| format!("copying {}", peers.display()))?;
    // Source lines for the profilers: `ferrocuda` and the planted-bug test again, their
    // kernels with line tables (`lines/`), `profile.sh`, and the kernels' sources for Nsight
    // Compute's source page (`src/`, searched by file name: the build's paths are this
    // machine's).
    let lines = crate::profile::build_line_tables()?;
    fs::create_dir_all(out.join("lines"))?;
    copy_stripped(&lines.ferrocuda, &out.join("lines/ferrocuda"))?;
    copy_stripped(&lines.sanitizer_test, &out.join("lines/tests-sanitizer"))?;
    for dir in [
        "kernels/src",
        "common/src",
        "crates/cuda_std/src",
        "tests/kernels/src",
    ] {
        copy_tree(&project_root().join(dir), &out.join("src").join(dir))?;
    }
    let script = out.join("run.sh");
    fs::write(&script, RUN_SH)?;
    make_executable(&script)?;
    let profile = out.join("profile.sh");
    fs::write(&profile, crate::profile::PROFILE_SH)?;
    make_executable(&profile)?;

    let size: u64 = walk(&out)?
        .iter()
        .map(|p| p.metadata().map_or(0, |m| m.len()))
        .sum();
    println!(
        "bundle: {} ({} test binaries, {:.1} MiB)",
        out.display(),
        tests.len(),
        size as f64 / (1 << 20) as f64
    );
    println!(
        "run it on a GPU machine: {}/run.sh (logs and images go to $OUT or ./out)",
        args.out.display()
    );
    Ok(())
}

/// The example programs, built in release mode: the host crate's numbered examples, every
/// out-of-workspace project under `examples/`, and a project made by `cargo xtask new` (so
/// the template is built and run as a user would).
fn example_executables() -> Result<Vec<(String, PathBuf)>> {
    let root = project_root();
    let mut found = Vec::new();
    for entry in fs::read_dir(root.join("host/examples"))? {
        let path = entry?.path();
        // Examples are `NAME.rs` files (or folders with a `main.rs`); other folders hold
        // their data (e.g. `hot-reload/lib.rs`, the kernel 07 edits).
        let is_example = path.extension().is_some_and(|e| e == "rs")
            || (path.is_dir() && path.join("main.rs").is_file());
        let Some(name) = path
            .file_stem()
            .and_then(|n| n.to_str())
            .filter(|_| is_example)
        else {
            continue;
        };
        crate::run(cargo().args(["build", "--release", "-p", "host", "--example", name]))?;
        found.push((
            name.to_owned(),
            root.join("target/release/examples").join(name),
        ));
    }
    let generated = root.join("target/xtask-new");
    if generated.exists() {
        fs::remove_dir_all(&generated)?;
    }
    crate::new::exec(&crate::new::Args {
        path: generated.join("new-project"),
        registry_version: None,
    })?;
    let mut projects = vec![generated.join("new-project")];
    for entry in fs::read_dir(root.join("examples"))? {
        let path = entry?.path();
        if path.join("Cargo.toml").is_file() {
            projects.push(path);
        }
    }
    // Each project is a workspace of its own; one target folder lets them share the
    // compiled crates (cust, cudarc, ...) instead of building them once per project.
    let target = root.join("target/examples");
    for project in projects {
        let name = project
            .file_name()
            .and_then(|n| n.to_str())
            .context("example folder name")?
            .to_owned();
        crate::run(
            cargo()
                .env("CARGO_TARGET_DIR", &target)
                .args(["build", "--release", "--manifest-path"])
                .arg(project.join("Cargo.toml")),
        )?;
        found.push((name.clone(), target.join("release").join(&name)));
    }
    Ok(found)
}

/// `(bundle name, path)` of every release test executable of the workspace, built with
/// `cargo test --release --no-run`.
fn test_executables() -> Result<Vec<(String, PathBuf)>> {
    let mut child = cargo()
        .args([
            "test",
            "--release",
            "--workspace",
            "--no-run",
            "--message-format=json",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .context("starting cargo test --no-run")?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut found = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let msg: serde_json::Value = match serde_json::from_str(&line?) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != true {
            continue;
        }
        let Some(exe) = msg["executable"].as_str() else {
            continue;
        };
        let target = msg["target"]["name"].as_str().unwrap_or("unknown");
        let kind = msg["target"]["kind"][0].as_str().unwrap_or("");
        // Proc-macro test binaries link the toolchain's libstd dynamically: they cannot run
        // without Rust installed (and test nothing GPU-related).
        if SKIPPED_TEST_TARGETS.contains(&target) || kind == "proc-macro" {
            continue;
        }
        // package_id looks like `path+file:///.../host#0.1.0`: take the package name.
        let package = msg["package_id"]
            .as_str()
            .and_then(|id| id.rsplit('/').next())
            .and_then(|tail| tail.split(['#', '@']).next())
            .unwrap_or("pkg");
        let name = if kind == "test" {
            format!("{package}-{target}")
        } else {
            format!("{package}-unit")
        };
        found.push((name, PathBuf::from(exe)));
    }
    if !child.wait()?.success() {
        bail!("cargo test --release --no-run failed");
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    Ok(found)
}

fn copy_stripped(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to).with_context(|| format!("copying {}", from.display()))?;
    // Debug info would blow the size limit of a device call; symbols are not needed there.
    if let Err(e) = Command::new("strip").arg(to).status() {
        eprintln!(
            "warning: cannot run strip ({e}); {} stays unstripped",
            to.display()
        );
    }
    Ok(())
}

/// Copies the files under `from` to the same relative paths under `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for file in walk(from)? {
        let dest = to.join(file.strip_prefix(from)?);
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(&file, &dest).with_context(|| format!("copying {}", file.display()))?;
    }
    Ok(())
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = fs::metadata(path)?.permissions();
    perms.set_mode(0o755);
    fs::set_permissions(path, perms)?;
    Ok(())
}

fn walk(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(walk(&path)?);
        } else {
            files.push(path);
        }
    }
    Ok(files)
}
