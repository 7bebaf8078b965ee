//! Tensor-core matrix products on the GPU: `C = A·Bᵀ` in bf16, f16 (f32 accumulation, the
//! result rounded to the input type) or TF32 ([`Tf32`]: f32 in memory, in and out; the
//! tensor cores read each input rounded to TF32), with the kernels of `kernels::gemm_tc`.
//! The type parameter names the arithmetic: `gemm::<Tf32>` on `f32` data is the TF32
//! product, while `f32` alone means FP32 everywhere in the crate
//! ([`crate::vector::sgemm_dev`]).
//!
//! Layout ("TN", both operands K-major): `A` is m×k row-major (`a[i·k + p]`), `B` is n×k
//! row-major (`b[j·k + p]`), `C` is m×n row-major (`c[i·n + j]`), so
//! `c[i·n + j] = Σ_p a[i·k + p] · b[j·k + p]`.
//!
//! Two kernel families ([`TcKernel`]):
//! - [`TcKernel::Wgmma`]: `wgmma` + TMA + mbarriers, warp specialised and persistent
//!   (sm_90a only: H100, H200; and the CPU emulator, which emulates those units);
//!   [`TcKernel::WgmmaCluster2`] is the same kernel with
//!   clusters of two blocks along M that share the `B` tile (TMA multicast), its persistent
//!   grid sized by the cluster occupancy query;
//! - [`TcKernel::MmaSync`]: warp-level `mma.sync` with a `cp.async` pipeline (sm_80 and
//!   later).
//!
//! Shapes: `m`, `n`, `k` ≥ 1 and below 2³¹; `k` a multiple of 8 for bf16/f16 and of 4 for
//! f32 (every row of `A` and `B` a whole number of 16-byte chunks, which `cp.async` and TMA
//! move); other `m` and `n` are fine (edge tiles are clipped). A shape outside these rules is
//! an error naming the value, before any launch.
//!
//! Two levels, as in [`crate::vector`]: [`GemmPlan`] (made once per shape and buffers,
//! launched many times, no synchronisation: what a benchmark times) and [`gemm`] (upload,
//! run, download). [`reference_f64`] and [`error_bound`] are the CPU side the tests compare
//! with.

use crate::gpu::{FunctionOf, Gpu, GpuError, ResolvedOf};
use crate::vector::sm_count;
use cuda_std::half::{bf16, f16};
use cuda_std::launch::{ConstPtr, Kernel, MutPtr, Out, Safe, Slice, Unsafe, Value};
use cust::{
    error::GpuContext,
    function::LaunchConfig,
    launch::TypedFunction,
    memory::{DeviceBox, DeviceBuffer, DeviceCopy},
    tma::{TensorMap, TensorMapExt, TmaElement, TmaSwizzle},
};
use kernels::gemm_tc::mma_sync::{MMA_BM, MMA_BN, MMA_SHARED_BYTES, MMA_THREADS};
use kernels::gemm_tc::wgmma::{
    WG_BM, WG_BN, WG_CLUSTER_M, WG_SHARED_BYTES, WG_THREADS, a_box, b_box_for_cluster, c_box,
};

// `check_shape` counts the tiles of both families with one tile shape.
const _: () = assert!(WG_BM == MMA_BM && WG_BN == MMA_BN);

/// Which tensor-core kernel family runs a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TcKernel {
    /// `wgmma.mma_async` fed by TMA (sm_90a: H100, H200), `kernels::gemm_tc::wgmma`,
    /// without clusters: a persistent grid of one block per multiprocessor.
    Wgmma,
    /// The `wgmma` kernel with clusters of [`WG_CLUSTER_M`] = 2 blocks along M that share
    /// each `B` tile (each block loads half and multicasts it to both; the `_c2` entry
    /// points of `kernels::gemm_tc::wgmma`; sm_90a). Its persistent grid is two blocks per
    /// cluster that fits on the device at once (`cuOccupancyMaxActiveClusters`), and no
    /// more clusters than there are (pair of tile rows, tile column) groups.
    WgmmaCluster2,
    /// Warp-level `mma.sync` (sm_80 and later), `kernels::gemm_tc::mma_sync`.
    MmaSync,
}

