//! Vector kernels (1D launches): the STREAM set (copy, scale, add, triad), axpy, and the
//! element types and device helpers shared with [`crate::reduce`], [`crate::scan`] and
//! [`crate::gemm`].
//!
//! Memory-bound kernels move 16 bytes per access ([`Pack`]: 4 × `f32` / `u32` or 2 × `f64`,
//! `ld.global.v4.f32` / `ld.global.v2.f64` in the PTX) in a grid-stride loop, so any grid size
//! covers any length; the last `len % LANES` elements are done by the first threads of the
//! grid. Device buffers from `cuMemAlloc` are 256-byte aligned, so a slice that starts at an
//! allocation is 16-byte aligned (the host passes whole allocations).
//!
//! Arithmetic is IEEE basic operations in a fixed order (rustc does not contract `a * b + c`
//! to an FMA), so `copy`, `scale`, `add` and `triad` equal the CPU bit for bit; `axpy` uses an
//! explicit fused multiply-add, which is correctly rounded and so equals the CPU's `mul_add`.

use cuda_std::prelude::*;

/// Entry names of this module's kernels.
pub const KERNELS: &[&str] = &[
    "vector_add_f32",
    "copy_f32",
    "copy_f64",
    "scale_f32",
    "scale_f64",
    "add_f32",
    "add_f64",
    "triad_f32",
    "triad_f64",
    "axpy_f32",
    "axpy_f64",
];

/// Threads per block the host uses for this module's kernels and for [`crate::reduce`] and
/// [`crate::scan`] (any multiple of 32 up to 1024 works; the block reductions assume it).
pub const BLOCK_THREADS: u32 = 256;

/// An element type of the vector kernels: 4 or 8 bytes, 16-byte packs of `LANES` elements.
pub trait Elem: Copy + DeviceCopy {
    /// Elements per 16-byte [`Pack`].
    const LANES: usize;
    /// The 16-byte array type `[Self; LANES]`.
    type Array: Copy + Default + core::fmt::Debug + AsRef<[Self]> + AsMut<[Self]>;
    /// Exchanges `self` with lane `lane ^ lane_mask` of the warp (`shfl.sync.bfly`).
    ///
    /// # Safety
    /// All 32 lanes of the warp must execute this call together (full-warp mask).
    unsafe fn shfl_xor(self, lane_mask: u32) -> Self;
    /// The value of lane `lane - delta`, or `self` for lanes below `delta` (`shfl.sync.up`).
    ///
    /// # Safety
    /// As for [`Elem::shfl_xor`].
    unsafe fn shfl_up(self, delta: u32) -> Self;
    /// Stores `self` at shared-window address `addr`.
    ///
    /// # Safety
    /// `addr` is aligned to `size_of::<Self>()` and inside a shared array.
    unsafe fn st_shared(self, addr: u32);
    /// Loads a value from shared-window address `addr`.
    ///
    /// # Safety
    /// As for [`Elem::st_shared`].
    unsafe fn ld_shared(addr: u32) -> Self;
    /// Loads the pack at `p` from global memory (`ld.global.v4.b32` / `ld.global.v2.b64`:
    /// rustc passes slice pointers as generic addresses, which would give generic loads).
    ///
    /// # Safety
    /// `p` is a valid, 16-byte aligned pointer into a global-memory allocation.
    unsafe fn ld_global_pack(p: *const Pack<Self>) -> Pack<Self>;
}

/// 16 bytes of elements, 16-byte aligned, so that a load or store is one vector access.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug)]
pub struct Pack<T: Elem>(pub T::Array);

