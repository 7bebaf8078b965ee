//! Typed kernel handles and the parameter kinds that describe a kernel's parameters.
//!
//! On the host, `#[kernel] fn k(a: &[f32], out: OutSlice<f32>, n: u32)` (`cuda_std`)
//! generates a constant `k: Kernel<(Slice<f32>, Out<f32>, Value<u32>), Safe>`: the kernel's
//! entry name plus, at the type level, what each parameter is. The host runtime (`cust`)
//! implements launching for it, accepting only matching host arguments (a device buffer for a
//! slice, a mutable device buffer for an output, a value of the same type for a value), so a
//! wrong argument type or count is a compile error; [`ParamSizes`] gives the parameter layout
//! the kinds stand for, to check against a module's without launching.

use crate::DeviceCopy;
use core::marker::PhantomData;

/// A kernel declared with `#[kernel]`: its PTX entry name, its parameter kinds `P` (a tuple of
/// [`Slice`], [`Out`], [`AtomicOut`], [`MutPtr`], [`ConstPtr`], [`Value`]) and whether
/// launching it is safe (`S` = [`Safe`] or [`Unsafe`]).
pub struct Kernel<P, S> {
    name: &'static str,
    host: Option<HostEntry>,
    _marker: PhantomData<fn(P, S)>,
}

/// The host entry of a `#[kernel]`: runs the kernel body, compiled for the host, for one
/// thread, reading the parameters from `args` exactly as `cuLaunchKernel` does.
///
/// `args` points to one pointer per parameter, each pointing at the parameter's bytes as
/// laid out for the device: a `&[T]`, `OutSlice<T>` or `AtomicSlice<T>` is a 16-byte
/// `(pointer, length)` pair,
/// a raw pointer 8 bytes, a value its own (`repr(C)`) bytes. Used by `cuda_emu`, which
/// sets up the thread's indices, shared memory and warp before calling it.
///
/// # Safety
/// `args` holds one valid, readable pointer per parameter, in order, each to bytes of the
/// parameter's kind ([`ParamKind`]); pointers inside them point to host memory valid for the
/// kernel's accesses; the call happens inside an emulated launch (`cuda_emu::launch`),
/// and the kernel's own `# Safety` contract (for an `unsafe fn` kernel) holds.
pub type HostEntry = unsafe fn(args: *const *mut core::ffi::c_void);

impl<P, S> Kernel<P, S> {
    /// Used by `#[kernel]`; `name` must be the kernel's entry name.
    #[doc(hidden)]
    pub const fn __new(name: &'static str) -> Self {
        Self {
            name,
            host: None,
            _marker: PhantomData,
        }
    }

    /// Used by `#[kernel]` on the host: `name` is the kernel's entry name and `host` the
    /// generated shim that unpacks the argument pointers and runs the body.
    #[doc(hidden)]
    pub const fn __new_with_host(name: &'static str, host: HostEntry) -> Self {
        Self {
            name,
            host: Some(host),
            _marker: PhantomData,
        }
    }

    /// The kernel body compiled for the host, for the CPU emulator (`cuda_emu`):
    /// `Some` for a `#[kernel]` built for the host, `None` for [`Kernel::external`] handles
    /// (CUDA C kernels have no Rust body).
    pub const fn host_entry(&self) -> Option<HostEntry> {
        self.host
    }

    /// The PTX entry name (the Rust function's name).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The size in bytes of each parameter, in order, as the PTX entry declares them
    /// ([`ParamSizes::PARAM_SIZES`]).
    pub const fn param_sizes(&self) -> &'static [usize]
    where
        P: ParamSizes,
    {
        P::PARAM_SIZES
    }
}

