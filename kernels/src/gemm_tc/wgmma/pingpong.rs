//! The ping-pong form of the `wgmma` GEMM (bf16 and f16): each consumer warpgroup computes
//! whole tiles of its own, 128 × [`PP_BN`](super::PP_BN) = 176, and the two take turns, so that one
//! warpgroup's epilogue runs while the other's `wgmma` keep the tensor cores busy
//! (CUTLASS's `KernelTmaWarpSpecializedPingpong`; cuBLASLt's fastest kernels for the
//! bench's transformer shapes on an H200 have this shape, `nvjet_sm90_tst_176x128_…` and
//! `…_168x128_…` without `coop`, their tensor pipes 96–97 % active under Nsight Compute
//! against 87–92 % for its cooperative kernels, 2026-11-29).
//!
//! Design, against the cooperative body (`body`), whose two consumer warpgroups split one
//! 128 × 256 tile and so run their epilogues together while the tensor cores idle:
//! - the producer (one thread of warpgroup 0, `setmaxnreg` 24) walks the block's tiles
//!   `b`, `b + G`, `b + 2G`, … (`G` the grid) in the grouped order of
//!   [`tile_coords`](crate::gemm_tc::tile_coords) and loads every K step of each into the
//!   next stage of a [`PP_STAGES`](super::PP_STAGES)-stage ring: `A`'s 128 rows and `B`'s 176 rows of 128 bytes
//!   (the tiles `WgmmaElem::AStage` and `WgmmaElem::BStagePp`);
//! - consumer warpgroup `c` (`setmaxnreg` 240) takes the block's tiles `c`, `c + 2`, … of
//!   that walk: per K step it waits for the stage, issues 4 × 2 `m64n176k16` (its rows
//!   0–63 and 64–127, one accumulator tile each: 2 × 88 `f32` a thread), commits, and with
//!   `wgmma.wait_group 1` releases the previous stage (one arrival per warp: the empty
//!   barriers count 4). After its tile it skips the other warpgroup's `k_tiles` stages
//!   ([`PipelineState::advance_by`]) and stores its 128 × 176 tile of `C`: where `C`'s rows
//!   are a multiple of 16 bytes (`c_by_tma`), in four boxes of 64 × 88 (`WgmmaOut::CBoxPp`)
//!   written to its shared-memory box buffer (not swizzled: free of bank conflicts at rows
//!   of 176 bytes) and stored by TMA, which clips at `C`'s edges; otherwise from registers
//!   (pairs of adjacent elements, clipped).
//!
//! The issue loop is as lean as cuBLASLt's: the consumer's index comes from a shuffle of
//! lane 0 (warp-uniform to `ptxas`), and each K step's descriptors are one addition from the
//! stage's ([`MatrixDescriptor::add_bytes_in_window`]), so stage addresses and descriptors
//! live in uniform registers and `ptxas` 12.9 puts one `UIADD3.64` between the `HGMMA`s, as
//! in the `nvjet` kernel (one `UIADD3`). Before, each `HGMMA` took about ten instructions
//! (masks, `R2UR` moves, the thread index read again): under Nsight Compute (clocks locked,
//! one H200, 2026-11-30) the `_pp_c2` kernel ran BF16 8192×8192×2048 in 444.7 µs against
//! `nvjet_sm90_tst_168x128_64x5_1x2_h_bz_TNN`'s 400.2 µs, tensor pipe 86.5 % against 95.7 %,
//! executing 63.7 M instructions against 30.0 M. With the lean loop (same H200 session, two
//! rounds alternating with the build before, ratios to cuBLASLt's fastest algorithm):
//! BF16 8192×8192×2048 0.985 / 0.986× against 0.924 / 0.934×, 4096×14336×4096 0.988 /
//! 0.999× against 0.927 / 0.930×; FP16 1.006× and 0.994× against 0.924× and 0.912×.
//!
//! Two *order* mbarriers make the warpgroups take turns: a warpgroup starts a tile's main
//! loop only after the other has waited for the last stage of its tile before (and says so
//! by arriving on the first's order barrier, one arrival per warp, before it drains its last
//! `wgmma` group and stores), so the tensor cores run one warpgroup's products while the
//! other stores. The turns also keep the ring's parity waits sound: a warpgroup that skips
//! the other's `k_tiles` stages would otherwise wait on a stage whose full barrier may be
//! two phases behind, where a parity wait cannot tell the phases apart (it took the first
//! version, without them, into a hang on an H200 at 2048³, where both warpgroups of a block
//! had tiles and `k_tiles` exceeded the stages; the tests had no such shape).
//!
//! Clusters (the `_pp_c2` entry points), as the cooperative body's: clusters of
//! [`WG_CLUSTER_M`] = 2 blocks along M walk the same sequence of (pair of tile rows, tile
//! column) groups, block `r` of a cluster computing tile row `2g + r` of group `g`; each
//! block's producer loads its `A` tile and 88 of `B`'s 176 rows (`WgmmaElem::BHalfPp`) and
//! multicasts them into the same stage of both blocks, so `B`'s L2 reads halve; the empty
//! barriers count both blocks' consumer warps (8), and each consumer warp releases a stage
//! in both blocks. The consumers' turns are each block's own. A cluster barrier after the
//! inits and another before exit keep each block's barriers alive while the other uses
//! them.
//!
//! Launch: grid `(min(#SMs, tiles), 1, 1)` without clusters; with clusters `2 · min(clusters
//! that fit at once, groups)` blocks in clusters of `(2, 1, 1)`;
//! [`PP_THREADS`](super::PP_THREADS) threads, [`PP_SHARED_BYTES`](super::PP_SHARED_BYTES) of
//! dynamic shared memory, built with at most 168 registers a thread (`.maxnreg`).

