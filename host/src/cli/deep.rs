//! `ferrocuda mandelbrot` and `zoom` past f64: views given by decimal strings (or a Kalles
//! Fraktaler location file), prepared for perturbation (`host::deep`: reference orbit, BLA
//! table) and then rendered in bands like every other view (`cli::mandelbrot`).

use super::UsageError;
use anyhow::{Context, Result};
use host::{
    deep::{Decimal, DeepView, PerturbedJob, SharedOrbit, reference_orbit_until},
    mandelbrot::Style,
};
use std::{
    path::Path,
    sync::{Arc, atomic::AtomicU64},
    time::{Duration, Instant},
};

/// A deep-zoom location: the centre as decimal strings, the scale as parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Real part of the centre.
    pub re: String,
    /// Imaginary part of the centre.
    pub im: String,
    /// Real-axis extent of the image width.
    pub scale: Decimal,
    /// Iteration limit from the location file, if it gave one.
    pub max_iter: Option<u32>,
}

/// Largest Kalles Fraktaler location file read: 1 MiB. A location file is a few lines (KF 2.15
/// writes about 20); a centre of 100,000 digits still fits.
pub const MAX_KFR_BYTES: u64 = 1 << 20;

impl Location {
    /// Reads a Kalles Fraktaler location file: `Re: …`, `Im: …`, `Zoom: …` and optionally
    /// `Iterations: …` lines (other lines are ignored). `Zoom: Z` is KF's `2 / radius`, the
    /// radius running from the centre to the top and bottom edges (Kalles Fraktaler 2+'s
    /// `CFraktalSFT`: pixel spacing `= 2·radius / height`), so the view is `4/Z` high and the
    /// scale (width extent) is `4/Z · width/height`. The file is UTF-8, with or without a
    /// byte-order mark, lines ending in LF, CRLF or CR alone, at most [`MAX_KFR_BYTES`] long.
    ///
    /// # Errors
    /// The file cannot be read or is larger than [`MAX_KFR_BYTES`] (its size named), or a
    /// needed line is missing, not a decimal (by [`Decimal::parse`]) or out of range (named).
    pub fn from_kfr(path: &Path, width: u32, height: u32) -> Result<Self> {
        let shown = path.display();
        let bytes = super::read_bounded(
            "--kfr",
            path,
            MAX_KFR_BYTES,
            "location files may be",
            "1 MiB",
        )?;
        let text = String::from_utf8(bytes).map_err(|e| {
            UsageError(format!(
                "--kfr `{shown}` is not a text file: invalid UTF-8 at byte {}",
                e.utf8_error().valid_up_to()
            ))
        })?;
        Self::parse_kfr(&text, width, height)
            .map_err(|e| UsageError(format!("--kfr {shown}: {e}")).into())
    }

    fn parse_kfr(text: &str, width: u32, height: u32) -> Result<Self, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let field = |name: &str| {
            // Any line end: LF, CRLF or CR alone.
            text.split(['\r', '\n']).find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim().eq_ignore_ascii_case(name)).then(|| v.trim().to_owned())
            })
        };
        let need = |name: &str| field(name).ok_or_else(|| format!("no `{name}:` line"));
        let (re, im, zoom) = (need("Re")?, need("Im")?, need("Zoom")?);
        let decimal =
            |name: &str, v: &str| Decimal::parse(v).map_err(|e| format!("`{name}: {v}`: {e}"));
        let (re, im) = (decimal("Re", &re)?, decimal("Im", &im)?);
        let max_iter = match field("Iterations") {
            Some(v) => Some(super::parse_max_iter(&v).map_err(|_| {
                format!(
                    "`Iterations: {v}` is not allowed: the iteration limit must be a whole \
                     number from 1 to {} (as for --max-iter)",
                    super::MAX_ITER_LIMIT
                )
            })?),
            None => None,
        };
        // Scale = 4/Z · w/h, written as a decimal with the zoom's exponent kept apart, so
        // zooms beyond f64 (1e500) work: Z = m·10^k → scale = (4·w/h / m)·10^-k.
        let z = Decimal::parse(&zoom)
            .map_err(|e| format!("`Zoom: {zoom}` is not a positive decimal: {e}"))?;
        let (m, k) = z.split();
        if m.is_nan() || m <= 0.0 {
            return Err(format!(
                "`Zoom: {zoom}` is not allowed: it must be positive"
            ));
        }
        if !m.is_finite() {
            return Err(format!(
                "`Zoom: {zoom}` is not allowed: its digits before the exponent must be within \
                 f64's range (write more of the size as the exponent)"
            ));
        }
        let factor = 4.0 * f64::from(width) / f64::from(height.max(1)) / m;
        let f = format!("{factor:e}");
        let (digits, e) = f.split_once('e').unwrap_or((&f, "0"));
        let e: i64 = e.parse().unwrap_or(0);
        // |k| ≤ MAX_EXPONENT and |e| < 400: no wrapping.
        let scale = format!("{digits}e{}", e - k);
        Ok(Self {
            re: re.text(),
            im: im.text(),
            scale: Decimal::parse(&scale).map_err(|e| format!("`Zoom: {zoom}`: {e}"))?,
            max_iter,
        })
    }
}

