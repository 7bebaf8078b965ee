//! The CUDA C twins of the vector kernels and SGEMM (`bench/cuda/vector.cu`, embedded in the
//! binary, built at run time by [`crate::nvcc`]) and the CUDA C Mandelbrot references
//! (`bench/cuda/mandelbrot.cu`), as typed kernel handles
//! ([`Kernel::external`](cuda_std::launch::Kernel::external)): each handle spells out its
//! C signature's parameter kinds, and resolving it in the nvcc module checks the parameter
//! sizes the driver reports. The twins share the Rust kernels' launch shapes, tile sizes and
//! scratch, so that the two compare kernel code, not launch choices.

use super::elementwise::{StreamOp, Vectors};
use crate::gpu::{Gpu, GpuError};
use crate::mandelbrot::{Precision, RenderParams};
use crate::vector::{Element, Float, ScanState, Scannable, Scratch, Split};
use cuda_std::launch::{ConstPtr, Kernel, MutPtr, Unsafe, Value};
use cust::{function::LaunchConfig, launch::TypedFunction, memory::DeviceBuffer, module::Module};
use kernels::gemm::{SGEMM_THREADS, SGEMM_TILE_M, SGEMM_TILE_N};
use kernels::scan::SCAN_THREADS;
use kernels::vector::BLOCK_THREADS;

/// The CUDA C twins, compiled by the bench at run time when `nvcc` is available.
pub const CUDA_C_SOURCE: &str = include_str!("../../../bench/cuda/vector.cu");

/// `cu_copy_*(const T* a, T* c, size_t n)`.
pub type CuMap1<T> = Kernel<(ConstPtr<T>, MutPtr<T>, Value<usize>), Unsafe>;
/// `cu_scale_*(const T* c, T q, T* b, size_t n)`.
pub type CuScale<T> = Kernel<(ConstPtr<T>, Value<T>, MutPtr<T>, Value<usize>), Unsafe>;
/// `cu_add_*(const T* a, const T* b, T* c, size_t n)`.
pub type CuMap2<T> = Kernel<(ConstPtr<T>, ConstPtr<T>, MutPtr<T>, Value<usize>), Unsafe>;
/// `cu_triad_*(const T* b, const T* c, T q, T* a, size_t n)`.
pub type CuTriad<T> = Kernel<(ConstPtr<T>, ConstPtr<T>, Value<T>, MutPtr<T>, Value<usize>), Unsafe>;
/// `cu_axpy_*(T alpha, const T* x, T* y, size_t n)`.
pub type CuAxpy<T> = Kernel<(Value<T>, ConstPtr<T>, MutPtr<T>, Value<usize>), Unsafe>;
/// `cu_reduce_*(const T* x, size_t n, size_t chunk, T* out)`.
pub type CuReduce<T> = Kernel<(ConstPtr<T>, Value<usize>, Value<usize>, MutPtr<T>), Unsafe>;
/// `cu_dot_*(const T* a, const T* b, size_t n, size_t chunk, T* out)`.
pub type CuDot<T> = Kernel<
    (
        ConstPtr<T>,
        ConstPtr<T>,
        Value<usize>,
        Value<usize>,
        MutPtr<T>,
    ),
    Unsafe,
>;
/// `cu_scan_*(const T* x, size_t n, T* out, unsigned long long* status, size_t status_len,
/// unsigned* counter, unsigned epoch, unsigned base)`.
pub type CuScan<T> = Kernel<
    (
        ConstPtr<T>,
        Value<usize>,
        MutPtr<T>,
        MutPtr<u64>,
        Value<usize>,
        MutPtr<u32>,
        Value<u32>,
        Value<u32>,
    ),
    Unsafe,
>;
/// `cu_sgemm(int m, int n, int k, float alpha, const float* A, const float* B, float beta,
/// float* C)`.
pub type CuSgemm = Kernel<
    (
        Value<i32>,
        Value<i32>,
        Value<i32>,
        Value<f32>,
        ConstPtr<f32>,
        ConstPtr<f32>,
        Value<f32>,
        MutPtr<f32>,
    ),
    Unsafe,
