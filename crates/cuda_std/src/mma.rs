//! Warp-level matrix multiply-accumulate on the tensor cores: `mma.sync` and `ldmatrix`
//! (**sm_80+**, PTX ISA 7.0+), and `stmatrix` (**sm_90+**, PTX ISA 7.8).
//!
//! One warp computes `D = A·B + C` with
//! - [`M16N8K16`]: `A` 16×16 (M×K), `B` 16×8 (K×N), `C`/`D` 16×8 (M×N), with `A` and `B` in
//!   [`F16`] or [`Bf16`] and `C`/`D` in [`F32`] (PTX
//!   `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`);
//! - [`M16N8K8`]: `A` 16×8, `B` 8×8, `C`/`D` 16×8, with `A` and `B` in [`Tf32`] (PTX
//!   `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`).
//!
//! Each lane holds a *fragment* of each matrix in registers: [`FragA`], [`FragB`] and
//! [`FragAcc`], typed by shape and element type, so passing an `A` fragment where a `B` is
//! expected, or mixing shapes or element types, does not compile:
//!
//! ```compile_fail,E0308
//! use cuda_std::mma::{FragA, FragAcc, M16N8K16, F16, mma_sync};
//! fn k(a: FragA<M16N8K16, F16>, c: FragAcc<M16N8K16>) -> FragAcc<M16N8K16> {
//!     // An A fragment passed as B: error[E0308]: mismatched types.
//!     unsafe { mma_sync(&a, &a, &c) }
//! }
//! ```
//!
//! ```compile_fail,E0308
//! use cuda_std::mma::{FragA, FragB, FragAcc, M16N8K16, Bf16, F16, mma_sync};
//! fn k(a: FragA<M16N8K16, F16>, b: FragB<M16N8K16, Bf16>, c: FragAcc<M16N8K16>) {
//!     // f16 times bf16: error[E0308]: mismatched types.
//!     let _ = unsafe { mma_sync(&a, &b, &c) };
//! }
//! ```
//!
//! Registers are raw 32-bit words: for [`F16`] and [`Bf16`] two elements per `u32` (the
//! element with the lower column, or lower row for `B`, in bits 0–15), for [`Tf32`] one
//! `f32` bit pattern per `u32` (the tensor core reads its sign, exponent and top 10 mantissa
//! bits), for the [`F32`] accumulator one `f32` per register. Which lane holds which element
//! is the PTX ISA's fragment layout (PTX ISA §9.7.14.5, "Matrix multiply-accumulate
//! operation using mma instruction": "Matrix Fragments for mma.m16n8k8" and "Matrix
//! Fragments for mma.m16n8k16 with floating point type"), modelled by the pure functions of
//! [`layout`], which run on the host too (tests build fragments from row-major matrices with
//! them) and are what [`FragA::load`], [`FragB::load`], [`FragAcc::load`] and
//! [`FragAcc::store`] use.
//!
//! Memory layouts: `.row.col` is the only layout of `mma.sync` for these shapes, so a
//! fragment has one register layout; the memory layout is chosen when loading. `A` is read
//! row-major (`a[row * lda + col]`); `B` either row-major (`b[k * ldb + n]`) or column-major
//! (`b[n * ldb + k]`, i.e. `Bᵀ` row-major, the layout `mma`'s `.col` names); `C`/`D`
//! row-major.
//!
//! On the GPU the instructions exist only when the kernels are built for sm_80 or later
//! (`cfg(target_feature = "sm_80")`, e.g. `CudaBuilder::arch(ComputeCapability::new(8, 0))`),
//! as [`redux_sync_add`](crate::warp::redux_sync_add). On the host they run on the CPU
//! emulator (`cuda_emu`) as warp collectives, and panic outside an emulated
//! launch. The types and [`layout`] exist everywhere.

use core::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}

/// The `m16n8k16` shape: `A` 16×16, `B` 16×8, `C`/`D` 16×8 (M×K, K×N, M×N).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct M16N8K16;

/// The `m16n8k8` shape: `A` 16×8, `B` 8×8, `C`/`D` 16×8 (M×K, K×N, M×N).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct M16N8K8;

/// IEEE 754 binary16 elements (PTX `.f16`), two per register, stored in memory as their
/// `u16` bit patterns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F16;

/// bfloat16 elements (PTX `.bf16`: 8 exponent bits, 7 mantissa bits), two per register,
/// stored in memory as their `u16` bit patterns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bf16;

/// TensorFloat-32 elements (PTX `.tf32`: an `f32` whose 13 low mantissa bits the tensor core
/// ignores), one per register, stored in memory as `f32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tf32;

/// `f32` accumulator elements (PTX `.f32`), one per register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F32;

