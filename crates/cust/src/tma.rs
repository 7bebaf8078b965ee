//! TMA tensor maps for Hopper's tensor memory accelerator: [`TensorMapExt::tiled_2d`]
//! encodes a [`TensorMap`] (`cuTensorMapEncodeTiled` on a GPU; on the CPU emulator
//! ferrocuda's own layout, `cust_core::tma`, which the emulator's TMA reads) for a 2-D
//! row-major array in device memory, after checking every rule the hardware sets
//! ([`check_tiled_2d`]), so a bad base address, stride or box is an error naming the rule
//! and the value, before any driver call or launch, on either backend.
//!
//! ```no_run
//! use cust::{prelude::*, tma::{TensorMap, TensorMapExt, TmaSwizzle}};
//! # fn main() -> CudaResult<()> {
//! # let _ctx = cust::quick_init()?;
//! // A 4096 × 4096 f32 matrix, row-major, loaded in 32 × 128 tiles (32 f32 = 128 bytes per
//! // row of a tile: the 128-byte swizzle's span).
//! let a = DeviceBuffer::<f32>::zeroed(4096 * 4096)?;
//! let map = TensorMap::tiled_2d(a.as_device_ptr(), [4096, 4096], 4096 * 4, [32, 128], TmaSwizzle::B128)?;
//! let map_on_device = DeviceBox::new(&map)?; // kernels take `*const TensorMap`
//! # Ok(())
//! # }
//! ```
//!
//! A kernel that copies typed tiles (`cuda_std::tma::load_tile::<Tl>`) gets its map from
//! the same tile type, [`TensorMapExt::for_tile`]: box and swizzle are then `Tl`'s, one
//! definition for host and device.
//!
//! Conventions (those of `cuTensorMapEncodeTiled`): dimensions and coordinates innermost
//! first (`[columns, rows]` for a row-major matrix), in elements; strides in bytes; the
//! kernel's `cuda_std::tma` copies take the same order.

use crate::{
    error::{CudaError, CudaResult},
    memory::DevicePointer,
};
use cudarc::driver::sys;
use cust_core::DeviceCopy;
pub use cust_core::TensorMap;
use cust_core::tile::Tile;
use cust_core::tma::Tiled2d;

/// The shared-memory swizzle a TMA copy applies (`CUtensorMapSwizzle`): the inner box
/// dimension, in bytes, must not exceed its span. Must match the swizzle of the `wgmma`
/// matrix descriptors that read the tile (`cuda_std::wgmma::Swizzle`). Defined in
/// `cust_core`, where the CPU device's encoder reads it too.
pub use cust_core::tma::TmaSwizzle;

/// The driver's value of `swizzle`.
fn swizzle_to_sys(swizzle: TmaSwizzle) -> sys::CUtensorMapSwizzle {
    use sys::CUtensorMapSwizzle::*;
    match swizzle {
        TmaSwizzle::None => CU_TENSOR_MAP_SWIZZLE_NONE,
        TmaSwizzle::B32 => CU_TENSOR_MAP_SWIZZLE_32B,
        TmaSwizzle::B64 => CU_TENSOR_MAP_SWIZZLE_64B,
        TmaSwizzle::B128 => CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

/// The TMA element type of a Rust type (`CUtensorMapDataType`): `u8` → UINT8, `u16` →
/// UINT16, `half::f16` → FLOAT16, `half::bf16` → BFLOAT16, `u32` → UINT32, `i32` → INT32,
/// `f32` → FLOAT32, `u64` → UINT64, `i64` → INT64, `f64` → FLOAT64.
pub trait TmaElement: DeviceCopy {
    /// The driver's data type.
    #[doc(hidden)]
    const DATA_TYPE: sys::CUtensorMapDataType;
}

macro_rules! tma_element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl TmaElement for $t {
            const DATA_TYPE: sys::CUtensorMapDataType = sys::CUtensorMapDataType::$d;
        })*
    };
}

tma_element!(
    u8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    u16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
    cust_core::half::f16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    cust_core::half::bf16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    u32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
    i32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
    f32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    u64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
    i64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
    f64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
);

pub use cust_core::tma::{MAX_BOX_DIM, MAX_GLOBAL_DIM, MAX_GLOBAL_STRIDE_BYTES};

