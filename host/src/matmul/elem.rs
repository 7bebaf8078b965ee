//! The input types of the tensor-core products ([`TcElem`]: `bf16`, `f16`, [`Tf32`]), each
//! with its kernels, poison value and units, and the kernels' handle types.

use cuda_std::half::{bf16, f16};
use cuda_std::launch::{ConstPtr, Kernel, MutPtr, Out, Safe, Slice, Unsafe, Value};
use cust::{
    memory::DeviceCopy,
    tma::{TensorMap, TmaElement},
};
use kernels::gemm_tc::wgmma::{Tf32Rounded, WgmmaElem, WgmmaOut};

use super::TcKernel;

/// The parameter kinds of the `mma.sync` kernels: `(m, n, k, a: &[T], b: &[T], c: *mut T)`.
pub type MmaParams<T> = (
    Value<u32>,
    Value<u32>,
    Value<u32>,
    Slice<T>,
    Slice<T>,
    MutPtr<T>,
);
/// The `mma.sync` kernels' handle type.
pub type MmaKernel<T> = Kernel<MmaParams<T>, Unsafe>;
/// The parameter kinds of the `wgmma` kernels: `(m, n, k, map_a, map_b, map_c, c: *mut T,
/// c_by_tma: u32)` (`c_by_tma` nonzero: `C` is stored by TMA through `map_c`; zero: from
/// registers, `map_c` unread).
pub type WgmmaParams<T> = (
    Value<u32>,
    Value<u32>,
    Value<u32>,
    ConstPtr<TensorMap>,
    ConstPtr<TensorMap>,
    ConstPtr<TensorMap>,
    MutPtr<T>,
    Value<u32>,
);
/// The `wgmma` kernels' handle type.
pub type WgmmaKernel<T> = Kernel<WgmmaParams<T>, Unsafe>;
/// The input-rounding kernel's handle type: `(x: &[T], out: OutSlice<T>)`.
pub type RoundKernel<T> = Kernel<(Slice<T>, Out<T>), Safe>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for super::f16 {}
    impl Sealed for super::Tf32 {}
}

/// TF32, the tensor cores' 19-bit float (8 exponent bits, 10 mantissa bits), as the input
/// type of a tensor-core product: `GemmPlan::<Tf32>` / `gemm::<Tf32>` multiply `f32`
/// matrices ([`TcElem::Elem`] = `f32`) whose inputs the tensor cores read rounded to TF32,
/// with an f32 result. A marker, never a value (no TF32 type exists in memory): it keeps
/// `f32` meaning FP32, as in [`crate::vector::sgemm_dev`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tf32 {}

