//! A band's colours on their way back to the host ([`ColorCopies`]), as [`CopyBack`] says:
//! queued into one of two page-locked staging buffers after the band's kernels, then moved
//! out when the band is finished; or, for small renders, copied straight into the band's
//! own `Vec` (the first band's made, its pages written, beside the renderer's device
//! buffers: [`HostColors`]). The band in between is a [`QueuedBand`].

use crate::{
    band::{BandImage, CopyTimes},
    gpu::{Gpu, GpuError, QueuedKernel},
};
use common::{Band, Rgb};
use cust::{
    error::GpuContext,
    event::{Event, EventFlags},
    memory::{DeviceSlice, LockedBuffer},
};
use std::{
    thread::JoinHandle,
    time::{Duration, Instant},
};

/// How a renderer's band colours come back to the host ([`CopyBack::for_render`] chooses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyBack {
    /// Through page-locked staging buffers: the copy is queued after the band's kernels
    /// and the band finished later, so a worker's next band runs on the GPU while this one's
    /// colours are moved out. Costs a page-locked allocation per renderer (two when bands
    /// are queued ahead), 3 bytes a pixel of the largest band.
    Staged,
    /// Straight from the device into the band's own `Vec` (a pageable copy, synchronous):
    /// no page-locked memory, but [`super::GpuRenderer::queue`] waits for the band's
    /// kernels and its copy, so nothing overlaps. The first band's `Vec` is made, its pages
    /// written, on a thread of its own while the renderer's device buffers are made
    /// ([`DIRECT_COPY_MAX_PX`] says why); later bands' are allocated as they come back.
    Direct,
}

/// Most pixels of a render whose colours [`CopyBack::for_render`] copies back directly:
/// 2²³ (25 MB of colours; 3840×2160 is below it).
///
/// Measured on an H200 machine (driver 580, a fresh process, `cuMemHostAlloc` against
/// `cuMemcpyDtoH` into pageable memory) for 6.2 / 12.6 / 25 / 101 MB of colours: the
/// page-locked allocation took 3.5 / 5.4 / 13.3 / 37 ms (0.4–0.6 ns a byte), a pinned copy
/// 0.20 / 0.31 / 0.52 / 1.9 ms, a pageable one 0.77 / 1.05 / 3.0 / 7.1 ms (8–14 GB/s: about
/// 0.1 ns a byte more). The staged path also copies every colour once more, out of the
/// staging buffer. So a pageable copy of a whole render of up to 25 MB costs less than the
/// page-locked allocation of it; above that, renders are several bands whose copies the
/// staged path hides behind kernels, and a pageable copy ran at about 1 GB/s on that
/// machine while the PNG encoder's threads were busy.
///
/// In a render, though, the direct copy of a deep 1e-300 1920×1080 view (6.2 MB, one band;
/// H200, three fresh processes) took 4.5–5.7 ms (about 1.2 GB/s), not 0.77 ms: it copied
/// into a `Vec` allocated for the copy, whose untouched pages most likely fault one by one
/// while the driver moves the colours out of its own staging into them (the escape times'
/// and `|z_n|²` copies, when asked for, still do). So the first band's colour `Vec` is now
/// allocated and every page of it written beforehand, on a thread of its own started with
/// the renderer's buffers (beside the device allocations, and the reference orbit when
/// [`crate::mandelbrot::pool::GpuPool::prepare_beside`] makes them), and the colours are
/// copied into it ([`cust::memory::DeviceSlice::copy_to`]) and handed on without another
/// copy.
pub const DIRECT_COPY_MAX_PX: u64 = 1 << 23;

impl CopyBack {
    /// The copy back for a render of `render_px` pixels whose largest band has `band_px`:
    /// [`CopyBack::Direct`] when the render has at most [`DIRECT_COPY_MAX_PX`] pixels and at
    /// most 4 bands' worth (one staging buffer of a band, 0.4–0.6 ns a byte to allocate,
    /// against the direct path's extra 0.1 ns a byte for every colour of the render:
    /// [`DIRECT_COPY_MAX_PX`]'s measurements), else [`CopyBack::Staged`].
    pub fn for_render(render_px: u64, band_px: u64) -> Self {
        if render_px <= DIRECT_COPY_MAX_PX && render_px <= band_px.saturating_mul(4) {
            Self::Direct
        } else {
            Self::Staged
        }
    }
}

