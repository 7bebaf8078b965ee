//! The GPU side of [`PerturbedJob`]: its reference orbit and BLA table uploaded once per GPU
//! and kept while later jobs share them ([`DeepUpload`]), and the launch of the escape pass
//! ([`launch_perturbed`]).

use super::PerturbedJob;
use crate::gpu::{Gpu, GpuError};
use common::{
    Band, Complex,
    bla::{self, Bla},
    perturb::DeepJob,
};
use cuda_std::launch::{Out, Safe, Slice, Value};
use cust::{error::GpuContext, launch::TypedFunction, memory::DeviceBuffer};
use std::{
    sync::{Arc, Weak},
    time::{Duration, Instant},
};

/// Parameter kinds of the deep escape pass `kernels::mandelbrot::mandelbrot_perturb`.
pub(crate) type PerturbParams = (
    Value<DeepJob>,
    Value<Band>,
    Slice<Complex<f64>>,
    Slice<Bla>,
    Out<u32>,
    Out<f32>,
);

/// The reference orbit and BLA table of [`PerturbedJob`]s on one GPU, each uploaded at the
/// first band that needs it and kept while later jobs share it (the same [`Arc`]): a zoom's
/// frames share the orbit, each frame has its own table.
#[derive(Default)]
pub(crate) struct DeepUpload {
    orbit: Option<Shared<Complex<f64>>>,
    bla: Option<Shared<Bla>>,
}

/// Host data shared by [`Arc`], and its copy on a GPU. The host side is only a [`Weak`]
/// reference, to recognise the same data again: the host copy is freed when its jobs are,
/// even while the device copy stays (a zoom's next BLA table is built while the last one is
/// still on the GPU, and the two must not both be held on the host).
type Shared<T> = (Weak<Vec<T>>, DeviceBuffer<T>);

/// `host` on the device, unless `slot` holds it already (the same [`Arc`]); the old buffer
/// is freed first. An empty `host` uploads one `placeholder` element (an empty device buffer
/// cannot be allocated; the kernel gets an empty view of it).
fn upload_shared<'s, T: cust::memory::DeviceCopy>(
    gpu: &Gpu,
    slot: &'s mut Option<Shared<T>>,
    host: &Arc<Vec<T>>,
    placeholder: T,
    what: &'static str,
) -> Result<&'s DeviceBuffer<T>, GpuError> {
    let entry = match slot.take() {
        // The `Weak` keeps its allocation, so no other `Arc` can have this address.
        Some((h, dev)) if std::ptr::eq(h.as_ptr(), Arc::as_ptr(host)) => (h, dev),
        old => {
            drop(old);
            gpu.check_free(what, std::mem::size_of_val(&host[..]))?;
            let one = [placeholder];
            let data: &[T] = if host.is_empty() { &one } else { host };
            // Outside the stream-ordered pool, as the renderer's buffers
            // (`RenderBuffers::new`): so a deep render never waits for the pool's setup.
            let dev = DeviceBuffer::from_slice_unpooled(gpu.context(), data).gpu_context(what)?;
            (Arc::downgrade(host), dev)
        }
    };
    Ok(&slot.insert(entry).1)
}

/// One [`launch_perturbed`]: its kernel, queued, and the uploads' time.
#[derive(Debug)]
pub(crate) struct PerturbedLaunch {
    /// The kernel, between CUDA events, not waited for.
    pub(crate) kernel: crate::gpu::QueuedKernel,
    /// Host time of the orbit's and the BLA table's uploads (device allocation, copy and
    /// wait); about zero when both were on the device already.
    pub(crate) htod: Duration,
}

/// Queues `kernels::mandelbrot::mandelbrot_perturb` (`perturb`, resolved once per GPU) for
/// the samples of image rows `band` of `job` into the first samples of `counts` and
/// `norms`, uploading the orbit and BLA table into `upload` unless they are there already;
/// returns without waiting for the kernel ([`crate::gpu::QueuedKernel::time`] waits and
/// gives its time), with the uploads' time.
///
/// # Errors
/// [`GpuError`] if an upload or the launch fails.
pub(crate) fn launch_perturbed(
    gpu: &Gpu,
    perturb: &TypedFunction<PerturbParams, Safe>,
    upload: &mut DeepUpload,
    job: &PerturbedJob,
    band: Band,
    counts: &mut DeviceBuffer<u32>,
    norms: &mut DeviceBuffer<f32>,
) -> Result<PerturbedLaunch, GpuError> {
    let uploading = Instant::now();
    let orbit_dev = upload_shared(
        gpu,
        &mut upload.orbit,
        &job.orbit,
        Complex::new(0.0, 0.0),
        "the reference orbit",
    )?;
    let bla_dev = upload_shared(
        gpu,
        &mut upload.bla,
        &job.bla,
        bla::single(0.0, 0.0, 0.0, 4.0),
        "the BLA table",
    )?;
    let htod = uploading.elapsed();
    let sjob = job.sample_job();
    let sband = job.sample_band(band);
    let len = sjob.width_px as usize * sband.rows as usize;
    assert!(
        counts.len() >= len && norms.len() >= len,
        "buffers too small for the band"
    );
    let orbit = orbit_dev.index(0..job.orbit_len)?;
    let table = bla_dev.index(0..job.bla.len())?;
    let cfg = crate::launch::for_image(sjob.width_px, sband.rows);
    let mut c = counts.index_mut(0..len)?;
    let mut z = norms.index_mut(0..len)?;
    let kernel = crate::gpu::queue(
        gpu,
        perturb,
        cfg,
        (sjob, sband, &orbit, &table, &mut c, &mut z),
    )?;
    Ok(PerturbedLaunch { kernel, htod })
}
