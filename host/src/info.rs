//! Driver and device information for `ferrocuda info`.

use crate::gpu::{GpuError, driver_available};
use cudarc::driver::{CudaContext, result, sys};
use std::fmt;

/// One CUDA device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Ordinal (0 = first).
    pub ordinal: usize,
    /// Name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor), e.g. (9, 0).
    pub compute_capability: (i32, i32),
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
            self.compute_capability.0,
            self.compute_capability.1,
            self.total_mem_bytes as f64 / (1u64 << 30) as f64,
            self.multiprocessors
        )
    }
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
///
/// # Errors
/// [`GpuError::NoDriver`] without a driver, [`GpuError::Driver`] if the query fails.
pub fn driver_version() -> Result<(i32, i32), GpuError> {
    if !driver_available() {
        return Err(GpuError::NoDriver);
    }
    result::init().map_err(GpuError::driver("cuInit"))?;
    let mut v = 0;
    // SAFETY: cuDriverGetVersion writes one int to the valid pointer.
    unsafe { sys::cuDriverGetVersion(&mut v) }
        .result()
        .map_err(GpuError::driver("cuDriverGetVersion"))?;
    Ok((v / 1000, (v % 1000) / 10))
}

/// Every CUDA device the driver sees.
///
/// # Errors
/// [`GpuError::NoDriver`] without a driver, [`GpuError::Driver`] if a query fails.
pub fn devices() -> Result<Vec<DeviceInfo>, GpuError> {
    if !driver_available() {
        return Err(GpuError::NoDriver);
    }
    let count = CudaContext::device_count().map_err(GpuError::driver("cuDeviceGetCount"))?;
    (0..usize::try_from(count).unwrap_or(0))
        .map(|ordinal| {
            let ctx = CudaContext::new(ordinal)
                .map_err(GpuError::driver(format!("opening GPU {ordinal}")))?;
            let q = GpuError::driver;
            Ok(DeviceInfo {
                ordinal,
                name: ctx.name().map_err(q("cuDeviceGetName"))?,
                compute_capability: ctx.compute_capability().map_err(q("compute capability"))?,
                total_mem_bytes: ctx.total_mem().map_err(q("cuDeviceTotalMem"))?,
                multiprocessors: ctx
                    .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                    .map_err(q("multiprocessor count"))?,
            })
        })
        .collect()
}
