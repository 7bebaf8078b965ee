//! [`LtMatmul`]: cuBLASLt's matrix multiply (`cublasLtMatmul`) for one problem, with the
//! algorithms its heuristic proposes, so that a caller can time them and keep the fastest:
//! the path frameworks take (torch's `a @ b.t()` calls `cublasLtMatmul`). GPU only.
//!
//! Column-major, as cuBLAS: `C = op(A)·op(B)`, `op(A)` m×k, `op(B)` k×n, `C` m×n, with `f32`
//! scale factors `α = 1`, `β = 0`. The preference is cuBLASLt's default apart from the
//! workspace limit, so its reduction schemes (split-K) are unrestricted, as under torch's
//! defaults (`allow_bf16_reduced_precision_reduction` and the FP16 one are on).
//!
//! [`LtMatmulFp8`] is the same for FP8 operands (cuBLASLt's scaled matmul, `D =
//! scale_a·scale_b·(A·B)` with per-tensor scales in device memory, bf16/f16/f32 out).

use crate::backend::gpu::same_context;
use crate::check::GemmShape;
use crate::datatype::GemmExDatatype;
use crate::{ComputeType, Error, MatrixOp};
use cudarc::cublaslt::{result, sys};
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceSlice};
use cust::memory::{DeviceBuffer, DeviceCopy};
use cust::stream::Stream;
use std::marker::PhantomData;

/// `cublasLtMatmul`'s name, for errors.
const MATMUL: &str = "cublasLtMatmul";

/// cuBLASLt's multiply of one shape, type and compute type, its workspace, and the
/// algorithms its heuristic proposed (the current one used by [`LtMatmul::matmul`]).
#[derive(Debug)]
pub struct LtMatmul<T: GemmExDatatype> {
    core: Core,
    _t: PhantomData<T>,
}

/// What [`LtMatmul`] and [`LtMatmulFp8`] share: the handle, descriptors, workspace and
/// proposed algorithms, for operand types named by their `cudaDataType`s.
#[derive(Debug)]
struct Core {
    handle: sys::cublasLtHandle_t,
    desc: sys::cublasLtMatmulDesc_t,
    /// `A`, `B`, `C` (also `D`) as stored.
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    shape: GemmShape,
    algorithms: Vec<sys::cublasLtMatmulAlgo_t>,
    current: usize,
    workspace: DeviceBuffer<u8>,
}

/// cuBLASLt's data type of `T` (the values of `cudaDataType`, CUDA's `library_types.h`).
fn data_type<T: GemmExDatatype>() -> sys::cudaDataType {
    match T::NAME {
        "bf16" => sys::cudaDataType::CUDA_R_16BF,
        "f16" => sys::cudaDataType::CUDA_R_16F,
        _ => sys::cudaDataType::CUDA_R_32F,
    }
}

/// `cublasOperation_t` (cuBLAS documentation): `CUBLAS_OP_N` 0, `CUBLAS_OP_T` 1, as the
/// `int32_t` the matmul descriptor's `TRANSA`/`TRANSB` take.
fn op(op: MatrixOp) -> i32 {
    match op {
        MatrixOp::None => 0,
        MatrixOp::Transpose => 1,
        MatrixOp::ConjugateTranspose => 2,
    }
}

fn lt_error(call: &'static str) -> impl FnOnce(result::CublasError) -> Error {
    move |e| Error::Cublas {
        call,
        status: format!("{:?}", e.0),
    }
}

