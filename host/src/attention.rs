//! Attention forward on the GPU: `O = softmax(Q·Kᵀ/√D)·V` and the log-sum-exp `L`, in bf16
//! or f16, with the kernels of `kernels::attention`: on `wgmma` on sm_90
//! ([`AttentionKernel::Wgmma`], `kernels::attention::wgmma`; and on the CPU emulator),
//! on `mma.sync` on sm_80 and later ([`AttentionKernel::MmaSync`]).
//!
//! Layouts ([`common::attention`]): `Q` and `O` are `(B, H, S, D)` row-major, `K` and `V`
//! `(B, H_kv, S, D)` (grouped-query attention: `H_kv` divides `H`, query head `h` reads
//! key/value head `h / (H / H_kv)`), `L` is `(B, H, S)` in `f32` (natural log). The tensors
//! are contiguous: the strides are those of the shape, and a buffer shorter than its shape
//! needs is refused.
//!
//! Shapes ([`AttentionShape::check`]): `D` ∈ {64, 128}; `B`, `H`, `H_kv`, `S` ≥ 1; `H_kv`
//! divides `H`; `B·H·ceil(S / 64)` (the grid, one block per head and 64 query rows) below
//! 2³¹; for [`AttentionKernel::Wgmma`] also `B·H·S` below 2³¹ (its tensor maps' row
//! coordinates are `i32`; checked by [`AttentionPlan::with_kernel`]). A shape outside these
//! rules is an error naming the value and what is allowed, before any launch.
//!
//! Two levels, as in [`crate::matmul`]: [`AttentionPlan`] (made once per shape and buffers,
//! launched many times, no synchronisation: what a benchmark times) and [`attention`]
//! (upload, run, download). [`reference_f64`] and [`error_bound`] are the CPU side the tests
//! compare with.

use crate::gpu::{Gpu, GpuError, ResolvedOf, kernel_table};
use cuda_std::half::{bf16, f16};
use cuda_std::launch::{ConstPtr, Kernel, MutPtr, Slice, Unsafe, Value};
use cust::{
    error::GpuContext,
    function::LaunchConfig,
    launch::TypedFunction,
    memory::{DeviceBox, DeviceBuffer, DeviceCopy},
    tma::{TensorMap, TensorMapExt, TmaElement, TmaSwizzle},
};
use kernels::attention::wgmma::{
    WG_ATTN_KV_BOX, WG_ATTN_Q_BOX, wg_attn_threads, wg_grid_blocks, wg_shared_bytes,
};
use kernels::attention::{ATTN_BR, ATTN_HEAD_DIMS, ATTN_THREADS, grid_blocks, shared_bytes};

/// Which attention kernel a plan launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttentionKernel {
    /// `mma.sync` (sm_80 and later): 64 query rows per block of 4 warps.
    MmaSync,
    /// `wgmma` with `P` from registers (sm_90a): a TMA producer warpgroup and 64 query rows
    /// per consumer warpgroup, 2 consumers (128 rows) for D = 128, 3 (192 rows) for D = 64.
    Wgmma,
}

impl AttentionKernel {
    /// The fastest kernel `gpu` runs: [`AttentionKernel::Wgmma`] on compute capability 9.0
    /// (and the CPU emulator, which reports 9.0), [`AttentionKernel::MmaSync`] otherwise.
    ///
    /// # Errors
    /// A driver error if the compute capability cannot be read.
    pub fn best_for(gpu: &Gpu) -> Result<Self, GpuError> {
        let cc = gpu
            .context()
            .compute_capability()
            .gpu_context("reading the compute capability")?;
        Ok(if (cc.major, cc.minor) == (9, 0) {
            Self::Wgmma
        } else {
            Self::MmaSync
        })
    }

    /// The kernel's name stem in reports (`mma.sync`, `wgmma`).
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::MmaSync => "mma.sync",
            Self::Wgmma => "wgmma",
        }
    }
}