/// Checks a 2-D tiled tensor map against the rules of `cuTensorMapEncodeTiled` (CUDA Driver
/// API, "Tensor Map Object Management"; no interleave, element strides 1), without the
/// driver: a row-major array of `dims[1]` rows of `dims[0]` elements of `elem_bytes` bytes
/// at device address `base_addr`, rows `row_stride_bytes` apart, copied in boxes of
/// `box_dims[1]` rows of `box_dims[0]` elements with `swizzle`. What
/// [`TensorMapExt::tiled_2d`] checks before encoding.
///
/// The rules live in `cust_core` ([`Tiled2d::check`], with the CPU device's encoder, so both
/// backends refuse the same maps with the same words).
///
/// # Errors
/// [`CudaError::TensorMap`] naming the first rule broken and the value:
/// - the base address is a multiple of 16 bytes;
/// - each global dimension is in 1..=2^32;
/// - the row stride is a multiple of 16 bytes, below 2^40, and at least a row
///   (`dims[0] * elem_bytes`);
/// - each box dimension is in 1..=256;
/// - the inner box dimension in bytes (`box_dims[0] * elem_bytes`) is a multiple of 16;
/// - with a swizzle, the inner box dimension in bytes is at most the swizzle's span (32, 64
///   or 128).
pub fn check_tiled_2d(
    base_addr: u64,
    elem_bytes: u32,
    dims: [u64; 2],
    row_stride_bytes: u64,
    box_dims: [u32; 2],
    swizzle: TmaSwizzle,
) -> CudaResult<()> {
    tiled(
        base_addr,
        elem_bytes,
        dims,
        row_stride_bytes,
        box_dims,
        swizzle,
    )
    .check()
    .map_err(|e| CudaError::TensorMap(e.to_string()))
}

/// The map's fields as `cust_core` names them.
fn tiled(
    base_addr: u64,
    elem_bytes: u32,
    dims: [u64; 2],
    row_stride_bytes: u64,
    box_dims: [u32; 2],
    swizzle: TmaSwizzle,
) -> Tiled2d {
    Tiled2d {
        base_addr,
        elem_bytes,
        dims,
        row_stride_bytes,
        box_dims,
        swizzle,
    }
}

/// Encoding a [`TensorMap`] on the host (an extension trait: `TensorMap` is defined in
/// `cust_core`, which device code shares). With it in scope, `TensorMap::tiled_2d::<T>(..)`.
pub trait TensorMapExt: Sized {
    /// A tensor map for the 2-D row-major array of `T` at `base`: `dims = [columns, rows]`
    /// elements (innermost first), rows `row_stride_bytes` apart, copied in boxes of
    /// `box_dims = [columns, rows]` elements, with `swizzle` (`cuTensorMapEncodeTiled`, no
    /// interleave, element strides 1, L2 promotion of 128 bytes, out-of-bounds elements
    /// filled with zeros). The element type comes from `T` ([`TmaElement`]). Copy it to the
    /// device (`DeviceBox::new(&map)`) and pass the kernel its pointer; the map holds
    /// `base` as an address, so the buffer must outlive every copy through it.
    ///
    /// On the CPU emulator (the current context is [`Context::emulator`]'s) the map is
    /// encoded in the CPU device's layout ([`TensorMap::encode_cpu`]), which the emulator's
    /// TMA reads; `base` is then a host address.
    ///
    /// # Errors
    /// [`CudaError::TensorMap`] naming the rule and the value if the arguments break one of
    /// the hardware's rules ([`check_tiled_2d`]), checked before either backend encodes;
    /// [`CudaError::Driver`] if the driver refuses the encoding.
    ///
    /// [`Context::emulator`]: crate::context::Context::emulator
    fn tiled_2d<T: TmaElement>(
        base: DevicePointer<T>,
        dims: [u64; 2],
        row_stride_bytes: u64,
        box_dims: [u32; 2],
        swizzle: TmaSwizzle,
    ) -> CudaResult<Self>;

