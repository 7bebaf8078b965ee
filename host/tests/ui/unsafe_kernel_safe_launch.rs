use host::launch::{Launch, for_num_elems};
use kernels::launch_checks::raw_copy_u32;

#[allow(unused_must_use)]
fn check(gpu: &host::Gpu) {
    let cfg = for_num_elems(4, 32).unwrap();
    let stream = gpu.stream();
    let x = stream.alloc_zeros::<f32>(4).unwrap();
    let mut out = stream.alloc_zeros::<f32>(4).unwrap();
    let ints = stream.alloc_zeros::<u32>(4).unwrap();
    let mut ints_out = stream.alloc_zeros::<u32>(4).unwrap();
    let _ = (&x, &mut out, &ints, &mut ints_out, cfg);
    raw_copy_u32.launch(gpu, cfg, (&ints, &mut ints_out, 4u32));
}

fn main() {}
