use cuda_std::prelude::*;

#[kernel]
pub fn k() -> u32 {
    0
}

fn main() {}
