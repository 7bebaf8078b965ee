//! [`RenderJob`]: everything needed to colour one pixel — the sample grid (with
//! supersampling), the iteration limit and the [`Coloring`] — and [`Band`], a run of image
//! rows rendered by one launch. The CPU renderer and the GPU kernels call
//! [`RenderJob::pixel`] for every pixel, so their images are identical.

use crate::{
    Complex, Real, Viewport,
    escape::{Escape, escape},
    palette::{Coloring, Rgb},
};

/// Rows `first_row .. first_row + rows` of an image: the unit of work of one launch. Pixel
/// coordinates stay global (row `first_row + r`), so a band renders exactly the pixels the
/// whole image would, and bands can be split across launches or devices.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, cuda_std::DeviceCopy)]
pub struct Band {
    /// First image row (0 = top).
    pub first_row: u32,
    /// Number of rows.
    pub rows: u32,
}

impl Band {
    /// The bands of at most `rows_per_band` rows (≥ 1) covering `height_px` rows, top first.
    ///
    /// ```
    /// # use common::Band;
    /// let b: Vec<_> = Band::split(10, 4).collect();
    /// assert_eq!(b, [Band { first_row: 0, rows: 4 }, Band { first_row: 4, rows: 4 }, Band { first_row: 8, rows: 2 }]);
    /// ```
    pub fn split(height_px: u32, rows_per_band: u32) -> impl Iterator<Item = Band> {
        let per = rows_per_band.max(1);
        (0..height_px.div_ceil(per)).map(move |k| {
            let first_row = k * per;
            Band {
                first_row,
                rows: per.min(height_px - first_row),
            }
        })
    }
}

/// A Mandelbrot image to render: `width_px × height_px` pixels, each the average of
/// `supersample × supersample` samples on the grid `samples`. `#[repr(C)]`, passed to kernels
/// by value; build it in `f64` with [`RenderJob::new`] and [`cast`](RenderJob::cast) it for
/// `f32` rendering, so the CPU and GPU receive exactly the same numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
pub struct RenderJob<F> {
    /// The sample grid: `(width_px·supersample) × (height_px·supersample)` points; sample
    /// `(x·s + i, y·s + j)` belongs to pixel `(x, y)`.
    pub samples: Viewport<F>,
    /// Image width in pixels.
    pub width_px: u32,
    /// Image height in pixels.
    pub height_px: u32,
    /// Samples per pixel along each axis (1, 2 or 4 from the CLI; 0 is treated as 1).
    pub supersample: u32,
    /// Iteration limit.
    pub max_iter: u32,
    /// How escape results become colours.
    pub coloring: Coloring,
}

impl RenderJob<f64> {
    /// The job for the image `view` with `supersample × supersample` samples per pixel, evenly
    /// spaced inside each pixel (sample centres at `(i + ½)/s` of the pixel, `i < s`). With
    /// `supersample = 1` the samples are the pixel centres of `view`, unchanged.
    ///
    /// `supersample` must be at least 1 and `view.width_px · supersample` must fit in `u32`.
    pub fn new(view: &Viewport<f64>, supersample: u32, max_iter: u32, coloring: Coloring) -> Self {
        let s = supersample.max(1);
        let samples = if s == 1 {
            *view
        } else {
            let sf = f64::from(s);
            // Pixel centre minus half a pixel plus half a sample: origin ∓ step·(s - 1)/(2s).
            let shift = (sf - 1.0) / (2.0 * sf);
            Viewport {
                width_px: view.width_px * s,
                height_px: view.height_px * s,
                origin: Complex::new(
                    view.origin.re - view.step_re * shift,
                    view.origin.im + view.step_im * shift,
                ),
                step_re: view.step_re / sf,
                step_im: view.step_im / sf,
            }
        };
        Self {
            samples,
            width_px: view.width_px,
            height_px: view.height_px,
            supersample: s,
            max_iter,
            coloring,
        }
    }
}

impl<F: Real> RenderJob<F> {
    /// The same job with the sample grid in precision `G` (rounded to nearest when narrowing).
    pub fn cast<G: Real>(&self) -> RenderJob<G> {
        RenderJob {
            samples: self.samples.cast(),
            width_px: self.width_px,
            height_px: self.height_px,
            supersample: self.supersample,
            max_iter: self.max_iter,
            coloring: self.coloring,
        }
    }

