//! Tests of the GPU pool on emulated GPUs: band order, bytes against the CPU, prepared
//! buffers and setup failures.

use super::*;
use crate::{
    band::{BandKernel, RenderControl},
    deep::{PerturbedJob, SharedOrbit, near_i, reference_orbit},
    mandelbrot::{CopyBack, GpuRenderer, RenderParams, Style, render_band_cpu},
};
use common::{
    Complex, Palette, Viewport,
    palette::{Coloring, Shading},
};
use std::sync::atomic::AtomicBool;

/// Renders `work` on a pool of one emulated GPU in `bands` and returns the bands in the
/// order the sink got them.
fn pool_bands<K: GpuBandKernel>(work: K, bands: &[Band], want_counts: bool) -> Vec<BandImage> {
    let pool = GpuPool::from_gpus(vec![Gpu::emulator(&crate::KERNELS).unwrap()]);
    let mut got = Vec::new();
    let report = pool
        .render(work, bands, want_counts, |b| {
            got.push(b);
            Ok::<_, ()>(())
        })
        .unwrap();
    assert_eq!(report.gpus[0].bands, bands.len());
    got
}

/// A small deep job: 23 rows near `i` at scale 10⁻³⁰, 300 iterations, supersampled 2×2,
/// smooth colouring in `palette`.
fn small_deep_job(palette: Palette) -> PerturbedJob {
    let v = near_i(30, 10, 23).unwrap();
    let coloring = Coloring::smooth(palette);
    let orbit: SharedOrbit =
        reference_orbit(&v.center_re, &v.center_im, v.precision_bits, 300).into();
    PerturbedJob::prepare(
        v.job(300, coloring.bailout_sqr::<f64>()),
        2,
        coloring,
        orbit,
        &AtomicBool::new(false),
    )
    .unwrap()
}

/// A pool render queues each band before the previous one is finished (two staging
/// buffers in turn): the sink still gets every band in image order, byte for byte the
/// CPU's, for a perturbed job (supersampled, smooth) and an f64 job, with bands of
/// unequal heights and with and without escape times; and the same image as one band,
/// whose colours come back directly ([`CopyBack::Direct`]), is the CPU's too.
#[test]
fn pipelined_bands_arrive_in_order_and_equal_the_cpu() {
    let bands = Band::split(23, 3).collect::<Vec<_>>();
    assert!(bands.len() > 4 && bands.last().unwrap().rows < 3);
    let whole = [Band {
        first_row: 0,
        rows: 23,
    }];

    let deep = small_deep_job(Palette::Fire);
    assert_eq!(
        GpuPool::buffer_size(&deep, &bands).copy_back,
        CopyBack::Staged
    );
    assert_eq!(
        GpuPool::buffer_size(&deep, &whole).copy_back,
        CopyBack::Direct
    );
    for (bands, want_counts) in [(&bands[..], false), (&bands, true), (&whole, false)] {
        let got = pool_bands(&deep, bands, want_counts);
        assert_eq!(got.len(), bands.len());
        for (b, &band) in got.iter().zip(bands) {
            assert_eq!(b.band, band, "bands out of order");
            let cpu = deep
                .render_cpu_until(band, want_counts, &RenderControl::new())
                .unwrap();
            assert_eq!(b.rgb, cpu.rgb, "deep band {band:?}");
            assert_eq!(b.counts, cpu.counts, "deep band {band:?}");
            assert_eq!(b.norms, cpu.norms, "deep band {band:?}");
        }
    }

    let params = RenderParams {
        view: Viewport::from_center_scale(16, 23, Complex::new(-0.75, 0.1), 3.0).unwrap(),
        max_iter: 200,
        precision: Precision::F64,
        palette: Palette::Electric,
    };
    for shading in [Shading::Discrete, Shading::Smooth] {
        let style = Style {
            shading,
            ..Style::default()
        };
        let job = params.job(&style);
        let work = FloatJob {
            job: &job,
            precision: Precision::F64,
        };
        assert_eq!(
            GpuPool::buffer_size(&work, &bands).copy_back,
            CopyBack::Staged
        );
        assert_eq!(
            GpuPool::buffer_size(&work, &whole).copy_back,
            CopyBack::Direct
        );
        let mut got = pool_bands(work, &bands, true);
        got.extend(pool_bands(work, &whole, true));
        for (b, &band) in got.iter().zip(bands.iter().chain(&whole)) {
            assert_eq!(b.band, band, "bands out of order");
            let cpu = render_band_cpu(&job, Precision::F64, band, true);
            assert_eq!(b.rgb, cpu.rgb, "{shading:?} band {band:?}");
            assert_eq!(b.counts, cpu.counts, "{shading:?} band {band:?}");
        }
    }
}

/// Renders `work` in `bands` on a pool of one emulated GPU with buffers prepared for
/// `size` (`None`: sized for this render); returns the bands and the report.
fn prepared_bands<K: GpuBandKernel>(
    work: K,
    bands: &[Band],
    size: Option<BufferSize>,
) -> (Vec<BandImage>, PoolReport) {
    let pool = GpuPool::from_gpus(vec![Gpu::emulator(&crate::KERNELS).unwrap()]);
    let size = size.unwrap_or_else(|| GpuPool::buffer_size(&work, bands));
    let ((), prepared) = pool.prepare_beside(size, || ());
    assert!(prepared.outcomes().all(|(made, _)| made.is_ok()));
    let mut got = Vec::new();
    let report = pool
        .render_prepared(work, bands, true, prepared, |b| {
            got.push(b);
            Ok::<_, ()>(())
        })
        .unwrap();
    assert!(report.wall >= report.waited);
    (got, report)
}