/// A band whose work is queued on its renderer's stream ([`super::GpuRenderer::queue`]):
/// its kernels, between CUDA events, and the copy of its colours into a staging buffer,
/// between two more (or its colours, copied back already: [`CopyBack::Direct`]).
/// [`super::GpuRenderer::finish`] waits for them and returns the band.
#[derive(Debug)]
#[must_use = "a queued band's colours come back through GpuRenderer::finish"]
pub struct QueuedBand {
    band: Band,
    kernels: Vec<QueuedKernel>,
    colors: Colors,
    /// Escape times and `|z_n|²`, copied back already when asked for.
    counts: Vec<u32>,
    norms: Vec<f32>,
    /// The uploads, and the copies of `counts` and `norms`.
    copies: CopyTimes,
}

/// Where a queued band's colours are.
#[derive(Debug)]
enum Colors {
    /// `px` colours in staging buffer `slot`, for the band numbered `ticket`, copied
    /// between two events.
    Staged {
        px: usize,
        slot: usize,
        ticket: u64,
        copy_start: Event,
        copy_end: Event,
    },
    /// In host memory already, 3 bytes a pixel.
    Direct(Vec<u8>),
}

impl QueuedBand {
    /// The band's rows.
    pub fn band(&self) -> Band {
        self.band
    }
}

/// What a queued band copies back ([`ColorCopies::queue`]): views of the renderer's device
/// buffers.
pub(super) struct Results<'a> {
    /// The band's colours, one per pixel.
    pub rgb: DeviceSlice<'a, Rgb>,
    /// Escape times to copy back before `queue` returns (`None`: not asked for).
    pub counts: Option<DeviceSlice<'a, u32>>,
    /// `|z_n|²` to copy back with them (perturbed bands).
    pub norms: Option<DeviceSlice<'a, f32>>,
}

/// For [`CopyBack::Direct`]: host memory for one band's colours whose pages are written
/// already, so the copy into it does not fault them in ([`DIRECT_COPY_MAX_PX`]). Made on a
/// thread of its own ([`HostColors::make`]), waited for by the first band that takes it.
enum HostColors {
    /// Being allocated and written.
    Making(JoinHandle<Vec<Rgb>>),
    /// Ready.
    Made(Vec<Rgb>),
}

impl HostColors {
    /// Starts allocating `px` colours and writing every page of them, on a new thread
    /// (here, if no thread could be started).
    fn make(px: usize, ordinal: usize) -> Self {
        match std::thread::Builder::new()
            .name(format!("gpu {ordinal} colours"))
            .spawn(move || Self::written(px))
        {
            Ok(thread) => Self::Making(thread),
            Err(_) => Self::Made(Self::written(px)),
        }
    }

    /// `px` black colours, every page of them written.
    fn written(px: usize) -> Vec<Rgb> {
        // Opaque to the optimizer, so allocation and zeroing are not fused into a `calloc`,
        // whose pages stay untouched until the copy writes them.
        let mut colors: Vec<Rgb> = std::hint::black_box(Vec::with_capacity(px));
        colors.resize(px, [0; 3]);
        colors
    }

    /// The colours (waiting for them if they are being made): `None` if their thread
    /// panicked.
    fn wait(self) -> Option<Vec<Rgb>> {
        match self {
            Self::Making(thread) => thread.join().ok(),
            Self::Made(colors) => Some(colors),
        }
    }
}

impl std::fmt::Debug for HostColors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Making(_) => "HostColors::Making",
            Self::Made(_) => "HostColors::Made",
        })
    }
}

