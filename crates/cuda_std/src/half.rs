//! Half-precision floats: the scalar types [`f16`](struct@f16) (IEEE 754 binary16) and
//! [`bf16`] (bfloat16), re-exported from the [`half`](https://docs.rs/half) crate as
//! Rust-CUDA does, the packed pairs [`F16x2`] and [`Bf16x2`] with the GPU's packed
//! arithmetic, scalar conversions from and to `f32`, and the 8-bit floats [`F8E4M3`] and
//! [`F8E5M2`] (see [FP8](self#fp8)).
//!
//! ```
//! use cuda_std::half::{F16x2, f16, f16_from_f32};
//! // Element 0 is the low half of the packed bits.
//! let a = F16x2::new(f16_from_f32(1.5), f16_from_f32(-2.0));
//! assert_eq!(a.to_bits() & 0xffff, u32::from(f16_from_f32(1.5).to_bits()));
//! // a·4 + 1, per element: the same code runs in a kernel (`fma.rn.f16x2`) and on the host.
//! let d = a.mul_add(F16x2::splat(f16_from_f32(4.0)), F16x2::splat(f16::ONE));
//! assert_eq!(d.to_array(), [f16_from_f32(7.0), f16_from_f32(-7.0)]);
//! ```
//!
//! # Packing
//! A packed pair is one 32-bit register holding two 16-bit values, as PTX's `.f16x2` and `.bf16x2`
//! types do (PTX ISA §5.2.5, "Packed Data Types"): **element 0 in the low 16 bits, element 1 in the
//! high 16 bits**, the order of `mov.b32 d, {a, b}`, whose semantics are `d = a | (b << 16)` (PTX
//! ISA §9.7, "Data Movement and Conversion Instructions: mov"). In memory (little-endian) element 0
//! comes first, so a `&[f16]` of even length reads as a `&[F16x2]` of pairs `(v[2i], v[2i+1])`.
//! Note that `cvt.rn.f16x2.f32 d, a, b` puts `a` in the *high* half: [`f16x2_from_f32`] and
//! [`bf16x2_from_f32`] take their arguments in element order and swap them for it.
//!
//! # Same bits on the CPU and the GPU
//! Every function here also runs on the host, where it computes in software and rounds once
//! to the half type, so host and device give the same bits for every non-NaN input:
//! - the product of two halves is exact in `f32` and in `f64` (11 + 11 = 22 significant bits
//!   for `f16`, 8 + 8 = 16 for `bf16`; the exponent ranges fit in `f64`);
//! - `fma.rn` rounds `a·b + c` once. The host computes `a·b` exactly in `f64`, the sum
//!   `a·b + c` as an unevaluated pair `s + e` (Knuth's TwoSum, exact), rounds that pair *to
//!   odd* into an `f32` (truncate, then set the last bit if anything was dropped) and then to
//!   nearest-even into the half type. Rounding to odd with at least two extra bits (24 ≥ 11 +
//!   2) makes the second rounding equal to a single rounding of the exact value (Boldo and
//!   Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
//!   rounding to odd", IEEE TC 2008);
//! - `add` and `mul` are the same computation with `a·1 + c` and `a·b + (−0)`.
//!
//! The naive host computation `f32::mul_add(a, b, c)` followed by a conversion to the half
//! type would round twice and can differ by one unit in the last place when the exact sum
//! has more than 24 significant bits and the `f32` rounding lands on a midpoint of the half
//! type (the unit tests show such inputs). The probes' integer-valued inputs avoid that
//! case by construction (every sum is exact in `f32`); the random ones need the
//! round-to-odd step above, which is why it is there.
//!
//! NaN payloads are not reproduced: the GPU returns a canonical NaN where the host's `half`
//! crate keeps (part of) the payload. Subnormal halves are kept on both sides (no `.ftz`).
//!
//! # Architectures
//! `f16` arithmetic (`fma.rn.f16x2`, `add.rn.f16x2`, `mul.rn.f16x2`) and the `f16` conversions need
//! sm_53 (below our sm_70 baseline). `bf16` arithmetic (`fma.rn.bf16x2`) and `cvt.rn.bf16.f32` need
//! **sm_80** and PTX ISA 7.0 (PTX ISA §9.7, "Half Precision Floating-Point Instructions: fma" and
//! "Data Movement and Conversion Instructions: cvt"): on the GPU those items exist only when the
//! kernels are built for sm_80 or later (`cfg(target_feature = "sm_80")`); on the host they always
//! exist and compute. `add.bf16x2`/`mul.bf16x2` need sm_90 (PTX ISA 7.8), so the `bf16` sum and
//! product use `fma.rn.bf16x2` with `1.0` and `−0.0` (exactly the same results), as CUDA's
//! `__hadd2` and `__hmul2` do on sm_80. `bf16` → `f32` is a 16-bit shift (exact, every
//! architecture), not `cvt.f32.bf16`, which needs PTX ISA 7.1+.

//!
//! # FP8
//! [`F8E4M3`] and [`F8E5M2`] are the OCP FP8 formats ("OCP 8-bit Floating Point
//! Specification (OFP8)", rev. 1.0) that sm_89+ tensor cores read, as bytes. `from_f32`
//! rounds to nearest-even and **saturates** as `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` does:
//! finite values beyond the largest magnitude (448 for E4M3, 57344 for E5M2) and ±∞ become
//! ± that magnitude, NaN becomes `0x7f`; it needs **sm_89** and PTX ISA 7.8 on the GPU
//! (`cfg(target_feature = "sm_89")`), and computes in software on the host
//! (`from_f32_soft`, also usable in `const` and on any GPU). `to_f32` is exact, through
//! `cvt.rn.f16x2.{e4m3,e5m2}x2` on sm_89+ and in software elsewhere. The host's software
//! and the GPU's `cvt` give the same bits for every input (up to NaN payloads), which
//! `tests/tests/fp8.rs` checks on an H100.

