//! Shared-memory tiles, the layout that host and device agree on: the one [`Swizzle`]
//! definition (TMA's `CUtensorMapSwizzle` and the `wgmma` descriptor's swizzle field are two
//! encodings of it), the `wgmma` [`MatrixDescriptor`], and [`SmemTile`], a tile typed by
//! element, rows, columns and swizzle that derives its byte size, alignment, element offsets,
//! TMA box and descriptor.
//!
//! A kernel names its tiles once, e.g. `type ATile = SmemTile<bf16, 128, 64, swizzle::B128>;`
//! (128 rows of 64 `bf16`, each row one 128-byte swizzle span, K-major), and the host builds
//! its tensor map from the same type's [`SmemTile::BOX`]. A shape the hardware cannot take
//! (rows not a multiple of 8, a row that is not the swizzle's span) fails to compile where the
//! tile's layout is used.
//!
//! Layouts follow the PTX ISA, §9.7.15.5.1 "Shared Memory Matrix Layout" (K-major swizzled
//! layouts: 8-row *atoms* of `8 × span` bytes; 16-byte chunk `c` of row `r` stored at chunk
//! `c ^ f(r)`, with `f(r) = r % 8` for 128-byte, `(r / 2) % 4` for 64-byte and `(r / 4) % 2` for
//! 32-byte swizzling), which is what TMA writes with the same swizzle (CUDA Driver API,
//! `CUtensorMapSwizzle`).

use core::marker::PhantomData;

/// How 16-byte chunks of each row are permuted in shared memory (see the module docs).
///
/// One definition for both encodings: [`Swizzle::tensor_map_code`] (`CUtensorMapSwizzle`)
/// and [`Swizzle::descriptor_code`] (the `wgmma` descriptor's bits 62–63).
///
/// The discriminants are the descriptor's codes, so that encoding a descriptor is a shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Swizzle {
    /// No swizzle. For TMA: box rows packed one after another. For `wgmma`
    /// ("interleave"): core matrices of 8 rows × 16 contiguous bytes, placed at the
    /// descriptor's leading and stride byte offsets.
    None = 0,
    /// 32-byte swizzle: rows of 32 bytes, chunk `c` of row `r` at `c ^ ((r / 4) % 2)`;
    /// 256-byte atoms.
    B32 = 3,
    /// 64-byte swizzle: rows of 64 bytes, chunk `c` of row `r` at `c ^ ((r / 2) % 4)`;
    /// 512-byte atoms.
    B64 = 2,
    /// 128-byte swizzle: rows of 128 bytes, chunk `c` of row `r` at `c ^ (r % 8)`;
    /// 1024-byte atoms, which must start 1024-byte aligned.
    B128 = 1,
}

impl Swizzle {
    /// The swizzle span in bytes (a swizzled row's length; the most a TMA box's inner row may
    /// have), `None` without a swizzle.
    #[must_use]
    pub const fn span_bytes(self) -> Option<u32> {
        match self {
            Self::None => None,
            Self::B32 => Some(32),
            Self::B64 => Some(64),
            Self::B128 => Some(128),
        }
    }

    /// The bytes of one atom (8 rows of the span), the alignment a tile in this swizzle
    /// needs; 128 without a swizzle (one core matrix, 8 rows × 16 bytes).
    #[must_use]
    pub const fn atom_bytes(self) -> u32 {
        match self.span_bytes() {
            Some(span) => 8 * span,
            None => 128,
        }
    }

    /// Where 16-byte chunk `chunk` of row `row` is stored within that row.
    #[must_use]
    #[inline(always)]
    pub const fn chunk(self, row: u32, chunk: u32) -> u32 {
        match self {
            Self::None => chunk,
            Self::B32 => chunk ^ ((row / 4) % 2),
            Self::B64 => chunk ^ ((row / 2) % 4),
            Self::B128 => chunk ^ (row % 8),
        }
    }

