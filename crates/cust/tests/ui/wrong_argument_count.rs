use cust::launch::Launch;
use probes::launch_checks::scale_offset_f32;

include!("support/buffers.rs");

#[allow(unused_must_use)]
fn check(module: &Module, stream: &Stream) {
    let (x, mut out, _, _) = buffers();
    scale_offset_f32.launch(module, stream, cfg(), (&x, &mut out, 2.0f32));
}
