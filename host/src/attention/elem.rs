//! The input types of attention ([`AttnElem`]: `bf16` and `f16`, sealed) and the kernels'
//! parameter kinds and handle types, `mma.sync` ([`AttnKernel`]) and `wgmma`
//! ([`WgAttnKernel`]).

use cuda_std::half::{bf16, f16};
use cuda_std::launch::{ConstPtr, Kernel, MutPtr, Slice, Unsafe, Value};
use cust::{
    memory::DeviceCopy,
    tma::{TensorMap, TmaElement},
};

/// The parameter kinds of the attention kernels: `(batch, seq_len, heads, kv_heads,
/// causal, q: &[T], k: &[T], v: &[T], o: *mut T, lse: *mut f32)`.
pub type AttnParams<T> = (
    Value<u32>,
    Value<u32>,
    Value<u32>,
    Value<u32>,
    Value<u32>,
    Slice<T>,
    Slice<T>,
    Slice<T>,
    MutPtr<T>,
    MutPtr<f32>,
);
/// The attention kernels' handle type.
pub type AttnKernel<T> = Kernel<AttnParams<T>, Unsafe>;
/// The parameter kinds of the `wgmma` attention kernels: `(batch, seq_len, heads, kv_heads,
/// causal, map_q, map_k, map_v, o: *mut T, lse: *mut f32)`.
pub type WgAttnParams<T> = (
    Value<u32>,
    Value<u32>,
    Value<u32>,
    Value<u32>,
    Value<u32>,
    ConstPtr<TensorMap>,
    ConstPtr<TensorMap>,
    ConstPtr<TensorMap>,
    MutPtr<T>,
    MutPtr<f32>,
);
/// The `wgmma` attention kernels' handle type.
pub type WgAttnKernel<T> = Kernel<WgAttnParams<T>, Unsafe>;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for super::f16 {}
}

/// An input type of attention: [`bf16`] or [`f16`](struct@f16). Sealed.
pub trait AttnElem:
    DeviceCopy + TmaElement + Copy + Send + Sync + 'static + sealed::Sealed
{
    /// `bf16` or `f16`.
    const NAME: &'static str;
    /// The kernel for `D` = 64.
    const D64: AttnKernel<Self>;
    /// The kernel for `D` = 128.
    const D128: AttnKernel<Self>;
    /// The `wgmma` kernel for `D` = 64.
    const WG_D64: WgAttnKernel<Self>;
    /// The `wgmma` kernel for `D` = 128.
    const WG_D128: WgAttnKernel<Self>;
    /// A NaN the host writes to `O` before a launch, so unwritten elements show.
    const POISON: Self;
    /// Unit roundoff of the type (2⁻⁸ bf16, 2⁻¹¹ f16): the relative error of rounding `P`
    /// and `O` to it.
    const UNIT: f64;
    /// The value as `f64` (exact).
    fn to_f64(self) -> f64;
    /// `x` rounded to the type (to nearest, ties to even: the GPU's `cvt.rn`).
    fn from_f32(x: f32) -> Self;
}

/// `AttnElem` for the 16-bit types: name, kernels (`attention_fwd_{name}_d{64,128}` and
/// `attention_fwd_wgmma_{name}_d{64,128}`), a quiet NaN of the type and its unit roundoff.
macro_rules! attn_elem {
    ($($t:ident: $d64:ident, $d128:ident, $wg64:ident, $wg128:ident, $poison:literal,
       $unit:expr;)*) => {$(
        impl AttnElem for $t {
            const NAME: &'static str = stringify!($t);
            const D64: AttnKernel<Self> = kernels::attention::$d64;
            const D128: AttnKernel<Self> = kernels::attention::$d128;
            const WG_D64: WgAttnKernel<Self> = kernels::attention::wgmma::$wg64;
            const WG_D128: WgAttnKernel<Self> = kernels::attention::wgmma::$wg128;
            const POISON: Self = $t::from_bits($poison);
            const UNIT: f64 = $unit;
            fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }
            fn from_f32(x: f32) -> Self {
                $t::from_f32(x)
            }
        }
    )*};
}

attn_elem! {
    bf16: attention_fwd_bf16_d64, attention_fwd_bf16_d128, attention_fwd_wgmma_bf16_d64,
        attention_fwd_wgmma_bf16_d128, 0x7fc1, 1.0 / 256.0;
    f16: attention_fwd_f16_d64, attention_fwd_f16_d128, attention_fwd_wgmma_f16_d64,
        attention_fwd_wgmma_f16_d128, 0x7e01, 1.0 / 2048.0;
}
