//! A deep-zoom view: centre as decimal strings of any length, the scale as a [`Decimal`], the
//! pixel grid, and the precision they need (bounded by [`MAX_PRECISION_BITS`]).

use super::arith::{RM, to_floatexp};
use super::decimal::Decimal;
use astro_float::{BigFloat, Consts, Radix, Sign};
use common::{
    floatexp::FloatExp,
    perturb::{self, DeepJob},
};

/// Most bits of precision a deep view may need: 100,000 (about 30,000 decimal digits, a
/// pixel spacing down to about `10^-30000`). Each reference-orbit step at this precision
/// costs three multiplications of 100,000-bit numbers (about 0.1 ms each with
/// `astro-float`), so a million-iteration orbit would already take minutes; deeper views
/// are refused ([`DeepError::TooDeep`]) before anything is parsed at that precision.
pub const MAX_PRECISION_BITS: usize = 100_000;

/// Why a deep view could not be set up. Each variant names the bad value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeepError {
    /// A coordinate is not a decimal number.
    #[error("{what} `{value}` is not a decimal number (e.g. -0.75, 1.25e-3)")]
    NotANumber {
        /// Which input.
        what: &'static str,
        /// The text given.
        value: String,
    },
    /// The scale is not a positive decimal number.
    #[error("scale `{0}` must be a positive decimal number, e.g. 3, 0.01 or 1e-500")]
    BadScale(String),
    /// An image dimension is zero.
    #[error("image size {0}×{1}: both must be at least 1")]
    EmptyImage(u32, u32),
    /// The view needs more than [`MAX_PRECISION_BITS`] bits.
    #[error(
        "scale `{scale}` is too deep: its pixel spacing needs about {bits} bits of precision, \
         more than the {max} bits allowed (pixel spacing down to about 1e-{max_digits})",
        max = MAX_PRECISION_BITS,
        max_digits = MAX_PRECISION_BITS * 3 / 10
    )]
    TooDeep {
        /// The scale given.
        scale: String,
        /// The bits it would need (at least; saturated for absurd exponents).
        bits: u64,
    },
}

/// A deep-zoom view: centre as decimal strings, the scale, the pixel grid.
#[derive(Clone, Debug)]
pub struct DeepView {
    /// Real part of the centre.
    pub center_re: BigFloat,
    /// Imaginary part of the centre.
    pub center_im: BigFloat,
    /// Real-axis extent of the image width.
    pub scale: BigFloat,
    /// Image width in pixels.
    pub width_px: u32,
    /// Image height in pixels.
    pub height_px: u32,
    /// Bits of precision of the coordinates and of the reference orbit.
    pub precision_bits: usize,
}

/// The decimal place of the first significant digit of `text` (`10^place ≤ |x| <
/// 10^(place + 1)`), read from the text alone, without parsing it at any precision (an
/// exponent with more digits than `i128` holds saturates), and whether every digit is 0
/// (then the place is the written exponent's); `None` if the text is not of the form
/// `[+-]digits[.digits][(e|E)[+-]digits]`.
fn leading_place(text: &str) -> Option<(i128, bool)> {
    let t = text.trim();
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let exp: i128 = match exp {
        // An exponent with more digits than i128 holds is absurd either way: saturate.
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            e.parse().unwrap_or(if e.starts_with('-') {
                i128::MIN / 2
            } else {
                i128::MAX / 2
            })
        }
        None => 0,
    };
    let mant = mant.strip_prefix(['+', '-']).unwrap_or(mant);
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (lead, zero) = match int.trim_start_matches('0') {
        s if !s.is_empty() => (s.len() as i128 - 1, false),
        _ => match frac.find(|c| c != '0') {
            Some(i) => (-(i as i128) - 1, false),
            None => (0, true),
        },
    };
    Some((lead.saturating_add(exp), zero))
}

