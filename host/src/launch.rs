//! Typed kernel launches.
//!
//! `#[kernel]` gives every kernel a host-side handle `kernels::...::name:
//! Kernel<(kinds...), Safe | Unsafe>`. This module accepts, for each parameter kind, only the
//! matching host argument, so a wrong argument type or count does not compile:
//!
//! | kernel parameter | kind | host argument |
//! |---|---|---|
//! | `&[T]` | [`Slice<T>`] | `&CudaSlice<T>` or `&CudaView<T>` (any `DevicePtr<T>`) |
//! | `OutSlice<T>` | [`Out<T>`] | `&mut CudaSlice<T>` or `&mut CudaViewMut<T>` (any `DevicePtrMut<T>`) |
//! | `*mut T` | [`MutPtr<T>`] | `&mut CudaSlice<T>` or `&mut CudaViewMut<T>` |
//! | `*const T` | [`ConstPtr<T>`] | `&CudaSlice<T>` or `&CudaView<T>` |
//! | `T: DeviceCopy` | [`Value<T>`] | `T` |
//!
//! ```ignore
//! use host::launch::{Launch, LaunchUnchecked};
//! kernels::typed::scale_offset.launch(&gpu, cfg, (&x, &mut out, 2.0f32, 1.0f32))?;
//! // `unsafe fn` kernels (raw pointers) need `launch_unchecked` and an `unsafe` block.
//! unsafe { kernels::vector::vector_add_f32.launch_unchecked(&gpu, cfg, (&a, &b, &mut c))? };
//! ```
//!
//! Before each launch the parameter sizes are checked against the PTX entry's declaration
//! (parsed when the module is loaded), so an ABI mismatch is an error, not memory corruption.

use crate::gpu::{ByValue, Gpu, GpuError, SliceParam};
use cuda_std::{
    DeviceCopy,
    launch::{ConstPtr, Kernel, MutPtr, Out, Safe, Slice, Value},
};
use cudarc::driver::{
    CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
    SyncOnDrop, sys,
};

/// A host value that can be passed for a kernel parameter of kind `K`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of kind `{K}`",
    label = "wrong argument for this kernel parameter",
    note = "kernel `&[T]` takes `&CudaSlice<T>`; `OutSlice<T>` takes `&mut CudaSlice<T>`; \
            `*mut T` takes `&mut CudaSlice<T>`; `*const T` takes `&CudaSlice<T>`; a value of \
            type `T` takes a `T`"
)]
pub trait KernelArg<'a, K> {
    /// What is pushed into the launch's parameter buffer.
    type Param: DeviceRepr;
    /// The parameter bytes, plus a guard that orders the buffer's use on `stream` (dropped
    /// after the launch is queued).
    fn into_param(self, stream: &'a CudaStream) -> (Self::Param, Option<SyncOnDrop<'a>>);
}

// Any device buffer or view works for every buffer kind: cudarc's `DevicePtr` /
// `DevicePtrMut` cover `CudaSlice`, `CudaView` and `CudaViewMut`. Shared access for read-only
// kinds, exclusive access (`&mut`) for kinds the kernel writes through.

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
            (&CudaSlice<f32>, &mut CudaSlice<f32>, f32)"
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
    /// Queues the kernel on `gpu`'s stream with `cfg` and `args` (one per parameter, see the
    /// module table). Returns once queued; execution errors surface at the next
    /// synchronisation ([`Gpu::synchronize`]) as [`GpuError::Launch`] naming this kernel.
    ///
    /// # Errors
    /// [`GpuError::UnknownKernel`] if the module has no such entry,
    /// [`GpuError::AbiMismatch`] if the parameter sizes differ from the PTX declaration,
    /// [`GpuError::Launch`] if the driver rejects the launch (e.g. too many threads per block
    /// or too much shared memory).
    fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        gpu: &'a Gpu,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<(), GpuError>;
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
        gpu: &'a Gpu,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<(), GpuError>;
}

