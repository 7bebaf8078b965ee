//! Pixels by perturbation: [`PerturbedJob`], the deep-zoom job of the band renderers
//! (a [`BandKernel`]: CPU, [`crate::mandelbrot::GpuRenderer`],
//! [`crate::mandelbrot::pool::GpuPool`]), and the whole-image CPU helpers for small views
//! (whole images on a GPU: [`crate::mandelbrot::deep`]).
//!
//! The parts: the GPU side of the job (the upload of the shared orbit and BLA table and the
//! launch of the escape pass, `render/device.rs`) and the whole-image CPU helpers
//! (`render/whole_image.rs`), both re-exported here.

use super::bla::{BLA_EPS, bla_table_until};
use crate::band::{BandImage, BandKernel, CopyTimes, RenderControl, SampleTally};
use common::{
    Band, Complex, Escape, Rgb,
    bla::Bla,
    floatexp::FloatExp,
    palette::{Coloring, SampleGrid},
    perturb::{DeepJob, Perturbed},
};
use rayon::prelude::*;
use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

mod device;
mod whole_image;

pub(crate) use device::{DeepUpload, PerturbParams, launch_perturbed};
pub use whole_image::{colorize, render_job_cpu, render_perturbed};

/// Upper bound of perturbation iterations in one band (worst case: every sample reaches
/// `max_iter` without a BLA skip): 2^36 ≈ 6.9·10^10, a quarter of the float kernels'
/// [`crate::mandelbrot::MAX_ITERATIONS_PER_LAUNCH`], since a perturbed step (with its
/// `FloatExp` and rebasing checks) costs several plain `f64` steps. Bands this size end
/// within about a second on a GPU, so a stop request is noticed between launches.
pub const MAX_PERTURBED_ITERATIONS_PER_LAUNCH: u64 = 1 << 36;

/// A reference orbit shared by every band, GPU and zoom frame of one centre: built in a
/// `Vec` ([`super::reference_orbit_until`]) and moved into the [`Arc`] without a copy (an
/// `Arc<[T]>` made from a `Vec` copies it, holding both at once).
pub type SharedOrbit = Arc<Vec<Complex<f64>>>;

/// A BLA table shared by every band and GPU of one job, moved into the [`Arc`] as
/// [`SharedOrbit`] is.
pub type SharedBla = Arc<Vec<Bla>>;

/// Host memory a deep view's reference orbit and BLA table need together, per iteration of
/// `max_iter`, at most: one orbit value (16 bytes) and, over all levels, fewer than two BLA
/// entries (88 bytes each) per orbit step. Each is held once ([`SharedOrbit`],
/// [`SharedBla`]), so a view of `max_iter` iterations needs at most `max_iter` times this
/// (192 bytes: 1.8 GiB at 10,000,000 iterations), whatever its size in pixels.
pub const DEEP_BYTES_PER_ITERATION: u64 =
    (std::mem::size_of::<Complex<f64>>() + 2 * std::mem::size_of::<Bla>()) as u64;

/// A deep-zoom image for the band renderers: the pixel grid and iteration settings
/// ([`DeepJob`]), samples per pixel, the colouring, and the reference orbit and BLA table
/// shared (by [`Arc`]) with every band, every GPU and, in a zoom, every frame with the same
/// centre.
///
/// Every band renderer calls the same `common` functions for every sample
/// ([`DeepJob::escape`]) and pixel ([`SampleGrid::pixel_color`] of [`Coloring::color`]: on
/// the host in [`PerturbedJob::finish_band`], on a GPU in the colour pass of float bands), so
/// CPU and GPU bands are identical, escape times, `|z_n|²` and colours.
#[derive(Clone, Debug)]
pub struct PerturbedJob {
    /// The image: `width_px × height_px` pixels, `max_iter`, bailout.
    pub job: DeepJob,
    /// Samples per pixel along each axis: 1, 2 or 4.
    pub supersample: u32,
    /// How escape times become colours.
    pub coloring: Coloring,
    orbit: SharedOrbit,
    orbit_len: usize,
    bla: SharedBla,
}

impl PerturbedJob {
    /// The job of `job`'s image with `supersample × supersample` samples per pixel,
    /// perturbed from `orbit` (the reference orbit of the view's centre, at least `2`
    /// entries; only its first `job.max_iter + 1` are used, so one orbit of a larger
    /// `max_iter` serves every frame of a zoom), with a BLA table built here for this job's
    /// samples. `None` if `stop` was set during the BLA build.
    pub fn prepare(
        job: DeepJob,
        supersample: u32,
        coloring: Coloring,
        orbit: SharedOrbit,
        stop: &AtomicBool,
    ) -> Option<Self> {
        let orbit_len = orbit.len().min(job.max_iter as usize + 1);
        let mut this = Self {
            job,
            supersample: supersample.max(1),
            coloring,
            orbit,
            orbit_len,
            bla: SharedBla::default(),
        };
        let table = bla_table_until(this.orbit(), &this.sample_job(), BLA_EPS, stop)?;
        // Moved, not copied: the table is the largest thing a deep view holds.
        this.bla = Arc::new(table);
        Some(this)
    }

