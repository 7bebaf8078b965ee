//! TF32 inputs: [`Tf32Rounded`], the element type of the TF32 kernels' inputs, and the
//! integer rounding to TF32 that the pass over them (`round_tf32`, in `entries`) applies.

use cuda_std::DeviceCopy;

/// An `f32` already rounded to TF32 (its 13 low mantissa bits clear, as
/// [`round_tf32`](super::round_tf32) writes them), so that `wgmma`'s reading of the top bits
/// loses nothing: the input of the `gemm_wgmma_tf32*` kernels (whose `C` is `f32`). Any
/// other `f32` would be truncated.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tf32Rounded(pub f32);

// SAFETY: a transparent `f32`: plain bits, valid for every bit pattern, no pointers.
unsafe impl DeviceCopy for Tf32Rounded {}

/// `w`, the bits of an `f32`, rounded to TF32 to nearest, ties away from zero, in
/// integer arithmetic (what `cvt.rna.tf32.f32` computes, in 2 ALU operations and a
/// select instead of a conversion): add half a TF32 unit (bit 12) to the magnitude and
/// clear the 13 low bits; a carry into the exponent is the correct result (the next
/// binade, or infinity past the largest finite TF32 value). Infinities are unchanged,
/// and a NaN gets its quiet bit set, so that it stays a NaN once the low bits are gone.
#[inline(always)]
pub(super) fn tf32_rna_bits(w: u32) -> u32 {
    // Infinities round to themselves here too (the low bits are zero, no carry).
    let rounded = w.wrapping_add(0x1000) & !0x1fff;
    if w & 0x7fff_ffff > 0x7f80_0000 {
        w | 0x0040_0000
    } else {
        rounded
    }
}

#[cfg(test)]
mod tests {
    use super::tf32_rna_bits;
    use cuda_std::mma::tf32_from_f32;

    /// The integer rounding equals `tf32_from_f32` (whose host twin is tested against
    /// hand-worked `cvt.rna.tf32.f32` results) on finite values and infinities, and
    /// keeps NaNs NaN after the tensor core drops the low 13 bits.
    #[test]
    fn integer_rounding_matches_cvt_rna_and_keeps_nans() {
        let mut checked = 0;
        for i in 0..200_000u32 {
            let w = i.wrapping_mul(0x9e37_79b9) ^ (i >> 3);
            let x = f32::from_bits(w);
            let got = tf32_rna_bits(w);
            if x.is_nan() {
                let seen = f32::from_bits(got & !0x1fff);
                assert!(seen.is_nan(), "{w:#010x} -> {got:#010x}");
            } else {
                assert_eq!(got, tf32_from_f32(x).to_bits(), "{w:#010x}");
                checked += 1;
            }
        }
        assert!(checked > 150_000);
        // Ties go away from zero; the largest finite values round to infinity.
        assert_eq!(tf32_rna_bits(0x3f80_1000), 0x3f80_2000);
        assert_eq!(tf32_rna_bits(0xbf80_1000), 0xbf80_2000);
        assert_eq!(tf32_rna_bits(0x7f7f_ffff), 0x7f80_0000);
        assert_eq!(tf32_rna_bits(0xff80_0000), 0xff80_0000);
        // A NaN whose payload is only in the low bits stays a NaN.
        assert_eq!(tf32_rna_bits(0x7f80_0001), 0x7fc0_0001);
    }
}
