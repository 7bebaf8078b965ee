//! FP8 matrix products on the GPU: `C = scale_a·scale_b·(A·Bᵀ)` with `A` and `B` in
//! [`F8E4M3`] or [`F8E5M2`] (OCP FP8), the products accumulated in `f32` by the tensor
//! cores, and `C` in [`bf16`] or `f32`: cuBLASLt's scaled matmul (`D = scale_a·scale_b·(A·B)`
//! with per-tensor scales, `CUBLASLT_MATMUL_DESC_A_SCALE_POINTER` and `_B_SCALE_POINTER`),
//! on the `wgmma` kernel of `kernels::gemm_tc::wgmma` (its `gemm_wgmma_{e4m3,e5m2}_{bf16,f32}`
//! entry points; sm_90a: H100, H200, and the CPU emulator).
//!
//! Layout: as [`crate::matmul`] ("TN", both operands K-major, which is also the only layout
//! cuBLASLt takes for FP8): `A` m×k row-major, `B` n×k row-major, `C` m×n row-major, so
//! `c[i·n + j] = scale_a·scale_b·Σ_p a[i·k + p]·b[j·k + p]`.
//!
//! Numbers: every FP8 product is exact; the tensor cores add them in `f32` or narrower
//! (NVIDIA does not specify the accumulator's width for FP8 inputs); the sum is multiplied
//! by `scale = scale_a·scale_b` (rounded once to `f32` on the host) and rounded once to the
//! output type (to nearest, ties to even). Where the sums are exact and the scales are
//! powers of two, the result is exact up to that final rounding: what the tests compare bit
//! for bit.
//!
//! Shapes: `m`, `n`, `k` ≥ 1 and below 2³¹, `k` a multiple of 16 (rows of 16-byte chunks for
//! TMA); other `m` and `n` are fine. Scales: each positive and finite, and their product a
//! positive finite `f32`. A shape or scale outside these rules is an error naming the value,
//! before any launch.
//!
//! Two levels, as [`crate::matmul`]: [`Fp8GemmPlan`] (made once, launched many times, no
//! synchronisation) and [`gemm_fp8`] (upload, run, download).

use crate::gpu::{Gpu, GpuError, ResolvedOf, kernel_table};
use crate::matmul::{check_dims, tile_map};
use crate::vector::sm_count;
use cuda_std::half::{F8E4M3, F8E5M2, bf16};
use cuda_std::launch::{ConstPtr, Kernel, MutPtr, Unsafe, Value};
use cust::{
    error::GpuContext,
    function::LaunchConfig,
    launch::TypedFunction,
    memory::{DeviceBox, DeviceBuffer, DeviceCopy, DevicePointer},
    tma::{TensorMap, TmaElement},
};
use kernels::gemm_tc::wgmma::{WG_BM, WG_BN, WG_SHARED_BYTES, WG_THREADS, WgmmaElem, WgmmaOut};

/// The parameter kinds of the FP8 `wgmma` kernels: `(m, n, k, map_a, map_b, map_c,
/// c: *mut O, c_by_tma: u32, scale: f32)`.
pub type Fp8Params<O> = (
    Value<u32>,
    Value<u32>,
    Value<u32>,
    ConstPtr<TensorMap>,
    ConstPtr<TensorMap>,
    ConstPtr<TensorMap>,
    MutPtr<O>,
    Value<u32>,
    Value<f32>,
);
/// The FP8 `wgmma` kernels' handle type.
pub type Fp8Kernel<O> = Kernel<Fp8Params<O>, Unsafe>;

kernel_table! {
    /// The FP8 kernels of output type `O`, each resolved in a [`Gpu`]'s module on first use
    /// ([`Gpu::kernels`]): [`Fp8Out::E4M3`], [`Fp8Out::E5M2`].
    struct Fp8Kernels<O> {
        e4m3: ResolvedOf<Fp8Kernel<O>>,
        e5m2: ResolvedOf<Fp8Kernel<O>>,
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::F8E4M3 {}
    impl Sealed for super::F8E5M2 {}
    impl Sealed for super::bf16 {}
    impl Sealed for f32 {}
}

/// The two FP8 input formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fp8Format {
    /// OCP FP8 E4M3 ([`F8E4M3`]: 4 exponent, 3 mantissa bits, largest magnitude 448).
    E4m3,
    /// OCP FP8 E5M2 ([`F8E5M2`]: 5 exponent, 2 mantissa bits, largest magnitude 57344).
    E5m2,
}