impl<P> Kernel<P, Unsafe> {
    /// A typed handle for a kernel that is not a `#[kernel]`, e.g. a CUDA C `extern "C"
    /// __global__` function of an nvcc-built module: `name` is its entry name and `P` the
    /// kinds of its parameters, in order (`const float*` is [`ConstPtr<f32>`], `float*`
    /// [`MutPtr<f32>`], a scalar `Value<T>`).
    ///
    /// The handle is [`Unsafe`]: launching it needs `unsafe`, and the caller vouches that the
    /// kinds describe the C signature (the runtime checks the parameter sizes against the
    /// module when the handle is resolved, not their types) and that the kernel's contract
    /// (buffer sizes, no aliasing) holds.
    ///
    /// ```
    /// use cust_core::launch::{ConstPtr, Kernel, MutPtr, Unsafe, Value};
    /// // extern "C" __global__ void cu_copy_f32(const float* a, float* c, size_t n);
    /// const CU_COPY_F32: Kernel<(ConstPtr<f32>, MutPtr<f32>, Value<usize>), Unsafe> =
    ///     Kernel::external("cu_copy_f32");
    /// assert_eq!(CU_COPY_F32.param_sizes(), &[8, 8, 8]);
    /// ```
    pub const fn external(name: &'static str) -> Self {
        Self::__new(name)
    }
}

impl<P, S> Clone for Kernel<P, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P, S> Copy for Kernel<P, S> {}
impl<P, S> core::fmt::Debug for Kernel<P, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}

/// Marks a kernel whose launch cannot cause undefined behaviour: all its parameters are
/// slices, `OutSlice`s, `AtomicSlice`s and values, and its body is safe Rust.
#[derive(Clone, Copy, Debug)]
pub enum Safe {}
/// Marks an `unsafe fn` kernel (it takes raw pointers, or its author declared a contract):
/// launching it is `unsafe` and the caller upholds its `# Safety` section.
#[derive(Clone, Copy, Debug)]
pub enum Unsafe {}

/// Parameter kind of `&[T]`: a read-only device buffer, passed as `(pointer, length)`.
#[derive(Debug)]
pub struct Slice<T>(PhantomData<T>);
/// Parameter kind of `OutSlice<T>` (`cuda_std::launch::OutSlice`): a writable device
/// buffer, passed as `(pointer, length)`.
#[derive(Debug)]
pub struct Out<T>(PhantomData<T>);
/// Parameter kind of `AtomicSlice<T>` (`cuda_std::launch::AtomicSlice`): a writable device
/// buffer every access of which is atomic, passed as `(pointer, length)`. The host passes
/// a mutable device buffer, as for [`Out`].
#[derive(Debug)]
pub struct AtomicOut<T>(PhantomData<T>);
/// Parameter kind of `*mut T`: a device pointer.
#[derive(Debug)]
pub struct MutPtr<T>(PhantomData<T>);
/// Parameter kind of `*const T`: a device pointer.
#[derive(Debug)]
pub struct ConstPtr<T>(PhantomData<T>);
/// Parameter kind of a value of type `T` (a [`DeviceCopy`] type), passed by value.
#[derive(Debug)]
pub struct Value<T>(PhantomData<T>);

/// The size in bytes a parameter of this kind takes in a PTX entry's parameter list.
pub trait ParamKind {
    /// Bytes: 16 for [`Slice`], [`Out`] and [`AtomicOut`] (a 64-bit pointer and a `usize`
    /// length, the 16-byte aggregate rustc passes for `&[T]`), 8 for [`MutPtr`] and
    /// [`ConstPtr`], `size_of::<T>()` for [`Value<T>`].
    const SIZE_BYTES: usize;
    /// For [`Slice<T>`], [`Out<T>`] and [`AtomicOut<T>`]: `Some(size_of::<T>())`, the bytes
    /// of one element (the buffer is `length × element` bytes); `None` for pointers and
    /// values. The CPU emulator uses it to learn the buffers a launch passes.
    const ELEMENT_BYTES: Option<usize> = None;
    /// Whether the kernel holds the buffer as a shared reference (`&[T]`, [`Slice`]): its
    /// memory must not change while the launch runs. The CPU emulator reports a store into
    /// it.
    const READ_ONLY: bool = false;
}

