//! `wgmma` on the CPU emulator: each thread of the warpgroup computes its own accumulator
//! elements from `A` and `B` read from shared memory through the matrix descriptors
//! (`cuda_emu`'s `wgmma` module: the descriptor decoding, the layouts and swizzles, the
//! arithmetic, and what is not modelled). The product is computed when the warpgroup has
//! issued it; its accumulator values become visible at the `wait_group` that retires its
//! group (`commit_group` forms the groups);
//! `setmaxnreg` is accepted and does nothing (the emulator has no register file).

use crate::wgmma::MatrixDescriptor;
use cuda_emu::device::{self, MmaType};

#[track_caller]
pub(crate) fn fence() {
    device::wgmma_check_warpgroup("wgmma::fence");
}

#[track_caller]
pub(crate) fn commit_group() {
    device::wgmma_check_warpgroup("wgmma::commit_group");
    device::wgmma_commit("wgmma::commit_group");
}

#[track_caller]
pub(crate) fn wait_group<const N: u32>() {
    device::wgmma_check_warpgroup("wgmma::wait_group");
    device::wgmma_wait("wgmma::wait_group", N);
}

/// Nothing to do: the emulator's `wgmma` reads `A` when issued.
pub(crate) fn fence_operand(_a: &mut [u32; 4]) {}

#[track_caller]
pub(crate) fn reg_alloc<const N: u32>() {
    device::enter("wgmma::reg_alloc");
}

#[track_caller]
pub(crate) fn reg_dealloc<const N: u32>() {
    device::enter("wgmma::reg_dealloc");
}

macro_rules! wgmma {
    ($($name:ident, $n:literal, $ty:ident, [$($generic:ident)?];)*) => {$(
        /// # Safety
        /// As the `wgmma` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name$(<const TRANS_A: bool, const $generic: bool>)?(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            #[allow(unused_mut, unused_assignments)]
            let (mut trans_a, mut trans_b) = (false, false);
            $(
                let _ = stringify!($generic);
                (trans_a, trans_b) = (TRANS_A, TRANS_B);
            )?
            device::wgmma_mma_async(
                concat!("wgmma::", stringify!($name)),
                MmaType::$ty,
                acc,
                a.bits(),
                b.bits(),
                trans_a,
                trans_b,
                accumulate,
            );
        }
    )*};
}

wgmma!(
    mma_m64n64k16_f32_bf16, 32, Bf16, [TRANS_B];
    mma_m64n128k16_f32_bf16, 64, Bf16, [TRANS_B];
    mma_m64n176k16_f32_bf16, 88, Bf16, [TRANS_B];
    mma_m64n256k16_f32_bf16, 128, Bf16, [TRANS_B];
    mma_m64n64k16_f32_f16, 32, F16, [TRANS_B];
    mma_m64n128k16_f32_f16, 64, F16, [TRANS_B];
    mma_m64n176k16_f32_f16, 88, F16, [TRANS_B];
    mma_m64n256k16_f32_f16, 128, F16, [TRANS_B];
    mma_m64n64k8_f32_tf32, 32, Tf32, [];
    mma_m64n128k8_f32_tf32, 64, Tf32, [];
    mma_m64n256k8_f32_tf32, 128, Tf32, [];
    mma_m64n64k32_f32_e4m3, 32, E4m3, [];
    mma_m64n128k32_f32_e4m3, 64, E4m3, [];
    mma_m64n256k32_f32_e4m3, 128, E4m3, [];
    mma_m64n64k32_f32_e5m2, 32, E5m2, [];
    mma_m64n128k32_f32_e5m2, 64, E5m2, [];
    mma_m64n256k32_f32_e5m2, 128, E5m2, [];
);

/// The forms with `A` from registers (RS): the 16-bit ones take `B`'s transpose (`TRANS_B`,
/// written after the type), `.tf32` has none.
macro_rules! wgmma_rs {
    ($($name:ident, $n:literal, $ty:ident $(, $tb:ident)?;)*) => {$(
        /// # Safety
        /// As the `wgmma` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name$(<const $tb: bool>)?(
            acc: &mut [f32; $n],
            a: [u32; 4],
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            device::wgmma_mma_async_rs(
                concat!("wgmma::", stringify!($name)),
                MmaType::$ty,
                acc,
                a,
                b.bits(),
                false $(|| $tb)?,
                accumulate,
            );
        }
    )*};
}

wgmma_rs!(
    mma_m64n64k16_f32_bf16_rs, 32, Bf16, TRANS_B;
    mma_m64n128k16_f32_bf16_rs, 64, Bf16, TRANS_B;
    mma_m64n256k16_f32_bf16_rs, 128, Bf16, TRANS_B;
    mma_m64n64k16_f32_f16_rs, 32, F16, TRANS_B;
    mma_m64n128k16_f32_f16_rs, 64, F16, TRANS_B;
    mma_m64n256k16_f32_f16_rs, 128, F16, TRANS_B;
    mma_m64n64k8_f32_tf32_rs, 32, Tf32;
    mma_m64n128k8_f32_tf32_rs, 64, Tf32;
    mma_m64n256k8_f32_tf32_rs, 128, Tf32;
);

#[cfg(test)]
mod tests {
    use crate::wgmma::{MatrixDescriptor, Swizzle};

    /// The emulator decodes exactly what `MatrixDescriptor::new` encodes: a probe tile's
    /// descriptor, advanced by `add_bytes`, names the addresses of the staged layouts.
    #[test]
    fn descriptors_from_matrix_descriptor_new_decode_to_their_fields() {
        let d = MatrixDescriptor::new(0x2400, 128, 1024, Swizzle::None);
        assert_eq!(
            cuda_emu::device::wgmma_descriptor_fields(d.bits()),
            (0x2400, 128, 1024, 0, 0)
        );
        for (swizzle, width) in [(Swizzle::B128, 128), (Swizzle::B64, 64), (Swizzle::B32, 32)] {
            let d = MatrixDescriptor::new(0x8000, 16, 8 * width, swizzle).add_bytes(96);
            assert_eq!(
                cuda_emu::device::wgmma_descriptor_fields(d.bits()),
                (0x8000 + 96, 16, 8 * width, 0, width)
            );
        }
    }
}
