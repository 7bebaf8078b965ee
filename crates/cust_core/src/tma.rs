//! [`TensorMap`]: a TMA tensor map (CUDA's `CUtensorMap`), the descriptor that Hopper's
//! tensor memory accelerator reads to copy tiles between global and shared memory
//! (`cp.async.bulk.tensor`, PTX ISA 9.7.9.25).
//!
//! The host encodes one (`cust::tma::TensorMap::tiled_2d`, over the driver's
//! `cuTensorMapEncodeTiled`), copies it to device memory (a `DeviceBox<TensorMap>`) and
//! passes the kernel its pointer; the kernel hands that pointer to `cuda_std::tma`'s copies.
//! The driver's bytes are opaque: only the driver writes them and only the hardware reads
//! them. The CPU device writes its own layout instead ([`TensorMap::encode_cpu`], read back
//! by the emulator with [`TensorMap::decode_cpu`]); both encoders first check the same
//! rules ([`Tiled2d::check`]).

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

/// The shared-memory swizzle of a TMA copy (`CUtensorMapSwizzle`): the one
/// [`Swizzle`](crate::tile::Swizzle) definition, which `wgmma` descriptors use too. The inner
/// box dimension, in bytes, must not exceed the swizzle's span.
pub use crate::tile::Swizzle as TmaSwizzle;

/// Global dimensions at most, elements (`cuTensorMapEncodeTiled`: "globalDim ... must be
/// non-zero and less than or equal to 2^32").
pub const MAX_GLOBAL_DIM: u64 = 1 << 32;
/// Global strides must be below this, bytes (same: "less than 2^40").
pub const MAX_GLOBAL_STRIDE_BYTES: u64 = 1 << 40;
/// Box dimensions at most, elements (same: "boxDim ... less than or equal to 256").
pub const MAX_BOX_DIM: u32 = 256;

/// A 2-D tiled tensor map, as its fields: a row-major array of `dims[1]` rows of `dims[0]`
/// elements of `elem_bytes` bytes at device address `base_addr`, rows `row_stride_bytes`
/// apart, copied in boxes of `box_dims[1]` rows of `box_dims[0]` elements with `swizzle`
/// (dimensions innermost first, as `cuTensorMapEncodeTiled` takes them; no interleave,
/// element strides 1; elements outside the tensor read as zeros). What both backends
/// encode: the CUDA driver into its opaque format, the CPU device into
/// [`TensorMap::encode_cpu`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiled2d {
    /// The first element's device address.
    pub base_addr: u64,
    /// Bytes per element (1, 2, 4 or 8).
    pub elem_bytes: u32,
    /// `[columns, rows]` of the tensor, elements.
    pub dims: [u64; 2],
    /// Bytes from one row to the next.
    pub row_stride_bytes: u64,
    /// `[columns, rows]` of a box, elements.
    pub box_dims: [u32; 2],
    /// The shared-memory layout of a box.
    pub swizzle: TmaSwizzle,
}

/// A rule of `cuTensorMapEncodeTiled` (CUDA Driver API, "Tensor Map Object Management")
/// that a [`Tiled2d`] breaks, with the value; its `Display` says which and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorMapError {
    /// The base address is not a multiple of 16 bytes.
    BaseAlignment {
        /// The address.
        base_addr: u64,
    },
    /// A global dimension is outside `1..=2^32`.
    GlobalDim {
        /// 0 (columns) or 1 (rows).
        index: usize,
        /// The value.
        value: u64,
    },
    /// The row stride is not a multiple of 16 bytes.
    StrideAlignment {
        /// The stride, bytes.
        row_stride_bytes: u64,
    },
    /// The row stride is 2⁴⁰ bytes or more.
    StrideTooLarge {
        /// The stride, bytes.
        row_stride_bytes: u64,
    },
    /// The row stride is shorter than a row.
    StrideBelowRow {
        /// The stride, bytes.
        row_stride_bytes: u64,
        /// Elements per row.
        columns: u64,
        /// Bytes per element.
        elem_bytes: u32,
    },
    /// A box dimension is outside `1..=256`.
    BoxDim {
        /// 0 (columns) or 1 (rows).
        index: usize,
        /// The value.
        value: u32,
    },
    /// The inner box dimension is not a multiple of 16 bytes.
    InnerBoxAlignment {
        /// Box columns.
        columns: u32,
        /// Bytes per element.
        elem_bytes: u32,
    },
    /// With a swizzle, the inner box dimension exceeds its span.
    InnerBoxOverSpan {
        /// The swizzle span, bytes.
        span: u32,
        /// Box columns.
        columns: u32,
        /// Bytes per element.
        elem_bytes: u32,
    },
    /// The element size is not 1, 2, 4 or 8 bytes.
    ElemBytes {
        /// The size.
        elem_bytes: u32,
    },
}

