//! The renderer of issue 5 — smooth colouring, palette cycle and offset, supersampling, bands,
//! and the optimized kernel (cardioid/bulb tests, periodicity checking) — against the CPU
//! references: bit-identical, as both run the same `common` code with correctly rounded
//! operations (explicit FMA) and `libm` logarithms.

use common::{Band, Palette, palette::Shading};
use host::{
    Gpu,
    mandelbrot::{
        Image, Precision, RenderParams, Style,
        pool::{GpuPool, GpuSelection, PoolError},
        render_band_cpu, render_cpu_styled,
    },
};
use tests::{TestView, assert_identical, deep_views, gpu, views};

fn params(v: &TestView, precision: Precision, palette: Palette) -> RenderParams {
    RenderParams {
        view: v.view,
        max_iter: v.max_iter,
        precision,
        palette,
    }
}

/// GPU (one launch) against CPU for every view, in both precisions.
fn check_style(views: &[TestView], style: &Style, palette: Palette) {
    let gpu = gpu();
    for precision in [Precision::F32, Precision::F64] {
        for v in views {
            let p = params(v, precision, palette);
            let (gpu_image, _) = host::mandelbrot::render_mandelbrot_styled(&gpu, &p, style)
                .unwrap_or_else(|e| panic!("{}: {e}", v.name));
            let cpu_image = render_cpu_styled(&p, style);
            let what = format!(
                "{} ({}, {style:?}, {})",
                v.name,
                precision.name(),
                palette.name()
            );
            assert_identical(
                &format!("{what} counts"),
                &cpu_image.counts,
                &gpu_image.counts,
            );
            assert_identical(&format!("{what} colours"), &cpu_image.rgb, &gpu_image.rgb);
        }
    }
}

#[test]
fn optimized_kernel_counts_equal_naive_kernel_counts() {
    let gpu = gpu();
    let all: Vec<TestView> = views().into_iter().chain(deep_views()).collect();
    for precision in [Precision::F32, Precision::F64] {
        for v in &all {
            let p = params(v, precision, Palette::Classic);
            let b = host::bench::mandelbrot::bench_kernels(&gpu, &p, 0, 1)
                .unwrap_or_else(|e| panic!("{}: {e}", v.name));
            let what = format!("{} ({})", v.name, precision.name());
            assert_identical(
                &format!("{what}: naive vs optimized counts"),
                &b.naive_image.counts,
                &b.optimized_image.counts,
            );
            assert_identical(
                &format!("{what}: naive vs optimized colours"),
                &b.naive_image.rgb,
                &b.optimized_image.rgb,
            );
            let cpu = host::bench::mandelbrot::render_naive_cpu(&p);
            assert_identical(
                &format!("{what}: naive GPU vs CPU"),
                &cpu.counts,
                &b.naive_image.counts,
            );
        }
    }
}

#[test]
fn smooth_coloring_identical_to_cpu() {
    let style = Style {
        shading: Shading::Smooth,
        ..Style::default()
    };
    check_style(&views(), &style, Palette::Classic);
    check_style(&deep_views(), &style, Palette::Electric);
}

#[test]
fn palette_cycle_and_offset_identical_to_cpu() {
    for palette in Palette::ALL {
        for shading in [Shading::Discrete, Shading::Smooth] {
            let style = Style {
                shading,
                cycle_iters: 23,
                offset: 0.37,
                ..Style::default()
            };
            check_style(&views()[0..2], &style, palette);
        }
    }
}

#[test]
fn supersampling_identical_to_cpu() {
    for supersample in [2, 4] {
        for shading in [Shading::Discrete, Shading::Smooth] {
            let style = Style {
                shading,
                supersample,
                ..Style::default()
            };
            check_style(&views()[0..4], &style, Palette::Viridis);
        }
    }
}

#[test]
fn tiled_render_equals_one_shot_render() {
    let gpu = gpu();
    let style = Style {
        shading: Shading::Smooth,
        supersample: 2,
        ..Style::default()
    };
    for v in views() {
        for precision in [Precision::F32, Precision::F64] {
            let p = params(&v, precision, Palette::Fire);
            let (one, _) = host::mandelbrot::render_mandelbrot_styled(&gpu, &p, &style).unwrap();
            // Bands of 7 rows (the last one partial for most heights).
            let band_px = u64::from(v.view.width_px) * 7;
            let (tiled, _) =
                host::mandelbrot::render_mandelbrot_banded(&gpu, &p, &style, Some(band_px))
                    .unwrap();
            let what = format!("{} ({})", v.name, precision.name());
            assert_identical(&format!("{what} tiled counts"), &one.counts, &tiled.counts);
            assert_identical(&format!("{what} tiled colours"), &one.rgb, &tiled.rgb);
            let cpu = render_cpu_styled(&p, &style);
            assert_identical(&format!("{what} tiled GPU vs CPU"), &cpu.rgb, &tiled.rgb);
        }
    }
}