impl Elem for f32 {
    const LANES: usize = 4;
    type Array = [f32; 4];
    #[inline(always)]
    unsafe fn shfl_xor(self, lane_mask: u32) -> Self {
        // SAFETY: forwarded.
        f32::from_bits(unsafe { asm::shfl_xor_b32(self.to_bits(), lane_mask) })
    }
    #[inline(always)]
    unsafe fn shfl_up(self, delta: u32) -> Self {
        // SAFETY: forwarded.
        f32::from_bits(unsafe { asm::shfl_up_b32(self.to_bits(), delta) })
    }
    #[inline(always)]
    unsafe fn st_shared(self, addr: u32) {
        // SAFETY: forwarded.
        unsafe { asm::st_shared_b32(addr, self.to_bits()) }
    }
    #[inline(always)]
    unsafe fn ld_shared(addr: u32) -> Self {
        // SAFETY: forwarded.
        f32::from_bits(unsafe { asm::ld_shared_b32(addr) })
    }
    #[inline(always)]
    unsafe fn ld_global_pack(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        let v = unsafe { asm::ld_global_v4_b32(p.cast()) };
        Pack([
            f32::from_bits(v[0]),
            f32::from_bits(v[1]),
            f32::from_bits(v[2]),
            f32::from_bits(v[3]),
        ])
    }
}

impl Elem for u32 {
    const LANES: usize = 4;
    type Array = [u32; 4];
    #[inline(always)]
    unsafe fn shfl_xor(self, lane_mask: u32) -> Self {
        // SAFETY: forwarded.
        unsafe { asm::shfl_xor_b32(self, lane_mask) }
    }
    #[inline(always)]
    unsafe fn shfl_up(self, delta: u32) -> Self {
        // SAFETY: forwarded.
        unsafe { asm::shfl_up_b32(self, delta) }
    }
    #[inline(always)]
    unsafe fn st_shared(self, addr: u32) {
        // SAFETY: forwarded.
        unsafe { asm::st_shared_b32(addr, self) }
    }
    #[inline(always)]
    unsafe fn ld_shared(addr: u32) -> Self {
        // SAFETY: forwarded.
        unsafe { asm::ld_shared_b32(addr) }
    }
    #[inline(always)]
    unsafe fn ld_global_pack(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        let v = unsafe { asm::ld_global_v4_b32(p.cast()) };
        Pack(v)
    }
}

impl Elem for f64 {
    const LANES: usize = 2;
    type Array = [f64; 2];
    #[inline(always)]
    unsafe fn shfl_xor(self, lane_mask: u32) -> Self {
        let bits = self.to_bits();
        // SAFETY: forwarded; both halves are shuffled by the whole warp.
        let (lo, hi) = unsafe {
            (
                asm::shfl_xor_b32(bits as u32, lane_mask),
                asm::shfl_xor_b32((bits >> 32) as u32, lane_mask),
            )
        };
        f64::from_bits(u64::from(lo) | (u64::from(hi) << 32))
    }
    #[inline(always)]
    unsafe fn shfl_up(self, delta: u32) -> Self {
        let bits = self.to_bits();
        // SAFETY: forwarded; both halves are shuffled by the whole warp.
        let (lo, hi) = unsafe {
            (
                asm::shfl_up_b32(bits as u32, delta),
                asm::shfl_up_b32((bits >> 32) as u32, delta),
            )
        };
        f64::from_bits(u64::from(lo) | (u64::from(hi) << 32))
    }
    #[inline(always)]
    unsafe fn st_shared(self, addr: u32) {
        // SAFETY: forwarded.
        unsafe { asm::st_shared_b64(addr, self.to_bits()) }
    }
    #[inline(always)]
    unsafe fn ld_shared(addr: u32) -> Self {
        // SAFETY: forwarded.
        f64::from_bits(unsafe { asm::ld_shared_b64(addr) })
    }
    #[inline(always)]
    unsafe fn ld_global_pack(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        let v = unsafe { asm::ld_global_v2_b64(p.cast()) };
        Pack([f64::from_bits(v[0]), f64::from_bits(v[1])])
    }
}

/// `a · b + c` with one rounding (`fma.rn` on the GPU).
///
/// On the host (where kernels never run; the crate is compiled there only for type checking
/// and kernel names) it is the unfused expression, since `core`'s `mul_add` is unstable.
#[inline(always)]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::mul_add(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a * b + c
    }
}