/// The shape of one attention: batch `B`, query heads `H`, key/value heads `H_kv`, sequence
/// length `S` (queries and keys alike), head dimension `D`, and whether it is causal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttentionShape {
    /// `B`.
    pub batch: usize,
    /// `H`, query heads.
    pub heads: usize,
    /// `H_kv`, key/value heads (= `heads` for multi-head attention).
    pub kv_heads: usize,
    /// `S`.
    pub seq_len: usize,
    /// `D` (64 or 128).
    pub head_dim: usize,
    /// Causal masking: query `i` sees keys `j ≤ i` only.
    pub causal: bool,
}

impl AttentionShape {
    /// Multi-head attention (`H_kv` = `H`), not causal.
    #[must_use]
    pub const fn new(batch: usize, heads: usize, seq_len: usize, head_dim: usize) -> Self {
        Self {
            batch,
            heads,
            kv_heads: heads,
            seq_len,
            head_dim,
            causal: false,
        }
    }

    /// The same shape with `kv_heads` key/value heads.
    #[must_use]
    pub const fn with_kv_heads(self, kv_heads: usize) -> Self {
        Self { kv_heads, ..self }
    }

    /// The same shape, causal or not.
    #[must_use]
    pub const fn with_causal(self, causal: bool) -> Self {
        Self { causal, ..self }
    }

    /// Elements of `Q` and of `O`: `B·H·S·D`.
    #[must_use]
    pub const fn q_len(&self) -> usize {
        self.batch * self.heads * self.seq_len * self.head_dim
    }

    /// Elements of `K` and of `V`: `B·H_kv·S·D`.
    #[must_use]
    pub const fn kv_len(&self) -> usize {
        self.batch * self.kv_heads * self.seq_len * self.head_dim
    }

    /// Elements of `L`: `B·H·S`.
    #[must_use]
    pub const fn lse_len(&self) -> usize {
        self.batch * self.heads * self.seq_len
    }

    /// Floating-point operations of the forward pass as FlashAttention's papers and
    /// benchmarks count them: `4·B·H·S²·D` (two matrix products of `2·S²·D` per head),
    /// halved when causal.
    #[must_use]
    pub fn flops(&self) -> f64 {
        let full = 4.0
            * self.batch as f64
            * self.heads as f64
            * (self.seq_len as f64).powi(2)
            * self.head_dim as f64;
        if self.causal { full / 2.0 } else { full }
    }

    /// Checks the rules of the [module docs](self), naming the value that breaks one.
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value and what is allowed.
    pub fn check(&self) -> Result<(), GpuError> {
        let fail = |what: String| Err(GpuError::LaunchConfig(format!("attention: {what}")));
        if !ATTN_HEAD_DIMS.iter().any(|&d| d as usize == self.head_dim) {
            return fail(format!(
                "head dim D = {} is not supported; allowed: {ATTN_HEAD_DIMS:?}",
                self.head_dim
            ));
        }
        for (name, v) in [
            ("batch B", self.batch),
            ("heads H", self.heads),
            ("key/value heads H_kv", self.kv_heads),
            ("sequence length S", self.seq_len),
        ] {
            if v == 0 || v >= 1 << 31 {
                return fail(format!("{name} = {v} must be in 1..2^31"));
            }
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return fail(format!(
                "heads H = {} is not a multiple of key/value heads H_kv = {} (grouped-query \
                 attention needs H_kv to divide H)",
                self.heads, self.kv_heads
            ));
        }
        let blocks = self.seq_len.div_ceil(ATTN_BR as usize) as u128
            * self.batch as u128
            * self.heads as u128;
        if blocks >= 1 << 31 {
            return fail(format!(
                "B·H·ceil(S / {ATTN_BR}) = {blocks} blocks (one per head and {ATTN_BR} query \
                 rows), more than a grid holds (2^31 - 1)"
            ));
        }
        Ok(())
    }

