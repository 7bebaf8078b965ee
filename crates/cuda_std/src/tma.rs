//! The Tensor Memory Accelerator: bulk tensor copies between global and shared memory
//! described by a [`TensorMap`] (PTX `cp.async.bulk.tensor`, PTX ISA §9.7.9.25
//! "Data Movement and Conversion Instructions: cp.async.bulk.tensor"; **sm_90**, PTX ISA
//! 8.0; the multicast form **sm_90a**).
//!
//! A load copies one box (the tile the map's `box_dims` name, innermost dimension first) at
//! element coordinates `(x, y)` into shared memory, in the map's swizzle layout, and
//! completes `box bytes` transactions on an [`MBarrier`]: the issuing thread calls
//! [`MBarrier::arrive_expect_tx`] with the box's bytes, consumers
//! [`MBarrier::wait`]. Parts of the box outside the tensor are filled with zeros.
//!
//! Typed copies name the shared-memory tile instead of its numbers: [`load_tile`],
//! [`load_tile_multicast`] and [`store_tile`] take a [`Tile`] type (e.g.
//! `SmemTile<bf16, 128, 64, swizzle::B128>`) whose box and swizzle the host's map was built
//! from (`cust::tma::TensorMapExt::for_tile`), and [`expect_tiles`] announces the bytes of
//! a set of tiles ([`Tiles`]) on the barrier, so the expected count is derived from the
//! same types as the loads (ThunderKittens' `tma::load_async(tile, ..)` and
//! `tma::expect(sem, tiles..)`). On the CPU emulator each typed copy also checks that the
//! map's box, swizzle and element size are the tile's and that the shared tile is aligned
//! to its swizzle atom.
//!
//! A bulk copy ([`bulk_load`], [`bulk_store`]) moves a contiguous run of bytes the same
//! way, without a tensor map.
//!
//! A store copies a box from shared memory to global memory; completion is tracked with bulk
//! groups ([`commit_group`], [`wait_group_read`]). Before a store, generic writes to the
//! shared source must be made visible to the async proxy with
//! [`fence_proxy_async_shared`] (by every writing thread) and a barrier.
//!
//! The map is read through a generic address: a 64-byte-aligned [`TensorMap`] in global
//! memory (a `DeviceBox<TensorMap>`), written before the launch. The functions are not
//! `cfg`-gated: inline PTX is only assembled when a kernel calls it; on the host they are
//! stubs that panic.

use crate::barrier::MBarrier;
use crate::tile::{Tile, Tiles};

/// Whether this build can issue TMA copies (the tensor and the bulk ones; the multicast load
/// needs sm_90a besides): `true` on the CPU emulator and in kernels built for sm_90 or later,
/// `false` for older targets, where their PTX does not assemble. A `const`, so a kernel can
/// branch on it and keep a fallback for older GPUs: the branch not taken is not compiled.
pub const AVAILABLE: bool = crate::arch::tma::AVAILABLE;

/// A TMA tensor descriptor (CUDA `CUtensorMap`), re-exported from `cust_core`, where the host
/// encodes it.
pub use cust_core::TensorMap;

/// Loads the box at element coordinates `(x, y)` (`x` innermost) of the tensor `map`
/// describes into shared memory at `dst`, completing the box's byte count on `bar` (PTX
/// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`,
/// PTX ISA §9.7.9.25; sm_90, PTX ISA 8.0). Issued by one thread; asynchronous.
///
/// # Safety
/// - the kernel is built for sm_90 or later;
/// - `map` is a generic address of a valid 2-D [`TensorMap`] (64-byte aligned, in global,
///   const or param memory, written before the launch or fenced), whose element type has the
///   size of `T`;
/// - `dst` points into this CTA's shared memory, aligned to 128 bytes (1024 bytes for a
///   128-byte swizzle, so the swizzle pattern starts at the tile), with room for the whole
///   box, and nobody reads or writes it until `bar`'s phase completes;
/// - `bar` is an initialised [`MBarrier`] in this CTA's shared memory whose current phase
///   expects these bytes ([`MBarrier::arrive_expect_tx`] or [`MBarrier::expect_tx`]).
#[inline(always)]
#[track_caller]
pub unsafe fn load_2d<T>(dst: *mut T, map: *const TensorMap, x: i32, y: i32, bar: &MBarrier) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::load_2d(dst.cast(), map, x, y, bar) }
}

/// [`load_2d`] multicast: the box is written at the same shared-memory offset as `dst`, and
/// completes on the barrier at the same offset as `bar`, in every CTA of the cluster whose
/// rank's bit is set in `cta_mask` (PTX `cp.async.bulk.tensor.2d.shared::cluster.global.
/// tile.mbarrier::complete_tx::bytes.multicast::cluster`, PTX ISA §9.7.9.25; **sm_90a**).
///
/// # Safety
/// As [`load_2d`], for each CTA named in `cta_mask`: the kernel is built for sm_90a and
/// launched with clusters, every rank in `cta_mask` is < the cluster size, and in each of
/// those CTAs the buffer at `dst`'s offset is free and the barrier at `bar`'s offset
/// expects the box's bytes in its current phase.
#[inline(always)]
#[track_caller]
pub unsafe fn load_2d_multicast<T>(
    dst: *mut T,
    map: *const TensorMap,
    x: i32,
    y: i32,
    bar: &MBarrier,
    cta_mask: u16,
) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::load_2d_multicast(dst.cast(), map, x, y, bar, cta_mask) }
}