use crate::DeviceCopy;

/// IEEE 754 binary16 (1 sign, 5 exponent, 10 mantissa bits) and bfloat16 (1 sign, 8
/// exponent, 7 mantissa bits), from the `half` crate (no_std, no default features): the
/// same types on the host and in kernels, `#[repr(transparent)]` over their `u16` bits and
/// [`DeviceCopy`] (through `cust_core`'s `half` feature).
pub use ::half::{bf16, f16};

/// Two `f16` values packed in one `u32`, as PTX's `.f16x2`: element 0 in bits 0..16,
/// element 1 in bits 16..32 (see the [module docs](self#packing)).
///
/// Equality (`==`) compares the bits (so `+0 != -0` and a NaN equals itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16x2(u32);

/// Two `bf16` values packed in one `u32`, as PTX's `.bf16x2`: element 0 in bits 0..16,
/// element 1 in bits 16..32 (see the [module docs](self#packing)).
///
/// Equality (`==`) compares the bits (so `+0 != -0` and a NaN equals itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bf16x2(u32);

// SAFETY: `#[repr(transparent)]` over a `u32`; every bit pattern is a valid pair.
unsafe impl DeviceCopy for F16x2 {}
// SAFETY: as for `F16x2`.
unsafe impl DeviceCopy for Bf16x2 {}

macro_rules! packed_common {
    ($pair:ident, $t:ident) => {
        impl $pair {
            #[doc = concat!("The pair `(x0, x1)`: `x0` in the low 16 bits, `x1` in the high.")]
            #[inline(always)]
            #[must_use]
            pub const fn new(x0: $t, x1: $t) -> Self {
                Self(x0.to_bits() as u32 | (x1.to_bits() as u32) << 16)
            }

            /// The pair `(x, x)`.
            #[inline(always)]
            #[must_use]
            pub const fn splat(x: $t) -> Self {
                Self::new(x, x)
            }

            /// The pair whose packed bits are `bits` (element 0 in bits 0..16).
            #[inline(always)]
            #[must_use]
            pub const fn from_bits(bits: u32) -> Self {
                Self(bits)
            }

            /// The packed bits (element 0 in bits 0..16, element 1 in bits 16..32).
            #[inline(always)]
            #[must_use]
            pub const fn to_bits(self) -> u32 {
                self.0
            }

            /// The two elements, `[x0, x1]`.
            #[inline(always)]
            #[must_use]
            pub const fn to_array(self) -> [$t; 2] {
                [
                    $t::from_bits(self.0 as u16),
                    $t::from_bits((self.0 >> 16) as u16),
                ]
            }
        }

        impl From<[$t; 2]> for $pair {
            #[inline(always)]
            fn from([x0, x1]: [$t; 2]) -> Self {
                Self::new(x0, x1)
            }
        }
    };
}
packed_common!(F16x2, f16);
packed_common!(Bf16x2, bf16);

impl F16x2 {
    /// `self · b + c` per element, rounded once to nearest-even (`fma.rn.f16x2`, PTX ISA §9.7,
    /// "Half Precision Floating-Point Instructions: fma"; sm_53+, so every architecture we build).
    /// On the host: the same bits for non-NaN inputs (see the [module
    /// docs](self#same-bits-on-the-cpu-and-the-gpu)).
    #[inline(always)]
    #[must_use]
    pub fn mul_add(self, b: Self, c: Self) -> Self {
        Self(crate::arch::half::fma_f16x2(self.0, b.0, c.0))
    }
}

/// Per element `a + b`, rounded to nearest-even: `add.rn.f16x2` (PTX ISA §9.7, "Half Precision
/// Floating-Point Instructions: add"; sm_53+). On the host: the same bits for non-NaN inputs.
impl core::ops::Add for F16x2 {
    type Output = Self;

    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        Self(crate::arch::half::add_f16x2(self.0, rhs.0))
    }
}

/// Per element `a · b`, rounded to nearest-even: `mul.rn.f16x2` (PTX ISA §9.7, "Half Precision
/// Floating-Point Instructions: mul"; sm_53+). On the host: the same bits for non-NaN inputs.
impl core::ops::Mul for F16x2 {
    type Output = Self;

    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        Self(crate::arch::half::mul_f16x2(self.0, rhs.0))
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl Bf16x2 {
    /// `self · b + c` per element, rounded once to nearest-even (`fma.rn.bf16x2`, PTX ISA §9.7,
    /// "Half Precision Floating-Point Instructions: fma"). **sm_80+**, PTX ISA 7.0: on the GPU this
    /// exists only when the kernels are built for sm_80 or later (`cfg(target_feature = "sm_80")`).
    /// On the host: the same bits for non-NaN inputs (see the [module
    /// docs](self#same-bits-on-the-cpu-and-the-gpu)).
    #[inline(always)]
    #[must_use]
    pub fn mul_add(self, b: Self, c: Self) -> Self {
        Self(crate::arch::half::fma_bf16x2(self.0, b.0, c.0))
    }
}

/// Per element `a + b`, rounded to nearest-even, as `fma.rn.bf16x2 d, a, 1.0, b` (the same
/// result as `add.rn.bf16x2`, which needs sm_90). **sm_80+**, PTX ISA 7.0: on the GPU this
/// exists only in sm_80+ builds. On the host: the same bits for non-NaN inputs.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl core::ops::Add for Bf16x2 {
    type Output = Self;

    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        self.mul_add(Self::splat(bf16::ONE), rhs)
    }
}

