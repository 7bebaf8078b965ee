//! The GPU backend: each operation is inline PTX (`core::arch::asm!`) or a
//! `core::arch::nvptx` intrinsic. PTX references cite the PTX ISA (NVIDIA, "Parallel Thread
//! Execution ISA", version 8.x) by chapter and instruction name.

pub(crate) mod atomic;
pub(crate) mod barrier;
pub(crate) mod cluster;
pub(crate) mod half;
pub(crate) mod io;
pub(crate) mod math;
pub(crate) mod mem;
pub(crate) mod mma;
pub(crate) mod named_barrier;
mod panic;
pub(crate) mod shared;
pub(crate) mod thread;
pub(crate) mod tma;
pub(crate) mod warp;
pub(crate) mod wgmma;
pub(crate) mod window;
