//! Kernel launches: typed launches of `#[kernel]` handles ([`Launch`], [`LaunchUnchecked`]),
//! and cust's untyped [`launch!`](crate::launch!) for ported code.
//!
//! # Typed launches (recommended)
//!
//! `#[kernel]` gives every kernel a host-side handle `Kernel<(kinds...), Safe | Unsafe>`.
//! For each parameter kind only the matching host argument is accepted, so a wrong argument
//! type or count does not compile:
//!
//! | kernel parameter | kind | host argument |
//! |---|---|---|
//! | `&[T]` | `Slice<T>` | `&DeviceBuffer<T>`, `&DeviceSlice<T>`, `&CudaSlice<T>`, `&CudaView<T>` (any `DevicePtr<T>`) |
//! | `OutSlice<T>` | `Out<T>` | `&mut DeviceBuffer<T>`, `&mut CudaSlice<T>`, `&mut CudaViewMut<T>` (any `DevicePtrMut<T>`) |
//! | `*mut T` | `MutPtr<T>` | as for `OutSlice<T>` |
//! | `*const T` | `ConstPtr<T>` | as for `&[T]` |
//! | `T: DeviceCopy` | `Value<T>` | `T` |
//!
//! ```ignore
//! use cust::prelude::*;
//! my_kernels::scale.launch(&module, &stream, cfg, (&x, &mut out, 2.0f32))?;
//! // `unsafe fn` kernels (raw pointers) need `launch_unchecked` and an `unsafe` block.
//! unsafe { my_kernels::raw_add.launch_unchecked(&module, &stream, cfg, (&a, &b, &mut c))? };
//! ```
//!
//! Before each launch the argument sizes are checked against the kernel's parameters as the
//! module declares them ([`Function::param_sizes`]), so a layout mismatch is an error, not
//! memory corruption. Buffers are ordered across streams by the events cudarc records for
//! each use.
//!
//! # `launch!` (for code ported from Rust-CUDA)
//!
//! `launch!(module.kernel<<<grid, block, shared_bytes, stream>>>(args...))` and
//! `launch!(function<<<...>>>(args...))` push each argument's bytes (any [`DeviceCopy`]
//! value, e.g. `buf.as_device_ptr()`, `buf.len()`, `2.0f32`). Rust-CUDA passes a slice as
//! two arguments, pointer then length; rustc's kernels take one 16-byte `(pointer, length)`
//! parameter. Where the kernel declares a 16-byte parameter and the next two arguments are a
//! [`DevicePointer`] and a `usize`, `launch!` packs them into that parameter, which is
//! exactly its layout. Any other difference from the declared layout is a
//! [`CudaError::ParamMismatch`] naming both layouts: it never launches with a wrong layout.

use crate::{
    error::{CudaError, CudaResult},
    function::{BlockSize, Function, GridSize},
    memory::DevicePointer,
    module::Module,
    stream::Stream,
};
use cust_core::{
    DeviceCopy,
    launch::{ConstPtr, Kernel, MutPtr, Out, Safe, Slice, Value},
};
use cudarc::driver::{
    CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
    SyncOnDrop, sys,
};
use std::any::TypeId;

/// A `&[T]` kernel parameter: rustc passes it as a 16-byte by-value aggregate
/// `(data pointer, length in elements)` (verified in rustc's PTX).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SliceParam {
    ptr: sys::CUdeviceptr,
    len: u64,
}

impl SliceParam {
    /// The parameter for `len` elements at device address `ptr`.
    pub fn from_raw(ptr: sys::CUdeviceptr, len: usize) -> Self {
        Self {
            ptr,
            len: len as u64,
        }
    }

    /// The parameter for the whole of `buf`, used on `stream` (the read is ordered after
    /// earlier writes of `buf` on other streams).
    pub fn new<T>(buf: &impl DevicePtr<T>, stream: &CudaStream) -> Self {
        let (ptr, _sync) = buf.device_ptr(stream);
        Self::from_raw(ptr, buf.len())
    }
}

// SAFETY: plain old data matching the kernel's (ptr, len) aggregate layout.
unsafe impl DeviceRepr for SliceParam {}

/// A [`DeviceCopy`] value passed to a kernel by value (its bytes are copied into the
/// launch's parameter buffer).
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct ByValue<T>(pub T);

// SAFETY: `DeviceCopy` guarantees a defined, pointer-free layout, identical on host and
// device (both 64-bit little-endian, same Rust definition).
unsafe impl<T: DeviceCopy> DeviceRepr for ByValue<T> {}