/// Per element `a · b`, rounded to nearest-even, as `fma.rn.bf16x2 d, a, b, -0.0` (the same
/// result as `mul.rn.bf16x2`, which needs sm_90; adding `−0` keeps the sign of a zero
/// product). **sm_80+**, PTX ISA 7.0: on the GPU this exists only in sm_80+ builds. On the
/// host: the same bits for non-NaN inputs.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl core::ops::Mul for Bf16x2 {
    type Output = Self;

    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        self.mul_add(rhs, Self::splat(bf16::NEG_ZERO))
    }
}

/// `x` rounded to the nearest `f16` (ties to even; beyond ±65520 to ±∞): `cvt.rn.f16.f32` (PTX ISA
/// §9.7, "Data Movement and Conversion Instructions: cvt"; every architecture we build). On the
/// host: `half::f16::from_f32`, the same bits for non-NaN `x`.
#[inline(always)]
#[must_use]
pub fn f16_from_f32(x: f32) -> f16 {
    f16::from_bits(crate::arch::half::f16_from_f32(x))
}

/// `x` as an `f32` (exact): `cvt.f32.f16` (PTX ISA §9.7, "Data Movement and Conversion
/// Instructions: cvt"; every architecture we build). On the host: `half::f16::to_f32`.
#[inline(always)]
#[must_use]
pub fn f16_to_f32(x: f16) -> f32 {
    crate::arch::half::f16_to_f32(x.to_bits())
}

/// `x` rounded to the nearest `bf16` (ties to even): `cvt.rn.bf16.f32` (PTX ISA §9.7, "Data
/// Movement and Conversion Instructions: cvt"). **sm_80+**, PTX ISA 7.0: on the GPU this exists
/// only when the kernels are built for sm_80 or later (`cfg(target_feature = "sm_80")`). On the
/// host: `half::bf16::from_f32`, the same bits for non-NaN `x`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[must_use]
pub fn bf16_from_f32(x: f32) -> bf16 {
    bf16::from_bits(crate::arch::half::bf16_from_f32(x))
}

/// `lo` and `hi` rounded to the nearest `bf16` (ties to even) and packed, `lo` as element 0
/// (the low half): one `cvt.rn.bf16x2.f32 d, hi, lo` (PTX ISA §9.7 "cvt": its first source
/// goes to the high half), where two [`bf16_from_f32`] and the packing take six
/// instructions. **sm_80+**, PTX ISA 7.0. On the host: two `half::bf16::from_f32`, the same
/// bits for non-NaN inputs.
///
/// ```
/// use cuda_std::half::{bf16, bf16x2_from_f32};
/// let p = bf16x2_from_f32(1.0, -2.5);
/// assert_eq!(p.to_array(), [bf16::from_f32(1.0), bf16::from_f32(-2.5)]);
/// assert_eq!(p.to_bits(), 0xc020_3f80);
/// ```
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[must_use]
pub fn bf16x2_from_f32(lo: f32, hi: f32) -> Bf16x2 {
    Bf16x2::from_bits(crate::arch::half::bf16x2_from_f32(lo, hi))
}

/// `lo` and `hi` rounded to the nearest `f16` (ties to even; beyond ±65520 to ±∞) and
/// packed, `lo` as element 0: one `cvt.rn.f16x2.f32 d, hi, lo`. **sm_80+**, PTX ISA 7.0. On
/// the host: two `half::f16::from_f32`, the same bits for non-NaN inputs.
///
/// ```
/// use cuda_std::half::{f16, f16x2_from_f32};
/// let p = f16x2_from_f32(0.5, 70000.0);
/// assert_eq!(p.to_array(), [f16::from_f32(0.5), f16::INFINITY]);
/// ```
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[must_use]
pub fn f16x2_from_f32(lo: f32, hi: f32) -> F16x2 {
    F16x2::from_bits(crate::arch::half::f16x2_from_f32(lo, hi))
}

/// `x` as an `f32` (exact): the `bf16` bits shifted into the high half of an `f32`, on both
/// sides and on every architecture. This equals `cvt.f32.bf16` (which needs PTX ISA 7.1+)
/// for every input, NaN payloads included.
#[inline(always)]
#[must_use]
pub const fn bf16_to_f32(x: bf16) -> f32 {
    f32::from_bits((x.to_bits() as u32) << 16)
}

/// An 8-bit float in the OCP FP8 **E4M3** format ("OCP 8-bit Floating Point Specification
/// (OFP8)", rev. 1.0, 2023; NVIDIA's `__nv_fp8_e4m3`, PTX's `.e4m3`): 1 sign, 4 exponent
/// bits (bias 7), 3 mantissa bits. No infinities; `S.1111.111` (`0x7f`, `0xff`) is NaN, so
/// the largest finite value is `S.1111.110` = ±448; the smallest normal 2⁻⁶, the smallest
/// subnormal 2⁻⁹. `#[repr(transparent)]` over its bits, [`DeviceCopy`].
///
/// Equality (`==`) compares the bits (so `+0 != -0` and a NaN equals itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F8E4M3(u8);

/// An 8-bit float in the OCP FP8 **E5M2** format (same specification; `__nv_fp8_e5m2`,
/// PTX's `.e5m2`): 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like:
/// `S.11111.00` is ±∞, `S.11111.{01,10,11}` NaN; the largest finite value ±57344, the
/// smallest normal 2⁻¹⁴, the smallest subnormal 2⁻¹⁶. `#[repr(transparent)]` over its
/// bits, [`DeviceCopy`].
///
/// Equality (`==`) compares the bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F8E5M2(u8);

// SAFETY: plain bytes, no pointers; every bit pattern is a valid value.
unsafe impl DeviceCopy for F8E4M3 {}
// SAFETY: as above.
unsafe impl DeviceCopy for F8E5M2 {}

