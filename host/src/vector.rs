//! Vector workloads. For now: `c = a + b` in f32, on the GPU and the CPU.

use crate::gpu::{Gpu, GpuError, SliceParam, elapsed_ms};
use cudarc::driver::{LaunchConfig, PushKernelArg};
use rayon::prelude::*;
use std::time::Duration;

/// `a[i] + b[i]` for every `i` on the CPU (rayon); the reference for the GPU result.
///
/// # Panics
/// If `a` and `b` differ in length.
pub fn add_cpu(a: &[f32], b: &[f32]) -> Vec<f32> {
    assert_eq!(
        a.len(),
        b.len(),
        "add_cpu: a and b must have the same length"
    );
    a.par_iter().zip(b).map(|(x, y)| x + y).collect()
}

/// Result of a GPU vector add.
#[derive(Clone, Debug)]
pub struct VectorAddRun {
    /// `c = a + b`, copied back to the host.
    pub c: Vec<f32>,
    /// Median kernel time over the timed repetitions (CUDA events).
    pub kernel: Duration,
    /// Median time of a device-to-device copy of `a` (same length), the bandwidth reference.
    pub memcpy: Duration,
}

impl VectorAddRun {
    /// Effective bandwidth of the kernel in bytes per second: 3 · 4 bytes per element (read
    /// `a` and `b`, write `c`), as STREAM counts.
    pub fn kernel_bytes_per_s(&self) -> f64 {
        (12 * self.c.len()) as f64 / self.kernel.as_secs_f64()
    }

    /// Bandwidth of the device-to-device copy: 2 · 4 bytes per element (read and write).
    pub fn memcpy_bytes_per_s(&self) -> f64 {
        (8 * self.c.len()) as f64 / self.memcpy.as_secs_f64()
    }
}

impl Gpu {
    /// `c = a + b` on the GPU with the `vector_add_f32` kernel (one element per thread),
    /// timed over `reps` launches after one warm-up, with a device-to-device copy of the same
    /// length timed the same way.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] if the three buffers do not fit; [`GpuError::Launch`] or
    /// [`GpuError::Driver`] on CUDA failures.
    ///
    /// # Panics
    /// If `a` and `b` differ in length or `reps` is 0.
    pub fn vector_add(&self, a: &[f32], b: &[f32], reps: u32) -> Result<VectorAddRun, GpuError> {
        assert_eq!(
            a.len(),
            b.len(),
            "vector_add: a and b must have the same length"
        );
        assert!(reps > 0, "vector_add: reps must be at least 1");
        let n = a.len();
        self.check_free("vector add", 3 * 4 * n)?;
        let stream = self.stream();
        let a_dev = stream
            .clone_htod(a)
            .map_err(GpuError::driver("copying a to the GPU"))?;
        let b_dev = stream
            .clone_htod(b)
            .map_err(GpuError::driver("copying b to the GPU"))?;
        let mut c_dev = stream
            .alloc_zeros::<f32>(n)
            .map_err(GpuError::driver("allocating c"))?;
        let cfg = LaunchConfig::for_num_elems(u32::try_from(n).unwrap_or(u32::MAX));
        let cfg = LaunchConfig {
            // `for_num_elems` takes a u32; compute the grid for larger n ourselves.
            grid_dim: (u32::try_from(n.div_ceil(1024)).unwrap_or(u32::MAX), 1, 1),
            block_dim: (1024, 1, 1),
            ..cfg
        };
        let a_param = SliceParam::new(&a_dev, stream);
        let b_param = SliceParam::new(&b_dev, stream);
        let mut kernel_ms = Vec::new();
        for rep in 0..=reps {
            let mut args = self.launch_builder("vector_add_f32");
            args.arg(&a_param).arg(&b_param).arg(&mut c_dev);
            let start = self.record_event()?;
            // SAFETY: matches `kernels::vector_add_f32(a: &[f32], b: &[f32], c: *mut f32)`;
            // `c` holds n elements; nothing else accesses it during the launch.
            unsafe { self.launch("vector_add_f32", cfg, args)? };
            let end = self.record_event()?;
            self.sync_after("vector_add_f32", cfg)?;
            if rep > 0 {
                kernel_ms.push(elapsed_ms(&start, &end)?);
            }
        }
        let mut copy = stream
            .alloc_zeros::<f32>(n)
            .map_err(GpuError::driver("allocating the copy buffer"))?;
        let mut copy_ms = Vec::new();
        for rep in 0..=reps {
            let start = self.record_event()?;
            stream
                .memcpy_dtod(&a_dev, &mut copy)
                .map_err(GpuError::driver("device-to-device copy"))?;
            let end = self.record_event()?;
            stream
                .synchronize()
                .map_err(GpuError::driver("device-to-device copy"))?;
            if rep > 0 {
                copy_ms.push(elapsed_ms(&start, &end)?);
            }
        }
        let c = stream
            .clone_dtoh(&c_dev)
            .map_err(GpuError::driver("copying c to the host"))?;
        Ok(VectorAddRun {
            c,
            kernel: median_duration(kernel_ms),
            memcpy: median_duration(copy_ms),
        })
    }
}

/// The median of millisecond samples as a `Duration` (the upper median for even counts).
fn median_duration(mut ms: Vec<f32>) -> Duration {
    ms.sort_by(f32::total_cmp);
    Duration::from_secs_f64(f64::from(ms[ms.len() / 2]) / 1e3)
}