/// A matrix shape of `mma.sync` ([`M16N8K16`], [`M16N8K8`]). Sealed.
pub trait Shape: sealed::Sealed + Copy {
    /// Rows of `A`, `C` and `D`.
    const M: u32;
    /// Columns of `B`, `C` and `D`.
    const N: u32;
    /// Columns of `A`, rows of `B`.
    const K: u32;
}

impl sealed::Sealed for M16N8K16 {}
impl sealed::Sealed for M16N8K8 {}
impl Shape for M16N8K16 {
    const M: u32 = 16;
    const N: u32 = 8;
    const K: u32 = 16;
}
impl Shape for M16N8K8 {
    const M: u32 = 16;
    const N: u32 = 8;
    const K: u32 = 8;
}

/// An input element type of `mma.sync` ([`F16`], [`Bf16`], [`Tf32`]). Sealed.
pub trait Element: sealed::Sealed + Copy {
    /// How one element is stored in memory: `u16` bit patterns for [`F16`] and [`Bf16`],
    /// `f32` for [`Tf32`].
    type Storage: Copy;
    /// Elements per 32-bit register: 2 for 16-bit types, 1 for [`Tf32`].
    const PER_REG: u32;
    /// The PTX type name (`"f16"`, `"bf16"`, `"tf32"`).
    const PTX: &'static str;
    #[doc(hidden)]
    fn storage_bits(x: Self::Storage) -> u32;
}

impl sealed::Sealed for F16 {}
impl sealed::Sealed for Bf16 {}
impl sealed::Sealed for Tf32 {}
impl Element for F16 {
    type Storage = u16;
    const PER_REG: u32 = 2;
    const PTX: &'static str = "f16";
    fn storage_bits(x: u16) -> u32 {
        u32::from(x)
    }
}
impl Element for Bf16 {
    type Storage = u16;
    const PER_REG: u32 = 2;
    const PTX: &'static str = "bf16";
    fn storage_bits(x: u16) -> u32 {
        u32::from(x)
    }
}
impl Element for Tf32 {
    type Storage = f32;
    const PER_REG: u32 = 1;
    const PTX: &'static str = "tf32";
    fn storage_bits(x: f32) -> u32 {
        x.to_bits()
    }
}

/// The shape × element combinations `mma.sync` supports here: [`M16N8K16`] with [`F16`] and
/// [`Bf16`], [`M16N8K8`] with [`Tf32`], all with an [`F32`] accumulator. Sealed; a
/// fragment of another combination cannot be built.
pub trait MmaShape<E: Element>: Shape {
    /// Maps (lane, register, element within the register) of the `A` fragment to `(row,
    /// col)` of `A` (M×K): [`layout::a_m16n8k16`] or [`layout::a_m16n8k8_tf32`].
    fn a_coord(lane: u32, reg: u32, half: u32) -> (u32, u32);
    /// Maps (lane, register, element within the register) of the `B` fragment to `(row,
    /// col)` = `(k, n)` of `B` (K×N): [`layout::b_m16n8k16`] or [`layout::b_m16n8k8_tf32`].
    fn b_coord(lane: u32, reg: u32, half: u32) -> (u32, u32);
    #[doc(hidden)]
    unsafe fn mma(a: &[u32; 4], b: &[u32; 2], c: &[f32; 4]) -> [f32; 4];
}

macro_rules! mma_shape {
    ($shape:ty, $elem:ty, $a:path, $b:path, $ptx:literal, $arch:ident) => {
        impl MmaShape<$elem> for $shape {
            #[inline(always)]
            fn a_coord(lane: u32, reg: u32, half: u32) -> (u32, u32) {
                $a(lane, reg, half)
            }
            #[inline(always)]
            fn b_coord(lane: u32, reg: u32, half: u32) -> (u32, u32) {
                $b(lane, reg, half)
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn mma(a: &[u32; 4], b: &[u32; 2], c: &[f32; 4]) -> [f32; 4] {
                // SAFETY: forwarded to the caller.
                unsafe { crate::arch::mma::$arch(a, b, c) }
            }
        }
    };
}

mma_shape!(
    M16N8K16,
    F16,
    layout::a_m16n8k16,
    layout::b_m16n8k16,
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    mma_f16
);
mma_shape!(
    M16N8K16,
    Bf16,
    layout::a_m16n8k16,
    layout::b_m16n8k16,
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    mma_bf16
);
mma_shape!(
    M16N8K8,
    Tf32,
    tf32_a,
    tf32_b,
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    mma_tf32
);

/// [`layout::a_m16n8k8_tf32`] with the (always 0) element index of a one-element register.
fn tf32_a(lane: u32, reg: u32, _half: u32) -> (u32, u32) {
    layout::a_m16n8k8_tf32(lane, reg)
}

/// [`layout::b_m16n8k8_tf32`] with the (always 0) element index of a one-element register.
fn tf32_b(lane: u32, reg: u32, _half: u32) -> (u32, u32) {
    layout::b_m16n8k8_tf32(lane, reg)
}

/// The lane maps ([`cust_core::lanes::mma`]): pure functions from registers to matrix
/// coordinates, shared with the CPU emulator.
pub use cust_core::lanes::mma as layout;

/// This lane's `A` fragment (M×K, read row-major): 4 registers. Built by [`FragA::load`],
/// [`FragA::ldmatrix`] or [`FragA::from_regs`]; consumed by [`mma_sync`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragA<S, E> {
    regs: [u32; 4],
    _m: PhantomData<(S, E)>,
}

