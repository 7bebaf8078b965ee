//! The shape rules of the tensor-core products ([`check_shape`]), shared with the FP8 GEMM
//! ([`check_dims`]).

use super::elem::TcElem;
use crate::gpu::GpuError;
use kernels::gemm_tc::mma_sync::{MMA_BM, MMA_BN};
use kernels::gemm_tc::wgmma::{WG_BM, WG_BN};

// `check_shape` counts the tiles of both families with one tile shape.
const _: () = assert!(WG_BM == MMA_BM && WG_BN == MMA_BN);

/// Checks a product's shape and buffer lengths, naming the value that breaks a rule: the
/// rules of the [module docs](super), the buffers at least m·k, n·k and m·n elements (in
/// `lens`, for `A`, `B`, `C`), and fewer than 2³¹ output tiles.
///
/// # Errors
/// [`GpuError::LaunchConfig`] naming the dimension or buffer.
pub fn check_shape<T: TcElem>(
    m: usize,
    n: usize,
    k: usize,
    lens: [usize; 3],
) -> Result<(), GpuError> {
    check_dims(T::NAME, T::K_MULTIPLE, m, n, k, lens)
}

/// [`check_shape`] for the GEMM named `name` (in the error: `"{name} GEMM: …"`) whose `k`
/// must be a multiple of `k_multiple` (16 bytes of a row); shared with
/// [`crate::matmul_fp8`].
pub(crate) fn check_dims(
    name: &str,
    k_multiple: usize,
    m: usize,
    n: usize,
    k: usize,
    lens: [usize; 3],
) -> Result<(), GpuError> {
    let fail = |what: String| Err(GpuError::LaunchConfig(format!("{name} GEMM: {what}")));
    for (name, v) in [("m", m), ("n", n), ("k", k)] {
        if v == 0 || v >= 1 << 31 {
            return fail(format!("{name} = {v} must be in 1..2^31"));
        }
    }
    if !k.is_multiple_of(k_multiple) {
        return fail(format!(
            "k = {k} must be a multiple of {k_multiple} (rows of A and B must be whole \
             16-byte chunks for cp.async and TMA); pad k with zeros"
        ));
    }
    // Both families tile C in 128×256 blocks, counted in 32 bits (and a grid holds fewer
    // than 2³¹ blocks).
    let tiles = m.div_ceil(MMA_BM as usize) * n.div_ceil(MMA_BN as usize);
    if tiles >= 1 << 31 {
        return fail(format!(
            "m = {m} and n = {n} make {tiles} tiles of 128×256, more than a grid holds (2^31 - 1)"
        ));
    }
    for ((name, len), need) in ["A", "B", "C"]
        .into_iter()
        .zip(lens)
        .zip([m * k, n * k, m * n])
    {
        if len < need {
            return fail(format!(
                "{name} has {len} elements, fewer than the {need} its shape (m = {m}, n = \
                 {n}, k = {k}) needs"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::elem::Tf32;
    use super::*;
    use cuda_std::half::{bf16, f16};

    #[test]
    fn shapes_outside_the_rules_are_refused_by_value() {
        let err = check_shape::<bf16>(200, 328, 100, [200 * 100, 328 * 100, 200 * 328])
            .expect_err("k = 100 is not a multiple of 8")
            .to_string();
        assert!(
            err.contains("k = 100") && err.contains("multiple of 8"),
            "{err}"
        );
        let err = check_shape::<Tf32>(4, 4, 0, [0, 0, 16])
            .expect_err("k = 0")
            .to_string();
        assert!(err.contains("k = 0"), "{err}");
        let err = check_shape::<f16>(16, 16, 16, [256, 255, 256])
            .expect_err("B too short")
            .to_string();
        assert!(err.contains("B has 255 elements"), "{err}");
        check_shape::<Tf32>(3, 5, 4, [12, 20, 15]).expect("tf32 needs k % 4 only");
    }
}
