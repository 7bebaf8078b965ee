//! Atomic operations on raw pointers to global or shared memory, with an explicit **scope**
//! and **ordering** (PTX memory consistency model, PTX ISA §8).
//!
//! ```no_run
//! # use cuda_std::kernel;
//! # /// # Safety
//! # /// `counter` points to a `u32` of device memory that only atomics access.
//! # #[kernel]
//! # pub unsafe fn count(counter: *mut u32) {
//! use cuda_std::atomic::{self, Device, Ordering};
//! let old = unsafe { atomic::fetch_add::<Device, u32>(counter, 1, Ordering::Relaxed) };
//! # let _ = old;
//! # }
//! # fn main() {}
//! ```
//!
//! **Scope** (a type parameter): the set of threads the operation is atomic, and ordered,
//! with respect to:
//! - [`Block`] (PTX `.cta`): the threads of the same block. Cheapest; enough for shared
//!   memory and for data only one block touches.
//! - [`Device`] (PTX `.gpu`): all threads of the GPU, all grids. Use for global counters and
//!   for communication between blocks.
//! - [`System`] (PTX `.sys`): also the host and peer GPUs (mapped or managed memory). This is
//!   what `core::sync::atomic` compiles to on nvptx (BRIEF: `atom.relaxed.sys`).
//!
//! **Ordering** ([`Ordering`], the same enum as `core::sync::atomic`): `Relaxed` (PTX
//! `.relaxed`: atomic, no ordering of other accesses), `Acquire` (`.acquire`), `Release`
//! (`.release`), `AcqRel` (`.acq_rel`), `SeqCst` (a `fence.sc` of the same scope followed by
//! the `.acquire` form of the operation, for loads `ld.acquire`, for stores `st.relaxed` —
//! the mapping of the PTX ISA's §8 "Memory Consistency Model" / libcu++). As in `core`,
//! loads reject `Release`/`AcqRel` and stores reject `Acquire`/`AcqRel` (they panic, which on
//! the GPU is a `trap`); the ordering is normally a constant, so the check compiles away.
//!
//! Types: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`; the operations each supports are the
//! traits [`Atomic`] (load, store, exchange, compare-exchange: all six), [`AtomicAdd`]
//! (`fetch_add`/`fetch_sub`: all six; integer addition wraps), [`AtomicMinMax`] (all six;
//! integers natively, floats by a compare-exchange loop) and [`AtomicBits`] (`and`/`or`/`xor`:
//! integers).
//!
//! Rust-CUDA's atomic float types are here too, as handles on the same operations:
//! [`AtomicF32`] / [`AtomicF64`] (device scope), [`BlockAtomicF32`] / [`BlockAtomicF64`]
//! (block scope, `unsafe` operations) and [`SystemAtomicF32`] / [`SystemAtomicF64`] (system
//! scope).
//!
//! On the CPU emulator (`cuda_emu`) every operation is a host atomic with `SeqCst`
//! ordering, whatever the scope and ordering asked for (at least as strong), and is checked
//! against the known allocations; atomics are exempt from the shared-memory race check.
//!
//! Instructions: `atom{.sem}{.scope}.op.type`, `ld{.sem}{.scope}`, `st{.sem}{.scope}`,
//! `fence{.sem}{.scope}` (PTX ISA §9.7 "Parallel Synchronization and Communication
//! Instructions: atom", "Data Movement and Conversion Instructions: ld, st", "membar/fence").
//! Scopes and `.sem` qualifiers need **sm_70+** and PTX ISA 6.0+ (our baseline); `atom.add.f64`
//! needs sm_60+; 64-bit `min`/`max` need sm_32+.
//!
//! # Safety (every operation)
//! - `ptr` is non-null, aligned to the size of `T`, and points to global or shared memory
//!   (generic addressing) that is valid for reads and writes of a `T` for the whole
//!   operation (for [`load`], reads only).
//! - Every thread that accesses the location concurrently does so atomically with a scope
//!   that includes both threads (e.g. [`Block`] only if they are in the same block); mixing
//!   plain and atomic accesses to one location without ordering between them is a data race
//!   (undefined behaviour).

use core::marker::PhantomData;
pub use core::sync::atomic::Ordering;

use crate::arch::atomic::*;

mod sealed {
    pub trait Sealed {}
}

/// Which PTX scope an operation uses.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    /// `.cta`
    Block,
    /// `.gpu`
    Device,
    /// `.sys`
    System,
}

