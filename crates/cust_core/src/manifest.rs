//! The kernels module manifest: what `cuda_builder` built from a kernels crate (its PTX, the
//! cubins assembled ahead of time, the arch-specific variants built beside it, every entry
//! point with its parameter sizes, the targets that define it and ptxas' resource report),
//! the one source of truth for kernel names, parameter layouts and architectures.
//!
//! A module has a baseline PTX for [`ModuleImage::ptx_arch`] (it runs on that and every
//! later GPU) and, optionally, [`ArchVariant`]s: the same crate built for an arch-specific
//! target such as `sm_90a`, whose PTX runs only on exactly that architecture. Kernels that
//! need such a target exist only in its variant (the kernels crate gates them with
//! `#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]`); each
//! [`EntryPoint::archs`] lists the targets whose PTX defines it, and
//! [`ModuleImage::target_for`] picks the one to use on a device.
//!
//! The builder fills a [`ModuleImage`] and writes it as JSON (`<crate>_manifest.json`,
//! feature `serde`), with the PTX and cubin files it names. The generated
//! `<crate>_module.rs` that a host crate includes embeds those files with `include_str!` /
//! `include_bytes!` and parses the JSON once, on first use, with
//! [`ModuleImage::embedded`] (feature `json`): so at run time a [`ModuleImage`] also holds
//! the PTX text and cubin bytes ([`ModuleImage::ptx`], [`Cubin::bytes`]), which the JSON
//! leaves out.

use crate::ComputeCapability;
use alloc::{string::String, vec::Vec};
use core::fmt;

/// A kernels module built by `cuda_builder`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ModuleImage {
    /// The kernels crate's package name.
    pub name: String,
    /// The PTX file the builder wrote (an absolute path).
    pub ptx_file: String,
    /// The PTX text: embedded at compile time by the generated `<crate>_module.rs`
    /// ([`ModuleImage::embedded`]); empty in a manifest read from JSON alone.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub ptx: &'static str,
    /// The PTX's target architecture: it runs on this and later GPUs (the driver compiles it
    /// when loaded).
    pub ptx_arch: ComputeCapability,
    /// Cubins assembled ahead of time, one per architecture (empty when the build had no
    /// `ptxas`).
    pub cubins: Vec<Cubin>,
    /// Every kernel entry point of the baseline PTX and of the variants: first the
    /// baseline's, in the PTX's order, then those only variants define, in their order.
    pub entries: Vec<EntryPoint>,
    /// Arch-specific builds of the same crate beside the baseline (e.g. `sm_90a`), in the
    /// order they were requested; empty when none were.
    pub variants: Vec<ArchVariant>,
}

/// An arch-specific build of a [`ModuleImage`]'s kernels crate (e.g. for `sm_90a`): its PTX
/// runs only on GPUs of exactly [`arch`](Self::arch)'s `major.minor`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ArchVariant {
    /// The target, e.g. `sm_90a` (`arch_specific` set).
    pub arch: ComputeCapability,
    /// The PTX file the builder wrote (an absolute path).
    pub ptx_file: String,
    /// The PTX text: embedded at compile time by the generated `<crate>_module.rs`
    /// ([`ModuleImage::embed_variants`]); empty in a manifest read from JSON alone.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub ptx: &'static str,
    /// The cubin assembled ahead of time for [`arch`](Self::arch) (empty when the build had
    /// no `ptxas`).
    pub cubins: Vec<Cubin>,
}

/// Which PTX of a [`ModuleImage`] to take an entry point from ([`ModuleImage::target_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModuleTarget {
    /// The baseline PTX ([`ModuleImage::ptx`]).
    Baseline,
    /// The variant at this index of [`ModuleImage::variants`].
    Variant(usize),
}

/// Why [`ModuleImage::target_for`] found no PTX for an entry point on a device.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryUnavailable {
    /// No target of the module defines an entry of that name.
    Unknown,
    /// Only targets that do not run on the device define it (e.g. only the `sm_90a`
    /// variant, on an sm_80 GPU).
    Architecture {
        /// The targets that define it, e.g. `[sm_90a]`.
        needs: Vec<ComputeCapability>,
        /// The device's compute capability.
        device: ComputeCapability,
    },
}

