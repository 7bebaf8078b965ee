//! Watch mode's short cut past the nested cargo: after a cargo build, an edit that touches
//! only the kernels crate's own sources is rebuilt by running the crate's rustc command
//! again, as cargo ran it (working directory, arguments, environment), without cargo.
//!
//! Cargo's share of a one-line edit of `07-hot-reload`'s kernels crate was about 0.1 s on
//! the 2-core machine (0.35–0.44 s through cargo, 0.25–0.31 s for the same rustc command
//! alone, load 3.3): starting, asking rustc for the target's specification twice
//! (`-Zbuild-std`), resolving `core`'s workspace and checking every unit's fingerprint,
//! before it runs the one rustc that matters. Everything else is unchanged: that rustc
//! call is the same, with the same incremental directory and the same linker.
//!
//! How the command is learnt: in watch mode the nested cargo's `RUSTC` is a script the
//! builder writes into the target directory ([`recording_env`]), which records the kernels
//! crate's invocation into a file and then runs the real rustc. (`RUSTC`'s path is in
//! neither cargo's fingerprints nor its metadata hashes, so nothing is rebuilt for it.)
//!
//! When the recording is used ([`Session::replay`]): after a successful cargo build in the
//! same watch session, and only when every changed file is one of the crate's own sources
//! (rustc's dep-info for the crate: its modules and `include_str!`ed files). A changed
//! `Cargo.toml` or dependency source, or a failed cargo build, goes through cargo, which
//! then records again. Cargo does not know about the replayed builds, so its next run
//! recompiles the crate once (its sources are newer than its fingerprint): redundant, never
//! stale.

use crate::{BuildError, cargo_cmd};
use std::{
    collections::BTreeSet,
    ffi::{OsStr, OsString},
    path::{Path, PathBuf},
    process::Command,
};

/// The recording script's file name, in the kernels build's target directory.
const SCRIPT_NAME: &str = "ferrocuda-rustc";

/// The recording's file name, in the kernels build's target directory.
const RECORD_NAME: &str = "ferrocuda-rustc.record";

/// Variables of the recorded environment that are not replayed: the jobserver of the cargo
/// that ran it (its file descriptors are gone).
const NOT_REPLAYED: &[&str] = &["CARGO_MAKEFLAGS", "MAKEFLAGS", "MFLAGS"];

/// The script's text: it runs `$FERROCUDA_RUSTC` with its arguments, first writing to
/// `$FERROCUDA_RECORD`, when the arguments name the crate `$FERROCUDA_RECORD_CRATE`, the
/// working directory, the rustc, the argument count, the arguments and the environment, each
/// ended by a NUL byte.
const SCRIPT: &str = r#"#!/usr/bin/env bash
# Written by cuda_builder (crates/cuda_builder/src/replay.rs): runs rustc, recording the
# kernels crate's invocation for watch mode's rebuilds without cargo.
set -euo pipefail
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
  if [[ ${args[i]} == --crate-name ]]; then
    if [[ ${args[i + 1]} == "$FERROCUDA_RECORD_CRATE" ]]; then
      { printf '%s\0' "$PWD" "$FERROCUDA_RUSTC" "$#" "$@"; env -0; } >"$FERROCUDA_RECORD.tmp"
      mv "$FERROCUDA_RECORD.tmp" "$FERROCUDA_RECORD"
    fi
    break
  fi
done
exec "$FERROCUDA_RUSTC" "$@"
"#;

/// Writes the recording script into `target_dir` (rewritten only when its text changes),
/// removes the last recording (a crate that cargo finds fresh is not compiled, so not
/// recorded: an older recording may be another crate's of the same name) and returns the
/// environment that makes the nested cargo of crate `file_stem` record through the
/// script, with `rustc` as the compiler.
///
/// # Errors
/// [`BuildError::Io`] if the script cannot be written or the last recording removed.
pub(crate) fn recording_env(
    target_dir: &Path,
    rustc: &OsStr,
    file_stem: &str,
) -> Result<Vec<(&'static str, OsString)>, BuildError> {
    if cfg!(not(unix)) {
        // The script needs a Unix shell: every build goes through cargo.
        return Ok(Vec::new());
    }
    let path = target_dir.join(SCRIPT_NAME);
    let io = |e: std::io::Error| BuildError::Io(path.clone(), e);
    std::fs::create_dir_all(target_dir).map_err(|e| BuildError::Io(target_dir.to_owned(), e))?;
    if std::fs::read_to_string(&path).ok().as_deref() != Some(SCRIPT) {
        std::fs::write(&path, SCRIPT).map_err(io)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
    }
    let record = target_dir.join(RECORD_NAME);
    match std::fs::remove_file(&record) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(BuildError::Io(record, e));
        }
        _ => {}
    }
    Ok(vec![
        ("RUSTC", path.into_os_string()),
        ("FERROCUDA_RUSTC", rustc.to_owned()),
        ("FERROCUDA_RECORD", record.into_os_string()),
        ("FERROCUDA_RECORD_CRATE", file_stem.into()),
    ])
}

