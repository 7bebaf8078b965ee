//! Where the consumers' `wgmma` read `A` from ([`AOperand`]): shared memory through a
//! descriptor ([`SmemA`], the SS form, every input type) or registers loaded by
//! `ldmatrix` and rounded to TF32 on the way ([`RegA`], the RS form, TF32).

use super::elem::WgmmaElem;
use super::epilogue::for_even_acc;
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
    /// Whether `A` comes from registers (the kernel body then takes two stages per loop
    /// trip, so that consecutive stages' registers differ).
    const IN_REGISTERS: bool;
    /// Whether the kernel body inlines `SmemA`'s sequence itself instead of calling
    /// [`AOperand::stage_mma`] (`SmemA` only).
    const INLINE_SMEM: bool = false;
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
    const INLINE_SMEM: bool = true;
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

/// FP8's `m64n128k32`: half of a stage's 256 `B` rows at a time, for [`PromotedA`].
pub trait Fp8HalfMma: WgmmaElem {
    /// `acc (+)= A·B` for `A` 64×32 and `B` 32×128 (the `m64n128k32` of the type).
    ///
    /// # Safety
    /// As `cuda_std::wgmma::mma_m64n128k32_f32_e4m3`.
    unsafe fn mma_n128(
        acc: &mut [f32; 64],
        a: MatrixDescriptor,
        b: MatrixDescriptor,
        accumulate: bool,
    );
}

/// `A` from shared memory as with [`SmemA`], but each stage's products summed into `acc`
/// by `f32` additions in the registers ("promotion"), not in `wgmma`'s accumulator (FP8).
/// Per stage and half of `B` (128 columns of `C`): four `m64n128k32` into a fresh 64 × 128
/// partial tile (64 registers), a wait for them, then `acc += partial` (or `acc =` at the
/// first K step).
///
/// Why: Hopper's FP8 `wgmma` adds into its accumulator with fewer bits than `f32`
/// (`cuda_std::wgmma`'s FP8 docs), and over the whole of K our FP8 GEMM erred up to 2.5×
/// cuBLASLt's (K = 16384; equal at K = 128: README), which adds partial sums into `f32`
/// registers at intervals. Here the interval is a stage, 128 elements of K. The partial
/// tile plus `acc` are 192 registers, where a second 64 × 256 accumulator would not fit.
#[derive(Debug)]
pub enum PromotedA {}

impl<T: Fp8HalfMma> AOperand<T> for PromotedA {
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
        // SAFETY: the caller's contract, for each half of `B`.
        unsafe {
            promoted_half::<T, 0>(acc, a, b, kt);
            promoted_half::<T, 1>(acc, a, b, kt);
        }
    }
}

/// Half `H` of [`PromotedA`]'s stage: `B` rows `128·H..`, `acc` registers `64·H..64·H + 64`
/// (register i of an `m64n128` tile is register i of an `m64n256` one's first 128 columns,
/// `cuda_std::wgmma::layout::acc_row_col`). A const `H`, so that `acc` stays in registers.
///
/// # Safety
/// As [`AOperand::stage_mma`].
#[inline(always)]
unsafe fn promoted_half<T: Fp8HalfMma, const H: usize>(
    acc: &mut [f32; 128],
    a: MatrixDescriptor,
    b: MatrixDescriptor,
    kt: u32,
) {
    // Rows 128·H.. of the stage's `B` (whole 1024-byte swizzle atoms).
    let b = b.add_bytes_in_window(H as u32 * 128 * <T::BStage as Tile>::ROW_BYTES);
    let mut part = [0.0f32; 64];
    // `part` was written (and `acc` read) by other instructions: a fence before the
    // `wgmma` (PTX ISA §9.7.15.7.1).
    wgmma::fence();
    // SAFETY: the caller's contract; `a` names this warpgroup's `A` half, `b` half of the
    // stage's `B`.
    unsafe {
        T::mma_n128(&mut part, a, b, false);
        T::mma_n128(
            &mut part,
            a.add_bytes_in_window(32),
            b.add_bytes_in_window(32),
            true,
        );
        T::mma_n128(
            &mut part,
            a.add_bytes_in_window(64),
            b.add_bytes_in_window(64),
            true,
        );
        T::mma_n128(
            &mut part,
            a.add_bytes_in_window(96),
            b.add_bytes_in_window(96),
            true,
        );
    }
    wgmma::commit_group();
    wgmma::wait_group::<0>();
    // The partial tile's registers are read only from here on: pinned after the wait (as
    // CUTLASS's `warpgroup_fence_operand`), or LLVM may move the additions above it and
    // `ptxas` then serialises every `wgmma` (its C7514).
    // Spelled out over constant indices (`for_even_acc!`, four at a time), so that `acc`
    // and `part` stay in registers: a loop over them went to local memory.
    let first = kt == 0;
    macro_rules! promote_quad {
        ($i:literal) => {
            // `i`, `j`: the quad of `acc` and of `part` that `$i` falls in (each quad is
            // taken once, at its first, even index).
            if $i % 4 == 0 && $i / 64 == H {
                let i = $i / 4 * 4;
                let j = i % 64;
                let mut q = [
                    part[j].to_bits(),
                    part[j + 1].to_bits(),
                    part[j + 2].to_bits(),
                    part[j + 3].to_bits(),
                ];
                wgmma::fence_operand(&mut q);
                let q = q.map(f32::from_bits);
                if first {
                    acc[i] = q[0];
                    acc[i + 1] = q[1];
                    acc[i + 2] = q[2];
                    acc[i + 3] = q[3];
                } else {
                    acc[i] += q[0];
                    acc[i + 1] += q[1];
                    acc[i + 2] += q[2];
                    acc[i + 3] += q[3];
                }
            }
        };
    }
    for_even_acc!(promote_quad);
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