/// The bits a view of `scale` on an image `width_px` wide needs, estimated from its digits
/// alone (its decimal exponent and the position of its first significant digit; for a zero,
/// the written exponent), without converting it at any precision. Used to refuse views
/// deeper than [`MAX_PRECISION_BITS`] before an arbitrary-precision conversion of a huge
/// exponent.
pub fn estimated_bits(scale: &Decimal, width_px: u32) -> u64 {
    // Decimal position of the first significant digit: 10^log10 ≤ |scale| < 10^(log10+1).
    let log10 = scale.leading_place().unwrap_or_else(|| scale.split().1);
    // bits ≈ −log2(spacing) + 64, spacing = scale / width.
    let spacing_log2 =
        (log10 as f64) * std::f64::consts::LOG2_10 - f64::from(width_px.max(1)).log2();
    let bits = (-spacing_log2).max(0.0) + 64.0;
    if bits >= u64::MAX as f64 {
        u64::MAX
    } else {
        bits as u64
    }
}

/// Centre coordinates smaller in size than `10^NEGLIGIBLE_EXP10` (`1e-30103`, just below
/// `2^-MAX_PRECISION_BITS`) are taken as 0 ([`DeepView::new`]). A view resolves positions
/// to `2^-64` of its pixel spacing, `2^-precision_bits` (the precision is chosen so), and no
/// view has more than [`MAX_PRECISION_BITS`] bits: such a coordinate is below the
/// resolution of every view, as the digits a centre has beyond its precision are. Taking it
/// as 0 also keeps its exponent away from `astro-float`'s decimal conversion, which never
/// ends for exponents below about `-6.46·10⁸` (its smallest number is `2^-2^31`).
pub const NEGLIGIBLE_EXP10: i64 =
    // floor(MAX_PRECISION_BITS · log10 2) + 1, with log10 2 = 0.30102999566…
    -(MAX_PRECISION_BITS as i64 * 30_102_999_566 / 100_000_000_000 + 1);

impl DeepView {
    /// Parses the centre (decimal strings of any length) and takes the scale (a [`Decimal`],
    /// parsed once by its caller, e.g. `1e-500`), and chooses the precision: enough bits for
    /// the pixel spacing (`scale / width`) plus 64, at least 128, at most
    /// [`MAX_PRECISION_BITS`]. A centre coordinate smaller in size than
    /// `10^`[`NEGLIGIBLE_EXP10`] is below every view's resolution and is taken as 0 (whatever
    /// its exponent: `1e-999999999` is read at once).
    ///
    /// # Errors
    /// [`DeepError`] naming the bad value (a scale by its [`Decimal::text`]);
    /// [`DeepError::TooDeep`] (decided from the scale's digits, before any
    /// arbitrary-precision conversion) for a scale needing more than [`MAX_PRECISION_BITS`]
    /// bits; [`DeepError::BadScale`] for a scale that is not positive or beyond
    /// `astro-float`'s range.
    pub fn new(
        center_re: &str,
        center_im: &str,
        scale: &Decimal,
        width_px: u32,
        height_px: u32,
    ) -> Result<Self, DeepError> {
        if width_px == 0 || height_px == 0 {
            return Err(DeepError::EmptyImage(width_px, height_px));
        }
        let text = scale.text();
        // A margin over the estimate's rounding: the exact figure is checked below.
        let estimate = estimated_bits(scale, width_px);
        if estimate > MAX_PRECISION_BITS as u64 + 8 {
            return Err(DeepError::TooDeep {
                scale: text,
                bits: estimate,
            });
        }
        let mut cc = Consts::new().expect("astro-float constants cache");
        // The scale first at a modest precision, to learn its magnitude: the precision is
        // chosen from this rounding's binary exponent.
        let s = parse(&text, 128, &mut cc).ok_or_else(|| DeepError::BadScale(text.clone()))?;
        if s.is_zero() || s.sign() != Some(Sign::Pos) {
            return Err(DeepError::BadScale(text));
        }
        let spacing_exp = i64::from(s.exponent().unwrap_or(0)) - i64::from(width_px.ilog2());
        let bits = usize::try_from((-spacing_exp).max(0) + 64).unwrap_or(usize::MAX / 2);
        let bits = bits.max(128);
        if bits > MAX_PRECISION_BITS {
            return Err(DeepError::TooDeep {
                scale: text,
                bits: bits as u64,
            });
        }
        let number = |what, text: &str, cc: &mut Consts| {
            parse(text, bits, cc).ok_or_else(|| DeepError::NotANumber {
                what,
                value: text.into(),
            })
        };
        // Checked against the grammar first: `astro-float` reads some texts outside it
        // (`1e-999999999e5`) as far as it can, and a huge exponent never ends.
        let coordinate = |what, text: &str, cc: &mut Consts| match leading_place(text) {
            None => Err(DeepError::NotANumber {
                what,
                value: text.into(),
            }),
            Some((place, false)) if place < i128::from(NEGLIGIBLE_EXP10) => {
                Ok(BigFloat::from_word(0, bits))
            }
            Some(_) => number(what, text, cc),
        };
        Ok(Self {
            center_re: coordinate("centre real part", center_re, &mut cc)?,
            center_im: coordinate("centre imaginary part", center_im, &mut cc)?,
            scale: number("scale", &text, &mut cc)?,
            width_px,
            height_px,
            precision_bits: bits,
        })
    }