impl core::fmt::Display for TensorMapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::BaseAlignment { base_addr } => write!(
                f,
                "the base address must be 16-byte aligned; {base_addr:#x} is {} bytes past a \
                 multiple of 16",
                base_addr % 16
            ),
            Self::GlobalDim { index, value } => write!(
                f,
                "global dimension {index} must be in 1..=2^32 elements; it is {value}"
            ),
            Self::StrideAlignment { row_stride_bytes } => write!(
                f,
                "the row stride must be a multiple of 16 bytes; it is {row_stride_bytes} bytes"
            ),
            Self::StrideTooLarge { row_stride_bytes } => write!(
                f,
                "the row stride must be below 2^40 bytes; it is {row_stride_bytes} bytes"
            ),
            Self::StrideBelowRow {
                row_stride_bytes,
                columns,
                elem_bytes,
            } => write!(
                f,
                "the row stride must hold a row of {columns} elements of {elem_bytes} bytes \
                 ({} bytes); it is {row_stride_bytes} bytes",
                columns * u64::from(elem_bytes)
            ),
            Self::BoxDim { index, value } => write!(
                f,
                "box dimension {index} must be in 1..=256 elements; it is {value}"
            ),
            Self::InnerBoxAlignment {
                columns,
                elem_bytes,
            } => write!(
                f,
                "the inner box dimension must be a multiple of 16 bytes; {columns} elements of \
                 {elem_bytes} bytes are {} bytes",
                u64::from(columns) * u64::from(elem_bytes)
            ),
            Self::InnerBoxOverSpan {
                span,
                columns,
                elem_bytes,
            } => write!(
                f,
                "with the {span}-byte swizzle the inner box dimension must be at most {span} \
                 bytes; {columns} elements of {elem_bytes} bytes are {} bytes",
                u64::from(columns) * u64::from(elem_bytes)
            ),
            Self::ElemBytes { elem_bytes } => write!(
                f,
                "the element size must be 1, 2, 4 or 8 bytes; it is {elem_bytes}"
            ),
        }
    }
}

impl core::error::Error for TensorMapError {}

impl Tiled2d {
    /// Checks the map against the rules of `cuTensorMapEncodeTiled` (no interleave, element
    /// strides 1), without the driver: what both backends check before encoding.
    ///
    /// # Errors
    /// The first rule broken ([`TensorMapError`]), in this order:
    /// - the element size is 1, 2, 4 or 8 bytes;
    /// - the base address is a multiple of 16 bytes;
    /// - each global dimension is in 1..=2^32;
    /// - the row stride is a multiple of 16 bytes, below 2^40, and at least a row
    ///   (`dims[0] * elem_bytes`);
    /// - each box dimension is in 1..=256;
    /// - the inner box dimension in bytes (`box_dims[0] * elem_bytes`) is a multiple of 16;
    /// - with a swizzle, the inner box dimension in bytes is at most the swizzle's span (32,
    ///   64 or 128).
    pub const fn check(&self) -> Result<(), TensorMapError> {
        let Self {
            base_addr,
            elem_bytes,
            dims,
            row_stride_bytes,
            box_dims,
            swizzle,
        } = *self;
        if !matches!(elem_bytes, 1 | 2 | 4 | 8) {
            return Err(TensorMapError::ElemBytes { elem_bytes });
        }
        if !base_addr.is_multiple_of(16) {
            return Err(TensorMapError::BaseAlignment { base_addr });
        }
        let mut index = 0;
        while index < 2 {
            let value = dims[index];
            if value == 0 || value > MAX_GLOBAL_DIM {
                return Err(TensorMapError::GlobalDim { index, value });
            }
            index += 1;
        }
        if !row_stride_bytes.is_multiple_of(16) {
            return Err(TensorMapError::StrideAlignment { row_stride_bytes });
        }
        if row_stride_bytes >= MAX_GLOBAL_STRIDE_BYTES {
            return Err(TensorMapError::StrideTooLarge { row_stride_bytes });
        }
        if row_stride_bytes < dims[0] * elem_bytes as u64 {
            return Err(TensorMapError::StrideBelowRow {
                row_stride_bytes,
                columns: dims[0],
                elem_bytes,
            });
        }
        let mut index = 0;
        while index < 2 {
            let value = box_dims[index];
            if value == 0 || value > MAX_BOX_DIM {
                return Err(TensorMapError::BoxDim { index, value });
            }
            index += 1;
        }
        let inner_bytes = box_dims[0] * elem_bytes;
        if !inner_bytes.is_multiple_of(16) {
            return Err(TensorMapError::InnerBoxAlignment {
                columns: box_dims[0],
                elem_bytes,
            });
        }
        if let Some(span) = swizzle.span_bytes()
            && inner_bytes > span
        {
            return Err(TensorMapError::InnerBoxOverSpan {
                span,
                columns: box_dims[0],
                elem_bytes,
            });
        }
        Ok(())
    }

