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

mod arch;
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
mod steps;
mod toolchain;
#[cfg(feature = "watch")]
pub mod watch;

pub use arch::{NvvmArch, all_compute_features, compute_features, min_ptx_isa};
pub use cust_core::{ArchVariant, ComputeCapability, Cubin, EntryPoint, ModuleImage, Resources};
pub use error::BuildError;
pub(crate) use steps::KernelsCrate;

use std::path::PathBuf;

/// The rustc target the kernels are compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

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
    variant_max_registers: Vec<(ComputeCapability, String, u32)>,
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
            variant_max_registers: Vec::new(),
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

    /// Caps the registers of `kernel` at `registers` in the arch-specific variant `arch`
    /// ([`arch_variant`](Self::arch_variant)) only, in place of its
    /// [`max_registers`](Self::max_registers) cap there: for a kernel whose variant code
    /// needs fewer registers than its baseline code (e.g. one that moves its tiles with sm_90
    /// bulk copies rather than through registers), where ptxas given the baseline's cap
    /// would use more registers than the variant needs. The build fails
    /// ([`BuildError::MaxRegisters`]) when `arch` is not a variant of the build or its PTX
    /// does not define `kernel`. Default: none.
    pub fn max_registers_in(
        mut self,
        arch: impl Into<ComputeCapability>,
        kernel: impl Into<String>,
        registers: u32,
    ) -> Self {
        self.variant_max_registers
            .push((arch.into(), kernel.into(), registers));
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
    /// PTX that defines the kernel, [`max_registers_in`](Self::max_registers_in) caps in
    /// their variant; [`output_path`](Self::output_path) and
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
