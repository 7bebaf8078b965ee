//! Tiles: shared-memory layouts typed by element, rows, columns and swizzle
//! ([`SmemTile`]), from which a kernel takes its byte sizes, swizzled element offsets, TMA
//! boxes and `expect_tx` counts, and `wgmma` descriptors, instead of computing them by hand.
//! The host builds its tensor maps from the same types (they live in
//! [`cust_core::tile`], which both sides depend on).
//!
//! Also the rings that feed such tiles from a TMA producer to their consumers ([`Pipeline`],
//! walked with a [`PipelineState`]) and a warpgroup's accumulator tile ([`AccTile`]).
//!
//! ```
//! use cuda_std::half::bf16;
//! use cuda_std::tile::{SmemTile, Tile, swizzle};
//!
//! // A stage of A in a Hopper GEMM: 128 rows × 64 bf16 (one 128-byte swizzle row each).
//! type ATile = SmemTile<bf16, 128, 64, swizzle::B128>;
//! assert_eq!(ATile::BYTES, 16 * 1024);
//! assert_eq!(ATile::BOX, [64, 128]);
//! // Element 35 of row 9 sits in 16-byte chunk 4 ^ (9 % 8) = 5 of its row.
//! assert_eq!(ATile::offset(9, 35), 9 * 128 + 5 * 16 + 6);
//! ```

pub use cust_core::tile::{MatrixDescriptor, SmemTile, Swizzle, SwizzleMode, Tile, Tiles, swizzle};

use crate::barrier::{MBarrier, Phase, fence_init};

/// A position in a ring of `STAGES` pipeline stages (CUTLASS's `PipelineState`): the stage
/// a producer fills or a consumer reads next, and the [`Phase`] its barrier's wait is for.
/// The phase flips each time the ring wraps, so a waiter on stage `s` waits for the
/// barrier's phase of the current round.
///
/// ```
/// use cuda_std::tile::PipelineState;
/// let mut p = PipelineState::<3>::START;
/// let seen: Vec<(u32, u32)> = (0..7)
///     .map(|_| {
///         let now = (p.stage(), p.phase().parity());
///         p.advance();
///         now
///     })
///     .collect();
/// assert_eq!(seen, [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 0)]);
/// assert_eq!(PipelineState::<3>::PRODUCER_START.phase().parity(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineState<const STAGES: u32> {
    stage: u32,
    phase: Phase,
}

impl<const STAGES: u32> PipelineState<STAGES> {
    /// Stage 0 of the first round (barriers freshly initialised: [`Phase::ZERO`]).
    pub const START: Self = {
        assert!(STAGES > 0, "a pipeline has at least one stage");
        Self {
            stage: 0,
            phase: Phase::ZERO,
        }
    };

    /// A producer's start, stage 0 with the phase flipped: its waits on the stages' *empty*
    /// barriers are for the phase before their first (parity 1), which counts as completed,
    /// so every stage starts free (CUTLASS's `make_producer_start_state`).
    pub const PRODUCER_START: Self = Self {
        phase: Phase::ZERO.flip(),
        ..Self::START
    };

    /// The stage, `0..STAGES`.
    #[must_use]
    #[inline(always)]
    pub const fn stage(self) -> u32 {
        self.stage
    }

    /// The phase the stage's barrier wait is for in this round.
    #[must_use]
    #[inline(always)]
    pub const fn phase(self) -> Phase {
        self.phase
    }

    /// Moves to the next stage, flipping the phase when the ring wraps.
    #[inline(always)]
    pub fn advance(&mut self) {
        self.stage += 1;
        if self.stage == STAGES {
            self.stage = 0;
            self.phase = self.phase.flip();
        }
    }

