//! The backend: the one place that picks how an intrinsic runs.
//!
//! The std library's `sys` pattern. Every public module of `cuda_std` (`thread`, `warp`,
//! `shared`, `atomic`, `mem`, `io`, `half`, `mma`, `wgmma`, `tma`, `barrier`, `cluster`)
//! calls the raw operations of this module and holds no backend `cfg` of its own. This
//! module re-exports one of two implementations, each with the same submodules and the
//! same function signatures:
//! - `ptx` (target `nvptx64-nvidia-cuda`): inline PTX and `core::arch::nvptx`;
//! - `emu` (every host target): the CPU emulator, `cuda_emu`, through its `device` module;
//!   outside an emulated launch each operation panics with a message naming the
//!   `cuda_std` function (device-only functions are host stubs, so IDEs, docs and host
//!   builds work).
//!
//! The public functions are `#[track_caller]`, so the emulator's reports name the kernel's
//! line; on the GPU the location argument is dropped when the function is inlined.

#[cfg(not(target_arch = "nvptx64"))]
mod emu;
#[cfg(target_arch = "nvptx64")]
mod ptx;

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use emu::*;
#[cfg(target_arch = "nvptx64")]
pub(crate) use ptx::*;

/// The host shims' argument readers (`#[kernel]`'s generated host entry calls them through
/// `cuda_std::__host_shim`); empty on the GPU.
#[doc(hidden)]
pub mod host_shim {
    #[cfg(not(target_arch = "nvptx64"))]
    pub use super::emu::shim::*;
}
