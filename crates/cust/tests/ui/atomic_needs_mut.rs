use cust::launch::Launch;
use probes::safe_api::safe_histogram;

include!("support/buffers.rs");

// An `AtomicSlice<u32>` takes a mutable buffer, as an `OutSlice` does: the launch holds the
// buffer's only borrow, so no other argument aliases the atomics' target.
#[allow(unused_must_use)]
fn check(module: &Module, stream: &Stream) {
    let (_, _, ints, bins) = buffers();
    safe_histogram.launch(module, stream, cfg(), (&ints, &bins));
}
