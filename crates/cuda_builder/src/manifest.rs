//! Step 5 of a build: the module manifest, a [`ModuleImage`] (`cust_core`'s type, the one
//! definition the builder and the host share): the kernel entry points of the PTX with their
//! parameter sizes and ptxas' resources, and the cubins. The builder writes it as JSON,
//! `<crate>_manifest.json`, and writes `<crate>_module.rs`, which a host crate includes
//! (`include!(env!("<CRATE>_MODULE"))`): a `LazyLock<cust::module::ModuleImage>` static that
//! embeds the JSON, the PTX and the cubins with `include_str!`/`include_bytes!` and parses
//! the JSON on first use (`ModuleImage::embedded`, feature `json` of `cust_core`). Tools
//! read the JSON with [`read`].

use crate::{
    ArchVariant, BuildError, ComputeCapability, Cubin, EntryPoint, ModuleImage, Resources,
};
use std::{
    fmt::Write,
    path::{Path, PathBuf},
};

/// Reads a manifest written by the builder (`<crate>_manifest.json`, whose path a build
/// script exports as `<CRATE>_MANIFEST`); its `ptx` and cubin `bytes` are empty.
///
/// # Errors
/// [`BuildError::Io`] if it cannot be read, [`BuildError::Manifest`] if it is not a
/// manifest.
pub fn read(path: &Path) -> Result<ModuleImage, BuildError> {
    let text = std::fs::read_to_string(path).map_err(|e| BuildError::Io(path.into(), e))?;
    serde_json::from_str(&text).map_err(|e| BuildError::Manifest(path.into(), e))
}

/// One PTX a build produced (the baseline, or an arch-specific variant) and what ptxas made
/// of it in step 4.
#[derive(Debug)]
pub(crate) struct Target {
    /// The PTX's target architecture (`sm_70`, `sm_90a`).
    pub(crate) arch: ComputeCapability,
    /// The final PTX file.
    pub(crate) ptx_path: PathBuf,
    /// Its text.
    pub(crate) ptx_text: String,
    /// The cubins kept, `(architecture, file)`.
    pub(crate) cubins: Vec<(ComputeCapability, PathBuf)>,
    /// ptxas' `(entry name, resources)`.
    pub(crate) resources: Vec<(String, Resources)>,
}

/// The manifest of the kernels crate `name` built as `baseline` and the arch-specific
/// `variants`: the baseline's entries, then those only variants define, each with the
/// targets that define it ([`EntryPoint::archs`]) and ptxas' resources.
///
/// # Errors
/// [`BuildError::NonUtf8Path`] if a file's path is not UTF-8 (the manifest and the
/// generated `include_str!` name files by string); [`BuildError::VariantParams`] if a
/// variant declares an entry's parameters differently from an earlier target.
pub(crate) fn image(
    name: &str,
    baseline: Target,
    variants: Vec<Target>,
) -> Result<ModuleImage, BuildError> {
    let mut entries: Vec<EntryPoint> = Vec::new();
    let mut image_variants = Vec::new();
    let ptx_arch = baseline.arch;
    let ptx_file = utf8(&baseline.ptx_path)?;
    let cubins = cubin_list(&baseline.cubins)?;
    for (index, target) in std::iter::once(baseline).chain(variants).enumerate() {
        for found in self::entries(&target.ptx_text) {
            match entries.iter_mut().find(|e| e.name == found.name) {
                Some(entry) if entry.param_sizes != found.param_sizes => {
                    return Err(BuildError::VariantParams {
                        kernel: found.name,
                        arch: target.arch,
                        earlier: entry.param_sizes.clone(),
                        variant: found.param_sizes,
                    });
                }
                Some(entry) => entry.archs.push(target.arch),
                None => entries.push(EntryPoint {
                    archs: vec![target.arch],
                    ..found
                }),
            }
        }
        for (kernel, r) in target.resources {
            if let Some(entry) = entries.iter_mut().find(|e| e.name == kernel) {
                entry.resources.push(r);
            }
        }
        if index > 0 {
            image_variants.push(ArchVariant {
                arch: target.arch,
                ptx_file: utf8(&target.ptx_path)?,
                ptx: "",
                cubins: cubin_list(&target.cubins)?,
            });
        }
    }
    Ok(ModuleImage {
        name: name.to_owned(),
        ptx_file,
        ptx: "",
        ptx_arch,
        cubins,
        entries,
        variants: image_variants,
    })
}