use super::elem::{WgmmaElem, WgmmaOut};
use super::epilogue::warpgroup_sync;
use super::{
    PP_BM, PP_BN, PP_C_BOX_COLS, PP_C_BYTES, PP_STAGE_BYTES, PP_STAGES, WG_A_STAGE_BYTES,
    WG_BK_BYTES, WG_CLUSTER_M,
};
use crate::gemm_tc::tile_coords;
use cuda_std::barrier::{MBarrier, Phase};
use cuda_std::cluster;
use cuda_std::half::{bf16, f16};
use cuda_std::prelude::*;
use cuda_std::shared::shared_addr;
use cuda_std::shared::window::SharedAddr;
use cuda_std::tile::{AccTile, Pipeline, PipelineState, Tile, Tiles};
use cuda_std::tma::{self, TensorMap};
use cuda_std::wgmma::{self, MatrixDescriptor};

/// An input type of the ping-pong GEMM: its `m64n176` `wgmma`.
pub trait PingpongElem: WgmmaElem + WgmmaOut {
    /// `acc (+)= A·B` for a 64 × 176 tile and 16 elements of K (`m64n176k16`).
    ///
    /// # Safety
    /// As `cuda_std::wgmma::mma_m64n176k16_f32_bf16`.
    unsafe fn mma_n176(
        acc: &mut AccTile<88>,
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    );
}

/// `impl PingpongElem` for each 16-bit type, with its `m64n176k16`.
macro_rules! impl_pingpong {
    ($($t:ty => $mma:ident),* $(,)?) => {$(
        impl PingpongElem for $t {
            #[inline(always)]
            unsafe fn mma_n176(
                acc: &mut AccTile<88>,
                a: MatrixDescriptor,
                b: MatrixDescriptor,
                accumulate: bool,
            ) {
                // SAFETY: forwarded.
                unsafe { wgmma::$mma::<false, false>(&mut acc.regs, a, b, accumulate) }
            }
        }
    )*};
}

impl_pingpong!(bf16 => mma_m64n176k16_f32_bf16, f16 => mma_m64n176k16_f32_f16);

/// The ring position: stage index and the parity its next wait is for.
type Ring = PipelineState<PP_STAGES>;

