//! `gemm` and `gemm_ex` against a CPU reference, on the device `Context::from_env(0)` opens:
//! the GPU where there is one, else cust's CPU emulator, where blastoff computes on the host
//! (`FERROCUDA_DEVICE=cpu` picks the emulator on a GPU machine). The inputs are small
//! integers, so every product and sum is exact in `f32` and `f64` and the results must match
//! bit for bit on both.

use blastoff::{
    ComputeType, CublasContext, Error, GemmDatatype, GemmExDatatype, LtMatmul, MatrixOp,
};
use cust::context::Context;
use cust::memory::{CopyDestination as _, DeviceBox, DeviceBuffer};
use cust::stream::{Stream, StreamFlags};

/// Column-major `C = alpha · op_a(A) · op_b(B) + beta · C` on the CPU, with `A` stored
/// `m×k` (or `k×m` when `trans_a`) and `B` stored `k×n` (or `n×k` when `trans_b`), packed.
fn cpu_gemm(
    (m, n, k): (usize, usize, usize),
    (alpha, beta): (f64, f64),
    (a, trans_a): (&[f64], bool),
    (b, trans_b): (&[f64], bool),
    c: &mut [f64],
) {
    for j in 0..n {
        for i in 0..m {
            let mut sum = 0.0;
            for p in 0..k {
                let a_ip = if trans_a { a[p + i * k] } else { a[i + p * m] };
                let b_pj = if trans_b { b[j + p * n] } else { b[p + j * k] };
                sum += a_ip * b_pj;
            }
            c[i + j * m] = alpha * sum + beta * c[i + j * m];
        }
    }
}

/// Small integer values in -4..=4, varying with the index and a seed.
fn ints(len: usize, seed: usize) -> Vec<f64> {
    (0..len)
        .map(|i| ((i * 7 + seed * 3) % 9) as f64 - 4.0)
        .collect()
}