/// Steps of the reference orbit computed so far (for the progress display).
static ORBIT_STEPS: AtomicU64 = AtomicU64::new(0);

/// The reference orbit of `view`'s centre up to `max_iter` steps, with progress on stderr
/// if `show` (as the rows of a render: a bar in a terminal, otherwise a line every 10 s;
/// `zoom` shows its frames instead), stopped within a step by a caught signal.
///
/// # Errors
/// `Interrupted` after a signal.
pub fn orbit_with_progress(view: &DeepView, max_iter: u32, show: bool) -> Result<SharedOrbit> {
    // Short orbits (under about a second: fewer than 2^27 step-bits) show nothing: the
    // display's thread would only add its wake-up interval to the run.
    let long = u64::from(max_iter).saturating_mul(view.precision_bits as u64) > 1 << 27;
    let progress = (show && long).then(|| {
        super::Progress::watch(
            u64::from(max_iter),
            "reference orbit steps",
            &ORBIT_STEPS,
            1,
        )
    });
    let orbit = reference_orbit_until(
        &view.center_re,
        &view.center_im,
        view.precision_bits,
        max_iter,
        &super::CONTROL.stop,
        &ORBIT_STEPS,
    );
    drop(progress);
    super::check_interrupt()?;
    Ok(Arc::new(orbit.context("the reference orbit stopped")?))
}

/// A deep view made ready for the band renderers: its reference orbit and BLA table
/// computed (stoppable by a signal), and what it took.
pub struct DeepPrepared {
    /// The job every band renders.
    pub job: PerturbedJob,
    /// Bits of precision of the centre and the reference orbit.
    pub bits: usize,
    /// The scale as given.
    pub scale: String,
    /// Time to compute the reference orbit.
    pub orbit_time: Duration,
    /// Time to build the BLA table.
    pub bla_time: Duration,
}

impl DeepPrepared {
    /// One line on what was prepared, e.g. "perturbation, 1073 bits: reference orbit 3000
    /// steps in 12 ms, BLA table 5996 entries in 1 ms".
    pub fn summary(&self) -> String {
        format!(
            "perturbation at scale {}, {} bits: reference orbit {} steps in {:.0} ms, BLA table \
             {} entries in {:.0} ms",
            self.scale,
            self.bits,
            self.job.orbit().len().saturating_sub(1),
            self.orbit_time.as_secs_f64() * 1e3,
            self.job.bla().len(),
            self.bla_time.as_secs_f64() * 1e3
        )
    }
}

/// The iteration limit of a deep `mandelbrot` render: `--max-iter` (`cli_max_iter`) if it
/// was given, else the location file's `Iterations`, else [`super::DEFAULT_MAX_ITER`].
pub fn max_iter(cli_max_iter: Option<u32>, loc: &Location) -> u32 {
    cli_max_iter
        .or(loc.max_iter)
        .unwrap_or(super::DEFAULT_MAX_ITER)
}

/// The view of `loc` for an image `width × height`.
///
/// # Errors
/// A [`UsageError`] naming the bad value, or the precision bound
/// ([`host::deep::MAX_PRECISION_BITS`]) a too-deep scale exceeds.
pub fn view(loc: &Location, width: u32, height: u32) -> Result<DeepView> {
    DeepView::new(&loc.re, &loc.im, &loc.scale, width, height)
        .map_err(|e| UsageError(e.to_string()).into())
}

