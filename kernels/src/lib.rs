//! ferrocuda's kernels. Each kernel is a thin entry point: it finds its element from the
//! thread indices and calls a plain function from `common`, the same function the CPU
//! reference uses.
//!
//! Modules: [`attention`] (attention forward on `mma.sync`, sm_80+), [`mandelbrot`] (escape time and colour per pixel), [`vector`] (STREAM kernels, axpy),
//! [`reduce`] (sum/min/max, dot), [`scan`] (prefix sums), [`sort`] (radix sort), [`gemm`] (SGEMM), [`gemm_sm80`] (SGEMM on a `cp.async` pipeline, sm_80+), [`gemm_tc`]
//! (tensor-core GEMM: `mma.sync` in the sm_80 variant, `wgmma` in the sm_90a one). Test kernels live
//! in the `probes` crate (`tests/kernels`), so this module holds product kernels only; the
//! list of entry points is `cuda_builder`'s manifest (`host::KERNELS`), not kept by hand.
//! Conventions: images are row-major, pixel `(0, 0)` is top-left; 1D kernels expect a 1D
//! launch covering at least the element count (extra threads do nothing).
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, core_float_math)
)]

/// Expands `$body` once per listed value, with `$v` bound to it (a constant for the
/// optimiser): a guaranteed full unroll, so per-thread arrays are indexed by constants only
/// and stay in registers (LLVM keeps a loop over a large body rolled, and an array it
/// indexes then lives in local memory).
/// `unroll!(v: u32 in [...] { ... })` binds `v` with another integer type.
macro_rules! unroll {
    ($v:ident in [$($n:literal),*] $body:block) => {
        unroll!($v: usize in [$($n),*] $body)
    };
    ($v:ident: $t:ident in [$($n:literal),*] $body:block) => {
        $({
            let $v: $t = $n;
            $body
        })*
    };
}

pub mod attention;
pub mod gemm;
pub mod gemm_sm80;
pub mod gemm_tc;
pub mod mandelbrot;
pub mod reduce;
pub mod scan;
pub mod sort;
pub mod vector;