/// An FP8 input type: [`F8E4M3`] or [`F8E5M2`]. Sealed.
pub trait Fp8Elem: DeviceCopy + Copy + Send + Sync + 'static + sealed::Sealed {
    /// The `wgmma` kernels' input type: the type itself, whose stage tiles (`AStage`,
    /// `BStage`) the tensor maps of `A` and `B` are built from.
    type WgmmaIn: WgmmaElem;
    /// `e4m3` or `e5m2`.
    const NAME: &'static str;
    /// Which format.
    const FORMAT: Fp8Format;
    /// The value as `f64` (exact; NaN for the NaN codes).
    fn to_f64(self) -> f64;
    /// `x` rounded to the format (to nearest even, saturating to the largest finite value:
    /// `cvt.rn.satfinite`).
    fn from_f32(x: f32) -> Self;
}

impl Fp8Elem for F8E4M3 {
    type WgmmaIn = Self;
    const NAME: &'static str = "e4m3";
    const FORMAT: Fp8Format = Fp8Format::E4m3;
    fn to_f64(self) -> f64 {
        f64::from(self.to_f32())
    }
    fn from_f32(x: f32) -> Self {
        F8E4M3::from_f32(x)
    }
}

impl Fp8Elem for F8E5M2 {
    type WgmmaIn = Self;
    const NAME: &'static str = "e5m2";
    const FORMAT: Fp8Format = Fp8Format::E5m2;
    fn to_f64(self) -> f64 {
        f64::from(self.to_f32())
    }
    fn from_f32(x: f32) -> Self {
        F8E5M2::from_f32(x)
    }
}

/// An output type of the FP8 products: [`bf16`] or `f32`. Sealed.
pub trait Fp8Out: DeviceCopy + TmaElement + Copy + Send + Sync + 'static + sealed::Sealed {
    /// The `wgmma` kernels' output type: the type itself, whose store tile
    /// (`WgmmaOut::CBox`) the tensor map of `C` is built from.
    type WgmmaC: WgmmaOut;
    /// `bf16` or `f32`.
    const NAME: &'static str;
    /// The kernel for e4m3 inputs.
    const E4M3: Fp8Kernel<Self>;
    /// The kernel for e5m2 inputs.
    const E5M2: Fp8Kernel<Self>;
    /// A NaN the host writes to outputs before a launch, so unwritten elements show.
    const POISON: Self;
    /// The value as `f64` (exact).
    fn to_f64(self) -> f64;
    /// `x` rounded to the type (to nearest, ties to even: the GPU's `cvt.rn`).
    fn from_f32(x: f32) -> Self;
}

impl Fp8Out for bf16 {
    type WgmmaC = Self;
    const NAME: &'static str = "bf16";
    const E4M3: Fp8Kernel<Self> = kernels::gemm_tc::wgmma::gemm_wgmma_e4m3_bf16;
    const E5M2: Fp8Kernel<Self> = kernels::gemm_tc::wgmma::gemm_wgmma_e5m2_bf16;
    const POISON: Self = bf16::from_bits(0x7fc1);
    fn to_f64(self) -> f64 {
        f64::from(self.to_f32())
    }
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
}

impl Fp8Out for f32 {
    type WgmmaC = Self;
    const NAME: &'static str = "f32";
    const E4M3: Fp8Kernel<Self> = kernels::gemm_tc::wgmma::gemm_wgmma_e4m3_f32;
    const E5M2: Fp8Kernel<Self> = kernels::gemm_tc::wgmma::gemm_wgmma_e5m2_f32;
    const POISON: Self = f32::from_bits(0x7fc0_0dad);
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f32(x: f32) -> Self {
        x
    }
}

/// The name of the product in errors and logs: `e4m3 GEMM (bf16 out)`.
fn what<T: Fp8Elem, O: Fp8Out>() -> String {
    format!("{} GEMM ({} out)", T::NAME, O::NAME)
}