/// An atomic scope: [`Block`], [`Device`] or [`System`].
pub trait Scope: sealed::Sealed {
    #[doc(hidden)]
    const KIND: ScopeKind;
}

/// Block scope (PTX `.cta`): atomic and ordered among the threads of one block.
#[derive(Debug)]
pub enum Block {}
/// Device scope (PTX `.gpu`): atomic and ordered among all threads of the GPU.
#[derive(Debug)]
pub enum Device {}
/// System scope (PTX `.sys`): atomic and ordered also with respect to the host and peer
/// GPUs.
#[derive(Debug)]
pub enum System {}

impl sealed::Sealed for Block {}
impl sealed::Sealed for Device {}
impl sealed::Sealed for System {}
impl Scope for Block {
    const KIND: ScopeKind = ScopeKind::Block;
}
impl Scope for Device {
    const KIND: ScopeKind = ScopeKind::Device;
}
impl Scope for System {
    const KIND: ScopeKind = ScopeKind::System;
}

/// A type with atomic load, store, exchange and compare-exchange: `i32`, `u32`, `i64`,
/// `u64`, `f32`, `f64` (floats by their bits: compare-exchange compares bits, so `-0.0 !=
/// 0.0` and a NaN matches itself).
pub trait Atomic: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_load(ptr: *const Self, scope: ScopeKind, order: Ordering) -> Self;
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_store(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering);
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_exchange(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering)
    -> Self;
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_cas(
        ptr: *mut Self,
        current: Self,
        new: Self,
        scope: ScopeKind,
        order: Ordering,
    ) -> Self;
    #[doc(hidden)]
    fn bits_eq(a: Self, b: Self) -> bool;
}

/// A type with atomic `fetch_add` (and `fetch_sub`, as the addition of the negation).
pub trait AtomicAdd: Atomic {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_add(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) -> Self;
    #[doc(hidden)]
    fn negate(self) -> Self;
}

/// A type with atomic `fetch_min` / `fetch_max`. Integers use `atom.min`/`atom.max` (signed
/// comparison for `i32`/`i64`); floats use a compare-exchange loop with IEEE `min`/`max`
/// semantics of `f32::min` (a NaN operand is ignored unless both are NaN).
pub trait AtomicMinMax: Atomic {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_min(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) -> Self;
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_max(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) -> Self;
}

/// An integer with atomic `fetch_and` / `fetch_or` / `fetch_xor`.
pub trait AtomicBits: Atomic {
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_and(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) -> Self;
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_or(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) -> Self;
    #[doc(hidden)]
    #[track_caller]
    unsafe fn atomic_xor(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) -> Self;
}

