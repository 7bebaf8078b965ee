//! `io` on the CPU emulator: the text is formatted on the host and collected in the
//! launch's report; a failed assertion fails the thread with `EmuError::Assert`.

use cuda_emu::device;

/// # Safety
/// As `io::vprintf`.
#[track_caller]
pub(crate) unsafe fn vprintf(format: *const u8, args: *const u8) -> i32 {
    // SAFETY: forwarded to the caller.
    unsafe { device::printf("io::vprintf (printf!, println!)", format, args) }
}

/// # Safety
/// As `io::assert_fail`.
#[track_caller]
pub(crate) unsafe fn assert_fail(
    message: *const u8,
    file: *const u8,
    line: u32,
    function: *const u8,
) -> ! {
    let _ = function;
    // SAFETY: forwarded to the caller.
    unsafe { device::assert_fail("io::assert_fail (device_assert!)", message, file, line) }
}
