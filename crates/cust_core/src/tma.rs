//! [`TensorMap`]: a TMA tensor descriptor (CUDA's `CUtensorMap`), shared by the host, which
//! encodes it (`cust::tma`), and the kernels, which read it (`cuda_std::tma`).

use crate::DeviceCopy;

/// A TMA tensor descriptor: the 128 opaque bytes of CUDA's `CUtensorMap`, 64-byte aligned
/// (CUDA Driver API, "Tensor Map Object Management": `CU_TENSOR_MAP_NUM_QWORDS` = 16).
///
/// Encoded on the host (`cuTensorMapEncodeTiled`); kernels take it as `*const TensorMap`
/// pointing to a 64-byte-aligned copy in global memory (a by-value kernel parameter of
/// alignment 64 is not supported by rustc's nvptx backend).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct TensorMap {
    /// The descriptor's bytes, as the driver wrote them.
    pub opaque: [u64; 16],
}

// SAFETY: plain bytes, no pointers into host memory (the global address the descriptor
// holds is a device address).
unsafe impl DeviceCopy for TensorMap {}

#[cfg(test)]
mod tests {
    use super::TensorMap;

    #[test]
    fn layout_matches_cutensormap() {
        // CUDA's cuda.h: `typedef struct CUtensorMap_st { alignas(64) cuuint64_t
        // opaque[CU_TENSOR_MAP_NUM_QWORDS]; }` with CU_TENSOR_MAP_NUM_QWORDS = 16.
        assert_eq!(core::mem::size_of::<TensorMap>(), 128);
        assert_eq!(core::mem::align_of::<TensorMap>(), 64);
    }
}
