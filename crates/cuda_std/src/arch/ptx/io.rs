//! `io` on the GPU: CUDA's `vprintf` and `__assertfail` system calls.

/// # Safety
/// As `io::vprintf`.
#[inline(always)]
pub(crate) unsafe fn vprintf(format: *const u8, args: *const u8) -> i32 {
    // SAFETY: forwarded to the caller.
    unsafe { core::arch::nvptx::vprintf(format, args.cast()) }
}

/// # Safety
/// As `io::assert_fail`.
#[inline(always)]
pub(crate) unsafe fn assert_fail(
    message: *const u8,
    file: *const u8,
    line: u32,
    function: *const u8,
) -> ! {
    // SAFETY: forwarded to the caller; `trap` has no preconditions.
    unsafe {
        core::arch::nvptx::__assert_fail(message, file, line, function);
        core::arch::nvptx::trap()
    }
}