    /// Moves `n` stages on, as `n` calls of [`PipelineState::advance`] (the phase flips once
    /// per wrap): how a consumer skips the stages another consumer reads, e.g. the other
    /// warpgroup's tile in a ping-pong GEMM (CUTLASS's `PipelineState::advance(n)`).
    ///
    /// A parity wait cannot tell a barrier's phase from the one two before it, so a consumer
    /// that skips more than `STAGES` positions may wait ([`Pipeline::consumer_wait`]) only
    /// once the stage's previous round has been filled, e.g. after the other consumer has
    /// waited for its last stage (the ping-pong GEMM's turns).
    ///
    /// ```
    /// use cuda_std::tile::PipelineState;
    /// for n in [0, 1, 4, 5, 6, 13, 100] {
    ///     let mut one_by_one = PipelineState::<5>::START;
    ///     (0..n).for_each(|_| one_by_one.advance());
    ///     let mut jump = PipelineState::<5>::START;
    ///     jump.advance_by(n);
    ///     assert_eq!(jump, one_by_one, "n = {n}");
    /// }
    /// ```
    #[inline(always)]
    pub fn advance_by(&mut self, n: u32) {
        let to = self.stage + n % (2 * STAGES);
        // `to` < 3·STAGES: wraps 0, 1 or 2 times, and whole double rounds leave the phase.
        let wraps = to / STAGES;
        self.stage = to % STAGES;
        if wraps % 2 == 1 {
            self.phase = self.phase.flip();
        }
    }
}

/// The barriers of a ring of `STAGES` shared-memory stages passed from producers to
/// consumers (CUTLASS's `PipelineTmaAsync`, ThunderKittens' semaphores): per stage a *full*
/// [`MBarrier`] (count 1: the producer's arrival with the stage's expected bytes, which the
/// TMA loads complete) and an *empty* one (one arrival per consumer, or per consumer warp,
/// that has finished reading the stage). A producer and its consumers each walk the ring
/// with a [`PipelineState`]: the producer from [`PipelineState::PRODUCER_START`], the
/// consumers from [`PipelineState::START`], each calling [`PipelineState::advance`] after
/// each stage.
///
/// ```text
/// producer (one thread)                     consumers
/// producer_acquire(p)   wait empty          consumer_wait(c)     wait full
/// producer_expect(p, bytes)                 ... read stage c.stage() ...
/// tma::load_*(.., full(p.stage()))          consumer_release(c)  arrive on empty
/// p.advance()                               c.advance()
/// ```
///
/// A handle (a pointer, `Copy`) to `2 · STAGES` barriers in shared memory: the full
/// barriers of stages `0..STAGES`, then the empty ones ([`Pipeline::SHARED_BYTES`] bytes,
/// 8-byte aligned), at a place the kernel chooses (a `shared_array!`, or an offset in
/// dynamic shared memory), given to [`Pipeline::from_ptr`]. One thread calls
/// [`Pipeline::init`]; a block barrier (or a cluster barrier, when other blocks of the
/// cluster arrive on or load into this block's stages) follows before any use.
///
/// Phases: a stage's full barrier completes one phase per round of the ring, as does its
/// empty barrier, so a [`PipelineState`]'s phase (flipped when the ring wraps) is the one
/// both waits are for. The producer starts one phase back on the empty barriers
/// ([`PipelineState::PRODUCER_START`]), a phase that counts as completed, so every stage
/// starts free.
#[derive(Clone, Copy, Debug)]
pub struct Pipeline<const STAGES: u32> {
    /// `full[0..STAGES]`, then `empty[0..STAGES]`.
    bars: *const MBarrier,
}

impl<const STAGES: u32> Pipeline<STAGES> {
    /// Bytes of shared memory the barriers take: two `MBarrier`s (8 bytes each) per stage.
    pub const SHARED_BYTES: u32 = {
        assert!(STAGES > 0, "a pipeline has at least one stage");
        2 * STAGES * core::mem::size_of::<MBarrier>() as u32
    };

    /// The pipeline whose `2 · STAGES` barriers are at `bars` (full barriers of stages
    /// `0..STAGES`, then the empty ones). Does not touch them: one thread then calls
    /// [`Pipeline::init`].
    ///
    /// # Safety
    /// - `bars` points into this CTA's shared memory, 8-byte aligned, with room for
    ///   [`Pipeline::SHARED_BYTES`] bytes that nothing but these barriers uses for as long
    ///   as any handle to them is used (the kernel's whole run, or until every thread is
    ///   past its last use);
    /// - every thread that uses the pipeline gets the same `bars`.
    #[must_use]
    #[inline(always)]
    pub const unsafe fn from_ptr(bars: *mut MBarrier) -> Self {
        Self { bars }
    }

