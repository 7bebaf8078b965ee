//! [`Function`] (a kernel of a loaded module), and the launch configuration types
//! [`GridSize`], [`BlockSize`], [`LaunchConfig`] and [`LaunchAttributes`] with the hardware's
//! launch limits
//! (defined in the private `launch_config` module, below the backends that check them).

/// For the docs' links.
#[cfg(doc)]
use crate::error::CudaError;
pub use crate::launch_config::{
    BlockSize, DEFAULT_MAX_DYNAMIC_SHARED_BYTES, GridSize, LaunchAttributes, LaunchConfig,
    MAX_BLOCK_XY, MAX_BLOCK_Z, MAX_GRID_X, MAX_GRID_YZ, MAX_NON_PORTABLE_CLUSTER_BLOCKS,
    MAX_PORTABLE_CLUSTER_BLOCKS, MAX_THREADS_PER_BLOCK, SM90_MAX_SHARED_BYTES_PER_BLOCK_OPTIN,
};
use crate::{
    backend::FunctionAttribute,
    device::DeviceAttribute,
    error::CudaResult,
    launch_config::{check_cluster, check_dynamic_shared},
    module::{LoadedKernel, Module},
};
use std::{
    fmt,
    sync::{Arc, atomic::Ordering},
};

/// A kernel of a loaded [`Module`]. Cheap to clone; keeps its module loaded.
#[derive(Clone)]
pub struct Function {
    kernel: Arc<LoadedKernel>,
    module: Module,
}

impl fmt::Debug for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.kernel.name)
            .finish()
    }
}

impl Module {
    /// The kernel `name` (looked up once, then cached). In a module from a
    /// [`ModuleImage`](crate::module::ModuleImage) with arch-specific variants, from the
    /// best loaded target that defines it (see [`Module::from_image`]).
    ///
    /// # Errors
    /// [`CudaError::UnknownKernel`] naming the module and, where it is known (modules from a
    /// [`ModuleImage`](crate::module::ModuleImage)), the kernels it has;
    /// [`CudaError::KernelArchitecture`] naming the kernel, the targets that define it and
    /// the device's architecture when only variants the device cannot run define it (e.g.
    /// "kernel `gemm_bf16_wgmma` needs sm_90a; this device is sm_80").
    pub fn get_function(&self, name: &str) -> CudaResult<Function> {
        Ok(Function {
            kernel: self.loaded_kernel(name)?,
            module: self.clone(),
        })
    }
}

impl Function {
    /// The kernel's entry name.
    pub fn name(&self) -> &str {
        &self.kernel.name
    }

    /// The module it belongs to.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// `true` for a function of a CPU-emulator module.
    pub fn is_emulator(&self) -> bool {
        self.kernel.code.is_emulator()
    }

    /// The backend's kernel.
    pub(crate) fn code(&self) -> &dyn crate::backend::Function {
        &*self.kernel.code
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
        let sizes = match self.module.image().and_then(|i| i.entry(&self.kernel.name)) {
            Some(entry) => entry.param_sizes.to_vec(),
            None => self.kernel.code.param_sizes(&self.kernel.name)?,
        };
        Ok(self.kernel.param_sizes.get_or_init(|| sizes))
    }

