//! Vector kernels (1D launches).

use cuda_std::prelude::*;

/// Entry names of this module's kernels.
pub const KERNELS: &[&str] = &["vector_add_f32"];

/// `c[i] = a[i] + b[i]` for `i < min(a.len(), b.len())`, one thread per element (1D launch).
///
/// # Safety
/// `c` points to a device allocation of at least `min(a.len(), b.len())` `f32`s that no
/// other code accesses during the launch.
#[kernel]
pub unsafe fn vector_add_f32(a: &[f32], b: &[f32], c: *mut f32) {
    let i = index_1d();
    if i < a.len() && i < b.len() {
        // SAFETY: i is in bounds of `c` (caller contract); one thread per element.
        unsafe { *c.add(i) = a[i] + b[i] };
    }
}
