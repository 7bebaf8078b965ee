//! ferrocuda's kernels. Each kernel is a thin entry point: it finds its element from the
//! thread indices and calls a plain function from `common`, the same function the CPU
//! reference uses.
//!
//! Modules: [`mandelbrot`] (escape time and colour per pixel), [`vector`] (STREAM kernels, axpy),
//! [`reduce`] (sum/min/max, dot), [`scan`] (prefix sums), [`gemm`] (SGEMM),
//! [`launch_checks`] (kernels that exercise the launch layer and parameter ABI),
//! [`primitives`] (tests of every `cuda_std` primitive, and the tiled matmul demonstration).
//! Conventions: images are row-major, pixel `(0, 0)` is top-left; 1D kernels expect a 1D
//! launch covering at least the element count (extra threads do nothing).
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, core_float_math)
)]

pub mod gemm;
pub mod launch_checks;
pub mod mandelbrot;
pub mod primitives;
pub mod reduce;
pub mod scan;
pub mod vector;

/// The name of every kernel entry point in the PTX module, for loading and for tests.
pub fn kernel_names() -> impl Iterator<Item = &'static str> {
    mandelbrot::KERNELS
        .iter()
        .chain(vector::KERNELS)
        .chain(primitives::KERNELS)
        .chain(reduce::KERNELS)
        .chain(scan::KERNELS)
        .chain(gemm::KERNELS)
        .chain(launch_checks::KERNELS)
        .copied()
}