/// A render with buffers prepared beside the host work equals one without, byte for
/// byte, deep (supersampled) and f64, and reports the preparation in the GPU's share;
/// buffers prepared for another size are not used (the GPU makes its own) and the image
/// is the same.
#[test]
fn prepared_renders_equal_unprepared_ones_and_other_sizes_are_not_used() {
    let bands = Band::split(23, 5).collect::<Vec<_>>();
    let deep = small_deep_job(Palette::Electric);
    let job = crate::mandelbrot::gpu::tests::small_f64_job();
    let float = FloatJob {
        job: &job,
        precision: Precision::F64,
    };
    let float_bands = Band::split(job.height_px, 2).collect::<Vec<_>>();
    let same = |a: &[BandImage], b: &[BandImage], what: &str| {
        assert_eq!(a.len(), b.len(), "{what}");
        for (a, b) in a.iter().zip(b) {
            assert_eq!(a.band, b.band, "{what}");
            assert_eq!(a.rgb, b.rgb, "{what} band {:?}", a.band);
            assert_eq!(a.counts, b.counts, "{what} band {:?}", a.band);
            assert_eq!(a.norms, b.norms, "{what} band {:?}", a.band);
        }
    };

    let unprepared = pool_bands(&deep, &bands, true);
    let (got, report) = prepared_bands(&deep, &bands, None);
    same(&got, &unprepared, "deep");
    assert!(report.gpus[0].prepared.is_some(), "{report:?}");
    let other = BufferSize {
        band_px: GpuPool::buffer_size(&deep, &bands).band_px + 1,
        ..GpuPool::buffer_size(&deep, &bands)
    };
    let (got, report) = prepared_bands(&deep, &bands, Some(other));
    same(&got, &unprepared, "deep, another size prepared");
    assert_eq!(report.gpus[0].prepared, None, "{report:?}");

    let unprepared = pool_bands(float, &float_bands, true);
    let (got, report) = prepared_bands(float, &float_bands, None);
    same(&got, &unprepared, "f64");
    assert!(report.gpus[0].prepared.is_some(), "{report:?}");
    // Sized for the deep job's samples: not this job's buffers.
    let deep_size = GpuPool::buffer_size(&deep, &float_bands);
    let (got, report) = prepared_bands(float, &float_bands, Some(deep_size));
    same(&got, &unprepared, "f64, another size prepared");
    assert_eq!(report.gpus[0].prepared, None, "{report:?}");
}

/// Buffers that do not fit fail their preparation with the bounded-memory error, kept
/// for that GPU; a render of that size reports it as the GPU's setup failure.
#[test]
fn a_failed_preparation_is_the_gpus_setup_failure() {
    let pool = GpuPool::from_gpus(vec![Gpu::emulator(&crate::KERNELS).unwrap()]);
    let impossible = BufferSize {
        band_px: 1 << 50,
        samples_per_px: 1,
        copy_back: CopyBack::Staged,
    };
    let mut prepared = pool.prepare(impossible);
    let outcomes: Vec<_> = prepared.outcomes().collect();
    assert!(
        matches!(outcomes[..], [(Err(GpuError::OutOfMemory { .. }), _)]),
        "{outcomes:?}"
    );
    // The emulator cannot be made to fail a render's own size, so the failed
    // preparation stands for one: relabelled with the render's size, it is used.
    let job = crate::mandelbrot::gpu::tests::small_f64_job();
    let work = FloatJob {
        job: &job,
        precision: Precision::F64,
    };
    let bands = Band::split(job.height_px, 2).collect::<Vec<_>>();
    prepared.size = GpuPool::buffer_size(&work, &bands);
    let result = pool.render_prepared(work, &bands, false, prepared, |_| Ok::<_, &str>(()));
    let Err(error) = result else {
        panic!("a failed preparation was not reported");
    };
    assert!(
        matches!(
            &error,
            PoolError::Gpu { ordinal: 0, step: GpuStep::Setup, source }
                if matches!(**source, GpuError::OutOfMemory { .. })
        ),
        "{error:?}"
    );
    assert!(
        error.to_string().starts_with("GPU 0, setting up: "),
        "{error}"
    );
}

/// A renderer holds at most two queued bands, one per staging buffer: finishing them
/// in turn gives each band its own colours, and queuing a third first is refused.
#[test]
fn a_renderer_queues_two_bands_refuses_a_third_and_reuses_the_one_finished() {
    let gpu = Gpu::emulator(&crate::KERNELS).unwrap();
    let job = crate::mandelbrot::gpu::tests::small_f64_job();
    let work = FloatJob {
        job: &job,
        precision: Precision::F64,
    };
    let mut renderer = GpuRenderer::new(&gpu, 8 * 3).unwrap();
    let bands = crate::mandelbrot::gpu::tests::TWO_BANDS;
    let first = renderer.queue(work, bands[0], false).unwrap();
    let second = renderer.queue(work, bands[1], false).unwrap();
    let third = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        renderer.queue(work, bands[0], false)
    }));
    assert!(third.is_err(), "a third queued band was accepted");
    // Finished out of order, the freed buffer takes the next band.
    let cpu = |band| render_band_cpu(&job, Precision::F64, band, false).rgb;
    let b = renderer.finish(second).unwrap();
    assert_eq!((b.band, b.rgb), (bands[1], cpu(bands[1])));
    let again = renderer.queue(work, bands[1], false).unwrap();
    for (queued, band) in [(first, bands[0]), (again, bands[1])] {
        let b = renderer.finish(queued).unwrap();
        assert_eq!((b.band, b.rgb), (band, cpu(band)));
    }
}