    /// Pixel `(x, y)`: the sum of its samples' escape times (with the colouring's bailout) and
    /// its colour, the rounded average of its samples' colours per channel:
    /// `(Σ channel + s²/2) / s²` in integers. With `supersample = 1`, the escape time and
    /// colour of the pixel centre.
    ///
    /// ```
    /// # use common::{Complex, RenderJob, Viewport, palette::{Coloring, Palette}};
    /// let view = Viewport::from_center_scale(4, 4, Complex::new(0.0, 0.0), 0.01).unwrap();
    /// let job = RenderJob::new(&view, 2, 100, Coloring::discrete(Palette::Fire));
    /// assert_eq!(job.pixel(1, 1), (400, [0, 0, 0])); // 4 samples near 0, all in the set
    /// ```
    #[inline(always)]
    pub fn pixel(&self, x: u32, y: u32) -> (u32, Rgb) {
        if self.supersample <= 1 {
            self.pixel_single(x, y)
        } else {
            self.pixel_supersampled(x, y)
        }
    }

    /// [`pixel`](Self::pixel) for a job with one sample per pixel (`supersample ≤ 1`): the
    /// escape time and colour of sample `(x, y)`. (The GPU has a kernel for this case alone:
    /// without the supersampling loop it needs fewer registers.)
    #[inline(always)]
    pub fn pixel_single(&self, x: u32, y: u32) -> (u32, Rgb) {
        let e = self.escape_single(x, y);
        (e.n, self.coloring.color(e, self.max_iter))
    }

    /// The escape result of sample `(x, y)` with the colouring's bailout: what
    /// [`pixel_single`](Self::pixel_single) colours. (The GPU renders one-sample jobs in two
    /// passes: this, then [`Coloring::color`].)
    #[inline(always)]
    pub fn escape_single(&self, x: u32, y: u32) -> Escape {
        let bailout = self.coloring.bailout_sqr::<F>();
        escape(self.samples.pixel_to_complex(x, y), self.max_iter, bailout)
    }