    /// The value of `CUtensorMapSwizzle` (cuda.h: 0 none, 1 32B, 2 64B, 3 128B).
    #[must_use]
    pub const fn tensor_map_code(self) -> u64 {
        match self {
            Self::None => 0,
            Self::B32 => 1,
            Self::B64 => 2,
            Self::B128 => 3,
        }
    }

    /// The swizzle whose `CUtensorMapSwizzle` value is `code`, if any.
    #[must_use]
    pub const fn from_tensor_map_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(Self::None),
            1 => Some(Self::B32),
            2 => Some(Self::B64),
            3 => Some(Self::B128),
            _ => None,
        }
    }

    /// The `wgmma` descriptor's swizzle field (bits 62–63; PTX ISA §9.7.15.5.1.2: 0
    /// interleave, 1 128B, 2 64B, 3 32B).
    #[must_use]
    pub const fn descriptor_code(self) -> u64 {
        self as u64
    }
}

/// A `wgmma` shared-memory matrix descriptor (PTX ISA §9.7.15.5.1.2 "Matrix Descriptor
/// Format"), 64 bits:
///
/// | bits | field |
/// |---|---|
/// | 0–13 | start address (shared, bytes) `>> 4` |
/// | 16–29 | leading dimension byte offset `>> 4` |
/// | 32–45 | stride dimension byte offset `>> 4` |
/// | 49–51 | matrix base offset (0 here: swizzled tiles start at a swizzle-atom boundary) |
/// | 62–63 | [`Swizzle`] mode ([`Swizzle::descriptor_code`]) |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixDescriptor(pub u64);

impl MatrixDescriptor {
    /// Encodes a descriptor. All three values are in bytes, multiples of 16, and below
    /// 2¹⁸ (256 KiB, more than any shared memory); each is stored `>> 4` in 14 bits, so the
    /// low 4 bits and bits from 18 up are dropped.
    ///
    /// - `start_addr`: the 32-bit shared address (`cuda_std::shared::shared_addr`) of the
    ///   operand's first core matrix (for a swizzled tile, its first byte, aligned to the
    ///   swizzle atom: 1024 bytes for [`Swizzle::B128`]).
    /// - `leading_byte_offset` (LBO): for K-major [`Swizzle::None`], the distance between
    ///   core matrices adjacent in **K**; ignored by the hardware for K-major swizzled
    ///   layouts (pass 16, i.e. encoded 1, as CUTLASS does). For MN-major operands
    ///   (`TRANS_* = true`), the distance between swizzle atoms adjacent in M/N.
    /// - `stride_byte_offset` (SBO): the distance between groups of 8 rows adjacent in
    ///   **M** (or N), e.g. 1024 for a [`Swizzle::B128`] tile of 128-byte rows.
    #[must_use]
    pub const fn new(
        start_addr: u32,
        leading_byte_offset: u32,
        stride_byte_offset: u32,
        swizzle: Swizzle,
    ) -> Self {
        const fn field(bytes: u32) -> u64 {
            ((bytes as u64) >> 4) & 0x3fff
        }
        Self(
            field(start_addr)
                | (field(leading_byte_offset) << 16)
                | (field(stride_byte_offset) << 32)
                | (swizzle.descriptor_code() << 62),
        )
    }

    /// The same descriptor with its start address advanced by `bytes` (a multiple of 16),
    /// e.g. to step K inside a swizzled tile: for a [`Swizzle::B128`] K-major tile of bf16,
    /// the k-th slice of 16 elements starts `32·k` bytes further (the hardware applies the
    /// swizzle to the resulting addresses). The other fields are unchanged; the address
    /// field wraps at 2¹⁸ bytes.
    #[must_use]
    pub const fn add_bytes(self, bytes: u32) -> Self {
        let addr = (self.0 & 0x3fff).wrapping_add((bytes as u64) >> 4) & 0x3fff;
        Self((self.0 & !0x3fff) | addr)
    }