>;
/// `cu_mandel_*(unsigned width, unsigned height, T x0, T y0, T dx, T dy, unsigned max_iter,
/// unsigned* counts)`.
pub type CuMandel<T> = Kernel<MandelParams<T>, Unsafe>;
/// The parameter kinds of [`CuMandel`].
pub type MandelParams<T> = (
    Value<u32>,
    Value<u32>,
    Value<T>,
    Value<T>,
    Value<T>,
    Value<T>,
    Value<u32>,
    MutPtr<u32>,
);

/// `cu_sgemm`.
pub const CU_SGEMM: CuSgemm = Kernel::external("cu_sgemm");

/// The function a kernel handle resolves to in a module ([`Module::kernel`]).
pub trait Resolve {
    /// [`TypedFunction`] of the handle's parameter kinds and safety.
    type Function;
}

impl<P, S> Resolve for Kernel<P, S> {
    type Function = TypedFunction<P, S>;
}

/// What the handle type `K` resolves to.
pub type Resolved<K> = <K as Resolve>::Function;

/// An element type with CUDA C reduction twins.
pub trait ReduceTwins: Element {
    /// `cu_reduce_{sum,min,max}_<type>`, in [`crate::vector::ReduceOp`]'s order.
    const CU_REDUCE: [CuReduce<Self>; 3];
    /// Their functions in `cu`'s module, resolved when it was built.
    fn reduce_fns(cu: &CudaC) -> &[Resolved<CuReduce<Self>>; 3];
}

/// A float type with the CUDA C STREAM and dot twins.
pub trait FloatTwins: Float + ReduceTwins {
    /// `cu_copy_<type>`.
    const CU_COPY: CuMap1<Self>;
    /// `cu_scale_<type>`.
    const CU_SCALE: CuScale<Self>;
    /// `cu_add_<type>`.
    const CU_ADD: CuMap2<Self>;
    /// `cu_triad_<type>`.
    const CU_TRIAD: CuTriad<Self>;
    /// `cu_axpy_<type>`.
    const CU_AXPY: CuAxpy<Self>;
    /// `cu_dot_<type>`.
    const CU_DOT: CuDot<Self>;
    /// Their functions in `cu`'s module, resolved when it was built.
    fn float_fns(cu: &CudaC) -> &FloatFns<Self>;
}

/// The STREAM and dot twins of one float type, resolved once ([`CudaC::build`]).
#[derive(Debug)]
pub struct FloatFns<T> {
    copy: Resolved<CuMap1<T>>,
    scale: Resolved<CuScale<T>>,
    add: Resolved<CuMap2<T>>,
    triad: Resolved<CuTriad<T>>,
    axpy: Resolved<CuAxpy<T>>,
    dot: Resolved<CuDot<T>>,
}

impl<T: FloatTwins> FloatFns<T> {
    fn resolve(m: &Module) -> Result<Self, GpuError> {
        Ok(Self {
            copy: m.kernel(T::CU_COPY)?,
            scale: m.kernel(T::CU_SCALE)?,
            add: m.kernel(T::CU_ADD)?,
            triad: m.kernel(T::CU_TRIAD)?,
            axpy: m.kernel(T::CU_AXPY)?,
            dot: m.kernel(T::CU_DOT)?,
        })
    }
}

/// An element type with the CUDA C scan twins.
pub trait ScanTwins: Scannable {
    /// `cu_scan_inclusive_<type>`, `cu_scan_exclusive_<type>`.
    const CU_SCAN: [CuScan<Self>; 2];
    /// Their functions in `cu`'s module, resolved when it was built.
    fn scan_fns(cu: &CudaC) -> &[Resolved<CuScan<Self>>; 2];
}

/// A floating-point type of the CUDA C Mandelbrot references.
pub trait MandelTwins: Copy + cuda_std::DeviceCopy {
    /// `cu_mandel_naive_<type>`, `cu_mandel_cardioid_<type>`.
    const CU_MANDEL: [CuMandel<Self>; 2];
    /// The view of `params` in this precision: `(width, height, x0, y0, dx, dy)`.
    fn view_args(params: &RenderParams) -> (u32, u32, Self, Self, Self, Self);
}

