//! The element types of the `wgmma` GEMM: [`WgmmaElem`] for the inputs (bf16, f16, TF32,
//! e4m3, e5m2: the stage tiles TMA loads and the `wgmma` one 32-byte K slice takes) and
//! [`WgmmaOut`] for `C` (bf16, f16, f32: the TMA store box of the epilogue).

use super::tf32::Tf32Rounded;

use super::{PP_BN, PP_C_BOX_COLS, WG_BM, WG_BN, WG_C_BOX_ROWS, WG_CLUSTER_M};
use crate::gemm_tc::OutElem;
use cuda_std::DeviceCopy;
use cuda_std::half::{F8E4M3, F8E5M2, bf16, f16};
use cuda_std::tile::{SmemTile, Tile, swizzle};
use cuda_std::wgmma::{self, MatrixDescriptor};

/// An input element type of the `wgmma` GEMM: its shared-memory tiles (which the host's
/// tensor maps are built from: `TensorMapExt::for_tile`), and which instruction one
/// 32-byte K slice takes.
pub trait WgmmaElem: Copy + DeviceCopy {
    /// A stage of `A`, one TMA load: [`WG_BM`] rows of
    /// [`WG_BK_BYTES`](super::WG_BK_BYTES) (one 128-byte swizzle row each).
    type AStage: Tile<Elem = Self>;
    /// A consumer warpgroup's part of a stage of `A`: 64 rows of
    /// [`WG_BK_BYTES`](super::WG_BK_BYTES).
    type AHalf: Tile<Elem = Self>;
    /// A stage of `B`: [`WG_BN`] rows of [`WG_BK_BYTES`](super::WG_BK_BYTES); one TMA load
    /// without clusters.
    type BStage: Tile<Elem = Self>;
    /// The share of a stage of `B` that each block of a cluster of [`WG_CLUSTER_M`]
    /// loads and multicasts: `WG_BN / WG_CLUSTER_M` rows of
    /// [`WG_BK_BYTES`](super::WG_BK_BYTES).
    type BHalf: Tile<Elem = Self>;
    /// A stage of `B` in the ping-pong kernels ([`PingpongElem`](super::PingpongElem)):
    /// [`PP_BN`] rows of [`WG_BK_BYTES`](super::WG_BK_BYTES).
    type BStagePp: Tile<Elem = Self>;
    /// The share of [`WgmmaElem::BStagePp`] that each block of a cluster of
    /// [`WG_CLUSTER_M`] loads and multicasts in the ping-pong kernels with clusters:
    /// `PP_BN / WG_CLUSTER_M` rows.
    type BHalfPp: Tile<Elem = Self>;
    /// Whether the epilogue multiplies the accumulators by the launch's `scale` (the
    /// FP8 types: per-tensor scales, as cuBLASLt's scaled matmul) before rounding them
    /// to the output type. `false` keeps the other types' epilogue free of it.
    const SCALED: bool = false;
    /// Whether the producer waits for the kernel's prerequisite grids
    /// (`cuda_std::thread::grid_dependency_sync`) before its first TMA load: the TF32
    /// type, whose inputs the rounding pass ([`round_tf32`](super::round_tf32)) writes just
    /// before the product, which the host launches with programmatic stream serialization
    /// (see the [module docs](super)). `false` keeps the other types' kernels free of it.
    const AFTER_ROUNDING: bool = false;
    /// `acc (+)= A·B` for a 64×256 tile and 32 bytes of K (16 bf16/f16 elements: one
    /// `m64n256k16`; 8 f32: one `m64n256k8` TF32; 32 FP8: one `m64n256k32`, which the FP8
    /// entry points leave for two `m64n128k32`: `operand::PromotedA`).
    ///
    /// # Safety
    /// As `cuda_std::wgmma::mma_m64n256k16_f32_bf16`.
    unsafe fn mma(acc: &mut [f32; 128], a: MatrixDescriptor, b: MatrixDescriptor, accumulate: bool);
}

/// An output element type of the `wgmma` GEMM: its TMA store box.
pub trait WgmmaOut: OutElem {
    /// A TMA store box of `C`: [`WG_C_BOX_ROWS`] rows of 128 bytes.
    type CBox: Tile<Elem = Self>;
    /// A TMA store box of `C` in the ping-pong kernels: [`WG_C_BOX_ROWS`] rows of
    /// [`PP_C_BOX_COLS`] = 88 elements, not swizzled (rows of 176 bytes for bf16/f16: the 8
    /// rows × 16 bytes of a warp's store fall in 8 different groups of 4 banks).
    type CBoxPp: Tile<Elem = Self>;
}

