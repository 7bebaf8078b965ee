//! Buffers made before a pool render ([`Prepared`]): [`GpuPool::prepare`] makes every GPU's
//! [`RenderBuffers`] in parallel, [`GpuPool::prepare_beside`] does so on another thread
//! while the caller does its host work (a deep view's reference orbit and BLA table), and
//! [`GpuPool::render_prepared`] renders with them.
//!
//! Made beside the host work, the buffers' setup leaves the render: 0.6–0.8 ms on an H200
//! for a 1920×1080 deep render whose kernels take 2.2 ms (the device buffers by `cuMemAlloc`,
//! outside the stream-ordered pool, whose setup would cost a process's first allocation
//! 7.7–11.8 ms: [`RenderBuffers::new`]; and a direct copy back's host colours, paged in on a
//! thread of their own). The buffers' sizes depend only on the bands' shape
//! ([`BufferSize`]), not on the job, so they can be made before the job is known.

use super::GpuPool;
use crate::{
    gpu::GpuError,
    mandelbrot::{BufferSize, RenderBuffers},
};
use std::time::{Duration, Instant};

/// Every GPU's buffers for a render of one [`BufferSize`], made beforehand
/// ([`GpuPool::prepare`]) and taken by [`GpuPool::render_prepared`].
#[derive(Debug)]
pub struct Prepared {
    pub(super) size: BufferSize,
    /// One per GPU, in pool order.
    pub(super) gpus: Vec<PreparedGpu>,
    /// How long the caller waited for them after its own work ([`GpuPool::prepare_beside`]).
    pub(super) waited: Duration,
}

/// One GPU's prepared buffers, or why they could not be made, and the time it took.
#[derive(Debug)]
pub(super) struct PreparedGpu {
    pub(super) buffers: Result<RenderBuffers, GpuError>,
    pub(super) took: Duration,
}

impl Prepared {
    /// What the buffers are sized for.
    pub fn size(&self) -> BufferSize {
        self.size
    }

    /// Per GPU, in pool order: whether its buffers were made (else the error
    /// [`GpuPool::render_prepared`] reports for it if the render uses them) and how long
    /// that took.
    pub fn outcomes(&self) -> impl Iterator<Item = (Result<(), &GpuError>, Duration)> {
        self.gpus
            .iter()
            .map(|g| (g.buffers.as_ref().map(|_| ()), g.took))
    }

    /// How long [`GpuPool::prepare_beside`] waited for the buffers after the host work
    /// ended (zero after [`GpuPool::prepare`]).
    pub fn waited(&self) -> Duration {
        self.waited
    }
}

impl GpuPool {
    /// Makes every GPU's buffers for a render of `size` ([`RenderBuffers::new`], one thread
    /// per GPU, in parallel) and returns them with each GPU's outcome and time. It does not
    /// take the GPUs' leases (allocating is safe beside another thread's render on the same
    /// GPU); the buffers hold their GPU's memory until they are rendered with or dropped.
    ///
    /// An allocation that fails is kept as that GPU's error, not returned: a render whose
    /// size matches reports it as that GPU's setup failure, as if it had allocated then.
    pub fn prepare(&self, size: BufferSize) -> Prepared {
        let gpus = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.len())
                .map(|index| {
                    let gpu = self.gpus.peek(index);
                    scope.spawn(move || {
                        let started = Instant::now();
                        let buffers = RenderBuffers::new(gpu, size);
                        PreparedGpu {
                            buffers,
                            took: started.elapsed(),
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        Prepared {
            size,
            gpus,
            waited: Duration::ZERO,
        }
    }

    /// [`GpuPool::prepare`] on another thread while `host_work` runs on this one; returns
    /// both once both are done, with the time this thread waited for the buffers after
    /// `host_work` returned ([`Prepared::waited`], counted into the render's wall by
    /// [`GpuPool::render_prepared`]). The preparation takes about a millisecond and is always
    /// joined, also when `host_work` fails or panics, so it never outlives this call.
    pub fn prepare_beside<R>(
        &self,
        size: BufferSize,
        host_work: impl FnOnce() -> R,
    ) -> (R, Prepared) {
        std::thread::scope(|scope| {
            let preparing = scope.spawn(|| self.prepare(size));
            let result = host_work();
            let started = Instant::now();
            let mut prepared = preparing
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            prepared.waited = started.elapsed();
            (result, prepared)
        })
    }
}
