//! Thread, block and grid indices and dimensions, global indices, and block-wide barriers.
//!
//! Each accessor reads one PTX special register (PTX ISA §10 "Special Registers": `%tid`,
//! `%ntid`, `%ctaid`, `%nctaid`); all are available on every compute capability.
//! On the host these functions panic: they only have meaning inside a kernel.

macro_rules! special_register {
    ($(#[$doc:meta])* $name:ident => $intrinsic:ident, $reg:literal) => {
        $(#[$doc])*
        #[doc = concat!("\n\nReads the PTX special register `", $reg, "`.")]
        #[inline(always)]
        #[must_use]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: reading a special register has no preconditions; the value is
                // non-negative and fits in u32 by the PTX ISA.
                unsafe { core::arch::nvptx::$intrinsic() as u32 }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                crate::gpu_only(concat!("thread::", stringify!($name)))
            }
        }
    };
}

special_register!(/// Index of this thread within its block, x coordinate.
    thread_idx_x => _thread_idx_x, "%tid.x");
special_register!(/// Index of this thread within its block, y coordinate.
    thread_idx_y => _thread_idx_y, "%tid.y");
special_register!(/// Index of this thread within its block, z coordinate.
    thread_idx_z => _thread_idx_z, "%tid.z");
special_register!(/// Number of threads per block, x dimension.
    block_dim_x => _block_dim_x, "%ntid.x");
special_register!(/// Number of threads per block, y dimension.
    block_dim_y => _block_dim_y, "%ntid.y");
special_register!(/// Number of threads per block, z dimension.
    block_dim_z => _block_dim_z, "%ntid.z");
special_register!(/// Index of this block within the grid, x coordinate.
    block_idx_x => _block_idx_x, "%ctaid.x");
special_register!(/// Index of this block within the grid, y coordinate.
    block_idx_y => _block_idx_y, "%ctaid.y");
special_register!(/// Index of this block within the grid, z coordinate.
    block_idx_z => _block_idx_z, "%ctaid.z");
special_register!(/// Number of blocks in the grid, x dimension.
    grid_dim_x => _grid_dim_x, "%nctaid.x");
special_register!(/// Number of blocks in the grid, y dimension.
    grid_dim_y => _grid_dim_y, "%nctaid.y");
special_register!(/// Number of blocks in the grid, z dimension.
    grid_dim_z => _grid_dim_z, "%nctaid.z");

/// This thread's index within its block as a vector `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn thread_idx() -> glam::UVec3 {
    glam::UVec3::new(thread_idx_x(), thread_idx_y(), thread_idx_z())
}

/// The block's dimensions in threads `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn block_dim() -> glam::UVec3 {
    glam::UVec3::new(block_dim_x(), block_dim_y(), block_dim_z())
}

/// This block's index within the grid `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn block_idx() -> glam::UVec3 {
    glam::UVec3::new(block_idx_x(), block_idx_y(), block_idx_z())
}

/// The grid's dimensions in blocks `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn grid_dim() -> glam::UVec3 {
    glam::UVec3::new(grid_dim_x(), grid_dim_y(), grid_dim_z())
}

/// Global 1D index of this thread: `block_idx_x * block_dim_x + thread_idx_x`, computed in
/// `usize` so that grids of more than 2^32 threads index correctly.
#[inline(always)]
#[must_use]
pub fn index_1d() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

/// Global 2D index `(x, y)` of this thread in a 2D grid of 2D blocks:
/// `x = block_idx_x * block_dim_x + thread_idx_x`, likewise for `y`.
///
/// For images, `x` is the column and `y` the row (row 0 at the top).
#[inline(always)]
#[must_use]
pub fn index_2d() -> (u32, u32) {
    (
        block_idx_x() * block_dim_x() + thread_idx_x(),
        block_idx_y() * block_dim_y() + thread_idx_y(),
    )
}

/// Block-wide barrier: waits until every thread of the block has reached this call, and makes
/// their earlier shared- and global-memory writes visible to each other (PTX `bar.sync 0`,
/// CUDA C `__syncthreads()`).
///
/// Every non-exited thread of the block must reach the *same* call: calling it in divergent
/// code (where some threads of the block skip it) deadlocks or gives undefined results.
#[inline(always)]
pub fn sync_threads() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `bar.sync 0` has no memory-safety preconditions; misuse (divergence) can hang
    // the kernel but cannot corrupt memory.
    unsafe {
        core::arch::nvptx::_syncthreads()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    crate::gpu_only("thread::sync_threads")
}
