//! The emulator's three speed probes (`tests/benches/emu_speed.rs`), each one launch checked
//! against the CPU: a reduction over 2^20 `u32`, a 256×256×256 tiled SGEMM and a 512×512
//! Mandelbrot tile. The benchmark times them; the emulator tests run them for their checks.

use crate::emulate::{opts, run, slice, slice_mut};
use common::palette::Coloring;
use common::{Band, Complex, Palette, RenderJob, Viewport};
use cuda_emu::{EmuChecks, EmuOptions, EmuReport, HostBuffer};
use probes::primitives as prim;
use std::ffi::c_void;
use std::time::Instant;

/// SGEMM probe side.
const DIM: usize = 256;

/// The probes' inputs and the CPU's answers, made once.
pub struct Probes {
    input: Vec<u32>,
    sum: u32,
    a: Vec<f32>,
    b: Vec<f32>,
    product: Vec<f32>,
    job: RenderJob<f32>,
}

impl Probes {
    pub fn new() -> Self {
        let input: Vec<u32> = (0..1u32 << 20).map(|i| i % 1000).collect();
        let sum = input.iter().fold(0u32, |a, &v| a.wrapping_add(v));
        let a: Vec<f32> = (0..DIM * DIM).map(|i| (i % 7) as f32 - 3.0).collect();
        let b: Vec<f32> = (0..DIM * DIM).map(|i| (i % 5) as f32 - 2.0).collect();
        let product = tests::matmul_f32(&a, &b, DIM, DIM, DIM);
        let view = Viewport::from_center_scale(512, 512, Complex::new(-0.75, 0.0), 3.0)
            .unwrap_or_else(|e| panic!("{e}"));
        let job = RenderJob::new(&view, 1, 256, Coloring::discrete(Palette::Gray)).cast::<f32>();
        Self {
            input,
            sum,
            a,
            b,
            product,
            job,
        }
    }

    /// `kernels::reduce::reduce_sum_u32` over 2^20 `u32`: 256 blocks of 256 threads, 4096
    /// elements per block (warp shuffles, a shared-memory slot per warp, two barriers).
    /// Returns the launch's seconds and report; panics if the sum is wrong.
    pub fn reduce(&self, checks: EmuChecks) -> (f64, EmuReport) {
        let n = self.input.len();
        let mut partial = vec![0u32; 256];
        let options = EmuOptions { checks, ..opts() };
        let start = Instant::now();
        let report =
            emulate!(kernels::reduce::reduce_sum_u32, [256, 1, 1], [256, 1, 1], 0, &options;
            slice(&self.input), n / 256, slice_mut(&mut partial))
            .unwrap_or_else(|e| panic!("{e}"));
        let s = start.elapsed().as_secs_f64();
        let sum = partial.iter().fold(0u32, |a, &v| a.wrapping_add(v));
        assert_eq!(sum, self.sum, "reduce_sum_u32 on the emulator");
        (s, report)
    }

    /// The tiled matmul of the GPU tests (`probes::primitives::matmul_tiled_f32`: 16×16 tiles
    /// through shared memory, 16×16 blocks of 256 threads, two barriers per tile step) at
    /// 256×256×256. The product kernel `kernels::gemm::sgemm` does not run on the emulator:
    /// its shared-memory helpers take 32-bit shared-window addresses and panic on the host.
    /// Returns the launch's seconds and report; panics unless every element equals the CPU's.
    pub fn sgemm(&self, checks: EmuChecks) -> (f64, EmuReport) {
        let mut c = vec![0f32; DIM * DIM];
        let options = EmuOptions {
            checks,
            buffers: vec![HostBuffer {
                address: c.as_ptr() as usize,
                bytes: 4 * c.len(),
            }],
            ..opts()
        };
        let d = DIM as u32;
        let start = Instant::now();
        let report = emulate!(prim::matmul_tiled_f32, [16, 16, 1], [16, 16, 1], 0, &options;
            slice(&self.a), slice(&self.b), c.as_mut_ptr(), d, d, d)
        .unwrap_or_else(|e| panic!("{e}"));
        let s = start.elapsed().as_secs_f64();
        // Small integers: every sum is exact, in any order.
        assert_eq!(tests::f32_bits(&c), tests::f32_bits(&self.product));
        (s, report)
    }

    /// `kernels::mandelbrot::mandelbrot_f32` on a 512×512 tile at 256 iterations: 32×32
    /// blocks of 16×16. Returns the launch's seconds and report; panics unless every 997th
    /// pixel's count equals the CPU's.
    pub fn mandelbrot(&self, checks: EmuChecks) -> (f64, EmuReport) {
        let band = Band {
            first_row: 0,
            rows: 512,
        };
        let norms: Vec<f32> = Vec::new();
        let mut counts = vec![0u32; 512 * 512];
        let options = EmuOptions { checks, ..opts() };
        let start = Instant::now();
        let report = emulate!(kernels::mandelbrot::mandelbrot_f32, [32, 32, 1], [16, 16, 1], 0,
            &options; self.job, band, slice_mut(&mut counts), slice(&norms))
        .unwrap_or_else(|e| panic!("{e}"));
        let s = start.elapsed().as_secs_f64();
        for (i, &c) in counts.iter().enumerate().step_by(997) {
            let (x, y) = ((i % 512) as u32, (i / 512) as u32);
            assert_eq!(c, self.job.escape_single(x, y).n, "pixel ({x}, {y})");
        }
        (s, report)
    }
}
