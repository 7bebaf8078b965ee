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
//! | `&[T]` | `Slice<T>` | `&DeviceBuffer<T>`, `&DeviceSlice<T>`, `&DeviceSliceMut<T>`, `&UnifiedBuffer<T>`, `&DeviceBox<T>` |
//! | `OutSlice<T>` | `Out<T>` | `&mut DeviceBuffer<T>`, `&mut DeviceSliceMut<T>`, `&mut UnifiedBuffer<T>`, `&mut DeviceBox<T>` |
//! | `AtomicSlice<T>` | `AtomicOut<T>` | as for `OutSlice<T>` |
//! | `*mut T` | `MutPtr<T>` | as for `OutSlice<T>` |
//! | `*const T` | `ConstPtr<T>` | as for `&[T]` |
//! | `T: DeviceCopy` | `Value<T>` | `T` |
//!
//! A handle is resolved in a module once ([`Module::kernel`]), which checks the parameter
//! sizes the module declares against the handle's; the resulting [`TypedFunction`] launches
//! with no lookup and no allocation:
//!
//! ```no_run
//! # #[allow(non_upper_case_globals)]
//! # mod my_kernels {
//! #     // The handles `#[kernel]` generates in a kernels crate (which depends on `cuda_std`,
//! #     // a crate cust never depends on) for `fn scale(x: &[f32], out: OutSlice<f32>, s: f32)`
//! #     // and `unsafe fn raw_add(a: *const f32, b: *const f32, c: *mut f32)`.
//! #     use cust_core::launch::{ConstPtr, Kernel, MutPtr, Out, Safe, Slice, Unsafe, Value};
//! #     pub const scale: Kernel<(Slice<f32>, Out<f32>, Value<f32>), Safe> =
//! #         Kernel::__new("scale");
//! #     pub const raw_add: Kernel<(ConstPtr<f32>, ConstPtr<f32>, MutPtr<f32>), Unsafe> =
//! #         Kernel::external("raw_add");
//! # }
//! # fn main() -> cust::CudaResult<()> {
//! use cust::prelude::*;
//! # let _ctx = cust::quick_init()?;
//! # let module = Module::from_ptx("", &[])?;
//! # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! # let cfg = LaunchConfig::for_num_elems(1024, 256)?;
//! # let (x, mut out) = (DeviceBuffer::<f32>::zeroed(1024)?, DeviceBuffer::<f32>::zeroed(1024)?);
//! # let (a, b) = (DeviceBuffer::<f32>::zeroed(1024)?, DeviceBuffer::<f32>::zeroed(1024)?);
//! # let mut c = DeviceBuffer::<f32>::zeroed(1024)?;
//! let scale = module.kernel(my_kernels::scale)?; // once: lookup + layout check
//! scale.launch(&stream, cfg, (&x, &mut out, 2.0f32))?; // per launch
//! // `unsafe fn` kernels (raw pointers) need `launch_unchecked` and an `unsafe` block.
//! let raw_add = module.kernel(my_kernels::raw_add)?;
//! unsafe { raw_add.launch_unchecked(&stream, cfg, (&a, &b, &mut c))? };
//! // One-off launches may resolve and launch in one call:
//! my_kernels::scale.launch(&module, &stream, cfg, (&x, &mut out, 2.0f32))?;
//! # Ok(())
//! # }
//! ```
//!
//! A layout mismatch is an error at resolve time, naming the kernel, the module and both
//! layouts, never memory corruption. Buffers are ordered across streams by the events
//! recorded for each use (a launch waits for earlier writes of its buffers on other streams).
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

/// For the docs' links.
#[cfg(doc)]
use crate::memory::pointer::DevicePointer;
use crate::{
    backend::{self, Guard},
    error::{CudaError, CudaResult},
    function::Function,
    launch_config::{LaunchAttributes, LaunchConfig, check_cluster},
    memory::device::{KernelMemory, KernelMemoryMut},
    module::Module,
    stream::Stream,
};
use cust_core::{
    DeviceCopy,
    launch::{AtomicOut, ConstPtr, Kernel, MutPtr, Out, ParamSizes, Safe, Slice, Value},
};
use std::{ffi::c_void, fmt};

mod untyped;

#[doc(hidden)]
pub use untyped::{__launch_raw, RawArg};

/// A `&[T]`, `OutSlice<T>` or `AtomicSlice<T>` kernel parameter: rustc passes it as a 16-byte by-value
/// aggregate `(data pointer, length in elements)` (verified in rustc's PTX).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct SliceParam {
    ptr: u64,
    len: u64,
}

