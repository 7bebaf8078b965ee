//! Shared-memory loads and stores by 32-bit shared address ([`SharedAddr`]): PTX
//! `ld.shared` / `st.shared` (PTX ISA §9.7.9.8 "ld", §9.7.9 "st"; all compute capabilities).
//!
//! Why: a generic pointer from [`shared_array!`](crate::shared_array) or
//! [`dynamic_shared`](super::dynamic_shared) gives generic loads and stores, and `ptxas` does
//! not always prove their state space: in the SGEMM's inner loop it emitted 64-bit
//! `LD.E.128` instead of `LDS.128`, and the kernel grew from 111 to 139 registers. A `.shared`
//! address is 32 bits (PTX ISA §5.1.5 "Shared State Space"), so offsets are 32-bit adds whose
//! constant parts fold into the instructions' immediates. The kernels and the emulator call
//! these 32-bit addresses the *shared window*, hence the module's name.
//!
//! Take an address once with [`SharedAddr::of`], offset it with [`SharedAddr::byte_add`],
//! and access it with the functions here, or with
//! [`mma::ldmatrix_x4_window`](crate::mma::ldmatrix_x4_window) and
//! [`async_copy::copy_16_zero_fill`](crate::mem::async_copy::copy_16_zero_fill).
//!
//! # Safety (all loads and stores)
//! - `addr` lies in this block's shared memory, aligned to the whole access (4 bytes for
//!   `f32`/`b32`, 8 for `v2.f32`, 16 for `v4.f32`), and the whole access lies inside one
//!   shared array (static or dynamic);
//! - the access does not race: no other thread writes those bytes (for a load) or accesses
//!   them (for a store) unless separated by a barrier
//!   ([`sync_threads`](crate::thread::sync_threads)) — the [module rules](super) of shared
//!   memory;
//! - a load reads bytes written before (shared memory is uninitialised at block start).
//!
//! On the CPU emulator (`cuda_emu`) an address in the block's shared memory (dynamic or a
//! static [`shared_array!`](crate::shared_array)) is accessed through its host pointer, with
//! the emulator's bounds, race and initialisation checks; an address outside every shared
//! allocation of the block fails the launch naming the operation (outside a launch, the host
//! stub's panic).

/// A 32-bit `.shared` state-space address of this block's shared memory (PTX ISA §5.1.5):
/// what `cvta.to.shared` gives for a generic pointer into shared memory, and what
/// `ld.shared`, `st.shared`, `ldmatrix`, `cp.async` and the Hopper units take.
///
/// Arithmetic wraps at 32 bits, as the hardware's does. A value is meaningful only in the
/// block that took it (each block has its own shared memory).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedAddr(u32);

impl SharedAddr {
    /// The address of `p`, a generic pointer into this block's shared memory (from
    /// [`shared_array!`](crate::shared_array) or [`dynamic_shared`](super::dynamic_shared)),
    /// as [`shared_addr`](super::shared_addr) computes it: PTX `cvta.to.shared.u64` then
    /// `cvt.u32.u64` (PTX ISA §9.7.9.18 "cvta"). No memory is accessed; for a pointer outside
    /// shared memory the result is unspecified. On the CPU emulator, the address in the
    /// block's emulated window that [`shared_addr`](super::shared_addr) describes.
    #[inline(always)]
    #[must_use]
    #[track_caller]
    pub fn of<T>(p: *const T) -> Self {
        Self(crate::arch::shared::shared_addr(p.cast()))
    }

    /// The address whose bits are `bits` (e.g. one computed by hand from another's
    /// [`to_bits`](Self::to_bits)).
    #[inline(always)]
    #[must_use]
    pub const fn from_bits(bits: u32) -> Self {
        Self(bits)
    }

    /// The address as the `u32` the instructions take.
    #[inline(always)]
    #[must_use]
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// The address `bytes` bytes further (wrapping at 32 bits, as PTX's `add.u32`).
    #[inline(always)]
    #[must_use]
    pub const fn byte_add(self, bytes: u32) -> Self {
        Self(self.0.wrapping_add(bytes))
    }
}

/// Stores `value` at `addr` (PTX `st.shared.f32 [addr], value`).
///
/// # Safety
/// The [module's rules](self) for a 4-byte store: `addr` 4-byte aligned inside one shared
/// array of this block, no racing accesses.
#[inline(always)]
#[track_caller]
pub unsafe fn store_f32(addr: SharedAddr, value: f32) {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::window::store_f32(addr.0, value) }
}

/// Stores the 32 bits `bits` at `addr` (PTX `st.shared.b32 [addr], bits`), e.g. two packed
/// 16-bit elements.
///
/// # Safety
/// The [module's rules](self) for a 4-byte store: `addr` 4-byte aligned inside one shared
/// array of this block, no racing accesses.
#[inline(always)]
#[track_caller]
pub unsafe fn store_b32(addr: SharedAddr, bits: u32) {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::window::store_b32(addr.0, bits) }
}

/// Loads 32 bits from `addr` (PTX `ld.shared.b32 bits, [addr]`), e.g. a `u32` counter or
/// the bits of an `f32`.
///
/// # Safety
/// The [module's rules](self) for a 4-byte load: `addr` 4-byte aligned inside one shared
/// array of this block, written before, and not written concurrently.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn load_b32(addr: SharedAddr) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::window::load_b32(addr.0) }
}

/// Stores 2 `f32` at `addr` with one 8-byte access (PTX `st.shared.v2.f32 [addr], {x, y}`),
/// `value[0]` at the lower address.
///
/// # Safety
/// The [module's rules](self) for an 8-byte store: `addr` 8-byte aligned, the 8 bytes inside
/// one shared array of this block, no racing accesses.
#[inline(always)]
#[track_caller]
pub unsafe fn store_v2_f32(addr: SharedAddr, value: [f32; 2]) {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::window::store_v2_f32(addr.0, value) }
}

/// Stores 4 `f32` at `addr` with one 16-byte access (PTX `st.shared.v4.f32 [addr], {x, y,
/// z, w}`), `value[0]` at the lowest address.
///
/// # Safety
/// The [module's rules](self) for a 16-byte store: `addr` 16-byte aligned, the 16 bytes
/// inside one shared array of this block, no racing accesses.
#[inline(always)]
#[track_caller]
pub unsafe fn store_v4_f32(addr: SharedAddr, value: [f32; 4]) {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::window::store_v4_f32(addr.0, value) }
}

/// Loads 4 `f32` from `addr` with one 16-byte access (PTX `ld.shared.v4.f32 {x, y, z, w},
/// [addr]`), element 0 from the lowest address.
///
/// # Safety
/// The [module's rules](self) for a 16-byte load: `addr` 16-byte aligned, the 16 bytes
/// inside one shared array of this block, written before, and not written concurrently.
#[inline(always)]
#[must_use]
#[track_caller]
pub unsafe fn load_v4_f32(addr: SharedAddr) -> [f32; 4] {
    // SAFETY: the caller's contract.
    unsafe { crate::arch::window::load_v4_f32(addr.0) }
}