/// The scale the kernel applies, `scale_a·scale_b` rounded to `f32`, after checking both.
///
/// # Errors
/// [`GpuError::LaunchConfig`] naming the scale and its value if `scale_a` or `scale_b` is
/// zero, negative or not finite (NaN, ±∞), or naming both if their product is not a
/// positive finite `f32` (it overflows or underflows to zero).
pub fn check_scales(what: &str, scale_a: f32, scale_b: f32) -> Result<f32, GpuError> {
    for (name, s) in [("scale_a", scale_a), ("scale_b", scale_b)] {
        if !(s.is_finite() && s > 0.0) {
            return Err(GpuError::LaunchConfig(format!(
                "{what}: {name} = {s} must be positive and finite (cuBLASLt's scaled matmul: \
                 C = scale_a·scale_b·(A·Bᵀ))"
            )));
        }
    }
    let scale = scale_a * scale_b;
    if !(scale.is_finite() && scale > 0.0) {
        return Err(GpuError::LaunchConfig(format!(
            "{what}: scale_a·scale_b = {scale_a:e}·{scale_b:e} = {scale} is not a positive \
             finite f32"
        )));
    }
    Ok(scale)
}

/// `buf`'s address as bytes: the FP8 tensor maps are `u8` maps (TMA has no FP8 data type;
/// it moves bytes either way).
fn as_bytes<T: Fp8Elem>(buf: &DeviceBuffer<T>) -> DevicePointer<u8> {
    DevicePointer::from_raw(buf.as_device_ptr().as_raw())
}

/// One FP8 product `C = scale_a·scale_b·(A·Bᵀ)` on fixed buffers, ready to launch: the
/// scales checked, the kernel resolved, its persistent grid computed, and the tensor maps
/// of `A`, `B` and (where its rows are a multiple of 16 bytes) `C` encoded and uploaded.
/// Borrows the buffers for as long as it lives (the tensor maps hold their addresses).
pub struct Fp8GemmPlan<'a, T: Fp8Elem, O: Fp8Out> {
    m: u32,
    n: u32,
    k: u32,
    scale: f32,
    a: std::marker::PhantomData<&'a DeviceBuffer<T>>,
    c: &'a mut DeviceBuffer<O>,
    cfg: LaunchConfig,
    function: TypedFunction<Fp8Params<O>, Unsafe>,
    map_a: DeviceBox<TensorMap>,
    map_b: DeviceBox<TensorMap>,
    /// The store map of `C`, where its rows are a multiple of 16 bytes (TMA's rule).
    map_c: Option<DeviceBox<TensorMap>>,
}

impl<T: Fp8Elem, O: Fp8Out> std::fmt::Debug for Fp8GemmPlan<'_, T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fp8GemmPlan")
            .field("input", &T::NAME)
            .field("output", &O::NAME)
            .field("m", &self.m)
            .field("n", &self.n)
            .field("k", &self.k)
            .field("scale", &self.scale)
            .field("cfg", &self.cfg)
            .finish_non_exhaustive()
    }
}