    /// [`pixel`](Self::pixel) for a supersampled job (`supersample ≥ 2`; 1 and 0 give the
    /// same result as [`pixel_single`](Self::pixel_single)).
    #[inline(always)]
    pub fn pixel_supersampled(&self, x: u32, y: u32) -> (u32, Rgb) {
        let bailout = self.coloring.bailout_sqr::<F>();
        let s = self.supersample.max(1);
        let mut n_sum = 0u32;
        let mut sum = [0u32; 3];
        for j in 0..s {
            for i in 0..s {
                let c = self.samples.pixel_to_complex(x * s + i, y * s + j);
                let e = escape(c, self.max_iter, bailout);
                n_sum = n_sum.saturating_add(e.n);
                let rgb = self.coloring.color(e, self.max_iter);
                sum[0] += u32::from(rgb[0]);
                sum[1] += u32::from(rgb[1]);
                sum[2] += u32::from(rgb[2]);
            }
        }
        let count = s * s;
        let avg = |v: u32| ((v + count / 2) / count) as u8;
        (n_sum, [avg(sum[0]), avg(sum[1]), avg(sum[2])])
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::{
        escape::escape_time,
        palette::{Palette, Shading},
    };
    use std::vec::Vec;

    fn c(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    #[test]
    fn bands_cover_the_image_once() {
        for (h, per) in [
            (1, 1),
            (7, 3),
            (1024, 1024),
            (1025, 1024),
            (10, 100),
            (5, 0),
        ] {
            let bands: Vec<Band> = Band::split(h, per).collect();
            let mut next = 0;
            for b in &bands {
                assert_eq!(b.first_row, next, "h {h} per {per}");
                assert!(b.rows >= 1 && b.rows <= per.max(1));
                next += b.rows;
            }
            assert_eq!(next, h, "h {h} per {per}");
        }
        assert_eq!(Band::split(0, 4).count(), 0);
    }

    #[test]
    fn supersample_1_is_the_view() {
        let v = Viewport::from_center_scale(5, 3, c(-0.5, 0.1), 2.0).unwrap();
        let job = RenderJob::new(&v, 1, 10, Coloring::discrete(Palette::Gray));
        assert_eq!(job.samples, v);
        assert_eq!(
            RenderJob::new(&v, 0, 10, Coloring::discrete(Palette::Gray)).supersample,
            1
        );
    }

    #[test]
    fn supersample_grid_by_hand() {
        // 2 × 1 pixels over re ∈ [0, 2], im ∈ [-0.5, 0.5]: step 1. With s = 2 the samples sit
        // at 1/4 and 3/4 of each pixel: re ∈ {0.25, 0.75, 1.25, 1.75}, im ∈ {0.25, -0.25}.
        let v = Viewport::from_corners(2, 1, c(0.0, 0.5), c(2.0, -0.5)).unwrap();
        let job = RenderJob::new(&v, 2, 10, Coloring::discrete(Palette::Gray));
        assert_eq!((job.samples.width_px, job.samples.height_px), (4, 2));
        assert_eq!(job.samples.pixel_to_complex(0, 0), c(0.25, 0.25));
        assert_eq!(job.samples.pixel_to_complex(3, 1), c(1.75, -0.25));
        // s = 4: 1/8, 3/8, ... of a pixel.
        let job = RenderJob::new(&v, 4, 10, Coloring::discrete(Palette::Gray));
        assert_eq!(job.samples.pixel_to_complex(0, 0), c(0.125, 0.375));
        assert_eq!(job.samples.pixel_to_complex(7, 3), c(1.875, -0.375));
        assert_eq!((job.width_px, job.height_px, job.supersample), (2, 1, 4));
    }

    #[test]
    fn supersampled_pixel_is_the_rounded_average() {
        // Pixel (0, 0) of a 1-pixel view centred on 0.375 + 0i with width 0.25 (s = 2): its
        // samples are 0.3125 ± 0.0625i and 0.4375 ± 0.0625i, just outside the cusp at 0.25.
        let v = Viewport::from_center_scale(1, 1, c(0.375, 0.0), 0.25).unwrap();
        for shading in [Shading::Discrete, Shading::Smooth] {
            let coloring = Coloring {
                shading,
                ..Coloring::discrete(Palette::Classic)
            };
            let job = RenderJob::new(&v, 2, 500, coloring);
            let mut sum = [0u32; 3];
            let mut n_sum = 0;
            for (re, im) in [
                (0.3125, 0.0625),
                (0.4375, 0.0625),
                (0.3125, -0.0625),
                (0.4375, -0.0625),
            ] {
                let e = escape(c(re, im), 500, coloring.bailout_sqr::<f64>());
                assert_eq!(
                    e.n,
                    if shading == Shading::Discrete {
                        escape_time(c(re, im), 500)
                    } else {
                        e.n
                    }
                );
                n_sum += e.n;
                let rgb = coloring.color(e, 500);
                for k in 0..3 {
                    sum[k] += u32::from(rgb[k]);
                }
            }
            let want = sum.map(|v| ((v + 2) / 4) as u8);
            assert_eq!(job.pixel(0, 0), (n_sum, want), "{shading:?}");
        }
    }

    #[test]
    fn single_and_supersampled_paths_agree_at_one_sample() {
        // The GPU renders one-sample jobs with `pixel_single` and others with `pixel`; the
        // supersampled path with s = 1 must give the same pixel.
        let v = Viewport::from_center_scale(16, 12, c(-0.7435, 0.1314), 0.02).unwrap();
        for coloring in [
            Coloring::discrete(Palette::Classic),
            Coloring::smooth(Palette::Viridis),
        ] {
            let job = RenderJob::new(&v, 1, 700, coloring);
            for y in 0..12 {
                for x in 0..16 {
                    let single = job.pixel_single(x, y);
                    assert_eq!(job.pixel_supersampled(x, y), single, "({x}, {y})");
                    assert_eq!(job.pixel(x, y), single, "({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn f32_job_is_the_cast_of_the_f64_job() {
        let v = Viewport::from_center_scale(9, 7, c(-0.7435, 0.1314), 0.01).unwrap();
        let job = RenderJob::new(&v, 4, 300, Coloring::smooth(Palette::Ocean));
        let j32: RenderJob<f32> = job.cast();
        assert_eq!(j32.samples, job.samples.cast::<f32>());
        assert_eq!(j32.coloring, job.coloring);
        // Pixel values come from the f32 sample grid.
        let (n, _) = j32.pixel(3, 2);
        let mut want = 0;
        for j in 0..4 {
            for i in 0..4 {
                want += escape(
                    j32.samples.pixel_to_complex(12 + i, 8 + j),
                    300,
                    65_536.0_f32,
                )
                .n;
            }
        }
        assert_eq!(n, want);
    }
}
