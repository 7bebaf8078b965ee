use cuda_std::prelude::*;

#[kernel]
pub extern "C" fn k() {}

fn main() {}
