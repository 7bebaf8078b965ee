//! `common`: the Mandelbrot mathematics shared by CPU and GPU code.
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
#![no_std]

pub mod complex;
pub mod escape;
pub mod palette;
pub mod real;
pub mod viewport;

pub use complex::Complex;
pub use escape::escape_time;
pub use palette::{Palette, Rgb};
pub use real::Real;
pub use viewport::{Viewport, ViewportError};