impl fmt::Display for EntryUnavailable {
    /// `no target defines it` / `it needs sm_90a; this device is sm_80`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unknown => f.write_str("no target of the module defines it"),
            Self::Architecture { needs, device } => {
                f.write_str("it needs ")?;
                for (i, arch) in needs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" or ")?;
                    }
                    write!(f, "{arch}")?;
                }
                write!(f, "; this device is {}", device.base())
            }
        }
    }
}

impl core::error::Error for EntryUnavailable {}

/// A cubin (SASS for one architecture) of a [`ModuleImage`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Cubin {
    /// The architecture. A cubin runs only on GPUs of this major version at or above this
    /// minor version; `cust` loads it only on exactly this one.
    pub arch: ComputeCapability,
    /// The cubin file the builder wrote (an absolute path).
    pub file: String,
    /// The ELF bytes: embedded at compile time by the generated `<crate>_module.rs`; empty in
    /// a manifest read from JSON alone.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub bytes: &'static [u8],
}

/// One kernel entry point of a [`ModuleImage`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EntryPoint {
    /// The entry name (the Rust function name of a `#[kernel]`).
    pub name: String,
    /// Size of each parameter in bytes, in order, as the PTX declares them (16 for a slice,
    /// 8 for a pointer, the value's size for a value; see
    /// [`ParamSizes`](crate::launch::ParamSizes)).
    pub param_sizes: Vec<usize>,
    /// Resource usage per architecture, as reported by `ptxas -v` at build time (empty
    /// without ptxas).
    pub resources: Vec<Resources>,
    /// The targets whose PTX defines it: the baseline's [`ModuleImage::ptx_arch`] and/or
    /// the [`ArchVariant::arch`] of each variant that has it, in the manifest's order.
    pub archs: Vec<ComputeCapability>,
}

/// Resource usage of one kernel on one architecture, from `ptxas -v`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Resources {
    /// The architecture.
    pub arch: ComputeCapability,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Stack frame per thread, bytes.
    pub stack_frame_bytes: u32,
    /// Bytes of registers spilled to local memory (stores), per thread.
    pub spill_store_bytes: u32,
    /// Bytes reloaded from spills, per thread.
    pub spill_load_bytes: u32,
}

impl fmt::Display for Resources {
    /// `sm_90: 40 registers, 8192 bytes shared, 16 bytes stack, 8 bytes spill stores, 4
    /// bytes spill loads`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} registers, {} bytes shared, {} bytes stack, {} bytes spill stores, {} bytes \
             spill loads",
            self.arch,
            self.registers,
            self.shared_bytes,
            self.stack_frame_bytes,
            self.spill_store_bytes,
            self.spill_load_bytes
        )
    }
}

impl ModuleImage {
    /// The entry point called `name`.
    pub fn entry(&self, name: &str) -> Option<&EntryPoint> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The cubin for exactly `arch`, if the build assembled one.
    pub fn cubin(&self, arch: ComputeCapability) -> Option<&Cubin> {
        self.cubins.iter().find(|c| c.arch == arch)
    }

    /// The variant built for exactly `arch` (e.g. `sm_90a`), if any.
    pub fn variant(&self, arch: ComputeCapability) -> Option<&ArchVariant> {
        self.variants.iter().find(|v| v.arch == arch)
    }

    /// The variants whose code runs on a device of capability `device`
    /// ([`ComputeCapability::runs_on`]), with their index in [`variants`](Self::variants):
    /// what a runtime loads beside the baseline.
    pub fn variants_for(
        &self,
        device: ComputeCapability,
    ) -> impl Iterator<Item = (usize, &ArchVariant)> {
        self.variants
            .iter()
            .enumerate()
            .filter(move |(_, v)| v.arch.runs_on(device))
    }

    /// Which PTX to take the entry point `entry` from on a device of capability `device`:
    /// of the targets that define it ([`EntryPoint::archs`]) and run on the device, an
    /// arch-specific variant before the baseline (the newest first, should there be
    /// several).
    ///
    /// # Errors
    /// [`EntryUnavailable::Unknown`] if no target defines `entry`,
    /// [`EntryUnavailable::Architecture`] naming the targets that define it and the device
    /// if none of them runs there.
    pub fn target_for(
        &self,
        entry: &str,
        device: ComputeCapability,
    ) -> Result<ModuleTarget, EntryUnavailable> {
        let entry = self.entry(entry).ok_or(EntryUnavailable::Unknown)?;
        let best_variant = self
            .variants_for(device)
            .filter(|(_, v)| entry.archs.contains(&v.arch))
            .max_by_key(|(_, v)| v.arch);
        if let Some((index, _)) = best_variant {
            return Ok(ModuleTarget::Variant(index));
        }
        if entry.archs.contains(&self.ptx_arch) && self.ptx_arch.runs_on(device) {
            return Ok(ModuleTarget::Baseline);
        }
        Err(EntryUnavailable::Architecture {
            needs: entry.archs.clone(),
            device: device.base(),
        })
    }
}