    /// A view centred on `(re, im)` (any precision; rounded or extended to the view's).
    ///
    /// # Errors
    /// As [`DeepView::new`] for the scale and size.
    pub fn at(
        re: &BigFloat,
        im: &BigFloat,
        scale: &Decimal,
        width_px: u32,
        height_px: u32,
    ) -> Result<Self, DeepError> {
        let mut v = Self::new("0", "0", scale, width_px, height_px)?;
        let bits = v.precision_bits;
        let set = |x: &BigFloat| {
            let mut x = x.clone();
            // Only fails for NaN/Inf, which a nucleus never is.
            let _ = x.set_precision(bits, RM);
            x
        };
        v.center_re = set(re);
        v.center_im = set(im);
        Ok(v)
    }

    /// Distance between adjacent pixel centres, `scale / width_px`.
    pub fn spacing(&self) -> BigFloat {
        self.scale.div(
            &BigFloat::from_u32(self.width_px, self.precision_bits),
            self.precision_bits,
            RM,
        )
    }

    /// The job the perturbation kernels and the CPU renderer run: this view's grid at
    /// `max_iter`, escaping at `|z|² > bailout_sqr` (pixel `δc` as [`DeepJob::delta`], the
    /// same offsets as [`DeepView::pixel`]).
    pub fn job(&self, max_iter: u32, bailout_sqr: f64) -> DeepJob {
        DeepJob {
            spacing: to_floatexp(&self.spacing()),
            width_px: self.width_px,
            height_px: self.height_px,
            max_iter,
            bailout_sqr,
        }
    }

    /// Pixel `(x, y)`'s `c` in full precision.
    pub fn pixel(&self, spacing: &BigFloat, x: u32, y: u32) -> (BigFloat, BigFloat) {
        let p = self.precision_bits;
        let (ox, oy) = perturb::pixel_offset(self.width_px, self.height_px, x, y);
        let re = self
            .center_re
            .add(&spacing.mul(&BigFloat::from_f64(ox, p), p, RM), p, RM);
        let im = self
            .center_im
            .add(&spacing.mul(&BigFloat::from_f64(oy, p), p, RM), p, RM);
        (re, im)
    }
}

pub(crate) fn parse(text: &str, bits: usize, cc: &mut Consts) -> Option<BigFloat> {
    let t = text.trim();
    let ok = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    if !ok {
        return None;
    }
    let v = BigFloat::parse(t, Radix::Dec, bits, RM, cc);
    (!v.is_nan() && !v.is_inf()).then_some(v)
}

/// A scale written by this crate (e.g. by [`decimal`]) as a [`Decimal`]: a text that is not
/// one is a [`DeepError::BadScale`] naming it.
pub(crate) fn generated_scale(text: String) -> Result<Decimal, DeepError> {
    Decimal::parse(&text).map_err(|_| DeepError::BadScale(text))
}

