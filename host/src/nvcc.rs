//! The `nvcc` driver: compiles CUDA C sources (the bench's twins and references in
//! `bench/cuda/*.cu`, embedded in the binary) for the GPU at hand at run time, into a cubin
//! loaded as a module, or into a shared library.

use crate::gpu::Gpu;
use std::path::Path;

/// Runs `nvcc -O3 -arch=sm_XY <extra args> -o <output> <source>` for `gpu`'s architecture.
/// `what` names the source in messages.
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
    let out = std::process::Command::new("nvcc")
        .args(["-O3", &format!("-arch={cc}")])
        .args(args)
        .arg("-o")
        .arg(output)
        .arg(source)
        .output()
        .map_err(|e| format!("cannot run nvcc ({e}): put the CUDA toolkit's bin folder on PATH"))?;
    if !out.status.success() {
        return Err(format!(
            "nvcc failed{what}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
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
