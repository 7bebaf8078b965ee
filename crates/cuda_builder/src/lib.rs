//! `cuda_builder`: compiles a `no_std` Rust kernels crate to PTX, from a host crate's
//! `build.rs`, with rustc's own NVPTX backend: no CUDA toolkit, no LLVM install, no pinned
//! nightly.
//!
//! In the host crate's `build.rs`:
//!
//! ```no_run
//! let artifact = cuda_builder::CudaBuilder::new("../kernels")
//!     .build()
//!     .unwrap_or_else(|e| panic!("{e}"));
//! // The PTX path is also exported to the host crate as `KERNELS_PTX`, for
//! // `include_str!(env!("KERNELS_PTX"))`.
//! println!("{}", artifact.ptx_path.display());
//! ```
//!
//! What [`CudaBuilder::build`] does, one function per step:
//! 0. Finds the kernels crate and makes sure the toolchain has the `rust-src` and
//!    `llvm-bitcode-linker` components, installing them with `rustup` if needed (or failing
//!    with the exact command to run).
//! 1. The nested cargo (`cargo_cmd`): runs `cargo rustc --crate-type cdylib --target
//!    nvptx64-nvidia-cuda -Zbuild-std=core` on the kernels crate, in its own target
//!    directory, with a scrubbed environment (the outer cargo's `RUSTFLAGS`, wrappers and
//!    target settings never leak in) and `RUSTC_BOOTSTRAP=1`, so a stable toolchain works.
//!    Forwards compiler warnings as `cargo::warning=` lines; on an error, fails with the
//!    compiler's rendered messages ([`BuildError::Compile`], whose `Debug` prints them as
//!    they are, for build scripts that `.unwrap()`), with one more line on rustc's E0599 for
//!    an `f32`/`f64` method (std's float functions are not on the GPU: `cuda_std::math`). In
//!    a build script, `<CRATE>_MODULE` then names a module that is a `compile_error!` with
//!    those messages, so the script can end and let rustc print them once
//!    ([`BuildError::reported_in_module`]).
//! 2. The inputs (`depinfo`): emits `cargo::rerun-if-changed` for every source file the
//!    kernels build read (from its dep-info file) and `rerun-if-env-changed` for the
//!    variables it reads.
//! 3. The final PTX: adds the [`CudaBuilder::max_registers`] caps, copies it to
//!    [`CudaBuilder::output_path`] and [`CudaBuilder::final_module_path`].
//! 4. ptxas: where `ptxas` is found ([`ptxas::find`]), assembles the PTX for each requested
//!    architecture, failing on invalid PTX, and reports registers, spills and shared memory
//!    per kernel ([`Resources`]). For the architectures of [`CudaBuilder::cubin_archs`], keeps
//!    what ptxas assembled as cubin files (ahead-of-time SASS, loaded without JIT
//!    compilation). Without ptxas there are no cubins, and the build still succeeds (the
//!    host falls back to the PTX) with a warning, once per kernels build. Kernels that spill
//!    registers are reported as warnings; every kernel with
//!    [`CudaBuilder::report_resources`].
//! 5. The manifest ([`manifest`]): a [`ModuleImage`] (`cust_core`'s type, shared with the
//!    host runtime) with every entry point, its parameter sizes and resources, and the
//!    cubins, written as JSON, `<crate>_manifest.json`, and `<crate>_module.rs` (both in the
//!    calling build script's `OUT_DIR`, else next to the PTX). The latter defines a
//!    `LazyLock<cust::module::ModuleImage>` static named after the crate (`MY_KERNELS` for
//!    `my-kernels`) that embeds the JSON, the PTX and the cubins with
//!    `include_str!`/`include_bytes!` and parses the JSON on first use.
//! 6. Exports the paths to the host crate: `<CRATE>_MODULE` (so the host writes
//!    `include!(env!("MY_KERNELS_MODULE"));` and
//!    `cust::module::Module::from_image(&MY_KERNELS)`), `<CRATE>_MANIFEST` (the JSON, for
//!    tools: [`manifest::read`]), `<CRATE>_PTX` and `<CRATE>_CUBIN_SM<XY>` (e.g.
//!    `KERNELS_CUBIN_SM90`).
//!
//! With [`CudaBuilder::arch_variant`] (e.g. `ComputeCapability::sm_90a()`), steps 1 to 4
//! also run for each arch-specific target, in a target directory of its own, and the
//! manifest lists the variants and, per entry point, the targets that define it; `cust`
//! loads the variants the device can run and picks each kernel's best one.
//!
//! A kernels crate written for Rust-CUDA builds as it is: the builder adds `#![no_std]` and
//! the unstable features kernels need (`abi_ptx`, `asm_experimental_arch`, `stdarch_nvptx`)
//! to the kernels build when the crate root does not name them, and accepts Rust-CUDA's
//! builder method names ([`CudaBuilder::copy_to`], [`NvvmArch`]).

mod cargo_cmd;
mod depinfo;
mod error;
mod link;
pub mod manifest;
pub mod ptxas;

/// The environment variable that turns [`CudaBuilder::line_tables`] on for every kernels
/// build (value `1`).
pub const LINE_TABLES_ENV: &str = "FERROCUDA_LINE_TABLES";
#[cfg_attr(not(feature = "watch"), allow(dead_code))]
mod replay;
mod toolchain;
#[cfg(feature = "watch")]
pub mod watch;

pub use cust_core::{ArchVariant, ComputeCapability, Cubin, EntryPoint, ModuleImage, Resources};
pub use error::BuildError;

use std::{
    hash::{Hash, Hasher},
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering as AtomicOrdering},
};

/// The rustc target the kernels are compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Rust-CUDA's name for an architecture (`NvvmArch::Compute70` = sm_70,
/// `NvvmArch::Compute90a` = sm_90a, `NvvmArch::Compute100f` = sm_100f), accepted by
/// [`CudaBuilder::arch`] and [`CudaBuilder::arch_variant`] so Rust-CUDA build scripts port
/// unchanged. The variants are Rust-CUDA's (its `nvvm` crate): the plain targets from 3.5 to
/// 12.1, the arch-specific `a` forms (code that runs only on exactly that architecture) and
/// the family-specific `f` forms (code that runs on that architecture and later ones of the
/// same major version, PTX ISA 8.8 and later); see [`ComputeCapability`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum NvvmArch {
    Compute35,
    Compute37,
    Compute50,
    Compute52,
    Compute53,
    Compute60,
    Compute61,
    Compute62,
    Compute70,
    Compute72,
    Compute75,
    Compute80,
    Compute86,
    Compute87,
    Compute89,
    Compute90,
    Compute90a,
    Compute100,
    Compute100f,
    Compute100a,
    Compute101,
    Compute101f,
    Compute101a,
    Compute103,
    Compute103f,
    Compute103a,
    Compute120,
    Compute120f,
    Compute120a,
    Compute121,
    Compute121f,
    Compute121a,
}

impl From<NvvmArch> for ComputeCapability {
    fn from(arch: NvvmArch) -> Self {
        use NvvmArch::*;
        let plain = ComputeCapability::new;
        let a = ComputeCapability::new_arch_specific;
        let f = ComputeCapability::new_family_specific;
        match arch {
            Compute35 => plain(3, 5),
            Compute37 => plain(3, 7),
            Compute50 => plain(5, 0),
            Compute52 => plain(5, 2),
            Compute53 => plain(5, 3),
            Compute60 => plain(6, 0),
            Compute61 => plain(6, 1),
            Compute62 => plain(6, 2),
            Compute70 => plain(7, 0),
            Compute72 => plain(7, 2),
            Compute75 => plain(7, 5),
            Compute80 => plain(8, 0),
            Compute86 => plain(8, 6),
            Compute87 => plain(8, 7),
            Compute89 => plain(8, 9),
            Compute90 => plain(9, 0),
            Compute90a => a(9, 0),
            Compute100 => plain(10, 0),
            Compute100f => f(10, 0),
            Compute100a => a(10, 0),
            Compute101 => plain(10, 1),
            Compute101f => f(10, 1),
            Compute101a => a(10, 1),
            Compute103 => plain(10, 3),
            Compute103f => f(10, 3),
            Compute103a => a(10, 3),
            Compute120 => plain(12, 0),
            Compute120f => f(12, 0),
            Compute120a => a(12, 0),
            Compute121 => plain(12, 1),
            Compute121f => f(12, 1),
            Compute121a => a(12, 1),
        }
    }
}

