//! [`Gpu`]: one device with ferrocuda's kernels module (or another module image, see
//! [`Gpu::with_image`]) loaded and a stream to work on, built on the `cust` runtime.
//!
//! Launches go through kernels resolved once ([`cust::launch::TypedFunction`]): a
//! long-lived owner resolves its kernels when it is built (e.g.
//! [`crate::mandelbrot::RenderKernels`]); free functions that take a `&Gpu` (the vector
//! and GEMM functions) keep theirs in the `Gpu`, in kernel tables (`Gpu::kernels`) whose
//! entries (`Resolved`) are resolved on first use.

use cuda_std::launch::{Kernel, ParamSizes};
pub use cust::CudaError as GpuError;
pub use cust::device::driver_available;
use cust::launch::TypedFunction;
use cust::{
    context::Context,
    device::Device,
    function::LaunchConfig,
    module::{Module, ModuleImage, ModuleSource},
    stream::Stream,
};
use std::{
    any::{Any, TypeId},
    fmt,
    sync::OnceLock,
    time::Duration,
};

/// How many kernel table types one [`Gpu`] can hold ([`Gpu::kernels`]); the crate has
/// fewer (one per element type of each kernel family).
const KERNEL_TABLES: usize = 32;

/// A table slot: the table's type and the table, filled once.
type TableSlot = OnceLock<(TypeId, Box<dyn Any + Send + Sync>)>;

/// One GPU with a module loaded (the kernels module, [`crate::KERNELS`], unless built with
/// [`Gpu::with_image`]), and its stream.
pub struct Gpu {
    ctx: Context,
    stream: Stream,
    module: Module,
    /// Kernel tables ([`Gpu::kernels`]), filled in order, each once.
    tables: [TableSlot; KERNEL_TABLES],
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ctx.ordinal())
            .field("module", &self.module.source())
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens GPU `ordinal` (0 = first) and loads the kernels module ([`crate::KERNELS`]):
    /// [`Gpu::with_image`] with that image.
    ///
    /// # Errors
    /// As [`Gpu::with_image`].
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        Self::with_image(ordinal, &crate::KERNELS)
    }

    /// Opens GPU `ordinal` (0 = first) and loads `image` instead of the kernels module (e.g.
    /// the workspace tests' probe kernels): the build-time cubin whose compute capability
    /// equals the device's, if there is one and the driver accepts it, else the PTX
    /// (JIT-compiled by the driver). [`Gpu::module_source`] and [`Gpu::module_load_time`] say
    /// which and how long it took. Work is queued on the context's default stream.
    ///
    /// # Errors
    /// [`GpuError::NoDriver`] without a CUDA driver, [`GpuError::NoDevice`] or
    /// [`GpuError::BadOrdinal`] without that GPU, [`GpuError::Driver`] /
    /// [`GpuError::ModuleLoad`] if context creation or the module load fails.
    pub fn with_image(ordinal: usize, image: &'static ModuleImage) -> Result<Self, GpuError> {
        let device = Device::get_device(u32::try_from(ordinal).unwrap_or(u32::MAX))?;
        Self::in_context(Context::new(device)?, image)
    }

    /// The CPU emulator with `image` loaded: every `#[kernel]` of it runs its host body
    /// through `cuda_emu` (real warps, barriers, shared memory, atomics, and the
    /// emulator's race, divergence and bounds checks). [`Gpu::name`] says `ferrocuda CPU
    /// emulator`. Operations that need a GPU (PTX modules, NCCL, cuBLAS's own kernels) fail
    /// with [`GpuError::NotOnEmulator`].
    ///
    /// # Errors
    /// None in practice (an image module on the emulator loads no code); the `Result` keeps
    /// the constructors alike.
    pub fn emulator(image: &'static ModuleImage) -> Result<Self, GpuError> {
        Self::in_context(Context::emulator(), image)
    }

    /// The device `FERROCUDA_DEVICE` asks for (`gpu`, `cpu`, or `auto`/unset: GPU
    /// `ordinal` if a GPU is present, else the CPU emulator), with `image` loaded.
    ///
    /// # Errors
    /// A bad `FERROCUDA_DEVICE` value; for `gpu`, those of [`Gpu::with_image`] (no silent
    /// emulation without a GPU).
    pub fn from_env(ordinal: usize, image: &'static ModuleImage) -> Result<Self, GpuError> {
        let ctx = Context::from_env(u32::try_from(ordinal).unwrap_or(u32::MAX))?;
        Self::in_context(ctx, image)
    }

    /// `true` when this runs on the CPU emulator.
    pub fn is_emulator(&self) -> bool {
        self.ctx.is_emulator()
    }

    fn in_context(ctx: Context, image: &'static ModuleImage) -> Result<Self, GpuError> {
        let module = Module::from_image_in(&ctx, image)?;
        let stream = Stream::default_of(&ctx);
        Ok(Self {
            ctx,
            stream,
            module,
            tables: std::array::from_fn(|_| OnceLock::new()),
        })
    }

    /// This GPU's table of type `T` (created empty, `T::default()`, on first use, then
    /// kept as long as the `Gpu`): a struct of [`Resolved`] kernels, which free functions
    /// taking a `&Gpu` launch through, so each kernel is looked up in the module once per
    /// `Gpu`, not per launch.
    ///
    /// Finding the table compares the [`TypeId`]s of the tables made so far (a few dozen
    /// at most): no map, no lock once made. Slots are filled in order and a thread only
    /// fills the first empty slot it meets, so no type gets two tables, even in races.
    ///
    /// # Panics
    /// If more than 32 table types are asked for (the crate has fewer).
    pub(crate) fn kernels<T: Default + Send + Sync + 'static>(&self) -> &T {
        let id = TypeId::of::<T>();
        for slot in &self.tables {
            let (slot_id, table) = slot.get_or_init(|| (id, Box::new(T::default())));
            if *slot_id == id {
                return table
                    .downcast_ref()
                    .expect("a table slot holds the type it is tagged with");
            }
        }
        panic!("more than {KERNEL_TABLES} kernel table types on one `Gpu`")
    }

    /// What the module was loaded from: `cubin sm_90` or `PTX JIT` when displayed.
    pub fn module_source(&self) -> ModuleSource {
        self.module.source()
    }

    /// How long [`Gpu::new`] / [`Gpu::with_image`] took to load the module (driver JIT included for PTX).
    pub fn module_load_time(&self) -> Duration {
        self.module.load_time()
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The stream all work of this `Gpu` is queued on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The loaded module: the kernels module, or the image given to [`Gpu::with_image`].
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The device's name, e.g. "NVIDIA H200", or "ferrocuda CPU emulator".
    pub fn name(&self) -> String {
        self.ctx.name()
    }

    /// Waits for all work queued on this GPU's stream.
    ///
    /// # Errors
    /// [`GpuError::Driver`] with the first asynchronous error (e.g. a kernel that trapped).
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize()
    }

    /// Checks that `bytes` more bytes fit in free device memory.
    ///
    /// # Errors
    /// [`GpuError::OutOfMemory`] when they do not.
    pub fn check_free(&self, what: &'static str, bytes: usize) -> Result<(), GpuError> {
        self.ctx.check_free(what, bytes)
    }

    /// Waits for the stream; a failure is reported as a failure of `kernel` launched with
    /// `cfg` (asynchronous kernel faults surface here).
    ///
    /// # Errors
    /// [`GpuError::Launch`] naming the kernel.
    pub fn sync_after(&self, kernel: &str, cfg: LaunchConfig) -> Result<(), GpuError> {
        self.stream.synchronize_after(kernel, cfg)
    }

    /// The block size that maximises occupancy for `kernel` (the driver's occupancy
    /// calculator, no dynamic shared memory).
    ///
    /// # Errors
    /// As [`Module::kernel`] (unknown kernel, other parameter sizes), or a driver error.
    pub fn occupancy_block_size<P: cuda_std::launch::ParamSizes, S>(
        &self,
        kernel: cuda_std::launch::Kernel<P, S>,
    ) -> Result<u32, GpuError> {
        let f = self.module.kernel(kernel)?;
        Ok(f.function().suggested_launch_configuration(0, 0.into())?.1)
    }
}

