//! The CPU device behind [`Context::emulator`](crate::context::Context::emulator): host
//! allocations standing for device memory, and the registry of live ones that every emulated
//! launch passes to `cuda_emu` for its bounds check.

use crate::error::{CudaError, CudaResult};
use cuda_emu::HostBuffer;
use std::{
    alloc::Layout,
    collections::BTreeMap,
    ptr::NonNull,
    sync::{Arc, Mutex},
};

/// Alignment of every emulator allocation, bytes: `cudaMalloc`'s guarantee (CUDA C
/// Programming Guide, "Device Memory": at least 256 bytes).
const ALIGN_BYTES: usize = 256;

/// One CPU device: its live allocations (address → bytes).
#[derive(Debug)]
pub(crate) struct CpuDevice {
    allocations: Mutex<BTreeMap<usize, usize>>,
}

impl CpuDevice {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            allocations: Mutex::new(BTreeMap::new()),
        })
    }

    /// Every live allocation, for `EmuOptions::buffers`.
    pub(crate) fn buffers(&self) -> Vec<HostBuffer> {
        self.allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(&address, &bytes)| HostBuffer { address, bytes })
            .collect()
    }
}

/// A zero-filled host allocation of `bytes` bytes that stands for device memory; registered
/// with its device while alive.
#[derive(Debug)]
pub(crate) struct CpuMem {
    ptr: NonNull<u8>,
    bytes: usize,
    device: Arc<CpuDevice>,
}

// SAFETY: `CpuMem` owns its allocation like a `Box<[u8]>`; access is ordered by the borrow
// rules of the buffer types that own it (and by the emulator's launch contract).
unsafe impl Send for CpuMem {}
// SAFETY: as above; `&CpuMem` only reads the pointer.
unsafe impl Sync for CpuMem {}

impl CpuMem {
    /// `bytes` zeroed bytes on `device`.
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] if the host cannot allocate them.
    pub(crate) fn zeroed(
        device: &Arc<CpuDevice>,
        what: &'static str,
        bytes: usize,
    ) -> CudaResult<Self> {
        let layout = Self::layout(bytes).ok_or(CudaError::OutOfMemory {
            what,
            bytes,
            free: isize::MAX as usize,
        })?;
        // SAFETY: the layout has a non-zero size (at least one byte).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(CudaError::OutOfMemory {
            what,
            bytes,
            free: 0,
        })?;
        device
            .allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(ptr.as_ptr() as usize, bytes);
        Ok(Self {
            ptr,
            bytes,
            device: device.clone(),
        })
    }

    fn layout(bytes: usize) -> Option<Layout> {
        Layout::from_size_align(bytes.max(1), ALIGN_BYTES).ok()
    }

    /// The first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for CpuMem {
    fn drop(&mut self) {
        self.device
            .allocations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(self.ptr.as_ptr() as usize));
        if let Some(layout) = Self::layout(self.bytes) {
            // SAFETY: allocated in `zeroed` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}

/// The backend names used in [`CudaError::BackendMismatch`].
pub(crate) const GPU: &str = "the GPU";
/// As [`GPU`].
pub(crate) const CPU: &str = "the CPU emulator";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_zeroed_aligned_and_registered_while_alive() {
        let dev = CpuDevice::new();
        let a = CpuMem::zeroed(&dev, "test", 100).unwrap();
        assert_eq!(a.as_ptr() as usize % ALIGN_BYTES, 0);
        // SAFETY: 100 bytes were allocated (and zeroed) and `a` is alive.
        let bytes = unsafe { std::slice::from_raw_parts(a.as_ptr(), 100) };
        assert!(bytes.iter().all(|&b| b == 0));
        let b = CpuMem::zeroed(&dev, "test", 0).unwrap();
        let buffers = dev.buffers();
        assert_eq!(buffers.len(), 2);
        assert!(buffers.contains(&HostBuffer {
            address: a.as_ptr() as usize,
            bytes: 100
        }));
        drop(a);
        drop(b);
        assert!(dev.buffers().is_empty());
    }

    /// What the emulator cannot do is a `NotOnEmulator` error naming it, never a panic;
    /// pinned and unified memory work in host memory.
    #[test]
    fn gpu_only_operations_are_errors_and_host_memory_kinds_work_on_the_emulator() {
        use crate::{
            context::Context,
            graph::ComputeGraph,
            memory::{AsyncCopyDestination, DeviceBuffer, LockedBuffer, UnifiedBuffer},
            nccl::Communicators,
            stream::Stream,
            tma::{TensorMap, TensorMapExt, TmaSwizzle},
        };
        let ctx = Context::emulator();
        let stream = Stream::default_of(&ctx);
        let not_here = |r: CudaResult<()>, what: &str| match r {
            Err(CudaError::NotOnEmulator { operation }) => {
                assert!(operation.contains(what), "{operation}");
            }
            other => panic!("{what}: expected NotOnEmulator, got {other:?}"),
        };
        not_here(stream.capture(|_| Ok(())).map(drop), "graph");
        let mut g = ComputeGraph::new();
        g.node("a", &[]).unwrap();
        not_here(g.build(&stream, |_, _| Ok(())).map(drop), "graph");
        not_here(
            Communicators::new(std::slice::from_ref(&stream)).map(drop),
            "NCCL",
        );
        let buf = DeviceBuffer::<f32>::zeroed_in(&ctx, 1024).unwrap();
        let map = TensorMap::tiled_2d(
            buf.as_device_ptr(),
            [32, 32],
            128,
            [32, 8],
            TmaSwizzle::None,
        );
        not_here(map.map(drop), "TMA");

        let src: Vec<f32> = (0..1000).map(|i| i as f32).collect();
        let pinned = LockedBuffer::from_slice(&src).unwrap();
        assert!(pinned.is_emulator());
        let mut dev = DeviceBuffer::<f32>::zeroed_in(&ctx, 1000).unwrap();
        dev.async_copy_from(&pinned, &stream).unwrap();
        let mut back = LockedBuffer::new_in(&ctx, &-1.0, 1500).unwrap();
        back.async_copy_prefix_from(&dev, &stream).unwrap();
        assert_eq!(&back[..1000], &src[..]);
        assert!(back[1000..].iter().all(|&v| v == -1.0));

        let mut unified = UnifiedBuffer::from_slice(&src).unwrap();
        assert!(unified.is_emulator());
        unified.prefetch_to_device().unwrap();
        unified.prefetch_to_host(&stream).unwrap();
        unified.as_mut_slice().unwrap()[3] = 7.5;
        assert_eq!(unified.as_slice().unwrap()[..4], [0.0, 1.0, 2.0, 7.5]);
        // Registered with the device, so emulated launches may use it.
        assert!(ctx.cpu().unwrap().buffers().iter().any(|b| b.bytes == 4000));
    }
}
