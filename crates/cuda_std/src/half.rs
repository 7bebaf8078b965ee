//! Half-precision floats: the scalar types [`f16`](struct@f16) (IEEE 754 binary16) and
//! [`bf16`] (bfloat16), re-exported from the [`half`](https://docs.rs/half) crate as
//! Rust-CUDA does, the packed pairs [`F16x2`] and [`Bf16x2`] with the GPU's packed
//! arithmetic, and scalar conversions from and to `f32`.
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
//! Note that `cvt.rn.f16x2.f32 d, a, b` puts `a` in the *high* half; we do not use it.
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

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

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
        #[cfg(target_arch = "nvptx64")]
        {
            let d: u32;
            // SAFETY: register operands only; `fma.rn.f16x2` exists on sm_53 and later.
            unsafe {
                asm!("fma.rn.f16x2 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) self.0,
                    b = in(reg32) b.0, c = in(reg32) c.0, options(pure, nomem, nostack))
            };
            Self(d)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let [a, b, c] = [self.to_array(), b.to_array(), c.to_array()];
            Self::new(
                host::fma_f16(a[0], b[0], c[0]),
                host::fma_f16(a[1], b[1], c[1]),
            )
        }
    }
}

/// Per element `a + b`, rounded to nearest-even: `add.rn.f16x2` (PTX ISA §9.7, "Half Precision
/// Floating-Point Instructions: add"; sm_53+). On the host: the same bits for non-NaN inputs.
impl core::ops::Add for F16x2 {
    type Output = Self;

    #[inline(always)]
    fn add(self, rhs: Self) -> Self {
        #[cfg(target_arch = "nvptx64")]
        {
            let d: u32;
            // SAFETY: register operands only; `add.rn.f16x2` exists on sm_53 and later.
            unsafe {
                asm!("add.rn.f16x2 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) self.0,
                    b = in(reg32) rhs.0, options(pure, nomem, nostack))
            };
            Self(d)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let one = Self::splat(f16::ONE);
            self.mul_add(one, rhs)
        }
    }
}

/// Per element `a · b`, rounded to nearest-even: `mul.rn.f16x2` (PTX ISA §9.7, "Half Precision
/// Floating-Point Instructions: mul"; sm_53+). On the host: the same bits for non-NaN inputs.
impl core::ops::Mul for F16x2 {
    type Output = Self;

    #[inline(always)]
    fn mul(self, rhs: Self) -> Self {
        #[cfg(target_arch = "nvptx64")]
        {
            let d: u32;
            // SAFETY: register operands only; `mul.rn.f16x2` exists on sm_53 and later.
            unsafe {
                asm!("mul.rn.f16x2 {d}, {a}, {b};", d = out(reg32) d, a = in(reg32) self.0,
                    b = in(reg32) rhs.0, options(pure, nomem, nostack))
            };
            Self(d)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.mul_add(rhs, Self::splat(f16::NEG_ZERO))
        }
    }
}

/// `fma.rn.bf16x2 d, a, b, c` on the GPU (sm_80+, PTX ISA 7.0).
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
#[inline(always)]
fn fma_bf16x2(a: u32, b: u32, c: u32) -> u32 {
    let d: u32;
    // SAFETY: register operands only; this function exists only in sm_80+ builds, where
    // `fma.rn.bf16x2` exists.
    unsafe {
        asm!("fma.rn.bf16x2 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a,
            b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    d
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
        #[cfg(target_arch = "nvptx64")]
        {
            Self(fma_bf16x2(self.0, b.0, c.0))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let [a, b, c] = [self.to_array(), b.to_array(), c.to_array()];
            Self::new(
                host::fma_bf16(a[0], b[0], c[0]),
                host::fma_bf16(a[1], b[1], c[1]),
            )
        }
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
    #[cfg(target_arch = "nvptx64")]
    {
        let h: u16;
        // SAFETY: register operands only.
        unsafe {
            asm!("cvt.rn.f16.f32 {h}, {x};", h = out(reg16) h, x = in(reg32) x,
                options(pure, nomem, nostack))
        };
        f16::from_bits(h)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        f16::from_f32(x)
    }
}

/// `x` as an `f32` (exact): `cvt.f32.f16` (PTX ISA §9.7, "Data Movement and Conversion
/// Instructions: cvt"; every architecture we build). On the host: `half::f16::to_f32`.
#[inline(always)]
#[must_use]
pub fn f16_to_f32(x: f16) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let f: f32;
        // SAFETY: register operands only.
        unsafe {
            asm!("cvt.f32.f16 {f}, {h};", f = out(reg32) f, h = in(reg16) x.to_bits(),
                options(pure, nomem, nostack))
        };
        f
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.to_f32()
    }
}

