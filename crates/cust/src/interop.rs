//! cudarc for the crates built over it beside cust (`blastoff`, over cuBLAS) and the
//! driver's raw handles for C libraries (CUB): the `as_cudarc` / `from_cudarc` accessors of
//! [`Context`], [`Stream`], [`Event`], [`Module`] and [`Function`], [`Stream::as_inner`],
//! cudarc's memory traits (`DeviceSlice`, `DevicePtr`, `DevicePtrMut`) on cust's buffers, and
//! cudarc's `DeviceRepr` on [`DevicePointer`].
//!
//! All of it is the GPU backend's ([`crate::backend::driver`]): on the CPU emulator the
//! accessors and traits panic, saying so. Applications use cust's own methods; the root
//! `clippy.toml` bans the `as_cudarc` accessors outside cust and blastoff.

use crate::{
    backend::{
        self,
        driver::{self, Byte},
    },
    context::Context,
    event::Event,
    function::Function,
    memory::{
        DeviceCopy, ValidAsZeroBits,
        device::{DeviceBox, DeviceBuffer, DeviceSlice, DeviceSliceMut},
        pointer::DevicePointer,
        unified::UnifiedBuffer,
    },
    module::Module,
    stream::{RawStream, Stream},
};
use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr,
    DevicePtrMut, DeviceRepr, DeviceSlice as CudarcSlice, SyncOnDrop, UnifiedSlice, sys,
};
use std::{ffi::c_void, sync::Arc};

impl Context {
    /// Wraps a cudarc context (does not make it current).
    pub fn from_cudarc(inner: Arc<CudaContext>) -> Self {
        Self::from_backend(driver::Gpu::wrap(inner))
    }

    /// The cudarc context, for crates built over cudarc beside this one (e.g. `blastoff`);
    /// applications use [`Context`]'s own methods.
    ///
    /// # Panics
    /// On the CPU emulator, which has no CUDA context (check [`Context::is_emulator`]).
    pub fn as_cudarc(&self) -> &Arc<CudaContext> {
        driver::cuda_context(&**self.backend()).unwrap_or_else(|| {
            panic!(
                "Context::as_cudarc: the CPU emulator has no CUDA context (cudarc-based \
                 libraries such as cuBLAS need a GPU)"
            )
        })
    }
}

impl Stream {
    /// Wraps a cudarc stream.
    pub fn from_cudarc(inner: Arc<CudaStream>) -> Self {
        let ctx = Context::from_cudarc(inner.context().clone());
        Self::from_parts(ctx, driver::wrap_stream(inner), 0)
    }

    /// The driver's stream handle (`CUstream`), for passing to C/C++ libraries that take a
    /// `cudaStream_t` (e.g. CUB); cust 0.3's `as_inner`. The stream stays valid while `self`
    /// lives. Null for the CPU emulator's stream.
    pub fn as_inner(&self) -> RawStream {
        driver::cuda_stream(self.queue())
            .map_or(std::ptr::null_mut(), |s| s.cu_stream().cast::<c_void>())
    }

    /// The cudarc stream, for crates built over cudarc beside this one (e.g. `blastoff`);
    /// applications use [`Stream`]'s own methods.
    ///
    /// # Panics
    /// On the CPU emulator, which has no CUDA stream (check [`Stream::is_emulator`]).
    pub fn as_cudarc(&self) -> &Arc<CudaStream> {
        driver::cuda_stream(self.queue()).unwrap_or_else(|| {
            panic!(
                "Stream::as_cudarc: the CPU emulator has no CUDA stream (cudarc-based \
                 libraries such as cuBLAS need a GPU)"
            )
        })
    }
}

impl Event {
    /// The cudarc event.
    ///
    /// # Panics
    /// For an event of the CPU emulator, which has no CUDA event.
    pub fn as_cudarc(&self) -> &CudaEvent {
        driver::cuda_event(self.inner())
            .unwrap_or_else(|| panic!("Event::as_cudarc: the CPU emulator has no CUDA event"))
    }
}

impl Module {
    /// The cudarc module.
    ///
    /// # Panics
    /// For a module of the CPU emulator, which loads no code ([`Module::is_emulator`]).
    pub fn as_cudarc(&self) -> &Arc<CudaModule> {
        driver::cuda_module(self.code()).unwrap_or_else(|| {
            panic!("Module::as_cudarc: a CPU-emulator module has no CUDA module")
        })
    }
}