/// A host value that can be passed for a kernel parameter of kind `K`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of kind `{K}`",
    label = "wrong argument for this kernel parameter",
    note = "kernel `&[T]` takes `&DeviceBuffer<T>` or `&CudaSlice<T>`; `OutSlice<T>` and \
            `*mut T` take `&mut DeviceBuffer<T>` or `&mut CudaSlice<T>`; `*const T` takes \
            `&DeviceBuffer<T>`; a value of type `T` takes a `T`"
)]
pub trait KernelArg<'a, K> {
    /// What is pushed into the launch's parameter buffer.
    type Param: DeviceRepr;
    /// The parameter bytes, plus a guard that orders the buffer's use on `stream` (dropped
    /// after the launch is queued).
    fn into_param(self, stream: &'a CudaStream) -> (Self::Param, Option<SyncOnDrop<'a>>);
}

impl<'a, T, S: DevicePtr<T>> KernelArg<'a, Slice<T>> for &'a S {
    type Param = SliceParam;
    fn into_param(self, stream: &'a CudaStream) -> (SliceParam, Option<SyncOnDrop<'a>>) {
        let (ptr, sync) = self.device_ptr(stream);
        (SliceParam::from_raw(ptr, self.len()), Some(sync))
    }
}

impl<'a, T, S: DevicePtrMut<T>> KernelArg<'a, Out<T>> for &'a mut S {
    type Param = SliceParam;
    fn into_param(self, stream: &'a CudaStream) -> (SliceParam, Option<SyncOnDrop<'a>>) {
        let len = self.len();
        let (ptr, sync) = self.device_ptr_mut(stream);
        (SliceParam::from_raw(ptr, len), Some(sync))
    }
}

impl<'a, T, S: DevicePtr<T>> KernelArg<'a, ConstPtr<T>> for &'a S {
    type Param = sys::CUdeviceptr;
    fn into_param(self, stream: &'a CudaStream) -> (sys::CUdeviceptr, Option<SyncOnDrop<'a>>) {
        let (ptr, sync) = self.device_ptr(stream);
        (ptr, Some(sync))
    }
}

impl<'a, T, S: DevicePtrMut<T>> KernelArg<'a, MutPtr<T>> for &'a mut S {
    type Param = sys::CUdeviceptr;
    fn into_param(self, stream: &'a CudaStream) -> (sys::CUdeviceptr, Option<SyncOnDrop<'a>>) {
        let (ptr, sync) = self.device_ptr_mut(stream);
        (ptr, Some(sync))
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a, Value<T>> for T {
    type Param = ByValue<T>;
    fn into_param(self, _stream: &'a CudaStream) -> (ByValue<T>, Option<SyncOnDrop<'a>>) {
        (ByValue(self), None)
    }
}

/// A tuple of host arguments matching a kernel's parameter kinds `P` (a tuple of the same
/// length). Implemented for tuples of up to 12 [`KernelArg`]s.
#[diagnostic::on_unimplemented(
    message = "these arguments do not match the kernel's parameters `{P}`",
    label = "one argument per kernel parameter, in order, as a tuple",
    note = "a kernel with parameters (&[f32], OutSlice<f32>, f32) is launched with \
            (&DeviceBuffer<f32>, &mut DeviceBuffer<f32>, f32)"
)]
pub trait KernelArgs<'a, P> {
    /// The parameter values and their guards.
    type Params;
    /// Converts every argument.
    fn into_params(self, stream: &'a CudaStream) -> Self::Params;
    /// The size in bytes of every parameter, in order.
    fn param_sizes() -> Vec<usize>;
    /// Pushes every parameter into `builder`, in order.
    fn push<'b>(params: &'b Self::Params, builder: &mut LaunchArgs<'b>);
}

macro_rules! impl_kernel_args {
    ($(($k:ident, $a:ident, $v:ident)),*) => {
        impl<'a, $($k,)* $($a: KernelArg<'a, $k>,)*> KernelArgs<'a, ($($k,)*)> for ($($a,)*) {
            type Params = ($(($a::Param, Option<SyncOnDrop<'a>>),)*);
            #[allow(unused_variables, clippy::unused_unit)]
            fn into_params(self, stream: &'a CudaStream) -> Self::Params {
                let ($($v,)*) = self;
                ($($v.into_param(stream),)*)
            }
            fn param_sizes() -> Vec<usize> {
                vec![$(std::mem::size_of::<$a::Param>()),*]
            }
            #[allow(unused_variables)]
            fn push<'b>(params: &'b Self::Params, builder: &mut LaunchArgs<'b>) {
                let ($($v,)*) = params;
                $(builder.arg(&$v.0);)*
            }
        }
    };
}

