//! TMA on the emulator: 2-D tiled bulk tensor copies between global and shared memory
//! (PTX ISA §9.7.9.25 "cp.async.bulk.tensor"), described by tensor maps in the CPU device's
//! layout (`cust_core::tma::TensorMap::encode_cpu`; a map encoded by the CUDA driver is
//! opaque and refused).
//!
//! A load copies the box of `box_dims[1]` rows × `box_dims[0]` elements at element
//! coordinates `(x, y)` (which may be negative or past the tensor) into shared memory at
//! `dst`: box row `r` at byte `r · inner` (inner = `box_dims[0] · elem_bytes`), each
//! 16-byte chunk placed by the map's swizzle applied to its shared address (CuTe's
//! `Swizzle<B, 4, 3>`, the pattern `wgmma` descriptors name: with the 128-byte swizzle,
//! chunk `c` of a row at chunk `c ^ (row % 8)` of a 1024-aligned tile,
//! `cust_core::lanes::wgmma::offset_swizzle_128b`); elements outside the tensor are filled
//! with zeros; then the box's bytes (all of them, the filled ones included) complete as
//! transactions on the mbarrier. A store copies a box from shared memory (same layout) to
//! the tensor, skipping elements outside it.
//!
//! Timing: a copy happens when it is issued, so bulk groups (`commit_group`,
//! `wait_group_read`) are always complete; they are tracked only for the check of a store's
//! source (below). The bytes a load writes count as initialised
//! for the uninitialised-read check and as written by no thread for the race check (the
//! mbarrier that orders them is not tracked there); global accesses are checked for bounds
//! against the launch's buffers, row by row.
//!
//! Checked ([`EmuError::AsyncUnit`]): the map pointer is 64-byte aligned and in bounds, the
//! map decodes (CPU layout, unmodified, within the hardware's rules); the shared box is
//! 128-byte aligned (§9.7.9.25: "the shared memory address must be aligned to 128 bytes")
//! and lies in this block's shared memory.
//!
//! Bulk copies (`bulk_load`, `bulk_store`; PTX `cp.async.bulk`, no tensor map): a
//! contiguous run of bytes between global and shared memory, modelled as the tensor copies
//! are (copied when issued, the load's bytes completed on its mbarrier and marked as its
//! destination, the store's source checked for the async-proxy fence); both addresses 16-byte
//! aligned and the size a non-zero multiple of 16, else [`EmuError::AsyncUnit`].
//!
//! Typed copies (`cuda_std::tma::load_tile` and friends, which name a `cust_core::tile`
//! type) are checked against their tile first ([`check_tile`], [`EmuError::AsyncUnit`]): the
//! map's box, swizzle and element size are the tile's, and the shared tile starts at its
//! alignment (one swizzle atom: 1024 bytes for the 128-byte swizzle), so a host map built
//! for another tile, or a misplaced stage, fails with both layouts named.
//!
//! A multicast load (`load_2d_multicast`) does the same for each block of the cluster its
//! CTA mask names, at the box's and the barrier's offsets in that block (`cluster.rs`).
//!
//! A store's source must not be rewritten before a `wait_group_read` retires its bulk group:
//! the stores record their sources for the asynchronous-proxy check (`proxy.rs`), which
//! reports a checked write or a TMA load into one still pending.
//!
//! Not modelled: the L2 promotion and cache hints; `prefetch.tensormap` (a no-op).

use core::panic::Location;
use std::string::String;

use super::AccessKind;
use super::ctx::{check_access_with, mark_async_write};
use super::state::{BlockState, ThreadState, thread};
use super::wgmma::swizzle;
use cust_core::TensorMap;
use cust_core::tma::{Tiled2d, TmaSwizzle};

/// Fails the running thread with an [`EmuError::AsyncUnit`].
#[track_caller]
fn misuse(t: &ThreadState, op: &'static str, reason: String) -> ! {
    crate::state::async_misuse(t, op, reason)
}

/// Reads and decodes the map at `map`.
#[track_caller]
fn read_map(t: &ThreadState, op: &'static str, map: *const TensorMap) -> Tiled2d {
    let address = map as usize;
    if !address.is_multiple_of(64) {
        misuse(
            t,
            op,
            std::format!("the tensor map at {address:#x} is not 64-byte aligned"),
        );
    }
    check_access_with(address, 128, AccessKind::Read, Location::caller(), false);
    // SAFETY: aligned (checked), in bounds of a known buffer when the bounds check is on
    // (the caller's contract otherwise: `map` points to a tensor map).
    let bits = unsafe { map.read() };
    match bits.decode_cpu() {
        Ok(m) => m,
        Err(e) => misuse(t, op, std::format!("the tensor map at {address:#x}: {e}")),
    }
}

