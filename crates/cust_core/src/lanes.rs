//! The lane maps of the tensor-core instructions: which matrix element each lane's
//! register holds. Pure `const fn`s, read by both sides: `cuda_std` re-exports them as
//! `mma::layout` and `wgmma::layout` for kernels, and the CPU emulator (`cuda_emu`) computes
//! `mma.sync`, `ldmatrix`, `stmatrix` and `wgmma` results with them, so the device library
//! and its emulation cannot disagree on a layout.

/// Lane-to-element maps of the `mma.sync` fragments: pure functions, usable on the host and
/// in `no_std`, that give the `(row, col)` of the matrix element a lane holds in a register.
///
/// Source: PTX ISA §9.7.14.5 ("Matrix multiply-accumulate operation using mma
/// instruction"), figures "MMA .m16n8k16 fragment layout for matrix A with .f16/.bf16
/// type" (and for B, C/D) in "Matrix Fragments for mma.m16n8k16 with floating point
/// type", and "MMA .m16n8k8 fragment layout for matrix A with .tf32 type" (and for B, C/D)
/// in "Matrix Fragments for mma.m16n8k8". With `group = lane / 4` ("groupID") and
/// `t = lane % 4` ("threadID_in_group"):
///
/// | fragment | register `r`, element `h` | `(row, col)` |
/// |---|---|---|
/// | A m16n8k16 (16×16) | `r` 0..4, `h` 0..2 | `(group + 8·(r % 2), 2t + h + 8·(r / 2))` |
/// | B m16n8k16 (16×8, K×N) | `r` 0..2, `h` 0..2 | `(2t + h + 8·r, group)` |
/// | A m16n8k8 tf32 (16×8) | `r` 0..4 | `(group + 8·(r % 2), t + 4·(r / 2))` |
/// | B m16n8k8 tf32 (8×8, K×N) | `r` 0..2 | `(t + 4·r, group)` |
/// | C/D m16n8 f32 (16×8) | `r` 0..4 | `(group + 8·(r / 2), 2t + r % 2)` |
///
/// Arguments are not checked: `lane` < 32 and `reg`, `half` in the ranges above give an
/// element inside the matrix (each exactly once over all lanes); others give coordinates
/// outside it.
pub mod mma {
    /// `(row, col)` in `A` (16×16, M×K) of element `half` (0 = bits 0–15, 1 = bits 16–31)
    /// of register `reg` (0..4) of lane `lane`, for `m16n8k16` with `.f16`/`.bf16`.
    #[must_use]
    pub const fn a_m16n8k16(lane: u32, reg: u32, half: u32) -> (u32, u32) {
        let (group, t) = (lane / 4, lane % 4);
        (group + 8 * (reg % 2), 2 * t + half + 8 * (reg / 2))
    }

    /// `(row, col)` = `(k, n)` in `B` (16×8, K×N) of element `half` of register `reg` (0..2)
    /// of lane `lane`, for `m16n8k16` with `.f16`/`.bf16`.
    #[must_use]
    pub const fn b_m16n8k16(lane: u32, reg: u32, half: u32) -> (u32, u32) {
        let (group, t) = (lane / 4, lane % 4);
        (2 * t + half + 8 * reg, group)
    }

    /// `(row, col)` in `A` (16×8, M×K) of register `reg` (0..4) of lane `lane`, for
    /// `m16n8k8` with `.tf32`.
    #[must_use]
    pub const fn a_m16n8k8_tf32(lane: u32, reg: u32) -> (u32, u32) {
        let (group, t) = (lane / 4, lane % 4);
        (group + 8 * (reg % 2), t + 4 * (reg / 2))
    }

    /// `(row, col)` = `(k, n)` in `B` (8×8, K×N) of register `reg` (0..2) of lane `lane`,
    /// for `m16n8k8` with `.tf32`.
    #[must_use]
    pub const fn b_m16n8k8_tf32(lane: u32, reg: u32) -> (u32, u32) {
        let (group, t) = (lane / 4, lane % 4);
        (t + 4 * reg, group)
    }

