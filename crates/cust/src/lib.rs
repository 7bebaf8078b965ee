//! `cust`: ferrocuda's host runtime, over [cudarc](https://docs.rs/cudarc) (no CUDA toolkit
//! needed to build; the driver is loaded at run time).
//!
//! Its names and shapes follow Rust-CUDA's `cust` 0.3, so Rust-CUDA host programs port with
//! few edits:
//!
//! ```no_run
//! use cust::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # const PTX: &str = "";
//! let _ctx = cust::quick_init()?;
//! let module = Module::from_ptx(PTX, &[])?;
//! let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! let a = [1.0f32, 2.0, 3.0].as_dbuf()?;
//! let b = [4.0f32, 5.0, 6.0].as_dbuf()?;
//! let c = DeviceBuffer::<f32>::zeroed(3)?;
//! let func = module.get_function("vecadd")?;
//! let (_, block) = func.suggested_launch_configuration(0, 0.into())?;
//! let grid = 3u32.div_ceil(block);
//! unsafe {
//!     launch!(func<<<grid, block, 0, stream>>>(
//!         a.as_device_ptr(), a.len(), b.as_device_ptr(), b.len(), c.as_device_ptr()
//!     ))?;
//! }
//! stream.synchronize()?;
//! let mut out = [0.0f32; 3];
//! c.copy_to(&mut out)?;
//! # Ok(())
//! # }
//! ```
//!
//! With a `cuda_builder` kernels crate, the recommended path is the typed launch of the
//! `#[kernel]` handle ([`mod@launch`]), which checks argument kinds at compile time and sizes at
//! run time, on a module loaded from the builder's [`ModuleImage`](module::ModuleImage).
//!
//! Modules: [`device`] ([`Device`](device::Device)), [`context`]
//! ([`Context`](context::Context), [`quick_init`]), [`module`], [`function`], [`stream`],
//! [`event`], [`graph`], [`memory`], [`util`], [`pool`], [`nccl`], [`mod@launch`], [`tma`]
//! (TMA tensor maps), [`error`] ([`CudaError`]), [`prelude`].
//!
//! Conventions: sizes are in elements unless a name says `bytes`; times are milliseconds
//! where a name says `ms` or `f32`; grid dimensions are in blocks, block dimensions in
//! threads.
//!
//! Every public type runs on a GPU (through cudarc) or on the CPU emulator
//! ([`Context::emulator`](context::Context::emulator)), by holding the objects of one
//! backend behind one seam (the private `backend` module); the `as_cudarc` accessors for
//! crates built over cudarc live apart, in the private `interop` module.

mod backend;
pub mod context;
pub mod device;
pub mod error;
pub mod event;
pub mod function;
pub mod graph;
mod interop;
pub mod launch;
mod launch_config;
pub mod memory;
pub mod module;
pub mod nccl;
pub mod pool;
pub mod stream;
pub mod tma;
pub mod util;

pub use context::quick_init;
pub use device::init;
pub use error::{CudaError, CudaResult, GpuContext};

/// Everything a typical host program uses.
pub mod prelude {
    pub use crate::context::{Context, CurrentContext, DeviceChoice};
    pub use crate::device::Device;
    pub use crate::error::{CudaError, CudaResult, GpuContext};
    pub use crate::event::{Event, EventFlags, EventStatus};
    pub use crate::function::{BlockSize, Function, GridSize, LaunchConfig};
    pub use crate::graph::Graph;
    pub use crate::launch;
    pub use crate::launch::{Launch, LaunchUnchecked, TypedFunction};
    pub use crate::memory::{
        AsyncCopyDestination, CopyDestination, DeviceBox, DeviceBuffer, DeviceCopy, DevicePointer,
        DeviceSlice, DeviceSliceMut, LockedBuffer, UnifiedBox, UnifiedBuffer,
    };
    pub use crate::module::Module;
    pub use crate::stream::{Stream, StreamFlags, StreamFuture};
    pub use crate::tma::{TensorMap, TensorMapExt, TmaSwizzle};
    pub use crate::util::{DeviceCopyExt, SliceExt};
}