impl TcKernel {
    /// Every kernel, in the order of the benchmark's rows.
    pub const ALL: [Self; 3] = [Self::Wgmma, Self::WgmmaCluster2, Self::MmaSync];

    /// The name in logs and benchmark rows: `wgmma`, `wgmma c2`, `mma.sync`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Wgmma => "wgmma",
            Self::WgmmaCluster2 => "wgmma c2",
            Self::MmaSync => "mma.sync",
        }
    }

    /// Blocks per cluster along M: 2 for [`TcKernel::WgmmaCluster2`], else 1 (no
    /// clusters).
    #[must_use]
    pub const fn cluster_m(self) -> u32 {
        match self {
            Self::WgmmaCluster2 => WG_CLUSTER_M,
            Self::Wgmma | Self::MmaSync => 1,
        }
    }
}

impl std::fmt::Display for TcKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// `bf16`, `f16` or `tf32`.
    const NAME: &'static str;
    /// `k` must be a multiple of this (16 bytes of a row).
    const K_MULTIPLE: usize;
    /// The `mma.sync` kernel.
    const MMA: MmaKernel<Self::Elem>;
    /// The `wgmma` kernel.
    const WGMMA: WgmmaKernel<Self::Elem>;
    /// The `wgmma` kernel for clusters of [`WG_CLUSTER_M`] blocks along M.
    const WGMMA_C2: WgmmaKernel<Self::Elem>;
    /// For TF32: the kernel that rounds `A` and `B` to TF32 into scratch copies, which the
    /// `wgmma` kernels then read (see [`GemmPlan`]); `None` for bf16/f16.
    const WGMMA_ROUND: Option<RoundKernel<Self::Elem>> = None;
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
/// memory, the name and `k` multiple, the kernels (`mma.sync`, `wgmma`, `wgmma` in clusters,
/// and for TF32 the rounding pass), the poison value, the units and the conversions.
macro_rules! impl_tc_elem {
    ($(
        $marker:ty => $elem:ty {
            name: $name:literal, k_multiple: $k:literal,
            kernels: ($mma:ident, $wgmma:ident, $wgmma_c2:ident $(, round: $round:ident)?),
            poison: $poison:expr, output_unit: $output_unit:expr, input_unit: $input_unit:expr,
            to_f64: |$x:ident| $to_f64:expr, from_f32: |$y:ident| $from_f32:expr $(,)?
        }
    )*) => {$(
        impl TcElem for $marker {
            type Elem = $elem;
            const NAME: &'static str = $name;
            const K_MULTIPLE: usize = $k;
            const MMA: MmaKernel<$elem> = kernels::gemm_tc::mma_sync::$mma;
            const WGMMA: WgmmaKernel<$elem> = kernels::gemm_tc::wgmma::$wgmma;
            const WGMMA_C2: WgmmaKernel<$elem> = kernels::gemm_tc::wgmma::$wgmma_c2;
            $(const WGMMA_ROUND: Option<RoundKernel<$elem>> =
                Some(kernels::gemm_tc::wgmma::$round);)?
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
        name: "bf16", k_multiple: 8,
        kernels: (gemm_mma_bf16, gemm_wgmma_bf16, gemm_wgmma_bf16_c2),
        poison: bf16::from_bits(0x7fc1), output_unit: 1.0 / 256.0, input_unit: 0.0,
        to_f64: |x| f64::from(x.to_f32()), from_f32: |x| bf16::from_f32(x),
    }
    f16 => f16 {
        name: "f16", k_multiple: 8,
        kernels: (gemm_mma_f16, gemm_wgmma_f16, gemm_wgmma_f16_c2),
        poison: f16::from_bits(0x7e01), output_unit: 1.0 / 2048.0, input_unit: 0.0,
        to_f64: |x| f64::from(x.to_f32()), from_f32: |x| f16::from_f32(x),
    }
    Tf32 => f32 {
        name: "tf32", k_multiple: 4,
        kernels: (gemm_mma_tf32, gemm_wgmma_tf32, gemm_wgmma_tf32_c2, round: round_tf32),
        poison: f32::from_bits(0x7fc0_0dad), output_unit: 1.0 / 16_777_216.0,
        input_unit: 1.0 / 2048.0,
        to_f64: |x| f64::from(x), from_f32: |x| x,
    }
}

/// Checks a product's shape and buffer lengths, naming the value that breaks a rule: the
/// rules of the [module docs](self), the buffers at least m·k, n·k and m·n elements (in
/// `lens`, for `A`, `B`, `C`), and fewer than 2³¹ output tiles.
///
/// # Errors
/// [`GpuError::LaunchConfig`] naming the dimension or buffer.
pub fn check_shape<T: TcElem>(
    m: usize,
    n: usize,
    k: usize,
    lens: [usize; 3],
) -> Result<(), GpuError> {
    check_dims(T::NAME, T::K_MULTIPLE, m, n, k, lens)
}

/// [`check_shape`] for the GEMM named `name` (in the error: `"{name} GEMM: …"`) whose `k`
/// must be a multiple of `k_multiple` (16 bytes of a row); shared with
/// [`crate::matmul_fp8`].
pub(crate) fn check_dims(
    name: &str,
    k_multiple: usize,
    m: usize,
    n: usize,
    k: usize,
    lens: [usize; 3],
) -> Result<(), GpuError> {
    let fail = |what: String| Err(GpuError::LaunchConfig(format!("{name} GEMM: {what}")));
    for (name, v) in [("m", m), ("n", n), ("k", k)] {
        if v == 0 || v >= 1 << 31 {
            return fail(format!("{name} = {v} must be in 1..2^31"));
        }
    }
    if !k.is_multiple_of(k_multiple) {
        return fail(format!(
            "k = {k} must be a multiple of {k_multiple} (rows of A and B must be whole \
             16-byte chunks for cp.async and TMA); pad k with zeros"
        ));
    }
    // Both families tile C in 128×256 blocks, counted in 32 bits (and a grid holds fewer
    // than 2³¹ blocks).
    let tiles = m.div_ceil(MMA_BM as usize) * n.div_ceil(MMA_BN as usize);
    if tiles >= 1 << 31 {
        return fail(format!(
            "m = {m} and n = {n} make {tiles} tiles of 128×256, more than a grid holds (2^31 - 1)"
        ));
    }
    for ((name, len), need) in ["A", "B", "C"]
        .into_iter()
        .zip(lens)
        .zip([m * k, n * k, m * n])
    {
        if len < need {
            return fail(format!(
                "{name} has {len} elements, fewer than the {need} its shape (m = {m}, n = \
                 {n}, k = {k}) needs"
            ));
        }
    }
    Ok(())
}

/// The persistent grid, in blocks, of the `wgmma` kernel with clusters of `cluster_m` blocks
/// along M on an m×n `C`, when `fit` such clusters are resident at once
/// (`cuOccupancyMaxActiveClusters`): the kernel walks groups of `cluster_m` tile rows × one
/// tile column, a cluster per group at a time, so the grid is `cluster_m · min(fit,
/// groups)` (a whole number of clusters, at least one); more clusters than fit would run as
/// a second wave. `what` names the kernel in the error.
///
/// # Errors
/// [`GpuError::LaunchConfig`] naming `what` and the configuration if `fit` is 0 (not one
/// cluster fits on the device).
fn cluster_grid(what: &str, m: u32, n: u32, cluster_m: u32, fit: u32) -> Result<u32, GpuError> {
    if fit == 0 {
        return Err(GpuError::LaunchConfig(format!(
            "{what}: no cluster of {cluster_m} blocks of {WG_THREADS} threads with \
             {WG_SHARED_BYTES} bytes of dynamic shared memory each fits on this device \
             (cuOccupancyMaxActiveClusters = 0)"
        )));
    }
    let groups = m.div_ceil(WG_BM).div_ceil(cluster_m) * n.div_ceil(WG_BN);
    Ok(cluster_m * fit.min(groups))
}

/// The tensor-core kernels of input type `T`, each resolved in a [`Gpu`]'s module on first
/// use ([`Gpu::kernels`]): [`TcElem::MMA`], [`TcElem::WGMMA`], [`TcElem::WGMMA_C2`] and,
/// for TF32, [`TcElem::WGMMA_ROUND`].
struct GemmKernels<T: TcElem> {
    mma: ResolvedOf<MmaKernel<T::Elem>>,
    wgmma: ResolvedOf<WgmmaKernel<T::Elem>>,
    wgmma_c2: ResolvedOf<WgmmaKernel<T::Elem>>,
    round: ResolvedOf<RoundKernel<T::Elem>>,
}

impl<T: TcElem> Default for GemmKernels<T> {
    fn default() -> Self {
        Self {
            mma: Default::default(),
            wgmma: Default::default(),
            wgmma_c2: Default::default(),
            round: Default::default(),
        }
    }
}

/// TF32's rounded inputs: the rounding kernel (from the [`GemmKernels`] table, resolved
/// once per [`Gpu`]) and the copies of `A` and `B` it writes (m·k and n·k elements).
struct Rounded<T: TcElem> {
    function: FunctionOf<RoundKernel<T::Elem>>,
    a: DeviceBuffer<T::Elem>,
    b: DeviceBuffer<T::Elem>,
}

/// The launch of one family, resolved once.
enum Launcher<T: TcElem> {
    Mma(TypedFunction<MmaParams<T::Elem>, Unsafe>),
    Wgmma {
        function: TypedFunction<WgmmaParams<T::Elem>, Unsafe>,
        map_a: DeviceBox<TensorMap>,
        map_b: DeviceBox<TensorMap>,
        /// The store map of `C`, where its rows are a multiple of 16 bytes (TMA's rule).
        map_c: Option<DeviceBox<TensorMap>>,
        /// Blocks per cluster along M (1: launched without clusters).
        cluster_m: u32,
        /// TF32: the rounding kernel and the rounded copies of `A` and `B` that the tensor
        /// maps describe.
        rounded: Option<Rounded<T>>,
        /// With clusters, how many fit on the device at once (the grid's bound).
        max_active_clusters: Option<u32>,
    },
}

/// One product `C = A·Bᵀ` on fixed buffers, ready to launch: the kernel resolved (in the
/// module variant the device runs), its launch configuration computed and, for
/// [`TcKernel::Wgmma`] and [`TcKernel::WgmmaCluster2`], the tensor maps of `A`, `B` and
/// (where its rows are a multiple of 16 bytes, so that TMA can store it) `C` encoded and
/// uploaded, and for the latter the clusters that fit at once queried. Borrows the
/// buffers for as long as it lives (the tensor maps hold their addresses).
///
/// TF32 on `wgmma` also allocates rounded copies of `A` and `B` (`(m + n)·k` more `f32`s
/// of device memory, for the plan's life), which each launch refreshes with
/// `kernels::gemm_tc::wgmma::round_tf32` before the product reads them: rounding to
/// nearest TF32 in the kernel's shared memory cost half its speed (see that module's
/// docs); a memory-bound pass over the inputs costs less.
pub struct GemmPlan<'a, T: TcElem> {
    m: u32,
    n: u32,
    k: u32,
    a: &'a DeviceBuffer<T::Elem>,
    b: &'a DeviceBuffer<T::Elem>,
    c: &'a mut DeviceBuffer<T::Elem>,
    cfg: LaunchConfig,
    launcher: Launcher<T>,
}

impl<T: TcElem> std::fmt::Debug for GemmPlan<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GemmPlan")
            .field("type", &T::NAME)
            .field("m", &self.m)
            .field("n", &self.n)
            .field("k", &self.k)
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl<'a, T: TcElem> GemmPlan<'a, T> {
    /// Plans `C = A·Bᵀ` with `kernel` on `gpu` for `a` (m×k), `b` (n×k) and `c` (m×n), all
    /// row-major (see the [module docs](self)).
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value if the shape breaks a rule
    /// ([`check_shape`]); [`GpuError::KernelArchitecture`] naming the kernel and both
    /// architectures if the device cannot run the family (below sm_80 for
    /// [`TcKernel::MmaSync`], anything but sm_90 for [`TcKernel::Wgmma`] and
    /// [`TcKernel::WgmmaCluster2`]); [`GpuError::TensorMap`] or a driver error from encoding
    /// or uploading the tensor maps; for [`TcKernel::WgmmaCluster2`], a driver error from the
    /// cluster occupancy query, or [`GpuError::LaunchConfig`] naming the kernel and its
    /// configuration if not one cluster fits.
    ///
    /// The CPU emulator runs every variant's host body, the sm_90a kernels included (it
    /// emulates `wgmma`, TMA, `mbarrier` and clusters), so it plans every variant; the
    /// cluster variant's grid is sized by the emulator's answer to the occupancy query
    /// (one cluster per host core).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        kernel: TcKernel,
        m: usize,
        n: usize,
        k: usize,
        a: &'a DeviceBuffer<T::Elem>,
        b: &'a DeviceBuffer<T::Elem>,
        c: &'a mut DeviceBuffer<T::Elem>,
    ) -> Result<Self, GpuError> {
        check_shape::<T>(m, n, k, [a.len(), b.len(), c.len()])?;
        // In range: checked above.
        let (m32, n32, k32) = (m as u32, n as u32, k as u32);
        let table = gpu.kernels::<GemmKernels<T>>();
        let (cfg, launcher) = match kernel {
            TcKernel::MmaSync => {
                let function = table.mma.get(gpu, T::MMA)?.clone();
                let tiles = m32.div_ceil(MMA_BM) * n32.div_ceil(MMA_BN);
                let cfg = LaunchConfig::new((tiles, 1), MMA_THREADS, MMA_SHARED_BYTES);
                (cfg, Launcher::Mma(function))
            }
            TcKernel::Wgmma | TcKernel::WgmmaCluster2 => {
                let cluster_m = kernel.cluster_m();
                let function = if cluster_m == 1 {
                    table.wgmma.get(gpu, T::WGMMA)?
                } else {
                    table.wgmma_c2.get(gpu, T::WGMMA_C2)?
                }
                .clone();
                let elem_bytes = size_of::<T::Elem>() as u32;
                let row_bytes = (k * size_of::<T::Elem>()) as u64;
                let map = |buf: &DeviceBuffer<T::Elem>, rows: usize, bx: [u32; 2], what: &str| {
                    let map = TensorMap::tiled_2d(
                        buf.as_device_ptr(),
                        [k as u64, rows as u64],
                        row_bytes,
                        bx,
                        TmaSwizzle::B128,
                    )
                    .with_gpu_context(|| format!("the tensor map of {what}"))?;
                    DeviceBox::new(&map)
                        .with_gpu_context(|| format!("uploading the tensor map of {what}"))
                };
                // TF32: the maps describe rounded copies of A and B, refreshed each launch.
                let rounded = match T::WGMMA_ROUND {
                    None => None,
                    Some(round) => {
                        let what = "allocating the TF32-rounded copies of A and B";
                        // SAFETY: `T::Elem` is `DeviceCopy` (any bits); every launch rounds all
                        // of `A` and `B` into the copies before the product reads them, in
                        // stream order.
                        let (ra, rb) = unsafe {
                            (
                                DeviceBuffer::uninitialized(m * k),
                                DeviceBuffer::uninitialized(n * k),
                            )
                        };
                        Some(Rounded {
                            function: table.round.get(gpu, round)?.clone(),
                            a: ra.gpu_context(what)?,
                            b: rb.gpu_context(what)?,
                        })
                    }
                };
                let (a_in, b_in) = rounded.as_ref().map_or((a, b), |r| (&r.a, &r.b));
                let map_a = map(a_in, m, a_box(elem_bytes), "A")?;
                let map_b = map(b_in, n, b_box_for_cluster(elem_bytes, cluster_m), "B")?;
                // C goes out through TMA where its row stride is a multiple of 16 bytes
                // (TMA's rule); otherwise the kernel stores it from registers.
                let c_row_bytes = (n * size_of::<T::Elem>()) as u64;
                let map_c = if c_row_bytes.is_multiple_of(16) {
                    let map = TensorMap::tiled_2d(
                        c.as_device_ptr(),
                        [n as u64, m as u64],
                        c_row_bytes,
                        c_box(elem_bytes),
                        TmaSwizzle::B128,
                    )
                    .gpu_context("the tensor map of C")?;
                    Some(DeviceBox::new(&map).gpu_context("uploading the tensor map of C")?)
                } else {
                    None
                };
                let (blocks, max_active_clusters) = if cluster_m == 1 {
                    let tiles = m32.div_ceil(WG_BM) * n32.div_ceil(WG_BN);
                    (tiles.min(sm_count(gpu)?), None)
                } else {
                    let fit = function.function().max_active_clusters(
                        WG_THREADS.into(),
                        WG_SHARED_BYTES,
                        [cluster_m, 1, 1],
                    )?;
                    let what = format!("{} GEMM ({kernel}), kernel `{}`", T::NAME, function.name());
                    (cluster_grid(&what, m32, n32, cluster_m, fit)?, Some(fit))
                };
                let cfg = LaunchConfig::new((blocks, 1), WG_THREADS, WG_SHARED_BYTES);
                (
                    cfg,
                    Launcher::Wgmma {
                        function,
                        map_a,
                        map_b,
                        map_c,
                        cluster_m,
                        max_active_clusters,
                        rounded,
                    },
                )
            }
        };
        Ok(Self {
            m: m32,
            n: n32,
            k: k32,
            a,
            b,
            c,
            cfg,
            launcher,
        })
    }

    /// Queues the product on `gpu`'s stream (no synchronisation). `gpu` must be the one the
    /// plan was made on. TF32 on `wgmma` queues three launches: `round_tf32` over `A` and
    /// over `B` into the plan's copies, then the product.
    ///
    /// # Errors
    /// [`GpuError::Launch`] naming the kernel and its configuration if a launch fails (for
    /// the rounding launches, in the context "rounding A to TF32" or "... B ...").
    pub fn launch(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        let (m, n, k, cfg) = (self.m, self.n, self.k, self.cfg);
        match &mut self.launcher {
            // SAFETY: `check_shape` checked the shape rules and the buffer lengths; device
            // buffers are whole allocations (256-byte aligned); `c` is borrowed mutably for
            // the plan's life, so nothing else touches it; the launch shape is the module's
            // (grid of every tile, `MMA_THREADS`, `MMA_SHARED_BYTES`).
            Launcher::Mma(f) => unsafe {
                f.launch_unchecked(gpu.stream(), cfg, (m, n, k, self.a, self.b, &mut *self.c))
            },
            Launcher::Wgmma {
                function,
                map_a,
                map_b,
                map_c,
                cluster_m,
                rounded,
                ..
            } => {
                if let Some(r) = rounded {
                    let (mk, nk) = (m as usize * k as usize, n as usize * k as usize);
                    let s = gpu.stream();
                    // The STREAM kernels' launch shape (16-byte packs, one per thread); only
                    // TF32 (`f32` elements) has a rounding kernel.
                    let cfg = crate::vector::stream_config::<f32>;
                    r.function
                        .launch(s, cfg(mk), (self.a, &mut r.a))
                        .gpu_context("rounding A to TF32")?;
                    r.function
                        .launch(s, cfg(nk), (self.b, &mut r.b))
                        .gpu_context("rounding B to TF32")?;
                }
                // Without a map of C the kernel does not read `map_c`: pass A's.
                let (map_a, map_b) = (&*map_a, &*map_b);
                let (map_c, c_by_tma) = map_c.as_ref().map_or((map_a, 0u32), |m| (m, 1));
                let args = (m, n, k, map_a, map_b, map_c, &mut *self.c, c_by_tma);
                // SAFETY: as above; the maps describe `a`, `b` and, with `c_by_tma`, `c`
                // (all borrowed for the plan's life; C's rows a multiple of 16 bytes) with
                // this element type, the module's boxes (`B`'s for this cluster size) and
                // the 128-byte swizzle, and were written before this launch (a synchronous
                // upload); the launch shape is the module's (`WG_THREADS`,
                // `WG_SHARED_BYTES`, a 1-D grid; for the `_c2` kernels clusters of
                // `[WG_CLUSTER_M, 1, 1]` and a grid that is a multiple of it), and the
                // sm_90a build caps the kernel at `WG_MAX_REGISTERS` (host/build.rs).
                unsafe {
                    if *cluster_m == 1 {
                        function.launch_unchecked(gpu.stream(), cfg, args)
                    } else {
                        function.launch_ex_unchecked(
                            gpu.stream(),
                            cfg,
                            [*cluster_m, 1, 1],
                            WG_SHARED_BYTES,
                            args,
                        )
                    }
                }
            }
        }
    }

    /// The launch configuration (grid, block, dynamic shared memory).
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// For a kernel with clusters ([`TcKernel::WgmmaCluster2`]), how many of its clusters
    /// the device holds at once (`cuOccupancyMaxActiveClusters`, queried when the plan was
    /// made; the grid is at most that many clusters); `None` for the others.
    pub fn max_active_clusters(&self) -> Option<u32> {
        match &self.launcher {
            Launcher::Wgmma {
                max_active_clusters,
                ..
            } => *max_active_clusters,
            Launcher::Mma(_) => None,
        }
    }
}

