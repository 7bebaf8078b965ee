//! A planted out-of-bounds write for compute-sanitizer, which must name the Rust source line
//! of the faulting store when the kernels carry line tables (`FERROCUDA_LINE_TABLES=1`; the
//! bundle's `sanitizer-names-the-line` step runs this binary from its line-tables build under
//! `compute-sanitizer --tool memcheck` and looks for `runtime.rs:<line>` in the report).
//!
//! The write is real undefined behaviour on a GPU, so the test does nothing unless
//! `FERROCUDA_PLANTED_OOB=1` is set (the sanitizer step sets it); the bundle's ordinary test
//! and sanitizer runs pass through it.

use cust::memory::DeviceBuffer;
use probes::runtime::vecadd_raw;

/// The variable that arms the planted write.
const ARM: &str = "FERROCUDA_PLANTED_OOB";

#[test]
#[ignore = "needs a CUDA GPU: a planted out-of-bounds write for compute-sanitizer (set FERROCUDA_PLANTED_OOB=1)"]
fn planted_out_of_bounds_write_for_compute_sanitizer() {
    if std::env::var_os(ARM).is_none_or(|v| v != "1") {
        eprintln!("skipped: set {ARM}=1 to launch the planted out-of-bounds write");
        return;
    }
    let gpu = tests::probes();
    assert!(!gpu.is_emulator(), "the planted write is for a GPU");
    // `vecadd_raw` writes `c[i]` for every `i < a.len()`: 256 threads into 200 elements, so
    // threads 200..256 store past the end of `c` (its `# Safety` contract, broken here).
    let (n, short) = (256, 200);
    let a = DeviceBuffer::from_slice(&vec![1.0f32; n]).unwrap();
    let b = DeviceBuffer::from_slice(&vec![2.0f32; n]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(short).unwrap();
    let kernel = gpu.module().kernel(vecadd_raw).unwrap();
    let cfg = cust::function::LaunchConfig::new(1, n as u32, 0);
    // SAFETY: none; the out-of-bounds store is the point of this test (see the module docs).
    let launched = unsafe { kernel.launch_unchecked(gpu.stream(), cfg, (&a, &b, &mut c)) };
    let synced = gpu.stream().synchronize_after(kernel.name(), cfg);
    // Without the sanitizer the store lands in the allocation's padding and both succeed;
    // under memcheck the report is what the bundle step checks.
    eprintln!("launch: {launched:?}; synchronize: {synced:?}");
}