impl<'a, T: Fp8Elem, O: Fp8Out> Fp8GemmPlan<'a, T, O> {
    /// Plans `C = scale_a·scale_b·(A·Bᵀ)` on `gpu` for `a` (m×k), `b` (n×k) and `c` (m×n),
    /// all row-major (see the [module docs](self)).
    ///
    /// # Errors
    /// [`GpuError::LaunchConfig`] naming the value if the shape or a scale breaks a rule
    /// ([`check_scales`]); [`GpuError::KernelArchitecture`] naming the kernel (its name
    /// holds the input and output types, e.g. `gemm_wgmma_e4m3_bf16`), the architecture it
    /// needs (sm_90a) and the device's, on any GPU but sm_90; [`GpuError::TensorMap`] or a
    /// driver error from encoding or uploading the tensor maps.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        m: usize,
        n: usize,
        k: usize,
        a: &'a DeviceBuffer<T>,
        b: &'a DeviceBuffer<T>,
        c: &'a mut DeviceBuffer<O>,
        scale_a: f32,
        scale_b: f32,
    ) -> Result<Self, GpuError> {
        let what = what::<T, O>();
        check_dims(&what, 16, m, n, k, [a.len(), b.len(), c.len()])?;
        let scale = check_scales(&what, scale_a, scale_b)?;
        // In range: checked above.
        let (m32, n32, k32) = (m as u32, n as u32, k as u32);
        let table = gpu.kernels::<Fp8Kernels<O>>();
        let function = match T::FORMAT {
            Fp8Format::E4m3 => table.e4m3.get(gpu, O::E4M3)?,
            Fp8Format::E5m2 => table.e5m2.get(gpu, O::E5M2)?,
        }
        .clone();
        // The maps copy the kernel's tiles (`A` and `B` as bytes: FP8 tiles over `u8`).
        let map_a = tile_map::<<T::WgmmaIn as WgmmaElem>::AStage, _>(as_bytes(a), [k, m], k, "A")
            .with_gpu_context(|| what.clone())?;
        let map_b = tile_map::<<T::WgmmaIn as WgmmaElem>::BStage, _>(as_bytes(b), [k, n], k, "B")
            .with_gpu_context(|| what.clone())?;
        // C goes out through TMA where its row stride is a multiple of 16 bytes (TMA's
        // rule); otherwise the kernel stores it from registers.
        let c_row_bytes = n * size_of::<O>();
        let map_c = if c_row_bytes.is_multiple_of(16) {
            Some(
                tile_map::<<O::WgmmaC as WgmmaOut>::CBox, _>(
                    c.as_device_ptr(),
                    [n, m],
                    c_row_bytes,
                    "C",
                )
                .with_gpu_context(|| what.clone())?,
            )
        } else {
            None
        };
        let tiles = m32.div_ceil(WG_BM) * n32.div_ceil(WG_BN);
        let cfg = LaunchConfig::new((tiles.min(sm_count(gpu)?), 1), WG_THREADS, WG_SHARED_BYTES);
        Ok(Self {
            m: m32,
            n: n32,
            k: k32,
            scale,
            a: std::marker::PhantomData,
            c,
            cfg,
            function,
            map_a,
            map_b,
            map_c,
        })
    }

    /// Queues the product on `gpu`'s stream (no synchronisation). `gpu` must be the one the
    /// plan was made on.
    ///
    /// # Errors
    /// [`GpuError::Launch`] naming the kernel and its configuration if the launch fails.
    pub fn launch(&mut self, gpu: &Gpu) -> Result<(), GpuError> {
        let (m, n, k, cfg, scale) = (self.m, self.n, self.k, self.cfg, self.scale);
        // Without a map of C the kernel does not read `map_c`: pass A's.
        let (map_c, c_by_tma) = self.map_c.as_ref().map_or((&self.map_a, 0u32), |m| (m, 1));
        let args = (
            m,
            n,
            k,
            &self.map_a,
            &self.map_b,
            map_c,
            &mut *self.c,
            c_by_tma,
            scale,
        );
        // SAFETY: `check_dims` checked the shape rules (k a multiple of 16) and the buffer
        // lengths; device buffers are whole allocations (256-byte aligned); `c` is
        // borrowed mutably and `a`, `b` shared for the plan's life; the maps describe `a`
        // and `b` as bytes and, with `c_by_tma`, `c` (rows a multiple of 16 bytes) with the
        // output type, the module's boxes and the 128-byte swizzle, and were written before
        // this launch (a synchronous upload); the launch shape is the module's
        // (`WG_THREADS`, `WG_SHARED_BYTES`, a 1-D grid without clusters), and the sm_90a
        // build caps the kernel at `WG_MAX_REGISTERS` (host/build.rs).
        unsafe { self.function.launch_unchecked(gpu.stream(), cfg, args) }
    }

    /// The launch configuration (grid, block, dynamic shared memory).
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// The scale the kernel multiplies the sums by: `scale_a·scale_b` rounded to `f32`.
    pub fn scale(&self) -> f32 {
        self.scale
    }
}

