//! The GPU's approximate transcendental functions (PTX ISA §9.7.3 "Floating Point
//! Instructions": `ex2`), one instruction each on the special-function unit.

use core::arch::asm;

/// `ex2.approx.ftz.f32 y, x`: `2^x`, subnormal inputs and results flushed to zero.
#[inline(always)]
pub(crate) fn ex2_approx_ftz(x: f32) -> f32 {
    let y: f32;
    // SAFETY: register operands only; `ex2.approx.ftz.f32` exists on every target.
    unsafe {
        asm!("ex2.approx.ftz.f32 {y}, {x};", y = out(reg32) y, x = in(reg32) x,
            options(pure, nomem, nostack))
    };
    y
}