/// Page-locked host memory the colours are copied into, one colour per band pixel: a
/// pageable copy of a 100 MB band ran at about 1 GB/s on an H200 machine while the PNG
/// encoder's threads were busy. Two, the first free one taking the next queued band; the
/// second is allocated when a band is queued while the first is taken (one 1920×1080 buffer
/// took 3.5–5 ms to allocate on an H200 machine, so a render of one band does not pay for
/// two).
pub(super) struct ColorCopies {
    copy_back: CopyBack,
    pub(super) staging: [Option<LockedBuffer<Rgb>>; 2],
    /// Pixels a staging buffer holds.
    pub(super) staging_px: usize,
    /// The ticket of the queued band whose colours each staging buffer holds (`None`: free).
    in_slot: [Option<u64>; 2],
    /// The ticket of the next queued band.
    next_ticket: u64,
    /// [`CopyBack::Direct`]: the next band's colours, `staging_px` of them, pages written
    /// (until a band takes them).
    host_colors: Option<HostColors>,
}

impl ColorCopies {
    /// Copies back of bands of up to `staging_px` pixels: for [`CopyBack::Staged`] the
    /// first staging buffer is made now; for [`CopyBack::Direct`] none ever is, and the
    /// first band's colours start being made on a thread of their own ([`HostColors`]),
    /// beside whatever the caller does next.
    ///
    /// # Errors
    /// [`GpuError::Driver`] if the page-locked allocation fails.
    pub(super) fn new(gpu: &Gpu, staging_px: usize, copy_back: CopyBack) -> Result<Self, GpuError> {
        let (first, host_colors) = match copy_back {
            CopyBack::Staged => (
                Some(LockedBuffer::new_in(gpu.context(), &[0u8; 3], staging_px)?),
                None,
            ),
            CopyBack::Direct => (
                None,
                Some(HostColors::make(staging_px, gpu.context().ordinal())),
            ),
        };
        Ok(Self {
            copy_back,
            staging: [first, None],
            staging_px,
            in_slot: [None; 2],
            next_ticket: 0,
            host_colors,
        })
    }

    /// The made colours' address, waiting for them (for tests: `None` if there are none).
    #[cfg(test)]
    pub(super) fn host_colors_addr(&mut self) -> Option<usize> {
        let colors = self.host_colors.take()?.wait()?;
        let addr = colors.as_ptr() as usize;
        self.host_colors = Some(HostColors::Made(colors));
        Some(addr)
    }

    /// Whether another band may be queued: fewer than two are queued and not finished
    /// (always, for [`CopyBack::Direct`]: a queued band holds no staging buffer).
    pub(super) fn has_room(&self) -> bool {
        self.copy_back == CopyBack::Direct || self.in_slot.iter().any(Option::is_none)
    }

    /// Queues the copy of the band's colours (`from.rgb`) into the next staging buffer
    /// after `kernels`, and, when `from.counts` is given, waits for `kernels` and copies
    /// back the escape times (and `from.norms`). [`CopyBack::Direct`]: waits for `kernels`
    /// and copies all of them back now.
    pub(super) fn queue(
        &mut self,
        gpu: &Gpu,
        band: Band,
        from: Results<'_>,
        kernels: Vec<QueuedKernel>,
        copies: CopyTimes,
    ) -> Result<QueuedBand, GpuError> {
        match self.copy_back {
            CopyBack::Staged => self.queue_staged(gpu, band, from, kernels, copies),
            CopyBack::Direct => self.copy_direct(gpu, band, from, kernels, copies),
        }
    }

    /// [`ColorCopies::queue`] for [`CopyBack::Direct`]: waits for `kernels`, then copies
    /// the colours (and any escape times and `|z_n|²`) into host `Vec`s, timed on the host:
    /// the colours into the made ones ([`HostColors`]) if no band has taken them, else
    /// into a new `Vec`.
    fn copy_direct(
        &mut self,
        gpu: &Gpu,
        band: Band,
        from: Results<'_>,
        kernels: Vec<QueuedKernel>,
        mut copies: CopyTimes,
    ) -> Result<QueuedBand, GpuError> {
        for k in &kernels {
            k.wait(gpu)?;
        }
        let px = from.rgb.len();
        let made = self.host_colors.take().and_then(HostColors::wait);
        let started = Instant::now();
        let rgb = match made {
            Some(mut colors) if colors.len() >= px => {
                colors.truncate(px);
                from.rgb
                    .copy_to(&mut colors)
                    .gpu_context("copying colours to the host")?;
                colors
            }
            _ => from
                .rgb
                .as_host_vec()
                .gpu_context("copying colours to the host")?,
        }
        .into_flattened();
        let (counts, norms) = copy_counts(&from)?;
        copies.dtoh += started.elapsed();
        Ok(QueuedBand {
            band,
            kernels,
            colors: Colors::Direct(rgb),
            counts,
            norms,
            copies,
        })
    }

