//! [`TensorMap`]: a TMA tensor map (CUDA's `CUtensorMap`), the descriptor that Hopper's
//! tensor memory accelerator reads to copy tiles between global and shared memory
//! (`cp.async.bulk.tensor`, PTX ISA 9.7.9.25).
//!
//! The host encodes one (`cust::tma::TensorMap::tiled_2d`, over the driver's
//! `cuTensorMapEncodeTiled`), copies it to device memory (a `DeviceBox<TensorMap>`) and
//! passes the kernel its pointer; the kernel hands that pointer to `cuda_std::tma`'s copies.
//! The bytes are opaque: only the driver writes them and only the hardware reads them.

use crate::DeviceCopy;

/// A TMA tensor map: 128 opaque bytes, 64-byte aligned, with the size and alignment of the
/// driver's `CUtensorMap` (CUDA Driver API, "Tensor Map Object Management").
///
/// Made on the host by `cust::tma::TensorMap::tiled_2d`; read on the device through a
/// `*const TensorMap` into global memory (a kernel parameter of this type by value cannot
/// be aligned to 64 bytes by rustc, and TMA cannot read a copy in local memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
pub struct TensorMap {
    /// The driver's encoding (`CUtensorMap::opaque`).
    pub opaque: [u64; 16],
}

// SAFETY: `#[repr(C)]`, 16 `u64`s and no pointers the device dereferences as host
// addresses (the global address it encodes is a device address); every bit pattern is a
// valid value of the type (the hardware checks the encoding when it uses it).
unsafe impl DeviceCopy for TensorMap {}

// The driver's `CUtensorMap` is 128 bytes, 64-byte aligned (cuda.h: `CU_TENSOR_MAP_NUM_QWORDS`
// = 16, `alignas(64)`).
const _: () = assert!(core::mem::size_of::<TensorMap>() == 128);
const _: () = assert!(core::mem::align_of::<TensorMap>() == 64);