fn cubin_list(cubins: &[(ComputeCapability, PathBuf)]) -> Result<Vec<Cubin>, BuildError> {
    cubins
        .iter()
        .map(|(arch, path)| {
            Ok(Cubin {
                arch: *arch,
                file: utf8(path)?,
                bytes: &[],
            })
        })
        .collect()
}

fn utf8(path: &Path) -> Result<String, BuildError> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| BuildError::NonUtf8Path(path.to_path_buf()))
}

/// The files [`write`] wrote.
#[derive(Debug)]
pub(crate) struct Written {
    /// `<prefix>_manifest.json`.
    pub(crate) manifest_path: PathBuf,
    /// `<prefix>_module.rs`.
    pub(crate) module_path: PathBuf,
}

/// Writes `image` as `<prefix>_manifest.json` in `dir`, and `<prefix>_module.rs`, which
/// includes it as a static named `prefix` (e.g. `MY_KERNELS`; the files are named in lower
/// case).
///
/// # Errors
/// [`BuildError::Io`] if a file cannot be written, [`BuildError::NonUtf8Path`] if `dir` is
/// not UTF-8.
pub(crate) fn write(image: &ModuleImage, prefix: &str, dir: &Path) -> Result<Written, BuildError> {
    let stem = prefix.to_lowercase();
    let manifest_path = dir.join(format!("{stem}_manifest.json"));
    let module_path = dir.join(format!("{stem}_module.rs"));
    let json = serde_json::to_string_pretty(image)
        .map_err(|e| BuildError::Manifest(manifest_path.clone(), e))?;
    std::fs::write(&manifest_path, json).map_err(|e| BuildError::Io(manifest_path.clone(), e))?;
    let source = module_source(prefix, image, &utf8(&manifest_path)?);
    std::fs::write(&module_path, source).map_err(|e| BuildError::Io(module_path.clone(), e))?;
    Ok(Written {
        manifest_path,
        module_path,
    })
}

/// Writes `<prefix>_module.rs` in `dir` for a kernels build that failed: a `compile_error!`
/// with `message` (the compiler's errors, in `<prefix>_errors.txt` beside it, so that
/// rustc's snippet of the `compile_error!` line stays one short line), and the static of
/// [`write`]'s module with a body that is never run, so that the host crate's uses of it
/// add no errors of their own. Returns the module's path.
///
/// # Errors
/// [`BuildError::Io`] if a file cannot be written; [`BuildError::NonUtf8Path`].
pub(crate) fn write_failed(prefix: &str, message: &str, dir: &Path) -> Result<PathBuf, BuildError> {
    let stem = prefix.to_lowercase();
    let errors_path = dir.join(format!("{stem}_errors.txt"));
    std::fs::write(&errors_path, message.trim_end())
        .map_err(|e| BuildError::Io(errors_path.clone(), e))?;
    let module_path = dir.join(format!("{stem}_module.rs"));
    let source = failed_module_source(prefix, &utf8(&errors_path)?);
    std::fs::write(&module_path, source).map_err(|e| BuildError::Io(module_path.clone(), e))?;
    Ok(module_path)
}

/// The Rust source of [`write_failed`]'s module, with the message in the file `errors_path`.
fn failed_module_source(static_name: &str, errors_path: &str) -> String {
    format!(
        "// Generated by cuda_builder: the kernels build failed, with the errors below.\n\
         compile_error!(include_str!({errors_path:?}));\n\
         pub static {static_name}: ::std::sync::LazyLock<::cust::module::ModuleImage> =\n    \
         ::std::sync::LazyLock::new(|| unreachable!(\"the kernels build failed\"));\n"
    )
}

