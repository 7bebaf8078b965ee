use cuda_std::prelude::*;

#[kernel]
pub fn k(out: *mut f32, n: u32) {
    let _ = (out, n);
}

fn main() {}
