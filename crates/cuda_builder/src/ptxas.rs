//! Finding and running `ptxas`, NVIDIA's PTX assembler, to validate PTX and read per-kernel
//! resource usage without a GPU.

use crate::{BuildError, ComputeCapability};
use cust_core::Resources;
use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// How to get a `ptxas` without a CUDA toolkit.
pub const INSTALL_HINT: &str = "Install one with `python3 -m pip install nvidia-cuda-nvcc-cu12` \
     (a 40 MB wheel, no GPU needed), or set PTXAS=/path/to/ptxas, or CUDA_HOME to a CUDA toolkit.";

/// Looks for `ptxas`, in this order: `$PTXAS`; `ptxas` on `PATH`; `$CUDA_HOME/bin`,
/// `$CUDA_PATH/bin`, `/usr/local/cuda/bin`; the `nvidia-cuda-nvcc-cu12` pip wheel of
/// `python3` (`nvidia/cuda_nvcc/bin/ptxas` in its site-packages).
pub fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from)
        && p.is_file()
    {
        return Some(p);
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(toolkit_roots().into_iter().map(|r| r.join("bin")));
    if let Some(p) = dirs.iter().map(|d| d.join("ptxas")).find(|p| p.is_file()) {
        return Some(p);
    }
    pip_wheel_dir()
        .map(|d| d.join("bin").join("ptxas"))
        .filter(|p| p.is_file())
}

/// The CUDA toolkit roots to look in, in order: `$CUDA_HOME` and `$CUDA_PATH` where set, then
/// `/usr/local/cuda`. They need not exist.
pub(crate) fn toolkit_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots
}

/// The `nvidia/cuda_nvcc` folder of the `nvidia-cuda-nvcc-cu12` wheel, if `python3` has it.
/// It also holds `nvvm/libdevice/libdevice.10.bc`.
///
/// `python3` is asked once per process: starting it took 0.2–0.3 s of each 1 s rebuild in
/// watch mode (measured on the 2-core machine with pyenv's shims), and a wheel installed
/// while a watcher runs is found by the next build script run.
pub fn pip_wheel_dir() -> Option<PathBuf> {
    static DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(ask_python_for_wheel).clone()
}

fn ask_python_for_wheel() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])",
        ])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Folders whose change may make `ptxas` or libdevice appear, for `cargo::rerun-if-changed`:
/// each site-packages folder of `python3` that exists (its `nvidia/` subfolder when that
/// exists, which is where NVIDIA's wheels install, so that unrelated installs do not trigger a
/// rebuild), and each existing CUDA toolkit root (`$CUDA_HOME`, `$CUDA_PATH`,
/// `/usr/local/cuda`). Cargo scans a watched folder recursively for changed files.
pub fn watch_paths() -> Vec<PathBuf> {
    let mut roots = toolkit_roots();
    let site = Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for dir in site.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let dir = PathBuf::from(dir);
        let nvidia = dir.join("nvidia");
        roots.push(if nvidia.is_dir() { nvidia } else { dir });
    }
    roots.retain(|p| p.is_dir());
    roots.dedup();
    roots
}

/// Assembles `ptx` for `arch` with `ptxas -v`, writing the cubin to `cubin` (or discarding
/// it), and returns the resource usage of every kernel, as `(entry name, resources)`.
///
/// # Errors
/// [`BuildError::PtxasNotStarted`] if ptxas cannot run, [`BuildError::InvalidPtx`] with its
/// messages if it rejects the PTX.
pub fn assemble(
    ptxas: &Path,
    ptx: &Path,
    arch: ComputeCapability,
    cubin: Option<&Path>,
    line_info: bool,
) -> Result<Vec<(String, Resources)>, BuildError> {
    let sm = arch.to_string();
    let out_path = cubin.map_or_else(|| PathBuf::from("/dev/null"), Path::to_path_buf);
    let out = Command::new(ptxas)
        .arg(format!("-arch={sm}"))
        .arg("-v")
        .args(line_info.then_some("-lineinfo"))
        .arg(ptx)
        .arg("-o")
        .arg(&out_path)
        .output()
        .map_err(|e| BuildError::PtxasNotStarted(ptxas.into(), e))?;
    let text = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(BuildError::InvalidPtx {
            ptx: ptx.into(),
            arch: sm,
            messages: text.into_owned(),
        });
    }
    Ok(parse_verbose(&text, arch))
}

/// Parses `ptxas -v` output: for each "Compiling entry function 'NAME'" block, the
/// "N bytes stack frame, N bytes spill stores, N bytes spill loads" and
/// "Used N registers, ... N bytes smem" lines; returns `(entry name, resources)` per kernel.
pub fn parse_verbose(text: &str, arch: ComputeCapability) -> Vec<(String, Resources)> {
    let mut kernels: Vec<(String, Resources)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default();
            kernels.push((
                name.to_owned(),
                Resources {
                    arch,
                    registers: 0,
                    shared_bytes: 0,
                    stack_frame_bytes: 0,
                    spill_store_bytes: 0,
                    spill_load_bytes: 0,
                },
            ));
            continue;
        }
        let Some((_, k)) = kernels.last_mut() else {
            continue;
        };
        if line.contains("stack frame") {
            k.stack_frame_bytes = number_before(line, "bytes stack frame");
            k.spill_store_bytes = number_before(line, "bytes spill stores");
            k.spill_load_bytes = number_before(line, "bytes spill loads");
        } else if line.contains("Used ") {
            k.registers = number_before(line, "registers");
            k.shared_bytes = number_before(line, "bytes smem");
        }
    }
    kernels
}

/// The integer right before `unit` in `line`, or 0.
fn number_before(line: &str, unit: &str) -> u32 {
    line.find(unit)
        .and_then(|i| line[..i].split_whitespace().last())
        .and_then(|n| n.trim_start_matches(['+', ',']).parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Text produced by ptxas 12.9 (`ptxas -arch=sm_90 -v`) on a module with two kernels.
    const SAMPLE: &str = "\
ptxas info    : 72 bytes gmem
ptxas info    : Compiling entry function 'vector_add_f32' for 'sm_90'
ptxas info    : Function properties for vector_add_f32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers
ptxas info    : Compile time = 3.180 ms
ptxas info    : Compiling entry function 'tiled' for 'sm_90'
ptxas info    : Function properties for tiled
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem
";

    #[test]
    fn parses_each_kernel_block() {
        let sm90 = ComputeCapability::new(9, 0);
        let k = parse_verbose(SAMPLE, sm90);
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].0, "vector_add_f32");
        assert_eq!(k[1].0, "tiled");
        let k: Vec<Resources> = k.into_iter().map(|(_, r)| r).collect();
        assert!(k.iter().all(|r| r.arch == sm90));
        assert_eq!(
            (k[0].registers, k[0].shared_bytes, k[0].spill_store_bytes),
            (12, 0, 0)
        );
        assert_eq!(k[1].registers, 40);
        assert_eq!(k[1].shared_bytes, 8192);
        assert_eq!(k[1].stack_frame_bytes, 16);
        assert_eq!((k[1].spill_store_bytes, k[1].spill_load_bytes), (8, 4));
    }
}