/// The input type of the tensor-core products: [`bf16`], [`f16`](struct@f16) (f32
/// accumulation, result rounded to the type) or [`Tf32`] (`f32` in memory: the tensor
/// cores read each input rounded to nearest TF32, 10 mantissa bits; result in f32). Sealed.
pub trait TcElem: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The element type of `A`, `B` and `C` in memory: the type itself for bf16 and f16,
    /// `f32` for [`Tf32`].
    type Elem: DeviceCopy + TmaElement + Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    /// The `wgmma` kernels' input element type, whose stage tiles (`AStage`, `BStage`,
    /// `BHalf`) the tensor maps of `A` and `B` are built from: the type itself for bf16 and
    /// f16, [`Tf32Rounded`] for [`Tf32`] (the size of [`TcElem::Elem`]).
    type WgmmaIn: WgmmaElem;
    /// The `wgmma` kernels' output element type, [`TcElem::Elem`], whose store tile
    /// ([`WgmmaOut::CBox`]) the tensor map of `C` is built from.
    type WgmmaC: WgmmaOut;
    /// `bf16`, `f16` or `tf32`.
    const NAME: &'static str;
    /// `k` must be a multiple of this (16 bytes of a row).
    const K_MULTIPLE: usize;
    /// The `mma.sync` kernel.
    const MMA: MmaKernel<Self::Elem>;
    /// The `wgmma` kernel.
    const WGMMA: WgmmaKernel<Self::Elem>;
    /// The `wgmma` kernel for clusters of [`WG_CLUSTER_M`] blocks along M.
    ///
    /// [`WG_CLUSTER_M`]: kernels::gemm_tc::wgmma::WG_CLUSTER_M
    const WGMMA_C2: WgmmaKernel<Self::Elem>;
    /// For TF32: the kernel that rounds `A` and `B` to TF32 into scratch copies, which the
    /// `wgmma` kernels then read (see [`GemmPlan`](super::GemmPlan)); `None` for bf16/f16.
    const WGMMA_ROUND: Option<RoundKernel<Self::Elem>> = None;
    /// For TF32: the `wgmma` kernels that round `A` in registers (the RS form, read
    /// unrounded; only `B` goes through [`TcElem::WGMMA_ROUND`]), without and with clusters
    /// of [`WG_CLUSTER_M`]; `None` for bf16/f16.
    ///
    /// [`WG_CLUSTER_M`]: kernels::gemm_tc::wgmma::WG_CLUSTER_M
    const WGMMA_RS: Option<[WgmmaKernel<Self::Elem>; 2]> = None;
    /// For bf16/f16: the ping-pong `wgmma` kernels without and with clusters
    /// ([`TcKernel::WgmmaPingpong`], [`TcKernel::WgmmaPingpongCluster2`]); `None` for TF32.
    const WGMMA_PP: Option<[WgmmaKernel<Self::Elem>; 2]> = None;
    /// The kernels this type has, in [`TcKernel::ALL`]'s order: all but the ping-pong forms
    /// ([`TcKernel::WgmmaPingpong`], [`TcKernel::WgmmaPingpongCluster2`]) for TF32, all but the RS forms ([`TcKernel::WgmmaRs`],
    /// [`TcKernel::WgmmaRsCluster2`]) for bf16/f16.
    const KERNELS: &'static [TcKernel];
    /// A NaN the host writes to outputs before a launch, so unwritten elements show.
    const POISON: Self::Elem;
    /// Unit roundoff of the output (2⁻⁸ bf16, 2⁻¹¹ f16, 2⁻²⁴ f32).
    const OUTPUT_UNIT: f64;
    /// Relative error of reading one input into the tensor core: 0 for bf16/f16 (exact),
    /// 2⁻¹¹ for TF32 (both kernel families round each input to nearest TF32, 11
    /// significant bits).
    const INPUT_UNIT: f64;
    /// An element as `f64` (exact).
    fn to_f64(x: Self::Elem) -> f64;
    /// `x` rounded to the element type (to nearest, ties to even: the GPU's `cvt.rn`; for
    /// [`Tf32`], `x` itself: the rounding to TF32 happens on the GPU, by
    /// [`TcElem::WGMMA_ROUND`] before `wgmma`, in registers for `mma.sync`).
    fn from_f32(x: f32) -> Self::Elem;
}