/// This lane's `B` fragment (K×N, `mma`'s `.col` operand): 2 registers. Built by
/// [`FragB::load`], [`FragB::ldmatrix_col_major`], [`FragB::ldmatrix_row_major`] or
/// [`FragB::from_regs`]; consumed by [`mma_sync`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragB<S, E> {
    regs: [u32; 2],
    _m: PhantomData<(S, E)>,
}

/// This lane's `f32` accumulator fragment (`C` or `D`, M×N = 16×8): 4 registers, mapped by
/// [`layout::acc_m16n8`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FragAcc<S> {
    regs: [f32; 4],
    _m: PhantomData<S>,
}

/// The lane index for the fragment loaders.
#[inline(always)]
fn lane() -> u32 {
    crate::warp::lane_id()
}

impl<S: MmaShape<E>, E: Element> FragA<S, E> {
    /// A fragment from its raw registers (layout: [`layout`]).
    #[must_use]
    pub const fn from_regs(regs: [u32; 4]) -> Self {
        Self {
            regs,
            _m: PhantomData,
        }
    }

    /// The raw registers.
    #[must_use]
    pub const fn regs(&self) -> [u32; 4] {
        self.regs
    }

    /// Builds the fragment lane `lane` holds from `get(row, col)`, the bit pattern of `A`'s
    /// element (`u16` bits for 16-bit types, `f32` bits for [`Tf32`]) — a CPU model of what
    /// the lane's registers contain, and the body of [`FragA::load`].
    #[must_use]
    pub fn from_fn(lane: u32, mut get: impl FnMut(u32, u32) -> u32) -> Self {
        Self::from_regs(core::array::from_fn(|r| {
            pack::<E>(|h| {
                let (row, col) = S::a_coord(lane, r as u32, h);
                get(row, col)
            })
        }))
    }

    /// Each lane loads its elements of the row-major `A` at `ptr` (element `(row, col)` at
    /// `ptr[row * lda + col]`), by the [`layout`] map: plain loads, any memory space.
    ///
    /// # Safety
    /// `ptr[row * lda + col]` is valid for reads for every `row` < M, `col` < K.
    #[inline(always)]
    #[must_use]
    pub unsafe fn load(ptr: *const E::Storage, lda: usize) -> Self {
        // SAFETY: in bounds (caller contract).
        Self::from_fn(lane(), |row, col| unsafe {
            E::storage_bits(*ptr.add(row as usize * lda + col as usize))
        })
    }
}

impl<S: MmaShape<E>, E: Element> FragB<S, E> {
    /// A fragment from its raw registers (layout: [`layout`]).
    #[must_use]
    pub const fn from_regs(regs: [u32; 2]) -> Self {
        Self {
            regs,
            _m: PhantomData,
        }
    }

    /// The raw registers.
    #[must_use]
    pub const fn regs(&self) -> [u32; 2] {
        self.regs
    }

    /// Builds the fragment lane `lane` holds from `get(k, n)`, the bit pattern of `B`'s
    /// element — the CPU model of the lane's registers, and the body of [`FragB::load`].
    #[must_use]
    pub fn from_fn(lane: u32, mut get: impl FnMut(u32, u32) -> u32) -> Self {
        Self::from_regs(core::array::from_fn(|r| {
            pack::<E>(|h| {
                let (k, n) = S::b_coord(lane, r as u32, h);
                get(k, n)
            })
        }))
    }

    /// Each lane loads its elements of `B` (K×N) at `ptr`: element `(k, n)` at
    /// `ptr[k * ldb + n]` when `col_major` is false (row-major), at `ptr[n * ldb + k]` when
    /// it is true (column-major). Plain loads, any memory space.
    ///
    /// # Safety
    /// Those addresses are valid for reads for every `k` < K, `n` < N.
    #[inline(always)]
    #[must_use]
    pub unsafe fn load(ptr: *const E::Storage, ldb: usize, col_major: bool) -> Self {
        Self::from_fn(lane(), |k, n| {
            let (k, n) = (k as usize, n as usize);
            let i = if col_major { n * ldb + k } else { k * ldb + n };
            // SAFETY: in bounds (caller contract).
            E::storage_bits(unsafe { *ptr.add(i) })
        })
    }
}