/// The plain architectures that have a `compute_NN` feature name (Rust-CUDA's `NvvmArch`
/// list, without suffixes), as `(major, minor)`.
const COMPUTE_FEATURE_ARCHS: &[(u32, u32)] = &[
    (3, 5),
    (3, 7),
    (5, 0),
    (5, 2),
    (5, 3),
    (6, 0),
    (6, 1),
    (6, 2),
    (7, 0),
    (7, 2),
    (7, 5),
    (8, 0),
    (8, 6),
    (8, 7),
    (8, 9),
    (9, 0),
    (10, 0),
    (10, 1),
    (10, 3),
    (12, 0),
    (12, 1),
];

/// The architectures that have a family-specific `compute_NNf` feature name (Rust-CUDA's
/// `NvvmArch` list).
const COMPUTE_FAMILY_ARCHS: &[(u32, u32)] = &[(10, 0), (10, 1), (10, 3), (12, 0), (12, 1)];

/// Every `compute_NN` / `compute_NNf` / `compute_NNa` name [`compute_features`] can set: the
/// values of `cfg(target_feature = ..)` a kernels crate may test, for its `check-cfg` lint
/// (the builder declares them in the kernels build; a host build of the same crate needs
/// `[lints.rust] unexpected_cfgs = { level = "warn", check-cfg =
/// ['cfg(target_feature, values("compute_70", ...))'] }`, or only the names it uses).
pub fn all_compute_features() -> Vec<String> {
    let mut names: Vec<String> = COMPUTE_FEATURE_ARCHS
        .iter()
        .map(|(ma, mi)| format!("compute_{ma}{mi}"))
        .collect();
    for (ma, mi) in COMPUTE_FAMILY_ARCHS {
        names.push(format!("compute_{ma}{mi}f"));
        names.push(format!("compute_{ma}{mi}a"));
    }
    names.push("compute_90a".to_owned());
    names
}

/// The `compute_NN` names the kernels build of `arch` sets as
/// `cfg(target_feature = "compute_NN")`, as Rust-CUDA's codegen does, so that kernels
/// written for it select code the same way:
/// - a plain target `sm_XY`: `compute_NN` for every plain architecture `NN <= XY` (for
///   `sm_80`: `compute_35` ... `compute_80`);
/// - a family-specific target `sm_XYf`: those of `sm_XY`, and `compute_NNf` for the
///   architectures of the same major version up to `XY` (for `sm_103f`: `compute_100f`,
///   `compute_101f`, `compute_103f`). Rust-CUDA instead sets the plain names of the same
///   major version at or *above* `XY`, which would let a 10.0 build select 10.3 code: not
///   followed;
/// - an arch-specific target `sm_XYa`: those of `sm_XYf` (where that family exists), and
///   `compute_XYa`.
///
/// The order follows the table: plain names, family names, then the arch-specific one. On
/// the host (the kernels crate compiled for the CPU emulator) none is set, as in Rust-CUDA.
pub fn compute_features(arch: ComputeCapability) -> Vec<String> {
    let target = (arch.major, arch.minor);
    let mut names: Vec<String> = COMPUTE_FEATURE_ARCHS
        .iter()
        .filter(|&&cc| cc <= target)
        .map(|(ma, mi)| format!("compute_{ma}{mi}"))
        .collect();
    if arch.arch_specific || arch.family_specific {
        names.extend(
            COMPUTE_FAMILY_ARCHS
                .iter()
                .filter(|&&(ma, mi)| ma == arch.major && mi <= arch.minor)
                .map(|(ma, mi)| format!("compute_{ma}{mi}f")),
        );
    }
    if arch.arch_specific {
        names.push(format!("compute_{}{}a", arch.major, arch.minor));
    }
    names
}

/// What a successful build produced.
#[derive(Clone, Debug)]
pub struct Artifact {
    /// The files the kernels build read, outside the toolchain: the kernels crate's sources
    /// and manifest and those of its dependencies (from rustc's dep-info). A change to any
    /// of them calls for a rebuild (what the `watch` feature's watcher looks for).
    pub inputs: Vec<PathBuf>,
    /// The PTX module (a text file).
    pub ptx_path: PathBuf,
    /// The `ptxas` that validated it, if one was found.
    pub ptxas: Option<PathBuf>,
    /// The module manifest, as written to [`manifest_path`](Self::manifest_path): every
    /// kernel entry point with its parameter sizes and ptxas' resource report per
    /// architecture (empty without ptxas), and the cubins assembled ahead of time
    /// ([`CudaBuilder::cubin_archs`]; none without ptxas). Its `ptx` and cubin `bytes` are
    /// empty here: they are embedded by the generated module file.
    pub image: ModuleImage,
    /// The manifest as JSON, `<crate>_manifest.json` (see the crate docs, step 7).
    pub manifest_path: PathBuf,
    /// The generated `<crate>_module.rs` (see the crate docs, step 7).
    pub module_path: PathBuf,
}

/// Whether to validate the PTX with `ptxas`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PtxasMode {
    /// Validate when a `ptxas` is found; skip with a warning otherwise.
    Auto,
    /// Fail the build when no `ptxas` is found.
    Required,
    /// Never run `ptxas`.
    Off,
}

/// `ptx` with `.maxnreg N` added to the entry of each `(kernel, N)` in `caps`, between the
/// parameter list and the body (PTX ISA, "Performance-Tuning Directives: .maxnreg").
fn cap_registers(ptx: &str, caps: &[(String, u32)]) -> Result<String, BuildError> {
    let mut out = ptx.to_owned();
    for (kernel, registers) in caps {
        let fail = |reason: String| BuildError::MaxRegisters {
            kernel: kernel.clone(),
            reason,
        };
        if !(16..=255).contains(registers) {
            return Err(fail(format!(
                "{registers} registers is not allowed: it must be 16 to 255"
            )));
        }
        let header = format!(".entry {kernel}(");
        let start = out
            .find(&header)
            .ok_or_else(|| fail("the PTX defines no kernel of that name".into()))?;
        // The body starts at the first line that is a lone `{` after the parameter list.
        let body = out[start..]
            .find("\n{")
            .map(|i| start + i + 1)
            .ok_or_else(|| fail("the kernel's entry has no body".into()))?;
        if out[start..body].contains(".maxnreg") {
            return Err(fail(
                "the kernel's entry already has a .maxnreg directive".into(),
            ));
        }
        out.insert_str(body, &format!(".maxnreg {registers}\n"));
    }
    Ok(out)
}

/// Builds a kernels crate to PTX. Create with [`CudaBuilder::new`], adjust with the setters
/// (each documents its default), run with [`CudaBuilder::build`].
#[derive(Clone, Debug)]
#[must_use]
pub struct CudaBuilder {
    crate_path: PathBuf,
    arch: ComputeCapability,
    ptx_isa: (u32, u32),
    release: bool,
    target_dir: Option<PathBuf>,
    output_path: Option<PathBuf>,
    final_module_path: Option<PathBuf>,
    ptxas: PtxasMode,
    ptxas_archs: Vec<ComputeCapability>,
    cubin_archs: Vec<ComputeCapability>,
    emit_cargo_directives: Option<bool>,
    install_components: bool,
    link_only_needed: bool,
    fast_math: bool,
    debug_info: Option<bool>,
    line_tables: bool,
    cfgs: Vec<String>,
    variant: Option<String>,
    max_registers: Vec<(String, u32)>,
    arch_variants: Vec<ComputeCapability>,
    report_resources: bool,
}

