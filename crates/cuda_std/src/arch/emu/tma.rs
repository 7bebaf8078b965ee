//! `tma` on the CPU emulator: 2-D tiled loads and stores through tensor maps in the CPU
//! device's layout (`cust_core::tma::TensorMap::encode_cpu`), copied when issued, with the
//! map's swizzle and zero fill, the load's bytes completed on its mbarrier (`cuda_emu`'s
//! `tma` module: what is and is not modelled); a multicast lands in every block of the
//! cluster its mask names.

use crate::barrier::MBarrier;
use cuda_emu::device;
use cust_core::TensorMap;
use cust_core::tile::Tile;

/// `tma::AVAILABLE` on the emulator: it runs every TMA copy.
pub(crate) const AVAILABLE: bool = true;

/// Checks a typed copy of tile `Tl` (`tma::load_tile` and friends): the map copies `Tl`'s
/// box with its swizzle and element size, and the shared tile at `smem` is aligned to
/// `Tl::ALIGN`.
#[track_caller]
pub(crate) fn check_tile<Tl: Tile>(what: &'static str, map: *const TensorMap, smem: *const u8) {
    let tile = device::TmaTileLayout {
        name: core::any::type_name::<Tl>(),
        box_dims: Tl::BOX,
        swizzle: Tl::SWIZZLE,
        elem_bytes: core::mem::size_of::<Tl::Elem>() as u32,
        align: Tl::ALIGN,
    };
    device::tma_check_tile(what, map, &tile, smem);
}

/// # Safety
/// As `tma::load_2d`.
#[track_caller]
pub(crate) unsafe fn load_2d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, bar: &MBarrier) {
    let bar = core::ptr::from_ref(bar).cast::<u64>().cast_mut();
    // SAFETY: forwarded to the caller (`MBarrier` is a `repr(C)` cell of one `u64`).
    unsafe { device::tma_load_2d("tma::load_2d", dst, map, x, y, bar) }
}

/// # Safety
/// As `tma::load_2d_multicast`.
#[track_caller]
pub(crate) unsafe fn load_2d_multicast(
    dst: *mut u8,
    map: *const TensorMap,
    x: i32,
    y: i32,
    bar: &MBarrier,
    cta_mask: u16,
) {
    let bar = core::ptr::from_ref(bar).cast::<u64>().cast_mut();
    // SAFETY: forwarded to the caller (`MBarrier` is a `repr(C)` cell of one `u64`).
    unsafe {
        device::tma_load_2d_multicast("tma::load_2d_multicast", dst, map, x, y, bar, cta_mask)
    }
}

/// # Safety
/// As `tma::store_2d`.
#[track_caller]
pub(crate) unsafe fn store_2d(map: *const TensorMap, x: i32, y: i32, src: *const u8) {
    // SAFETY: forwarded to the caller.
    unsafe { device::tma_store_2d("tma::store_2d", map, x, y, src) }
}

/// # Safety
/// As `tma::bulk_load`.
#[track_caller]
pub(crate) unsafe fn bulk_load(dst: *mut u8, src: *const u8, bytes: u32, bar: &MBarrier) {
    let bar = core::ptr::from_ref(bar).cast::<u64>().cast_mut();
    // SAFETY: forwarded to the caller (`MBarrier` is a `repr(C)` cell of one `u64`).
    unsafe { device::tma_bulk_load("tma::bulk_load", dst, src, bytes, bar) }
}

/// # Safety
/// As `tma::bulk_store`.
#[track_caller]
pub(crate) unsafe fn bulk_store(dst: *mut u8, src: *const u8, bytes: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { device::tma_bulk_store("tma::bulk_store", dst, src, bytes) }
}

/// The emulator's stores are complete when issued; the group is tracked for the check that
/// no store's source is rewritten before a `wait_group_read` retires it.
#[track_caller]
pub(crate) fn commit_group() {
    device::tma_commit_group("tma::commit_group");
}

/// Retires the running thread's stores of every bulk group but the newest `N` (complete
/// since they were issued: see [`commit_group`]).
#[track_caller]
pub(crate) fn wait_group_read<const N: u32>() {
    device::tma_wait_group_read("tma::wait_group_read", N);
}

/// Counted for the emulator's asynchronous-proxy check (the data needs no ordering: the
/// units read shared memory through the host's memory).
#[track_caller]
pub(crate) fn fence_proxy_async_shared() {
    device::fence_proxy_async("tma::fence_proxy_async_shared");
}

/// A hint: nothing to do on the emulator.
///
/// # Safety
/// None here; the `tma` function's contract is the GPU's.
#[track_caller]
pub(crate) unsafe fn prefetch_descriptor(map: *const TensorMap) {
    let _ = map;
    device::enter("tma::prefetch_descriptor");
}