    /// [`AttentionShape::check`], then the buffer lengths: `Q` and `O` at least
    /// [`q_len`](Self::q_len), `K` and `V` at least [`kv_len`](Self::kv_len), `L` at least
    /// [`lse_len`](Self::lse_len) elements (in `lens`, in that order).
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value or the buffer.
    pub fn check_buffers(&self, lens: [usize; 5]) -> Result<(), GpuError> {
        self.check()?;
        let need = [
            self.q_len(),
            self.kv_len(),
            self.kv_len(),
            self.q_len(),
            self.lse_len(),
        ];
        for ((name, len), need) in ["Q", "K", "V", "O", "L"].into_iter().zip(lens).zip(need) {
            if len < need {
                return Err(GpuError::LaunchConfig(format!(
                    "attention: {name} has {len} elements, fewer than the {need} its shape needs \
                     ({self})"
                )));
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for AttentionShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "B = {}, H = {}, H_kv = {}, S = {}, D = {}{}",
            self.batch,
            self.heads,
            self.kv_heads,
            self.seq_len,
            self.head_dim,
            if self.causal { ", causal" } else { "" }
        )
    }
}

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

kernel_table! {
    /// The attention kernels of element type `T`, each resolved in a [`Gpu`]'s module on first use
    /// ([`Gpu::kernels`]): [`AttnElem::D64`], [`AttnElem::D128`], [`AttnElem::WG_D64`],
    /// [`AttnElem::WG_D128`].
    struct AttnKernels<T> {
        d64: ResolvedOf<AttnKernel<T>>,
        d128: ResolvedOf<AttnKernel<T>>,
        wg_d64: ResolvedOf<WgAttnKernel<T>>,
        wg_d128: ResolvedOf<WgAttnKernel<T>>,
    }
}

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

/// One attention forward on fixed buffers, ready to launch: the shape checked, the kernel
/// for its head dimension resolved (in the module variant the device runs) and the launch
/// configuration computed. Borrows the buffers for as long as it lives.
pub struct AttentionPlan<'a, T: AttnElem> {
    shape: AttentionShape,
    kernel: AttentionKernel,
    q: &'a DeviceBuffer<T>,
    k: &'a DeviceBuffer<T>,
    v: &'a DeviceBuffer<T>,
    o: &'a mut DeviceBuffer<T>,
    lse: &'a mut DeviceBuffer<f32>,
    cfg: LaunchConfig,
    launcher: Launcher<T>,
}

/// The launch of one kernel, resolved once.
enum Launcher<T: AttnElem> {
    Mma(TypedFunction<AttnParams<T>, Unsafe>),
    Wgmma {
        function: TypedFunction<WgAttnParams<T>, Unsafe>,
        /// The tensor maps of `Q`, `K` and `V` (they hold the buffers' addresses).
        maps: [DeviceBox<TensorMap>; 3],
    },
}

