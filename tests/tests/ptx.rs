//! The product kernels module: its manifest matches its PTX, it holds product kernels only
//! (the test probes are a separate module), and every PTX is loadable as built.

use std::collections::BTreeSet;

/// Entry names declared in PTX text: lines `.visible .entry NAME(`.
fn entries(ptx: &str) -> BTreeSet<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

#[test]
fn manifest_lists_exactly_the_ptx_entries() {
    for image in [&host::KERNELS, &tests::PROBES, &tests::PROBES_SM80] {
        let manifest: BTreeSet<&str> = image.entries.iter().map(|e| e.name.as_str()).collect();
        // The baseline PTX and every arch-specific variant's (`CudaBuilder::arch_variant`).
        let mut in_ptx = entries(image.ptx);
        for variant in &image.variants {
            in_ptx.extend(entries(variant.ptx));
        }
        assert_eq!(manifest, in_ptx, "{}: manifest vs PTX", image.name);
        // Each entry names exactly the targets whose PTX defines it.
        for entry in &image.entries {
            let mut expected = Vec::new();
            if entries(image.ptx).contains(entry.name.as_str()) {
                expected.push(image.ptx_arch);
            }
            for variant in &image.variants {
                if entries(variant.ptx).contains(entry.name.as_str()) {
                    expected.push(variant.arch);
                }
            }
            assert_eq!(
                entry.archs, expected,
                "{}: targets of `{}`",
                image.name, entry.name
            );
        }
    }
}

#[test]
fn product_module_holds_product_kernels_only() {
    let product: BTreeSet<&str> = host::KERNELS
        .entries
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    let probes: BTreeSet<&str> = tests::PROBES
        .entries
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    let shared: Vec<_> = product.intersection(&probes).collect();
    assert!(
        shared.is_empty(),
        "test kernels in the product module: {shared:?}"
    );
    // Handles the host launches are entries of the module it loads.
    for name in [
        kernels::mandelbrot::mandelbrot_f32.name(),
        kernels::mandelbrot::mandelbrot_ss_f64.name(),
        kernels::vector::triad_f32.name(),
        kernels::gemm::sgemm.name(),
    ] {
        assert!(
            product.contains(name),
            "`{name}` missing from the product module"
        );
    }
}

#[test]
fn ptx_targets_the_documented_baseline() {
    assert!(host::PTX.contains(".version 7.0"), "PTX ISA version");
    assert!(host::PTX.contains(".target sm_70"), "PTX target");
}

/// CUDA system calls, which the driver's JIT links in ("PTX Writer's Guide to
/// Interoperability", "System Calls"): `cuda_std::printf!` and `device_assert!` use them.
const SYSTEM_CALLS: &[&str] = &["vprintf", "__assertfail", "malloc", "free"];

#[test]
fn ptx_has_no_unresolved_functions() {
    // An `.extern .func` (e.g. a panic path not removed by -Cpanic=immediate-abort) would
    // make the driver's JIT link fail, unless it is a system call.
    let unresolved: Vec<&str> = host::PTX
        .lines()
        .filter(|l| l.contains(".extern .func"))
        .filter(|l| {
            let name = l
                .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
                .rfind(|w| !w.is_empty())
                .unwrap_or_default();
            !SYSTEM_CALLS.contains(&name)
        })
        .collect();
    assert!(
        unresolved.is_empty(),
        "PTX declares external functions:\n{}",
        unresolved.join("\n")
    );
}
