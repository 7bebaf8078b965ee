//! Compiles the `kernels` crate to PTX with `cuda_builder`; the PTX is embedded in the host
//! library through `env!("KERNELS_PTX")`.

use cuda_builder::{ComputeCapability, CudaBuilder};

fn main() {
    let result = CudaBuilder::new("../kernels")
        // Validate for the baseline (sm_70) and for Hopper (sm_90), where we run.
        .ptxas_archs([ComputeCapability(7, 0), ComputeCapability(9, 0)])
        .build();
    if let Err(err) = result {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
