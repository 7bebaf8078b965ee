//! [`ComputeCapability`]: a GPU architecture.

use core::{fmt, str::FromStr};

/// A compute capability (a GPU architecture), e.g. 9.0 for the H100 and H200, or a code
/// target for one: `sm_90` (runs on 9.0 and every later GPU, as PTX), the arch-specific
/// `sm_90a` (uses features of exactly 9.0, such as `wgmma` and `setmaxnreg`, and runs only
/// there) or the family-specific `sm_100f` (features shared by a family, 10.0 and later
/// 10.x; runs on `major.minor` and later GPUs of the same major version; PTX ISA 8.8 and
/// NVIDIA's "Blackwell and CUDA 12.9 Introduce Family-Specific Architecture Features").
///
/// Displays as `sm_90` / `sm_90a` / `sm_100f`, the names rustc's `-C target-cpu` and ptxas'
/// `-arch` take; parses from that form (`sm_90`, `sm_90a`, `sm_100`, `sm_100f`, also
/// `compute_90[a|f]`) or from `9.0` / `9.0a` / `10.0f`. A device always reports a plain
/// capability (`arch_specific` and `family_specific` both `false`); at most one of the two
/// is set.
///
/// Ordered by `(major, minor, arch_specific, family_specific)`, so
/// `cc >= ComputeCapability::new(8, 0)` asks for Ampere or later and
/// `sm_100 < sm_100f < sm_100a < sm_101`. Order is not "runs on": whether code built for one
/// target runs on a device is [`ComputeCapability::runs_on`].
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
    /// A family-specific target (`sm_100f`): code for it runs on `major.minor` and later
    /// devices of the same `major`. Always `false` for a device's own capability, and when
    /// `arch_specific` is set.
    pub family_specific: bool,
}

impl ComputeCapability {
    /// The compute capability `major.minor` (not arch-specific).
    pub const fn new(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: false,
            family_specific: false,
        }
    }

    /// The arch-specific target `sm_<major><minor>a`: code that runs only on exactly
    /// `major.minor`.
    pub const fn new_arch_specific(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: true,
            family_specific: false,
        }
    }

    /// The family-specific target `sm_<major><minor>f` (PTX ISA 8.8 and later): code that
    /// runs on `major.minor` and later devices of the same `major` (`sm_100f` on 10.0 and
    /// 10.3, not on 12.0).
    pub const fn new_family_specific(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: false,
            family_specific: true,
        }
    }

    /// `sm_90a`: Hopper's arch-specific target (`wgmma`, `setmaxnreg`; PTX ISA 8.0 or later).
    pub const fn sm_90a() -> Self {
        Self::new_arch_specific(9, 0)
    }

    /// The same `major.minor` without the arch- or family-specific suffix (`sm_90a` →
    /// `sm_90`, `sm_100f` → `sm_100`).
    pub const fn base(self) -> Self {
        Self::new(self.major, self.minor)
    }

    /// Whether code built for this target runs on a device of capability `device` (whose
    /// own suffixes are ignored): an arch-specific target (`sm_90a`) only on exactly its
    /// `major.minor`; a family-specific one (`sm_100f`) on it and later devices of the same
    /// `major`; a plain target (PTX for `sm_80`) on it and every later device.
    pub const fn runs_on(self, device: Self) -> bool {
        if self.arch_specific {
            device.major == self.major && device.minor == self.minor
        } else if self.family_specific {
            device.major == self.major && device.minor >= self.minor
        } else {
            device.major > self.major || (device.major == self.major && device.minor >= self.minor)
        }
    }
}

impl fmt::Display for ComputeCapability {
    /// `sm_<major><minor>[a|f]`, e.g. `sm_90`, `sm_90a`, `sm_120`, `sm_100f`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match (self.arch_specific, self.family_specific) {
            (true, _) => "a",
            (false, true) => "f",
            (false, false) => "",
        };
        write!(f, "sm_{}{}{suffix}", self.major, self.minor)
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
             (e.g. `sm_90a`), `sm_XYf` (e.g. `sm_100f`), `compute_XY[a|f]` or `X.Y[a|f]`",
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
    /// `9.0a`) or `f` for a family-specific one (`sm_100f`, `10.0f`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || ParseComputeCapabilityError::new(text);
        let (s, arch_specific, family_specific) = if let Some(rest) = text.strip_suffix('a') {
            (rest, true, false)
        } else if let Some(rest) = text.strip_suffix('f') {
            (rest, false, true)
        } else {
            (text, false, false)
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
            family_specific,
        })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ComputeCapability {
    /// As its display form, `"sm_90"` / `"sm_90a"` / `"sm_100f"`.
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
            "sm_90A", "a", "sm_a", "9.a", "sm_9a", "sm_100af", "sm_100fa", "f", "sm_f", "9.f",
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
        let sm100f = ComputeCapability::new_family_specific(10, 0);
        assert!(ComputeCapability::new(10, 0) < sm100f);
        assert!(sm100f < ComputeCapability::new_arch_specific(10, 0));
        assert!(ComputeCapability::new_arch_specific(10, 0) < ComputeCapability::new(10, 1));
    }

    #[test]
    fn family_specific_targets_display_parse_and_run_on_their_family() {
        let sm100f = ComputeCapability::new_family_specific(10, 0);
        assert_eq!(
            (
                sm100f.major,
                sm100f.minor,
                sm100f.arch_specific,
                sm100f.family_specific
            ),
            (10, 0, false, true)
        );
        assert_eq!(sm100f.to_string(), "sm_100f");
        for text in ["sm_100f", "compute_100f", "10.0f"] {
            assert_eq!(text.parse(), Ok(sm100f), "{text}");
        }
        assert_eq!(sm100f.base(), ComputeCapability::new(10, 0));
        let json = serde_json::to_string(&sm100f).unwrap();
        assert_eq!(json, r#""sm_100f""#);
        assert_eq!(
            serde_json::from_str::<ComputeCapability>(&json).unwrap(),
            sm100f
        );
        let dev = ComputeCapability::new;
        // Same major, equal or later minor (CUDA 12.9 blog: sm_100f runs on 10.0 and 10.3).
        assert!(sm100f.runs_on(dev(10, 0)) && sm100f.runs_on(dev(10, 3)));
        for other in [dev(9, 0), dev(11, 0), dev(12, 0)] {
            assert!(!sm100f.runs_on(other), "{other}");
        }
        assert!(!ComputeCapability::new_family_specific(10, 3).runs_on(dev(10, 0)));
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