/// Packs `PER_REG` elements, element `h` in bits `16·h..`, from their bit patterns.
#[inline(always)]
fn pack<E: Element>(mut bits: impl FnMut(u32) -> u32) -> u32 {
    if E::PER_REG == 2 {
        (bits(0) & 0xffff) | (bits(1) << 16)
    } else {
        bits(0)
    }
}

impl<S: Shape> FragAcc<S> {
    /// An accumulator of zeros.
    #[must_use]
    pub const fn zero() -> Self {
        Self::from_regs([0.0; 4])
    }

    /// A fragment from its registers (layout: [`layout::acc_m16n8`]).
    #[must_use]
    pub const fn from_regs(regs: [f32; 4]) -> Self {
        Self {
            regs,
            _m: PhantomData,
        }
    }

    /// The registers.
    #[must_use]
    pub const fn regs(&self) -> [f32; 4] {
        self.regs
    }

    /// Loads this lane's elements of the row-major 16×8 `C` at `ptr` (element `(row, col)`
    /// at `ptr[row * ldc + col]`).
    ///
    /// # Safety
    /// `ptr[row * ldc + col]` is valid for reads for every `row` < 16, `col` < 8.
    #[inline(always)]
    #[must_use]
    pub unsafe fn load(ptr: *const f32, ldc: usize) -> Self {
        let lane = lane();
        Self::from_regs(core::array::from_fn(|r| {
            let (row, col) = layout::acc_m16n8(lane, r as u32);
            // SAFETY: in bounds (caller contract).
            unsafe { *ptr.add(row as usize * ldc + col as usize) }
        }))
    }

    /// Stores this lane's elements to the row-major 16×8 `D` at `ptr` (element `(row, col)`
    /// at `ptr[row * ldd + col]`); the warp together writes all 128.
    ///
    /// # Safety
    /// `ptr[row * ldd + col]` is valid for writes for every `row` < 16, `col` < 8, and not
    /// accessed concurrently by other code.
    #[inline(always)]
    pub unsafe fn store(&self, ptr: *mut f32, ldd: usize) {
        let lane = lane();
        for (r, &v) in self.regs.iter().enumerate() {
            let (row, col) = layout::acc_m16n8(lane, r as u32);
            // SAFETY: in bounds (caller contract).
            unsafe { *ptr.add(row as usize * ldd + col as usize) = v };
        }
    }
}

/// `D = A·B + C` on the tensor cores, for the whole warp: PTX
/// `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` or
/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (PTX ISA §9.7.14.5, "mma"),
/// chosen by the fragments' types. **sm_80+**; on the GPU this function exists only when
/// the kernels are built for sm_80 or later; on the host it runs on the CPU emulator (see
/// `cuda_emu`: products exact, summed in `f64`, rounded once to `f32`) and panics
/// outside an emulated launch.
///
/// Products are exact and the sum is accumulated in `f32` (its rounding order is the
/// hardware's); inputs that are small integers give exactly `A·B + C`.
///
/// # Safety
/// `.aligned`: all 32 lanes of the warp execute this same `mma_sync` (same shape and types)
/// convergently: none has exited, none is in a branch the others skip.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[track_caller]
#[must_use]
pub unsafe fn mma_sync<S: MmaShape<E>, E: Element>(
    a: &FragA<S, E>,
    b: &FragB<S, E>,
    c: &FragAcc<S>,
) -> FragAcc<S> {
    // SAFETY: forwarded to the caller.
    FragAcc::from_regs(unsafe { S::mma(&a.regs, &b.regs, &c.regs) })
}

/// `x` rounded to TensorFloat-32 (8 exponent bits, 10 mantissa bits) to nearest, ties away
/// from zero: PTX `cvt.rna.tf32.f32` (PTX ISA §9.7, "Data Movement and Conversion
/// Instructions: cvt"; **sm_80+**, PTX ISA 7.0), returned as the `f32` of equal value, whose
/// 13 low mantissa bits are zero. Apply it to each operand of a [`Tf32`] `mma_sync` (on the
/// registers, e.g. after `ldmatrix`): the tensor core itself only ignores those 13 bits,
/// which truncates (a relative error up to 2⁻¹⁰ per input instead of 2⁻¹¹).
///
/// On the GPU this exists only when the kernels are built for sm_80 or later
/// (`cfg(target_feature = "sm_80")`). On the host the same bits in software, as the GPU
/// computes them (the `cvt` is lowered to integer operations in SASS, as disassembled in
/// <https://enp1s0.github.io/blog/cuda/2023/01/08/tf32-rna.html>): when `|x|` is finite, add
/// `0x1000` (half a TF32 unit) to the bit pattern, then clear the 13 low bits. So a carry
/// out of the mantissa bumps the exponent (values from the largest finite TF32 upward give
/// infinity), infinities are unchanged, and a NaN keeps its sign and top payload bits (a NaN
/// whose payload lies only in the 13 low bits becomes an infinity: PTX leaves NaN results
/// unspecified).
///
/// ```
/// use cuda_std::mma::tf32_from_f32;
/// // 1 + 2⁻¹¹ is half-way between the TF32 neighbours 1 and 1 + 2⁻¹⁰: away from zero.
/// assert_eq!(tf32_from_f32(1.0 + 2f32.powi(-11)), 1.0 + 2f32.powi(-10));
/// assert_eq!(tf32_from_f32(-(1.0 + 2f32.powi(-11))), -(1.0 + 2f32.powi(-10)));
/// ```
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[must_use]
pub fn tf32_from_f32(x: f32) -> f32 {
    crate::arch::mma::tf32_from_f32(x)
}