impl CudaBuilder {
    /// A builder for the kernels crate at `crate_path` (the folder holding its `Cargo.toml`;
    /// relative paths are resolved against the current directory, which in a build script is
    /// the host crate's folder).
    pub fn new(crate_path: impl Into<PathBuf>) -> Self {
        Self {
            crate_path: crate_path.into(),
            arch: ComputeCapability::new(7, 0),
            ptx_isa: (7, 0),
            release: true,
            target_dir: None,
            output_path: None,
            final_module_path: None,
            ptxas: PtxasMode::Auto,
            ptxas_archs: Vec::new(),
            cubin_archs: Vec::new(),
            emit_cargo_directives: None,
            install_components: true,
            link_only_needed: true,
            fast_math: false,
            debug_info: None,
            line_tables: false,
            cfgs: Vec::new(),
            variant: None,
            max_registers: Vec::new(),
            arch_variants: Vec::new(),
            report_resources: false,
        }
    }

    /// The compute capability the PTX targets (`-C target-cpu=sm_XY`). The PTX runs on this
    /// and every later architecture (the driver compiles it on load); an arch-specific
    /// target (`sm_90a`) only on exactly that one, a family-specific one (`sm_100f`) on it and
    /// later ones of the same major version.
    /// Default: 7.0 (Volta), the oldest the CUDA 12/13 drivers fully support. Takes a
    /// [`ComputeCapability`] or Rust-CUDA's [`NvvmArch`]; architectures below 7.0 are raised
    /// to 7.0 with a warning (rustc's PTX for them lacks the `.sync` warp instructions).
    ///
    /// The PTX ISA version is raised to what the target needs ([`min_ptx_isa`], e.g. 7.8 for
    /// sm_90, 8.6 for sm_100) when [`ptx_isa`](Self::ptx_isa) is older: LLVM aborts on a
    /// target its PTX version does not know. The kernels build also sets
    /// `cfg(target_feature = "compute_NN")` as Rust-CUDA does ([`compute_features`]), beside
    /// rustc's own `cfg(target_feature = "sm_NN")`.
    pub fn arch(mut self, cc: impl Into<ComputeCapability>) -> Self {
        let cc = cc.into();
        if cc < ComputeCapability::new(7, 0) {
            println!(
                "cargo::warning=cuda_builder: {cc} is below the supported minimum sm_70; building for sm_70"
            );
            self.arch = ComputeCapability::new(7, 0);
        } else {
            self.arch = cc;
        }
        self
    }

    /// The PTX ISA version (`-C target-feature=+ptxXY`). Must be supported by the driver that
    /// loads the PTX (PTX ISA 7.0 came with CUDA 11.0). Default: 7.0. A version older than
    /// the [`arch`](Self::arch) needs ([`min_ptx_isa`]) is raised to that.
    pub fn ptx_isa(mut self, major: u32, minor: u32) -> Self {
        self.ptx_isa = (major, minor);
        self
    }

    /// Build with the release profile (optimised). Default: `true`; unoptimised PTX is much
    /// slower and larger. For edit-and-reload loops (`CudaBuilder::watch`, with the `watch`
    /// feature), `release(false).debug_info(false)` rebuilds a one-line change in about
    /// 0.2 s on 2 cores (the watcher reruns rustc without cargo; 0.4–0.8 s through cargo)
    /// instead of about 12 s: a release build links and optimises the whole of `core`'s
    /// bitcode with the kernels every time.
    pub fn release(mut self, release: bool) -> Self {
        self.release = release;
        self
    }

    /// Whether the PTX carries debug information (`-Cdebuginfo`). Default: the profile's
    /// (on in a debug build, off in a release build). Off halves a debug build's link time.
    /// On, the PTX keeps the source lines as `.file` / `.loc` directives, as with
    /// [`line_tables`](Self::line_tables) (rustc's linker for nvptx64 strips debug
    /// information, and ptxas rejects the DWARF sections LLVM emits for it: the builder's
    /// linker keeps the line directives only). Needs the builder's linker
    /// ([`link_only_needed`](Self::link_only_needed), on by default).
    pub fn debug_info(mut self, on: bool) -> Self {
        self.debug_info = Some(on);
        self
    }

    /// Line tables for the profilers and debuggers: the PTX keeps the profile's
    /// optimisations and gains `.file` / `.loc` directives naming the Rust source lines
    /// (`-Cdebuginfo=line-tables-only`), and ptxas keeps them in the cubins (`-lineinfo`),
    /// so Nsight Compute's source page, compute-sanitizer's reports and cuda-gdb show `.rs`
    /// lines. Default: off, or on when the environment sets [`LINE_TABLES_ENV`] to `1`
    /// (for a whole build: `FERROCUDA_LINE_TABLES=1 cargo build --release`).
    ///
    /// The builder's linker (`link.rs`) then runs `llvm-bitcode-linker`'s `opt` and `llc`
    /// steps itself, because that linker strips debug information for nvptx64, and keeps
    /// the line tables as directives only (LLVM's `DebugDirectivesOnly`, what clang's
    /// `-gline-directives-only` gives NVPTX: ptxas rejects the DWARF sections of a
    /// line-tables build). Optimisation is the profile's, but the code is not byte-identical
    /// to a build without line tables (debug information changes some of LLVM's choices:
    /// register numbering, instruction order), so measure with the build you profile.
    pub fn line_tables(mut self, on: bool) -> Self {
        self.line_tables = on;
        self
    }

    /// The PTX ISA version the kernels build emits: [`ptx_isa`](Self::ptx_isa), raised to
    /// [`min_ptx_isa`] of [`arch`](Self::arch).
    pub(crate) fn effective_ptx_isa(&self) -> (u32, u32) {
        self.ptx_isa.max(min_ptx_isa(self.arch))
    }

    /// Whether this build carries line tables: [`line_tables`](Self::line_tables), or
    /// [`LINE_TABLES_ENV`] set to `1`.
    pub(crate) fn wants_line_tables(&self) -> bool {
        self.line_tables || std::env::var_os(LINE_TABLES_ENV).is_some_and(|v| v == "1")
    }