/// A [`DeviceCopy`] value passed to a kernel by value (its bytes are copied into the
/// launch's parameter buffer).
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
#[doc(hidden)]
pub struct ByValue<T>(pub T);

/// A host value that can be passed for a kernel parameter of kind `K`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of kind `{K}`",
    label = "wrong argument for this kernel parameter",
    note = "kernel `&[T]` takes `&DeviceBuffer<T>` or `&DeviceSlice<T>`; `OutSlice<T>`, \
            `AtomicSlice<T>` and `*mut T` take `&mut DeviceBuffer<T>` or \
            `&mut DeviceSliceMut<T>`; `*const T` takes `&DeviceBuffer<T>`; a value of type `T` \
            takes a `T`"
)]
pub trait KernelArg<'a, K> {
    /// What is pushed into the launch's parameter buffer.
    #[doc(hidden)]
    type Param;
    /// The parameter bytes, plus a guard that orders the buffer's use on `stream` (dropped
    /// after the launch is queued).
    #[doc(hidden)]
    ///
    /// # Errors
    /// [`CudaError::BackendMismatch`] for a buffer of the other backend than `stream`'s.
    #[doc(hidden)]
    fn into_param(self, stream: &'a Stream) -> CudaResult<(Self::Param, Option<Guard<'a>>)>;
}

impl<'a, T, S: KernelMemory<T>> KernelArg<'a, Slice<T>> for &'a S {
    type Param = SliceParam;
    fn into_param(self, stream: &'a Stream) -> CudaResult<(SliceParam, Option<Guard<'a>>)> {
        let (ptr, len, sync) = self.kernel_param(stream)?;
        Ok((
            SliceParam {
                ptr,
                len: len as u64,
            },
            sync,
        ))
    }
}

impl<'a, T, S: KernelMemoryMut<T>> KernelArg<'a, Out<T>> for &'a mut S {
    type Param = SliceParam;
    fn into_param(self, stream: &'a Stream) -> CudaResult<(SliceParam, Option<Guard<'a>>)> {
        let (ptr, len, sync) = self.kernel_param_mut(stream)?;
        Ok((
            SliceParam {
                ptr,
                len: len as u64,
            },
            sync,
        ))
    }
}

/// An `AtomicSlice<T>` takes a mutable buffer, as an `OutSlice<T>` does: the launch then
/// holds the buffer's only borrow, so no other parameter of the launch aliases it and every
/// access to it during the launch is the kernel's atomics.
impl<'a, T, S: KernelMemoryMut<T>> KernelArg<'a, AtomicOut<T>> for &'a mut S {
    type Param = SliceParam;
    fn into_param(self, stream: &'a Stream) -> CudaResult<(SliceParam, Option<Guard<'a>>)> {
        <Self as KernelArg<'a, Out<T>>>::into_param(self, stream)
    }
}

impl<'a, T, S: KernelMemory<T>> KernelArg<'a, ConstPtr<T>> for &'a S {
    type Param = u64;
    fn into_param(self, stream: &'a Stream) -> CudaResult<(u64, Option<Guard<'a>>)> {
        let (ptr, _, sync) = self.kernel_param(stream)?;
        Ok((ptr, sync))
    }
}

impl<'a, T, S: KernelMemoryMut<T>> KernelArg<'a, MutPtr<T>> for &'a mut S {
    type Param = u64;
    fn into_param(self, stream: &'a Stream) -> CudaResult<(u64, Option<Guard<'a>>)> {
        let (ptr, _, sync) = self.kernel_param_mut(stream)?;
        Ok((ptr, sync))
    }
}

