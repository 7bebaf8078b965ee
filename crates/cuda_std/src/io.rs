//! Device output: [`printf!`](crate::printf) / [`println!`](crate::println) through CUDA's
//! `vprintf`, and assertions ([`device_assert!`](crate::device_assert),
//! [`device_assert_eq!`](crate::device_assert_eq),
//! [`device_assert_ne!`](crate::device_assert_ne)) whose message reaches the host.
//!
//! `vprintf` is a system call that the driver's JIT links in (NVIDIA, "PTX Writer's Guide to
//! Interoperability", "System Calls"; CUDA C Programming Guide, "Formatted Output"): each call appends the format string's address and an argument buffer
//! to a per-context FIFO (1 MiB by default), which the driver prints to the host process's
//! **stdout** at the next synchronisation point (`cuStreamSynchronize`, `cuCtxSynchronize`,
//! a blocking copy, module unload). Output of a kernel that does not finish normally may be
//! lost; output beyond the FIFO's size is dropped.
//!
//! The format string is a **C format** (`%d`, `%u`, `%x`, `%lld`, `%llu`, `%f`, `%e`, `%g`,
//! `%p`, `%s`, `%c`, `%%`), not Rust's `{}`: the macros only pass arguments, and CUDA's
//! printf interprets them. Each argument is converted by [`PrintfArg`] to what C's variadic
//! promotion would pass; the specifier must match the converted type:
//!
//! | Rust argument | passed as | specifiers |
//! |---|---|---|
//! | `i8`, `i16`, `i32` | `int` (4 bytes) | `%d`, `%i`, `%c` |
//! | `u8`, `u16`, `u32`, `bool` (0/1) | `unsigned int` (4 bytes) | `%u`, `%x`, `%X`, `%o`, `%c` |
//! | `i64`, `isize` | `long long` (8 bytes) | `%lld`, `%lli` |
//! | `u64`, `usize` | `unsigned long long` (8 bytes) | `%llu`, `%llx` |
//! | `f32`, `f64` | `double` (8 bytes) | `%f`, `%e`, `%g`, `%a` |
//! | `*const T`, `*mut T` | pointer (8 bytes) | `%p` |
//! | `&CStr` | `const char *` | `%s` |
//!
//! A mismatch prints garbage (it cannot fault: CUDA's printf reads only the buffer we pass,
//! except for `%s`, which must get a `&CStr`).

/// A value that can be passed to [`printf!`](crate::printf): converted to the C type of the
/// table in the [module docs](self).
pub trait PrintfArg: Copy {
    /// The C representation written to `vprintf`'s argument buffer (4 or 8 bytes, aligned to
    /// its size).
    #[doc(hidden)]
    type C: Copy;
    #[doc(hidden)]
    fn to_c(self) -> Self::C;
}

macro_rules! printf_arg {
    ($($t:ty => $c:ty),* $(,)?) => {$(
        impl PrintfArg for $t {
            type C = $c;
            #[inline(always)]
            fn to_c(self) -> $c { self as $c }
        }
    )*};
}
printf_arg!(
    i8 => i32, i16 => i32, i32 => i32, u8 => u32, u16 => u32, u32 => u32,
    i64 => i64, isize => i64, u64 => u64, usize => u64, f32 => f64, f64 => f64,
);

impl PrintfArg for bool {
    type C = u32;
    #[inline(always)]
    fn to_c(self) -> u32 {
        u32::from(self)
    }
}

impl<T> PrintfArg for *const T {
    type C = u64;
    #[inline(always)]
    fn to_c(self) -> u64 {
        self as usize as u64
    }
}

impl<T> PrintfArg for *mut T {
    type C = u64;
    #[inline(always)]
    fn to_c(self) -> u64 {
        self as usize as u64
    }
}

impl PrintfArg for &core::ffi::CStr {
    type C = u64;
    #[inline(always)]
    fn to_c(self) -> u64 {
        self.as_ptr() as usize as u64
    }
}

/// `vprintf`'s argument buffer for `N` arguments: arguments packed at offsets aligned to
/// their size, like the `struct` clang builds for CUDA's `printf` (8-byte aligned; `N` 8-byte
/// words always suffice, since every argument is at most 8 bytes).
#[doc(hidden)]
#[derive(Debug)]
#[repr(C)]
pub struct ArgBuffer<const N: usize> {
    words: [u64; N],
    len_bytes: usize,
}