/// The parameters of an FP8 format for the software conversions.
struct F8Format {
    /// Mantissa bits.
    mant: u32,
    /// Exponent bias.
    bias: i32,
    /// The largest finite magnitude's code (`0x7e` E4M3, `0x7b` E5M2).
    max_code: u8,
    /// The largest finite magnitude.
    max: f32,
    /// Whether the all-ones exponent holds finite values (E4M3: only `.111` is NaN).
    no_inf: bool,
}

const E4M3: F8Format = F8Format {
    mant: 3,
    bias: 7,
    max_code: 0x7e,
    max: 448.0,
    no_inf: true,
};

const E5M2: F8Format = F8Format {
    mant: 2,
    bias: 15,
    max_code: 0x7b,
    max: 57344.0,
    no_inf: false,
};

/// The canonical FP8 NaN `cvt` produces, both formats: `0x7f`.
const F8_NAN: u8 = 0x7f;

/// `x` rounded to nearest-even in format `f`, saturating: NaN → [`F8_NAN`], ±∞ and finite
/// values beyond the largest finite magnitude → ± that magnitude (`cvt.rn.satfinite`).
/// Integer arithmetic on the `f32` bits, so the same on the host and the GPU.
const fn f8_from_f32_soft(x: f32, f: &F8Format) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 31) as u8) << 7;
    let abs = bits & 0x7fff_ffff;
    if abs > 0x7f80_0000 {
        return F8_NAN;
    }
    if f32::from_bits(abs) >= f.max {
        return sign | f.max_code;
    }
    let e = (abs >> 23) as i32;
    // Significand with its implicit bit: |x| = m · 2^(ee − 23).
    let m = if e > 0 {
        (abs & 0x7f_ffff) | 0x80_0000
    } else {
        abs
    };
    let ee = if e > 0 { e } else { 1 } - 127;
    // The binade whose quantum applies: |x|'s own, or the subnormal one (1 − bias).
    let min_exp = 1 - f.bias;
    let binade = if e > 0 && e - 127 > min_exp {
        e - 127
    } else {
        min_exp
    };
    // |x| / quantum = m · 2^-shift, quantum = 2^(binade − mant); shift ≥ 23 − mant > 0.
    let shift = (binade - f.mant as i32) - (ee - 23);
    let q = if shift >= 32 {
        // m < 2^24 ≤ 2^(shift − 8): far below half a quantum.
        0
    } else {
        let (q, r) = (m >> shift, m & ((1u32 << shift) - 1));
        let half = 1u32 << (shift - 1);
        if r > half || (r == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    // q quanta of the binade: code (binade + bias − 1) · 2^mant + q covers subnormals
    // (binade field 0, q < 2^mant), normals (q in 2^mant..2^(mant+1)) and the carry of a
    // rounding up to the next binade (q = 2^(mant+1)).
    let code = (((binade + f.bias - 1) as u32) << f.mant) + q;
    let code = if code > f.max_code as u32 {
        f.max_code
    } else {
        code as u8
    };
    sign | code
}

/// The value of `code` in format `f`, exactly (every FP8 value is an `f32`).
const fn f8_to_f32_soft(code: u8, f: &F8Format) -> f32 {
    let sign = ((code >> 7) as u32) << 31;
    let exp = ((code & 0x7f) >> f.mant) as i32;
    let man = (code & ((1 << f.mant) - 1)) as u32;
    let all_ones = (1i32 << (7 - f.mant)) - 1;
    if exp == all_ones && (!f.no_inf || man == (1 << f.mant) - 1) {
        return if f.no_inf || man != 0 {
            f32::from_bits(sign | 0x7fc0_0000)
        } else {
            f32::from_bits(sign | 0x7f80_0000)
        };
    }
    let bits = if exp == 0 {
        if man == 0 {
            0
        } else {
            // man · 2^(1 − bias − mant), man's top bit at mant − 1 − lz: 2^(−bias − lz)
            // times 1.frac (a normal f32).
            let lz = man.leading_zeros() - (32 - f.mant);
            let e32 = 127 - f.bias - lz as i32;
            let frac = (man << (lz + 1)) & ((1 << f.mant) - 1);
            ((e32 as u32) << 23) | (frac << (23 - f.mant))
        }
    } else {
        (((exp - f.bias + 127) as u32) << 23) | (man << (23 - f.mant))
    };
    f32::from_bits(sign | bits)
}

macro_rules! fp8_common {
    ($t:ident, $fmt:ident, $name:literal, $lower:ident) => {
        impl $t {
            /// The value with these bits.
            #[must_use]
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }

            /// The bits.
            #[must_use]
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// Whether this is a NaN.
            #[must_use]
            pub const fn is_nan(self) -> bool {
                f8_to_f32_soft(self.0, &$fmt).is_nan()
            }

            #[doc = concat!("`x` rounded to the nearest ", $name, " (ties to even), saturating: ")]
            /// values beyond the largest finite magnitude and infinities become ± that
            /// magnitude, NaN the canonical NaN `0x7f` (the sign of a NaN is not kept). In
            /// software (integer operations on the bits), identical to [`Self::from_f32`]
            /// on every input; usable in `const` and on any architecture.
            #[must_use]
            pub const fn from_f32_soft(x: f32) -> Self {
                Self(f8_from_f32_soft(x, &$fmt))
            }

            /// The value as an `f32` (exact; NaN stays NaN with its sign). In software, the
            /// same bits as [`Self::to_f32`] (up to the NaN payload).
            #[must_use]
            pub const fn to_f32_soft(self) -> f32 {
                f8_to_f32_soft(self.0, &$fmt)
            }

            /// The value as an `f32`, exactly. On sm_89+ GPUs through
            /// `cvt.rn.f16x2.` + the format + `x2` then `cvt.f32.f16` (PTX ISA §9.7,
            /// "Data Movement and Conversion Instructions: cvt"; PTX ISA 7.8), elsewhere
            /// (host, older GPUs) [`Self::to_f32_soft`].
            #[inline(always)]
            #[must_use]
            pub fn to_f32(self) -> f32 {
                crate::arch::half::$lower::to_f32(self.0).unwrap_or_else(|| self.to_f32_soft())
            }
        }

        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_89"))]
        impl $t {
            #[doc = concat!("`x` rounded to the nearest ", $name, " (ties to even), saturating: ")]
            /// values beyond the largest finite magnitude and infinities become ± that
            /// magnitude, NaN the canonical NaN `0x7f`. On the GPU `cvt.rn.satfinite.`
            /// + the format + `x2.f32` (PTX ISA §9.7, "cvt"; **sm_89+**, PTX ISA 7.8: on
            /// the GPU this exists only when the kernels are built for sm_89 or later,
            /// `cfg(target_feature = "sm_89")`); on the host [`Self::from_f32_soft`], the
            /// same bits.
            #[inline(always)]
            #[must_use]
            pub fn from_f32(x: f32) -> Self {
                crate::arch::half::$lower::from_f32(x).map_or_else(|| Self::from_f32_soft(x), Self)
            }
        }
    };
}

