//! Launching a kernel's host body on the CPU emulator (`cuda_emu`) with owned parameter
//! values: shared by the emulator tests (`tests/tests/emulator.rs`) and the emulator's speed
//! benchmark (`tests/benches/emu_speed.rs`).

use cuda_emu::{self as emu, Dim3, EmuError, EmuOptions, EmuReport};
use cuda_std::launch::{Kernel, ParamSizes};
use std::ffi::c_void;

/// The bytes of a slice parameter: (pointer, length).
pub fn slice<T>(v: &[T]) -> (usize, usize) {
    (v.as_ptr() as usize, v.len())
}

/// The bytes of a writable slice parameter: (pointer, length).
pub fn slice_mut<T>(v: &mut [T]) -> (usize, usize) {
    (v.as_mut_ptr() as usize, v.len())
}

/// Launches on the emulator with `args` (each an owned parameter value) and `options`.
#[allow(unused_macros)]
macro_rules! emulate {
    ($kernel:expr, $grid:expr, $block:expr, $shared:expr, $options:expr; $($arg:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut params = ($($arg,)*);
        let args = emulate!(@ptrs params; $($arg),*);
        // SAFETY: each test passes its kernel's parameters, in order, pointing to live
        // vectors of the lengths the kernel's contract asks for.
        unsafe { run(&$kernel, $grid, $block, $shared, &args, $options) }
    }};
    (@ptrs $p:ident; $a0:expr) => { [(&raw mut $p.0).cast::<c_void>()] };
    (@ptrs $p:ident; $a0:expr, $a1:expr) => {
        [(&raw mut $p.0).cast::<c_void>(), (&raw mut $p.1).cast()]
    };
    (@ptrs $p:ident; $a0:expr, $a1:expr, $a2:expr) => {
        [(&raw mut $p.0).cast::<c_void>(), (&raw mut $p.1).cast(), (&raw mut $p.2).cast()]
    };
    (@ptrs $p:ident; $a0:expr, $a1:expr, $a2:expr, $a3:expr) => {
        [(&raw mut $p.0).cast::<c_void>(), (&raw mut $p.1).cast(), (&raw mut $p.2).cast(),
         (&raw mut $p.3).cast()]
    };
    (@ptrs $p:ident; $a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr, $a5:expr) => {
        [(&raw mut $p.0).cast::<c_void>(), (&raw mut $p.1).cast(), (&raw mut $p.2).cast(),
         (&raw mut $p.3).cast(), (&raw mut $p.4).cast(), (&raw mut $p.5).cast()]
    };
    (@ptrs $p:ident; $a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr, $a5:expr, $a6:expr,
     $a7:expr) => {
        [(&raw mut $p.0).cast::<c_void>(), (&raw mut $p.1).cast(), (&raw mut $p.2).cast(),
         (&raw mut $p.3).cast(), (&raw mut $p.4).cast(), (&raw mut $p.5).cast(),
         (&raw mut $p.6).cast(), (&raw mut $p.7).cast()]
    };
}

/// # Safety
/// As `emu::launch`.
pub unsafe fn run<P: ParamSizes, S>(
    kernel: &Kernel<P, S>,
    grid: Dim3,
    block: Dim3,
    shared: u32,
    args: &[*mut c_void],
    options: &EmuOptions,
) -> Result<EmuReport, EmuError> {
    // SAFETY: forwarded.
    unsafe { emu::launch(kernel, grid, block, shared, args, options) }
}

pub fn opts() -> EmuOptions {
    EmuOptions::default()
}
