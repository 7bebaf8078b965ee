//! Several GPUs rendering one image: [`GpuPool`].
//!
//! The GPUs ([`Gpu`]: context, stream, module) are lent by a `cust::pool::Pool`, the pool
//! under `cust`'s `DevicePool`: a render starts one host thread per GPU of the pool, and each
//! thread renders only while it holds a GPU's lease, so renders from several threads share
//! the GPUs and a GPU on loan elsewhere is simply not used until it comes back. A thread with
//! a GPU allocates its band buffers ([`GpuRenderer`](super::GpuRenderer)), takes the next band index from a shared
//! counter (work stealing: a GPU that finishes early simply takes more bands), renders it and
//! hands it to the calling thread. The calling thread puts bands back in image order in a reorder buffer
//! and passes each to a sink (e.g. the streaming PNG encoder) as soon as all bands above it
//! have been passed. A worker does not start a band more than [`GpuPool::reorder_window`]
//! bands ahead of the next band the sink needs, so host memory stays bounded whatever the
//! image size and however unequal the GPUs are.
//!
//! Every band is rendered by the same kernel from the same [`RenderJob`], with global pixel
//! coordinates, so the image is identical to a single-GPU (or CPU) render.
//!
//! The reordering side (the calling thread's reorder buffer and the window's gate) is in
//! `pool/reorder.rs`, the render threads' side ([`GpuRenderer`](super::GpuRenderer) setup, the band loop) in
//! `pool/worker.rs`, buffers made before a render ([`Prepared`]) in `pool/prepare.rs`.

use super::{BandImage, BufferSize, CopyTimes, FloatJob, GpuBandKernel, Precision};
use crate::gpu::{Gpu, GpuError, driver_available};
use common::{Band, RenderJob};
use cust::pool::{Lease, Pool};
use prepare::PreparedGpu;
use reorder::{Gate, Message, reorder};
use std::{
    sync::{Mutex, atomic::AtomicUsize, mpsc},
    time::{Duration, Instant},
};
use worker::{Tally, Worker};

pub use prepare::Prepared;

mod prepare;
mod reorder;
mod worker;

/// Bands each GPU of a pool may render past the next one the sink needs
/// ([`GpuPool::reorder_window`]). GPU and PNG encoder take turns being the slower one from
/// band to band, and with 2 each often waited for the other. A deep 1e-300 render at
/// 16384×16384 (79 bands of 10 MB, 20,000 iterations; 2026-11-29, alternating renders,
/// images identical), render wall against kernel + copies: on a 16-core H200 machine 1.31–1.43×
/// with 2 and 1.14–1.18× with 4 (and a 4-band encoder queue, not kept: alone it changed
/// nothing), and in a later run 1.19–1.24× with 4 alone against 1.32–1.38× with 2; on a
/// 32-core machine (two H200s, `--gpus 1`) 1.21–1.27× with 2 and 1.07–1.08× with 4, end to
/// end 330–348 ms against 368–396 ms, peak memory 225–228 MiB against
/// 225–237 MiB. Host memory grows by a band per GPU for each band of window
/// (`cli::mandelbrot::memory` counts it).
pub const BANDS_AHEAD: usize = 4;

/// Which GPUs a pool uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuSelection {
    /// Every GPU the driver reports.
    All,
    /// The first `n` GPUs (ordinals `0..n`, `n` ≥ 1).
    First(usize),
}

/// Why a pool render failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError<E> {
    /// A GPU failed (allocating its buffers, or a band's launch or copy).
    #[error("GPU {ordinal}, {step}: {source}")]
    Gpu {
        /// The GPU's ordinal.
        ordinal: usize,
        /// What it was doing: setting up, or rendering which band.
        step: GpuStep,
        /// What failed (boxed: the error stays small beside the sink's).
        #[source]
        source: Box<GpuError>,
    },
    /// The sink returned an error (rendering stopped).
    #[error("{0}")]
    Sink(E),
}

/// What a GPU of a pool render was doing when it failed ([`PoolError::Gpu`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuStep {
    /// Setting up for the render, before its first band ([`GpuRenderer::new`](super::GpuRenderer::new): band
    /// buffers, staging buffer, kernels).
    Setup,
    /// Rendering a band.
    Band {
        /// The band's position in the render's `bands` (0 = first).
        index: usize,
        /// The band: its image rows.
        band: Band,
    },
}

