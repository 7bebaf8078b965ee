//! Tiles: shared-memory layouts typed by element, rows, columns and swizzle
//! ([`SmemTile`]), from which a kernel takes its byte sizes, swizzled element offsets, TMA
//! boxes and `expect_tx` counts, and `wgmma` descriptors, instead of computing them by hand.
//! The host builds its tensor maps from the same types (they live in
//! [`cust_core::tile`], which both sides depend on).
//!
//! ```
//! use cuda_std::half::bf16;
//! use cuda_std::tile::{SmemTile, Tile, swizzle};
//!
//! // A stage of A in a Hopper GEMM: 128 rows × 64 bf16 (one 128-byte swizzle row each).
//! type ATile = SmemTile<bf16, 128, 64, swizzle::B128>;
//! assert_eq!(ATile::BYTES, 16 * 1024);
//! assert_eq!(ATile::BOX, [64, 128]);
//! // Element 35 of row 9 sits in 16-byte chunk 4 ^ (9 % 8) = 5 of its row.
//! assert_eq!(ATile::offset(9, 35), 9 * 128 + 5 * 16 + 6);
//! ```

pub use cust_core::tile::{MatrixDescriptor, SmemTile, Swizzle, SwizzleMode, Tile, swizzle};