    /// [`PerturbedJob::prepare`] with a BLA table given (empty: no skipping; it must be
    /// [`bla_table`](super::bla_table) of [`PerturbedJob::orbit`] for [`PerturbedJob::sample_job`]).
    pub fn with_table(
        job: DeepJob,
        supersample: u32,
        coloring: Coloring,
        orbit: SharedOrbit,
        bla: SharedBla,
    ) -> Self {
        let orbit_len = orbit.len().min(job.max_iter as usize + 1);
        Self {
            job,
            supersample: supersample.max(1),
            coloring,
            orbit,
            orbit_len,
            bla,
        }
    }

    /// The reference orbit this job iterates against (at most `max_iter + 1` entries).
    pub fn orbit(&self) -> &[Complex<f64>] {
        &self.orbit[..self.orbit_len]
    }

    /// The whole shared orbit (possibly longer than [`PerturbedJob::orbit`]).
    pub fn shared_orbit(&self) -> &SharedOrbit {
        &self.orbit
    }

    /// The BLA table.
    pub fn bla(&self) -> &SharedBla {
        &self.bla
    }

    /// The sample grid: `(width·s) × (height·s)` samples `spacing / s` apart (`s` =
    /// [`PerturbedJob::supersample`], a power of two, so the spacing is exact). Sample
    /// `(x·s + i, y·s + j)` lies at offset `(i + ½)/s − ½` pixels from pixel `(x, y)`'s
    /// centre. With one sample, the image's job itself.
    pub fn sample_job(&self) -> DeepJob {
        let s = self.supersample;
        if s <= 1 {
            return self.job;
        }
        DeepJob {
            spacing: self.job.spacing * FloatExp::from_f64(1.0 / f64::from(s)),
            width_px: self.job.width_px * s,
            height_px: self.job.height_px * s,
            ..self.job
        }
    }

    /// Image rows per band: at most `max_band_px` pixels, at most
    /// [`MAX_PERTURBED_ITERATIONS_PER_LAUNCH`] worst-case iterations, at least 1, at most
    /// the image height.
    pub fn rows_per_band(&self, max_band_px: u64) -> u32 {
        Self::rows_per_band_of(&self.job, self.supersample, max_band_px)
    }

    /// [`PerturbedJob::rows_per_band`] of the job of `job`'s image with `supersample ×
    /// supersample` samples per pixel, known before its reference orbit is.
    pub fn rows_per_band_of(job: &DeepJob, supersample: u32, max_band_px: u64) -> u32 {
        let s = u64::from(supersample.max(1));
        let w = u64::from(job.width_px.max(1));
        let per_row = w * s * s * u64::from(job.max_iter.max(1));
        let by_work = (MAX_PERTURBED_ITERATIONS_PER_LAUNCH / per_row).max(1);
        let by_px = (max_band_px / w).max(1);
        u32::try_from(by_work.min(by_px))
            .unwrap_or(u32::MAX)
            .min(job.height_px.max(1))
    }

    /// The sample rows of image rows `band`.
    pub fn sample_band(&self, band: Band) -> Band {
        Band {
            first_row: band.first_row * self.supersample,
            rows: band.rows * self.supersample,
        }
    }

    /// Samples `(x, y)` of the sample grid ([`PerturbedJob::sample_job`]).
    pub fn escape_sample(&self, x: u32, y: u32) -> Perturbed {
        self.sample_job().escape(self.orbit(), &self.bla, x, y)
    }