/// One recorded rustc invocation, as the script wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Invocation {
    cwd: PathBuf,
    rustc: OsString,
    args: Vec<String>,
    env: Vec<(OsString, OsString)>,
}

impl Invocation {
    /// Parses a recording (see [`SCRIPT`]); `None` if it is not one, or names something
    /// that is not UTF-8 (then cargo does every build).
    fn parse(bytes: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut fields = text.strip_suffix('\0')?.split('\0');
        let cwd = PathBuf::from(fields.next()?);
        let rustc = OsString::from(fields.next()?);
        let count: usize = fields.next()?.parse().ok()?;
        let args: Vec<String> = fields.by_ref().take(count).map(str::to_owned).collect();
        if args.len() != count {
            return None;
        }
        let env = fields
            .filter_map(|entry| {
                let (key, value) = entry.split_once('=')?;
                Some((key.into(), value.into()))
            })
            .collect();
        Some(Self {
            cwd,
            rustc,
            args,
            env,
        })
    }

    /// The values of rustc option `name` (`--out-dir`, `-C`), in either of its forms:
    /// `name value` or `name=value` (and `-Cvalue` for single-letter options), in order.
    fn option_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.args.iter().enumerate().filter_map(move |(i, a)| {
            if a == name {
                return self.args.get(i + 1).map(String::as_str);
            }
            let rest = a.strip_prefix(name)?;
            if name.len() == 2 {
                Some(rest.strip_prefix('=').unwrap_or(rest))
            } else {
                rest.strip_prefix('=')
            }
        })
    }

    /// rustc's dep-info file for this invocation: `<out-dir>/<crate-name><extra-filename>.d`
    /// (the last of each option given, as for rustc).
    fn dep_info(&self) -> Option<PathBuf> {
        let out_dir = self.option_values("--out-dir").last()?;
        let name = self.option_values("--crate-name").last()?;
        let extra = self
            .option_values("-C")
            .filter_map(|c| c.strip_prefix("extra-filename="))
            .last()
            .unwrap_or_default();
        Some(self.cwd.join(out_dir).join(format!("{name}{extra}.d")))
    }

    /// The crate's own sources, canonical: what its dep-info lists (relative paths are
    /// relative to the working directory).
    fn own_sources(&self) -> BTreeSet<PathBuf> {
        let Some(dep_info) = self.dep_info() else {
            return BTreeSet::new();
        };
        crate::depinfo::listed(&dep_info)
            .into_iter()
            .filter_map(|p| self.cwd.join(p).canonicalize().ok())
            .collect()
    }
}

/// A recording with what it may rebuild.
#[derive(Debug)]
struct Recording {
    invocation: Invocation,
    /// The crate's own sources (canonical paths).
    own_sources: BTreeSet<PathBuf>,
    /// Every input of the last cargo build (the crate's and its dependencies').
    inputs: Vec<PathBuf>,
}

/// What the watcher keeps between its builds: the recording of the last cargo build, if it
/// succeeded, and the files changed since the last build.
#[derive(Debug, Default)]
pub(crate) struct Session {
    recording: Option<Recording>,
    changed: Vec<PathBuf>,
}

impl Session {
    /// Notes the files (canonical paths) that changed since the last build.
    pub(crate) fn changed(&mut self, changed: Vec<PathBuf>) {
        self.changed = changed;
    }

    /// Replays the recording ([`Recording::replay`]) if the changes allow it; `None` if
    /// they do not (the caller runs cargo). A replay that fails other than by a compile
    /// error forgets the recording, so the next build goes through cargo.
    pub(crate) fn replay(
        &mut self,
        sysroot: &Path,
        crate_name: &str,
        ptx_path: &Path,
        emit: bool,
    ) -> Option<Result<Vec<PathBuf>, BuildError>> {
        let result = self
            .replayable()?
            .replay(sysroot, crate_name, ptx_path, emit);
        if let Err(e) = &result
            && !matches!(e, BuildError::Compile { .. })
        {
            self.recording = None;
        }
        Some(result)
    }

