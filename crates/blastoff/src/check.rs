//! Argument checks done on the host before a cuBLAS call, so that a bad dimension or a buffer
//! too short for it is an [`Error`], never an out-of-bounds access on the GPU.

use crate::{Error, MatrixOp};

/// cuBLAS takes dimensions as C `int`.
const MAX_DIM: usize = i32::MAX as usize;

/// The shape of one `gemm` call: `C (m×n) = alpha · op(A) (m×k) · op(B) (k×n) + beta · C`,
/// column-major, with the operands' buffer lengths in elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GemmShape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lda: usize,
    pub op_a: MatrixOp,
    pub a_len: usize,
    pub ldb: usize,
    pub op_b: MatrixOp,
    pub b_len: usize,
    pub ldc: usize,
    pub c_len: usize,
}

/// One matrix operand as stored: `rows × cols` with leading dimension `ld`.
struct Stored {
    matrix: &'static str,
    ld_name: &'static str,
    ld: usize,
    rows_name: &'static str,
    rows: usize,
    cols: usize,
    len: usize,
}

impl Stored {
    fn check(&self, call: &'static str) -> Result<(), Error> {
        if self.ld < self.rows {
            return Err(Error::LeadingDimension {
                call,
                name: self.ld_name,
                value: self.ld,
                min_name: self.rows_name,
                min: self.rows,
                matrix: self.matrix,
            });
        }
        // The last column starts at `ld * (cols - 1)` and holds `rows` elements; `cols >= 1`
        // and every factor is at most `i32::MAX`, so this cannot overflow a 64-bit usize, but
        // an overflow on a smaller target reads as "too short" rather than wrapping.
        let needed = self
            .ld
            .checked_mul(self.cols - 1)
            .and_then(|x| x.checked_add(self.rows));
        match needed {
            Some(needed) if self.len >= needed => Ok(()),
            _ => Err(Error::BufferTooShort {
                call,
                matrix: self.matrix,
                rows: self.rows,
                cols: self.cols,
                ld: self.ld,
                needed: needed.unwrap_or(usize::MAX),
                len: self.len,
            }),
        }
    }
}