impl<T: AttnElem> std::fmt::Debug for AttentionPlan<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttentionPlan")
            .field("type", &T::NAME)
            .field("shape", &self.shape)
            .field("kernel", &self.kernel)
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl<'a, T: AttnElem> AttentionPlan<'a, T> {
    /// Plans attention of `shape` on `gpu` reading `q`, `k`, `v` and writing `o` and `lse`
    /// (layouts: [module docs](self)), with the fastest kernel the device runs
    /// ([`AttentionKernel::best_for`]).
    ///
    /// # Errors
    /// As [`AttentionPlan::with_kernel`].
    pub fn new(
        gpu: &Gpu,
        shape: AttentionShape,
        q: &'a DeviceBuffer<T>,
        k: &'a DeviceBuffer<T>,
        v: &'a DeviceBuffer<T>,
        o: &'a mut DeviceBuffer<T>,
        lse: &'a mut DeviceBuffer<f32>,
    ) -> Result<Self, GpuError> {
        let kernel = AttentionKernel::best_for(gpu)?;
        Self::with_kernel(gpu, kernel, shape, q, k, v, o, lse)
    }

    /// [`AttentionPlan::new`] with the kernel `kernel`.
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value if the shape or a buffer length breaks a
    /// rule ([`AttentionShape::check_buffers`]); [`GpuError::KernelArchitecture`] naming the
    /// kernel and both architectures if the device cannot run it (older than sm_80 for
    /// [`AttentionKernel::MmaSync`], anything but sm_90 for [`AttentionKernel::Wgmma`]).
    #[allow(clippy::too_many_arguments)]
    pub fn with_kernel(
        gpu: &Gpu,
        kernel: AttentionKernel,
        shape: AttentionShape,
        q: &'a DeviceBuffer<T>,
        k: &'a DeviceBuffer<T>,
        v: &'a DeviceBuffer<T>,
        o: &'a mut DeviceBuffer<T>,
        lse: &'a mut DeviceBuffer<f32>,
    ) -> Result<Self, GpuError> {
        shape.check_buffers([q.len(), k.len(), v.len(), o.len(), lse.len()])?;
        let d = shape.head_dim as u32;
        let table = gpu.kernels::<AttnKernels<T>>();
        let (batch, heads, seq) = (shape.batch as u32, shape.heads as u32, shape.seq_len as u32);
        // In range: `check` bounds the grid of 64-row blocks below 2³¹, and the `wgmma`
        // grid has half as many.
        let (launcher, cfg) = match kernel {
            AttentionKernel::MmaSync => (
                Launcher::Mma(
                    if d == 64 {
                        table.d64.get(gpu, T::D64)?
                    } else {
                        table.d128.get(gpu, T::D128)?
                    }
                    .clone(),
                ),
                LaunchConfig::new(
                    (grid_blocks(batch, heads, seq), 1),
                    ATTN_THREADS,
                    shared_bytes(d),
                ),
            ),
            AttentionKernel::Wgmma => {
                let function = if d == 64 {
                    table.wg_d64.get(gpu, T::WG_D64)?
                } else {
                    table.wg_d128.get(gpu, T::WG_D128)?
                }
                .clone();
                let heads_kv = shape.batch * shape.kv_heads;
                let rows =
                    [shape.batch * shape.heads, heads_kv, heads_kv].map(|h| h * shape.seq_len);
                // TMA's row coordinates are `i32`.
                if rows[0] >= 1 << 31 {
                    return Err(GpuError::LaunchConfig(format!(
                        "attention: B·H·S = {} rows, more than the wgmma kernel's tensor maps \
                         address (2^31 - 1)",
                        rows[0]
                    )));
                }
                let map = |buf: &DeviceBuffer<T>, rows: usize, bx: [u32; 2], what: &str| {
                    let map = TensorMap::tiled_2d(
                        buf.as_device_ptr(),
                        [shape.head_dim as u64, rows as u64],
                        (shape.head_dim * size_of::<T>()) as u64,
                        bx,
                        TmaSwizzle::B128,
                    )
                    .with_gpu_context(|| format!("the tensor map of {what}"))?;
                    DeviceBox::new(&map)
                        .with_gpu_context(|| format!("uploading the tensor map of {what}"))
                };
                let maps = [
                    map(q, rows[0], WG_ATTN_Q_BOX, "Q")?,
                    map(k, rows[1], WG_ATTN_KV_BOX, "K")?,
                    map(v, rows[2], WG_ATTN_KV_BOX, "V")?,
                ];
                (
                    Launcher::Wgmma { function, maps },
                    LaunchConfig::new(
                        (wg_grid_blocks(batch, heads, seq, d), 1),
                        wg_attn_threads(d),
                        wg_shared_bytes(d),
                    ),
                )
            }
        };
        Ok(Self {
            shape,
            kernel,
            q,
            k,
            v,
            o,
            lse,
            cfg,
            launcher,
        })
    }

    /// Queues the forward pass on `gpu`'s stream (no synchronisation). `gpu` must be the one
    /// the plan was made on.
    ///
    /// # Errors
    /// [`GpuError::Launch`] naming the kernel and its configuration if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        let s = self.shape;
        let head = (
            s.batch as u32,
            s.seq_len as u32,
            s.heads as u32,
            s.kv_heads as u32,
            u32::from(s.causal),
        );
        match &self.launcher {
            Launcher::Mma(function) => {
                let args = (
                    head.0,
                    head.1,
                    head.2,
                    head.3,
                    head.4,
                    self.q,
                    self.k,
                    self.v,
                    &mut *self.o,
                    &mut *self.lse,
                );
                // SAFETY: `check_buffers` checked the shape rules (D the kernel's, counts
                // ≥ 1, H_kv divides H, the grid below 2³¹) and the buffer lengths; device
                // buffers are whole allocations (256-byte aligned); `o` and `lse` are
                // borrowed mutably for the plan's life, so nothing else touches them; the
                // launch shape is the kernel's (`grid_blocks`, `ATTN_THREADS`,
                // `shared_bytes(D)`).
                unsafe { function.launch_unchecked(gpu.stream(), self.cfg, args) }
            }
            Launcher::Wgmma { function, maps } => {
                let [map_q, map_k, map_v] = maps;
                let args = (
                    head.0,
                    head.1,
                    head.2,
                    head.3,
                    head.4,
                    map_q,
                    map_k,
                    map_v,
                    &mut *self.o,
                    &mut *self.lse,
                );
                // SAFETY: as for `mma.sync`, and the maps describe `q`, `k`, `v` (borrowed
                // for the plan's life) as `B·H·S` / `B·H_kv·S` rows of `D` elements with the
                // kernel's boxes and the 128-byte swizzle, written before this launch (a
                // synchronous upload), B·H·S below 2³¹ (checked by `with_kernel`); the
                // launch shape is the kernel's (`wg_grid_blocks`, `wg_attn_threads`,
                // `wg_shared_bytes(D)`), and the sm_90a build caps it at
                // `wg_attn_max_registers(D)` (host/build.rs).
                unsafe { function.launch_unchecked(gpu.stream(), self.cfg, args) }
            }
        }
    }

    /// The launch configuration (grid, block, dynamic shared memory).
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// The shape.
    pub fn shape(&self) -> AttentionShape {
        self.shape
    }

    /// The kernel it launches.
    pub fn kernel(&self) -> AttentionKernel {
        self.kernel
    }
}