    /// [`add_bytes`](Self::add_bytes) as one 64-bit addition, for a start address that stays
    /// below 2¹⁸ bytes (256 KiB), as every shared-memory address does (at most 228 KiB a
    /// multiprocessor on sm_90). Where `add_bytes` masks the address field (two more
    /// instructions per descriptor, which `ptxas` 12.9 keeps in the `wgmma` issue loops),
    /// this one adds `bytes >> 4` to it; a start address past 2¹⁸ would carry into the
    /// reserved bits 14–15 instead of wrapping (a debug assertion).
    #[must_use]
    pub const fn add_bytes_in_window(self, bytes: u32) -> Self {
        let sum = self.0 + ((bytes as u64) >> 4);
        debug_assert!(
            sum & 0xc000 == self.0 & 0xc000,
            "the start address left the window"
        );
        Self(sum)
    }

    /// The 64-bit encoding, as `wgmma` takes it.
    #[must_use]
    pub const fn bits(self) -> u64 {
        self.0
    }
}

/// A swizzle mode as a type, for [`SmemTile`]'s parameter (stable Rust has no enum const
/// parameters).
pub trait SwizzleMode {
    /// The mode.
    const SWIZZLE: Swizzle;
}

/// The swizzle modes as types: [`swizzle::B128`], [`swizzle::B64`], [`swizzle::B32`],
/// [`swizzle::None`].
pub mod swizzle {
    use super::{Swizzle, SwizzleMode};

    macro_rules! modes {
        ($($(#[$doc:meta])* $name:ident;)*) => {$(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
            pub struct $name;
            impl SwizzleMode for $name {
                const SWIZZLE: Swizzle = Swizzle::$name;
            }
        )*};
    }

    modes! {
        /// [`Swizzle::B128`].
        B128;
        /// [`Swizzle::B64`].
        B64;
        /// [`Swizzle::B32`].
        B32;
        /// [`Swizzle::None`].
        None;
    }
}

/// A K-major shared-memory tile: `ROWS` rows of `COLS` elements of `T`, each row one swizzle
/// span of `S` (`COLS · size_of::<T>()` bytes: 64 `bf16` or 32 `f32` for
/// [`swizzle::B128`]), rows in order, in `S`'s swizzle — the layout TMA writes for a box of
/// [`Tile::BOX`] with that swizzle, and the K-major swizzled layout a `wgmma`
/// descriptor names ([`Tile::descriptor`]). Its sizes, offsets and descriptor are those of
/// the [`Tile`] trait.
///
/// A type, never a value: it only names a layout. Its constants and functions fail to compile
/// for shapes the hardware cannot take: `ROWS` not a positive multiple of 8, or a row that is
/// not exactly the swizzle's span (for [`swizzle::None`], a row that is not a positive
/// multiple of 16 bytes).
///
/// ```
/// use cust_core::tile::{SmemTile, Tile, swizzle};
/// // 16 rows of 64 two-byte elements: 128-byte rows, 2 KiB.
/// assert_eq!(SmemTile::<u16, 16, 64, swizzle::B128>::BYTES, 2048);
/// ```
///
/// 12 rows are not whole 8-row atoms:
///
/// ```compile_fail
/// use cust_core::tile::{SmemTile, Tile, swizzle};
/// let _ = SmemTile::<u16, 12, 64, swizzle::B128>::BYTES;
/// ```
///
/// A 64-byte row is not a 128-byte swizzle span:
///
/// ```compile_fail
/// use cust_core::tile::{SmemTile, Tile, swizzle};
/// let _ = SmemTile::<u16, 16, 32, swizzle::B128>::BYTES;
/// ```
///
/// And an unswizzled tile has no `wgmma` descriptor:
///
/// ```compile_fail
/// use cust_core::tile::{SmemTile, Tile, swizzle};
/// let _ = SmemTile::<u16, 8, 8, swizzle::None>::descriptor(0);
/// ```
#[derive(Debug)]
pub struct SmemTile<T, const ROWS: u32, const COLS: u32, S: SwizzleMode>(PhantomData<(T, S)>);

/// What a shared-memory tile type gives (implemented by [`SmemTile`]): generic kernels name
/// their tiles through it, e.g. an associated `type ATile: Tile` per element type.
pub trait Tile {
    /// The element type.
    type Elem;
    /// Rows.
    const ROWS: u32;
    /// Elements per row.
    const COLS: u32;
    /// Bytes of one row.
    const ROW_BYTES: u32;
    /// Bytes of the whole tile: what one TMA load of it delivers (the `expect_tx` count).
    const BYTES: u32;
    /// The alignment its first byte needs in shared memory: one swizzle atom (1024 bytes for
    /// [`swizzle::B128`]).
    const ALIGN: u32;
    /// Its TMA box, innermost dimension first, in elements: `[COLS, ROWS]`.
    const BOX: [u32; 2];
    /// Its swizzle.
    const SWIZZLE: Swizzle;

