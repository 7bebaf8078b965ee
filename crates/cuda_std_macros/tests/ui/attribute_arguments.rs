use cuda_std::prelude::*;

#[kernel(block = 256)]
pub fn k() {}

fn main() {}
