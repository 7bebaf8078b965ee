//! Builds a second PTX variant of the `kernels` crate for the primitive tests: sm_80 (for
//! `redux.sync` and `cp.async`, whose kernels exist only under `cfg(target_feature =
//! "sm_80")`) with fast math (libdevice). Exported as `KERNELS_SM80_PTX`; loaded by
//! `tests/tests/primitives.rs` next to the host's default sm_70 module.

use cuda_builder::{ComputeCapability, CudaBuilder};

fn main() {
    let result = CudaBuilder::new("../kernels")
        .variant("sm80")
        .arch(ComputeCapability(8, 0))
        .fast_math(true)
        .ptxas_archs([ComputeCapability(8, 0), ComputeCapability(9, 0)])
        .build();
    if let Err(err) = result {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
