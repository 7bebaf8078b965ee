use cuda_std::prelude::*;

#[kernel]
pub fn k(name: String, data: &[Vec<u8>]) {
    let _ = (name, data);
}

fn main() {}