impl<const N: usize> ArgBuffer<N> {
    #[doc(hidden)]
    #[inline(always)]
    #[must_use]
    pub const fn new() -> Self {
        Self {
            words: [0; N],
            len_bytes: 0,
        }
    }

    /// Appends one argument (converted to its C type) at the next offset aligned to its size.
    #[doc(hidden)]
    #[inline(always)]
    pub fn push<A: PrintfArg>(&mut self, arg: A) {
        let c = arg.to_c();
        let size = core::mem::size_of::<A::C>();
        let offset = self.len_bytes.next_multiple_of(size);
        assert!(offset + size <= 8 * N, "printf!: argument buffer overflow");
        // SAFETY: in bounds (checked above); `C` is a primitive of `size` (4 or 8) bytes with
        // alignment `size`, and `words` is 8-aligned, so `offset` is suitably aligned.
        unsafe {
            self.words
                .as_mut_ptr()
                .cast::<u8>()
                .add(offset)
                .cast::<A::C>()
                .write(c)
        };
        self.len_bytes = offset + size;
    }

    /// The buffer's address, for `vprintf` (null when empty).
    #[doc(hidden)]
    #[inline(always)]
    #[must_use]
    pub fn as_ptr(&self) -> *const u8 {
        if self.len_bytes == 0 {
            core::ptr::null()
        } else {
            self.words.as_ptr().cast()
        }
    }
}

impl<const N: usize> Default for ArgBuffer<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[doc(hidden)]
#[macro_export]
macro_rules! __printf_count {
    () => { 0usize };
    ($head:expr $(, $tail:expr)*) => { 1usize + $crate::__printf_count!($($tail),*) };
}

/// Calls CUDA's `vprintf` with a NUL-terminated C format string and an argument buffer;
/// returns the number of arguments on success, or a negative value on error.
///
/// # Safety
/// `format` points to a NUL-terminated string; `args` is null or points to arguments laid
/// out as the format expects (as [`ArgBuffer`] builds them); each `%s` argument points to a
/// NUL-terminated string.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn vprintf(format: *const u8, args: *const u8) -> i32 {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::io::vprintf(format, args) }
}

/// Ends the kernel with CUDA's assertion failure: the driver prints
/// `file:line: function: block: [x,y,z], thread: [x,y,z] Assertion `message` failed.` and
/// the launch fails with `CUDA_ERROR_ASSERT` (the context is unusable afterwards).
///
/// PTX: a call to the `__assertfail` system call (via `core::arch::nvptx::__assert_fail`),
/// then `trap` in case it returns.
///
/// # Safety
/// `message`, `file` and `function` point to NUL-terminated strings.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub unsafe fn assert_fail(
    message: *const u8,
    file: *const u8,
    line: u32,
    function: *const u8,
) -> ! {
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::io::assert_fail(message, file, line, function) }
}

/// Device `printf` with a C format string (see the [`io`](crate::io) module docs for the
/// argument types and specifiers): `printf!("x = %d, y = %f\n", x, y)`. Evaluates to the
/// `i32` `vprintf` returns (arguments printed, or negative on error).
///
/// The format must be a string literal (a NUL is appended). Output appears on the host's
/// stdout at the next synchronisation. Device-only (panics on the host).
#[macro_export]
macro_rules! printf {
    ($fmt:expr $(, $arg:expr)* $(,)?) => {{
        #[allow(unused_mut)]
        let mut __cuda_std_args =
            $crate::io::ArgBuffer::<{ $crate::__printf_count!($($arg),*) }>::new();
        $( __cuda_std_args.push($arg); )*
        // SAFETY: the format is a NUL-terminated literal; the buffer holds the arguments
        // converted and laid out by `ArgBuffer`; `%s` arguments are `&CStr` by `PrintfArg`.
        unsafe {
            $crate::io::vprintf(
                ::core::concat!($fmt, "\0").as_ptr(),
                __cuda_std_args.as_ptr(),
            )
        }
    }};
}

/// [`printf!`](crate::printf) with a newline appended: `println!("lane %u: %f", lane, v)`.
/// A C format string, not Rust's `{}` (see the [`io`](crate::io) module docs).
#[macro_export]
macro_rules! println {
    () => {
        $crate::printf!("\n")
    };
    ($fmt:expr $(, $arg:expr)* $(,)?) => {
        $crate::printf!(::core::concat!($fmt, "\n") $(, $arg)*)
    };
}