/// `C = A·Bᵀ` on the GPU (`a` m×k, `b` n×k, result m×n, row-major): uploads `a` and `b`,
/// runs `kernel`, waits and downloads `C`.
///
/// # Errors
/// As [`GemmPlan::new`]; [`GpuError::Launch`] (or a driver error) naming the kernel if it
/// fails; errors of the copies.
pub fn gemm<T: TcElem>(
    gpu: &Gpu,
    kernel: TcKernel,
    m: usize,
    n: usize,
    k: usize,
    a: &[T::Elem],
    b: &[T::Elem],
) -> Result<Vec<T::Elem>, GpuError> {
    check_shape::<T>(m, n, k, [a.len(), b.len(), m * n])?;
    let a_d = DeviceBuffer::from_slice_async(&a[..m * k], gpu.stream())
        .gpu_context("copying A to the GPU")?;
    let b_d = DeviceBuffer::from_slice_async(&b[..n * k], gpu.stream())
        .gpu_context("copying B to the GPU")?;
    let mut c_d = DeviceBuffer::from_slice_async(&vec![T::POISON; m * n], gpu.stream())
        .gpu_context("allocating C")?;
    let mut plan = GemmPlan::<T>::new(gpu, kernel, m, n, k, &a_d, &b_d, &mut c_d)?;
    plan.launch(gpu)?;
    let cfg = plan.config();
    drop(plan);
    gpu.sync_after(&format!("{} GEMM ({kernel})", T::NAME), cfg)?;
    c_d.as_host_vec().gpu_context("copying C to the host")
}