    /// `(row, col)` in `C`/`D` (16×8, M×N, `.f32`) of register `reg` (0..4) of lane `lane`,
    /// for both `m16n8k16` and `m16n8k8`.
    #[must_use]
    pub const fn acc_m16n8(lane: u32, reg: u32) -> (u32, u32) {
        let (group, t) = (lane / 4, lane % 4);
        (group + 8 * (reg / 2), 2 * t + reg % 2)
    }

    /// `(row, col)` of the 8×8 matrix element that `ldmatrix` (without `.trans`) puts in
    /// element `half` (0 = bits 0–15) of one destination register of lane `lane`: row
    /// `lane / 4`, column `2·(lane % 4) + half`, where row `i` is the 16 bytes lane `i` (of
    /// the lanes addressing that matrix) points at. With `.trans` the roles swap: the
    /// element is at `(col, row)` of what the addresses point at. PTX ISA §9.7.14.5,
    /// "Warp-level matrix load instruction: ldmatrix", figure "ldmatrix fragment layout".
    #[must_use]
    pub const fn ldmatrix_b16(lane: u32, half: u32) -> (u32, u32) {
        (lane / 4, 2 * (lane % 4) + half)
    }
}

/// Pure functions mapping `wgmma` registers and shared-memory layouts to matrix
/// coordinates; they run on the host too (the tests' CPU models use them).
pub mod wgmma {
    /// `(row, col)` in the 64×N tile of `D` of accumulator element `i` (0..N/2) of thread
    /// `thread` (0..128, the index within the warpgroup), for every `m64nNk*` shape with an
    /// `f32` accumulator.
    ///
    /// PTX ISA §9.7.15.5.1.1 (figure "WGMMA .m64nNk16 register fragment layout for
    /// accumulator matrix D"): warp `w = thread / 32` owns rows `16w..16w+16`; within it,
    /// lane `l` has `group = l / 4` and `t = l % 4`, and the registers come in 8-column
    /// blocks of four: `i = 4·j + 2·h + c` is at row `16w + group + 8h`, column
    /// `8j + 2t + c` (the `mma.m16n8` accumulator layout repeated N/8 times).
    ///
    /// Arguments are not checked: `thread < 128` and `i < N/2` give each element of the
    /// tile exactly once.
    #[must_use]
    pub const fn acc_row_col(thread: u32, i: u32) -> (u32, u32) {
        let (warp, lane) = (thread / 32, thread % 32);
        let (group, t) = (lane / 4, lane % 4);
        (
            16 * warp + group + 8 * ((i / 2) % 2),
            8 * (i / 4) + 2 * t + i % 2,
        )
    }

    /// `(row, col)` in the 64×16 tile of `A` of half `half` (0: the low 16 bits) of
    /// register `reg` (0..4) of thread `thread` (0..128) for the `m64nNk16` forms that take
    /// `A` from registers (f16, bf16; PTX ISA §9.7.15.5.1.1, figure "WGMMA .m64nNk16 register
    /// fragment layout for matrix A"): warp `w` owns rows `16w..16w+16` in the `mma.m16n8k16`
    /// `A` layout, register `reg` at row `16w + group + 8·(reg % 2)`, column
    /// `8·(reg / 2) + 2t + half`. So accumulator elements `8j..8j+8` of a 64×N `D`
    /// ([`acc_row_col`]), packed in pairs, are exactly the `A` registers of its columns
    /// `16j..16j+16`: how attention feeds `P = softmax(S)` into `P·V` without shared memory.
    #[must_use]
    pub const fn a_row_col(thread: u32, reg: u32, half: u32) -> (u32, u32) {
        let (warp, lane) = (thread / 32, thread % 32);
        let (group, t) = (lane / 4, lane % 4);
        (
            16 * warp + group + 8 * (reg % 2),
            8 * (reg / 2) + 2 * t + half,
        )
    }