impl<'a, T: DeviceCopy> KernelArg<'a, Value<T>> for T {
    type Param = ByValue<T>;
    fn into_param(self, _stream: &'a Stream) -> CudaResult<(ByValue<T>, Option<Guard<'a>>)> {
        Ok((ByValue(self), None))
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
    #[doc(hidden)]
    type Params;
    /// The driver's argument array: one pointer per parameter (no allocation).
    #[doc(hidden)]
    type Pointers: AsMut<[*mut c_void]>;
    /// Converts every argument.
    ///
    /// # Errors
    /// As [`KernelArg::into_param`].
    #[doc(hidden)]
    fn into_params(self, stream: &'a Stream) -> CudaResult<Self::Params>;
    /// A pointer to each parameter value in `params`, in order, for `cuLaunchKernel`.
    #[doc(hidden)]
    fn pointers(params: &mut Self::Params) -> Self::Pointers;
}

macro_rules! impl_kernel_args {
    ($(($k:ident, $a:ident, $v:ident)),*) => {
        impl<'a, $($k,)* $($a: KernelArg<'a, $k>,)*> KernelArgs<'a, ($($k,)*)> for ($($a,)*) {
            type Params = ($(($a::Param, Option<Guard<'a>>),)*);
            type Pointers = [*mut c_void; <[&str]>::len(&[$(stringify!($k)),*])];
            #[allow(unused_variables, clippy::unused_unit)]
            fn into_params(self, stream: &'a Stream) -> CudaResult<Self::Params> {
                let ($($v,)*) = self;
                Ok(($($v.into_param(stream)?,)*))
            }
            #[allow(unused_variables)]
            fn pointers(params: &mut Self::Params) -> Self::Pointers {
                let ($($v,)*) = params;
                [$(std::ptr::from_mut(&mut $v.0).cast::<c_void>()),*]
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

/// A `#[kernel]` handle resolved in one [`Module`] ([`Module::kernel`]): the function, with
/// its parameter layout checked against the handle's once. Launching it does no lookup and
/// no allocation. Cheap to clone; keeps its module loaded.
///
/// ```no_run
/// # #[allow(non_upper_case_globals)]
/// # mod kernels {
/// #     // The handle `#[kernel]` generates in a kernels crate (which depends on `cuda_std`,
/// #     // a crate cust never depends on) for the workspace's
/// #     // `fn triad_f32(b: &[f32], c: &[f32], q: f32, a: OutSlice<f32>)`.
/// #     use cust_core::launch::{Kernel, Out, Safe, Slice, Value};
/// #     pub const triad_f32: Kernel<(Slice<f32>, Slice<f32>, Value<f32>, Out<f32>), Safe> =
/// #         Kernel::__new("triad_f32");
/// # }
/// # use cust::prelude::*;
/// # fn main() -> CudaResult<()> {
/// # let _ctx = cust::quick_init()?;
/// # let module = Module::from_ptx("", &[])?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// # let (cfg, reps) = (LaunchConfig::for_num_elems(1024, 256)?, 10);
/// # let (b, c) = (DeviceBuffer::<f32>::zeroed(1024)?, DeviceBuffer::<f32>::zeroed(1024)?);
/// # let mut a = DeviceBuffer::<f32>::zeroed(1024)?;
/// // a[i] = b[i] + 3·c[i]
/// let triad = module.kernel(kernels::triad_f32)?; // once
/// for _ in 0..reps {
///     triad.launch(&stream, cfg, (&b, &c, 3.0f32, &mut a))?; // many times
/// }
/// # Ok(())
/// # }
/// ```
pub struct TypedFunction<P, S> {
    function: Function,
    /// The handle: its host body runs the kernel on the CPU emulator.
    handle: Kernel<P, S>,
}

impl<P, S> Clone for TypedFunction<P, S> {
    fn clone(&self) -> Self {
        Self {
            function: self.function.clone(),
            handle: self.handle,
        }
    }
}

impl<P, S> fmt::Debug for TypedFunction<P, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedFunction")
            .field("name", &self.function.name())
            .finish_non_exhaustive()
    }
}

impl Module {
    /// Resolves the `#[kernel]` handle `kernel` in this module: looks the function up and
    /// checks that the parameter sizes the module declares equal the handle's.
    ///
    /// # Errors
    /// [`CudaError::UnknownKernel`] if the module has no such entry (naming the kernels it
    /// has, where known), [`CudaError::KernelArchitecture`] if only arch-specific variants
    /// the device cannot run define it (naming both architectures), [`CudaError::ParamMismatch`] naming the kernel, the module and
    /// both layouts if the sizes differ, [`CudaError::ParamInfoUnavailable`] if the module's
    /// layout cannot be read.
    pub fn kernel<P: ParamSizes, S>(
        &self,
        kernel: Kernel<P, S>,
    ) -> CudaResult<TypedFunction<P, S>> {
        let function = self.get_function(kernel.name())?;
        let module = function.param_sizes()?;
        if module != P::PARAM_SIZES {
            return Err(CudaError::ParamMismatch {
                kernel: kernel.name().to_owned(),
                origin: self.origin().to_owned(),
                host: P::PARAM_SIZES.to_vec(),
                module: module.to_vec(),
                hint: "",
            });
        }
        Ok(TypedFunction {
            function,
            handle: kernel,
        })
    }
}

impl<P: ParamSizes, S> TypedFunction<P, S> {
    /// The untyped function.
    pub fn function(&self) -> &Function {
        &self.function
    }

    /// The kernel's entry name.
    pub fn name(&self) -> &str {
        self.function.name()
    }

    /// The module it was resolved in.
    pub fn module(&self) -> &Module {
        self.function.module()
    }

    /// Queues the kernel on `stream`, for any kernel, including `unsafe fn` kernels.
    ///
    /// # Errors
    /// As [`TypedFunction::launch`].
    ///
    /// # Safety
    /// The kernel's own `# Safety` contract holds for these arguments and this launch
    /// configuration (e.g. raw pointers point to buffers of the sizes it documents).
    pub unsafe fn launch_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()> {
        // SAFETY: forwarded to the caller.
        unsafe { self.queue(stream, cfg, None, args) }
    }

    /// Queues the kernel on `stream` with launch attributes (`cuLaunchKernelEx`), for any
    /// kernel, including `unsafe fn` kernels: `config`'s grid (in blocks) and block (in
    /// threads), `shared_bytes` of dynamic shared memory per block (which replaces
    /// `config.shared_mem_bytes`), and `attributes`: a cluster shape `[x, y, z]` (blocks per
    /// thread block cluster, `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`; sm_90 and later) or a
    /// [`LaunchAttributes`], which may also allow programmatic stream serialization
    /// ([`LaunchAttributes::programmatic_stream_serialization`]). A cluster of `[1, 1, 1]`
    /// launches without the cluster attribute (any GPU). Above 48 KB of dynamic shared
    /// memory the kernel's limit is raised first, once
    /// ([`Function::set_max_dynamic_shared_bytes`]). The arguments go through the same
    /// stack array as [`launch_unchecked`](Self::launch_unchecked): no allocation.
    ///
    /// # Errors
    /// Before anything is queued, [`CudaError::LaunchConfig`] naming the values if a
    /// cluster dimension is 0, a grid dimension is not a multiple of the cluster's, or the
    /// cluster has more than 8 blocks (16 after
    /// [`Function::set_non_portable_cluster_size_allowed`]); [`CudaError::SharedMemory`] if
    /// `shared_bytes` exceeds the device's limit. Then as [`TypedFunction::launch`] (the
    /// emulator runs each cluster's blocks together, and ignores programmatic stream
    /// serialization: its launches run to completion in stream order).
    ///
    /// # Safety
    /// As [`launch_unchecked`](Self::launch_unchecked); besides, a kernel that uses cluster
    /// features (distributed shared memory, `barrier.cluster`, multicast) assumes the
    /// cluster shape it is launched with, and with programmatic stream serialization the
    /// kernel may start while the kernel queued before it on `stream` still runs: none of
    /// its accesses that conflict with that kernel's (it reads what that kernel writes, or
    /// writes what it reads or writes) may happen before the thread making it has called
    /// `cuda_std::thread::grid_dependency_sync`.
    pub unsafe fn launch_ex_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        stream: &'a Stream,
        config: LaunchConfig,
        attributes: impl Into<LaunchAttributes>,
        shared_bytes: u32,
        args: A,
    ) -> CudaResult<()> {
        let attributes = attributes.into();
        let cfg = config.with_shared_mem_bytes(shared_bytes);
        check_cluster(
            cfg.grid_dim,
            attributes.cluster_dims(),
            self.function.max_cluster_blocks(),
        )?;
        // SAFETY: forwarded to the caller.
        unsafe { self.queue(stream, cfg, Some(attributes), args) }
    }

    /// The one launch body, with or without launch attributes: raises the kernel's dynamic
    /// shared memory limit if needed, converts the arguments on `stream` (a buffer of the
    /// other backend is refused here), and hands the stack array of argument pointers to the
    /// function's backend: the GPU queues it (`cuLaunchKernel`, or `cuLaunchKernelEx` with
    /// `attributes`), the emulator runs the handle's host body.
    ///
    /// # Safety
    /// As [`launch_ex_unchecked`](Self::launch_ex_unchecked).
    unsafe fn queue<'a, A: KernelArgs<'a, P>>(
        &self,
        stream: &'a Stream,
        cfg: LaunchConfig,
        attributes: Option<LaunchAttributes>,
        args: A,
    ) -> CudaResult<()> {
        self.function.ensure_dynamic_shared(cfg.shared_mem_bytes)?;
        let mut params = args.into_params(stream)?;
        let mut pointers = A::pointers(&mut params);
        // SAFETY: one pointer per parameter, each to a value of the size the module declares
        // (checked when this handle was resolved; kinds checked by the types), pointing to
        // memory of `stream`'s backend (checked by `into_params`); `params` outlives the
        // call. The rest is the caller's contract.
        let queued = unsafe {
            self.function.code().launch(
                stream.queue(),
                backend::Launch {
                    kernel: self.function.name(),
                    grid: cfg.grid_dim,
                    block: cfg.block_dim,
                    shared_bytes: cfg.shared_mem_bytes,
                    attributes,
                    args: pointers.as_mut(),
                    host: Some(&self.handle),
                },
            )
        };
        // The buffers' guards record their use on `stream` once the launch is queued.
        drop(params);
        queued
    }
}

impl<P: ParamSizes> TypedFunction<P, Safe> {
    /// [`launch_ex_unchecked`](TypedFunction::launch_ex_unchecked) for kernels whose launch
    /// is safe: a cluster launch with `cluster` blocks per cluster and `shared_bytes` of
    /// dynamic shared memory per block.
    ///
    /// It takes a cluster shape only, not [`LaunchAttributes`]: with programmatic stream
    /// serialization a kernel may run while the kernel before it on the stream still writes
    /// the buffers it reads, which only the kernel's own code can rule out (an `unsafe`
    /// contract: [`launch_ex_unchecked`](TypedFunction::launch_ex_unchecked)).
    ///
    /// # Errors
    /// As [`launch_ex_unchecked`](TypedFunction::launch_ex_unchecked).
    pub fn launch_ex<'a, A: KernelArgs<'a, P>>(
        &self,
        stream: &'a Stream,
        config: LaunchConfig,
        cluster: [u32; 3],
        shared_bytes: u32,
        args: A,
    ) -> CudaResult<()> {
        // SAFETY: as in `launch`; no programmatic stream serialization (only a cluster).
        unsafe { self.launch_ex_unchecked(stream, config, cluster, shared_bytes, args) }
    }

    /// Queues the kernel on `stream` with `cfg` and `args` (one per parameter, see the
    /// [module table](self)). Returns once queued; execution errors surface at the next
    /// synchronisation ([`Stream::synchronize`]).
    ///
    /// Dynamic shared memory above 48 KB (`cfg.shared_mem_bytes`) needs the kernel's opt-in:
    /// the first launch that asks for more than the limit set so far sets it
    /// ([`Function::set_max_dynamic_shared_bytes`]); later launches only compare (the limit
    /// is cached per kernel).
    ///
    /// # Errors
    /// [`CudaError::SharedMemory`] if `cfg.shared_mem_bytes` exceeds the device's limit;
    /// [`CudaError::Launch`] if the driver rejects the launch (e.g. too many threads per
    /// block or too much shared memory), naming the kernel and the configuration.
    pub fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()> {
        // SAFETY: a `Safe` kernel has only slices, OutSlices, AtomicSlices and DeviceCopy
        // values, whose
        // host arguments are checked by `KernelArgs`, and a safe body.
        unsafe { self.launch_unchecked(stream, cfg, args) }
    }
}

/// Launching a kernel whose launch is safe (no raw pointers, not `unsafe fn`) on a module,
/// resolving it first: `kernel.launch(&module, &stream, cfg, args)` is
/// `module.kernel(kernel)?.launch(&stream, cfg, args)`. For launches in a loop, resolve once
/// with [`Module::kernel`] and launch the [`TypedFunction`].
pub trait Launch<P> {
    /// Resolves the kernel in `module` and queues it (see [`TypedFunction::launch`]).
    ///
    /// # Errors
    /// Those of [`Module::kernel`] and [`TypedFunction::launch`].
    fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()>;
}

/// Launching any kernel, including `unsafe fn` kernels, on a module (resolving it first).
pub trait LaunchUnchecked<P> {
    /// As [`Launch::launch`].
    ///
    /// # Errors
    /// As [`Launch::launch`].
    ///
    /// # Safety
    /// As [`TypedFunction::launch_unchecked`].
    unsafe fn launch_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()>;
}

impl<P: ParamSizes> Launch<P> for Kernel<P, Safe> {
    fn launch<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()> {
        module.kernel(*self)?.launch(stream, cfg, args)
    }
}

impl<P: ParamSizes, S> LaunchUnchecked<P> for Kernel<P, S> {
    unsafe fn launch_unchecked<'a, A: KernelArgs<'a, P>>(
        &self,
        module: &Module,
        stream: &'a Stream,
        cfg: LaunchConfig,
        args: A,
    ) -> CudaResult<()> {
        // SAFETY: forwarded to the caller.
        unsafe { module.kernel(*self)?.launch_unchecked(stream, cfg, args) }
    }
}
