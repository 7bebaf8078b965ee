//! The command line's decimal options, every one read by the one strict decimal parser,
//! [`Decimal::parse`] (its grammar: `host::deep::Decimal`): `--center RE,IM`
//! ([`DecimalPoint`]), digits kept as text (`--center-re`, `--center-im`), and positive scales
//! (`--scale`, zoom's `--start-scale`).

use host::deep::Decimal;

/// A point of the complex plane as two decimals, every digit kept (`--center RE,IM`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecimalPoint {
    /// The real part.
    pub re: Decimal,
    /// The imaginary part.
    pub im: Decimal,
}

impl DecimalPoint {
    /// Parses `RE,IM` (one comma; each part by [`Decimal::parse`]).
    ///
    /// # Errors
    /// A message naming `s` and the part that is wrong.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (re, im) = super::parse::split_complex(s)?;
        let part = |p: &str| Decimal::parse(p).map_err(|e| format!("in `{s}`: {e}"));
        Ok(Self {
            re: part(re)?,
            im: part(im)?,
        })
    }

    /// The nearest `f64` point.
    pub fn to_f64(&self) -> common::Complex<f64> {
        common::Complex::new(self.re.to_f64(), self.im.to_f64())
    }
}

/// clap's value parser for a decimal kept as text (every digit).
pub fn parse_decimal_text(s: &str) -> Result<String, String> {
    Decimal::parse(s).map(|d| d.text())
}

/// clap's value parser for a positive scale, every digit kept: parsed once here, and the
/// typed value is what the rest of the CLI reads (its text, `log10`, `f64`).
///
/// # Errors
/// As [`Decimal::parse_positive`].
pub fn parse_scale(s: &str) -> Result<Decimal, String> {
    Decimal::parse_positive(s, "scale")
}

/// A positive scale that must be a normal `f64` (`--start-scale`); `what` names it.
///
/// # Errors
/// As [`Decimal::parse_positive`], or a value beyond `f64`'s range or below its smallest
/// normal number (named as typed: `1e-400` would otherwise read as `0`).
pub fn parse_scale_f64(s: &str, what: &str) -> Result<f64, String> {
    let d = Decimal::parse_positive(s, what)?;
    let v = d.to_f64();
    if !v.is_finite() {
        return Err(format!(
            "{what} `{s}` is not allowed: it is beyond f64's range (at most {:e})",
            f64::MAX
        ));
    }
    if v < f64::MIN_POSITIVE {
        return Err(format!(
            "{what} `{s}` is not allowed: it is below f64's range (at least {:e})",
            f64::MIN_POSITIVE
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_keep_their_digits() {
        let p = DecimalPoint::parse("-0.7436438870371587047521915061147746795140173834748,0.1")
            .unwrap();
        assert_eq!(
            p.re.text(),
            "-0.7436438870371587047521915061147746795140173834748"
        );
        assert!(
            DecimalPoint::parse("1,2,3")
                .unwrap_err()
                .contains("one comma")
        );
        assert!(DecimalPoint::parse("nan,0").unwrap_err().contains("nan,0"));
    }
}