    /// `(row, col)` in the 64×8 tile of `A` of register `reg` (0..4, one `.tf32` element
    /// each) of thread `thread` (0..128) for the `m64nNk8` `.tf32` forms that take `A` from
    /// registers (PTX ISA §9.7.15.5.1.1, figure "WGMMA .m64nNk8 register fragment layout for
    /// matrix A"): warp `w` owns rows `16w..16w+16` in the `mma.m16n8k8` `.tf32` `A` layout
    /// ([`super::mma::a_m16n8k8_tf32`]), register `reg` at row `16w + group + 8·(reg % 2)`,
    /// column `t + 4·(reg / 2)`. So `ldmatrix.x4` (16-bit pairs) of the four 8-row × 16-byte
    /// blocks (rows `16w..16w+8` and `16w+8..16w+16`, times columns `0..4` and `4..8`, in
    /// that order) puts exactly this fragment in its four registers: an `f32` is a pair of
    /// 16-bit elements, and lane `l` gets row `l / 4`, pair `l % 4` of each block
    /// ([`super::mma::ldmatrix_b16`]).
    #[must_use]
    pub const fn a_row_col_tf32(thread: u32, reg: u32) -> (u32, u32) {
        let (warp, lane) = (thread / 32, thread % 32);
        let (row, col) = super::mma::a_m16n8k8_tf32(lane, reg);
        (16 * warp + row, col)
    }

    /// Byte offset of the byte `k_bytes` (of its row, K-major) of row `row` in a
    /// `cuda_std::wgmma::Swizzle::None` K-major tile whose core matrices (8 rows ×
    /// 16 bytes, rows 16 bytes apart) are `lbo` bytes apart along K and `sbo` bytes apart
    /// along M/N: the layout a `cuda_std::wgmma::MatrixDescriptor` with leading
    /// byte offset `lbo` and stride byte offset `sbo` describes (PTX ISA §9.7.15.5.1
    /// "Shared Memory Matrix Layout", the K-major "no swizzling" figure).
    #[must_use]
    pub const fn offset_no_swizzle(row: u32, k_bytes: u32, lbo: u32, sbo: u32) -> u32 {
        (row / 8) * sbo + (k_bytes / 16) * lbo + (row % 8) * 16 + k_bytes % 16
    }

    /// Byte offset of byte `k_bytes` (< 128) of row `row` in a
    /// `cuda_std::wgmma::Swizzle::B128` K-major tile of 128-byte rows: 16-byte
    /// chunk `c` of row `r` is stored at chunk `c ^ (r % 8)` of that row (PTX ISA
    /// §9.7.15.5.1, the "128-Byte swizzling" layout; TMA's `CU_TENSOR_MAP_SWIZZLE_128B`
    /// writes the same). 8-row groups are 1024 bytes apart (the stride byte offset).
    #[must_use]
    pub const fn offset_swizzle_128b(row: u32, k_bytes: u32) -> u32 {
        row * 128 + (((k_bytes / 16) ^ (row % 8)) * 16) + k_bytes % 16
    }
}

#[cfg(test)]
mod tests {
    use super::{mma, wgmma};

    /// The `.tf32` `A` fragment covers the 64×8 tile once, and is what `ldmatrix.x4` gives
    /// when matrix `reg` is rows `16w + 8·(reg % 2)..+8`, columns `4·(reg / 2)..+4` (16
    /// bytes), an `f32` being the 16-bit pair `2c, 2c + 1`.
    #[test]
    fn tf32_a_fragment_is_ldmatrix_x4_of_four_row_blocks() {
        let mut seen = [[0u8; 8]; 64];
        for thread in 0..128 {
            let (warp, lane) = (thread / 32, thread % 32);
            for reg in 0..4 {
                let (row, col) = wgmma::a_row_col_tf32(thread, reg);
                seen[row as usize][col as usize] += 1;
                let (r, pair) = mma::ldmatrix_b16(lane, 0);
                assert_eq!(pair % 2, 0);
                assert_eq!(
                    (row, col),
                    (16 * warp + 8 * (reg % 2) + r, 4 * (reg / 2) + pair / 2)
                );
            }
        }
        assert!(seen.iter().flatten().all(|&n| n == 1));
    }
}
