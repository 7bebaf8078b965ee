//! The kernel body, [`gemm`], that every entry point calls: the prologue (the stages'
//! place in shared memory, the ring's barriers), the producer warpgroup (TMA loads into
//! the ring), the consumer warpgroups (`wgmma` on each stage, `A` from an [`AOperand`])
//! and their epilogue (`C` stored by TMA through shared memory, or from registers).
//!
//! One function, as it was in one file. Moved into `#[inline(always)]` functions of their
//! own (2026-11-29, rustc 1.95), the producer's loop and the epilogue changed the sm_90a
//! PTX: the producer alone swapped two instructions of the ring's `advance` in each
//! kernel; the epilogue changed address folding and block order. This kernel has run 3–4 %
//! slower after such reshuffles before (its stage descriptors through `Tile::descriptor`,
//! 2026-11-29, when they were still computed in vector registers; with the consumer index
//! warp-uniform, 2026-11-30, they go through it with the same SASS), so a split of the body
//! waits for a measurement on a GPU.

use super::elem::{WgmmaElem, WgmmaOut};
use super::epilogue::{for_even_acc, scaled, warpgroup_sync};
use super::operand::AOperand;
use super::{
    WG_A_STAGE_BYTES, WG_BK_BYTES, WG_BM, WG_BN, WG_C_BOX_BYTES, WG_C_BYTES, WG_CLUSTER_M,
    WG_STAGE_BYTES, WG_STAGES,
};
use crate::gemm_tc::tile_coords;
use cuda_std::cluster;
use cuda_std::prelude::*;
use cuda_std::shared::shared_addr;
use cuda_std::shared::window::SharedAddr;
use cuda_std::tile::{Pipeline, PipelineState, Tile, Tiles};
use cuda_std::tma::{self, TensorMap};
use cuda_std::wgmma;

/// The ring position: stage index and the parity its next wait is for.
type Ring = PipelineState<WG_STAGES>;

