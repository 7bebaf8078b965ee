//! [`Device`]: a GPU, by ordinal, and what the driver says about it.

use crate::error::{CudaError, CudaResult};
use cudarc::driver::{result, sys};

/// A device attribute (`CUdevice_attribute`), e.g.
/// `DeviceAttribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
pub use cudarc::driver::sys::CUdevice_attribute as DeviceAttribute;

/// Whether the CUDA driver library can be loaded (cheap; does not initialise CUDA).
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library by its known names.
    unsafe { sys::is_culib_present() }
}

/// Loads the driver and initialises it (`cuInit`); every other call does this as needed.
///
/// # Errors
/// [`CudaError::NoDriver`] without a driver; [`CudaError::Driver`] if `cuInit` fails.
pub fn init() -> CudaResult<()> {
    if !driver_available() {
        return Err(CudaError::NoDriver);
    }
    result::init().map_err(CudaError::driver("initialising the CUDA driver (cuInit)"))
}

/// The driver's CUDA version as `(major, minor)`, e.g. `(13, 0)`.
///
/// # Errors
/// As [`init`].
pub fn driver_version() -> CudaResult<(u32, u32)> {
    init()?;
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(CudaError::driver("reading the driver version"))?;
    let v = u32::try_from(version).unwrap_or(0);
    Ok((v / 1000, (v % 1000) / 10))
}

/// A CUDA device (GPU), by ordinal. Cheap to copy; opening it is [`Context::new`](crate::context::Context::new).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    ordinal: usize,
    cu_device: sys::CUdevice,
}

impl Device {
    /// How many CUDA devices the driver sees.
    ///
    /// # Errors
    /// As [`init`].
    pub fn num_devices() -> CudaResult<u32> {
        init()?;
        let n = result::device::get_count().map_err(CudaError::driver("counting devices"))?;
        Ok(u32::try_from(n).unwrap_or(0))
    }

    /// Device `ordinal` (0 = first).
    ///
    /// # Errors
    /// [`CudaError::NoDevice`] when there is none, [`CudaError::BadOrdinal`] when `ordinal`
    /// is out of range, or as [`init`].
    pub fn get_device(ordinal: u32) -> CudaResult<Self> {
        let count = Self::num_devices()? as usize;
        let ordinal = ordinal as usize;
        if count == 0 {
            return Err(CudaError::NoDevice);
        }
        if ordinal >= count {
            return Err(CudaError::BadOrdinal { ordinal, count });
        }
        let cu_device = result::device::get(ordinal as i32)
            .map_err(CudaError::driver(format!("opening device {ordinal}")))?;
        Ok(Self { ordinal, cu_device })
    }

    /// Every device, in ordinal order.
    ///
    /// # Errors
    /// As [`Device::get_device`].
    pub fn devices() -> CudaResult<Vec<Self>> {
        (0..Self::num_devices()?).map(Self::get_device).collect()
    }

    /// The ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, e.g. `NVIDIA H200`.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn name(&self) -> CudaResult<String> {
        result::device::get_name(self.cu_device).map_err(CudaError::driver(format!(
            "reading the name of device {}",
            self.ordinal
        )))
    }

    /// Total memory, bytes.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn total_memory(&self) -> CudaResult<usize> {
        // SAFETY: `cu_device` came from `cuDeviceGet`.
        unsafe { result::device::total_mem(self.cu_device) }.map_err(CudaError::driver(format!(
            "reading the memory size of device {}",
            self.ordinal
        )))
    }

    /// One attribute.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn get_attribute(&self, attribute: DeviceAttribute) -> CudaResult<i32> {
        // SAFETY: `cu_device` came from `cuDeviceGet`.
        unsafe { result::device::get_attribute(self.cu_device, attribute) }.map_err(
            CudaError::driver(format!("reading {attribute:?} of device {}", self.ordinal)),
        )
    }

    /// The compute capability `(major, minor)`, e.g. `(9, 0)` for Hopper.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn compute_capability(&self) -> CudaResult<cust_core::ComputeCapability> {
        let major =
            self.get_attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor =
            self.get_attribute(DeviceAttribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        Ok(cust_core::ComputeCapability::new(
            major as u32,
            minor as u32,
        ))
    }
}