    /// [`TensorMapExt::tiled_2d`] for copies of the shared-memory tile type `Tl`: the box is
    /// [`Tile::BOX`] and the swizzle [`Tile::SWIZZLE`], so the host's map and the kernel's
    /// typed copies (`cuda_std::tma::load_tile::<Tl>` and friends) take their layout from
    /// one definition. The buffer's element type `T` gives the map's data type; it has the
    /// size of the tile's element `Tl::Elem` (checked at compile time), so a tile of a
    /// device-only type can be mapped over bytes of the same size (FP8 over `u8`, a
    /// TF32-rounded `f32` wrapper over `f32`).
    ///
    /// ```no_run
    /// use cust::{prelude::*, tma::{TensorMap, TensorMapExt}};
    /// use cust_core::half::bf16;
    /// use cust_core::tile::{SmemTile, swizzle};
    /// # fn main() -> CudaResult<()> {
    /// # let _ctx = cust::quick_init()?;
    /// // The A tile of a GEMM stage: 128 rows of 64 bf16 (128-byte rows), 128-byte swizzle.
    /// type ATile = SmemTile<bf16, 128, 64, swizzle::B128>;
    /// let (m, k) = (4096u64, 4096u64);
    /// let a = DeviceBuffer::<bf16>::zeroed((m * k) as usize)?;
    /// let map = TensorMap::for_tile::<ATile, _>(a.as_device_ptr(), [k, m], k * 2)?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// A buffer of 2-byte elements for a tile of 4-byte ones does not compile:
    ///
    /// ```compile_fail
    /// use cust::{memory::DevicePointer, tma::{TensorMap, TensorMapExt}};
    /// use cust_core::tile::{SmemTile, swizzle};
    /// type F32Tile = SmemTile<f32, 8, 32, swizzle::B128>;
    /// let base = DevicePointer::<u16>::from_raw(0x1000);
    /// let _ = TensorMap::for_tile::<F32Tile, u16>(base, [64, 64], 128);
    /// ```
    ///
    /// # Errors
    /// As [`TensorMapExt::tiled_2d`].
    fn for_tile<Tl: Tile, T: TmaElement>(
        base: DevicePointer<T>,
        dims: [u64; 2],
        row_stride_bytes: u64,
    ) -> CudaResult<Self> {
        const {
            assert!(
                size_of::<T>() == size_of::<Tl::Elem>(),
                "the buffer's elements have the size of the tile's"
            )
        };
        Self::tiled_2d(base, dims, row_stride_bytes, Tl::BOX, Tl::SWIZZLE)
    }
}

impl TensorMapExt for TensorMap {
    fn tiled_2d<T: TmaElement>(
        base: DevicePointer<T>,
        dims: [u64; 2],
        row_stride_bytes: u64,
        box_dims: [u32; 2],
        swizzle: TmaSwizzle,
    ) -> CudaResult<Self> {
        let elem_bytes = u32::try_from(size_of::<T>()).unwrap_or(u32::MAX);
        check_tiled_2d(
            base.as_raw(),
            elem_bytes,
            dims,
            row_stride_bytes,
            box_dims,
            swizzle,
        )?;
        // The CPU device's TMA (the emulator) reads ferrocuda's own layout of the map
        // (`cust_core::tma`), not the driver's opaque one.
        if crate::context::CurrentContext::get_current().is_ok_and(|c| c.is_emulator()) {
            let map = tiled(
                base.as_raw(),
                elem_bytes,
                dims,
                row_stride_bytes,
                box_dims,
                swizzle,
            );
            return TensorMap::encode_cpu(&map).map_err(|e| CudaError::TensorMap(e.to_string()));
        }
        crate::device::init()?;
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // Strides of the dimensions above the innermost, in bytes (rank − 1 of them).
        let strides = [row_stride_bytes];
        let element_strides = [1u32; 2];
        // SAFETY: every array has the length the rank (2) calls for; `map` is a
        // 64-byte-aligned CUtensorMap the driver writes; the values were checked above.
        // Encoding reads no device memory (the address is only recorded).
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &raw mut map,
                T::DATA_TYPE,
                2,
                base.as_raw() as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                box_dims.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle_to_sys(swizzle),
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        }
        .result()
        .map_err(CudaError::driver(format!(
            "encoding a tensor map (cuTensorMapEncodeTiled) of {}×{} elements, box {}×{}, \
             {swizzle:?} swizzle",
            dims[0], dims[1], box_dims[0], box_dims[1]
        )))?;
        Ok(TensorMap { opaque: map.opaque })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid map: 4096 × 4096 bf16, 64 × 128 boxes, 128-byte swizzle.
    fn check(
        base: u64,
        elem: u32,
        dims: [u64; 2],
        stride: u64,
        boxes: [u32; 2],
        swizzle: TmaSwizzle,
    ) -> Result<(), String> {
        check_tiled_2d(base, elem, dims, stride, boxes, swizzle).map_err(|e| e.to_string())
    }