/// `a · b + c` with one rounding (`fma.rn.f64` on the GPU); see [`fma_f32`].
#[inline(always)]
pub fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f64::math::mul_add(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a * b + c
    }
}

/// Total threads of a 1D grid.
#[inline(always)]
pub(crate) fn grid_threads() -> usize {
    grid_dim_x() as usize * block_dim_x() as usize
}

/// `out[i] = f(a[i])` for `i < len`: full packs in a grid-stride loop, then the tail.
///
/// # Safety
/// `a` and `out` are valid for `len` elements, 16-byte aligned; `out` is written by no one
/// else during the launch (it may equal `a`: each element is read before it is written, by
/// the same thread).
#[inline(always)]
unsafe fn map1<T: Elem>(len: usize, a: *const T, out: *mut T, f: impl Fn(T) -> T) {
    let packs = len / T::LANES;
    let stride = grid_threads();
    let mut i = index_1d();
    while i < packs {
        // SAFETY: pack i lies within the first `packs * LANES <= len` elements; aligned.
        let x = unsafe { T::ld_global_pack((a as *const Pack<T>).add(i)) };
        let mut y = x;
        for l in 0..T::LANES {
            y.0.as_mut()[l] = f(x.0.as_ref()[l]);
        }
        // SAFETY: as above, for `out`.
        unsafe { (out as *mut Pack<T>).add(i).write(y) };
        i += stride;
    }
    let t = packs * T::LANES + index_1d();
    if t < len {
        // SAFETY: t < len.
        unsafe { *out.add(t) = f(*a.add(t)) };
    }
}

/// `out[i] = f(a[i], b[i])` for `i < len`; see [`map1`].
///
/// # Safety
/// As for [`map1`], for `a`, `b` and `out`.
#[inline(always)]
unsafe fn map2<T: Elem>(len: usize, a: *const T, b: *const T, out: *mut T, f: impl Fn(T, T) -> T) {
    let packs = len / T::LANES;
    let stride = grid_threads();
    let mut i = index_1d();
    while i < packs {
        // SAFETY: pack i lies within the first `len` elements of each buffer; aligned.
        let (x, y) = unsafe {
            (
                T::ld_global_pack((a as *const Pack<T>).add(i)),
                T::ld_global_pack((b as *const Pack<T>).add(i)),
            )
        };
        let mut z = x;
        for l in 0..T::LANES {
            z.0.as_mut()[l] = f(x.0.as_ref()[l], y.0.as_ref()[l]);
        }
        // SAFETY: as above, for `out`.
        unsafe { (out as *mut Pack<T>).add(i).write(z) };
        i += stride;
    }
    let t = packs * T::LANES + index_1d();
    if t < len {
        // SAFETY: t < len.
        unsafe { *out.add(t) = f(*a.add(t), *b.add(t)) };
    }
}

