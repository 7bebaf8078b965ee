//! [`ComputeCapability`]: a GPU architecture.

use core::{fmt, str::FromStr};

/// A compute capability (a GPU architecture), e.g. 9.0 for the H100 and H200, or a code
/// target for one: `sm_90` (runs on 9.0 and every later GPU, as PTX) or the arch-specific
/// `sm_90a` (uses features of exactly 9.0, such as `wgmma` and `setmaxnreg`, and runs only
/// there; PTX ISA, "Architecture-Specific Features").
///
/// Displays as `sm_90` / `sm_90a`, the names rustc's `-C target-cpu` and ptxas' `-arch` take;
/// parses from that form (`sm_90`, `sm_90a`, `sm_100`, also `compute_90[a]`) or from `9.0` /
/// `9.0a`. A device always reports a plain capability (`arch_specific == false`).
///
/// Ordered by `(major, minor, arch_specific)`, so `cc >= ComputeCapability::new(8, 0)` asks
/// for Ampere or later and `sm_90 < sm_90a < sm_100`. Order is not "runs on": whether code
/// built for one target runs on a device is [`ComputeCapability::runs_on`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    /// The major version: 7 for Volta/Turing, 8 for Ampere/Ada, 9 for Hopper, 10 and 12 for
    /// Blackwell.
    pub major: u32,
    /// The minor version, 0 to 9.
    pub minor: u32,
    /// An arch-specific target (`sm_90a`): code for it runs only on exactly
    /// `major.minor`. Always `false` for a device's own capability.
    pub arch_specific: bool,
}

impl ComputeCapability {
    /// The compute capability `major.minor` (not arch-specific).
    pub const fn new(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: false,
        }
    }

    /// The arch-specific target `sm_<major><minor>a`: code that runs only on exactly
    /// `major.minor`.
    pub const fn new_arch_specific(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: true,
        }
    }

    /// `sm_90a`: Hopper's arch-specific target (`wgmma`, `setmaxnreg`; PTX ISA 8.0 or later).
    pub const fn sm_90a() -> Self {
        Self::new_arch_specific(9, 0)
    }

    /// The same `major.minor` without the arch-specific suffix (`sm_90a` → `sm_90`).
    pub const fn base(self) -> Self {
        Self::new(self.major, self.minor)
    }

    /// Whether code built for this target runs on a device of capability `device` (whose
    /// own `arch_specific` is ignored): an arch-specific target (`sm_90a`) only on exactly
    /// its `major.minor`; a plain target (PTX for `sm_80`) on it and every later device.
    pub const fn runs_on(self, device: Self) -> bool {
        if self.arch_specific {
            device.major == self.major && device.minor == self.minor
        } else {
            device.major > self.major || (device.major == self.major && device.minor >= self.minor)
        }
    }
}

impl fmt::Display for ComputeCapability {
    /// `sm_<major><minor>[a]`, e.g. `sm_90`, `sm_90a`, `sm_120`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sm_{}{}{}",
            self.major,
            self.minor,
            if self.arch_specific { "a" } else { "" }
        )
    }
}

/// A string that names no compute capability; displays the text (its first 32 bytes) and the
/// accepted forms.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ParseComputeCapabilityError {
    text: [u8; 32],
    len: usize,
    truncated: bool,
}

impl ParseComputeCapabilityError {
    fn new(text: &str) -> Self {
        let mut len = text.len().min(32);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        let mut buf = [0; 32];
        buf[..len].copy_from_slice(&text.as_bytes()[..len]);
        Self {
            text: buf,
            len,
            truncated: len < text.len(),
        }
    }

    /// The rejected text (at most its first 32 bytes).
    pub fn text(&self) -> &str {
        // The bytes were copied from a `&str` up to a char boundary.
        core::str::from_utf8(&self.text[..self.len]).unwrap_or_default()
    }
}

impl fmt::Debug for ParseComputeCapabilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseComputeCapabilityError")
            .field("text", &self.text())
            .finish()
    }
}