impl MandelTwins for f32 {
    const CU_MANDEL: [CuMandel<Self>; 2] = [
        Kernel::external("cu_mandel_naive_f32"),
        Kernel::external("cu_mandel_cardioid_f32"),
    ];
    fn view_args(params: &RenderParams) -> (u32, u32, f32, f32, f32, f32) {
        let view = &params.view;
        let v = view.cast::<f32>();
        let (x0, y0) = (v.origin.re, v.origin.im);
        (view.width_px, view.height_px, x0, y0, v.step_re, v.step_im)
    }
}

impl MandelTwins for f64 {
    const CU_MANDEL: [CuMandel<Self>; 2] = [
        Kernel::external("cu_mandel_naive_f64"),
        Kernel::external("cu_mandel_cardioid_f64"),
    ];
    fn view_args(params: &RenderParams) -> (u32, u32, f64, f64, f64, f64) {
        let view = &params.view;
        let (x0, y0) = (view.origin.re, view.origin.im);
        (
            view.width_px,
            view.height_px,
            x0,
            y0,
            view.step_re,
            view.step_im,
        )
    }
}

macro_rules! reduce_twins {
    ($t:ty, $s:literal, $field:ident) => {
        impl ReduceTwins for $t {
            const CU_REDUCE: [CuReduce<Self>; 3] = [
                Kernel::external(concat!("cu_reduce_sum_", $s)),
                Kernel::external(concat!("cu_reduce_min_", $s)),
                Kernel::external(concat!("cu_reduce_max_", $s)),
            ];
            fn reduce_fns(cu: &CudaC) -> &[Resolved<CuReduce<Self>>; 3] {
                &cu.$field
            }
        }
    };
}
reduce_twins!(f32, "f32", reduce_f32);
reduce_twins!(f64, "f64", reduce_f64);
reduce_twins!(u32, "u32", reduce_u32);

macro_rules! float_twins {
    ($t:ty, $s:literal, $field:ident) => {
        impl FloatTwins for $t {
            fn float_fns(cu: &CudaC) -> &FloatFns<Self> {
                &cu.$field
            }
            const CU_COPY: CuMap1<Self> = Kernel::external(concat!("cu_copy_", $s));
            const CU_SCALE: CuScale<Self> = Kernel::external(concat!("cu_scale_", $s));
            const CU_ADD: CuMap2<Self> = Kernel::external(concat!("cu_add_", $s));
            const CU_TRIAD: CuTriad<Self> = Kernel::external(concat!("cu_triad_", $s));
            const CU_AXPY: CuAxpy<Self> = Kernel::external(concat!("cu_axpy_", $s));
            const CU_DOT: CuDot<Self> = Kernel::external(concat!("cu_dot_", $s));
        }
    };
}
float_twins!(f32, "f32", float_f32);
float_twins!(f64, "f64", float_f64);

macro_rules! scan_twins {
    ($t:ty, $s:literal, $field:ident) => {
        impl ScanTwins for $t {
            const CU_SCAN: [CuScan<Self>; 2] = [
                Kernel::external(concat!("cu_scan_inclusive_", $s)),
                Kernel::external(concat!("cu_scan_exclusive_", $s)),
            ];
            fn scan_fns(cu: &CudaC) -> &[Resolved<CuScan<Self>>; 2] {
                &cu.$field
            }
        }
    };
}
scan_twins!(f32, "f32", scan_f32);
scan_twins!(u32, "u32", scan_u32);

/// The CUDA C twins: a module built from [`CUDA_C_SOURCE`] by `nvcc`, every twin resolved
/// once when it is built (no lookups in the timed launches).
#[derive(Debug)]
pub struct CudaC {
    float_f32: FloatFns<f32>,
    float_f64: FloatFns<f64>,
    reduce_f32: [Resolved<CuReduce<f32>>; 3],
    reduce_f64: [Resolved<CuReduce<f64>>; 3],
    reduce_u32: [Resolved<CuReduce<u32>>; 3],
    scan_f32: [Resolved<CuScan<f32>>; 2],
    scan_u32: [Resolved<CuScan<u32>>; 2],
    sgemm: Resolved<CuSgemm>,
}