impl<P> Launch<P> for Kernel<P, Safe> {
    fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        gpu: &'a Gpu,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<(), GpuError> {
        // SAFETY: a `Safe` kernel has only slices, OutSlices and DeviceCopy values, whose
        // host arguments are checked by `KernelArgs`, and a safe body.
        unsafe { launch_any(self.name(), gpu, cfg, args) }
    }
}

impl<P, S> LaunchUnchecked<P> for Kernel<P, S> {
    unsafe fn launch_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        gpu: &'a Gpu,
        cfg: LaunchConfig,
        args: A,
    ) -> Result<(), GpuError> {
        // SAFETY: forwarded to the caller.
        unsafe { launch_any(self.name(), gpu, cfg, args) }
    }
}

/// # Safety
/// As [`LaunchUnchecked::launch_unchecked`].
unsafe fn launch_any<'a, P, A: KernelArgs<'a, P>>(
    name: &'static str,
    gpu: &'a Gpu,
    cfg: LaunchConfig,
    args: A,
) -> Result<(), GpuError> {
    let function = gpu.try_function(name)?;
    gpu.check_abi(name, &A::param_sizes())?;
    let params = args.into_params(gpu.stream());
    let mut builder = gpu.stream().launch_builder(function);
    A::push(&params, &mut builder);
    // SAFETY: argument count and sizes match the PTX entry (checked above), kinds match the
    // kernel's Rust signature (checked by the types), the rest is the caller's contract.
    unsafe { gpu.launch(name, cfg, builder) }
    // `params` (with the buffers' sync guards) drops here, after the launch is queued.
}

/// A 1D launch configuration for `n` elements, one thread per element, `block` threads per
/// block (a multiple of 32, at most 1024).
///
/// # Errors
/// [`GpuError::LaunchConfig`] if `block` is not in 32..=1024 or a multiple of 32, or `n`
/// needs more than 2^31 − 1 blocks (the grid x limit, CUDA C Programming Guide, "Technical
/// Specifications per Compute Capability").
pub fn for_num_elems(n: usize, block: u32) -> Result<LaunchConfig, GpuError> {
    if !(32..=1024).contains(&block) || !block.is_multiple_of(32) {
        return Err(GpuError::LaunchConfig(format!(
            "block size {block} is not allowed: it must be a multiple of 32 from 32 to 1024"
        )));
    }
    let blocks = n.div_ceil(block as usize).max(1);
    let grid = u32::try_from(blocks)
        .ok()
        .filter(|&g| g <= i32::MAX as u32)
        .ok_or_else(|| {
            GpuError::LaunchConfig(format!(
                "{n} elements need {blocks} blocks of {block}, more than the 2^31 - 1 allowed"
            ))
        })?;
    Ok(LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// A 2D launch covering a `width × height` image with 16×16 blocks (256 threads).
pub fn for_image(width: u32, height: u32) -> LaunchConfig {
    crate::gpu::launch_config_2d(width, height)
}

/// Dynamic shared memory per block as a function of block size, for the occupancy
/// calculator: none.
extern "C" fn no_dynamic_shared(_block_size: std::ffi::c_int) -> usize {
    0
}

impl Gpu {
    /// The block size that maximises occupancy for `kernel` (from the driver's occupancy
    /// calculator, `cuOccupancyMaxPotentialBlockSize`, with no dynamic shared memory).
    ///
    /// # Errors
    /// [`GpuError::UnknownKernel`] or [`GpuError::Driver`].
    pub fn occupancy_block_size<P, S>(&self, kernel: Kernel<P, S>) -> Result<u32, GpuError> {
        let f = self.try_function(kernel.name())?;
        let (_, block) = f
            .occupancy_max_potential_block_size(no_dynamic_shared, 0, 0, None)
            .map_err(GpuError::driver(format!(
                "occupancy query for `{}`",
                kernel.name()
            )))?;
        Ok(block)
    }
}