/// [`load_2d`] of one tile of type `Tl`: the box at element coordinates `coords` (`[x, y]`,
/// `x` innermost) into the shared tile at `dst`, completing [`Tile::BYTES`] on `bar`. The
/// map must copy `Tl`'s box ([`Tile::BOX`]) with its swizzle ([`Tile::SWIZZLE`]), as
/// `cust::tma::TensorMapExt::for_tile::<Tl, _>` builds it; the CPU emulator checks that.
/// The same PTX as `load_2d`.
///
/// # Safety
/// As [`load_2d`], with the box and swizzle `Tl`'s and the element size `Tl::Elem`'s, and
/// `dst` aligned to [`Tile::ALIGN`] (a swizzle atom: 1024 bytes for the 128-byte swizzle)
/// with room for [`Tile::BYTES`].
#[inline(always)]
#[track_caller]
pub unsafe fn load_tile<Tl: Tile>(
    dst: *mut Tl::Elem,
    map: *const TensorMap,
    coords: [i32; 2],
    bar: &MBarrier,
) {
    crate::arch::tma::check_tile::<Tl>("tma::load_tile", map, dst.cast());
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::load_2d(dst.cast(), map, coords[0], coords[1], bar) }
}

/// [`load_2d_multicast`] of one tile of type `Tl` (see [`load_tile`]): written at `dst`'s
/// offset, completing [`Tile::BYTES`] on `bar`'s offset, in every CTA of the cluster whose
/// rank's bit is set in `cta_mask`.
///
/// # Safety
/// As [`load_2d_multicast`] and [`load_tile`].
#[inline(always)]
#[track_caller]
pub unsafe fn load_tile_multicast<Tl: Tile>(
    dst: *mut Tl::Elem,
    map: *const TensorMap,
    coords: [i32; 2],
    bar: &MBarrier,
    cta_mask: u16,
) {
    crate::arch::tma::check_tile::<Tl>("tma::load_tile_multicast", map, dst.cast());
    // SAFETY: forwarded to the caller.
    unsafe {
        crate::arch::tma::load_2d_multicast(dst.cast(), map, coords[0], coords[1], bar, cta_mask)
    }
}

/// [`store_2d`] of one tile of type `Tl` (see [`load_tile`]): the shared tile at `src` to
/// element coordinates `coords` (`[x, y]`) of the tensor `map` describes.
///
/// # Safety
/// As [`store_2d`], with the box and swizzle `Tl`'s and `src` aligned to [`Tile::ALIGN`].
#[inline(always)]
#[track_caller]
pub unsafe fn store_tile<Tl: Tile>(map: *const TensorMap, coords: [i32; 2], src: *const Tl::Elem) {
    crate::arch::tma::check_tile::<Tl>("tma::store_tile", map, src.cast());
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::store_2d(map, coords[0], coords[1], src.cast()) }
}

/// Arrives on `bar` expecting the bytes of the tiles `S` (one [`Tile`] or a tuple:
/// [`Tiles::TX_BYTES`]): [`MBarrier::arrive_expect_tx`]`(S::TX_BYTES)`, the issuing thread's call
/// before the loads of those tiles ([`load_tile`]) that complete on `bar`.
///
/// # Safety
/// As [`MBarrier::arrive_expect_tx`]: the loads completing on `bar` in this phase are
/// exactly the tiles `S` (with multicast, those other CTAs issue into this one included).
#[inline(always)]
#[track_caller]
pub unsafe fn expect_tiles<S: Tiles>(bar: &MBarrier) {
    // SAFETY: forwarded to the caller.
    unsafe { bar.arrive_expect_tx(S::TX_BYTES) }
}

/// Stores the box at `src` (this CTA's shared memory, in the map's swizzle layout) to
/// element coordinates `(x, y)` of the tensor `map` describes; parts outside the tensor are
/// not written (PTX `cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group`, PTX ISA
/// §9.7.9.25; sm_90, PTX ISA 8.0). Issued by one thread; asynchronous: [`commit_group`]
/// then [`wait_group_read`] before `src` is overwritten.
///
/// # Safety
/// - the kernel is built for sm_90 or later; `map` as in [`load_2d`];
/// - `src` points into this CTA's shared memory, 128-byte aligned (1024 for a 128-byte
///   swizzle), holding the whole box, written before and made visible to the async proxy
///   ([`fence_proxy_async_shared`] by the writing threads, then a barrier);
/// - `src` is not written until a [`wait_group_read`] covering this store returned, and the
///   CTA does not exit before the store has read it (a final `wait_group_read::<0>()`).
#[inline(always)]
#[track_caller]
pub unsafe fn store_2d<T>(map: *const TensorMap, x: i32, y: i32, src: *const T) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::store_2d(map, x, y, src.cast()) }
}