/// Implements `KernelArgs` for every tuple length from the list's length down to 0.
macro_rules! impl_kernel_args_up_to {
    () => {
        impl_kernel_args!();
    };
    ($head:tt $(, $tail:tt)*) => {
        impl_kernel_args!($head $(, $tail)*);
        impl_kernel_args_up_to!($($tail),*);
    };
}

impl_kernel_args_up_to!(
    (K0, A0, v0),
    (K1, A1, v1),
    (K2, A2, v2),
    (K3, A3, v3),
    (K4, A4, v4),
    (K5, A5, v5),
    (K6, A6, v6),
    (K7, A7, v7),
    (K8, A8, v8),
    (K9, A9, v9),
    (K10, A10, v10),
    (K11, A11, v11)
);

/// Launching a kernel whose launch is safe (no raw pointers, not `unsafe fn`).
pub trait Launch<P> {
    /// Queues the kernel of `module` on `stream` with `cfg` and `args` (one per parameter,
    /// see the [module table](self)). Returns once queued; execution errors surface at the
    /// next synchronisation ([`Stream::synchronize`]).
    ///
    /// # Errors
    /// [`CudaError::UnknownKernel`] if the module has no such entry,
    /// [`CudaError::ParamMismatch`] if the parameter sizes differ from the module's,
    /// [`CudaError::Launch`] if the driver rejects the launch (e.g. too many threads per
    /// block or too much shared memory).
    fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()>;
}

/// Launching any kernel, including `unsafe fn` kernels.
pub trait LaunchUnchecked<P> {
    /// As [`Launch::launch`].
    ///
    /// # Errors
    /// As [`Launch::launch`].
    ///
    /// # Safety
    /// The kernel's own `# Safety` contract holds for these arguments and this launch
    /// configuration (e.g. raw pointers point to buffers of the sizes it documents).
    unsafe fn launch_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()>;
}

impl<P> Launch<P> for Kernel<P, Safe> {
    fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()> {
        // SAFETY: a `Safe` kernel has only slices, OutSlices and DeviceCopy values, whose
        // host arguments are checked by `KernelArgs`, and a safe body.
        unsafe { launch_typed(self.name(), module, stream, cfg, args) }
    }
}

impl<P, S> LaunchUnchecked<P> for Kernel<P, S> {
    unsafe fn launch_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()> {
        // SAFETY: forwarded to the caller.
        unsafe { launch_typed(self.name(), module, stream, cfg, args) }
    }
}

/// # Safety
/// As [`LaunchUnchecked::launch_unchecked`].
unsafe fn launch_typed<'a, P, A: KernelArgs<'a, P>>(
    name: &str,
    module: &Module,
    stream: &'a Stream,
    cfg: LaunchConfig,
    args: A,
) -> CudaResult<()> {
    let function = module.get_function(name)?;
    check_layout(&function, &A::param_sizes())?;
    let params = args.into_params(stream.as_cudarc());
    let mut builder = stream.launch_builder(function.as_cudarc());
    A::push(&params, &mut builder);
    // SAFETY: argument count and sizes match the kernel's parameters (checked above), kinds
    // match the kernel's Rust signature (checked by the types), the rest is the caller's
    // contract.
    unsafe { launch_built(name, cfg, builder) }
    // `params` (with the buffers' sync guards) drops here, after the launch is queued.
}

/// Queues a launch built with cudarc's `stream.launch_builder(function)` for the kernel
/// `name`; a failure is a [`CudaError::Launch`] naming the kernel and `cfg`. For kernels
/// that have no `#[kernel]` handle (e.g. CUDA C modules).
///
/// # Safety
/// The arguments pushed into `args` match the kernel's parameters in number, order and
/// layout, and satisfy its contract (buffer sizes, no aliasing).
///
/// # Errors
/// [`CudaError::Launch`].
pub unsafe fn launch_built(
    name: &str,
    cfg: LaunchConfig,
    mut args: LaunchArgs<'_>,
) -> CudaResult<()> {
    // SAFETY: forwarded to the caller.
    unsafe { args.launch(cfg) }
        .map(|_| ())
        .map_err(|source| launch_error(name, cfg, source))
}