/// Implements `Atomic` for `$t` over the raw bit operations of `$b` with conversions.
macro_rules! impl_atomic {
    ($t:ty, $b:ty, $to:expr, $from:expr, $cas:ident, $ld:ident, $st:ident, $exch:ident) => {
        impl sealed::Sealed for $t {}
        impl Atomic for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_load(ptr: *const Self, scope: ScopeKind, order: Ordering) -> Self {
                // SAFETY: forwarded; same size and alignment as `$b`.
                $from(unsafe { $ld(ptr.cast::<$b>(), scope, order) })
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_store(ptr: *mut Self, val: Self, scope: ScopeKind, order: Ordering) {
                // SAFETY: forwarded; same size and alignment as `$b`.
                unsafe { $st(ptr.cast::<$b>(), $to(val), scope, order) }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_exchange(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded; same size and alignment as `$b`.
                $from(unsafe { $exch(ptr.cast::<$b>(), $to(val), scope, order) })
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_cas(
                ptr: *mut Self,
                current: Self,
                new: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded; same size and alignment as `$b`.
                $from(unsafe { $cas(ptr.cast::<$b>(), $to(current), $to(new), scope, order) })
            }
            #[inline(always)]
            #[track_caller]
            fn bits_eq(a: Self, b: Self) -> bool {
                $to(a) == $to(b)
            }
        }
    };
}

impl_atomic!(
    u32,
    u32,
    |v: u32| v,
    |b: u32| b,
    cas_b32,
    ld_b32,
    st_b32,
    exch_b32
);
impl_atomic!(
    i32,
    u32,
    |v: i32| v as u32,
    |b: u32| b as i32,
    cas_b32,
    ld_b32,
    st_b32,
    exch_b32
);
impl_atomic!(
    f32,
    u32,
    f32::to_bits,
    f32::from_bits,
    cas_b32,
    ld_b32,
    st_b32,
    exch_b32
);
impl_atomic!(
    u64,
    u64,
    |v: u64| v,
    |b: u64| b,
    cas_b64,
    ld_b64,
    st_b64,
    exch_b64
);
impl_atomic!(
    i64,
    u64,
    |v: i64| v as u64,
    |b: u64| b as i64,
    cas_b64,
    ld_b64,
    st_b64,
    exch_b64
);
impl_atomic!(
    f64,
    u64,
    f64::to_bits,
    f64::from_bits,
    cas_b64,
    ld_b64,
    st_b64,
    exch_b64
);

macro_rules! impl_add {
    ($t:ty, $raw:ident, $rt:ty, $neg:expr) => {
        impl AtomicAdd for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_add(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded; two's-complement addition is the same for signed and
                // unsigned operands, so `atom.add.u*` serves `i*` too.
                unsafe { $raw(ptr.cast::<$rt>(), val as $rt, scope, order) as $t }
            }
            #[inline(always)]
            #[track_caller]
            fn negate(self) -> Self {
                $neg(self)
            }
        }
    };
}
impl_add!(u32, add_u32, u32, u32::wrapping_neg);
impl_add!(i32, add_u32, u32, i32::wrapping_neg);
impl_add!(u64, add_u64, u64, u64::wrapping_neg);
impl_add!(i64, add_u64, u64, i64::wrapping_neg);
impl_add!(f32, add_f32, f32, |v: f32| -v);
impl_add!(f64, add_f64, f64, |v: f64| -v);

macro_rules! impl_minmax_int {
    ($t:ty, $min:ident, $max:ident) => {
        impl AtomicMinMax for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_min(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded.
                unsafe { $min(ptr, val, scope, order) }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_max(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded.
                unsafe { $max(ptr, val, scope, order) }
            }
        }
    };
}
impl_minmax_int!(u32, min_u32, max_u32);
impl_minmax_int!(i32, min_s32, max_s32);
impl_minmax_int!(u64, min_u64, max_u64);
impl_minmax_int!(i64, min_s64, max_s64);

/// Compare-exchange loop applying `f(old, val)`; returns the previous value. The loop's
/// loads and failed attempts are relaxed; the successful CAS uses `order`.
#[inline(always)]
#[track_caller]
unsafe fn cas_loop<T: Atomic>(
    ptr: *mut T,
    val: T,
    scope: ScopeKind,
    order: Ordering,
    f: impl Fn(T, T) -> T,
) -> T {
    // SAFETY: forwarded to the caller (module docs).
    let mut old = unsafe { T::atomic_load(ptr, scope, Ordering::Relaxed) };
    loop {
        let new = f(old, val);
        if T::bits_eq(new, old) && matches!(order, Ordering::Relaxed) {
            // Nothing to write, and no ordering to establish.
            return old;
        }
        // SAFETY: as above.
        let seen = unsafe { T::atomic_cas(ptr, old, new, scope, order) };
        if T::bits_eq(seen, old) {
            return old;
        }
        old = seen;
    }
}

macro_rules! impl_minmax_float {
    ($t:ty) => {
        impl AtomicMinMax for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_min(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded.
                unsafe { cas_loop(ptr, val, scope, order, <$t>::min) }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_max(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded.
                unsafe { cas_loop(ptr, val, scope, order, <$t>::max) }
            }
        }
    };
}
impl_minmax_float!(f32);
impl_minmax_float!(f64);

macro_rules! impl_bits {
    ($t:ty, $rt:ty, $and:ident, $or:ident, $xor:ident) => {
        impl AtomicBits for $t {
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_and(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: forwarded; bitwise operations ignore signedness.
                unsafe { $and(ptr.cast::<$rt>(), val as $rt, scope, order) as $t }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_or(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: as above.
                unsafe { $or(ptr.cast::<$rt>(), val as $rt, scope, order) as $t }
            }
            #[inline(always)]
            #[track_caller]
            unsafe fn atomic_xor(
                ptr: *mut Self,
                val: Self,
                scope: ScopeKind,
                order: Ordering,
            ) -> Self {
                // SAFETY: as above.
                unsafe { $xor(ptr.cast::<$rt>(), val as $rt, scope, order) as $t }
            }
        }
    };
}
impl_bits!(u32, u32, and_b32, or_b32, xor_b32);
impl_bits!(i32, u32, and_b32, or_b32, xor_b32);
impl_bits!(u64, u64, and_b64, or_b64, xor_b64);
impl_bits!(i64, u64, and_b64, or_b64, xor_b64);

/// Atomically reads `*ptr` (PTX `ld.relaxed|acquire.{cta,gpu,sys}`).
///
/// `order`: `Relaxed`, `Acquire` or `SeqCst`; `Release`/`AcqRel` panic.
///
/// # Safety
/// The module's rules: `ptr` is aligned, valid for reads of a `T`, in global or shared
/// memory, and concurrent writers use atomics of a scope including this thread.
#[inline(always)]
#[track_caller]
#[must_use]
pub unsafe fn load<S: Scope, T: Atomic>(ptr: *const T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_load(ptr, S::KIND, order) }
}

/// Atomically writes `val` to `*ptr` (PTX `st.relaxed|release.{cta,gpu,sys}`).
///
/// `order`: `Relaxed`, `Release` or `SeqCst`; `Acquire`/`AcqRel` panic.
///
/// # Safety
/// The module's rules: `ptr` is aligned, valid for writes of a `T`, in global or shared
/// memory, and concurrent accessors use atomics of a scope including this thread.
#[inline(always)]
#[track_caller]
pub unsafe fn store<S: Scope, T: Atomic>(ptr: *mut T, val: T, order: Ordering) {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_store(ptr, val, S::KIND, order) }
}

