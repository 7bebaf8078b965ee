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
//!   grid sized by the cluster occupancy query; for bf16/f16 also
//!   [`TcKernel::WgmmaPingpong`], whose two consumer warpgroups compute tiles of their own
//!   (128 × 176) and take turns, and [`TcKernel::WgmmaPingpongCluster2`], the same in
//!   clusters of two sharing `B`;
//!   for TF32 also [`TcKernel::WgmmaRs`] and [`TcKernel::WgmmaRsCluster2`], the same two
//!   with `A` rounded to TF32 in registers instead of by a pass before the product
//!   ([`GemmPlan`]);
//! - [`TcKernel::MmaSync`]: warp-level `mma.sync` with a `cp.async` pipeline (sm_80 and
//!   later).
//!
//! [`TcKernel::best_for`] picks the fastest of them for a type and shape on a GPU (from the
//! measured table: the ping-pong form in clusters for bf16/f16 where it has at least two
//! tiles per multiprocessor, else the cooperative kernel; TF32's RS form; `mma.sync` off
//! sm_90).
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
//!
//! The parts, each re-exported here: the input types and kernel handles ([`TcElem`],
//! `matmul/elem.rs`), the shape rules ([`check_shape`], `matmul/shape.rs`), the plan
//! (`matmul/plan.rs`) and the CPU reference (`matmul/reference.rs`); this file holds
//! [`TcKernel`] and [`gemm`].

use crate::gpu::{Gpu, GpuError};
use cust::{error::GpuContext, memory::DeviceBuffer};
use kernels::gemm_tc::wgmma::{PP_BM, PP_BN, WG_CLUSTER_M};

mod elem;
mod plan;
mod reference;
mod shape;

pub use elem::{MmaKernel, MmaParams, RoundKernel, TcElem, Tf32, WgmmaKernel, WgmmaParams};
pub use plan::GemmPlan;
pub(crate) use plan::tile_map;
pub(crate) use reference::rows_dot_f64;
pub use reference::{error_bound, reference_f64};
pub(crate) use shape::check_dims;
pub use shape::check_shape;

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
    /// bf16 and f16: the `wgmma` kernel's ping-pong form (the `_pp` entry points of
    /// `kernels::gemm_tc::wgmma`; sm_90a): each of the two consumer warpgroups computes
    /// its own 128 × 176 tiles and they take turns, so one stores its tile while the
    /// other's `wgmma` run; a persistent grid of one block per multiprocessor, no
    /// clusters.
    WgmmaPingpong,
    /// bf16 and f16: [`TcKernel::WgmmaPingpong`] with clusters of [`WG_CLUSTER_M`] = 2
    /// blocks along M that share each `B` tile, as [`TcKernel::WgmmaCluster2`] does for the
    /// cooperative kernel (the `_pp_c2` entry points).
    WgmmaPingpongCluster2,
    /// TF32 only: [`TcKernel::Wgmma`] with `A` read from registers (the `wgmma` RS form,
    /// `kernels::gemm_tc::wgmma::gemm_wgmma_tf32_rs`): each consumer warpgroup loads its
    /// rows of a stage of `A` (plain `f32`) into registers and rounds them to TF32 there,
    /// so only `B` goes through the rounding pass before the product. Same products and
    /// sums, so the same bits, as [`TcKernel::Wgmma`].
    WgmmaRs,
    /// TF32 only: [`TcKernel::WgmmaCluster2`] with `A` from registers, as
    /// [`TcKernel::WgmmaRs`] (`gemm_wgmma_tf32_rs_c2`).
    WgmmaRsCluster2,
    /// Warp-level `mma.sync` (sm_80 and later), `kernels::gemm_tc::mma_sync`.
    MmaSync,
}

impl TcKernel {
    /// Every kernel, in the order of the benchmark's rows (each type runs those in its
    /// [`TcElem::KERNELS`]).
    pub const ALL: [Self; 7] = [
        Self::Wgmma,
        Self::WgmmaCluster2,
        Self::WgmmaPingpong,
        Self::WgmmaPingpongCluster2,
        Self::WgmmaRs,
        Self::WgmmaRsCluster2,
        Self::MmaSync,
    ];