fn swizzle_width(s: TmaSwizzle) -> u32 {
    s.span_bytes().unwrap_or(0)
}

/// The shared address of the box at host address `smem` of `block`'s shared memory,
/// checked: aligned to `align` bytes (128 for a tensor box, 16 for a bulk copy) and inside
/// one of the block's shared allocations.
#[track_caller]
fn shared_box(
    t: &ThreadState,
    block: &BlockState,
    op: &'static str,
    smem: usize,
    bytes: usize,
    align: usize,
) -> u32 {
    if !smem.is_multiple_of(align) {
        misuse(
            t,
            op,
            std::format!("the shared box at {smem:#x} is not {align}-byte aligned"),
        );
    }
    let mem = block.mem.borrow();
    let window = mem
        .window_of(smem)
        .filter(|&w| mem.host_of(w, bytes) == Some(smem));
    drop(mem);
    match window {
        Some(w) => w,
        None => misuse(
            t,
            op,
            std::format!(
                "the shared box of {bytes} bytes at {smem:#x} is not inside one of this \
                 block's shared allocations"
            ),
        ),
    }
}

/// The byte offset, from the box's first byte, where byte `offset` of the box's packed
/// rows lands in shared memory when the box starts at shared address `window`: the
/// swizzle of `width` bytes (0: none) applied to the absolute address.
const fn box_offset(window: u32, offset: u32, width: u32) -> u32 {
    swizzle(window + offset, width) - window
}

/// The host address of the 16-byte chunk at byte `offset` of a box whose first byte has
/// shared address `window` and host address `host`, after the swizzle.
fn chunk_host(window: u32, host: usize, offset: u32, width: u32) -> usize {
    host + box_offset(window, offset, width) as usize
}

/// The columns `[lo, hi)` of box row at `y` (tensor row) that lie inside the tensor, as
/// box columns, or `None` when the row is outside.
fn inside(m: &Tiled2d, x: i32, y: i64) -> Option<(u32, u32)> {
    if y < 0 || y >= m.dims[1] as i64 {
        return None;
    }
    let x = i64::from(x);
    let lo = (-x).clamp(0, i64::from(m.box_dims[0]));
    let hi = (m.dims[0] as i64 - x).clamp(0, i64::from(m.box_dims[0]));
    (lo < hi).then_some((lo as u32, hi as u32))
}

/// The layout a typed TMA copy names (`cuda_std::tma::load_tile` and friends): its tile
/// type's box, swizzle, element size and alignment, and the type's name for the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileLayout {
    /// The tile type, as `core::any::type_name` spells it.
    pub name: &'static str,
    /// Its TMA box, `[columns, rows]` in elements.
    pub box_dims: [u32; 2],
    /// Its swizzle.
    pub swizzle: TmaSwizzle,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// The alignment of its first byte in shared memory, bytes.
    pub align: u32,
}

/// Checks a typed TMA copy for the running thread: the map at `map` copies boxes of
/// `tile`'s layout (box, swizzle, element size), and the shared tile at `smem` (a host
/// address) starts at a shared address aligned to `tile.align`. The copy itself checks the
/// rest (the map's alignment and encoding, the box inside the block's shared memory).
#[track_caller]
pub fn check_tile(what: &'static str, map: *const TensorMap, tile: &TileLayout, smem: *const u8) {
    let t = thread(what);
    let m = read_map(t, what, map);
    if (m.box_dims, m.swizzle, m.elem_bytes) != (tile.box_dims, tile.swizzle, tile.elem_bytes) {
        misuse(
            t,
            what,
            std::format!(
                "the tensor map copies boxes of {} × {} elements of {} bytes with swizzle \
                 {:?}, but the tile `{}` is {} × {} elements of {} bytes with swizzle {:?} \
                 (build the map from the tile type: `cust::tma::TensorMapExt::for_tile`)",
                m.box_dims[0],
                m.box_dims[1],
                m.elem_bytes,
                m.swizzle,
                tile.name,
                tile.box_dims[0],
                tile.box_dims[1],
                tile.elem_bytes,
                tile.swizzle,
            ),
        );
    }
    let window = t.block().mem.borrow().window_of(smem as usize);
    if let Some(w) = window
        && !w.is_multiple_of(tile.align)
    {
        misuse(
            t,
            what,
            std::format!(
                "the shared tile `{}` starts at shared address {w:#x}, not {}-byte aligned \
                 (its swizzle atom)",
                tile.name,
                tile.align
            ),
        );
    }
}

