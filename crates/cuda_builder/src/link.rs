//! The kernels' linker: rustc's `llvm-bitcode-linker`, fed only the library code the crate
//! needs.
//!
//! rustc links an nvptx64 `cdylib` with `llvm-bitcode-linker`, which runs `llvm-link` over
//! the crate's objects and *every* library it depends on (`core` alone is a 38 MB rlib),
//! then `opt` (internalize, then drop what is unused) and `llc`. Measured on the 2-core
//! machine for `07-hot-reload`'s one-kernel crate (debug profile, loaded machine): the full
//! `llvm-link` took 0.41–0.55 s and `opt` 0.22 s of a 1.6–2.0 s edit-to-PTX time; linking
//! only the needed symbols took 0.16–0.20 s and `opt` under 0.01 s, with the same
//! functions in the PTX.
//!
//! So the builder names its own linker, `-Clinker=<target dir>/ferrocuda-link`, a script it
//! writes there ([`script`]) that
//! 1. links the crate's own objects (all its code generation units) in full;
//! 2. links from the libraries (rlibs, archives, bitcode such as libdevice) only the
//!    symbols that step 1 needs (`llvm-link --only-needed`, transitively);
//! 3. checks with `llvm-nm` that every exported symbol (the kernels) is defined, and
//!    otherwise links as rustc would (a kernel defined in a dependency is reached only by
//!    its export, which step 2 does not see);
//! 4. hands the one linked module to `llvm-bitcode-linker` with rustc's own arguments, so
//!    `opt`'s passes, the optimisation level, debug information and `llc`'s target are
//!    exactly rustc's.
//!
//! `CudaBuilder::link_only_needed(false)` turns this off (rustc's linker, unchanged).
//!
//! In watch mode ([`REUSE_ENV`] set) step 2 is cheaper after the first build: the script
//! keeps what it linked (`reuse.bc`: the crate and the library code it needed), and while no
//! library is newer than that, links the next edit's crate against it alone (about 7 ms
//! instead of 0.18 s of reading `core`). The result is used only when every exported symbol
//! is defined and every symbol left undefined was left undefined by the full link too (such
//! as `vprintf`); an edit that needs library code not linked before takes the full step 2,
//! which refreshes `reuse.bc`. The old crate's own definitions in `reuse.bc` are never
//! taken: the new crate defines every symbol of its own that it refers to, and
//! `--only-needed` takes only what is still undefined. Builds outside watch mode never
//! read or write these files.

use crate::BuildError;
use std::path::{Path, PathBuf};

/// The script's file name, in the kernels build's target directory.
const SCRIPT_NAME: &str = "ferrocuda-link";

/// The variable that turns on the script's reuse of its last library link (watch mode
/// only; see the module docs).
pub(crate) const REUSE_ENV: &str = "FERROCUDA_LINK_REUSE";

/// The variable that makes the script keep debug information ([`crate::CudaBuilder::line_tables`]):
/// `llvm-bitcode-linker` always strips it for nvptx64 (`opt --strip-debug`, whatever its
/// `--debug` says), so with this set the script runs that linker's own `opt` and `llc` steps
/// itself, without the stripping: passes `default<O…>,internalize,globaldce` with the
/// exported symbols public, then `llc` for the target CPU and features.
pub(crate) const KEEP_LINES_ENV: &str = "FERROCUDA_LINK_KEEP_LINES";

/// The LLVM tools of the toolchain at `sysroot`: `[llvm-link, llvm-nm, llvm-bitcode-linker,
/// opt, llc, llvm-dis]`, from `lib/rustlib/<host>/bin/` (the linker possibly in
/// `self-contained/`).
fn tools(sysroot: &Path) -> Option<[PathBuf; 6]> {
    let rustlib = sysroot.join("lib").join("rustlib");
    std::fs::read_dir(&rustlib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .find_map(|bin| {
            let link = bin.join("llvm-link");
            let nm = bin.join("llvm-nm");
            let linker = [
                bin.join("self-contained").join("llvm-bitcode-linker"),
                bin.join("llvm-bitcode-linker"),
            ]
            .into_iter()
            .find(|p| p.is_file())?;
            let (opt, llc, dis) = (bin.join("opt"), bin.join("llc"), bin.join("llvm-dis"));
            [&link, &nm, &opt, &llc, &dis]
                .iter()
                .all(|p| p.is_file())
                .then_some([link, nm, linker, opt, llc, dis])
        })
}

/// Quotes `path` for a POSIX shell: inside single quotes, a `'` becomes `'\''`.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', r"'\''"))
}

