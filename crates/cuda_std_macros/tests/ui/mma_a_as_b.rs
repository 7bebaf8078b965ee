// An A fragment passed where mma_sync takes the B fragment.
use cuda_std::mma::{F16, FragA, FragAcc, M16N8K16, mma_sync};

pub fn k(a: FragA<M16N8K16, F16>, c: FragAcc<M16N8K16>) -> FragAcc<M16N8K16> {
    unsafe { mma_sync(&a, &a, &c) }
}

fn main() {}
