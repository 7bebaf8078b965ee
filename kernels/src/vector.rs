//! Vector kernels (1D launches): the STREAM set (copy, scale, add, triad), axpy, and the
//! element types and device helpers shared with [`crate::reduce`], [`crate::scan`] and
//! [`crate::gemm`].
//!
//! Memory-bound kernels move 16 bytes per access ([`Pack`]: 4 × `f32` / `u32` or 2 × `f64`;
//! `ld.global.nc.v4.f32` / `ld.global.nc.v2.f64` loads from [`cuda_std::mem`], `st.v4` stores)
//! in a grid-stride loop, so any grid size covers any length; the last `len % LANES`
//! elements are done by the first threads of the grid. Device buffers from `cuMemAlloc` are
//! 256-byte aligned; a view that is not 16-byte aligned takes an element-by-element path.
//!
//! The STREAM kernels and axpy are safe kernels: inputs are `&[T]`, outputs
//! [`OutSlice`]s, and the vector stores go through the `OutSlice`'s raw pointer inside the
//! kernel, where each thread writes only elements no other thread touches.
//!
//! Arithmetic is IEEE basic operations in a fixed order (rustc does not contract `a * b + c`
//! to an FMA), so `copy`, `scale`, `add` and `triad` equal the CPU bit for bit; `axpy` uses an
//! explicit fused multiply-add, which is correctly rounded and so equals the CPU's `mul_add`.

use cuda_std::math;
use cuda_std::mem;
use cuda_std::prelude::*;

/// Threads per block the host uses for this module's kernels and for [`crate::reduce`] and
/// [`crate::scan`] (any multiple of 32 up to 1024 works; the block reductions assume it).
pub const BLOCK_THREADS: u32 = 256;

/// An element type of the vector kernels: 4 or 8 bytes, 16-byte packs of `LANES` elements,
/// shuffled between lanes with [`cuda_std::warp`] (one `shfl.sync` per 32 bits).
pub trait Elem: Copy + DeviceCopy + warp::Shuffle {
    /// Elements per 16-byte [`Pack`].
    const LANES: usize;
    /// The 16-byte array type `[Self; LANES]`.
    type Array: Copy + Default + core::fmt::Debug + AsRef<[Self]> + AsMut<[Self]>;
    /// Loads the pack at `p` from global memory that no thread writes during the launch,
    /// through the read-only data cache ([`cuda_std::mem`]'s `load_*_global_nc`:
    /// `ld.global.nc.v4.f32` / `ld.global.nc.v2.f64`, CUDA C's `__ldg` of a `float4`).
    ///
    /// # Safety
    /// `p` is a valid, 16-byte aligned pointer into a global-memory allocation that nobody
    /// writes during the launch.
    unsafe fn load_pack_nc(p: *const Pack<Self>) -> Pack<Self>;
    /// Loads the pack at `p` with one 16-byte generic access (`ld.v4` / `ld.v2`), for data
    /// the launch also writes (axpy's `y`).
    ///
    /// # Safety
    /// `p` is valid for 16 bytes and 16-byte aligned; no other thread writes it meanwhile.
    unsafe fn load_pack(p: *const Pack<Self>) -> Pack<Self>;
}

/// 16 bytes of elements, 16-byte aligned, so that a load or store is one vector access.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug)]
pub struct Pack<T: Elem>(pub T::Array);

impl Elem for f32 {
    const LANES: usize = 4;
    type Array = [f32; 4];
    #[inline(always)]
    unsafe fn load_pack_nc(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        Pack(unsafe { mem::load_v4_f32_global_nc(p.cast()) })
    }
    #[inline(always)]
    unsafe fn load_pack(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        Pack(unsafe { mem::load_v4_f32(p.cast()) })
    }
}

impl Elem for u32 {
    const LANES: usize = 4;
    type Array = [u32; 4];
    #[inline(always)]
    unsafe fn load_pack_nc(p: *const Pack<Self>) -> Pack<Self> {
        // `cuda_std::mem` has no `u32` form of the non-coherent load: load the same 16 bytes
        // as `f32` lanes and reinterpret the bits (register moves, no conversion).
        // SAFETY: forwarded; same size and alignment.
        let v = unsafe { mem::load_v4_f32_global_nc(p.cast()) };
        Pack(v.map(f32::to_bits))
    }
    #[inline(always)]
    unsafe fn load_pack(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        Pack(unsafe { mem::load_v4_u32(p.cast()) })
    }
}

