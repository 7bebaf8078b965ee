use cuda_std::DeviceCopy;

#[repr(C)]
#[derive(Clone, Copy, DeviceCopy)]
pub struct Pair<F> {
    a: F,
    b: F,
}

#[repr(transparent)]
#[derive(Clone, Copy, DeviceCopy)]
pub struct Meters(f64);

#[repr(u8)]
#[derive(Clone, Copy, DeviceCopy)]
pub enum Mode {
    Fast = 1,
    Exact = 2,
}

fn is_device_copy<T: DeviceCopy>() {}

fn main() {
    is_device_copy::<Pair<f32>>();
    is_device_copy::<Meters>();
    is_device_copy::<Mode>();
    assert_eq!(std::mem::size_of::<Pair<f64>>(), 16);
}