impl EntryPoint {
    /// The ptxas report for `arch`, if ptxas assembled the module for it.
    pub fn resources(&self, arch: ComputeCapability) -> Option<&Resources> {
        self.resources.iter().find(|r| r.arch == arch)
    }
}

/// Why a manifest could not be read ([`ModuleImage::from_json`], [`ModuleImage::embedded`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum ManifestError {
    /// The JSON is not a manifest (written by another version of `cuda_builder`?).
    #[cfg(feature = "json")]
    Json(serde_json::Error),
    /// The embedded cubins do not match the manifest's list.
    CubinCount {
        /// Cubins the manifest lists.
        listed: usize,
        /// Cubins embedded.
        embedded: usize,
    },
    /// The embedded variants ([`ModuleImage::embed_variants`]) do not match the manifest's
    /// list.
    VariantCount {
        /// Variants the manifest lists.
        listed: usize,
        /// Variants embedded.
        embedded: usize,
    },
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "json")]
            Self::Json(e) => write!(
                f,
                "not a kernels module manifest ({e}); rebuild so that cuda_builder and \
                 cust_core are the same version"
            ),
            Self::CubinCount { listed, embedded } => write!(
                f,
                "the manifest lists {listed} cubins but {embedded} were embedded; the \
                 generated module file is out of date: rebuild"
            ),
            Self::VariantCount { listed, embedded } => write!(
                f,
                "the manifest lists {listed} arch-specific variants but {embedded} were \
                 embedded; the generated module file is out of date: rebuild"
            ),
        }
    }
}

impl core::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            #[cfg(feature = "json")]
            Self::Json(e) => Some(e),
            Self::CubinCount { .. } | Self::VariantCount { .. } => None,
        }
    }
}

#[cfg(feature = "json")]
impl ModuleImage {
    /// Parses a manifest from its JSON, as `cuda_builder` writes it; [`ModuleImage::ptx`] and
    /// [`Cubin::bytes`] are empty.
    ///
    /// # Errors
    /// [`ManifestError::Json`] if `json` is not a manifest.
    pub fn from_json(json: &str) -> Result<Self, ManifestError> {
        serde_json::from_str(json).map_err(ManifestError::Json)
    }

    /// The manifest `json` with the module's PTX text and its cubins' bytes (in the order of
    /// the manifest's `cubins`) filled in: what the generated `<crate>_module.rs` calls,
    /// with `include_str!`/`include_bytes!` of the files the builder wrote.
    ///
    /// # Errors
    /// [`ManifestError::Json`] if `json` is not a manifest, [`ManifestError::CubinCount`] if
    /// `cubins` does not have one element per listed cubin.
    pub fn embedded(
        json: &str,
        ptx: &'static str,
        cubins: &[&'static [u8]],
    ) -> Result<Self, ManifestError> {
        let mut image = Self::from_json(json)?;
        if image.cubins.len() != cubins.len() {
            return Err(ManifestError::CubinCount {
                listed: image.cubins.len(),
                embedded: cubins.len(),
            });
        }
        image.ptx = ptx;
        for (cubin, bytes) in image.cubins.iter_mut().zip(cubins) {
            cubin.bytes = bytes;
        }
        Ok(image)
    }
}

impl ModuleImage {
    /// The image with each arch-specific variant's PTX text and cubin bytes filled in, from
    /// `files`: one `(ptx, cubins)` per variant, in the order of
    /// [`variants`](Self::variants), each variant's cubins in the order of its list. What
    /// the generated `<crate>_module.rs` calls after [`ModuleImage::embedded`].
    ///
    /// # Errors
    /// [`ManifestError::VariantCount`] if `files` does not have one element per variant,
    /// [`ManifestError::CubinCount`] if a variant's cubins do not match its list.
    pub fn embed_variants(
        mut self,
        files: &[(&'static str, &[&'static [u8]])],
    ) -> Result<Self, ManifestError> {
        if self.variants.len() != files.len() {
            return Err(ManifestError::VariantCount {
                listed: self.variants.len(),
                embedded: files.len(),
            });
        }
        for (variant, (ptx, cubins)) in self.variants.iter_mut().zip(files) {
            if variant.cubins.len() != cubins.len() {
                return Err(ManifestError::CubinCount {
                    listed: variant.cubins.len(),
                    embedded: cubins.len(),
                });
            }
            variant.ptx = ptx;
            for (cubin, bytes) in variant.cubins.iter_mut().zip(cubins.iter()) {
                cubin.bytes = bytes;
            }
        }
        Ok(self)
    }
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use super::*;
    use alloc::{string::ToString, vec};