    /// The target directory of the kernels build. Default: `<outer target dir>/cuda_builder`
    /// when run from a build script (found from `OUT_DIR`), else
    /// `<crate_path>/target/cuda_builder`.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Copy the PTX to this path. Default: none (the PTX stays in the target directory, at
    /// `<target_dir>/nvptx64-nvidia-cuda/<profile>/<crate>.ptx`).
    pub fn output_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.output_path = Some(path.into());
        self
    }

    /// Rust-CUDA's name for [`output_path`](Self::output_path): copy the PTX to this path.
    pub fn copy_to(self, path: impl Into<PathBuf>) -> Self {
        self.output_path(path)
    }

    /// Also write the final PTX (after [`max_registers`](Self::max_registers)' directives,
    /// what the driver and ptxas get) to this path, for inspection; the build's outputs
    /// stay where they are. Rust-CUDA's builder writes the final LLVM IR module it hands to
    /// libNVVM there; this builder has no such step (rustc's NVPTX backend emits the PTX
    /// directly), and the PTX is the final module. Default: none.
    pub fn final_module_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.final_module_path = Some(path.into());
        self
    }

    /// Whether to validate the PTX with `ptxas`. Default: [`PtxasMode::Auto`].
    pub fn ptxas(mut self, mode: PtxasMode) -> Self {
        self.ptxas = mode;
        self
    }

    /// Architectures to assemble the PTX for when validating with `ptxas` (resource usage
    /// differs per architecture). Default: only [`arch`](Self::arch).
    pub fn ptxas_archs(mut self, archs: impl IntoIterator<Item = ComputeCapability>) -> Self {
        self.ptxas_archs = archs.into_iter().collect();
        self
    }

    /// Architectures to assemble the PTX to cubin for, ahead of time, where `ptxas` is
    /// found (with [`PtxasMode::Off`], or without ptxas in [`PtxasMode::Auto`], none are
    /// made). Each cubin is `<target dir>/nvptx64-nvidia-cuda/<profile>/<crate>.sm_XY.cubin`,
    /// listed in the manifest ([`Artifact::image`]) and exported as `<CRATE>[_<VARIANT>]_CUBIN_SM<XY>`. A
    /// cubin runs only on GPUs of its major architecture at or above its minor version; a
    /// host normally loads the one matching the device exactly and falls back to the PTX.
    /// These architectures are also validated (as by [`ptxas_archs`](Self::ptxas_archs)).
    /// Default: none.
    pub fn cubin_archs(mut self, archs: impl IntoIterator<Item = ComputeCapability>) -> Self {
        self.cubin_archs = archs.into_iter().collect();
        self
    }

    /// Whether to print every kernel's registers, spills and shared memory, from ptxas'
    /// report for each architecture it assembled, as build warnings, one per kernel and
    /// architecture, e.g. `[kernels] block_sum on sm_70: 16 registers, 64 bytes shared, 0
    /// bytes stack, 0 bytes spill stores, 0 bytes spill loads`. Needs ptxas (without it the
    /// build warns, once per kernels build, that ptxas is missing); like every warning of a
    /// build script, cargo shows them again on later commands until the script runs again.
    /// The same figures are in the manifest ([`Artifact::image`]) either way. Default:
    /// `false` (only kernels that spill registers are reported).
    pub fn report_resources(mut self, report: bool) -> Self {
        self.report_resources = report;
        self
    }

    /// Whether to print `cargo::` directives (rerun-if-changed, warnings, rustc-env).
    /// Default: `true` when run from a build script (`OUT_DIR` is set).
    pub fn emit_cargo_directives(mut self, emit: bool) -> Self {
        self.emit_cargo_directives = Some(emit);
        self
    }

    /// Whether to run `rustup component add` for missing components. Default: `true`.
    pub fn install_components(mut self, install: bool) -> Self {
        self.install_components = install;
        self
    }

    /// Whether to link from the libraries (`core`, `cuda_std`, other dependencies, libdevice)
    /// only the symbols the kernels crate needs, before rustc's `llvm-bitcode-linker` runs its
    /// usual `opt` and `llc` (see the `link` module: the same functions in the PTX, about a
    /// second less per build of a small crate). Needs `bash`. Default: `true`; `false` links
    /// as rustc does.
    pub fn link_only_needed(mut self, only_needed: bool) -> Self {
        self.link_only_needed = only_needed;
        self
    }

    /// Use NVIDIA's libdevice for `cuda_std::math`'s transcendental functions: adds
    /// `--cfg cuda_std_fast_math` and `-C link-arg=<libdevice.10.bc>` to the kernels build
    /// (the llvm-bitcode-linker links and inlines the `__nv_*` functions; BRIEF: verified).
    /// libdevice is looked up by [`find_libdevice`]. Default: `false` (exact `libm` results,
    /// identical to the CPU's).
    pub fn fast_math(mut self, fast: bool) -> Self {
        self.fast_math = fast;
        self
    }

    /// Adds `--cfg <name>` to the kernels build (e.g. to select kernels for one variant).
    /// Declare the name in the kernels crate's `check-cfg` lints. Default: none.
    pub fn cfg(mut self, name: impl Into<String>) -> Self {
        self.cfgs.push(name.into());
        self
    }

    /// Caps the registers per thread of `kernel` (its `#[kernel]` name) at `registers`
    /// (16 to 255): the builder adds the PTX directive `.maxnreg` to the kernel's entry
    /// (what nvcc emits for `__maxnreg__`), which ptxas and the driver's JIT honour. Fewer
    /// registers let more warps share a multiprocessor (with 32 per thread, the maximum 64
    /// warps on sm_70 to sm_90; PTX ISA, "Performance-Tuning Directives"), at the risk of
    /// spilling; the build warns about spills where ptxas runs. Default: no caps.
    pub fn max_registers(mut self, kernel: impl Into<String>, registers: u32) -> Self {
        self.max_registers.push((kernel.into(), registers));
        self
    }

    /// Names this build as a variant of the kernels crate (for example `"sm80"` for a build
    /// with `.arch(ComputeCapability::new(8, 0))`), so that it can coexist with the default build
    /// in the same build script: the default target directory becomes
    /// `<default>/<variant>` (builds with different flags in one target directory would
    /// rebuild `core` each time), and the exported variable becomes
    /// `<CRATE>_<VARIANT>_PTX` (e.g. `KERNELS_SM80_PTX`) instead of `<CRATE>_PTX`.
    /// Default: none.
    ///
    /// Kernels that need a newer architecture can be gated with
    /// `#[cfg(target_feature = "sm_80")]`, which rustc sets for `-C target-cpu=sm_80` and
    /// every later architecture.
    pub fn variant(mut self, name: impl Into<String>) -> Self {
        self.variant = Some(name.into());
        self
    }

    /// Also builds the kernels crate for the arch-specific target `arch` (e.g.
    /// [`ComputeCapability::sm_90a`]), in the same [`build`](Self::build), beside the
    /// baseline [`arch`](Self::arch): one more nested cargo (`-C target-cpu=sm_90a`, in
    /// `<target dir>/sm_90a`), with the PTX ISA version the target needs
    /// ([`min_ptx_isa`]: 8.0 for sm_90a) or [`ptx_isa`](Self::ptx_isa) if that is newer.
    /// Each variant adds one PTX and, where ptxas is found, one cubin for `arch`
    /// (`<target dir>/sm_90a/nvptx64-nvidia-cuda/<profile>/<crate>.sm_90a.cubin`), listed in
    /// the manifest's [`ModuleImage::variants`]; every entry point lists the targets whose
    /// PTX defines it ([`EntryPoint::archs`]), which is how `cust` picks, per kernel, the
    /// variant a device can run. The paths are exported as `<CRATE>_PTX_SM90A` and
    /// `<CRATE>_CUBIN_SM90A`. [`max_registers`](Self::max_registers) caps apply in every
    /// PTX that defines the kernel; [`output_path`](Self::output_path) and
    /// [`final_module_path`](Self::final_module_path) receive the baseline only.
    ///
    /// Kernels that need the target gate themselves with
    /// `#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]`: the host
    /// (where `target_arch` is not nvptx64) always has their typed handle, and only the
    /// variant's PTX defines them. A variant that declares a kernel's parameters differently
    /// from the baseline fails the build ([`BuildError::VariantParams`]). Default: none.
    pub fn arch_variant(mut self, arch: impl Into<ComputeCapability>) -> Self {
        let arch = arch.into();
        if !self.arch_variants.contains(&arch) {
            self.arch_variants.push(arch);
        }
        self
    }

    /// Compiles the kernels crate to PTX, in these steps (see the crate docs): find the crate
    /// and the toolchain; the nested cargo; the inputs from its dep-info; the final PTX
    /// (register caps, copies); ptxas and cubins; the manifest; the exported paths.
    ///
    /// # Errors
    /// Every failing step has its [`BuildError`] variant: a missing crate or component, a
    /// cargo that cannot be started, a compile error (with the compiler's messages), a
    /// missing PTX file, invalid PTX (with ptxas' messages), a file that cannot be written.
    pub fn build(self) -> Result<Artifact, BuildError> {
        self.build_with(None)
    }

    /// [`build`](Self::build), in watch mode with `session`: the baseline's step 1 replays
    /// the kernels crate's last rustc command when only its own sources changed, and
    /// otherwise runs cargo recording that command (see the `replay` module); the linker
    /// reuses its last library link (see the `link` module).
    pub(crate) fn build_with(
        self,
        session: Option<&mut replay::Session>,
    ) -> Result<Artifact, BuildError> {
        let emit = self
            .emit_cargo_directives
            .unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some());
        let krate = KernelsCrate::find(&self.crate_path)?;
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let sysroot = toolchain::ensure_components(&rustc, self.install_components)?;
        let target_dir = self.resolved_target_dir(&krate.dir);
        let linker = if self.link_only_needed {
            Some(link::script(&target_dir, &sysroot)?)
        } else {
            None
        };

        let profile = if self.release { "release" } else { "debug" };
        let prefix = self.env_prefix(&krate.file_stem);

        // Step 1 and 2 for the baseline and each arch-specific variant.
        let outputs = |target_dir: &Path| {
            let out_dir = target_dir.join(TARGET).join(profile);
            let compiled_ptx = out_dir.join(format!("{}.ptx", krate.file_stem));
            (out_dir, compiled_ptx)
        };
        let compiled = |builder: &Self,
                        target_dir: &Path,
                        extra_env: &[(&str, std::ffi::OsString)]|
         -> Result<_, BuildError> {
            let cmd = cargo_cmd::command(
                builder,
                &krate,
                &cargo,
                &rustc,
                target_dir,
                linker.as_deref(),
                extra_env,
            )?;
            cargo_cmd::run(cmd, &krate.name, emit)?;
            let (out_dir, compiled_ptx) = outputs(target_dir);
            if !compiled_ptx.is_file() {
                return Err(BuildError::PtxMissing(compiled_ptx));
            }
            let dep_info = out_dir.join(format!("{}.d", krate.file_stem));
            let inputs = depinfo::source_inputs(&dep_info, &krate.manifest, &sysroot);
            Ok((out_dir, compiled_ptx, inputs))
        };
        let baseline = match session {
            None => compiled(&self, &target_dir, &[]),
            Some(session) => {
                let (out_dir, compiled_ptx) = outputs(&target_dir);
                match session.replay(&sysroot, &krate.name, &compiled_ptx, emit) {
                    Some(replayed) => replayed.map(|inputs| (out_dir, compiled_ptx, inputs)),
                    None => {
                        let mut env = replay::recording_env(&target_dir, &rustc, &krate.file_stem)?;
                        env.push((link::REUSE_ENV, "1".into()));
                        let result = compiled(&self, &target_dir, &env);
                        session.cargo_built(
                            &target_dir,
                            result.as_ref().ok().map(|(_, _, inputs)| inputs.as_slice()),
                        );
                        result
                    }
                }
            }
        };
        let (out_dir, compiled_ptx, mut inputs) = baseline.map_err(|e| failed(e, &prefix, emit))?;
        let mut variants = Vec::new();
        for &arch in &self.arch_variants {
            let builder = self.variant_builder(arch);
            let (v_out, v_ptx, v_inputs) =
                compiled(&builder, &target_dir.join(arch.to_string()), &[])
                    .map_err(|e| failed(e, &prefix, emit))?;
            for input in v_inputs {
                if !inputs.contains(&input) {
                    inputs.push(input);
                }
            }
            variants.push((builder, v_out, v_ptx));
        }
        if emit {
            depinfo::emit_rerun_directives(&inputs);
        }

        // Register caps apply where a kernel is defined: check each is defined somewhere.
        let baseline = if variants.is_empty() {
            self.clone()
        } else {
            let mut texts = vec![read(&compiled_ptx)?];
            for (_, _, ptx) in &variants {
                texts.push(read(ptx)?);
            }
            if let Some((kernel, _)) = self
                .max_registers
                .iter()
                .find(|(k, _)| !texts.iter().any(|t| defines(t, k)))
            {
                return Err(BuildError::MaxRegisters {
                    kernel: kernel.clone(),
                    reason: "no PTX of the build (the baseline or an arch-specific variant) \
                             defines a kernel of that name"
                        .into(),
                });
            }
            self.caps_defined_in(&texts[0])
        };

        // Steps 3 and 4 for the baseline, then for each variant.
        let ptx_path = baseline.final_ptx(compiled_ptx, &out_dir, &krate.file_stem)?;
        let assembled = baseline.assemble(&ptx_path, &out_dir, &krate.file_stem, emit)?;
        let base_target = manifest::Target {
            arch: self.arch,
            ptx_text: read(&ptx_path)?,
            ptx_path: ptx_path.clone(),
            cubins: assembled.cubins,
            resources: assembled.resources,
        };
        let mut ptxas_missing = assembled.ptxas_missing;
        let mut variant_targets = Vec::new();
        for (builder, v_out, v_ptx) in variants {
            let builder = builder.caps_defined_in(&read(&v_ptx)?);
            let v_ptx = builder.final_ptx(v_ptx, &v_out, &krate.file_stem)?;
            let v_assembled = builder.assemble(&v_ptx, &v_out, &krate.file_stem, emit)?;
            ptxas_missing |= v_assembled.ptxas_missing;
            variant_targets.push(manifest::Target {
                arch: builder.arch,
                ptx_text: read(&v_ptx)?,
                ptx_path: v_ptx,
                cubins: v_assembled.cubins,
                resources: v_assembled.resources,
            });
        }
        if emit && ptxas_missing {
            let ptx: Vec<&str> = std::iter::once(&base_target)
                .chain(&variant_targets)
                .map(|t| t.ptx_text.as_str())
                .collect();
            let record = out_dir.join(format!("{}.ptxas-missing", krate.file_stem));
            self.note_ptxas_missing(&record, &ptx);
        }
        let image = manifest::image(&krate.name, base_target, variant_targets)?;

        let module_dir = std::env::var_os("OUT_DIR").map_or_else(|| out_dir.clone(), PathBuf::from);
        let written = manifest::write(&image, &prefix, &module_dir)?;
        if emit {
            export_paths(&prefix, &ptx_path, &image, &written);
        }
        Ok(Artifact {
            inputs,
            ptx_path,
            ptxas: assembled.ptxas,
            image,
            manifest_path: written.manifest_path,
            module_path: written.module_path,
        })
    }

    /// The builder of the arch-specific variant `arch`: this one's settings with `arch` as
    /// the target, the PTX ISA it needs ([`min_ptx_isa`]), ptxas run for `arch` alone with
    /// its cubin kept, and no copies of the PTX (those are the baseline's).
    fn variant_builder(&self, arch: ComputeCapability) -> Self {
        Self {
            arch,
            ptx_isa: self.ptx_isa.max(min_ptx_isa(arch)),
            ptxas_archs: vec![arch],
            cubin_archs: vec![arch],
            output_path: None,
            final_module_path: None,
            arch_variants: Vec::new(),
            ..self.clone()
        }
    }

    /// This builder with only the register caps of kernels that `ptx` defines.
    fn caps_defined_in(&self, ptx: &str) -> Self {
        Self {
            max_registers: self
                .max_registers
                .iter()
                .filter(|(k, _)| defines(ptx, k))
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    /// The kernels build's target directory: [`target_dir`](Self::target_dir), else the
    /// default (`<outer target>/cuda_builder[/<variant>]`).
    fn resolved_target_dir(&self, crate_dir: &Path) -> PathBuf {
        match (&self.target_dir, &self.variant) {
            (Some(dir), _) => dir.clone(),
            (None, Some(variant)) => default_target_dir(crate_dir).join(variant),
            (None, None) => default_target_dir(crate_dir),
        }
    }

    /// `MY_KERNELS` / `MY_KERNELS_SM80`: the generated static's name and the prefix of the
    /// exported variables, from the crate's file stem and the [`variant`](Self::variant).
    fn env_prefix(&self, file_stem: &str) -> String {
        let variant = self
            .variant
            .as_deref()
            .map(|v| format!("_{}", v.to_uppercase().replace('-', "_")))
            .unwrap_or_default();
        format!("{}{variant}", file_stem.to_uppercase())
    }

    /// Step 3: the final PTX from what rustc compiled: with the
    /// [`max_registers`](Self::max_registers) caps (in a file of its own,
    /// `<stem>.maxnreg.ptx`: rustc's output stays as compiled, since cargo may not rebuild it
    /// when only the caps change), copied to [`output_path`](Self::output_path) (which then
    /// is the PTX's path) and to [`final_module_path`](Self::final_module_path).
    fn final_ptx(
        &self,
        compiled: PathBuf,
        out_dir: &Path,
        file_stem: &str,
    ) -> Result<PathBuf, BuildError> {
        let mut ptx_path = compiled;
        if !self.max_registers.is_empty() {
            let ptx = std::fs::read_to_string(&ptx_path)
                .map_err(|e| BuildError::Io(ptx_path.clone(), e))?;
            let capped = cap_registers(&ptx, &self.max_registers)?;
            let capped_path = out_dir.join(format!("{file_stem}.maxnreg.ptx"));
            std::fs::write(&capped_path, capped)
                .map_err(|e| BuildError::Io(capped_path.clone(), e))?;
            ptx_path = capped_path;
        }
        if let Some(dest) = &self.final_module_path {
            std::fs::copy(&ptx_path, dest).map_err(|e| BuildError::Io(dest.clone(), e))?;
        }
        if let Some(dest) = &self.output_path {
            std::fs::copy(&ptx_path, dest).map_err(|e| BuildError::Io(dest.clone(), e))?;
            ptx_path = dest.clone();
        }
        Ok(ptx_path)
    }

    /// Step 4: validates the PTX with ptxas for each architecture of
    /// [`ptxas_archs`](Self::ptxas_archs) and [`cubin_archs`](Self::cubin_archs) (keeping
    /// the cubins of the latter as `<stem>.sm_XY.cubin`), as [`ptxas`](Self::ptxas) says;
    /// warns about register spills.
    ///
    /// # Errors
    /// [`BuildError::PtxasNotFound`] in [`PtxasMode::Required`] without ptxas; as
    /// [`ptxas::assemble`].
    fn assemble(
        &self,
        ptx_path: &Path,
        out_dir: &Path,
        file_stem: &str,
        emit: bool,
    ) -> Result<Assembled, BuildError> {
        let mut assembled = Assembled::default();
        if self.ptxas == PtxasMode::Off {
            return Ok(assembled);
        }
        let Some(ptxas) = ptxas::find() else {
            if self.ptxas == PtxasMode::Required {
                return Err(BuildError::PtxasNotFound);
            }
            // `build` says so, once per kernels build (`note_ptxas_missing`).
            assembled.ptxas_missing = true;
            return Ok(assembled);
        };
        let mut archs = if self.ptxas_archs.is_empty() {
            vec![self.arch]
        } else {
            self.ptxas_archs.clone()
        };
        for cc in &self.cubin_archs {
            if !archs.contains(cc) {
                archs.push(*cc);
            }
        }
        for arch in archs {
            let cubin = self
                .cubin_archs
                .contains(&arch)
                .then(|| out_dir.join(format!("{file_stem}.{arch}.cubin")));
            assembled.resources.extend(ptxas::assemble(
                &ptxas,
                ptx_path,
                arch,
                cubin.as_deref(),
                self.wants_line_tables() || self.debug_info == Some(true),
            )?);
            if let Some(c) = cubin {
                assembled.cubins.push((arch, c));
            }
        }
        if emit {
            for line in resource_lines(&assembled.resources, self.report_resources) {
                println!("cargo::warning={line}");
            }
        }
        assembled.ptxas = Some(ptxas);
        Ok(assembled)
    }

    /// Warns that ptxas is missing, once per kernels build: only if the PTX of this build
    /// (`ptx`, the baseline's and each variant's) is not the one `record` says was warned
    /// about already, and once per build script however many builders it runs. Cargo shows a
    /// build script's warnings again on every later command until the script runs again, so
    /// the warning also asks cargo to rerun it once, on the next build: that run finds the
    /// PTX recorded and says nothing.
    fn note_ptxas_missing(&self, record: &Path, ptx: &[&str]) {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if !first_sight(record, ptx) || WARNED.swap(true, AtomicOrdering::Relaxed) {
            return;
        }
        println!(
            "cargo::warning=ptxas not found: the PTX was not validated{}. {} (This warning \
             appears once per kernels build.)",
            if self.cubin_archs.is_empty() {
                ""
            } else {
                " and no cubins were made (the host will JIT the PTX)"
            },
            ptxas::INSTALL_HINT
        );
        if let Some(out_dir) = std::env::var_os("OUT_DIR") {
            rerun_next_build(Path::new(&out_dir), "ptxas-noted");
        }
    }
}

/// Whether `record` (a file) names a hash of other texts than `ptx`, or none; then it is
/// rewritten with `ptx`'s, so the next call with the same texts is `false`. (Best effort: a
/// record that cannot be written makes every call `true`.)
fn first_sight(record: &Path, ptx: &[&str]) -> bool {
    let mut hasher = std::hash::DefaultHasher::new();
    ptx.hash(&mut hasher);
    let hash = format!("{:016x}\n", hasher.finish());
    if std::fs::read_to_string(record).is_ok_and(|r| r == hash) {
        return false;
    }
    let _ = std::fs::write(record, &hash);
    true
}

/// The warning lines about ptxas' `resources` (`(kernel, resources)` per kernel and
/// architecture): every kernel's with `all`, else only those that spill registers.
fn resource_lines(resources: &[(String, Resources)], all: bool) -> Vec<String> {
    resources
        .iter()
        .filter(|(_, r)| all || r.spill_store_bytes > 0)
        .map(|(kernel, r)| {
            let spills = if r.spill_store_bytes > 0 {
                " (register spills)"
            } else {
                ""
            };
            format!("[kernels] {kernel} on {r}{spills}")
        })
        .collect()
}

/// Asks cargo to rerun the build script on the next build, whatever changed: a
/// `rerun-if-changed` on a file that does not exist (cargo reruns a script whose watched
/// file is missing). `why` names the file, in `out_dir` (the script's `OUT_DIR`).
fn rerun_next_build(out_dir: &Path, why: &str) {
    let missing = out_dir.join(format!("cuda_builder-rerun-{why}"));
    let _ = std::fs::remove_file(&missing);
    println!("cargo::rerun-if-changed={}", missing.display());
}

/// `err` from a kernels build; for a compile error in a build script (`emit`), also points
/// `<prefix>_MODULE` at a module that is a `compile_error!` with the compiler's messages
/// ([`BuildError::reported_in_module`]) and asks cargo to rerun the build script next time.
fn failed(err: BuildError, prefix: &str, emit: bool) -> BuildError {
    let (BuildError::Compile { module, .. }, true, Some(out_dir)) =
        (&err, emit, std::env::var_os("OUT_DIR"))
    else {
        return err;
    };
    debug_assert!(module.is_none());
    let out_dir = PathBuf::from(out_dir);
    match manifest::write_failed(prefix, &err.to_string(), &out_dir) {
        Ok(path) => {
            println!("cargo::rustc-env={prefix}_MODULE={}", path.display());
            rerun_next_build(&out_dir, "failed");
            match err {
                BuildError::Compile {
                    crate_name,
                    messages,
                    ..
                } => BuildError::Compile {
                    crate_name,
                    messages,
                    module: Some(path),
                },
                other => other,
            }
        }
        // The build script reports the error itself, as without a module.
        Err(_) => err,
    }
}

/// The PTX ISA version (major, minor) that rustc must emit for code targeting `arch`: the
/// first version that knows the target. From the PTX ISA's release notes ("PTX ISA Notes" /
/// "Target ISA Notes" of each instruction set), and checked against rustc 1.95's LLVM, which
/// aborts ("PTX version X does not support target 'sm_YY'") below these: sm_80 7.0, sm_86
/// 7.1, sm_87 7.4, sm_89 and sm_90 7.8, sm_90a 8.0, sm_100(a) and sm_101(a) 8.6, sm_120(a)
/// 8.7, sm_103(a), sm_121(a) and every family-specific target (`sm_100f` ...) 8.8, sm_110(a|f)
/// 9.0. Older targets need nothing beyond the builder's default 7.0; newer ones missing from
/// the table get 9.0, the newest this toolchain emits.
pub fn min_ptx_isa(arch: ComputeCapability) -> (u32, u32) {
    match (arch.major, arch.minor, arch.family_specific) {
        (..=7, _, _) | (8, 0, _) => (7, 0),
        (8, 6, _) => (7, 1),
        (8, 7, _) => (7, 4),
        (8, 9, _) | (9, 0, _) if !arch.arch_specific => (7, 8),
        (9, 0, _) => (8, 0),
        (10, 0 | 1, false) => (8, 6),
        (12, 0, false) => (8, 7),
        (10, 3, _) | (12, 1, _) | (10 | 12, _, true) => (8, 8),
        _ => (9, 0),
    }
}

/// Whether `ptx` defines the kernel entry `kernel`.
fn defines(ptx: &str, kernel: &str) -> bool {
    ptx.contains(&format!(".entry {kernel}("))
}

/// The text of the PTX file `path`.
fn read(path: &Path) -> Result<String, BuildError> {
    std::fs::read_to_string(path).map_err(|e| BuildError::Io(path.to_path_buf(), e))
}

/// `SM90` / `SM90A`: an architecture as it appears in exported variable names.
fn env_arch(arch: ComputeCapability) -> String {
    format!(
        "SM{}{}{}",
        arch.major,
        arch.minor,
        if arch.arch_specific { "A" } else { "" }
    )
}

/// The kernels crate of a build: where it is and what rustc names its outputs.
#[derive(Debug)]
pub(crate) struct KernelsCrate {
    /// Its `Cargo.toml`, canonical.
    manifest: PathBuf,
    /// The folder holding it.
    dir: PathBuf,
    /// The package name.
    name: String,
    /// rustc's name for its outputs: the package name with `-` replaced by `_`.
    file_stem: String,
}

impl KernelsCrate {
    /// The crate in the folder `crate_path`.
    ///
    /// # Errors
    /// [`BuildError::CrateNotFound`] without a `Cargo.toml` there,
    /// [`BuildError::NoPackageName`] if it names no package, [`BuildError::Io`].
    fn find(crate_path: &Path) -> Result<Self, BuildError> {
        let manifest = crate_path.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::CrateNotFound(crate_path.to_path_buf()));
        }
        let manifest = manifest
            .canonicalize()
            .map_err(|e| BuildError::Io(manifest.clone(), e))?;
        let dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
        let name = toolchain::package_name(&manifest)?;
        let file_stem = name.replace('-', "_");
        Ok(Self {
            manifest,
            dir,
            name,
            file_stem,
        })
    }
}

