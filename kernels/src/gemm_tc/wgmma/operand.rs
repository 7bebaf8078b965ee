//! Where the consumers' `wgmma` read `A` from ([`AOperand`]): shared memory through a
//! descriptor ([`SmemA`], the SS form, every input type) or registers loaded by
//! `ldmatrix` and rounded to TF32 on the way ([`RegA`], the RS form, TF32).

use super::elem::WgmmaElem;
use super::tf32::Tf32Rounded;
use cuda_std::mma::tf32_from_f32;
use cuda_std::shared::window::SharedAddr;
use cuda_std::tile::Tile;
use cuda_std::wgmma::{self, MatrixDescriptor};

/// Where a consumer warpgroup's `wgmma` reads `A` from: the kernel body's parameter for
/// the two forms, `SmemA` (shared memory through a descriptor, every input type) and
/// `RegA` (registers, rounded there on the way: TF32).
pub trait AOperand<T: WgmmaElem> {
    /// Per-thread state kept across stages (the `ldmatrix` offsets of `RegA`).
    type Lanes: Copy;
    /// The registers a stage's `wgmma` read `A` from (`RegA`: the four fragments), kept
    /// by the kernel body until the `wgmma.wait_group` that covers them returned.
    type Held: Copy + Default;
    /// Whether `A` comes from registers (the kernel body then calls
    /// [`AOperand::stage_mma`]; for `false` it inlines `SmemA`'s sequence itself).
    const IN_REGISTERS: bool;
    /// The state of thread `t` (0..128) of a consumer warpgroup.
    fn lanes(t: u32) -> Self::Lanes;
    /// `acc (+)= A·B` for the stage of K step `kt` (`acc =` for `kt` = 0): this
    /// warpgroup's 64 rows of `A` at shared address
    /// `a_half` (the tile `T::AHalf`; `a` its descriptor) times the stage's `B` (`b`, 256
    /// rows), 4 × 32 bytes of K, `wgmma.fence` included, the commit not. Returns the
    /// registers the `wgmma` read `A` from, for [`AOperand::fence_held`] after the wait
    /// that covers them.
    ///
    /// # Safety
    /// The whole warpgroup runs this convergently with equal `a_half`, `a`, `b` and
    /// `kt`; the stage was written by TMA and its full phase completed, and is
    /// not overwritten before a `wgmma.wait_group` covering these operations returned.
    unsafe fn stage_mma(
        acc: &mut [f32; 128],
        lanes: Self::Lanes,
        a_half: u32,
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        kt: u32,
    ) -> Self::Held;
    /// Keeps `held` (a stage's [`AOperand::stage_mma`] result) live up to here: call it
    /// after the `wgmma.wait_group` that covers that stage's `wgmma` (PTX ISA
    /// §9.7.15.5.2: its register operands must not be rewritten before).
    fn fence_held(held: &mut Self::Held);
}

/// `A` read by `wgmma` from shared memory (the SS form).
#[derive(Debug)]
pub enum SmemA {}

impl<T: WgmmaElem> AOperand<T> for SmemA {
    type Lanes = ();
    type Held = ();
    const IN_REGISTERS: bool = false;
    #[inline(always)]
    fn lanes(_t: u32) {}
    #[inline(always)]
    fn fence_held((): &mut ()) {}
    #[inline(always)]
    unsafe fn stage_mma(
        acc: &mut [f32; 128],
        (): (),
        _a_half: u32,
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        kt: u32,
    ) {
        wgmma::fence();
        // SAFETY: the caller's contract; `a` names this warpgroup's `A` half.
        unsafe {
            T::mma(acc, a, b, kt != 0);
            T::mma(
                acc,
                a.add_bytes_in_window(32),
                b.add_bytes_in_window(32),
                true,
            );
            T::mma(
                acc,
                a.add_bytes_in_window(64),
                b.add_bytes_in_window(64),
                true,
            );
            T::mma(
                acc,
                a.add_bytes_in_window(96),
                b.add_bytes_in_window(96),
                true,
            );
        }
    }
}

