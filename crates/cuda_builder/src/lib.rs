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
//! What [`CudaBuilder::build`] does:
//! 1. Makes sure the toolchain has the `rust-src` and `llvm-bitcode-linker` components,
//!    installing them with `rustup` if needed (or failing with the exact command to run).
//! 2. Runs `cargo rustc --crate-type cdylib --target nvptx64-nvidia-cuda -Zbuild-std=core` on
//!    the kernels crate, in its own target directory, with a scrubbed environment (the outer
//!    cargo's `RUSTFLAGS`, wrappers and target settings never leak in) and
//!    `RUSTC_BOOTSTRAP=1`, so a stable toolchain works.
//! 3. Forwards compiler warnings as `cargo::warning=` lines; on an error, fails with the
//!    compiler's rendered messages.
//! 4. Emits `cargo::rerun-if-changed` for every source file the kernels build read (from its
//!    dep-info file) and `rerun-if-env-changed` for the variables it reads.
//! 5. Where `ptxas` is found ([`ptxas::find`]), assembles the PTX for each requested
//!    architecture, failing on invalid PTX, and reports registers, spills and shared memory
//!    per kernel ([`KernelResources`]).
//! 6. For the architectures of [`CudaBuilder::cubin_archs`], keeps what ptxas assembled as
//!    cubin files (ahead-of-time SASS, loaded without JIT compilation) and exports their
//!    paths as `<CRATE>_CUBIN_SM<XY>` (e.g. `KERNELS_CUBIN_SM90`). Without ptxas there are
//!    no cubins, and the build still succeeds (the host falls back to the PTX).
//! 7. Writes the module manifest, `<crate>_module.rs` (in the calling build script's
//!    `OUT_DIR`, else next to the PTX): a `cust::module::ModuleImage` static named after the
//!    crate (`MY_KERNELS` for `my-kernels`) holding the PTX, the cubins, every entry point
//!    with its parameter sizes, and the ptxas resources. Its path is exported as
//!    `<CRATE>_MODULE`, so the host writes
//!    `include!(env!("MY_KERNELS_MODULE"));` and
//!    `cust::module::Module::from_image(&MY_KERNELS)`. The same manifest as JSON,
//!    `<crate>_module.json`, is written beside it for tools ([`manifest::Manifest::read`]).
//!
//! A kernels crate written for Rust-CUDA builds as it is: the builder adds `#![no_std]` and
//! the unstable features kernels need (`abi_ptx`, `asm_experimental_arch`, `stdarch_nvptx`)
//! to the kernels build when the crate root does not name them, and accepts Rust-CUDA's
//! builder method names ([`CudaBuilder::copy_to`], [`NvvmArch`]).

mod error;
pub mod manifest;
pub mod ptxas;
mod toolchain;
#[cfg(feature = "watch")]
pub mod watch;

pub use error::BuildError;
pub use manifest::Entry;
pub use ptxas::KernelResources;

use std::{
    ffi::OsString,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Command, Stdio},
};

/// The rustc target the kernels are compiled for.
pub const TARGET: &str = "nvptx64-nvidia-cuda";

/// Environment variables of the outer cargo that must not reach the kernels build (they
/// carry host flags, wrappers such as clippy-driver, or redirect the output).
const SCRUBBED_ENV: &[&str] = &[
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
];

/// A compute capability, e.g. `ComputeCapability(7, 0)` for sm_70.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability(pub u32, pub u32);

/// Rust-CUDA's name for an architecture (`NvvmArch::Compute70` = sm_70), accepted by
/// [`CudaBuilder::arch`] so Rust-CUDA build scripts port unchanged.
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
}

impl From<NvvmArch> for ComputeCapability {
    fn from(arch: NvvmArch) -> Self {
        use NvvmArch::*;
        let (major, minor) = match arch {
            Compute35 => (3, 5),
            Compute37 => (3, 7),
            Compute50 => (5, 0),
            Compute52 => (5, 2),
            Compute53 => (5, 3),
            Compute60 => (6, 0),
            Compute61 => (6, 1),
            Compute62 => (6, 2),
            Compute70 => (7, 0),
            Compute72 => (7, 2),
            Compute75 => (7, 5),
            Compute80 => (8, 0),
            Compute86 => (8, 6),
            Compute87 => (8, 7),
            Compute89 => (8, 9),
            Compute90 => (9, 0),
        };
        ComputeCapability(major, minor)
    }
}