    /// The byte offset from the tile's start of byte `byte` (`< ROW_BYTES`) of row `row`
    /// (`< ROWS`), the swizzle applied.
    #[must_use]
    #[inline(always)]
    fn byte_offset(row: u32, byte: u32) -> u32 {
        row * Self::ROW_BYTES + Self::SWIZZLE.chunk(row, byte / 16) * 16 + byte % 16
    }

    /// The byte offset from the tile's start of element `col` (`< COLS`) of row `row`
    /// (`< ROWS`).
    #[must_use]
    #[inline(always)]
    fn offset(row: u32, col: u32) -> u32 {
        Self::byte_offset(row, col * (Self::ROW_BYTES / Self::COLS))
    }

    /// The `wgmma` descriptor of the tile at shared address `start` (aligned to
    /// [`Tile::ALIGN`]) as a K-major operand: leading byte offset 16 (unused by the
    /// hardware for swizzled K-major layouts), stride byte offset 8 rows. Step K inside the
    /// row with [`MatrixDescriptor::add_bytes`] (32 bytes per 16 `bf16`).
    ///
    /// Does not compile for [`swizzle::None`] tiles, whose rows TMA packs one after another
    /// while a `wgmma` no-swizzle operand is made of 8×16-byte core matrices.
    #[must_use]
    fn descriptor(start: u32) -> MatrixDescriptor;

    /// The `wgmma` descriptor of an MN-major operand (`TRANS_* = true`) stored as tiles of
    /// this type one after another from shared address `start` (aligned to
    /// [`Tile::ALIGN`]): the tile's rows run along the product's K and its columns along M
    /// or N, so each tile holds `COLS` of M/N (64 `bf16` for [`swizzle::B128`]) and the next
    /// tile the next `COLS`. Leading byte offset [`Tile::BYTES`] (from one such tile to the
    /// next along M/N), stride byte offset 8 rows (the next 8 values of K). E.g. an
    /// attention's `V` in `P·V`, keys along K and head dimensions along N. Step K by whole
    /// 16-row slices: add `16 · ROW_BYTES` to `start`.
    ///
    /// Does not compile for [`swizzle::None`] tiles, as [`Tile::descriptor`].
    #[must_use]
    fn descriptor_mn_major(start: u32) -> MatrixDescriptor;
}

impl<T, const ROWS: u32, const COLS: u32, S: SwizzleMode> Tile for SmemTile<T, ROWS, COLS, S> {
    type Elem = T;
    const ROWS: u32 = ROWS;
    const COLS: u32 = COLS;
    const ROW_BYTES: u32 = {
        let bytes = COLS * core::mem::size_of::<T>() as u32;
        assert!(
            ROWS > 0 && ROWS.is_multiple_of(8),
            "a tile has a positive multiple of 8 rows"
        );
        match S::SWIZZLE.span_bytes() {
            Some(span) => assert!(
                bytes == span,
                "a swizzled tile's row is exactly the swizzle span (e.g. 128 bytes for B128)"
            ),
            None => assert!(
                bytes > 0 && bytes.is_multiple_of(16),
                "a tile's row is a positive multiple of 16 bytes"
            ),
        }
        bytes
    };
    const BYTES: u32 = ROWS * Self::ROW_BYTES;
    const ALIGN: u32 = {
        let _ = Self::ROW_BYTES;
        S::SWIZZLE.atom_bytes()
    };
    const BOX: [u32; 2] = {
        let _ = Self::ROW_BYTES;
        [COLS, ROWS]
    };
    const SWIZZLE: Swizzle = S::SWIZZLE;

