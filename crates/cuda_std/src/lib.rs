//! `cuda_std`: the device library for CUDA kernels written in `no_std` Rust.
//!
//! Kernels are compiled for the `nvptx64-nvidia-cuda` target by `cuda_builder`; the same
//! sources also compile for the host, where every device-only function runs on the CPU
//! emulator (`cuda_emu`) inside an emulated launch, and outside one is a stub that panics with a
//! clear message (so IDEs, docs and host builds work, and host code can share types).
//! The [`math`] functions are the exception: they run on both sides, with identical results
//! by default.
//!
//! Conventions used throughout:
//! - Indices and dimensions are `u32`, as in PTX's special registers (`%tid`, `%ntid`,
//!   `%ctaid`, `%nctaid`); global indices that can exceed `u32` are `usize`.
//! - 2D indices are `(x, y)` with `x` the fastest-varying (column) coordinate; 3D indices
//!   are `(x, y, z)`.
//! - Lane masks are `u32` bit sets: bit `i` stands for lane `i` of the warp.
//! - The baseline is compute capability 7.0 (Volta) with PTX ISA 7.0, the default of
//!   `cuda_builder`. Items that need more say so and exist on the GPU only when the kernels
//!   are built for that architecture (`#[cfg(target_feature = "sm_80")]`, which rustc sets
//!   for `-C target-cpu=sm_80` and later), so a kernel using them in an sm_70 build fails at
//!   compile time rather than in `ptxas`.
//! - Instruction references cite the PTX ISA (NVIDIA, "Parallel Thread Execution ISA",
//!   version 8.x) by chapter and instruction name.
//!
//! Modules mirror `std`:
//! - [`thread`]: indices, dimensions, block barriers (also with reductions), fences, clocks,
//!   and grid dependency control for programmatic dependent launch (sm_90);
//! - [`warp`]: lane ids, shuffles, votes, match, `redux.sync`, warp barriers;
//! - [`shared`]: static ([`shared_array!`]) and dynamic shared memory;
//! - [`atomic`]: atomics with an explicit scope (block, device, system) and ordering;
//! - [`mem`]: vectorized and read-only-cache loads, prefetch, `cp.async`;
//! - [`math`]: `f32`/`f64` functions, exact (`libm`, same bits as on the CPU) or fast
//!   (libdevice, with `cuda_builder`'s `fast_math(true)`);
//! - [`io`]: device [`printf!`] / [`println!`] and [`device_assert!`];
//! - [`half`]: `f16` / `bf16` (the `half` crate's types) and packed `F16x2` / `Bf16x2`
//!   arithmetic (`fma.rn.f16x2`, `fma.rn.bf16x2` on sm_80), with host versions that give the
//!   same bits;
//! - [`mma`]: warp-level tensor-core matrix multiply (`mma.sync` m16n8k16 f16/bf16,
//!   m16n8k8 tf32, `ldmatrix`; sm_80) on typed fragments, and each fragment's lane map;
//! - Hopper (sm_90 / sm_90a, PTX ISA 8.0): [`wgmma`] (warpgroup `wgmma.mma_async` from
//!   shared-memory descriptors, `setmaxnreg`), [`barrier`] (`mbarrier` with transaction
//!   counts), [`tma`] (`cp.async.bulk.tensor` loads/stores through a `TensorMap`),
//!   [`cluster`] (cluster ranks, barriers, distributed shared memory); `stmatrix` in [`mma`];
//! - the backend (private, `arch`): the one module that picks how an intrinsic runs, inline
//!   PTX on the GPU or the CPU emulator (`cuda_emu`, which runs a `#[kernel]` with real
//!   warps, barriers and shared memory and checks for races, divergence, uninitialised
//!   shared reads and out-of-bounds accesses) on the host;
//! - [`launch`]: typed kernel handles and parameter kinds (`OutSlice`, `AtomicSlice`), used by `#[kernel]`;
//!   the handle, the kinds and [`DeviceCopy`] are `cust_core`'s, the contract crate the host
//!   runtime shares, re-exported here at their old paths;
//! - a [`prelude`].
//!
//! The [`kernel`] attribute marks a function as a kernel entry point;
//! [`address_space`]`(shared)` puts a function-local `static mut` array in shared memory, as
//! in Rust-CUDA. [`glam`] is re-exported, as in Rust-CUDA.
//!
//! Inline PTX and convergence: the warp- and block-collective functions are `asm!` blocks,
//! which LLVM does not mark `convergent`. That is sound on sm_70 and later, the only targets
//! we build: there, `barrier.sync`, `bar.warp.sync`, `shfl.sync`, `vote.sync`, `match.sync`
//! and `redux.sync` synchronise the threads named by their mask (or the block) regardless of
//! which instruction instance each thread executes (PTX ISA §9.7, the "For .target sm_6x or
//! below" notes of each instruction); they are never marked `pure`, so LLVM neither removes,
//! merges nor speculates them. The block barriers use the non-`.aligned` forms
//! (`barrier.sync`, `barrier.red`, `barrier.cluster.*` without `.aligned`): `bar.sync` is
//! `barrier.sync.aligned`, which requires every thread to execute the *same* instruction,
//! and rustc's MIR jump threading can duplicate a barrier into the two arms of an earlier
//! `if` on the thread index (rust-lang/rust#137086) — that hung a TMA probe on an H100.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, core_float_math)
)]