/// `cp.async.bulk.tensor.2d` load for the running thread: the box at `(x, y)` of `map` to
/// shared memory at `dst`, completing its bytes on the mbarrier at `bar`.
///
/// # Safety
/// As `cuda_std::tma::load_2d`: `map` points to a tensor map whose tensor is readable host
/// memory for the launch; `dst` and `bar` as that function's contract (checked).
#[track_caller]
pub unsafe fn load_2d(
    what: &'static str,
    dst: *mut u8,
    map: *const TensorMap,
    x: i32,
    y: i32,
    bar: *mut u64,
) {
    let t = thread(what);
    let m = read_map(t, what, map);
    // SAFETY: forwarded to the caller.
    unsafe { load_into(t, t.block(), what, &m, dst as usize, x, y, bar as usize) };
}

/// `cp.async.bulk.tensor.2d … .multicast::cluster` for the running thread: the box at
/// `(x, y)` of `map` to shared memory at `dst`'s offset in each block of the cluster whose
/// rank is set in `cta_mask`, each completing its bytes on the mbarrier at `bar`'s offset in
/// that block.
///
/// # Safety
/// As `cuda_std::tma::load_2d_multicast`: as [`load_2d`], for every block named.
#[track_caller]
pub unsafe fn load_2d_multicast(
    what: &'static str,
    dst: *mut u8,
    map: *const TensorMap,
    x: i32,
    y: i32,
    bar: *mut u64,
    cta_mask: u16,
) {
    let t = thread(what);
    let m = read_map(t, what, map);
    let ranks = crate::cluster::nctarank(what);
    if u32::from(cta_mask) >> ranks != 0 || cta_mask == 0 {
        misuse(
            t,
            what,
            std::format!(
                "the CTA mask {cta_mask:#06x} names no block or a rank outside the cluster's \
                 {ranks} blocks"
            ),
        );
    }
    for rank in (0..ranks).filter(|r| cta_mask & (1 << r) != 0) {
        let (block, to) = crate::cluster::remote(t, what, dst as usize, rank);
        let (_, on) = crate::cluster::remote(t, what, bar as usize, rank);
        // SAFETY: forwarded to the caller.
        unsafe { load_into(t, block, what, &m, to, x, y, on) };
    }
}

/// The copy of a load: the box at `(x, y)` of `m` to host address `host` of `block`'s shared
/// memory, then its bytes completed on the mbarrier at `bar` of `block`.
///
/// # Safety
/// As [`load_2d`].
#[track_caller]
#[allow(clippy::too_many_arguments)]
unsafe fn load_into(
    t: &ThreadState,
    block: &BlockState,
    what: &'static str,
    m: &Tiled2d,
    host: usize,
    x: i32,
    y: i32,
    bar: usize,
) {
    let inner = m.box_dims[0] * m.elem_bytes;
    let bytes = m.box_bytes();
    let window = shared_box(t, block, what, host, bytes as usize, 128);
    super::proxy::check_tma_overwrite(t, block, host, bytes as usize);
    let width = swizzle_width(m.swizzle);
    let e = m.elem_bytes as usize;
    for r in 0..m.box_dims[1] {
        let gy = i64::from(y) + i64::from(r);
        let cols = inside(m, x, gy);
        let row_src = cols.map(|(lo, hi)| {
            let gx = (i64::from(x) + i64::from(lo)) as u64;
            let start = m.base_addr + gy as u64 * m.row_stride_bytes + gx * e as u64;
            check_access_with(
                start as usize,
                (hi - lo) as usize * e,
                AccessKind::Read,
                Location::caller(),
                false,
            );
            (lo, hi, start as usize - lo as usize * e)
        });
        for q in 0..inner / 16 {
            let to = chunk_host(window, host, r * inner + 16 * q, width);
            for j in 0..16 / e {
                let c = (16 * q as usize / e + j) as u32;
                // SAFETY: `to + 16` lies in the box (the swizzle permutes 16-byte chunks
                // inside 128-byte lines of the 128-aligned box); the source element is
                // inside the tensor (bounds checked above; the caller's contract).
                unsafe {
                    let d = (to + j * e) as *mut u8;
                    match row_src {
                        Some((lo, hi, row)) if (lo..hi).contains(&c) => {
                            core::ptr::copy_nonoverlapping(
                                (row + c as usize * e) as *const u8,
                                d,
                                e,
                            );
                        }
                        _ => core::ptr::write_bytes(d, 0, e),
                    }
                }
            }
        }
    }
    mark_async_write(block, host, bytes as usize);
    super::proxy::mark_tma_dest(block, host, bytes as usize, bar);
    super::mbarrier::complete_tx(t, block, what, bar, bytes);
}