/// The script's text for the tools at `llvm_link`, `llvm_nm`, `linker`, `opt` and `llc`.
fn text([llvm_link, llvm_nm, linker, opt, llc, llvm_dis]: &[PathBuf; 6]) -> String {
    format!(
        r#"#!/usr/bin/env bash
# Written by cuda_builder (crates/cuda_builder/src/link.rs): links an nvptx64 kernels crate
# as rustc's llvm-bitcode-linker does, taking from the libraries only what the crate needs.
set -euo pipefail
LLVM_LINK={llvm_link}
LLVM_NM={llvm_nm}
LINKER={linker}
OPT={opt}
LLC={llc}
LLVM_DIS={llvm_dis}
objects=(); libraries=(); rest=(); exports=(); out=; level=0; cpu=; features=
args=("$@")
while (($#)); do
  case "$1" in
    -o|--output) out=$2; rest+=("$1" "$2"); shift 2 ;;
    --export-symbol) exports+=("$2"); rest+=("$1" "$2"); shift 2 ;;
    -O) level=$2; rest+=("$1" "$2"); shift 2 ;;
    --target-cpu) cpu=$2; rest+=("$1" "$2"); shift 2 ;;
    --target-feature) features=$2; rest+=("$1" "$2"); shift 2 ;;
    --target-cpu=*) cpu=${{1#*=}}; rest+=("$1"); shift ;;
    --target-feature=*) features=${{1#*=}}; rest+=("$1"); shift ;;
    -O?) level=${{1#-O}}; rest+=("$1"); shift ;;
    -L|--target) rest+=("$1" "$2"); shift 2 ;;
    -*) rest+=("$1"); shift ;;
    *.rlib|*.a|*.bc) libraries+=("$1"); shift ;;
    *) objects+=("$1"); shift ;;
  esac