/// A kernel of a [`Gpu`]'s module, resolved ([`Module::kernel`]) on first use and kept:
/// an entry of a kernel table ([`Gpu::kernels`]).
pub(crate) struct Resolved<P, S>(OnceLock<TypedFunction<P, S>>);

impl<P, S> Default for Resolved<P, S> {
    fn default() -> Self {
        Self(OnceLock::new())
    }
}

impl<P: ParamSizes, S> Resolved<P, S> {
    /// `kernel` resolved in `gpu`'s module: looked up the first time, kept after. Each
    /// entry stands for one kernel: pass the same handle every time.
    ///
    /// # Errors
    /// As [`Module::kernel`] (nothing is kept then: the next call looks it up again).
    pub(crate) fn get(
        &self,
        gpu: &Gpu,
        kernel: Kernel<P, S>,
    ) -> Result<&TypedFunction<P, S>, GpuError> {
        if let Some(f) = self.0.get() {
            debug_assert_eq!(f.name(), kernel.name(), "one kernel per table entry");
            return Ok(f);
        }
        let f = gpu.module.kernel(kernel)?;
        Ok(self.0.get_or_init(|| f))
    }
}

/// Declares a kernel table ([`Gpu::kernels`]): a struct of [`Resolved`] entries with one
/// type parameter, and its `Default` (every entry unresolved). Unlike `#[derive(Default)]`,
/// the `Default` puts no `Default` bound on the type parameter, which is an element or
/// marker type that has none to give; a bound written on the struct is kept on the impl.
///
/// How `vector/reduce.rs` uses it (the macro is private to the crate, so this is not a
/// doctest; the tables of `vector`, `matmul` and `attention` compile it):
///
/// ```text
/// kernel_table! {
///     /// The reductions of element type `T`.
///     struct ReduceKernels<T> {
///         reduce: [ResolvedOf<ReduceKernel<T>>; 3],
///     }
/// }
/// ```
macro_rules! kernel_table {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident<$param:ident $(: $bound:path)?> {
            $($(#[$field_attr:meta])* $field_vis:vis $field:ident: $ty:ty),+ $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis struct $name<$param $(: $bound)?> {
            $($(#[$field_attr])* $field_vis $field: $ty),+
        }

        impl<$param $(: $bound)?> Default for $name<$param> {
            fn default() -> Self {
                Self {
                    $($field: Default::default()),+
                }
            }
        }
    };
}
pub(crate) use kernel_table;

/// The types that go with a `#[kernel]` handle type `K` (e.g. an alias such as
/// `vector::ReduceKernel<f32>`): its [`TypedFunction`] and its kernel-table entry.
pub(crate) trait HandleTypes {
    /// `TypedFunction<P, S>`.
    type Function;
    /// `Resolved<P, S>`.
    type Resolved;
}

impl<P, S> HandleTypes for Kernel<P, S> {
    type Function = TypedFunction<P, S>;
    type Resolved = Resolved<P, S>;
}

/// The kernel-table entry of handle type `K`.
pub(crate) type ResolvedOf<K> = <K as HandleTypes>::Resolved;
/// The resolved function of handle type `K`.
pub(crate) type FunctionOf<K> = <K as HandleTypes>::Function;

/// Launches `function` (resolved once, [`cust::module::Module::kernel`]) with `args` on
/// `gpu`'s stream between two CUDA events and waits ([`timed`]).
pub(crate) fn run<'a, P: cuda_std::launch::ParamSizes, A: cust::launch::KernelArgs<'a, P>>(
    gpu: &'a Gpu,
    function: &cust::launch::TypedFunction<P, cuda_std::launch::Safe>,
    cfg: LaunchConfig,
    args: A,
) -> Result<Duration, GpuError> {
    timed(gpu, function.name(), cfg, || {
        function.launch(gpu.stream(), cfg, args)
    })
}

/// A kernel launch queued on a [`Gpu`]'s stream between two CUDA events and not waited for
/// ([`queue`]): the host goes on while the GPU runs it.
pub(crate) struct QueuedKernel {
    start: cust::event::Event,
    end: cust::event::Event,
    kernel: String,
    cfg: LaunchConfig,
}

impl fmt::Debug for QueuedKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueuedKernel")
            .field("kernel", &self.kernel)
            .finish_non_exhaustive()
    }
}

impl QueuedKernel {
    /// Waits for the kernel (only for it and the work queued before it, not for later work
    /// on the stream).
    ///
    /// # Errors
    /// [`GpuError::Launch`] naming the kernel and its configuration if it (or work before
    /// it) failed.
    pub(crate) fn wait(&self, gpu: &Gpu) -> Result<(), GpuError> {
        match self.end.synchronize() {
            Ok(()) => Ok(()),
            // A failed kernel fails every later call of its context: the stream's
            // synchronisation reports it as this kernel's failure, as `timed` does.
            Err(e) => gpu.sync_after(&self.kernel, self.cfg).and(Err(e)),
        }
    }

    /// The kernel's time between its events: [`QueuedKernel::wait`], then the events'
    /// elapsed time.
    ///
    /// # Errors
    /// As [`QueuedKernel::wait`], or a driver error of the events.
    pub(crate) fn time(&self, gpu: &Gpu) -> Result<Duration, GpuError> {
        self.wait(gpu)?;
        self.end.elapsed(&self.start)
    }
}

/// Queues `function` with `args` on `gpu`'s stream between two CUDA events and returns
/// without waiting ([`QueuedKernel::time`] waits and reads the time): [`run`] without the
/// wait, so that the host can work while the GPU runs it.
///
/// # Errors
/// A launch error (bad configuration or arguments) or a driver error of the events.
pub(crate) fn queue<'a, P: cuda_std::launch::ParamSizes, A: cust::launch::KernelArgs<'a, P>>(
    gpu: &'a Gpu,
    function: &cust::launch::TypedFunction<P, cuda_std::launch::Safe>,
    cfg: LaunchConfig,
    args: A,
) -> Result<QueuedKernel, GpuError> {
    use cust::event::{Event, EventFlags};
    let start = Event::new_in(gpu.context(), EventFlags::DEFAULT)?;
    start.record(gpu.stream())?;
    function.launch(gpu.stream(), cfg, args)?;
    let end = Event::new_in(gpu.context(), EventFlags::DEFAULT)?;
    end.record(gpu.stream())?;
    Ok(QueuedKernel {
        start,
        end,
        kernel: function.name().to_owned(),
        cfg,
    })
}

/// Runs `launch` between two CUDA events, waits (a failure names `kernel` and `cfg`), and
/// returns the time between the events.
pub(crate) fn timed(
    gpu: &Gpu,
    kernel: &str,
    cfg: LaunchConfig,
    launch: impl FnOnce() -> Result<(), GpuError>,
) -> Result<Duration, GpuError> {
    crate::timing::event_time(gpu.context(), gpu.stream(), launch, || {
        gpu.sync_after(kernel, cfg)
    })
}