/// `A` loaded into registers and rounded there (the RS form; TF32, unrounded `f32` in
/// memory): per stage, four `ldmatrix.x4` give each thread its `m64nNk8` `A` fragment of
/// the four K steps of 8 (`wgmma::layout::a_row_col_tf32`: an `f32` is a pair of 16-bit
/// elements, so the four 8×8 16-bit matrices of one `ldmatrix.x4` are rows
/// `16w..16w+8` and `16w+8..16w+16` of warp `w`, times the two 16-byte chunks of the K
/// step), each element is rounded to TF32 (`cvt.rna.tf32.f32`), and four
/// `m64n256k8` take `A` from the registers. The kernel body keeps a stage's registers
/// ([`AOperand::Held`]) live until the `wait_group` after the next stage's commit and
/// takes two stages per loop trip, so that the next stage's fragments go to other
/// registers (the [module docs](super): a one-stage loop overwrote them while the `wgmma` ran);
/// two stages' fragments (32 registers) are live at once.
#[derive(Debug)]
pub enum RegA {}

impl AOperand<Tf32Rounded> for RegA {
    /// Byte offsets in the `A` half of the rows this lane points `ldmatrix` at, one per
    /// K step of 8.
    type Lanes = [u32; 4];
    type Held = [[u32; 4]; 4];
    const IN_REGISTERS: bool = true;
    #[inline(always)]
    fn lanes(t: u32) -> [u32; 4] {
        type AHalf = <Tf32Rounded as WgmmaElem>::AHalf;
        // Lanes 8i..8i+8 address the rows of matrix i: rows 16w + 8·(i % 2) + l % 8,
        // 16-byte chunk 2s + i / 2 of K step s (columns 8s + 4·(i / 2)..+4), at its
        // swizzled place in the row (chunk `c ^ (row % 8)`: the 8 rows of a matrix fall
        // in 8 different chunks, so each `ldmatrix` phase is free of bank conflicts).
        let (warp, lane) = (t / 32, t % 32);
        let i = lane / 8;
        let row = 16 * warp + 8 * (i % 2) + lane % 8;
        let at = |s: u32| row * AHalf::ROW_BYTES + AHalf::SWIZZLE.chunk(row, 2 * s + i / 2) * 16;
        [at(0), at(1), at(2), at(3)]
    }
    #[inline(always)]
    unsafe fn stage_mma(
        acc: &mut [f32; 128],
        lanes: [u32; 4],
        a_half: u32,
        _a: MatrixDescriptor,
        b: MatrixDescriptor,
        kt: u32,
    ) -> [[u32; 4]; 4] {
        let fragment = |s: usize| {
            // SAFETY: the whole warp runs this convergently (the caller's contract);
            // every lane's address is a 16-byte chunk of this warpgroup's `A` half,
            // written by TMA (its full phase completed: visible to this thread), not
            // written again before the stage is released.
            let raw = unsafe {
                cuda_std::mma::ldmatrix_x4_window(SharedAddr::from_bits(a_half + lanes[s]))
            };
            raw.map(|x| tf32_from_f32(f32::from_bits(x)).to_bits())
        };
        let a = [fragment(0), fragment(1), fragment(2), fragment(3)];
        // The fragments' registers were written: a fence before the `wgmma` that read
        // them (PTX ISA §9.7.15.7.1).
        wgmma::fence();
        // SAFETY: the caller's contract for `b`; the fragments are this thread's part of
        // `A` for each K step of 8, written before the fence.
        unsafe {
            wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[0], b, kt != 0);
            wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[1], b.add_bytes_in_window(32), true);
            wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[2], b.add_bytes_in_window(64), true);
            wgmma::mma_m64n256k8_f32_tf32_rs(acc, a[3], b.add_bytes_in_window(96), true);
        }
        a
    }
    #[inline(always)]
    fn fence_held(held: &mut [[u32; 4]; 4]) {
        for fragment in held {
            wgmma::fence_operand(fragment);
        }
    }
}
