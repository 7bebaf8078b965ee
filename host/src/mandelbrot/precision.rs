//! The one rule that decides a view's arithmetic: `f32`, `f64`, or perturbation from an
//! arbitrary-precision reference orbit ([`Arithmetic`], decided by [`choose`] and its
//! helpers). `ferrocuda mandelbrot`, `ferrocuda zoom`, the bench and the examples all ask
//! here, so the switch to perturbation and the "f64 is too coarse" judgement are one test.
//!
//! The rule compares the sample spacing with the largest coordinate magnitude at the centre
//! (at least 1: near 0 the escape-time arithmetic itself works on values around 1): a format
//! with `p` significand bits renders a view while the spacing is at least `2^-(p − 8)` of
//! that magnitude, leaving 8 bits to resolve positions within a sample. So `f32` (24 bits)
//! down to `2^-16` ([`F32_MIN_RELATIVE_LOG2`]), `f64` (53 bits) down to `2^-44`
//! ([`F64_MIN_RELATIVE_LOG2`]), and perturbation below that.

use common::{Complex, Viewport};

/// Floating-point precision of the orbit computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// 32-bit floats: fastest; enough while the pixel spacing is well above f32's resolution
    /// at the view's coordinates.
    F32,
    /// 64-bit floats.
    F64,
}

impl Precision {
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    /// The float precision for a view by the one rule ([`for_viewport`]): `f32`
    /// or `f64`, and `true` when the rule says the view needs perturbation instead (f64
    /// would show blocky artefacts). For a supersampled image pass the sample grid
    /// ([`RenderJob::samples`](common::RenderJob::samples)).
    pub fn for_view(view: &Viewport<f64>) -> (Self, bool) {
        let choice = for_viewport(view);
        let float = choice.arithmetic.float().unwrap_or(Self::F64);
        (float, choice.arithmetic == Arithmetic::Perturbed)
    }

    /// Whether any precision renders `view` correctly: every coordinate small enough for f64
    /// to square (at most 2^500 ≈ 3.3·10^150 in magnitude), and pixels at least one unit in
    /// the last place of f64 apart at the centre (spacing ≥ 2^-52 of the centre's magnitude;
    /// closer pixels would all get the same coordinates, one flat colour). Views too deep for
    /// f64 are rendered by perturbation ([`crate::deep`]).
    ///
    /// # Errors
    /// A message naming the value that is out of range and what is allowed.
    pub fn check_view(view: &Viewport<f64>) -> Result<(), String> {
        let reach = max_coordinate(view);
        if !reach.is_finite() || reach > F64_MAX_COORD {
            return Err(format!(
                "the view reaches coordinates of magnitude {reach:e}: no precision renders it \
                 (f64 squares numbers up to 2^500 = {F64_MAX_COORD:e}); choose a centre and \
                 scale within that"
            ));
        }
        let magnitude = center_magnitude(view.center());
        let step = view.min_step();
        let resolved = step / magnitude >= 2f64.powi(-52);
        if !resolved {
            return Err(format!(
                "pixel spacing {step:e} is below f64's resolution at this centre ({:e}): every \
                 pixel would get the same coordinate; zooms this deep need perturbation",
                magnitude * 2f64.powi(-52)
            ));
        }
        Ok(())
    }
}

/// `log2` of the smallest sample spacing, relative to the centre's magnitude, rendered in
/// `f32`: 8 of its 24 significand bits left within a sample.
pub const F32_MIN_RELATIVE_LOG2: i32 = -16;
/// `log2` of the smallest sample spacing, relative to the centre's magnitude, rendered in
/// `f64` (8 of its 53 significand bits left within a sample); finer views are perturbed.
pub const F64_MIN_RELATIVE_LOG2: i32 = -44;
/// Largest coordinate magnitude rendered in f32: 2^60, whose square 2^120 is below f32's
/// largest finite number (about 2^128).
pub const F32_MAX_COORD: f64 = 1_152_921_504_606_846_976.0;
/// Largest coordinate magnitude rendered at all: 2^500, whose square is below f64's largest
/// finite number (about 2^1024).
pub const F64_MAX_COORD: f64 = 3.273_390_607_896_142e150;

/// The arithmetic a view is rendered in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// 32-bit floats (the `f32` kernels).
    F32,
    /// 64-bit floats (the `f64` kernels).
    F64,
    /// Perturbation from an arbitrary-precision reference orbit (`crate::deep`).
    Perturbed,
}

impl Arithmetic {
    /// `"f32"`, `"f64"` or `"perturbation"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F32 => "f32",
            Self::F64 => "f64",
            Self::Perturbed => "perturbation",
        }
    }

    /// The float kernels' precision, or `None` for perturbation.
    pub fn float(self) -> Option<Precision> {
        match self {
            Self::F32 => Some(Precision::F32),
            Self::F64 => Some(Precision::F64),
            Self::Perturbed => None,
        }
    }
}

impl From<Precision> for Arithmetic {
    fn from(p: Precision) -> Self {
        match p {
            Precision::F32 => Self::F32,
            Precision::F64 => Self::F64,
        }
    }
}

/// What [`choose`] decided, and from what.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrecisionChoice {
    /// The arithmetic the view needs.
    pub arithmetic: Arithmetic,
    /// `log2(sample spacing / centre magnitude)` (`-∞` for a spacing that underflowed).
    pub relative_log2: f64,
    /// The largest coordinate magnitude of the view, as given to [`choose`].
    pub reach: f64,
}

