//! The emulator backend: each operation runs on `cuda_emu`, the CPU emulator, through its
//! `device` module. Outside an emulated launch every operation panics with a message naming
//! the `cuda_std` function it serves.
//!
//! The block barriers and warp collectives, which suspend the emulated thread at every
//! step, are inlined into the kernel in a release build (`#[inline(always)]` without
//! `debug_assertions`), down to `cuda_emu`'s coroutine switch: a return between the
//! thread's resumption and its next suspension costs a mispredicted return (why in
//! `cuda_emu`'s `state::suspend`).

pub(crate) mod atomic;
pub(crate) mod barrier;
pub(crate) mod cluster;
pub(crate) mod half;
pub(crate) mod io;
pub(crate) mod math;
pub(crate) mod mem;
pub(crate) mod mma;
pub(crate) mod named_barrier;
pub(crate) mod shared;
pub(crate) mod shim;
pub(crate) mod thread;
pub(crate) mod tma;
pub(crate) mod warp;
pub(crate) mod wgmma;
pub(crate) mod window;