fn cfg_1d(blocks: u32) -> LaunchConfig {
    LaunchConfig::new(blocks.max(1), BLOCK_THREADS, 0)
}

/// The second pass of a two-pass reduction: one block over the first pass's partials.
pub(super) fn second_pass(split: Split) -> Split {
    Split {
        blocks: 1,
        chunk: (split.blocks as usize).div_ceil(4) * 4,
    }
}

/// Every twin of the vector module in `module`: a missing kernel or a signature that
/// differs from its handle is an error now, not at the first launch.
fn resolve_all(m: &Module) -> Result<CudaC, GpuError> {
    fn reductions<T: ReduceTwins>(m: &Module) -> Result<[Resolved<CuReduce<T>>; 3], GpuError> {
        let [sum, min, max] = T::CU_REDUCE;
        Ok([m.kernel(sum)?, m.kernel(min)?, m.kernel(max)?])
    }
    fn scans<T: ScanTwins>(m: &Module) -> Result<[Resolved<CuScan<T>>; 2], GpuError> {
        let [inclusive, exclusive] = T::CU_SCAN;
        Ok([m.kernel(inclusive)?, m.kernel(exclusive)?])
    }
    Ok(CudaC {
        float_f32: FloatFns::resolve(m)?,
        float_f64: FloatFns::resolve(m)?,
        reduce_f32: reductions(m)?,
        reduce_f64: reductions(m)?,
        reduce_u32: reductions(m)?,
        scan_f32: scans(m)?,
        scan_u32: scans(m)?,
        sgemm: m.kernel(CU_SGEMM)?,
    })
}

impl CudaC {
    /// Compiles the twins for `gpu`'s architecture with `nvcc -O3 -arch=sm_XY -cubin`, loads
    /// them and resolves every handle.
    ///
    /// # Errors
    /// Why not, as a message (no nvcc, compile error, load error, a kernel missing or with
    /// another signature).
    pub fn build(gpu: &Gpu) -> Result<Self, String> {
        let module = crate::nvcc::module(gpu, "vector", CUDA_C_SOURCE)?;
        resolve_all(&module).map_err(|e| e.to_string())
    }

    /// `cu_<op>_<T>` on the bench's vectors, in the Rust kernel's launch shape `cfg`.
    pub(super) fn stream_op<T: FloatTwins>(
        &self,
        gpu: &Gpu,
        op: StreamOp,
        q: T,
        cfg: LaunchConfig,
        v: &mut Vectors<T>,
    ) -> Result<(), GpuError> {
        let (f, s, n) = (T::float_fns(self), gpu.stream(), v.a.len());
        // SAFETY: every buffer holds n elements (Vectors makes them so); the kernels read
        // and write elements below n only.
        unsafe {
            match op {
                StreamOp::Copy => f.copy.launch_unchecked(s, cfg, (&v.a, &mut v.c, n)),
                StreamOp::Scale => f.scale.launch_unchecked(s, cfg, (&v.c, q, &mut v.b, n)),
                StreamOp::Add => f.add.launch_unchecked(s, cfg, (&v.a, &v.b, &mut v.c, n)),
                StreamOp::Triad => f
                    .triad
                    .launch_unchecked(s, cfg, (&v.b, &v.c, q, &mut v.a, n)),
                StreamOp::Axpy => f.axpy.launch_unchecked(s, cfg, (q, &v.a, &mut v.b, n)),
            }
        }
    }