/// `x` rounded to the nearest `bf16` (ties to even): `cvt.rn.bf16.f32` (PTX ISA §9.7, "Data
/// Movement and Conversion Instructions: cvt"). **sm_80+**, PTX ISA 7.0: on the GPU this exists
/// only when the kernels are built for sm_80 or later (`cfg(target_feature = "sm_80")`). On the
/// host: `half::bf16::from_f32`, the same bits for non-NaN `x`.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[must_use]
pub fn bf16_from_f32(x: f32) -> bf16 {
    #[cfg(target_arch = "nvptx64")]
    {
        let h: u16;
        // SAFETY: register operands only; this exists only in sm_80+ builds, where
        // `cvt.rn.bf16.f32` exists.
        unsafe {
            asm!("cvt.rn.bf16.f32 {h}, {x};", h = out(reg16) h, x = in(reg32) x,
                options(pure, nomem, nostack))
        };
        bf16::from_bits(h)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        bf16::from_f32(x)
    }
}

/// `x` as an `f32` (exact): the `bf16` bits shifted into the high half of an `f32`, on both
/// sides and on every architecture. This equals `cvt.f32.bf16` (which needs PTX ISA 7.1+)
/// for every input, NaN payloads included.
#[inline(always)]
#[must_use]
pub const fn bf16_to_f32(x: bf16) -> f32 {
    f32::from_bits((x.to_bits() as u32) << 16)
}

/// The host's software versions of the GPU's half arithmetic.
#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use super::{bf16, f16};

    /// `p + c` (exact `f64` inputs) rounded to odd into an `f32`: the exact sum truncated
    /// towards zero to `f32`, with the last bit set if that dropped anything.
    fn sum_to_odd_f32(p: f64, c: f64) -> f32 {
        // TwoSum: s + e == p + c exactly (no overflow: both are far inside f64's range).
        let s = p + c;
        let pv = s - c;
        let cv = s - pv;
        let e = (p - pv) + (c - cv);
        let t = s as f32;
        if t.is_infinite() {
            // Beyond f32's range, hence beyond f16's and bf16's: ±∞ either way.
            return t;
        }
        // The residual `exact - t` = `(s - t) + e`. `s - t` is exact in f64 and, when
        // non-zero, at least one f64 ulp of `s`, more than |e| (at most half an ulp), so it
        // alone decides the sign; when zero, `e` does.
        let r = if s != f64::from(t) {
            s - f64::from(t)
        } else {
            e
        };
        if r == 0.0 || t.to_bits() & 1 == 1 {
            return t;
        }
        if t == 0.0 {
            // Below half the smallest f32 subnormal: the smallest subnormal, signed like r.
            return if r > 0.0 {
                f32::from_bits(1)
            } else {
                -f32::from_bits(1)
            };
        }
        // `t` is even and inexact: step one ulp towards the exact value (the odd neighbour).
        if (r > 0.0) == (t > 0.0) {
            f32::from_bits(t.to_bits() + 1)
        } else {
            f32::from_bits(t.to_bits() - 1)
        }
    }

    /// `a · b + c` rounded once to nearest-even `f16`, as `fma.rn.f16`.
    pub(super) fn fma_f16(a: f16, b: f16, c: f16) -> f16 {
        let p = f64::from(a.to_f32()) * f64::from(b.to_f32()); // exact: 22 bits
        f16::from_f32(sum_to_odd_f32(p, f64::from(c.to_f32())))
    }

    /// `a · b + c` rounded once to nearest-even `bf16`, as `fma.rn.bf16`.
    pub(super) fn fma_bf16(a: bf16, b: bf16, c: bf16) -> bf16 {
        let p = f64::from(a.to_f32()) * f64::from(b.to_f32()); // exact: 16 bits
        bf16::from_f32(sum_to_odd_f32(p, f64::from(c.to_f32())))
    }
}

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
}
