//! [`Viewport`]: which region of the complex plane an image of `width_px × height_px` shows.

use crate::{Complex, Real};

/// Why a viewport could not be built. Each variant names the bad value.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ViewportError {
    /// Width or height is zero.
    EmptyImage {
        /// Requested width in pixels.
        width_px: u32,
        /// Requested height in pixels.
        height_px: u32,
    },
    /// A coordinate, the scale or a computed pixel spacing is NaN or infinite, or a computed
    /// pixel spacing underflows to zero.
    NotFinite,
    /// The scale (width of the view along the real axis) is not positive.
    NonPositiveScale(f64),
    /// The upper-left corner is not strictly left of and above the lower-right corner.
    CornersOutOfOrder {
        /// Given upper-left corner.
        upper_left: Complex<f64>,
        /// Given lower-right corner.
        lower_right: Complex<f64>,
    },
}

impl core::fmt::Display for ViewportError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::EmptyImage {
                width_px,
                height_px,
            } => write!(
                f,
                "image size {width_px}x{height_px} is empty: width and height must be at least 1 pixel"
            ),
            Self::NotFinite => write!(
                f,
                "viewport coordinates must be finite numbers (got NaN or infinity, or a pixel spacing that overflows to infinity or underflows to zero)"
            ),
            Self::NonPositiveScale(s) => {
                write!(f, "scale {s} is not allowed: it must be a positive number")
            }
            Self::CornersOutOfOrder {
                upper_left,
                lower_right,
            } => write!(
                f,
                "corners {},{} and {},{} are out of order: the upper-left corner must have a \
                 smaller real part and a larger imaginary part than the lower-right corner",
                upper_left.re, upper_left.im, lower_right.re, lower_right.im
            ),
        }
    }
}

impl core::error::Error for ViewportError {}

/// A region of the complex plane sampled on a `width_px × height_px` pixel grid.
///
/// Pixel `(x, y)` (column `x`, row `y`, row 0 at the top) samples the complex number at its
/// centre, [`Viewport::pixel_to_complex`]:
/// `re = origin.re + x · step_re`, `im = origin.im - y · step_im`,
/// where `origin` is the centre of pixel `(0, 0)`. `#[repr(C)]` so it can be passed to a
/// kernel by value; build it in `f64` and [`cast`](Viewport::cast) it for `f32` rendering, so
/// the CPU and GPU receive exactly the same numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
pub struct Viewport<F> {
    /// Image width in pixels (≥ 1).
    pub width_px: u32,
    /// Image height in pixels (≥ 1).
    pub height_px: u32,
    /// Complex number at the centre of pixel `(0, 0)` (top-left).
    pub origin: Complex<F>,
    /// Real-axis distance between horizontally adjacent pixel centres (> 0).
    pub step_re: F,
    /// Imaginary-axis distance between vertically adjacent pixel centres (> 0; the imaginary
    /// part decreases going down the image).
    pub step_im: F,
}

impl Viewport<f64> {
    /// A view centred on `center` whose real-axis extent (the full image width) is `scale`;
    /// pixels are square, so the imaginary extent is `scale · height_px / width_px`.
    ///
    /// # Errors
    /// [`ViewportError::EmptyImage`] for a zero size, [`ViewportError::NotFinite`] for NaN or
    /// infinite inputs (or a pixel centre or spacing that overflows, or a spacing that
    /// underflows to zero),
    /// [`ViewportError::NonPositiveScale`] for `scale <= 0`.
    ///
    /// ```
    /// # use common::{Complex, Viewport};
    /// let v = Viewport::from_center_scale(4, 2, Complex::new(0.0, 0.0), 4.0).unwrap();
    /// assert_eq!(v.step_re, 1.0);
    /// assert_eq!(v.pixel_to_complex(0, 0), Complex::new(-1.5, 0.5));
    /// ```
    pub fn from_center_scale(
        width_px: u32,
        height_px: u32,
        center: Complex<f64>,
        scale: f64,
    ) -> Result<Self, ViewportError> {
        check_size(width_px, height_px)?;
        if !(center.re.is_finite() && center.im.is_finite() && scale.is_finite()) {
            return Err(ViewportError::NotFinite);
        }
        if scale <= 0.0 {
            return Err(ViewportError::NonPositiveScale(scale));
        }
        let step = scale / f64::from(width_px);
        let origin = Complex::new(
            center.re - step * (f64::from(width_px) - 1.0) / 2.0,
            center.im + step * (f64::from(height_px) - 1.0) / 2.0,
        );
        Self::checked(width_px, height_px, origin, step, step)
    }