    /// One pass of the reduction `op` (index into [`ReduceTwins::CU_REDUCE`]) over `x` into
    /// one value per block of `split`.
    fn reduce_pass<T: ReduceTwins>(
        &self,
        gpu: &Gpu,
        op: usize,
        x: &DeviceBuffer<T>,
        split: Split,
        out: &mut DeviceBuffer<T>,
    ) -> Result<(), GpuError> {
        assert!(out.len() >= split.blocks as usize, "one output per block");
        let f = &T::reduce_fns(self)[op];
        // SAFETY: `x` holds x.len() elements; `out` has an element per block (checked);
        // chunk is a positive multiple of 4, as the kernel requires.
        unsafe {
            f.launch_unchecked(
                gpu.stream(),
                cfg_1d(split.blocks),
                (x, x.len(), split.chunk, out),
            )
        }
    }

    /// The two-pass reduction `op` (index into [`ReduceTwins::CU_REDUCE`]) of `x` into
    /// `scratch.result`, in the Rust reduction's split.
    pub(super) fn reduce<T: ReduceTwins>(
        &self,
        gpu: &Gpu,
        op: usize,
        x: &DeviceBuffer<T>,
        scratch: &mut Scratch<T>,
    ) -> Result<(), GpuError> {
        let split = scratch.split();
        self.reduce_pass(gpu, op, x, split, scratch.reduce_buffers().0)?;
        let (p, res) = scratch.reduce_buffers();
        self.reduce_pass(gpu, op, p, second_pass(split), res)
    }

    /// `cu_dot_<T>` then the sum's second pass, into `v.scratch.result`.
    pub(super) fn dot<T: FloatTwins>(&self, gpu: &Gpu, v: &mut Vectors<T>) -> Result<(), GpuError> {
        let n = v.a.len().min(v.b.len());
        let split = v.scratch.split();
        let partials = v.scratch.reduce_buffers().0;
        assert!(
            partials.len() >= split.blocks as usize,
            "one partial per block"
        );
        let dot = &T::float_fns(self).dot;
        // SAFETY: `a` and `b` hold at least n elements; one partial per block (checked).
        unsafe {
            dot.launch_unchecked(
                gpu.stream(),
                cfg_1d(split.blocks),
                (&v.a, &v.b, n, split.chunk, partials),
            )?;
        }
        let (partials, result) = v.scratch.reduce_buffers();
        self.reduce_pass(gpu, 0, partials, second_pass(split), result)
    }

    /// The CUDA C single-pass scan twin (`idx` 0 inclusive, 1 exclusive, as in
    /// [`ScanTwins::CU_SCAN`]): the same tile size, look-back protocol and scratch (status words
    /// and counter, booked like the Rust launch).
    pub(super) fn scan<T: ScanTwins>(
        &self,
        gpu: &Gpu,
        idx: usize,
        x: &DeviceBuffer<T>,
        st: &mut ScanState,
        out: &mut DeviceBuffer<T>,
    ) -> Result<(), GpuError> {
        let f = &T::scan_fns(self)[idx];
        let len = x.len().min(out.len());
        let l = st.book(gpu, len)?;
        let status_len = st.status.len();
        let cfg = LaunchConfig::new(l.tiles, SCAN_THREADS, 0);
        // SAFETY: `out` holds `len` elements; `book` gave a fresh epoch and the counter's
        // value before this launch, the only one using this scratch on the stream (`&mut`);
        // one block per tile.
        unsafe {
            f.launch_unchecked(
                gpu.stream(),
                cfg,
                (
                    x,
                    len,
                    out,
                    &mut st.status,
                    status_len,
                    &mut st.counter,
                    l.epoch,
                    l.base,
                ),
            )
        }
    }

