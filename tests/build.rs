//! Builds a second PTX variant of the `kernels` crate for the primitive tests: sm_80 (for
//! `redux.sync` and `cp.async`, whose kernels exist only under `cfg(target_feature =
//! "sm_80")`), with fast math (libdevice) where NVIDIA's libdevice is found. Exported as
//! `KERNELS_SM80_PTX`; `KERNELS_SM80_FAST_MATH` is `1` when the variant links libdevice and
//! `0` otherwise (the fast-math GPU test then says it was skipped). Loaded by
//! `tests/tests/primitives.rs` next to the host's default sm_70 module.

use cuda_builder::{ComputeCapability, CudaBuilder};

fn main() {
    // Without libdevice (no CUDA toolkit, no `nvidia-cuda-nvcc-cu12` wheel) the variant is
    // still built, with exact math, so that a machine with rustup alone builds and tests.
    let fast_math = cuda_builder::find_libdevice().is_some();
    if !fast_math {
        println!(
            "cargo::warning=libdevice not found: the sm_80 test kernels use exact math and the \
             fast-math GPU test will be skipped. {}",
            cuda_builder::ptxas::INSTALL_HINT
        );
    }
    println!(
        "cargo::rustc-env=KERNELS_SM80_FAST_MATH={}",
        u8::from(fast_math)
    );
    let result = CudaBuilder::new("../kernels")
        .variant("sm80")
        .arch(ComputeCapability(8, 0))
        .fast_math(fast_math)
        .ptxas_archs([ComputeCapability(8, 0), ComputeCapability(9, 0)])
        .build();
    if let Err(err) = result {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