fn check<T: GemmDatatype + PartialEq + std::fmt::Debug>(from_f64: fn(f64) -> T) {
    let _ctx = Context::from_env(0).expect("GPU or CPU emulator context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let mut blas = CublasContext::new().expect("cuBLAS handle");
    let (m, n, k) = (5, 3, 4);
    for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
        let (alpha, beta) = (2.0, -1.0);
        let a = ints(m * k, 1);
        let b = ints(k * n, 2);
        let c0 = ints(m * n, 3);
        let mut want = c0.clone();
        cpu_gemm(
            (m, n, k),
            (alpha, beta),
            (&a, trans_a),
            (&b, trans_b),
            &mut want,
        );

        let conv = |v: &[f64]| v.iter().map(|&x| from_f64(x)).collect::<Vec<T>>();
        let a_gpu = DeviceBuffer::from_slice(&conv(&a)).expect("a");
        let b_gpu = DeviceBuffer::from_slice(&conv(&b)).expect("b");
        let mut c_gpu = DeviceBuffer::from_slice(&conv(&c0)).expect("c");
        let alpha_gpu = DeviceBox::new(&from_f64(alpha)).expect("alpha");
        let beta_gpu = DeviceBox::new(&from_f64(beta)).expect("beta");
        let op = |t: bool| {
            if t {
                MatrixOp::Transpose
            } else {
                MatrixOp::None
            }
        };
        blas.gemm::<T>(
            &stream,
            m,
            n,
            k,
            &alpha_gpu,
            &a_gpu,
            if trans_a { k } else { m },
            op(trans_a),
            &beta_gpu,
            &b_gpu,
            if trans_b { n } else { k },
            op(trans_b),
            &mut c_gpu,
            m,
        )
        .expect("gemm");
        stream.synchronize().expect("synchronize");
        let mut got = conv(&c0);
        c_gpu.copy_to(&mut got).expect("copy back");
        assert_eq!(got, conv(&want), "trans_a {trans_a}, trans_b {trans_b}");
    }

    // A buffer too short for its shape is refused before anything is queued.
    let a_gpu = DeviceBuffer::from_slice(&vec![from_f64(1.0); m * k - 1]).expect("a");
    let b_gpu = DeviceBuffer::from_slice(&vec![from_f64(1.0); k * n]).expect("b");
    let mut c_gpu = DeviceBuffer::from_slice(&vec![from_f64(0.0); m * n]).expect("c");
    let one = DeviceBox::new(&from_f64(1.0)).expect("alpha");
    let err = blas
        .gemm::<T>(
            &stream,
            m,
            n,
            k,
            &one,
            &a_gpu,
            m,
            MatrixOp::None,
            &one,
            &b_gpu,
            k,
            MatrixOp::None,
            &mut c_gpu,
            m,
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::BufferTooShort {
                matrix: "A",
                needed: 20,
                len: 19,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn gemm_f32_matches_cpu_exactly() {
    check::<f32>(|x| x as f32);
}

#[test]
fn gemm_f64_matches_cpu_exactly() {
    check::<f64>(|x| x);
}

#[test]
#[ignore = "needs a CUDA GPU: the version is cuBLAS's, which the CPU emulator does not have"]
fn version_is_reported() {
    let _ctx = cust::quick_init().expect("CUDA context");
    let blas = CublasContext::new().expect("cuBLAS handle");
    let (major, _, _) = blas.version().expect("version");
    assert!(major >= 11, "cuBLAS major version {major}");
}

/// `gemm_ex` on `T` operands with `compute`, every transpose combination, against the CPU.
/// The values stay within ±132, integers: exact in `bf16` (8 significant bits), `f16`,
/// TF32 and `f32`, so every product, sum and the rounded output are exact.
fn check_ex<T: GemmExDatatype + PartialEq + std::fmt::Debug>(
    from_f64: fn(f64) -> T,
    compute: ComputeType,
) {
    let _ctx = Context::from_env(0).expect("GPU or CPU emulator context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let mut blas = CublasContext::new().expect("cuBLAS handle");
    blas.set_workspace(CublasContext::HOPPER_WORKSPACE_BYTES)
        .expect("workspace");
    let (m, n, k) = (5, 3, 4);
    let (alpha, beta) = (2.0, -1.0);
    let alpha_gpu = DeviceBox::new(&(alpha as f32)).expect("alpha");
    let beta_gpu = DeviceBox::new(&(beta as f32)).expect("beta");
    let conv = |v: &[f64]| v.iter().map(|&x| from_f64(x)).collect::<Vec<T>>();
    for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
        let a = ints(m * k, 1);
        let b = ints(k * n, 2);
        let c0 = ints(m * n, 3);
        let mut want = c0.clone();
        cpu_gemm(
            (m, n, k),
            (alpha, beta),
            (&a, trans_a),
            (&b, trans_b),
            &mut want,
        );
        let a_gpu = DeviceBuffer::from_slice(&conv(&a)).expect("a");
        let b_gpu = DeviceBuffer::from_slice(&conv(&b)).expect("b");
        let mut c_gpu = DeviceBuffer::from_slice(&conv(&c0)).expect("c");
        let op = |t: bool| {
            if t {
                MatrixOp::Transpose
            } else {
                MatrixOp::None
            }
        };
        blas.gemm_ex::<T>(
            &stream,
            m,
            n,
            k,
            &alpha_gpu,
            &a_gpu,
            if trans_a { k } else { m },
            op(trans_a),
            &beta_gpu,
            &b_gpu,
            if trans_b { n } else { k },
            op(trans_b),
            &mut c_gpu,
            m,
            compute,
        )
        .expect("gemm_ex");
        stream.synchronize().expect("synchronize");
        let mut got = conv(&c0);
        c_gpu.copy_to(&mut got).expect("copy back");
        assert_eq!(
            got,
            conv(&want),
            "{compute}, trans_a {trans_a}, trans_b {trans_b}"
        );
    }
}

#[test]
fn gemm_ex_bf16_matches_cpu_exactly() {
    check_ex::<half::bf16>(half::bf16::from_f64, ComputeType::F32);
    check_ex::<half::bf16>(half::bf16::from_f64, ComputeType::F32Pedantic);
}

#[test]
fn gemm_ex_f16_matches_cpu_exactly() {
    check_ex::<half::f16>(half::f16::from_f64, ComputeType::F32);
}

#[test]
fn gemm_ex_f32_matches_cpu_exactly_with_and_without_tf32() {
    check_ex::<f32>(|x| x as f32, ComputeType::F32);
    check_ex::<f32>(|x| x as f32, ComputeType::F32Pedantic);
    check_ex::<f32>(|x| x as f32, ComputeType::F32FastTf32);
}

/// The row-major product `C = A·Bᵀ` (`A` m×k, `B` n×k, `C` m×n, all row-major), as the
/// `gemm_ex` docs spell it: column-major `Cᵀ = B·Aᵀ`, `b` first with `Transpose`.
#[test]
fn gemm_ex_row_major_a_times_b_transposed() {
    let _ctx = Context::from_env(0).expect("GPU or CPU emulator context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let mut blas = CublasContext::new().expect("cuBLAS handle");
    let (m, n, k) = (3, 5, 4);
    let a = ints(m * k, 4);
    let b = ints(n * k, 5);
    let mut want = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[j * k + p]).sum();
        }
    }
    let bf = |v: &[f64]| {
        v.iter()
            .map(|&x| half::bf16::from_f64(x))
            .collect::<Vec<_>>()
    };
    let a_gpu = DeviceBuffer::from_slice(&bf(&a)).expect("a");
    let b_gpu = DeviceBuffer::from_slice(&bf(&b)).expect("b");
    let mut c_gpu = DeviceBuffer::from_slice(&vec![half::bf16::NAN; m * n]).expect("c");
    let one = DeviceBox::new(&1.0f32).expect("alpha");
    let zero = DeviceBox::new(&0.0f32).expect("beta");
    blas.gemm_ex(
        &stream,
        n,
        m,
        k,
        &one,
        &b_gpu,
        k,
        MatrixOp::Transpose,
        &zero,
        &a_gpu,
        k,
        MatrixOp::None,
        &mut c_gpu,
        n,
        ComputeType::F32,
    )
    .expect("gemm_ex");
    stream.synchronize().expect("synchronize");
    let mut got = vec![half::bf16::ZERO; m * n];
    c_gpu.copy_to(&mut got).expect("copy back");
    assert_eq!(got, bf(&want));
}

/// TF32 on `bf16` operands, a zero workspace and a short buffer are refused before any
/// work is queued, naming the value.
#[test]
fn gemm_ex_bad_arguments_are_named() {
    let _ctx = Context::from_env(0).expect("GPU or CPU emulator context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let mut blas = CublasContext::new().expect("cuBLAS handle");
    assert_eq!(blas.workspace_bytes(), None);
    assert!(matches!(
        blas.set_workspace(0),
        Err(Error::EmptyWorkspace { .. })
    ));
    blas.set_workspace(1 << 20).expect("workspace");
    assert_eq!(blas.workspace_bytes(), Some(1 << 20));
    let x = DeviceBuffer::from_slice(&[half::bf16::ONE; 4]).expect("x");
    let mut c = DeviceBuffer::from_slice(&[half::bf16::ZERO; 4]).expect("c");
    let one = DeviceBox::new(&1.0f32).expect("scalar");
    let mut call = |a_len: usize, compute: ComputeType| {
        let a = DeviceBuffer::from_slice(&vec![half::bf16::ONE; a_len]).expect("a");
        blas.gemm_ex(
            &stream,
            2,
            2,
            2,
            &one,
            &a,
            2,
            MatrixOp::None,
            &one,
            &x,
            2,
            MatrixOp::None,
            &mut c,
            2,
            compute,
        )
    };
    let err = call(4, ComputeType::F32FastTf32).unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedCompute {
                call: "cublasGemmEx",
                compute: ComputeType::F32FastTf32,
                datatype: "bf16"
            }
        ),
        "{err}"
    );
    let err = call(3, ComputeType::F32).unwrap_err();
    assert!(
        matches!(
            err,
            Error::BufferTooShort {
                matrix: "A",
                needed: 4,
                len: 3,
                ..
            }
        ),
        "{err}"
    );
    call(4, ComputeType::F32).expect("a valid call");
    stream.synchronize().expect("synchronize");
    let mut got = [half::bf16::ZERO; 4];
    c.copy_to(&mut got).expect("copy back");
    assert_eq!(got, [half::bf16::from_f32(2.0); 4]);
}