    fn fails_with(result: Result<(), String>, parts: &[&str]) {
        let err = result.expect_err("must be refused");
        for part in parts {
            assert!(err.contains(part), "{part:?} not in {err:?}");
        }
        assert!(err.starts_with("invalid tensor map: "), "{err}");
    }

    const BASE: u64 = 0x7f00_0000_0000;
    const DIMS: [u64; 2] = [4096, 4096];

    #[test]
    fn a_valid_map_passes() {
        assert!(check(BASE, 2, DIMS, 8192, [64, 128], TmaSwizzle::B128).is_ok());
        assert!(check(BASE, 4, DIMS, 16384, [32, 256], TmaSwizzle::B128).is_ok());
        assert!(check(BASE + 16, 2, [8, 1], 16, [8, 1], TmaSwizzle::None).is_ok());
        assert!(check(BASE, 1, [1 << 32, 1], 1 << 32, [256, 1], TmaSwizzle::None).is_ok());
    }

    #[test]
    fn the_base_address_must_be_16_byte_aligned() {
        fails_with(
            check(BASE + 8, 2, DIMS, 8192, [64, 128], TmaSwizzle::B128),
            &["16-byte aligned", "0x7f0000000008", "8 bytes past"],
        );
    }

    #[test]
    fn global_dimensions_must_be_in_1_to_2_pow_32() {
        fails_with(
            check(BASE, 2, [0, 4096], 8192, [64, 128], TmaSwizzle::B128),
            &["global dimension 0", "1..=2^32", "it is 0"],
        );
        fails_with(
            check(
                BASE,
                2,
                [4096, (1 << 32) + 1],
                8192,
                [64, 128],
                TmaSwizzle::B128,
            ),
            &["global dimension 1", "it is 4294967297"],
        );
    }

    #[test]
    fn the_row_stride_must_be_a_multiple_of_16_below_2_pow_40_and_hold_a_row() {
        fails_with(
            check(BASE, 2, [4100, 8], 8200, [64, 8], TmaSwizzle::B128),
            &["multiple of 16 bytes", "8200 bytes"],
        );
        fails_with(
            check(BASE, 1, [64, 8], 1 << 40, [64, 8], TmaSwizzle::None),
            &["below 2^40", "1099511627776 bytes"],
        );
        fails_with(
            check(BASE, 2, DIMS, 4096, [64, 128], TmaSwizzle::B128),
            &[
                "hold a row of 4096 elements of 2 bytes (8192 bytes)",
                "4096 bytes",
            ],
        );
    }

    #[test]
    fn box_dimensions_must_be_in_1_to_256() {
        fails_with(
            check(BASE, 2, DIMS, 8192, [64, 0], TmaSwizzle::B128),
            &["box dimension 1", "1..=256", "it is 0"],
        );
        fails_with(
            check(BASE, 1, DIMS, 4096, [512, 8], TmaSwizzle::None),
            &["box dimension 0", "it is 512"],
        );
    }

    #[test]
    fn the_inner_box_must_be_a_multiple_of_16_bytes() {
        fails_with(
            check(BASE, 2, DIMS, 8192, [4, 128], TmaSwizzle::None),
            &["multiple of 16 bytes", "4 elements of 2 bytes are 8 bytes"],
        );
    }

    #[test]
    fn with_a_swizzle_the_inner_box_is_at_most_its_span() {
        for (swizzle, span, ok_cols, bad_cols) in [
            (TmaSwizzle::B32, 32, 16, 24),
            (TmaSwizzle::B64, 64, 32, 40),
            (TmaSwizzle::B128, 128, 64, 72),
        ] {
            assert_eq!(swizzle.span_bytes(), Some(span));
            assert!(check(BASE, 2, DIMS, 8192, [ok_cols, 64], swizzle).is_ok());
            fails_with(
                check(BASE, 2, DIMS, 8192, [bad_cols, 64], swizzle),
                &[
                    &format!("{span}-byte swizzle"),
                    &format!("at most {span} bytes"),
                    &format!("{bad_cols} elements of 2 bytes are {} bytes", bad_cols * 2),
                ],
            );
        }
        // Without a swizzle, wide boxes are fine.
        assert!(check(BASE, 2, DIMS, 8192, [256, 64], TmaSwizzle::None).is_ok());
    }