/// The scale `10^log10` as a [`Decimal`] with `decimals` digits after the point, as
/// [`decimal_of_log10`] writes it.
///
/// # Errors
/// [`DeepError::BadScale`] naming the text for a `log10` that is not finite.
pub fn scale_of_log10(log10: f64, decimals: usize) -> Result<Decimal, DeepError> {
    generated_scale(decimal_of_log10(log10, decimals))
}

/// The view used by the examples and tests: `width_px × height_px` at scale `10^-exp`
/// around the Misiurewicz point `c = i`, offset by `(1 + i)·10^-exp/7` off its symmetry. The
/// set has detail at every depth there, and minibrots about `10^-2·exp` across lie within
/// `10^-exp` of the centre ([`super::find_minibrot`]).
///
/// # Errors
/// [`DeepError::EmptyImage`] for a zero size.
pub fn near_i(exp: u32, width_px: u32, height_px: u32) -> Result<DeepView, DeepError> {
    DeepView::new(
        &format!("1.4285714285714285714e-{}", exp + 1),
        &format!("1.{}14285714285714285714", "0".repeat(exp as usize)),
        &generated_scale(format!("1e-{exp}"))?,
        width_px,
        height_px,
    )
}

/// `x` in decimal scientific notation with 4 significant digits, e.g. `"6.906e-41"` (any
/// exponent, beyond `f64`'s range too).
pub fn decimal(x: FloatExp) -> String {
    if x.m == 0.0 {
        return "0".into();
    }
    let log10 = (f64::from(x.e) + x.m.abs().log2()) * std::f64::consts::LOG10_2;
    let sign = if x.m < 0.0 { "-" } else { "" };
    format!("{sign}{}", decimal_of_log10(log10, 3))
}

