//! `cuda_std`: the device library for CUDA kernels written in `no_std` Rust.
//!
//! Kernels are compiled for the `nvptx64-nvidia-cuda` target by `cuda_builder`; the same
//! sources also compile for the host, where every device-only function is a stub that panics
//! with a clear message (so IDEs, docs and host builds work, and host code can share types).
//!
//! Conventions used throughout:
//! - Indices and dimensions are `u32`, as in PTX's special registers (`%tid`, `%ntid`,
//!   `%ctaid`, `%nctaid`); global indices that can exceed `u32` are `usize`.
//! - 2D indices are `(x, y)` with `x` the fastest-varying (column) coordinate.
//!
//! Modules mirror `std`: [`thread`] (indices, dimensions, barriers), and a [`prelude`].
//! The [`kernel`] attribute marks a function as a kernel entry point.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch))]

pub mod copy;
pub mod launch;
pub mod thread;

pub use copy::DeviceCopy;
pub use launch::OutSlice;

#[cfg(target_arch = "nvptx64")]
mod panic;

/// Marks a function as a CUDA kernel entry point; see [`cuda_std_macros::kernel`].
pub use cuda_std_macros::kernel;

/// The items most kernels need: `use cuda_std::prelude::*;`.
pub mod prelude {
    pub use crate::DeviceCopy;
    pub use crate::OutSlice;
    pub use crate::kernel;
    pub use crate::thread::{
        block_dim_x, block_dim_y, block_dim_z, block_idx_x, block_idx_y, block_idx_z, grid_dim_x,
        grid_dim_y, grid_dim_z, index_1d, index_2d, sync_threads, thread_idx_x, thread_idx_y,
        thread_idx_z,
    };
}

/// Panics with a message saying that `what` only exists on the GPU. Used by the host stubs.
#[cfg(not(target_arch = "nvptx64"))]
#[cold]
#[track_caller]
pub(crate) fn gpu_only(what: &str) -> ! {
    panic!(
        "cuda_std::{what} can only be called in GPU code (target nvptx64-nvidia-cuda); \
         on the host it is a stub"
    )
}