impl Elem for f64 {
    const LANES: usize = 2;
    type Array = [f64; 2];
    #[inline(always)]
    unsafe fn load_pack_nc(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        Pack(unsafe { mem::load_v2_f64_global_nc(p.cast()) })
    }
    #[inline(always)]
    unsafe fn load_pack(p: *const Pack<Self>) -> Pack<Self> {
        // SAFETY: forwarded.
        Pack(unsafe { mem::load_v2_f64(p.cast()) })
    }
}

/// Whether every pointer is 16-byte aligned (block-uniform: kernel parameters), so that
/// [`Pack`] accesses are allowed. Whole `cuMemAlloc` allocations always are (256-byte
/// alignment); a view that starts inside one may not be, and then the kernels take the
/// element-by-element path instead of faulting on a misaligned vector access.
#[inline(always)]
pub(crate) fn aligned16(ptrs: &[usize]) -> bool {
    ptrs.iter().fold(0, |acc, &p| acc | p) % 16 == 0
}

/// Total threads of a 1D grid.
#[inline(always)]
pub(crate) fn grid_threads() -> usize {
    grid_dim_x() as usize * block_dim_x() as usize
}

/// The schedule shared by the element-wise kernels: this thread's packs of `T::LANES`
/// elements in a grid-stride loop (`pack(i)` for pack indices `i`), then its elements of the
/// tail (`elem(t)`). Packs are used only when every pointer in `ptrs` is 16-byte aligned;
/// otherwise every element goes through `elem`.
///
/// Every index below `len` is visited by exactly one thread of the grid — pack `p` by the
/// thread whose grid-stride sequence `index_1d() + j · grid_threads()` contains it, tail
/// element `packs · LANES + t` by thread `t` — which is what makes the callers' writes to
/// their `OutSlice` race-free.
#[inline(always)]
fn for_each_owned<T: Elem>(
    len: usize,
    ptrs: &[usize],
    mut pack: impl FnMut(usize),
    mut elem: impl FnMut(usize),
) {
    let stride = grid_threads();
    let packs = if aligned16(ptrs) { len / T::LANES } else { 0 };
    let mut i = index_1d();
    while i < packs {
        pack(i);
        i += stride;
    }
    let mut t = packs * T::LANES + index_1d();
    while t < len {
        elem(t);
        t += stride;
    }
}

/// `out[i] = f(a[i])` for `i < min(a.len(), out.len())`; see [`for_each_owned`].
///
/// Safe: each index is visited by one thread only ([`for_each_owned`]), `a` is only read,
/// so no two threads touch the same element of `out`.
#[inline(always)]
pub(crate) fn map1<T: Elem>(a: &[T], out: &OutSlice<T>, f: impl Fn(T) -> T) {
    let len = a.len().min(out.len());
    let (ap, op) = (a.as_ptr(), out.as_mut_ptr());
    for_each_owned::<T>(
        len,
        &[ap as usize, op as usize],
        // SAFETY: pack i lies within the first `len` elements of both buffers, which are
        // 16-byte aligned (checked by `for_each_owned`); pack i of `out` is this thread's.
        |i| unsafe {
            let x = T::load_pack_nc((ap as *const Pack<T>).add(i));
            let mut y = x;
            for l in 0..T::LANES {
                y.0.as_mut()[l] = f(x.0.as_ref()[l]);
            }
            (op as *mut Pack<T>).add(i).write(y);
        },
        // SAFETY: t < len; element t is this thread's.
        |t| unsafe { op.add(t).write(f(*ap.add(t))) },
    );
}

