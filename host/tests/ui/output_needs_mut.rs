use host::launch::{Launch, for_num_elems};
use kernels::launch_checks::scale_offset_f32;

#[allow(unused_must_use)]
fn check(gpu: &host::Gpu) {
    let cfg = for_num_elems(4, 32).unwrap();
    let stream = gpu.stream();
    let x = stream.alloc_zeros::<f32>(4).unwrap();
    let mut out = stream.alloc_zeros::<f32>(4).unwrap();
    let ints = stream.alloc_zeros::<u32>(4).unwrap();
    let mut ints_out = stream.alloc_zeros::<u32>(4).unwrap();
    let _ = (&x, &mut out, &ints, &mut ints_out, cfg);
    scale_offset_f32.launch(gpu, cfg, (&x, &out, 2.0f32, 1.0f32));
}

fn main() {}