/// Atomically replaces `*ptr` with `val`, returning the previous value (PTX `atom.exch.b32`
/// / `.b64`).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn exchange<S: Scope, T: Atomic>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_exchange(ptr, val, S::KIND, order) }
}

/// If `*ptr` equals `current` (bitwise), replaces it with `new`. Returns `Ok(previous)` on
/// success and `Err(previous)` otherwise, like `core`'s `compare_exchange` (PTX
/// `atom.cas.b32` / `.b64`). PTX has one ordering for both outcomes: `order` applies to the
/// failed comparison as well.
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn compare_exchange<S: Scope, T: Atomic>(
    ptr: *mut T,
    current: T,
    new: T,
    order: Ordering,
) -> Result<T, T> {
    // SAFETY: forwarded to the caller.
    let old = unsafe { T::atomic_cas(ptr, current, new, S::KIND, order) };
    if T::bits_eq(old, current) {
        Ok(old)
    } else {
        Err(old)
    }
}

/// Atomically adds `val` to `*ptr`, returning the previous value (PTX `atom.add.u32`,
/// `.u64`, `.f32`, `.f64`; integer addition wraps, float addition rounds to nearest even
/// — so the final value of concurrent float additions depends on their order).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_add<S: Scope, T: AtomicAdd>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_add(ptr, val, S::KIND, order) }
}

/// Atomically subtracts `val` from `*ptr`, returning the previous value: an `atom.add` of the
/// (wrapping, for integers) negation of `val`.
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_sub<S: Scope, T: AtomicAdd>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_add(ptr, val.negate(), S::KIND, order) }
}

/// Atomically stores the minimum of `*ptr` and `val`, returning the previous value (PTX
/// `atom.min.{u32,s32,u64,s64}`; floats: compare-exchange loop, see [`AtomicMinMax`]).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_min<S: Scope, T: AtomicMinMax>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_min(ptr, val, S::KIND, order) }
}

/// Atomically stores the maximum of `*ptr` and `val`, returning the previous value (PTX
/// `atom.max.{u32,s32,u64,s64}`; floats: compare-exchange loop, see [`AtomicMinMax`]).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_max<S: Scope, T: AtomicMinMax>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_max(ptr, val, S::KIND, order) }
}

/// Atomically `*ptr &= val`, returning the previous value (PTX `atom.and.b32` / `.b64`).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_and<S: Scope, T: AtomicBits>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_and(ptr, val, S::KIND, order) }
}

/// Atomically `*ptr |= val`, returning the previous value (PTX `atom.or.b32` / `.b64`).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_or<S: Scope, T: AtomicBits>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_or(ptr, val, S::KIND, order) }
}

/// Atomically `*ptr ^= val`, returning the previous value (PTX `atom.xor.b32` / `.b64`).
///
/// # Safety
/// The module's rules (see [`load`] and [`store`]).
#[inline(always)]
#[track_caller]
pub unsafe fn fetch_xor<S: Scope, T: AtomicBits>(ptr: *mut T, val: T, order: Ordering) -> T {
    // SAFETY: forwarded to the caller.
    unsafe { T::atomic_xor(ptr, val, S::KIND, order) }
}