/// `C = scale_a·scale_b·(A·Bᵀ)` on the GPU (`a` m×k, `b` n×k, result m×n, row-major):
/// uploads `a` and `b`, runs the FP8 `wgmma` kernel, waits and downloads `C`.
///
/// # Errors
/// As [`Fp8GemmPlan::new`]; [`GpuError::Launch`] (or a driver error) naming the kernel if it
/// fails; errors of the copies.
#[allow(clippy::too_many_arguments)]
pub fn gemm_fp8<T: Fp8Elem, O: Fp8Out>(
    gpu: &Gpu,
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    b: &[T],
    scale_a: f32,
    scale_b: f32,
) -> Result<Vec<O>, GpuError> {
    let what = what::<T, O>();
    check_dims(&what, 16, m, n, k, [a.len(), b.len(), m * n])?;
    check_scales(&what, scale_a, scale_b)?;
    let a_d = DeviceBuffer::from_slice_async(&a[..m * k], gpu.stream())
        .gpu_context("copying A to the GPU")?;
    let b_d = DeviceBuffer::from_slice_async(&b[..n * k], gpu.stream())
        .gpu_context("copying B to the GPU")?;
    let mut c_d = DeviceBuffer::from_slice_async(&vec![O::POISON; m * n], gpu.stream())
        .gpu_context("allocating C")?;
    let mut plan = Fp8GemmPlan::new(gpu, m, n, k, &a_d, &b_d, &mut c_d, scale_a, scale_b)?;
    plan.launch(gpu)?;
    let cfg = plan.config();
    drop(plan);
    gpu.sync_after(&what, cfg)?;
    c_d.as_host_vec().gpu_context("copying C to the host")
}

/// `Σ_p A[i][p]·B[j][p]` in `f64` (exact products; the sum rounded in `f64`, exact for the
/// tests' inputs) for the elements `(i, j)` in `at` (`a` m×k, `b` n×k, row-major), without
/// the scales.
pub fn reference_f64<T: Fp8Elem>(k: usize, a: &[T], b: &[T], at: &[(usize, usize)]) -> Vec<f64> {
    crate::matmul::rows_dot_f64(k, a, b, at, T::to_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_that_are_not_positive_and_finite_are_refused_by_name() {
        for (sa, sb, name, shown) in [
            (0.0, 1.0, "scale_a", "0"),
            (1.0, -2.0, "scale_b", "-2"),
            (f32::NAN, 1.0, "scale_a", "NaN"),
            (1.0, f32::INFINITY, "scale_b", "inf"),
            (-0.0, 1.0, "scale_a", "-0"),
        ] {
            let err = check_scales("e4m3 GEMM (bf16 out)", sa, sb)
                .expect_err("a bad scale")
                .to_string();
            assert!(
                err.contains(&format!("{name} = {shown}")) && err.contains("e4m3 GEMM"),
                "{err}"
            );
        }
        let err = check_scales("x", 1e30, 1e30)
            .expect_err("overflows")
            .to_string();
        assert!(err.contains("scale_a·scale_b"), "{err}");
        let err = check_scales("x", 1e-30, 1e-30)
            .expect_err("underflows")
            .to_string();
        assert!(err.contains("scale_a·scale_b"), "{err}");
        assert_eq!(check_scales("x", 0.5, 4.0).unwrap(), 2.0);
    }

    #[test]
    fn shapes_need_k_a_multiple_of_16() {
        let err = check_dims("e5m2 GEMM (f32 out)", 16, 4, 4, 24, [96, 96, 16])
            .expect_err("k = 24")
            .to_string();
        assert!(
            err.contains("e5m2 GEMM (f32 out)") && err.contains("k = 24") && err.contains("16"),
            "{err}"
        );
        check_dims("x", 16, 3, 5, 32, [96, 160, 15]).expect("k = 32");
    }

    #[test]
    fn the_reference_sums_exact_fp8_products() {
        let a: Vec<F8E4M3> = [1.0, -2.0, 0.5, 448.0].map(F8E4M3::from_f32).to_vec();
        let b: Vec<F8E4M3> = [3.0, 0.25, -4.0, 1.0].map(F8E4M3::from_f32).to_vec();
        // 3 - 0.5 - 2 + 448.
        assert_eq!(reference_f64(4, &a, &b, &[(0, 0)]), [448.5]);
    }
}