    /// The name in logs and benchmark rows: `wgmma`, `wgmma c2`, `wgmma pp`, `wgmma pp c2`,
    /// `wgmma rs`, `wgmma rs c2`, `mma.sync`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Wgmma => "wgmma",
            Self::WgmmaCluster2 => "wgmma c2",
            Self::WgmmaPingpong => "wgmma pp",
            Self::WgmmaPingpongCluster2 => "wgmma pp c2",
            Self::WgmmaRs => "wgmma rs",
            Self::WgmmaRsCluster2 => "wgmma rs c2",
            Self::MmaSync => "mma.sync",
        }
    }

    /// Blocks per cluster along M: 2 for [`TcKernel::WgmmaCluster2`],
    /// [`TcKernel::WgmmaPingpongCluster2`] and [`TcKernel::WgmmaRsCluster2`], else 1 (no
    /// clusters).
    #[must_use]
    pub const fn cluster_m(self) -> u32 {
        match self {
            Self::WgmmaCluster2 | Self::WgmmaPingpongCluster2 | Self::WgmmaRsCluster2 => {
                WG_CLUSTER_M
            }
            Self::Wgmma | Self::WgmmaPingpong | Self::WgmmaRs | Self::MmaSync => 1,
        }
    }

    /// Whether this is a `wgmma` kernel (sm_90a), with or without clusters or `A` in
    /// registers.
    #[must_use]
    pub const fn is_wgmma(self) -> bool {
        !matches!(self, Self::MmaSync)
    }

    /// Whether this is the ping-pong form of the `wgmma` kernel, with or without clusters
    /// (bf16/f16 only).
    #[must_use]
    pub const fn is_pingpong(self) -> bool {
        matches!(self, Self::WgmmaPingpong | Self::WgmmaPingpongCluster2)
    }

    /// Whether the `wgmma` kernel takes `A` from registers (the RS form, TF32 only).
    #[must_use]
    pub const fn a_in_registers(self) -> bool {
        matches!(self, Self::WgmmaRs | Self::WgmmaRsCluster2)
    }
}

impl TcKernel {
    /// The fastest kernel for an m×n product of type `T` on `gpu`, by
    /// [`TcKernel::choose`], with `gpu`'s compute capability and multiprocessor count.
    ///
    /// # Errors
    /// A driver error if the compute capability or the multiprocessor count cannot be read.
    pub fn best_for<T: TcElem>(gpu: &Gpu, m: usize, n: usize) -> Result<Self, GpuError> {
        let cc = gpu
            .context()
            .compute_capability()
            .gpu_context("reading the compute capability")?;
        let sms = crate::vector::sm_count(gpu)?;
        Ok(Self::choose::<T>((cc.major, cc.minor), sms, m, n))
    }

    /// The fastest kernel for an m×n product of type `T` on a GPU of compute capability
    /// `cc` with `sms` multiprocessors, from the GEMM table of one H200 run (README,
    /// 2026-11-30, `bench --gemm-only --precision-gemm all`):
    /// - not compute capability 9.0: [`TcKernel::MmaSync`] (the `wgmma` kernels are sm_90a);
    /// - TF32: [`TcKernel::WgmmaRs`] (0.87–0.99× cuBLAS against 0.73–0.96× for
    ///   [`TcKernel::Wgmma`], which rounds both operands in a pass);
    /// - bf16 and f16: [`TcKernel::WgmmaPingpongCluster2`] when there are at least two of its
    ///   128 × 176 tiles per multiprocessor (0.98–1.03× cuBLAS at 4096³, 8192³ and the
    ///   transformer shapes), else [`TcKernel::Wgmma`] (at 2048³, 192 tiles on 132
    ///   multiprocessors: 0.98–0.99× against 0.73–0.74× for the ping-pong form, whose
    ///   warpgroups would mostly wait for tiles).
    #[must_use]
    pub fn choose<T: TcElem>(cc: (u32, u32), sms: u32, m: usize, n: usize) -> Self {
        if cc != (9, 0) {
            return Self::MmaSync;
        }
        if T::WGMMA_RS.is_some() {
            return Self::WgmmaRs;
        }
        let pp_tiles = m.div_ceil(PP_BM as usize) * n.div_ceil(PP_BN as usize);
        if T::WGMMA_PP.is_some() && pp_tiles >= 2 * sms as usize {
            Self::WgmmaPingpongCluster2
        } else {
            Self::Wgmma
        }
    }
}

