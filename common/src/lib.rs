//! `common`: the mathematics shared by CPU and GPU code: Mandelbrot (escape time, deep zoom,
//! palettes) and the rules of attention ([`attention`]).
//!
//! Everything here is `no_std`, allocation-free and compiles both for the host and for
//! `nvptx64-nvidia-cuda`. The CPU renderer and the GPU kernels call the *same* functions, and
//! since rustc performs no floating-point contraction (no implicit FMA) on either target, the
//! results are bit-identical for the same inputs.
//!
//! Conventions:
//! - Images are row-major; pixel `(0, 0)` is the top-left pixel; `x` grows to the right
//!   (column), `y` grows downwards (row).
//! - The complex plane has the real axis pointing right and the imaginary axis pointing
//!   **up**, so row 0 holds the largest imaginary part.
//! - A pixel samples the complex number at its *centre*.
//!
//! Floating-point functions beyond `+ - * /` (fused multiply-add, square root, floor, log2)
//! come from `cuda_std::math`, the one place that picks a math backend: `core::f32::math` on
//! the GPU, std (feature `std`) or `libm` on the host — all correctly rounded, or `libm` on
//! both sides, so the bits agree.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(core_float_math))]

pub mod attention;
pub mod bla;
pub mod complex;
pub mod escape;
pub mod floatexp;
pub mod palette;
pub mod perturb;
pub mod real;
pub mod render;
pub mod viewport;

pub use complex::Complex;
pub use escape::{Escape, escape, escape_time};
pub use palette::{Palette, Rgb};
pub use real::Real;
pub use render::{Band, RenderJob};
pub use viewport::{Viewport, ViewportError};
