use cuda_std::prelude::*;

#[kernel]
pub fn k<T: DeviceCopy>(x: T) {
    let _ = x;
}

fn main() {}