impl<T: GemmExDatatype> LtMatmul<T> {
    /// Prepares `C = op(A)·op(B)` (column-major; `op(A)` m×k stored with leading dimension
    /// `lda`, `op(B)` k×n with `ldb`, `C` m×n with `ldc`) at `compute`, with a workspace of
    /// `workspace_bytes` on the current context, and asks the heuristic for up to
    /// `candidates` algorithms (in its order, best guess first).
    ///
    /// # Errors
    /// - the shape checks of [`crate::CublasContext::gemm_ex`] (zero or too large
    ///   dimensions, leading dimensions too small), and [`Error::UnsupportedCompute`];
    /// - [`Error::EmptyWorkspace`] for `workspace_bytes` 0;
    /// - [`Error::NotOnEmulator`] where the current context is the CPU emulator;
    /// - [`Error::Cublas`] if `libcublasLt.so` cannot be loaded, a cuBLASLt call fails, or
    ///   the heuristic proposes no algorithm (`CUBLAS_STATUS_NOT_SUPPORTED`);
    /// - [`Error::Cuda`] if the workspace cannot be allocated.
    #[expect(
        clippy::too_many_arguments,
        reason = "cuBLAS's GEMM arguments: two ops, three dimensions, three leading dimensions, compute"
    )]
    pub fn new(
        (op_a, op_b): (MatrixOp, MatrixOp),
        (m, n, k): (usize, usize, usize),
        lda: usize,
        ldb: usize,
        ldc: usize,
        compute: ComputeType,
        workspace_bytes: usize,
        candidates: usize,
    ) -> Result<Self, Error> {
        if !compute.supports(T::DATA_TYPE) {
            return Err(Error::UnsupportedCompute {
                call: MATMUL,
                compute,
                datatype: T::NAME,
            });
        }
        let ty = data_type::<T>();
        Ok(Self {
            core: Core::new(
                [ty, ty, ty],
                (op_a, op_b),
                (m, n, k),
                [lda, ldb, ldc],
                compute,
                workspace_bytes,
                candidates,
                None,
            )?,
            _t: PhantomData,
        })
    }

    /// How many algorithms the heuristic proposed (at least 1).
    pub fn algorithms(&self) -> usize {
        self.core.algorithms.len()
    }

    /// Makes algorithm `index` (in the heuristic's order, `0..algorithms()`) the one
    /// [`LtMatmul::matmul`] uses; an index past the end keeps the current one and returns
    /// `false`.
    pub fn select(&mut self, index: usize) -> bool {
        self.core.select(index)
    }

    /// The algorithm [`LtMatmul::matmul`] uses (an index in the heuristic's order).
    pub fn selected(&self) -> usize {
        self.core.current
    }

    /// Queues `C = op(A)·op(B)` with the selected algorithm on `stream`.
    ///
    /// # Errors
    /// [`Error::BufferTooShort`] if a buffer holds fewer elements than its matrix needs,
    /// [`Error::ContextMismatch`] if one lives on another context than `stream`,
    /// [`Error::Cublas`] for cuBLASLt's own failure.
    pub fn matmul(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<T>,
        b: &DeviceBuffer<T>,
        c: &mut DeviceBuffer<T>,
    ) -> Result<(), Error> {
        self.core.matmul(stream, a, b, c)
    }
}

/// An FP8 input format of [`LtMatmulFp8`] (OCP FP8, as cuBLASLt's `CUDA_R_8F_E4M3` and
/// `CUDA_R_8F_E5M2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    /// E4M3 (4 exponent, 3 mantissa bits).
    E4m3,
    /// E5M2 (5 exponent, 2 mantissa bits).
    E5m2,
}

/// cuBLASLt's FP8 scaled matmul of one shape: `D = scale_a·scale_b·(op(A)·op(B))` with `A`
/// and `B` FP8 bytes (`u8` buffers holding codes of one [`Fp8Format`]), `f32` per-tensor
/// scales held in device memory by this object (`CUBLASLT_MATMUL_DESC_A_SCALE_POINTER`,
/// `_B_SCALE_POINTER`), `CUBLAS_COMPUTE_32F`, and `C` = `D` of type `O`; with the
/// algorithms its heuristic proposed, as [`LtMatmul`]. GPU only.
///
/// cuBLASLt takes FP8 only in the "TN" layout (cuBLASLt documentation, `cublasLtMatmul`,
/// FP8 requirements): `op(A)` transposed and `op(B)` not, column-major, which is the
/// row-major `C = A·Bᵀ` of two K-major operands.
#[derive(Debug)]
pub struct LtMatmulFp8<O: GemmExDatatype> {
    core: Core,
    /// `scale_a` and `scale_b` in device memory, 16 bytes apart; the descriptor holds their
    /// addresses.
    scales: DeviceBuffer<f32>,
    _o: PhantomData<O>,
}