impl std::fmt::Display for TcKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choice_follows_the_table() {
        use cuda_std::half::{bf16, f16};
        // An H200: 132 multiprocessors. 2048² has 16 × 12 = 192 ping-pong tiles (< 264).
        for (m, n, want) in [
            (2048, 2048, TcKernel::Wgmma),
            (4096, 4096, TcKernel::WgmmaPingpongCluster2),
            (8192, 8192, TcKernel::WgmmaPingpongCluster2),
            (4096, 14336, TcKernel::WgmmaPingpongCluster2),
            // 2 · 132 = 264 tiles exactly: 12 rows × 22 columns of 128 × 176.
            (12 * 128, 22 * 176, TcKernel::WgmmaPingpongCluster2),
            (12 * 128, 21 * 176, TcKernel::Wgmma),
        ] {
            assert_eq!(TcKernel::choose::<bf16>((9, 0), 132, m, n), want, "{m}×{n}");
            assert_eq!(TcKernel::choose::<f16>((9, 0), 132, m, n), want, "{m}×{n}");
        }
        assert_eq!(
            TcKernel::choose::<Tf32>((9, 0), 132, 8192, 8192),
            TcKernel::WgmmaRs
        );
        assert_eq!(
            TcKernel::choose::<Tf32>((9, 0), 132, 64, 64),
            TcKernel::WgmmaRs
        );
        for cc in [(8, 0), (8, 9), (10, 0), (12, 0)] {
            assert_eq!(
                TcKernel::choose::<bf16>(cc, 132, 8192, 8192),
                TcKernel::MmaSync
            );
            assert_eq!(
                TcKernel::choose::<Tf32>(cc, 132, 8192, 8192),
                TcKernel::MmaSync
            );
        }
        // Every choice is a kernel the type has.
        for m in [1, 1000, 100_000] {
            let k = TcKernel::choose::<bf16>((9, 0), 132, m, m);
            assert!(<bf16 as TcElem>::KERNELS.contains(&k));
            let k = TcKernel::choose::<Tf32>((9, 0), 132, m, m);
            assert!(<Tf32 as TcElem>::KERNELS.contains(&k));
        }
    }

    #[test]
    fn kernel_names_and_cluster_sizes() {
        let names: Vec<String> = TcKernel::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "wgmma",
                "wgmma c2",
                "wgmma pp",
                "wgmma pp c2",
                "wgmma rs",
                "wgmma rs c2",
                "mma.sync"
            ]
        );
        assert_eq!(TcKernel::WgmmaCluster2.cluster_m(), 2);
        assert_eq!(TcKernel::WgmmaRsCluster2.cluster_m(), 2);
        assert_eq!(TcKernel::Wgmma.cluster_m(), 1);
        assert_eq!(TcKernel::WgmmaRs.cluster_m(), 1);
        assert_eq!(TcKernel::WgmmaPingpong.cluster_m(), 1);
        assert_eq!(TcKernel::WgmmaPingpongCluster2.cluster_m(), 2);
        assert_eq!(TcKernel::MmaSync.cluster_m(), 1);
        // The RS form exists for TF32 only.
        assert!(Tf32::KERNELS.contains(&TcKernel::WgmmaRs));
        assert!(!<cuda_std::half::bf16 as TcElem>::KERNELS.contains(&TcKernel::WgmmaRs));
        assert!(!<cuda_std::half::f16 as TcElem>::KERNELS.contains(&TcKernel::WgmmaRsCluster2));
        let planned = TcKernel::ALL.iter().filter(|k| Tf32::KERNELS.contains(k));
        assert_eq!(planned.count(), 5);
    }
}