    #[inline(always)]
    fn descriptor(start: u32) -> MatrixDescriptor {
        Self::swizzled_descriptor(start, 16)
    }

    #[inline(always)]
    fn descriptor_mn_major(start: u32) -> MatrixDescriptor {
        Self::swizzled_descriptor(start, Self::BYTES)
    }
}

impl<T, const ROWS: u32, const COLS: u32, S: SwizzleMode> SmemTile<T, ROWS, COLS, S> {
    /// The `wgmma` descriptor of the tile at shared address `start` with leading byte
    /// offset `leading_byte_offset` and stride byte offset 8 rows, in the tile's swizzle: what
    /// [`Tile::descriptor`] and [`Tile::descriptor_mn_major`] differ in is the leading byte
    /// offset. Does not compile for [`swizzle::None`] tiles.
    #[inline(always)]
    fn swizzled_descriptor(start: u32, leading_byte_offset: u32) -> MatrixDescriptor {
        const {
            assert!(
                S::SWIZZLE.span_bytes().is_some(),
                "a wgmma descriptor needs a swizzled tile"
            )
        };
        MatrixDescriptor::new(
            start,
            leading_byte_offset,
            8 * <Self as Tile>::ROW_BYTES,
            S::SWIZZLE,
        )
    }
}

/// The tiles that one TMA transaction phase delivers together: one [`Tile`], or a tuple of
/// up to four (e.g. a GEMM stage's `(ATile, BTile)`). [`Tiles::TX_BYTES`] is their sum, the
/// count an mbarrier's phase expects (`mbarrier.arrive.expect_tx`), so that it is derived
/// from the same types as the loads instead of written by hand (ThunderKittens'
/// `tma::expect(sem, tiles...)`).
///
/// ```
/// use cust_core::tile::{SmemTile, Tile, Tiles, swizzle};
/// type A = SmemTile<u16, 128, 64, swizzle::B128>;
/// type B = SmemTile<u16, 256, 64, swizzle::B128>;
/// assert_eq!(<(A, B) as Tiles>::TX_BYTES, 48 * 1024);
/// assert_eq!(<A as Tiles>::TX_BYTES, A::BYTES);
/// ```
pub trait Tiles {
    /// The bytes of all the tiles ([`Tile::BYTES`] summed): the transaction count their
    /// TMA loads complete. (Named apart from `Tile::BYTES`, so that both traits can be in
    /// scope.)
    const TX_BYTES: u32;
}

impl<Tl: Tile> Tiles for Tl {
    const TX_BYTES: u32 = Tl::BYTES;
}

macro_rules! tiles_tuple {
    ($($t:ident),+) => {
        impl<$($t: Tile),+> Tiles for ($($t,)+) {
            const TX_BYTES: u32 = 0 $(+ $t::BYTES)+;
        }
    };
}

tiles_tuple!(A);
tiles_tuple!(A, B);
tiles_tuple!(A, B, C);
tiles_tuple!(A, B, C, D);

#[cfg(test)]
mod tests {
    use super::*;

    // ANCHOR: tile_types
    type A = SmemTile<u16, 128, 64, swizzle::B128>;
    type C32 = SmemTile<f32, 64, 32, swizzle::B128>;
    type H64 = SmemTile<u16, 16, 32, swizzle::B64>;
    type N = SmemTile<u16, 8, 24, swizzle::None>;

