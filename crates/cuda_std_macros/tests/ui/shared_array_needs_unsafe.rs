use cuda_std::prelude::*;

// The indexable form hands every thread a `&mut` to the same array: `unsafe`.
pub fn f() -> u32 {
    const N: usize = 8;
    let a = shared_array!([u32; N]);
    a[0]
}

fn main() {}