/// Copies `bytes` contiguous bytes from global memory at `src` to this CTA's shared memory at
/// `dst`, completing them as transactions on `bar` (PTX `cp.async.bulk.shared::cluster.
/// global.mbarrier::complete_tx::bytes`, PTX ISA "Data Movement and Conversion
/// Instructions: cp.async.bulk"; sm_90, PTX ISA 8.0). The bulk copy needs no tensor map:
/// one instruction moves a whole tile. Issued by one thread; asynchronous: the issuing
/// thread calls [`MBarrier::arrive_expect_tx`] with `bytes`, readers [`MBarrier::wait`].
///
/// # Safety
/// - the kernel is built for sm_90 or later;
/// - `src` and `dst` are 16-byte aligned and `bytes` is a non-zero multiple of 16 (the
///   instruction's rules; the emulator checks them);
/// - `src` is valid global memory for `bytes` bytes, not written during the copy;
/// - `dst` points into this CTA's shared memory with room for `bytes` bytes, and nobody
///   reads or writes it until `bar`'s phase completes;
/// - `bar` is an initialised [`MBarrier`] in this CTA's shared memory whose current phase
///   expects these bytes.
#[inline(always)]
#[track_caller]
pub unsafe fn bulk_load<T>(dst: *mut T, src: *const T, bytes: u32, bar: &MBarrier) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::bulk_load(dst.cast(), src.cast(), bytes, bar) }
}

/// Copies `bytes` contiguous bytes from this CTA's shared memory at `src` to global memory
/// at `dst` (PTX `cp.async.bulk.global.shared::cta.bulk_group`, PTX ISA "cp.async.bulk";
/// sm_90, PTX ISA 8.0). Asynchronous: [`commit_group`] then [`wait_group_read`] before
/// `src` is overwritten; the writes are visible to later kernels.
///
/// # Safety
/// - the kernel is built for sm_90 or later;
/// - `src` and `dst` are 16-byte aligned and `bytes` is a non-zero multiple of 16;
/// - `dst` is valid global memory for `bytes` bytes that nothing else accesses during the
///   launch;
/// - `src` points into this CTA's shared memory, holding `bytes` bytes written before and
///   made visible to the async proxy ([`fence_proxy_async_shared`] by each writing thread,
///   then a barrier covering the writers and the issuing thread);
/// - `src` is not written until a [`wait_group_read`] covering this store returned, and the
///   CTA does not exit before the store has read it (a final `wait_group_read::<0>()`).
#[inline(always)]
#[track_caller]
pub unsafe fn bulk_store<T>(dst: *mut T, src: *const T, bytes: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::bulk_store(dst.cast(), src.cast(), bytes) }
}

/// Closes this thread's bulk copies issued since the last commit ([`store_2d`],
/// [`bulk_store`]) into one bulk async-group (PTX `cp.async.bulk.commit_group`, PTX ISA
/// §9.7.9.27; sm_90).
#[inline(always)]
#[track_caller]
pub fn commit_group() {
    crate::arch::tma::commit_group()
}

/// Waits until at most `N` of this thread's bulk async-groups still have to *read* their
/// shared-memory source (PTX `cp.async.bulk.wait_group.read N`, PTX ISA §9.7.9.28; sm_90):
/// afterwards the sources of the older groups may be overwritten. (The global writes may
/// still be in flight; they are visible to later kernels.)
#[inline(always)]
#[track_caller]
pub fn wait_group_read<const N: u32>() {
    crate::arch::tma::wait_group_read::<N>()
}

/// Orders this thread's prior generic-proxy accesses to shared memory (ordinary stores)
/// before later async-proxy accesses (TMA stores, `wgmma` operand reads) (PTX
/// `fence.proxy.async.shared::cta`, PTX ISA §9.7.13.4 "membar/fence"; sm_90). Each writing
/// thread calls it, then a barrier, then the TMA store or `wgmma` is issued.
#[inline(always)]
#[track_caller]
pub fn fence_proxy_async_shared() {
    crate::arch::tma::fence_proxy_async_shared()
}

/// Prefetches the tensor map into the descriptor cache (PTX `prefetch.tensormap [map]`,
/// PTX ISA §9.7.9.15 "prefetch"; sm_90). A hint: it has no effect on results.
///
/// # Safety
/// `map` is a generic address of a [`TensorMap`] in global, const or param memory,
/// 64-byte aligned.
#[inline(always)]
#[track_caller]
pub unsafe fn prefetch_descriptor(map: *const TensorMap) {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::tma::prefetch_descriptor(map) }
}