    #[test]
    fn sizes_boxes_and_alignment_follow_the_type() {
        assert_eq!(
            (A::ROW_BYTES, A::BYTES, A::ALIGN, A::BOX),
            (128, 16384, 1024, [64, 128])
        );
        assert_eq!(
            (C32::ROW_BYTES, C32::BYTES, C32::BOX),
            (128, 8192, [32, 64])
        );
        assert_eq!((H64::ROW_BYTES, H64::BYTES, H64::ALIGN), (64, 1024, 512));
        assert_eq!((N::ROW_BYTES, N::BYTES, N::ALIGN), (48, 384, 128));
    }
    // ANCHOR_END: tile_types

    /// Offsets, written out from the PTX ISA's swizzle figures independently of
    /// `Swizzle::chunk`: the 128-byte swizzle XORs the chunk with `r % 8`; the 64-byte one with
    /// `(r / 2) % 4`; none leaves it.
    #[test]
    fn offsets_apply_the_swizzle() {
        // Row 9, element 35 (byte 70: chunk 4, byte 6): chunk 4 ^ 1 = 5.
        assert_eq!(A::offset(9, 35), 9 * 128 + 5 * 16 + 6);
        // Row 7, element 0: chunk 0 ^ 7.
        assert_eq!(A::offset(7, 0), 7 * 128 + 7 * 16);
        // f32: row 3, element 5 (byte 20: chunk 1, byte 4): chunk 1 ^ 3 = 2.
        assert_eq!(C32::offset(3, 5), 3 * 128 + 2 * 16 + 4);
        // 64-byte swizzle, row 6, element 9 (byte 18: chunk 1, byte 2): chunk 1 ^ 3 = 2.
        assert_eq!(H64::offset(6, 9), 6 * 64 + 2 * 16 + 2);
        assert_eq!(N::offset(5, 23), 5 * 48 + 46);
        // Every byte of a swizzled tile lands once.
        let mut seen = [false; 16384];
        for r in 0..128 {
            for b in 0..128 {
                let o = A::byte_offset(r, b) as usize;
                assert!(!seen[o], "byte {b} of row {r} collides at {o}");
                seen[o] = true;
            }
        }
    }

    #[test]
    fn the_descriptor_names_the_tile() {
        let d = A::descriptor(0x2400);
        // Start 0x2400 >> 4, LBO 16 >> 4, SBO 1024 >> 4, 128-byte swizzle (1) in bits 62–63.
        assert_eq!(d.bits(), 0x240 | (1 << 16) | (64 << 32) | (1 << 62));
        assert_eq!(
            d,
            MatrixDescriptor::new(0x2400, 16, 1024, Swizzle::B128),
            "the hand-written descriptor of the GEMM kernel"
        );
        assert_eq!(H64::descriptor(0).bits() >> 62, 2);
    }

    #[test]
    fn the_mn_major_descriptor_steps_tile_by_tile_along_mn() {
        // `A` as column blocks of an MN-major operand: LBO one tile (16384 bytes >> 4), SBO
        // 8 rows (1024 >> 4), start 0x8000 >> 4, 128-byte swizzle.
        let d = A::descriptor_mn_major(0x8000);
        assert_eq!(d.bits(), 0x800 | (1024 << 16) | (64 << 32) | (1 << 62));
        assert_eq!(
            d,
            MatrixDescriptor::new(0x8000, 128 * 128, 1024, Swizzle::B128),
            "the hand-written `V` descriptor of the attention kernel (128 keys a tile)"
        );
        assert_eq!(H64::descriptor_mn_major(0).bits() >> 16 & 0x3fff, 1024 >> 4);
    }

    #[test]
    fn the_two_encodings_of_a_swizzle_round_trip() {
        for s in [Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128] {
            assert_eq!(Swizzle::from_tensor_map_code(s.tensor_map_code()), Some(s));
        }
        assert_eq!(Swizzle::from_tensor_map_code(4), None);
        // PTX ISA §9.7.15.5.1.2 and cuda.h's CUtensorMapSwizzle, written out.
        assert_eq!(Swizzle::B128.descriptor_code(), 1);
        assert_eq!(Swizzle::B32.descriptor_code(), 3);
        assert_eq!(Swizzle::B128.tensor_map_code(), 3);
    }
}
