//! The kernels module manifest: what `cuda_builder` built from a kernels crate (its PTX, the
//! cubins assembled ahead of time, every entry point with its parameter sizes and ptxas'
//! resource report), the one source of truth for kernel names, parameter layouts and
//! architectures.
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
    /// Every kernel entry point of the PTX, in the PTX's order.
    pub entries: Vec<EntryPoint>,
}

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
        }
    }
}

impl core::error::Error for ManifestError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            #[cfg(feature = "json")]
            Self::Json(e) => Some(e),
            Self::CubinCount { .. } => None,
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
            }],
        }
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