    /// Image rows `band` from its samples' escape times and `|z_n|²` (row-major over the
    /// sample rows of [`PerturbedJob::sample_band`]): each pixel's colour is the rounded
    /// average `(Σ channel + s²/2) / s²` of its samples' colours ([`SampleGrid::pixel_color`],
    /// which the GPU's colour pass calls too); with one sample, the colour of
    /// [`Coloring::color`]. `counts` and `norms` of the result are the samples' if
    /// `want_counts`, else empty. The CPU band renderer's colouring (GPU bands are coloured
    /// on the device).
    ///
    /// # Panics
    /// If the sample arrays do not hold the band's samples (a programming error).
    pub fn finish_band(
        &self,
        band: Band,
        sample_counts: Vec<u32>,
        sample_norms: Vec<f32>,
        want_counts: bool,
        kernel: Duration,
    ) -> BandImage {
        let w = self.job.width_px as usize;
        let s = self.supersample as usize;
        let len = w * band.rows as usize;
        assert!(
            sample_counts.len() == len * s * s && sample_norms.len() == len * s * s,
            "samples do not match the band"
        );
        let max_iter = self.job.max_iter;
        let color = |i: usize| -> Rgb {
            self.coloring.color(
                Escape {
                    n: sample_counts[i],
                    norm_sqr: sample_norms[i],
                },
                max_iter,
            )
        };
        let grid = SampleGrid {
            width_px: self.job.width_px,
            supersample: self.supersample,
        };
        let mut rgb = vec![0u8; 3 * len];
        rgb.par_chunks_mut(3 * w).enumerate().for_each(|(r, row)| {
            for (x, px) in row.chunks_exact_mut(3).enumerate() {
                px.copy_from_slice(&grid.pixel_color(r * w + x, color));
            }
        });
        let (counts, norms) = if want_counts {
            (sample_counts, sample_norms)
        } else {
            (Vec::new(), Vec::new())
        };
        BandImage {
            band,
            counts,
            norms,
            rgb,
            kernel,
            copies: CopyTimes::default(),
        }
    }
}

impl BandKernel for PerturbedJob {
    fn width_px(&self) -> u32 {
        self.job.width_px
    }

    fn height_px(&self) -> u32 {
        self.job.height_px
    }

    /// The samples per pixel, `s²`: they are averaged after the escape pass.
    fn buffer_px_per_px(&self) -> usize {
        (self.supersample * self.supersample) as usize
    }