fp8_common!(F8E4M3, E4M3, "e4m3", e4m3);
fp8_common!(F8E5M2, E5M2, "e5m2", e5m2);

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), so the tests need no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// The exact value of a finite `f16` times 2^24, an integer.
    fn f16_scaled(x: f16) -> i128 {
        let v = f64::from(x.to_f32()) * 16_777_216.0;
        assert_eq!(v.fract(), 0.0);
        v as i128
    }

    /// The nearest-even `f16` to `num / 2^48` (exact reference, by comparing candidates).
    fn round_scaled_f16(num: i128) -> f16 {
        // 65520 = f16::MAX + half an ulp: from there on, nearest-even overflows to ±∞.
        if num.abs() >= 65520 << 48 {
            return if num > 0 {
                f16::INFINITY
            } else {
                f16::NEG_INFINITY
            };
        }
        let approx = f16::from_f64(num as f64 / 2f64.powi(48));
        let mut best: Option<(i128, f16)> = None;
        let bits = approx.to_bits();
        for cand in [
            bits.wrapping_sub(1),
            bits,
            bits.wrapping_add(1),
            bits ^ 0x8000,
        ] {
            let c = f16::from_bits(cand);
            if !c.is_finite() {
                continue;
            }
            let dist = (f16_scaled(c) * (1 << 24) - num).abs();
            best = match best {
                Some((d, b)) if d < dist || (d == dist && b.to_bits() & 1 == 0) => Some((d, b)),
                _ => Some((dist, c)),
            };
        }
        let (_, b) = best.expect("a finite candidate");
        // Zero results: the sign rules of IEEE addition are checked separately.
        if b.to_f32() == 0.0 { f16::ZERO } else { b }
    }

    #[test]
    fn packing_puts_element_zero_in_the_low_bits() {
        let p = F16x2::new(f16::from_bits(0x1234), f16::from_bits(0xabcd));
        assert_eq!(p.to_bits(), 0xabcd_1234);
        assert_eq!(p.to_array().map(f16::to_bits), [0x1234, 0xabcd]);
        assert_eq!(F16x2::from_bits(0xabcd_1234), p);
        let b = Bf16x2::from([bf16::ONE, bf16::NEG_ONE]);
        assert_eq!(b.to_bits(), 0xbf80_3f80);
        assert_eq!(Bf16x2::splat(bf16::ONE).to_bits(), 0x3f80_3f80);
        // Little-endian memory: element 0 first, as in a `[f16; 2]`.
        assert_eq!(p.to_bits().to_le_bytes(), [0x34, 0x12, 0xcd, 0xab]);
    }

    #[test]
    fn conversions_round_trip_every_finite_half() {
        for bits in 0..=u16::MAX {
            let h = f16::from_bits(bits);
            if !h.is_nan() {
                assert_eq!(
                    f16_from_f32(f16_to_f32(h)).to_bits(),
                    bits,
                    "f16 {bits:#06x}"
                );
            }
            let b = bf16::from_bits(bits);
            if !b.is_nan() {
                assert_eq!(
                    bf16_from_f32(bf16_to_f32(b)).to_bits(),
                    bits,
                    "bf16 {bits:#06x}"
                );
                assert_eq!(bf16_to_f32(b).to_bits(), b.to_f32().to_bits());
            }
        }
    }

    #[test]
    fn conversions_round_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1.
        assert_eq!(f16_from_f32(1.0 + 2f32.powi(-11)), f16::ONE);
        assert_eq!(
            f16_from_f32(1.0 + 3.0 * 2f32.powi(-11)).to_f32(),
            1.0 + 2f32.powi(-9)
        );
        assert_eq!(f16_from_f32(65520.0), f16::INFINITY);
        assert_eq!(f16_from_f32(65519.0), f16::MAX);
        assert_eq!(bf16_from_f32(1.0 + 2f32.powi(-8)), bf16::ONE);
        assert_eq!(
            bf16_from_f32(1.0 + 2f32.powi(-8) + 2f32.powi(-20)).to_f32(),
            1.0 + 2f32.powi(-7)
        );
    }

    #[test]
    fn f16_fma_rounds_once_where_f32_would_round_twice() {
        // a·b = 1.5 + 2^-10 + 2^-11 (exact) is the midpoint between the f16s 1537/1024 and
        // 1538/1024; c = -2^-24 puts the exact sum just below it (needs 25 bits). Rounding to
        // f32 first lands back on the midpoint (a tie, to even), and f16 then ties up to the
        // even 1538/1024; rounded once, the sum goes down to 1537/1024.
        let a = f16::from_f32(1.5);
        let b = f16::from_f32(1.0 + 2f32.powi(-10));
        let c = -f16::from_bits(1); // -2^-24, the smallest subnormal
        let twice = f16::from_f32(a.to_f32().mul_add(b.to_f32(), c.to_f32()));
        let once = F16x2::splat(a)
            .mul_add(F16x2::splat(b), F16x2::splat(c))
            .to_array()[0];
        assert_eq!(twice.to_f32(), 1538.0 / 1024.0);
        assert_eq!(once.to_f32(), 1537.0 / 1024.0);
    }

    #[test]
    fn f16_fma_add_mul_match_an_exact_reference() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut finite = || loop {
            let h = f16::from_bits(rng.next() as u16);
            if h.is_finite() {
                return h;
            }
        };
        for _ in 0..200_000 {
            let (a, b, c) = (finite(), finite(), finite());
            let exact = f16_scaled(a) * f16_scaled(b) + f16_scaled(c) * (1 << 24);
            let want = round_scaled_f16(exact);
            let got = F16x2::splat(a)
                .mul_add(F16x2::splat(b), F16x2::splat(c))
                .to_array()[0];
            let got = if got.to_f32() == 0.0 { f16::ZERO } else { got };
            assert_eq!(got.to_bits(), want.to_bits(), "fma({a}, {b}, {c})");
            let sum = (F16x2::splat(a) + F16x2::splat(c)).to_array()[1];
            let want = round_scaled_f16((f16_scaled(a) + f16_scaled(c)) * (1 << 24));
            if sum.to_f32() != 0.0 {
                assert_eq!(sum.to_bits(), want.to_bits(), "{a} + {c}");
            }
            let prod = (F16x2::splat(a) * F16x2::splat(b)).to_array()[0];
            let want = round_scaled_f16(f16_scaled(a) * f16_scaled(b));
            if prod.to_f32() != 0.0 {
                assert_eq!(prod.to_bits(), want.to_bits(), "{a} * {b}");
            }
        }
    }

    #[test]
    fn bf16_fma_add_mul_match_an_exact_reference() {
        // bf16s with exponents in [-20, 20]: times 2^27 they are integers, so products and
        // sums times 2^54 are exact in i128; no overflow or underflow in that range.
        let scaled_at = |x: bf16, k: i32| {
            let v = f64::from(x.to_f32()) * 2f64.powi(k);
            (v.fract() == 0.0).then_some(v as i128)
        };
        let scaled = |x: bf16| scaled_at(x, 27).expect("an input in [2^-20, 2^21)");
        // The nearest-even bf16 to `num / 2^54`, by comparing the neighbours of a guess. A
        // non-zero result is at least 2^-54, so the answer's last bit is at least 2^-62:
        // candidates are compared at 2^62, and finer ones (subnormals next to 0) cannot win.
        let round = |num: i128| {
            let bits = bf16::from_f64(num as f64 / 2f64.powi(54)).to_bits();
            let mut best: Option<(i128, bf16)> = None;
            for cand in [
                bits.wrapping_sub(1),
                bits,
                bits.wrapping_add(1),
                bits ^ 0x8000,
            ] {
                let c = bf16::from_bits(cand);
                let Some(c62) = scaled_at(c, 62).filter(|_| c.is_finite()) else {
                    continue;
                };
                let dist = (c62 - (num << 8)).abs();
                best = match best {
                    Some((d, b)) if d < dist || (d == dist && b.to_bits() & 1 == 0) => Some((d, b)),
                    _ => Some((dist, c)),
                };
            }
            let (_, b) = best.expect("a finite candidate");
            if b.to_f32() == 0.0 { bf16::ZERO } else { b }
        };
        let nonzero = |x: bf16| if x.to_f32() == 0.0 { bf16::ZERO } else { x };
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let mut draw = || {
            let r = rng.next();
            let exp = 107 + (r >> 20) % 41; // biased exponent: 2^-20 ..= 2^20
            bf16::from_bits((r as u16 & 0x807f) | (exp as u16) << 7)
        };
        for _ in 0..200_000 {
            let (a, b, c) = (draw(), draw(), draw());
            let (pa, pb, pc) = (Bf16x2::splat(a), Bf16x2::splat(b), Bf16x2::splat(c));
            let fma = nonzero(pa.mul_add(pb, pc).to_array()[0]);
            let want = round(scaled(a) * scaled(b) + scaled(c) * (1 << 27));
            assert_eq!(fma.to_bits(), want.to_bits(), "fma({a}, {b}, {c})");
            let sum = nonzero((pa + pc).to_array()[1]);
            let want = round((scaled(a) + scaled(c)) * (1 << 27));
            assert_eq!(sum.to_bits(), want.to_bits(), "{a} + {c}");
            let prod = (pa * pb).to_array()[0];
            assert_eq!(
                prod.to_bits(),
                round(scaled(a) * scaled(b)).to_bits(),
                "{a} * {b}"
            );
        }
    }

    #[test]
    fn signed_zeros_follow_ieee() {
        let z = F16x2::new(f16::ZERO, f16::NEG_ZERO);
        assert_eq!((z + z).to_bits(), z.to_bits());
        assert_eq!((z * F16x2::splat(f16::ONE)).to_bits(), z.to_bits());
        assert_eq!(
            (F16x2::splat(f16::ZERO) + F16x2::splat(f16::NEG_ZERO)).to_bits(),
            0
        );
        let zb = Bf16x2::new(bf16::ZERO, bf16::NEG_ZERO);
        assert_eq!((zb * Bf16x2::splat(bf16::ONE)).to_bits(), zb.to_bits());
        assert_eq!((zb + zb).to_bits(), zb.to_bits());
    }

    #[test]
    fn bf16_ops_on_integers_are_exact() {
        // |i·j + 5| ≤ 69 and |3j + 5| ≤ 29: at most 8 significant bits, exact in bf16.
        for i in -8i32..8 {
            for j in -8i32..8 {
                let a = Bf16x2::new(bf16::from_f32(i as f32), bf16::from_f32(j as f32));
                let b = Bf16x2::new(bf16::from_f32(j as f32), bf16::from_f32(3.0));
                let c = Bf16x2::splat(bf16::from_f32(5.0));
                let [d0, d1] = a.mul_add(b, c).to_array();
                assert_eq!(d0.to_f32(), (i * j + 5) as f32);
                assert_eq!(d1.to_f32(), (j * 3 + 5) as f32);
                assert_eq!((a + b).to_array()[0].to_f32(), (i + j) as f32);
                assert_eq!((a * b).to_array()[1].to_f32(), (j * 3) as f32);
            }
        }
    }

    #[test]
    fn bf16_fma_rounds_once() {
        // As for f16: a·b = 1.5 + 2^-7 + 2^-8 is the midpoint between the bf16s 193/128 and
        // 194/128; c = -2^-30 puts the sum just below it. f32 would round back to the
        // midpoint and bf16 would then tie up to 194/128; rounded once it is 193/128.
        let a = bf16::from_f32(1.5);
        let b = bf16::from_f32(1.0 + 2f32.powi(-7));
        let c = bf16::from_f32(-(2f32.powi(-30)));
        let twice = bf16::from_f32(a.to_f32().mul_add(b.to_f32(), c.to_f32()));
        let once = Bf16x2::splat(a)
            .mul_add(Bf16x2::splat(b), Bf16x2::splat(c))
            .to_array()[1];
        assert_eq!(twice.to_f32(), 194.0 / 128.0);
        assert_eq!(once.to_f32(), 193.0 / 128.0);
    }

    // FP8. The expected values below are derived from the OCP FP8 specification's tables
    // by hand (value = 2^(e − bias) · 1.m for e ≥ 1, 2^(1 − bias) · 0.m for e = 0), and the
    // rounding oracle is an independent algorithm: decode all 256 codes to f64 and pick the
    // nearest finite one (ties: the even code, i.e. the even mantissa), which shares nothing
    // with the bit-shifting conversion under test.

    /// The nearest-even, saturating FP8 code of `x` by exhaustive search over `decode`.
    fn nearest(x: f32, decode: impl Fn(u8) -> f32) -> u8 {
        if x.is_nan() {
            return 0x7f;
        }
        // Saturation (a rule of `.satfinite`, not a rounding): at or beyond the largest
        // finite magnitude, that magnitude. Below it every difference is exact in f64.
        let (max_code, max) = (0..=127u8)
            .map(|c| (c, decode(c)))
            .filter(|(_, v)| v.is_finite())
            .fold((0, 0.0f32), |a, b| if b.1 > a.1 { b } else { a });
        if x.abs() >= max {
            return if x < 0.0 { 0x80 | max_code } else { max_code };
        }
        let x = f64::from(x);
        let mut best: Option<(f64, u8)> = None;
        for code in 0..=255u8 {
            let v = decode(code);
            if !v.is_finite() {
                continue;
            }
            // A zero result keeps x's sign: consider only the zero of x's sign.
            if v == 0.0 && v.is_sign_negative() != x.is_sign_negative() {
                continue;
            }
            let d = (f64::from(v) - x).abs();
            let better = match best {
                None => true,
                Some((bd, bc)) => d < bd || (d == bd && code & 1 == 0 && bc & 1 == 1),
            };
            if better {
                best = Some((d, code));
            }
        }
        best.map_or(0, |(_, c)| c)
    }

    #[test]
    fn fp8_decodes_the_spec_values() {
        let e4 = |b| F8E4M3::from_bits(b).to_f32();
        assert_eq!(e4(0x00), 0.0);
        assert!(e4(0x80) == 0.0 && e4(0x80).is_sign_negative());
        assert_eq!(e4(0x38), 1.0); // 0.0111.000: 2^(7 − 7)
        assert_eq!(e4(0x3a), 1.25); // 0.0111.010
        assert_eq!(e4(0xc0), -2.0); // 1.1000.000
        assert_eq!(e4(0x01), 2f32.powi(-9)); // smallest subnormal: 2^-6 · 1/8
        assert_eq!(e4(0x03), 3.0 * 2f32.powi(-9));
        assert_eq!(e4(0x07), 7.0 * 2f32.powi(-9)); // largest subnormal
        assert_eq!(e4(0x08), 2f32.powi(-6)); // smallest normal
        assert_eq!(e4(0x7e), 448.0); // 0.1111.110: 2^8 · 1.75
        assert_eq!(e4(0x78), 256.0); // 0.1111.000: finite in E4M3
        assert!(e4(0x7f).is_nan() && e4(0xff).is_nan());
        assert!(F8E4M3::from_bits(0xff).is_nan() && !F8E4M3::from_bits(0x7e).is_nan());
        let e5 = |b| F8E5M2::from_bits(b).to_f32();
        assert_eq!(e5(0x3c), 1.0); // 0.01111.00
        assert_eq!(e5(0x3e), 1.5);
        assert_eq!(e5(0x01), 2f32.powi(-16)); // 2^-14 · 1/4
        assert_eq!(e5(0x02), 2f32.powi(-15));
        assert_eq!(e5(0x03), 3.0 * 2f32.powi(-16));
        assert_eq!(e5(0x04), 2f32.powi(-14));
        assert_eq!(e5(0x7b), 57344.0); // 0.11110.11: 2^15 · 1.75
        assert_eq!(e5(0x7c), f32::INFINITY);
        assert_eq!(e5(0xfc), f32::NEG_INFINITY);
        assert!(e5(0x7d).is_nan() && e5(0x7e).is_nan() && e5(0xff).is_nan());
    }

    #[test]
    fn fp8_rounds_hand_picked_inputs() {
        let e4 = |x: f32| F8E4M3::from_f32(x).to_bits();
        assert_eq!(e4(1.0), 0x38);
        assert_eq!(e4(-0.0), 0x80);
        // 1 + 1/16 is the midpoint of 1.0 (m = 0) and 1.125 (m = 1): even, 1.0.
        assert_eq!(e4(1.0625), 0x38);
        // 1 + 3/16: midpoint of m = 1 and m = 2: even, m = 2.
        assert_eq!(e4(1.1875), 0x3a);
        assert_eq!(e4(1.0626), 0x39);
        // 2^-10 is half the smallest subnormal: ties to even, zero (signed).
        assert_eq!(e4(2f32.powi(-10)), 0x00);
        assert_eq!(e4(-(2f32.powi(-10))), 0x80);
        assert_eq!(e4(1.5 * 2f32.powi(-10)), 0x01);
        // 7.5 · 2^-9: midpoint of the largest subnormal and the smallest normal: 0x08.
        assert_eq!(e4(7.5 * 2f32.powi(-9)), 0x08);
        // Saturation: 464 (midpoint of 448 and the non-existent 480), beyond, ∞.
        assert_eq!(e4(448.0), 0x7e);
        assert_eq!(e4(464.0), 0x7e);
        assert_eq!(e4(1e30), 0x7e);
        assert_eq!(e4(f32::INFINITY), 0x7e);
        assert_eq!(e4(f32::NEG_INFINITY), 0xfe);
        assert_eq!(e4(f32::NAN), 0x7f);
        assert_eq!(e4(f32::from_bits(1)), 0x00); // an f32 subnormal
        let e5 = |x: f32| F8E5M2::from_f32(x).to_bits();
        assert_eq!(e5(1.0), 0x3c);
        assert_eq!(e5(1.125), 0x3c); // midpoint of m = 0 and 1: even
        assert_eq!(e5(1.375), 0x3e); // midpoint of m = 1 and 2: even
        assert_eq!(e5(-2.0), 0xc0);
        assert_eq!(e5(2f32.powi(-16)), 0x01);
        assert_eq!(e5(2f32.powi(-17)), 0x00);
        assert_eq!(e5(57344.0), 0x7b);
        assert_eq!(e5(61440.0), 0x7b); // midpoint of 57344 and 2^16: saturates
        assert_eq!(e5(f32::INFINITY), 0x7b);
        assert_eq!(e5(f32::NEG_INFINITY), 0xfb);
        assert_eq!(e5(f32::NAN), 0x7f);
    }

    #[test]
    fn fp8_round_trips_every_code() {
        for b in 0..=255u8 {
            let x = F8E4M3::from_bits(b);
            let back = F8E4M3::from_f32(x.to_f32()).to_bits();
            if b & 0x7f == 0x7f {
                assert_eq!(back, 0x7f, "e4m3 NaN {b:#04x}");
            } else {
                assert_eq!(back, b, "e4m3 {b:#04x} ({})", x.to_f32());
            }
            let y = F8E5M2::from_bits(b);
            let back = F8E5M2::from_f32(y.to_f32()).to_bits();
            match b & 0x7f {
                0x7c => assert_eq!(back, (b & 0x80) | 0x7b, "e5m2 ∞ saturates"),
                0x7d..=0x7f => assert_eq!(back, 0x7f, "e5m2 NaN {b:#04x}"),
                _ => assert_eq!(back, b, "e5m2 {b:#04x} ({})", y.to_f32()),
            }
        }
    }

    #[test]
    fn fp8_codes_are_ordered_like_their_values() {
        // An independent check of the decoder: positive finite codes increase strictly.
        for (max, decode) in [
            (0x7e, (|b| F8E4M3::from_bits(b).to_f32()) as fn(u8) -> f32),
            (0x7b, |b| F8E5M2::from_bits(b).to_f32()),
        ] {
            for b in 0..max {
                assert!(decode(b) < decode(b + 1), "{b:#04x}");
                assert_eq!(decode(b | 0x80), -decode(b));
            }
        }
    }

    #[test]
    fn fp8_from_f32_matches_the_nearest_code() {
        let d4 = |b| F8E4M3::from_bits(b).to_f32();
        let d5 = |b| F8E5M2::from_bits(b).to_f32();
        let check = |x: f32| {
            assert_eq!(F8E4M3::from_f32(x).to_bits(), nearest(x, d4), "e4m3 {x:e}");
            assert_eq!(F8E5M2::from_f32(x).to_bits(), nearest(x, d5), "e5m2 {x:e}");
        };
        // Every code's value, the midpoints between neighbours and their f32 neighbours.
        for b in 0..=255u8 {
            for v in [d4(b), d5(b)] {
                if v.is_finite() {
                    for x in [
                        v,
                        f32::from_bits(v.to_bits() + 1),
                        f32::from_bits(v.to_bits().wrapping_sub(1)),
                    ] {
                        check(x);
                    }
                }
            }
            for (lo, hi) in [
                (d4(b), d4(b.wrapping_add(1))),
                (d5(b), d5(b.wrapping_add(1))),
            ] {
                if lo.is_finite() && hi.is_finite() {
                    let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32;
                    for x in [
                        mid,
                        f32::from_bits(mid.to_bits() + 1),
                        f32::from_bits(mid.to_bits().saturating_sub(1)),
                    ] {
                        check(x);
                    }
                }
            }
        }
        // Random f32 bit patterns, biased to FP8's range.
        let mut rng = Rng(0x0f8_5eed);
        for _ in 0..20_000 {
            let r = rng.next();
            let bits = ((r >> 32) as u32 & 0x807f_ffff) | ((100 + (r % 60) as u32) << 23);
            check(f32::from_bits(bits));
            check(f32::from_bits(r as u32));
        }
    }
}
