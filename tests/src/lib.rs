//! Shared helpers for ferrocuda's integration tests (in `tests/tests/`).
//!
//! Kernel tests run on the GPU when one is present and on the CPU emulator
//! (`cust::context::Context::emulator`) otherwise, from the same code: [`gpu`] and [`probes()`]
//! choose (set `FERROCUDA_DEVICE=gpu` or `cpu` to force one). Tests that need what only a
//! GPU has (device properties, PTX/cubin modules, graphs, NCCL) stay
//! `#[ignore = "needs a CUDA GPU: <why>"]`: `cargo xtask test --gpu` (or
//! `cargo test -- --ignored` on a GPU machine) runs them.

use common::{Complex, Viewport};
use host::Gpu;

include!(env!("PROBES_MODULE"));
include!(env!("PROBES_SM80_MODULE"));

/// GPU 0 with ferrocuda's product kernels when a GPU is present, else the CPU emulator
/// (`FERROCUDA_DEVICE` overrides: see [`Gpu::from_env`]); panics with a message saying why
/// if neither opens.
pub fn gpu() -> Gpu {
    Gpu::from_env(0, &host::KERNELS).unwrap_or_else(|e| panic!("no device for the test: {e}"))
}

/// As [`gpu`], with the test kernels module ([`PROBES`]) loaded: the probes' `#[kernel]`
/// handles are resolved in [`Gpu::module`] and launched on [`Gpu::stream`].
pub fn probes() -> Gpu {
    Gpu::from_env(0, &PROBES).unwrap_or_else(|e| panic!("no device for the test: {e}"))
}

/// `n` on a GPU, `n / divisor` (at least 1) on the CPU emulator: shrinks a test's problem
/// size where a debug-build emulation of the full size would be slow, keeping the same code
/// and the same CPU-reference comparison.
pub fn scale(gpu: &Gpu, n: usize, divisor: usize) -> usize {
    if gpu.is_emulator() {
        (n / divisor.max(1)).max(1)
    } else {
        n
    }
}

/// `true` when the tests run on the CPU emulator: what [`gpu`] and [`probes()`] open
/// (`FERROCUDA_DEVICE=cpu`, or `auto`/unset without a GPU).
pub fn emulated() -> bool {
    use cust::context::{DeviceChoice, gpu_present};
    match DeviceChoice::from_env() {
        Ok(DeviceChoice::Cpu) => true,
        Ok(DeviceChoice::Auto) => !gpu_present(),
        _ => false,
    }
}

/// How much [`views`] and [`deep_views`] shrink each side on the emulator: the same regions
/// and iteration limits at 1/7 of the resolution (1/49 of the pixels), so a debug build
/// emulates them in seconds, not minutes; 7 keeps most sides odd (partial blocks and
/// bands).
const EMULATOR_VIEW_DIVISOR: u32 = 7;

/// `side` pixels on a GPU, `side / EMULATOR_VIEW_DIVISOR` (at least 1) on the emulator.
fn view_side(side: u32) -> u32 {
    if emulated() {
        (side / EMULATOR_VIEW_DIVISOR).max(1)
    } else {
        side
    }
}

/// A named test view.
#[derive(Clone, Copy, Debug)]
pub struct TestView {
    /// What it shows.
    pub name: &'static str,
    /// The view.
    pub view: Viewport<f64>,
    /// Iteration limit.
    pub max_iter: u32,
}

fn centered(
    name: &'static str,
    w: u32,
    h: u32,
    re: f64,
    im: f64,
    scale: f64,
    max_iter: u32,
) -> TestView {
    let (w, h) = (view_side(w), view_side(h));
    TestView {
        name,
        view: Viewport::from_center_scale(w, h, Complex::new(re, im), scale)
            .unwrap_or_else(|e| panic!("test view {name}: {e}")),
        max_iter,
    }
}

/// Views for f32 and f64 comparisons: the whole set at odd sizes, boundary-rich zooms, a
/// one-pixel image and a one-row image. On the emulator each side is 1/7 as long (see
/// `EMULATOR_VIEW_DIVISOR`): same regions, same iteration limits.
pub fn views() -> Vec<TestView> {
    vec![
        centered("full view 1001x777", 1001, 777, -0.75, 0.0, 3.5, 500),
        centered("seahorse valley", 640, 480, -0.7435, 0.1314, 0.01, 1000),
        centered("elephant valley", 333, 517, 0.2925, 0.0149, 0.005, 800),
        centered("period-3 mini-brot", 257, 129, -1.7549, 0.0, 0.02, 2000),
        centered("single pixel", 1, 1, -0.1, 0.65, 1e-3, 300),
        centered("single row", 997, 1, -0.75, 0.1, 2.5, 300),
        TestView {
            name: "corners, non-square pixels",
            view: Viewport::from_corners(
                view_side(301),
                view_side(203),
                Complex::new(-2.0, 1.25),
                Complex::new(0.6, -1.25),
            )
            .expect("valid corners"),
            max_iter: 255,
        },
    ]
}

/// Deep zooms where only f64 resolves the pixels (1/7 of the sides on the emulator, as
/// [`views`]).
pub fn deep_views() -> Vec<TestView> {
    vec![
        centered(
            "deep zoom 1e-10",
            513,
            385,
            -0.743_643_887_037_151,
            0.131_825_904_205_33,
            1e-10,
            3000,
        ),
        // c = i is a Misiurewicz point (orbit 0, i, -1+i, -i, -1+i, ...: pre-periodic), so it
        // lies on the boundary and every zoom around it shows filaments.
        centered("deep zoom 1e-9 at c = i", 256, 256, 0.0, 1.0, 1e-9, 4000),
    ]
}