    /// [`ColorCopies::queue`] for [`CopyBack::Staged`].
    fn queue_staged(
        &mut self,
        gpu: &Gpu,
        band: Band,
        from: Results<'_>,
        kernels: Vec<QueuedKernel>,
        mut copies: CopyTimes,
    ) -> Result<QueuedBand, GpuError> {
        let px = from.rgb.len();
        // The first free staging buffer (`queue` checked that one is), the second made on
        // its first use.
        let slot = usize::from(self.in_slot[0].is_some());
        if self.staging[slot].is_none() {
            self.staging[slot] = Some(LockedBuffer::new_in(
                gpu.context(),
                &[0u8; 3],
                self.staging_px,
            )?);
        }
        let staging = self.staging[slot].as_mut().expect("made above");
        let stream = gpu.stream();
        let copy_start = Event::new_in(gpu.context(), EventFlags::DEFAULT)?;
        copy_start.record(stream)?;
        staging.async_copy_prefix_from(&from.rgb, stream)?;
        let copy_end = Event::new_in(gpu.context(), EventFlags::DEFAULT)?;
        copy_end.record(stream)?;
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        let (mut counts, mut norms) = (Vec::new(), Vec::new());
        if from.counts.is_some() {
            for k in &kernels {
                k.wait(gpu)?;
            }
            // The colours' copy ahead of these in the stream is timed by its events already.
            copy_end.synchronize()?;
            let started = Instant::now();
            (counts, norms) = copy_counts(&from)?;
            copies.dtoh += started.elapsed();
        }
        // Taken only now: a failure above leaves the slot free (its copy is stream-ordered
        // before any later one into it, and nothing reads it).
        self.in_slot[slot] = Some(ticket);
        Ok(QueuedBand {
            band,
            kernels,
            colors: Colors::Staged {
                px,
                slot,
                ticket,
                copy_start,
                copy_end,
            },
            counts,
            norms,
            copies,
        })
    }

    /// Waits for `queued` (its kernels and the copy of its colours) and returns it, its
    /// colours moved out of the staging buffer.
    ///
    /// # Panics
    /// If `queued` was not queued here, or was finished already.
    pub(super) fn finish(&mut self, gpu: &Gpu, queued: QueuedBand) -> Result<BandImage, GpuError> {
        if let Colors::Staged { slot, ticket, .. } = queued.colors {
            assert!(
                self.in_slot[slot] == Some(ticket),
                "finishing a band that is not queued on this renderer"
            );
            self.in_slot[slot] = None;
        }
        let mut kernel = Duration::ZERO;
        for k in &queued.kernels {
            kernel += k.time(gpu)?;
        }
        let mut copies = queued.copies;
        let rgb = match queued.colors {
            Colors::Direct(rgb) => rgb,
            Colors::Staged {
                px,
                slot,
                copy_start,
                copy_end,
                ..
            } => {
                let staged = self.staging[slot]
                    .as_ref()
                    .expect("a queued band's staging buffer exists")
                    .try_as_slice()?;
                copies.dtoh += copy_end.elapsed(&copy_start)?;
                staged[..px].as_flattened().to_vec()
            }
        };
        Ok(BandImage {
            band: queued.band,
            counts: queued.counts,
            norms: queued.norms,
            rgb,
            kernel,
            copies,
        })
    }
}

/// Copies `from.counts` and `from.norms` (those given) to the host, once the kernels that
/// write them are done.
fn copy_counts(from: &Results<'_>) -> Result<(Vec<u32>, Vec<f32>), GpuError> {
    let counts = match &from.counts {
        Some(c) => c
            .as_host_vec()
            .gpu_context("copying escape times to the host")?,
        None => Vec::new(),
    };
    let norms = match &from.norms {
        Some(n) => n.as_host_vec().gpu_context("copying |z|² to the host")?,
        None => Vec::new(),
    };
    Ok((counts, norms))
}
