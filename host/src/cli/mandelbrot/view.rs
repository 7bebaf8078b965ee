//! The view a `mandelbrot` run renders and the arithmetic it is rendered in: the deep
//! location or the f32/f64 job, the scale and centre checks, the precision choice.

use super::args::{MandelbrotArgs, PrecisionArg};
use crate::cli::decimal::DecimalPoint;
use anyhow::Result;
use common::{Complex, RenderJob, Viewport, ViewportError};
use host::{
    deep::Decimal,
    mandelbrot::{
        Precision, RenderParams, Style,
        precision::{self, Arithmetic},
    },
};

/// The location when the view needs perturbation: a KFR file or --center-re/--center-im
/// (always perturbed), or --center/--scale when the one precision rule
/// (`host::mandelbrot::precision`) says f64 cannot resolve its samples (or its scale
/// underflows f64), unless --precision forces f32 or f64.
///
/// # Errors
/// A [`crate::cli::UsageError`] for --precision f32/f64 with a location that is always perturbed.
pub(super) fn deep_location(args: &MandelbrotArgs) -> Result<Option<crate::cli::deep::Location>> {
    use crate::cli::deep::Location;
    let explicit = if let Some(path) = &args.kfr {
        let loc = Location::from_kfr(path, args.width, args.height)?;
        center_within_f64(&loc.re, &loc.im)?;
        Some(loc)
    } else if let Some((re, im)) = args.center_parts.get() {
        center_within_f64(re, im)?;
        Some(Location {
            re: re.to_owned(),
            im: im.to_owned(),
            scale: args.scale.clone(),
            max_iter: None,
        })
    } else {
        None
    };
    if let Some(loc) = explicit {
        if args.render.precision != PrecisionArg::Auto {
            crate::cli::usage!(
                "--precision {} is not allowed with --center-re/--center-im or --kfr: those \
                 views are always rendered by perturbation from an arbitrary-precision \
                 reference orbit; leave --precision at auto, or give --center RE,IM to \
                 choose f32 or f64",
                args.render.precision.name()
            );
        }
        return Ok(Some(loc));
    }
    if args.corners.is_some() || args.render.precision != PrecisionArg::Auto {
        return Ok(None);
    }
    if let Some(c) = &args.center {
        center_within_f64(&c.re.text(), &c.im.text())?;
    }
    let center = center_f64(args);
    // Every digit of --center (not its f64 rounding).
    let (re, im) = args.center.as_ref().map_or_else(
        || ("-0.75".to_owned(), "0".to_owned()),
        |c| (c.re.text(), c.im.text()),
    );
    let deep = Location {
        re,
        im,
        scale: args.scale.clone(),
        max_iter: None,
    };
    let Some(scale_log10) = scale_log10(&args.scale) else {
        // A zero the deep path rejects by name; anything else not a positive number, the
        // f64 path names.
        return Ok((args.scale.to_f64() == 0.0).then_some(deep));
    };
    let choice = precision::for_center_scale(
        center,
        scale_log10,
        args.width,
        args.height,
        args.render.look.supersample,
    );
    Ok((choice.arithmetic == Arithmetic::Perturbed).then_some(deep))
}

/// Refuses a centre beyond `f64`'s range (any digits are kept, but a centre of 1e400 is no
/// view of the Mandelbrot set, and would cost the deep path a number of that size).
fn center_within_f64(re: &str, im: &str) -> Result<()> {
    let finite = |x: &str| x.parse::<f64>().is_ok_and(f64::is_finite);
    if !finite(re) || !finite(im) {
        crate::cli::usage!(
            "centre {re},{im} is not allowed: each part must be within f64's range (at most \
             {:e} in size)",
            f64::MAX
        );
    }
    Ok(())
}

/// The centre as `f64` (the default -0.75,0 when none was given).
fn center_f64(args: &MandelbrotArgs) -> Complex<f64> {
    args.center
        .as_ref()
        .map_or(Complex::new(-0.75, 0.0), DecimalPoint::to_f64)
}

/// A viewport error as a usage error; one about coordinates that are not finite names the
/// values that gave them (`what()`, e.g. "--corners -1e308,1e308 1e308,-1e308").
pub fn view_error(e: ViewportError, what: impl FnOnce() -> String) -> crate::cli::UsageError {
    match e {
        ViewportError::NotFinite => crate::cli::UsageError(format!(
            "{} is not allowed: the view's coordinates or its pixel spacing are beyond f64's \
             range (at most {:e} in size, spacing at least {:e})",
            what(),
            f64::MAX,
            f64::MIN_POSITIVE
        )),
        e => crate::cli::UsageError(e.to_string()),
    }
}

