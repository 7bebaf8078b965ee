//! [`ComputeCapability`]: a GPU architecture.

use core::{fmt, str::FromStr};

/// A compute capability (a GPU architecture), e.g. 9.0 for the H100 and H200.
///
/// Displays as `sm_90`, the name rustc's `-C target-cpu` and ptxas' `-arch` take; parses from
/// that form (`sm_90`, `sm_100`, also `compute_90`, each optionally with the `a` suffix) or
/// from `9.0`. Ordered by `(major, minor, arch_specific)`, so `cc >=
/// ComputeCapability::new(8, 0)` asks for Ampere or later.
///
/// An *architecture-specific* target (`sm_90a`, [`ComputeCapability::new_arch_specific`])
/// enables instructions that exist on that architecture only (Hopper's `wgmma`,
/// `setmaxnreg`, TMA multicast); its PTX and cubins run on exactly that compute capability,
/// not on later ones (PTX ISA "Module Directives: .target", `sm_90a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    /// The major version: 7 for Volta/Turing, 8 for Ampere/Ada, 9 for Hopper, 10 and 12 for
    /// Blackwell.
    pub major: u32,
    /// The minor version, 0 to 9.
    pub minor: u32,
    /// Whether this is the architecture-specific variant (`sm_90a`): its features exist on
    /// this exact compute capability only.
    pub arch_specific: bool,
}

impl ComputeCapability {
    /// The compute capability `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: false,
        }
    }

    /// The architecture-specific compute capability `major.minor` with the `a` suffix, e.g.
    /// `new_arch_specific(9, 0)` is `sm_90a` (the only target with `wgmma`).
    pub const fn new_arch_specific(major: u32, minor: u32) -> Self {
        Self {
            major,
            minor,
            arch_specific: true,
        }
    }
}

impl fmt::Display for ComputeCapability {
    /// `sm_<major><minor>`, e.g. `sm_90`, `sm_120`, with an `a` suffix when architecture
    /// specific (`sm_90a`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = if self.arch_specific { "a" } else { "" };
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
            "`{}{}` is not a compute capability: expected `sm_XY` (e.g. `sm_90`), `compute_XY` \
             or `X.Y`",
            self.text(),
            if self.truncated { "…" } else { "" }
        )
    }
}

impl core::error::Error for ParseComputeCapabilityError {}

impl FromStr for ComputeCapability {
    type Err = ParseComputeCapabilityError;

    /// Parses `sm_XY` / `compute_XY` (the last digit is the minor version: `sm_100` is 10.0),
    /// optionally with the `a` suffix (`sm_90a`, architecture specific), or `X.Y`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseComputeCapabilityError::new(s);
        let digits =
            |t: &str| !t.is_empty() && t.len() <= 4 && t.bytes().all(|b| b.is_ascii_digit());
        let mut arch_specific = false;
        let (major, minor) =
            if let Some(rest) = s.strip_prefix("sm_").or_else(|| s.strip_prefix("compute_")) {
                let rest = match rest.strip_suffix('a') {
                    Some(r) => {
                        arch_specific = true;
                        r
                    }
                    None => rest,
                };
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
    /// As its display form, `"sm_90"`.
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
    fn arch_specific_names_carry_the_a_suffix() {
        let cc = ComputeCapability::new_arch_specific(9, 0);
        assert_eq!(cc.to_string(), "sm_90a");
        assert_eq!("sm_90a".parse(), Ok(cc));
        assert_eq!(
            "compute_100a".parse(),
            Ok(ComputeCapability::new_arch_specific(10, 0))
        );
        assert_ne!(cc, ComputeCapability::new(9, 0));
        assert!(cc > ComputeCapability::new(9, 0) && cc < ComputeCapability::new(10, 0));
        for bad in ["sm_a", "sm_9a", "sm_90aa", "9.0a"] {
            assert!(bad.parse::<ComputeCapability>().is_err(), "{bad}");
        }
    }

    #[test]
    fn rejects_other_text_naming_it() {
        for bad in [
            "", "sm_", "sm_9", "sm_9x", "90", "9.", "9.10", "x.0", "sm_-90", "SM_90",
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
    }
}