/// What ptxas produced (step 4): nothing without ptxas.
#[derive(Debug, Default)]
struct Assembled {
    /// The ptxas that ran.
    ptxas: Option<PathBuf>,
    /// ptxas was asked for ([`PtxasMode::Auto`]) but not found.
    ptxas_missing: bool,
    /// `(architecture, file)` of each cubin kept.
    cubins: Vec<(ComputeCapability, PathBuf)>,
    /// `(entry name, resources)` for each kernel and architecture assembled.
    resources: Vec<(String, Resources)>,
}

/// Step 6: the `cargo::rustc-env` lines that give the host crate the paths of the build's
/// outputs: `<PREFIX>_PTX`, `<PREFIX>_MODULE` (the generated Rust file),
/// `<PREFIX>_MANIFEST` (the JSON), `<PREFIX>_CUBIN_SM<XY>` for each cubin, and for each
/// arch-specific variant `<PREFIX>_PTX_SM<XY>A` and `<PREFIX>_CUBIN_SM<XY>A`.
fn export_paths(prefix: &str, ptx_path: &Path, image: &ModuleImage, written: &manifest::Written) {
    println!("cargo::rustc-env={prefix}_PTX={}", ptx_path.display());
    println!(
        "cargo::rustc-env={prefix}_MODULE={}",
        written.module_path.display()
    );
    println!(
        "cargo::rustc-env={prefix}_MANIFEST={}",
        written.manifest_path.display()
    );
    let variant_cubins = image.variants.iter().flat_map(|v| &v.cubins);
    for cubin in image.cubins.iter().chain(variant_cubins) {
        println!(
            "cargo::rustc-env={prefix}_CUBIN_{}={}",
            env_arch(cubin.arch),
            cubin.file
        );
    }
    for variant in &image.variants {
        println!(
            "cargo::rustc-env={prefix}_PTX_{}={}",
            env_arch(variant.arch),
            variant.ptx_file
        );
    }
}