impl fmt::Display for ParseComputeCapabilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}{}` is not a compute capability: expected `sm_XY` (e.g. `sm_90`), `sm_XYa` \
             (e.g. `sm_90a`), `compute_XY[a]` or `X.Y[a]`",
            self.text(),
            if self.truncated { "…" } else { "" }
        )
    }
}

impl core::error::Error for ParseComputeCapabilityError {}

impl FromStr for ComputeCapability {
    type Err = ParseComputeCapabilityError;

    /// Parses `sm_XY` / `compute_XY` (the last digit is the minor version: `sm_100` is 10.0)
    /// or `X.Y`, each with an optional `a` suffix for an arch-specific target (`sm_90a`,
    /// `9.0a`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || ParseComputeCapabilityError::new(text);
        let (s, arch_specific) = match text.strip_suffix('a') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let digits =
            |t: &str| !t.is_empty() && t.len() <= 4 && t.bytes().all(|b| b.is_ascii_digit());
        let (major, minor) =
            if let Some(rest) = s.strip_prefix("sm_").or_else(|| s.strip_prefix("compute_")) {
                if rest.len() < 2 || !digits(rest) {
                    return Err(err());
                }
                rest.split_at(rest.len() - 1)
            } else {
                let (major, minor) = s.split_once('.').ok_or_else(err)?;
                if !digits(major) || minor.len() != 1 || !digits(minor) {
                    return Err(err());
                }
                (major, minor)
            };
        Ok(Self {
            major: major.parse().map_err(|_| err())?,
            minor: minor.parse().map_err(|_| err())?,
            arch_specific,
        })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ComputeCapability {
    /// As its display form, `"sm_90"` / `"sm_90a"`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ComputeCapability {
    /// From any form [`FromStr`] accepts.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ComputeCapability;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a compute capability such as \"sm_90\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                v.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn displays_and_parses_sm_names() {
        for (cc, name) in [
            ((7, 0), "sm_70"),
            ((9, 0), "sm_90"),
            ((8, 6), "sm_86"),
            ((12, 0), "sm_120"),
        ] {
            let cc = ComputeCapability::new(cc.0, cc.1);
            assert_eq!(cc.to_string(), name);
            assert_eq!(name.parse::<ComputeCapability>(), Ok(cc));
        }
        assert_eq!("compute_80".parse(), Ok(ComputeCapability::new(8, 0)));
        assert_eq!("9.0".parse(), Ok(ComputeCapability::new(9, 0)));
        assert_eq!("10.3".parse(), Ok(ComputeCapability::new(10, 3)));
    }

    #[test]
    fn rejects_other_text_naming_it() {
        for bad in [
            "", "sm_", "sm_9", "sm_9x", "90", "9.", "9.10", "x.0", "sm_-90", "SM_90", "sm_90aa",
            "sm_90A", "a", "sm_a", "9.a", "sm_9a",
        ] {
            let err = bad.parse::<ComputeCapability>().unwrap_err();
            assert_eq!(err.text(), bad);
        }
        let long = "é".repeat(40);
        assert!(long.parse::<ComputeCapability>().unwrap_err().text().len() <= 32);
    }

    #[test]
    fn orders_by_major_then_minor() {
        assert!(ComputeCapability::new(8, 9) < ComputeCapability::new(9, 0));
        assert!(ComputeCapability::new(7, 5) > ComputeCapability::new(7, 0));
        assert!(ComputeCapability::new(9, 0) < ComputeCapability::sm_90a());
        assert!(ComputeCapability::sm_90a() < ComputeCapability::new(10, 0));
    }

    #[test]
    fn arch_specific_targets_display_parse_and_round_trip() {
        let sm90a = ComputeCapability::sm_90a();
        assert_eq!(
            (sm90a.major, sm90a.minor, sm90a.arch_specific),
            (9, 0, true)
        );
        assert_eq!(sm90a.to_string(), "sm_90a");
        for text in ["sm_90a", "compute_90a", "9.0a"] {
            assert_eq!(text.parse(), Ok(sm90a), "{text}");
        }
        assert_eq!(
            "sm_100a".parse(),
            Ok(ComputeCapability::new_arch_specific(10, 0))
        );
        assert_eq!(sm90a.base(), ComputeCapability::new(9, 0));
        assert_ne!(sm90a, ComputeCapability::new(9, 0));
        let json = serde_json::to_string(&sm90a).unwrap();
        assert_eq!(json, r#""sm_90a""#);
        assert_eq!(
            serde_json::from_str::<ComputeCapability>(&json).unwrap(),
            sm90a
        );
    }

    #[test]
    fn an_arch_specific_target_runs_only_on_its_exact_architecture() {
        let sm90a = ComputeCapability::sm_90a();
        let dev = ComputeCapability::new;
        assert!(sm90a.runs_on(dev(9, 0)));
        for other in [dev(8, 0), dev(8, 9), dev(10, 0), dev(12, 0), dev(9, 1)] {
            assert!(!sm90a.runs_on(other), "{other}");
        }
        // Plain PTX runs on its architecture and every later one.
        let sm80 = dev(8, 0);
        assert!(sm80.runs_on(dev(8, 0)) && sm80.runs_on(dev(8, 6)) && sm80.runs_on(dev(12, 0)));
        assert!(!sm80.runs_on(dev(7, 5)));
        assert!(!dev(8, 6).runs_on(dev(8, 0)));
        // A device's own flag is ignored.
        assert!(sm90a.runs_on(sm90a));
    }
}
