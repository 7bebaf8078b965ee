//! The argument parsers and limits the subcommands share.

use anyhow::Result;
use common::{Complex, Palette};

/// `RE,IM` split at its one comma; the error names `s` and the form.
pub(super) fn split_complex(s: &str) -> Result<(&str, &str), String> {
    s.split_once(',')
        .filter(|(_, im)| !im.contains(','))
        .ok_or_else(|| {
            format!("`{s}` is not a complex number: write RE,IM with one comma, e.g. -0.75,0.1")
        })
}

pub fn parse_complex(s: &str) -> Result<Complex<f64>, String> {
    let (re, im) = split_complex(s)?;
    let parse = |part: &str| -> Result<f64, String> {
        let v: f64 = part
            .trim()
            .parse()
            .map_err(|_| format!("`{part}` in `{s}` is not a number"))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!(
                "`{part}` in `{s}` is not allowed: coordinates must be finite"
            ))
        }
    };
    Ok(Complex::new(parse(re)?, parse(im)?))
}

/// A whole number from `lo` to `hi`; the error names the value and the range.
pub(super) fn parse_u32_in(s: &str, what: &str, lo: u32, hi: u32) -> Result<u32, String> {
    match s.trim().parse::<i128>() {
        Ok(v) if (i128::from(lo)..=i128::from(hi)).contains(&v) => Ok(v as u32),
        _ => Err(format!(
            "`{s}` is not allowed: {what} must be a whole number from {lo} to {hi}"
        )),
    }
}

/// [`parse_u32_in`] for a flag whose error starts with the flag and the value as typed:
/// "--len -1 is not allowed: the number of elements must be a whole number from 1 to 2147483648".
pub(super) fn parse_flag_u32_in(
    s: &str,
    flag: &str,
    what: &str,
    lo: u32,
    hi: u32,
) -> Result<u32, String> {
    parse_u32_in(s, what, lo, hi).map_err(|_| {
        format!("{flag} {s} is not allowed: {what} must be a whole number from {lo} to {hi}")
    })
}

/// Most elements per vector of `bench` and `vector-add`: 2^31 (8 GiB per f32 array).
pub const MAX_VECTOR_LEN: u32 = 1 << 31;

/// `--len` of `bench` and `vector-add`: 1 to [`MAX_VECTOR_LEN`] elements.
pub fn parse_vector_len(s: &str) -> Result<u64, String> {
    parse_flag_u32_in(s, "--len", "the number of elements", 1, MAX_VECTOR_LEN).map(u64::from)
}

/// Largest image side in pixels.
pub const MAX_SIDE_PX: u32 = 65_536;
/// Largest zoom frame side in pixels.
pub const MAX_FRAME_SIDE_PX: u32 = 8192;
/// `mandelbrot --max-iter`'s default when neither `--max-iter` nor a location file's
/// `Iterations` gives one.
pub const DEFAULT_MAX_ITER: u32 = 1000;
/// Largest iteration limit.
pub const MAX_ITER_LIMIT: u32 = 10_000_000;
/// Most host memory a deep view's reference orbit and BLA table take together: 2 GiB. They
/// need at most [`host::deep::DEEP_BYTES_PER_ITERATION`] (192) bytes per iteration of
/// `--max-iter`, whatever the image size, each held once, so [`MAX_ITER_LIMIT`] bounds them
/// (1.8 GiB at 10,000,000 iterations; checked when this compiles).
pub const MAX_DEEP_TABLE_BYTES: u64 = 2 << 30;
const _: () = assert!(
    MAX_ITER_LIMIT as u64 * host::deep::DEEP_BYTES_PER_ITERATION <= MAX_DEEP_TABLE_BYTES,
    "--max-iter's limit would let a deep view's orbit and BLA table exceed MAX_DEEP_TABLE_BYTES"
);
/// Most timed repetitions of a benchmark.
pub const MAX_REPS: u32 = 1000;
/// Most GIF frames per second: GIF frame delays are whole hundredths of a second, and browsers
/// play delays below 2 hundredths at 10 frames per second (GIF89a, "Graphic Control Extension";
/// the behaviour of Chromium and Firefox).
pub const MAX_GIF_FPS: u32 = 50;

pub fn parse_side(s: &str) -> Result<u32, String> {
    parse_u32_in(s, "a side in pixels", 1, MAX_SIDE_PX)
}

pub fn parse_frame_side(s: &str) -> Result<u32, String> {
    parse_u32_in(s, "a zoom frame side in pixels", 1, MAX_FRAME_SIDE_PX)
}

pub fn parse_max_iter(s: &str) -> Result<u32, String> {
    parse_u32_in(s, "the iteration limit", 1, MAX_ITER_LIMIT)
}

pub fn parse_reps(s: &str) -> Result<u32, String> {
    parse_u32_in(s, "the number of timed repetitions", 1, MAX_REPS)
}

pub fn parse_warmup(s: &str) -> Result<u32, String> {
    parse_u32_in(s, "the number of warm-up runs", 0, MAX_REPS)
}

pub fn parse_fps(s: &str) -> Result<u32, String> {
    parse_u32_in(s, "frames per second", 1, MAX_GIF_FPS)
}

pub fn parse_palette(s: &str) -> Result<Palette, String> {
    Palette::from_name(&s.trim().to_ascii_lowercase()).ok_or_else(|| {
        format!(
            "unknown palette `{s}`; allowed: {}",
            Palette::NAMES.join(", ")
        )
    })
}