/// The output of [`attention`]: `O` `(B, H, S, D)` and `L` `(B, H, S)`.
#[derive(Clone, Debug)]
pub struct AttentionOutput<T> {
    /// `O`, in the input type.
    pub o: Vec<T>,
    /// `L = ln Σ_j exp(q·k_j/√D)` per query row.
    pub lse: Vec<f32>,
}

/// Attention of `shape` on the GPU: uploads `q`, `k`, `v`, runs the fastest kernel the
/// device has ([`AttentionKernel::best_for`]), waits and downloads `O` and `L`.
///
/// # Errors
/// As [`attention_with`].
pub fn attention<T: AttnElem>(
    gpu: &Gpu,
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
) -> Result<AttentionOutput<T>, GpuError> {
    attention_with(gpu, AttentionKernel::best_for(gpu)?, shape, q, k, v)
}

/// [`attention`] with the kernel `kernel`.
///
/// # Errors
/// As [`AttentionPlan::with_kernel`]; [`GpuError::Launch`] (or a driver error) naming the
/// kernel if it fails; errors of the copies.
pub fn attention_with<T: AttnElem>(
    gpu: &Gpu,
    kernel: AttentionKernel,
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
) -> Result<AttentionOutput<T>, GpuError> {
    // The shape first: its element counts are only computed once they are known to fit.
    shape.check()?;
    shape.check_buffers([q.len(), k.len(), v.len(), shape.q_len(), shape.lse_len()])?;
    let up = |x: &[T], len: usize, what: &str| {
        DeviceBuffer::from_slice_async(&x[..len], gpu.stream())
            .with_gpu_context(|| format!("copying {what} to the GPU"))
    };
    let q_d = up(q, shape.q_len(), "Q")?;
    let k_d = up(k, shape.kv_len(), "K")?;
    let v_d = up(v, shape.kv_len(), "V")?;
    let mut o_d = DeviceBuffer::from_slice_async(&vec![T::POISON; shape.q_len()], gpu.stream())
        .gpu_context("allocating O")?;
    let mut l_d = DeviceBuffer::from_slice_async(&vec![f32::NAN; shape.lse_len()], gpu.stream())
        .gpu_context("allocating L")?;
    let mut plan =
        AttentionPlan::with_kernel(gpu, kernel, shape, &q_d, &k_d, &v_d, &mut o_d, &mut l_d)?;
    plan.launch(gpu)?;
    let cfg = plan.config();
    drop(plan);
    gpu.sync_after(&format!("{} attention ({shape})", T::NAME), cfg)?;
    Ok(AttentionOutput {
        o: o_d.as_host_vec().gpu_context("copying O to the host")?,
        lse: l_d.as_host_vec().gpu_context("copying L to the host")?,
    })
}