impl ComputeCapability {
    /// The `sm_XY` name used by rustc's `-C target-cpu` and by ptxas' `-arch`.
    pub fn sm_name(self) -> String {
        format!("sm_{}{}", self.0, self.1)
    }
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
    /// Cubins assembled ahead of time ([`CudaBuilder::cubin_archs`]), one per architecture;
    /// empty when no `ptxas` was found.
    pub cubins: Vec<(ComputeCapability, PathBuf)>,
    /// Resource usage per kernel and architecture, as reported by `ptxas -v` (empty when no
    /// `ptxas` was found).
    pub resources: Vec<KernelResources>,
    /// Every kernel entry point of the PTX, with its parameter sizes.
    pub entries: Vec<Entry>,
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
    ptxas: PtxasMode,
    ptxas_archs: Vec<ComputeCapability>,
    cubin_archs: Vec<ComputeCapability>,
    emit_cargo_directives: Option<bool>,
    install_components: bool,
    fast_math: bool,
    debug_info: Option<bool>,
    cfgs: Vec<String>,
    variant: Option<String>,
    max_registers: Vec<(String, u32)>,
}

impl CudaBuilder {
    /// A builder for the kernels crate at `crate_path` (the folder holding its `Cargo.toml`;
    /// relative paths are resolved against the current directory, which in a build script is
    /// the host crate's folder).
    pub fn new(crate_path: impl Into<PathBuf>) -> Self {
        Self {
            crate_path: crate_path.into(),
            arch: ComputeCapability(7, 0),
            ptx_isa: (7, 0),
            release: true,
            target_dir: None,
            output_path: None,
            ptxas: PtxasMode::Auto,
            ptxas_archs: Vec::new(),
            cubin_archs: Vec::new(),
            emit_cargo_directives: None,
            install_components: true,
            fast_math: false,
            debug_info: None,
            cfgs: Vec::new(),
            variant: None,
            max_registers: Vec::new(),
        }
    }

    /// The compute capability the PTX targets (`-C target-cpu=sm_XY`). The PTX runs on this
    /// and every later architecture (the driver compiles it on load).
    /// Default: 7.0 (Volta), the oldest the CUDA 12/13 drivers fully support. Takes a
    /// [`ComputeCapability`] or Rust-CUDA's [`NvvmArch`]; architectures below 7.0 are raised
    /// to 7.0 with a warning (rustc's PTX for them lacks the `.sync` warp instructions).
    pub fn arch(mut self, cc: impl Into<ComputeCapability>) -> Self {
        let cc = cc.into();
        if cc < ComputeCapability(7, 0) {
            println!(
                "cargo::warning=cuda_builder: {} is below the supported minimum sm_70; building for sm_70",
                cc.sm_name()
            );
            self.arch = ComputeCapability(7, 0);
        } else {
            self.arch = cc;
        }
        self
    }

    /// The PTX ISA version (`-C target-feature=+ptxXY`). Must be supported by the driver that
    /// loads the PTX (PTX ISA 7.0 came with CUDA 11.0). Default: 7.0.
    pub fn ptx_isa(mut self, major: u32, minor: u32) -> Self {
        self.ptx_isa = (major, minor);
        self
    }

    /// Build with the release profile (optimised). Default: `true`; unoptimised PTX is much
    /// slower and larger. For edit-and-reload loops (`CudaBuilder::watch`, with the `watch`
    /// feature), `release(false).debug_info(false)` rebuilds a one-line change in about 1 s
    /// on 2 cores instead of about 12 s: a release build links and optimises the whole of
    /// `core`'s bitcode with the kernels every time.
    pub fn release(mut self, release: bool) -> Self {
        self.release = release;
        self
    }