    /// The full barrier of stage `stage` (`< STAGES`): what the TMA loads filling the stage
    /// complete their bytes on.
    #[must_use]
    #[inline(always)]
    pub fn full(&self, stage: u32) -> &MBarrier {
        debug_assert!(stage < STAGES);
        // SAFETY: `from_ptr`'s contract: `2 · STAGES` barriers at `bars`; `stage < STAGES`.
        unsafe { &*self.bars.add(stage as usize) }
    }

    /// The empty barrier of stage `stage` (`< STAGES`): what consumers arrive on when they
    /// have finished reading the stage.
    #[must_use]
    #[inline(always)]
    pub fn empty(&self, stage: u32) -> &MBarrier {
        debug_assert!(stage < STAGES);
        // SAFETY: as in `full`: barrier `STAGES + stage < 2 · STAGES`. (Two steps, so that
        // the constant part folds into the address.)
        unsafe { &*self.bars.add(STAGES as usize).add(stage as usize) }
    }

    /// Initialises every stage's barriers, the full ones for one arrival per phase (the
    /// producer's [`Pipeline::producer_expect`]), the empty ones for `consumer_arrivals`
    /// arrivals per phase ([`Pipeline::consumer_release`] calls; with clusters, those of
    /// every block that arrives on this block's stages), then [`fence_init`]. Stage by
    /// stage, full then empty.
    ///
    /// # Safety
    /// - exactly one thread of the block calls it, once, before any use; after it, a block
    ///   barrier ([`sync_threads`](crate::thread::sync_threads)), or a cluster barrier
    ///   ([`cluster::sync`](crate::cluster::sync)) when other blocks of the cluster use
    ///   these barriers, separates it from every use (see the pitfall in
    ///   [`crate::barrier`]: do not test the same thread condition on both sides of that
    ///   barrier);
    /// - `consumer_arrivals` is in `1..2²⁰` and is exactly the number of
    ///   [`consumer_release`](Pipeline::consumer_release) arrivals each stage receives per
    ///   round.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn init(&self, consumer_arrivals: u32) {
        for s in 0..STAGES {
            // SAFETY: forwarded to the caller: one thread, before any use.
            unsafe {
                self.full(s).init(1);
                self.empty(s).init(consumer_arrivals);
            }
        }
        fence_init();
    }

    /// The producer's wait until stage `state.stage()` is free: its empty barrier's phase
    /// `state.phase()` has completed (every consumer released the stage's previous round;
    /// at once in the first round, from [`PipelineState::PRODUCER_START`]).
    ///
    /// # Safety
    /// - the pipeline is initialised and the init was ordered before this call
    ///   ([`Pipeline::init`]);
    /// - `state` is the producer's position, walked from [`PipelineState::PRODUCER_START`]
    ///   with one [`PipelineState::advance`] per stage filled, and the producer fills the
    ///   stages in ring order without skipping one (so `state.phase()` is the empty
    ///   barrier's current phase or the one before it);
    /// - the consumers eventually release the stage, or the thread hangs.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn producer_acquire(&self, state: PipelineState<STAGES>) {
        // SAFETY: forwarded to the caller.
        unsafe { self.empty(state.stage()).wait(state.phase()) }
    }

    /// The producer's arrival on stage `state.stage()`'s full barrier, announcing the
    /// `tx_bytes` bytes the stage's TMA loads (issued after this, completing on
    /// [`Pipeline::full`]) will deliver (`mbarrier.arrive.expect_tx`). The stage's full
    /// phase completes when those bytes have landed.
    ///
    /// # Safety
    /// - one thread (the producer) calls it once per stage and round, after
    ///   [`Pipeline::producer_acquire`] for the same `state` returned;
    /// - `tx_bytes` (< 2²⁰) is exactly the bytes the loads completing on this stage's full
    ///   barrier deliver in this round, in this block (with multicast, those issued by
    ///   other blocks too) (fewer and the phase never completes; more is undefined).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn producer_expect(&self, state: PipelineState<STAGES>, tx_bytes: u32) {
        // SAFETY: forwarded to the caller.
        unsafe { self.full(state.stage()).arrive_expect_tx(tx_bytes) }
    }

    /// [`Pipeline::producer_expect`] with the bytes of the tiles `S` (one [`Tile`] or a
    /// tuple, e.g. a GEMM stage's `(ATile, BTile)`: [`Tiles::TX_BYTES`]), the tiles the
    /// stage's loads ([`crate::tma::load_tile`]) deliver.
    ///
    /// # Safety
    /// As [`Pipeline::producer_expect`], with the loads of this stage and round exactly the
    /// tiles `S`.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn producer_expect_tiles<S: Tiles>(&self, state: PipelineState<STAGES>) {
        // SAFETY: forwarded to the caller.
        unsafe { self.producer_expect(state, S::TX_BYTES) }
    }

    /// A consumer's wait until stage `state.stage()` is filled: its full barrier's phase
    /// `state.phase()` has completed (acquire: the stage's bytes are visible to this thread,
    /// and to the async proxy, e.g. `wgmma`, it issues after this).
    ///
    /// # Safety
    /// - the pipeline is initialised and the init was ordered before this call;
    /// - `state` is this consumer's position, walked from [`PipelineState::START`] with one
    ///   [`PipelineState::advance`] per stage consumed, in ring order, and the consumer has
    ///   released the stage's previous round before waiting for this one (so
    ///   `state.phase()` is the full barrier's current phase or the one before it);
    /// - the producer eventually fills the stage, or the thread hangs.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn consumer_wait(&self, state: PipelineState<STAGES>) {
        // SAFETY: forwarded to the caller.
        unsafe { self.full(state.stage()).wait(state.phase()) }
    }

    /// A consumer's release of stage `state.stage()`: one arrival on its empty barrier
    /// (release semantics at CTA scope: this thread's reads of the stage happen before the
    /// producer's refill). The stage is free again once all `consumer_arrivals` arrived.
    ///
    /// # Safety
    /// - the consumer waited for this stage's round ([`Pipeline::consumer_wait`] with the
    ///   same `state`) and is done with it: its own reads have completed, and reads it
    ///   issued to the async proxy (`wgmma`) have been waited for (`wgmma::wait_group`);
    ///   where one thread arrives for several (a warp's lane 0), the others' reads are
    ///   ordered before its arrival (e.g. by [`sync_warp`](crate::warp::sync_warp) or a
    ///   warpgroup's completed `wgmma` group);
    /// - the stage's empty barrier still expects this arrival in this round (at most
    ///   `consumer_arrivals` per round).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn consumer_release(&self, state: PipelineState<STAGES>) {
        // SAFETY: forwarded to the caller.
        unsafe { self.empty(state.stage()).arrive() }
    }

    /// [`Pipeline::consumer_release`] to the stage's empty barrier in each of the blocks of
    /// rank `0..CTAS` of the cluster (`mbarrier.arrive.shared::cluster` through `mapa`, CTA
    /// scope, no cluster-scope fence: [`MBarrier::arrive_remote`]), for a stage that every
    /// block's producer writes into (multicast loads); with `CTAS` = 1, the local
    /// [`Pipeline::consumer_release`] (no cluster needed).
    ///
    /// # Safety
    /// As [`Pipeline::consumer_release`], in each of those blocks: with `CTAS` > 1 the
    /// kernel is launched with clusters of exactly `CTAS` blocks (a larger cluster's blocks
    /// `CTAS..` would arrive on the barriers of ranks `0..CTAS`, not their own group's),
    /// each block's pipeline
    /// lies at the same shared-memory offset and counts these arrivals in its
    /// `consumer_arrivals`, no block of the cluster has exited (a final cluster barrier),
    /// and the stage was only read through the async proxy or the reads need no
    /// cluster-scope release (use [`MBarrier::arrive_cluster`] to publish writes).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn consumer_release_cluster<const CTAS: u32>(&self, state: PipelineState<STAGES>) {
        let empty = self.empty(state.stage());
        if CTAS == 1 {
            // SAFETY: forwarded to the caller.
            unsafe { empty.arrive() };
        } else {
            for rank in 0..CTAS {
                // SAFETY: forwarded to the caller.
                unsafe { empty.arrive_remote(rank) };
            }
        }
    }
}