/// A memory fence of scope `S`: `Acquire`, `Release` and `AcqRel` give PTX
/// `fence.acq_rel.{cta,gpu,sys}`, `SeqCst` gives `fence.sc.*` (the same as
/// [`crate::thread::fence_device`] and friends); `Relaxed` panics, as in `core`.
///
/// With relaxed atomics it builds release/acquire patterns: writer `data = ...;
/// fence::<Device>(Release); store::<Device>(flag, 1, Relaxed)`, reader `while
/// load::<Device>(flag, Relaxed) == 0 {} fence::<Device>(Acquire); ... = data` (PTX ISA §8,
/// "Memory Consistency Model": fence-SC / release and acquire patterns). sm_70+.
#[inline(always)]
#[track_caller]
pub fn fence<S: Scope>(order: Ordering) {
    crate::arch::atomic::fence(S::KIND, order)
}

/// A reference-like handle to an atomic location with a fixed scope, for code that touches
/// one location many times: `AtomicRef::<Device, u32>::new(ptr).fetch_add(1, Relaxed)`.
///
/// Creating one is `unsafe` (it asserts the module's safety rules for the handle's
/// lifetime); its operations are then safe.
#[derive(Debug)]
pub struct AtomicRef<'a, S: Scope, T: Atomic> {
    ptr: *mut T,
    _marker: PhantomData<(&'a T, S)>,
}

impl<S: Scope, T: Atomic> Clone for AtomicRef<'_, S, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S: Scope, T: Atomic> Copy for AtomicRef<'_, S, T> {}

impl<'a, S: Scope, T: Atomic> AtomicRef<'a, S, T> {
    /// Wraps `ptr`.
    ///
    /// # Safety
    /// For `'a`: `ptr` satisfies the module's rules (aligned, valid for reads and writes, in
    /// global or shared memory), and every concurrent access to it is atomic with a scope
    /// that includes this thread.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn new(ptr: *mut T) -> Self {
        Self {
            ptr,
            _marker: PhantomData,
        }
    }

    /// The wrapped pointer.
    #[inline(always)]
    #[track_caller]
    pub fn as_ptr(self) -> *mut T {
        self.ptr
    }

    /// [`load`] (`Relaxed`, `Acquire`, `SeqCst`).
    #[inline(always)]
    #[track_caller]
    #[must_use]
    pub fn load(self, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { load::<S, T>(self.ptr, order) }
    }

    /// [`store`] (`Relaxed`, `Release`, `SeqCst`).
    #[inline(always)]
    #[track_caller]
    pub fn store(self, val: T, order: Ordering) {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { store::<S, T>(self.ptr, val, order) }
    }

    /// [`exchange`].
    #[inline(always)]
    #[track_caller]
    pub fn exchange(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { exchange::<S, T>(self.ptr, val, order) }
    }

    /// [`compare_exchange`].
    #[inline(always)]
    #[track_caller]
    pub fn compare_exchange(self, current: T, new: T, order: Ordering) -> Result<T, T> {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { compare_exchange::<S, T>(self.ptr, current, new, order) }
    }
}

impl<S: Scope, T: AtomicAdd> AtomicRef<'_, S, T> {
    /// [`fetch_add`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_add(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_add::<S, T>(self.ptr, val, order) }
    }

    /// [`fetch_sub`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_sub(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_sub::<S, T>(self.ptr, val, order) }
    }
}

impl<S: Scope, T: AtomicMinMax> AtomicRef<'_, S, T> {
    /// [`fetch_min`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_min(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_min::<S, T>(self.ptr, val, order) }
    }

    /// [`fetch_max`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_max(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_max::<S, T>(self.ptr, val, order) }
    }
}

impl<S: Scope, T: AtomicBits> AtomicRef<'_, S, T> {
    /// [`fetch_and`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_and(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_and::<S, T>(self.ptr, val, order) }
    }

    /// [`fetch_or`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_or(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_or::<S, T>(self.ptr, val, order) }
    }

    /// [`fetch_xor`].
    #[inline(always)]
    #[track_caller]
    pub fn fetch_xor(self, val: T, order: Ordering) -> T {
        // SAFETY: guaranteed by `new`'s contract.
        unsafe { fetch_xor::<S, T>(self.ptr, val, order) }
    }
}

