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
    /// A coordinate, the scale or a computed pixel spacing is NaN or infinite.
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
                "viewport coordinates must be finite numbers (got NaN or infinity, or a pixel spacing that overflows)"
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
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// infinite inputs, [`ViewportError::NonPositiveScale`] for `scale <= 0`.
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
    /// infinite corners, [`ViewportError::CornersOutOfOrder`] unless
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
        let origin = Complex::new(
            upper_left.re + step_re / 2.0,
            upper_left.im - step_im / 2.0,
        );
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