/// One query row of the `f64` reference: `O[row]` (`D` values) and `L[row]`, with the
/// quantities [`error_bound`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct ReferenceRow {
    /// `O` of the row, exact up to `f64` rounding.
    pub o: Vec<f64>,
    /// `L` of the row.
    pub lse: f64,
    /// `max_j |v_jd|` over the visible keys, per column `d`.
    pub v_max: Vec<f64>,
    /// `max_j Σ_d |q_d·k_jd|` over the visible keys (the scores' condition).
    pub score_abs: f64,
    /// The number of visible keys.
    pub keys: usize,
}

/// Attention in `f64` for the query rows `rows` (each `(head, row)`, `head` in `0..B·H`
/// counting batch-major as the layout does), from the inputs as stored (each element
/// exactly as `f64`), with `common::attention::reference_row`.
///
/// # Panics
/// If the buffers are shorter than `shape` needs or a row is outside it.
pub fn reference_f64<T: AttnElem>(
    shape: AttentionShape,
    q: &[T],
    k: &[T],
    v: &[T],
    rows: &[(usize, usize)],
) -> Vec<ReferenceRow> {
    let AttentionShape {
        heads,
        kv_heads,
        seq_len: s,
        head_dim: d,
        causal,
        ..
    } = shape;
    rows.iter()
        .map(|&(head, row)| {
            let (b, h) = (head / heads, head % heads);
            let kv = b * kv_heads
                + common::attention::kv_head(h as u32, heads as u32, kv_heads as u32) as usize;
            let keys = if causal { row + 1 } else { s };
            let to = |x: &[T]| x.iter().map(|e| e.to_f64()).collect::<Vec<_>>();
            let qr = to(&q[(head * s + row) * d..][..d]);
            let kr = to(&k[kv * s * d..][..keys * d]);
            let vr = to(&v[kv * s * d..][..keys * d]);
            let mut o = vec![0.0; d];
            let scale = 1.0 / (d as f64).sqrt();
            let lse = common::attention::reference_row(&qr, &kr, &vr, d, keys, scale, &mut o);
            let v_max = (0..d)
                .map(|c| (0..keys).map(|j| vr[j * d + c].abs()).fold(0.0, f64::max))
                .collect();
            let score_abs = (0..keys)
                .map(|j| (0..d).map(|c| (qr[c] * kr[j * d + c]).abs()).sum::<f64>())
                .fold(0.0, f64::max);
            ReferenceRow {
                o,
                lse,
                v_max,
                score_abs,
                keys,
            }
        })
        .collect()
}

