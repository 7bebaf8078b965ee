use std::{fmt, path::PathBuf};

/// Why [`CudaBuilder::build`](crate::CudaBuilder::build) failed: one variant per step.
///
/// `Debug` prints the same text as `Display`, the compiler's or ptxas' messages as they are
/// (several lines), so that a build script's `.build().unwrap()` shows them readably.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The kernels crate folder has no `Cargo.toml`.
    #[error("kernels crate not found: {0} has no Cargo.toml")]
    CrateNotFound(PathBuf),
    /// The kernels crate's `Cargo.toml` has no `[package] name`.
    #[error("cannot read the package name from {0}")]
    NoPackageName(PathBuf),
    /// Reading or writing a file failed.
    #[error("I/O error on {0}: {1}")]
    Io(PathBuf, #[source] std::io::Error),
    /// `rustc --print sysroot` failed.
    #[error("cannot run `{0} --print sysroot` to locate the toolchain: {1}")]
    Sysroot(String, String),
    /// A rustup component is missing and could not be installed.
    #[error(
        "the Rust toolchain at {sysroot} lacks {missing}, needed to compile kernels for \
         nvptx64-nvidia-cuda. Install with:\n    {command}\n({reason})"
    )]
    MissingComponents {
        /// The toolchain's sysroot.
        sysroot: PathBuf,
        /// The missing components, space-separated.
        missing: String,
        /// The command that installs them.
        command: String,
        /// Why the automatic installation did not happen.
        reason: String,
    },
    /// The inner `cargo` could not be started or waited for.
    #[error("cannot run cargo ({0}): {1}")]
    CargoNotStarted(PathBuf, #[source] std::io::Error),
    /// rustc could not be started or waited for (watch mode's rebuilds without cargo).
    #[error("cannot run rustc ({0}): {1}")]
    RustcNotStarted(PathBuf, #[source] std::io::Error),
    /// The kernels crate failed to compile.
    #[error(
        "failed to compile the kernels crate `{crate_name}` for nvptx64-nvidia-cuda:\n{messages}"
    )]
    Compile {
        /// Package name of the kernels crate.
        crate_name: String,
        /// The compiler's rendered error messages (or cargo's stderr).
        messages: String,
        /// In a build script: the generated module that now stands for the kernels, a
        /// `compile_error!` with this error ([`BuildError::reported_in_module`]).
        module: Option<PathBuf>,
    },
    /// The build succeeded but produced no PTX file.
    #[error(
        "the kernels build produced no PTX at {0}; does the crate compile as a cdylib \
         and contain at least one #[kernel]?"
    )]
    PtxMissing(PathBuf),
    /// [`CudaBuilder::max_registers`](crate::CudaBuilder::max_registers) named a kernel the
    /// PTX does not define, or a register count outside what PTX allows.
    #[error("register cap for `{kernel}`: {reason}")]
    MaxRegisters {
        /// The kernel named.
        kernel: String,
        /// Why the cap cannot be applied.
        reason: String,
    },
    /// `fast_math(true)` and no libdevice was found.
    #[error(
        "fast math needs NVIDIA's libdevice (nvvm/libdevice/libdevice.10.bc), which was not \
         found. Install it with `python3 -m pip install nvidia-cuda-nvcc-cu12`, or set \
         CUDA_HOME to a CUDA toolkit"
    )]
    LibdeviceNotFound,
    /// `PtxasMode::Required` and no ptxas was found.
    #[error("ptxas is required but was not found. {}", crate::ptxas::INSTALL_HINT)]
    PtxasNotFound,
    /// ptxas could not be started.
    #[error("cannot run ptxas ({0}): {1}")]
    PtxasNotStarted(PathBuf, #[source] std::io::Error),
    /// ptxas rejected the PTX.
    #[error("ptxas rejected {ptx} for {arch}:\n{messages}")]
    InvalidPtx {
        /// The PTX file.
        ptx: PathBuf,
        /// The architecture, e.g. `sm_90`.
        arch: String,
        /// ptxas' messages.
        messages: String,
    },
    /// A path the manifest must name is not UTF-8.
    #[error("{0} is not UTF-8; the kernels manifest names its files by UTF-8 paths")]
    NonUtf8Path(PathBuf),
    /// An arch-specific variant ([`CudaBuilder::arch_variant`](crate::CudaBuilder::arch_variant))
    /// declares a kernel's parameters differently from the baseline or an earlier variant
    /// (a `#[cfg]` that changes a signature): one typed handle cannot launch both.
    #[error(
        "kernel `{kernel}` has parameters of {variant:?} bytes in the {arch} variant but \
         {earlier:?} in an earlier target; gate whole kernels by architecture, not their \
         parameters"
    )]
    VariantParams {
        /// The kernel.
        kernel: String,
        /// The variant's target, e.g. `sm_90a`.
        arch: cust_core::ComputeCapability,
        /// The sizes in the earlier target, bytes.
        earlier: Vec<usize>,
        /// The sizes in this variant, bytes.
        variant: Vec<usize>,
    },
    /// A manifest could not be written or read as JSON.
    #[error("{0} is not a kernels module manifest: {1}")]
    Manifest(PathBuf, #[source] serde_json::Error),
}

impl BuildError {
    /// Whether the host crate's compiler reports this error, so that the build script can
    /// end successfully and the error is printed once, as a rustc error, not twice and
    /// wrapped in the build script's output: `true` for a compile error of the kernels crate
    /// in a build script, where the builder has pointed `<CRATE>_MODULE` at a module that is
    /// a `compile_error!` with the compiler's messages and asked cargo to rerun the script on
    /// the next build. Only for host crates that `include!(env!("<CRATE>_MODULE"))`. An
    /// error that the host build of the kernels crate also has is then reported by that
    /// build alone (cargo stops there, before the host crate); one only the GPU build has
    /// (`f32::exp`, say) by the host crate's `include!`.
    ///
    /// ```no_run
    /// // build.rs of a crate whose src/lib.rs has `include!(env!("KERNELS_MODULE"));`
    /// if let Err(e) = cuda_builder::CudaBuilder::new("kernels").build() {
    ///     if !e.reported_in_module() {
    ///         eprintln!("{e}");
    ///         std::process::exit(1);
    ///     }
    /// }
    /// ```
    pub fn reported_in_module(&self) -> bool {
        matches!(
            self,
            Self::Compile {
                module: Some(_),
                ..
            }
        )
    }
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_prints_compiler_messages_as_they_are() {
        let err = BuildError::Compile {
            crate_name: "kernels".into(),
            messages: "error[E0425]: cannot find value `x`\n --> src/lib.rs:3:5\n  |\n3 |     x\n"
                .into(),
            module: None,
        };
        let debug = format!("{err:?}");
        assert_eq!(debug, err.to_string());
        assert!(
            debug.contains("cannot find value `x`\n --> src/lib.rs:3:5\n"),
            "{debug}"
        );
        assert!(!debug.contains("\\n"), "no escaped newlines: {debug}");
        // What a Rust-CUDA build script's `.build().unwrap()` panics with.
        fn build_script(result: Result<(), BuildError>) {
            result.unwrap();
        }
        let unwrapped =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build_script(Err(err))))
                .unwrap_err();
        let text = unwrapped.downcast_ref::<String>().unwrap();
        assert!(text.contains("\n --> src/lib.rs:3:5\n"), "{text}");
    }
}