/// Runs without a GPU: CPU bands glued together equal the one-band CPU image.
#[test]
fn cpu_bands_equal_cpu_image() {
    let style = Style {
        shading: Shading::Smooth,
        supersample: 2,
        offset: 0.25,
        ..Style::default()
    };
    for v in &views()[3..] {
        let p = params(v, Precision::F32, Palette::Ocean);
        let whole = render_cpu_styled(&p, &style);
        let job = p.job(&style);
        let mut rgb = Vec::new();
        let mut counts = Vec::new();
        for band in Band::split(v.view.height_px, 13) {
            let b = render_band_cpu(&job, p.precision, band, true);
            rgb.extend_from_slice(&b.rgb);
            counts.extend_from_slice(&b.counts);
        }
        assert_identical(&format!("{} band counts", v.name), &whole.counts, &counts);
        assert_identical(&format!("{} band colours", v.name), &whole.rgb, &rgb);
    }
}

/// Renders `p` with `style` on `pool` in bands of `rows` rows, gathering the bands in the order
/// the sink receives them (which must be image order).
fn pool_render(pool: &GpuPool, p: &RenderParams, style: &Style, rows: u32) -> Image {
    let job = p.job(style);
    let bands: Vec<Band> = Band::split(job.height_px, rows).collect();
    let mut image = Image {
        width_px: job.width_px,
        height_px: job.height_px,
        counts: Vec::new(),
        rgb: Vec::new(),
    };
    let mut order = Vec::new();
    let report = pool
        .render_bands(&job, p.precision, &bands, true, |b| {
            order.push(b.band);
            image.counts.extend_from_slice(&b.counts);
            image.rgb.extend_from_slice(&b.rgb);
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_or_else(|e| panic!("pool render: {e}"));
    assert_eq!(order, bands, "bands reached the sink out of order");
    assert_eq!(report.gpus.len(), pool.len());
    let done: usize = report.gpus.iter().map(|g| g.bands).sum();
    assert_eq!(done, bands.len(), "per-GPU band counts {:?}", report.gpus);
    image
}

/// The pool of every visible GPU against one GPU and the CPU: identical escape times and
/// colours (works with one GPU: then the pool has one worker).
#[test]
fn gpu_pool_render_equals_single_gpu_and_cpu() {
    let pool = GpuPool::from_env(GpuSelection::All).expect("opening every GPU (or the emulator)");
    let gpu = gpu();
    let style = Style {
        shading: Shading::Smooth,
        supersample: 2,
        ..Style::default()
    };
    for v in views() {
        for precision in [Precision::F32, Precision::F64] {
            let p = params(&v, precision, Palette::Electric);
            let what = format!("{} ({}, {} GPUs)", v.name, precision.name(), pool.len());
            // Bands of 3 rows: many more bands than GPUs, the last one partial for most views.
            let pooled = pool_render(&pool, &p, &style, 3);
            let (single, _) = host::mandelbrot::render_mandelbrot_styled(&gpu, &p, &style).unwrap();
            assert_identical(
                &format!("{what} pool vs one GPU counts"),
                &single.counts,
                &pooled.counts,
            );
            assert_identical(
                &format!("{what} pool vs one GPU colours"),
                &single.rgb,
                &pooled.rgb,
            );
            let cpu = render_cpu_styled(&p, &style);
            assert_identical(
                &format!("{what} pool vs CPU counts"),
                &cpu.counts,
                &pooled.counts,
            );
            assert_identical(
                &format!("{what} pool vs CPU colours"),
                &cpu.rgb,
                &pooled.rgb,
            );
        }
    }
}

/// Several workers on one machine even with one GPU: four `Gpu`s (contexts, modules and
/// buffers of their own) on device 0 take bands concurrently; the reorder buffer must still
/// deliver the bands in order, and the image must equal the CPU's.
#[test]
fn gpu_pool_with_several_workers_per_device_equals_cpu() {
    let gpus: Vec<Gpu> = (0..4).map(|_| gpu()).collect();
    let pool = GpuPool::from_gpus(gpus);
    assert_eq!(pool.len(), 4);
    for v in &views()[0..4] {
        let p = params(v, Precision::F32, Palette::Classic);
        let style = Style::default();
        let pooled = pool_render(&pool, &p, &style, 1);
        let cpu = render_cpu_styled(&p, &style);
        assert_identical(
            &format!("{} 4-worker pool counts", v.name),
            &cpu.counts,
            &pooled.counts,
        );
        assert_identical(
            &format!("{} 4-worker pool colours", v.name),
            &cpu.rgb,
            &pooled.rgb,
        );
    }
}

/// The pool lends its GPUs: with one of three on loan to someone else for the whole render,
/// the render runs on the other two and leaves the lent one alone; the image still equals the
/// CPU's.
#[test]
fn gpu_pool_renders_around_a_gpu_on_loan() {
    let gpus: Vec<Gpu> = (0..3).map(|_| gpu()).collect();
    let pool = GpuPool::from_gpus(gpus);
    let held = pool.acquire();
    assert_eq!(held.index(), 0, "the lowest-numbered GPU is lent first");
    let v = &views()[2];
    let p = params(v, Precision::F64, Palette::Classic);
    let style = Style::default();
    let job = p.job(&style);
    let bands: Vec<Band> = Band::split(job.height_px, 16).collect();
    let mut rgb = Vec::new();
    let report = pool
        .render_bands(&job, p.precision, &bands, false, |b| {
            rgb.extend_from_slice(&b.rgb);
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_or_else(|e| panic!("pool render: {e}"));
    assert_eq!(
        report.gpus[0].bands, 0,
        "the GPU on loan rendered: {:?}",
        report.gpus
    );
    assert_eq!(
        report.gpus[1].bands + report.gpus[2].bands,
        bands.len(),
        "{:?}",
        report.gpus
    );
    drop(held);
    assert_identical(
        &format!("{} with a GPU on loan", v.name),
        &render_cpu_styled(&p, &style).rgb,
        &rgb,
    );
}

/// A sink error stops the pool: no band after the failing one reaches the sink, and the error
/// comes back as `PoolError::Sink`.
#[test]
fn gpu_pool_stops_on_a_sink_error() {
    let gpus: Vec<Gpu> = (0..2).map(|_| gpu()).collect();
    let pool = GpuPool::from_gpus(gpus);
    let v = &views()[1];
    let p = params(v, Precision::F32, Palette::Classic);
    let job = p.job(&Style::default());
    let bands: Vec<Band> = Band::split(job.height_px, 8).collect();
    let mut seen = Vec::new();
    let result = pool.render_bands(&job, p.precision, &bands, false, |b| {
        seen.push(b.band.first_row);
        if seen.len() == 3 {
            Err("stop here")
        } else {
            Ok(())
        }
    });
    assert!(
        matches!(result, Err(PoolError::Sink("stop here"))),
        "{result:?}"
    );
    assert_eq!(seen, [0, 8, 16]);
}

/// Deep zoom by perturbation on the GPU equals the CPU bit for bit (the same
/// `DeepJob::escape`): a spiral view at 1e-300 around c = i and a minibrot of size about
/// 1e-300 found near it (`FloatExp` differences, rebasing), without and with the BLA table;
/// escape times and `|z_n|²`.
#[test]
fn deep_zoom_perturbation_on_the_gpu_equals_the_cpu() {
    use common::floatexp::FloatExp;
    use host::deep::{BLA_EPS, bla_table, find_minibrot, near_i, reference_orbit, render_job_cpu};
    use host::mandelbrot::deep::render_gpu;
    let gpu = gpu();
    let spiral = near_i(300, 96, 64).unwrap();
    let m = find_minibrot(
        &spiral.center_re,
        &spiral.center_im,
        FloatExp::new(0.5, -498),
        spiral.precision_bits + 64,
        10_000,
    )
    .expect("a minibrot near i");
    let mini = m.view(96, 64).unwrap();
    // Beyond f64's range (pixel spacing about 2^-1333), odd-sized so that a row and a column
    // have a zero part of δc: FloatExp differences, handed between f64 and FloatExp steps.
    let near = near_i(200, 97, 65).unwrap();
    let deep = find_minibrot(
        &near.center_re,
        &near.center_im,
        FloatExp::new(0.5, -664),
        2 * near.precision_bits + 64,
        100_000,
    )
    .expect("a minibrot near i at 1e-400");
    let deep_view = deep.view(97, 65).unwrap();
    for (name, v, max_iter) in [
        ("spiral 1e-300", &spiral, 3000),
        ("minibrot", &mini, 50 * m.period),
        ("minibrot near 1e-400", &deep_view, 20 * deep.period),
    ] {
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let job = v.job(max_iter, 4.0);
        for bla in [Vec::new(), bla_table(&orbit, &job, BLA_EPS)] {
            let what = format!("{name} ({} BLA entries)", bla.len());
            let cpu = render_job_cpu(&job, &orbit, &bla);
            let (counts, norms) = render_gpu(&gpu, &job, &orbit, &bla, 16).unwrap();
            let cpu_counts: Vec<u32> = cpu.iter().map(|p| p.n).collect();
            let cpu_norms: Vec<f32> = cpu.iter().map(|p| p.norm_sqr as f32).collect();
            assert_identical(&format!("{what} escape times"), &cpu_counts, &counts);
            assert_identical(&format!("{what} |z|²"), &cpu_norms, &norms);
            assert!(
                cpu_counts.iter().any(|&n| n < max_iter),
                "{what}: nothing escaped"
            );
        }
    }
}

/// Deep zoom through the band interface (`BandJob::Perturbed`): the GPU pool and one
/// `GpuRenderer`, in bands of 5 rows, against the CPU bands: identical escape times, `|z_n|²`
/// (bit for bit, per sample) and colours (coloured on the device by the colour pass of float
/// bands, on the CPU by `PerturbedJob::finish_band`), with one sample per pixel and with 2×2
/// and 4×4 supersampling, discrete (table lookups, a cycle and an offset) and smooth
/// colouring; the reference orbit and BLA table are uploaded once per GPU and shared across
/// bands and across jobs (a zoom's frames).
#[test]
fn deep_bands_on_the_gpu_pool_equal_the_cpu_bands() {
    use common::palette::Coloring;
    use host::{
        deep::{PerturbedJob, near_i, reference_orbit},
        mandelbrot::{BandJob, GpuRenderer, RenderControl},
    };
    use std::sync::atomic::AtomicBool;
    let pool = GpuPool::from_env(GpuSelection::All).expect("opening every GPU (or the emulator)");
    let gpu = gpu();
    let v = near_i(300, 61, 37).unwrap();
    let max_iter = 4000;
    let orbit: host::deep::SharedOrbit =
        reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter).into();
    let discrete = Coloring::discrete(Palette::Fire);
    let smooth = Coloring {
        shading: Shading::Smooth,
        ..Coloring::discrete(Palette::Electric)
    };
    // A cycle and an offset, looked up in the colour table per sample.
    let cycled = Coloring {
        cycle_iters: 37,
        offset: 0.25,
        ..Coloring::discrete(Palette::Classic)
    };
    let mut renderer = GpuRenderer::new(&gpu, 61 * 5 * 16).unwrap();
    for (s, coloring, iters) in [
        (1, discrete, max_iter),
        (2, smooth, max_iter),
        (1, discrete, 3000),
        (2, discrete, 3000),
        (4, cycled, 3000),
        (4, smooth, 3000),
    ] {
        let job = PerturbedJob::prepare(
            v.job(iters, coloring.bailout_sqr::<f64>()),
            s,
            coloring,
            orbit.clone(),
            &AtomicBool::new(false),
        )
        .unwrap();
        let work = BandJob::Perturbed(&job);
        let bands: Vec<Band> = Band::split(37, 5).collect();
        let what = format!("1e-300, {s}x{s} samples, max_iter {iters}");
        let (mut cc, mut cz, mut crgb) = (Vec::new(), Vec::new(), Vec::new());
        let (mut gc, mut gz, mut grgb) = (Vec::new(), Vec::new(), Vec::new());
        let (mut pc, mut pz, mut prgb) = (Vec::new(), Vec::new(), Vec::new());
        for &band in &bands {
            let c = work
                .render_cpu_until(band, true, &RenderControl::new())
                .unwrap();
            cc.extend(c.counts);
            cz.extend(c.norms.iter().map(|z| z.to_bits()));
            crgb.extend(c.rgb);
            let g = renderer.render(work, band, true).unwrap();
            gc.extend(g.counts);
            gz.extend(g.norms.iter().map(|z| z.to_bits()));
            grgb.extend(g.rgb);
        }
        pool.render(work, &bands, true, |b| {
            pc.extend(b.counts);
            pz.extend(b.norms.iter().map(|z| z.to_bits()));
            prgb.extend(b.rgb);
            Ok::<(), std::convert::Infallible>(())
        })
        .unwrap_or_else(|e| panic!("pool render: {e}"));
        assert!(cc.iter().any(|&n| n < iters), "{what}: nothing escaped");
        assert_identical(&format!("{what} GPU counts"), &cc, &gc);
        assert_identical(&format!("{what} GPU |z|²"), &cz, &gz);
        assert_identical(&format!("{what} GPU colours"), &crgb, &grgb);
        assert_identical(&format!("{what} pool counts"), &cc, &pc);
        assert_identical(&format!("{what} pool |z|²"), &cz, &pz);
        assert_identical(&format!("{what} pool colours"), &crgb, &prgb);
    }
}
