//! The `nvcc` driver: compiles CUDA C sources (the bench's twins and references in
//! `bench/cuda/*.cu`, embedded in the binary) for the GPU at hand at run time, into a cubin
//! loaded as a module, or into a shared library.
//!
//! Outputs are kept between runs in a cache folder ([`cache_dir`]), keyed by the source,
//! the arguments, the architecture and `nvcc --version`'s text, so a second `ferrocuda
//! bench` on the same machine loads CUB and the twins without compiling them again. The
//! cache is best effort: a folder that cannot be read or written only means
//! compiling again.

use crate::gpu::Gpu;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Bumped when what a cache entry holds changes, so older entries are not read.
const CACHE_FORMAT: u32 = 1;

/// The folder that keeps compiled outputs between runs: `$FERROCUDA_NVCC_CACHE` if set (an
/// empty value turns the cache off), else `$XDG_CACHE_HOME/ferrocuda/nvcc`, else
/// `$HOME/.cache/ferrocuda/nvcc`; `None` (no cache) if none of these is set.
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(|name| std::env::var_os(name))
}

/// [`cache_dir`] with the environment read through `env`.
fn cache_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name| env(name).filter(|v| !v.is_empty());
    match env("FERROCUDA_NVCC_CACHE") {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => set("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| set("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|d| d.join("ferrocuda").join("nvcc")),
    }
}

/// Runs `nvcc -O3 -arch=sm_XY <extra args> -o <output> <source>` for `gpu`'s architecture,
/// or copies the output of an identical earlier run from [`cache_dir`]. `what` names the
/// source in messages.
///
/// # Errors
/// Why not, as a message: no nvcc on `PATH`, or a compile error with nvcc's messages.
pub fn compile(
    gpu: &Gpu,
    what: &str,
    args: &[&str],
    source: &Path,
    output: &Path,
) -> Result<(), String> {
    let cc = gpu
        .context()
        .compute_capability()
        .map_err(|e| format!("reading the compute capability: {e}"))?;
    let (arch, cache) = (cc.to_string(), cache_dir());
    let nvcc = Nvcc {
        program: Path::new("nvcc"),
        arch: &arch,
        cache: cache.as_deref(),
    };
    nvcc.compile(what, args, source, output)
}

/// One nvcc (`program`, found on `PATH` if a bare name) for one architecture (`sm_XY`), with
/// its cache folder.
struct Nvcc<'a> {
    program: &'a Path,
    arch: &'a str,
    cache: Option<&'a Path>,
}