/// Emits `ldmatrix` with `$n` destination registers.
macro_rules! ldmatrix_fn {
    ($(#[$doc:meta])* $name:ident, $n:literal, $trans:literal, $ptx:literal, [$($r:ident),+]) => {
        $(#[$doc])*
        ///
        /// PTX ISA §9.7.14.5, "Warp-level matrix load instruction: ldmatrix"; **sm_75+**
        /// (here with the sm_80 items). Register `i` holds matrix `i`, two 16-bit elements
        /// per register as [`layout::ldmatrix_b16`] says.
        ///
        /// # Safety
        /// - `.aligned`: all 32 lanes of the warp execute this same call convergently;
        /// - `row` is a generic address of **shared** memory (e.g. from
        ///   [`shared_array!`](crate::shared_array)), 16-byte aligned, valid for reading 16
        ///   bytes, in the lanes whose address the instruction uses (lanes `0..8·n` for
        ///   `n` matrices; the other lanes' addresses are ignored);
        /// - no other thread writes those bytes concurrently.
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
        #[inline(always)]
        #[track_caller]
        #[must_use]
        pub unsafe fn $name(row: *const u16) -> [u32; $n] {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::mma::$name(row) }
        }
    };
    (@list $r0:ident) => { concat!("{", stringify!($r0), "}") };
    (@list $r0:ident, $($r:ident),+) => {
        concat!("{", stringify!($r0), "}, ", ldmatrix_fn!(@list $($r),+))
    };
}

ldmatrix_fn!(
    /// Loads one 8×8 matrix of 16-bit elements from shared memory (PTX
    /// `ldmatrix.sync.aligned.m8n8.x1.shared.b16`): lanes 0..8 give the addresses of its
    /// rows (`row` points at 8 contiguous elements).
    ldmatrix_x1, 1, false, "ldmatrix.sync.aligned.m8n8.x1.shared.b16", [r0]
);
ldmatrix_fn!(
    /// Loads two 8×8 matrices (PTX `ldmatrix.sync.aligned.m8n8.x2.shared.b16`): lanes
    /// `8i..8i+8` give the row addresses of matrix `i`.
    ldmatrix_x2, 2, false, "ldmatrix.sync.aligned.m8n8.x2.shared.b16", [r0, r1]
);
ldmatrix_fn!(
    /// Loads four 8×8 matrices (PTX `ldmatrix.sync.aligned.m8n8.x4.shared.b16`): lanes
    /// `8i..8i+8` give the row addresses of matrix `i`.
    ldmatrix_x4, 4, false, "ldmatrix.sync.aligned.m8n8.x4.shared.b16", [r0, r1, r2, r3]
);
ldmatrix_fn!(
    /// [`ldmatrix_x1`], transposed (PTX `ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16`):
    /// the register holds the element at `(col, row)` of [`layout::ldmatrix_b16`].
    ldmatrix_x1_trans, 1, true, "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16", [r0]
);
ldmatrix_fn!(
    /// [`ldmatrix_x2`], transposed (PTX `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16`).
    ldmatrix_x2_trans, 2, true, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", [r0, r1]
);
ldmatrix_fn!(
    /// [`ldmatrix_x4`], transposed (PTX `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`).
    ldmatrix_x4_trans, 4, true, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", [r0, r1, r2, r3]
);

/// [`ldmatrix_x4`] with the row address given as a 32-bit shared address
/// ([`SharedAddr`](crate::shared::window::SharedAddr)) instead of a generic pointer: PTX
/// `ldmatrix.sync.aligned.m8n8.x4.shared.b16 {r0, r1, r2, r3}, [row]` with `row` a register,
/// so that constant offsets fold into the instruction's immediate (the pointer form converts
/// each address with `cvta.to.shared.u64`, in 64-bit arithmetic). Lanes `8i..8i+8` give the
/// row addresses of matrix `i`; register `i` holds matrix `i` as [`layout::ldmatrix_b16`]
/// says.
///
/// PTX ISA §9.7.14.5, "Warp-level matrix load instruction: ldmatrix"; **sm_75+** (here with
/// the sm_80 items).
///
/// # Safety
/// - `.aligned`: all 32 lanes of the warp execute this same call convergently;
/// - in every lane, `row` is a shared address of this block's shared memory, 16-byte
///   aligned, with the 16 bytes from it written before and inside one shared array;
/// - no other thread writes those bytes concurrently.
///
/// On the CPU emulator, as [`shared::window`](crate::shared::window)'s accesses: an address in
/// any of the block's shared allocations.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
#[inline(always)]
#[track_caller]
#[must_use]
pub unsafe fn ldmatrix_x4_window(row: crate::shared::window::SharedAddr) -> [u32; 4] {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::window::ldmatrix_x4(row.to_bits()) }
}

