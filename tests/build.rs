//! Builds the test kernels crate (`probes`, in `kernels/`) twice with `cuda_builder`:
//! - the baseline module (sm_70 PTX, cubins for sm_80 and sm_90 where ptxas is found):
//!   `PROBES_MODULE`, a `LazyLock<cust::module::ModuleImage>` named `PROBES`;
//! - an sm_80 variant for `redux.sync` and `cp.async` (kernels that exist only under
//!   `cfg(target_feature = "sm_80")`), with fast math (libdevice) where NVIDIA's libdevice is
//!   found: `PROBES_SM80_MODULE` (`PROBES_SM80`). `PROBES_SM80_FAST_MATH` is `1` when it
//!   links libdevice, `0` otherwise (the fast-math GPU test then says it was skipped);
//! - an sm_90a variant (PTX ISA 8.0) for the Hopper probes (`wgmma`, TMA, clusters,
//!   `stmatrix`: kernels under `cfg(target_feature = "sm_90a")`), checked by ptxas for
//!   sm_90a: `PROBES_SM90A_MODULE` (`PROBES_SM90A`).

use cuda_builder::{ComputeCapability, CudaBuilder};

fn main() {
    let baseline = CudaBuilder::new("kernels")
        .ptxas_archs([ComputeCapability::new(7, 0), ComputeCapability::new(9, 0)])
        .cubin_archs([ComputeCapability::new(8, 0), ComputeCapability::new(9, 0)])
        .build();
    if let Err(err) = baseline {
        eprintln!("{err}");
        std::process::exit(1);
    }
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
        "cargo::rustc-env=PROBES_SM80_FAST_MATH={}",
        u8::from(fast_math)
    );
    let sm80 = CudaBuilder::new("kernels")
        .variant("sm80")
        .arch(ComputeCapability::new(8, 0))
        .fast_math(fast_math)
        .ptxas_archs([ComputeCapability::new(8, 0), ComputeCapability::new(9, 0)])
        .build();
    if let Err(err) = sm80 {
        eprintln!("{err}");
        std::process::exit(1);
    }
    let sm90a = CudaBuilder::new("kernels")
        .variant("sm90a")
        .arch(ComputeCapability::new_arch_specific(9, 0))
        .ptx_isa(8, 0)
        .ptxas_archs([ComputeCapability::new_arch_specific(9, 0)])
        .build();
    if let Err(err) = sm90a {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