/// `cp.async.bulk.tensor.2d` store for the running thread: the box at `src` (shared memory)
/// to `(x, y)` of `map`, elements outside the tensor skipped.
///
/// # Safety
/// As `cuda_std::tma::store_2d`: `map` points to a tensor map whose tensor is writable host
/// memory for the launch, accessed by nothing else meanwhile; `src` as that function's
/// contract (checked).
#[track_caller]
pub unsafe fn store_2d(what: &'static str, map: *const TensorMap, x: i32, y: i32, src: *const u8) {
    let t = thread(what);
    let m = read_map(t, what, map);
    let inner = m.box_dims[0] * m.elem_bytes;
    let host = src as usize;
    let window = shared_box(t, t.block(), what, host, m.box_bytes() as usize, 128);
    super::proxy::check_async_read(t, host, m.box_bytes() as usize, "a TMA store");
    super::proxy::record_store(t, host, m.box_bytes() as usize, Location::caller());
    let width = swizzle_width(m.swizzle);
    let e = m.elem_bytes as usize;
    for r in 0..m.box_dims[1] {
        let gy = i64::from(y) + i64::from(r);
        let Some((lo, hi)) = inside(&m, x, gy) else {
            continue;
        };
        let gx = (i64::from(x) + i64::from(lo)) as u64;
        let start = m.base_addr + gy as u64 * m.row_stride_bytes + gx * e as u64;
        check_access_with(
            start as usize,
            (hi - lo) as usize * e,
            AccessKind::Write,
            Location::caller(),
            false,
        );
        let row = start as usize - lo as usize * e;
        for c in lo..hi {
            let offset = r * inner + c * m.elem_bytes;
            let from = chunk_host(window, host, offset & !15, width) + (offset & 15) as usize;
            // SAFETY: the source lies in the box (as in `load_2d`); the destination in the
            // tensor (bounds checked above; the caller's contract).
            unsafe {
                core::ptr::copy_nonoverlapping(
                    from as *const u8,
                    (row + c as usize * e) as *mut u8,
                    e,
                );
            }
        }
    }
}

