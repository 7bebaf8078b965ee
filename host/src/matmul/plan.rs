//! [`GemmPlan`]: one product planned on fixed buffers (kernel resolved, launch configuration,
//! tensor maps, for TF32 on `wgmma` the rounded copies), then launched many times.

use super::TcKernel;
use super::elem::{MmaKernel, MmaParams, RoundKernel, TcElem, WgmmaKernel, WgmmaParams};
use super::shape::check_shape;
use crate::gpu::{FunctionOf, Gpu, GpuError, ResolvedOf, kernel_table};
use crate::vector::sm_count;
use cuda_std::launch::Unsafe;
use cuda_std::tile::Tile;
use cust::{
    error::{CudaResult, GpuContext},
    function::{LaunchAttributes, LaunchConfig},
    launch::TypedFunction,
    memory::{DeviceBox, DeviceBuffer, DevicePointer},
    tma::{TensorMap, TensorMapExt, TmaElement},
};
use kernels::gemm_tc::mma_sync::{MMA_BM, MMA_BN, MMA_SHARED_BYTES, MMA_THREADS};
use kernels::gemm_tc::wgmma::{
    PP_BM, PP_BN, PP_SHARED_BYTES, PP_THREADS, WG_BM, WG_BN, WG_CLUSTER_M, WG_SHARED_BYTES,
    WG_THREADS, WgmmaElem, WgmmaOut,
};

/// The tensor map of a row-major matrix of `rows` rows of `cols` elements, rows
/// `row_stride_bytes` apart, at `base`, copied in tiles of the kernel's type `Tl` (box and
/// swizzle from the type: [`TensorMapExt::for_tile`]), uploaded for the kernel (which takes
/// `*const TensorMap`). `what` names the matrix in the errors' context.
///
/// # Errors
/// `CudaError::TensorMap` naming the rule a bad base, stride or shape breaks, or a driver
/// error from encoding or uploading, each in the context "the tensor map of {what}" or
/// "uploading the tensor map of {what}".
pub(crate) fn tile_map<Tl: Tile, E: TmaElement>(
    base: DevicePointer<E>,
    [cols, rows]: [usize; 2],
    row_stride_bytes: usize,
    what: &str,
) -> CudaResult<DeviceBox<TensorMap>> {
    let map =
        TensorMap::for_tile::<Tl, E>(base, [cols as u64, rows as u64], row_stride_bytes as u64)
            .with_gpu_context(|| format!("the tensor map of {what}"))?;
    DeviceBox::new(&map).with_gpu_context(|| format!("uploading the tensor map of {what}"))
}

/// The persistent grid, in blocks, of a `wgmma` kernel with `tile` = (rows, columns) tiles
/// and clusters of `cluster_m` blocks along M on an m×n `C`, when `fit` such clusters of
/// blocks launched as `cfg` are resident at once (`cuOccupancyMaxActiveClusters`): the
/// kernel walks groups of `cluster_m` tile rows × one tile column, a cluster per group at a
/// time, so the grid is `cluster_m · min(fit, groups)` (a whole number of clusters, at least
/// one); more clusters than fit would run as a second wave. `what` names the kernel in the
/// error.
///
/// # Errors
/// [`GpuError::LaunchConfig`] naming `what` and the configuration if `fit` is 0 (not one
/// cluster fits on the device).
fn cluster_grid(
    what: &str,
    (m, n): (u32, u32),
    (tile_m, tile_n): (u32, u32),
    cluster_m: u32,
    (threads, shared_bytes): (u32, u32),
    fit: u32,
) -> Result<u32, GpuError> {
    if fit == 0 {
        return Err(GpuError::LaunchConfig(format!(
            "{what}: no cluster of {cluster_m} blocks of {threads} threads with \
             {shared_bytes} bytes of dynamic shared memory each fits on this device \
             (cuOccupancyMaxActiveClusters = 0)"
        )));
    }
    let groups = m.div_ceil(tile_m).div_ceil(cluster_m) * n.div_ceil(tile_n);
    Ok(cluster_m * fit.min(groups))
}

