//! Hot-reload demonstration kernels: the 07-hot-reload example writes this file into a
//! kernels crate of its own and edits the `GAIN` line while it runs. Compiled into the
//! example too, which gives it the typed `scale_by_gain` handle.
use cuda_std::prelude::*;

const GAIN: f32 = 1.0;

/// `out[i] = x[i] · GAIN` for `i < x.len()`.
#[kernel]
pub fn scale_by_gain(x: &[f32], out: OutSlice<f32>) {
    let i = thread::index_1d();
    if i < x.len() {
        out.write_at_thread(x[i] * GAIN);
    }
}