/// `log10` of a positive decimal `scale` (any exponent, beyond f64's range too), or `None`.
pub fn scale_log10(scale: &Decimal) -> Option<f64> {
    Some(scale)
        .filter(|d| !d.is_zero() && d.to_f64().is_sign_positive())
        .and_then(Decimal::log10_abs)
}

/// Checks a view width (`--scale`, `--start-scale`, ...) for an image `width_px` wide: positive,
/// and a pixel spacing that f64 represents as a normal number.
pub fn check_scale(flag: &str, scale: f64, width_px: u32) -> Result<()> {
    if scale.is_nan() || scale <= 0.0 {
        crate::cli::usage!("{flag} {scale:e} is not allowed: it must be a positive number");
    }
    let spacing = scale / f64::from(width_px.max(1));
    if spacing < f64::MIN_POSITIVE {
        crate::cli::usage!(
            "{flag} {scale:e} is not allowed: its pixel spacing ({flag} / width = {spacing:e}) \
             is below the smallest normal f64 ({:e}); `ferrocuda mandelbrot` renders zooms \
             this deep by perturbation (--center/--scale or --center-re/--center-im)",
            f64::MIN_POSITIVE
        );
    }
    Ok(())
}

/// The precision to use for `job` (whose sample grid decides), with the warnings of the
/// automatic choice.
pub fn choose_precision(job: &RenderJob<f64>, arg: PrecisionArg, quiet: bool) -> Precision {
    let choice = precision::for_viewport(&job.samples);
    let auto_precision = choice.arithmetic.float().unwrap_or(Precision::F64);
    let f64_too_coarse = !choice.resolves(Arithmetic::F64);
    let precision = match arg {
        PrecisionArg::Auto => auto_precision,
        PrecisionArg::F32 => Precision::F32,
        PrecisionArg::F64 => Precision::F64,
    };
    if quiet {
        return precision;
    }
    if precision == Precision::F32 && auto_precision == Precision::F64 {
        crate::cli::errln!(
            "warning: pixel spacing {:e} is too fine for f32 at this centre; use --precision f64 or auto",
            job.samples.min_step()
        );
    } else if f64_too_coarse {
        crate::cli::errln!(
            "warning: pixel spacing {:e} is below f64 resolution at this centre; the image will be blocky",
            job.samples.min_step()
        );
    }
    precision
}

/// The f32/f64 job of `args` (not a deep view): the view checked, the precision chosen.
pub(super) fn float_job(
    args: &MandelbrotArgs,
    style: &Style,
) -> Result<(RenderJob<f64>, Precision)> {
    let (width, height) = (args.width, args.height);
    let scale = Some(args.scale.to_f64())
        .filter(|s| s.is_finite())
        .ok_or_else(|| {
            crate::cli::UsageError(format!(
                "--scale `{}` is not allowed: it must be a finite number",
                args.scale
            ))
        })?;
    if args.corners.is_none() {
        check_scale("--scale", scale, width)?;
    }
    let center = center_f64(args);
    let view = match &args.corners {
        Some(c) => Viewport::from_corners(width, height, c[0], c[1]).map_err(|e| {
            view_error(e, || {
                format!(
                    "--corners {:e},{:e} {:e},{:e}",
                    c[0].re, c[0].im, c[1].re, c[1].im
                )
            })
        }),
        None => Viewport::from_center_scale(width, height, center, scale).map_err(|e| {
            view_error(e, || {
                format!(
                    "--center {:e},{:e} --scale {}",
                    center.re, center.im, args.scale
                )
            })
        }),
    }?;
    Precision::check_view(&view).map_err(|e| {
        match args
            .render
            .precision
            .too_deep_advice(args.corners.is_some())
        {
            Some(advice) => crate::cli::UsageError(format!("{e}: {advice}")),
            None => crate::cli::UsageError(e),
        }
    })?;
    if let Some(c) = &args.corners {
        // Pixels are as wide as the view divided by the width, as tall as its height by the
        // height: unequal when the corners' aspect ratio differs from the image's.
        let (w, h) = ((c[1].re - c[0].re).abs(), (c[0].im - c[1].im).abs());
        let aspect = (w / f64::from(width)) / (h / f64::from(height));
        if (aspect - 1.0).abs() > 0.01 {
            crate::cli::errln!(
                "note: the corners span {w:e} x {h:e} but the image is {width}x{height}: pixels \
                 are {aspect:.3} times as wide as tall (the picture is stretched)"
            );
        }
    }
    let params = RenderParams {
        view,
        max_iter: args.max_iter.unwrap_or(crate::cli::DEFAULT_MAX_ITER),
        precision: Precision::F64,
        palette: args.render.look.palette,
    };
    let job = params.job(style);
    let precision = choose_precision(&job, args.render.precision, false);
    Ok((job, precision))
}
