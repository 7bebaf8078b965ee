use cuda_std::DeviceCopy;

#[repr(u32)]
#[derive(Clone, Copy, DeviceCopy)]
pub enum Shape {
    Circle(f32),
    Square,
}

fn main() {}