/// Calls `$m!($($args)* [0 1 … n-1])` with the accumulator indices of an `m64nN` shape
/// (`n = N / 2` registers per thread), so every accumulator access has a constant index (an
/// indexed loop leaves the array in local memory): `arch/ptx/wgmma.rs`'s operand lists and
/// `tile::AccTile`'s element loops. Defined before the modules, which see it textually.
macro_rules! with_acc_indices {
    (32, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]);
    };
    (64, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]);
    };
    (88, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87]);
    };
    (128, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]);
    };
}

mod arch;
pub mod atomic;
pub mod barrier;
pub mod cluster;
pub mod copy;
pub mod float;
pub mod half;
pub mod io;
pub mod launch;
pub mod math;
pub mod mem;
pub mod mma;
pub mod shared;
pub mod thread;
pub mod tile;
pub mod tma;
pub mod warp;
pub mod wgmma;

pub use copy::DeviceCopy;
pub use float::{FloatExt, GpuFloat};
pub use launch::{AtomicSlice, OutSlice};

/// Marks a function as a CUDA kernel entry point; see [`cuda_std_macros::kernel`].
/// [`address_space`] places a function-local `static mut` array in shared memory.
pub use cuda_std_macros::{DeviceCopy, address_space, kernel};

/// The [`glam`](https://docs.rs/glam) vector types (`Vec3`, `UVec3`, `USizeVec2`...), as
/// Rust-CUDA re-exports them: `cuda_std::glam::UVec2` in kernels and host code alike. Built
/// with `libm` (same results on the CPU and the GPU) and the `f32`, `u32` and `usize` types.
pub use glam;

/// The [`vek`](https://docs.rs/vek) crate (vectors, matrices, quaternions, Bézier curves),
/// as Rust-CUDA re-exports it, with the `vek` feature of `cuda_std` (off by default). Built
/// without std, with `libm` for its float functions (the same results on the CPU and the
/// GPU); no `repr_simd`/`platform_intrinsics` (nightly-only SIMD layouts). Rust-CUDA marks
/// its re-export deprecated in favour of [`glam`]; new code should prefer `glam`.
#[cfg(feature = "vek")]
pub use vek;

/// The items most kernels need: `use cuda_std::prelude::*;`.
pub mod prelude {
    pub use crate::DeviceCopy;
    pub use crate::atomic::{self, Block, Device, Ordering, System};
    pub use crate::shared::{dynamic_shared, dynamic_shared_size_bytes};
    pub use crate::thread;
    pub use crate::thread::{
        block_dim_x, block_dim_y, block_dim_z, block_idx_x, block_idx_y, block_idx_z, grid_dim_x,
        grid_dim_y, grid_dim_z, index_1d, index_2d, index_3d, sync_threads, sync_threads_and,
        sync_threads_count, sync_threads_or, thread_idx_x, thread_idx_y, thread_idx_z,
    };
    pub use crate::warp::{self, FULL_MASK, WARP_SIZE, lane_id};
    pub use crate::{AtomicSlice, OutSlice};
    pub use crate::{address_space, kernel};
    pub use crate::{device_assert, device_assert_eq, device_assert_ne, shared_array};
}

/// `#[kernel]`'s host shim reads its parameters with these (host only).
#[doc(hidden)]
pub use arch::host_shim as __host_shim;
