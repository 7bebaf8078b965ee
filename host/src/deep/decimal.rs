//! The one decimal-number type: [`Decimal`], a number exactly as written. Every decimal
//! of the command line (`--scale`, `--center`, `--center-re`, `--center-im`, zoom's
//! `--start-scale`/`--end-scale`, the `Re`, `Im` and `Zoom` lines of a Kalles Fraktaler
//! location file) goes through [`Decimal::parse`], and a [`super::DeepView`] takes its
//! scale as one, so the text is read once.
//!
//! # What is accepted
//! After trimming surrounding whitespace, exactly this grammar (ASCII only):
//!
//! ```text
//! decimal  = [sign] mantissa [exponent]
//! sign     = "+" | "-"
//! mantissa = digits ["." [digits]] | "." digits      (at most one ".")
//! exponent = ("e" | "E") [sign] digits               (|exponent| ≤ MAX_EXPONENT)
//! ```
//!
//! The mantissa may have any number of digits (deep-zoom centres carry hundreds); the written
//! exponent is at most [`MAX_EXPONENT`] in size, so that no later sum of exponents can
//! overflow. Every exponent in that range is handled: a deep view converts its centre to
//! arbitrary precision ([`super::DeepView::new`]), where a part smaller than
//! `10^`[`super::NEGLIGIBLE_EXP10`] (1e-30103) in size, below every view's resolution, is 0
//! without any conversion (`astro-float`'s never ends below about `1e-646456993`). Anything
//! else (`1.2.3e-3`, `1-2`, `1e`, `1e5e5`, `nan`, `inf`, `0x10`, an empty string) is an
//! error naming the value and this rule.

use std::fmt;

/// Largest size of a written exponent: `1e1000000000` and `1e-1000000000` are accepted,
/// `1e1000000001` is "exponent out of range". Far beyond any view that can be rendered, and
/// far from `i64`'s limits, so exponent arithmetic (`Zoom` to scale, digit shifts) cannot wrap.
pub const MAX_EXPONENT: i64 = 1_000_000_000;

/// The rule quoted by every error, so that a message says what would be accepted.
const RULE: &str = "write an optional sign, digits with at most one `.`, and optionally `e` \
                    and a whole exponent, e.g. -0.75, 1.25e-3 or 1e-500";

/// A decimal number exactly as written (no rounding): its sign, its digits and its exponent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    /// Digits before the `.` (may be empty, as in `.5`).
    int: String,
    /// Digits after the `.` (may be empty).
    frac: String,
    /// The written exponent (0 when none), `|exp| ≤ MAX_EXPONENT`.
    exp: i64,
    /// Whether an exponent was written (kept in [`Decimal::text`]).
    has_exp: bool,
}

impl Decimal {
    /// Parses `s` by the grammar in the module documentation.
    ///
    /// # Errors
    /// A message naming `s` and what is wrong with it (not a decimal, or exponent out of
    /// range).
    pub fn parse(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let bad = || format!("`{s}` is not a decimal number: {RULE}");
        let (negative, rest) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(int) || !all_digits(frac) || (int.is_empty() && frac.is_empty()) {
            return Err(bad());
        }
        let exp = match exponent {
            None => 0,
            Some(e) => {
                let (neg, digits) = match e.as_bytes().first() {
                    Some(b'-') => (true, &e[1..]),
                    Some(b'+') => (false, &e[1..]),
                    _ => (false, e),
                };
                if digits.is_empty() || !all_digits(digits) {
                    return Err(bad());
                }
                let significant = digits.trim_start_matches('0');
                let value = if significant.len() > 10 {
                    None
                } else {
                    significant
                        .parse::<i64>()
                        .ok()
                        .or(significant.is_empty().then_some(0))
                };
                match value {
                    Some(v) if v <= MAX_EXPONENT => {
                        if neg {
                            -v
                        } else {
                            v
                        }
                    }
                    _ => {
                        return Err(format!(
                            "`{s}` is not allowed: exponent out of range (at most \
                             {MAX_EXPONENT} in size)"
                        ));
                    }
                }
            }
        };
        Ok(Self {
            negative,
            int: int.to_owned(),
            frac: frac.to_owned(),
            exp,
            has_exp: exponent.is_some(),
        })
    }

    /// Parses a number that must be greater than zero (a scale, a KFR `Zoom`); `what` names
    /// it in the error (e.g. `--scale`).
    ///
    /// # Errors
    /// As [`Decimal::parse`], or "must be positive" for zero and negative values.
    pub fn parse_positive(s: &str, what: &str) -> Result<Self, String> {
        let d = Self::parse(s).map_err(|e| format!("{what} {e}"))?;
        if d.is_zero() || d.negative {
            return Err(format!(
                "{what} {s} is not allowed: {what} `{}` must be positive",
                s.trim()
            ));
        }
        Ok(d)
    }

    /// Whether every digit is 0 (`0`, `-0.000e7`).
    pub fn is_zero(&self) -> bool {
        self.int.bytes().chain(self.frac.bytes()).all(|b| b == b'0')
    }

