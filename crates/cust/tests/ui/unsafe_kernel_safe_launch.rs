use cust::function::LaunchConfig;
use cust::launch::Launch;
use cust::memory::DeviceBuffer;
use cust::module::Module;
use cust::stream::Stream;
use probes::launch_checks::raw_copy_u32;

#[allow(unused_must_use)]
fn check(module: &Module, stream: &Stream) {
    let cfg = LaunchConfig::new(1, 32, 0);
    let x = DeviceBuffer::<f32>::zeroed(4).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(4).unwrap();
    let ints = DeviceBuffer::<u32>::zeroed(4).unwrap();
    let mut ints_out = DeviceBuffer::<u32>::zeroed(4).unwrap();
    let _ = (&x, &mut out, &ints, &mut ints_out, cfg);
    raw_copy_u32.launch(module, stream, cfg, (&ints, &mut ints_out, 4u32));
}

fn main() {}