    /// Rayon, one task per sample row; counts finished samples (within rows). Counts and
    /// `|z_n|²` (one per sample) are kept only if `want_counts`.
    fn render_cpu_until(
        &self,
        band: Band,
        want_counts: bool,
        control: &RenderControl,
    ) -> Option<BandImage> {
        let start = Instant::now();
        let sjob = self.sample_job();
        let sband = self.sample_band(band);
        let sw = sjob.width_px as usize;
        let len = sw * sband.rows as usize;
        let mut counts = vec![0u32; len];
        let mut norms = vec![0f32; len];
        counts
            .par_chunks_mut(sw)
            .zip(norms.par_chunks_mut(sw))
            .enumerate()
            .for_each(|(r, (count_row, norm_row))| {
                let y = sband.first_row + r as u32;
                let mut tally = SampleTally::new(control);
                for (x, (n, z)) in count_row.iter_mut().zip(norm_row).enumerate() {
                    if control.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let p = sjob.escape(self.orbit(), &self.bla, x as u32, y);
                    *n = p.n;
                    *z = p.norm_sqr as f32;
                    tally.add(p.n);
                }
            });
        if control.stop.load(Ordering::Relaxed) {
            return None;
        }
        Some(self.finish_band(band, counts, norms, want_counts, start.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deep::{near_i, reference_orbit};

    /// The bound the CLI's `--max-iter` help and README state: 192 bytes per iteration, of
    /// which the BLA table is under two entries per orbit step (every level together).
    #[test]
    fn deep_memory_per_iteration_is_as_documented() {
        assert_eq!(DEEP_BYTES_PER_ITERATION, 192);
        let v = near_i(30, 16, 16).unwrap();
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 3000).into();
        let p = PerturbedJob::prepare(
            v.job(3000, 4.0),
            1,
            Coloring::discrete(common::Palette::Gray),
            orbit.clone(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(p.bla().len() < 2 * orbit.len(), "{} entries", p.bla().len());
        // The table is held in exactly its size (no spare capacity from growing).
        assert_eq!(p.bla().capacity(), p.bla().len());
    }

    /// Bands of any height give the pixels of one band, and the CPU band renderer gives
    /// the escape times and `|z_n|²` of [`render_job_cpu`] and the colours of [`colorize`].
    #[test]
    fn bands_equal_the_whole_image() {
        let v = near_i(30, 13, 11).unwrap();
        let max_iter = 2000;
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter).into();
        let coloring = Coloring::discrete(common::Palette::Fire);
        let job = v.job(max_iter, coloring.bailout_sqr::<f64>());
        let p = PerturbedJob::prepare(job, 1, coloring, orbit.clone(), &AtomicBool::new(false))
            .unwrap();
        let whole = render_job_cpu(&job, &orbit, p.bla());
        let counts: Vec<u32> = whole.iter().map(|p| p.n).collect();
        let norms: Vec<f32> = whole.iter().map(|p| p.norm_sqr as f32).collect();
        let rgb = colorize(&counts, &norms, &coloring, max_iter);
        assert!(counts.iter().any(|&n| n < max_iter) && counts.iter().any(|&n| n > 10));
        for rows in [1, 4, 11] {
            let (mut c, mut z, mut col) = (Vec::new(), Vec::new(), Vec::new());
            for band in Band::split(11, rows) {
                let b = p
                    .render_cpu_until(band, true, &RenderControl::new())
                    .unwrap();
                c.extend(b.counts);
                z.extend(b.norms);
                col.extend(b.rgb);
            }
            assert_eq!(c, counts, "{rows} rows");
            assert_eq!(z, norms, "{rows} rows");
            assert_eq!(col, rgb, "{rows} rows");
        }
    }

    /// Supersampling: each pixel's count is the sum of its samples' and its colour their
    /// rounded average, the samples being the pixels of the image `s` times as large.
    #[test]
    fn supersampled_pixels_average_their_samples() {
        let coloring = Coloring::discrete(common::Palette::Classic);
        let big = near_i(25, 12, 8).unwrap();
        let max_iter = 800;
        let orbit: SharedOrbit =
            reference_orbit(&big.center_re, &big.center_im, big.precision_bits, max_iter).into();
        let small_job = DeepJob {
            spacing: big.job(max_iter, 4.0).spacing * FloatExp::from_f64(2.0),
            width_px: 6,
            height_px: 4,
            ..big.job(max_iter, 4.0)
        };
        let ss = PerturbedJob::prepare(
            small_job,
            2,
            coloring,
            orbit.clone(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(ss.sample_job(), big.job(max_iter, 4.0));
        let samples = render_job_cpu(&ss.sample_job(), &orbit, ss.bla());
        let b = ss
            .render_cpu_until(
                Band {
                    first_row: 0,
                    rows: 4,
                },
                false,
                &RenderControl::new(),
            )
            .unwrap();
        for y in 0..4usize {
            for x in 0..6usize {
                let mut sum = [0u32; 3];
                for (j, i) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    let p = samples[(2 * y + j) * 12 + 2 * x + i];
                    let c = coloring.color(
                        Escape {
                            n: p.n,
                            norm_sqr: p.norm_sqr as f32,
                        },
                        max_iter,
                    );
                    for k in 0..3 {
                        sum[k] += u32::from(c[k]);
                    }
                }
                let want = sum.map(|v| ((v + 2) / 4) as u8);
                assert_eq!(b.rgb[3 * (y * 6 + x)..][..3], want, "({x}, {y})");
            }
        }
    }

    /// N8: the largest image (65536²) has 2^32 pixels, one more than `u32` counts: its last
    /// row renders (band arithmetic in `u64`/`usize`), and its bands are bounded.
    #[test]
    fn the_largest_image_renders_in_bounded_bands() {
        let v = near_i(20, 65_536, 65_536).unwrap();
        let job = v.job(8, 4.0);
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 8).into();
        let p = PerturbedJob::prepare(
            job,
            1,
            Coloring::discrete(common::Palette::Gray),
            orbit,
            &AtomicBool::new(false),
        )
        .unwrap();
        let rows = p.rows_per_band(1 << 23);
        assert_eq!(rows, 128, "2^23 pixels per band");
        let bands = Band::split(65_536, rows).count();
        assert_eq!(bands, 512);
        let last = Band {
            first_row: 65_535,
            rows: 1,
        };
        let b = p
            .render_cpu_until(last, true, &RenderControl::new())
            .unwrap();
        assert_eq!(b.rgb.len(), 3 * 65_536);
        assert_eq!(b.counts.len(), 65_536);
        // A deep job of 10^7 iterations gets one-row bands of at most 2^36 iterations.
        let deep = PerturbedJob {
            job: DeepJob {
                max_iter: 10_000_000,
                ..job
            },
            ..p
        };
        assert_eq!(deep.rows_per_band(1 << 23), 1);
    }

    /// A stop request ends a CPU band within a sample and returns `None`.
    #[test]
    fn a_stopped_band_returns_nothing() {
        let v = near_i(30, 64, 64).unwrap();
        let orbit: SharedOrbit =
            reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 100).into();
        let control = RenderControl::new();
        let p = PerturbedJob::prepare(
            v.job(100, 4.0),
            1,
            Coloring::discrete(common::Palette::Gray),
            orbit,
            &control.stop,
        )
        .unwrap();
        control.stop.store(true, Ordering::SeqCst);
        assert!(
            p.render_cpu_until(
                Band {
                    first_row: 0,
                    rows: 64
                },
                false,
                &control
            )
            .is_none()
        );
        assert_eq!(control.samples_done.load(Ordering::SeqCst), 0);
    }
}
