//! [`CudaBuilder::build`], one function per step (see the crate docs): the kernels crate
//! ([`KernelsCrate`]), the final PTX with its register caps, ptxas and the cubins
//! ([`Assembled`]), the manifest and the exported paths, and how a failure is reported to
//! a build script.

use crate::{
    Artifact, BuildError, ComputeCapability, CudaBuilder, ModuleImage, PtxasMode, Resources,
    TARGET,
    arch::{env_arch, min_ptx_isa},
    cargo_cmd, depinfo, link, manifest, ptxas, replay, toolchain,
};
use std::{
    hash::{Hash, Hasher},
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering as AtomicOrdering},
};

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

impl CudaBuilder {
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
            if let Some((arch, kernel, _)) = self.variant_max_registers.first() {
                return Err(BuildError::MaxRegisters {
                    kernel: kernel.clone(),
                    reason: format!(
                        "a cap for the {arch} variant, but the build has no arch-specific \
                         variants"
                    ),
                });
            }
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
            for (arch, kernel, _) in &self.variant_max_registers {
                let text = self
                    .arch_variants
                    .iter()
                    .position(|a| a == arch)
                    .map(|i| &texts[i + 1]);
                if !text.is_some_and(|t| defines(t, kernel)) {
                    return Err(BuildError::MaxRegisters {
                        kernel: kernel.clone(),
                        reason: format!(
                            "a cap for the {arch} variant, but {}",
                            if text.is_some() {
                                "that variant's PTX defines no kernel of that name"
                            } else {
                                "the build has no such arch-specific variant"
                            }
                        ),
                    });
                }
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
        // The build's caps, with this variant's own in place of them.
        let own: Vec<(String, u32)> = self
            .variant_max_registers
            .iter()
            .filter(|(a, _, _)| *a == arch)
            .map(|(_, k, r)| (k.clone(), *r))
            .collect();
        let mut max_registers: Vec<(String, u32)> = self
            .max_registers
            .iter()
            .filter(|(k, _)| !own.iter().any(|(o, _)| o == k))
            .cloned()
            .collect();
        max_registers.extend(own);
        Self {
            arch,
            max_registers,
            variant_max_registers: Vec::new(),
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

/// Whether `ptx` defines the kernel entry `kernel`.
fn defines(ptx: &str, kernel: &str) -> bool {
    ptx.contains(&format!(".entry {kernel}("))
}

/// The text of the PTX file `path`.
fn read(path: &Path) -> Result<String, BuildError> {
    std::fs::read_to_string(path).map_err(|e| BuildError::Io(path.to_path_buf(), e))
}

/// The kernels crate of a build: where it is and what rustc names its outputs.
#[derive(Debug)]
pub(crate) struct KernelsCrate {
    /// Its `Cargo.toml`, canonical.
    pub(crate) manifest: PathBuf,
    /// The folder holding it.
    pub(crate) dir: PathBuf,
    /// The package name.
    pub(crate) name: String,
    /// rustc's name for its outputs: the package name with `-` replaced by `_`.
    pub(crate) file_stem: String,
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
            .max_registers("only_90a", 64)
            .max_registers_in(sm90a, "k", 40);
        assert_eq!(builder.arch_variants, [sm90a], "asked twice, built once");
        let v = builder.variant_builder(sm90a);
        // The variant's own cap replaces the build's; the others stay.
        assert_eq!(
            v.max_registers,
            [("only_90a".to_owned(), 64), ("k".to_owned(), 40)]
        );
        assert!(v.variant_max_registers.is_empty());
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
        // Another variant keeps the build's cap.
        let sm80 = ComputeCapability::new(8, 0);
        assert_eq!(
            builder
                .variant_builder(sm80)
                .caps_defined_in(ptx)
                .max_registers,
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
