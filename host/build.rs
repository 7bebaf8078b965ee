//! Compiles the `kernels` crate to PTX with `cuda_builder`; the PTX is embedded in the host
//! library through `env!("KERNELS_PTX")`. Where ptxas is available, the PTX is also
//! assembled ahead of time to cubins for sm_80 and sm_90, listed in
//! `$OUT_DIR/kernels_cubins.rs` (`(major, minor, bytes)` per cubin; an empty list without
//! ptxas), which `Gpu::new` prefers for a device of exactly that compute capability.

use cuda_builder::{ComputeCapability, CudaBuilder};
use std::fmt::Write;

fn main() {
    let result = CudaBuilder::new("../kernels")
        // Validate for the baseline (sm_70) and for Hopper (sm_90), where we run.
        .ptxas_archs([ComputeCapability(7, 0), ComputeCapability(9, 0)])
        // Ahead-of-time SASS for Ampere (A100) and Hopper (H100, H200).
        .cubin_archs([ComputeCapability(8, 0), ComputeCapability(9, 0)])
        .build();
    let artifact = match result {
        Ok(a) => a,
        Err(err) => {
            eprintln!("{err}");
            std::process::exit(1);
        }
    };
    let mut list = String::from(
        "/// Cubins of the kernels module assembled at build time: (major, minor, bytes).\n\
         pub const CUBINS: &[(u32, u32, &[u8])] = &[\n",
    );
    for (cc, path) in &artifact.cubins {
        let _ = writeln!(
            list,
            "    ({}, {}, include_bytes!({:?})),",
            cc.0,
            cc.1,
            path.display().to_string()
        );
    }
    list.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let file = out.join("kernels_cubins.rs");
    if let Err(e) = std::fs::write(&file, list) {
        eprintln!("cannot write {}: {e}", file.display());
        std::process::exit(1);
    }
}
