//! The CPU backend, for a handle made on cust's CPU emulator: each routine copies its
//! operands to the host through cust's copies (emulator memory is host memory, so each is a
//! `memcpy`), computes the product with `matrixmultiply`, and copies `C` back. The routine has
//! finished when the call returns, as all work on the emulator's streams has.
//!
//! What is cuBLAS's here: the argument semantics. `C = alpha · op_a(A) · op_b(B) + beta · C`,
//! column-major, with the same leading dimensions, transposes (`ConjugateTranspose` is the
//! transpose for real types), argument checks and errors as the GPU; `beta = 0` means `C` is
//! not read (a NaN there does not propagate); only `C`'s `m×n` elements are written, its
//! padding (`ldc > m`) is left as it was; and, as reference BLAS's `xGEMM` documents,
//! `alpha = 0` means `A` and `B` are not read (`C ← beta · C`).
//!
//! What is not modelled:
//! - **The order of the sums.** `matrixmultiply` adds the `k` products of each element in its
//!   own blocked order, with fused multiply-adds where the CPU has them; cuBLAS adds in the
//!   order of the kernel it picks. Results are equal wherever every product and partial sum
//!   is exact in the accumulation type (e.g. small integers, which the exactness tests use);
//!   elsewhere they differ by rounding.
//! - **`gemm_ex`'s precisions.** `bf16` and `f16` operands are widened to `f32` (exactly),
//!   multiplied and summed in `f32`, scaled by `alpha` and `beta` in `f32`, and the result
//!   rounded to the operand type (to nearest, ties to even). [`ComputeType::F32FastTf32`] is
//!   computed in full `f32`, without rounding the inputs to TF32, so its results are at least
//!   as accurate as the GPU's (equal where the inputs are exact in TF32);
//!   [`ComputeType::F32Pedantic`] is [`ComputeType::F32`].
//! - **The workspace.** [`Cpu::set_workspace`] records the size only: `matrixmultiply` packs
//!   its blocks in buffers of its own.
//!
//! [`ComputeType::F32FastTf32`]: crate::ComputeType::F32FastTf32
//! [`ComputeType::F32Pedantic`]: crate::ComputeType::F32Pedantic
//! [`ComputeType::F32`]: crate::ComputeType::F32

use super::gpu::GEMM_EX;
use crate::check::GemmShape;
use crate::datatype::sealed::Gemm;
use crate::datatype::{GemmDatatype, GemmExDatatype, GpuBox, GpuBuffer, GpuBufferMut};
use crate::{Error, MatrixOp};

/// The CPU backend's state: the workspace size asked for, which nothing uses.
#[derive(Debug, Default)]
pub(crate) struct Cpu {
    workspace_bytes: Option<usize>,
}

impl Cpu {
    /// Records a workspace of `bytes`.
    pub(crate) fn set_workspace(&mut self, bytes: usize) {
        self.workspace_bytes = Some(bytes);
    }

    /// The size recorded by [`Cpu::set_workspace`].
    pub(crate) fn workspace_bytes(&self) -> Option<usize> {
        self.workspace_bytes
    }
}

/// `gemm` on the host: `T`'s `matrixmultiply` routine on copies of the operands; `shape` has
/// been checked.
///
/// # Errors
/// [`Error::Cuda`] if a copy fails; the shape's errors if a copy's length differs from the
/// buffer's (which cust's copies never do).
pub(crate) fn gemm<T: GemmDatatype>(
    shape: &GemmShape,
    alpha: &impl GpuBox<T>,
    a: &impl GpuBuffer<T>,
    beta: &impl GpuBox<T>,
    b: &impl GpuBuffer<T>,
    c: &mut impl GpuBufferMut<T>,
) -> Result<(), Error> {
    let (alpha, beta) = (alpha.value()?, beta.value()?);
    let (a, b) = (a.clone_dtoh()?, b.clone_dtoh()?);
    let mut c_host = c.clone_dtoh()?;
    product(T::GEMM, shape, alpha, &a, &b, beta, &mut c_host)?;
    c.copy_htod(&c_host)?;
    Ok(())
}