impl PrecisionChoice {
    /// Whether `arithmetic` renders this view without blocky artefacts: perturbation
    /// always; a float format while the rule would allow it (`f64` for an `f32` view too).
    pub fn resolves(&self, arithmetic: Arithmetic) -> bool {
        match arithmetic {
            Arithmetic::Perturbed => true,
            Arithmetic::F64 => self.arithmetic != Arithmetic::Perturbed,
            Arithmetic::F32 => self.arithmetic == Arithmetic::F32,
        }
    }
}

/// The rule: `f32` while the sample spacing is at least `2^-16` of the centre magnitude and
/// every coordinate is at most [`F32_MAX_COORD`] (whose square f32 holds), else `f64` while
/// the spacing is at least `2^-44` of the magnitude, else perturbation.
///
/// `center` is the view's centre, `spacing_log2` the `log2` of the distance between
/// samples (pixels, or sub-pixel samples when supersampling), `reach` the largest
/// coordinate magnitude of any sample.
pub fn choose(center: Complex<f64>, spacing_log2: f64, reach: f64) -> PrecisionChoice {
    let magnitude = center_magnitude(center);
    let relative_log2 = spacing_log2 - magnitude.log2();
    let arithmetic = if relative_log2 >= f64::from(F32_MIN_RELATIVE_LOG2) && reach <= F32_MAX_COORD
    {
        Arithmetic::F32
    } else if relative_log2 >= f64::from(F64_MIN_RELATIVE_LOG2) {
        Arithmetic::F64
    } else {
        Arithmetic::Perturbed
    };
    PrecisionChoice {
        arithmetic,
        relative_log2,
        reach,
    }
}

/// [`choose`] for a sample grid given as a [`Viewport`] (e.g. `RenderJob::samples`).
pub fn for_viewport(view: &Viewport<f64>) -> PrecisionChoice {
    choose(view.center(), view.min_step().log2(), max_coordinate(view))
}

/// [`choose`] for a view given by its centre and `log10` of its scale (the real-axis extent
/// of the image; any value, beyond f64's range too), `width_px × height_px` pixels of
/// `supersample²` samples each.
pub fn for_center_scale(
    center: Complex<f64>,
    scale_log10: f64,
    width_px: u32,
    height_px: u32,
    supersample: u32,
) -> PrecisionChoice {
    let samples = f64::from(width_px.max(1)) * f64::from(supersample.max(1));
    let spacing_log2 = scale_log10 * std::f64::consts::LOG2_10 - samples.log2();
    // Half the larger side's extent beyond the centre.
    let aspect = f64::from(height_px.max(1)) / f64::from(width_px.max(1));
    let half = 10f64.powf(scale_log10) * aspect.max(1.0) / 2.0;
    let reach = center.re.abs().max(center.im.abs()) + half;
    choose(center, spacing_log2, reach)
}

/// The magnitude that sets the resolution: the largest of `|re|`, `|im|` at the centre, at
/// least 1.
pub fn center_magnitude(c: Complex<f64>) -> f64 {
    c.re.abs().max(c.im.abs()).max(1.0)
}

/// The largest coordinate magnitude of any pixel of `view` (its corners).
pub fn max_coordinate(view: &Viewport<f64>) -> f64 {
    let far_re = view.origin.re + view.step_re * f64::from(view.width_px);
    let far_im = view.origin.im - view.step_im * f64::from(view.height_px);
    view.origin
        .re
        .abs()
        .max(view.origin.im.abs())
        .max(far_re.abs())
        .max(far_im.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N16: the view of the report (spacing 2e-12/1200 at 0.25) is below `f64`'s `2^-44`:
    /// perturbed, not rendered blocky in f64; the float thresholds are where they were.
    #[test]
    fn one_threshold_for_perturbation_and_the_f64_warning() {
        let c = Complex::new(0.250_000_000_001_2, 0.0);
        let v = Viewport::from_center_scale(1200, 900, c, 2e-12).unwrap();
        let a = for_viewport(&v);
        assert_eq!(a.arithmetic, Arithmetic::Perturbed);
        assert!(!a.resolves(Arithmetic::F64) && a.resolves(Arithmetic::Perturbed));
        let b = for_center_scale(c, 2e-12f64.log10(), 1200, 900, 1);
        assert_eq!(b.arithmetic, Arithmetic::Perturbed);
        assert!((a.relative_log2 - b.relative_log2).abs() < 1e-6);
        // Around the thresholds, at magnitude 1: spacing 2^-16 is f32, 2^-44 f64, below
        // 2^-44 perturbed.
        let at = |log2: f64| choose(Complex::new(0.5, 0.0), log2, 2.0).arithmetic;
        assert_eq!(at(-16.0), Arithmetic::F32);
        assert_eq!(at(-16.5), Arithmetic::F64);
        assert_eq!(at(-44.0), Arithmetic::F64);
        assert_eq!(at(-44.5), Arithmetic::Perturbed);
        assert_eq!(at(f64::NEG_INFINITY), Arithmetic::Perturbed);
        // Relative to the magnitude: at 2^10 the f64 limit is 2^-34.
        assert_eq!(
            choose(Complex::new(1024.0, 0.0), -34.5, 2e3).arithmetic,
            Arithmetic::Perturbed
        );
        // Coordinates beyond f32's square: f64.
        assert_eq!(
            choose(Complex::new(0.0, 0.0), -1.0, 1e20).arithmetic,
            Arithmetic::F64
        );
        // Supersampling refines the spacing.
        let s = for_center_scale(Complex::new(-0.75, 0.0), -9.0, 1000, 1000, 1);
        let s4 = for_center_scale(Complex::new(-0.75, 0.0), -9.0, 1000, 1000, 4);
        assert!((s.relative_log2 - s4.relative_log2 - 2.0).abs() < 1e-9);
    }
}
