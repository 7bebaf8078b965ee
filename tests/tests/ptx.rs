//! The embedded PTX module holds exactly the kernels the host expects.

use std::collections::BTreeSet;

/// Entry names declared in PTX text: lines `.visible .entry NAME(`.
fn entries(ptx: &str) -> BTreeSet<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix(".visible .entry "))
        .map(|rest| rest.split('(').next().unwrap_or(rest).trim())
        .collect()
}

#[test]
fn ptx_declares_every_kernel_and_nothing_else() {
    let found = entries(host::PTX);
    let expected: BTreeSet<&str> = kernels::kernel_names().collect();
    assert_eq!(found, expected, "PTX entries vs kernels::kernel_names()");
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