/// `gemm_ex` on the host: the operands widened to `f32`, the `f32` product, and `C`'s `m×n`
/// elements rounded back to `T`; `shape` has been checked.
///
/// # Errors
/// As [`gemm`].
pub(crate) fn gemm_ex<T: GemmExDatatype>(
    shape: &GemmShape,
    alpha: &impl GpuBox<f32>,
    a: &impl GpuBuffer<T>,
    beta: &impl GpuBox<f32>,
    b: &impl GpuBuffer<T>,
    c: &mut impl GpuBufferMut<T>,
) -> Result<(), Error> {
    let (alpha, beta) = (alpha.value()?, beta.value()?);
    let widen = |v: &[T]| v.iter().map(|&x| x.to_f32()).collect::<Vec<f32>>();
    let (a, b) = (widen(&a.clone_dtoh()?), widen(&b.clone_dtoh()?));
    let mut c_host = c.clone_dtoh()?;
    let mut c_f32 = widen(&c_host);
    product(GEMM_EX, shape, alpha, &a, &b, beta, &mut c_f32)?;
    // Only the m×n elements are results: the padding keeps its bytes (a round trip through
    // `f32` could change a NaN's payload).
    for j in 0..shape.n {
        let column = j * shape.ldc..j * shape.ldc + shape.m;
        for (out, &x) in c_host[column.clone()].iter_mut().zip(&c_f32[column]) {
            *out = T::from_f32(x);
        }
    }
    c.copy_htod(&c_host)?;
    Ok(())
}

