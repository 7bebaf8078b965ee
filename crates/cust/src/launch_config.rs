//! Launch configurations: [`GridSize`], [`BlockSize`], [`LaunchConfig`], the hardware's
//! launch limits, and the checks every launch path and both backends apply before a launch
//! (`hardware_refuses`, `check_dynamic_shared`, `check_cluster`). Public as
//! `cust::function::*` (cust 0.3's module); kept apart from
//! [`Function`](crate::function::Function) so that the backends, which check launches
//! against these limits, import nothing above them.

use crate::error::{CudaError, CudaResult};

/// Dynamic shared memory a block may use without opting in, bytes: 48 KB on every GPU
/// (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability": above
/// 48 KB "kernels must use dynamic shared memory and require an explicit opt-in").
pub const DEFAULT_MAX_DYNAMIC_SHARED_BYTES: u32 = 48 * 1024;

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

/// Whether `requested` bytes of dynamic shared memory fit beside `static_bytes` of static
/// shared memory under the device's opt-in limit `limit` (bytes per block).
///
/// # Errors
/// [`CudaError::SharedMemory`] naming the kernel, the request and the limit.
pub(crate) fn check_dynamic_shared(
    kernel: &str,
    requested: u32,
    static_bytes: u32,
    limit: u32,
) -> CudaResult<()> {
    if u64::from(requested) + u64::from(static_bytes) > u64::from(limit) {
        return Err(CudaError::SharedMemory {
            kernel: kernel.to_owned(),
            requested_bytes: requested,
            static_bytes,
            limit_bytes: limit,
        });
    }
    Ok(())
}

/// Checks a cluster shape against a grid (both in blocks) before a cluster launch or a
/// cluster occupancy query.
///
/// # Errors
/// [`CudaError::LaunchConfig`] naming the values: a cluster dimension of 0, a grid dimension
/// that is not a multiple of the cluster's, more than `max_blocks` blocks in the cluster.
pub(crate) fn check_cluster(
    grid: (u32, u32, u32),
    cluster: [u32; 3],
    max_blocks: u32,
) -> CudaResult<()> {
    let grid_dims = [grid.0, grid.1, grid.2];
    if cluster.contains(&0) {
        return Err(CudaError::LaunchConfig(format!(
            "cluster {cluster:?}: every dimension must be at least 1"
        )));
    }
    for ((axis, g), c) in ["x", "y", "z"].into_iter().zip(grid_dims).zip(cluster) {
        if !g.is_multiple_of(c) {
            return Err(CudaError::LaunchConfig(format!(
                "grid {grid_dims:?} is not divisible by cluster {cluster:?}: in {axis}, {g} \
                 blocks is not a multiple of {c}"
            )));
        }
    }
    let blocks = cluster.iter().map(|&c| u64::from(c)).product::<u64>();
    if blocks > u64::from(max_blocks) {
        return Err(CudaError::LaunchConfig(format!(
            "cluster {cluster:?} has {blocks} blocks, more than the {max_blocks} allowed (8 \
             portably; up to 16 after `Function::set_non_portable_cluster_size_allowed(true)`)"
        )));
    }
    Ok(())
}

/// A launch configuration: grid and block dimensions and dynamic shared memory (the
/// arguments of `cuLaunchKernel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Grid dimensions `(x, y, z)`, in blocks.
    pub grid_dim: (u32, u32, u32),
    /// Block dimensions `(x, y, z)`, in threads.
    pub block_dim: (u32, u32, u32),
    /// Dynamic shared memory per block, bytes.
    pub shared_mem_bytes: u32,
}

/// Threads per block at most, on every GPU since compute capability 2.0 (CUDA C++
/// Programming Guide, "Technical Specifications per Compute Capability").
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Grid x dimension at most, in blocks (same table): 2^31 − 1.
pub const MAX_GRID_X: u32 = i32::MAX as u32;
/// Grid y and z dimensions at most, in blocks (same table).
pub const MAX_GRID_YZ: u32 = 65_535;
/// Block x and y dimensions at most, in threads (same table: "Maximum x- or y-dimensionality
/// of a block": 1024).
pub const MAX_BLOCK_XY: u32 = 1024;
/// Block z dimension at most, in threads (same table: "Maximum z-dimension of a block": 64).
pub const MAX_BLOCK_Z: u32 = 64;
/// Shared memory per block at most on compute capability 9.0, with the opt-in, bytes: 227 KB
/// (same table, "Maximum amount of shared memory per thread block": 227 KB for 9.0). The
/// driver's `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN` on an H100, and the CPU
/// emulator's, which stands for a device of compute capability 9.0.
pub const SM90_MAX_SHARED_BYTES_PER_BLOCK_OPTIN: u32 = 227 * 1024;