impl<O: GemmExDatatype> LtMatmulFp8<O> {
    /// Prepares `D = scale_a·scale_b·(Aᵀ·B)` (column-major; `A` stored k×m with leading
    /// dimension `lda`, `B` stored k×n with `ldb`, `C` m×n with `ldc`) for FP8 operands of
    /// `format`, with a workspace of `workspace_bytes` on the current context, and asks the
    /// heuristic for up to `candidates` algorithms.
    ///
    /// # Errors
    /// As [`LtMatmul::new`]; [`Error::InvalidScale`] naming the scale if `scale_a` or
    /// `scale_b` is not positive and finite; [`Error::Cuda`] if the scales cannot be
    /// uploaded.
    #[expect(
        clippy::too_many_arguments,
        reason = "cuBLAS's GEMM arguments: format, dimensions, leading dimensions, scales"
    )]
    pub fn new(
        format: Fp8Format,
        (m, n, k): (usize, usize, usize),
        lda: usize,
        ldb: usize,
        ldc: usize,
        (scale_a, scale_b): (f32, f32),
        workspace_bytes: usize,
        candidates: usize,
    ) -> Result<Self, Error> {
        for (name, value) in [("scale_a", scale_a), ("scale_b", scale_b)] {
            if !(value.is_finite() && value > 0.0) {
                return Err(Error::InvalidScale {
                    call: MATMUL,
                    name,
                    value,
                });
            }
        }
        // Each scale on its own 16-byte boundary (`scale_a` at 0, `scale_b` at 16 bytes),
        // as separate allocations would put them.
        let scales = DeviceBuffer::from_slice(&[scale_a, 0.0, 0.0, 0.0, scale_b, 0.0, 0.0, 0.0])?;
        if scales.is_emulator() {
            return Err(Error::NotOnEmulator { call: MATMUL });
        }
        let ab = match format {
            Fp8Format::E4m3 => sys::cudaDataType::CUDA_R_8F_E4M3,
            Fp8Format::E5m2 => sys::cudaDataType::CUDA_R_8F_E5M2,
        };
        let base = scales.as_device_ptr().as_raw();
        let core = Core::new(
            [ab, ab, data_type::<O>()],
            (MatrixOp::Transpose, MatrixOp::None),
            (m, n, k),
            [lda, ldb, ldc],
            ComputeType::F32,
            workspace_bytes,
            candidates,
            Some([base, base + 16]),
        )?;
        Ok(Self {
            core,
            scales,
            _o: PhantomData,
        })
    }

    /// How many algorithms the heuristic proposed (at least 1).
    pub fn algorithms(&self) -> usize {
        self.core.algorithms.len()
    }

    /// As [`LtMatmul::select`].
    pub fn select(&mut self, index: usize) -> bool {
        self.core.select(index)
    }

    /// The algorithm [`LtMatmulFp8::matmul`] uses (an index in the heuristic's order).
    pub fn selected(&self) -> usize {
        self.core.current
    }

    /// Queues `D = scale_a·scale_b·(Aᵀ·B)` with the selected algorithm on `stream`; `a` and
    /// `b` hold FP8 codes of the format given to [`LtMatmulFp8::new`].
    ///
    /// # Errors
    /// As [`LtMatmul::matmul`].
    pub fn matmul(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<u8>,
        b: &DeviceBuffer<u8>,
        c: &mut DeviceBuffer<O>,
    ) -> Result<(), Error> {
        same_context(MATMUL, stream.as_cudarc(), "scales", &self.scales)?;
        self.core.matmul(stream, a, b, c)
    }
}

