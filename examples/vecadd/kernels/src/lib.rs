//! Written as for Rust-CUDA: no crate attributes (`cuda_builder` adds `no_std` and the
//! unstable features), the element pointer passed raw.
use cuda_std::prelude::*;

/// `c[i] = a[i] + b[i]` for every `i < a.len()`.
///
/// # Safety
/// `c` points to at least `a.len()` writable `f32`s that nothing else uses during the launch,
/// and `b.len() >= a.len()`.
#[kernel]
#[allow(improper_ctypes_definitions)]
pub unsafe fn vecadd(a: &[f32], b: &[f32], c: *mut f32) {
    let i = thread::index_1d();
    if i < a.len() {
        // SAFETY: `i < a.len()`, within `c` by the contract above; one thread per `i`.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}
