//! Rust-CUDA's shared-memory statics compile as written: local const sizes, nested
//! `MaybeUninit` arrays, indexing, `write`/`assume_init`, `addr_of_mut!` and `len()`; `&mut`
//! and `&raw mut` of the static give its view (`SharedArray`); and `shared_array!` with a
//! local const length in both forms. (Host compilation only: the
//! declarations panic on the host, so nothing here runs.)

use core::mem::MaybeUninit;
use cuda_std::prelude::*;
use cuda_std::shared::SharedArray;

const TILE: usize = 16;

/// # Safety
/// Never launched.
#[kernel]
pub unsafe fn tiled(a: &[f32], out: *mut f32) {
    const LOCAL: usize = 8;
    #[address_space(shared)]
    static mut TILE_A: [[MaybeUninit<f32>; TILE]; TILE] =
        [[const { MaybeUninit::uninit() }; TILE]; TILE];
    #[address_space(shared)]
    static mut SUMS: [u32; LOCAL * 4] = [0; LOCAL * 4];

    let t = thread_idx_x() as usize;
    unsafe {
        TILE_A[t][t].write(a[t]);
        SUMS[t] = 1;
        let p: *mut f32 = core::ptr::addr_of_mut!(TILE_A) as *mut f32;
        let q: *mut SharedArray<u32, { LOCAL * 4 }> = &raw mut SUMS;
        let r: &mut SharedArray<u32, { LOCAL * 4 }> = &mut SUMS;
        *out = TILE_A[t][t].assume_init() + *p + (*q).len() as f32 + r[0] as f32;
        *out += SUMS.len() as f32;
    }
}

/// A device function (not a kernel) with a shared array.
pub fn helper() -> u32 {
    const N: usize = 4;
    #[address_space(shared)]
    static mut S: [u32; N] = [0; N];
    #[allow(unused_unsafe)]
    unsafe {
        S[0] = 1;
        S[0]
    }
}

/// `shared_array!` with a function-local constant length.
pub fn arrays() -> u32 {
    const N: usize = 32;
    let raw: *mut u32 = shared_array!(u32, N);
    // SAFETY: not run (host compilation check).
    let arr: &mut SharedArray<u32, N> = unsafe { shared_array!([u32; N], align = 16) };
    arr[0] = 1;
    // SAFETY: as above.
    unsafe { *raw + arr[N - 1] }
}

fn main() {
    let _ = (tiled, helper as fn() -> u32, arrays as fn() -> u32);
}
