//! ARCHITECTURE.md's invariants that a test can check by reading the tree (no GPU needed):
//! only `cust` (and `blastoff`, the cuBLAS crate beside it) talk to the CUDA driver through
//! cudarc, and inside `cust` only its GPU backend and the modules listed here; `cust` reaches
//! the CPU emulator only through its CPU backend and chooses between the two behind one seam
//! (`crates/cust/src/backend/`); `cust` and `cuda_builder` depend on `cust_core`, not on
//! `cuda_std`; nothing launches a kernel by a name string.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// A path into cudarc, spelled so that this file does not contain it (a plain grep of the
/// tree for it finds the offenders only).
const CUDARC_PATH: &str = concat!("cudarc", "::");

/// The crates allowed to use cudarc: the runtime, and the cuBLAS crate built over it.
const DRIVER_CRATES: &[&str] = &["crates/cust", "crates/blastoff"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_path_buf()
}

/// Every file under `dir` with one of `extensions`, skipping build outputs and hidden folders.
fn files(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && name != "bundle" && !name.starts_with('.') {
                files(&path, extensions, out);
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// The lines of Rust source `text` that are code, numbered from 1: comment lines (`//`,
/// `///`, `//!`) are skipped, so docs may name what the code may not.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `line` names `word` as a whole identifier (`is_emulator()`, not
/// `is_emulator_x`).
fn names(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Whether `line` names a path into the crate `krate` (the crate's name followed by `::`,
/// with or without a leading `::`, in a `use` or an expression), not a method such as
/// `as_cudarc` or prose such as "cudarc-based". (This file never spells such a path for
/// cudarc, so that a plain search of the tree finds only the offenders.)
fn names_crate(line: &str, krate: &str) -> bool {
    line.match_indices(krate).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        !before.is_some_and(is_ident) && line[i + krate.len()..].starts_with("::")
    })
}

/// Every `.rs` file of `cust` (sources, tests, examples), with its text.
fn cust_sources() -> Vec<(String, String)> {
    let mut found = Vec::new();
    files(&root().join("crates/cust"), &[".rs"], &mut found);
    assert!(found.len() > 10, "cust's sources were not found");
    found
        .into_iter()
        .map(|path| {
            (
                relative(&path),
                fs::read_to_string(&path).unwrap_or_default(),
            )
        })
        .collect()
}

/// The files of `cust` that name the crate `krate`, and the lines of those not `allowed`
/// (`file:line: code`).
fn naming(krate: &str, allowed: &[(&str, &str)]) -> (BTreeSet<String>, Vec<String>) {
    let mut naming = BTreeSet::new();
    let mut offenders = Vec::new();
    for (rel, text) in cust_sources() {
        for (n, line) in code_lines(&text) {
            if names_crate(line, krate) {
                naming.insert(rel.clone());
                if !allowed.iter().any(|(file, _)| *file == rel) {
                    offenders.push(format!("{rel}:{n}: {}", line.trim()));
                }
            }
        }
    }
    (naming, offenders)
}

/// The files of `cust` that may name cudarc, and why: its GPU backend, and the modules whose
/// public API is cudarc's or that are GPU-only features built on it. Everything else goes
/// through the backend seam (`crates/cust/src/backend/mod.rs`).
const CUST_CUDARC_FILES: &[(&str, &str)] = &[
    (
        "crates/cust/src/backend/driver.rs",
        "the GPU backend: every driver call behind the seam",
    ),
    (
        "crates/cust/src/interop.rs",
        "the `as_cudarc` / `from_cudarc` accessors and cudarc's memory traits on cust's \
         buffers, for crates built over cudarc (blastoff)",
    ),
    (
        "crates/cust/src/error.rs",
        "`CudaError` wraps cudarc's `DriverError`",
    ),
    (
        "crates/cust/src/device.rs",
        "GPU enumeration before any context: `Device`, and `DeviceAttribute`'s driver values",
    ),
    (
        "crates/cust/src/nccl.rs",
        "NCCL collectives over cudarc's `nccl` (GPU only; `ReduceOp` maps to cudarc's)",
    ),
    (
        "crates/cust/src/tma.rs",
        "`cuTensorMapEncodeTiled` and its enums (GPU only)",
    ),
];

/// The files of `cust` that may name the CPU emulator's crate, and why.
const CUST_EMULATOR_FILES: &[(&str, &str)] = &[
    (
        "crates/cust/src/backend/cpu.rs",
        "the CPU backend: every emulated launch",
    ),
    (
        "crates/cust/src/error.rs",
        "`CudaError::Emulator` wraps the emulator's report",
    ),
];

/// The variant names of an enum that picks a backend per value, the shape
/// `enum Inner { Cuda(..), Cpu(..) }` the backend seam replaced.
const BACKEND_VARIANTS: &[&str] = &["Cuda", "Cpu", "Gpu", "Host"];

/// The enums of Rust source `text` with a variant named for a backend that carries data
/// (`Cuda(..)`, `Cpu { .. }`): `line N: enum Name { Variant(..) }`. Unit variants (a choice a
/// user makes, such as `DeviceChoice::Gpu`) hold no backend.
fn backend_enums(text: &str) -> Vec<String> {
    let code = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(offset) = code[pos..].find("enum ") {
        let at = pos + offset;
        pos = at + "enum ".len();
        if code[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let name: String = code[pos..]
            .trim_start()
            .chars()
            .take_while(|&c| is_ident(c))
            .collect();
        let Some(open) = code[pos..].find('{') else {
            break;
        };
        let body_start = pos + open + 1;
        // The variants: the body split at its top-level commas.
        let (mut depth, mut variants, mut variant) = (0, Vec::new(), String::new());
        for (j, c) in code[body_start..].char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                '}' if depth == 0 => {
                    pos = body_start + j;
                    break;
                }
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    variants.push(std::mem::take(&mut variant));
                    continue;
                }
                _ => {}
            }
            variant.push(c);
        }
        variants.push(variant);
        let line = code[..at].matches('\n').count() + 1;
        for variant in &variants {
            let mut v = variant.trim_start();
            // Attributes before the variant (`#[default]`, `#[cfg(..)]`).
            while let Some(rest) = v.strip_prefix("#[") {
                let mut depth = 1;
                let end = rest
                    .char_indices()
                    .find(|&(_, c)| {
                        depth += match c {
                            '[' => 1,
                            ']' => -1,
                            _ => 0,
                        };
                        depth == 0
                    })
                    .map_or(rest.len(), |(i, _)| i + 1);
                v = rest[end..].trim_start();
            }
            let ident: String = v.chars().take_while(|&c| is_ident(c)).collect();
            let data = v[ident.len()..].trim_start().chars().next();
            if BACKEND_VARIANTS.contains(&ident.as_str()) && matches!(data, Some('(' | '{')) {
                found.push(format!("line {line}: enum {name} {{ {ident}(..) }}"));
            }
        }
    }
    found
}

