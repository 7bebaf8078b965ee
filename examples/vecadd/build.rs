use cuda_builder::CudaBuilder;
use std::{env, path::PathBuf};

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    CudaBuilder::new("kernels")
        .copy_to(out_dir.join("kernels.ptx"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
}