/// `10^log10` in decimal scientific notation with `decimals` digits after the point, e.g.
/// `"3.162278e-301"` for `(-300.5, 6)` (any exponent, beyond `f64`'s range too).
pub fn decimal_of_log10(log10: f64, decimals: usize) -> String {
    let exp = log10.floor();
    let mant = 10f64.powf(log10 - exp);
    format!("{mant:.decimals$}e{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scale as the command line hands it over.
    fn scale(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    #[test]
    fn conversion_to_floatexp_is_exact_for_f64_values() {
        for x in [0.75, -3.0, 1e-300, 2.5e10] {
            let b = BigFloat::from_f64(x, 128);
            assert_eq!(to_floatexp(&b).to_f64(), x, "{x}");
        }
        let mut cc = Consts::new().unwrap();
        let tiny = parse("1e-500", 2048, &mut cc).unwrap();
        let f = to_floatexp(&tiny);
        // 1e-500 = 2^(-500·log2 10) = 2^-1660.964047…: exponent -1660 and mantissa
        // 2^-0.964047… = 0.51261676… (computed separately).
        assert_eq!(f.e, -1660);
        let want = (-(500.0 * std::f64::consts::LOG2_10 - 1660.0)).exp2();
        assert!((f.m - want).abs() < 1e-12, "{f:?} vs {want}");
    }

    #[test]
    fn bad_views_name_the_value() {
        let e = DeepView::new("0.1x", "0", &scale("1e-3"), 4, 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "centre real part `0.1x` is not a decimal number (e.g. -0.75, 1.25e-3)"
        );
        // Texts that are no decimal at all never get here: `Decimal::parse` refuses them.
        for s in ["0", "-1e-5"] {
            assert_eq!(
                DeepView::new("0", "0", &scale(s), 4, 4).unwrap_err(),
                DeepError::BadScale(s.into())
            );
        }
        assert_eq!(
            DeepView::new("0", "0", &scale("1"), 0, 4).unwrap_err(),
            DeepError::EmptyImage(0, 4)
        );
        let v = DeepView::new("0", "1", &scale("1e-300"), 64, 64).unwrap();
        // 1e-300/64 ≈ 2^-1003: 1003 + 64 bits.
        assert!(
            (1060..1080).contains(&v.precision_bits),
            "{}",
            v.precision_bits
        );
    }

    /// Issue 35: a centre coordinate below `10^NEGLIGIBLE_EXP10` (below the resolution of
    /// every view) is 0, whatever its exponent; before, `1e-999999999` never finished parsing
    /// (`astro-float`'s decimal conversion of exponents below about -6.46·10⁸). Anything
    /// larger is kept, however small.
    #[test]
    fn centre_coordinates_below_every_views_resolution_are_zero() {
        assert_eq!(NEGLIGIBLE_EXP10, -30_103);
        // 10^-30103 < 2^-100000 = 10^-30102.9996 ≤ every view's resolution.
        assert!(
            (NEGLIGIBLE_EXP10 as f64) < -(MAX_PRECISION_BITS as f64) * std::f64::consts::LOG10_2
        );
        let zero = DeepView::new("0", "0", &scale("1e-20"), 8, 8).unwrap();
        for (re, im) in [
            ("1e-999999999", "0"),
            ("0", "-1e-1000000000"),
            ("-0.00000000009e-646456990", "+9.99e-30104"),
            ("0.0001e-30100", "0"),
        ] {
            let v = DeepView::new(re, im, &scale("1e-20"), 8, 8).unwrap();
            assert!(v.center_re.is_zero() && v.center_im.is_zero(), "{re},{im}");
            assert_eq!(v.precision_bits, zero.precision_bits, "{re},{im}");
        }
        // At or above the bound: kept (10^-30103 at 128+ bits of relative precision).
        let kept = DeepView::new("1e-30103", "-2.5e-30000", &scale("1e-20"), 8, 8).unwrap();
        assert!(!kept.center_re.is_zero() && !kept.center_im.is_zero());
        assert_eq!(
            to_floatexp(&kept.center_re).e,
            to_floatexp(&parse("1e-30103", 128, &mut Consts::new().unwrap()).unwrap()).e
        );
        // Texts outside the grammar are errors, named, before any conversion (astro-float
        // reads `1e-999999999e5` as far as it can, and never ends).
        for bad in [
            "1e-99999999999x",
            "1e-999999999e5",
            "1e5e-999999999",
            "--1",
            "",
        ] {
            assert_eq!(
                DeepView::new(bad, "0", &scale("1e-20"), 8, 8).unwrap_err(),
                DeepError::NotANumber {
                    what: "centre real part",
                    value: bad.into()
                },
                "{bad}"
            );
        }
    }

    /// N9: views deeper than the bound are refused at once, from the scale's digits, with
    /// the figure; the estimate agrees with the parsed precision.
    #[test]
    fn views_beyond_the_precision_bound_are_refused_quickly() {
        // (An exponent beyond `MAX_EXPONENT` never gets here: `Decimal::parse` refuses it.)
        for text in ["1e-1000000", "1e-100000000", "0.0001e-1000000000"] {
            let t = std::time::Instant::now();
            let e = DeepView::new("0", "1", &scale(text), 1920, 1080).unwrap_err();
            assert!(t.elapsed().as_secs_f64() < 0.5, "{text}: {:?}", t.elapsed());
            assert!(matches!(e, DeepError::TooDeep { .. }), "{text}: {e:?}");
            let text = e.to_string();
            assert!(text.contains("100000 bits allowed"), "{text}");
        }
        // Just inside the bound: about 29,000 decimal digits.
        let inside = estimated_bits(&scale("1e-29000"), 64);
        assert!(
            (96_000..=MAX_PRECISION_BITS as u64).contains(&inside),
            "{inside}"
        );
        for (text, w) in [("1e-300", 64), ("0.00123", 1000), ("12.5e-40", 7), ("3", 1)] {
            let est = estimated_bits(&scale(text), w);
            let v = DeepView::new("0", "0", &scale(text), w, 1).unwrap();
            let exact = v.precision_bits as u64;
            assert!(
                exact == 128 || est.abs_diff(exact) <= 4,
                "{text}: estimate {est}, parsed {exact}"
            );
        }
    }
}