impl Function {
    /// The cudarc function, for crates built over cudarc beside this one (e.g. `blastoff`).
    ///
    /// # Panics
    /// For a function of a CPU-emulator module, which has no code.
    pub fn as_cudarc(&self) -> &CudaFunction {
        driver::cuda_function(self.code()).unwrap_or_else(|| {
            panic!("Function::as_cudarc: a CPU-emulator function has no CUDA function")
        })
    }
}

// SAFETY: a device address is a plain 64-bit integer on both sides.
unsafe impl<T> DeviceRepr for DevicePointer<T> {}

/// The panic message of cudarc's traits on emulator memory.
const NO_CUDARC: &str = "cudarc's DevicePtr/DeviceSlice traits need GPU memory: this buffer \
                         lives on the CPU emulator (cudarc-based libraries such as cuBLAS need \
                         a GPU)";

fn gpu(memory: &dyn backend::Memory) -> &CudaSlice<Byte> {
    driver::cuda_memory(memory).unwrap_or_else(|| panic!("{NO_CUDARC}"))
}

fn gpu_mut(memory: &mut dyn backend::Memory) -> &mut CudaSlice<Byte> {
    driver::cuda_memory_mut(memory).unwrap_or_else(|| panic!("{NO_CUDARC}"))
}

/// Implements cudarc's `DeviceSlice<T>` and `DevicePtr<T>` for a buffer or view whose
/// `$memory()` gives its backend memory and byte range: a view of the GPU allocation, so
/// cudarc orders the use as for its own slices.
macro_rules! cudarc_memory {
    ([$($generics:tt)*] $ty:ty, $memory:ident) => {
        impl<$($generics)*> CudarcSlice<T> for $ty {
            fn len(&self) -> usize {
                <$ty>::len(self)
            }
            fn stream(&self) -> &Arc<CudaStream> {
                CudarcSlice::stream(gpu(self.$memory().0))
            }
        }

        impl<$($generics)*> DevicePtr<T> for $ty {
            fn device_ptr<'a>(
                &'a self,
                stream: &'a CudaStream,
            ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
                let (memory, range) = self.$memory();
                gpu(memory).slice(range).view_ptr(stream)
            }
        }
    };
}

/// As [`cudarc_memory!`], `DevicePtrMut<T>` through the writable accessor `$memory_mut()`.
macro_rules! cudarc_memory_mut {
    ([$($generics:tt)*] $ty:ty, $memory_mut:ident) => {
        impl<$($generics)*> DevicePtrMut<T> for $ty {
            fn device_ptr_mut<'a>(
                &'a mut self,
                stream: &'a CudaStream,
            ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
                let (memory, range) = self.$memory_mut();
                gpu_mut(memory).slice_mut(range).view_ptr_mut(stream)
            }
        }
    };
}

cudarc_memory!([T: DeviceCopy] DeviceBuffer<T>, memory);
cudarc_memory_mut!([T: DeviceCopy] DeviceBuffer<T>, memory_mut);
cudarc_memory!(['s, T: DeviceCopy] DeviceSlice<'s, T>, memory);
cudarc_memory!(['s, T: DeviceCopy] DeviceSliceMut<'s, T>, memory);
cudarc_memory_mut!(['s, T: DeviceCopy] DeviceSliceMut<'s, T>, memory_mut);

// `len` is the inner buffer's, always 1.
impl<T: DeviceCopy> CudarcSlice<T> for DeviceBox<T> {
    fn len(&self) -> usize {
        self.buffer().len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        CudarcSlice::stream(self.buffer())
    }
}

impl<T: DeviceCopy> DevicePtr<T> for DeviceBox<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buffer().device_ptr(stream)
    }
}

impl<T: DeviceCopy> DevicePtrMut<T> for DeviceBox<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        self.buffer_mut().device_ptr_mut(stream)
    }
}

fn managed(memory: &dyn backend::Managed) -> &UnifiedSlice<Byte> {
    driver::cuda_managed(memory).unwrap_or_else(|| panic!("{NO_CUDARC}"))
}

impl<T: DeviceCopy + ValidAsZeroBits> CudarcSlice<T> for UnifiedBuffer<T> {
    fn len(&self) -> usize {
        UnifiedBuffer::len(self)
    }
    fn stream(&self) -> &Arc<CudaStream> {
        CudarcSlice::stream(managed(self.managed()))
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> DevicePtr<T> for UnifiedBuffer<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        managed(self.managed()).device_ptr(stream)
    }
}

impl<T: DeviceCopy + ValidAsZeroBits> DevicePtrMut<T> for UnifiedBuffer<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        driver::cuda_managed_mut(self.managed_mut())
            .unwrap_or_else(|| panic!("{NO_CUDARC}"))
            .device_ptr_mut(stream)
    }
}
