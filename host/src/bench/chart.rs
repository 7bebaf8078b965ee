//! The bench chart, drawn with plotters as SVG: horizontal bars, one per implementation of
//! each workload, so that every peer (CUDA C twin, CUB, cuBLAS) sits beside ours; bandwidth
//! workloads in GB/s with the memcpy rate as a vertical line, SGEMM in TFLOP/s below, and the
//! GEMM rows by precision (BF16, FP16, TF32, FP32 against cuBLAS) in a third panel, the
//! attention rows (against torch's SDPA backends and FlashAttention-3) in a fourth.

use super::{Entry, Implementation, Report};
use plotters::prelude::*;

/// Row height, pixels.
const ROW_PX: u32 = 18;
/// Chart width, pixels.
const WIDTH_PX: u32 = 1100;

/// Bar colour of an implementation.
fn color(implementation: Implementation) -> RGBColor {
    match implementation {
        Implementation::Rust => RGBColor(230, 120, 30),
        Implementation::CudaC => RGBColor(60, 110, 200),
        Implementation::Cub => RGBColor(40, 160, 90),
        Implementation::Cublas => RGBColor(150, 80, 170),
        Implementation::Memcpy => RGBColor(120, 120, 120),
        Implementation::Torch => RGBColor(200, 60, 60),
        Implementation::FlashAttn3 => RGBColor(40, 170, 190),
    }
}

/// Draws `report` as an SVG document: up to three panels, each drawn only if it has rows —
/// bandwidth, SGEMM (`sgemm …` rows), the GEMM rows by precision (`gemm …`) and attention
/// (`attention …`). Returned as
/// text, so that the caller writes it as it writes any output file (atomically).
///
/// # Errors
/// A drawing error, as text.
pub fn svg(report: &Report) -> Result<String, String> {
    let bandwidth: Vec<&Entry> = report
        .entries
        .iter()
        .filter(|e| e.gb_per_s.is_some() && e.implementation != Implementation::Memcpy)
        .collect();
    let flops = |prefix: Option<&str>| -> Vec<&Entry> {
        let is = |e: &Entry, p: &str| e.workload.starts_with(p);
        report
            .entries
            .iter()
            .filter(|e| e.tflop_per_s.is_some())
            .filter(|e| match prefix {
                Some(p) => is(e, p),
                None => !is(e, "gemm ") && !is(e, "attention "),
            })
            .collect()
    };
    let (sgemm, by_precision, attention) =
        (flops(None), flops(Some("gemm ")), flops(Some("attention ")));
    let memcpy = report
        .entries
        .iter()
        .find(|e| e.implementation == Implementation::Memcpy)
        .and_then(|e| e.gb_per_s);
    let panel_px = |rows: usize| {
        if rows == 0 {
            0
        } else {
            90 + ROW_PX * rows as u32
        }
    };
    let height = (panel_px(bandwidth.len())
        + panel_px(sgemm.len())
        + panel_px(by_precision.len())
        + panel_px(attention.len()))
    .max(ROW_PX);
    let mut svg = String::new();
    // The drawing areas borrow `svg` until the end of this block.
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (top, rest) = root.split_vertically(panel_px(bandwidth.len()));
        let (middle, rest) = rest.split_vertically(panel_px(sgemm.len()));
        let (bottom, last) = rest.split_vertically(panel_px(by_precision.len()));
        if !bandwidth.is_empty() {
            let title = format!(
                "ferrocuda bench on {} ({} elements per vector)",
                report.device, report.len
            );
            panel(
                &top,
                &title,
                "GB/s (10^9 bytes/s, STREAM counting)",
                &bandwidth,
                |e| e.gb_per_s,
                memcpy,
            )?;
        }
        if !sgemm.is_empty() {
            let title = format!(
                "SGEMM {}, FP32 (cuBLAS with TF32 off), on {}",
                super::shapes(&report.gemm),
                report.device
            );
            panel(&middle, &title, "TFLOP/s", &sgemm, |e| e.tflop_per_s, None)?;
        }
        if !by_precision.is_empty() {
            let title = format!(
                "GEMM by precision, C = A·Bᵀ row-major, f32 accumulation, on {} (cuBLAS: cublasGemmEx)",
                report.device
            );
            panel(
                &bottom,
                &title,
                "TFLOP/s (2·m·n·k / median time)",
                &by_precision,
                |e| e.tflop_per_s,
                None,
            )?;
        }
        if !attention.is_empty() {
            let title = format!(
                "Attention forward, bf16, B x H x S x D (causal, kv: key/value heads), on {} \
                 (torch SDPA: cuDNN and flash backends)",
                report.device
            );
            panel(
                &last,
                &title,
                "TFLOP/s (4·B·H·S²·D / median time, halved when causal)",
                &attention,
                |e| e.tflop_per_s,
                None,
            )?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// One panel: a bar per entry, labelled `workload implementation`, value at the bar's end.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    axis: &str,
    rows: &[&Entry],
    value: impl Fn(&Entry) -> Option<f64>,
    line: Option<f64>,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let max = rows
        .iter()
        .filter_map(|e| value(e))
        .chain(line)
        .fold(0.0, f64::max)
        * 1.15;
    let n = rows.len();
    let labels: Vec<String> = rows
        .iter()
        .map(|e| format!("{} {}", e.workload, e.who()))
        .collect();
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(260)
        .build_cartesian_2d(0f64..max.max(1e-9), 0f64..n as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(axis)
        .y_labels(2 * n + 1)
        .y_label_formatter(&|y| {
            // Rows are drawn top-down: row i spans [n-1-i, n-i].
            let frac = y - y.floor();
            if (frac - 0.5).abs() > 0.01 {
                return String::new();
            }
            let i = n.saturating_sub(1 + y.floor() as usize);
            labels.get(i).cloned().unwrap_or_default()
        })
        .disable_y_mesh()
        .draw()
        .map_err(err)?;
    chart
        .draw_series(rows.iter().enumerate().filter_map(|(i, e)| {
            let v = value(e)?;
            let y = (n - 1 - i) as f64;
            Some(Rectangle::new(
                [(0.0, y + 0.12), (v, y + 0.88)],
                color(e.implementation).filled(),
            ))
        }))
        .map_err(err)?;
    chart
        .draw_series(rows.iter().enumerate().filter_map(|(i, e)| {
            let v = value(e)?;
            let y = (n - 1 - i) as f64;
            let text = match e.vs_best_peer {
                Some(r) if e.implementation == Implementation::Rust => format!(
                    "{v:.1} ({:.2}x {})",
                    r,
                    e.best_peer.map_or("", Implementation::name)
                ),
                _ => format!("{v:.1}"),
            };
            Some(Text::new(
                text,
                (v + max * 0.005, y + 0.8),
                ("sans-serif", 11).into_font(),
            ))
        }))
        .map_err(err)?;
    if let Some(m) = line {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(m, 0.0), (m, n as f64)],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?
            .label(format!("device-to-device memcpy {m:.0} GB/s"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLACK));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}