/// A warpgroup's `f32` accumulator tile of a `wgmma` `m64nN` product (ThunderKittens'
/// `rt_fl<64, N>` for a warpgroup, CUTLASS's accumulator fragment): `D` is 64×N, and each
/// of the 128 threads holds `REGS = N / 2` elements, element `i` of thread `t` (its index
/// in the warpgroup) at [`AccTile::row_col`]`(t, i)`, the PTX ISA's fragment layout
/// ([`crate::wgmma::layout::acc_row_col`]). `regs` is what the `wgmma::mma_*` functions take
/// (`&mut tile.regs`).
///
/// Each thread's elements lie in two rows ([`AccTile::rows`]: `16·warp + lane / 4` and 8
/// below it, `REGS / 2` elements each), and the four threads of a *quad* (lanes `4q..4q+4`
/// of a warp) hold the whole of those rows between them. So row reductions
/// ([`AccTile::row_max`], [`AccTile::row_sum`]) reduce the thread's own elements of each row,
/// then across the quad with two butterfly shuffles (`shfl.sync.bfly` 1 and 2), leaving the
/// row's result in all four threads: what an attention kernel's softmax (row maxima and
/// sums of `S = Q·Kᵀ`) and a GEMM's row-wise epilogue need.
///
/// The shapes are `cuda_std::wgmma`'s N = 64, 128, 176, 256 (`REGS` = 32, 64, 88, 128: the
/// [`AccShape`] tiles; no other `REGS` has the methods; the row reductions take the powers
/// of two only, a compile-time error for N = 176). Every element loop is unrolled with
/// constant indices, so the registers stay registers (an indexed loop would move the array
/// to local memory).
///
/// ```
/// use cuda_std::tile::AccTile;
/// type Acc = AccTile<32>; // m64n64
/// assert_eq!((Acc::ROWS, Acc::COLS), (64, 64));
/// // Thread 37 (warp 1, lane 5: quad 1, position 1): rows 17 and 25.
/// assert_eq!(Acc::rows(37), [17, 25]);
/// assert_eq!(Acc::row_col(37, 0), (17, 2));
/// assert_eq!(Acc::row_col(37, 2), (25, 2));
/// assert_eq!(Acc::row_col(37, 5), (17, 11));
/// // Element i is in row rows(t)[(i / 2) % 2].
/// assert_eq!(Acc::row_of(6), 1);
/// // Loaded through the row/column map: element (r, c) = 100·r + c.
/// let t = Acc::from_fn(37, |r, c| (100 * r + c) as f32);
/// assert_eq!(t.regs[5], 1711.0);
/// let mut seen = Vec::new();
/// t.for_each(37, |r, c, v| seen.push((r, c, v)));
/// assert_eq!(seen[5], (17, 11, 1711.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccTile<const REGS: usize> {
    /// This thread's elements, in the `wgmma` register order.
    pub regs: [f32; REGS],
}

