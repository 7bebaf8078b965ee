//! A renderer's memory on one GPU ([`RenderBuffers`]): the band buffers, the colour table and
//! the colours' way back, made before a render (also on another thread, while the caller
//! computes a deep view's reference orbit: [`crate::mandelbrot::pool::GpuPool::prepare`]) and
//! then held by a [`super::GpuRenderer`].

use super::{
    BAND_BYTES_PER_PX,
    copy_back::{ColorCopies, CopyBack},
};
use crate::{
    gpu::{Gpu, GpuError},
    mandelbrot::COLOR_TABLE_LEN,
};
use common::{Band, Rgb};
use cust::{error::GpuContext, memory::DeviceBuffer};

/// What a renderer's buffers are sized for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSize {
    /// Pixels of the largest band.
    pub band_px: usize,
    /// Samples per pixel ([`crate::band::BandKernel::buffer_px_per_px`]): device buffers
    /// hold every sample, the colours one per pixel.
    pub samples_per_px: usize,
    /// How the colours come back.
    pub copy_back: CopyBack,
}

impl BufferSize {
    /// What each GPU's buffers for rendering `bands` of an image `width_px` wide with
    /// `samples_per_px` samples per pixel are sized for: the largest band's pixels, and the
    /// copy back [`CopyBack::for_render`] chooses for the bands' pixels. Known before the
    /// job itself (a deep view's reference orbit), so buffers can be made beforehand.
    pub fn for_bands(width_px: u32, samples_per_px: usize, bands: &[Band]) -> Self {
        let max_rows = bands.iter().map(|b| b.rows).max().unwrap_or(0);
        let band_px = width_px as usize * max_rows as usize;
        let rows: u64 = bands.iter().map(|b| u64::from(b.rows)).sum();
        let render_px = rows * u64::from(width_px);
        Self {
            band_px,
            samples_per_px,
            copy_back: CopyBack::for_render(render_px, band_px as u64),
        }
    }
}

/// The device buffers of a [`super::GpuRenderer`] on one GPU, for bands of up to
/// `capacity_px` elements (pixels, or samples of supersampled perturbed bands), and the
/// page-locked staging its colours come back through ([`CopyBack::Staged`]; none for
/// [`CopyBack::Direct`], whose first band's host colours are made with them instead, their
/// pages written on a thread of their own). Made once and reused for every band and every
/// frame. The device buffers are allocated outside the stream-ordered pool
/// (`DeviceBuffer::zeroed_unpooled`), so dropping them synchronises the device (`cuMemFree`):
/// not while another thread of the process captures a CUDA graph on it.
pub struct RenderBuffers {
    pub(super) counts: DeviceBuffer<u32>,
    pub(super) norms: DeviceBuffer<f32>,
    pub(super) rgb: DeviceBuffer<Rgb>,
    /// The colour table of discrete shading ([`COLOR_TABLE_LEN`] entries).
    pub(super) table: DeviceBuffer<u32>,
    /// The colours' way back: staging buffers and the bands queued in them.
    pub(super) copies: ColorCopies,
    pub(super) capacity_px: usize,
    /// What they were made for, and on which GPU (its ordinal).
    size: BufferSize,
    ordinal: usize,
}

impl std::fmt::Debug for RenderBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderBuffers")
            .field("size", &self.size)
            .field("ordinal", &self.ordinal)
            .finish_non_exhaustive()
    }
}

impl RenderBuffers {
    /// Allocates, on `gpu`, device buffers for bands of `size.band_px` pixels of
    /// `size.samples_per_px` samples each ([`BAND_BYTES_PER_PX`] bytes per sample: escape
    /// time, `|z_n|²`, colour) and the colour table, and for [`CopyBack::Staged`] the first
    /// page-locked staging buffer (3 bytes per pixel; a second is made when a band is queued
    /// while the first is taken). For [`CopyBack::Direct`] it starts a thread that allocates
    /// the first band's host colours (3 bytes per pixel) and writes every page of them, so
    /// the copy into them does not fault pages in; the first band waits for it.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] if they do not fit, [`GpuError::Driver`] if allocation fails.
    pub fn new(gpu: &Gpu, size: BufferSize) -> Result<Self, GpuError> {
        let staging_px = size.band_px.max(1);
        let capacity_px = staging_px * size.samples_per_px.max(1);
        gpu.check_free("the band buffers", capacity_px * BAND_BYTES_PER_PX)?;
        // First, so that a direct copy back's host colours are made beside the device
        // allocations.
        let copies = ColorCopies::new(gpu, staging_px, size.copy_back)?;
        // Outside the stream-ordered pool, whose setup costs a process's first allocation
        // 8–12 ms on an H200: these are made once per render and kept.
        let ctx = gpu.context();
        let counts = DeviceBuffer::zeroed_unpooled(ctx, capacity_px)
            .gpu_context("allocating the escape-time buffer")?;
        let norms = DeviceBuffer::zeroed_unpooled(ctx, capacity_px)
            .gpu_context("allocating the |z|² buffer")?;
        let rgb = DeviceBuffer::zeroed_unpooled(ctx, capacity_px)
            .gpu_context("allocating the colour buffer")?;
        let table = DeviceBuffer::zeroed_unpooled(ctx, COLOR_TABLE_LEN)
            .gpu_context("allocating the colour table")?;
        Ok(Self {
            counts,
            norms,
            rgb,
            table,
            copies,
            capacity_px,
            size,
            ordinal: gpu.context().ordinal(),
        })
    }

    /// What they were made for.
    pub fn size(&self) -> BufferSize {
        self.size
    }

    /// The ordinal of the GPU they are on.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
}
