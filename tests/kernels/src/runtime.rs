//! Kernels for `cust`'s GPU tests: a Rust-CUDA-shaped kernel for `launch!`, and safe kernels
//! for typed launches on streams, events and unified memory.

use cuda_std::prelude::*;

/// `c[i] = a[i] + b[i]` for `i < a.len()`, with the output as a raw pointer, as Rust-CUDA's
/// `vecadd` example declares it (launched with `launch!` and `(pointer, length)` pairs).
///
/// # Safety
/// `c` points to at least `a.len()` writable `f32`s used by nothing else during the launch,
/// and `b.len() >= a.len()`.
#[kernel]
pub unsafe fn vecadd_raw(a: &[f32], b: &[f32], c: *mut f32) {
    let i = index_1d();
    if i < a.len() {
        // SAFETY: `i < a.len()`, within `c` by the contract; one thread per `i`.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}

/// `x[i] = x[i] · a + b` in place, for `i < x.len()` (a 1D launch; each thread owns its
/// element).
#[kernel]
pub fn affine_in_place_f32(x: OutSlice<f32>, a: f32, b: f32) {
    let i = index_1d();
    if i < x.len() {
        // SAFETY: element `i` belongs to this thread alone (1D launch, distinct `i`).
        let v = unsafe { x.as_mut_ptr().add(i).read() };
        x.write_at_thread(v * a + b);
    }
}

/// Spins for about `cycles` clock cycles in thread 0, then writes `value` to `out[0]`: a
/// kernel slow enough to observe stream ordering and event timing.
#[kernel]
pub fn delay_then_write_u32(out: OutSlice<u32>, cycles: u64, value: u32) {
    if index_1d() == 0 {
        let start = cuda_std::thread::clock64();
        while cuda_std::thread::clock64().wrapping_sub(start) < cycles {}
        out.write_at_thread(value);
    }
}
