//! `mma` on the CPU emulator: warp collectives of all 32 lanes, computed from every lane's
//! registers by the lane maps (`cust_core::lanes::mma`), in `cuda_emu`.

use cuda_emu::device::{self, MmaType};

macro_rules! mma_fn {
    ($($name:ident, $ty:ident;)*) => {$(
        /// The emulator's warp collective (a panic outside an emulated launch).
        ///
        /// # Safety
        /// As `mma::mma_sync`.
        #[track_caller]
        pub(crate) unsafe fn $name(a: &[u32; 4], b: &[u32; 2], c: &[f32; 4]) -> [f32; 4] {
            device::mma(MmaType::$ty, a, b, c)
        }
    )*};
}

mma_fn!(mma_f16, F16; mma_bf16, Bf16; mma_tf32, Tf32;);

/// The GPU's `cvt.rna.tf32.f32` in software (see `mma::tf32_from_f32`).
pub(crate) fn tf32_from_f32(x: f32) -> f32 {
    let bits = x.to_bits();
    let rounded = if x.abs() < f32::INFINITY {
        bits + 0x1000
    } else {
        bits
    };
    f32::from_bits(rounded & !0x1fff)
}

macro_rules! ldmatrix_fn {
    ($($name:ident, $n:literal, $trans:literal;)*) => {$(
        /// The emulator's warp collective (a panic outside an emulated launch).
        ///
        /// # Safety
        /// As the `mma` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name(row: *const u16) -> [u32; $n] {
            // SAFETY: forwarded to the caller.
            unsafe { device::ldmatrix::<$n>(row, $trans) }
        }
    )*};
}

macro_rules! stmatrix_fn {
    ($($name:ident, $n:literal, $trans:literal;)*) => {$(
        /// The emulator's warp collective (a panic outside an emulated launch).
        ///
        /// # Safety
        /// As the `mma` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name(dst: *mut u16, regs: [u32; $n]) {
            // SAFETY: forwarded to the caller.
            unsafe { device::stmatrix::<$n>(dst, regs, $trans) }
        }
    )*};
}

ldmatrix_fn!(
    ldmatrix_x1, 1, false;
    ldmatrix_x2, 2, false;
    ldmatrix_x4, 4, false;
    ldmatrix_x1_trans, 1, true;
    ldmatrix_x2_trans, 2, true;
    ldmatrix_x4_trans, 4, true;
);
stmatrix_fn!(
    stmatrix_x1, 1, false;
    stmatrix_x2, 2, false;
    stmatrix_x4, 4, false;
    stmatrix_x1_trans, 1, true;
    stmatrix_x2_trans, 2, true;
    stmatrix_x4_trans, 4, true;
);