/// Checks a bulk copy's size and global address: both multiples of 16 (PTX ISA,
/// `cp.async.bulk`: "the memory addresses must be aligned to 16 bytes", the size "a multiple
/// of 16"), the size non-zero.
#[track_caller]
fn check_bulk(t: &ThreadState, op: &'static str, global: usize, bytes: u32) {
    if bytes == 0 || !bytes.is_multiple_of(16) {
        misuse(
            t,
            op,
            std::format!(
                "a bulk copy of {bytes} bytes: the size must be a non-zero multiple of 16"
            ),
        );
    }
    if !global.is_multiple_of(16) {
        misuse(
            t,
            op,
            std::format!("the global address {global:#x} of a bulk copy is not 16-byte aligned"),
        );
    }
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` for the running
/// thread: `bytes` bytes from global `src` to this block's shared memory at `dst`, copied
/// when issued, then completed as transactions on the mbarrier at `bar`.
///
/// # Safety
/// As `cuda_std::tma::bulk_load`: `src` is readable host memory for `bytes` bytes during
/// the launch; `dst` and `bar` as that function's contract (checked).
#[track_caller]
pub unsafe fn bulk_load(
    what: &'static str,
    dst: *mut u8,
    src: *const u8,
    bytes: u32,
    bar: *mut u64,
) {
    let t = thread(what);
    check_bulk(t, what, src as usize, bytes);
    let block = t.block();
    let host = dst as usize;
    shared_box(t, block, what, host, bytes as usize, 16);
    super::proxy::check_tma_overwrite(t, block, host, bytes as usize);
    check_access_with(
        src as usize,
        bytes as usize,
        AccessKind::Read,
        Location::caller(),
        false,
    );
    // SAFETY: the destination lies in this block's shared memory (checked); the source is
    // readable (bounds checked above; the caller's contract); they do not overlap (shared
    // and global memory are different allocations).
    unsafe { core::ptr::copy_nonoverlapping(src, dst, bytes as usize) };
    mark_async_write(block, host, bytes as usize);
    super::proxy::mark_tma_dest(block, host, bytes as usize, bar as usize);
    super::mbarrier::complete_tx(t, block, what, bar as usize, bytes);
}

/// `cp.async.bulk.global.shared::cta.bulk_group` for the running thread: `bytes` bytes from
/// this block's shared memory at `src` to global `dst`, copied when issued.
///
/// # Safety
/// As `cuda_std::tma::bulk_store`: `dst` is writable host memory for `bytes` bytes,
/// accessed by nothing else meanwhile; `src` as that function's contract (checked).
#[track_caller]
pub unsafe fn bulk_store(what: &'static str, dst: *mut u8, src: *const u8, bytes: u32) {
    let t = thread(what);
    check_bulk(t, what, dst as usize, bytes);
    let host = src as usize;
    shared_box(t, t.block(), what, host, bytes as usize, 16);
    super::proxy::check_async_read(t, host, bytes as usize, "a bulk store");
    super::proxy::record_store(t, host, bytes as usize, Location::caller());
    check_access_with(
        dst as usize,
        bytes as usize,
        AccessKind::Write,
        Location::caller(),
        false,
    );
    // SAFETY: as in `bulk_load`, the other way.
    unsafe { core::ptr::copy_nonoverlapping(src, dst, bytes as usize) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use cust_core::lanes::wgmma::offset_swizzle_128b;

    #[test]
    fn a_128b_box_lands_where_wgmma_reads_it() {
        // A box of 128-byte rows at a 1024-aligned shared address: byte `cb` of row `r` is
        // where `offset_swizzle_128b` (the wgmma layout) says, chunk `c ^ (r % 8)`.
        for window in [0x400, 0x2000, 0x1_0c00] {
            for r in 0..64 {
                for cb in 0..128 {
                    assert_eq!(
                        box_offset(window, r * 128 + cb, 128),
                        offset_swizzle_128b(r, cb),
                        "row {r}, byte {cb}"
                    );
                }
            }
        }
        // By hand: row 3, chunk 1 goes to chunk 1 ^ 3 = 2.
        assert_eq!(box_offset(0x400, 3 * 128 + 16, 128), 3 * 128 + 32);
    }

    #[test]
    fn narrower_swizzles_and_none_follow_their_patterns() {
        for r in 0..32u32 {
            for cb in 0..64u32 {
                // 64B: rows of 64 bytes, chunk c at c ^ ((r / 2) % 4).
                let want = r * 64 + ((cb / 16) ^ ((r / 2) % 4)) * 16 + cb % 16;
                assert_eq!(box_offset(0x800, r * 64 + cb, 64), want);
                // No swizzle: packed rows.
                assert_eq!(box_offset(0x800, r * 64 + cb, 0), r * 64 + cb);
            }
            for cb in 0..32u32 {
                // 32B: rows of 32 bytes, chunk c at c ^ ((r / 4) % 2).
                let want = r * 32 + ((cb / 16) ^ ((r / 4) % 2)) * 16 + cb % 16;
                assert_eq!(box_offset(0x800, r * 32 + cb, 32), want);
            }
        }
    }

    #[test]
    fn box_rows_clip_at_the_tensor_edges() {
        let m = Tiled2d {
            base_addr: 0,
            elem_bytes: 4,
            dims: [96, 80],
            row_stride_bytes: 384,
            box_dims: [32, 16],
            swizzle: TmaSwizzle::None,
        };
        assert_eq!(inside(&m, 32, 48), Some((0, 32)));
        assert_eq!(inside(&m, -8, 0), Some((8, 32)));
        assert_eq!(inside(&m, 80, 79), Some((0, 16)));
        assert_eq!(inside(&m, 96, 0), None);
        assert_eq!(inside(&m, 0, 80), None);
        assert_eq!(inside(&m, 0, -1), None);
    }
}
