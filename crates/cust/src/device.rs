//! [`Device`]: a GPU, by ordinal, and what the driver says about it.

use crate::error::{CudaError, CudaResult};
use cudarc::driver::{result, sys};

/// A device attribute ([`Device::get_attribute`], [`Context::attribute`]), named as in cust
/// 0.3: each variant is the driver's `CU_DEVICE_ATTRIBUTE_*` of the same name in
/// `SCREAMING_CASE` (CUDA Driver API, `cuDeviceGetAttribute`). Only the attributes this
/// workspace reads are listed; the CPU emulator answers those its doc names
/// ([`Context::attribute`]).
///
/// [`Context::attribute`]: crate::context::Context::attribute
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceAttribute {
    /// Maximum threads per block.
    MaxThreadsPerBlock,
    /// Maximum block dimension x, threads.
    MaxBlockDimX,
    /// Maximum block dimension y, threads.
    MaxBlockDimY,
    /// Maximum block dimension z, threads.
    MaxBlockDimZ,
    /// Maximum grid dimension x, blocks.
    MaxGridDimX,
    /// Maximum grid dimension y, blocks.
    MaxGridDimY,
    /// Maximum grid dimension z, blocks.
    MaxGridDimZ,
    /// Shared memory a block may use without opting in, bytes (48 KiB).
    MaxSharedMemoryPerBlock,
    /// Shared memory a block may use after opting in
    /// ([`Function::set_max_dynamic_shared_bytes`](crate::function::Function::set_max_dynamic_shared_bytes)),
    /// bytes.
    MaxSharedMemoryPerBlockOptin,
    /// Shared memory per multiprocessor, bytes.
    MaxSharedMemoryPerMultiprocessor,
    /// 32-bit registers per block.
    MaxRegistersPerBlock,
    /// Maximum resident threads per multiprocessor.
    MaxThreadsPerMultiprocessor,
    /// Threads per warp (32).
    WarpSize,
    /// Number of multiprocessors (SMs).
    MultiprocessorCount,
    /// L2 cache size, bytes.
    L2CacheSize,
    /// Major compute capability version (9 for Hopper).
    ComputeCapabilityMajor,
    /// Minor compute capability version.
    ComputeCapabilityMinor,
}

impl DeviceAttribute {
    /// The driver's enum value for this attribute.
    fn raw(self) -> sys::CUdevice_attribute {
        use sys::CUdevice_attribute as R;
        match self {
            Self::MaxThreadsPerBlock => R::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            Self::MaxBlockDimX => R::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
            Self::MaxBlockDimY => R::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
            Self::MaxBlockDimZ => R::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
            Self::MaxGridDimX => R::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
            Self::MaxGridDimY => R::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
            Self::MaxGridDimZ => R::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
            Self::MaxSharedMemoryPerBlock => R::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            Self::MaxSharedMemoryPerBlockOptin => {
                R::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
            }
            Self::MaxSharedMemoryPerMultiprocessor => {
                R::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
            }
            Self::MaxRegistersPerBlock => R::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
            Self::MaxThreadsPerMultiprocessor => {
                R::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
            }
            Self::WarpSize => R::CU_DEVICE_ATTRIBUTE_WARP_SIZE,
            Self::MultiprocessorCount => R::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            Self::L2CacheSize => R::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
            Self::ComputeCapabilityMajor => R::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            Self::ComputeCapabilityMinor => R::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        }
    }
}

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
        unsafe { result::device::get_attribute(self.cu_device, attribute.raw()) }.map_err(
            CudaError::driver(format!("reading {attribute:?} of device {}", self.ordinal)),
        )
    }

    /// The compute capability `(major, minor)`, e.g. `(9, 0)` for Hopper.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn compute_capability(&self) -> CudaResult<cust_core::ComputeCapability> {
        let major = self.get_attribute(DeviceAttribute::ComputeCapabilityMajor)?;
        let minor = self.get_attribute(DeviceAttribute::ComputeCapabilityMinor)?;
        Ok(cust_core::ComputeCapability::new(
            major as u32,
            minor as u32,
        ))
    }
}
