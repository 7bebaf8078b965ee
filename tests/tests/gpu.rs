//! GPU results against the CPU references: bit-identical, since both run the same `common`
//! code with IEEE-754 basic operations and no FMA contraction.

use common::Palette;
use host::mandelbrot::{Precision, RenderParams, render_cpu};
use tests::{TestView, assert_identical, deep_views, gpu, views};

fn check(views: &[TestView], precision: Precision, palette: Palette) {
    let gpu = gpu();
    for v in views {
        let params = RenderParams {
            view: v.view,
            max_iter: v.max_iter,
            precision,
            palette,
        };
        let (gpu_image, _) = host::mandelbrot::render_mandelbrot(&gpu, &params)
            .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        let cpu_image = render_cpu(&params);
        let what = format!("{} ({}, {})", v.name, precision.name(), palette.name());
        assert_identical(
            &format!("{what} escape times"),
            &cpu_image.counts,
            &gpu_image.counts,
        );
        assert_identical(&format!("{what} colours"), &cpu_image.rgb, &gpu_image.rgb);
        // Guard against a trivially uniform image (e.g. everything inside or everything out).
        let distinct: std::collections::BTreeSet<_> = cpu_image.counts.iter().collect();
        assert!(
            distinct.len() > 1 || v.view.len() == 1,
            "{what}: view renders one colour; not a useful test"
        );
    }
}

#[test]
fn mandelbrot_f32_identical_to_cpu() {
    check(&views(), Precision::F32, Palette::Classic);
}

#[test]
fn mandelbrot_f64_identical_to_cpu() {
    check(&views(), Precision::F64, Palette::Classic);
}

#[test]
fn mandelbrot_f64_deep_zoom_identical_to_cpu() {
    check(&deep_views(), Precision::F64, Palette::Fire);
}

#[test]
fn every_palette_identical_to_cpu() {
    let v = &views()[0..2];
    for palette in Palette::ALL {
        check(v, Precision::F32, palette);
    }
}

#[test]
fn vector_add_identical_to_cpu() {
    let gpu = gpu();
    for n in [1usize, 31, 1024, 1025, (1 << 20) + 7] {
        // Values whose sums round: a[i] = i / 3 (inexact), b[i] = 1e-3 · (i mod 97).
        let a: Vec<f32> = (0..n).map(|i| i as f32 / 3.0).collect();
        let b: Vec<f32> = (0..n).map(|i| 1e-3 * (i % 97) as f32).collect();
        let run = host::bench::vector_add::vector_add(&gpu, &a, &b, 1)
            .unwrap_or_else(|e| panic!("n = {n}: {e}"));
        let expected = host::vector::add_cpu(&a, &b);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_identical(
            &format!("vector add n = {n}"),
            &bits(&expected),
            &bits(&run.c),
        );
    }
}