/// Why the hardware refuses to launch `grid` blocks of `block` threads (the limits of
/// "Technical Specifications per Compute Capability", the same for every compute capability
/// since 2.0 but for grid x, 2^31 − 1 since 3.0), if it does: a zero dimension, more than
/// 1024 threads per block, a block dimension or a grid dimension over its limit. The driver
/// reports each as `CUDA_ERROR_INVALID_VALUE`; the CPU emulator applies this rule to match.
pub(crate) fn hardware_refuses(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Option<String> {
    let (g, b) = ([grid.0, grid.1, grid.2], [block.0, block.1, block.2]);
    if g.contains(&0) || b.contains(&0) {
        return Some("every dimension must be at least 1".into());
    }
    let threads = b.iter().map(|&d| u64::from(d)).product::<u64>();
    if threads > u64::from(MAX_THREADS_PER_BLOCK) {
        return Some(format!(
            "{threads} threads per block, more than {MAX_THREADS_PER_BLOCK}"
        ));
    }
    for (axis, (&d, max)) in
        ["x", "y", "z"]
            .into_iter()
            .zip(b.iter().zip([MAX_BLOCK_XY, MAX_BLOCK_XY, MAX_BLOCK_Z]))
    {
        if d > max {
            return Some(format!("block {axis} is {d}, more than {max}"));
        }
    }
    for (axis, (&d, max)) in
        ["x", "y", "z"]
            .into_iter()
            .zip(g.iter().zip([MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ]))
    {
        if d > max {
            return Some(format!("grid {axis} is {d} blocks, more than {max}"));
        }
    }
    None
}

/// Blocks per thread block cluster at most, portably (CUDA C++ Programming Guide, "Thread
/// Block Clusters": "a maximum of 8 thread blocks in a cluster is supported as a portable
/// cluster size").
pub const MAX_PORTABLE_CLUSTER_BLOCKS: u32 = 8;
/// Blocks per cluster at most with the non-portable opt-in
/// ([`Function::set_non_portable_cluster_size_allowed`][allow]; 16 on H100/H200, same
/// section).
///
/// [allow]: crate::function::Function::set_non_portable_cluster_size_allowed
pub const MAX_NON_PORTABLE_CLUSTER_BLOCKS: u32 = 16;

/// The launch attributes (`CUlaunchAttribute`s of `cuLaunchKernelEx`) that
/// [`TypedFunction::launch_ex_unchecked`][ex] sets: blocks per thread block cluster and
/// programmatic stream serialization. [`LaunchAttributes::new`] (also `Default`) sets
/// neither; a cluster shape `[x, y, z]` converts into attributes with only that cluster.
///
/// ```
/// use cust::function::LaunchAttributes;
/// let plain = LaunchAttributes::new();
/// assert_eq!(plain.cluster_dims(), [1, 1, 1]);
/// let pdl = LaunchAttributes::from([2, 1, 1]).programmatic_stream_serialization(true);
/// assert_eq!(pdl.cluster_dims(), [2, 1, 1]);
/// assert!(pdl.programmatic_stream_serialization_allowed());
/// ```
///
/// [ex]: crate::launch::TypedFunction::launch_ex_unchecked
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchAttributes {
    cluster: [u32; 3],
    programmatic_stream_serialization: bool,
}

impl Default for LaunchAttributes {
    fn default() -> Self {
        Self::new()
    }
}

impl From<[u32; 3]> for LaunchAttributes {
    /// Attributes with clusters of `cluster` blocks and nothing else.
    fn from(cluster: [u32; 3]) -> Self {
        Self::new().cluster(cluster)
    }
}

impl LaunchAttributes {
    /// No attribute: clusters of one block (no cluster attribute) and stream serialization
    /// as for any launch.
    pub const fn new() -> Self {
        Self {
            cluster: [1, 1, 1],
            programmatic_stream_serialization: false,
        }
    }

    /// Launches as a grid of thread block clusters of `cluster` blocks in (x, y, z)
    /// (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`; sm_90 and later). Default `[1, 1, 1]`: no
    /// cluster attribute (any GPU).
    #[must_use]
    pub const fn cluster(mut self, cluster: [u32; 3]) -> Self {
        self.cluster = cluster;
        self
    }

    /// Allows *programmatic dependent launch*: with `true` the launch carries
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` with
    /// `programmaticStreamSerializationAllowed = 1` (CUDA C++ Programming Guide,
    /// "Programmatic Dependent Launch and Synchronization"; compute capability 9.0 and
    /// later). Default `false`.
    ///
    /// This kernel (the *secondary*) may then start before the kernel queued just before it
    /// on the same stream (the *primary*) has completed: as soon as every block of the
    /// primary has called `cuda_std::thread::trigger_programmatic_launch_completion` or
    /// exited. Until the secondary's threads call `cuda_std::thread::grid_dependency_sync`,
    /// nothing orders them after the primary: they must not read what the primary writes,
    /// nor write what it reads or writes, before that call. A secondary that never calls it
    /// still starts early; it is then up to the kernel that its accesses do not conflict.
    /// Work queued after the secondary without the attribute waits for the secondary as
    /// usual.
    ///
    /// The CPU emulator ignores the attribute: its streams run each launch to completion
    /// in the order queued, so the secondary starts after the primary completed, and
    /// `grid_dependency_sync` returns at once.
    #[must_use]
    pub const fn programmatic_stream_serialization(mut self, allowed: bool) -> Self {
        self.programmatic_stream_serialization = allowed;
        self
    }

    /// Blocks per cluster in (x, y, z): `[1, 1, 1]` unless [`cluster`](Self::cluster) set it.
    pub const fn cluster_dims(&self) -> [u32; 3] {
        self.cluster
    }

    /// Whether the launch allows programmatic stream serialization
    /// ([`programmatic_stream_serialization`](Self::programmatic_stream_serialization)).
    pub const fn programmatic_stream_serialization_allowed(&self) -> bool {
        self.programmatic_stream_serialization
    }
}

impl LaunchConfig {
    /// A configuration from cust-style dimensions (anything that converts into
    /// [`GridSize`] / [`BlockSize`]) and `shared_mem_bytes` of dynamic shared memory.
    pub fn new(
        grid: impl Into<GridSize>,
        block: impl Into<BlockSize>,
        shared_mem_bytes: u32,
    ) -> Self {
        Self {
            grid_dim: grid.into().into(),
            block_dim: block.into().into(),
            shared_mem_bytes,
        }
    }

    /// A 1-D launch covering `n` elements, one thread per element, `block` threads per
    /// block; at least one block.
    ///
    /// # Errors
    /// [`CudaError::LaunchConfig`] naming the value if `block` is not a multiple of 32 from
    /// 32 to 1024, or `n` needs more than 2^31 − 1 blocks.
    pub fn for_num_elems(n: usize, block: u32) -> CudaResult<Self> {
        if !(32..=MAX_THREADS_PER_BLOCK).contains(&block) || !block.is_multiple_of(32) {
            return Err(CudaError::LaunchConfig(format!(
                "block size {block} is not allowed: it must be a multiple of 32 from 32 to \
                 {MAX_THREADS_PER_BLOCK}"
            )));
        }
        let blocks = n.div_ceil(block as usize).max(1);
        let grid = u32::try_from(blocks)
            .ok()
            .filter(|&g| g <= MAX_GRID_X)
            .ok_or_else(|| {
                CudaError::LaunchConfig(format!(
                    "{n} elements need {blocks} blocks of {block}, more than the \
                     {MAX_GRID_X} allowed"
                ))
            })?;
        Ok(Self::new(grid, block, 0))
    }

    /// A 2-D launch covering a `width × height` grid of elements (e.g. an image's pixels)
    /// with `block = (bx, by)` threads per block, one thread per element.
    ///
    /// # Errors
    /// [`CudaError::LaunchConfig`] naming the value if a block dimension is 0, the block has
    /// more than 1024 threads, or the grid needs more than 2^31 − 1 blocks in x or 65535 in y.
    pub fn for_2d(width: u32, height: u32, block: (u32, u32)) -> CudaResult<Self> {
        let (bx, by) = block;
        if bx == 0 || by == 0 || bx * by > MAX_THREADS_PER_BLOCK {
            return Err(CudaError::LaunchConfig(format!(
                "block {bx}×{by} is not allowed: each side at least 1, at most \
                 {MAX_THREADS_PER_BLOCK} threads in all"
            )));
        }
        let (gx, gy) = (width.div_ceil(bx).max(1), height.div_ceil(by).max(1));
        if gx > MAX_GRID_X || gy > MAX_GRID_YZ {
            return Err(CudaError::LaunchConfig(format!(
                "{width}×{height} elements need a grid of {gx}×{gy} blocks of {bx}×{by}; at \
                 most {MAX_GRID_X}×{MAX_GRID_YZ} are allowed"
            )));
        }
        Ok(Self::new((gx, gy), (bx, by), 0))
    }

    /// The same configuration with `bytes` of dynamic shared memory per block.
    #[must_use]
    pub fn with_shared_mem_bytes(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hardware_limits_refuse_exactly_the_configurations_over_them() {
        for (grid, block) in [
            ((1, 1, 1), (1024, 1, 1)),
            ((1, 1, 1), (1, 1024, 1)),
            ((1, 1, 1), (16, 1, 64)),
            ((i32::MAX as u32, 65_535, 65_535), (32, 32, 1)),
        ] {
            assert_eq!(hardware_refuses(grid, block), None, "{grid:?} {block:?}");
        }
        for (grid, block, why) in [
            (
                (1, 1, 1),
                (2048, 1, 1),
                "2048 threads per block, more than 1024",
            ),
            ((1, 1, 1), (32, 32, 2), "2048 threads per block"),
            ((1, 1, 1), (1, 1, 65), "block z is 65, more than 64"),
            ((1, 1, 1), (0, 1, 1), "at least 1"),
            ((0, 1, 1), (1, 1, 1), "at least 1"),
            ((1 << 31, 1, 1), (1, 1, 1), "grid x is 2147483648 blocks"),
            (
                (1, 65_536, 1),
                (1, 1, 1),
                "grid y is 65536 blocks, more than 65535",
            ),
            ((1, 1, 65_536), (1, 1, 1), "grid z is 65536 blocks"),
        ] {
            let reason = hardware_refuses(grid, block).unwrap_or_default();
            assert!(reason.contains(why), "{grid:?} {block:?}: {reason:?}");
        }
    }

    #[test]
    fn dynamic_shared_memory_over_the_limit_is_refused_naming_both() {
        // sm_90: 227 KB opt-in limit (232448 bytes).
        assert!(check_dynamic_shared("k", 200 * 1024, 0, 232_448).is_ok());
        assert!(check_dynamic_shared("k", 232_448, 0, 232_448).is_ok());
        let err = check_dynamic_shared("gemm", 232_448, 16, 232_448).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`gemm`")
                && text.contains("232448 bytes of dynamic")
                && text.contains("plus 16 bytes static")
                && text.contains("allows 232448 bytes"),
            "{text}"
        );
        assert!(check_dynamic_shared("k", u32::MAX, u32::MAX, u32::MAX).is_err());
    }

    #[test]
    fn cluster_shapes_are_checked_before_the_launch_naming_the_values() {
        assert!(check_cluster((132, 1, 1), [2, 1, 1], 8).is_ok());
        assert!(check_cluster((16, 8, 2), [4, 2, 1], 8).is_ok());
        assert!(check_cluster((16, 1, 1), [16, 1, 1], 16).is_ok());
        let err = check_cluster((133, 1, 1), [2, 1, 1], 8)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("grid [133, 1, 1] is not divisible by cluster [2, 1, 1]")
                && err.contains("in x, 133 blocks is not a multiple of 2"),
            "{err}"
        );
        let err = check_cluster((4, 6, 1), [1, 4, 1], 8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("in y, 6 blocks"), "{err}");
        let err = check_cluster((32, 1, 1), [16, 1, 1], 8)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cluster [16, 1, 1] has 16 blocks, more than the 8 allowed"),
            "{err}"
        );
        let err = check_cluster((64, 2, 1), [16, 2, 1], 16)
            .unwrap_err()
            .to_string();
        assert!(err.contains("32 blocks, more than the 16"), "{err}");
        let err = check_cluster((8, 1, 1), [0, 1, 1], 8)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cluster [0, 1, 1]: every dimension"), "{err}");
    }

    #[test]
    fn one_dimensional_configurations_cover_every_element() {
        let cfg = LaunchConfig::for_num_elems(1000, 256).unwrap();
        assert_eq!(cfg.grid_dim, (4, 1, 1));
        assert_eq!(cfg.block_dim, (256, 1, 1));
        assert_eq!(
            LaunchConfig::for_num_elems(0, 32).unwrap().grid_dim,
            (1, 1, 1)
        );
        let err = LaunchConfig::for_num_elems(10, 100)
            .unwrap_err()
            .to_string();
        assert!(err.contains("block size 100"), "{err}");
        let err = LaunchConfig::for_num_elems(usize::MAX, 32)
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than the 2147483647"), "{err}");
    }

    #[test]
    fn two_dimensional_configurations_cover_every_element() {
        let cfg = LaunchConfig::for_2d(1920, 1080, (16, 16)).unwrap();
        assert_eq!(cfg.grid_dim, (120, 68, 1));
        assert_eq!(cfg.block_dim, (16, 16, 1));
        let err = LaunchConfig::for_2d(10, 10, (64, 32))
            .unwrap_err()
            .to_string();
        assert!(err.contains("block 64×32"), "{err}");
        let err = LaunchConfig::for_2d(16, 16 * 70_000, (16, 16))
            .unwrap_err()
            .to_string();
        assert!(err.contains("65535"), "{err}");
    }
}
