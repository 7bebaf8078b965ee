// f16 inputs with the m16n8k8 shape (only tf32 is provided there), and f16 times bf16.
use cuda_std::mma::{Bf16, F16, FragA, FragAcc, FragB, M16N8K8, M16N8K16, mma_sync};

pub fn k(b: FragB<M16N8K16, Bf16>, c: FragAcc<M16N8K16>) {
    let _ = FragA::<M16N8K8, F16>::from_regs([0; 4]);
    let a = FragA::<M16N8K16, F16>::from_regs([0; 4]);
    let _ = unsafe { mma_sync(&a, &b, &c) };
}

fn main() {}