/// The Rust source of `<prefix>_module.rs`: a `LazyLock<cust::module::ModuleImage>` named
/// `static_name` that embeds the manifest at `manifest_path` and the files it names.
fn module_source(static_name: &str, image: &ModuleImage, manifest_path: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "/// The `{}` kernels module, generated by cuda_builder: PTX, ahead-of-time cubins, and \
         every entry point with its parameter sizes, embedded at compile time and read on first \
         use. Load it with `cust::module::Module::from_image(&{static_name})`.",
        image.name
    );
    let _ = writeln!(
        s,
        "pub static {static_name}: ::std::sync::LazyLock<::cust::module::ModuleImage> =\n    \
         ::std::sync::LazyLock::new(|| {{\n        \
         ::cust::module::ModuleImage::embedded(\n            \
         include_str!({manifest_path:?}),\n            \
         include_str!({:?}),\n            &[",
        image.ptx_file
    );
    for cubin in &image.cubins {
        let _ = writeln!(s, "                include_bytes!({:?}),", cubin.file);
    }
    let _ = writeln!(
        s,
        "            ],\n        )\n        .and_then(|image| image.embed_variants(&["
    );
    for variant in &image.variants {
        let _ = writeln!(s, "            (include_str!({:?}), &[", variant.ptx_file);
        for cubin in &variant.cubins {
            let _ = writeln!(s, "                include_bytes!({:?}),", cubin.file);
        }
        let _ = writeln!(s, "            ]),");
    }
    let _ = writeln!(
        s,
        "        ]))\n        \
         .unwrap_or_else(|e| panic!(\"the generated kernels module {static_name}: {{e}}\"))\n    }});"
    );
    s
}

/// Every `.entry` in PTX text, in order, with its parameter sizes (their `resources` and
/// `archs` empty).
///
/// Parameters are declared one per line: `.param .u32 NAME_param_1`, `.param .u64 .ptr ...
/// NAME_param_3`, or `.param .align 8 .b8 NAME_param_0[16]` (an aggregate of 16 bytes, which
/// is how rustc passes a `&[T]`: pointer and length).
pub fn entries(ptx: &str) -> Vec<EntryPoint> {
    let mut entries = Vec::new();
    let mut current: Option<EntryPoint> = None;
    for line in ptx.lines().map(str::trim) {
        if let Some(rest) = line
            .strip_prefix(".visible .entry ")
            .or_else(|| line.strip_prefix(".entry "))
        {
            entries.extend(current.take());
            let name = rest.split('(').next().unwrap_or(rest).trim().to_owned();
            current = Some(EntryPoint {
                name,
                param_sizes: Vec::new(),
                resources: Vec::new(),
                archs: Vec::new(),
            });
        } else if let Some(decl) = line.strip_prefix(".param ") {
            if let Some(entry) = current.as_mut() {
                entry.param_sizes.push(param_decl_size(decl));
            }
        } else if line.starts_with('{') || line.starts_with(')') {
            entries.extend(current.take());
        }
    }
    entries.extend(current);
    entries
}

/// Size of one `.param` declaration (the text after `.param `).
fn param_decl_size(decl: &str) -> usize {
    if let Some(open) = decl.rfind('[') {
        let count: usize = decl[open + 1..]
            .trim_end_matches([']', ',', ' '])
            .parse()
            .unwrap_or(0);
        let elem = if decl.contains(".b8") {
            1
        } else {
            scalar_size(decl)
        };
        return count * elem;
    }
    scalar_size(decl)
}

