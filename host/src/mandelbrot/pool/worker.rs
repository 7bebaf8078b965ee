//! One render thread of a pool render ([`Worker`]): it waits for a GPU of the pool, sets up
//! its [`GpuRenderer`], takes band indices from the shared counter within the reorder
//! window, keeps one band queued ahead of the one it finishes, and sends every band (or
//! the first failure, naming the GPU and the band) to the reordering thread.

use super::{
    GpuStep,
    prepare::PreparedGpu,
    reorder::{Gate, Message},
};
use crate::{
    band::CopyTimes,
    gpu::Gpu,
    mandelbrot::{BufferSize, GpuBandKernel, GpuRenderer, QueuedBand, RenderBuffers},
};
use common::Band;
use cust::pool::{Lease, Pool};
use std::{
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicUsize, Ordering},
        mpsc,
    },
    time::{Duration, Instant},
};

/// How long a render thread waits for a GPU before checking whether bands are left.
const LEASE_POLL: Duration = Duration::from_millis(5);
/// What one worker rendered, on which GPU of the pool (none if it never got one).
#[derive(Default)]
pub(super) struct Tally {
    pub(super) gpu: Option<usize>,
    pub(super) bands: usize,
    pub(super) rows: u64,
    pub(super) kernel: Duration,
    pub(super) copies: CopyTimes,
    pub(super) busy: Duration,
    pub(super) setup: Duration,
    /// How long its prepared buffers took, if it used them.
    pub(super) prepared: Option<Duration>,
}

/// One render thread: it renders while it holds a GPU of the pool.
pub(super) struct Worker<'a, K> {
    pub(super) gpus: &'a Pool<Gpu>,
    pub(super) work: &'a K,
    pub(super) bands: &'a [Band],
    pub(super) want_counts: bool,
    /// What its buffers are sized for ([`super::GpuPool::buffer_size`]).
    pub(super) size: BufferSize,
    /// Buffers of `size` made beforehand, one slot per GPU in pool order (empty: none); the
    /// first worker on a GPU takes its slot's.
    pub(super) prepared: &'a [Mutex<Option<PreparedGpu>>],
    pub(super) window: usize,
    pub(super) next_band: &'a AtomicUsize,
    pub(super) gate: &'a Gate,
}

impl<'a, K: GpuBandKernel> Worker<'a, K> {
    /// Finishes the queued band `pending` (number `.0` of `bands`), if any, and sends it,
    /// or its failure, to the reordering thread; `false` if it failed or nobody listens.
    fn finish(
        &self,
        renderer: &mut GpuRenderer<'_>,
        pending: Option<(usize, QueuedBand)>,
        tally: &mut Tally,
        tx: &mpsc::Sender<Message>,
    ) -> bool {
        let Some((index, queued)) = pending else {
            return true;
        };
        let band = queued.band();
        let started = Instant::now();
        let finished = renderer.finish(queued);
        tally.busy += started.elapsed();
        match finished {
            Ok(image) => {
                tally.bands += 1;
                tally.rows += u64::from(band.rows);
                tally.kernel += image.kernel;
                tally.copies += image.copies;
                tx.send(Message::Band(index, image)).is_ok()
            }
            Err(source) => {
                let _ = tx.send(Message::Failed {
                    ordinal: renderer.gpu().context().ordinal(),
                    step: GpuStep::Band { index, band },
                    source,
                });
                false
            }
        }
    }

    /// Waits for a GPU of the pool while bands are left and the render runs.
    fn lease(&self) -> Option<Lease<'a, Gpu>> {
        loop {
            if self.next_band.load(Ordering::Relaxed) >= self.bands.len() || self.gate.stopped() {
                return None;
            }
            if let Some(lease) = self.gpus.acquire_timeout(LEASE_POLL) {
                return Some(lease);
            }
        }
    }

    /// Gets a GPU, then renders bands until none is left, the render stops, or the GPU fails
    /// (reported on `tx`); returns what it rendered.
    pub(super) fn run(self, tx: &mpsc::Sender<Message>) -> Tally {
        let mut tally = Tally::default();
        let Some(lease) = self.lease() else {
            return tally;
        };
        tally.gpu = Some(lease.index());
        let gpu = lease.item();
        let ordinal = gpu.context().ordinal();
        let prepared = self
            .prepared
            .get(lease.index())
            .and_then(|slot| slot.lock().unwrap_or_else(PoisonError::into_inner).take());
        let started = Instant::now();
        let buffers = match prepared {
            Some(p) => {
                tally.prepared = Some(p.took);
                p.buffers
            }
            None => RenderBuffers::new(gpu, self.size),
        };
        let made = buffers.and_then(|bufs| GpuRenderer::from_buffers(gpu, bufs));
        tally.setup = started.elapsed();
        let mut renderer = match made {
            Ok(r) => r,
            Err(source) => {
                let _ = tx.send(Message::Failed {
                    ordinal,
                    step: GpuStep::Setup,
                    source,
                });
                return tally;
            }
        };
        // One band ahead: band i+1 is queued on the GPU before band i's colours are moved
        // out of their staging buffer, so the host's work overlaps the GPU's.
        let mut pending: Option<(usize, QueuedBand)> = None;
        loop {
            let index = self.next_band.fetch_add(1, Ordering::Relaxed);
            let Some(&band) = self.bands.get(index) else {
                break;
            };
            // Bands are taken in increasing order, so the one the sink needs next is held by
            // a worker that is not waiting here: a worker hands its pending band over before
            // it waits, so this cannot deadlock.
            if !self.gate.admits(index, self.window)
                && !self.finish(&mut renderer, pending.take(), &mut tally, tx)
            {
                return tally;
            }
            if !self.gate.wait_for(index, self.window) {
                break;
            }
            let started = Instant::now();
            let queued = renderer.queue(self.work, band, self.want_counts);
            tally.busy += started.elapsed();
            match queued {
                Ok(queued) => {
                    let previous = pending.replace((index, queued));
                    if !self.finish(&mut renderer, previous, &mut tally, tx) {
                        break;
                    }
                    // With escape times `queue` has waited for the band's kernels already:
                    // finish it now, so that a failure is always its own band's (a GPU fault
                    // fails every later call, so a band finished while the next one runs
                    // could be named for the next one's fault).
                    if self.want_counts
                        && !self.finish(&mut renderer, pending.take(), &mut tally, tx)
                    {
                        break;
                    }
                }
                Err(source) => {
                    // A fault of the previous band's kernels surfaces here too: that band is
                    // finished and reported first. Without escape times a fault of this band's
                    // kernels while the previous one is being finished is reported as the
                    // previous band's (CUDA's errors stick to the context): the GPU is named
                    // right, the band may be the one before.
                    if self.finish(&mut renderer, pending.take(), &mut tally, tx) {
                        let _ = tx.send(Message::Failed {
                            ordinal,
                            step: GpuStep::Band { index, band },
                            source,
                        });
                    }
                    return tally;
                }
            }
        }
        // Also after a stop: the band's work on the GPU is waited for before its buffers go.
        self.finish(&mut renderer, pending, &mut tally, tx);
        tally
    }
}
