//! The element types of the `mma.sync` GEMM ([`MmaElem`]: bf16, f16, TF32): how the
//! `ldmatrix` registers become operands (rounded to TF32 for `f32`) and which `mma.sync`
//! one `m16n8` tile and 32-byte K sub-step takes.

use crate::gemm_tc::OutElem;
use cuda_std::half::{bf16, f16};
use cuda_std::mma::{
    Bf16, F16, FragA, FragAcc, FragB, M16N8K8, M16N8K16, Tf32, mma_sync, tf32_from_f32,
};

/// An element type of the `mma.sync` GEMM: how one warp MMA is issued on raw fragment
/// registers, and how results are written.
pub trait MmaElem: OutElem {
    /// The `ldmatrix` registers of an operand made ready for [`MmaElem::mma`]: as they
    /// are for bf16/f16, each `f32` rounded to TF32 (to nearest, ties away from zero)
    /// for TF32.
    fn operand(regs: [u32; 4]) -> [u32; 4];

    /// `acc += A·B` for one `m16n8` tile and one 32-byte-per-row K sub-step: `a`, `b` the
    /// [`MmaElem::operand`] registers (one `m16n8k16`, or one `m16n8k8` for TF32).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it convergently.
    unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]);
}

impl MmaElem for bf16 {
    #[inline(always)]
    fn operand(regs: [u32; 4]) -> [u32; 4] {
        regs
    }

    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
        let (a, b) = (
            FragA::<M16N8K16, Bf16>::from_regs(a),
            FragB::<M16N8K16, Bf16>::from_regs(b),
        );
        // SAFETY: converged warp (caller contract).
        *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
    }
}

impl MmaElem for f16 {
    #[inline(always)]
    fn operand(regs: [u32; 4]) -> [u32; 4] {
        regs
    }

    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
        let (a, b) = (
            FragA::<M16N8K16, F16>::from_regs(a),
            FragB::<M16N8K16, F16>::from_regs(b),
        );
        // SAFETY: converged warp (caller contract).
        *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
    }
}

impl MmaElem for f32 {
    #[inline(always)]
    fn operand(regs: [u32; 4]) -> [u32; 4] {
        regs.map(|r| tf32_from_f32(f32::from_bits(r)).to_bits())
    }

    #[inline(always)]
    unsafe fn mma(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
        let (a, b) = (
            FragA::<M16N8K8, Tf32>::from_regs(a),
            FragB::<M16N8K8, Tf32>::from_regs(b),
        );
        // SAFETY: converged warp (caller contract).
        *acc = unsafe { mma_sync(&a, &b, &FragAcc::from_regs(*acc)) }.regs();
    }
}
