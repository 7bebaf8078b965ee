use cuda_std::prelude::*;

#[kernel]
pub fn k(out: &mut [f32]) {
    out[0] = 1.0;
}

fn main() {}
