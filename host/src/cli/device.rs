//! Where a render runs: `--backend` ([`Backend`]) and `--gpus` ([`parse_gpus`]), and opening
//! the device they name ([`open_gpu`], [`open_pool`]), with `--backend auto`'s one fallback
//! rule: no driver or no GPU renders on the CPU, with a note; any other failure is an error.

use anyhow::{Context, Result};
use clap::ValueEnum;
use host::{
    Gpu, GpuError,
    mandelbrot::pool::{GpuPool, GpuSelection},
};

/// `--backend`: where to compute.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The GPU when a CUDA driver and device exist, otherwise the CPU.
    Auto,
    /// The GPU; an error if there is none.
    #[value(alias = "cuda")]
    Gpu,
    /// The CPU (all cores, rayon).
    Cpu,
}

/// `--gpus`: `all`, or a number of GPUs of at least 1 (the first N).
pub fn parse_gpus(s: &str) -> Result<GpuSelection, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("all") {
        return Ok(GpuSelection::All);
    }
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(GpuSelection::First(n)),
        _ => Err(format!(
            "`{s}` is not allowed: --gpus must be `all` or a number of GPUs of at least 1"
        )),
    }
}

/// Why `--backend auto` renders on the CPU, for its note: `err` (`NoDriver` or `NoDevice`)
/// without the advice to programs that cust's `NoDriver` message gives.
fn no_gpu(err: &GpuError) -> String {
    match err {
        GpuError::NoDriver => "no CUDA driver found (libcuda.so could not be loaded)".to_owned(),
        other => other.to_string(),
    }
}

/// Opens what `open` opens for `backend` (`None`: render on the CPU): `--backend gpu` fails
/// without it, `--backend auto` falls back to the CPU (with a note) when there is no driver
/// or GPU; any other failure is an error saying it was `opening` the device.
fn open_for<T>(
    backend: Backend,
    opening: &'static str,
    open: impl FnOnce() -> Result<T, GpuError>,
) -> Result<Option<T>> {
    Ok(match backend {
        Backend::Cpu => None,
        Backend::Gpu => Some(open().context("--backend gpu was requested")?),
        Backend::Auto => match open() {
            Ok(device) => Some(device),
            Err(err @ (GpuError::NoDriver | GpuError::NoDevice)) => {
                super::errln!("note: {}; rendering on the CPU", no_gpu(&err));
                None
            }
            Err(err) => return Err(err).context(opening),
        },
    })
}

/// Opens the first GPU for `backend` (`None`: render on the CPU).
///
/// # Errors
/// For `--backend gpu` without a GPU, or any failure other than a missing driver or GPU.
pub fn open_gpu(backend: Backend) -> Result<Option<Gpu>> {
    open_for(backend, "opening the GPU", || Gpu::new(0))
}

/// Opens the GPUs `selection` names as a pool for `backend` (`None`: render on the CPU).
///
/// # Errors
/// As [`open_gpu`].
pub fn open_pool(backend: Backend, selection: GpuSelection) -> Result<Option<GpuPool>> {
    open_for(backend, "opening the GPUs", || GpuPool::open(selection))
}
