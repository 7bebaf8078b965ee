//! `half` on the host: the GPU's half-precision arithmetic in software, with the same bits
//! for non-NaN inputs (`fma` through an exact product and a sum rounded to odd, then one
//! rounding), and the `half` crate's conversions.

use half::{bf16, f16};

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
pub(crate) fn fma_f16(a: f16, b: f16, c: f16) -> f16 {
    let p = f64::from(a.to_f32()) * f64::from(b.to_f32()); // exact: 22 bits
    f16::from_f32(sum_to_odd_f32(p, f64::from(c.to_f32())))
}

/// `a · b + c` rounded once to nearest-even `bf16`, as `fma.rn.bf16`.
pub(crate) fn fma_bf16(a: bf16, b: bf16, c: bf16) -> bf16 {
    let p = f64::from(a.to_f32()) * f64::from(b.to_f32()); // exact: 16 bits
    bf16::from_f32(sum_to_odd_f32(p, f64::from(c.to_f32())))
}

pub(crate) fn fma_f16x2(a: u32, b: u32, c: u32) -> u32 {
    pack(
        fma_f16(lo(a), lo(b), lo(c)).to_bits(),
        fma_f16(hi(a), hi(b), hi(c)).to_bits(),
    )
}

pub(crate) fn add_f16x2(a: u32, b: u32) -> u32 {
    fma_f16x2(a, 0x3c00_3c00, b)
}

pub(crate) fn mul_f16x2(a: u32, b: u32) -> u32 {
    // Adding −0 keeps the sign of a zero product.
    fma_f16x2(a, b, 0x8000_8000)
}

pub(crate) fn fma_bf16x2(a: u32, b: u32, c: u32) -> u32 {
    let f = |x: u32| bf16::from_bits(x as u16);
    let (lo_r, hi_r) = (
        fma_bf16(f(a), f(b), f(c)),
        fma_bf16(f(a >> 16), f(b >> 16), f(c >> 16)),
    );
    pack(lo_r.to_bits(), hi_r.to_bits())
}

fn lo(x: u32) -> f16 {
    f16::from_bits(x as u16)
}

fn hi(x: u32) -> f16 {
    f16::from_bits((x >> 16) as u16)
}

fn pack(lo: u16, hi: u16) -> u32 {
    u32::from(lo) | (u32::from(hi) << 16)
}

pub(crate) fn f16_from_f32(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    f16::from_bits(bits).to_f32()
}

pub(crate) fn bf16_from_f32(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

pub(crate) fn bf16x2_from_f32(lo: f32, hi: f32) -> u32 {
    pack(bf16_from_f32(lo), bf16_from_f32(hi))
}

pub(crate) fn f16x2_from_f32(lo: f32, hi: f32) -> u32 {
    pack(f16_from_f32(lo), f16_from_f32(hi))
}

macro_rules! fp8 {
    ($($lower:ident),*) => {$(
        /// The FP8 conversions: in software on the host (`None`: the caller's
        /// `to_f32_soft` / `from_f32_soft`).
        pub(crate) mod $lower {
            pub(crate) fn to_f32(bits: u8) -> Option<f32> {
                let _ = bits;
                None
            }
            pub(crate) fn from_f32(x: f32) -> Option<u8> {
                let _ = x;
                None
            }
        }
    )*};
}

fp8!(e4m3, e5m2);