#[test]
fn only_the_runtime_talks_to_the_driver() {
    let root = root();
    let mut found = Vec::new();
    files(&root, &[".rs", "Cargo.toml"], &mut found);
    assert!(
        found.len() > 50,
        "the tree was not found from {}",
        root.display()
    );
    let mut offenders = Vec::new();
    for path in found {
        let rel = relative(&path);
        if rel == "Cargo.toml" || DRIVER_CRATES.iter().any(|c| rel.starts_with(c)) {
            continue;
        }
        // This file names what it forbids.
        if rel == "tests/tests/architecture.rs" {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let uses_cudarc = line.contains(CUDARC_PATH)
                || line.contains("as_cudarc")
                || (rel.ends_with("Cargo.toml") && line.trim_start().starts_with("cudarc"));
            if uses_cudarc && !line.trim_start().starts_with("//") {
                offenders.push(format!("{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "only {DRIVER_CRATES:?} may use cudarc (ARCHITECTURE.md); use cust's API instead:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn product_code_launches_kernels_by_handle_not_by_name() {
    let root = root();
    let mut found = Vec::new();
    for dir in ["host/src", "host/examples"] {
        files(&root.join(dir), &[".rs"], &mut found);
    }
    assert!(!found.is_empty());
    let mut offenders = Vec::new();
    for path in found {
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if line.contains("get_function(") || line.contains("launch!(") {
                offenders.push(format!("{}:{}: {}", relative(&path), i + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "kernels are launched through typed handles (`module.kernel(handle)?`), never by a \
         name string:\n{}",
        offenders.join("\n")
    );
}

/// The launches in Rust source `text` that resolve their kernel on every call: a
/// `launch(` or `launch_unchecked(` whose first argument is a module (`Launch::launch` and
/// `LaunchUnchecked::launch_unchecked` on a handle look the kernel up each time), as
/// `launch(` followed, after any whitespace, by `gpu.module()`, `self.gpu.module()`,
/// `module,`, `&module,` or `m,`. Returns the 1-based line of each call.
fn per_call_lookups(text: &str) -> Vec<usize> {
    let code: Vec<(usize, &str)> = code_lines(text).collect();
    let mut found = Vec::new();
    for (at, &(line_no, line)) in code.iter().enumerate() {
        for call in ["launch(", "launch_unchecked("] {
            let mut from = 0;
            while let Some(i) = line[from..].find(call) {
                let start = from + i + call.len();
                // The first argument: the rest of this line, or the next code line.
                let mut arg = line[start..].trim_start().to_owned();
                if arg.is_empty() {
                    arg = code.get(at + 1).map_or("", |l| l.1).trim_start().to_owned();
                }
                if [
                    "gpu.module()",
                    "self.gpu.module()",
                    "module,",
                    "&module,",
                    "m,",
                ]
                .iter()
                .any(|first| arg.starts_with(first))
                {
                    found.push(line_no);
                }
                from = start;
            }
        }
    }
    found
}

#[test]
fn host_launches_kernels_resolved_once() {
    // The application library and binary; the examples teach cust's API, one-off
    // `handle.launch(&module, ..)` included.
    let mut found = Vec::new();
    files(&root().join("host/src"), &[".rs"], &mut found);
    assert!(!found.is_empty());
    let mut offenders = Vec::new();
    for path in found {
        let text = fs::read_to_string(&path).unwrap_or_default();
        for line in per_call_lookups(&text) {
            offenders.push(format!("{}:{line}", relative(&path)));
        }
    }
    assert!(
        offenders.is_empty(),
        "host launches kernels resolved once (a `TypedFunction` its owner holds, or an entry \
         of `Gpu::kernels`), not `handle.launch(module, ..)`, which looks the kernel up on \
         every call:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_lookup_check_sees_planted_per_call_launches() {
    let planted = "fn f() {\n    T::COPY.launch(gpu.module(), gpu.stream(), cfg, (a, c))\n    \
                   unsafe {\n        k.launch_unchecked(\n            gpu.module(),\n            \
                   gpu.stream(),\n        )\n    }\n    // x.launch(gpu.module(), ..) in a comment\n    \
                   copy.launch(gpu.stream(), cfg, (a, c))\n}\n";
    assert_eq!(per_call_lookups(planted), [2, 4]);
}

#[test]
fn cust_names_cudarc_only_in_its_gpu_backend_and_the_listed_modules() {
    let (naming, offenders) = naming("cudarc", CUST_CUDARC_FILES);
    assert!(
        offenders.is_empty(),
        "inside cust, cudarc is named only by the GPU backend and the modules of \
         CUST_CUDARC_FILES (tests/tests/architecture.rs); call the backend seam \
         (crates/cust/src/backend/mod.rs) instead, or add the file to the list with the \
         reason:\n{}",
        offenders.join("\n")
    );
    let stale: Vec<&str> = CUST_CUDARC_FILES
        .iter()
        .map(|(file, _)| *file)
        .filter(|file| !naming.contains(*file))
        .collect();
    assert!(
        stale.is_empty(),
        "these files of CUST_CUDARC_FILES no longer name cudarc: remove them from the list \
         {stale:?}"
    );
}

/// The public re-exports and type aliases (`pub use …;`, `pub type … = …;`, each statement
/// joined across lines) of Rust source `text` that name the crate `krate`:
/// `line N: statement`.
fn public_reexports_of(text: &str, krate: &str) -> Vec<String> {
    let lines: Vec<(usize, &str)> = code_lines(text).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (n, line) = lines[i];
        let trimmed = line.trim_start();
        if trimmed.starts_with("pub use ") || trimmed.starts_with("pub type ") {
            let mut statement = trimmed.to_owned();
            while !statement.contains(';') && i + 1 < lines.len() {
                i += 1;
                statement.push(' ');
                statement.push_str(lines[i].1.trim());
            }
            if names_crate(&statement, krate) || names(&statement, krate) {
                found.push(format!("line {n}: {statement}"));
            }
        }
        i += 1;
    }
    found
}

#[test]
fn cust_reexports_nothing_from_cudarc() {
    let offenders: Vec<String> = cust_sources()
        .into_iter()
        .flat_map(|(rel, text)| {
            public_reexports_of(&text, "cudarc")
                .into_iter()
                .map(move |hit| format!("{rel} {hit}"))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "cust re-exports cudarc's items; give cust its own type (as `DeviceAttribute`, \
         `ValidAsZeroBits`, `nccl::ReduceOp` and `stream::RawStream` are) and convert inside \
         the module that talks to cudarc:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_reexport_check_sees_a_planted_reexport() {
    let krate = "cudarc";
    let planted = format!(
        "//! A module.\npub use {krate}::driver::sys;\npub use {krate}::{{\n    nccl,\n}};\n\
         pub type Raw = {krate}::driver::sys::CUstream;\nuse {krate}::driver::result;\n\
         pub use crate::device::Device;\n"
    );
    let found = public_reexports_of(&planted, krate);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].starts_with("line 2: pub use"), "{found:?}");
    assert!(found[1].starts_with("line 3: pub use"), "{found:?}");
    assert!(found[2].starts_with("line 6: pub type"), "{found:?}");
}

#[test]
fn cust_reaches_the_emulator_only_through_its_cpu_backend() {
    let (naming, offenders) = naming("cuda_emu", CUST_EMULATOR_FILES);
    assert!(
        offenders.is_empty(),
        "inside cust, the emulator (`cuda_emu`) is named only by the CPU backend \
         (crates/cust/src/backend/cpu.rs) and `CudaError::Emulator`; go through the backend \
         seam instead:\n{}",
        offenders.join("\n")
    );
    assert!(
        naming.contains("crates/cust/src/backend/cpu.rs"),
        "the CPU backend no longer runs kernels through `cuda_emu`: {naming:?}"
    );
}

#[test]
fn cust_chooses_its_backend_only_behind_the_seam() {
    let mut enums = Vec::new();
    let mut launch_tests = Vec::new();
    for (rel, text) in cust_sources() {
        if rel.starts_with("crates/cust/src/backend/") {
            continue;
        }
        enums.extend(
            backend_enums(&text)
                .into_iter()
                .map(|e| format!("{rel}: {e}")),
        );
        if rel == "crates/cust/src/launch.rs" {
            launch_tests.extend(
                code_lines(&text)
                    .filter(|(_, line)| names(line, "is_emulator"))
                    .map(|(n, line)| format!("{rel}:{n}: {}", line.trim())),
            );
        }
    }
    assert!(
        enums.is_empty(),
        "a cust type holds one backend's object (e.g. `Arc<dyn backend::Stream>`), never an \
         enum of both backends: add the operation to the traits of \
         crates/cust/src/backend/mod.rs and implement it in driver.rs and cpu.rs:\n{}",
        enums.join("\n")
    );
    assert!(
        launch_tests.is_empty(),
        "the launch path asks no backend question: the function's backend launches (or \
         refuses) on the stream's:\n{}",
        launch_tests.join("\n")
    );
}

/// The crates a manifest's library is built from: its dependency tables but
/// `[dev-dependencies]` (tests may use kernels, which need `cuda_std`).
fn building_dependencies(manifest: &str) -> BTreeSet<String> {
    let text = fs::read_to_string(root().join(manifest))
        .unwrap_or_else(|e| panic!("cannot read {manifest}: {e}"));
    let mut table = String::new();
    let mut deps = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.trim().to_owned();
            // `[dependencies.cuda_std]`
            if let Some((head, dep)) = table.rsplit_once('.')
                && head.ends_with("dependencies")
                && !head.ends_with("dev-dependencies")
            {
                deps.insert(dep.to_owned());
            }
            continue;
        }
        let building = table.ends_with("dependencies") && !table.ends_with("dev-dependencies");
        let key: String = line
            .chars()
            .take_while(|&c| is_ident(c) || c == '-')
            .collect();
        if building && !key.is_empty() && !line.starts_with('#') {
            deps.insert(key);
        }
    }
    deps
}

#[test]
fn runtime_and_builder_depend_on_the_contract_not_on_the_device_library() {
    for manifest in ["crates/cust/Cargo.toml", "crates/cuda_builder/Cargo.toml"] {
        let deps = building_dependencies(manifest);
        assert!(
            !deps.contains("cuda_std"),
            "{manifest} depends on cuda_std, the device library; the host side depends on \
             the contract crate `cust_core` (ARCHITECTURE.md). Its dependencies: {deps:?}"
        );
        assert!(
            deps.contains("cust_core"),
            "{manifest} no longer depends on cust_core: {deps:?}"
        );
    }
}

#[test]
fn the_emulator_depends_on_the_contract_only() {
    let deps = building_dependencies("crates/cuda_emu/Cargo.toml");
    assert!(deps.contains("cust_core"), "cuda_emu: {deps:?}");
    let workspace = [
        "cuda_std",
        "cust",
        "kernels",
        "common",
        "host",
        "cuda_builder",
        "probes",
    ];
    let inside: Vec<_> = workspace.iter().filter(|c| deps.contains(**c)).collect();
    assert!(
        inside.is_empty(),
        "crates/cuda_emu depends on {inside:?}; of the workspace it depends on cust_core \
         only (ARCHITECTURE.md, CPU emulator): {deps:?}"
    );
}

/// The code lines (comments skipped) of the `.rs` files under `dir` for which `offends(rel,
/// code)` holds, as `file:line: code`; panics if `dir` holds fewer than `min_files` files (the
/// tree was not found).
fn offending_lines(
    dir: &str,
    min_files: usize,
    offends: impl Fn(&str, &str) -> bool,
) -> Vec<String> {
    let src = root().join(dir);
    let mut found = Vec::new();
    files(&src, &[".rs"], &mut found);
    assert!(
        found.len() >= min_files,
        "{dir} was not found at {}",
        src.display()
    );
    let mut offenders = Vec::new();
    for path in found {
        let rel = relative(&path);
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (n, line) in code_lines(&text) {
            let code = line.trim();
            if offends(&rel, code) {
                offenders.push(format!("{rel}:{n}: {code}"));
            }
        }
    }
    offenders
}

/// Lines of `cuda_std`'s public modules that may name the GPU target: availability gates
/// (an item that exists on the host and on GPUs of a given architecture), the crate's
/// nightly features on nvptx, and `math`'s libm/libdevice choice (glam's pattern: one private
/// place picks the maths backend).
fn allowed_target_line(rel: &str, line: &str) -> bool {
    line.contains("cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_")
        || (rel == "crates/cuda_std/src/lib.rs" && line.contains("#![cfg_attr("))
        || (rel == "crates/cuda_std/src/lib.rs" && line.trim() == "target_arch = \"nvptx64\",")
        || rel == "crates/cuda_std/src/math.rs"
}

#[test]
fn cuda_std_picks_its_backend_in_one_module() {
    let offenders = offending_lines("crates/cuda_std/src", 11, |rel, code| {
        let names_target = code.contains("target_arch = \"nvptx64\"");
        let backend_code = code.contains("asm!(")
            || code.contains("global_asm!(")
            || code.contains("core::arch::nvptx")
            || code.contains("cuda_emu");
        !rel.starts_with("crates/cuda_std/src/arch/")
            && ((names_target && !allowed_target_line(rel, code)) || backend_code)
    });
    assert!(
        offenders.is_empty(),
        "cuda_std's public modules call `crate::arch::<module>::<op>`; inline PTX and the \
         emulator live in `arch/ptx/` and `arch/emu/`, selected once by `arch/mod.rs` \
         (ARCHITECTURE.md, cuda_std):\n{}",
        offenders.join("\n")
    );
}

/// Where the emulator's crate may be named: `cuda_std`'s emulator backend, the emulator
/// itself, the crates that declare it, and the tests that launch it directly.
const EMULATOR_USERS: &[&str] = &[
    "crates/cuda_emu/",
    "crates/cuda_std/src/arch/emu/",
    "crates/cuda_std/Cargo.toml",
    "crates/cust/",
    "Cargo.toml",
    "tests/Cargo.toml",
    "tests/tests/emulator.rs",
    "tests/tests/support/emulate.rs",
    "tests/tests/support/speed_probes.rs",
    "tests/benches/emu_speed.rs",
    "tests/tests/emulator_mma.rs",
    "kernels/Cargo.toml",
    "kernels/src/gemm_tc/mma_sync/tests.rs",
];

#[test]
fn the_emulator_is_reached_through_the_backend_only() {
    let root = root();
    let mut found = Vec::new();
    files(&root, &[".rs", "Cargo.toml"], &mut found);
    assert!(
        found.len() > 50,
        "the tree was not found from {}",
        root.display()
    );
    let mut offenders = Vec::new();
    for path in found {
        let rel = relative(&path);
        if rel == "tests/tests/architecture.rs" || EMULATOR_USERS.iter().any(|u| rel.starts_with(u))
        {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            let names_it = code.contains("cuda_emu::")
                || code.contains("use cuda_emu")
                || (rel.ends_with("Cargo.toml") && code.starts_with("cuda_emu"));
            if names_it && !code.starts_with("//") {
                offenders.push(format!("{rel}:{}: {}", i + 1, code));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "kernels reach the CPU emulator through cuda_std's backend, host code through cust's \
         CPU device (ARCHITECTURE.md, CPU emulator):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_lane_maps_are_defined_once_in_the_contract() {
    let root = root();
    for module in ["mma", "wgmma"] {
        let path = root.join(format!("crates/cuda_std/src/{module}.rs"));
        let text = fs::read_to_string(&path).expect("cuda_std module");
        assert!(
            !text.contains("pub mod layout {"),
            "{}: the lane maps live in cust_core::lanes (read by the emulator too)",
            relative(&path)
        );
        assert!(
            text.contains(&format!("pub use cust_core::lanes::{module} as layout;")),
            "{}: re-exports cust_core::lanes::{module} as layout",
            relative(&path)
        );
    }
}

/// Lines of `kernels/src` that may name the GPU target: availability gates (an item that
/// exists on the host and on GPUs of a given architecture, `cfg(any(not(target_arch =
/// "nvptx64"), target_feature = "sm_.."))`) and the crate's nightly features on nvptx
/// (`lib.rs`'s `#![cfg_attr(target_arch = "nvptx64", feature(..))]`).
fn allowed_kernels_target_line(rel: &str, line: &str) -> bool {
    line.contains("cfg(any(not(target_arch = \"nvptx64\"), target_feature = \"sm_")
        || (rel == "kernels/src/lib.rs" && line.trim() == "target_arch = \"nvptx64\",")
}

#[test]
fn kernels_hold_no_inline_ptx_and_no_target_branches() {
    let offenders = offending_lines("kernels/src", 6, |rel, code| {
        // `asm!(`, `global_asm!(`, `core::arch::asm!`, with or without a path.
        let inline_ptx = code.contains("asm!") || code.contains("core::arch::nvptx");
        let names_target = code.contains("target_arch = \"nvptx64\"");
        inline_ptx || (names_target && !allowed_kernels_target_line(rel, code))
    });
    assert!(
        offenders.is_empty(),
        "every `asm!` lives in cuda_std (its `arch/ptx/` backend), and kernels hold no \
         `#[cfg(target_arch = \"nvptx64\")]` / `cfg(not(..))` branches: a GPU-only operation \
         is a cuda_std function whose emulator side is in `arch/emu/` (issue 32; \
         ARCHITECTURE.md, cuda_std):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn blastoff_chooses_its_backend_in_one_place() {
    let offenders = offending_lines("crates/blastoff/src", 4, |rel, code| {
        rel != "crates/blastoff/src/backend/mod.rs"
            && (code.contains("Backend::Gpu") || code.contains("Backend::Cpu"))
    });
    assert!(
        offenders.is_empty(),
        "only crates/blastoff/src/backend/mod.rs matches on blastoff's Backend (ARCHITECTURE.md, \
         blastoff):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_swizzle_and_the_wgmma_descriptor_are_defined_once_in_the_contract() {
    // Host (TMA) and device (`wgmma`) must agree on the shared-memory layout: one
    // definition, in cust_core::tile, that both re-export.
    let mut offenders = Vec::new();
    for dir in ["crates", "kernels/src", "host/src", "tests"] {
        offenders.extend(offending_lines(dir, 1, |rel, code| {
            rel != "crates/cust_core/src/tile.rs"
                && rel != "tests/tests/architecture.rs"
                && (code.contains("enum Swizzle")
                    || code.contains("enum TmaSwizzle")
                    || code.contains("struct MatrixDescriptor"))
        }));
    }
    assert!(
        offenders.is_empty(),
        "the swizzle and the wgmma descriptor are defined once, in cust_core::tile \
         (ARCHITECTURE.md, cust_core):\n{}",
        offenders.join("\n")
    );
}

/// The emulator's modules (file stems of `crates/cuda_emu/src`) that `text`, one of its
/// files with its `#[cfg(test)]` module cut off, names through `crate::` or `super::` paths
/// (`use` groups included), out of `modules`.
fn emulator_imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = code_lines(text)
        .map(|(_, line)| format!("{line}\n"))
        .collect();
    let mut found = BTreeSet::new();
    for prefix in ["crate::", "super::"] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(prefix) {
            rest = &rest[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a, b::c, d::{e, f}}`: the first name of each top-level item.
                let mut depth = 0;
                let mut item_start = true;
                let mut name = String::new();
                for c in group.chars() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => item_start = true,
                        c if depth == 0 && item_start && is_ident(c) => name.push(c),
                        _ if depth == 0 && !name.is_empty() => {
                            found.insert(std::mem::take(&mut name));
                            item_start = false;
                        }
                        _ => {}
                    }
                }
                if !name.is_empty() {
                    found.insert(name);
                }
            } else {
                let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
                found.insert(name);
            }
        }
    }
    found.retain(|m| modules.contains(m));
    found
}

/// A cycle of `edges` (module → the modules it imports), if there is one, as the modules
/// along it.
fn import_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            return Some(path[at..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for next in edges.get(m).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

/// What ARCHITECTURE.md says of the CPU emulator's layout: its data modules import no
/// operation module, and no two of its modules import each other through a circle.
const EMULATOR_DATA_MODULES: [&str; 5] = [
    "state",
    "shared_mem",
    "unit_state",
    "clock",
    "global_shadow",
];

#[test]
fn the_emulator_has_no_import_circle_and_its_data_modules_are_leaves() {
    let src = root().join("crates/cuda_emu/src");
    let mut paths = Vec::new();
    files(&src, &[".rs"], &mut paths);
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    let modules: BTreeSet<String> = paths
        .iter()
        .filter_map(|p| stem(p))
        .filter(|m| m != "lib")
        .collect();
    assert!(
        modules.len() >= 15,
        "crates/cuda_emu/src was not found: {modules:?}"
    );
    let mut edges = BTreeMap::new();
    for p in &paths {
        let Some(m) = stem(p).filter(|m| modules.contains(m)) else {
            continue;
        };
        let text = fs::read_to_string(p).expect("readable source");
        // The unit tests may reach anything (through `crate::device`, the facade).
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let mut imports = emulator_imports(code, &modules);
        imports.remove(&m);
        edges.insert(m, imports);
    }
    if let Some(cycle) = import_cycle(&edges) {
        panic!(
            "crates/cuda_emu/src has an import circle: {}",
            cycle.join(" -> ")
        );
    }
    for data in EMULATOR_DATA_MODULES {
        let outside: Vec<_> = edges[data]
            .iter()
            .filter(|m| !EMULATOR_DATA_MODULES.contains(&m.as_str()))
            .collect();
        assert!(
            outside.is_empty(),
            "cuda_emu's {data}.rs imports {outside:?}; its data modules ({EMULATOR_DATA_MODULES:?}) \
             import no operation module (ARCHITECTURE.md)"
        );
    }
}

#[test]
fn the_circle_check_sees_planted_imports() {
    let modules: BTreeSet<String> = ["a", "b", "c", "d"].map(String::from).into();
    let a = "use crate::{b, x::y};\n// use crate::d;\nfn f() { super::c::g() }";
    assert_eq!(
        emulator_imports(a, &modules),
        ["b", "c"].map(String::from).into()
    );
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.insert("a".into(), ["b".into()].into());
    edges.insert("b".into(), ["c".into()].into());
    edges.insert("c".into(), BTreeSet::new());
    assert_eq!(import_cycle(&edges), None);
    edges.insert("c".into(), ["a".into()].into());
    assert_eq!(
        import_cycle(&edges),
        Some(["a", "b", "c"].map(String::from).to_vec())
    );
}
