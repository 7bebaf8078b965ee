use cuda_std::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
pub struct Params {
    scale: f32,
    n: u32,
}

fn main() {}
