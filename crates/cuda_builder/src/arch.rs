//! Architectures: Rust-CUDA's names for them ([`NvvmArch`]), the `compute_NN` names a
//! kernels build sets for each target ([`compute_features`]) and the PTX ISA version each
//! target needs ([`min_ptx_isa`]).

use crate::ComputeCapability;

/// Rust-CUDA's name for an architecture (`NvvmArch::Compute70` = sm_70,
/// `NvvmArch::Compute90a` = sm_90a, `NvvmArch::Compute100f` = sm_100f), accepted by
/// [`CudaBuilder::arch`](crate::CudaBuilder::arch) and
/// [`CudaBuilder::arch_variant`](crate::CudaBuilder::arch_variant) so Rust-CUDA build
/// scripts port unchanged. The variants are Rust-CUDA's (its `nvvm` crate): the plain
/// targets from 3.5 to 12.1, the arch-specific `a` forms (code that runs only on exactly that
/// architecture) and the family-specific `f` forms (code that runs on that architecture and
/// later ones of the same major version, PTX ISA 8.8 and later); see [`ComputeCapability`].
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

/// `SM90` / `SM90A`: an architecture as it appears in exported variable names.
pub(crate) fn env_arch(arch: ComputeCapability) -> String {
    format!(
        "SM{}{}{}",
        arch.major,
        arch.minor,
        if arch.arch_specific { "A" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