/// On the CPU emulator, cuBLAS's version is an error naming the call, not a panic.
#[test]
fn version_is_an_error_on_the_emulator() {
    let _ctx = Context::emulator();
    let blas = CublasContext::new().expect("CPU handle");
    let err = blas.version().unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotOnEmulator {
                call: "cublasGetVersion_v2"
            }
        ),
        "{err}"
    );
}

/// The emulator's `gemm_ex` sums in `f32` and rounds the result to `T`, to nearest with ties
/// to even: 1024·2 + 1·1 = 2049 is halfway between the `f16` values 2048 and 2050, and
/// 128·2 + 1·1 = 257 halfway between the `bf16` values 256 and 258.
#[test]
fn gemm_ex_on_the_emulator_rounds_the_f32_sum_to_nearest_even() {
    fn one<T: GemmExDatatype + PartialEq + std::fmt::Debug>(
        from_f32: fn(f32) -> T,
        big: f32,
        want: f32,
    ) {
        let _ctx = Context::emulator();
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
        let mut blas = CublasContext::new().expect("CPU handle");
        // 1×2 · 2×1.
        let a = DeviceBuffer::from_slice(&[from_f32(big), from_f32(1.0)]).expect("a");
        let b = DeviceBuffer::from_slice(&[from_f32(2.0), from_f32(1.0)]).expect("b");
        let mut c = DeviceBuffer::from_slice(&[from_f32(0.0)]).expect("c");
        let one = DeviceBox::new(&1.0f32).expect("alpha");
        let zero = DeviceBox::new(&0.0f32).expect("beta");
        blas.gemm_ex(
            &stream,
            1,
            1,
            2,
            &one,
            &a,
            1,
            MatrixOp::None,
            &zero,
            &b,
            2,
            MatrixOp::None,
            &mut c,
            1,
            ComputeType::F32,
        )
        .expect("gemm_ex");
        let mut got = [from_f32(0.0)];
        c.copy_to(&mut got).expect("copy back");
        assert_eq!(got, [from_f32(want)]);
    }
    one(half::f16::from_f32, 1024.0, 2048.0);
    one(half::bf16::from_f32, 128.0, 256.0);
}