    /// The recording, if the next build can replay it: there is one, and every changed
    /// file is one of the crate's own sources.
    fn replayable(&mut self) -> Option<&mut Recording> {
        let changed = &self.changed;
        self.recording
            .as_mut()
            .filter(|r| !changed.is_empty() && changed.iter().all(|c| r.own_sources.contains(c)))
    }

    /// After a cargo build in `target_dir`: keeps its recording if it succeeded, with
    /// `inputs` (the build's); forgets any recording if it failed (`None`).
    pub(crate) fn cargo_built(&mut self, target_dir: &Path, inputs: Option<&[PathBuf]>) {
        self.recording = None;
        let Some(inputs) = inputs else {
            return;
        };
        let Ok(bytes) = std::fs::read(target_dir.join(RECORD_NAME)) else {
            return;
        };
        let Some(invocation) = Invocation::parse(&bytes) else {
            return;
        };
        let own_sources = invocation.own_sources();
        if own_sources.is_empty() {
            return;
        }
        self.recording = Some(Recording {
            invocation,
            own_sources,
            inputs: inputs.to_vec(),
        });
    }
}

impl Recording {
    /// Runs the recorded rustc (the toolchain's own binary at `sysroot` instead of a
    /// rustup proxy on `PATH`), forwards its warnings when `emit`, puts the PTX at
    /// `ptx_path`, where cargo would have copied it, and returns the build's inputs.
    ///
    /// # Errors
    /// [`BuildError::RustcNotStarted`] if rustc cannot be run; [`BuildError::Compile`] with
    /// its messages if the crate does not compile; [`BuildError::PtxMissing`] or
    /// [`BuildError::Io`] if the PTX cannot be put in place.
    fn replay(
        &mut self,
        sysroot: &Path,
        crate_name: &str,
        ptx_path: &Path,
        emit: bool,
    ) -> Result<Vec<PathBuf>, BuildError> {
        let inv = &self.invocation;
        // A bare name is looked up on `PATH` (rustup's proxy, in practice, which costs a
        // process start); its sysroot's binary is the same compiler.
        let on_path = Path::new(&inv.rustc).components().nth(1).is_none();
        let own = sysroot.join("bin").join("rustc");
        let rustc = if on_path && own.is_file() {
            own.into_os_string()
        } else {
            inv.rustc.clone()
        };
        let output = Command::new(&rustc)
            .args(&inv.args)
            .current_dir(&inv.cwd)
            .env_clear()
            .envs(
                inv.env
                    .iter()
                    .filter(|(k, _)| !NOT_REPLAYED.iter().any(|n| k == n))
                    .map(|(k, v)| (k, v)),
            )
            .output()
            .map_err(|e| BuildError::RustcNotStarted(rustc.clone().into(), e))?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        let mut diagnostics = cargo_cmd::Diagnostics::new(emit);
        let mut ptx = None;
        for line in stderr.lines() {
            let Ok(message) = serde_json::from_str::<RustcMessage>(line) else {
                continue;
            };
            match message {
                RustcMessage::Diagnostic(diag) => diagnostics.add(&diag),
                RustcMessage::Artifact { artifact, emit } if emit == "link" => {
                    ptx = Some(artifact);
                }
                RustcMessage::Artifact { .. } => {}
            }
        }
        if !output.status.success() {
            return Err(diagnostics.into_error(crate_name, &stderr));
        }
        let built = ptx.ok_or_else(|| BuildError::PtxMissing(ptx_path.to_owned()))?;
        if built != ptx_path {
            // As cargo does: a hard link (a copy where that fails).
            let io = |e| BuildError::Io(ptx_path.to_owned(), e);
            match std::fs::remove_file(ptx_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
            if std::fs::hard_link(&built, ptx_path).is_err() {
                std::fs::copy(&built, ptx_path).map_err(io)?;
            }
        }
        // A new module file is an input from now on.
        self.own_sources = inv.own_sources();
        let mut inputs = self.inputs.clone();
        for source in &self.own_sources {
            if !inputs.contains(source) {
                inputs.push(source.clone());
            }
        }
        Ok(inputs)
    }
}

/// A line of rustc's `--error-format=json` output (with `--json=artifacts`).
#[derive(serde::Deserialize)]
#[serde(tag = "$message_type", rename_all = "lowercase")]
enum RustcMessage {
    Diagnostic(cargo_cmd::Diagnostic),
    Artifact { artifact: PathBuf, emit: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording(fields: &[&str]) -> Vec<u8> {
        fields
            .iter()
            .flat_map(|f| [f.as_bytes(), b"\0"])
            .flatten()
            .copied()
            .collect()
    }

    #[test]
    fn a_recording_parses_into_directory_rustc_arguments_and_environment() {
        let bytes = recording(&[
            "/k",
            "rustc",
            "6",
            "--crate-name",
            "hot_kernels",
            "--out-dir",
            "/t/deps",
            "-C",
            "extra-filename=-abc",
            "CARGO_PKG_NAME=hot-kernels",
            "EMPTY=",
            "WITH=EQUALS=SIGN",
        ]);
        let inv = Invocation::parse(&bytes).expect("a recording");
        assert_eq!(inv.cwd, Path::new("/k"));
        assert_eq!(inv.rustc, "rustc");
        assert_eq!(inv.args.len(), 6);
        assert_eq!(
            inv.env,
            [
                ("CARGO_PKG_NAME".into(), "hot-kernels".into()),
                ("EMPTY".into(), "".into()),
                ("WITH".into(), "EQUALS=SIGN".into())
            ]
        );
        assert_eq!(
            inv.dep_info(),
            Some(PathBuf::from("/t/deps/hot_kernels-abc.d"))
        );

        // The joined forms, relative to the working directory, and no extra file name.
        let bytes = recording(&["/k", "rustc", "2", "--crate-name=k", "--out-dir=deps"]);
        let inv = Invocation::parse(&bytes).unwrap();
        assert_eq!(inv.dep_info(), Some(PathBuf::from("/k/deps/k.d")));

        // Truncated: fewer arguments than counted, or no final NUL.
        assert!(Invocation::parse(&recording(&["/k", "rustc", "3", "a", "b"])).is_none());
        assert!(Invocation::parse(b"/k\0rustc\x000").is_none());
    }

    #[test]
    fn only_edits_of_the_crates_own_sources_replay() {
        let invocation = Invocation::parse(&recording(&["/k", "rustc", "0"])).unwrap();
        let mut session = Session::default();
        session.changed(vec![PathBuf::from("/k/src/lib.rs")]);
        assert!(session.replayable().is_none(), "no recording yet");
        session.recording = Some(Recording {
            invocation,
            own_sources: [PathBuf::from("/k/src/lib.rs"), PathBuf::from("/k/src/a.rs")].into(),
            inputs: Vec::new(),
        });
        assert!(session.replayable().is_some());
        session.changed(vec![
            PathBuf::from("/k/src/a.rs"),
            PathBuf::from("/k/Cargo.toml"),
        ]);
        assert!(session.replayable().is_none(), "the manifest changed");
        session.changed(vec![PathBuf::from("/std/src/lib.rs")]);
        assert!(session.replayable().is_none(), "a dependency changed");
        // A failed cargo build forgets the recording.
        session.changed(vec![PathBuf::from("/k/src/lib.rs")]);
        session.cargo_built(Path::new("/nonexistent"), None);
        assert!(session.replayable().is_none());
    }

    #[test]
    #[cfg(unix)]
    fn the_script_records_only_the_kernels_crate() {
        let dir = tempfile::tempdir().unwrap();
        let env = recording_env(dir.path(), OsStr::new("echo"), "hot_kernels").unwrap();
        let run = |args: &[&str]| {
            let out = Command::new(&env[0].1)
                .args(args)
                .envs(env.iter().map(|(k, v)| (k, v)))
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let record = dir.path().join(RECORD_NAME);
        assert_eq!(run(&["-vV"]), "-vV\n");
        assert_eq!(
            run(&["--crate-name", "core", "x y"]),
            "--crate-name core x y\n"
        );
        assert!(!record.exists());
        assert_eq!(
            run(&["--crate-name", "hot_kernels", "a b"]),
            "--crate-name hot_kernels a b\n"
        );
        let inv = Invocation::parse(&std::fs::read(&record).unwrap()).unwrap();
        assert_eq!(inv.cwd, dir.path().canonicalize().unwrap());
        assert_eq!(inv.rustc, "echo");
        assert_eq!(inv.args, ["--crate-name", "hot_kernels", "a b"]);
        assert!(
            inv.env
                .iter()
                .any(|(k, v)| k == "FERROCUDA_RECORD_CRATE" && v == "hot_kernels")
        );
    }
}