/// NVIDIA's libdevice bitcode (`libdevice.10.bc`), looked up in `$CUDA_HOME`, `$CUDA_PATH`,
/// `/usr/local/cuda` (each under `nvvm/libdevice/`) and then in the `nvidia-cuda-nvcc-cu12`
/// pip wheel ([`ptxas::pip_wheel_dir`]).
pub fn find_libdevice() -> Option<PathBuf> {
    const REL: &str = "nvvm/libdevice/libdevice.10.bc";
    ptxas::toolkit_roots()
        .into_iter()
        .map(|r| r.join(REL))
        .find(|p| p.is_file())
        .or_else(|| {
            ptxas::pip_wheel_dir()
                .map(|d| d.join(REL))
                .filter(|p| p.is_file())
        })
}

/// `<outer target dir>/cuda_builder` when run from a build script (`OUT_DIR` is
/// `<target>/[<triple>/]<profile>/build/<pkg>/out`; the target dir is the nearest ancestor of
/// the `build` folder holding cargo's `CACHEDIR.TAG`), else `<crate_dir>/target/cuda_builder`.
fn default_target_dir(crate_dir: &Path) -> PathBuf {
    let from_out_dir = std::env::var_os("OUT_DIR").and_then(|out_dir| {
        let out_dir = PathBuf::from(out_dir);
        let build = out_dir
            .ancestors()
            .find(|p| p.file_name() == Some("build".as_ref()))?;
        let target = build
            .ancestors()
            .skip(1)
            .find(|p| p.join("CACHEDIR.TAG").is_file())
            .or_else(|| build.parent()?.parent())?;
        Some(target.join("cuda_builder"))
    });
    from_out_dir.unwrap_or_else(|| crate_dir.join("target").join("cuda_builder"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_caps_go_between_parameters_and_body() {
        let ptx = ".version 8.0\n.target sm_70\n\
                   .visible .entry k_a(\n\t.param .u32 k_a_param_0\n)\n{\n\tret;\n}\n\
                   .visible .entry k(\n\t.param .u32 k_param_0\n)  // @k\n{\n\tret;\n}\n";
        let capped = cap_registers(ptx, &[("k".into(), 32)]).expect("k exists");
        // `k`'s entry only (not `k_a`, whose name `k` begins).
        assert_eq!(
            capped,
            ptx.replace("// @k\n{", "// @k\n.maxnreg 32\n{"),
            "{capped}"
        );
        for (caps, why) in [
            (vec![("nope".to_owned(), 32)], "no kernel of that name"),
            (vec![("k".to_owned(), 8)], "8 registers is not allowed"),
            (vec![("k".to_owned(), 256)], "must be 16 to 255"),
            (
                vec![("k".to_owned(), 32), ("k".to_owned(), 40)],
                "already has",
            ),
        ] {
            let err = cap_registers(ptx, &caps).expect_err(why).to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    /// Every `NvvmArch` names the target its Rust-CUDA name says: `Compute100f` is `sm_100f`
    /// (expected values parsed from the variant's own name, not from the mapping).
    #[test]
    fn nvvm_arch_names_map_to_their_targets() {
        use NvvmArch::*;
        let all = [
            Compute35,
            Compute37,
            Compute50,
            Compute52,
            Compute53,
            Compute60,
            Compute61,
            Compute62,
            Compute70,
            Compute72,
            Compute75,
            Compute80,
            Compute86,
            Compute87,
            Compute89,
            Compute90,
            Compute90a,
            Compute100,
            Compute100f,
            Compute100a,
            Compute101,
            Compute101f,
            Compute101a,
            Compute103,
            Compute103f,
            Compute103a,
            Compute120,
            Compute120f,
            Compute120a,
            Compute121,
            Compute121f,
            Compute121a,
        ];
        for arch in all {
            let name = format!("{arch:?}");
            let want: ComputeCapability = format!("sm_{}", name.strip_prefix("Compute").unwrap())
                .parse()
                .unwrap();
            assert_eq!(ComputeCapability::from(arch), want, "{name}");
            assert!(!(want.arch_specific && want.family_specific), "{name}");
        }
    }

    /// The minimum PTX ISA per target, as rustc 1.95's LLVM accepts them (checked by
    /// compiling a function for each `-C target-cpu` with `+ptx70`, `78`, `80`, `86`, `87`,
    /// `88`, `90`: the first accepted is the one listed).
    #[test]
    fn min_ptx_isa_of_the_blackwell_targets() {
        let (p, a, f) = (
            ComputeCapability::new,
            ComputeCapability::new_arch_specific,
            ComputeCapability::new_family_specific,
        );
        for (cc, isa) in [
            (p(9, 0), (7, 8)),
            (a(9, 0), (8, 0)),
            (p(10, 0), (8, 6)),
            (a(10, 0), (8, 6)),
            (f(10, 0), (8, 8)),
            (p(10, 1), (8, 6)),
            (a(10, 1), (8, 6)),
            (f(10, 1), (8, 8)),
            (p(10, 3), (8, 8)),
            (a(10, 3), (8, 8)),
            (f(10, 3), (8, 8)),
            (p(11, 0), (9, 0)),
            (f(11, 0), (9, 0)),
            (p(12, 0), (8, 7)),
            (a(12, 0), (8, 7)),
            (f(12, 0), (8, 8)),
            (p(12, 1), (8, 8)),
            (a(12, 1), (8, 8)),
            (f(12, 1), (8, 8)),
        ] {
            assert_eq!(min_ptx_isa(cc), isa, "{cc}");
        }
    }

    #[test]
    fn compute_features_follow_the_target() {
        let names = |cc: ComputeCapability| compute_features(cc);
        let sm80 = names(ComputeCapability::new(8, 0));
        assert_eq!(sm80.first().map(String::as_str), Some("compute_35"));
        assert_eq!(sm80.last().map(String::as_str), Some("compute_80"));
        assert_eq!(sm80.len(), 12, "{sm80:?}");
        assert_eq!(
            names(ComputeCapability::sm_90a())[16..],
            ["compute_90a".to_owned()]
        );
        let sm103f = names(ComputeCapability::new_family_specific(10, 3));
        assert_eq!(
            sm103f[sm103f.len() - 3..],
            ["compute_100f", "compute_101f", "compute_103f"].map(String::from)
        );
        assert!(sm103f.contains(&"compute_103".to_owned()));
        assert!(!sm103f.iter().any(|n| n.starts_with("compute_12")));
        let sm100a = names(ComputeCapability::new_arch_specific(10, 0));
        assert_eq!(
            sm100a[sm100a.len() - 2..],
            ["compute_100f", "compute_100a"].map(String::from)
        );
        // Everything set is declared for check-cfg.
        let all = all_compute_features();
        for n in sm103f.iter().chain(&sm100a).chain(&sm80) {
            assert!(all.contains(n), "{n}");
        }
    }

    #[test]
    fn arch_variants_get_the_ptx_isa_they_need_and_their_own_settings() {
        let sm90a = ComputeCapability::sm_90a();
        assert_eq!(min_ptx_isa(sm90a), (8, 0));
        assert_eq!(min_ptx_isa(ComputeCapability::new(9, 0)), (7, 8));
        assert_eq!(min_ptx_isa(ComputeCapability::new(7, 0)), (7, 0));
        assert_eq!(
            min_ptx_isa(ComputeCapability::new_arch_specific(10, 0)),
            (8, 6)
        );
        assert_eq!(env_arch(sm90a), "SM90A");
        assert_eq!(env_arch(ComputeCapability::new(8, 0)), "SM80");

        let builder = CudaBuilder::new("k")
            .arch_variant(sm90a)
            .arch_variant(sm90a)
            .copy_to("/t/out.ptx")
            .max_registers("k", 32)
            .max_registers("only_90a", 64);
        assert_eq!(builder.arch_variants, [sm90a], "asked twice, built once");
        let v = builder.variant_builder(sm90a);
        assert_eq!((v.arch, v.ptx_isa), (sm90a, (8, 0)));
        assert_eq!(
            (v.ptxas_archs.as_slice(), v.cubin_archs.as_slice()),
            (&[sm90a][..], &[sm90a][..])
        );
        assert!(v.output_path.is_none() && v.arch_variants.is_empty());
        // A newer ISA asked for the baseline is kept for the variant.
        assert_eq!(
            builder.clone().ptx_isa(8, 5).variant_builder(sm90a).ptx_isa,
            (8, 5)
        );
        // The rustflags name the target and its ISA.
        let flags = cargo_cmd::rustflags(&v).unwrap();
        assert!(
            flags.contains(&"-Ctarget-cpu=sm_90a".to_owned()),
            "{flags:?}"
        );
        assert!(
            flags.contains(&"-Ctarget-feature=+ptx80".to_owned()),
            "{flags:?}"
        );
        // Caps go only where the kernel is defined.
        let ptx = ".visible .entry k(\n)\n{\n}\n";
        assert_eq!(
            builder.caps_defined_in(ptx).max_registers,
            [("k".to_owned(), 32)]
        );
    }

    #[test]
    fn the_ptxas_note_comes_once_per_ptx() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("k.ptxas-missing");
        assert!(first_sight(&record, &["ptx a"]), "a new build");
        assert!(
            !first_sight(&record, &["ptx a"]),
            "the same PTX, rebuilt or not"
        );
        assert!(first_sight(&record, &["ptx b"]), "a kernel changed");
        assert!(
            first_sight(&record, &["ptx b", "sm_90a"]),
            "a variant added"
        );
        assert!(!first_sight(&record, &["ptx b", "sm_90a"]));
    }

    #[test]
    fn resource_lines_are_all_kernels_or_only_spills() {
        let r = |registers, spill_store_bytes| Resources {
            arch: ComputeCapability::new(7, 0),
            registers,
            shared_bytes: 256,
            stack_frame_bytes: 0,
            spill_store_bytes,
            spill_load_bytes: spill_store_bytes,
        };
        let resources = [
            ("saxpy".to_owned(), r(12, 0)),
            ("big".to_owned(), r(255, 8)),
        ];
        let all = resource_lines(&resources, true);
        assert_eq!(
            all,
            [
                "[kernels] saxpy on sm_70: 12 registers, 256 bytes shared, 0 bytes stack, 0 \
                 bytes spill stores, 0 bytes spill loads",
                "[kernels] big on sm_70: 255 registers, 256 bytes shared, 0 bytes stack, 8 \
                 bytes spill stores, 8 bytes spill loads (register spills)",
            ]
        );
        assert_eq!(resource_lines(&resources, false), all[1..]);
        assert!(!CudaBuilder::new("k").report_resources, "off by default");
        assert!(
            CudaBuilder::new("k")
                .report_resources(true)
                .report_resources
        );
    }

    #[test]
    fn missing_crate_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let err = CudaBuilder::new(dir.path().join("nope"))
            .emit_cargo_directives(false)
            .build()
            .unwrap_err();
        assert!(matches!(err, BuildError::CrateNotFound(_)), "{err}");
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[test]
    fn final_module_path_gets_a_copy_of_the_final_ptx() {
        let dir = tempfile::tempdir().unwrap();
        let compiled = dir.path().join("k.ptx");
        std::fs::write(
            &compiled,
            ".version 7.0\n.visible .entry k(\n)\n{\n\tret;\n}\n",
        )
        .unwrap();
        let final_module = dir.path().join("final.ptx");
        let builder = CudaBuilder::new(dir.path())
            .max_registers("k", 32)
            .final_module_path(&final_module);
        let ptx = builder
            .final_ptx(compiled.clone(), dir.path(), "k")
            .unwrap();
        // The PTX stays in the target directory; the copy is the final text, caps included.
        assert_eq!(ptx, dir.path().join("k.maxnreg.ptx"));
        let text = std::fs::read_to_string(&final_module).unwrap();
        assert!(text.contains(".maxnreg 32"), "{text}");
        assert_eq!(text, std::fs::read_to_string(&ptx).unwrap());

        // With `copy_to` too, both get it and the PTX's path is the copy's.
        let copy = dir.path().join("copy.ptx");
        let builder = CudaBuilder::new(dir.path())
            .final_module_path(&final_module)
            .copy_to(&copy);
        assert_eq!(
            builder
                .final_ptx(compiled.clone(), dir.path(), "k")
                .unwrap(),
            copy
        );
        assert_eq!(
            std::fs::read(&final_module).unwrap(),
            std::fs::read(&compiled).unwrap()
        );

        let err = CudaBuilder::new(dir.path())
            .final_module_path(dir.path().join("no/such/dir.ptx"))
            .final_ptx(compiled, dir.path(), "k")
            .unwrap_err();
        assert!(err.to_string().contains("no/such/dir.ptx"), "{err}");
    }
}