/// `out[i] = f(a[i], b[i])` for `i < min(a.len(), b.len(), out.len())`; see [`map1`].
#[inline(always)]
fn map2<T: Elem>(a: &[T], b: &[T], out: &OutSlice<T>, f: impl Fn(T, T) -> T) {
    let len = a.len().min(b.len()).min(out.len());
    let (ap, bp, op) = (a.as_ptr(), b.as_ptr(), out.as_mut_ptr());
    for_each_owned::<T>(
        len,
        &[ap as usize, bp as usize, op as usize],
        // SAFETY: as in `map1`, for `a`, `b` and `out`.
        |i| unsafe {
            let x = T::load_pack_nc((ap as *const Pack<T>).add(i));
            let y = T::load_pack_nc((bp as *const Pack<T>).add(i));
            let mut z = x;
            for l in 0..T::LANES {
                z.0.as_mut()[l] = f(x.0.as_ref()[l], y.0.as_ref()[l]);
            }
            (op as *mut Pack<T>).add(i).write(z);
        },
        // SAFETY: t < len; element t is this thread's.
        |t| unsafe { op.add(t).write(f(*ap.add(t), *bp.add(t))) },
    );
}

/// `y[i] = f(x[i], y[i])` in place for `i < min(x.len(), y.len())`; see [`map1`]. `y` is
/// read with ordinary (coherent) loads, since the launch writes it.
#[inline(always)]
fn map_in_place<T: Elem>(x: &[T], y: &OutSlice<T>, f: impl Fn(T, T) -> T) {
    let len = x.len().min(y.len());
    let (xp, yp) = (x.as_ptr(), y.as_mut_ptr());
    for_each_owned::<T>(
        len,
        &[xp as usize, yp as usize],
        // SAFETY: as in `map1`; element i of `y` is read and then written by this thread
        // only.
        |i| unsafe {
            let a = T::load_pack_nc((xp as *const Pack<T>).add(i));
            let mut b = T::load_pack((yp as *const Pack<T>).add(i));
            for l in 0..T::LANES {
                b.0.as_mut()[l] = f(a.0.as_ref()[l], b.0.as_ref()[l]);
            }
            (yp as *mut Pack<T>).add(i).write(b);
        },
        // SAFETY: t < len; element t is read and written by this thread only.
        |t| unsafe { yp.add(t).write(f(*xp.add(t), *yp.add(t))) },
    );
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
    ($t:ty, $fma:path, $copy:ident, $scale:ident, $add:ident, $triad:ident, $axpy:ident) => {
        /// STREAM copy: `c[i] = a[i]` for `i < min(a.len(), c.len())` (grid-stride, any 1D
        /// grid; 16-byte accesses when both buffers are 16-byte aligned).
        #[kernel]
        pub fn $copy(a: &[$t], c: OutSlice<$t>) {
            map1(a, &c, |x| x)
        }

        /// STREAM scale: `b[i] = q · c[i]` for `i < min(c.len(), b.len())` (grid-stride, any
        /// 1D grid).
        #[kernel]
        pub fn $scale(c: &[$t], q: $t, b: OutSlice<$t>) {
            map1(c, &b, |x| q * x)
        }

        /// STREAM add: `c[i] = a[i] + b[i]` for `i < min(a.len(), b.len(), c.len())`.
        #[kernel]
        pub fn $add(a: &[$t], b: &[$t], c: OutSlice<$t>) {
            map2(a, b, &c, |x, y| x + y)
        }

        /// STREAM triad: `a[i] = b[i] + q · c[i]` (product rounded, then sum rounded: no
        /// FMA) for `i < min(b.len(), c.len(), a.len())`.
        #[kernel]
        pub fn $triad(b: &[$t], c: &[$t], q: $t, a: OutSlice<$t>) {
            map2(b, c, &a, |x, y| x + q * y)
        }

        /// axpy, in place: `y[i] = fma(alpha, x[i], y[i])` (one rounding) for
        /// `i < min(x.len(), y.len())`.
        #[kernel]
        pub fn $axpy(alpha: $t, x: &[$t], y: OutSlice<$t>) {
            map_in_place(x, &y, |xi, yi| $fma(alpha, xi, yi))
        }
    };
}

stream_kernels!(
    f32,
    math::fmaf,
    copy_f32,
    scale_f32,
    add_f32,
    triad_f32,
    axpy_f32
);
stream_kernels!(
    f64,
    math::fma,
    copy_f64,
    scale_f64,
    add_f64,
    triad_f64,
    axpy_f64
);