/// Emits `stmatrix` with `$n` source registers.
macro_rules! stmatrix_fn {
    ($(#[$doc:meta])* $name:ident, $n:literal, $trans:literal, $ptx:literal, [$($r:literal),+]) => {
        $(#[$doc])*
        ///
        /// PTX ISA §9.7.14.5, "Collectively store a matrix: stmatrix"; **sm_90+**, PTX ISA
        /// 7.8 (items gated with `cfg(target_feature = "sm_90")`). Register `i` holds matrix
        /// `i`, two 16-bit elements per register placed as [`layout::ldmatrix_b16`] says
        /// (the inverse of `ldmatrix`: `stmatrix` then `ldmatrix` of the same addresses
        /// gives the registers back).
        ///
        /// # Safety
        /// - `.aligned`: all 32 lanes of the warp execute this same call convergently;
        /// - `dst` is a generic address of **shared** memory, 16-byte aligned, valid for
        ///   writing 16 bytes (one row of 8 elements), in the lanes whose address the
        ///   instruction uses (lanes `0..8·n` for `n` matrices; the others are ignored);
        /// - no other thread accesses those bytes concurrently.
        #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(dst: *mut u16, regs: [u32; $n]) {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::mma::$name(dst, regs) }
        }
    };
    (@list $r0:literal) => { concat!("{", stringify!($r0), "}") };
    (@list $r0:literal, $($r:literal),+) => {
        concat!("{", stringify!($r0), "}, ", stmatrix_fn!(@list $($r),+))
    };
}

stmatrix_fn!(
    /// Stores one 8×8 matrix of 16-bit elements to shared memory (PTX
    /// `stmatrix.sync.aligned.m8n8.x1.shared.b16`): lanes 0..8 give the addresses of its
    /// rows (`dst` points at 8 contiguous elements).
    stmatrix_x1, 1, false, "stmatrix.sync.aligned.m8n8.x1.shared.b16", [0]
);
stmatrix_fn!(
    /// Stores two 8×8 matrices (PTX `stmatrix.sync.aligned.m8n8.x2.shared.b16`): lanes
    /// `8i..8i+8` give the row addresses of matrix `i`.
    stmatrix_x2, 2, false, "stmatrix.sync.aligned.m8n8.x2.shared.b16", [0, 1]
);
stmatrix_fn!(
    /// Stores four 8×8 matrices (PTX `stmatrix.sync.aligned.m8n8.x4.shared.b16`): lanes
    /// `8i..8i+8` give the row addresses of matrix `i`.
    stmatrix_x4, 4, false, "stmatrix.sync.aligned.m8n8.x4.shared.b16", [0, 1, 2, 3]
);
stmatrix_fn!(
    /// [`stmatrix_x1`], transposed (PTX `stmatrix.sync.aligned.m8n8.x1.trans.shared.b16`):
    /// the register's element at `(row, col)` of [`layout::ldmatrix_b16`] is stored at
    /// `(col, row)`.
    stmatrix_x1_trans, 1, true, "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16", [0]
);
stmatrix_fn!(
    /// [`stmatrix_x2`], transposed (PTX `stmatrix.sync.aligned.m8n8.x2.trans.shared.b16`).
    stmatrix_x2_trans, 2, true, "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16", [0, 1]
);
stmatrix_fn!(
    /// [`stmatrix_x4`], transposed (PTX `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16`).
    stmatrix_x4_trans, 4, true, "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16", [0, 1, 2, 3]
);

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl<S: MmaShape<E>, E: Element> FragA<S, E> {
    /// Loads the `A` fragment from the row-major tile at `tile` in **shared** memory
    /// (element `(row, col)` at `tile[row * lda + col]`) with one `ldmatrix.x4`: lane `l`
    /// gives the address of row `l % 16`, columns from `(K / 2)·(l / 16)`. Works for the
    /// 16-bit types and for [`Tf32`] (each 32-bit element read as two 16-bit halves).
    ///
    /// # Safety
    /// - all 32 lanes of the warp call it convergently with the same `tile` and `lda`;
    /// - `tile` is a generic address of shared memory and the 16×K tile is readable there;
    /// - every row start `tile + row · lda` is 16-byte aligned (`lda` in bytes a multiple
    ///   of 16, `tile` 16-byte aligned).
    #[inline(always)]
    #[track_caller]
    #[must_use]
    pub unsafe fn ldmatrix(tile: *const E::Storage, lda: usize) -> Self {
        let l = lane() as usize;
        let half_k = S::K as usize / 2;
        // SAFETY: caller contract; the row pointer is inside the tile.
        Self::from_regs(unsafe { ldmatrix_x4(tile.add((l % 16) * lda + half_k * (l / 16)).cast()) })
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl<S: MmaShape<E>, E: Element> FragB<S, E> {
    /// Loads the `B` fragment from `B` stored column-major at `tile` in **shared** memory
    /// (element `(k, n)` at `tile[n * ldb + k]`, i.e. `Bᵀ` row-major) with one
    /// `ldmatrix.x2`: lane `l` (of lanes 0..16) gives the address of `Bᵀ`'s row `l % 8`,
    /// columns from `(K / 2)·(l / 8)`. Works for the 16-bit types and for [`Tf32`].
    ///
    /// # Safety
    /// As [`FragA::ldmatrix`], for the 8×K tile of `Bᵀ`.
    #[inline(always)]
    #[track_caller]
    #[must_use]
    pub unsafe fn ldmatrix_col_major(tile: *const E::Storage, ldb: usize) -> Self {
        let l = lane() as usize % 16;
        let half_k = S::K as usize / 2;
        // SAFETY: caller contract; the row pointer is inside the tile.
        Self::from_regs(unsafe { ldmatrix_x2(tile.add((l % 8) * ldb + half_k * (l / 8)).cast()) })
    }
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
impl<E: Element<Storage = u16>> FragB<M16N8K16, E>
where
    M16N8K16: MmaShape<E>,
{
    /// Loads the `B` fragment from `B` stored row-major at `tile` in **shared** memory
    /// (element `(k, n)` at `tile[k * ldb + n]`) with one `ldmatrix.x2.trans`: lane `l` (of
    /// lanes 0..16) gives the address of row `k = l`. 16-bit types only (`.trans` moves
    /// 16-bit elements).
    ///
    /// # Safety
    /// As [`FragA::ldmatrix`], for the 16×8 tile of `B`.
    #[inline(always)]
    #[track_caller]
    #[must_use]
    pub unsafe fn ldmatrix_row_major(tile: *const u16, ldb: usize) -> Self {
        let l = lane() as usize % 16;
        // SAFETY: caller contract; the row pointer is inside the tile.
        Self::from_regs(unsafe { ldmatrix_x2_trans(tile.add(l * ldb)) })
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn tf32_rounding_is_to_nearest_ties_away_from_zero() {
        // (input bits, expected bits), worked by hand: the TF32 unit of [1, 2) is 2⁻¹⁰
        // (bit 13), half of it bit 12.
        let cases: [(u32, u32); 12] = [
            (0x3f80_0000, 0x3f80_0000), // 1.0: exact
            (0x3f80_0fff, 0x3f80_0000), // just below half a unit: down
            (0x3f80_1000, 0x3f80_2000), // exactly half: away from zero (up)
            (0xbf80_1000, 0xbf80_2000), // −(1 + 2⁻¹¹): away from zero (down)
            (0x3f80_3000, 0x3f80_4000), // 1 + 3·2⁻¹¹: a tie rounds away, not to even
            (0x3f80_1001, 0x3f80_2000), // just above half: up
            (0x3fff_f000, 0x4000_0000), // 2 − 2⁻¹¹: the carry bumps the exponent to 2.0
            (0x0000_1000, 0x0000_2000), // a subnormal tie
            (0x0000_0fff, 0x0000_0000), // a subnormal below half a unit: +0
            (0x7f7f_ffff, 0x7f80_0000), // the largest f32 rounds up to +∞
            (0xff80_0000, 0xff80_0000), // −∞ unchanged
            (0x7fc0_1fff, 0x7fc0_0000), // a NaN keeps its top payload
        ];
        for (x, want) in cases {
            let got = tf32_from_f32(f32::from_bits(x)).to_bits();
            assert_eq!(
                got, want,
                "tf32_from_f32({x:#010x}) = {got:#010x}, want {want:#010x}"
            );
        }
        // Every result is a TF32 value, within half a TF32 unit of the input.
        for i in 0..10_000u32 {
            let x = f32::from_bits(i.wrapping_mul(0x9e37_79b9) & 0x7f7f_ffff);
            let r = tf32_from_f32(x);
            assert_eq!(r.to_bits() & 0x1fff, 0, "{x:e}");
            let unit = f64::from(f32::from_bits(x.to_bits() & 0x7f80_0000)) * 2f64.powi(-10);
            let err = (f64::from(r) - f64::from(x)).abs();
            assert!(
                r.is_infinite() || err <= unit / 2.0 || unit == 0.0,
                "{x:e} -> {r:e}"
            );
        }
    }

    /// Asserts that `coord` maps every (lane, reg, half) into the rows × cols matrix and
    /// covers each element exactly once.
    fn covers_once(
        what: &str,
        rows: u32,
        cols: u32,
        regs: u32,
        per_reg: u32,
        coord: impl Fn(u32, u32, u32) -> (u32, u32),
    ) {
        assert_eq!(32 * regs * per_reg, rows * cols, "{what}: element count");
        let mut seen = vec![0u32; (rows * cols) as usize];
        for lane in 0..32 {
            for reg in 0..regs {
                for half in 0..per_reg {
                    let (r, c) = coord(lane, reg, half);
                    assert!(r < rows && c < cols, "{what}: ({r}, {c}) outside");
                    seen[(r * cols + c) as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{what}: counts {seen:?}");
    }

    #[test]
    fn every_fragment_covers_its_matrix_exactly_once() {
        covers_once("A m16n8k16", 16, 16, 4, 2, layout::a_m16n8k16);
        covers_once("B m16n8k16", 16, 8, 2, 2, layout::b_m16n8k16);
        covers_once("A m16n8k8 tf32", 16, 8, 4, 1, |l, r, _| {
            layout::a_m16n8k8_tf32(l, r)
        });
        covers_once("B m16n8k8 tf32", 8, 8, 2, 1, |l, r, _| {
            layout::b_m16n8k8_tf32(l, r)
        });
        covers_once("C/D m16n8", 16, 8, 4, 1, |l, r, _| layout::acc_m16n8(l, r));
        covers_once("ldmatrix 8x8", 8, 8, 1, 2, |l, _, h| {
            layout::ldmatrix_b16(l, h)
        });
        // Through the traits, as the loaders use them.
        covers_once(
            "A f16 trait",
            16,
            16,
            4,
            F16::PER_REG,
            <M16N8K16 as MmaShape<F16>>::a_coord,
        );
        covers_once(
            "B bf16 trait",
            16,
            8,
            2,
            Bf16::PER_REG,
            <M16N8K16 as MmaShape<Bf16>>::b_coord,
        );
        covers_once(
            "A tf32 trait",
            16,
            8,
            4,
            Tf32::PER_REG,
            <M16N8K8 as MmaShape<Tf32>>::a_coord,
        );
        covers_once(
            "B tf32 trait",
            8,
            8,
            2,
            Tf32::PER_REG,
            <M16N8K8 as MmaShape<Tf32>>::b_coord,
        );
    }

    #[test]
    fn documented_corners_of_the_ptx_figures() {
        // PTX ISA figures: lane 0 holds a0,a1 = A[0][0..2], a2,a3 = A[8][0..2],
        // a4,a5 = A[0][8..10]; lane 31 (group 7, t 3) holds a6,a7 = A[15][14..16].
        assert_eq!(layout::a_m16n8k16(0, 1, 0), (8, 0));
        assert_eq!(layout::a_m16n8k16(0, 2, 1), (0, 9));
        assert_eq!(layout::a_m16n8k16(31, 3, 1), (15, 15));
        // B: lane 5 (group 1, t 1): b0,b1 = B[2..4][1], b2,b3 = B[10..12][1].
        assert_eq!(layout::b_m16n8k16(5, 0, 1), (3, 1));
        assert_eq!(layout::b_m16n8k16(5, 1, 0), (10, 1));
        // tf32: a2 of lane 6 (group 1, t 2) is A[1][6]; b1 of lane 6 is B[6][1].
        assert_eq!(layout::a_m16n8k8_tf32(6, 2), (1, 6));
        assert_eq!(layout::b_m16n8k8_tf32(6, 1), (6, 1));
        // C: c3 of lane 6 is C[9][5].
        assert_eq!(layout::acc_m16n8(6, 3), (9, 5));
    }

    #[test]
    fn fragments_pack_two_halves_low_first() {
        let a = FragA::<M16N8K16, F16>::from_fn(5, |r, c| r * 100 + c);
        // Lane 5: group 1, t 1: reg 0 = A[1][2], A[1][3].
        assert_eq!(a.regs()[0], 102 | (103 << 16));
        let b = FragB::<M16N8K8, Tf32>::from_fn(5, |k, n| (k * 8 + n) + 0x4000_0000);
        assert_eq!(b.regs(), [0x4000_0000 + 9, 0x4000_0000 + 5 * 8 + 1]);
    }

    #[test]
    #[should_panic(expected = "can only be called in GPU code")]
    fn mma_sync_is_a_host_stub() {
        let a = FragA::<M16N8K16, Bf16>::from_regs([0; 4]);
        let b = FragB::<M16N8K16, Bf16>::from_regs([0; 2]);
        // SAFETY: panics on the host before doing anything.
        let _ = unsafe { mma_sync(&a, &b, &FragAcc::zero()) };
    }
}
