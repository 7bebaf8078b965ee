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

    /// How many bands past the next one the sink needs a GPU may start: two per GPU, so every
    /// GPU can work ahead while one band waits for a slower neighbour. At most this many bands
    /// wait in the reorder buffer, plus one being rendered per GPU.
    pub fn reorder_window(&self) -> usize {
        2 * self.gpus.len()
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
mod tests {
    use super::*;
    use crate::{
        band::{BandKernel, RenderControl},
        deep::{PerturbedJob, SharedOrbit, near_i, reference_orbit},
        mandelbrot::{CopyBack, GpuRenderer, RenderParams, Style, render_band_cpu},
    };
    use common::{
        Complex, Palette, Viewport,
        palette::{Coloring, Shading},
    };
    use std::sync::atomic::AtomicBool;

    /// Renders `work` on a pool of one emulated GPU in `bands` and returns the bands in the
    /// order the sink got them.
    fn pool_bands<K: GpuBandKernel>(work: K, bands: &[Band], want_counts: bool) -> Vec<BandImage> {
        let pool = GpuPool::from_gpus(vec![Gpu::emulator(&crate::KERNELS).unwrap()]);
        let mut got = Vec::new();
        let report = pool
            .render(work, bands, want_counts, |b| {
                got.push(b);
                Ok::<_, ()>(())
            })
            .unwrap();
        assert_eq!(report.gpus[0].bands, bands.len());
        got
    }

    /// A small deep job: 23 rows near `i` at scale 10⁻³⁰, 300 iterations, supersampled 2×2,
    /// smooth colouring in `palette`.
    fn small_deep_job(palette: Palette) -> PerturbedJob {
        let v = near_i(30, 10, 23).unwrap();
        let coloring = Coloring::smooth(palette);
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 300).into();
        PerturbedJob::prepare(
            v.job(300, coloring.bailout_sqr::<f64>()),
            2,
            coloring,
            orbit,
            &AtomicBool::new(false),
        )
        .unwrap()
    }

    /// A pool render queues each band before the previous one is finished (two staging
    /// buffers in turn): the sink still gets every band in image order, byte for byte the
    /// CPU's, for a perturbed job (supersampled, smooth) and an f64 job, with bands of
    /// unequal heights and with and without escape times; and the same image as one band,
    /// whose colours come back directly ([`CopyBack::Direct`]), is the CPU's too.
    #[test]
    fn pipelined_bands_arrive_in_order_and_equal_the_cpu() {
        let bands = Band::split(23, 3).collect::<Vec<_>>();
        assert!(bands.len() > 4 && bands.last().unwrap().rows < 3);
        let whole = [Band {
            first_row: 0,
            rows: 23,
        }];

        let deep = small_deep_job(Palette::Fire);
        assert_eq!(
            GpuPool::buffer_size(&deep, &bands).copy_back,
            CopyBack::Staged
        );
        assert_eq!(
            GpuPool::buffer_size(&deep, &whole).copy_back,
            CopyBack::Direct
        );
        for (bands, want_counts) in [(&bands[..], false), (&bands, true), (&whole, false)] {
            let got = pool_bands(&deep, bands, want_counts);
            assert_eq!(got.len(), bands.len());
            for (b, &band) in got.iter().zip(bands) {
                assert_eq!(b.band, band, "bands out of order");
                let cpu = deep
                    .render_cpu_until(band, want_counts, &RenderControl::new())
                    .unwrap();
                assert_eq!(b.rgb, cpu.rgb, "deep band {band:?}");
                assert_eq!(b.counts, cpu.counts, "deep band {band:?}");
                assert_eq!(b.norms, cpu.norms, "deep band {band:?}");
            }
        }

        let params = RenderParams {
            view: Viewport::from_center_scale(16, 23, Complex::new(-0.75, 0.1), 3.0).unwrap(),
            max_iter: 200,
            precision: Precision::F64,
            palette: Palette::Electric,
        };
        for shading in [Shading::Discrete, Shading::Smooth] {
            let style = Style {
                shading,
                ..Style::default()
            };
            let job = params.job(&style);
            let work = FloatJob {
                job: &job,
                precision: Precision::F64,
            };
            assert_eq!(
                GpuPool::buffer_size(&work, &bands).copy_back,
                CopyBack::Staged
            );
            assert_eq!(
                GpuPool::buffer_size(&work, &whole).copy_back,
                CopyBack::Direct
            );
            let mut got = pool_bands(work, &bands, true);
            got.extend(pool_bands(work, &whole, true));
            for (b, &band) in got.iter().zip(bands.iter().chain(&whole)) {
                assert_eq!(b.band, band, "bands out of order");
                let cpu = render_band_cpu(&job, Precision::F64, band, true);
                assert_eq!(b.rgb, cpu.rgb, "{shading:?} band {band:?}");
                assert_eq!(b.counts, cpu.counts, "{shading:?} band {band:?}");
            }
        }
    }

    /// Renders `work` in `bands` on a pool of one emulated GPU with buffers prepared for
    /// `size` (`None`: sized for this render); returns the bands and the report.
    fn prepared_bands<K: GpuBandKernel>(
        work: K,
        bands: &[Band],
        size: Option<BufferSize>,
    ) -> (Vec<BandImage>, PoolReport) {
        let pool = GpuPool::from_gpus(vec![Gpu::emulator(&crate::KERNELS).unwrap()]);
        let size = size.unwrap_or_else(|| GpuPool::buffer_size(&work, bands));
        let ((), prepared) = pool.prepare_beside(size, || ());
        assert!(prepared.outcomes().all(|(made, _)| made.is_ok()));
        let mut got = Vec::new();
        let report = pool
            .render_prepared(work, bands, true, prepared, |b| {
                got.push(b);
                Ok::<_, ()>(())
            })
            .unwrap();
        assert!(report.wall >= report.waited);
        (got, report)
    }

    /// A render with buffers prepared beside the host work equals one without, byte for
    /// byte, deep (supersampled) and f64, and reports the preparation in the GPU's share;
    /// buffers prepared for another size are not used (the GPU makes its own) and the image
    /// is the same.
    #[test]
    fn prepared_renders_equal_unprepared_ones_and_other_sizes_are_not_used() {
        let bands = Band::split(23, 5).collect::<Vec<_>>();
        let deep = small_deep_job(Palette::Electric);
        let job = crate::mandelbrot::gpu::tests::small_f64_job();
        let float = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        let float_bands = Band::split(job.height_px, 2).collect::<Vec<_>>();
        let same = |a: &[BandImage], b: &[BandImage], what: &str| {
            assert_eq!(a.len(), b.len(), "{what}");
            for (a, b) in a.iter().zip(b) {
                assert_eq!(a.band, b.band, "{what}");
                assert_eq!(a.rgb, b.rgb, "{what} band {:?}", a.band);
                assert_eq!(a.counts, b.counts, "{what} band {:?}", a.band);
                assert_eq!(a.norms, b.norms, "{what} band {:?}", a.band);
            }
        };

        let unprepared = pool_bands(&deep, &bands, true);
        let (got, report) = prepared_bands(&deep, &bands, None);
        same(&got, &unprepared, "deep");
        assert!(report.gpus[0].prepared.is_some(), "{report:?}");
        let other = BufferSize {
            band_px: GpuPool::buffer_size(&deep, &bands).band_px + 1,
            ..GpuPool::buffer_size(&deep, &bands)
        };
        let (got, report) = prepared_bands(&deep, &bands, Some(other));
        same(&got, &unprepared, "deep, another size prepared");
        assert_eq!(report.gpus[0].prepared, None, "{report:?}");

        let unprepared = pool_bands(float, &float_bands, true);
        let (got, report) = prepared_bands(float, &float_bands, None);
        same(&got, &unprepared, "f64");
        assert!(report.gpus[0].prepared.is_some(), "{report:?}");
        // Sized for the deep job's samples: not this job's buffers.
        let deep_size = GpuPool::buffer_size(&deep, &float_bands);
        let (got, report) = prepared_bands(float, &float_bands, Some(deep_size));
        same(&got, &unprepared, "f64, another size prepared");
        assert_eq!(report.gpus[0].prepared, None, "{report:?}");
    }

    /// Buffers that do not fit fail their preparation with the bounded-memory error, kept
    /// for that GPU; a render of that size reports it as the GPU's setup failure.
    #[test]
    fn a_failed_preparation_is_the_gpus_setup_failure() {
        let pool = GpuPool::from_gpus(vec![Gpu::emulator(&crate::KERNELS).unwrap()]);
        let impossible = BufferSize {
            band_px: 1 << 50,
            samples_per_px: 1,
            copy_back: CopyBack::Staged,
        };
        let mut prepared = pool.prepare(impossible);
        let outcomes: Vec<_> = prepared.outcomes().collect();
        assert!(
            matches!(outcomes[..], [(Err(GpuError::OutOfMemory { .. }), _)]),
            "{outcomes:?}"
        );
        // The emulator cannot be made to fail a render's own size, so the failed
        // preparation stands for one: relabelled with the render's size, it is used.
        let job = crate::mandelbrot::gpu::tests::small_f64_job();
        let work = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        let bands = Band::split(job.height_px, 2).collect::<Vec<_>>();
        prepared.size = GpuPool::buffer_size(&work, &bands);
        let result = pool.render_prepared(work, &bands, false, prepared, |_| Ok::<_, &str>(()));
        let Err(error) = result else {
            panic!("a failed preparation was not reported");
        };
        assert!(
            matches!(
                &error,
                PoolError::Gpu { ordinal: 0, step: GpuStep::Setup, source }
                    if matches!(**source, GpuError::OutOfMemory { .. })
            ),
            "{error:?}"
        );
        assert!(
            error.to_string().starts_with("GPU 0, setting up: "),
            "{error}"
        );
    }

    /// A renderer holds at most two queued bands, one per staging buffer: finishing them
    /// in turn gives each band its own colours, and queuing a third first is refused.
    #[test]
    fn a_renderer_queues_two_bands_refuses_a_third_and_reuses_the_one_finished() {
        let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
        let job = crate::mandelbrot::gpu::tests::small_f64_job();
        let work = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        let mut renderer = GpuRenderer::new(&gpu, 8 * 3).unwrap();
        let bands = crate::mandelbrot::gpu::tests::TWO_BANDS;
        let first = renderer.queue(work, bands[0], false).unwrap();
        let second = renderer.queue(work, bands[1], false).unwrap();
        let third = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            renderer.queue(work, bands[0], false)
        }));
        assert!(third.is_err(), "a third queued band was accepted");
        // Finished out of order, the freed buffer takes the next band.
        let cpu = |band| render_band_cpu(&job, Precision::F64, band, false).rgb;
        let b = renderer.finish(second).unwrap();
        assert_eq!((b.band, b.rgb), (bands[1], cpu(bands[1])));
        let again = renderer.queue(work, bands[1], false).unwrap();
        for (queued, band) in [(first, bands[0]), (again, bands[1])] {
            let b = renderer.finish(queued).unwrap();
            assert_eq!((b.band, b.rgb), (band, cpu(band)));
        }
    }
}