kernel_table! {
    /// The tensor-core kernels of input type `T`, each resolved in a [`Gpu`]'s module on first use
    /// ([`Gpu::kernels`]): [`TcElem::MMA`], [`TcElem::WGMMA`], [`TcElem::WGMMA_C2`], for
    /// bf16/f16 [`TcElem::WGMMA_PP`] and for TF32 [`TcElem::WGMMA_ROUND`] and the two
    /// [`TcElem::WGMMA_RS`].
    struct GemmKernels<T: TcElem> {
        mma: ResolvedOf<MmaKernel<T::Elem>>,
        wgmma: ResolvedOf<WgmmaKernel<T::Elem>>,
        wgmma_c2: ResolvedOf<WgmmaKernel<T::Elem>>,
        wgmma_pp: ResolvedOf<WgmmaKernel<T::Elem>>,
        wgmma_pp_c2: ResolvedOf<WgmmaKernel<T::Elem>>,
        wgmma_rs: ResolvedOf<WgmmaKernel<T::Elem>>,
        wgmma_rs_c2: ResolvedOf<WgmmaKernel<T::Elem>>,
        round: ResolvedOf<RoundKernel<T::Elem>>,
    }
}

/// TF32's rounded inputs: the rounding kernel (from the [`GemmKernels`] table, resolved
/// once per [`Gpu`]) and the copies of `A` and `B` it writes (m·k and n·k elements); no
/// copy of `A` for the RS form, which rounds `A` in registers.
struct Rounded<T: TcElem> {
    function: FunctionOf<RoundKernel<T::Elem>>,
    a: Option<DeviceBuffer<T::Elem>>,
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
/// docs); a memory-bound pass over the inputs costs less. The RS forms
/// ([`TcKernel::WgmmaRs`], [`TcKernel::WgmmaRsCluster2`]) read `A` as it is and round it in
/// registers, so only `B` is copied and rounded (`n·k` more `f32`s, half the pass's bytes
/// for a square product); `B` stays in shared memory, where `wgmma` would truncate it.
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
    /// row-major (see the [module docs](super)).
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value if the shape breaks a rule
    /// ([`check_shape`]); [`GpuError::KernelArchitecture`] naming the kernel and both
    /// architectures if the device cannot run the family (below sm_80 for
    /// [`TcKernel::MmaSync`], anything but sm_90 for the `wgmma` kernels);
    /// [`GpuError::LaunchConfig`] naming the kernel for an RS form ([`TcKernel::WgmmaRs`],
    /// [`TcKernel::WgmmaRsCluster2`]) of a type other than TF32; [`GpuError::TensorMap`] or
    /// a driver error from encoding
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
            TcKernel::Wgmma
            | TcKernel::WgmmaCluster2
            | TcKernel::WgmmaPingpong
            | TcKernel::WgmmaPingpongCluster2
            | TcKernel::WgmmaRs
            | TcKernel::WgmmaRsCluster2 => {
                let cluster_m = kernel.cluster_m();
                let a_in_registers = kernel.a_in_registers();
                let pingpong = kernel.is_pingpong();
                let function = match (a_in_registers, T::WGMMA_RS) {
                    _ if pingpong => match T::WGMMA_PP {
                        Some([pp, _]) if cluster_m == 1 => table.wgmma_pp.get(gpu, pp)?,
                        Some([_, pp_c2]) => table.wgmma_pp_c2.get(gpu, pp_c2)?,
                        None => {
                            return Err(GpuError::LaunchConfig(format!(
                                "{} GEMM: the {kernel} kernel exists for bf16 and f16 only; \
                                 use the wgmma kernel",
                                T::NAME
                            )));
                        }
                    },
                    (false, _) if cluster_m == 1 => table.wgmma.get(gpu, T::WGMMA)?,
                    (false, _) => table.wgmma_c2.get(gpu, T::WGMMA_C2)?,
                    (true, Some([rs, _])) if cluster_m == 1 => table.wgmma_rs.get(gpu, rs)?,
                    (true, Some([_, rs_c2])) => table.wgmma_rs_c2.get(gpu, rs_c2)?,
                    (true, None) => {
                        return Err(GpuError::LaunchConfig(format!(
                            "{} GEMM: the {kernel} kernel (A rounded to TF32 in registers) \
                             exists for TF32 only; use the {} kernel",
                            T::NAME,
                            if cluster_m == 1 { "wgmma" } else { "wgmma c2" }
                        )));
                    }
                }
                .clone();
                let row_bytes = k * size_of::<T::Elem>();
                // TF32: the maps describe rounded copies of A (but for the RS form, which
                // rounds A in registers) and B, refreshed each launch.
                let rounded = match T::WGMMA_ROUND {
                    None => None,
                    Some(round) => {
                        let what = "allocating the TF32-rounded copies of A and B";
                        // SAFETY: `T::Elem` is `DeviceCopy` (any bits); every launch rounds all
                        // of `A` and `B` into the copies before the product reads them, in
                        // stream order.
                        let (ra, rb) = unsafe {
                            (
                                (!a_in_registers).then(|| DeviceBuffer::uninitialized(m * k)),
                                DeviceBuffer::uninitialized(n * k),
                            )
                        };
                        Some(Rounded {
                            function: table.round.get(gpu, round)?.clone(),
                            a: ra.transpose().gpu_context(what)?,
                            b: rb.gpu_context(what)?,
                        })
                    }
                };
                let (a_in, b_in) = rounded
                    .as_ref()
                    .map_or((a, b), |r| (r.a.as_ref().unwrap_or(a), &r.b));
                // The maps copy the kernel's stage tiles: `A` and `B` whole without
                // clusters, each block of a cluster its share of `B` (`BHalf`).
                type In<T> = <T as TcElem>::WgmmaIn;
                let (a_in, b_in) = (a_in.as_device_ptr(), b_in.as_device_ptr());
                let map_a =
                    tile_map::<<In<T> as WgmmaElem>::AStage, _>(a_in, [k, m], row_bytes, "A")?;
                let map_b = if pingpong && cluster_m == 1 {
                    tile_map::<<In<T> as WgmmaElem>::BStagePp, _>(b_in, [k, n], row_bytes, "B")?
                } else if pingpong {
                    tile_map::<<In<T> as WgmmaElem>::BHalfPp, _>(b_in, [k, n], row_bytes, "B")?
                } else if cluster_m == 1 {
                    tile_map::<<In<T> as WgmmaElem>::BStage, _>(b_in, [k, n], row_bytes, "B")?
                } else {
                    debug_assert_eq!(cluster_m, WG_CLUSTER_M);
                    tile_map::<<In<T> as WgmmaElem>::BHalf, _>(b_in, [k, n], row_bytes, "B")?
                };
                // C goes out through TMA where its row stride is a multiple of 16 bytes
                // (TMA's rule), in the kernel's store box; otherwise the kernel stores it
                // from registers.
                let c_row_bytes = n * size_of::<T::Elem>();
                let map_c = if !c_row_bytes.is_multiple_of(16) {
                    None
                } else if pingpong {
                    Some(tile_map::<<T::WgmmaC as WgmmaOut>::CBoxPp, _>(
                        c.as_device_ptr(),
                        [n, m],
                        c_row_bytes,
                        "C",
                    )?)
                } else {
                    Some(tile_map::<<T::WgmmaC as WgmmaOut>::CBox, _>(
                        c.as_device_ptr(),
                        [n, m],
                        c_row_bytes,
                        "C",
                    )?)
                };
                let (tile, block) = if pingpong {
                    ((PP_BM, PP_BN), (PP_THREADS, PP_SHARED_BYTES))
                } else {
                    ((WG_BM, WG_BN), (WG_THREADS, WG_SHARED_BYTES))
                };
                let (blocks, max_active_clusters) = if cluster_m == 1 {
                    let tiles = m32.div_ceil(tile.0) * n32.div_ceil(tile.1);
                    (tiles.min(sm_count(gpu)?), None)
                } else {
                    let fit = function.function().max_active_clusters(
                        block.0.into(),
                        block.1,
                        [cluster_m, 1, 1],
                    )?;
                    let what = format!("{} GEMM ({kernel}), kernel `{}`", T::NAME, function.name());
                    let grid = cluster_grid(&what, (m32, n32), tile, cluster_m, block, fit)?;
                    (grid, Some(fit))
                };
                let cfg = LaunchConfig::new((blocks, 1), block.0, block.1);
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
    /// over `B` into the plan's copies, then the product; two for the RS forms (`B` only).
    /// The product is a programmatic dependent launch of the rounding of `B` (its blocks may
    /// start while the pass finishes, and wait for it before they load the inputs).
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
                    // The RS form rounds A in registers: no copy of A.
                    if let Some(ra) = &mut r.a {
                        r.function
                            .launch(s, cfg(mk), (self.a, ra))
                            .gpu_context("rounding A to TF32")?;
                    }
                    r.function
                        .launch(s, cfg(nk), (self.b, &mut r.b))
                        .gpu_context("rounding B to TF32")?;
                }
                // Without a map of C the kernel does not read `map_c`: pass A's.
                let (map_a, map_b) = (&*map_a, &*map_b);
                let (map_c, c_by_tma) = map_c.as_ref().map_or((map_a, 0u32), |m| (m, 1));
                let args = (m, n, k, map_a, map_b, map_c, &mut *self.c, c_by_tma);
                // TF32: a programmatic dependent launch right after the rounding of `B`
                // (nothing queued in between), so that the product's prologue overlaps the
                // pass's last blocks (`round_tf32` triggers its dependents; the product's
                // producer waits for the pass before its first load: the `wgmma` module's
                // docs).
                let dependent = rounded.is_some();
                let attributes = LaunchAttributes::from([*cluster_m, 1, 1])
                    .programmatic_stream_serialization(dependent);
                // SAFETY: as above; the maps describe `a`, `b` and, with `c_by_tma`, `c`
                // (all borrowed for the plan's life; C's rows a multiple of 16 bytes) with
                // this element type's size, built from the kernel's tile types (`B`'s for
                // this cluster size), and were written before this launch (a synchronous
                // upload); the launch shape is the module's (`WG_THREADS`,
                // `WG_SHARED_BYTES`, a 1-D grid; for the ping-pong kernels, in `cfg`,
                // `PP_THREADS` and `PP_SHARED_BYTES`, B's map from `BStagePp` and C's from
                // `CBoxPp`; for the `_c2` kernels clusters of
                // `[WG_CLUSTER_M, 1, 1]` and a grid that is a multiple of it), and the
                // sm_90a build caps the kernel at `WG_MAX_REGISTERS` (host/build.rs). With
                // programmatic stream serialization (TF32 only, whose kernels wait for the
                // kernel before them before loading `A` or `B`), that kernel is the rounding
                // of `B`, which reads `b` and writes the rounded copy, and accesses neither
                // `c` nor the maps.
                unsafe {
                    if *cluster_m == 1 && !dependent {
                        function.launch_unchecked(gpu.stream(), cfg, args)
                    } else {
                        function.launch_ex_unchecked(
                            gpu.stream(),
                            cfg,
                            attributes,
                            cfg.shared_mem_bytes,
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

    /// For a kernel with clusters ([`TcKernel::WgmmaCluster2`], [`TcKernel::WgmmaRsCluster2`]), how many of its clusters
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_grids_hold_whole_clusters_no_more_than_fit_or_have_work() {
        // 1 tile: one cluster (its second block computes a row past m).
        let grid = |m, n, fit| {
            cluster_grid(
                "k",
                (m, n),
                (WG_BM, WG_BN),
                2,
                (WG_THREADS, WG_SHARED_BYTES),
                fit,
            )
        };
        assert_eq!(grid(1, 1, 66).unwrap(), 2);
        // 3 tile rows (odd) × 2 tile columns: 2 groups of rows × 2 columns.
        assert_eq!(grid(257, 512, 66).unwrap(), 8);
        // 8192²: 64 × 32 tiles, 32 × 32 groups; 60 clusters fit (H100 figures vary).
        assert_eq!(grid(8192, 8192, 60).unwrap(), 120);
        // Odd tile rows × many columns: 17 rows → 9 groups × 9 columns = 81 > 66.
        assert_eq!(grid(2176, 2056, 66).unwrap(), 132);
        // The ping-pong tiles (128 × 176): 3 tile rows → 2 groups × 2 columns at n = 352.
        let pp = (PP_THREADS, PP_SHARED_BYTES);
        assert_eq!(
            cluster_grid("k", (257, 352), (PP_BM, PP_BN), 2, pp, 66).unwrap(),
            8
        );
        let err = cluster_grid(
            "bf16 GEMM (wgmma c2), kernel `gemm_wgmma_bf16_c2`",
            (64, 64),
            (WG_BM, WG_BN),
            2,
            (WG_THREADS, WG_SHARED_BYTES),
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
}