impl std::fmt::Display for GpuStep {
    /// `setting up` or `band 3 (rows 192..256)` (rows half-open, 0 = top).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Setup => f.write_str("setting up"),
            Self::Band { index, band } => write!(
                f,
                "band {index} (rows {}..{})",
                band.first_row,
                u64::from(band.first_row) + u64::from(band.rows)
            ),
        }
    }
}

/// How a pool render went: per-GPU shares and the wall time.
#[derive(Clone, Debug)]
pub struct PoolReport {
    /// One entry per GPU of the pool, in pool order.
    pub gpus: Vec<GpuShare>,
    /// From the start of the render to the last band passed to the sink (includes the time
    /// the sink took, e.g. waiting for a PNG encoder), plus [`PoolReport::waited`].
    pub wall: Duration,
    /// How long the caller waited for the buffers of a prepared render after its host work
    /// ([`Prepared::waited`]; counted in `wall`); zero otherwise.
    pub waited: Duration,
}

/// One GPU's part of a pool render.
#[derive(Clone, Debug)]
pub struct GpuShare {
    /// Device ordinal.
    pub ordinal: usize,
    /// Device name.
    pub name: String,
    /// Bands this GPU rendered.
    pub bands: usize,
    /// Rows this GPU rendered.
    pub rows: u64,
    /// Sum of its kernel times (CUDA events).
    pub kernel: Duration,
    /// Sum of its bands' copies between host and device, by direction ([`CopyTimes`]: the
    /// deep orbit and BLA table and the colour table up, colours and any escape times
    /// down).
    pub copies: CopyTimes,
    /// Wall time spent on its bands' host side: queuing them (uploads, launches) and
    /// finishing them (waiting for their kernels and copies, moving the colours out of
    /// page-locked memory), excluding time spent waiting for the reorder window. A band is
    /// finished while the next one runs on the GPU, so this is about the kernel time when
    /// the host keeps up.
    pub busy: Duration,
    /// Wall time to set it up for the render before its first band: its band buffers, the
    /// page-locked staging buffer (none for a small render: [`super::CopyBack::Direct`]) and its
    /// kernels ([`super::RenderBuffers::new`], [`GpuRenderer::from_buffers`](super::GpuRenderer::from_buffers)).
    /// Buffers made beforehand are not counted here but in [`GpuShare::prepared`].
    pub setup: Duration,
    /// How long its buffers took when they were made beforehand ([`GpuPool::prepare`]) and
    /// this render used them (not in `setup`, and in the wall only as far as the caller
    /// waited for them: [`PoolReport::waited`]); `None` when it made its own.
    pub prepared: Option<Duration>,
}

/// Several GPUs, each opened with its own context, stream and kernels module, lent to
/// renders through a `cust::pool::Pool`.
pub struct GpuPool {
    gpus: Pool<Gpu>,
    /// `(ordinal, name)` of each GPU, in pool order.
    devices: Vec<(usize, String)>,
}

impl std::fmt::Debug for GpuPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuPool")
            .field("devices", &self.devices)
            .field("free", &self.gpus.free_count())
            .finish()
    }
}

