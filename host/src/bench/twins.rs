//! The CUDA C twins of the vector kernels and SGEMM (`bench/cuda/vector.cu`, embedded in the
//! binary, built at run time by [`crate::nvcc`]) and every launch of them, and the launch of
//! the CUDA C Mandelbrot references (`bench/cuda/mandelbrot.cu`): every raw launch by name
//! in `host` is in this file. The twins share
//! the Rust kernels' launch shapes, tile sizes and scratch, so that the two compare kernel
//! code, not launch choices.

use super::vectors::{StreamOp, Vectors};
use crate::gpu::{Gpu, GpuError};
use crate::mandelbrot::{Precision, RenderParams};
use crate::vector::{Element, Float, ScanState, Scannable, Split};
use cudarc::driver::{CudaFunction, CudaSlice, LaunchArgs, LaunchConfig, PushKernelArg};
use cust::launch::ByValue;
use kernels::gemm::{SGEMM_THREADS, SGEMM_TILE_M, SGEMM_TILE_N};
use kernels::scan::SCAN_THREADS;
use kernels::vector::BLOCK_THREADS;
use std::collections::HashMap;

/// The CUDA C twins, compiled by the bench at run time when `nvcc` is available.
pub const CUDA_C_SOURCE: &str = include_str!("../../../bench/cuda/vector.cu");

/// The CUDA C twins: a module built from [`CUDA_C_SOURCE`] by `nvcc`.
pub struct CudaC {
    functions: HashMap<String, CudaFunction>,
}

impl std::fmt::Debug for CudaC {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaC")
            .field("functions", &self.functions.len())
            .finish()
    }
}

const CUDA_C_KERNELS: &[&str] = &[
    "cu_copy_f32",
    "cu_scale_f32",
    "cu_add_f32",
    "cu_triad_f32",
    "cu_axpy_f32",
    "cu_copy_f64",
    "cu_scale_f64",
    "cu_add_f64",
    "cu_triad_f64",
    "cu_axpy_f64",
    "cu_reduce_sum_f32",
    "cu_reduce_min_f32",
    "cu_reduce_max_f32",
    "cu_reduce_sum_f64",
    "cu_reduce_min_f64",
    "cu_reduce_max_f64",
    "cu_reduce_sum_u32",
    "cu_reduce_min_u32",
    "cu_reduce_max_u32",
    "cu_dot_f32",
    "cu_dot_f64",
    "cu_scan_inclusive_f32",
    "cu_scan_exclusive_f32",
    "cu_scan_inclusive_u32",
    "cu_scan_exclusive_u32",
    "cu_sgemm",
];

/// Static name of a CUDA C twin (for error messages, which need `&'static str`).
fn cu_name(rust_kernel: &str) -> &'static str {
    CUDA_C_KERNELS
        .iter()
        .find(|n| n.strip_prefix("cu_") == Some(rust_kernel))
        .copied()
        .unwrap_or("cu_unknown")
}

