//! Whole deep-zoom images through the band renderers: [`render`] (every pixel of a
//! [`DeepView`] by perturbation, on a GPU or the CPU) and [`render_gpu`] (a [`DeepJob`] in
//! bands through a [`GpuRenderer`]). For small images and the examples: they hold every
//! pixel; the CLI renders [`PerturbedJob`] bands.

use super::GpuRenderer;
use crate::{
    deep::{BLA_EPS, DeepView, PerturbedJob, bla_table, reference_orbit, render_job_cpu},
    gpu::{Gpu, GpuError},
};
use common::{Band, Complex, bla::Bla, palette::Coloring, perturb::DeepJob};
use std::{
    sync::Arc,
    time::{Duration, Instant},
};

/// Escape times and `|z_n|²` of every pixel of `job` (row-major) by perturbation on `gpu`
/// (`kernels::mandelbrot::mandelbrot_perturb`, the function [`render_job_cpu`] runs) with
/// the BLA table `bla` (empty: no skipping), launched in bands of `band_rows` rows through a
/// [`GpuRenderer`] (the orbit and table are uploaded once).
///
/// # Errors
/// [`GpuError`] if an allocation, a launch or a copy fails.
pub fn render_gpu(
    gpu: &Gpu,
    job: &DeepJob,
    orbit: &[Complex<f64>],
    bla: &[Bla],
    band_rows: u32,
) -> Result<(Vec<u32>, Vec<f32>), GpuError> {
    let pjob = PerturbedJob::with_table(
        *job,
        1,
        Coloring::discrete(common::Palette::Gray),
        Arc::new(orbit.to_vec()),
        Arc::new(bla.to_vec()),
    );
    let rows = band_rows.max(1).min(job.height_px.max(1));
    let mut renderer = GpuRenderer::new(gpu, job.width_px as usize * rows as usize)?;
    let n = job.width_px as usize * job.height_px as usize;
    let (mut counts, mut norms) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for band in Band::split(job.height_px, rows) {
        let b = renderer.render(&pjob, band, true)?;
        counts.extend_from_slice(&b.counts);
        norms.extend_from_slice(&b.norms);
    }
    Ok((counts, norms))
}

/// A deep view rendered ([`render`]): what every pixel gave, and what it took.
#[derive(Clone, Debug)]
pub struct DeepRender {
    /// The job the pixels ran (grid, `max_iter`, bailout).
    pub job: DeepJob,
    /// The reference orbit of the view's centre.
    pub orbit: Vec<Complex<f64>>,
    /// The BLA table of `orbit` ([`bla_table`] at [`BLA_EPS`]).
    pub bla: Vec<Bla>,
    /// Escape time of each pixel, row-major.
    pub counts: Vec<u32>,
    /// `|z_n|²` at escape of each pixel (`0` inside), row-major.
    pub norms: Vec<f32>,
    /// Iterations skipped by BLA, summed over the pixels (CPU renders only: the kernel
    /// reports counts and norms).
    pub skipped: Option<u64>,
    /// Time to compute the reference orbit.
    pub orbit_time: Duration,
    /// Time to build the BLA table.
    pub bla_time: Duration,
    /// Time to iterate the pixels (and copy them back from the GPU).
    pub pixels_time: Duration,
}

