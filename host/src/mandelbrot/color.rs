//! The discrete colour table the colour kernel reads ([`COLOR_TABLE_LEN`] entries).

use crate::gpu::{Gpu, GpuError};
use common::palette::{Coloring, Shading};
use cust::{error::GpuContext, memory::DeviceBuffer};
use std::time::{Duration, Instant};

/// Entries of the discrete colour table ([`Coloring::fill_discrete_table`]): escape times
/// below 2^16 are looked up (256 KiB), larger ones computed.
pub const COLOR_TABLE_LEN: usize = 1 << 16;

/// What [`color_table`] did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColorTable {
    /// How many entries the colour pass may use (`0` for smooth shading).
    pub(crate) len: usize,
    /// Host time of the table's copy to the device: queuing it, which stages the pageable
    /// source before it returns (at most 256 KiB; the transfer ends before the band's
    /// kernels start, in stream order). Zero when the table was filled already.
    pub(crate) htod: Duration,
}

/// Fills `table` for `coloring` up to escape time `max_iter` unless `filled_for` says it
/// already is.
///
/// # Errors
/// [`GpuError::Driver`] if the copy fails.
pub(crate) fn color_table(
    gpu: &Gpu,
    coloring: Coloring,
    max_iter: u32,
    table: &mut DeviceBuffer<u32>,
    filled_for: &mut Option<(Coloring, u32)>,
) -> Result<ColorTable, GpuError> {
    if coloring.shading != Shading::Discrete {
        return Ok(ColorTable {
            len: 0,
            htod: Duration::ZERO,
        });
    }
    // Escape times 0 ..= max_iter occur; no more entries are needed.
    let len = COLOR_TABLE_LEN.min(max_iter as usize + 1);
    let mut htod = Duration::ZERO;
    if *filled_for != Some((coloring, max_iter)) {
        let mut host = vec![0u32; len];
        coloring.fill_discrete_table(max_iter, &mut host);
        let started = Instant::now();
        table
            .index_mut(0..len)?
            .async_copy_from(&host, gpu.stream())
            .gpu_context("copying the colour table")?;
        htod = started.elapsed();
        *filled_for = Some((coloring, max_iter));
    }
    Ok(ColorTable { len, htod })
}