/// Defines one of Rust-CUDA's atomic float types over the scope `$scope`.
macro_rules! atomic_float {
    ($(#[$doc:meta])* $name:ident, $t:ty, $bits:ty, $align:literal, $scope:ty,
     [$($unsafety:ident, $safety:expr)?]) => {
        $(#[$doc])*
        ///
        /// Same size, alignment and bits as the float (`#[repr(C)]`), so a `*mut` float in
        /// global or shared memory can be viewed as one ([`from_ptr`](Self::from_ptr)). Each
        /// operation is one PTX instruction of the scope (module docs): `fetch_add` is
        /// `atom.add` of the float type, `fetch_sub` an `atom.add` of the negation,
        /// `fetch_and`/`_or`/`_xor` the bitwise `atom` on the float's bits, `fetch_min`/`_max`
        /// a compare-exchange loop ([`AtomicMinMax`]).
        ///
        /// Device-only, like the rest of this module: on the host it runs inside an emulated
        /// launch (the value must then be in a kernel buffer or shared memory) and panics
        /// outside one. (Rust-CUDA's host version uses `core` atomics instead.)
        #[repr(C, align($align))]
        pub struct $name {
            v: core::cell::UnsafeCell<$t>,
        }

        // SAFETY: every access to the value goes through an atomic operation (or `&mut`).
        unsafe impl Sync for $name {}

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct(stringify!($name)).field("ptr", &self.v.get()).finish()
            }
        }

        impl $name {
            /// A new atomic holding `v`.
            #[inline(always)]
            #[must_use]
            pub const fn new(v: $t) -> Self {
                Self { v: core::cell::UnsafeCell::new(v) }
            }

            /// Views the float at `ptr` as this atomic type, for the lifetime `'a` (as
            /// `core`'s `AtomicU32::from_ptr`).
            ///
            /// # Safety
            /// For `'a`: `ptr` is non-null, aligned to its size, points to global or shared
            /// memory valid for reads and writes, and every concurrent access to it is
            /// atomic with a scope that includes this thread (module docs).
            #[inline(always)]
            #[must_use]
            pub unsafe fn from_ptr<'a>(ptr: *mut $t) -> &'a Self {
                // SAFETY: same layout as the float (`repr(C)` over an `UnsafeCell`); the
                // caller vouches for the pointer.
                unsafe { &*ptr.cast::<Self>() }
            }

            /// Consumes the atomic and returns the value.
            #[inline(always)]
            #[must_use]
            pub fn into_inner(self) -> $t {
                self.v.into_inner()
            }

            /// The value, through an exclusive borrow (no atomic operation needed).
            #[inline(always)]
            pub fn get_mut(&mut self) -> &mut $t {
                self.v.get_mut()
            }

            /// The address of the value.
            #[inline(always)]
            #[must_use]
            pub const fn as_ptr(&self) -> *mut $t {
                self.v.get()
            }

            /// Adds `val`, returning the value before (PTX `atom.add`, rounded to nearest
            /// even: concurrent additions give an order-dependent sum).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_add(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: `self` is a live float of global or shared memory (the type's
                // contract), accessed only atomically; the scope is the caller's concern
                // where the method is `unsafe`.
                unsafe { fetch_add::<$scope, $t>(self.v.get(), val, order) }
            }

            /// Subtracts `val` (an `atom.add` of `-val`), returning the value before.
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_sub(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_add`.
                unsafe { fetch_sub::<$scope, $t>(self.v.get(), val, order) }
            }

            /// Bitwise and of the float's bits with `val`'s, returning the value before
            /// (`atom.and.b32` / `.b64`; e.g. `fetch_and(f32::from_bits(0x7fff_ffff))` clears
            /// the sign).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_and(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_add`; the float and its bits share size and alignment.
                let old = unsafe {
                    fetch_and::<$scope, $bits>(self.v.get().cast(), val.to_bits(), order)
                };
                <$t>::from_bits(old)
            }

            /// Bitwise or of the float's bits with `val`'s, returning the value before.
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_or(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_and`.
                let old = unsafe {
                    fetch_or::<$scope, $bits>(self.v.get().cast(), val.to_bits(), order)
                };
                <$t>::from_bits(old)
            }

            /// Bitwise xor of the float's bits with `val`'s, returning the value before
            /// (`fetch_xor(-0.0)` flips the sign).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_xor(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_and`.
                let old = unsafe {
                    fetch_xor::<$scope, $bits>(self.v.get().cast(), val.to_bits(), order)
                };
                <$t>::from_bits(old)
            }

            /// Stores the minimum of the value and `val` (NaN ignored unless both are NaN, as
            /// `f32::min`), returning the value before.
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_min(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_add`.
                unsafe { fetch_min::<$scope, $t>(self.v.get(), val, order) }
            }

            /// Stores the maximum of the value and `val`, returning the value before.
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn fetch_max(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_add`.
                unsafe { fetch_max::<$scope, $t>(self.v.get(), val, order) }
            }

            /// Replaces the value with `val`, returning the value before (`atom.exch`).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn swap(&self, val: $t, order: Ordering) -> $t {
                // SAFETY: as in `fetch_add`.
                unsafe { exchange::<$scope, $t>(self.v.get(), val, order) }
            }

            /// If the value's bits equal `current`'s, stores `new`: `Ok(before)` on success,
            /// `Err(before)` otherwise (`atom.cas` on the bits; `order` applies to both
            /// outcomes).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                order: Ordering,
            ) -> Result<$t, $t> {
                // SAFETY: as in `fetch_add`.
                unsafe { compare_exchange::<$scope, $t>(self.v.get(), current, new, order) }
            }

            /// Reads the value (`ld.relaxed|acquire`); `order`: `Relaxed`, `Acquire` or
            /// `SeqCst` (`Release`/`AcqRel` panic, as in `core`).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            #[must_use]
            pub $($unsafety)? fn load(&self, order: Ordering) -> $t {
                // SAFETY: as in `fetch_add`.
                unsafe { load::<$scope, $t>(self.v.get(), order) }
            }

            /// Writes `val` (`st.relaxed|release`); `order`: `Relaxed`, `Release` or `SeqCst`
            /// (`Acquire`/`AcqRel` panic, as in `core`).
            $(#[doc = ""] #[doc = $safety])?
            #[inline(always)]
            #[track_caller]
            pub $($unsafety)? fn store(&self, val: $t, order: Ordering) {
                // SAFETY: as in `fetch_add`.
                unsafe { store::<$scope, $t>(self.v.get(), val, order) }
            }
        }
    };
}