/// A deterministic pseudo-random `u64` for index `i` of stream `seed` (splitmix64: Steele,
/// Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), for test
/// inputs that are the same on every run and backend.
pub fn mix(seed: u64, i: usize) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i as u64)
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `C = A·B` for row-major `a` (m×k) and `b` (k×n), in the order the test matmul kernels
/// use: per element `acc = 0`, then `acc += a[i][e]·b[e][j]` for increasing `e`, multiply and
/// add rounded separately, so GPU results compare bitwise (see [`f32_bits`]).
///
/// # Panics
/// If `a` holds fewer than m·k or `b` fewer than k·n elements.
pub fn matmul_f32(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for e in 0..k {
                acc += a[i * k + e] * b[e * n + j];
            }
            c[i * n + j] = acc;
        }
    }
    c
}

/// The bit patterns of `v`: compared with [`assert_identical`], floats must match to the
/// bit (NaN payloads and the sign of zero included).
pub fn f32_bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Asserts two equally long slices are identical; on failure reports how many elements
/// differ and the first few `(index, expected, actual)` triples.
pub fn assert_identical<T: PartialEq + std::fmt::Debug>(what: &str, expected: &[T], actual: &[T]) {
    assert_eq!(expected.len(), actual.len(), "{what}: lengths differ");
    let diffs: Vec<_> = expected
        .iter()
        .zip(actual)
        .enumerate()
        .filter(|(_, (e, a))| e != a)
        .collect();
    assert!(
        diffs.is_empty(),
        "{what}: {} of {} elements differ; first (index, expected, actual): {:?}",
        diffs.len(),
        expected.len(),
        diffs.iter().take(5).collect::<Vec<_>>()
    );
}

/// A device copy of `data`, queued on `gpu`'s stream; panics on failure (test helper).
pub fn htod<T: cust::memory::DeviceCopy>(gpu: &Gpu, data: &[T]) -> cust::memory::DeviceBuffer<T> {
    cust::memory::DeviceBuffer::from_slice_async(data, gpu.stream()).expect("copy to device")
}

/// `n` zeroed device elements, allocated on `gpu`'s stream; panics on failure.
pub fn zeros<T: cust::memory::DeviceCopy + cust::memory::ValidAsZeroBits>(
    gpu: &Gpu,
    n: usize,
) -> cust::memory::DeviceBuffer<T> {
    cust::memory::DeviceBuffer::zeroed_async(n, gpu.stream()).expect("device allocation")
}

/// The buffer's contents on the host; panics on failure.
pub fn dtoh<T: cust::memory::DeviceCopy>(buf: &cust::memory::DeviceBuffer<T>) -> Vec<T> {
    buf.as_host_vec().expect("copy to host")
}

/// `launch_probe!(gpu, module, kernel, cfg, (args...))`: resolves the probe handle `kernel`
/// in `module` (its parameter sizes checked against the module's), launches it on `gpu`'s
/// stream with `cfg` and the arguments (one per kernel parameter: `&DeviceBuffer` for `&[T]`
/// and `*const T`, `&mut DeviceBuffer` for `*mut T` and `OutSlice<T>`, values by value), then
/// synchronises; panics with the kernel's error. The caller's test checks the buffer sizes
/// the probe's `# Safety` section asks for.
#[macro_export]
macro_rules! launch_probe {
    ($gpu:expr, $module:expr, $kernel:expr, $cfg:expr, ($($arg:expr),* $(,)?)) => {{
        let gpu: &::host::Gpu = $gpu;
        let module: &::cust::module::Module = $module;
        let cfg: ::cust::function::LaunchConfig = $cfg;
        let kernel = module.kernel($kernel).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: the buffers have the sizes the kernel's `# Safety` section asks for
        // (checked by each test); kinds and sizes are checked by the handle.
        unsafe { kernel.launch_unchecked(gpu.stream(), cfg, ($($arg,)*)) }
            .unwrap_or_else(|e| panic!("{e}"));
        gpu.stream()
            .synchronize_after(kernel.name(), cfg)
            .unwrap_or_else(|e| panic!("{e}"));
    }};
}

/// The sm_80 variant of the test kernels ([`PROBES_SM80`]) loaded on `gpu`, or `None` (with
/// a message) on GPUs older than sm_80, where its instructions do not exist.
///
/// # Panics
/// If the compute capability cannot be read or the module does not load (a test failure).
pub fn sm80_module(gpu: &Gpu) -> Option<cust::module::Module> {
    if gpu.is_emulator() {
        // The emulator runs the same host bodies for every variant: the baseline module.
        return Some(
            cust::module::Module::from_image_in(gpu.context(), &PROBES_SM80)
                .expect("the sm_80 kernels variant on the emulator"),
        );
    }
    let cc = gpu
        .context()
        .compute_capability()
        .expect("compute capability");
    if cc.major < 8 {
        eprintln!("skipped: {} is older than sm_80", gpu.name());
        return None;
    }
    Some(
        cust::module::Module::from_image_in(gpu.context(), &PROBES_SM80)
            .expect("loading the sm_80 kernels variant"),
    )
}
