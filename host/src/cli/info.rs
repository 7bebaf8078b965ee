//! `ferrocuda info`: the CUDA driver and every GPU.

use super::outln;
use anyhow::Result;
use host::gpu::driver_available;

pub fn run() -> Result<()> {
    if !driver_available() {
        outln!(
            "no CUDA driver found (libcuda.so could not be loaded); ferrocuda will render on the CPU"
        );
        return Ok(());
    }
    let (major, minor) = host::info::driver_version()?;
    outln!("CUDA driver: version {major}.{minor}");
    let devices = host::info::devices()?;
    if devices.is_empty() {
        outln!("no CUDA devices found");
    }
    for d in devices {
        outln!("{d}");
    }
    Ok(())
}
