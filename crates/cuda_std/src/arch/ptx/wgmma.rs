//! `wgmma` on the GPU: `wgmma.mma_async`, its fence / commit / wait (PTX ISA §9.7.15.5)
//! and `setmaxnreg` (§9.7.18.1). Each `mma_async` is one `asm!` with every accumulator an
//! `inout(reg32)` operand, indexed by constants (an indexed loop left the array on the
//! stack: BRIEF.md's toolchain facts).

use crate::wgmma::MatrixDescriptor;
use core::arch::asm;

#[inline(always)]
pub(crate) fn fence() {
    // SAFETY: no operands. Not `nomem`: orders memory accesses.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) };
}

#[inline(always)]
pub(crate) fn commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) };
}

#[inline(always)]
pub(crate) fn wait_group<const N: u32>() {
    // SAFETY: an immediate operand. Not `nomem`: later shared-memory writes must not move
    // above it.
    unsafe { asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack)) };
}

#[inline(always)]
pub(crate) fn fence_operand(a: &mut [u32; 4]) {
    // SAFETY: a PTX comment naming the registers (`asm!` requires every operand used):
    // no instruction; its only effect is on the compiler, which must have the four values
    // in registers here and assume they are read and rewritten. Not `nomem` (as CUTLASS's
    // `"memory"` clobber): memory accesses do not move across it.
    unsafe {
        asm!(
            "// wgmma fence_operand {0}, {1}, {2}, {3}",
            inout(reg32) a[0],
            inout(reg32) a[1],
            inout(reg32) a[2],
            inout(reg32) a[3],
            options(nostack, preserves_flags),
        )
    };
}

#[inline(always)]
pub(crate) fn reg_alloc<const N: u32>() {
    // SAFETY: an immediate operand, checked by the caller (`wgmma::reg_alloc`).
    unsafe { asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nomem, nostack)) };
}

#[inline(always)]
pub(crate) fn reg_dealloc<const N: u32>() {
    // SAFETY: an immediate operand, checked by the caller (`wgmma::reg_dealloc`).
    unsafe { asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nomem, nostack)) };
}

/// The accumulator list `{0}, {1}, …` of a `wgmma` template (positional operands).
macro_rules! acc_list {
    ($first:literal $($i:literal)*) => {
        concat!("{", stringify!($first), "}" $(, ", {", stringify!($i), "}")*)
    };
}

macro_rules! wgmma_16bit {
    ($name:ident, $n:literal, $ty:literal, $ptx:literal, [$($i:literal)+]) => {
        #[inline(always)]
        pub(crate) unsafe fn $name<const TRANS_A: bool, const TRANS_B: bool>(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: caller contract. Reads shared memory: not `nomem`.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p; setp.ne.b32 p, {sd}, 0; ", $ptx, " {{",
                        acc_list!($($i)+), "}}, {a}, {b}, p, 1, 1, {ta}, {tb}; }}"),
                    $(inout(reg32) acc[$i],)+
                    a = in(reg64) a.0,
                    b = in(reg64) b.0,
                    sd = in(reg32) u32::from(accumulate),
                    ta = const TRANS_A as u32,
                    tb = const TRANS_B as u32,
                    options(nostack),
                )
            };
        }
    };
}

/// The forms with `A` from registers (RS): four `.b32` registers of `A` (two 16-bit elements
/// or one `.tf32` each), `B` by descriptor; the 16-bit forms (given `TRANS_B`) take `B`'s
/// transpose (`A` in registers has none), `.tf32` has no transposes.
macro_rules! wgmma_rs {
    ($name:ident, $n:literal, $ptx:literal, $($tb:ident,)? [$($i:literal)+]) => {
        #[inline(always)]
        pub(crate) unsafe fn $name$(<const $tb: bool>)?(
            acc: &mut [f32; $n],
            a: [u32; 4],
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: caller contract. Reads shared memory: not `nomem`.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p; setp.ne.b32 p, {sd}, 0; ", $ptx, " {{",
                        acc_list!($($i)+), "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1"
                        $(, ", {", stringify!($tb), "}")?, "; }}"),
                    $(inout(reg32) acc[$i],)+
                    a0 = in(reg32) a[0],
                    a1 = in(reg32) a[1],
                    a2 = in(reg32) a[2],
                    a3 = in(reg32) a[3],
                    b = in(reg64) b.0,
                    sd = in(reg32) u32::from(accumulate),
                    $($tb = const $tb as u32,)?
                    options(nostack),
                )
            };
        }
    };
}