    /// Whether the PTX carries debug information (`-Cdebuginfo`). Default: the profile's
    /// (on in a debug build, off in a release build). Off halves a debug build's link time.
    pub fn debug_info(mut self, on: bool) -> Self {
        self.debug_info = Some(on);
        self
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
    /// listed in [`Artifact::cubins`] and exported as `<CRATE>[_<VARIANT>]_CUBIN_SM<XY>`. A
    /// cubin runs only on GPUs of its major architecture at or above its minor version; a
    /// host normally loads the one matching the device exactly and falls back to the PTX.
    /// These architectures are also validated (as by [`ptxas_archs`](Self::ptxas_archs)).
    /// Default: none.
    pub fn cubin_archs(mut self, archs: impl IntoIterator<Item = ComputeCapability>) -> Self {
        self.cubin_archs = archs.into_iter().collect();
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
    /// with `.arch(ComputeCapability(8, 0))`), so that it can coexist with the default build
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

    /// Compiles the kernels crate to PTX.
    ///
    /// # Errors
    /// Every failing step has its [`BuildError`] variant: a missing crate or component, a
    /// cargo that cannot be started, a compile error (with the compiler's messages), a
    /// missing PTX file, invalid PTX (with ptxas' messages).
    pub fn build(self) -> Result<Artifact, BuildError> {
        let emit = self
            .emit_cargo_directives
            .unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some());
        let manifest = self.crate_path.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::CrateNotFound(self.crate_path.clone()));
        }
        let manifest = manifest
            .canonicalize()
            .map_err(|e| BuildError::Io(manifest.clone(), e))?;
        let crate_dir = manifest.parent().unwrap_or(Path::new(".")).to_path_buf();
        let crate_name = toolchain::package_name(&manifest)?;

        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        toolchain::ensure_components(&rustc, self.install_components)?;

        let target_dir = match (&self.target_dir, &self.variant) {
            (Some(dir), _) => dir.clone(),
            (None, Some(variant)) => default_target_dir(&crate_dir).join(variant),
            (None, None) => default_target_dir(&crate_dir),
        };
        let profile = if self.release { "release" } else { "debug" };

        let mut flags = vec![
            format!("-Ctarget-cpu={}", self.arch.sm_name()),
            format!("-Ctarget-feature=+ptx{}{}", self.ptx_isa.0, self.ptx_isa.1),
            "-Zunstable-options".to_owned(),
            // A panic becomes a `trap`, with no formatting code (BRIEF: verified).
            "-Cpanic=immediate-abort".to_owned(),
        ];
        if self.fast_math {
            let libdevice = find_libdevice().ok_or(BuildError::LibdeviceNotFound)?;
            flags.push("--cfg".to_owned());
            flags.push("cuda_std_fast_math".to_owned());
            flags.push(format!("-Clink-arg={}", libdevice.display()));
        }
        if let Some(on) = self.debug_info {
            flags.push(format!("-Cdebuginfo={}", if on { 2 } else { 0 }));
        }
        for cfg in &self.cfgs {
            flags.push("--cfg".to_owned());
            flags.push(cfg.clone());
        }
        // Only for the kernels crate itself (after `--`), not its dependencies or `core`.
        let crate_attrs: Vec<String> = missing_crate_attrs(&toolchain::crate_root(&manifest)?)
            .into_iter()
            .map(|attr| format!("-Zcrate-attr={attr}"))
            .collect();

