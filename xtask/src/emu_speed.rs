//! `cargo xtask emu-speed`: the CPU emulator's speed figures (thread-steps/s for a reduction,
//! a tiled SGEMM and a Mandelbrot tile, every check on and off), from the release-built
//! benchmark `tests/benches/emu_speed.rs` (`cargo bench -p tests --bench emu_speed`). No GPU
//! needed.

use crate::{cargo, run};
use anyhow::Result;

pub fn exec() -> Result<()> {
    run(cargo().args(["bench", "--package", "tests", "--bench", "emu_speed"]))
}
