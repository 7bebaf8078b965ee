// Shared by the compile-fail cases in this folder (`include!`d at the top of each): the
// imports, buffers and launch configuration around each case's one launch. Each case imports
// the launch trait and the kernel it calls itself, so the error it snapshots stays its own.
// Lives in a subfolder so that trybuild's `tests/ui/*.rs` does not compile it as a case.

use cust::function::LaunchConfig;
use cust::memory::DeviceBuffer;
use cust::module::Module;
use cust::stream::Stream;

/// Four zeroed elements of each buffer kind a case passes: `(x, out, ints, ints_out)`, an
/// `f32` input and output and a `u32` input and output.
fn buffers() -> (
    DeviceBuffer<f32>,
    DeviceBuffer<f32>,
    DeviceBuffer<u32>,
    DeviceBuffer<u32>,
) {
    (
        DeviceBuffer::zeroed(4).unwrap(),
        DeviceBuffer::zeroed(4).unwrap(),
        DeviceBuffer::zeroed(4).unwrap(),
        DeviceBuffer::zeroed(4).unwrap(),
    )
}

/// One block of 32 threads, no dynamic shared memory.
fn cfg() -> LaunchConfig {
    LaunchConfig::new(1, 32, 0)
}

fn main() {}