    /// Allows launches of this kernel with up to `bytes` of dynamic shared memory per block
    /// (`cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)`): above 48 KB
    /// ([`DEFAULT_MAX_DYNAMIC_SHARED_BYTES`]) the driver refuses a launch unless the kernel
    /// opted in, up to the device's `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`
    /// (227 KB on sm_90, 163 KB on sm_80) less the kernel's static shared memory.
    ///
    /// Typed launches ([`TypedFunction`](crate::launch::TypedFunction)) call this themselves,
    /// the first time a launch asks for dynamic shared memory and whenever one asks for more
    /// than the limit set so far (the driver's default counts static shared memory against
    /// the 48 KB: see `ensure_dynamic_shared`); call it yourself to get the error before the
    /// first launch, or for [`launch!`](crate::launch!). The setting belongs to the kernel in its module: every
    /// `Function` of it shares it.
    ///
    /// # Errors
    /// [`CudaError::SharedMemory`] naming the request, the kernel's static shared memory and
    /// the device's limit if `bytes` does not fit (checked before the attribute is set);
    /// [`CudaError::Driver`] if a query or the setting fails.
    pub fn set_max_dynamic_shared_bytes(&self, bytes: u32) -> CudaResult<()> {
        let ctx = self.module.context();
        let limit = ctx.attribute(DeviceAttribute::MaxSharedMemoryPerBlockOptin)?;
        let static_bytes = self
            .kernel
            .code
            .attribute(&self.kernel.name, FunctionAttribute::StaticSharedBytes)?;
        check_dynamic_shared(
            &self.kernel.name,
            bytes,
            u32::try_from(static_bytes).unwrap_or(0),
            u32::try_from(limit).unwrap_or(0),
        )?;
        self.kernel.code.set_attribute(
            &self.kernel.name,
            FunctionAttribute::MaxDynamicSharedBytes,
            i32::try_from(bytes).unwrap_or(i32::MAX),
        )?;
        self.kernel
            .max_dynamic_shared_bytes
            .store(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// The dynamic shared memory per block launches may use, bytes: what
    /// [`set_max_dynamic_shared_bytes`](Self::set_max_dynamic_shared_bytes) set, else 48 KB
    /// (on a GPU the driver's default is 48 KB less the kernel's static shared memory; typed
    /// launches set the limit at their first launch with dynamic shared memory).
    pub fn max_dynamic_shared_bytes(&self) -> u32 {
        match self.kernel.max_dynamic_shared_bytes.load(Ordering::Relaxed) {
            0 => DEFAULT_MAX_DYNAMIC_SHARED_BYTES,
            set => set,
        }
    }

    /// Makes sure a launch with `bytes` of dynamic shared memory is allowed, on a backend that
    /// needs the opt-in (the GPU): sets the limit
    /// ([`set_max_dynamic_shared_bytes`](Self::set_max_dynamic_shared_bytes)) to `bytes` at
    /// the first launch with dynamic shared memory, and again whenever a launch asks for more
    /// than the limit set so far; one atomic load otherwise. Not only above 48 KB: the
    /// driver's default limit is 48 KB *in all*, static shared memory included
    /// (`cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)` reads 48 KB
    /// less the kernel's static bytes), so a kernel with 13 KB of static shared memory is
    /// refused 48 KB of dynamic (`CUDA_ERROR_INVALID_VALUE`) until it opts in.
    pub(crate) fn ensure_dynamic_shared(&self, bytes: u32) -> CudaResult<()> {
        if bytes == 0 || !self.kernel.code.shared_memory_opt_in() {
            return Ok(());
        }
        let set = self.kernel.max_dynamic_shared_bytes.load(Ordering::Relaxed);
        if set == 0 || bytes > set {
            self.set_max_dynamic_shared_bytes(bytes)?;
        }
        Ok(())
    }

    /// Allows (or forbids) cluster launches of this kernel with more than 8 blocks per
    /// cluster, up to 16 (`CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`; CUDA C++
    /// Programming Guide, "Thread Block Clusters": 8 is the portable maximum, H100 and H200
    /// allow 16 with this opt-in). Used by
    /// [`TypedFunction::launch_ex`](crate::launch::TypedFunction::launch_ex)'s check.
    ///
    /// # Errors
    /// [`CudaError::Driver`] if the driver refuses (e.g. a GPU without clusters).
    pub fn set_non_portable_cluster_size_allowed(&self, allowed: bool) -> CudaResult<()> {
        self.kernel.code.set_attribute(
            &self.kernel.name,
            FunctionAttribute::NonPortableClusterSizeAllowed,
            i32::from(allowed),
        )?;
        self.kernel
            .non_portable_cluster
            .store(allowed, Ordering::Relaxed);
        Ok(())
    }

    /// The most blocks a cluster of this kernel may have: 16 after
    /// [`set_non_portable_cluster_size_allowed(true)`](Self::set_non_portable_cluster_size_allowed),
    /// else 8.
    pub fn max_cluster_blocks(&self) -> u32 {
        if self.kernel.non_portable_cluster.load(Ordering::Relaxed) {
            MAX_NON_PORTABLE_CLUSTER_BLOCKS
        } else {
            MAX_PORTABLE_CLUSTER_BLOCKS
        }
    }

    /// The occupancy calculator's launch configuration (`cuOccupancyMaxPotentialBlockSize`):
    /// `(minimum grid size for full occupancy, block size)`, for `dynamic_shared_bytes` of
    /// dynamic shared memory per block and blocks of at most `block_size_limit` threads
    /// (`0` = no limit beyond the kernel's).
    ///
    /// On the CPU emulator, which has no occupancy, `(1, 256)` (or the limit, if lower).
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn suggested_launch_configuration(
        &self,
        dynamic_shared_bytes: usize,
        block_size_limit: BlockSize,
    ) -> CudaResult<(u32, u32)> {
        self.kernel.code.suggested_launch_configuration(
            &self.kernel.name,
            dynamic_shared_bytes,
            block_size_limit.x,
        )
    }

    /// How many blocks of `block_size` threads can be resident on one multiprocessor
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    ///
    /// # Errors
    /// [`CudaError::Driver`]; [`CudaError::NotOnEmulator`] on the emulator.
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_size: BlockSize,
        dynamic_shared_bytes: usize,
    ) -> CudaResult<u32> {
        self.kernel.code.max_active_blocks_per_multiprocessor(
            &self.kernel.name,
            u32::try_from(block_size.total()).unwrap_or(u32::MAX),
            dynamic_shared_bytes,
        )
    }

    /// How many clusters of `cluster` blocks (x, y, z: the shape
    /// [`TypedFunction::launch_ex`](crate::launch::TypedFunction::launch_ex) takes), each
    /// block of `block_size` threads with `dynamic_shared_bytes` of dynamic shared memory,
    /// can be resident on the device at once (`cuOccupancyMaxActiveClusters`; sm_90 and
    /// later). A persistent kernel launched with clusters sizes its grid with this: the
    /// blocks of a cluster are co-scheduled on one GPC (CUDA C++ Programming Guide, "Thread
    /// Block Clusters"), so where a GPC's free multiprocessors do not divide into whole
    /// clusters fewer than ⌊multiprocessors / blocks per cluster⌋ clusters fit, and a grid of
    /// more runs as a second wave.
    ///
    /// Above 48 KB of dynamic shared memory the kernel's limit is raised first
    /// ([`set_max_dynamic_shared_bytes`](Self::set_max_dynamic_shared_bytes)), as a launch
    /// would, so that the answer is for the launch that follows. The cluster size must be
    /// allowed for the kernel (at most 8 blocks, 16 after
    /// [`set_non_portable_cluster_size_allowed`](Self::set_non_portable_cluster_size_allowed)).
    /// A result of 0 means such a cluster cannot be resident at all (too much shared
    /// memory, registers or threads for the multiprocessors of one GPC). On the CPU
    /// emulator the answer is the host's cores: it runs one cluster per worker of its thread
    /// pool, whatever the cluster's size.
    ///
    /// # Errors
    /// [`CudaError::LaunchConfig`] naming the shape if a `cluster` dimension is 0 or it has
    /// more blocks than the kernel allows (checked first, on either backend);
    /// [`CudaError::SharedMemory`] if `dynamic_shared_bytes` exceeds the device's limit;
    /// [`CudaError::Driver`] naming the kernel and the configuration if the query fails (e.g.
    /// a GPU before sm_90).
    pub fn max_active_clusters(
        &self,
        block_size: BlockSize,
        dynamic_shared_bytes: u32,
        cluster: [u32; 3],
    ) -> CudaResult<u32> {
        let [x, y, z] = cluster;
        // The query's grid is one cluster.
        check_cluster((x, y, z), cluster, self.max_cluster_blocks())?;
        self.ensure_dynamic_shared(dynamic_shared_bytes)?;
        self.kernel.code.max_active_clusters(
            &self.kernel.name,
            block_size.into(),
            dynamic_shared_bytes,
            cluster,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cluster occupancy query is GPU-only: on the emulator it is a `NotOnEmulator`
    /// error naming it, before any shape check or driver call.
    #[test]
    fn cluster_occupancy_is_refused_on_the_emulator() {
        use crate::error::CudaError;
        use crate::{
            context::Context,
            module::{EntryPoint, ModuleImage},
        };
        use cust_core::ComputeCapability;
        let image: &'static ModuleImage = Box::leak(Box::new(ModuleImage {
            name: "test-kernels".into(),
            ptx_file: String::new(),
            ptx: "",
            ptx_arch: ComputeCapability::new(7, 0),
            cubins: vec![],
            entries: vec![EntryPoint {
                name: "clustered".into(),
                param_sizes: vec![8],
                resources: vec![],
                archs: vec![ComputeCapability::new(7, 0)],
            }],
            variants: vec![],
        }));
        let module = Module::from_image_in(&Context::emulator(), image).unwrap();
        let f = module.get_function("clustered").unwrap();
        assert!(f.is_emulator());
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(
            f.max_active_clusters(BlockSize::x(384), 200 * 1024, [2, 1, 1])
                .unwrap(),
            cores as u32
        );
        // The shape is still checked first.
        let err = f
            .max_active_clusters(BlockSize::x(384), 0, [0, 1, 1])
            .unwrap_err();
        assert!(matches!(err, CudaError::LaunchConfig(_)), "{err}");
    }
}
