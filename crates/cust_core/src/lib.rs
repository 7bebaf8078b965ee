//! `cust_core`: the contract between ferrocuda's device side (`cuda_std`, the kernels) and
//! its host side (`cust`, `cuda_builder`), named after Rust-CUDA's crate of the same role.
//!
//! - [`DeviceCopy`]: types whose bytes can cross to the GPU as they are.
//! - [`launch`]: typed kernel handles, [`Kernel<P, S>`](launch::Kernel), the parameter kinds
//!   `P` is made of, and [`ParamSizes`](launch::ParamSizes), the parameter layout a kind
//!   tuple stands for.
//! - [`ComputeCapability`]: one GPU architecture, `sm_90` when displayed, or an
//!   arch-specific code target (`sm_90a`, which runs only on exactly 9.0).
//! - [`lanes`]: the tensor-core lane maps (which matrix element each lane's register holds),
//!   read by `cuda_std` and by the CPU emulator alike.
//! - [`TensorMap`]: a TMA tensor map (CUDA's `CUtensorMap`), encoded by `cust::tma` and
//!   read by `cuda_std::tma`.
//! - `manifest` (feature `alloc`): the kernels module manifest, `ModuleImage` and its parts,
//!   which `cuda_builder` writes as JSON (feature `serde`) and a host crate includes
//!   (feature `json`).
//!
//! The crate is `#![no_std]` and compiles for `nvptx64-nvidia-cuda`: `cuda_std` re-exports
//! [`DeviceCopy`] and [`launch`] at their old paths. Its features only add host-side items:
//! `alloc` (the manifest types), `serde` (their serde impls), `json` (parsing a manifest),
//! `glam` (`DeviceCopy` for glam's types).
#![no_std]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

/// Calls `$m!(A)`, `$m!(A, B)`, … once for each non-empty prefix of the identifiers given,
/// for trait impls over tuples of every arity up to a maximum:
/// `for_each_tuple!(impl_x; A B C)` expands to `impl_x!(A); impl_x!(A, B); impl_x!(A, B, C);`.
macro_rules! for_each_tuple {
    ($m:ident; $($t:ident)+) => {
        for_each_tuple!(@prefix $m; []; $($t)+);
    };
    (@prefix $m:ident; [$($done:ident)*]; $next:ident $($rest:ident)*) => {
        $m!($($done,)* $next);
        for_each_tuple!(@prefix $m; [$($done)* $next]; $($rest)*);
    };
    (@prefix $m:ident; [$($done:ident)*];) => {};
}

mod arch;
mod copy;
pub mod lanes;
pub mod launch;
#[cfg(feature = "alloc")]
pub mod manifest;
pub mod tile;
pub mod tma;

pub use arch::{ComputeCapability, ParseComputeCapabilityError};
pub use copy::DeviceCopy;
/// The `half` crate (feature `half`), whose `f16` and `bf16` are [`DeviceCopy`] here: for
/// crates that name them through `cust_core` (`cust`'s TMA element types).
#[cfg(feature = "half")]
pub use half;
#[cfg(feature = "alloc")]
pub use manifest::{
    ArchVariant, Cubin, EntryPoint, EntryUnavailable, ManifestError, ModuleImage, ModuleTarget,
    Resources,
};
pub use tma::TensorMap;
