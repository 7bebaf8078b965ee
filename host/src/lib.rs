//! ferrocuda's host application library, on top of the `cust` runtime: the GPU handle with
//! ferrocuda's kernels ([`gpu`]), launch configurations ([`launch`]), the Mandelbrot
//! renderer on GPU and CPU ([`mandelbrot`]), vector workloads ([`vector`]), tensor-core
//! matrix products ([`matmul`]), attention ([`attention`]), benchmarks
//! ([`mod@bench`], timed by [`timing`], CUDA C peers built by [`nvcc`]) and device
//! information ([`info`]).
//!
//! The kernels are compiled from the `kernels` crate by `cuda_builder` in this crate's
//! `build.rs`; its manifest is [`KERNELS`] (PTX, cubins, entry points). The CUDA driver
//! library is loaded at run time, so this crate builds and runs (on the CPU) on machines
//! without CUDA.

pub mod attention;
pub mod band;
pub mod bench;
pub mod deep;
pub mod gpu;
pub mod info;
pub mod launch;
pub mod mandelbrot;
pub mod matmul;
pub mod matmul_fp8;
pub mod nvcc;
pub mod timing;
pub mod vector;

pub use gpu::{Gpu, GpuError};

include!(env!("KERNELS_MODULE"));

/// The kernels module's PTX text (targets sm_70, PTX ISA 7.0: runs on Volta and later).
pub const PTX: &str = include_str!(env!("KERNELS_PTX"));
