use cuda_std::prelude::*;

#[kernel]
pub fn k((a, b): (u32, u32)) {
    let _ = (a, b);
}

fn main() {}