    fn image() -> ModuleImage {
        ModuleImage {
            name: "my-kernels".into(),
            ptx_file: "/t/my_kernels.ptx".into(),
            ptx: "",
            ptx_arch: ComputeCapability::new(7, 0),
            cubins: vec![Cubin {
                arch: ComputeCapability::new(9, 0),
                file: "/t/my_kernels.sm_90.cubin".into(),
                bytes: &[],
            }],
            entries: vec![EntryPoint {
                name: "vecadd".into(),
                param_sizes: vec![16, 16, 8],
                resources: vec![Resources {
                    arch: ComputeCapability::new(9, 0),
                    registers: 12,
                    shared_bytes: 0,
                    stack_frame_bytes: 0,
                    spill_store_bytes: 0,
                    spill_load_bytes: 0,
                }],
                archs: vec![ComputeCapability::new(7, 0)],
            }],
            variants: vec![],
        }
    }

    fn entry(name: &str, archs: &[ComputeCapability]) -> EntryPoint {
        EntryPoint {
            name: name.into(),
            param_sizes: vec![8],
            resources: vec![],
            archs: archs.to_vec(),
        }
    }

    /// A baseline for sm_70 and variants for sm_90a and sm_100a: `copy` in the baseline
    /// and sm_90a, `wgmma` in sm_90a only, `tcgen05` in sm_100a only, `both_a` in both
    /// variants.
    fn image_with_variants() -> ModuleImage {
        let (sm70, sm90a) = (ComputeCapability::new(7, 0), ComputeCapability::sm_90a());
        let sm100a = ComputeCapability::new_arch_specific(10, 0);
        let variant = |arch: ComputeCapability| ArchVariant {
            arch,
            ptx_file: alloc::format!("/t/k.{arch}.ptx"),
            ptx: "",
            cubins: vec![Cubin {
                arch,
                file: alloc::format!("/t/k.{arch}.cubin"),
                bytes: &[],
            }],
        };
        ModuleImage {
            variants: vec![variant(sm90a), variant(sm100a)],
            entries: vec![
                entry("copy", &[sm70, sm90a]),
                entry("wgmma", &[sm90a]),
                entry("tcgen05", &[sm100a]),
                entry("both_a", &[sm90a, sm100a]),
            ],
            ..image()
        }
    }

    #[test]
    fn entries_resolve_to_the_best_target_that_runs_on_the_device() {
        let image = image_with_variants();
        let dev = ComputeCapability::new;
        let on = |name: &str, cc| image.target_for(name, cc);
        // Hopper: the sm_90a variant, before the baseline.
        assert_eq!(on("copy", dev(9, 0)), Ok(ModuleTarget::Variant(0)));
        assert_eq!(on("wgmma", dev(9, 0)), Ok(ModuleTarget::Variant(0)));
        assert_eq!(on("both_a", dev(9, 0)), Ok(ModuleTarget::Variant(0)));
        assert_eq!(on("both_a", dev(10, 0)), Ok(ModuleTarget::Variant(1)));
        // Ampere and Blackwell: the baseline for what it has.
        assert_eq!(on("copy", dev(8, 0)), Ok(ModuleTarget::Baseline));
        assert_eq!(on("copy", dev(10, 0)), Ok(ModuleTarget::Baseline));
        assert_eq!(on("tcgen05", dev(10, 0)), Ok(ModuleTarget::Variant(1)));
        // An sm_90a-only kernel elsewhere names both architectures.
        let err = on("wgmma", dev(8, 0)).unwrap_err();
        assert_eq!(
            err,
            EntryUnavailable::Architecture {
                needs: vec![ComputeCapability::sm_90a()],
                device: dev(8, 0)
            }
        );
        assert_eq!(err.to_string(), "it needs sm_90a; this device is sm_80");
        let err = on("both_a", dev(12, 0)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it needs sm_90a or sm_100a; this device is sm_120"
        );
        // The next minor version is another architecture for an `a` target.
        assert!(on("wgmma", dev(9, 1)).is_err());
        assert_eq!(on("nope", dev(9, 0)), Err(EntryUnavailable::Unknown));
        // A baseline newer than the device runs nowhere older.
        let old = on("copy", dev(6, 1)).unwrap_err().to_string();
        assert!(
            old.contains("sm_70 or sm_90a; this device is sm_61"),
            "{old}"
        );
        assert_eq!(
            image
                .variants_for(dev(9, 0))
                .map(|(i, v)| (i, v.arch))
                .collect::<Vec<_>>(),
            [(0, ComputeCapability::sm_90a())]
        );
        assert_eq!(image.variants_for(dev(8, 6)).count(), 0);
        assert!(image.variant(ComputeCapability::sm_90a()).is_some());
        assert!(image.variant(dev(9, 0)).is_none());
    }