impl GemmShape {
    /// Checks the shape for the routine `call`.
    ///
    /// # Errors
    /// [`Error::ZeroDimension`] if `m`, `n` or `k` is 0; [`Error::DimensionTooLarge`] if a
    /// dimension exceeds `i32::MAX`; [`Error::LeadingDimension`] if `lda`, `ldb` or `ldc` is
    /// less than the rows of its matrix as stored; [`Error::BufferTooShort`] if a buffer
    /// holds fewer than `ld × (cols − 1) + rows` elements.
    pub(crate) fn check(&self, call: &'static str) -> Result<(), Error> {
        for (name, value) in [("m", self.m), ("n", self.n), ("k", self.k)] {
            if value == 0 {
                return Err(Error::ZeroDimension { call, name });
            }
        }
        for (name, value) in [
            ("m", self.m),
            ("n", self.n),
            ("k", self.k),
            ("lda", self.lda),
            ("ldb", self.ldb),
            ("ldc", self.ldc),
        ] {
            if value > MAX_DIM {
                return Err(Error::DimensionTooLarge {
                    call,
                    name,
                    value,
                    max: MAX_DIM,
                });
            }
        }
        // op(A) is m×k: A is stored m×k, or k×m when transposed.
        let a = if self.op_a.transposes() {
            ("k", self.k, self.m)
        } else {
            ("m", self.m, self.k)
        };
        // op(B) is k×n: B is stored k×n, or n×k when transposed.
        let b = if self.op_b.transposes() {
            ("n", self.n, self.k)
        } else {
            ("k", self.k, self.n)
        };
        let operands = [
            Stored {
                matrix: "A",
                ld_name: "lda",
                ld: self.lda,
                rows_name: a.0,
                rows: a.1,
                cols: a.2,
                len: self.a_len,
            },
            Stored {
                matrix: "B",
                ld_name: "ldb",
                ld: self.ldb,
                rows_name: b.0,
                rows: b.1,
                cols: b.2,
                len: self.b_len,
            },
            Stored {
                matrix: "C",
                ld_name: "ldc",
                ld: self.ldc,
                rows_name: "m",
                rows: self.m,
                cols: self.n,
                len: self.c_len,
            },
        ];
        operands.iter().try_for_each(|s| s.check(call))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CALL: &str = "cublasSgemm_v2";

    /// A valid, tightly packed 2×3 · 3×4 product.
    fn shape() -> GemmShape {
        GemmShape {
            m: 2,
            n: 4,
            k: 3,
            lda: 2,
            op_a: MatrixOp::None,
            a_len: 6,
            ldb: 3,
            op_b: MatrixOp::None,
            b_len: 12,
            ldc: 2,
            c_len: 8,
        }
    }

    #[test]
    fn valid_shapes_pass() {
        shape().check(CALL).expect("packed shape");
        // Transposed operands: A stored k×m (lda ≥ k), B stored n×k (ldb ≥ n).
        GemmShape {
            op_a: MatrixOp::Transpose,
            lda: 3,
            op_b: MatrixOp::ConjugateTranspose,
            ldb: 4,
            ..shape()
        }
        .check(CALL)
        .expect("transposed shape");
        // Padded leading dimensions: the last column needs only `rows` elements.
        GemmShape {
            lda: 5,
            a_len: 5 * 2 + 2,
            ..shape()
        }
        .check(CALL)
        .expect("padded lda");
    }

    #[test]
    fn zero_dimension_is_named() {
        let err = rejected(GemmShape { k: 0, ..shape() });
        assert!(
            matches!(err, Error::ZeroDimension { name: "k", .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "cublasSgemm_v2: k is 0; it must be at least 1"
        );
    }

    /// The error `shape` is rejected with; fails the test if it passes.
    fn rejected(shape: GemmShape) -> Error {
        shape.check(CALL).expect_err("the shape should be rejected")
    }

    #[test]
    fn leading_dimensions_are_checked_per_operation() {
        // (shape, (name, value, min_name, min, matrix)) of the `LeadingDimension` error.
        let cases = [
            (GemmShape { lda: 1, ..shape() }, ("lda", 1, "m", 2, "A")),
            // Transposed A is stored k×m: lda = m = 2 is too small when k = 3.
            (
                GemmShape {
                    op_a: MatrixOp::Transpose,
                    ..shape()
                },
                ("lda", 2, "k", 3, "A"),
            ),
            (GemmShape { ldb: 2, ..shape() }, ("ldb", 2, "k", 3, "B")),
            // Transposed B is stored n×k: ldb = k = 3 is too small when n = 4.
            (
                GemmShape {
                    op_b: MatrixOp::Transpose,
                    ..shape()
                },
                ("ldb", 3, "n", 4, "B"),
            ),
            (GemmShape { ldc: 1, ..shape() }, ("ldc", 1, "m", 2, "C")),
        ];
        for (shape, expected) in cases {
            match rejected(shape) {
                Error::LeadingDimension {
                    name,
                    value,
                    min_name,
                    min,
                    matrix,
                    ..
                } => assert_eq!((name, value, min_name, min, matrix), expected),
                err => panic!("{expected:?}: {err:?}"),
            }
        }
    }

    #[test]
    fn short_buffers_name_the_sizes() {
        let err = rejected(GemmShape {
            a_len: 5,
            ..shape()
        });
        assert_eq!(
            err.to_string(),
            "cublasSgemm_v2: matrix A (2×3 as stored, leading dimension 2) needs 6 elements, but its buffer holds 5"
        );
        // (shape, (matrix, needed, len)) of the `BufferTooShort` error.
        let cases = [
            (
                GemmShape {
                    b_len: 11,
                    ..shape()
                },
                ("B", 12, 11),
            ),
            (
                GemmShape {
                    c_len: 7,
                    ..shape()
                },
                ("C", 8, 7),
            ),
            // A padded lda needs the padding in every column but the last.
            (GemmShape { lda: 5, ..shape() }, ("A", 12, 6)),
        ];
        for (shape, expected) in cases {
            match rejected(shape) {
                Error::BufferTooShort {
                    matrix,
                    needed,
                    len,
                    ..
                } => assert_eq!((matrix, needed, len), expected),
                err => panic!("{expected:?}: {err:?}"),
            }
        }
    }

    #[test]
    fn dimensions_beyond_i32_are_rejected() {
        let big = i32::MAX as usize + 1;
        let err = rejected(GemmShape {
            ldc: big,
            ..shape()
        });
        assert!(
            matches!(err, Error::DimensionTooLarge { name: "ldc", value, .. } if value == big),
            "{err:?}"
        );
    }
}
