//! `mma` on the GPU: `mma.sync` (PTX ISA §9.7.14.5.14), `ldmatrix`, `stmatrix` and
//! `cvt.rna.tf32.f32`, each on the architectures that have it.

#[cfg(target_feature = "sm_80")]
use core::arch::asm;

/// Emits one `mma.sync` with 4 A, 2 B, 4 C and 4 D 32-bit registers.
#[cfg(target_feature = "sm_80")]
macro_rules! mma_asm {
    ($ptx:literal, $a:expr, $b:expr, $c:expr) => {{
        let (a, b, c) = ($a, $b, $c);
        let d: [u32; 4];
        let (d0, d1, d2, d3): (u32, u32, u32, u32);
        // SAFETY: register operands only; the warp-convergence contract is the caller's
        // (`mma_sync`). Not `pure`: a collective must not be moved or merged.
        unsafe {
            asm!(
                concat!($ptx, " {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, \
                    {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};"),
                d0 = out(reg32) d0, d1 = out(reg32) d1, d2 = out(reg32) d2, d3 = out(reg32) d3,
                a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2],
                a3 = in(reg32) a[3], b0 = in(reg32) b[0], b1 = in(reg32) b[1],
                c0 = in(reg32) c[0].to_bits(), c1 = in(reg32) c[1].to_bits(),
                c2 = in(reg32) c[2].to_bits(), c3 = in(reg32) c[3].to_bits(),
                options(nomem, nostack),
            )
        }
        d = [d0, d1, d2, d3];
        d.map(f32::from_bits)
    }};
}

macro_rules! mma_fn {
    ($($name:ident, $ptx:literal;)*) => {$(
        /// # Safety
        /// As `mma::mma_sync`.
        #[inline(always)]
        pub(crate) unsafe fn $name(a: &[u32; 4], b: &[u32; 2], c: &[f32; 4]) -> [f32; 4] {
            #[cfg(target_feature = "sm_80")]
            {
                mma_asm!($ptx, a, b, c)
            }
            #[cfg(not(target_feature = "sm_80"))]
            {
                let _ = (a, b, c);
                // Unreachable: `mma_sync` does not exist below sm_80.
                // SAFETY: `trap` has no preconditions.
                unsafe { core::arch::nvptx::trap() }
            }
        }
    )*};
}

mma_fn!(
    mma_f16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    mma_bf16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
    mma_tf32, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32";
);

#[cfg(target_feature = "sm_80")]
#[inline(always)]
pub(crate) fn tf32_from_f32(x: f32) -> f32 {
    let d: u32;
    // SAFETY: register operands only; this exists only in sm_80+ builds, where
    // `cvt.rna.tf32.f32` exists.
    unsafe {
        asm!("cvt.rna.tf32.f32 {d}, {x};", d = out(reg32) d, x = in(reg32) x,
            options(pure, nomem, nostack))
    };
    f32::from_bits(d)
}

macro_rules! ldmatrix_fn {
    ($name:ident, $n:literal, $ptx:literal, [$($r:ident),+]) => {
        /// # Safety
        /// As the `mma` function of the same name.
        #[cfg(target_feature = "sm_80")]
        #[inline(always)]
        pub(crate) unsafe fn $name(row: *const u16) -> [u32; $n] {
            $(let $r: u32;)+
            // SAFETY: caller contract (shared, aligned, converged). Reads memory:
            // not `nomem`.
            unsafe {
                asm!(
                    concat!("{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; ", $ptx, " {{",
                        ldmatrix_fn!(@list $($r),+), "}}, [s]; }}"),
                    p = in(reg64) row as u64,
                    $($r = out(reg32) $r,)+
                    options(readonly, nostack),
                )
            }
            [$($r),+]
        }
    };
    (@list $r0:ident) => { concat!("{", stringify!($r0), "}") };
    (@list $r0:ident, $($r:ident),+) => {
        concat!("{", stringify!($r0), "}, ", ldmatrix_fn!(@list $($r),+))
    };
}

macro_rules! stmatrix_fn {
    ($name:ident, $n:literal, $ptx:literal, [$($r:literal),+]) => {
        /// # Safety
        /// As the `mma` function of the same name.
        #[cfg(target_feature = "sm_90")]
        #[inline(always)]
        pub(crate) unsafe fn $name(dst: *mut u16, regs: [u32; $n]) {
            // SAFETY: caller contract (shared, aligned, converged). Writes memory.
            unsafe {
                asm!(
                    concat!("{{ .reg .b64 s; cvta.to.shared.u64 s, {p}; ", $ptx, " [s], {{",
                        stmatrix_fn!(@list $($r),+), "}}; }}"),
                    $(in(reg32) regs[$r],)+
                    p = in(reg64) dst as u64,
                    options(nostack),
                )
            };
        }
    };
    (@list $r0:literal) => { concat!("{", stringify!($r0), "}") };
    (@list $r0:literal, $($r:literal),+) => {
        concat!("{", stringify!($r0), "}, ", stmatrix_fn!(@list $($r),+))
    };
}

ldmatrix_fn!(
    ldmatrix_x1,
    1,
    "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
    [r0]
);
ldmatrix_fn!(
    ldmatrix_x2,
    2,
    "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
    [r0, r1]
);
ldmatrix_fn!(
    ldmatrix_x4,
    4,
    "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
    [r0, r1, r2, r3]
);
ldmatrix_fn!(
    ldmatrix_x1_trans,
    1,
    "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
    [r0]
);
ldmatrix_fn!(
    ldmatrix_x2_trans,
    2,
    "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
    [r0, r1]
);
ldmatrix_fn!(
    ldmatrix_x4_trans,
    4,
    "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    [r0, r1, r2, r3]
);
stmatrix_fn!(
    stmatrix_x1,
    1,
    "stmatrix.sync.aligned.m8n8.x1.shared.b16",
    [0]
);
stmatrix_fn!(
    stmatrix_x2,
    2,
    "stmatrix.sync.aligned.m8n8.x2.shared.b16",
    [0, 1]
);
stmatrix_fn!(
    stmatrix_x4,
    4,
    "stmatrix.sync.aligned.m8n8.x4.shared.b16",
    [0, 1, 2, 3]
);
stmatrix_fn!(
    stmatrix_x1_trans,
    1,
    "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16",
    [0]
);
stmatrix_fn!(
    stmatrix_x2_trans,
    2,
    "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
    [0, 1]
);
stmatrix_fn!(
    stmatrix_x4_trans,
    4,
    "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    [0, 1, 2, 3]
);
