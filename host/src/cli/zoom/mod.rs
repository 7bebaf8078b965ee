//! `ferrocuda zoom`: a zoom into the Mandelbrot set, as numbered PNG frames in a folder and/or
//! an animated GIF. Frame `k` of `N` has the scale `start · (end/start)^(k/(N-1))` (a constant
//! zoom factor per frame) and `max_iter + growth · log10(start/scale)` iterations. The device
//! buffers are allocated once and reused for every frame.

mod frames;
mod output;
mod plan;

use super::decimal::DecimalPoint;
use super::{
    device::open_gpu,
    mandelbrot::{CenterParts, RenderArgs, peak_rss_bytes},
    outln,
};
use anyhow::Result;
use frames::FrameRenderer;
use output::{CreatedDir, Frames, remove_stale_frames};
use plan::Plan;
use std::{path::PathBuf, time::Instant};

/// Largest frame side in pixels.
const MAX_FRAME_SIDE_PX: u32 = 8192;
/// Most frames.
const MAX_FRAMES: u32 = 100_000;
/// Largest `--max-iter-growth`: extra iterations per tenfold zoom.
const MAX_ITER_GROWTH: u32 = 1_000_000;

fn parse_frames(s: &str) -> Result<u32, String> {
    super::parse_flag_u32_in(s, "--frames", "the number of frames", 1, MAX_FRAMES)
}

fn parse_start_scale(s: &str) -> Result<f64, String> {
    super::decimal::parse_scale_f64(s, "--start-scale")
}

fn parse_end_scale(s: &str) -> Result<String, String> {
    host::deep::Decimal::parse_positive(s, "--end-scale").map(|d| d.text())
}

fn parse_growth(s: &str) -> Result<u32, String> {
    super::parse_u32_in(
        s,
        "the extra iterations per tenfold zoom",
        0,
        MAX_ITER_GROWTH,
    )
}

#[derive(clap::Args)]
#[command(
    mut_arg("center_re", |a| a.help(
        "The point zoomed into, real part as a decimal of any length (with --center-im; \
         instead of --center, for deep zooms; a part smaller than 1e-30103 in size is 0)"
    )),
    mut_arg("center_im", |a| a.help(
        "The point zoomed into, imaginary part as a decimal of any length (with --center-re)"
    )),
    mut_arg("precision", |a| a.help(
        "Arithmetic precision (auto: per frame, from its pixel spacing)"
    ))
)]
pub struct ZoomArgs {
    /// Frame width in pixels (1 to 8192).
    #[arg(long, default_value_t = 640, allow_negative_numbers = true, value_parser = super::parse_frame_side)]
    pub width: u32,
    /// Frame height in pixels (1 to 8192).
    #[arg(long, default_value_t = 480, allow_negative_numbers = true, value_parser = super::parse_frame_side)]
    pub height: u32,
    /// The point zoomed into, RE,IM: two decimals (as `mandelbrot --center`), every digit
    /// kept for deep frames (a part smaller than 1e-30103 in size is 0).
    #[arg(long, value_name = "RE,IM", allow_hyphen_values = true, value_parser = DecimalPoint::parse,
          default_value = "-0.743643887037151,0.13182590420533")]
    pub center: DecimalPoint,
    /// Width of the first frame's view along the real axis (a positive decimal within f64's
    /// range).
    #[arg(long, default_value_t = 3.5, allow_hyphen_values = true, value_parser = parse_start_scale)]
    pub start_scale: f64,
    /// Width of the last frame's view along the real axis: any positive decimal, e.g. 1e-300;
    /// frames deeper than f64 resolves are rendered by perturbation (as `mandelbrot` does).
    #[arg(long, default_value = "1e-5", allow_hyphen_values = true, value_parser = parse_end_scale)]
    pub end_scale: String,
    #[command(flatten)]
    pub center_parts: CenterParts,
    /// Number of frames (1 to 100,000).
    #[arg(long, default_value_t = 60, allow_negative_numbers = true, value_parser = parse_frames)]
    pub frames: u32,
    /// Frames per second of the GIF (1 to 50: GIF delays are whole hundredths of a second,
    /// and browsers slow down delays below 2 hundredths).
    #[arg(long, default_value_t = 15, allow_negative_numbers = true, value_parser = super::parse_fps)]
    pub fps: u32,
    /// Iteration limit of the first frame (1 to 10,000,000). Frames past f64 share one
    /// reference orbit and hold one BLA table at a time, up to 192 bytes per iteration of the
    /// deepest frame's limit (1.8 GiB at 10,000,000).
    #[arg(long, default_value_t = 300, allow_negative_numbers = true, value_parser = super::parse_max_iter)]
    pub max_iter: u32,
    /// Extra iterations per tenfold zoom, 0 to 1,000,000 (deeper frames need more); a frame's
    /// limit is capped at --max-iter's largest value, 10,000,000 (with a note).
    #[arg(long, value_name = "ITERS", default_value_t = 250, allow_negative_numbers = true, value_parser = parse_growth)]
    pub max_iter_growth: u32,
    #[command(flatten)]
    pub render: RenderArgs,
    /// Folder for the PNG frames (frame_00000.png, ...); created if missing. Frames of an
    /// earlier, longer zoom beyond this one's last frame are removed.
    #[arg(
        short = 'o',
        long = "output",
        visible_alias = "output-dir",
        value_name = "DIR"
    )]
    pub output_dir: Option<PathBuf>,
    /// Animated GIF file to write (as mandelbrot's -o: a regular file replaced atomically,
    /// or a character device or FIFO written through).
    #[arg(long, value_name = "FILE")]
    pub gif: Option<PathBuf>,
}