    #[test]
    fn element_types_follow_the_rust_type() {
        use sys::CUtensorMapDataType::*;
        assert_eq!(
            <u16 as TmaElement>::DATA_TYPE,
            CU_TENSOR_MAP_DATA_TYPE_UINT16
        );
        assert_eq!(
            <cust_core::half::bf16 as TmaElement>::DATA_TYPE,
            CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
        );
        assert_eq!(
            <cust_core::half::f16 as TmaElement>::DATA_TYPE,
            CU_TENSOR_MAP_DATA_TYPE_FLOAT16
        );
        assert_eq!(
            <f32 as TmaElement>::DATA_TYPE,
            CU_TENSOR_MAP_DATA_TYPE_FLOAT32
        );
        assert_eq!(<u8 as TmaElement>::DATA_TYPE, CU_TENSOR_MAP_DATA_TYPE_UINT8);
    }

    #[test]
    fn on_the_emulator_maps_are_encoded_for_the_cpu_device() {
        let _ctx = crate::context::Context::emulator();
        let map = TensorMap::tiled_2d(
            DevicePointer::<cust_core::half::bf16>::from_raw(BASE),
            DIMS,
            8192,
            [64, 128],
            TmaSwizzle::B128,
        )
        .expect("encoded for the emulator");
        assert!(map.is_cpu_encoded());
        let fields = map.decode_cpu().expect("the CPU layout");
        assert_eq!(
            (
                fields.base_addr,
                fields.elem_bytes,
                fields.dims,
                fields.box_dims
            ),
            (BASE, 2, DIMS, [64, 128])
        );
        // The rules hold on the emulator too, with the same words.
        let err = TensorMap::tiled_2d(
            DevicePointer::<cust_core::half::bf16>::from_raw(BASE),
            DIMS,
            8192,
            [72, 128],
            TmaSwizzle::B128,
        )
        .unwrap_err();
        assert!(err.to_string().contains("at most 128 bytes"), "{err}");
    }

    #[test]
    fn tile_maps_take_the_tiles_box_and_swizzle() {
        use cust_core::tile::{SmemTile, swizzle};
        let _ctx = crate::context::Context::emulator();
        // A tile of another one-byte type over bytes (as FP8 tiles over `u8`): 128 rows of
        // 128 elements.
        type Bytes = SmemTile<i8, 128, 128, swizzle::B128>;
        let map = TensorMap::for_tile::<Bytes, u8>(DevicePointer::from_raw(BASE), DIMS, 8192)
            .expect("encoded for the emulator");
        let fields = map.decode_cpu().expect("the CPU layout");
        assert_eq!(
            (fields.box_dims, fields.swizzle, fields.elem_bytes),
            ([128, 128], TmaSwizzle::B128, 1)
        );
        type H64 = SmemTile<cust_core::half::f16, 16, 32, swizzle::B64>;
        let map = TensorMap::for_tile::<H64, cust_core::half::f16>(
            DevicePointer::from_raw(BASE),
            DIMS,
            8192,
        )
        .expect("encoded for the emulator");
        let fields = map.decode_cpu().expect("the CPU layout");
        assert_eq!(
            (fields.box_dims, fields.swizzle),
            ([32, 16], TmaSwizzle::B64)
        );
    }

    #[test]
    fn bad_maps_are_refused_before_the_driver_is_called() {
        // No GPU or driver is needed to get the rule's error.
        let err = TensorMap::tiled_2d(
            DevicePointer::<cust_core::half::bf16>::from_raw(BASE + 2),
            DIMS,
            8192,
            [64, 128],
            TmaSwizzle::B128,
        )
        .unwrap_err();
        assert!(matches!(err, CudaError::TensorMap(_)), "{err}");
        assert!(err.to_string().contains("16-byte aligned"), "{err}");
    }
}