/// Renders `view` whole by perturbation: reference orbit, BLA table, then every pixel on
/// `gpu` (in bands of 64 rows) or, without one, on all CPU cores; escape at
/// `|z|² > bailout_sqr`. For small images and the examples: it holds every pixel, and it
/// cannot be stopped (the CLI uses [`PerturbedJob`] bands).
///
/// # Errors
/// [`GpuError`] from the GPU render.
pub fn render(
    view: &DeepView,
    max_iter: u32,
    bailout_sqr: f64,
    gpu: Option<&Gpu>,
) -> Result<DeepRender, GpuError> {
    let t = Instant::now();
    let orbit = reference_orbit(
        &view.center_re,
        &view.center_im,
        view.precision_bits,
        max_iter,
    );
    let orbit_time = t.elapsed();
    let job = view.job(max_iter, bailout_sqr);
    let t = Instant::now();
    let bla = bla_table(&orbit, &job, BLA_EPS);
    let bla_time = t.elapsed();
    let t = Instant::now();
    let (counts, norms, skipped) = match gpu {
        Some(g) => {
            let (c, n) = render_gpu(g, &job, &orbit, &bla, 64)?;
            (c, n, None)
        }
        None => {
            let p = render_job_cpu(&job, &orbit, &bla);
            let skipped = p.iter().map(|p| u64::from(p.skipped)).sum();
            (
                p.iter().map(|p| p.n).collect(),
                p.iter().map(|p| p.norm_sqr as f32).collect(),
                Some(skipped),
            )
        }
    };
    Ok(DeepRender {
        job,
        orbit,
        bla,
        counts,
        norms,
        skipped,
        orbit_time,
        bla_time,
        pixels_time: t.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        band::{BandKernel, RenderControl},
        deep::{SharedOrbit, near_i},
    };
    use std::sync::atomic::AtomicBool;

    /// A GPU renderer (here the CPU emulator, which runs the same kernel) keeps the orbit
    /// and table it uploaded, but not their host copies: once a job is dropped its table is
    /// freed on the host, even while the device copy stays for the next job of the same
    /// data (a zoom's next table is built meanwhile; both must not be held, issue 35). Jobs
    /// that share the orbit reuse its upload, and every band equals the CPU's.
    #[test]
    fn gpu_uploads_hold_no_host_copy_and_bands_equal_the_cpu() {
        let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
        let v = near_i(30, 8, 6).unwrap();
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 300).into();
        let mut renderer = GpuRenderer::new(&gpu, 8 * 6).unwrap();
        let band = Band {
            first_row: 0,
            rows: 6,
        };
        let mut last_table = None;
        for max_iter in [200, 300] {
            let coloring = Coloring::discrete(common::Palette::Fire);
            let job = PerturbedJob::prepare(
                v.job(max_iter, coloring.bailout_sqr::<f64>()),
                1,
                coloring,
                orbit.clone(),
                &AtomicBool::new(false),
            )
            .unwrap();
            let on_gpu = renderer.render(&job, band, true).unwrap();
            let on_cpu = job
                .render_cpu_until(band, true, &RenderControl::new())
                .unwrap();
            assert_eq!(on_gpu.counts, on_cpu.counts, "max_iter {max_iter}");
            assert_eq!(on_gpu.rgb, on_cpu.rgb, "max_iter {max_iter}");
            last_table = Some(Arc::downgrade(job.bla()));
        }
        let table = last_table.unwrap();
        assert!(
            table.upgrade().is_none(),
            "the renderer kept the host copy of a dropped job's BLA table"
        );
        // The orbit is still ours (and still uploaded): only our reference keeps it.
        assert_eq!(Arc::strong_count(&orbit), 1);
    }

    /// A GPU band reports its copies by direction: the first band of a job uploads the
    /// orbit, the BLA table and the colour table (host to device), and every band copies
    /// its colours back (device to host); a CPU band has none.
    #[test]
    fn gpu_bands_report_their_copies_and_cpu_bands_none() {
        let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
        let v = near_i(30, 8, 6).unwrap();
        let coloring = Coloring::discrete(common::Palette::Fire);
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 200).into();
        let job = PerturbedJob::prepare(
            v.job(200, coloring.bailout_sqr::<f64>()),
            1,
            coloring,
            orbit,
            &AtomicBool::new(false),
        )
        .unwrap();
        let mut renderer = GpuRenderer::new(&gpu, 8 * 3).unwrap();
        let bands = [0, 3].map(|first_row| Band { first_row, rows: 3 });
        let first = renderer.render(&job, bands[0], false).unwrap();
        assert!(first.copies.htod > Duration::ZERO, "{:?}", first.copies);
        assert!(first.copies.dtoh > Duration::ZERO, "{:?}", first.copies);
        let second = renderer.render(&job, bands[1], false).unwrap();
        assert!(second.copies.dtoh > Duration::ZERO, "{:?}", second.copies);
        let on_cpu = job
            .render_cpu_until(bands[0], false, &RenderControl::new())
            .unwrap();
        assert_eq!(on_cpu.copies, crate::band::CopyTimes::default());
    }
}