/// The error for a failed launch of `kernel` with `cfg`.
pub fn launch_error(
    kernel: &str,
    cfg: LaunchConfig,
    source: cudarc::driver::DriverError,
) -> CudaError {
    CudaError::Launch {
        kernel: kernel.to_owned(),
        grid: cfg.grid_dim,
        block: cfg.block_dim,
        shared_bytes: cfg.shared_mem_bytes,
        source,
    }
}

fn check_layout(function: &Function, host: &[usize]) -> CudaResult<()> {
    let module = function.param_sizes()?;
    if module == host {
        return Ok(());
    }
    Err(CudaError::ParamMismatch {
        kernel: function.name().to_owned(),
        host: host.to_vec(),
        module: module.to_vec(),
        hint: "",
    })
}

/// One argument of [`launch!`](crate::launch!): its bytes, and whether it is a device
/// pointer or a length (for packing Rust-CUDA's `(pointer, length)` slice pairs).
#[doc(hidden)]
#[derive(Debug)]
pub struct RawArg {
    bytes: Vec<u8>,
    role: Role,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Pointer,
    Length,
    Other,
}

impl RawArg {
    /// Captures `value`'s bytes.
    pub fn new<T: DeviceCopy + 'static>(value: &T) -> Self {
        let size = std::mem::size_of::<T>();
        // SAFETY: `DeviceCopy` types have a defined layout; reading their `size` bytes is
        // what the driver does with a kernel argument.
        let bytes = unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size) };
        let role = if TypeId::of::<T>() == TypeId::of::<usize>() {
            Role::Length
        } else if size == 8 && is_device_pointer::<T>() {
            Role::Pointer
        } else {
            Role::Other
        };
        Self {
            bytes: bytes.to_vec(),
            role,
        }
    }
}

/// Whether `T` is `DevicePointer<U>` for some `U`. `TypeId` differs per `U`, so this compares
/// the type's path as the compiler names it (the same compiler names both).
fn is_device_pointer<T: 'static>() -> bool {
    let any = std::any::type_name::<DevicePointer<()>>();
    let prefix = any.strip_suffix("()>").unwrap_or(any);
    std::any::type_name::<T>().starts_with(prefix)
}

/// Groups the arguments into the kernel's parameters: one argument per parameter of equal
/// size, or a `(DevicePointer, usize)` pair for a 16-byte parameter.
fn pack(kernel: &str, params: &[usize], args: &[RawArg]) -> CudaResult<Vec<Vec<u8>>> {
    let host: Vec<usize> = args.iter().map(|a| a.bytes.len()).collect();
    let mismatch = |hint| CudaError::ParamMismatch {
        kernel: kernel.to_owned(),
        host: host.clone(),
        module: params.to_vec(),
        hint,
    };
    let mut packed = Vec::with_capacity(params.len());
    let mut i = 0;
    for &size in params {
        let Some(arg) = args.get(i) else {
            return Err(mismatch(" (too few arguments)"));
        };
        if arg.bytes.len() == size {
            packed.push(arg.bytes.clone());
            i += 1;
        } else if size == 16
            && arg.role == Role::Pointer
            && args.get(i + 1).is_some_and(|a| a.role == Role::Length)
        {
            let mut pair = arg.bytes.clone();
            pair.extend_from_slice(&args[i + 1].bytes);
            packed.push(pair);
            i += 2;
        } else {
            return Err(mismatch(if size == 16 {
                ": a `&[T]` kernel parameter takes `buf.as_device_ptr(), buf.len()` (a \
                 DevicePointer then a usize), or use a typed launch with `&buf`"
            } else {
                ""
            }));
        }
    }
    if i != args.len() {
        return Err(mismatch(" (too many arguments)"));
    }
    Ok(packed)
}

/// The implementation of [`launch!`](crate::launch!).
///
/// # Safety
/// As `launch!`: the arguments are what the kernel expects (pointers to live device
/// buffers of the sizes it assumes, kept alive and not used by other work until the kernel
/// has finished).
#[doc(hidden)]
pub unsafe fn __launch_raw(
    function: &Function,
    grid: impl Into<GridSize>,
    block: impl Into<BlockSize>,
    shared_mem_bytes: u32,
    stream: &Stream,
    args: &[RawArg],
) -> CudaResult<()> {
    let cfg = crate::function::launch_config(grid, block, shared_mem_bytes);
    let params = function.param_sizes()?;
    let packed = pack(function.name(), params, args)?;
    let mut builder = stream.launch_builder(function.as_cudarc());
    for p in &packed {
        // The driver reads `params[i]` bytes starting at this address: the whole vector.
        builder.arg(&p[0]);
    }
    // SAFETY: the layout matches the kernel's parameters (checked by `pack`); the rest is the
    // caller's contract.
    unsafe { launch_built(function.name(), cfg, builder) }
}

