//! [`Function`] (a kernel of a loaded module), [`GridSize`] and [`BlockSize`].

use crate::{
    device::driver_version,
    error::{CudaError, CudaResult},
    module::Module,
};
use cudarc::driver::{CudaFunction, LaunchConfig, sys};
use std::{
    fmt,
    sync::{Arc, OnceLock},
};

/// Grid dimensions, in blocks (x, y, z). Converts from `u32`, `(u32, u32)` and
/// `(u32, u32, u32)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridSize {
    /// Blocks in x.
    pub x: u32,
    /// Blocks in y.
    pub y: u32,
    /// Blocks in z.
    pub z: u32,
}

/// Block dimensions, in threads (x, y, z). Converts from `u32`, `(u32, u32)` and
/// `(u32, u32, u32)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSize {
    /// Threads in x.
    pub x: u32,
    /// Threads in y.
    pub y: u32,
    /// Threads in z.
    pub z: u32,
}

macro_rules! dims {
    ($t:ident) => {
        impl $t {
            /// `(x, y, z)`.
            pub const fn xyz(x: u32, y: u32, z: u32) -> Self {
                Self { x, y, z }
            }
            /// `(x, 1, 1)`.
            pub const fn x(x: u32) -> Self {
                Self { x, y: 1, z: 1 }
            }
            /// `(x, y, 1)`.
            pub const fn xy(x: u32, y: u32) -> Self {
                Self { x, y, z: 1 }
            }
            /// The product of the three dimensions.
            pub const fn total(&self) -> u64 {
                self.x as u64 * self.y as u64 * self.z as u64
            }
        }
        impl From<u32> for $t {
            fn from(x: u32) -> Self {
                Self::x(x)
            }
        }
        impl From<(u32, u32)> for $t {
            fn from((x, y): (u32, u32)) -> Self {
                Self::xy(x, y)
            }
        }
        impl From<(u32, u32, u32)> for $t {
            fn from((x, y, z): (u32, u32, u32)) -> Self {
                Self::xyz(x, y, z)
            }
        }
        impl From<$t> for (u32, u32, u32) {
            fn from(d: $t) -> Self {
                (d.x, d.y, d.z)
            }
        }
    };
}
dims!(GridSize);
dims!(BlockSize);

/// A kernel of a loaded [`Module`]. Cheap to clone; keeps its module loaded.
#[derive(Clone)]
pub struct Function {
    kernel: Arc<Kernel>,
    module: Module,
}

/// What a [`Module`] caches per kernel name. It holds no [`Module`]: a cached `Function`
/// would hold its own module and keep it loaded forever (a reference cycle through the
/// cache), so the module keeps these and pairs them with itself when it hands one out.
pub(crate) struct Kernel {
    inner: CudaFunction,
    name: Box<str>,
    /// [`Function::param_sizes`], resolved at the first launch and shared by every
    /// `Function` of this kernel.
    param_sizes: OnceLock<Vec<usize>>,
}

impl Kernel {
    pub(crate) fn new(inner: CudaFunction, name: &str) -> Arc<Self> {
        Arc::new(Self {
            inner,
            name: name.into(),
            param_sizes: OnceLock::new(),
        })
    }
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.kernel.name)
            .finish()
    }
}

impl Function {
    pub(crate) fn new(kernel: Arc<Kernel>, module: Module) -> Self {
        Self { kernel, module }
    }

    /// The kernel's entry name.
    pub fn name(&self) -> &str {
        &self.kernel.name
    }

    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The cudarc function.
    pub fn as_cudarc(&self) -> &CudaFunction {
        &self.kernel.inner
    }

    /// The size in bytes of each parameter, in order: from the module image when the module
    /// came from `cuda_builder` (its manifest), else from the driver (`cuFuncGetParamInfo`,
    /// CUDA 12.4 and later).
    ///
    /// Resolved once per function and kept: launches do not repeat the lookup.
    ///
    /// # Errors
    /// [`CudaError::ParamInfoUnavailable`] when neither is available, or a driver error.
    pub fn param_sizes(&self) -> CudaResult<&[usize]> {
        if let Some(sizes) = self.kernel.param_sizes.get() {
            return Ok(sizes);
        }
        let sizes = self.resolve_param_sizes()?;
        Ok(self.kernel.param_sizes.get_or_init(|| sizes))
    }

    fn resolve_param_sizes(&self) -> CudaResult<Vec<usize>> {
        if let Some(entry) = self.module.image().and_then(|i| i.entry(&self.kernel.name)) {
            return Ok(entry.param_sizes.to_vec());
        }
        if driver_version()? < (12, 4) {
            return Err(CudaError::ParamInfoUnavailable(
                self.kernel.name.to_string(),
            ));
        }
        let f = self.kernel.inner.cu_function();
        let mut sizes = Vec::new();
        for index in 0.. {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `f` is a live function of a loaded module (we hold the module); the
            // driver writes two integers. Driver >= 12.4 checked above, so the symbol exists.
            let status = unsafe { sys::cuFuncGetParamInfo(f, index, &mut offset, &mut size) };
            match status {
                sys::CUresult::CUDA_SUCCESS => sizes.push(size),
                // Past the last parameter.
                sys::CUresult::CUDA_ERROR_INVALID_VALUE => break,
                other => {
                    return Err(CudaError::driver(format!(
                        "reading the parameters of kernel `{}`",
                        self.kernel.name
                    ))(cudarc::driver::DriverError(other)));
                }
            }
        }
        Ok(sizes)
    }

    /// The occupancy calculator's launch configuration (`cuOccupancyMaxPotentialBlockSize`):
    /// `(minimum grid size for full occupancy, block size)`, for `dynamic_shared_bytes` of
    /// dynamic shared memory per block and blocks of at most `block_size_limit` threads
    /// (`0` = no limit beyond the kernel's).
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn suggested_launch_configuration(
        &self,
        dynamic_shared_bytes: usize,
        block_size_limit: BlockSize,
    ) -> CudaResult<(u32, u32)> {
        let (mut min_grid, mut block) = (0, 0);
        self.module
            .context()
            .bind_to_thread()
            .map_err(CudaError::driver("binding the context"))?;
        // SAFETY: a live function; no callback, so `dynamic_shared_bytes` applies to every
        // block size; the driver writes two integers.
        unsafe {
            sys::cuOccupancyMaxPotentialBlockSize(
                &mut min_grid,
                &mut block,
                self.kernel.inner.cu_function(),
                None,
                dynamic_shared_bytes,
                i32::try_from(block_size_limit.x).unwrap_or(i32::MAX),
            )
        }
        .result()
        .map_err(CudaError::driver(format!(
            "occupancy query for kernel `{}`",
            self.kernel.name
        )))?;
        Ok((min_grid as u32, block as u32))
    }

    /// How many blocks of `block_size` threads can be resident on one multiprocessor
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_size: BlockSize,
        dynamic_shared_bytes: usize,
    ) -> CudaResult<u32> {
        self.kernel
            .inner
            .occupancy_max_active_blocks_per_multiprocessor(
                u32::try_from(block_size.total()).unwrap_or(u32::MAX),
                dynamic_shared_bytes,
                None,
            )
            .map_err(CudaError::driver(format!(
                "occupancy query for kernel `{}`",
                self.kernel.name
            )))
    }
}

/// A cudarc launch configuration from cust-style dimensions.
pub fn launch_config(
    grid: impl Into<GridSize>,
    block: impl Into<BlockSize>,
    shared_mem_bytes: u32,
) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid.into().into(),
        block_dim: block.into().into(),
        shared_mem_bytes,
    }
}