        let mut cmd = Command::new(&cargo);
        cmd.arg("rustc")
            .arg("--manifest-path")
            .arg(&manifest)
            .args(["--crate-type", "cdylib", "--target", TARGET])
            .args([
                "-Zbuild-std=core",
                "--message-format=json-diagnostic-rendered-ansi",
            ])
            .arg("--target-dir")
            .arg(&target_dir)
            .current_dir(&crate_dir);
        if self.release {
            cmd.arg("--release");
        }
        if !crate_attrs.is_empty() {
            cmd.arg("--").args(&crate_attrs);
        }
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        // Any CARGO_TARGET_<triple>_RUSTFLAGS or _LINKER would also leak in.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("CARGO_TARGET_") || key.starts_with("CARGO_PROFILE_") {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.env("RUSTC", &rustc)
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f"))
            .env("CARGO_TERM_COLOR", "never")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());

        let mut child = cmd
            .spawn()
            .map_err(|e| BuildError::CargoNotStarted(PathBuf::from(&cargo), e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        // Drain stderr on a thread so a full pipe cannot block cargo.
        let stderr_thread = std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                text.push_str(&line);
                text.push('\n');
            }
            text
        });
        let mut errors = Vec::new();
        let mut seen_warnings = std::collections::HashSet::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(msg) = serde_json::from_str::<CargoMessage>(&line) else {
                continue;
            };
            if msg.reason != "compiler-message" {
                continue;
            }
            let Some(diag) = msg.message else { continue };
            let rendered = strip_ansi(diag.rendered.as_deref().unwrap_or(&diag.message));
            match diag.level.as_str() {
                "error" | "error: internal compiler error" => errors.push(rendered),
                // Our own `+ptxXY` flag is reported as unstable on every crate: expected.
                "warning"
                    if diag
                        .message
                        .starts_with("unstable feature specified for `-Ctarget-feature`") => {}
                "warning" if emit && seen_warnings.insert(rendered.clone()) => {
                    for l in rendered.lines().filter(|l| !l.trim().is_empty()) {
                        println!("cargo::warning=[kernels] {l}");
                    }
                }
                _ => {}
            }
        }
        let status = child
            .wait()
            .map_err(|e| BuildError::CargoNotStarted(PathBuf::from(&cargo), e))?;
        let stderr_text = stderr_thread.join().unwrap_or_default();
        if !status.success() {
            let messages = if errors.is_empty() {
                stderr_text
            } else {
                errors.join("\n")
            };
            return Err(BuildError::Compile {
                crate_name,
                messages,
            });
        }

        let out_dir = target_dir.join(TARGET).join(profile);
        // rustc names its outputs after the crate, with `-` replaced by `_`.
        let file_stem = crate_name.replace('-', "_");
        let mut ptx_path = out_dir.join(format!("{file_stem}.ptx"));
        if !ptx_path.is_file() {
            return Err(BuildError::PtxMissing(ptx_path));
        }
        let inputs = source_inputs(&out_dir.join(format!("{file_stem}.d")), &manifest, &rustc);
        if emit {
            emit_rerun_directives(&inputs);
        }
        if !self.max_registers.is_empty() {
            let ptx = std::fs::read_to_string(&ptx_path)
                .map_err(|e| BuildError::Io(ptx_path.clone(), e))?;
            let capped = cap_registers(&ptx, &self.max_registers)?;
            // A file of its own: rustc's output stays as compiled (cargo may not rebuild it
            // when only the caps change).
            let capped_path = out_dir.join(format!("{file_stem}.maxnreg.ptx"));
            std::fs::write(&capped_path, capped)
                .map_err(|e| BuildError::Io(capped_path.clone(), e))?;
            ptx_path = capped_path;
        }
        if let Some(dest) = &self.output_path {
            std::fs::copy(&ptx_path, dest).map_err(|e| BuildError::Io(dest.clone(), e))?;
            ptx_path = dest.clone();
        }

        let mut cubins = Vec::new();
        let (ptxas, resources) = match self.ptxas {
            PtxasMode::Off => (None, Vec::new()),
            mode => match ptxas::find() {
                Some(path) => {
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
                    let mut all = Vec::new();
                    for arch in archs {
                        let cubin = self
                            .cubin_archs
                            .contains(&arch)
                            .then(|| out_dir.join(format!("{file_stem}.{}.cubin", arch.sm_name())));
                        all.extend(ptxas::assemble(&path, &ptx_path, arch, cubin.as_deref())?);
                        if let Some(c) = cubin {
                            cubins.push((arch, c));
                        }
                    }
                    for r in all.iter().filter(|r| r.spill_store_bytes > 0) {
                        if emit {
                            println!("cargo::warning=[kernels] {r} (register spills)");
                        }
                    }
                    (Some(path), all)
                }
                None if mode == PtxasMode::Required => return Err(BuildError::PtxasNotFound),
                None => {
                    if emit {
                        println!(
                            "cargo::warning=ptxas not found: the PTX was not validated{}. {}",
                            if self.cubin_archs.is_empty() {
                                ""
                            } else {
                                " and no cubins were made (the host will JIT the PTX)"
                            },
                            ptxas::INSTALL_HINT
                        );
                    }
                    (None, Vec::new())
                }
            },
        };

        let variant = self
            .variant
            .as_deref()
            .map(|v| format!("_{}", v.to_uppercase().replace('-', "_")))
            .unwrap_or_default();
        // `MY_KERNELS` / `MY_KERNELS_SM80`: the static's name and the prefix of the exported
        // variables.
        let prefix = format!("{}{variant}", file_stem.to_uppercase());
        let ptx_text =
            std::fs::read_to_string(&ptx_path).map_err(|e| BuildError::Io(ptx_path.clone(), e))?;
        let entries = manifest::entries(&ptx_text);
        let module_dir = std::env::var_os("OUT_DIR").map_or_else(|| out_dir.clone(), PathBuf::from);
        let module_path = module_dir.join(format!("{}_module.rs", prefix.to_lowercase()));
        let source = manifest::module_source(
            &prefix,
            &crate_name,
            &ptx_path,
            self.arch,
            &entries,
            &cubins,
            &resources,
        );
        std::fs::write(&module_path, source).map_err(|e| BuildError::Io(module_path.clone(), e))?;
        let json_path = module_path.with_extension("json");
        let manifest_data = manifest::Manifest {
            name: crate_name.clone(),
            ptx: ptx_path.clone(),
            ptx_arch: (self.arch.0, self.arch.1),
            cubins: cubins
                .iter()
                .map(|(cc, p)| ((cc.0, cc.1), p.clone()))
                .collect(),
            entries: entries.clone(),
            resources: resources.clone(),
        };
        let json = serde_json::to_string_pretty(&manifest_data)
            .map_err(|e| BuildError::Io(json_path.clone(), std::io::Error::other(e)))?;
        std::fs::write(&json_path, json).map_err(|e| BuildError::Io(json_path.clone(), e))?;

        if emit {
            println!("cargo::rustc-env={prefix}_PTX={}", ptx_path.display());
            println!("cargo::rustc-env={prefix}_MODULE={}", module_path.display());
            for (cc, path) in &cubins {
                println!(
                    "cargo::rustc-env={prefix}_CUBIN_SM{}{}={}",
                    cc.0,
                    cc.1,
                    path.display()
                );
            }
        }
        Ok(Artifact {
            inputs,
            ptx_path,
            ptxas,
            cubins,
            resources,
            entries,
            module_path,
        })
    }
}

