//! What every band renderer hands back and how its caller steers it, below both the
//! Mandelbrot renderer ([`crate::mandelbrot`]) and the deep-zoom jobs ([`crate::deep`]):
//! [`BandImage`] (one rendered band) and [`RenderControl`] (stop requests and progress).

use common::Band;
use std::{
    sync::atomic::{AtomicBool, AtomicU64},
    time::Duration,
};

/// One rendered band of an image: rows `band.first_row ..` of [`crate::mandelbrot::Image`]'s layout.
#[derive(Clone, Debug, PartialEq)]
pub struct BandImage {
    /// Which rows.
    pub band: Band,
    /// Escape times (`width · band.rows` values), or empty when not requested. For a
    /// perturbed job ([`crate::mandelbrot::BandJob::Perturbed`]) one per sample (`s² · width · band.rows`).
    pub counts: Vec<u32>,
    /// `|z_n|²` at escape, one per sample, for perturbed jobs when counts were requested
    /// (for checking the GPU against the CPU bit for bit); otherwise empty.
    pub norms: Vec<f32>,
    /// Colours (`3 · width · band.rows` bytes).
    pub rgb: Vec<u8>,
    /// Kernel time (GPU: CUDA events around the escape and colour launches; CPU: wall time).
    pub kernel: Duration,
}

/// Lets the caller of a CPU render stop it early and watch its progress.
#[derive(Debug, Default)]
pub struct RenderControl {
    /// Set to stop: checked before every pixel.
    pub stop: AtomicBool,
    /// Rows finished so far (every CPU render with this control adds to it).
    pub rows_done: AtomicU64,
}

impl RenderControl {
    /// Not stopped, no rows done.
    pub const fn new() -> Self {
        Self {
            stop: AtomicBool::new(false),
            rows_done: AtomicU64::new(0),
        }
    }
}
