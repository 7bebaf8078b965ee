use cust::launch::Launch;
use probes::launch_checks::raw_copy_u32;

include!("support/buffers.rs");

#[allow(unused_must_use)]
fn check(module: &Module, stream: &Stream) {
    let (_, _, ints, mut ints_out) = buffers();
    raw_copy_u32.launch(module, stream, cfg(), (&ints, &mut ints_out, 4u32));
}