/// The crate attributes a kernels build needs that the crate root at `root` does not name
/// itself (a crate written for Rust-CUDA has none of them; naming a feature twice is an
/// error, so those already present are left out).
fn missing_crate_attrs(root: &Path) -> Vec<&'static str> {
    let text = inner_attributes(&std::fs::read_to_string(root).unwrap_or_default());
    let mut attrs = Vec::new();
    if !text.contains("no_std") {
        attrs.push("no_std");
    }
    for feature in ["abi_ptx", "asm_experimental_arch", "stdarch_nvptx"] {
        if !text.contains(feature) {
            attrs.push(match feature {
                "abi_ptx" => "feature(abi_ptx)",
                "asm_experimental_arch" => "feature(asm_experimental_arch)",
                _ => "feature(stdarch_nvptx)",
            });
        }
    }
    attrs
}

/// The text of every inner attribute (`#![...]`, brackets balanced) of a crate root, so that
/// words in comments or code do not count.
fn inner_attributes(source: &str) -> String {
    let mut out = String::new();
    let mut rest = source;
    while let Some(start) = rest.find("#![") {
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[start + 2..].char_indices() {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + 2 + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push_str(&rest[start..end]);
        out.push('\n');
        rest = &rest[end..];
    }
    out
}

/// NVIDIA's libdevice bitcode (`libdevice.10.bc`), looked up in `$CUDA_HOME`, `$CUDA_PATH`,
/// `/usr/local/cuda` (each under `nvvm/libdevice/`) and then in the `nvidia-cuda-nvcc-cu12`
/// pip wheel ([`ptxas::pip_wheel_dir`]).
pub fn find_libdevice() -> Option<PathBuf> {
    const REL: &str = "nvvm/libdevice/libdevice.10.bc";
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots
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

/// Every input listed in the dep-info file outside the toolchain's sysroot (the kernels
/// crate's sources and those of its path and registry dependencies), then the kernels
/// manifest.
fn source_inputs(dep_info: &Path, manifest: &Path, rustc: &OsString) -> Vec<PathBuf> {
    let sysroot = toolchain::sysroot(rustc).ok();
    let mut inputs: Vec<PathBuf> = std::fs::read_to_string(dep_info)
        .map(|text| parse_dep_info(&text))
        .unwrap_or_default()
        .into_iter()
        .filter(|path| !sysroot.as_ref().is_some_and(|s| path.starts_with(s)))
        .collect();
    inputs.push(manifest.to_path_buf());
    inputs
}

/// Prints `rerun-if-changed` for every input of the kernels build ([`source_inputs`]) and
/// `rerun-if-env-changed` for what the builder reads.
fn emit_rerun_directives(inputs: &[PathBuf]) {
    for path in inputs {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    // ptxas and libdevice are optional and looked up on every build: notice when they appear
    // (a pip install of NVIDIA's wheel, a toolkit install) or go away.
    for path in ptxas::watch_paths() {
        println!("cargo::rerun-if-changed={}", path.display());
    }
    for var in ["PTXAS", "CUDA_HOME", "CUDA_PATH", "PATH"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
}

/// The prerequisites of a Makefile-style dep-info file (`target: dep dep ...`), with `\ `
/// escapes for spaces.
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut deps = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        deps.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                _ => current.push(c),
            }
        }
        if !current.is_empty() {
            deps.push(PathBuf::from(current));
        }
    }
    deps
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // Skip `[` ... final byte in 0x40..=0x7e.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(serde::Deserialize)]
struct CargoMessage {
    reason: String,
    message: Option<Diagnostic>,
}

#[derive(serde::Deserialize)]
struct Diagnostic {
    level: String,
    message: String,
    rendered: Option<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn register_caps_go_between_parameters_and_body() {
        let ptx = ".version 8.0\n.target sm_70\n\
                   .visible .entry k_a(\n\t.param .u32 k_a_param_0\n)\n{\n\tret;\n}\n\
                   .visible .entry k(\n\t.param .u32 k_param_0\n)  // @k\n{\n\tret;\n}\n";
        let capped = super::cap_registers(ptx, &[("k".into(), 32)]).expect("k exists");
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
            let err = super::cap_registers(ptx, &caps).expect_err(why).to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    use super::*;

    #[test]
    fn dep_info_parsing_handles_escaped_spaces_and_multiple_lines() {
        let text = "/t/k.ptx: /a/b.rs /c\\ d/e.rs\n\n/a/b.rs:\n";
        assert_eq!(
            parse_dep_info(text),
            vec![PathBuf::from("/a/b.rs"), PathBuf::from("/c d/e.rs")]
        );
    }

    #[test]
    fn ansi_escapes_are_removed() {
        assert_eq!(
            strip_ansi("\u{1b}[0m\u{1b}[1m\u{1b}[33mwarning\u{1b}[0m: x"),
            "warning: x"
        );
    }

    #[test]
    fn crate_attributes_are_added_only_where_missing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("lib.rs");
        std::fs::write(
            &root,
            "//! mentions no_std and abi_ptx in prose\nuse x::y;\n",
        )
        .unwrap();
        assert_eq!(
            missing_crate_attrs(&root),
            [
                "no_std",
                "feature(abi_ptx)",
                "feature(asm_experimental_arch)",
                "feature(stdarch_nvptx)"
            ]
        );
        std::fs::write(
            &root,
            "#![no_std]\n#![cfg_attr(\n    target_arch = \"nvptx64\",\n    feature(abi_ptx, asm_experimental_arch)\n)]\n",
        )
        .unwrap();
        assert_eq!(missing_crate_attrs(&root), ["feature(stdarch_nvptx)"]);
    }

    #[test]
    fn sm_names() {
        assert_eq!(ComputeCapability(9, 0).sm_name(), "sm_90");
        assert_eq!(ComputeCapability(7, 5).sm_name(), "sm_75");
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
}
