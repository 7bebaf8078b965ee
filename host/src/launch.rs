//! Launch configurations for ferrocuda's kernels. Launching itself is `cust`'s typed launch
//! of a kernel resolved once ([`mod@cust::launch`]): `gpu.module().kernel(handle)?` when its
//! owner is built, then `function.launch(gpu.stream(), cfg, args)` per launch.

pub use cust::function::LaunchConfig;
pub use cust::launch::{Launch, LaunchUnchecked};

/// [`LaunchConfig::for_num_elems`]: a 1-D launch, one thread per element.
///
/// # Errors
/// As [`LaunchConfig::for_num_elems`].
pub fn for_num_elems(n: usize, block: u32) -> Result<LaunchConfig, crate::gpu::GpuError> {
    LaunchConfig::for_num_elems(n, block)
}

/// A 2D launch covering a `width × height` image with 16×16 blocks (256 threads, a good
/// default for per-pixel kernels).
pub fn for_image(width: u32, height: u32) -> LaunchConfig {
    const BLOCK: u32 = 16;
    // Images are at most 65536 rows (the CLI's limit): 4096 blocks in y, within 65535.
    LaunchConfig::new(
        (width.div_ceil(BLOCK), height.div_ceil(BLOCK)),
        (BLOCK, BLOCK),
        0,
    )
}