/// Error bounds `(on O[row][col], on L[row])` of the kernels against [`reference_f64`]'s
/// row `r`, column `col`, for element type `T` and head dimension `d`. With `u = 2⁻²³` (the
/// f32 unit doubled, since tensor-core f32 accumulation may truncate), `γ_n = n·u/(1 − n·u)`
/// (Higham, "Accuracy and Stability of Numerical Algorithms", §3.1) and `u_T` the type's
/// unit roundoff ([`AttnElem::UNIT`]):
/// - each score `x_j = q·k_j/√D` is off by at most `ε = (γ_D + 4u)·A/√D` with
///   `A = max_j Σ|q||k_j|` (the f32 dot product; the 4u the scaling by `log2(e)/√D` and the
///   subtraction of the maximum), and `2^x` adds a relative `2u`
///   (`cuda_std::math::ex2_approx`, checked within 2⁻²² by `ex2_approx_is_within_its_bound`):
///   each weight `p_j` is off by a relative `η = ε + 2u` (to first order), the normalised
///   weights by `2η`, which moves `O` by at most `2η·V` where `V = max_j |v_jd|`;
/// - `P` is rounded to `T` before `P·V` (the sum `l` is not): at most `u_T·V`;
/// - `P·V` sums `n` (visible keys) products in f32: `γ_n·(1 + u_T)·V`;
/// - the division by `l` and the rounding of `O` to `T`: `u·|o| + u_T·(|o| + the above)`.
///
/// `L = m·ln 2 + ln l` is off by `η + γ_n + 2u` (the relative error of `l`, as an
/// absolute error of its log) plus `4u·|L|` (its f32 arithmetic).
#[must_use]
pub fn error_bound<T: AttnElem>(d: usize, r: &ReferenceRow, col: usize) -> (f64, f64) {
    let u = 2f64.powi(-23);
    let gamma = |n: usize| {
        let nu = n as f64 * u;
        nu / (1.0 - nu)
    };
    let eps = (gamma(d) + 4.0 * u) * r.score_abs / (d as f64).sqrt();
    let eta = eps + 2.0 * u;
    let v = r.v_max[col];
    let o = r.o[col].abs();
    let inner = 2.0 * eta * v + T::UNIT * v + gamma(r.keys) * (1.0 + T::UNIT) * v;
    let o_bound = inner + u * o + T::UNIT * (o + inner);
    let l_bound = eta + gamma(r.keys) + 2.0 * u + 4.0 * u * r.lse.abs();
    (o_bound, l_bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(shape: AttentionShape) -> String {
        shape.check().expect_err("must be refused").to_string()
    }

    #[test]
    fn shapes_outside_the_rules_are_refused_by_value() {
        let ok = AttentionShape::new(2, 8, 100, 64);
        ok.check().expect("a supported shape");
        let e = err(AttentionShape { head_dim: 96, ..ok });
        assert!(e.contains("D = 96") && e.contains("[64, 128]"), "{e}");
        let e = err(ok.with_kv_heads(3));
        assert!(e.contains("H = 8") && e.contains("H_kv = 3"), "{e}");
        let e = err(AttentionShape { seq_len: 0, ..ok });
        assert!(e.contains("S = 0") && e.contains("1..2^31"), "{e}");
        let e = err(ok.with_kv_heads(0));
        assert!(e.contains("H_kv = 0"), "{e}");
        // Huge counts are refused without overflowing anything.
        let e = err(AttentionShape::new(1 << 30, 1 << 30, 1 << 30, 128));
        assert!(e.contains("more than a grid holds"), "{e}");
        let e = ok
            .with_kv_heads(2)
            .check_buffers([
                ok.q_len(),
                ok.kv_len(),
                ok.kv_len() / 4 - 1,
                ok.q_len(),
                1600,
            ])
            .expect_err("V too short")
            .to_string();
        assert!(
            e.contains("V has 25599 elements") && e.contains("25600"),
            "{e}"
        );
    }

    #[test]
    fn flops_count_both_products_and_halve_when_causal() {
        let s = AttentionShape::new(4, 32, 4096, 128);
        assert_eq!(s.flops(), 4.0 * 4.0 * 32.0 * 4096.0 * 4096.0 * 128.0);
        assert_eq!(s.with_causal(true).flops(), s.flops() / 2.0);
    }

    #[test]
    fn the_reference_reads_the_shared_kv_head_and_stops_at_the_diagonal() {
        // B = 1, H = 2, H_kv = 1, S = 2, D = 64: both query heads read K/V head 0.
        let shape = AttentionShape::new(1, 2, 2, 64).with_kv_heads(1);
        let q = vec![bf16::from_f32(0.0); shape.q_len()];
        let k = vec![bf16::from_f32(0.0); shape.kv_len()];
        let v: Vec<bf16> = (0..shape.kv_len())
            .map(|i| bf16::from_f32(if i < 64 { 1.0 } else { 3.0 }))
            .collect();
        let rows = reference_f64(shape, &q, &k, &v, &[(1, 1), (1, 0)]);
        // Equal scores: the mean of the visible values, L = ln(keys).
        assert_eq!(rows[0].o[5], 2.0);
        assert!((rows[0].lse - 2f64.ln()).abs() < 1e-15);
        let causal = reference_f64(shape.with_causal(true), &q, &k, &v, &[(1, 0)]);
        assert_eq!(
            (causal[0].o[0], causal[0].lse, causal[0].keys),
            (1.0, 0.0, 1)
        );
        assert_eq!(rows[1].keys, 2);
    }
}
