use cuda_std::prelude::*;

#[kernel]
pub fn k(x: &u32) {
    let _ = x;
}

fn main() {}
