//! ferrocuda's test kernels ("probes"), kept out of the product kernels module: one kernel
//! per `cuda_std` primitive with CPU models of the PTX instructions ([`primitives`]), kernels
//! that exercise the launch layer and parameter ABI ([`launch_checks`]), and runtime probes
//! for `cust` ([`runtime`]), probes with planted bugs for the CPU emulator ([`emulator`]),
//! the device API added for Rust-CUDA kernels ([`rustcuda`]), and kernels written with the
//! safe API alone ([`safe_api`]).
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, core_float_math)
)]

pub mod compat;
pub mod emulator;
pub mod fp8;
pub mod half;
pub mod hopper;
pub mod launch_checks;
pub mod mma;
pub mod primitives;
pub mod runtime;
pub mod rustcuda;
pub mod safe_api;