impl<T> ParamKind for Slice<T> {
    const SIZE_BYTES: usize = 16;
    const ELEMENT_BYTES: Option<usize> = Some(size_of::<T>());
    const READ_ONLY: bool = true;
}
impl<T> ParamKind for Out<T> {
    const SIZE_BYTES: usize = 16;
    const ELEMENT_BYTES: Option<usize> = Some(size_of::<T>());
}
impl<T> ParamKind for AtomicOut<T> {
    const SIZE_BYTES: usize = 16;
    const ELEMENT_BYTES: Option<usize> = Some(size_of::<T>());
}
impl<T> ParamKind for MutPtr<T> {
    const SIZE_BYTES: usize = 8;
}
impl<T> ParamKind for ConstPtr<T> {
    const SIZE_BYTES: usize = 8;
}
impl<T: DeviceCopy> ParamKind for Value<T> {
    const SIZE_BYTES: usize = size_of::<T>();
}

/// The parameter layout of a kernel whose parameter kinds are this tuple: implemented for
/// tuples of up to 16 [`ParamKind`]s (and `()` for a kernel without parameters).
pub trait ParamSizes {
    /// The size in bytes of each parameter, in order; compare with a module manifest's
    /// `EntryPoint::param_sizes` to check a kernel's layout without
    /// allocating.
    const PARAM_SIZES: &'static [usize];
    /// [`ParamKind::ELEMENT_BYTES`] of each parameter, in order: which parameters are
    /// `(pointer, length)` buffers, and their element size.
    const ELEMENT_BYTES: &'static [Option<usize>];
    /// [`ParamKind::READ_ONLY`] of each parameter, in order.
    const READ_ONLY: &'static [bool];
}

impl ParamSizes for () {
    const PARAM_SIZES: &'static [usize] = &[];
    const ELEMENT_BYTES: &'static [Option<usize>] = &[];
    const READ_ONLY: &'static [bool] = &[];
}

macro_rules! impl_param_sizes {
    ($($k:ident),+) => {
        impl<$($k: ParamKind),+> ParamSizes for ($($k,)+) {
            const PARAM_SIZES: &'static [usize] = &[$($k::SIZE_BYTES),+];
            const ELEMENT_BYTES: &'static [Option<usize>] = &[$($k::ELEMENT_BYTES),+];
            const READ_ONLY: &'static [bool] = &[$($k::READ_ONLY),+];
        }
    };
}

// Kernels of up to 16 parameters.
for_each_tuple!(impl_param_sizes; A B C D E F G H I J K L M N O P);

/// Compile-time check used by `#[kernel]`: a by-value parameter type must be [`DeviceCopy`].
#[doc(hidden)]
pub const fn __assert_device_copy<T: DeviceCopy>() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    #[repr(C)]
    struct View {
        center: [f64; 2],
        size: [u32; 2],
    }
    // SAFETY: repr(C), primitive fields.
    unsafe impl DeviceCopy for View {}

    /// The kinds of `unsafe fn k(a: &[f32], b: OutSlice<u8>, c: *mut u64, d: *const f32,
    /// e: u32, f: View, g: AtomicSlice<u64>)`.
    type Kinds = (
        Slice<f32>,
        Out<u8>,
        MutPtr<u64>,
        ConstPtr<f32>,
        Value<u32>,
        Value<View>,
        AtomicOut<u64>,
    );

    #[test]
    fn parameter_sizes_follow_the_kinds() {
        const K: Kernel<Kinds, Unsafe> = Kernel::__new("k");
        assert_eq!(K.param_sizes(), [16, 16, 8, 8, 4, 24, 16]);
        assert_eq!(K.name(), "k");
        assert!(K.host_entry().is_none());
        assert_eq!(
            <Kinds as ParamSizes>::ELEMENT_BYTES,
            [Some(4), Some(1), None, None, None, None, Some(8)]
        );
        // Only the `&[T]` is held read-only.
        assert_eq!(
            <Kinds as ParamSizes>::READ_ONLY,
            [true, false, false, false, false, false, false]
        );
        assert_eq!(<() as ParamSizes>::PARAM_SIZES, [0usize; 0]);
        assert_eq!(
            <(Value<u128>, Value<bool>) as ParamSizes>::PARAM_SIZES,
            [16, 1]
        );
        type V = Value<u8>;
        assert_eq!(<(V,) as ParamSizes>::PARAM_SIZES, [1]);
        assert_eq!(
            <(V, V, V, V, V, V, V, V, V, V, V, V, V, V, V, Value<u64>) as ParamSizes>::PARAM_SIZES,
            [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8]
        );
    }
}
