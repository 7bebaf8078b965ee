use cuda_std::prelude::*;

#[kernel]
pub fn k(self) {}

fn main() {}