    #[test]
    fn variants_round_trip_and_embed_their_files() {
        let json = serde_json::to_string(&image_with_variants()).unwrap();
        assert!(json.contains(r#""arch":"sm_90a""#), "{json}");
        let image = ModuleImage::embedded(&json, ".version 7.0", &[b"\x7fELF"])
            .unwrap()
            .embed_variants(&[
                (".target sm_90a", &[b"\x7fELF90a"]),
                (".target sm_100a", &[b"\x7fELF100a!"]),
            ])
            .unwrap();
        let sm90a = image.variant(ComputeCapability::sm_90a()).unwrap();
        assert_eq!(sm90a.ptx, ".target sm_90a");
        assert_eq!(sm90a.cubins[0].bytes, b"\x7fELF90a");
        assert_eq!(image.variants[1].cubins[0].bytes, b"\x7fELF100a!");
        assert_eq!(
            image.entry("wgmma").unwrap().archs,
            [ComputeCapability::sm_90a()]
        );

        let base = ModuleImage::from_json(&json).unwrap();
        let err = base.clone().embed_variants(&[]).unwrap_err();
        assert!(
            matches!(
                err,
                ManifestError::VariantCount {
                    listed: 2,
                    embedded: 0
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("2 arch-specific variants"),
            "{err}"
        );
        let err = base
            .embed_variants(&[(".", &[]), (".", &[b"x"])])
            .unwrap_err();
        assert!(
            matches!(
                err,
                ManifestError::CubinCount {
                    listed: 1,
                    embedded: 0
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn round_trips_through_json_and_embeds_the_files() {
        let json = serde_json::to_string(&image()).unwrap();
        assert!(json.contains(r#""ptx_arch":"sm_70""#), "{json}");
        assert!(
            !json.contains(r#""ptx":"#),
            "the PTX text stays out of the JSON: {json}"
        );
        assert_eq!(ModuleImage::from_json(&json).unwrap(), image());
        let embedded = ModuleImage::embedded(&json, ".version 7.0", &[b"\x7fELF"]).unwrap();
        assert_eq!(embedded.ptx, ".version 7.0");
        assert_eq!(
            embedded.cubin(ComputeCapability::new(9, 0)).unwrap().bytes,
            b"\x7fELF"
        );
        assert_eq!(embedded.entry("vecadd").unwrap().param_sizes, [16, 16, 8]);
        let sm90 = ComputeCapability::new(9, 0);
        assert_eq!(
            embedded
                .entry("vecadd")
                .unwrap()
                .resources(sm90)
                .unwrap()
                .registers,
            12
        );
        assert!(embedded.entry("nope").is_none());
    }

    #[test]
    fn bad_input_is_reported() {
        let json = serde_json::to_string(&image()).unwrap();
        let err = ModuleImage::embedded(&json, "", &[]).unwrap_err();
        assert!(
            matches!(
                err,
                ManifestError::CubinCount {
                    listed: 1,
                    embedded: 0
                }
            ),
            "{err}"
        );
        let err = ModuleImage::from_json(&json.replace("sm_70", "sm70")).unwrap_err();
        assert!(
            err.to_string()
                .contains("`sm70` is not a compute capability"),
            "{err}"
        );
    }
}
