//! `half` on the GPU: packed `f16x2`/`bf16x2` arithmetic and conversions (PTX ISA §9.7 "Half
//! Precision Floating-Point Instructions", "cvt").

use core::arch::asm;

macro_rules! packed_op {
    ($($name:ident($($arg:ident),*) => $ptx:literal;)*) => {$(
        #[inline(always)]
        pub(crate) fn $name($($arg: u32),*) -> u32 {
            let d: u32;
            // SAFETY: register operands only; `f16x2` arithmetic exists on sm_53 and later.
            unsafe {
                asm!($ptx, d = out(reg32) d, $($arg = in(reg32) $arg,)* options(pure, nomem, nostack))
            };
            d
        }
    )*};
}

packed_op!(
    fma_f16x2(a, b, c) => "fma.rn.f16x2 {d}, {a}, {b}, {c};";
    add_f16x2(a, b) => "add.rn.f16x2 {d}, {a}, {b};";
    mul_f16x2(a, b) => "mul.rn.f16x2 {d}, {a}, {b};";
);

/// `fma.rn.bf16x2 d, a, b, c` (sm_80+, PTX ISA 7.0).
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn fma_bf16x2(a: u32, b: u32, c: u32) -> u32 {
    let d: u32;
    // SAFETY: register operands only; this function exists only in sm_80+ builds, where
    // `fma.rn.bf16x2` exists.
    unsafe {
        asm!("fma.rn.bf16x2 {d}, {a}, {b}, {c};", d = out(reg32) d, a = in(reg32) a,
            b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    d
}

#[inline(always)]
pub(crate) fn f16_from_f32(x: f32) -> u16 {
    let h: u16;
    // SAFETY: register operands only.
    unsafe {
        asm!("cvt.rn.f16.f32 {h}, {x};", h = out(reg16) h, x = in(reg32) x,
            options(pure, nomem, nostack))
    };
    h
}

#[inline(always)]
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    let f: f32;
    // SAFETY: register operands only.
    unsafe {
        asm!("cvt.f32.f16 {f}, {h};", f = out(reg32) f, h = in(reg16) bits,
            options(pure, nomem, nostack))
    };
    f
}

#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn bf16_from_f32(x: f32) -> u16 {
    let h: u16;
    // SAFETY: register operands only; this exists only in sm_80+ builds, where
    // `cvt.rn.bf16.f32` exists.
    unsafe {
        asm!("cvt.rn.bf16.f32 {h}, {x};", h = out(reg16) h, x = in(reg32) x,
            options(pure, nomem, nostack))
    };
    h
}

/// `cvt.rn.{bf16x2,f16x2}.f32 d, hi, lo` (sm_80+, PTX ISA 7.0): the instruction's first
/// source goes to the *high* half.
macro_rules! pair_from_f32 {
    ($($name:ident => $ptx:literal;)*) => {$(
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub(crate) fn $name(lo: f32, hi: f32) -> u32 {
            let d: u32;
            // SAFETY: register operands only; this exists only in sm_80+ builds, where the
            // packed conversion exists.
            unsafe {
                asm!($ptx, d = out(reg32) d, hi = in(reg32) hi, lo = in(reg32) lo,
                    options(pure, nomem, nostack))
            };
            d
        }
    )*};
}

pair_from_f32!(
    bf16x2_from_f32 => "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};";
    f16x2_from_f32 => "cvt.rn.f16x2.f32 {d}, {hi}, {lo};";
);

macro_rules! fp8 {
    ($($lower:ident, $name:literal;)*) => {$(
        /// The FP8 conversions: `cvt` on sm_89+ (PTX ISA 7.8); `None` elsewhere (the caller's
        /// software version).
        pub(crate) mod $lower {
            #[cfg(target_feature = "sm_89")]
            use core::arch::asm;

            #[inline(always)]
            pub(crate) fn to_f32(bits: u8) -> Option<f32> {
                #[cfg(target_feature = "sm_89")]
                {
                    let pair = u16::from(bits) * 0x101;
                    let f: f32;
                    // SAFETY: register operands only; sm_89 builds only, where the
                    // instruction exists. Both bytes hold the value, so either half of the
                    // f16x2 result is it.
                    unsafe {
                        asm!(
                            concat!("{{ .reg .b32 h2; .reg .b16 lo, hi; cvt.rn.f16x2.",
                                $name, "x2 h2, {p}; mov.b32 {{lo, hi}}, h2; \
                                cvt.f32.f16 {f}, lo; }}"),
                            p = in(reg16) pair, f = out(reg32) f,
                            options(pure, nomem, nostack))
                    };
                    Some(f)
                }
                #[cfg(not(target_feature = "sm_89"))]
                {
                    let _ = bits;
                    None
                }
            }

            #[cfg(target_feature = "sm_89")]
            #[inline(always)]
            pub(crate) fn from_f32(x: f32) -> Option<u8> {
                {
                    let d: u16;
                    // SAFETY: register operands only; sm_89 builds only. `x` is operand
                    // `b`, converted into the low byte.
                    unsafe {
                        asm!(
                            concat!("cvt.rn.satfinite.", $name, "x2.f32 {d}, {z}, {x};"),
                            d = out(reg16) d, z = in(reg32) 0.0f32, x = in(reg32) x,
                            options(pure, nomem, nostack))
                    };
                    Some(d as u8)
                }
            }
        }
    )*};
}

fp8!(e4m3, "e4m3"; e5m2, "e5m2";);
