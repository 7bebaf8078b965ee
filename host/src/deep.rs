//! Deep zoom past `f64`: a view given by decimal strings of any length ([`view`]), its
//! reference orbit in arbitrary precision (`astro-float`, pure Rust; [`orbit`]), the
//! bilinear-approximation table that skips iterations ([`bla`]), and the pixels iterated by
//! perturbation (`common::perturb`, shared with the GPU) in bands ([`mod@render`]:
//! [`PerturbedJob`], a [`crate::band::BandKernel`] rendered by the same band renderers as
//! the `f32`/`f64` images). Also the minibrot search ([`minibrot`]) and the slow
//! exact check of every pixel in arbitrary precision ([`direct`]). The one arbitrary-
//! precision step `z ← z² + c` lives in `arith`.
//!
//! Conventions as for [`common::Viewport`]: `scale` is the real-axis extent of the image
//! width, pixels are square, pixel `(x, y)` samples its centre, row 0 is at the top.

mod arith;
pub mod bla;
mod decimal;
pub mod direct;
pub mod minibrot;
pub mod orbit;
pub mod render;
pub mod view;

pub use arith::to_floatexp;
pub use bla::{BLA_EPS, bla_table, bla_table_until};
pub use decimal::{Decimal, MAX_EXPONENT};
pub use direct::render_direct;
pub use minibrot::{MINIBROT_FRAME, Minibrot, find_minibrot};
pub use orbit::{reference_orbit, reference_orbit_until};
pub use render::{
    DEEP_BYTES_PER_ITERATION, MAX_PERTURBED_ITERATIONS_PER_LAUNCH, PerturbedJob, SharedBla,
    SharedOrbit, colorize, render_job_cpu, render_perturbed,
};
pub use view::{
    DeepError, DeepView, MAX_PRECISION_BITS, NEGLIGIBLE_EXP10, decimal, decimal_of_log10,
    estimated_bits, near_i, scale_of_log10,
};