    /// The number as text with every digit kept, in a form any decimal reader takes: no `+`,
    /// a digit before the `.`, no trailing `.` (`+.5E+3` is `0.5e3`).
    pub fn text(&self) -> String {
        let sign = if self.negative { "-" } else { "" };
        let int = if self.int.is_empty() { "0" } else { &self.int };
        let frac = if self.frac.is_empty() {
            String::new()
        } else {
            format!(".{}", self.frac)
        };
        let exp = if self.has_exp {
            format!("e{}", self.exp)
        } else {
            String::new()
        };
        format!("{sign}{int}{frac}{exp}")
    }

    /// The nearest `f64` (0 or ±infinity where the number is beyond `f64`'s range).
    pub fn to_f64(&self) -> f64 {
        // The text is a valid Rust float literal; the exponent's size is bounded.
        self.text().parse().unwrap_or(f64::NAN)
    }

    /// The decimal place of the first significant digit (`10^place ≤ |self| <
    /// 10^(place + 1)`), from the digits alone; `None` for zero.
    pub fn leading_place(&self) -> Option<i64> {
        let first = self
            .int
            .bytes()
            .chain(self.frac.bytes())
            .position(|b| b != b'0')?;
        Some(self.int.len() as i64 - first as i64 - 1 + self.exp)
    }

    /// `log10(|self|)` (about 15 significant digits), for numbers beyond `f64`'s range;
    /// `None` for zero.
    pub fn log10_abs(&self) -> Option<f64> {
        let digits: Vec<u8> = self.int.bytes().chain(self.frac.bytes()).collect();
        let first = digits.iter().position(|&b| b != b'0')?;
        let lead: String = digits[first..]
            .iter()
            .take(17)
            .map(|&b| b as char)
            .collect();
        let m: f64 = format!("{}.{}", &lead[..1], &lead[1..]).parse().ok()?;
        Some(m.log10() + self.leading_place()? as f64)
    }

    /// The written exponent and the decimal mantissa as `f64`: `self = m · 10^k`, with
    /// `k` the written exponent (so it is never rounded, however large).
    pub fn split(&self) -> (f64, i64) {
        let sign = if self.negative { "-" } else { "" };
        let int = if self.int.is_empty() { "0" } else { &self.int };
        let m = format!("{sign}{int}.{}0", self.frac)
            .parse()
            .unwrap_or(f64::NAN);
        (m, self.exp)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_documented_grammar_and_keeps_every_digit() {
        for (s, text) in [
            ("0", "0"),
            ("-0.75", "-0.75"),
            ("+.5E+3", "0.5e3"),
            ("5.", "5"),
            ("1e-500", "1e-500"),
            (" 12.5e0 ", "12.5e0"),
            (
                "-1.7499984109937408174900248316242839345282",
                "-1.7499984109937408174900248316242839345282",
            ),
            ("1e1000000000", "1e1000000000"),
            ("1e-0001", "1e-1"),
        ] {
            assert_eq!(
                Decimal::parse(s).map(|d| d.text()),
                Ok(text.to_owned()),
                "{s}"
            );
        }
    }

    #[test]
    fn rejects_malformed_decimals_naming_value_and_rule() {
        for s in [
            "1.2.3e-3", "1-2", "1e", "1e5e5", "", "-", ".", "e5", "nan", "inf", "0x10", "1e+",
            "1 2", "--1", "1e2.5", "١",
        ] {
            let e = Decimal::parse(s).unwrap_err();
            assert!(e.contains(&format!("`{s}`")), "{e}");
            assert!(e.contains("at most one `.`"), "{e}");
        }
    }

    #[test]
    fn huge_exponents_are_out_of_range_not_wrapped() {
        for s in [
            "1e-9223372036854775808",
            "1e1000000001",
            "1e99999999999999999999",
        ] {
            let e = Decimal::parse(s).unwrap_err();
            assert!(e.contains("exponent out of range") && e.contains(s), "{e}");
        }
    }

    #[test]
    fn scales_must_be_positive() {
        for s in ["-1e0", "0e0", "0", "-0.000"] {
            let e = Decimal::parse_positive(s, "--scale").unwrap_err();
            assert!(e.contains("must be positive") && e.contains(s), "{e}");
        }
        assert!(Decimal::parse_positive("1e-400", "--scale").is_ok());
    }

    #[test]
    fn values_beyond_f64_keep_their_magnitude() {
        let d = Decimal::parse("2.5e-600").unwrap();
        assert_eq!(d.to_f64(), 0.0);
        assert!((d.log10_abs().unwrap() - (2.5f64.log10() - 600.0)).abs() < 1e-12);
        assert!(
            (Decimal::parse("0.00125").unwrap().log10_abs().unwrap() - 0.00125f64.log10()).abs()
                < 1e-12
        );
        assert_eq!(Decimal::parse("0.0").unwrap().log10_abs(), None);
        assert_eq!(Decimal::parse("-1.5e7").unwrap().split(), (-1.5, 7));
    }

    #[test]
    fn the_leading_place_is_read_from_the_digits() {
        for (s, place) in [
            ("1", Some(0)),
            ("12.5", Some(1)),
            ("0.00125", Some(-3)),
            ("-0.0305e-7", Some(-9)),
            ("999e1000000000", Some(1_000_000_002)),
            ("0.000e5", None),
        ] {
            assert_eq!(Decimal::parse(s).unwrap().leading_place(), place, "{s}");
        }
    }
}
