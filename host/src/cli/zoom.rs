//! `ferrocuda zoom`: a zoom into the Mandelbrot set, as numbered PNG frames in a folder and/or
//! an animated GIF. Frame `k` of `N` has the scale `start · (end/start)^(k/(N-1))` (a constant
//! zoom factor per frame) and `max_iter + growth · log10(start/scale)` iterations. The device
//! buffers are allocated once and reused for every frame.

use super::decimal::DecimalPoint;
use super::{
    OutputFile, check_interrupt_with,
    device::{Backend, open_gpu},
    mandelbrot::{
        CenterParts, DEFAULT_BAND_PX, LookArgs, PrecisionArg, band_renderer, check_size_and_iter,
        choose_precision, peak_rss_bytes, view_error,
    },
    outln,
};
use anyhow::{Context, Result, bail};
use common::{Band, Complex, Viewport};
use host::deep::{DeepView, SharedOrbit};
use host::mandelbrot::{
    BandJob, RenderParams,
    precision::{self, Arithmetic},
    rows_per_band, rows_per_launch,
};
use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Instant,
};

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
    /// Arithmetic precision (auto: per frame, from its pixel spacing).
    #[arg(long, value_enum, default_value_t = PrecisionArg::Auto)]
    pub precision: PrecisionArg,
    #[command(flatten)]
    pub look: LookArgs,
    /// Where to compute.
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
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

/// `log10` of frame `k`'s scale, geometric from `start` to `10^end_log10` (which may be far
/// below f64's range).
fn frame_log10(start: f64, end_log10: f64, k: u32, frames: u32) -> f64 {
    if frames <= 1 {
        return start.log10();
    }
    let t = f64::from(k) / f64::from(frames - 1);
    start.log10() + t * (end_log10 - start.log10())
}

/// Whether a frame of scale `10^log10` around `center` needs perturbation, by the one
/// precision rule `mandelbrot` uses (`host::mandelbrot::precision`, on the sample grid);
/// never when --precision forces f32 or f64.
fn is_deep(args: &ZoomArgs, log10: f64, center: Complex<f64>) -> bool {
    args.precision == PrecisionArg::Auto
        && precision::for_center_scale(
            center,
            log10,
            args.width,
            args.height,
            args.look.supersample,
        )
        .arithmetic
            == Arithmetic::Perturbed
}