mod sealed {
    pub trait Sealed {}
}

/// The accumulator tiles of `cuda_std::wgmma`'s shapes, `AccTile<32>`, `<64>`, `<88>` and
/// `<128>` (N = 64, 128, 176, 256), with their elements' indices spelled out as constants. Sealed.
pub trait AccShape: sealed::Sealed {
    /// Calls `f(i)` for every element index `i` in `0..REGS`, each call with a constant.
    #[doc(hidden)]
    fn each_index(f: impl FnMut(usize));
}

/// Implements [`AccShape`] for `AccTile<$regs>` with the index list `[$i …]`.
macro_rules! acc_shape {
    ($regs:literal, [$($i:literal)+]) => {
        impl sealed::Sealed for AccTile<$regs> {}
        impl AccShape for AccTile<$regs> {
            #[inline(always)]
            fn each_index(mut f: impl FnMut(usize)) {
                $(f($i);)+
            }
        }
    };
}
with_acc_indices!(32, acc_shape!(32,));
with_acc_indices!(64, acc_shape!(64,));
with_acc_indices!(88, acc_shape!(88,));
with_acc_indices!(128, acc_shape!(128,));

impl<const REGS: usize> AccTile<REGS>
where
    Self: AccShape,
{
    /// Rows of the tile: 64.
    pub const ROWS: u32 = 64;
    /// Columns of the tile: N = `2·REGS`.
    pub const COLS: u32 = 2 * REGS as u32;

    /// A tile with every element `value` (e.g. `0.0` before a `wgmma` chain that
    /// accumulates from the start, or `-∞` before a running maximum).
    #[must_use]
    #[inline(always)]
    pub const fn splat(value: f32) -> Self {
        Self {
            regs: [value; REGS],
        }
    }

    /// Thread `thread`'s part of the tile whose element `(row, col)` is `f(row, col)`.
    #[must_use]
    #[inline(always)]
    pub fn from_fn(thread: u32, mut f: impl FnMut(u32, u32) -> f32) -> Self {
        let mut out = Self::splat(0.0);
        Self::each_index(|i| {
            let (row, col) = Self::row_col(thread, i as u32);
            out.regs[i] = f(row, col);
        });
        out
    }

    /// Calls `f(row, col, value)` for each of thread `thread`'s elements, in register order
    /// (e.g. to store the tile).
    #[inline(always)]
    pub fn for_each(&self, thread: u32, mut f: impl FnMut(u32, u32, f32)) {
        Self::each_index(|i| {
            let (row, col) = Self::row_col(thread, i as u32);
            f(row, col, self.regs[i]);
        });
    }

    /// `(row, col)` in the 64×N tile of element `i` (`< REGS`) of thread `thread` (`< 128`).
    #[must_use]
    #[inline(always)]
    pub const fn row_col(thread: u32, i: u32) -> (u32, u32) {
        crate::wgmma::layout::acc_row_col(thread, i)
    }

    /// The two rows thread `thread` (`< 128`) holds elements of: `[16·warp + lane / 4,
    /// 16·warp + lane / 4 + 8]`.
    #[must_use]
    #[inline(always)]
    pub const fn rows(thread: u32) -> [u32; 2] {
        let r = Self::row_col(thread, 0).0;
        [r, r + 8]
    }

    /// Which of [`AccTile::rows`] element `i` lies in: `(i / 2) % 2`.
    #[must_use]
    #[inline(always)]
    pub const fn row_of(i: u32) -> usize {
        ((i / 2) % 2) as usize
    }

    /// This thread's elements of each of its two rows combined with `f` (associative) as a
    /// balanced tree: adjacent pairs `(i, i + 1)` first, then the pair results `h` apart for
    /// `h` = `REGS/8`, …, 2, 1 (depth log₂ of the row's `REGS / 2` elements, where a chain
    /// would be `REGS / 2` operations long: the latency an online softmax waits for).
    #[inline(always)]
    fn tree_rows(&self, f: impl Fn(f32, f32) -> f32) -> [f32; 2] {
        // The halving below pairs whole powers of two (no identity element pads a row).
        const {
            assert!(
                REGS.is_power_of_two(),
                "AccTile row reductions take N = 64, 128 or 256 (REGS a power of two)"
            )
        };
        // v[r][j]: pair j of row r, elements 4j + 2r and 4j + 2r + 1.
        let mut v = [[0.0f32; 32]; 2];
        Self::each_index(|i| {
            if i % 2 == 0 {
                v[Self::row_of(i as u32)][i / 4] = f(self.regs[i], self.regs[i + 1]);
            }
        });
        let pairs = REGS / 4;
        v.map(|mut v| {
            macro_rules! halve {
                ($h:literal, [$($j:literal)*]) => {
                    if pairs > $h {
                        $(v[$j] = f(v[$j], v[$j + $h]);)*
                    }
                };
            }
            halve!(16, [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15]);
            halve!(8, [0 1 2 3 4 5 6 7]);
            halve!(4, [0 1 2 3]);
            halve!(2, [0 1]);
            f(v[0], v[1])
        })
    }

    /// The maxima of this thread's own elements of its two rows ([`AccTile::rows`]), as a
    /// tree: with [`AccTile::quad_max`], the rows' maxima ([`AccTile::row_max`]).
    #[must_use]
    #[inline(always)]
    pub fn thread_row_max(&self) -> [f32; 2] {
        self.tree_rows(f32::max)
    }

    /// The sums of this thread's own elements of its two rows, as a tree (pairs of adjacent
    /// columns first): with [`AccTile::quad_sum`], the rows' sums ([`AccTile::row_sum`]).
    /// An online softmax keeps these per thread and sums across the quad once, at the end.
    #[must_use]
    #[inline(always)]
    pub fn thread_row_sum(&self) -> [f32; 2] {
        self.tree_rows(|a, b| a + b)
    }

    /// `x` combined with `f` across the four threads of this thread's quad (butterfly
    /// shuffles over lane masks 1 and 2): the same value in all four.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it convergently (`shfl.sync` with a full mask).
    #[inline(always)]
    unsafe fn across_quad(x: [f32; 2], f: impl Fn(f32, f32) -> f32) -> [f32; 2] {
        x.map(|v| {
            // SAFETY: the caller's contract: the whole warp is here.
            let v = f(v, unsafe { crate::warp::shfl_xor_sync(u32::MAX, v, 1, 32) });
            // SAFETY: as above.
            f(v, unsafe { crate::warp::shfl_xor_sync(u32::MAX, v, 2, 32) })
        })
    }

    /// Per-row values `x` (a thread's [`AccTile::thread_row_max`]) reduced to the rows'
    /// maxima across the four threads of the quad, which hold the whole rows between them.
    ///
    /// # Safety
    /// As [`AccTile::row_max`].
    #[must_use]
    #[inline(always)]
    pub unsafe fn quad_max(x: [f32; 2]) -> [f32; 2] {
        // SAFETY: forwarded.
        unsafe { Self::across_quad(x, f32::max) }
    }

    /// Per-row values `x` (a thread's [`AccTile::thread_row_sum`]) summed across the quad:
    /// `(t0 + t1) + (t2 + t3)` after the butterflies, rounded at each step.
    ///
    /// # Safety
    /// As [`AccTile::row_max`].
    #[must_use]
    #[inline(always)]
    pub unsafe fn quad_sum(x: [f32; 2]) -> [f32; 2] {
        // SAFETY: forwarded.
        unsafe { Self::across_quad(x, |a, b| a + b) }
    }

    /// The maxima of this thread's two rows ([`AccTile::rows`]) over all N columns: each
    /// thread's own elements ([`AccTile::thread_row_max`]), then across its quad. `f32::max`
    /// semantics: a NaN is ignored unless a whole row is NaN.
    ///
    /// # Safety
    /// All 32 lanes of the calling warp call it convergently (the shuffles' mask is the
    /// whole warp); the tile is a warpgroup's accumulator in the layout above.
    #[must_use]
    #[inline(always)]
    pub unsafe fn row_max(&self) -> [f32; 2] {
        // SAFETY: forwarded.
        unsafe { Self::quad_max(self.thread_row_max()) }
    }

    /// The sums of this thread's two rows ([`AccTile::rows`]) over all N columns: each
    /// thread's own elements ([`AccTile::thread_row_sum`]), then across its quad (rounded at
    /// each step: exact where every partial sum is).
    ///
    /// # Safety
    /// As [`AccTile::row_max`].
    #[must_use]
    #[inline(always)]
    pub unsafe fn row_sum(&self) -> [f32; 2] {
        // SAFETY: forwarded.
        unsafe { Self::quad_sum(self.thread_row_sum()) }
    }

    /// Replaces every element by `f(row, col, value)` (thread `thread`'s elements, with their
    /// place in the tile): e.g. a mask that sets the scores of invisible keys to `-∞`.
    #[inline(always)]
    pub fn map(&mut self, thread: u32, mut f: impl FnMut(u32, u32, f32) -> f32) {
        Self::each_index(|i| {
            let (row, col) = Self::row_col(thread, i as u32);
            self.regs[i] = f(row, col, self.regs[i]);
        });
    }

    /// Calls `f(row, col, v0, v1)` for each pair of thread `thread`'s elements that are
    /// neighbours in a row, `(row, col)` and `(row, col + 1)` (`col` even), in register
    /// order: what an epilogue stores as one 2-element (e.g. `bf16x2`) write.
    #[inline(always)]
    pub fn for_each_pair(&self, thread: u32, mut f: impl FnMut(u32, u32, f32, f32)) {
        Self::each_index(|i| {
            if i % 2 == 0 {
                let (row, col) = Self::row_col(thread, i as u32);
                f(row, col, self.regs[i], self.regs[i + 1]);
            }
        });
    }

    /// Applies `f(value, row_value)` to every element, with `row_value` this thread's value
    /// for the element's row (`per_row[AccTile::row_of(i)]`): e.g. `|x, m| x - m` with the
    /// row maxima, or `|x, s| x / s` with the row sums.
    #[inline(always)]
    pub fn map_rows(&mut self, per_row: [f32; 2], f: impl Fn(f32, f32) -> f32) {
        Self::each_index(|i| {
            self.regs[i] = f(self.regs[i], per_row[Self::row_of(i as u32)]);
        });
    }
}
