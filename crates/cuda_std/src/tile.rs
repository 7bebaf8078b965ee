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