/// Computes the reference orbit of `view`'s centre (up to `orbit_iter` steps; at least
/// `max_iter`) and the BLA table for the image of `max_iter` iterations and `style`, both
/// stopped within a step by a caught signal (then the error is `Interrupted`). `orbit`
/// reuses an orbit of the same centre and precision computed before (a zoom's frames).
///
/// # Errors
/// `Interrupted` after a signal.
pub fn prepare(
    view: &DeepView,
    max_iter: u32,
    style: &Style,
    palette: common::Palette,
    orbit: Option<SharedOrbit>,
) -> Result<DeepPrepared> {
    let coloring = style.coloring(palette);
    let stop = &super::CONTROL.stop;
    let t = Instant::now();
    let orbit = match orbit {
        Some(o) => o,
        None => orbit_with_progress(view, max_iter, true)?,
    };
    let orbit_time = t.elapsed();
    let t = Instant::now();
    let job = PerturbedJob::prepare(
        view.job(max_iter, coloring.bailout_sqr::<f64>()),
        style.supersample,
        coloring,
        orbit,
        stop,
    );
    super::check_interrupt()?;
    let job = job.context("the BLA table stopped")?;
    Ok(DeepPrepared {
        job,
        bits: view.precision_bits,
        scale: String::new(),
        orbit_time,
        bla_time: t.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kfr_files_give_centre_scale_and_iterations() {
        let text = "Re: -1.74999841099374081749002483162428393452822172335808534616943930976364725846655540417646727085571962736578151132907961927190726789896685696750162524460775546580822744596887978637416593715319388030232414667\r\nIm: -0.00000000000000165712469295418692325810961981279189026504290127375760405334498110850956047368308707050735960323397389547038231194872482690340369921750514146922400928554011996123112902000856666847088788158433995\r\nZoom: 1.8788137765069E157\r\nIterations: 1000000\r\nIterDiv: 0.010000\r\n";
        let loc = Location::parse_kfr(text, 640, 360).unwrap();
        assert!(loc.re.starts_with("-1.7499984109937408174900248"));
        assert!(loc.im.starts_with("-0.0000000000000016571246929541869"));
        assert_eq!(loc.max_iter, Some(1_000_000));
        // 4/Z · 640/360 = 7.1111/1.8788e157 = 3.7849e-157.
        let (m, k) = loc.scale.split();
        assert_eq!(k, -157);
        assert!(
            (m - 4.0 * 640.0 / 360.0 / 1.878_813_776_506_9).abs() < 1e-12,
            "{}",
            loc.scale
        );
        // Zooms beyond f64 keep their exponent.
        let deep = Location::parse_kfr("Re: 0\nIm: 1\nZoom: 2.5e600\n", 100, 100).unwrap();
        assert_eq!(deep.scale.text(), "1.6e-600");
        assert_eq!(deep.max_iter, None);
    }

    #[test]
    fn bad_kfr_files_name_the_problem() {
        assert_eq!(
            Location::parse_kfr("Re: 0\nZoom: 1\n", 4, 4).unwrap_err(),
            "no `Im:` line"
        );
        assert_eq!(
            Location::parse_kfr("Re: 0\nIm: 0\nZoom: abc\n", 4, 4).unwrap_err(),
            "`Zoom: abc` is not a positive decimal: `abc` is not a decimal number: write an \
             optional sign, digits with at most one `.`, and optionally `e` and a whole \
             exponent, e.g. -0.75, 1.25e-3 or 1e-500"
        );
        assert!(
            Location::parse_kfr("Re: 0\nIm: 0\nZoom: 1\nIterations: -3\n", 4, 4)
                .unwrap_err()
                .contains("`Iterations: -3` is not allowed")
        );
    }

    /// N3: `Iterations` is range-checked as --max-iter is.
    #[test]
    fn kfr_iterations_must_be_in_the_max_iter_range() {
        for v in ["4294967295", "100000000", "0", "1e6"] {
            let e = Location::parse_kfr(&format!("Re: 0\nIm: 0\nZoom: 1\nIterations: {v}\n"), 4, 4)
                .unwrap_err();
            assert!(
                e.contains(&format!("`Iterations: {v}`")) && e.contains("1 to 10000000"),
                "{e}"
            );
        }
        let ok = Location::parse_kfr("Re: 0\nIm: 0\nZoom: 1\nIterations: 10000000\n", 4, 4);
        assert_eq!(ok.unwrap().max_iter, Some(10_000_000));
    }

    /// N12: a byte-order mark and every kind of line end.
    #[test]
    fn kfr_accepts_a_bom_and_any_line_end() {
        for text in [
            "\u{feff}Re: -0.5\nIm: 0.25\nZoom: 4\nIterations: 500\n",
            "Re: -0.5\rIm: 0.25\rZoom: 4\rIterations: 500\r",
            "\u{feff}Re: -0.5\r\nIm: 0.25\r\nZoom: 4\r\nIterations: 500",
        ] {
            let loc = Location::parse_kfr(text, 100, 100).unwrap();
            assert_eq!(
                (loc.re.as_str(), loc.im.as_str()),
                ("-0.5", "0.25"),
                "{text:?}"
            );
            assert_eq!(
                (loc.scale.text().as_str(), loc.max_iter),
                ("1e0", Some(500)),
                "{text:?}"
            );
        }
    }

    /// N4, N14: `Re`/`Im`/`Zoom` go through the strict decimal parser; a huge `Zoom` exponent
    /// is refused, not wrapped.
    #[test]
    fn kfr_values_are_strict_decimals() {
        let e = Location::parse_kfr("Re: 1-2\nIm: 0\nZoom: 1\n", 4, 4).unwrap_err();
        assert!(
            e.contains("`Re: 1-2`") && e.contains("not a decimal"),
            "{e}"
        );
        let e = Location::parse_kfr("Re: 0\nIm: 1e5e5\nZoom: 1\n", 4, 4).unwrap_err();
        assert!(e.contains("`1e5e5`"), "{e}");
        for zoom in ["1e-9223372036854775808", "1e9223372036854775807"] {
            let e =
                Location::parse_kfr(&format!("Re: 0\nIm: 0\nZoom: {zoom}\n"), 4, 4).unwrap_err();
            assert!(
                e.contains(zoom) && e.contains("exponent out of range"),
                "{e}"
            );
        }
        for zoom in ["0", "-2e5"] {
            let e =
                Location::parse_kfr(&format!("Re: 0\nIm: 0\nZoom: {zoom}\n"), 4, 4).unwrap_err();
            assert!(e.contains(zoom) && e.contains("must be positive"), "{e}");
        }
    }
}