fn cfg_1d(blocks: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (BLOCK_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The second pass of a two-pass reduction: one block over the first pass's partials.
pub(super) fn second_pass(split: Split) -> Split {
    Split {
        blocks: 1,
        chunk: (split.blocks as usize).div_ceil(4) * 4,
    }
}

impl CudaC {
    /// Compiles the twins for `gpu`'s architecture with `nvcc -O3 -arch=sm_XY -cubin` and
    /// loads them.
    ///
    /// # Errors
    /// Why not, as a message (no nvcc, compile error, load error).
    pub fn build(gpu: &Gpu) -> Result<Self, String> {
        let module = crate::nvcc::module(gpu, "vector", CUDA_C_SOURCE)?;
        let mut functions = HashMap::new();
        for name in CUDA_C_KERNELS {
            let f = module
                .load_function(name)
                .map_err(|e| format!("CUDA C kernel `{name}`: {e}"))?;
            functions.insert((*name).to_owned(), f);
        }
        Ok(Self { functions })
    }

    fn args<'a>(&'a self, gpu: &'a Gpu, name: &str) -> LaunchArgs<'a> {
        gpu.stream().launch_builder(&self.functions[name])
    }

    /// `cu_<op>_<T>` on the bench's vectors, in the Rust kernel's launch shape `cfg`.
    pub(super) fn stream_op<T: Float>(
        &self,
        gpu: &Gpu,
        op: StreamOp,
        q: T,
        cfg: LaunchConfig,
        v: &mut Vectors<T>,
    ) -> Result<(), GpuError> {
        let n = v.a.len();
        let name = cu_name(T::STREAM[op.index()]);
        let mut args = self.args(gpu, name);
        let (q, n) = (ByValue(q), n);
        match op {
            StreamOp::Copy => args.arg(&v.a).arg(&mut v.c).arg(&n),
            StreamOp::Scale => args.arg(&v.c).arg(&q).arg(&mut v.b).arg(&n),
            StreamOp::Add => args.arg(&v.a).arg(&v.b).arg(&mut v.c).arg(&n),
            StreamOp::Triad => args.arg(&v.b).arg(&v.c).arg(&q).arg(&mut v.a).arg(&n),
            StreamOp::Axpy => args.arg(&q).arg(&v.a).arg(&mut v.b).arg(&n),
        };
        // SAFETY: matches the `cu_<op>_<T>` signatures in bench/cuda/vector.cu (pointers, the
        // scalar by value, `size_t n`); every buffer holds n elements.
        unsafe { cust::launch::launch_built(name, cfg, args) }
    }

    /// One pass of `cu_reduce_<op>_<T>` (`op` as in [`Element::REDUCE`]).
    fn reduce_pass<T: Element>(
        &self,
        gpu: &Gpu,
        name: &'static str,
        x: &CudaSlice<T>,
        split: Split,
        out: &mut CudaSlice<T>,
    ) -> Result<(), GpuError> {
        let (len, chunk) = (x.len(), split.chunk);
        let mut args = self.args(gpu, name);
        args.arg(x).arg(&len).arg(&chunk).arg(out);
        // SAFETY: `cu_reduce_*(const T* x, size_t n, size_t chunk, T* out)`; `out` has an
        // element per block; chunk a positive multiple of 4.
        unsafe { cust::launch::launch_built(name, cfg_1d(split.blocks), args) }
    }

    /// The two-pass reduction `op` (index into [`Element::REDUCE`]) of `x` into
    /// `scratch.result`, in the Rust reduction's split.
    pub(super) fn reduce<T: Element>(
        &self,
        gpu: &Gpu,
        op: usize,
        x: &CudaSlice<T>,
        scratch: &mut crate::vector::Scratch<T>,
    ) -> Result<(), GpuError> {
        let name = cu_name(T::REDUCE[op]);
        let split = scratch.split();
        self.reduce_pass(gpu, name, x, split, scratch.reduce_buffers().0)?;
        let (p, res) = scratch.reduce_buffers();
        self.reduce_pass(gpu, name, p, second_pass(split), res)
    }

    /// `cu_dot_<T>` then the sum's second pass, into `v.scratch.result`.
    pub(super) fn dot<T: Float>(&self, gpu: &Gpu, v: &mut Vectors<T>) -> Result<(), GpuError> {
        let n = v.a.len();
        let split = v.scratch.split();
        let name = cu_name(T::STREAM[5]);
        {
            let chunk = split.chunk;
            let mut args = self.args(gpu, name);
            args.arg(&v.a)
                .arg(&v.b)
                .arg(&n)
                .arg(&chunk)
                .arg(v.scratch.reduce_buffers().0);
            // SAFETY: `cu_dot_*(const T* a, const T* b, size_t n, size_t chunk, T* out)`.
            unsafe { cust::launch::launch_built(name, cfg_1d(split.blocks), args)? };
        }
        let sum = cu_name(T::REDUCE[0]);
        let (partials, result) = v.scratch.reduce_buffers();
        self.reduce_pass(gpu, sum, partials, second_pass(split), result)
    }

    /// The CUDA C single-pass scan twin (`idx` 0 inclusive, 1 exclusive, as in
    /// [`Scannable::SCAN`]): the same tile size, look-back protocol and scratch (status words
    /// and counter, booked like the Rust launch).
    pub(super) fn scan<T: Scannable>(
        &self,
        gpu: &Gpu,
        idx: usize,
        x: &CudaSlice<T>,
        st: &mut ScanState,
        out: &mut CudaSlice<T>,
    ) -> Result<(), GpuError> {
        let name = cu_name(T::SCAN[idx]);
        let len = x.len().min(out.len());
        let l = st.book(gpu, len)?;
        let status_len = st.status.len();
        let mut args = self.args(gpu, name);
        args.arg(x)
            .arg(&len)
            .arg(out)
            .arg(&mut st.status)
            .arg(&status_len)
            .arg(&mut st.counter)
            .arg(&l.epoch)
            .arg(&l.base);
        let cfg = LaunchConfig {
            grid_dim: (l.tiles, 1, 1),
            block_dim: (SCAN_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `cu_scan_*(const T* x, size_t n, T* out, unsigned long long* status,
        // size_t status_len, unsigned* counter, unsigned epoch, unsigned base)`; `out` holds
        // `len` elements; a fresh epoch and the counter's value before the launch (`book`).
        unsafe { cust::launch::launch_built(name, cfg, args) }
    }

    /// `cu_sgemm`: row-major `C = A·B` (`A` m×k, `B` k×n, `C` m×n), α = 1, β = 0, in the Rust
    /// SGEMM's tiles.
    pub(super) fn sgemm(
        &self,
        gpu: &Gpu,
        (m, n, k): (u32, u32, u32),
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<(), GpuError> {
        let cfg = LaunchConfig {
            grid_dim: (n.div_ceil(SGEMM_TILE_N), m.div_ceil(SGEMM_TILE_M), 1),
            block_dim: (SGEMM_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let dims = (m as i32, n as i32, k as i32, 1.0f32, 0.0f32);
        let mut args = self.args(gpu, "cu_sgemm");
        args.arg(&dims.0)
            .arg(&dims.1)
            .arg(&dims.2)
            .arg(&dims.3)
            .arg(a)
            .arg(b)
            .arg(&dims.4)
            .arg(c);
        // SAFETY: `cu_sgemm(int m, int n, int k, float alpha, const float* A,
        // const float* B, float beta, float* C)`; buffer sizes m·k, k·n, m·n.
        unsafe { cust::launch::launch_built("cu_sgemm", cfg, args) }
    }
}

/// One launch of the CUDA C Mandelbrot reference kernel `name` (`cu_mandel_*` of
/// `bench/cuda/mandelbrot.cu`, looked up as `function`) over `params`' view, iteration limit
/// and precision, in the launch shape `cfg` (16×16 blocks over the image), writing the escape
/// counts (row-major, at least `width·height` elements) into `counts`.
///
/// # Panics
/// If `counts` is smaller than the view.
pub(super) fn mandelbrot_reference(
    gpu: &Gpu,
    (name, function): (&'static str, &CudaFunction),
    cfg: LaunchConfig,
    params: &RenderParams,
    counts: &mut CudaSlice<u32>,
) -> Result<(), GpuError> {
    let (view, max_iter) = (&params.view, params.max_iter);
    assert!(counts.len() >= view.len(), "counts smaller than the view");
    let (w, h) = (view.width_px, view.height_px);
    let mut args = gpu.stream().launch_builder(function);
    let v32 = view.cast::<f32>();
    let (x0, y0, dx, dy) = (v32.origin.re, v32.origin.im, v32.step_re, v32.step_im);
    let (x0d, y0d, dxd, dyd) = (view.origin.re, view.origin.im, view.step_re, view.step_im);
    args.arg(&w).arg(&h);
    match params.precision {
        Precision::F32 => args.arg(&x0).arg(&y0).arg(&dx).arg(&dy),
        Precision::F64 => args.arg(&x0d).arg(&y0d).arg(&dxd).arg(&dyd),
    };
    args.arg(&max_iter).arg(counts);
    // SAFETY: `(unsigned width, unsigned height, T x0, T y0, T dx, T dy, unsigned max_iter,
    // unsigned* counts)` as in bench/cuda/mandelbrot.cu, T by precision; `counts` holds
    // width·height elements (checked above).
    unsafe { cust::launch::launch_built(name, cfg, args) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cuda_c_kernel_is_in_the_source() {
        // Names are spelled out, or made by STREAM_KERNELS from `cu_<op>_##S`.
        for name in CUDA_C_KERNELS {
            let by_macro = ["copy", "scale", "add", "triad", "axpy"].iter().any(|op| {
                name.starts_with(&format!("cu_{op}_"))
                    && CUDA_C_SOURCE.contains(&format!("cu_{op}_##S"))
            });
            assert!(by_macro || CUDA_C_SOURCE.contains(name), "{name}");
        }
        assert_eq!(cu_name("triad_f32"), "cu_triad_f32");
        assert_eq!(cu_name("reduce_max_u32"), "cu_reduce_max_u32");
    }
}