    /// `cu_sgemm`: row-major `C = A·B` (`A` m×k, `B` k×n, `C` m×n), α = 1, β = 0, in the Rust
    /// SGEMM's tiles.
    ///
    /// # Panics
    /// If a buffer is shorter than its matrix.
    pub(super) fn sgemm(
        &self,
        gpu: &Gpu,
        (m, n, k): (u32, u32, u32),
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        c: &mut DeviceBuffer<f32>,
    ) -> Result<(), GpuError> {
        let (mu, nu, ku) = (m as usize, n as usize, k as usize);
        assert!(
            a.len() >= mu * ku && b.len() >= ku * nu && c.len() >= mu * nu,
            "cu_sgemm: buffer too short"
        );
        let cfg = LaunchConfig::new(
            (n.div_ceil(SGEMM_TILE_N), m.div_ceil(SGEMM_TILE_M)),
            SGEMM_THREADS,
            0,
        );
        let dims = (m as i32, n as i32, k as i32);
        let f = &self.sgemm;
        // SAFETY: buffer sizes m·k, k·n, m·n (checked above); the kernel's launch shape.
        unsafe {
            f.launch_unchecked(
                gpu.stream(),
                cfg,
                (dims.0, dims.1, dims.2, 1.0f32, a, b, 0.0f32, c),
            )
        }
    }
}

/// One launch of a CUDA C Mandelbrot reference kernel (`cu_mandel_*` of
/// `bench/cuda/mandelbrot.cu`, resolved in `module`) over `params`' view and iteration limit,
/// in precision `T`, in the launch shape `cfg` (16×16 blocks over the image), writing the
/// escape counts (row-major, at least `width·height` elements) into `counts`.
///
/// # Panics
/// If `counts` is smaller than the view.
pub(super) fn mandelbrot_reference<T: MandelTwins>(
    gpu: &Gpu,
    kernel: &cust::launch::TypedFunction<MandelParams<T>, Unsafe>,
    cfg: LaunchConfig,
    (w, h, x0, y0, dx, dy): (u32, u32, T, T, T, T),
    max_iter: u32,
    counts: &mut DeviceBuffer<u32>,
) -> Result<(), GpuError> {
    assert!(
        counts.len() >= w as usize * h as usize,
        "counts smaller than the view"
    );
    // SAFETY: `counts` holds width·height elements (checked above); the kernel writes one
    // per pixel of the grid that covers the image, guarded by width and height.
    unsafe { kernel.launch_unchecked(gpu.stream(), cfg, (w, h, x0, y0, dx, dy, max_iter, counts)) }
}

/// Which precision a view renders in, for picking a reference kernel.
pub(super) fn is_f64(params: &RenderParams) -> bool {
    matches!(params.precision, Precision::F64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cuda_c_kernel_handle_names_a_kernel_of_the_source() {
        // Names are spelled out, or made by the STREAM macro from `cu_<op>_##S`.
        let mut names = vec![CU_SGEMM.name()];
        fn add<T: FloatTwins>(names: &mut Vec<&'static str>) {
            names.extend([
                T::CU_COPY.name(),
                T::CU_SCALE.name(),
                T::CU_ADD.name(),
                T::CU_TRIAD.name(),
                T::CU_AXPY.name(),
                T::CU_DOT.name(),
            ]);
            names.extend(T::CU_REDUCE.iter().map(|k| k.name()));
        }
        add::<f32>(&mut names);
        add::<f64>(&mut names);
        names.extend(<u32 as ReduceTwins>::CU_REDUCE.iter().map(|k| k.name()));
        names.extend(<f32 as ScanTwins>::CU_SCAN.iter().map(|k| k.name()));
        names.extend(<u32 as ScanTwins>::CU_SCAN.iter().map(|k| k.name()));
        assert_eq!(names.len(), 26);
        for name in names {
            let by_macro = ["copy", "scale", "add", "triad", "axpy"].iter().any(|op| {
                name.starts_with(&format!("cu_{op}_"))
                    && CUDA_C_SOURCE.contains(&format!("cu_{op}_##S"))
            });
            assert!(by_macro || CUDA_C_SOURCE.contains(name), "{name}");
        }
        // The C signatures' sizes: pointers and size_t 8 bytes, float 4, unsigned 4.
        assert_eq!(
            <f32 as FloatTwins>::CU_TRIAD.param_sizes(),
            &[8, 8, 4, 8, 8]
        );
        assert_eq!(
            <u32 as ScanTwins>::CU_SCAN[0].param_sizes(),
            &[8, 8, 8, 8, 8, 8, 4, 4]
        );
    }
}