    /// Bytes of one box in shared memory (what a load completes on its mbarrier).
    #[must_use]
    pub const fn box_bytes(&self) -> u32 {
        self.box_dims[0] * self.box_dims[1] * self.elem_bytes
    }
}

/// The first word of a tensor map encoded for the CPU device: `b"fc-tmap"` and the layout's
/// version (`1`), little-endian.
pub const CPU_MAGIC: u64 = u64::from_le_bytes(*b"fc-tmap\x01");

/// Why [`TensorMap::decode_cpu`] refused a map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The map does not start with [`CPU_MAGIC`]: the CUDA driver encoded it (its format is
    /// opaque: only a GPU reads it), or it was never encoded.
    NotCpuEncoded,
    /// The check word does not match the fields: the map was changed after encoding.
    Corrupt,
    /// A field holds a value no encoder writes.
    BadField,
    /// The fields break a rule of the hardware.
    Rule(TensorMapError),
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotCpuEncoded => f.write_str(
                "the tensor map was not encoded for the CPU device (a map from the CUDA \
                 driver is opaque and runs on a GPU only; encode it with \
                 `cust::tma::TensorMap::tiled_2d` in the emulator's context)",
            ),
            Self::Corrupt => f.write_str(
                "the tensor map's check word does not match its fields (it was modified \
                 after encoding)",
            ),
            Self::BadField => f.write_str("the tensor map holds a field no encoder writes"),
            Self::Rule(e) => write!(f, "the tensor map breaks a hardware rule: {e}"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// The check word of a CPU-encoded map: a multiply-xorshift fold of words 0..15.
const fn check_word(words: &[u64; 16]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut i = 0;
    while i < 15 {
        h = (h ^ words[i]).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 31;
        i += 1;
    }
    h
}

impl TensorMap {
    /// Encodes `map` for the CPU device (the emulator's TMA unit), after checking it
    /// ([`Tiled2d::check`]). ferrocuda's layout, version 1, in the 16 words:
    ///
    /// | word | content |
    /// |---|---|
    /// | 0 | [`CPU_MAGIC`] (`b"fc-tmap\x01"`: the layout and its version) |
    /// | 1 | base address |
    /// | 2, 3 | global dimensions (columns, rows) |
    /// | 4 | row stride, bytes |
    /// | 5 | box columns (bits 0–31), box rows (bits 32–63) |
    /// | 6 | element bytes (bits 0–7), swizzle as `CUtensorMapSwizzle` (bits 8–15), out-of-bounds fill (bits 16–23: 0, zeros) |
    /// | 7–14 | 0 |
    /// | 15 | check word over words 0–14 |
    ///
    /// # Errors
    /// The rule `map` breaks.
    pub const fn encode_cpu(map: &Tiled2d) -> Result<Self, TensorMapError> {
        if let Err(e) = map.check() {
            return Err(e);
        }
        let mut opaque = [0u64; 16];
        opaque[0] = CPU_MAGIC;
        opaque[1] = map.base_addr;
        opaque[2] = map.dims[0];
        opaque[3] = map.dims[1];
        opaque[4] = map.row_stride_bytes;
        opaque[5] = map.box_dims[0] as u64 | ((map.box_dims[1] as u64) << 32);
        opaque[6] = map.elem_bytes as u64 | (map.swizzle.tensor_map_code() << 8);
        opaque[15] = check_word(&opaque);
        Ok(Self { opaque })
    }

    /// Whether the map is in the CPU device's layout ([`TensorMap::encode_cpu`]).
    #[must_use]
    pub const fn is_cpu_encoded(&self) -> bool {
        self.opaque[0] == CPU_MAGIC
    }

    /// The fields of a map [`TensorMap::encode_cpu`] wrote.
    ///
    /// # Errors
    /// [`DecodeError::NotCpuEncoded`] for a driver's map, [`DecodeError::Corrupt`] if the
    /// check word does not match, [`DecodeError::BadField`] for values no encoder writes,
    /// [`DecodeError::Rule`] if the fields break a hardware rule.
    pub const fn decode_cpu(&self) -> Result<Tiled2d, DecodeError> {
        let w = &self.opaque;
        if w[0] != CPU_MAGIC {
            return Err(DecodeError::NotCpuEncoded);
        }
        if w[15] != check_word(w) {
            return Err(DecodeError::Corrupt);
        }
        let mut i = 7;
        while i < 15 {
            if w[i] != 0 {
                return Err(DecodeError::BadField);
            }
            i += 1;
        }
        if w[6] >> 16 != 0 {
            return Err(DecodeError::BadField);
        }
        let Some(swizzle) = TmaSwizzle::from_tensor_map_code((w[6] >> 8) & 0xff) else {
            return Err(DecodeError::BadField);
        };
        let map = Tiled2d {
            base_addr: w[1],
            elem_bytes: (w[6] & 0xff) as u32,
            dims: [w[2], w[3]],
            row_stride_bytes: w[4],
            box_dims: [w[5] as u32, (w[5] >> 32) as u32],
            swizzle,
        };
        match map.check() {
            Ok(()) => Ok(map),
            Err(e) => Err(DecodeError::Rule(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    const MAP: Tiled2d = Tiled2d {
        base_addr: 0x7f00_0000_0100,
        elem_bytes: 2,
        dims: [4096, 300],
        row_stride_bytes: 8192,
        box_dims: [64, 128],
        swizzle: TmaSwizzle::B128,
    };

    #[test]
    fn cpu_maps_round_trip_every_field() {
        for swizzle in [
            TmaSwizzle::None,
            TmaSwizzle::B32,
            TmaSwizzle::B64,
            TmaSwizzle::B128,
        ] {
            let cols = swizzle.span_bytes().map_or(64, |s| s / 2);
            let map = Tiled2d {
                swizzle,
                box_dims: [cols, 7],
                ..MAP
            };
            let enc = TensorMap::encode_cpu(&map).expect("valid");
            assert!(enc.is_cpu_encoded());
            assert_eq!(enc.decode_cpu(), Ok(map));
        }
        let enc = TensorMap::encode_cpu(&MAP).expect("valid");
        // The layout: magic, then the fields in their words.
        assert_eq!(&enc.opaque[0].to_le_bytes(), b"fc-tmap\x01");
        assert_eq!(enc.opaque[1..5], [0x7f00_0000_0100, 4096, 300, 8192]);
        assert_eq!(enc.opaque[5], 64 | (128 << 32));
        assert_eq!(enc.opaque[6], 2 | (3 << 8));
        assert_eq!(MAP.box_bytes(), 64 * 128 * 2);
    }

    #[test]
    fn driver_maps_and_changed_maps_are_refused() {
        let driver = TensorMap {
            opaque: [0x1234; 16],
        };
        assert_eq!(driver.decode_cpu(), Err(DecodeError::NotCpuEncoded));
        let mut enc = TensorMap::encode_cpu(&MAP).expect("valid");
        enc.opaque[2] += 1;
        assert_eq!(enc.decode_cpu(), Err(DecodeError::Corrupt));
        assert!(
            DecodeError::NotCpuEncoded
                .to_string()
                .contains("runs on a GPU only")
        );
    }

    #[test]
    fn the_encoder_refuses_maps_that_break_a_rule() {
        // The rules and messages of `cust::tma::check_tiled_2d`, which reads them from here.
        let bad = |map: Tiled2d| {
            TensorMap::encode_cpu(&map)
                .expect_err("refused")
                .to_string()
        };
        assert!(
            bad(Tiled2d {
                base_addr: MAP.base_addr + 8,
                ..MAP
            })
            .contains("16-byte aligned")
        );
        assert_eq!(
            bad(Tiled2d {
                dims: [0, 4],
                ..MAP
            }),
            "global dimension 0 must be in 1..=2^32 elements; it is 0"
        );
        assert!(
            bad(Tiled2d {
                row_stride_bytes: 4096,
                ..MAP
            })
            .contains("hold a row of 4096 elements of 2 bytes (8192 bytes)")
        );
        assert!(
            bad(Tiled2d {
                box_dims: [64, 257],
                ..MAP
            })
            .contains("box dimension 1 must be in 1..=256")
        );
        assert!(
            bad(Tiled2d {
                box_dims: [4, 8],
                ..MAP
            })
            .contains("4 elements of 2 bytes are 8 bytes")
        );
        assert_eq!(
            bad(Tiled2d {
                box_dims: [72, 8],
                ..MAP
            }),
            "with the 128-byte swizzle the inner box dimension must be at most 128 bytes; 72 \
             elements of 2 bytes are 144 bytes"
        );
        assert!(
            bad(Tiled2d {
                elem_bytes: 3,
                ..MAP
            })
            .contains("1, 2, 4 or 8")
        );
    }
}