/// Launches a kernel, cust 0.3's syntax:
///
/// ```ignore
/// unsafe {
///     launch!(module.vecadd<<<grid, block, 0, stream>>>(
///         a.as_device_ptr(), a.len(), b.as_device_ptr(), b.len(), c.as_device_ptr()
///     ))?;
///     launch!(function<<<grid, block, 0, stream>>>(x.as_device_ptr(), 2.0f32))?;
/// }
/// ```
///
/// `grid` and `block` are anything that converts into [`GridSize`] / [`BlockSize`] (`u32`,
/// `(u32, u32)`, `(u32, u32, u32)`); `shared` is dynamic shared memory per block, bytes;
/// `stream` a [`Stream`]. Each argument is any [`DeviceCopy`] value. Returns
/// [`CudaResult<()>`](crate::error::CudaResult) once queued. See the [module docs](self)
/// for how slices are passed.
///
/// Unsafe: it expands to a call of an `unsafe fn`. The caller guarantees the arguments are
/// what the kernel expects (pointers to live device buffers of the sizes it assumes, kept
/// alive and unused by other work until the kernel has finished). Prefer typed launches.
#[macro_export]
macro_rules! launch {
    ($module:ident . $function:ident <<<$grid:expr, $block:expr, $shared:expr, $stream:ident>>>( $($arg:expr),* $(,)? )) => {
        match $module.get_function(stringify!($function)) {
            Ok(function) => $crate::launch!(function<<<$grid, $block, $shared, $stream>>>($($arg),*)),
            Err(e) => Err(e),
        }
    };
    ($function:ident <<<$grid:expr, $block:expr, $shared:expr, $stream:ident>>>( $($arg:expr),* $(,)? )) => {
        $crate::launch::__launch_raw(
            &$function,
            $grid,
            $block,
            $shared,
            &$stream,
            &[$($crate::launch::RawArg::new(&$arg)),*],
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr() -> RawArg {
        RawArg::new(&DevicePointer::<f32>::from_raw(0x1000))
    }

    #[test]
    fn roles_are_recognised() {
        assert_eq!(ptr().role, Role::Pointer);
        assert_eq!(RawArg::new(&7usize).role, Role::Length);
        assert_eq!(RawArg::new(&7u64).role, Role::Other);
        assert_eq!(RawArg::new(&1.0f64).role, Role::Other);
    }

    #[test]
    fn rust_cuda_slice_pairs_are_packed_into_one_parameter() {
        // Rust-CUDA's vecadd: (a: &[f32], b: &[f32], c: *mut f32) = [16, 16, 8] in the PTX.
        let args = [
            ptr(),
            RawArg::new(&5usize),
            ptr(),
            RawArg::new(&5usize),
            ptr(),
        ];
        let packed = pack("vecadd", &[16, 16, 8], &args).unwrap();
        assert_eq!(packed.iter().map(Vec::len).collect::<Vec<_>>(), [16, 16, 8]);
        let mut expected = 0x1000u64.to_le_bytes().to_vec();
        expected.extend_from_slice(&5u64.to_le_bytes());
        assert_eq!(packed[0], expected);
    }

    #[test]
    fn layouts_that_do_not_fit_are_refused_with_both_layouts() {
        // A pointer without its length for a slice parameter.
        let err = pack("k", &[16, 4], &[ptr(), RawArg::new(&2.0f32)]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("[8, 4]") && text.contains("[16, 4]"),
            "{text}"
        );
        assert!(text.contains("buf.as_device_ptr(), buf.len()"), "{text}");
        // Two u64s are not a (pointer, length) pair: never packed by size alone.
        assert!(pack("k", &[16], &[RawArg::new(&1u64), RawArg::new(&2u64)]).is_err());
        // Too many / too few.
        assert!(pack("k", &[4], &[RawArg::new(&1u32), RawArg::new(&1u32)]).is_err());
        assert!(pack("k", &[4, 4], &[RawArg::new(&1u32)]).is_err());
    }
}
