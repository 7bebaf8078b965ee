use cuda_std::prelude::*;

#[kernel]
pub async fn k() {}

fn main() {}