/// The emulator writes only `C`'s `m×n` elements: with `ldc > m`, the padding keeps its
/// bytes (here a NaN with a payload), and with `beta = 0` the NaNs in `C` are not read.
#[test]
fn gemm_ex_on_the_emulator_leaves_the_padding_of_c_alone() {
    let _ctx = Context::emulator();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    let mut blas = CublasContext::new().expect("CPU handle");
    let h = half::f16::from_f32;
    let payload = half::f16::from_bits(0x7e01);
    // C = A·B, A 2×1 = [1, 2], B 1×2 = [3, 4]; C stored with ldc = 3.
    let a = DeviceBuffer::from_slice(&[h(1.0), h(2.0)]).expect("a");
    let b = DeviceBuffer::from_slice(&[h(3.0), h(4.0)]).expect("b");
    let mut c = DeviceBuffer::from_slice(&[
        half::f16::NAN,
        half::f16::NAN,
        payload,
        half::f16::NAN,
        half::f16::NAN,
    ])
    .expect("c");
    let one = DeviceBox::new(&1.0f32).expect("alpha");
    let zero = DeviceBox::new(&0.0f32).expect("beta");
    blas.gemm_ex(
        &stream,
        2,
        2,
        1,
        &one,
        &a,
        2,
        MatrixOp::None,
        &zero,
        &b,
        1,
        MatrixOp::None,
        &mut c,
        3,
        ComputeType::F32,
    )
    .expect("gemm_ex");
    let mut got = [half::f16::ZERO; 5];
    c.copy_to(&mut got).expect("copy back");
    assert_eq!(
        got.map(half::f16::to_bits),
        [h(3.0), h(6.0), payload, h(4.0), h(8.0)].map(half::f16::to_bits)
    );
}

