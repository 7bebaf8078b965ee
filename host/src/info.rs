//! Driver and device information for `ferrocuda info`.

use crate::gpu::GpuError;
use cust::device::{Device, DeviceAttribute};
use std::fmt;

/// One CUDA device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Ordinal (0 = first).
    pub ordinal: usize,
    /// Name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability, e.g. `sm_90`.
    pub compute_capability: cust::module::ComputeCapability,
    /// Total device memory, bytes.
    pub total_mem_bytes: usize,
    /// Number of streaming multiprocessors.
    pub multiprocessors: i32,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GPU {}: {}, compute capability {}.{}, {:.1} GiB, {} SMs",
            self.ordinal,
            self.name,
            self.compute_capability.major,
            self.compute_capability.minor,
            self.total_mem_bytes as f64 / (1u64 << 30) as f64,
            self.multiprocessors
        )
    }
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
///
/// # Errors
/// [`GpuError::NoDriver`] without a driver, [`GpuError::Driver`] if the query fails.
pub fn driver_version() -> Result<(u32, u32), GpuError> {
    cust::device::driver_version()
}

/// Every CUDA device the driver sees (queried without creating contexts).
///
/// # Errors
/// [`GpuError::NoDriver`] without a driver, [`GpuError::Driver`] if a query fails.
pub fn devices() -> Result<Vec<DeviceInfo>, GpuError> {
    Device::devices()?
        .into_iter()
        .map(|dev| {
            Ok(DeviceInfo {
                ordinal: dev.ordinal(),
                name: dev.name()?,
                compute_capability: dev.compute_capability()?,
                total_mem_bytes: dev.total_memory()?,
                multiprocessors: dev.get_attribute(DeviceAttribute::MultiprocessorCount)?,
            })
        })
        .collect()
}
