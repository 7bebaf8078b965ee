//! Shared helpers for ferrocuda's integration tests (in `tests/tests/`).
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU"]`: plain `cargo test` skips them and says so;
//! `cargo xtask test --gpu` (or `cargo test -- --ignored` on a GPU machine) runs them.

use common::{Complex, Viewport};
use cudarc::driver::{LaunchArgs, LaunchConfig};
use cust::{context::Context, device::Device, function::Function, module::Module, stream::Stream};
use host::{Gpu, GpuError};
use std::collections::HashMap;

include!(env!("PROBES_MODULE"));
include!(env!("PROBES_SM80_MODULE"));

/// Opens GPU 0 with ferrocuda's product kernels, or panics with a message saying why (GPU
/// tests are only run on purpose).
pub fn gpu() -> Gpu {
    Gpu::new(0).unwrap_or_else(|e| panic!("GPU tests need a CUDA GPU: {e}"))
}

/// GPU 0 with the test kernels module ([`PROBES`]) loaded, for launching probes by name
/// (the primitives tests build their arguments by hand, as a CUDA C host would).
#[derive(Debug)]
pub struct Probes {
    ctx: Context,
    stream: Stream,
    module: Module,
    functions: HashMap<&'static str, Function>,
}

/// Opens GPU 0 with the test kernels, or panics with a message saying why.
pub fn probes() -> Probes {
    Probes::new().unwrap_or_else(|e| panic!("GPU tests need a CUDA GPU: {e}"))
}

impl Probes {
    /// Opens GPU 0 and loads [`PROBES`] (every entry point looked up once).
    ///
    /// # Errors
    /// A runtime error.
    pub fn new() -> Result<Self, GpuError> {
        let ctx = Context::new(Device::get_device(0)?)?;
        let module = Module::from_image_in(&ctx, &PROBES)?;
        let mut functions = HashMap::new();
        for entry in &PROBES.entries {
            functions.insert(entry.name.as_str(), module.get_function(&entry.name)?);
        }
        Ok(Self {
            stream: Stream::default_of(&ctx),
            ctx,
            module,
            functions,
        })
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The stream probes run on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The probes module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The device's name.
    pub fn name(&self) -> String {
        self.ctx.name()
    }

    /// A launch builder for the probe `name`.
    ///
    /// # Panics
    /// If the module has no such entry (a test bug).
    pub fn launch_builder(&self, name: &str) -> LaunchArgs<'_> {
        self.stream.launch_builder(self.functions[name].as_cudarc())
    }

    /// Queues `args` for `name`; errors name the kernel and configuration.
    ///
    /// # Safety
    /// The arguments match the kernel's parameters and its `# Safety` contract.
    ///
    /// # Errors
    /// [`GpuError::Launch`].
    pub unsafe fn launch(
        &self,
        name: &str,
        cfg: LaunchConfig,
        args: LaunchArgs<'_>,
    ) -> Result<(), GpuError> {
        // SAFETY: forwarded to the caller.
        unsafe { cust::launch::launch_built(name, cfg, args) }
    }

    /// Waits for the stream; a failure is reported as a failure of `kernel`.
    ///
    /// # Errors
    /// [`GpuError::Launch`].
    pub fn sync_after(&self, kernel: &str, cfg: LaunchConfig) -> Result<(), GpuError> {
        self.stream
            .as_cudarc()
            .synchronize()
            .map_err(|source| cust::launch::launch_error(kernel, cfg, source))
    }

    /// Waits for the stream.
    ///
    /// # Errors
    /// A driver error.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize()
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
    TestView {
        name,
        view: Viewport::from_center_scale(w, h, Complex::new(re, im), scale)
            .unwrap_or_else(|e| panic!("test view {name}: {e}")),
        max_iter,
    }
}

/// Views for f32 and f64 comparisons: the whole set at odd sizes, boundary-rich zooms, a
/// one-pixel image and a one-row image.
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
                301,
                203,
                Complex::new(-2.0, 1.25),
                Complex::new(0.6, -1.25),
            )
            .expect("valid corners"),
            max_iter: 255,
        },
    ]
}

/// Deep zooms where only f64 resolves the pixels.
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
