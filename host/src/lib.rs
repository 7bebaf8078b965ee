pub const PTX: &str = include_str!(env!("KERNELS_PTX"));
