use cuda_std::DeviceCopy;

#[repr(C)]
#[derive(Clone, Copy, DeviceCopy)]
pub struct Params {
    scale: f32,
    name: &'static str,
}

fn main() {}