/// The safety section of the block-scoped types' operations.
macro_rules! block_safety {
    () => {
        "# Safety\n\
         Block scope (`.cta`) is atomic only among the threads of one block: every thread \
         that accesses this value while the operation runs is in the caller's block (always \
         true for shared memory). A thread of another block, or the host, accessing it \
         concurrently is a data race (undefined behaviour); use [`AtomicF32`] or \
         [`SystemAtomicF32`] then."
    };
}

atomic_float!(
    /// An `f32` shared by the threads of the GPU: atomic at device scope (PTX `.gpu`),
    /// Rust-CUDA's `AtomicF32`.
    AtomicF32, f32, u32, 4, Device, []
);
atomic_float!(
    /// An `f64` shared by the threads of the GPU: atomic at device scope (PTX `.gpu`),
    /// Rust-CUDA's `AtomicF64`. `atom.add.f64` needs sm_60 (below our sm_70 baseline).
    AtomicF64, f64, u64, 8, Device, []
);
atomic_float!(
    /// An `f32` shared by the threads of one block: atomic at block scope (PTX `.cta`, the
    /// cheapest), Rust-CUDA's `BlockAtomicF32`. Its operations are `unsafe`: see each one's
    /// safety section.
    BlockAtomicF32, f32, u32, 4, Block, [unsafe, block_safety!()]
);
atomic_float!(
    /// An `f64` shared by the threads of one block: atomic at block scope (PTX `.cta`),
    /// Rust-CUDA's `BlockAtomicF64`. Its operations are `unsafe`: see each one's safety
    /// section.
    BlockAtomicF64, f64, u64, 8, Block, [unsafe, block_safety!()]
);
atomic_float!(
    /// An `f32` shared with the host and peer GPUs (mapped or managed memory): atomic at
    /// system scope (PTX `.sys`), Rust-CUDA's `SystemAtomicF32` (whose operations use device
    /// scope, an upstream slip this type does not copy).
    SystemAtomicF32, f32, u32, 4, System, []
);
atomic_float!(
    /// An `f64` shared with the host and peer GPUs: atomic at system scope (PTX `.sys`),
    /// Rust-CUDA's `SystemAtomicF64`.
    SystemAtomicF64, f64, u64, 8, System, []
);

