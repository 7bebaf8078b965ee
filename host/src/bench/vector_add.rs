//! `ferrocuda vector-add`'s measurement: the library's tuned `add` (the kernel `ferrocuda
//! bench` times as `add f32`) against a device-to-device copy of the same length and against
//! the naive `vector_add_f32` (one element per thread, the textbook kernel), all timed with
//! [`crate::timing`].

use crate::gpu::{Gpu, GpuError};
use crate::timing::{Repeat, Stats};
use cust::{error::GpuContext, function::LaunchConfig, memory::AsyncCopyDestination};

/// Result of [`vector_add`].
#[derive(Clone, Debug)]
pub struct VectorAddRun {
    /// `c = a + b` from the tuned `add`, copied back to the host.
    pub c: Vec<f32>,
    /// The tuned `add` ([`crate::vector::add_dev`]).
    pub add: Stats,
    /// The naive kernel, `vector_add_f32`: one element per thread, 1024 threads per block.
    pub naive: Stats,
    /// A device-to-device copy of `a` (same length), the bandwidth reference.
    pub memcpy: Stats,
}

impl VectorAddRun {
    /// Bandwidth of a kernel with `stats` in bytes per second at its median time: 3 · 4
    /// bytes per element (read `a` and `b`, write `c`), as STREAM counts.
    pub fn add_bytes_per_s(&self, stats: &Stats) -> f64 {
        (12 * self.c.len()) as f64 / (stats.median_ms * 1e-3)
    }

    /// Bandwidth of the device-to-device copy at its median time: 2 · 4 bytes per element
    /// (read and write).
    pub fn memcpy_bytes_per_s(&self) -> f64 {
        (8 * self.c.len()) as f64 / (self.memcpy.median_ms * 1e-3)
    }
}

/// `c = a + b` on the GPU with the tuned `add`, timed over `reps` runs after one warm-up,
/// with the naive kernel and a device-to-device copy of the same length timed the same way.
///
/// # Errors
/// [`GpuError::OutOfMemory`] if the four buffers do not fit; [`GpuError::Launch`] or
/// [`GpuError::Driver`] on CUDA failures.
///
/// # Panics
/// If `a` and `b` differ in length or are empty, or `reps` is 0.
pub fn vector_add(gpu: &Gpu, a: &[f32], b: &[f32], reps: u32) -> Result<VectorAddRun, GpuError> {
    assert_eq!(
        a.len(),
        b.len(),
        "vector_add: a and b must have the same length"
    );
    assert!(!a.is_empty(), "vector_add: a and b must not be empty");
    assert!(reps > 0, "vector_add: reps must be at least 1");
    let n = a.len();
    gpu.check_free("vector add", 4 * 4 * n)?;
    let repeat = Repeat::new(1, reps);
    let (ctx, stream) = (gpu.context(), gpu.stream());
    let a_dev = crate::vector::upload(gpu, a)?;
    let b_dev = crate::vector::upload(gpu, b)?;

    // The naive kernel first, into a buffer of its own.
    let mut naive_c = crate::vector::poisoned::<f32>(gpu, n)?;
    let cfg = LaunchConfig::for_num_elems(n, 1024)?;
    // Resolved once, outside the timed launches.
    let naive_add = gpu.module().kernel(kernels::vector::vector_add_f32)?;
    let naive = repeat.events(ctx, stream, || {
        // SAFETY: `vector_add_f32(a: &[f32], b: &[f32], c: *mut f32)`: `c` holds n
        // elements and is borrowed mutably, so nothing else accesses it.
        unsafe { naive_add.launch_unchecked(gpu.stream(), cfg, (&a_dev, &b_dev, &mut naive_c)) }
    })?;
    drop(naive_c);

    let mut c_dev = crate::vector::poisoned::<f32>(gpu, n)?;
    let add = repeat.events(ctx, stream, || {
        crate::vector::add_dev(gpu, &a_dev, &b_dev, &mut c_dev)
    })?;

    let mut copy = crate::vector::poisoned::<f32>(gpu, n)?;
    let memcpy = repeat.events(ctx, stream, || {
        copy.async_copy_from(&a_dev, stream)
            .gpu_context("device-to-device copy")
    })?;
    let c = c_dev.as_host_vec().gpu_context("copying c to the host")?;
    Ok(VectorAddRun {
        c,
        add,
        naive,
        memcpy,
    })
}