/// The `impl TcElem` of each input type, from one table: the marker and its element type in
/// memory, the name and `k` multiple, the `wgmma` kernels' input type, the kernels
/// (`mma.sync`, `wgmma`, `wgmma` in clusters, for bf16/f16 the ping-pong form, and for
/// TF32 the rounding pass and the RS forms), the poison
/// value, the units and the conversions.
macro_rules! impl_tc_elem {
    ($(
        $marker:ty => $elem:ty {
            name: $name:literal, k_multiple: $k:literal,
            wgmma_in: $win:ty,
            kernels: ($mma:ident, $wgmma:ident, $wgmma_c2:ident
                      $(, pp: ($pp:ident, $pp_c2:ident))?
                      $(, round: $round:ident, rs: ($rs:ident, $rs_c2:ident))?),
            poison: $poison:expr, output_unit: $output_unit:expr, input_unit: $input_unit:expr,
            to_f64: |$x:ident| $to_f64:expr, from_f32: |$y:ident| $from_f32:expr $(,)?
        }
    )*) => {$(
        impl TcElem for $marker {
            type Elem = $elem;
            type WgmmaIn = $win;
            type WgmmaC = $elem;
            const NAME: &'static str = $name;
            const K_MULTIPLE: usize = $k;
            const MMA: MmaKernel<$elem> = kernels::gemm_tc::mma_sync::$mma;
            const WGMMA: WgmmaKernel<$elem> = kernels::gemm_tc::wgmma::$wgmma;
            const WGMMA_C2: WgmmaKernel<$elem> = kernels::gemm_tc::wgmma::$wgmma_c2;
            $(const WGMMA_ROUND: Option<RoundKernel<$elem>> =
                Some(kernels::gemm_tc::wgmma::$round);
            const WGMMA_RS: Option<[WgmmaKernel<$elem>; 2]> =
                Some([kernels::gemm_tc::wgmma::$rs, kernels::gemm_tc::wgmma::$rs_c2]);)?
            $(const WGMMA_PP: Option<[WgmmaKernel<$elem>; 2]> =
                Some([kernels::gemm_tc::wgmma::$pp, kernels::gemm_tc::wgmma::$pp_c2]);)?
            const KERNELS: &'static [TcKernel] = if Self::WGMMA_RS.is_some() {
                &[
                    TcKernel::Wgmma,
                    TcKernel::WgmmaCluster2,
                    TcKernel::WgmmaRs,
                    TcKernel::WgmmaRsCluster2,
                    TcKernel::MmaSync,
                ]
            } else {
                &[
                    TcKernel::Wgmma,
                    TcKernel::WgmmaCluster2,
                    TcKernel::WgmmaPingpong,
                    TcKernel::WgmmaPingpongCluster2,
                    TcKernel::MmaSync,
                ]
            };
            const POISON: $elem = $poison;
            const OUTPUT_UNIT: f64 = $output_unit;
            const INPUT_UNIT: f64 = $input_unit;
            fn to_f64($x: $elem) -> f64 {
                $to_f64
            }
            fn from_f32($y: f32) -> $elem {
                $from_f32
            }
        }
    )*};
}

impl_tc_elem! {
    bf16 => bf16 {
        name: "bf16", k_multiple: 8, wgmma_in: bf16,
        kernels: (gemm_mma_bf16, gemm_wgmma_bf16, gemm_wgmma_bf16_c2, pp: (gemm_wgmma_bf16_pp, gemm_wgmma_bf16_pp_c2)),
        poison: bf16::from_bits(0x7fc1), output_unit: 1.0 / 256.0, input_unit: 0.0,
        to_f64: |x| f64::from(x.to_f32()), from_f32: |x| bf16::from_f32(x),
    }
    f16 => f16 {
        name: "f16", k_multiple: 8, wgmma_in: f16,
        kernels: (gemm_mma_f16, gemm_wgmma_f16, gemm_wgmma_f16_c2, pp: (gemm_wgmma_f16_pp, gemm_wgmma_f16_pp_c2)),
        poison: f16::from_bits(0x7e01), output_unit: 1.0 / 2048.0, input_unit: 0.0,
        to_f64: |x| f64::from(x.to_f32()), from_f32: |x| f16::from_f32(x),
    }
    Tf32 => f32 {
        name: "tf32", k_multiple: 4, wgmma_in: Tf32Rounded,
        kernels: (gemm_mma_tf32, gemm_wgmma_tf32, gemm_wgmma_tf32_c2, round: round_tf32,
                  rs: (gemm_wgmma_tf32_rs, gemm_wgmma_tf32_rs_c2)),
        poison: f32::from_bits(0x7fc0_0dad), output_unit: 1.0 / 16_777_216.0,
        input_unit: 1.0 / 2048.0,
        to_f64: |x| f64::from(x), from_f32: |x| x,
    }
}