/// Defines the element methods of a container of atomics ([`AtomicSlice`] and
/// [`SharedAtomicArray`]) over its `get(i) -> Option<AtomicRef<…>>`: `load`, `store`,
/// `exchange`, `compare_exchange` and the `fetch_*` read-modify-writes, each forwarding to
/// the [`AtomicRef`] method of the same name (so with the container's scope), and touching
/// nothing when `i` is out of bounds (`None`, or `false` for `store`). `[…]`: generic
/// parameters after `T` (`, const N: usize`). The bodies use `?`, not `Option::map`: a
/// closure would hide the caller's line from the emulator's reports.
///
/// [`AtomicSlice`]: crate::launch::AtomicSlice
/// [`SharedAtomicArray`]: crate::shared::SharedAtomicArray
macro_rules! element_atomics {
    ([$($g:tt)*] $ty:ty) => {
        impl<T: $crate::atomic::Atomic $($g)*> $ty {
            /// Atomically reads element `i` ([`atomic::load`](crate::atomic::load); `order`:
            /// `Relaxed`, `Acquire` or `SeqCst`). `None` if `i >= len()`.
            #[inline(always)]
            #[track_caller]
            #[must_use]
            pub fn load(&self, i: usize, order: $crate::atomic::Ordering) -> Option<T> {
                let a = self.get(i)?;
                Some(a.load(order))
            }

            /// Atomically writes `val` to element `i` ([`atomic::store`](crate::atomic::store);
            /// `order`: `Relaxed`, `Release` or `SeqCst`). Returns `false`, writing nothing,
            /// if `i >= len()`.
            #[inline(always)]
            #[track_caller]
            pub fn store(&self, i: usize, val: T, order: $crate::atomic::Ordering) -> bool {
                match self.get(i) {
                    Some(a) => {
                        a.store(val, order);
                        true
                    }
                    None => false,
                }
            }

            /// Atomically replaces element `i` with `val`, returning the previous value
            /// ([`atomic::exchange`](crate::atomic::exchange)). `None` if `i >= len()`.
            #[inline(always)]
            #[track_caller]
            pub fn exchange(&self, i: usize, val: T, order: $crate::atomic::Ordering) -> Option<T> {
                let a = self.get(i)?;
                Some(a.exchange(val, order))
            }

            /// If element `i` equals `current` (bitwise), replaces it with `new`:
            /// `Some(Ok(previous))` on success, `Some(Err(previous))` otherwise
            /// ([`atomic::compare_exchange`](crate::atomic::compare_exchange)); `None` if
            /// `i >= len()`.
            #[inline(always)]
            #[track_caller]
            pub fn compare_exchange(
                &self,
                i: usize,
                current: T,
                new: T,
                order: $crate::atomic::Ordering,
            ) -> Option<Result<T, T>> {
                let a = self.get(i)?;
                Some(a.compare_exchange(current, new, order))
            }
        }
        $crate::atomic::element_atomics!(@rmw [$($g)*] $ty, AtomicAdd:
            fetch_add, "adds `val` to (integers wrap)";
            fetch_sub, "subtracts `val` from (integers wrap)";
        );
        $crate::atomic::element_atomics!(@rmw [$($g)*] $ty, AtomicMinMax:
            fetch_min, "stores the minimum of `val` and";
            fetch_max, "stores the maximum of `val` and";
        );
        $crate::atomic::element_atomics!(@rmw [$($g)*] $ty, AtomicBits:
            fetch_and, "ANDs `val` into";
            fetch_or, "ORs `val` into";
            fetch_xor, "XORs `val` into";
        );
    };
    (@rmw [$($g:tt)*] $ty:ty, $bound:ident: $($name:ident, $what:literal;)*) => {
        impl<T: $crate::atomic::$bound $($g)*> $ty {$(
            #[doc = concat!("Atomically ", $what, " element `i`, returning the previous \
                value ([`atomic::", stringify!($name), "`](crate::atomic::",
                stringify!($name), ")). `None`, touching nothing, if `i >= len()`.")]
            #[inline(always)]
            #[track_caller]
            pub fn $name(&self, i: usize, val: T, order: $crate::atomic::Ordering) -> Option<T> {
                let a = self.get(i)?;
                Some(a.$name(val, order))
            }
        )*}
    };
}
pub(crate) use element_atomics;