pub fn run(args: &ZoomArgs) -> Result<()> {
    check_size_and_iter(args.width, args.height, args.max_iter)?;
    if args.width > MAX_FRAME_SIDE_PX || args.height > MAX_FRAME_SIDE_PX {
        super::usage!(
            "frame size {}x{} is not allowed: zoom frames must be 1 to {MAX_FRAME_SIDE_PX} pixels per side",
            args.width,
            args.height
        );
    }
    if args.frames == 0 || args.frames > MAX_FRAMES {
        super::usage!(
            "--frames {} is not allowed: it must be 1 to {MAX_FRAMES}",
            args.frames
        );
    }
    super::mandelbrot::check_scale("--start-scale", args.start_scale, args.width)?;
    let end_log10 = match host::deep::Decimal::parse(&args.end_scale)
        .ok()
        .and_then(|d| d.log10_abs())
    {
        Some(log10) => log10,
        None => super::usage!(
            "--end-scale {} is not allowed: it must be a positive decimal, e.g. 1e-5 or 1e-300",
            args.end_scale
        ),
    };
    let center = match args.center_parts.get() {
        Some((re, im)) => Complex::new(
            re.trim().parse().unwrap_or(f64::NAN),
            im.trim().parse().unwrap_or(f64::NAN),
        ),
        None => args.center.to_f64(),
    };
    // Every digit given (not the f64 rounding), for deep frames.
    let center_text = match args.center_parts.get() {
        Some((re, im)) => (re.to_owned(), im.to_owned()),
        None => (args.center.re.text(), args.center.im.text()),
    };
    if !center.re.is_finite() || !center.im.is_finite() {
        super::usage!(
            "centre `{}`, `{}` is not allowed: it is beyond f64's range (at most {:e} in size)",
            center_text.0,
            center_text.1,
            f64::MAX
        );
    }
    // D17: say so when deep frames reach the iteration limit, rather than capping silently.
    let last_depth = (args.start_scale.log10() - end_log10).max(0.0);
    let last_iter = f64::from(args.max_iter) + f64::from(args.max_iter_growth) * last_depth;
    if last_iter > f64::from(super::MAX_ITER_LIMIT) {
        super::errln!(
            "note: --max-iter {} with --max-iter-growth {} asks for {last_iter:.0} iterations in \
             the last frame; frames are capped at {} iterations",
            args.max_iter,
            args.max_iter_growth,
            super::MAX_ITER_LIMIT
        );
    }
    if args.precision != PrecisionArg::Auto && args.center_parts.get().is_some() {
        super::usage!(
            "--precision {} is not allowed with --center-re/--center-im: those centres are \
             for frames rendered by perturbation from an arbitrary-precision reference orbit; \
             leave --precision at auto, or give --center RE,IM to choose f32 or f64",
            args.precision.name()
        );
    }
    let deep_frame = |k: u32| {
        is_deep(
            args,
            frame_log10(args.start_scale, end_log10, k, args.frames),
            center,
        )
    };
    if args.output_dir.is_none() && args.gif.is_none() {
        super::usage!("nothing to write: give -o DIR (PNG frames) and/or --gif FILE");
    }
    // Every frame's view must be valid before anything is written.
    for k in [0, args.frames - 1] {
        let log10 = frame_log10(args.start_scale, end_log10, k, args.frames);
        if deep_frame(k) {
            frame_view(&center_text, k, log10, args.width, args.height)?;
            continue;
        }
        let view = Viewport::from_center_scale(args.width, args.height, center, 10f64.powf(log10))
            .map_err(|e| {
                view_error(e, || {
                    let scale = if k == 0 {
                        format!("--start-scale {:e}", args.start_scale)
                    } else {
                        format!("--end-scale {}", args.end_scale)
                    };
                    format!(
                        "frame {k}: {scale} (centre {:e},{:e})",
                        center.re, center.im
                    )
                })
            })?;
        host::mandelbrot::Precision::check_view(&view).map_err(|e| {
            match args.precision.too_deep_advice(false) {
                Some(advice) => super::UsageError(format!("frame {k}: {e}: {advice}")),
                None => super::UsageError(format!("frame {k}: {e}")),
            }
        })?;
    }
    if let (Some(dir), Some(gif)) = (&args.output_dir, &args.gif) {
        check_gif_beside_frames(dir, gif)?;
    }
    if let Some(gif) = &args.gif {
        check_gif_name(gif)?;
    }
    // The frame folder first, so that a GIF inside it (`-o fr --gif fr/a.gif`) has its folder.
    // Declared before the GIF, so dropped after it (and its temporary file).
    let _created_dir = match &args.output_dir {
        Some(dir) => {
            if dir.exists() && !dir.is_dir() {
                super::usage!(
                    "frame folder `{}` is not allowed: it is an existing file",
                    dir.display()
                );
            }
            let created = !dir.exists();
            std::fs::create_dir_all(dir).map_err(|e| {
                anyhow::anyhow!(
                    "cannot create the frame folder `{}`: {}",
                    dir.display(),
                    super::os_message(&e)
                )
            })?;
            CreatedDir(created.then_some(dir.as_path()))
        }
        None => CreatedDir(None),
    };
    let (gif, gif_stream) = match &args.gif {
        Some(path) => {
            let (out, stream) = GifOut::create(path, args.fps)?;
            (Some(out), Some(stream))
        }
        None => (None, None),
    };
    let writer = FrameWriter::spawn(args.width, args.height, gif_stream);

    let gpu = open_gpu(args.backend)?;
    // Device buffers for the largest band any frame uses (the first frame's bands are the
    // longest; deeper frames need more iterations and get shorter bands).
    let capacity_rows = rows_per_band(args.width, DEFAULT_BAND_PX).min(args.height);
    // Perturbed frames keep every sample's escape time and |z|² on the device.
    let samples = if (0..args.frames).any(deep_frame) {
        args.look.supersample.pow(2) as usize
    } else {
        1
    };
    let mut renderer = band_renderer(
        gpu.as_ref(),
        args.width as usize * capacity_rows as usize * samples,
    )?;
    // The reference orbit of the centre, computed once (at the deepest frame's precision and
    // iteration limit) for every deep frame: the centre does not change.
    let mut orbit: Option<SharedOrbit> = None;
    super::catch_signals();
    let mut frames_written = 0u32;
    let written = |frames: u32| {
        let frames_note = match (&args.output_dir, frames) {
            (Some(dir), n) if n > 0 => format!("{n} frames written to `{}`", dir.display()),
            _ => "no frame written".to_owned(),
        };
        match &args.gif {
            Some(_) => format!("{frames_note}; no GIF written"),
            None => frames_note,
        }
    };
    let style = args.look.style();
    let progress = super::Progress::new(u64::from(args.frames), "frames");
    let start = Instant::now();
    let mut kernel = std::time::Duration::ZERO;
    // Deep frames: reference orbits, BLA tables and pixels.
    let mut deep = (0u32, std::time::Duration::ZERO);
    let mut warned = false;
    for k in 0..args.frames {
        check_interrupt_with(|| written(frames_written))?;
        let log10 = frame_log10(args.start_scale, end_log10, k, args.frames);
        let depth = (args.start_scale.log10() - log10).max(0.0);
        let max_iter = (f64::from(args.max_iter) + f64::from(args.max_iter_growth) * depth)
            .min(f64::from(super::mandelbrot::MAX_ITER_LIMIT)) as u32;
        let rgb = if deep_frame(k) {
            let t = Instant::now();
            if orbit.is_none() {
                // A signal stops the orbit; the frames written so far are on disk.
                orbit = Some(
                    deepest_orbit(args, &center_text, end_log10)
                        .map_err(|e| stopped_or(e, || written(frames_written)))?,
                );
            }
            let view = frame_view(&center_text, k, log10, args.width, args.height)?;
            let prepared =
                super::deep::prepare(&view, max_iter, &style, args.look.palette, orbit.clone())
                    .map_err(|e| stopped_or(e, || written(frames_written)))?;
            let job = BandJob::Perturbed(&prepared.job);
            let rows = prepared
                .job
                .rows_per_band(DEFAULT_BAND_PX)
                .min((capacity_rows * samples as u32 / job.buffer_px_per_px() as u32).max(1));
            let mut rgb = Vec::with_capacity(3 * args.width as usize * args.height as usize);
            for band in Band::split(args.height, rows) {
                match renderer.render(job, band, false, &super::CONTROL)? {
                    Some(b) => rgb.extend_from_slice(&b.rgb),
                    None => check_interrupt_with(|| written(frames_written))?,
                }
                check_interrupt_with(|| written(frames_written))?;
            }
            deep = (deep.0 + 1, deep.1 + t.elapsed());
            rgb
        } else {
            let view =
                Viewport::from_center_scale(args.width, args.height, center, 10f64.powf(log10))
                    .map_err(anyhow::Error::msg)?;
            let params = RenderParams {
                view,
                max_iter,
                precision: host::mandelbrot::Precision::F64,
                palette: args.look.palette,
            };
            let job = params.job(&style);
            // Warn once, at the first frame that needs it.
            let precision = choose_precision(&job, args.precision, warned);
            let choice = precision::for_viewport(&job.samples);
            warned |= !choice.resolves(precision.into());
            let mut rgb = Vec::with_capacity(3 * view.len());
            let rows = rows_per_launch(&job, DEFAULT_BAND_PX).min(capacity_rows);
            for band in Band::split(args.height, rows) {
                let work = BandJob::Float {
                    job: &job,
                    precision,
                };
                match renderer.render(work, band, false, &super::CONTROL)? {
                    Some(b) => {
                        kernel += b.kernel;
                        rgb.extend_from_slice(&b.rgb);
                    }
                    None => check_interrupt_with(|| written(frames_written))?,
                }
                check_interrupt_with(|| written(frames_written))?;
            }
            rgb
        };
        // Encoded by the writer's thread while this one waits, stopped by a signal at once.
        let rgb = Arc::new(rgb);
        if let Some(dir) = &args.output_dir {
            let path = dir.join(format!("frame_{k:05}.png"));
            let out = OutputFile::create(&path)?;
            let file = out.file().try_clone().context("opening the frame file")?;
            writer
                .run(FrameJob::Png(file, Arc::clone(&rgb)), || {
                    written(frames_written)
                })?
                .map_err(|why| out.write_error(&why))?;
            out.persist()?;
            frames_written += 1;
        }
        if let Some(gif) = &gif {
            writer
                .run(FrameJob::Gif(rgb), || written(frames_written))?
                .map_err(|why| gif.frame_error(why))?;
        }
        progress.inc(1);
    }
    drop(progress);
    check_interrupt_with(|| written(frames_written))?;
    if let Some(gif) = gif {
        writer
            .run(FrameJob::GifEnd, || written(frames_written))?
            .map_err(|why| gif.frame_error(why))?;
        gif.finish()?;
    }
    let device = gpu.as_ref().map_or_else(
        || format!("CPU ({} threads)", rayon::current_num_threads()),
        |g| format!("GPU {}", g.name()),
    );
    let peak = peak_rss_bytes().map_or_else(String::new, |b| {
        format!(", peak memory {:.0} MiB", b as f64 / f64::from(1 << 20))
    });
    let deep_note = match deep {
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
        kernel.as_secs_f64() * 1e3,
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

/// A frame folder this run created (`None`: it existed before), removed when dropped if it
/// is still empty: an error or a signal before the first frame (no device, a GIF that cannot
/// be created) leaves no empty folder behind. A folder with anything in it is kept
/// (`remove_dir` removes only empty folders).
struct CreatedDir<'a>(Option<&'a Path>);

impl Drop for CreatedDir<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.0 {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Refuses a GIF file name not ending in `.gif`.
fn check_gif_name(path: &Path) -> Result<()> {
    let is_gif = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gif"));
    if !is_gif {
        super::usage!(
            "GIF file `{}` is not allowed: it must end in .gif",
            path.display()
        );
    }
    Ok(())
}

/// Refuses, before any rendering, a GIF path that is the frame folder or a folder above it
/// (`-o X --gif X`, `-o a.gif/fr --gif a.gif`). A GIF inside the frame folder is fine: frames
/// are `frame_NNNNN.png`, the GIF ends in `.gif`, so they cannot collide.
fn check_gif_beside_frames(dir: &Path, gif: &Path) -> Result<()> {
    let (d, g) = (lexical_absolute(dir), lexical_absolute(gif));
    if d == g {
        super::usage!(
            "--gif `{}` is not allowed: it is the frame folder given by -o `{}`",
            gif.display(),
            dir.display()
        );
    }
    if d.starts_with(&g) {
        super::usage!(
            "--gif `{}` is not allowed: the frame folder -o `{}` lies inside it",
            gif.display(),
            dir.display()
        );
    }
    Ok(())
}

/// `path` made absolute (from the current folder) with `.` and `..` resolved by name, without
/// touching the file system (symbolic links are not followed).
fn lexical_absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Removes `frame_NNNNN.png` files numbered `frames` or more from `dir` (left by an earlier
/// zoom with more frames, they would be mistaken for this one's); returns how many.
fn remove_stale_frames(dir: &std::path::Path, frames: u32) -> Result<u32> {
    let mut removed = 0;
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading the frame folder `{}`", dir.display()))?;
    for entry in entries {
        let entry =
            entry.with_context(|| format!("reading the frame folder `{}`", dir.display()))?;
        let name = entry.file_name();
        let index = name
            .to_str()
            .and_then(|n| n.strip_prefix("frame_"))
            .and_then(|n| n.strip_suffix(".png"))
            .filter(|n| n.len() == 5 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok());
        if index.is_some_and(|i| i >= frames) {
            std::fs::remove_file(entry.path()).with_context(|| {
                format!("removing the stale frame `{}`", entry.path().display())
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// An animated GIF written through an [`super::OutputFile`] (a temporary file renamed into
/// place by [`GifOut::finish`], or a device or FIFO written through); dropped early (error,
/// Ctrl-C), it removes the temporary file. Its frames are encoded by a [`GifStream`] on the
/// [`FrameWriter`]'s thread.
struct GifOut {
    path: PathBuf,
    out: super::OutputFile,
    error: Arc<Mutex<Option<String>>>,
}

/// The GIF encoder of a [`GifOut`] and its frame delay, owned by the [`FrameWriter`]'s thread.
struct GifStream {
    encoder: image::codecs::gif::GifEncoder<std::io::BufWriter<RecordingFile>>,
    delay: image::Delay,
}

/// A file whose first write error is recorded: the GIF encoder writes its trailer (and the
/// buffer flushes) when dropped, where errors are otherwise lost.
struct RecordingFile {
    file: std::fs::File,
    error: Arc<Mutex<Option<String>>>,
}

impl RecordingFile {
    fn record<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| super::os_message(e));
        }
        r
    }
}

impl std::io::Write for RecordingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.file.write(buf);
        self.record(r)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.file.flush();
        self.record(r)
    }
}

impl GifOut {
    fn create(path: &std::path::Path, fps: u32) -> Result<(Self, GifStream)> {
        check_gif_name(path)?;
        let out = super::OutputFile::open(path, "GIF file", ".gif.part")?;
        let error = Arc::new(Mutex::new(None));
        let file = RecordingFile {
            file: out.file().try_clone().context("opening the GIF file")?,
            error: Arc::clone(&error),
        };
        let mut encoder =
            image::codecs::gif::GifEncoder::new_with_speed(std::io::BufWriter::new(file), 10);
        encoder
            .set_repeat(image::codecs::gif::Repeat::Infinite)
            .context("starting the GIF")?;
        let stream = GifStream {
            encoder,
            delay: image::Delay::from_numer_denom_ms(1000, fps),
        };
        Ok((
            Self {
                path: path.to_path_buf(),
                out,
                error,
            },
            stream,
        ))
    }

    /// The error for a frame (or the trailer) that could not be written: the file's own
    /// error (a full disk) where there was one, else the encoder's `why`.
    fn frame_error(&self, why: String) -> anyhow::Error {
        let why = self
            .error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or(why);
        anyhow::anyhow!("cannot write the GIF file `{}`: {why}", self.path.display())
    }

    /// Checks every write and the final flush (the trailer was written by
    /// [`FrameJob::GifEnd`]), syncs and renames the temporary file into place; on failure it
    /// is removed and the error names the path and the operating system's error.
    fn finish(self) -> Result<()> {
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bail!("cannot write the GIF file `{}`: {e}", self.path.display());
        }
        self.out.persist()
    }
}

impl GifStream {
    fn add_frame(&mut self, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
        let rgba: Vec<u8> = rgb
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        let buffer = image::RgbaImage::from_raw(width, height, rgba)
            .ok_or("frame buffer size does not match the frame")?;
        let frame = image::Frame::from_parts(buffer, 0, 0, self.delay);
        self.encoder.encode_frame(frame).map_err(|e| e.to_string())
    }
}

/// What the [`FrameWriter`]'s thread does next.
enum FrameJob {
    /// Encode the frame's colours as a PNG into the (temporary) frame file.
    Png(std::fs::File, Arc<Vec<u8>>),
    /// Add the frame's colours to the GIF.
    Gif(Arc<Vec<u8>>),
    /// Write the GIF's trailer and flush it (dropping its encoder).
    GifEnd,
}

/// How often a thread waiting for the [`FrameWriter`] checks for a caught signal.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Encodes a zoom's frames, PNG files and GIF frames, on a thread of its own while the main
/// thread waits for each job, checking for a caught signal every [`SIGNAL_POLL`]: a signal
/// during a large frame's encoding (seconds for an 8192² GIF frame) stops the zoom at once,
/// as a render is stopped, and the encoding ends with the process. The output files stay
/// with the main thread, so their temporary files are removed on the way out. One job at a
/// time: a frame's colours are held once, as before.
struct FrameWriter {
    jobs: std::sync::mpsc::Sender<FrameJob>,
    done: std::sync::mpsc::Receiver<Result<(), String>>,
}

impl FrameWriter {
    /// Starts the thread for frames of `width × height` pixels (`gif`: the GIF's encoder).
    fn spawn(width: u32, height: u32, gif: Option<GifStream>) -> Self {
        let (jobs, job_rx) = std::sync::mpsc::channel::<FrameJob>();
        let (done_tx, done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut gif = gif;
            for job in job_rx {
                let result = match job {
                    FrameJob::Png(file, rgb) => super::encode_png(&file, width, height, &rgb),
                    FrameJob::Gif(rgb) => match &mut gif {
                        Some(g) => g.add_frame(width, height, &rgb),
                        None => Err("no GIF was opened".to_owned()),
                    },
                    FrameJob::GifEnd => {
                        drop(gif.take());
                        Ok(())
                    }
                };
                if done_tx.send(result).is_err() {
                    break;
                }
            }
        });
        Self { jobs, done }
    }

    /// Runs `job` and waits for it: its own result (`Err`: why it failed), or
    /// [`super::Interrupted`] (with `written`) as soon as a signal is caught.
    ///
    /// # Errors
    /// [`super::Interrupted`]; an error if the thread is gone (it panicked).
    fn run(&self, job: FrameJob, written: impl Fn() -> String) -> Result<Result<(), String>> {
        use std::sync::mpsc::RecvTimeoutError;
        let gone = || anyhow::anyhow!("the frame writer's thread stopped");
        self.jobs.send(job).map_err(|_| gone())?;
        loop {
            match self.done.recv_timeout(SIGNAL_POLL) {
                Ok(result) => return Ok(result),
                Err(RecvTimeoutError::Timeout) => check_interrupt_with(&written)?,
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        }
    }
}

/// The reference orbit for every deep frame of the zoom: the centre at the precision of the
/// deepest frame (frame 0 or the last), iterated to the largest iteration limit (the
/// deepest frame's); stopped by a signal. Each frame uses its first `max_iter + 1` entries.
fn deepest_orbit(
    args: &ZoomArgs,
    center: &(String, String),
    end_log10: f64,
) -> Result<SharedOrbit> {
    let first = args.start_scale.log10();
    let deepest = first.min(end_log10);
    let depth = (first - deepest).max(0.0);
    let max_iter = (f64::from(args.max_iter) + f64::from(args.max_iter_growth) * depth)
        .min(f64::from(super::mandelbrot::MAX_ITER_LIMIT)) as u32;
    let (width, height) = (
        args.width * args.look.supersample,
        args.height * args.look.supersample,
    );
    let view = host::deep::scale_of_log10(deepest, 6)
        .and_then(|scale| DeepView::new(&center.0, &center.1, &scale, width, height))
        .map_err(|e| super::UsageError(e.to_string()))?;
    super::deep::orbit_with_progress(&view, max_iter, false)
}

/// Frame `k`'s deep view: `width × height` pixels around `center` (every digit given) at
/// the scale `10^log10`, written with 7 significant digits.
///
/// # Errors
/// A [`super::UsageError`] naming the frame and the bad value.
fn frame_view(
    center: &(String, String),
    k: u32,
    log10: f64,
    width: u32,
    height: u32,
) -> Result<DeepView> {
    host::deep::scale_of_log10(log10, 6)
        .and_then(|scale| DeepView::new(&center.0, &center.1, &scale, width, height))
        .map_err(|e| super::UsageError(format!("frame {k}: {e}")).into())
}

/// `e`, or, if a signal stopped the work, the interruption with what was written.
fn stopped_or(e: anyhow::Error, written: impl FnOnce() -> String) -> anyhow::Error {
    match check_interrupt_with(written) {
        Err(stopped) => stopped,
        Ok(()) => e,
    }
}
