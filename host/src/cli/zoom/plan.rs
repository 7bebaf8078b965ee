//! A zoom's plan: its arguments checked, every frame's scale and iteration limit, and which
//! frames are past f64 (rendered by perturbation from one shared reference orbit).

use super::{MAX_FRAME_SIDE_PX, MAX_FRAMES, ZoomArgs};
use crate::cli::{
    UsageError, errln,
    mandelbrot::{MAX_ITER_LIMIT, PrecisionArg, check_scale, check_size_and_iter, view_error},
    usage,
};
use anyhow::Result;
use common::{Complex, Viewport};
use host::deep::{DeepView, SharedOrbit};
use host::mandelbrot::precision::{self, Arithmetic};

/// A zoom's checked arguments and the centre they name.
pub(super) struct Plan<'a> {
    args: &'a ZoomArgs,
    /// `log10` of the last frame's scale (may be far below f64's range).
    pub end_log10: f64,
    /// The centre, rounded to f64 (for f32 and f64 frames).
    pub center: Complex<f64>,
    /// The centre, every digit given (not the f64 rounding), for deep frames.
    pub center_text: (String, String),
}

impl<'a> Plan<'a> {
    /// Checks `args` and every frame's view before anything is written.
    ///
    /// # Errors
    /// A [`UsageError`] naming the option and the bad value.
    pub(super) fn new(args: &'a ZoomArgs) -> Result<Self> {
        check_size_and_iter(args.width, args.height, args.max_iter)?;
        if args.width > MAX_FRAME_SIDE_PX || args.height > MAX_FRAME_SIDE_PX {
            usage!(
                "frame size {}x{} is not allowed: zoom frames must be 1 to {MAX_FRAME_SIDE_PX} pixels per side",
                args.width,
                args.height
            );
        }
        if args.frames == 0 || args.frames > MAX_FRAMES {
            usage!(
                "--frames {} is not allowed: it must be 1 to {MAX_FRAMES}",
                args.frames
            );
        }
        check_scale("--start-scale", args.start_scale, args.width)?;
        let end_log10 = match host::deep::Decimal::parse(&args.end_scale)
            .ok()
            .and_then(|d| d.log10_abs())
        {
            Some(log10) => log10,
            None => usage!(
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
        let center_text = match args.center_parts.get() {
            Some((re, im)) => (re.to_owned(), im.to_owned()),
            None => (args.center.re.text(), args.center.im.text()),
        };
        if !center.re.is_finite() || !center.im.is_finite() {
            usage!(
                "centre `{}`, `{}` is not allowed: it is beyond f64's range (at most {:e} in size)",
                center_text.0,
                center_text.1,
                f64::MAX
            );
        }
        // D17: say so when deep frames reach the iteration limit, rather than capping silently.
        let last_depth = (args.start_scale.log10() - end_log10).max(0.0);
        let last_iter = f64::from(args.max_iter) + f64::from(args.max_iter_growth) * last_depth;
        if last_iter > f64::from(MAX_ITER_LIMIT) {
            errln!(
                "note: --max-iter {} with --max-iter-growth {} asks for {last_iter:.0} iterations in \
                 the last frame; frames are capped at {} iterations",
                args.max_iter,
                args.max_iter_growth,
                MAX_ITER_LIMIT
            );
        }
        if args.render.precision != PrecisionArg::Auto && args.center_parts.get().is_some() {
            usage!(
                "--precision {} is not allowed with --center-re/--center-im: those centres are \
                 for frames rendered by perturbation from an arbitrary-precision reference orbit; \
                 leave --precision at auto, or give --center RE,IM to choose f32 or f64",
                args.render.precision.name()
            );
        }
        let plan = Self {
            args,
            end_log10,
            center,
            center_text,
        };
        if args.output_dir.is_none() && args.gif.is_none() {
            usage!("nothing to write: give -o DIR (PNG frames) and/or --gif FILE");
        }
        plan.check_views()?;
        Ok(plan)
    }

    /// Checks the first and the last frame's views (the others lie between them).
    fn check_views(&self) -> Result<()> {
        let args = self.args;
        // Every frame's view must be valid before anything is written.
        for k in [0, args.frames - 1] {
            let log10 = self.log10(k);
            if self.is_deep(k) {
                frame_view(&self.center_text, k, log10, args.width, args.height)?;
                continue;
            }
            let view = Viewport::from_center_scale(
                args.width,
                args.height,
                self.center,
                10f64.powf(log10),
            )
            .map_err(|e| {
                view_error(e, || {
                    let scale = if k == 0 {
                        format!("--start-scale {:e}", args.start_scale)
                    } else {
                        format!("--end-scale {}", args.end_scale)
                    };
                    format!(
                        "frame {k}: {scale} (centre {:e},{:e})",
                        self.center.re, self.center.im
                    )
                })
            })?;
            host::mandelbrot::Precision::check_view(&view).map_err(|e| {
                match args.render.precision.too_deep_advice(false) {
                    Some(advice) => UsageError(format!("frame {k}: {e}: {advice}")),
                    None => UsageError(format!("frame {k}: {e}")),
                }
            })?;
        }
        Ok(())
    }

    /// `log10` of frame `k`'s scale.
    pub(super) fn log10(&self, k: u32) -> f64 {
        frame_log10(self.args.start_scale, self.end_log10, k, self.args.frames)
    }

    /// Whether frame `k` is rendered by perturbation.
    pub(super) fn is_deep(&self, k: u32) -> bool {
        is_deep(self.args, self.log10(k), self.center)
    }

    /// The iteration limit of a frame of scale `10^log10`: `max_iter + growth · log10(start /
    /// scale)`, capped at [`MAX_ITER_LIMIT`].
    pub(super) fn max_iter(&self, log10: f64) -> u32 {
        let args = self.args;
        let depth = (args.start_scale.log10() - log10).max(0.0);
        (f64::from(args.max_iter) + f64::from(args.max_iter_growth) * depth)
            .min(f64::from(MAX_ITER_LIMIT)) as u32
    }

    /// The reference orbit for every deep frame of the zoom: the centre at the precision of
    /// the deepest frame (frame 0 or the last), iterated to the largest iteration limit (the
    /// deepest frame's); stopped by a signal. Each frame uses its first `max_iter + 1` entries.
    pub(super) fn deepest_orbit(&self) -> Result<SharedOrbit> {
        let (args, center) = (self.args, &self.center_text);
        let deepest = args.start_scale.log10().min(self.end_log10);
        let max_iter = self.max_iter(deepest);
        let (width, height) = (
            args.width * args.render.look.supersample,
            args.height * args.render.look.supersample,
        );
        let view = host::deep::scale_of_log10(deepest, 6)
            .and_then(|scale| DeepView::new(&center.0, &center.1, &scale, width, height))
            .map_err(|e| UsageError(e.to_string()))?;
        crate::cli::deep::orbit_with_progress(&view, max_iter, false)
    }
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
    args.render.precision == PrecisionArg::Auto
        && precision::for_center_scale(
            center,
            log10,
            args.width,
            args.height,
            args.render.look.supersample,
        )
        .arithmetic
            == Arithmetic::Perturbed
}

/// Frame `k`'s deep view: `width × height` pixels around `center` (every digit given) at
/// the scale `10^log10`, written with 7 significant digits.
///
/// # Errors
/// A [`UsageError`] naming the frame and the bad value.
pub(super) fn frame_view(
    center: &(String, String),
    k: u32,
    log10: f64,
    width: u32,
    height: u32,
) -> Result<DeepView> {
    host::deep::scale_of_log10(log10, 6)
        .and_then(|scale| DeepView::new(&center.0, &center.1, &scale, width, height))
        .map_err(|e| UsageError(format!("frame {k}: {e}")).into())
}