/// Stores a 64 × 176 accumulator tile at rows `row0..`, columns `col0..` of `C` (m × n,
/// row-major), pairs of adjacent elements, skipping what lies outside `C`.
///
/// # Safety
/// `c` holds m·n elements, aligned to a pair when `n` is even; no other thread writes
/// these elements.
#[inline(always)]
unsafe fn store_from_registers<T: PingpongElem>(
    acc: &AccTile<88>,
    t: u32,
    c: *mut T,
    (m, n): (u32, u32),
    (row0, col0): (u32, u32),
) {
    acc.for_each_pair(t, |r, col, v0, v1| {
        let (row, col) = (row0 + r, col0 + col);
        if row < m && col < n {
            // SAFETY: (row, col) inside C; with n even, col + 1 < n too (col is even) and
            // the pair is aligned to its size.
            unsafe {
                let p = c.add(row as usize * n as usize + col as usize);
                if n.is_multiple_of(2) {
                    T::store_pair(p, v0, v1);
                } else {
                    *p = T::from_f32(v0);
                    if col + 1 < n {
                        *p.add(1) = T::from_f32(v1);
                    }
                }
            }
        }
    });
}

/// Writes the columns `88·P..88·P + 88` of a 64 × 176 accumulator tile, rounded to `T`,
/// into the store box at shared address `buf` (`T::CBoxPp`: rows of 88 elements, not
/// swizzled).
///
/// # Safety
/// `buf` is this warpgroup's box buffer (`T::CBoxPp::BYTES`), which no store still reads;
/// all 128 threads of the warpgroup write their own elements.
#[inline(always)]
unsafe fn stage_box<T: PingpongElem, const P: u32>(acc: &AccTile<88>, t: u32, buf: u32) {
    acc.for_each_pair(t, |r, col, v0, v1| {
        if col / PP_C_BOX_COLS == P {
            let x = (col - P * PP_C_BOX_COLS) * T::BYTES;
            // SAFETY: inside the box (r < 64, x + 2·BYTES ≤ its row), aligned to the pair;
            // each (r, col) belongs to one thread.
            unsafe {
                T::store_pair_shared(
                    SharedAddr::from_bits(buf + r * T::CBoxPp::ROW_BYTES + x),
                    v0,
                    v1,
                );
            }
        }
    });
}