impl WgmmaOut for bf16 {
    type CBox = SmemTile<bf16, { WG_C_BOX_ROWS }, 64, swizzle::B128>;
    type CBoxPp = SmemTile<bf16, { WG_C_BOX_ROWS }, { PP_C_BOX_COLS }, swizzle::None>;
}

impl WgmmaOut for f16 {
    type CBox = SmemTile<f16, { WG_C_BOX_ROWS }, 64, swizzle::B128>;
    type CBoxPp = SmemTile<f16, { WG_C_BOX_ROWS }, { PP_C_BOX_COLS }, swizzle::None>;
}

impl WgmmaOut for f32 {
    type CBox = SmemTile<f32, { WG_C_BOX_ROWS }, 32, swizzle::B128>;
    type CBoxPp = SmemTile<f32, { WG_C_BOX_ROWS }, { PP_C_BOX_COLS }, swizzle::None>;
}

/// The stage tiles of an input type whose 128-byte row holds `$cols` elements.
macro_rules! stage_tiles {
    ($t:ty, $cols:literal) => {
        type AStage = SmemTile<$t, { WG_BM }, $cols, swizzle::B128>;
        type AHalf = SmemTile<$t, { WG_BM / 2 }, $cols, swizzle::B128>;
        type BStage = SmemTile<$t, { WG_BN }, $cols, swizzle::B128>;
        type BHalf = SmemTile<$t, { WG_BN / WG_CLUSTER_M }, $cols, swizzle::B128>;
        type BStagePp = SmemTile<$t, { PP_BN }, $cols, swizzle::B128>;
        type BHalfPp = SmemTile<$t, { PP_BN / WG_CLUSTER_M }, $cols, swizzle::B128>;
    };
}

impl WgmmaElem for bf16 {
    stage_tiles!(bf16, 64);
    #[inline(always)]
    unsafe fn mma(
        acc: &mut [f32; 128],
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    ) {
        // SAFETY: forwarded.
        unsafe { wgmma::mma_m64n256k16_f32_bf16::<false, false>(acc, a, b, accumulate) }
    }
}

impl WgmmaElem for f16 {
    stage_tiles!(f16, 64);
    #[inline(always)]
    unsafe fn mma(
        acc: &mut [f32; 128],
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    ) {
        // SAFETY: forwarded.
        unsafe { wgmma::mma_m64n256k16_f32_f16::<false, false>(acc, a, b, accumulate) }
    }
}

impl WgmmaElem for Tf32Rounded {
    stage_tiles!(Tf32Rounded, 32);
    const AFTER_ROUNDING: bool = true;
    #[inline(always)]
    unsafe fn mma(
        acc: &mut [f32; 128],
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    ) {
        // SAFETY: forwarded.
        unsafe { wgmma::mma_m64n256k8_f32_tf32(acc, a, b, accumulate) }
    }
}

impl WgmmaElem for F8E4M3 {
    stage_tiles!(F8E4M3, 128);
    const SCALED: bool = true;
    #[inline(always)]
    unsafe fn mma(
        acc: &mut [f32; 128],
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    ) {
        // SAFETY: forwarded.
        unsafe { wgmma::mma_m64n256k32_f32_e4m3(acc, a, b, accumulate) }
    }
}

/// `impl Fp8HalfMma` for each FP8 type, with its `m64n128k32`.
macro_rules! impl_fp8_half_mma {
    ($($t:ty => $mma:ident),* $(,)?) => {$(
        impl super::operand::Fp8HalfMma for $t {
            #[inline(always)]
            unsafe fn mma_n128(
                acc: &mut [f32; 64],
                a: MatrixDescriptor,
                b: MatrixDescriptor,
                accumulate: bool,
            ) {
                // SAFETY: forwarded.
                unsafe { wgmma::$mma(acc, a, b, accumulate) }
            }
        }
    )*};
}

impl_fp8_half_mma!(F8E4M3 => mma_m64n128k32_f32_e4m3, F8E5M2 => mma_m64n128k32_f32_e5m2);

impl WgmmaElem for F8E5M2 {
    stage_tiles!(F8E5M2, 128);
    const SCALED: bool = true;
    #[inline(always)]
    unsafe fn mma(
        acc: &mut [f32; 128],
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    ) {
        // SAFETY: forwarded.
        unsafe { wgmma::mma_m64n256k32_f32_e5m2(acc, a, b, accumulate) }
    }
}
