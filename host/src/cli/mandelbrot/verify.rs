//! `--verify`: every band rendered again on the CPU and compared.

use anyhow::{Result, bail};
use host::mandelbrot::{BandImage, BandKernel, RenderControl};

/// Renders `b`'s rows on the CPU and fails unless the escape times, the `|z_n|²` of
/// perturbed samples (bit for bit) and the colours are identical.
pub(super) fn verify_band(work: &dyn BandKernel, b: &BandImage) -> Result<()> {
    let band = b.band;
    let Some(cpu) = work.render_cpu_until(band, true, &RenderControl::new()) else {
        unreachable!("a fresh control is never stopped");
    };
    let norms_differ = cpu.norms.len() != b.norms.len()
        || cpu
            .norms
            .iter()
            .zip(&b.norms)
            .any(|(a, b)| a.to_bits() != b.to_bits());
    if cpu.counts != b.counts || cpu.rgb != b.rgb || norms_differ {
        let differing = cpu
            .counts
            .iter()
            .zip(&b.counts)
            .filter(|(a, b)| a != b)
            .count();
        let norms = cpu
            .norms
            .iter()
            .zip(&b.norms)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        bail!(
            "GPU and CPU images differ in rows {}..{}: {differing} of {} escape times and \
             {norms} of {} |z|² differ",
            band.first_row,
            band.first_row + band.rows,
            cpu.counts.len(),
            cpu.norms.len()
        );
    }
    Ok(())
}
