//! ferrocuda's host library: the GPU context and kernel launches ([`gpu`]), the Mandelbrot
//! renderer on GPU and CPU ([`mandelbrot`]), vector workloads ([`vector`]), and device
//! information ([`info`]).
//!
//! The kernels are compiled from the `kernels` crate to PTX by `cuda_builder` in this crate's
//! `build.rs` and embedded as [`PTX`]; the driver compiles the PTX for the GPU it finds when
//! the module is loaded. The CUDA driver library is loaded at run time, so this crate builds
//! and runs (on the CPU) on machines without CUDA.

pub mod bench;
pub mod gpu;
pub mod info;
pub mod launch;
pub mod mandelbrot;
pub mod vector;

pub use gpu::{Gpu, GpuError};

/// The kernels module, PTX text (targets sm_70, PTX ISA 7.0: runs on Volta and later).
pub const PTX: &str = include_str!(env!("KERNELS_PTX"));

/// The kernels module assembled ahead of time to SASS (cubins for sm_80 and sm_90), where
/// `ptxas` was available at build time; [`Gpu::new`] loads the one matching the device's
/// compute capability exactly and otherwise JIT-compiles [`PTX`].
pub mod cubins {
    include!(concat!(env!("OUT_DIR"), "/kernels_cubins.rs"));
}