impl Nvcc<'_> {
    /// [`compile`] for this nvcc and architecture.
    fn compile(
        &self,
        what: &str,
        args: &[&str],
        source: &Path,
        output: &Path,
    ) -> Result<(), String> {
        let entry = self.cache_entry(args, source, output);
        if let Some(entry) = &entry
            && std::fs::copy(entry, output).is_ok()
        {
            return Ok(());
        }
        let out = Command::new(self.program)
            .args(["-O3", &format!("-arch={}", self.arch)])
            .args(args)
            .arg("-o")
            .arg(output)
            .arg(source)
            .output()
            .map_err(|e| {
                format!("cannot run nvcc ({e}): put the CUDA toolkit's bin folder on PATH")
            })?;
        if !out.status.success() {
            return Err(format!(
                "nvcc failed{what}:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        if let Some(entry) = &entry {
            store(output, entry);
        }
        Ok(())
    }

    /// Where the output of this compile is cached: the folder, then a hash of everything
    /// that decides the output (format, architecture, arguments, `nvcc --version`, the
    /// source's bytes) with the output's extension. `None` without a cache folder, or if
    /// nvcc or the source cannot be read (the compile then says why).
    fn cache_entry(&self, args: &[&str], source: &Path, output: &Path) -> Option<PathBuf> {
        let dir = self.cache?;
        let version = Command::new(self.program).arg("--version").output().ok()?;
        if !version.status.success() {
            return None;
        }
        let source = std::fs::read(source).ok()?;
        // SipHash with fixed keys: a key changes only with the standard library's hasher, and
        // then the cache misses once.
        let mut h = std::hash::DefaultHasher::new();
        (CACHE_FORMAT, self.arch, args, &version.stdout, &source).hash(&mut h);
        let mut name = format!("{:016x}", h.finish());
        if let Some(ext) = output.extension().and_then(|e| e.to_str()) {
            name = format!("{name}.{ext}");
        }
        Some(dir.join(name))
    }
}

/// Copies `output` into the cache as `entry`, whole or not at all (a temporary file in the
/// cache folder, renamed). Failures are ignored: the cache is an optimisation.
fn store(output: &Path, entry: &Path) {
    let Some(dir) = entry.parent() else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(tmp) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    if std::fs::copy(output, tmp.path()).is_ok() {
        let _ = tmp.persist(entry);
    }
}

/// Compiles CUDA C `source` for `gpu`'s architecture with `nvcc -O3 -arch=sm_XY -cubin` (in a
/// temporary folder, as `<stem>.cu`) and loads the cubin.
///
/// # Errors
/// Why not, as a message: no nvcc on `PATH`, a compile error (with nvcc's messages), a load
/// error.
pub fn module(gpu: &Gpu, stem: &str, source: &str) -> Result<cust::module::Module, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    let src = dir.path().join(format!("{stem}.cu"));
    let cubin = dir.path().join(format!("{stem}.cubin"));
    std::fs::write(&src, source).map_err(|e| format!("writing {}: {e}", src.display()))?;
    compile(gpu, "", &["-cubin"], &src, &cubin)?;
    let bytes = std::fs::read(&cubin).map_err(|e| format!("reading the cubin: {e}"))?;
    cust::module::Module::from_cubin_in(gpu.context(), &bytes, &format!("CUDA C module `{stem}`"))
        .map_err(|e| format!("loading the CUDA C cubin: {e}"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Held by the tests that write a script and then run it: a process forked by another
    /// test while a script is open for writing would keep it busy (`ETXTBSY`) for its exec.
    static SCRIPTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A stand-in for nvcc in `dir`: `--version` prints `version`; a compile appends a line
    /// to `calls.log` and writes its arguments into the `-o` file (or fails, for a source
    /// named `bad.cu`).
    fn fake_nvcc(dir: &Path, version: &str) -> PathBuf {
        let path = dir.join(format!("nvcc-{version}"));
        let log = dir.join("calls.log");
        let script = format!(
            "#!/bin/sh\n\
             if [ \"$1\" = --version ]; then echo '{version}'; exit 0; fi\n\
             echo call >> '{log}'\n\
             all=\"$*\"\n\
             while [ $# -gt 0 ]; do\n\
               [ \"$1\" = -o ] && out=\"$2\"\n\
               case \"$1\" in *bad.cu) echo 'bad.cu(1): error' >&2; exit 2;; esac\n\
               shift\n\
             done\n\
             echo \"$all\" > \"$out\"\n",
            log = log.display()
        );
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn the_cache_folder_follows_the_environment() {
        let dir = |vars: &[(&str, &str)]| {
            cache_dir_from(|name| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            })
        };
        let home = [("HOME", "/home/u")];
        assert_eq!(
            dir(&home),
            Some(PathBuf::from("/home/u/.cache/ferrocuda/nvcc"))
        );
        let xdg = [("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")];
        assert_eq!(dir(&xdg), Some(PathBuf::from("/c/ferrocuda/nvcc")));
        let empty_xdg = [("HOME", "/home/u"), ("XDG_CACHE_HOME", "")];
        assert_eq!(dir(&empty_xdg), dir(&home));
        let own = [("XDG_CACHE_HOME", "/c"), ("FERROCUDA_NVCC_CACHE", "/mine")];
        assert_eq!(dir(&own), Some(PathBuf::from("/mine")));
        let off = [("HOME", "/home/u"), ("FERROCUDA_NVCC_CACHE", "")];
        assert_eq!(dir(&off), None);
        assert_eq!(dir(&[]), None);
    }

    fn calls(dir: &Path) -> usize {
        std::fs::read_to_string(dir.join("calls.log")).map_or(0, |s| s.lines().count())
    }

    #[test]
    fn a_second_identical_compile_is_read_from_the_cache() {
        let _one_at_a_time = SCRIPTS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let source = dir.path().join("peers.cu");
        std::fs::write(&source, "__global__ void k() {}").unwrap();
        let program = fake_nvcc(dir.path(), "fake nvcc 13.0");
        let nvcc = Nvcc {
            program: &program,
            arch: "sm_90",
            cache: Some(&cache),
        };
        let (first, second) = (dir.path().join("a.so"), dir.path().join("b.so"));
        nvcc.compile("", &["-shared"], &source, &first).unwrap();
        nvcc.compile("", &["-shared"], &source, &second).unwrap();
        assert_eq!(calls(dir.path()), 1, "the second compile ran nvcc");
        let built = std::fs::read_to_string(&first).unwrap();
        assert!(built.contains("-arch=sm_90 -shared -o"), "{built}");
        assert_eq!(std::fs::read_to_string(&second).unwrap(), built);
        let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
        assert_eq!(entries.len(), 1, "one entry, no temporary files left");

        // Anything that decides the output misses: the arguments, the architecture, the
        // source, the compiler.
        nvcc.compile("", &["-cubin"], &source, &second).unwrap();
        Nvcc {
            arch: "sm_80",
            ..nvcc
        }
        .compile("", &["-shared"], &source, &second)
        .unwrap();
        std::fs::write(&source, "__global__ void k2() {}").unwrap();
        nvcc.compile("", &["-shared"], &source, &second).unwrap();
        let newer = fake_nvcc(dir.path(), "fake nvcc 13.1");
        Nvcc {
            program: &newer,
            ..nvcc
        }
        .compile("", &["-shared"], &source, &second)
        .unwrap();
        assert_eq!(calls(dir.path()), 5);
    }

    #[test]
    fn without_a_cache_or_after_a_failure_nothing_is_kept() {
        let _one_at_a_time = SCRIPTS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let program = fake_nvcc(dir.path(), "fake nvcc 13.0");
        let bad = dir.path().join("bad.cu");
        std::fs::write(&bad, "syntax error").unwrap();
        let nvcc = Nvcc {
            program: &program,
            arch: "sm_90",
            cache: Some(&cache),
        };
        let e = nvcc
            .compile(" on the peers", &[], &bad, &dir.path().join("x.so"))
            .unwrap_err();
        assert!(
            e.contains("nvcc failed on the peers") && e.contains("bad.cu(1): error"),
            "{e}"
        );
        assert!(!cache.exists() || std::fs::read_dir(&cache).unwrap().next().is_none());

        let good = dir.path().join("good.cu");
        std::fs::write(&good, "__global__ void k() {}").unwrap();
        let uncached = Nvcc {
            cache: None,
            ..nvcc
        };
        for _ in 0..2 {
            uncached
                .compile("", &[], &good, &dir.path().join("y.so"))
                .unwrap();
        }
        assert_eq!(calls(dir.path()), 3);
        let missing = dir.path().join("no-such-nvcc");
        let e = Nvcc {
            program: &missing,
            ..nvcc
        }
        .compile("", &[], &good, &dir.path().join("z.so"))
        .unwrap_err();
        assert!(e.contains("cannot run nvcc"), "{e}");
    }
}
