//! Tiles: shared-memory layouts typed by element, rows, columns and swizzle
//! ([`SmemTile`]), from which a kernel takes its byte sizes, swizzled element offsets, TMA
//! boxes and `expect_tx` counts, and `wgmma` descriptors, instead of computing them by hand.
//! The host builds its tensor maps from the same types (they live in
//! [`cust_core::tile`], which both sides depend on).
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

pub use cust_core::tile::{MatrixDescriptor, SmemTile, Swizzle, SwizzleMode, Tile, swizzle};

use crate::barrier::Phase;

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
/// The shapes are `cuda_std::wgmma`'s N = 64, 128, 256 (`REGS` = 32, 64, 128: the
/// [`AccShape`] tiles; no other `REGS` has the methods). Every element loop is unrolled with
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

/// The accumulator tiles of `cuda_std::wgmma`'s shapes, `AccTile<32>`, `<64>` and `<128>`
/// (N = 64, 128, 256), with their elements' indices spelled out as constants. Sealed.
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

    /// This thread's elements of each of its two rows folded with `f`, from `init`.
    #[inline(always)]
    fn fold_rows(&self, init: f32, f: impl Fn(f32, f32) -> f32) -> [f32; 2] {
        let mut out = [init; 2];
        Self::each_index(|i| {
            let r = Self::row_of(i as u32);
            out[r] = f(out[r], self.regs[i]);
        });
        out
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

    /// The maxima of this thread's two rows ([`AccTile::rows`]) over all N columns: each
    /// thread's own elements, then across its quad. `f32::max` semantics: a NaN is ignored
    /// unless a whole row is NaN.
    ///
    /// # Safety
    /// All 32 lanes of the calling warp call it convergently (the shuffles' mask is the
    /// whole warp); the tile is a warpgroup's accumulator in the layout above.
    #[must_use]
    #[inline(always)]
    pub unsafe fn row_max(&self) -> [f32; 2] {
        let own = self.fold_rows(f32::NEG_INFINITY, f32::max);
        // SAFETY: forwarded.
        unsafe { Self::across_quad(own, f32::max) }
    }

    /// The sums of this thread's two rows ([`AccTile::rows`]) over all N columns: each
    /// thread's own elements in register order, then across its quad (`(t0 + t1) + (t2 +
    /// t3)` after the butterflies, rounded at each step: exact where every partial sum is).
    ///
    /// # Safety
    /// As [`AccTile::row_max`].
    #[must_use]
    #[inline(always)]
    pub unsafe fn row_sum(&self) -> [f32; 2] {
        let own = self.fold_rows(0.0, |a, b| a + b);
        // SAFETY: forwarded.
        unsafe { Self::across_quad(own, |a, b| a + b) }
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
