//! Launch configurations for ferrocuda's kernels. Launching itself is `cust`'s typed launch:
//! `kernel.launch(gpu.module(), gpu.stream(), cfg, args)` ([`mod@cust::launch`]).

use cudarc::driver::LaunchConfig;
pub use cust::launch::{Launch, LaunchUnchecked};

use crate::gpu::GpuError;

/// A 1D launch configuration for `n` elements, one thread per element, `block` threads per
/// block (a multiple of 32, at most 1024).
///
/// # Errors
/// [`GpuError::LaunchConfig`] if `block` is not in 32..=1024 or a multiple of 32, or `n`
/// needs more than 2^31 − 1 blocks (the grid x limit, CUDA C Programming Guide, "Technical
/// Specifications per Compute Capability").
pub fn for_num_elems(n: usize, block: u32) -> Result<LaunchConfig, GpuError> {
    if !(32..=1024).contains(&block) || !block.is_multiple_of(32) {
        return Err(GpuError::LaunchConfig(format!(
            "block size {block} is not allowed: it must be a multiple of 32 from 32 to 1024"
        )));
    }
    let blocks = n.div_ceil(block as usize).max(1);
    let grid = u32::try_from(blocks)
        .ok()
        .filter(|&g| g <= i32::MAX as u32)
        .ok_or_else(|| {
            GpuError::LaunchConfig(format!(
                "{n} elements need {blocks} blocks of {block}, more than the 2^31 - 1 allowed"
            ))
        })?;
    Ok(LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// A 2D launch covering a `width × height` image with 16×16 blocks (256 threads, a good
/// default for per-pixel kernels).
pub fn for_image(width: u32, height: u32) -> LaunchConfig {
    const BLOCK: u32 = 16;
    LaunchConfig {
        grid_dim: (width.div_ceil(BLOCK), height.div_ceil(BLOCK), 1),
        block_dim: (BLOCK, BLOCK, 1),
        shared_mem_bytes: 0,
    }
}
