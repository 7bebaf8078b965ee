//! [`AttentionPlan`]: one attention forward on fixed buffers, planned once (shape checked,
//! kernel resolved from the `Gpu`'s `AttnKernels` table, tensor maps uploaded) and launched
//! many times.

use super::{
    AttentionKernel, AttentionShape, AttnElem, AttnKernel, AttnParams, WgAttnKernel, WgAttnParams,
};
use crate::gpu::{Gpu, GpuError, ResolvedOf, kernel_table};
use cuda_std::launch::Unsafe;
use cuda_std::tile::Tile;
use cust::{
    error::GpuContext,
    function::LaunchConfig,
    launch::TypedFunction,
    memory::{DeviceBox, DeviceBuffer},
    tma::{TensorMap, TensorMapExt},
};
use kernels::attention::wgmma::{
    KvBlock, QBlock, wg_attn_threads, wg_grid_blocks, wg_persistent, wg_shared_bytes,
};
use kernels::attention::{ATTN_THREADS, grid_blocks, shared_bytes};

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

/// `buf` as `rows` rows of `d` elements: its tensor map, encoded for the tile type `Tl` (its
/// box and swizzle, as the kernel loads it) and uploaded for the kernel; `what` names the
/// buffer in errors.
fn upload_map<Tl: Tile, T: AttnElem>(
    buf: &DeviceBuffer<T>,
    rows: usize,
    d: usize,
    what: &str,
) -> Result<DeviceBox<TensorMap>, GpuError> {
    let map = TensorMap::for_tile::<Tl, T>(
        buf.as_device_ptr(),
        [d as u64, rows as u64],
        (d * size_of::<T>()) as u64,
    )
    .with_gpu_context(|| format!("the tensor map of {what}"))?;
    DeviceBox::new(&map).with_gpu_context(|| format!("uploading the tensor map of {what}"))
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
    /// (layouts: [module docs](super)), with the fastest kernel the device runs
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
                let hd = shape.head_dim;
                let maps = [
                    upload_map::<QBlock<T>, T>(q, rows[0], hd, "Q")?,
                    upload_map::<KvBlock<T>, T>(k, rows[1], hd, "K")?,
                    upload_map::<KvBlock<T>, T>(v, rows[2], hd, "V")?,
                ];
                // Persistent (D = 128, not causal): at most one block per multiprocessor,
                // each walking the work tiles (`wg_grid_blocks` of them) in steps of the
                // grid. Causal work tiles differ in length, and the hardware's block
                // scheduler balances them better than a fixed stride: one work tile a block
                // (the same kernel's loop then runs once).
                let work_tiles = wg_grid_blocks(batch, heads, seq, d);
                let grid = if wg_persistent(d) && !shape.causal {
                    work_tiles.min(crate::vector::sm_count(gpu)?)
                } else {
                    work_tiles
                };
                (
                    Launcher::Wgmma { function, maps },
                    LaunchConfig::new((grid, 1), wg_attn_threads(d), wg_shared_bytes(d)),
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
