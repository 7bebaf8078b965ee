use cuda_std::prelude::*;

#[kernel]
pub fn k(bins: AtomicSlice) {
    let _ = bins;
}

fn main() {}