/// The ping-pong kernel body for element type `T` and clusters of `CLUSTER` blocks along M
/// (1: none; 2: [`WG_CLUSTER_M`], the `_c2` entry points; see the [module docs](self)).
///
/// # Safety
/// With `CLUSTER` = 2 the launch has clusters of `(2, 1, 1)` and `B`'s map the tile
/// `T::BHalfPp`'s box; otherwise:
/// `map_a`, `map_b`: 64-byte-aligned tensor maps in global memory describing `A` (dims
/// `[k, m]`) and `B` (dims `[k, n]`), built from the tiles `T::AStage` and `T::BStagePp`;
/// if `c_by_tma`, `map_c` such a map of `C` (dims `[n, m]`, rows a multiple of 16 bytes)
/// at `c`, built from the tile `T::CBoxPp` (else not read); `c` an allocation of at least m·n elements, 16-byte aligned, that nothing else accesses
/// during the launch; `m`, `n`, `k` ≥ 1, `k` a multiple of 8; launched with the module's
/// launch shape.
#[inline(always)]
pub(super) unsafe fn gemm_pingpong<T: PingpongElem, const CLUSTER: u32>(
    m: u32,
    n: u32,
    k: u32,
    map_a: *const TensorMap,
    map_b: *const TensorMap,
    map_c: *const TensorMap,
    c: *mut T,
    c_by_tma: bool,
) {
    const {
        assert!(2 * T::CBoxPp::BYTES <= PP_C_BYTES);
        assert!(T::CBoxPp::COLS == PP_C_BOX_COLS);
        assert!(CLUSTER == 1 || CLUSTER == WG_CLUSTER_M);
        assert!(T::BHalfPp::BYTES * WG_CLUSTER_M == T::BStagePp::BYTES);
        assert!(<(T::AStage, T::BStagePp) as Tiles>::TX_BYTES == PP_STAGE_BYTES);
        assert!(T::AStage::BYTES == WG_A_STAGE_BYTES);
        assert!(T::AHalf::BYTES * 2 == WG_A_STAGE_BYTES);
    }
    let tid = thread_idx_x();
    let warpgroup = tid / 128;
    // Block `rank` of a cluster computes tile row `CLUSTER·g + rank` of group `g`; the walk
    // is over groups of `CLUSTER` tile rows × one tile column (single tiles without
    // clusters), the same sequence in every block of a cluster.
    let rank = if CLUSTER == 1 { 0 } else { cluster::ctarank() };
    let b_rows = PP_BN / CLUSTER;
    let tiles_m = m.div_ceil(PP_BM);
    let tiles_n = n.div_ceil(PP_BN);
    let groups_m = tiles_m.div_ceil(CLUSTER);
    let tiles = groups_m * tiles_n;
    let first_tile = block_idx_x() / CLUSTER;
    let step = grid_dim_x() / CLUSTER;
    let elem_bytes = size_of::<T>() as u32;
    let k_tiles = (k * elem_bytes).div_ceil(WG_BK_BYTES);
    let k_elems = WG_BK_BYTES / elem_bytes;

    // The stages start at the first 1024-byte boundary of the dynamic shared memory (the
    // swizzle atom); the ring's barriers follow them.
    let raw: *mut u8 = dynamic_shared::<u8>();
    let pad = (1024 - (shared_addr(raw) & 1023)) & 1023;
    // SAFETY: `PP_SHARED_BYTES` reserves 1024 bytes of slack for `pad`.
    let smem = unsafe { raw.add(pad as usize) };
    let smem_addr = shared_addr(smem);
    // The epilogue's box buffers (one per consumer warpgroup) follow the stages, then the
    // ring's barriers and the two order barriers.
    let c_smem = smem_addr + PP_STAGES * PP_STAGE_BYTES;
    let bars = (PP_STAGES * PP_STAGE_BYTES + PP_C_BYTES) as usize;
    // SAFETY: `PP_SHARED_BYTES` holds the barriers after the stages and the box buffers
    // (whole KiB, so 8-aligned), used for nothing else; every thread computes the same
    // address.
    let pipe = unsafe { Pipeline::<PP_STAGES>::from_ptr(smem.add(bars).cast()) };
    // Order barrier `c`: consumer warpgroup `c` may start its next main loop once its phase
    // completes. (A pointer, not an array of references: indexed by the warpgroup, such an
    // array went to local memory.)
    // SAFETY: `PP_SHARED_BYTES` holds two barriers after the ring's, 8-aligned, used for
    // nothing else.
    let order = unsafe {
        smem.add(bars + Pipeline::<PP_STAGES>::SHARED_BYTES as usize)
            .cast::<MBarrier>()
    };
    // SAFETY: `c` < 2: one of the two barriers above.
    let order = |c: u32| unsafe { &*order.add(c as usize) };
    if tid == 0 {
        // SAFETY: one thread initialises, the barrier below before any use (`pipe.init`
        // ends with the init fence). A stage is read by one consumer warpgroup in each
        // block of the cluster, and an order barrier arrived on by the other warpgroup of
        // this block: one arrival per warp each.
        unsafe {
            order(0).init(4);
            order(1).init(4);
            pipe.init(4 * CLUSTER);
        }
    }
    if CLUSTER == 1 {
        sync_threads();
    } else {
        // Every block's barriers are initialised before any block's TMA or arrivals reach
        // them.
        cluster::sync();
    }

    if warpgroup == 0 {
        // Producer.
        wgmma::reg_dealloc::<24>();
        if tid == 0 {
            // SAFETY: maps in global memory (the launch contract).
            unsafe {
                tma::prefetch_descriptor(map_a);
                tma::prefetch_descriptor(map_b);
                if c_by_tma {
                    tma::prefetch_descriptor(map_c);
                }
            }
            let mut ring = Ring::PRODUCER_START;
            let mut tile = first_tile;
            while tile < tiles {
                let (gm, tn) = tile_coords(tile, groups_m, tiles_n);
                let tm = gm * CLUSTER + rank;
                let row_a = (tm * PP_BM) as i32;
                let row_b = (tn * PP_BN + rank * b_rows) as i32;
                for kt in 0..k_tiles {
                    // SAFETY: an initialised pipeline walked in order from the producer's
                    // start; the stage is free (in every block of the cluster) once its
                    // empty phase, which counts every block's consumers, completed; its
                    // full barrier receives `A` and every block's part of `B`, the tiles
                    // `(AStage, BStagePp)` in total, at 1024-aligned destinations (the `B`
                    // part at `rank · b_rows` rows of 128 bytes, 11 KiB), through maps
                    // built from the same tile types (the launch contract); the other
                    // block's full barrier of this stage is in the same phase (its
                    // consumers released the stage's previous use after that phase
                    // completed).
                    unsafe {
                        pipe.producer_acquire(ring);
                        pipe.producer_expect_tiles::<(T::AStage, T::BStagePp)>(ring);
                        let f = pipe.full(ring.stage());
                        let stage = smem.add((ring.stage() * PP_STAGE_BYTES) as usize);
                        let x = (kt * k_elems) as i32;
                        tma::load_tile::<T::AStage>(stage.cast(), map_a, [x, row_a], f);
                        let stage_b = stage
                            .add((WG_A_STAGE_BYTES + rank * b_rows * WG_BK_BYTES) as usize)
                            .cast();
                        if CLUSTER == 1 {
                            tma::load_tile::<T::BStagePp>(stage_b, map_b, [x, row_b], f);
                        } else {
                            tma::load_tile_multicast::<T::BHalfPp>(
                                stage_b,
                                map_b,
                                [x, row_b],
                                f,
                                ((1u32 << CLUSTER) - 1) as u16,
                            );
                        }
                    }
                    ring.advance();
                }
                tile += step;
            }
        }
        // With clusters, an exited thread counts as arrived at the final cluster barrier.
        return;
    }

    // Consumers: warpgroup 1 takes the block's tiles 0, 2, 4, …; warpgroup 2 tiles 1, 3, ….
    wgmma::reg_alloc::<240>();
    // The consumer's index through a shuffle from lane 0, which `ptxas` knows is equal across
    // the warp, so that the ring position, the stage addresses and the descriptors derived
    // from it live in uniform registers.
    // SAFETY: all 32 lanes of the warp run this convergently.
    let consumer = unsafe { cuda_std::warp::shfl_idx_sync(u32::MAX, warpgroup, 0, 32) } - 1;
    let t = tid % 128;
    let lane = tid % 32;
    let mut ring = Ring::START;
    ring.advance_by(consumer * k_tiles);
    let mut acc = [AccTile::<88>::splat(0.0); 2];
    let mut tile = first_tile + consumer * step;
    // The phase of order[consumer] this warpgroup waits for next; warpgroup 1 waits before
    // its first tile too (warpgroup 0's comes first).
    let mut turn = Phase::ZERO;
    let mut waits = consumer == 1;
    while tile < tiles {
        let (gm, tn) = tile_coords(tile, groups_m, tiles_n);
        let tm = gm * CLUSTER + rank;
        if waits {
            // SAFETY: an initialised barrier; its phases complete once per tile of the
            // other warpgroup, and this warpgroup waits once per tile that follows one of
            // those, in order, so `turn` is its current phase or the one before.
            unsafe { order(consumer).wait(turn) };
            turn = turn.flip();
        }
        waits = true;
        // The stage the previous K step read (set before its first use: k_tiles ≥ 1).
        let mut prev = ring;
        for kt in 0..k_tiles {
            // SAFETY: an initialised pipeline; `ring` walks this warpgroup's stages in order
            // and this warpgroup released each stage's previous use of its own (the other
            // warpgroup's uses in between completed before the producer refilled it).
            unsafe { pipe.consumer_wait(ring) };
            let stage = smem_addr + ring.stage() * PP_STAGE_BYTES;
            let a = [stage, stage + T::AHalf::BYTES].map(T::AHalf::descriptor);
            let b = T::BStagePp::descriptor(stage + WG_A_STAGE_BYTES);
            wgmma::fence();
            // SAFETY: the whole warpgroup runs these convergently with equal arguments; the
            // stage was written by TMA and its full phase completed; it is not overwritten
            // before this warpgroup releases it, after the wait that covers these.
            unsafe {
                let [a0, a1] = a;
                let [acc0, acc1] = &mut acc;
                T::mma_n176(acc0, a0, b, kt != 0);
                T::mma_n176(acc1, a1, b, kt != 0);
                T::mma_n176(
                    acc0,
                    a0.add_bytes_in_window(32),
                    b.add_bytes_in_window(32),
                    true,
                );
                T::mma_n176(
                    acc1,
                    a1.add_bytes_in_window(32),
                    b.add_bytes_in_window(32),
                    true,
                );
                T::mma_n176(
                    acc0,
                    a0.add_bytes_in_window(64),
                    b.add_bytes_in_window(64),
                    true,
                );
                T::mma_n176(
                    acc1,
                    a1.add_bytes_in_window(64),
                    b.add_bytes_in_window(64),
                    true,
                );
                T::mma_n176(
                    acc0,
                    a0.add_bytes_in_window(96),
                    b.add_bytes_in_window(96),
                    true,
                );
                T::mma_n176(
                    acc1,
                    a1.add_bytes_in_window(96),
                    b.add_bytes_in_window(96),
                    true,
                );
            }
            wgmma::commit_group();
            wgmma::wait_group::<1>();
            if kt != 0 && lane == 0 {
                // SAFETY: the group that read stage `prev` has completed (read only by
                // `wgmma`: no cluster-scope release is needed); this warp's one arrival of
                // the round, in every block of the cluster (every producer wrote into this
                // block's stage; each pipeline counts `4 · CLUSTER`); no block has exited
                // (the final cluster barrier).
                unsafe { pipe.consumer_release_cluster::<CLUSTER>(prev) };
            }
            prev = ring;
            ring.advance();
        }
        if tile + step < tiles && lane == 0 {
            // The other warpgroup's next tile (block tile `tile + step`) may start: this one
            // has waited for its last stage. SAFETY: an initialised barrier; this warp's
            // one arrival of the other's phase (one per tile it has after one of ours).
            unsafe { order(1 - consumer).arrive() };
        }
        wgmma::wait_group::<0>();
        if lane == 0 {
            // SAFETY: as above, for the tile's last stage.
            unsafe { pipe.consumer_release_cluster::<CLUSTER>(prev) };
        }
        // The other warpgroup's next tile.
        ring.advance_by(k_tiles);
        let (row0, col0) = (tm * PP_BM, tn * PP_BN);
        if c_by_tma {
            // Four boxes of 64 × 88 through this warpgroup's buffer: each written by all
            // 128 threads once the store before it has read the buffer, fenced for the async
            // proxy, then stored by one thread (TMA clips at C's edges; boxes wholly outside
            // C are not stored).
            let buf = c_smem + consumer * T::CBoxPp::BYTES;
            let bar = 1 + consumer;
            macro_rules! store_box {
                ($half:literal, $p:literal) => {{
                    if t == 0 {
                        tma::wait_group_read::<0>();
                    }
                    warpgroup_sync(bar);
                    // SAFETY: this warpgroup's buffer, which the previous store has read.
                    unsafe { stage_box::<T, $p>(&acc[$half], t, buf) };
                    tma::fence_proxy_async_shared();
                    warpgroup_sync(bar);
                    let (x0, y0) = (col0 + $p * PP_C_BOX_COLS, row0 + 64 * $half);
                    if t == 0 && x0 < n && y0 < m {
                        // SAFETY: the map describes C with this box (the launch contract);
                        // the box is written and fenced by all 128 threads and not
                        // rewritten before a `wait_group_read` covers this store; the
                        // thread waits for its stores' reads before it exits.
                        unsafe {
                            tma::store_tile::<T::CBoxPp>(
                                map_c,
                                [x0 as i32, y0 as i32],
                                smem.add((buf - smem_addr) as usize).cast::<T>(),
                            );
                        }
                        tma::commit_group();
                    }
                }};
            }
            store_box!(0, 0);
            store_box!(0, 1);
            store_box!(1, 0);
            store_box!(1, 1);
        } else {
            // SAFETY: the launch contract; each element belongs to one thread of one tile.
            unsafe {
                store_from_registers(&acc[0], t, c, (m, n), (row0, col0));
                store_from_registers(&acc[1], t, c, (m, n), (row0 + 64, col0));
            }
        }
        tile += 2 * step;
    }
    if c_by_tma && t == 0 {
        // The shared memory must outlive the stores' reads of it.
        tma::wait_group_read::<0>();
    }
    if CLUSTER > 1 {
        // No block exits while another may still arrive on its empty barriers or
        // multicast into its stages.
        cluster::sync();
    }
}