impl Core {
    /// [`LtMatmul::new`] for operands of the `cudaDataType`s `types` (`A`, `B`, `C` = `D`),
    /// and with `scales`, the device addresses of `A`'s and `B`'s `f32` scale factors.
    #[expect(
        clippy::too_many_arguments,
        reason = "cuBLAS's GEMM arguments, the types and the scales"
    )]
    fn new(
        types: [sys::cudaDataType; 3],
        (op_a, op_b): (MatrixOp, MatrixOp),
        (m, n, k): (usize, usize, usize),
        [lda, ldb, ldc]: [usize; 3],
        compute: ComputeType,
        workspace_bytes: usize,
        candidates: usize,
        scales: Option<[u64; 2]>,
    ) -> Result<Self, Error> {
        let shape = GemmShape {
            m,
            n,
            k,
            lda,
            op_a,
            a_len: usize::MAX,
            ldb,
            op_b,
            b_len: usize::MAX,
            ldc,
            c_len: usize::MAX,
        };
        shape.check(MATMUL)?;
        if workspace_bytes == 0 {
            return Err(Error::EmptyWorkspace { call: MATMUL });
        }
        let workspace = DeviceBuffer::<u8>::zeroed(workspace_bytes)?;
        if workspace.is_emulator() {
            return Err(Error::NotOnEmulator { call: MATMUL });
        }
        // SAFETY: only probes for the library (cudarc's loader panics where it is absent).
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Cublas {
                call: "cublasLtCreate",
                status: "libcublasLt.so could not be loaded (put NVIDIA's cuBLAS on the \
                         library path)"
                    .to_owned(),
            });
        }
        let mut lt = Self {
            handle: result::create_handle().map_err(lt_error("cublasLtCreate"))?,
            desc: core::ptr::null_mut(),
            layouts: [core::ptr::null_mut(); 3],
            shape,
            algorithms: Vec::new(),
            current: 0,
            workspace,
        };
        let compute_type = match compute {
            ComputeType::F32FastTf32 => sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
            _ => sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
        };
        lt.desc = result::create_matmul_desc(compute_type, sys::cudaDataType::CUDA_R_32F)
            .map_err(lt_error("cublasLtMatmulDescCreate"))?;
        for (attr, o) in [
            (
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                op(op_a),
            ),
            (
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB,
                op(op_b),
            ),
        ] {
            // SAFETY: `desc` is live; the attribute takes an `int32_t`.
            unsafe { result::set_matmul_desc_attribute(lt.desc, attr, (&raw const o).cast(), 4) }
                .map_err(lt_error("cublasLtMatmulDescSetAttribute"))?;
        }
        for (attr, ptr) in [
            sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
            sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        ]
        .into_iter()
        .zip(scales.into_iter().flatten())
        {
            // SAFETY: `desc` is live; the attribute takes a device pointer (`void *`), here
            // an address that the caller keeps allocated for the object's life.
            unsafe { result::set_matmul_desc_attribute(lt.desc, attr, (&raw const ptr).cast(), 8) }
                .map_err(lt_error("cublasLtMatmulDescSetAttribute"))?;
        }
        // As stored: op(A) m×k is A k×m when transposed.
        let stored = |op: MatrixOp, rows: usize, cols: usize| match op {
            MatrixOp::None => (rows, cols),
            _ => (cols, rows),
        };
        let (ar, ac) = stored(op_a, m, k);
        let (br, bc) = stored(op_b, k, n);
        for (i, (rows, cols, ld)) in [(ar, ac, lda), (br, bc, ldb), (m, n, ldc)]
            .into_iter()
            .enumerate()
        {
            // Checked by `GemmShape::check`: each fits an `int`.
            lt.layouts[i] =
                result::create_matrix_layout(types[i], rows as u64, cols as u64, ld as i64)
                    .map_err(lt_error("cublasLtMatrixLayoutCreate"))?;
        }
        lt.algorithms = lt.heuristic(candidates, workspace_bytes)?;
        Ok(lt)
    }

    /// Up to `candidates` algorithms from `cublasLtMatmulAlgoGetHeuristic`, each needing at
    /// most `workspace_bytes`.
    fn heuristic(
        &self,
        candidates: usize,
        workspace_bytes: usize,
    ) -> Result<Vec<sys::cublasLtMatmulAlgo_t>, Error> {
        const CALL: &str = "cublasLtMatmulAlgoGetHeuristic";
        let pref = result::create_matmul_pref().map_err(lt_error(CALL))?;
        let bytes = workspace_bytes as u64;
        let wanted = candidates.clamp(1, 64);
        let mut found: Vec<sys::cublasLtMatmulHeuristicResult_t> = Vec::with_capacity(wanted);
        let mut count = 0i32;
        // SAFETY: every object is live; `found` has room for `wanted` results, of which the
        // call writes `count`; the preference attribute takes a `uint64_t`.
        let asked = unsafe {
            result::set_matmul_pref_attribute(
                pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&raw const bytes).cast(),
                8,
            )
            .and_then(|()| {
                sys::cublasLtMatmulAlgoGetHeuristic(
                    self.handle,
                    self.desc,
                    self.layouts[0],
                    self.layouts[1],
                    self.layouts[2],
                    self.layouts[2],
                    pref,
                    wanted as i32,
                    found.as_mut_ptr(),
                    &raw mut count,
                )
                .result()
            })
        };
        // SAFETY: `pref` is live and not used again.
        let _ = unsafe { result::destroy_matmul_pref(pref) };
        asked.map_err(lt_error(CALL))?;
        // SAFETY: the call initialised the first `count` (≤ `wanted`) results.
        unsafe { found.set_len(usize::try_from(count).unwrap_or(0).min(wanted)) };
        let algorithms: Vec<_> = found
            .into_iter()
            .filter(|r| {
                r.state == sys::cublasStatus_t::CUBLAS_STATUS_SUCCESS
                    && r.workspaceSize <= workspace_bytes
            })
            .map(|r| r.algo)
            .collect();
        if algorithms.is_empty() {
            return Err(Error::Cublas {
                call: CALL,
                status: "CUBLAS_STATUS_NOT_SUPPORTED (no algorithm for this problem)".to_owned(),
            });
        }
        Ok(algorithms)
    }

    /// As [`LtMatmul::select`].
    fn select(&mut self, index: usize) -> bool {
        let ok = index < self.algorithms.len();
        if ok {
            self.current = index;
        }
        ok
    }

    /// [`LtMatmul::matmul`] for buffers of the types the layouts name (`A` and `B` of `I`,
    /// `C` of `O`; the callers' types make them agree).
    fn matmul<I: DeviceCopy, O: DeviceCopy>(
        &mut self,
        stream: &Stream,
        a: &DeviceBuffer<I>,
        b: &DeviceBuffer<I>,
        c: &mut DeviceBuffer<O>,
    ) -> Result<(), Error> {
        let shape = GemmShape {
            a_len: DeviceSlice::len(a),
            b_len: DeviceSlice::len(b),
            c_len: DeviceSlice::len(c),
            ..self.shape
        };
        shape.check(MATMUL)?;
        for (operand, emu) in [
            ("stream", stream.is_emulator()),
            ("A", a.is_emulator()),
            ("B", b.is_emulator()),
            ("C", c.is_emulator()),
        ] {
            if emu {
                return Err(Error::DeviceMismatch {
                    call: MATMUL,
                    operand,
                    operand_device: "the CPU emulator",
                    handle_device: "a CUDA GPU",
                });
            }
        }
        let cu: &CudaStream = stream.as_cudarc();
        same_context(MATMUL, cu, "A", a)?;
        same_context(MATMUL, cu, "B", b)?;
        same_context(MATMUL, cu, "C", c)?;
        same_context(MATMUL, cu, "workspace", &self.workspace)?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let workspace_bytes = DeviceSlice::len(&self.workspace);
        // Each guard records this use on `cu` when dropped, after the call is queued.
        let (a_ptr, _a_use) = a.device_ptr(cu);
        let (b_ptr, _b_use) = b.device_ptr(cu);
        let (c_ptr, _c_use) = c.device_ptr_mut(cu);
        let (w_ptr, _w_use) = self.workspace.device_ptr_mut(cu);
        // SAFETY: every cuBLASLt object is live; the layouts describe matrices (of the
        // callers' types: `LtMatmul`'s `T`, `LtMatmulFp8`'s bytes and `O`) that
        // the shape check proves fit `a`, `b` and `c`, all on `cu`'s context; `c` is
        // borrowed mutably, so it overlaps neither input; `alpha` and `beta` are host `f32`s
        // (host pointer mode and `CUDA_R_32F` scale type, the descriptor's defaults), read
        // before the call returns; the algorithm came from the heuristic for these
        // descriptors with at most the workspace's size; the guards order the buffers' uses
        // with other streams.
        unsafe {
            result::matmul(
                self.handle,
                self.desc,
                (&raw const alpha).cast(),
                (&raw const beta).cast(),
                a_ptr as *const std::ffi::c_void,
                self.layouts[0],
                b_ptr as *const std::ffi::c_void,
                self.layouts[1],
                c_ptr as *const std::ffi::c_void,
                self.layouts[2],
                c_ptr as *mut std::ffi::c_void,
                self.layouts[2],
                &raw const self.algorithms[self.current],
                w_ptr as *mut std::ffi::c_void,
                workspace_bytes,
                cu.cu_stream() as sys::cudaStream_t,
            )
        }
        .map_err(lt_error(MATMUL))
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        // SAFETY: each object was made by cuBLASLt (null ones are skipped) and is not used
        // again; errors on the way out are of no use.
        unsafe {
            for layout in self.layouts {
                if !layout.is_null() {
                    let _ = result::destroy_matrix_layout(layout);
                }
            }
            if !self.desc.is_null() {
                let _ = result::destroy_matmul_desc(self.desc);
            }
            let _ = result::destroy_handle(self.handle);
        }
    }
}

// SAFETY: the cuBLASLt handle and descriptors are plain heap objects with no thread
// affinity (cuBLASLt documentation: a handle may be used from any host thread, one call at
// a time, which `&mut self` on `matmul` ensures).
unsafe impl Send for Core {}

#[cfg(test)]
mod tests {
    use super::{Fp8Format, LtMatmulFp8};
    use crate::Error;

    /// Checked before anything is allocated: no GPU needed.
    #[test]
    fn fp8_scales_that_are_not_positive_and_finite_are_refused_by_name() {
        for (scales, name) in [
            ((0.0, 1.0), "scale_a"),
            ((1.0, -0.5), "scale_b"),
            ((f32::NAN, 1.0), "scale_a"),
            ((1.0, f32::INFINITY), "scale_b"),
        ] {
            let err = LtMatmulFp8::<half::bf16>::new(
                Fp8Format::E4m3,
                (64, 64, 64),
                64,
                64,
                64,
                scales,
                1 << 20,
                8,
            )
            .expect_err("a bad scale");
            assert!(
                matches!(err, Error::InvalidScale { name: n, .. } if n == name),
                "{err}"
            );
            assert!(err.to_string().contains(name), "{err}");
        }
    }
}