/// `c[i] = a[i] + b[i]` for `i < min(a.len(), b.len())`, one thread per element (1D launch).
///
/// # Safety
/// `c` points to a device allocation of at least `min(a.len(), b.len())` `f32`s that no
/// other code accesses during the launch.
#[kernel]
pub unsafe fn vector_add_f32(a: &[f32], b: &[f32], c: *mut f32) {
    let i = index_1d();
    if i < a.len() && i < b.len() {
        // SAFETY: i is in bounds of `c` (caller contract); one thread per element.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}

macro_rules! stream_kernels {
    ($t:ty, $fma:ident, $copy:ident, $scale:ident, $add:ident, $triad:ident, $axpy:ident) => {
        /// STREAM copy: `c[i] = a[i]` for `i < a.len()` (grid-stride, any 1D grid).
        ///
        /// # Safety
        /// `a` and `c` are whole device allocations (16-byte aligned); `c` holds at least
        /// `a.len()` elements and nobody else accesses it during the launch.
        #[kernel]
        pub unsafe fn $copy(a: &[$t], c: *mut $t) {
            // SAFETY: caller contract.
            unsafe { map1(a.len(), a.as_ptr(), c, |x| x) }
        }

        /// STREAM scale: `b[i] = q · c[i]` for `i < c.len()` (grid-stride, any 1D grid).
        ///
        /// # Safety
        /// As for the copy kernel: `b` holds at least `c.len()` elements, aligned, unshared.
        #[kernel]
        pub unsafe fn $scale(c: &[$t], q: $t, b: *mut $t) {
            // SAFETY: caller contract.
            unsafe { map1(c.len(), c.as_ptr(), b, |x| q * x) }
        }

        /// STREAM add: `c[i] = a[i] + b[i]` for `i < min(a.len(), b.len())`.
        ///
        /// # Safety
        /// As for the copy kernel: `c` holds at least `min(a.len(), b.len())` elements.
        #[kernel]
        pub unsafe fn $add(a: &[$t], b: &[$t], c: *mut $t) {
            let len = a.len().min(b.len());
            // SAFETY: caller contract.
            unsafe { map2(len, a.as_ptr(), b.as_ptr(), c, |x, y| x + y) }
        }

        /// STREAM triad: `a[i] = b[i] + q · c[i]` (product rounded, then sum rounded: no
        /// FMA) for `i < min(b.len(), c.len())`.
        ///
        /// # Safety
        /// As for the copy kernel: `a` holds at least `min(b.len(), c.len())` elements.
        #[kernel]
        pub unsafe fn $triad(b: &[$t], c: &[$t], q: $t, a: *mut $t) {
            let len = b.len().min(c.len());
            // SAFETY: caller contract.
            unsafe { map2(len, b.as_ptr(), c.as_ptr(), a, |x, y| x + q * y) }
        }

        /// axpy, in place: `y[i] = fma(alpha, x[i], y[i])` (one rounding) for `i < x.len()`.
        ///
        /// # Safety
        /// `x` and `y` are whole device allocations; `y` holds at least `x.len()` elements
        /// and nobody else accesses it during the launch.
        #[kernel]
        pub unsafe fn $axpy(alpha: $t, x: &[$t], y: *mut $t) {
            // SAFETY: caller contract; `map2` reads y[i] before the same thread writes it.
            unsafe { map2(x.len(), x.as_ptr(), y, y, |xi, yi| $fma(alpha, xi, yi)) }
        }
    };
}

stream_kernels!(
    f32, fma_f32, copy_f32, scale_f32, add_f32, triad_f32, axpy_f32
);
stream_kernels!(
    f64, fma_f64, copy_f64, scale_f64, add_f64, triad_f64, axpy_f64
);

/// Inline PTX for primitives `cuda_std` does not offer yet (warp shuffles, shared-memory
/// accesses by 32-bit shared-window address). To be replaced by `cuda_std::warp` and
/// `cuda_std::shared` when those land. On the host every function panics.
pub(crate) mod asm {
    #[cfg(target_arch = "nvptx64")]
    use core::arch::asm;

    #[cfg(not(target_arch = "nvptx64"))]
    macro_rules! device_only {
        ($what:literal) => {
            panic!(concat!(
                "kernels::vector::asm::",
                $what,
                " can only run on the GPU"
            ))
        };
    }

    /// `shfl.sync.bfly.b32` over the full warp (PTX ISA §9.7.9.6, sm_30+, PTX 6.0+).
    ///
    /// # Safety
    /// All 32 lanes execute this call together.
    #[inline(always)]
    pub unsafe fn shfl_xor_b32(v: u32, lane_mask: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let r: u32;
            // SAFETY: register-only instruction; full-warp participation is the caller's.
            unsafe {
                asm!("shfl.sync.bfly.b32 {r}, {v}, {m}, 0x1f, 0xffffffff;",
                    r = out(reg32) r, v = in(reg32) v, m = in(reg32) lane_mask,
                    options(nomem, nostack, preserves_flags));
            }
            r
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = (v, lane_mask);
            device_only!("shfl_xor_b32")
        }
    }

    /// `shfl.sync.up.b32` over the full warp: lane `l` gets lane `l - delta`'s value, lanes
    /// below `delta` keep their own.
    ///
    /// # Safety
    /// All 32 lanes execute this call together.
    #[inline(always)]
    pub unsafe fn shfl_up_b32(v: u32, delta: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let r: u32;
            // SAFETY: as for `shfl_xor_b32`.
            unsafe {
                asm!("shfl.sync.up.b32 {r}, {v}, {d}, 0x0, 0xffffffff;",
                    r = out(reg32) r, v = in(reg32) v, d = in(reg32) delta,
                    options(nomem, nostack, preserves_flags));
            }
            r
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = (v, delta);
            device_only!("shfl_up_b32")
        }
    }

    /// Declares a static shared-memory array `$name` of `$bytes` bytes (16-byte aligned) at
    /// module scope, and a function `$getter() -> u32` returning its shared-window address.
    macro_rules! shared_array {
        ($getter:ident, $name:literal, $bytes:literal) => {
            #[cfg(target_arch = "nvptx64")]
            core::arch::global_asm!(concat!(
                ".shared .align 16 .b8 ",
                $name,
                "[",
                $bytes,
                "];"
            ));

            /// Shared-window address of a static shared array of this module.
            #[inline(always)]
            pub fn $getter() -> u32 {
                #[cfg(target_arch = "nvptx64")]
                {
                    let r: u32;
                    // SAFETY: takes the address of a module-scope `.shared` variable.
                    unsafe {
                        core::arch::asm!(concat!("mov.u32 {r}, ", $name, ";"),
                            r = out(reg32) r, options(pure, nomem, nostack, preserves_flags));
                    }
                    r
                }
                #[cfg(not(target_arch = "nvptx64"))]
                device_only!("shared array")
            }
        };
    }

    // 32 warps × 8 bytes for block reductions and scans, plus 16 bytes for a broadcast.
    shared_array!(block_scratch, "ferrocuda_block_scratch", "272");
    // SGEMM: two stages of A (8 × 132 f32) and B (8 × 128 f32): 2 · 2080 · 4 bytes.
    shared_array!(sgemm_smem, "ferrocuda_sgemm_smem", "16640");

    /// `st.shared.b32 [addr], v`.
    ///
    /// # Safety
    /// `addr` is a 4-byte aligned shared-window address inside a shared array.
    #[inline(always)]
    pub unsafe fn st_shared_b32(addr: u32, v: u32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: caller contract.
        unsafe {
            asm!("st.shared.b32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) v,
                options(nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = (addr, v);
            device_only!("st_shared_b32")
        }
    }

    /// `ld.shared.b32 [addr]`.
    ///
    /// # Safety
    /// `addr` is a 4-byte aligned shared-window address inside a shared array.
    #[inline(always)]
    pub unsafe fn ld_shared_b32(addr: u32) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let r: u32;
            // SAFETY: caller contract.
            unsafe {
                asm!("ld.shared.b32 {r}, [{a}];", r = out(reg32) r, a = in(reg32) addr,
                    options(pure, readonly, nostack, preserves_flags));
            }
            r
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = addr;
            device_only!("ld_shared_b32")
        }
    }

    /// `st.shared.v4.b32 [addr], {v}`.
    ///
    /// # Safety
    /// `addr` is a 16-byte aligned shared-window address inside a shared array.
    #[inline(always)]
    pub unsafe fn st_shared_v4_b32(addr: u32, v: [u32; 4]) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: caller contract.
        unsafe {
            asm!("st.shared.v4.b32 [{a}], {{{x}, {y}, {z}, {w}}};", a = in(reg32) addr,
                x = in(reg32) v[0], y = in(reg32) v[1], z = in(reg32) v[2], w = in(reg32) v[3],
                options(nostack, preserves_flags));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = (addr, v);
            device_only!("st_shared_v4_b32")
        }
    }

    /// `ld.shared.v4.b32 [addr]`.
    ///
    /// # Safety
    /// `addr` is a 16-byte aligned shared-window address inside a shared array.
    #[inline(always)]
    pub unsafe fn ld_shared_v4_b32(addr: u32) -> [u32; 4] {
        #[cfg(target_arch = "nvptx64")]
        {
            let (x, y, z, w): (u32, u32, u32, u32);
            // SAFETY: caller contract.
            unsafe {
                asm!("ld.shared.v4.b32 {{{x}, {y}, {z}, {w}}}, [{a}];", a = in(reg32) addr,
                    x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                    options(pure, readonly, nostack, preserves_flags));
            }
            [x, y, z, w]
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = addr;
            device_only!("ld_shared_v4_b32")
        }
    }

    /// `ld.global.v4.b32` from a generic address of global memory (converted with
    /// `cvta.to.global`, PTX ISA §9.7.9.18).
    ///
    /// # Safety
    /// `p` is a 16-byte aligned pointer into a global-memory allocation, valid for 16 bytes.
    #[inline(always)]
    pub unsafe fn ld_global_v4_b32(p: *const u32) -> [u32; 4] {
        #[cfg(target_arch = "nvptx64")]
        {
            let (x, y, z, w): (u32, u32, u32, u32);
            // SAFETY: caller contract.
            unsafe {
                asm!("{{ .reg .u64 fc_g; cvta.to.global.u64 fc_g, {p}; \
                    ld.global.v4.b32 {{{x}, {y}, {z}, {w}}}, [fc_g]; }}",
                    p = in(reg64) p,
                    x = out(reg32) x, y = out(reg32) y, z = out(reg32) z, w = out(reg32) w,
                    options(pure, readonly, nostack, preserves_flags));
            }
            [x, y, z, w]
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = p;
            device_only!("ld_global_v4_b32")
        }
    }

    /// `ld.global.v2.b64`; see [`ld_global_v4_b32`].
    ///
    /// # Safety
    /// As for [`ld_global_v4_b32`].
    #[inline(always)]
    pub unsafe fn ld_global_v2_b64(p: *const u64) -> [u64; 2] {
        #[cfg(target_arch = "nvptx64")]
        {
            let (x, y): (u64, u64);
            // SAFETY: caller contract.
            unsafe {
                asm!("{{ .reg .u64 fc_g; cvta.to.global.u64 fc_g, {p}; \
                    ld.global.v2.b64 {{{x}, {y}}}, [fc_g]; }}",
                    p = in(reg64) p, x = out(reg64) x, y = out(reg64) y,
                    options(pure, readonly, nostack, preserves_flags));
            }
            [x, y]
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let _ = p;
            device_only!("ld_global_v2_b64")
        }
    }

    /// 64-bit shared store as two 32-bit halves (`st.shared.v2.b32`).
    ///
    /// # Safety
    /// `addr` is an 8-byte aligned shared-window address inside a shared array.
    #[inline(always)]
    pub unsafe fn st_shared_b64(addr: u32, v: u64) {
        // SAFETY: caller contract (each half is 4-byte aligned and in the array).
        unsafe {
            st_shared_b32(addr, v as u32);
            st_shared_b32(addr + 4, (v >> 32) as u32);
        }
    }

    /// 64-bit shared load as two 32-bit halves.
    ///
    /// # Safety
    /// `addr` is an 8-byte aligned shared-window address inside a shared array.
    #[inline(always)]
    pub unsafe fn ld_shared_b64(addr: u32) -> u64 {
        // SAFETY: caller contract.
        unsafe { u64::from(ld_shared_b32(addr)) | (u64::from(ld_shared_b32(addr + 4)) << 32) }
    }
}