/// `c ← alpha · op_a(a) · op_b(b) + beta · c` on host copies, column-major as `shape` says.
///
/// # Errors
/// `shape`'s errors for the slices' lengths (the buffers' lengths, already checked).
fn product<T: Gemm>(
    call: &'static str,
    shape: &GemmShape,
    alpha: T,
    a: &[T],
    b: &[T],
    beta: T,
    c: &mut [T],
) -> Result<(), Error> {
    // Checked again on the copies' lengths, so that the bounds the unsafe call relies on are
    // proved here whatever the copies returned.
    GemmShape {
        a_len: a.len(),
        b_len: b.len(),
        c_len: c.len(),
        ..*shape
    }
    .check(call)?;
    // Column-major: element (row i, column j) of a stored matrix is at i + j·ld; a transposed
    // operand is read with its strides swapped. Every `ld` is at most `i32::MAX` (checked),
    // so it fits an `isize`.
    let strides = |op: MatrixOp, ld: usize| {
        if op.transposes() {
            (ld as isize, 1)
        } else {
            (1, ld as isize)
        }
    };
    let (rsa, csa) = strides(shape.op_a, shape.lda);
    let (rsb, csb) = strides(shape.op_b, shape.ldb);
    // alpha = 0: A and B are not read and C ← beta·C (reference BLAS's rule), which is what
    // `matrixmultiply` does for k = 0.
    let k = if alpha == T::ZERO { 0 } else { shape.k };
    // SAFETY: the check above proves, for the slices' own lengths, that op_a(A) (m×k) at
    // strides (rsa, csa), op_b(B) (k×n) at (rsb, csb) and C (m×n) at (1, ldc) lie inside
    // `a`, `b` and `c`; C's elements are distinct since ldc ≥ m; `c` is a `&mut` slice, so
    // it overlaps neither `a` nor `b`.
    unsafe {
        T::host_gemm(
            shape.m,
            k,
            shape.n,
            alpha,
            a.as_ptr(),
            rsa,
            csa,
            b.as_ptr(),
            rsb,
            csb,
            beta,
            c.as_mut_ptr(),
            1,
            shape.ldc as isize,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Column-major `C = alpha · op_a(A) · op_b(B) + beta · C` by definition, in `f64`, with
    /// `beta = 0` not reading `C`.
    fn reference(shape: &GemmShape, alpha: f64, a: &[f64], b: &[f64], beta: f64, c: &mut [f64]) {
        let at = |op: MatrixOp, ld: usize, row: usize, col: usize| {
            if op.transposes() {
                col + row * ld
            } else {
                row + col * ld
            }
        };
        for j in 0..shape.n {
            for i in 0..shape.m {
                let sum: f64 = (0..shape.k)
                    .map(|p| {
                        a[at(shape.op_a, shape.lda, i, p)] * b[at(shape.op_b, shape.ldb, p, j)]
                    })
                    .sum();
                let old = if beta == 0.0 {
                    0.0
                } else {
                    beta * c[i + j * shape.ldc]
                };
                c[i + j * shape.ldc] = alpha * sum + old;
            }
        }
    }

    /// Small integers in -4..=4 (every sum exact), varying with the index and a seed.
    fn ints(len: usize, seed: usize) -> Vec<f64> {
        (0..len)
            .map(|i| ((i * 7 + seed * 3) % 9) as f64 - 4.0)
            .collect()
    }

    /// A ragged 5×3·… shape with padded leading dimensions for every transpose pair.
    fn shapes() -> impl Iterator<Item = GemmShape> {
        let ops = [
            MatrixOp::None,
            MatrixOp::Transpose,
            MatrixOp::ConjugateTranspose,
        ];
        ops.into_iter().flat_map(move |op_a| {
            ops.into_iter().map(move |op_b| {
                let (m, n, k) = (5, 3, 7);
                // Stored rows + 2 of padding.
                let lda = if op_a.transposes() { k } else { m } + 2;
                let ldb = if op_b.transposes() { n } else { k } + 2;
                let ldc = m + 1;
                let len = |ld: usize, cols: usize| ld * cols;
                GemmShape {
                    m,
                    n,
                    k,
                    lda,
                    op_a,
                    a_len: len(lda, if op_a.transposes() { m } else { k }),
                    ldb,
                    op_b,
                    b_len: len(ldb, if op_b.transposes() { k } else { n }),
                    ldc,
                    c_len: len(ldc, n),
                }
            })
        })
    }

    #[test]
    fn products_match_the_definition_for_every_transpose_and_padding() {
        for shape in shapes() {
            for (alpha, beta) in [(2.0, -1.0), (1.0, 0.0), (-3.0, 2.0)] {
                let (a, b) = (ints(shape.a_len, 1), ints(shape.b_len, 2));
                let c0 = ints(shape.c_len, 3);
                let mut want = c0.clone();
                reference(&shape, alpha, &a, &b, beta, &mut want);
                let mut got = c0.clone();
                product("test", &shape, alpha, &a, &b, beta, &mut got).expect("f64");
                assert_eq!(got, want, "f64 {shape:?} alpha {alpha} beta {beta}");
                let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
                let mut got = f32s(&c0);
                let (alpha, beta) = (alpha as f32, beta as f32);
                product("test", &shape, alpha, &f32s(&a), &f32s(&b), beta, &mut got).expect("f32");
                assert_eq!(got, f32s(&want), "f32 {shape:?} alpha {alpha} beta {beta}");
            }
        }
    }

    #[test]
    fn padding_of_c_is_left_alone() {
        let shape = shapes().next().expect("a shape");
        let (a, b) = (ints(shape.a_len, 1), ints(shape.b_len, 2));
        let mut c = vec![7.5; shape.c_len];
        product("test", &shape, 1.0, &a, &b, 0.0, &mut c).expect("product");
        for j in 0..shape.n {
            for i in shape.m..shape.ldc {
                assert_eq!(c[i + j * shape.ldc], 7.5, "padding row {i}, column {j}");
            }
        }
    }

    /// cuBLAS's `beta = 0`: `C` is not read, so a NaN there does not reach the result; and
    /// BLAS's `alpha = 0`: `A` and `B` are not read.
    #[test]
    fn zero_scalars_do_not_read_their_operands() {
        let shape = shapes().next().expect("a shape");
        let (a, b) = (ints(shape.a_len, 1), ints(shape.b_len, 2));
        let mut want = vec![0.0; shape.c_len];
        reference(&shape, 1.0, &a, &b, 0.0, &mut want);
        let mut got = vec![f64::NAN; shape.c_len];
        product("test", &shape, 1.0, &a, &b, 0.0, &mut got).expect("beta 0");
        for j in 0..shape.n {
            for i in 0..shape.m {
                let at = i + j * shape.ldc;
                assert_eq!(got[at], want[at], "beta 0: row {i}, column {j}");
            }
        }
        let nans = |len| vec![f64::NAN; len];
        let mut got = ints(shape.c_len, 3);
        let want: Vec<f64> = got.iter().map(|x| -2.0 * x).collect();
        product(
            "test",
            &shape,
            0.0,
            &nans(shape.a_len),
            &nans(shape.b_len),
            -2.0,
            &mut got,
        )
        .expect("alpha 0");
        for j in 0..shape.n {
            for i in 0..shape.m {
                let at = i + j * shape.ldc;
                assert_eq!(got[at], want[at], "alpha 0: row {i}, column {j}");
            }
        }
    }

    #[test]
    fn short_copies_are_refused_not_read_past() {
        let shape = shapes().next().expect("a shape");
        // A is stored m×k: it needs lda·(k − 1) + m elements; give it one fewer.
        let a = ints(shape.lda * (shape.k - 1) + shape.m - 1, 1);
        let b = ints(shape.b_len, 2);
        let mut c = vec![0.0; shape.c_len];
        let err = product("test", &shape, 1.0, &a, &b, 0.0, &mut c).unwrap_err();
        assert!(
            matches!(err, Error::BufferTooShort { matrix: "A", .. }),
            "{err}"
        );
    }
}