fn scalar_size(decl: &str) -> usize {
    for (suffix, size) in [("64", 8), ("32", 4), ("16", 2), ("8", 1)] {
        for ty in ["u", "s", "b", "f"] {
            if decl.contains(&format!(".{ty}{suffix}")) {
                return size;
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_build_module_is_a_compile_error_and_the_static() {
        let dir = tempfile::tempdir().unwrap();
        let message = "failed:\nerror[E0425]: `x` \"here\"";
        let module = write_failed("MY_KERNELS", message, dir.path()).unwrap();
        assert_eq!(module, dir.path().join("my_kernels_module.rs"));
        let errors = dir.path().join("my_kernels_errors.txt");
        assert_eq!(std::fs::read_to_string(&errors).unwrap(), message);
        let source = std::fs::read_to_string(&module).unwrap();
        assert!(
            source.contains(&format!("\ncompile_error!(include_str!({errors:?}));\n")),
            "{source}"
        );
        assert!(
            source.contains(
                "pub static MY_KERNELS: ::std::sync::LazyLock<::cust::module::ModuleImage> ="
            ),
            "{source}"
        );
    }

    // Shapes rustc 1.95 emits for nvptx64 (slice = 16-byte aggregate, pointers, scalars).
    const PTX: &str = "\
.version 7.0
.target sm_70
.address_size 64

\t// .globl\tvecadd
.visible .entry vecadd(
\t.param .align 8 .b8 vecadd_param_0[16],
\t.param .align 8 .b8 vecadd_param_1[16],
\t.param .u64 .ptr .global .align 4 vecadd_param_2
)
{
\tret;
}
.visible .entry scale(
\t.param .f32 scale_param_0,
\t.param .u32 scale_param_1,
\t.param .align 4 .b8 scale_param_2[24]
)
{
\tret;
}
.visible .entry noargs()
{
\tret;
}
";

    fn entry(name: &str, param_sizes: Vec<usize>) -> EntryPoint {
        EntryPoint {
            name: name.into(),
            param_sizes,
            resources: vec![],
            archs: vec![],
        }
    }

    fn target(
        arch: ComputeCapability,
        ptx_path: &str,
        ptx_text: &str,
        cubins: Vec<(ComputeCapability, PathBuf)>,
        resources: Vec<(String, Resources)>,
    ) -> Target {
        Target {
            arch,
            ptx_path: ptx_path.into(),
            ptx_text: ptx_text.into(),
            cubins,
            resources,
        }
    }

    /// The variant PTX: `vecadd` as in the baseline, plus the sm_90a-only `wgmma`.
    const PTX_90A: &str = "\
.version 8.0
.target sm_90a
.address_size 64
.visible .entry vecadd(
\t.param .align 8 .b8 vecadd_param_0[16],
\t.param .align 8 .b8 vecadd_param_1[16],
\t.param .u64 .ptr .global .align 4 vecadd_param_2
)
{
\tret;
}
.visible .entry wgmma(
\t.param .u64 wgmma_param_0
)
{
\tret;
}
";

    #[test]
    fn variants_add_their_entries_and_each_entry_lists_its_targets() {
        let (sm70, sm90a) = (ComputeCapability::new(7, 0), ComputeCapability::sm_90a());
        let mut r = sm90_resources(90);
        r.arch = sm90a;
        let image = image(
            "k",
            target(sm70, "/t/k.ptx", PTX, vec![], vec![]),
            vec![target(
                sm90a,
                "/t/sm_90a/k.ptx",
                PTX_90A,
                vec![(sm90a, "/t/sm_90a/k.sm_90a.cubin".into())],
                vec![("wgmma".into(), r)],
            )],
        )
        .unwrap();
        let names: Vec<_> = image.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["vecadd", "scale", "noargs", "wgmma"]);
        assert_eq!(image.entry("vecadd").unwrap().archs, [sm70, sm90a]);
        assert_eq!(image.entry("scale").unwrap().archs, [sm70]);
        assert_eq!(image.entry("wgmma").unwrap().archs, [sm90a]);
        assert_eq!(image.entry("wgmma").unwrap().param_sizes, [8]);
        assert_eq!(image.entry("wgmma").unwrap().resources, [r]);
        assert_eq!(image.variants.len(), 1);
        assert_eq!(image.variants[0].arch, sm90a);
        assert_eq!(image.variants[0].ptx_file, "/t/sm_90a/k.ptx");
        assert_eq!(image.variants[0].cubins[0].file, "/t/sm_90a/k.sm_90a.cubin");
        assert!(image.cubins.is_empty());

        // The module file embeds the variant's PTX and cubin, in order.
        let dir = tempfile::tempdir().unwrap();
        let written = write(&image, "K", dir.path()).unwrap();
        let src = std::fs::read_to_string(&written.module_path).unwrap();
        assert!(
            src.contains(
                ".and_then(|image| image.embed_variants(&[\n            \
                 (include_str!(\"/t/sm_90a/k.ptx\"), &[\n                \
                 include_bytes!(\"/t/sm_90a/k.sm_90a.cubin\"),\n            ]),\n        ]))"
            ),
            "{src}"
        );
        assert_eq!(read(&written.manifest_path).unwrap(), image);

        // A variant that declares a kernel's parameters differently is refused.
        let other = PTX_90A.replace("vecadd_param_2\n", "vecadd_param_2,\n\t.param .u32 x\n");
        let err = super::image(
            "k",
            target(sm70, "/t/k.ptx", PTX, vec![], vec![]),
            vec![target(sm90a, "/t/v.ptx", &other, vec![], vec![])],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`vecadd`") && err.contains("sm_90a") && err.contains("[16, 16, 8, 4]"),
            "{err}"
        );
    }

    #[test]
    fn entries_and_parameter_sizes_are_read() {
        assert_eq!(
            entries(PTX),
            vec![
                entry("vecadd", vec![16, 16, 8]),
                entry("scale", vec![4, 4, 24]),
                entry("noargs", vec![]),
            ]
        );
    }

    fn sm90_resources(registers: u32) -> Resources {
        Resources {
            arch: ComputeCapability::new(9, 0),
            registers,
            shared_bytes: 0,
            stack_frame_bytes: 0,
            spill_store_bytes: 0,
            spill_load_bytes: 0,
        }
    }

    #[test]
    fn the_image_attaches_resources_to_their_entries() {
        let sm90 = ComputeCapability::new(9, 0);
        let image = image(
            "my-kernels",
            target(
                ComputeCapability::new(7, 0),
                "/t/my_kernels.ptx",
                PTX,
                vec![(sm90, "/t/my_kernels.sm_90.cubin".into())],
                vec![
                    ("scale".into(), sm90_resources(20)),
                    ("vecadd".into(), sm90_resources(12)),
                    ("not_in_ptx".into(), sm90_resources(1)),
                ],
            ),
            vec![],
        )
        .unwrap();
        assert_eq!(
            image.entry("vecadd").unwrap().resources,
            [sm90_resources(12)]
        );
        assert_eq!(
            image.entry("scale").unwrap().resources,
            [sm90_resources(20)]
        );
        assert!(image.entry("noargs").unwrap().resources.is_empty());
        assert_eq!(image.cubin(sm90).unwrap().file, "/t/my_kernels.sm_90.cubin");
        assert_eq!(image.ptx_file, "/t/my_kernels.ptx");
    }

    #[test]
    fn the_manifest_is_written_as_json_and_the_module_file_embeds_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let sm90 = ComputeCapability::new(9, 0);
        let sm80 = ComputeCapability::new(8, 0);
        let image = image(
            "my-kernels",
            target(
                ComputeCapability::new(7, 0),
                "/t/my_kernels.ptx",
                PTX,
                vec![
                    (sm80, "/t/my_kernels.sm_80.cubin".into()),
                    (sm90, "/t/my_kernels.sm_90.cubin".into()),
                ],
                vec![("vecadd".into(), sm90_resources(12))],
            ),
            vec![],
        )
        .unwrap();
        let written = write(&image, "MY_KERNELS_SM80", dir.path()).unwrap();
        assert_eq!(
            written.manifest_path,
            dir.path().join("my_kernels_sm80_manifest.json")
        );
        assert_eq!(
            written.module_path,
            dir.path().join("my_kernels_sm80_module.rs")
        );
        assert_eq!(read(&written.manifest_path).unwrap(), image);

        let src = std::fs::read_to_string(&written.module_path).unwrap();
        let manifest = written.manifest_path.to_str().unwrap();
        for line in [
            "pub static MY_KERNELS_SM80: ::std::sync::LazyLock<::cust::module::ModuleImage>",
            &format!("include_str!({manifest:?})"),
            r#"include_str!("/t/my_kernels.ptx")"#,
            r#"include_bytes!("/t/my_kernels.sm_80.cubin"),"#,
        ] {
            assert!(src.contains(line), "{line} not in:\n{src}");
        }
        // The cubins are embedded in the manifest's order.
        assert!(src.find("sm_80.cubin") < src.find("sm_90.cubin"), "{src}");

        let err = read(&dir.path().join("nope.json")).unwrap_err();
        assert!(matches!(err, BuildError::Io(..)), "{err}");
        std::fs::write(dir.path().join("bad.json"), "{}").unwrap();
        let err = read(&dir.path().join("bad.json")).unwrap_err();
        assert!(err.to_string().contains("bad.json"), "{err}");
    }
}