/// The forms without transposes: `.tf32` (`m64nNk8`) and `.e4m3` / `.e5m2` (`m64nNk32`),
/// both operands K-major.
macro_rules! wgmma_tf32 {
    ($name:ident, $n:literal, $ptx:literal, [$($i:literal)+]) => {
        #[inline(always)]
        pub(crate) unsafe fn $name(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: caller contract. Reads shared memory: not `nomem`.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p; setp.ne.b32 p, {sd}, 0; ", $ptx, " {{",
                        acc_list!($($i)+), "}}, {a}, {b}, p, 1, 1; }}"),
                    $(inout(reg32) acc[$i],)+
                    a = in(reg64) a.0,
                    b = in(reg64) b.0,
                    sd = in(reg32) u32::from(accumulate),
                    options(nostack),
                )
            };
        }
    };
}

with_acc_indices!(
    32,
    wgmma_16bit!(
        mma_m64n64k16_f32_bf16,
        32,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    64,
    wgmma_16bit!(
        mma_m64n128k16_f32_bf16,
        64,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    88,
    wgmma_16bit!(
        mma_m64n176k16_f32_bf16,
        88,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    128,
    wgmma_16bit!(
        mma_m64n256k16_f32_bf16,
        128,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    32,
    wgmma_16bit!(
        mma_m64n64k16_f32_f16,
        32,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
    )
);
with_acc_indices!(
    64,
    wgmma_16bit!(
        mma_m64n128k16_f32_f16,
        64,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
    )
);
with_acc_indices!(
    88,
    wgmma_16bit!(
        mma_m64n176k16_f32_f16,
        88,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.f16.f16",
    )
);
with_acc_indices!(
    128,
    wgmma_16bit!(
        mma_m64n256k16_f32_f16,
        128,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
    )
);
with_acc_indices!(
    32,
    wgmma_tf32!(
        mma_m64n64k8_f32_tf32,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    64,
    wgmma_tf32!(
        mma_m64n128k8_f32_tf32,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    128,
    wgmma_tf32!(
        mma_m64n256k8_f32_tf32,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    32,
    wgmma_tf32!(
        mma_m64n64k32_f32_e4m3,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",
    )
);
with_acc_indices!(
    64,
    wgmma_tf32!(
        mma_m64n128k32_f32_e4m3,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3",
    )
);
with_acc_indices!(
    128,
    wgmma_tf32!(
        mma_m64n256k32_f32_e4m3,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3",
    )
);
with_acc_indices!(
    32,
    wgmma_tf32!(
        mma_m64n64k32_f32_e5m2,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2",
    )
);
with_acc_indices!(
    64,
    wgmma_tf32!(
        mma_m64n128k32_f32_e5m2,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2",
    )
);
with_acc_indices!(
    128,
    wgmma_tf32!(
        mma_m64n256k32_f32_e5m2,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2",
    )
);
with_acc_indices!(
    32,
    wgmma_rs!(
        mma_m64n64k16_f32_bf16_rs,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
        TRANS_B,
    )
);
with_acc_indices!(
    32,
    wgmma_rs!(
        mma_m64n64k16_f32_f16_rs,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
        TRANS_B,
    )
);
with_acc_indices!(
    64,
    wgmma_rs!(
        mma_m64n128k16_f32_bf16_rs,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
        TRANS_B,
    )
);
with_acc_indices!(
    64,
    wgmma_rs!(
        mma_m64n128k16_f32_f16_rs,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
        TRANS_B,
    )
);
with_acc_indices!(
    128,
    wgmma_rs!(
        mma_m64n256k16_f32_bf16_rs,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
        TRANS_B,
    )
);
with_acc_indices!(
    128,
    wgmma_rs!(
        mma_m64n256k16_f32_f16_rs,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
        TRANS_B,
    )
);
with_acc_indices!(
    32,
    wgmma_rs!(
        mma_m64n64k8_f32_tf32_rs,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    64,
    wgmma_rs!(
        mma_m64n128k8_f32_tf32_rs,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    128,
    wgmma_rs!(
        mma_m64n256k8_f32_tf32_rs,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32",
    )
);