/// Runs `ferrocuda zoom`: checks every frame before anything is written, renders the frames
/// one at a time and writes each as it is done, then reports the times.
pub fn run(args: &ZoomArgs) -> Result<()> {
    let plan = Plan::new(args)?;
    output::check_paths(args.output_dir.as_deref(), args.gif.as_deref())?;
    // The frame folder first, so that a GIF inside it (`-o fr --gif fr/a.gif`) has its folder.
    // Declared before the GIF, so dropped after it (and its temporary file).
    let _created_dir = CreatedDir::create(args.output_dir.as_deref())?;
    let mut frames = Frames::open(
        args.output_dir.as_deref(),
        args.gif.as_deref(),
        args.width,
        args.height,
        args.fps,
    )?;
    let gpu = open_gpu(args.render.backend)?;
    let mut renderer = FrameRenderer::new(args, &plan, gpu.as_ref())?;
    super::catch_signals();
    let progress = super::Progress::new(u64::from(args.frames), "frames");
    let start = Instant::now();
    for k in 0..args.frames {
        super::check_interrupt_with(|| frames.written())?;
        let rgb = renderer.render(k, &|| frames.written())?;
        // Encoded by the writer's thread while this one waits, stopped by a signal at once.
        frames.write(k, rgb)?;
        progress.inc(1);
    }
    drop(progress);
    frames.finish()?;
    let device = gpu.as_ref().map_or_else(
        || format!("CPU ({} threads)", rayon::current_num_threads()),
        |g| format!("GPU {}", g.name()),
    );
    report(args, &device, &renderer, start)
}

/// Prints the zoom's times and peak memory, removes the frames of an earlier, longer zoom,
/// and says what was written.
fn report(args: &ZoomArgs, device: &str, renderer: &FrameRenderer, start: Instant) -> Result<()> {
    let peak = peak_rss_bytes().map_or_else(String::new, |b| {
        format!(", peak memory {:.0} MiB", b as f64 / f64::from(1 << 20))
    });
    let deep_note = match renderer.deep {
        (0, _) => String::new(),
        (n, t) => format!(
            ", {n} frames past f64 {:.0} ms (reference orbits, BLA tables, pixels)",
            t.as_secs_f64() * 1e3
        ),
    };
    outln!(
        "{device}: {} frames of {}x{}, scale {:e} to {}: render {:.0} ms{deep_note}, end to end \
         {:.0} ms{peak}",
        args.frames,
        args.width,
        args.height,
        args.start_scale,
        args.end_scale,
        renderer.kernel.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );
    if let Some(dir) = &args.output_dir {
        let stale = remove_stale_frames(dir, args.frames)?;
        let note = if stale > 0 {
            format!(" (removed {stale} frames of an earlier, longer zoom)")
        } else {
            String::new()
        };
        outln!("wrote {} frames to {}{note}", args.frames, dir.display());
    }
    if let Some(path) = &args.gif {
        outln!("wrote {}", path.display());
    }
    Ok(())
}