/// The kernel body for input element type `T`, output element type `O` and clusters of
/// `CLUSTER` blocks along M (1: no clusters; 2: the `_c2` entry points); see the
/// [module docs](super). With [`WgmmaElem::SCALED`] the accumulators are multiplied by
/// `scale` before they are rounded to `O` (otherwise `scale` is not read).
///
/// # Safety
/// As the entry points' `# Safety` sections; with `CLUSTER` > 1 (then [`WG_CLUSTER_M`])
/// the launch has clusters of `(CLUSTER, 1, 1)` and the map of `B` the tile
/// `T::BHalf`'s box.
#[inline(always)]
pub(super) unsafe fn gemm<T: WgmmaElem, O: WgmmaOut, A: AOperand<T>, const CLUSTER: u32>(
    m: u32,
    n: u32,
    k: u32,
    map_a: *const TensorMap,
    map_b: *const TensorMap,
    map_c: *const TensorMap,
    c: *mut O,
    c_by_tma: bool,
    scale: f32,
) {
    const {
        assert!(CLUSTER == 1 || CLUSTER == WG_CLUSTER_M);
        // The stage layout (`WG_STAGE_BYTES`, the `B` part after `A`) is every type's.
        assert!(<(T::AStage, T::BStage) as Tiles>::TX_BYTES == WG_STAGE_BYTES);
        assert!(T::AStage::BYTES == WG_A_STAGE_BYTES);
        assert!(O::CBox::BYTES == WG_C_BOX_BYTES);
    }
    let tid = thread_idx_x();
    let warpgroup = tid / 128;
    // Block `rank` of a cluster computes tile row `CLUSTER·g + rank` of the cluster's
    // group `g` of tile rows; the blocks share the `B` tile, each loading `b_rows` of
    // its rows and multicasting them to all (see the `wgmma` module docs).
    let rank = if CLUSTER == 1 { 0 } else { cluster::ctarank() };
    let b_rows = WG_BN / CLUSTER;
    let tiles_m = m.div_ceil(WG_BM);
    let tiles_n = n.div_ceil(WG_BN);
    // What the persistent loop walks: groups of `CLUSTER` tile rows × one tile column
    // (single tiles without clusters).
    let groups_m = tiles_m.div_ceil(CLUSTER);
    let tiles = groups_m * tiles_n;
    let first_tile = block_idx_x() / CLUSTER;
    let tile_step = grid_dim_x() / CLUSTER;
    // Bytes per input element (2 bf16/f16, 4 f32, 1 FP8), as the byte arithmetic the
    // kernel had before it was generic (its PTX unchanged for those types).
    let elem_bytes = size_of::<T>() as u32;
    let k_tiles = (k * elem_bytes).div_ceil(WG_BK_BYTES);
    let k_elems = WG_BK_BYTES / elem_bytes;

    // The stages start at the first 1024-byte boundary of the dynamic shared memory
    // (the 128-byte swizzle pattern repeats every 1024 bytes and TMA and `wgmma` both
    // take it from address bits 7..10); the ring's barriers follow the stages and the
    // epilogue buffer.
    let raw: *mut u8 = dynamic_shared::<u8>();
    let pad = (1024 - (shared_addr(raw) & 1023)) & 1023;
    // SAFETY: `WG_SHARED_BYTES` reserves 1024 bytes of slack for `pad`.
    let smem = unsafe { raw.add(pad as usize) };
    let smem_addr = shared_addr(smem);
    // SAFETY: `WG_SHARED_BYTES` holds the pipeline's barriers after the stages and the
    // epilogue buffer, 8-aligned (whole KiB before them), used for nothing else; every
    // thread computes the same address.
    let pipe = unsafe {
        Pipeline::<WG_STAGES>::from_ptr(
            smem.add((WG_STAGES * WG_STAGE_BYTES + WG_C_BYTES) as usize)
                .cast(),
        )
    };
    // The epilogue buffer, 1024-aligned (the stages are whole KiB).
    let c_smem = smem_addr + WG_STAGES * WG_STAGE_BYTES;

    if tid == 0 {
        // SAFETY: one thread initialises, the barrier below before any use. One
        // arrival per consumer warp (2 warpgroups × 4 warps) of every block of the
        // cluster on each empty barrier: the stage's `B` part of each is also the
        // others'.
        unsafe { pipe.init(8 * CLUSTER) };
    }
    if CLUSTER == 1 {
        sync_threads();
    } else {
        // Every block's barriers are initialised before any block's TMA or arrivals
        // reach them.
        cluster::sync();
    }

    if warpgroup == 0 {
        // Producer.
        wgmma::reg_dealloc::<40>();
        if tid == 0 {
            // SAFETY: maps in global memory (the launch contract).
            unsafe {
                tma::prefetch_descriptor(map_a);
                tma::prefetch_descriptor(map_b);
            }
            if T::AFTER_ROUNDING {
                // Launched right after the rounding pass, which may still run (the
                // host's programmatic dependent launch): wait for it to complete, its
                // writes visible, before the first load of what it wrote. Everything
                // above (barrier init, `setmaxnreg`, the maps' prefetch: the maps are
                // not the pass's) overlaps the pass. The consumers read no global
                // memory but `map_c` (prefetched at their start, not the pass's) and
                // store `C` (which the pass does not access) only after a stage's full
                // phase, which these loads complete. Without that launch attribute
                // this returns at once.
                cuda_std::thread::grid_dependency_sync();
            }
            // Every stage starts free.
            let mut ring = Ring::PRODUCER_START;
            let mut tile = first_tile;
            while tile < tiles {
                let (gm, tn) = tile_coords(tile, groups_m, tiles_n);
                let tm = gm * CLUSTER + rank;
                let row_a = (tm * WG_BM) as i32;
                let row_b = (tn * WG_BN + rank * b_rows) as i32;
                for kt in 0..k_tiles {
                    let s = ring.stage() as usize;
                    // SAFETY: an initialised pipeline; `ring` walks all stages in order
                    // from the producer's start; the stage is free (in every block of
                    // the cluster) once its empty phase, which counts every block's
                    // consumers, completed; this block's full barrier receives `A` and
                    // every block's part of `B`, the tiles `(AStage, BStage)` in total,
                    // at 1024-aligned destinations (the `B` part at `rank · b_rows`
                    // rows, a multiple of 8 rows of 128 bytes), through maps built from
                    // the same tile types (the launch contract); the other blocks' full
                    // barriers of this stage are in the same phase (their consumers
                    // released the stage's previous use after that phase completed).
                    unsafe {
                        pipe.producer_acquire(ring);
                        pipe.producer_expect_tiles::<(T::AStage, T::BStage)>(ring);
                        let f = pipe.full(ring.stage());
                        let stage = smem.add(s * WG_STAGE_BYTES as usize);
                        let xy = [(kt * k_elems) as i32, row_a];
                        tma::load_tile::<T::AStage>(stage.cast::<T>(), map_a, xy, f);
                        let stage_b = stage
                            .add((WG_A_STAGE_BYTES + rank * b_rows * WG_BK_BYTES) as usize)
                            .cast::<T>();
                        let xy = [xy[0], row_b];
                        if CLUSTER == 1 {
                            tma::load_tile::<T::BStage>(stage_b, map_b, xy, f);
                        } else {
                            tma::load_tile_multicast::<T::BHalf>(
                                stage_b,
                                map_b,
                                xy,
                                f,
                                ((1u32 << CLUSTER) - 1) as u16,
                            );
                        }
                    }
                    ring.advance();
                }
                tile += tile_step;
            }
        }
        // With clusters, an exited thread counts as arrived at the final cluster
        // barrier.
        return;
    }

    // Consumers.
    // 384 × 168 registers in all: 128 × 40 + 256 × 232.
    wgmma::reg_alloc::<232>();
    // The consumer's index through a shuffle from lane 0, which `ptxas` knows is equal across
    // the warp, so that the `A` descriptors derived from it live in uniform registers.
    // SAFETY: all 32 lanes of the warp run this convergently.
    let consumer = unsafe { cuda_std::warp::shfl_idx_sync(u32::MAX, warpgroup, 0, 32) } - 1;
    let t = tid % 128;
    let lane = tid % 32;
    let mut ring = Ring::START;
    let mut acc = [0.0f32; 128];
    let a_lanes = A::lanes(t);
    let pairs = n.is_multiple_of(2);
    if c_by_tma && t == 0 {
        // SAFETY: a global-memory map (the launch contract).
        unsafe { tma::prefetch_descriptor(map_c) };
    }
    // Whether the epilogue's last box was wholly outside C and so not stored (thread 0 of
    // the warpgroup): then the store that last read the next box's buffer is the newest
    // bulk group, not the one before it.
    let mut skipped_last = false;
    let mut tile = first_tile;
    while tile < tiles {
        let (gm, tn) = tile_coords(tile, groups_m, tiles_n);
        let tm = gm * CLUSTER + rank;
        // The stage the previous K step read (set before its first use: k_tiles ≥ 1).
        let mut prev = Ring::START;
        // One K step: wait for the stage, issue its `wgmma` and commit, wait until one
        // group is in flight, release the previous stage and fence `$held` (the `A`
        // registers of the group the wait just covered); evaluates to this stage's `A`
        // registers (`A::Held`).
        macro_rules! k_step {
            ($kt:expr, $held:expr) => {{
                let kt: u32 = $kt;
                let s = ring.stage();
                // SAFETY: an initialised pipeline; `ring` walks all stages in order from
                // the start, and this warpgroup released every stage's previous round
                // before.
                unsafe { pipe.consumer_wait(ring) };
                let stage = smem_addr + s * WG_STAGE_BYTES;
                // The tiles' descriptors. `RegA` reads `A` through `a_half` and leaves `a`
                // unused.
                let a_half = stage + consumer * T::AHalf::BYTES;
                let a = T::AHalf::descriptor(a_half);
                let b = T::BStage::descriptor(stage + WG_A_STAGE_BYTES);
                // The whole warpgroup runs the stage's `wgmma` convergently with equal
                // arguments; the stage was written by TMA (async proxy) and its full
                // phase completed; it is not overwritten before this warpgroup releases
                // it below, after the wait that covers these operations.
                let held: A::Held = if !A::INLINE_SMEM {
                    // SAFETY: as just said (`stage_mma`'s contract).
                    unsafe { A::stage_mma(&mut acc, a_lanes, a_half, a, b, kt) }
                } else {
                    // `SmemA::stage_mma` spelled out: through the call LLVM folded the
                    // descriptors' K offsets differently (other SASS in the loop), and a
                    // change of this kernel's scheduling has cost 3–4 % before.
                    wgmma::fence();
                    // SAFETY: as just said; `a` names this warpgroup's `A` half.
                    unsafe {
                        T::mma(&mut acc, a, b, kt != 0);
                        T::mma(
                            &mut acc,
                            a.add_bytes_in_window(32),
                            b.add_bytes_in_window(32),
                            true,
                        );
                        T::mma(
                            &mut acc,
                            a.add_bytes_in_window(64),
                            b.add_bytes_in_window(64),
                            true,
                        );
                        T::mma(
                            &mut acc,
                            a.add_bytes_in_window(96),
                            b.add_bytes_in_window(96),
                            true,
                        );
                    }
                    A::Held::default()
                };
                wgmma::commit_group();
                wgmma::wait_group::<1>();
                let mut covered: A::Held = $held;
                A::fence_held(&mut covered);
                if kt != 0 && lane == 0 {
                    // SAFETY: the wgmma group reading stage `prev` has completed (the
                    // stage was only read by `wgmma`: no cluster-scope release is
                    // needed); this warp's one arrival of the round, in every block of
                    // the cluster (every producer wrote into this block's stage; each
                    // pipeline counts `8 · CLUSTER`); no block has exited (the final
                    // cluster barrier).
                    unsafe { pipe.consumer_release_cluster::<CLUSTER>(prev) };
                }
                prev = ring;
                ring.advance();
                held
            }};
        }
        // The `A` registers of the group in flight (`A::Held::default()` before the
        // first step: fencing it is harmless).
        let mut held = A::Held::default();
        if A::IN_REGISTERS {
            // Two steps per trip, so that consecutive stages' fragments are made at two
            // places in the code and so live in different PTX registers: a step loads
            // its fragments while the previous step's group, which reads the other
            // set, is still running (PTX ISA §9.7.15.5.2: a `wgmma`'s `A` registers
            // must not be rewritten before a wait covers it; in a one-step loop the
            // next trip's `ldmatrix` wrote the very registers the running `wgmma`
            // read, and ptxas kept that).
            let mut kt = 0;
            while kt + 1 < k_tiles {
                let even = k_step!(kt, held);
                held = k_step!(kt + 1, even);
                kt += 2;
            }
            if kt < k_tiles {
                held = k_step!(kt, held);
            }
        } else {
            for kt in 0..k_tiles {
                held = k_step!(kt, held);
            }
        }
        wgmma::wait_group::<0>();
        A::fence_held(&mut held);
        if lane == 0 {
            // SAFETY: as above, for the last stage of the tile.
            unsafe { pipe.consumer_release_cluster::<CLUSTER>(prev) };
        }

        // Epilogue: element i of thread t is at acc_row_col(t, i) of this warpgroup's
        // 64×256 part; (i, i + 1) are adjacent columns.
        let row_base = tm * WG_BM + consumer * 64;
        let col_base = tn * WG_BN;
        if c_by_tma {
            // Through shared memory: the 64×256 part goes out in boxes of 64 rows × 128
            // bytes (64 bf16/f16 or 32 f32 columns: accumulators `per_box·b ..
            // per_box·(b + 1)` of every thread), alternating between this warpgroup's
            // two box buffers. Each box is written in the 128-byte swizzle (16-byte
            // chunk `q` of row `r` at chunk `q ^ (r % 8)`: the 8 rows a warp's store
            // touches fall in 8 different chunks, so the stores are free of bank
            // conflicts) and stored by one TMA store, which clips at the edges of `C`
            // and runs on while the warpgroup goes on to the next box and tile; a
            // buffer is rewritten only after `wait_group_read` says the store two boxes
            // back has read it.
            let box_cols = O::CBox::COLS;
            let per_box = box_cols / 2;
            let buf = c_smem + consumer * 2 * WG_C_BOX_BYTES;
            let bar = 1 + consumer;
            macro_rules! stage_pair {
                ($i:literal) => {{
                    // Constant after inlining: `O::BYTES` is.
                    let bx = $i / per_box;
                    let slot = buf + (bx % 2) * WG_C_BOX_BYTES;
                    if $i % per_box == 0 {
                        if t == 0 {
                            // The store that last read this buffer (two boxes back, in
                            // this or the previous tile) has read it: at most one group
                            // (the box before) may still read, or none if the box before
                            // was not stored (without this, on an H200, f32 boxes past
                            // C's edge let a box be rewritten while its store still read
                            // it: TF32 1408×2464×392 wrote zeros to C[.., 2432..2464]).
                            if skipped_last {
                                tma::wait_group_read::<0>();
                            } else {
                                tma::wait_group_read::<1>();
                            }
                        }
                        warpgroup_sync(bar);
                    }
                    let (r, col) = wgmma::layout::acc_row_col(t, $i);
                    let x = (col % box_cols) * O::BYTES;
                    let addr = slot
                        + r * O::CBox::ROW_BYTES
                        + O::CBox::SWIZZLE.chunk(r, x / 16) * 16
                        + x % 16;
                    let (v0, v1) = scaled::<T>(acc[$i], acc[$i + 1], scale);
                    // SAFETY: inside this warpgroup's box buffer, aligned to the pair;
                    // each (r, col) belongs to one thread; the buffer's previous store
                    // has read it (above).
                    unsafe { O::store_pair_shared(SharedAddr::from_bits(addr), v0, v1) };
                    if ($i + 2) % per_box == 0 {
                        tma::fence_proxy_async_shared();
                        warpgroup_sync(bar);
                        // Boxes wholly outside C (ragged edges) are not stored.
                        let x0 = col_base + bx * box_cols;
                        skipped_last = x0 >= n || row_base >= m;
                        if t == 0 && !skipped_last {
                            // SAFETY: the map describes C (the launch contract) with this
                            // box; the box is written and fenced by all 128 threads; it
                            // is not rewritten before a `wait_group_read` covers this
                            // store, and the thread waits for all its stores before it
                            // exits.
                            unsafe {
                                tma::store_tile::<O::CBox>(
                                    map_c,
                                    [x0 as i32, row_base as i32],
                                    smem.add((slot - smem_addr) as usize).cast::<O>(),
                                )
                            };
                            tma::commit_group();
                        }
                    }
                }};
            }
            for_even_acc!(stage_pair);
            tile += tile_step;
            continue;
        }
        macro_rules! store_pair {
            ($i:literal) => {{
                let (r, col) = wgmma::layout::acc_row_col(t, $i);
                let (row, col) = (row_base + r, col_base + col);
                if row < m && col < n {
                    let (v0, v1) = scaled::<T>(acc[$i], acc[$i + 1], scale);
                    // SAFETY: (row, col) inside C; with `pairs`, col + 1 < n too (both
                    // even) and the pair is aligned to its size.
                    unsafe {
                        let p = c.add(row as usize * n as usize + col as usize);
                        if pairs {
                            O::store_pair(p, v0, v1);
                        } else {
                            *p = O::from_f32(v0);
                            if col + 1 < n {
                                *p.add(1) = O::from_f32(v1);
                            }
                        }
                    }
                }
            }};
        }
        for_even_acc!(store_pair);
        tile += tile_step;
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
