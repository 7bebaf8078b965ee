use cuda_std::launch::{AtomicOut, ConstPtr, Kernel, MutPtr, Out, Safe, Slice, Unsafe, Value};
use cuda_std::prelude::*;

/// A safe kernel: slices, outputs and values.
#[kernel]
pub fn safe_kernel(x: &[f32], out: OutSlice<f32>, n: u32, scale: [f64; 2]) {
    let _ = (x, out, n, scale);
}

/// A safe kernel with an atomic output: any thread updates any bin, without `unsafe`.
#[kernel]
pub fn histogram(data: &[u32], bins: AtomicSlice<u32>) {
    if let Some(&x) = data.get(index_1d()) {
        let _ = bins.fetch_add(x as usize % bins.len(), 1, Ordering::Relaxed);
    }
}

/// An unsafe kernel with raw pointers.
///
/// # Safety
/// Never launched.
#[kernel]
pub unsafe fn raw_kernel(src: *const u8, dst: *mut u64) {
    let _ = (src, dst);
}

fn main() {
    let handle: Kernel<(Slice<f32>, Out<f32>, Value<u32>, Value<[f64; 2]>), Safe> = safe_kernel;
    assert_eq!(handle.name(), "safe_kernel");
    let raw: Kernel<(ConstPtr<u8>, MutPtr<u64>), Unsafe> = raw_kernel;
    assert_eq!(raw.name(), "raw_kernel");
    let hist: Kernel<(Slice<u32>, AtomicOut<u32>), Safe> = histogram;
    assert_eq!(hist.param_sizes(), &[16, 16]);
}