impl GpuPool {
    /// Opens the selected GPUs (in parallel: each loads, and the driver JIT-compiles, the
    /// kernels module).
    ///
    /// # Errors
    /// [`GpuError::NoDriver`] / [`GpuError::NoDevice`] without a driver or GPU;
    /// [`GpuError::BadOrdinal`] when [`GpuSelection::First`] asks for more GPUs than exist
    /// (or for none); any error of [`Gpu::new`].
    pub fn open(selection: GpuSelection) -> Result<Self, GpuError> {
        let count = device_count()?;
        let n = match selection {
            GpuSelection::All => count,
            GpuSelection::First(n) if (1..=count).contains(&n) => n,
            GpuSelection::First(n) => {
                return Err(GpuError::BadOrdinal {
                    ordinal: n.saturating_sub(1),
                    count,
                });
            }
        };
        let opened: Vec<Result<Gpu, GpuError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .map(|ordinal| scope.spawn(move || Gpu::new(ordinal)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        Ok(Self::from_gpus(
            opened.into_iter().collect::<Result<_, _>>()?,
        ))
    }

    /// The pool `FERROCUDA_DEVICE` asks for (see `cust::context::DeviceChoice`): the GPUs of
    /// `selection` ([`GpuPool::open`]) for `gpu`, and for `auto` when the driver reports a
    /// GPU; otherwise one CPU emulator device ([`Gpu::emulator`] with [`crate::KERNELS`]),
    /// which renders the same images.
    ///
    /// # Errors
    /// A bad `FERROCUDA_DEVICE` value; [`GpuError::BadOrdinal`] for the emulator when
    /// `selection` is [`GpuSelection::First`] of other than one device; those of
    /// [`GpuPool::open`].
    pub fn from_env(selection: GpuSelection) -> Result<Self, GpuError> {
        use cust::context::{DeviceChoice, gpu_present};
        match DeviceChoice::from_env()? {
            DeviceChoice::Cpu => Self::emulator(selection),
            DeviceChoice::Auto if !gpu_present() => Self::emulator(selection),
            DeviceChoice::Gpu | DeviceChoice::Auto => Self::open(selection),
        }
    }

    /// One emulated device, for [`GpuPool::from_env`].
    fn emulator(selection: GpuSelection) -> Result<Self, GpuError> {
        match selection {
            GpuSelection::All | GpuSelection::First(1) => {
                Ok(Self::from_gpus(vec![Gpu::emulator(&crate::KERNELS)?]))
            }
            GpuSelection::First(n) => Err(GpuError::BadOrdinal {
                ordinal: n.saturating_sub(1),
                count: 1,
            }),
        }
    }

    /// A pool of GPUs opened by the caller (at least one).
    ///
    /// # Panics
    /// If `gpus` is empty.
    pub fn from_gpus(gpus: Vec<Gpu>) -> Self {
        assert!(!gpus.is_empty(), "a GPU pool needs at least one GPU");
        let devices = gpus
            .iter()
            .map(|g| (g.context().ordinal(), g.name()))
            .collect();
        Self {
            gpus: Pool::new(gpus),
            devices,
        }
    }

    /// `(ordinal, name)` of each GPU, in pool order.
    pub fn devices(&self) -> &[(usize, String)] {
        &self.devices
    }

    /// Lends a GPU of the pool (the lowest-numbered free one, waiting if all are on loan):
    /// renders meanwhile leave it alone. Dropping the lease gives it back.
    pub fn acquire(&self) -> Lease<'_, Gpu> {
        self.gpus.acquire()
    }

    /// Number of GPUs (≥ 1).
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    /// Always `false`: a pool has at least one GPU.
    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// How many bands past the next one the sink needs a GPU may start: [`BANDS_AHEAD`] per
    /// GPU, so every GPU can work ahead while one band waits for a slower neighbour or the
    /// sink is slow for a few bands. At most this many bands wait in the reorder buffer, plus
    /// one being rendered per GPU.
    pub fn reorder_window(&self) -> usize {
        BANDS_AHEAD * self.gpus.len()
    }

    /// Renders `bands` of `job` (each at most `job.width_px · max rows` pixels, inside the
    /// image) on the GPUs of the pool and calls `sink` with every band, in the order of
    /// `bands`, on the calling thread. GPUs on loan elsewhere join when they come back; the
    /// render waits for at least one. Counts are copied back only if `want_counts`. Each GPU
    /// allocates band buffers for the largest band ([`super::BAND_BYTES_PER_PX`] bytes per
    /// pixel), and page-locked staging unless the render is small ([`GpuPool::buffer_size`]).
    ///
    /// The first error stops the render: GPUs finish the band they are rendering and take no
    /// more, and no further band reaches the sink.
    ///
    /// # Errors
    /// [`PoolError::Gpu`] naming the GPU that failed and the band it was rendering (or its
    /// setup: allocation), with the launch's or copy's error;
    /// [`PoolError::Sink`] with the sink's error.
    pub fn render_bands<E>(
        &self,
        job: &RenderJob<f64>,
        precision: Precision,
        bands: &[Band],
        want_counts: bool,
        sink: impl FnMut(BandImage) -> Result<(), E>,
    ) -> Result<PoolReport, PoolError<E>> {
        self.render(FloatJob { job, precision }, bands, want_counts, sink)
    }

    /// What each GPU's buffers for rendering `bands` of `work` are sized for
    /// ([`BufferSize::for_bands`] of `work`'s width and samples per pixel).
    pub fn buffer_size(work: &impl GpuBandKernel, bands: &[Band]) -> BufferSize {
        BufferSize::for_bands(work.width_px(), work.buffer_px_per_px(), bands)
    }

    /// [`GpuPool::render_bands`] for a job of any arithmetic (any [`GpuBandKernel`]:
    /// [`FloatJob`], [`crate::deep::PerturbedJob`], [`super::BandJob`]): perturbed jobs
    /// upload their reference orbit and BLA table once per GPU and share them across bands.
    ///
    /// # Errors
    /// As [`GpuPool::render_bands`].
    pub fn render<K: GpuBandKernel, E>(
        &self,
        work: K,
        bands: &[Band],
        want_counts: bool,
        sink: impl FnMut(BandImage) -> Result<(), E>,
    ) -> Result<PoolReport, PoolError<E>> {
        self.render_with(work, bands, want_counts, None, sink)
    }

    /// [`GpuPool::render`] with buffers made beforehand ([`GpuPool::prepare`],
    /// [`GpuPool::prepare_beside`]): each GPU takes its prepared buffers if they are sized
    /// for this render ([`GpuPool::buffer_size`]); buffers of another size are dropped
    /// before the render starts and every GPU allocates its own, as [`GpuPool::render`]
    /// does. The report's wall includes the time waited for them ([`PoolReport::waited`]),
    /// and each GPU's share the time they took ([`GpuShare::prepared`]).
    ///
    /// # Errors
    /// As [`GpuPool::render_bands`]; a GPU whose prepared buffers (of this render's size)
    /// could not be made fails with [`GpuStep::Setup`] and that error.
    pub fn render_prepared<K: GpuBandKernel, E>(
        &self,
        work: K,
        bands: &[Band],
        want_counts: bool,
        prepared: Prepared,
        sink: impl FnMut(BandImage) -> Result<(), E>,
    ) -> Result<PoolReport, PoolError<E>> {
        self.render_with(work, bands, want_counts, Some(prepared), sink)
    }

    /// [`GpuPool::render`], with `prepared` buffers if any.
    fn render_with<K: GpuBandKernel, E>(
        &self,
        work: K,
        bands: &[Band],
        want_counts: bool,
        prepared: Option<Prepared>,
        mut sink: impl FnMut(BandImage) -> Result<(), E>,
    ) -> Result<PoolReport, PoolError<E>> {
        let start = Instant::now();
        let size = Self::buffer_size(&work, bands);
        let waited = prepared.as_ref().map_or(Duration::ZERO, Prepared::waited);
        // Buffers of another size go now, before any GPU allocates its own.
        let prepared: Vec<Mutex<Option<PreparedGpu>>> = prepared
            .filter(|p| p.size == size)
            .map_or_else(Vec::new, |p| {
                p.gpus.into_iter().map(|g| Mutex::new(Some(g))).collect()
            });
        let window = self.reorder_window();
        let next_band = AtomicUsize::new(0);
        let gate = Gate::default();
        let (tx, rx) = mpsc::channel::<Message>();
        let (result, tallies) = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..self.len())
                .map(|_| {
                    let tx = tx.clone();
                    let worker = Worker {
                        gpus: &self.gpus,
                        work: &work,
                        bands,
                        want_counts,
                        size,
                        prepared: &prepared,
                        window,
                        next_band: &next_band,
                        gate: &gate,
                    };
                    scope.spawn(move || worker.run(&tx))
                })
                .collect();
            drop(tx);
            let result = reorder(bands.len(), &rx, &gate, &mut sink);
            // On an error, wake and stop every worker; then wait for them.
            gate.stop();
            drop(rx);
            let tallies: Vec<Tally> = workers
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            (result, tallies)
        });
        // A worker that panicked was re-raised by the join above; otherwise every band arrived.
        assert!(result?, "GPU workers stopped with bands left to render");
        let mut gpus: Vec<GpuShare> = self
            .devices
            .iter()
            .map(|(ordinal, name)| GpuShare {
                ordinal: *ordinal,
                name: name.clone(),
                bands: 0,
                rows: 0,
                kernel: Duration::ZERO,
                copies: CopyTimes::default(),
                busy: Duration::ZERO,
                setup: Duration::ZERO,
                prepared: None,
            })
            .collect();
        for t in tallies {
            if let Some(index) = t.gpu {
                let share = &mut gpus[index];
                share.bands += t.bands;
                share.rows += t.rows;
                share.kernel += t.kernel;
                share.copies += t.copies;
                share.busy += t.busy;
                share.setup += t.setup;
                if let Some(took) = t.prepared {
                    *share.prepared.get_or_insert(Duration::ZERO) += took;
                }
            }
        }
        Ok(PoolReport {
            gpus,
            wall: start.elapsed() + waited,
            waited,
        })
    }
}

/// Number of CUDA devices.
fn device_count() -> Result<usize, GpuError> {
    if !driver_available() {
        return Err(GpuError::NoDriver);
    }
    let count = cust::device::Device::num_devices()?;
    match usize::try_from(count).unwrap_or(0) {
        0 => Err(GpuError::NoDevice),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests;
