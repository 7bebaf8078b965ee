//! The discrete colour table the colour kernel reads ([`COLOR_TABLE_LEN`] entries).

use crate::gpu::{Gpu, GpuError};
use common::palette::{Coloring, Shading};
use cust::{error::GpuContext, memory::DeviceBuffer};

/// Entries of the discrete colour table ([`Coloring::fill_discrete_table`]): escape times
/// below 2^16 are looked up (256 KiB), larger ones computed.
pub const COLOR_TABLE_LEN: usize = 1 << 16;

/// Fills `table` for `coloring` up to escape time `max_iter` unless `filled_for` says it
/// already is; returns how many entries the colour pass may use (`0` for smooth shading).
///
/// # Errors
/// [`GpuError::Driver`] if the copy fails.
pub(crate) fn color_table(
    gpu: &Gpu,
    coloring: Coloring,
    max_iter: u32,
    table: &mut DeviceBuffer<u32>,
    filled_for: &mut Option<(Coloring, u32)>,
) -> Result<usize, GpuError> {
    if coloring.shading != Shading::Discrete {
        return Ok(0);
    }
    // Escape times 0 ..= max_iter occur; no more entries are needed.
    let len = COLOR_TABLE_LEN.min(max_iter as usize + 1);
    if *filled_for != Some((coloring, max_iter)) {
        let mut host = vec![0u32; len];
        coloring.fill_discrete_table(max_iter, &mut host);
        table
            .index_mut(0..len)?
            .async_copy_from(&host, gpu.stream())
            .gpu_context("copying the colour table")?;
        *filled_for = Some((coloring, max_iter));
    }
    Ok(len)
}