    /// A view whose image spans from the `upper_left` corner to the `lower_right` corner
    /// (outer edges of the corner pixels, not their centres). Pixels may be non-square.
    ///
    /// # Errors
    /// [`ViewportError::EmptyImage`] for a zero size, [`ViewportError::NotFinite`] for NaN or
    /// infinite corners (or a pixel spacing that overflows or underflows to zero),
    /// [`ViewportError::CornersOutOfOrder`] unless
    /// `upper_left.re < lower_right.re` and `upper_left.im > lower_right.im`.
    pub fn from_corners(
        width_px: u32,
        height_px: u32,
        upper_left: Complex<f64>,
        lower_right: Complex<f64>,
    ) -> Result<Self, ViewportError> {
        check_size(width_px, height_px)?;
        let all = [upper_left.re, upper_left.im, lower_right.re, lower_right.im];
        if !all.iter().all(|v| v.is_finite()) {
            return Err(ViewportError::NotFinite);
        }
        if !(upper_left.re < lower_right.re && upper_left.im > lower_right.im) {
            return Err(ViewportError::CornersOutOfOrder {
                upper_left,
                lower_right,
            });
        }
        let step_re = (lower_right.re - upper_left.re) / f64::from(width_px);
        let step_im = (upper_left.im - lower_right.im) / f64::from(height_px);
        let origin = Complex::new(upper_left.re + step_re / 2.0, upper_left.im - step_im / 2.0);
        Self::checked(width_px, height_px, origin, step_re, step_im)
    }

    fn checked(
        width_px: u32,
        height_px: u32,
        origin: Complex<f64>,
        step_re: f64,
        step_im: f64,
    ) -> Result<Self, ViewportError> {
        let ok = [origin.re, origin.im, step_re, step_im]
            .iter()
            .all(|v| v.is_finite());
        // A spacing that underflows to zero would render one colour; treat it as not finite.
        if !ok || step_re <= 0.0 || step_im <= 0.0 {
            return Err(ViewportError::NotFinite);
        }
        Ok(Self {
            width_px,
            height_px,
            origin,
            step_re,
            step_im,
        })
    }

    /// The centre of the view.
    pub fn center(&self) -> Complex<f64> {
        Complex::new(
            self.origin.re + self.step_re * (f64::from(self.width_px) - 1.0) / 2.0,
            self.origin.im - self.step_im * (f64::from(self.height_px) - 1.0) / 2.0,
        )
    }

    /// The smallest pixel spacing in complex units (used to pick a precision).
    pub fn min_step(&self) -> f64 {
        self.step_re.min(self.step_im)
    }
}

impl<F: Real> Viewport<F> {
    /// The complex number sampled by pixel `(x, y)` (its centre). `x < width_px` and
    /// `y < height_px` are expected but not checked.
    #[inline(always)]
    pub fn pixel_to_complex(&self, x: u32, y: u32) -> Complex<F> {
        Complex::new(
            self.origin.re + F::from_u32(x) * self.step_re,
            self.origin.im - F::from_u32(y) * self.step_im,
        )
    }