/// Asserts that a condition holds on the device; on failure prints the optional message
/// (a [`printf!`](crate::printf) format and arguments) and ends the kernel through CUDA's
/// assertion mechanism: the driver prints
/// `FILE:LINE: KERNEL: block: [..], thread: [..] Assertion `COND` failed.`, and the launch
/// (or the next synchronisation) fails with `CUDA_ERROR_ASSERT` ("device-side assert
/// triggered"). The CUDA context is unusable afterwards: the host must recreate it.
///
/// ```no_run
/// # use cuda_std::{device_assert, kernel, thread::index_1d};
/// # #[kernel]
/// # pub fn check(xs: &[f32], n: usize) {
/// # let i = index_1d();
/// # let x = xs[i];
/// device_assert!(i < n);
/// device_assert!(x >= 0.0, "x = %f at i = %llu", x, i);
/// # }
/// # fn main() {}
/// ```
///
/// Unlike `assert!`, the check is kept in release builds (like CUDA C's `assert` without
/// `NDEBUG`). Device-only (on the host, a failing check panics via the stub).
#[macro_export]
macro_rules! device_assert {
    ($cond:expr $(,)?) => {
        if !$cond {
            $crate::__device_assert_fail!(::core::stringify!($cond));
        }
    };
    ($cond:expr, $fmt:expr $(, $arg:expr)* $(,)?) => {
        if !$cond {
            $crate::printf!(::core::concat!($fmt, "\n") $(, $arg)*);
            $crate::__device_assert_fail!(::core::stringify!($cond));
        }
    };
}

/// Asserts `left == right` on the device ([`device_assert!`](crate::device_assert) semantics);
/// on failure both values are printed first (`%lld`/`%llu` for integers, `%.9g`/`%.17g` for
/// `f32`/`f64`). The operands have one type implementing `PartialEq` and [`AssertValue`]
/// (integers up to 64 bits except `isize`/`usize`, `bool`, `f32`, `f64`).
#[macro_export]
macro_rules! device_assert_eq {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (l, r) => {
                if !(*l == *r) {
                    $crate::io::__print_assert_values(*l, *r);
                    $crate::__device_assert_fail!(::core::concat!(
                        ::core::stringify!($left),
                        " == ",
                        ::core::stringify!($right)
                    ));
                }
            }
        }
    };
}

/// Asserts `left != right` on the device; see [`device_assert_eq!`](crate::device_assert_eq).
#[macro_export]
macro_rules! device_assert_ne {
    ($left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (l, r) => {
                if *l == *r {
                    $crate::io::__print_assert_values(*l, *r);
                    $crate::__device_assert_fail!(::core::concat!(
                        ::core::stringify!($left),
                        " != ",
                        ::core::stringify!($right)
                    ));
                }
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __device_assert_fail {
    ($msg:expr) => {
        // SAFETY: all three strings are NUL-terminated literals.
        unsafe {
            $crate::io::assert_fail(
                ::core::concat!($msg, "\0").as_ptr(),
                ::core::concat!(::core::file!(), "\0").as_ptr(),
                ::core::line!(),
                ::core::concat!(::core::module_path!(), "\0").as_ptr(),
            )
        }
    };
}

/// A value [`device_assert_eq!`](crate::device_assert_eq) can print.
pub trait AssertValue: Copy {
    #[doc(hidden)]
    fn print_pair(left: Self, right: Self);
}

macro_rules! assert_value {
    ($fmt:literal, $wide:ty => $($t:ty),*) => {$(
        impl AssertValue for $t {
            #[inline(always)]
            fn print_pair(left: Self, right: Self) {
                crate::printf!($fmt, <$wide>::from(left), <$wide>::from(right));
            }
        }
    )*};
}
assert_value!("assertion failed: left = %lld, right = %lld\n", i64 => i8, i16, i32, i64);
assert_value!("assertion failed: left = %llu, right = %llu\n", u64 => u8, u16, u32, u64, bool);
assert_value!("assertion failed: left = %.9g, right = %.9g\n", f64 => f32);
assert_value!("assertion failed: left = %.17g, right = %.17g\n", f64 => f64);

/// Prints the two operands of a failed `device_assert_eq!` / `device_assert_ne!`.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn __print_assert_values<T: AssertValue>(left: T, right: T) {
    T::print_pair(left, right);
}