/// `C[i][j] = Σ_p A[i][p]·B[j][p]` in `f64` (exact for the products; the sum rounded in
/// `f64`) for the elements `(i, j)` in `at` (`a` m×k, `b` n×k, row-major). TF32's
/// rounding of the inputs is not modelled: the f32 values are used as given, and
/// [`error_bound`] covers the difference.
pub fn reference_f64<T: TcElem>(
    k: usize,
    a: &[T::Elem],
    b: &[T::Elem],
    at: &[(usize, usize)],
) -> Vec<f64> {
    rows_dot_f64(k, a, b, at, T::to_f64)
}

/// `Σ_p f(A[i][p])·f(B[j][p])` in `f64` for the elements `(i, j)` in `at` (`a` m×k, `b` n×k,
/// row-major): the reference of every GEMM here, `f` widening one element to `f64`.
pub(crate) fn rows_dot_f64<T: Copy>(
    k: usize,
    a: &[T],
    b: &[T],
    at: &[(usize, usize)],
    f: impl Fn(T) -> f64,
) -> Vec<f64> {
    at.iter()
        .map(|&(i, j)| {
            let (ra, rb) = (&a[i * k..(i + 1) * k], &b[j * k..(j + 1) * k]);
            ra.iter().zip(rb).map(|(&x, &y)| f(x) * f(y)).sum()
        })
        .collect()
}

