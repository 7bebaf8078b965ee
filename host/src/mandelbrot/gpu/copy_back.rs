//! A band's colours on their way back to the host ([`ColorCopies`]): queued into one of two
//! page-locked staging buffers after the band's kernels, then moved out when the band is
//! finished; the band in between is a [`QueuedBand`].

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
use std::time::{Duration, Instant};

/// A band whose work is queued on its renderer's stream ([`super::GpuRenderer::queue`]):
/// its kernels, between CUDA events, and the copy of its colours into a staging buffer,
/// between two more. [`super::GpuRenderer::finish`] waits for them and returns the band.
#[derive(Debug)]
#[must_use = "a queued band's colours come back through GpuRenderer::finish"]
pub struct QueuedBand {
    band: Band,
    /// Pixels, and the staging buffer holding their colours.
    px: usize,
    slot: usize,
    ticket: u64,
    kernels: Vec<QueuedKernel>,
    /// Events around the colours' copy into the staging buffer.
    copy_start: Event,
    copy_end: Event,
    /// Escape times and `|z_n|²`, copied back already when asked for.
    counts: Vec<u32>,
    norms: Vec<f32>,
    /// The uploads, and the copies of `counts` and `norms`.
    copies: CopyTimes,
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

/// Page-locked host memory the colours are copied into, one colour per band pixel: a
/// pageable copy of a 100 MB band ran at about 1 GB/s on an H200 machine while the PNG
/// encoder's threads were busy. Two, the first free one taking the next queued band; the
/// second is allocated when a band is queued while the first is taken (one 1920×1080 buffer
/// took 3.5–5 ms to allocate on an H200 machine, so a render of one band does not pay for
/// two).
pub(super) struct ColorCopies {
    pub(super) staging: [Option<LockedBuffer<Rgb>>; 2],
    /// Pixels a staging buffer holds.
    pub(super) staging_px: usize,
    /// The ticket of the queued band whose colours each staging buffer holds (`None`: free).
    in_slot: [Option<u64>; 2],
    /// The ticket of the next queued band.
    next_ticket: u64,
}

impl ColorCopies {
    /// Staging for bands of up to `staging_px` pixels, the first buffer made now.
    ///
    /// # Errors
    /// [`GpuError::Driver`] if the page-locked allocation fails.
    pub(super) fn new(gpu: &Gpu, staging_px: usize) -> Result<Self, GpuError> {
        Ok(Self {
            staging: [
                Some(LockedBuffer::new_in(gpu.context(), &[0u8; 3], staging_px)?),
                None,
            ],
            staging_px,
            in_slot: [None; 2],
            next_ticket: 0,
        })
    }

    /// Whether another band may be queued (fewer than two are queued and not finished).
    pub(super) fn has_room(&self) -> bool {
        self.in_slot.iter().any(Option::is_none)
    }

    /// Queues the copy of the band's colours (`from.rgb`) into the next staging buffer
    /// after `kernels`, and, when `from.counts` is given, waits for `kernels` and copies
    /// back the escape times (and `from.norms`).
    pub(super) fn queue(
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
        if let Some(from_counts) = from.counts {
            for k in &kernels {
                k.wait(gpu)?;
            }
            // The colours' copy ahead of these in the stream is timed by its events already.
            copy_end.synchronize()?;
            let started = Instant::now();
            counts = from_counts
                .as_host_vec()
                .gpu_context("copying escape times to the host")?;
            if let Some(from_norms) = from.norms {
                norms = from_norms
                    .as_host_vec()
                    .gpu_context("copying |z|² to the host")?;
            }
            copies.dtoh += started.elapsed();
        }
        // Taken only now: a failure above leaves the slot free (its copy is stream-ordered
        // before any later one into it, and nothing reads it).
        self.in_slot[slot] = Some(ticket);
        Ok(QueuedBand {
            band,
            px,
            slot,
            ticket,
            kernels,
            copy_start,
            copy_end,
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
        assert!(
            self.in_slot[queued.slot] == Some(queued.ticket),
            "finishing a band that is not queued on this renderer"
        );
        self.in_slot[queued.slot] = None;
        let mut kernel = Duration::ZERO;
        for k in &queued.kernels {
            kernel += k.time(gpu)?;
        }
        let staged = self.staging[queued.slot]
            .as_ref()
            .expect("a queued band's staging buffer exists")
            .try_as_slice()?;
        let mut copies = queued.copies;
        copies.dtoh += queued.copy_end.elapsed(&queued.copy_start)?;
        Ok(BandImage {
            band: queued.band,
            counts: queued.counts,
            norms: queued.norms,
            rgb: staged[..queued.px].as_flattened().to_vec(),
            kernel,
            copies,
        })
    }
}
