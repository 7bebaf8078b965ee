//! Compiles the `kernels` crate with `cuda_builder`: PTX for sm_70, and where ptxas is found,
//! cubins for sm_80 and sm_90 (ahead-of-time SASS for A100 and H100/H200). The builder's
//! manifest, `KERNELS_MODULE`, is included by `src/lib.rs` as `host::KERNELS`.

use cuda_builder::{ComputeCapability, CudaBuilder};

fn main() {
    let result = CudaBuilder::new("../kernels")
        // Validate for the baseline (sm_70) and for Hopper (sm_90), where we run.
        .ptxas_archs([ComputeCapability::new(7, 0), ComputeCapability::new(9, 0)])
        // Ahead-of-time SASS for Ampere (A100) and Hopper (H100, H200).
        .cubin_archs([ComputeCapability::new(8, 0), ComputeCapability::new(9, 0)])
        .build();
    if let Err(err) = result {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