/// The error bound of one output element against the exact product: with
/// `s = Σ_p |a_ip|·|b_jp|` and `c` the exact value,
/// `|ĉ − c| ≤ (2·u_in + u_in² + γ_k)·s + u_out·(|c| + (2·u_in + u_in² + γ_k)·s)`,
/// where `u_in` is [`TcElem::INPUT_UNIT`] (each input's relative error on its way into the
/// tensor core), `γ_k = k·u/(1 − k·u)` with `u = 2⁻²³` (the standard bound of a `k`-term
/// f32 sum, Higham, "Accuracy and Stability of Numerical Algorithms", §3.1, with `u` doubled
/// because the tensor cores' f32 accumulation may truncate instead of rounding to nearest)
/// and `u_out` is [`TcElem::OUTPUT_UNIT`] (the final rounding to the output type).
#[must_use]
pub fn error_bound<T: TcElem>(k: usize, abs_sum: f64, exact: f64) -> f64 {
    let u = 2f64.powi(-23);
    let ku = k as f64 * u;
    let gamma = ku / (1.0 - ku);
    let inputs = 2.0 * T::INPUT_UNIT + T::INPUT_UNIT * T::INPUT_UNIT;
    let accumulate = (inputs + gamma) * abs_sum;
    accumulate + T::OUTPUT_UNIT * (exact.abs() + accumulate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_outside_the_rules_are_refused_by_value() {
        let err = check_shape::<bf16>(200, 328, 100, [200 * 100, 328 * 100, 200 * 328])
            .expect_err("k = 100 is not a multiple of 8")
            .to_string();
        assert!(
            err.contains("k = 100") && err.contains("multiple of 8"),
            "{err}"
        );
        let err = check_shape::<Tf32>(4, 4, 0, [0, 0, 16])
            .expect_err("k = 0")
            .to_string();
        assert!(err.contains("k = 0"), "{err}");
        let err = check_shape::<f16>(16, 16, 16, [256, 255, 256])
            .expect_err("B too short")
            .to_string();
        assert!(err.contains("B has 255 elements"), "{err}");
        check_shape::<Tf32>(3, 5, 4, [12, 20, 15]).expect("tf32 needs k % 4 only");
    }

    #[test]
    fn the_bound_grows_with_k_and_the_output_unit() {
        let small = error_bound::<bf16>(64, 100.0, 10.0);
        assert!(
            small > 10.0 / 256.0 && small < 10.0 / 256.0 + 0.01,
            "{small}"
        );
        assert!(error_bound::<Tf32>(4096, 100.0, 10.0) > error_bound::<Tf32>(64, 100.0, 10.0));
        // TF32 inputs dominate: two inputs rounded to nearest, about 2·2⁻¹¹ = 2⁻¹⁰ of
        // Σ|a||b|.
        let tf = error_bound::<Tf32>(64, 1000.0, 0.0);
        assert!((0.95..1.05).contains(&tf), "{tf}");
    }

    #[test]
    fn cluster_grids_hold_whole_clusters_no_more_than_fit_or_have_work() {
        // 1 tile: one cluster (its second block computes a row past m).
        assert_eq!(cluster_grid("k", 1, 1, 2, 66).unwrap(), 2);
        // 3 tile rows (odd) × 2 tile columns: 2 groups of rows × 2 columns.
        assert_eq!(cluster_grid("k", 257, 512, 2, 66).unwrap(), 8);
        // 8192²: 64 × 32 tiles, 32 × 32 groups; 60 clusters fit (H100 figures vary).
        assert_eq!(cluster_grid("k", 8192, 8192, 2, 60).unwrap(), 120);
        // Odd tile rows × many columns: 17 rows → 9 groups × 9 columns = 81 > 66.
        assert_eq!(cluster_grid("k", 2176, 2056, 2, 66).unwrap(), 132);
        let err = cluster_grid(
            "bf16 GEMM (wgmma c2), kernel `gemm_wgmma_bf16_c2`",
            64,
            64,
            2,
            0,
        )
        .expect_err("no cluster fits")
        .to_string();
        assert!(
            err.contains("gemm_wgmma_bf16_c2")
                && err.contains("cluster of 2 blocks of 384 threads")
                && err.contains("cuOccupancyMaxActiveClusters = 0"),
            "{err}"
        );
    }

    #[test]
    fn kernel_names_and_cluster_sizes() {
        let names: Vec<String> = TcKernel::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["wgmma", "wgmma c2", "mma.sync"]);
        assert_eq!(TcKernel::WgmmaCluster2.cluster_m(), 2);
        assert_eq!(TcKernel::Wgmma.cluster_m(), 1);
        assert_eq!(TcKernel::MmaSync.cluster_m(), 1);
    }

    #[test]
    fn the_reference_sums_rows_of_a_and_b() {
        let a: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0];
        let b: Vec<f32> = vec![5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        // m = 1, n = 2, k = 4.
        assert_eq!(
            reference_f64::<Tf32>(4, &a, &b, &[(0, 0), (0, 1)]),
            [70.0, 110.0]
        );
    }
}