    /// Number of pixels, `width_px · height_px`.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.width_px as usize * self.height_px as usize
    }

    /// Always `false` for a viewport built by the constructors (sizes are at least 1).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same viewport with every coordinate converted to precision `G` (rounded to nearest
    /// when narrowing).
    pub fn cast<G: Real>(&self) -> Viewport<G> {
        Viewport {
            width_px: self.width_px,
            height_px: self.height_px,
            origin: self.origin.cast(),
            step_re: G::from_f64(self.step_re.to_f64()),
            step_im: G::from_f64(self.step_im.to_f64()),
        }
    }
}

fn check_size(width_px: u32, height_px: u32) -> Result<(), ViewportError> {
    if width_px == 0 || height_px == 0 {
        Err(ViewportError::EmptyImage {
            width_px,
            height_px,
        })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    fn c(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    /// Asserts `|actual - expected| <= tol` for both parts, printing all three on failure.
    #[track_caller]
    fn assert_close(actual: Complex<f64>, expected: Complex<f64>, tol: f64) {
        let d = (actual.re - expected.re)
            .abs()
            .max((actual.im - expected.im).abs());
        assert!(
            d <= tol,
            "expected {expected:?}, got {actual:?}, difference {d:e} > {tol:e}"
        );
    }

    #[test]
    fn center_scale_power_of_two_is_exact() {
        // 1024 × 512, centre -0.5, scale 4: step = 4/1024 = 1/256; the image spans
        // re ∈ [-2.5, 1.5], im ∈ [-1, 1] (imaginary extent 4·512/1024 = 2).
        // Pixel (0, 0) centre: (-2.5 + 1/512, 1 - 1/512) = (-1279/512, 511/512).
        // Pixel (1023, 511) centre: (1.5 - 1/512, -1 + 1/512) = (767/512, -511/512).
        // All dyadic, so exact.
        let v = Viewport::from_center_scale(1024, 512, c(-0.5, 0.0), 4.0).unwrap();
        assert_eq!((v.width_px, v.height_px), (1024, 512));
        assert_eq!(v.step_re, 1.0 / 256.0);
        assert_eq!(v.step_im, 1.0 / 256.0);
        assert_eq!(v.min_step(), 1.0 / 256.0);
        assert_eq!(v.origin, c(-1279.0 / 512.0, 511.0 / 512.0));
        assert_eq!(v.pixel_to_complex(0, 0), c(-1279.0 / 512.0, 511.0 / 512.0));
        assert_eq!(v.pixel_to_complex(1023, 0), c(767.0 / 512.0, 511.0 / 512.0));
        assert_eq!(
            v.pixel_to_complex(0, 511),
            c(-1279.0 / 512.0, -511.0 / 512.0)
        );
        assert_eq!(
            v.pixel_to_complex(1023, 511),
            c(767.0 / 512.0, -511.0 / 512.0)
        );
        // Even size: the centre lies between pixels 511 and 512 (columns), 255 and 256 (rows).
        assert_eq!(
            v.pixel_to_complex(512, 256),
            c(-0.5 + 1.0 / 512.0, -1.0 / 512.0)
        );
        assert_eq!(v.center(), c(-0.5, 0.0));
        assert_eq!(v.len(), 1024 * 512);
        assert!(!v.is_empty());
    }

    #[test]
    fn center_scale_odd_size() {
        // 1001 × 777, centre (-0.75, 0.1), scale 3: step h = 3/1001, square pixels.
        // Pixel (0, 0) centre: (-0.75 - 1.5 + h/2, 0.1 + h·777/2 - h/2);
        // the middle pixel (500, 388) samples the centre itself;
        // pixel (1000, 776) centre: (-0.75 + 1.5 - h/2, 0.1 - h·777/2 + h/2).
        let (w, ht) = (1001, 777);
        let center = c(-0.75, 0.1);
        let v = Viewport::from_center_scale(w, ht, center, 3.0).unwrap();
        let h = 3.0 / 1001.0;
        assert_eq!(v.step_re, h);
        assert_eq!(v.step_im, h);
        let half_im = h * 777.0 / 2.0;
        let tol = 1e-14;
        assert_close(
            v.pixel_to_complex(0, 0),
            c(-2.25 + h / 2.0, 0.1 + half_im - h / 2.0),
            tol,
        );
        assert_close(v.pixel_to_complex(500, 388), center, tol);
        assert_close(
            v.pixel_to_complex(1000, 776),
            c(0.75 - h / 2.0, 0.1 - half_im + h / 2.0),
            tol,
        );
        // Round trip: a few ulps at most.
        assert_close(v.center(), center, 4.0 * f64::EPSILON);
        // Building again from the computed centre gives (nearly) the same viewport.
        let again = Viewport::from_center_scale(w, ht, v.center(), 3.0).unwrap();
        assert_close(again.origin, v.origin, 4.0 * f64::EPSILON);
    }

    #[test]
    fn center_scale_one_pixel() {
        // 1 × 1: the only pixel samples the centre; step = scale.
        let v = Viewport::from_center_scale(1, 1, c(0.25, -0.5), 0.125).unwrap();
        assert_eq!(v.origin, c(0.25, -0.5));
        assert_eq!(v.pixel_to_complex(0, 0), c(0.25, -0.5));
        assert_eq!((v.step_re, v.step_im), (0.125, 0.125));
        assert_eq!(v.center(), c(0.25, -0.5));
        assert_eq!(v.len(), 1);
    }

    #[test]
    fn corners_non_square_pixels() {
        // 4 × 2 spanning re ∈ [-2, 2], im ∈ [-3, 1]: step_re = 4/4 = 1, step_im = 4/2 = 2.
        // Pixel centres: re ∈ {-1.5, -0.5, 0.5, 1.5}, im ∈ {0, -2}; centre (0, -1).
        let v = Viewport::from_corners(4, 2, c(-2.0, 1.0), c(2.0, -3.0)).unwrap();
        assert_eq!((v.step_re, v.step_im), (1.0, 2.0));
        assert_eq!(v.min_step(), 1.0);
        assert_eq!(v.pixel_to_complex(0, 0), c(-1.5, 0.0));
        assert_eq!(v.pixel_to_complex(3, 0), c(1.5, 0.0));
        assert_eq!(v.pixel_to_complex(0, 1), c(-1.5, -2.0));
        assert_eq!(v.pixel_to_complex(3, 1), c(1.5, -2.0));
        assert_eq!(v.center(), c(0.0, -1.0));
        assert_eq!(v.len(), 8);
    }

    #[test]
    fn corners_odd_size() {
        // 1001 × 777 over [-2, 1] × [-1.2, 1.2]: the corner pixel centres sit half a step inside
        // the corners, and the middle pixel (500, 388) is the centre (-0.5, 0).
        let (ul, lr) = (c(-2.0, 1.2), c(1.0, -1.2));
        let v = Viewport::from_corners(1001, 777, ul, lr).unwrap();
        let (sr, si) = (3.0 / 1001.0, 2.4 / 777.0);
        assert_eq!(v.step_re, sr);
        assert_eq!(v.step_im, si);
        let tol = 1e-14;
        assert_close(
            v.pixel_to_complex(0, 0),
            c(-2.0 + sr / 2.0, 1.2 - si / 2.0),
            tol,
        );
        assert_close(
            v.pixel_to_complex(1000, 776),
            c(1.0 - sr / 2.0, -1.2 + si / 2.0),
            tol,
        );
        assert_close(v.pixel_to_complex(500, 388), c(-0.5, 0.0), tol);
        assert_close(v.center(), c(-0.5, 0.0), tol);
    }

    #[test]
    fn corners_one_pixel() {
        let v = Viewport::from_corners(1, 1, c(-1.0, 1.0), c(1.0, -1.0)).unwrap();
        assert_eq!(v.origin, c(0.0, 0.0));
        assert_eq!((v.step_re, v.step_im), (2.0, 2.0));
        assert_eq!(v.center(), c(0.0, 0.0));
    }

    #[test]
    fn corners_and_center_scale_agree() {
        // Square pixels: 800 × 600 with scale 4 around (-0.5, 0) spans [-2.5, 1.5] × [-1.5, 1.5].
        let a = Viewport::from_center_scale(800, 600, c(-0.5, 0.0), 4.0).unwrap();
        let b = Viewport::from_corners(800, 600, c(-2.5, 1.5), c(1.5, -1.5)).unwrap();
        assert_eq!(a.step_re, 4.0 / 800.0);
        assert_eq!(b.step_re, 4.0 / 800.0);
        assert_eq!(b.step_im, 3.0 / 600.0);
        for (x, y) in [
            (0, 0),
            (799, 0),
            (0, 599),
            (799, 599),
            (400, 300),
            (123, 456),
        ] {
            assert_close(a.pixel_to_complex(x, y), b.pixel_to_complex(x, y), 1e-14);
        }
    }

    #[test]
    fn cast_to_f32_rounds_each_field() {
        let v = Viewport::from_corners(10, 5, c(-0.3, 0.2), c(0.7, -0.3)).unwrap();
        let v32: Viewport<f32> = v.cast();
        assert_eq!((v32.width_px, v32.height_px), (10, 5));
        assert_eq!(v32.origin.re, v.origin.re as f32);
        assert_eq!(v32.origin.im, v.origin.im as f32);
        assert_eq!(v32.step_re, v.step_re as f32);
        assert_eq!(v32.step_im, v.step_im as f32);
        // pixel_to_complex in f32 is origin + x·step in f32 arithmetic.
        let p = v32.pixel_to_complex(7, 3);
        assert_eq!(p.re, v32.origin.re + 7.0 * v32.step_re);
        assert_eq!(p.im, v32.origin.im - 3.0 * v32.step_im);
        // ... and close to the f64 value: 0.1·(7 + 1/2) - 0.3 = 0.45, 0.2 - 0.1·3.5 = -0.15.
        assert!((f64::from(p.re) - 0.45).abs() < 1e-6, "{p:?}");
        assert!((f64::from(p.im) + 0.15).abs() < 1e-6, "{p:?}");
        // Dyadic values survive f64 → f32 → f64 unchanged.
        let d = Viewport::from_center_scale(1024, 512, c(-0.5, 0.0), 4.0).unwrap();
        assert_eq!(d.cast::<f32>().cast::<f64>(), d);
        assert_eq!(d.cast::<f64>(), d);
    }

    #[test]
    fn empty_image() {
        for (w, h) in [(0, 5), (5, 0), (0, 0)] {
            let want = ViewportError::EmptyImage {
                width_px: w,
                height_px: h,
            };
            let e = Viewport::from_center_scale(w, h, c(0.0, 0.0), 1.0).unwrap_err();
            assert_eq!(e, want);
            let e2 = Viewport::from_corners(w, h, c(-1.0, 1.0), c(1.0, -1.0)).unwrap_err();
            assert_eq!(e2, want);
            let msg = e.to_string();
            assert!(msg.contains(&std::format!("{w}x{h}")), "{msg}");
        }
        // The size is checked before anything else.
        assert_eq!(
            Viewport::from_center_scale(0, 1, c(f64::NAN, 0.0), -1.0).unwrap_err(),
            ViewportError::EmptyImage {
                width_px: 0,
                height_px: 1
            }
        );
    }

    #[test]
    fn not_finite_inputs() {
        let bad = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        for b in bad {
            for (center, scale) in [(c(b, 0.0), 1.0), (c(0.0, b), 1.0), (c(0.0, 0.0), b)] {
                assert_eq!(
                    Viewport::from_center_scale(8, 8, center, scale).unwrap_err(),
                    ViewportError::NotFinite,
                    "center {center:?}, scale {scale}"
                );
            }
            for (ul, lr) in [
                (c(b, 1.0), c(1.0, -1.0)),
                (c(-1.0, b), c(1.0, -1.0)),
                (c(-1.0, 1.0), c(b, -1.0)),
                (c(-1.0, 1.0), c(1.0, b)),
            ] {
                assert_eq!(
                    Viewport::from_corners(8, 8, ul, lr).unwrap_err(),
                    ViewportError::NotFinite,
                    "corners {ul:?} {lr:?}"
                );
            }
        }
        let msg = ViewportError::NotFinite.to_string();
        assert!(msg.contains("finite"), "{msg}");
    }

    #[test]
    fn spacing_underflow_and_overflow() {
        // 1e-320 (subnormal) / 1e6 = 1e-326 < 2⁻¹⁰⁷⁴ / 2, rounds to 0: rejected.
        assert_eq!(
            Viewport::from_center_scale(1_000_000, 1, c(0.0, 0.0), 1e-320).unwrap_err(),
            ViewportError::NotFinite
        );
        // Smallest subnormal 2⁻¹⁰⁷⁴ split over 2 pixels: 2⁻¹⁰⁷⁵ ties to even, i.e. 0.
        let tiny = f64::from_bits(1);
        assert_eq!(
            Viewport::from_corners(2, 1, c(0.0, 1.0), c(tiny, 0.0)).unwrap_err(),
            ViewportError::NotFinite
        );
        // ... but 1 pixel over that width is a valid (if silly) viewport.
        assert!(Viewport::from_corners(1, 1, c(0.0, 1.0), c(tiny, 0.0)).is_ok());
        // Corners 2e308 apart: the width overflows to infinity.
        assert_eq!(
            Viewport::from_corners(1, 1, c(-1e308, 1.0), c(1e308, -1.0)).unwrap_err(),
            ViewportError::NotFinite
        );
        // Centre -1.5e308, scale 1.5e308, 2 pixels: origin -1.5e308 - 0.375e308 overflows.
        assert_eq!(
            Viewport::from_center_scale(2, 1, c(-1.5e308, 0.0), 1.5e308).unwrap_err(),
            ViewportError::NotFinite
        );
        let msg = ViewportError::NotFinite.to_string();
        assert!(msg.contains("underflow"), "{msg}");
    }

    #[test]
    fn non_positive_scale() {
        for s in [0.0, -0.0, -1.5, -1e300, -f64::MIN_POSITIVE] {
            let e = Viewport::from_center_scale(8, 8, c(0.0, 0.0), s).unwrap_err();
            assert_eq!(e, ViewportError::NonPositiveScale(s));
            // PartialEq treats 0.0 == -0.0; check the sign is kept.
            let ViewportError::NonPositiveScale(got) = e else {
                unreachable!()
            };
            assert_eq!(got.to_bits(), s.to_bits());
        }
        let msg = ViewportError::NonPositiveScale(-1.5).to_string();
        assert!(msg.contains("scale -1.5 "), "{msg}");
        assert!(msg.contains("positive"), "{msg}");
    }

    #[test]
    fn corners_out_of_order() {
        let cases = [
            (c(1.0, 1.0), c(-1.0, -1.0)),  // left/right swapped
            (c(-1.0, -1.0), c(1.0, 1.0)),  // top/bottom swapped
            (c(0.5, 1.0), c(0.5, -1.0)),   // zero width
            (c(-1.0, 0.25), c(1.0, 0.25)), // zero height
            (c(1.0, -1.0), c(-1.0, 1.0)),  // both swapped
        ];
        for (ul, lr) in cases {
            assert_eq!(
                Viewport::from_corners(8, 8, ul, lr).unwrap_err(),
                ViewportError::CornersOutOfOrder {
                    upper_left: ul,
                    lower_right: lr
                }
            );
        }
        let msg = ViewportError::CornersOutOfOrder {
            upper_left: c(1.25, -0.5),
            lower_right: c(-3.0, 2.0),
        }
        .to_string();
        assert!(msg.contains("1.25,-0.5"), "{msg}");
        assert!(msg.contains("-3,2"), "{msg}");
        assert!(msg.contains("out of order"), "{msg}");
    }
}