/// cuBLASLt's multiply (`LtMatmul`), column-major `C = op(A)·op(B)` on small integers: on a
/// GPU, every algorithm the heuristic proposes gives the CPU's result exactly, for every
/// transpose combination and `bf16`, `f16` and `f32` (TF32 too); on the CPU emulator,
/// which has no cuBLASLt, making one is `NotOnEmulator`.
#[test]
fn lt_matmul_every_algorithm_matches_cpu_exactly_on_a_gpu() {
    fn run<T: GemmExDatatype + PartialEq + std::fmt::Debug>(
        from_f64: fn(f64) -> T,
        compute: ComputeType,
        stream: &Stream,
    ) {
        let (m, n, k) = (40, 24, 32);
        let conv = |v: &[f64]| v.iter().map(|&x| from_f64(x)).collect::<Vec<T>>();
        for (trans_a, trans_b) in [(false, false), (true, false), (false, true), (true, true)] {
            let op = |t: bool| {
                if t {
                    MatrixOp::Transpose
                } else {
                    MatrixOp::None
                }
            };
            let (a, b) = (ints(m * k, 1), ints(k * n, 2));
            let mut want = vec![0.0; m * n];
            cpu_gemm(
                (m, n, k),
                (1.0, 0.0),
                (&a, trans_a),
                (&b, trans_b),
                &mut want,
            );
            let mut lt = LtMatmul::<T>::new(
                (op(trans_a), op(trans_b)),
                (m, n, k),
                if trans_a { k } else { m },
                if trans_b { n } else { k },
                m,
                compute,
                CublasContext::HOPPER_WORKSPACE_BYTES,
                8,
            )
            .expect("LtMatmul");
            assert!(lt.algorithms() >= 1);
            let a_gpu = DeviceBuffer::from_slice(&conv(&a)).expect("a");
            let b_gpu = DeviceBuffer::from_slice(&conv(&b)).expect("b");
            for i in 0..lt.algorithms() {
                assert!(lt.select(i));
                let mut c_gpu = DeviceBuffer::from_slice(&conv(&vec![f64::NAN; m * n])).expect("c");
                lt.matmul(stream, &a_gpu, &b_gpu, &mut c_gpu)
                    .expect("matmul");
                stream.synchronize().expect("synchronize");
                let mut got = conv(&want);
                c_gpu.copy_to(&mut got).expect("copy back");
                assert_eq!(
                    got,
                    conv(&want),
                    "{compute}, algorithm {i}, trans_a {trans_a}, trans_b {trans_b}"
                );
            }
            assert!(!lt.select(lt.algorithms()));
        }
    }
    let _ctx = Context::from_env(0).expect("GPU or CPU emulator context");
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).expect("stream");
    if stream.is_emulator() {
        let err = LtMatmul::<f32>::new(
            (MatrixOp::None, MatrixOp::None),
            (4, 4, 4),
            4,
            4,
            4,
            ComputeType::F32,
            1 << 20,
            8,
        )
        .expect_err("no cuBLASLt on the emulator");
        assert!(
            matches!(
                err,
                Error::NotOnEmulator {
                    call: "cublasLtMatmul"
                }
            ),
            "{err}"
        );
        return;
    }
    run::<half::bf16>(half::bf16::from_f64, ComputeType::F32, &stream);
    run::<half::f16>(half::f16::from_f64, ComputeType::F32, &stream);
    run::<f32>(|x| x as f32, ComputeType::F32, &stream);
    run::<f32>(|x| x as f32, ComputeType::F32FastTf32, &stream);
}
