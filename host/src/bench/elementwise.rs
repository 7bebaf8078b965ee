//! What the vector workloads launch, shared by both implementations: our kernels
//! ([`super::vectors`]) and their CUDA C twins ([`super::twins`]): the STREAM-style
//! elementwise operation and the device buffers of one element type.

use crate::vector::{Element, Scratch};
use cust::memory::DeviceBuffer;

/// A STREAM-style operation, for launching either implementation with the same shape.
#[derive(Clone, Copy, Debug)]
pub(super) enum StreamOp {
    Copy,
    Scale,
    Add,
    Triad,
    Axpy,
}

impl StreamOp {
    pub(super) const ALL: [StreamOp; 5] =
        [Self::Copy, Self::Scale, Self::Add, Self::Triad, Self::Axpy];
    pub(super) fn index(self) -> usize {
        self as usize
    }
    pub(super) fn name(self) -> &'static str {
        ["copy", "scale", "add", "triad", "axpy"][self.index()]
    }
    /// Words moved per element (STREAM counting).
    pub(super) fn words(self) -> u64 {
        [2, 2, 3, 3, 3][self.index()]
    }
}

/// Device buffers for the vector workloads of one element type.
pub(super) struct Vectors<T: Element> {
    pub(super) a: DeviceBuffer<T>,
    pub(super) b: DeviceBuffer<T>,
    pub(super) c: DeviceBuffer<T>,
    pub(super) scratch: Scratch<T>,
}
