use cust::launch::Launch;
use probes::launch_checks::scale_offset_f32;

include!("support/buffers.rs");

#[allow(unused_must_use)]
fn check(module: &Module, stream: &Stream) {
    let (_, mut out, ints, _) = buffers();
    scale_offset_f32.launch(module, stream, cfg(), (&ints, &mut out, 2.0f32, 1.0f32));
}
