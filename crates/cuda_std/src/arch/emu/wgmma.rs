//! `wgmma` on the CPU emulator: not emulated yet (the launch fails with
//! `EmuError::NotEmulated` naming the call).

use super::not_emulated;
use crate::wgmma::MatrixDescriptor;

#[track_caller]
pub(crate) fn fence() {
    not_emulated!("wgmma::fence")
}

#[track_caller]
pub(crate) fn commit_group() {
    not_emulated!("wgmma::commit_group")
}

#[track_caller]
pub(crate) fn wait_group<const N: u32>() {
    not_emulated!("wgmma::wait_group")
}

#[track_caller]
pub(crate) fn reg_alloc<const N: u32>() {
    not_emulated!("wgmma::reg_alloc")
}

#[track_caller]
pub(crate) fn reg_dealloc<const N: u32>() {
    not_emulated!("wgmma::reg_dealloc")
}

macro_rules! wgmma {
    ($($name:ident, $n:literal, $($generic:ident)?;)*) => {$(
        /// # Safety
        /// As the `wgmma` function of the same name.
        #[track_caller]
        pub(crate) unsafe fn $name$(<const TRANS_A: bool, const $generic: bool>)?(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            not_emulated!(concat!("wgmma::", stringify!($name)), acc, a, b, accumulate)
        }
    )*};
}

wgmma!(
    mma_m64n64k16_f32_bf16, 32, TRANS_B;
    mma_m64n128k16_f32_bf16, 64, TRANS_B;
    mma_m64n256k16_f32_bf16, 128, TRANS_B;
    mma_m64n64k16_f32_f16, 32, TRANS_B;
    mma_m64n128k16_f32_f16, 64, TRANS_B;
    mma_m64n256k16_f32_f16, 128, TRANS_B;
    mma_m64n64k8_f32_tf32, 32, ;
    mma_m64n128k8_f32_tf32, 64, ;
    mma_m64n256k8_f32_tf32, 128, ;
);
