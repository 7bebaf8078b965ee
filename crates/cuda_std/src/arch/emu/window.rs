//! Accesses by 32-bit shared address on the CPU emulator (`shared::window`,
//! `mma::ldmatrix_x4_window`, `mem::async_copy::copy_16_zero_fill`): the address is turned
//! back into the host pointer of the block's shared allocation that holds it
//! (`cuda_emu::device::shared_ptr`, the inverse of `shared_addr`: dynamic shared memory and
//! static arrays alike), then accessed as the pointer forms are (`mem`'s vector accesses,
//! `shared::write`, `mma::ldmatrix_x4`, `mem::async_copy`), with their bounds, race and
//! initialisation checks. An address outside every allocation of the block fails the launch
//! (a panic naming the operation and the address, at the kernel's call).

use cuda_emu::device;

/// The host pointer of `len` bytes at shared address `addr` in the running block's shared
/// memory; panics (a launch error at the caller) if they do not lie inside one of its
/// allocations. Outside a launch, the host stub's panic naming `what`.
#[track_caller]
fn host_ptr(what: &'static str, addr: u32, len: usize) -> *mut u8 {
    match device::shared_ptr(what, addr, len) {
        Some(p) => p,
        None => panic!(
            "{what}: {len} bytes at shared address {addr:#x} are outside this block's shared \
             memory"
        ),
    }
}

/// # Safety
/// As `shared::window::store_f32`.
#[track_caller]
pub(crate) unsafe fn store_f32(addr: u32, value: f32) {
    let what = "shared::window::store_f32";
    let p = host_ptr(what, addr, 4).cast::<f32>();
    // SAFETY: the caller's contract; `p` is the host address of `addr`.
    unsafe { super::shared::write(p, value) }
}

/// # Safety
/// As `shared::window::store_b32`.
#[track_caller]
pub(crate) unsafe fn store_b32(addr: u32, bits: u32) {
    let what = "shared::window::store_b32";
    let p = host_ptr(what, addr, 4).cast::<u32>();
    // SAFETY: as in `store_f32`.
    unsafe { super::shared::write(p, bits) }
}

/// # Safety
/// As `shared::window::load_b32`.
#[track_caller]
pub(crate) unsafe fn load_b32(addr: u32) -> u32 {
    let what = "shared::window::load_b32";
    let p = host_ptr(what, addr, 4).cast::<u32>();
    // SAFETY: as in `store_f32`.
    unsafe { super::shared::read(p) }
}

/// # Safety
/// As `shared::window::store_v2_f32`.
#[track_caller]
pub(crate) unsafe fn store_v2_f32(addr: u32, value: [f32; 2]) {
    let what = "shared::window::store_v2_f32";
    let p = host_ptr(what, addr, 8).cast::<f32>();
    // SAFETY: as in `store_f32`.
    unsafe { super::mem::store_v2_f32(p, value) }
}

/// # Safety
/// As `shared::window::store_v4_f32`.
#[track_caller]
pub(crate) unsafe fn store_v4_f32(addr: u32, value: [f32; 4]) {
    let what = "shared::window::store_v4_f32";
    let p = host_ptr(what, addr, 16).cast::<f32>();
    // SAFETY: as in `store_f32`.
    unsafe { super::mem::store_v4_f32(p, value) }
}

/// # Safety
/// As `shared::window::load_v4_f32`.
#[track_caller]
pub(crate) unsafe fn load_v4_f32(addr: u32) -> [f32; 4] {
    let what = "shared::window::load_v4_f32";
    let p = host_ptr(what, addr, 16).cast::<f32>();
    // SAFETY: as in `store_f32`.
    unsafe { super::mem::load_v4_f32(p) }
}

/// The emulator's warp collective on each lane's translated row address.
///
/// # Safety
/// As `mma::ldmatrix_x4_window`.
#[track_caller]
pub(crate) unsafe fn ldmatrix_x4(row: u32) -> [u32; 4] {
    let what = "mma::ldmatrix_x4_window";
    let p = host_ptr(what, row, 16).cast::<u16>();
    // SAFETY: as in `store_f32`.
    unsafe { super::mma::ldmatrix_x4(p) }
}

/// Copies at once, as the emulator's `async_copy` does (the waits are then no-ops): the
/// first `src_bytes` bytes from `src`, zeros for the rest; nothing where `guard` is false.
///
/// # Safety
/// As `mem::async_copy::copy_16_zero_fill`.
#[track_caller]
pub(crate) unsafe fn copy_16_zero_fill(dst: u32, src: *const u8, src_bytes: u32, guard: bool) {
    if !guard {
        device::enter("mem::async_copy::copy_16_zero_fill");
        return;
    }
    assert!(
        src_bytes <= 16,
        "mem::async_copy::copy_16_zero_fill: src_bytes = {src_bytes}, more than the 16 bytes \
         copied (PTX cp.async: src-size <= cp-size)"
    );
    let what = "mem::async_copy::copy_16_zero_fill";
    let d = host_ptr(what, dst, 16);
    // SAFETY: the caller's contract: `src` valid for `src_bytes <= 16` bytes, `d` (the host
    // address of `dst`) for 16, not overlapping (global and shared memory).
    unsafe { device::cp_async_copy(what, d, src, 16, src_bytes as usize) }
}