done
if [[ -z $out || ${{#objects[@]}} -eq 0 ]]; then exec "$LINKER" "${{args[@]}}"; fi
work="$out.only-needed"
mkdir -p "$work"
# Hands the linked module $1 to llvm-bitcode-linker; with line tables ({KEEP_LINES_ENV}=1),
# runs that linker's opt and llc steps here instead, keeping the line tables it strips, as
# `.file`/`.loc` directives only (the emission kind clang's -gline-directives-only gives
# NVPTX: the DWARF sections of rustc's line-tables-only make ptxas fail).
finish() {{
  if [[ -z ${{{KEEP_LINES_ENV}:-}} ]]; then exec "$LINKER" "${{rest[@]}}" "$1"; fi
  printf '%s\n' "${{exports[@]}}" >"$work/exports.txt"
  "$OPT" "$1" -o "$work/optimized.bc" --internalize-public-api-file="$work/exports.txt" \
    --passes="default<O$level>,internalize,globaldce"
  "$LLVM_DIS" "$work/optimized.bc" -o - \
    | sed 's/emissionKind: \(LineTablesOnly\|FullDebug\)/emissionKind: DebugDirectivesOnly/' \
    >"$work/optimized.ll"
  llc_args=()
  [[ -n $cpu ]] && llc_args+=(--mcpu "$cpu")
  [[ -n $features ]] && llc_args+=("--mattr=$features")
  exec "$LLC" "${{llc_args[@]}}" "$work/optimized.ll" -o "$out"
}}
"$LLVM_LINK" --ignore-non-bitcode "${{objects[@]}}" -o "$work/crate.bc"
# Watch mode ({REUSE_ENV}=1): link against what the last full link took from the libraries
# (kept in $work/reuse.bc, with the library list and the symbols left undefined) while no
# library is newer; used only when every exported symbol is defined and every undefined
# symbol is one the full link left undefined too.
reuse="$work/reuse.bc"
if [[ -n ${{{REUSE_ENV}:-}} && -f $reuse && -f $work/reuse.libraries && -f $work/reuse.undefined ]]; then
  IFS= read -r -d '' saved <"$work/reuse.libraries" || true
  fresh=1
  [[ $saved == "${{libraries[*]}}" ]] || fresh=
  for library in "${{libraries[@]}}"; do [[ $library -nt $reuse ]] && fresh=; done
  if [[ -n $fresh ]]; then
    "$LLVM_LINK" --ignore-non-bitcode --only-needed "$work/crate.bc" "$reuse" -o "$work/linked.bc"
    declare -A known=() defined=()
    mapfile -t undefined <"$work/reuse.undefined"
    for symbol in "${{undefined[@]}}"; do known[$symbol]=1; done
    while read -r a b c; do
      if [[ -z $c ]]; then [[ -n ${{known[$b]:-}} ]] || fresh=; else defined[$c]=1; fi
    done < <("$LLVM_NM" "$work/linked.bc")
    for symbol in "${{exports[@]}}"; do [[ -n ${{defined[$symbol]:-}} ]] || fresh=; done
    if [[ -n $fresh ]]; then finish "$work/linked.bc"; fi
  fi
fi
"$LLVM_LINK" --ignore-non-bitcode --only-needed "$work/crate.bc" "${{libraries[@]}}" -o "$work/linked.bc"
defined=$("$LLVM_NM" --defined-only --just-symbol-name "$work/linked.bc")
for symbol in "${{exports[@]}}"; do
  if ! grep -qxF -- "$symbol" <<<"$defined"; then
    [[ -n ${{{KEEP_LINES_ENV}:-}} ]] || exec "$LINKER" "${{args[@]}}"
    "$LLVM_LINK" --ignore-non-bitcode "$work/crate.bc" "${{libraries[@]}}" -o "$work/linked.bc"
    finish "$work/linked.bc"
  fi
done
if [[ -n ${{{REUSE_ENV}:-}} ]]; then
  "$LLVM_NM" --undefined-only --just-symbol-name "$work/linked.bc" >"$work/reuse.undefined"
  printf '%s\0' "${{libraries[*]}}" >"$work/reuse.libraries"
  cp "$work/linked.bc" "$reuse"
fi
finish "$work/linked.bc"
"#,
        llvm_link = quoted(llvm_link),
        llvm_nm = quoted(llvm_nm),
        linker = quoted(linker),
        opt = quoted(opt),
        llc = quoted(llc),
        llvm_dis = quoted(llvm_dis),
    )
}

/// Writes the linker script into `target_dir` (rewritten only when its text changes) and
/// returns its path, for `-Clinker=`.
///
/// # Errors
/// [`BuildError::Io`] if the script cannot be written; [`BuildError::MissingComponents`] if
/// the toolchain at `sysroot` lacks `llvm-link`, `llvm-nm` or `llvm-bitcode-linker` (the
/// components `toolchain::ensure_components` installs).
pub(crate) fn script(target_dir: &Path, sysroot: &Path) -> Result<PathBuf, BuildError> {
    let tools = tools(sysroot).ok_or_else(|| BuildError::MissingComponents {
        sysroot: sysroot.to_owned(),
        missing: "llvm-tools llvm-bitcode-linker".into(),
        command: "rustup component add llvm-tools llvm-bitcode-linker".into(),
        reason: "llvm-link, llvm-nm, opt, llc or llvm-bitcode-linker is not in \
                 lib/rustlib/<host>/bin"
            .into(),
    })?;
    let path = target_dir.join(SCRIPT_NAME);
    let text = text(&tools);
    let io = |e: std::io::Error| BuildError::Io(path.clone(), e);
    std::fs::create_dir_all(target_dir).map_err(|e| BuildError::Io(target_dir.to_owned(), e))?;
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, &text).map_err(io)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(io)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_spaces_and_quotes() {
        assert_eq!(quoted(Path::new("/a b/c")), "'/a b/c'");
        assert_eq!(quoted(Path::new("/it's")), r"'/it'\''s'");
    }

    #[test]
    fn the_script_names_its_tools_and_falls_back_to_rustcs_linker() {
        let t = text(&[
            "/t/llvm-link".into(),
            "/t/llvm-nm".into(),
            "/t/self-contained/llvm-bitcode-linker".into(),
            "/t/opt".into(),
            "/t/llc".into(),
            "/t/llvm-dis".into(),
        ]);
        assert!(t.starts_with("#!/usr/bin/env bash\n"));
        assert!(t.contains("LLVM_LINK='/t/llvm-link'"));
        assert!(t.contains("--only-needed \"$work/crate.bc\""));
        // Both fall-backs run rustc's linker with rustc's own arguments.
        assert_eq!(t.matches("exec \"$LINKER\" \"${args[@]}\"").count(), 2);
        // The last link is reused and written only in watch mode.
        assert_eq!(t.matches("if [[ -n ${FERROCUDA_LINK_REUSE:-}").count(), 2);
        assert!(t.contains("--only-needed \"$work/crate.bc\" \"$reuse\""));
        // Line tables: opt without --strip-debug, then llc, in place of the linker.
        assert!(t.contains("if [[ -z ${FERROCUDA_LINK_KEEP_LINES:-} ]]; then exec \"$LINKER\""));
        assert!(t.contains("--passes=\"default<O$level>,internalize,globaldce\""));
        assert!(!t.contains("--strip-debug"));
    }
}
