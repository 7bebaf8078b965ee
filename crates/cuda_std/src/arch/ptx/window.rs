//! Accesses by 32-bit `.shared` address on the GPU (`shared::window`, and the address forms
//! of `mma::ldmatrix_x4_window` and `mem::async_copy::copy_16_zero_fill`): `ld.shared` /
//! `st.shared` (PTX ISA §9.7.9.8 "ld", §9.7.9 "st"), `ldmatrix` (§9.7.14.5, "Warp-level
//! matrix load instruction: ldmatrix") and `cp.async` with a source size (§9.7.9.25
//! "cp.async"). The address is a register operand (`reg32`), so a constant offset added to
//! it folds into the instruction's immediate.

use core::arch::asm;

/// # Safety
/// As `shared::window::store_f32`.
#[inline(always)]
pub(crate) unsafe fn store_f32(addr: u32, value: f32) {
    // SAFETY: caller contract. Writes shared memory: not `nomem`.
    unsafe {
        asm!("st.shared.f32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) value,
            options(nostack, preserves_flags));
    }
}

/// # Safety
/// As `shared::window::store_b32`.
#[inline(always)]
pub(crate) unsafe fn store_b32(addr: u32, bits: u32) {
    // SAFETY: caller contract. Writes shared memory: not `nomem`.
    unsafe {
        asm!("st.shared.b32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) bits,
            options(nostack, preserves_flags));
    }
}

/// # Safety
/// As `shared::window::load_b32`.
#[inline(always)]
pub(crate) unsafe fn load_b32(addr: u32) -> u32 {
    let bits: u32;
    // SAFETY: caller contract. `pure, readonly`: only reads memory, so equal loads between
    // the same stores may be merged.
    unsafe {
        asm!("ld.shared.b32 {v}, [{a}];", a = in(reg32) addr, v = out(reg32) bits,
            options(pure, readonly, nostack, preserves_flags));
    }
    bits
}

/// # Safety
/// As `shared::window::store_v2_f32`.
#[inline(always)]
pub(crate) unsafe fn store_v2_f32(addr: u32, value: [f32; 2]) {
    // SAFETY: caller contract. Writes shared memory: not `nomem`.
    unsafe {
        asm!("st.shared.v2.f32 [{a}], {{{x}, {y}}};", a = in(reg32) addr,
            x = in(reg32) value[0], y = in(reg32) value[1], options(nostack, preserves_flags));
    }
}

/// # Safety
/// As `shared::window::store_v4_f32`.
#[inline(always)]
pub(crate) unsafe fn store_v4_f32(addr: u32, value: [f32; 4]) {
    // SAFETY: caller contract. Writes shared memory: not `nomem`.
    unsafe {
        asm!("st.shared.v4.f32 [{a}], {{{x}, {y}, {z}, {w}}};", a = in(reg32) addr,
            x = in(reg32) value[0], y = in(reg32) value[1], z = in(reg32) value[2],
            w = in(reg32) value[3], options(nostack, preserves_flags));
    }
}

/// # Safety
/// As `shared::window::load_v4_f32`.
#[inline(always)]
pub(crate) unsafe fn load_v4_f32(addr: u32) -> [f32; 4] {
    let (x, y, z, w): (f32, f32, f32, f32);
    // SAFETY: caller contract. `pure, readonly`: only reads memory, so equal loads between
    // the same stores may be merged.
    unsafe {
        asm!("ld.shared.v4.f32 {{{x}, {y}, {z}, {w}}}, [{a}];", a = in(reg32) addr,
            x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
            options(pure, readonly, nostack, preserves_flags));
    }
    [x, y, z, w]
}

/// # Safety
/// As `mma::ldmatrix_x4_window`.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) unsafe fn ldmatrix_x4(row: u32) -> [u32; 4] {
    let (r0, r1, r2, r3): (u32, u32, u32, u32);
    // SAFETY: caller contract (shared, aligned, converged). Reads memory: not `nomem`; not
    // `pure`: a collective must not be moved or merged.
    unsafe {
        asm!(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];",
            a = in(reg32) row,
            r0 = out(reg32) r0, r1 = out(reg32) r1,
            r2 = out(reg32) r2, r3 = out(reg32) r3,
            options(readonly, nostack),
        );
    }
    [r0, r1, r2, r3]
}

/// # Safety
/// As `mem::async_copy::copy_16_zero_fill`.
#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) unsafe fn copy_16_zero_fill(dst: u32, src: *const u8, src_bytes: u32, guard: bool) {
    // SAFETY: caller contract. Writes shared memory: not `nomem`. The guard and the source
    // size are operands of the one instruction: no branch.
    unsafe {
        asm!(
            "{{ .reg .pred p; .reg .b64 g; setp.ne.b32 p, {en}, 0; \
             cvta.to.global.u64 g, {src}; \
             @p cp.async.cg.shared.global [{d}], [g], 16, {n}; }}",
            en = in(reg32) u32::from(guard),
            d = in(reg32) dst,
            src = in(reg64) src as u64,
            n = in(reg32) src_bytes,
            options(nostack),
        );
    }
}
