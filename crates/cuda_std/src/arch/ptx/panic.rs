//! The device panic handler: a panic executes PTX `trap`, which aborts the kernel; the host
//! sees the launch (or the next synchronisation) fail with `CUDA_ERROR_LAUNCH_FAILED` /
//! `CUDA_ERROR_ILLEGAL_INSTRUCTION`.
//!
//! Kernels are built with `-Cpanic=immediate-abort` (see `cuda_builder`), so panicking code
//! never reaches the formatting machinery; this handler is the lang item the target requires.

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` has no preconditions; it ends the kernel with an error.
    unsafe { core::arch::nvptx::trap() }
}
