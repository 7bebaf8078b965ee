//! Deep zoom past `f64`: a view given by decimal strings of any length, its reference orbit in
//! arbitrary precision (`astro-float`, pure Rust), and the pixels iterated by perturbation
//! (`common::perturb`, shared with the GPU).
//!
//! Conventions as for [`common::Viewport`]: `scale` is the real-axis extent of the image
//! width, pixels are square, pixel `(x, y)` samples its centre, row 0 is at the top.

use astro_float::{BigFloat, Consts, Radix, RoundingMode, Sign};
use common::{
    Complex,
    bla::{self, Bla},
    floatexp::{ComplexFx, FloatExp},
    perturb::{self, DeepJob, Perturbed},
};
use rayon::prelude::*;

/// Rounding of every arbitrary-precision operation.
const RM: RoundingMode = RoundingMode::ToEven;

/// Why a deep view could not be set up. Each variant names the bad value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeepError {
    /// A coordinate is not a decimal number.
    #[error("{what} `{value}` is not a decimal number (e.g. -0.75, 1.25e-3)")]
    NotANumber {
        /// Which input.
        what: &'static str,
        /// The text given.
        value: String,
    },
    /// The scale is not a positive decimal number.
    #[error("scale `{0}` must be a positive decimal number, e.g. 3, 0.01 or 1e-500")]
    BadScale(String),
    /// An image dimension is zero.
    #[error("image size {0}×{1}: both must be at least 1")]
    EmptyImage(u32, u32),
}

/// A deep-zoom view: centre as decimal strings, the scale, the pixel grid.
#[derive(Clone, Debug)]
pub struct DeepView {
    /// Real part of the centre.
    pub center_re: BigFloat,
    /// Imaginary part of the centre.
    pub center_im: BigFloat,
    /// Real-axis extent of the image width.
    pub scale: BigFloat,
    /// Image width in pixels.
    pub width_px: u32,
    /// Image height in pixels.
    pub height_px: u32,
    /// Bits of precision of the coordinates and of the reference orbit.
    pub precision_bits: usize,
}

/// `x` as [`FloatExp`] (its leading 53 bits, truncated).
pub fn to_floatexp(x: &BigFloat) -> FloatExp {
    let Some((words, _, sign, exponent, _)) = x.as_raw_parts() else {
        return FloatExp { m: f64::NAN, e: 0 };
    };
    let Some(&top) = words.last() else {
        return FloatExp::ZERO;
    };
    if top == 0 {
        return FloatExp::ZERO;
    }
    // The value is 0.top… · 2^exponent with the top bit of `top` set: the mantissa's leading
    // 53 bits as an integer over 2^53 lie in [0.5, 1).
    let m = (top >> 11) as f64 / (1u64 << 53) as f64;
    let m = if sign == Sign::Neg { -m } else { m };
    FloatExp::new(m, exponent)
}

impl DeepView {
    /// Parses the centre and scale (decimal strings of any length, e.g. `"1e-500"`) and
    /// chooses the precision: enough bits for the pixel spacing (`scale / width`) plus 64.
    ///
    /// # Errors
    /// [`DeepError`] naming the bad value.
    pub fn new(
        center_re: &str,
        center_im: &str,
        scale: &str,
        width_px: u32,
        height_px: u32,
    ) -> Result<Self, DeepError> {
        if width_px == 0 || height_px == 0 {
            return Err(DeepError::EmptyImage(width_px, height_px));
        }
        let mut cc = Consts::new().expect("astro-float constants cache");
        // The scale first, at a modest precision, to learn its magnitude.
        let s = parse(scale, 128, &mut cc).ok_or_else(|| DeepError::BadScale(scale.into()))?;
        if s.is_zero() || s.sign() != Some(Sign::Pos) {
            return Err(DeepError::BadScale(scale.into()));
        }
        let spacing_exp = i64::from(s.exponent().unwrap_or(0)) - i64::from(width_px.ilog2());
        let bits = usize::try_from((-spacing_exp).max(0) + 64).unwrap_or(usize::MAX / 2);
        let bits = bits.max(128);
        let number = |what, text: &str, cc: &mut Consts| {
            parse(text, bits, cc).ok_or_else(|| DeepError::NotANumber {
                what,
                value: text.into(),
            })
        };
        Ok(Self {
            center_re: number("centre real part", center_re, &mut cc)?,
            center_im: number("centre imaginary part", center_im, &mut cc)?,
            scale: number("scale", scale, &mut cc)?,
            width_px,
            height_px,
            precision_bits: bits,
        })
    }

    /// A view centred on `(re, im)` (any precision; rounded or extended to the view's).
    ///
    /// # Errors
    /// As [`DeepView::new`] for the scale and size.
    pub fn at(
        re: &BigFloat,
        im: &BigFloat,
        scale: &str,
        width_px: u32,
        height_px: u32,
    ) -> Result<Self, DeepError> {
        let mut v = Self::new("0", "0", scale, width_px, height_px)?;
        let bits = v.precision_bits;
        let set = |x: &BigFloat| {
            let mut x = x.clone();
            // Only fails for NaN/Inf, which a nucleus never is.
            let _ = x.set_precision(bits, RM);
            x
        };
        v.center_re = set(re);
        v.center_im = set(im);
        Ok(v)
    }

    /// Distance between adjacent pixel centres, `scale / width_px`.
    pub fn spacing(&self) -> BigFloat {
        self.scale.div(
            &BigFloat::from_u32(self.width_px, self.precision_bits),
            self.precision_bits,
            RM,
        )
    }

    /// The job the perturbation kernels and [`render_perturbed`] run: this view's grid at
    /// `max_iter`, escaping at `|z|² > bailout_sqr` (pixel `δc` as [`DeepJob::delta`], the
    /// same offsets as [`DeepView::pixel`]).
    pub fn job(&self, max_iter: u32, bailout_sqr: f64) -> DeepJob {
        DeepJob {
            spacing: to_floatexp(&self.spacing()),
            width_px: self.width_px,
            height_px: self.height_px,
            max_iter,
            bailout_sqr,
        }
    }

    /// Pixel `(x, y)`'s `c` in full precision.
    pub fn pixel(&self, spacing: &BigFloat, x: u32, y: u32) -> (BigFloat, BigFloat) {
        let p = self.precision_bits;
        let (ox, oy) = perturb::pixel_offset(self.width_px, self.height_px, x, y);
        let re = self
            .center_re
            .add(&spacing.mul(&BigFloat::from_f64(ox, p), p, RM), p, RM);
        let im = self
            .center_im
            .add(&spacing.mul(&BigFloat::from_f64(oy, p), p, RM), p, RM);
        (re, im)
    }
}

fn parse(text: &str, bits: usize, cc: &mut Consts) -> Option<BigFloat> {
    let t = text.trim();
    let ok = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    if !ok {
        return None;
    }
    let v = BigFloat::parse(t, Radix::Dec, bits, RM, cc);
    (!v.is_nan() && !v.is_inf()).then_some(v)
}

/// The reference orbit `Z_0 = 0, Z_{k+1} = Z_k² + C` of `(c_re, c_im)` at `bits` of
/// precision, rounded to `f64`: `max_iter + 1` values, or fewer if it escapes (`|Z|² > 2¹⁶`;
/// the last value is the first one past that).
pub fn reference_orbit(
    c_re: &BigFloat,
    c_im: &BigFloat,
    bits: usize,
    max_iter: u32,
) -> Vec<Complex<f64>> {
    let p = bits;
    let mut re = BigFloat::from_u32(0, p);
    let mut im = BigFloat::from_u32(0, p);
    let mut out = Vec::with_capacity(max_iter as usize + 1);
    out.push(Complex::new(0.0, 0.0));
    for _ in 0..max_iter {
        let re2 = re.mul(&re, p, RM);
        let im2 = im.mul(&im, p, RM);
        let reim = re.mul(&im, p, RM);
        re = re2.sub(&im2, p, RM).add(c_re, p, RM);
        im = reim.add(&reim, p, RM).add(c_im, p, RM);
        let z = Complex::new(to_floatexp(&re).to_f64(), to_floatexp(&im).to_f64());
        out.push(z);
        if z.re * z.re + z.im * z.im > 65_536.0 {
            break;
        }
    }
    out
}

/// Relative accuracy of the bilinear approximations: `2⁻⁴⁰`. Each skip's neglected `δz²`
/// terms are below `2⁻⁴⁰` of the step's linear part (see `common::bla`).
pub const BLA_EPS: f64 = 9.094_947_017_729_282e-13;

/// The bilinear-approximation table of `orbit` for `job`'s pixels (`|δc|` up to the image's
/// half-diagonal), relative accuracy `eps` ([`BLA_EPS`]): level 0 has one entry per
/// reference step `1 ..= L − 2`, each next level merges pairs (`common::bla`).
pub fn bla_table(orbit: &[Complex<f64>], job: &DeepJob, eps: f64) -> Vec<Bla> {
    let n0 = bla::level0_len(orbit.len());
    if n0 == 0 {
        return Vec::new();
    }
    let half_diag =
        (f64::from(job.width_px).powi(2) + f64::from(job.height_px).powi(2)).sqrt() / 2.0;
    let dc_max = job.spacing * FloatExp::from_f64(half_diag);
    let mut table: Vec<Bla> = (1..=n0 as usize)
        .map(|m| bla::single(orbit[m].re, orbit[m].im, eps, job.bailout_sqr))
        .collect();
    let mut start = 0usize;
    let mut k = 0;
    while bla::level_len(n0, k + 1) > 0 {
        let len = bla::level_len(n0, k) as usize;
        let next: Vec<Bla> = (0..bla::level_len(n0, k + 1) as usize)
            .map(|j| bla::merge(table[start + 2 * j], table[start + 2 * j + 1], dc_max))
            .collect();
        start += len;
        table.extend(next);
        k += 1;
    }
    table
}

/// Escape times of every pixel (row-major) by perturbation from `orbit` (the reference
/// orbit of the view's centre), on all CPU cores.
pub fn render_perturbed(view: &DeepView, orbit: &[Complex<f64>], max_iter: u32) -> Vec<Perturbed> {
    render_job_cpu(&view.job(max_iter, 4.0), orbit, &[])
}

/// Every pixel of `job` (row-major) by perturbation from `orbit`, skipping iterations with
/// `bla` ([`bla_table`]; empty: none), on all CPU cores.
pub fn render_job_cpu(job: &DeepJob, orbit: &[Complex<f64>], bla: &[Bla]) -> Vec<Perturbed> {
    let w = job.width_px;
    (0..job.width_px * job.height_px)
        .into_par_iter()
        .map(|i| job.escape(orbit, bla, i % w, i / w))
        .collect()
}

/// A deep view rendered ([`render`]): what every pixel gave, and what it took.
#[derive(Clone, Debug)]
pub struct DeepRender {
    /// The job the pixels ran (grid, `max_iter`, bailout).
    pub job: DeepJob,
    /// The reference orbit of the view's centre.
    pub orbit: Vec<Complex<f64>>,
    /// The BLA table of `orbit` ([`bla_table`] at [`BLA_EPS`]).
    pub bla: Vec<Bla>,
    /// Escape time of each pixel, row-major.
    pub counts: Vec<u32>,
    /// `|z_n|²` at escape of each pixel (`0` inside), row-major.
    pub norms: Vec<f32>,
    /// Iterations skipped by BLA, summed over the pixels (CPU renders only: the kernel
    /// reports counts and norms).
    pub skipped: Option<u64>,
    /// Time to compute the reference orbit.
    pub orbit_time: std::time::Duration,
    /// Time to build the BLA table.
    pub bla_time: std::time::Duration,
    /// Time to iterate the pixels (and copy them back from the GPU).
    pub pixels_time: std::time::Duration,
}

/// Renders `view` by perturbation: reference orbit, BLA table, then every pixel on `gpu` (in
/// bands of 64 rows) or, without one, on all CPU cores; escape at `|z|² > bailout_sqr`.
///
/// # Errors
/// [`GpuError`](crate::gpu::GpuError) from the GPU render.
pub fn render(
    view: &DeepView,
    max_iter: u32,
    bailout_sqr: f64,
    gpu: Option<&crate::gpu::Gpu>,
) -> Result<DeepRender, crate::gpu::GpuError> {
    use std::time::Instant;
    let t = Instant::now();
    let orbit = reference_orbit(
        &view.center_re,
        &view.center_im,
        view.precision_bits,
        max_iter,
    );
    let orbit_time = t.elapsed();
    let job = view.job(max_iter, bailout_sqr);
    let t = Instant::now();
    let bla = bla_table(&orbit, &job, BLA_EPS);
    let bla_time = t.elapsed();
    let t = Instant::now();
    let (counts, norms, skipped) = match gpu {
        Some(g) => {
            let (c, n) = render_gpu(g, &job, &orbit, &bla, 64)?;
            (c, n, None)
        }
        None => {
            let p = render_job_cpu(&job, &orbit, &bla);
            let skipped = p.iter().map(|p| u64::from(p.skipped)).sum();
            (
                p.iter().map(|p| p.n).collect(),
                p.iter().map(|p| p.norm_sqr as f32).collect(),
                Some(skipped),
            )
        }
    };
    Ok(DeepRender {
        job,
        orbit,
        bla,
        counts,
        norms,
        skipped,
        orbit_time,
        bla_time,
        pixels_time: t.elapsed(),
    })
}

/// The colours of escape times `counts` and `|z_n|²` `norms` (row-major, as [`render`] gives
/// them) with `coloring`, as `[r, g, b, ...]` (3 bytes per pixel).
pub fn colorize(
    counts: &[u32],
    norms: &[f32],
    coloring: &common::palette::Coloring,
    max_iter: u32,
) -> Vec<u8> {
    let mut rgb = Vec::with_capacity(3 * counts.len());
    for (&n, &norm_sqr) in counts.iter().zip(norms) {
        rgb.extend_from_slice(&coloring.color(common::Escape { n, norm_sqr }, max_iter));
    }
    rgb
}

/// The view used by the examples and tests: `width_px × height_px` at scale `10^-exp`
/// around the Misiurewicz point `c = i`, offset by `(1 + i)·10^-exp/7` off its symmetry. The
/// set has detail at every depth there, and minibrots about `10^-2·exp` across lie within
/// `10^-exp` of the centre ([`find_minibrot`]).
///
/// # Errors
/// [`DeepError::EmptyImage`] for a zero size.
pub fn near_i(exp: u32, width_px: u32, height_px: u32) -> Result<DeepView, DeepError> {
    DeepView::new(
        &format!("1.4285714285714285714e-{}", exp + 1),
        &format!("1.{}14285714285714285714", "0".repeat(exp as usize)),
        &format!("1e-{exp}"),
        width_px,
        height_px,
    )
}

/// Escape times and `|z_n|²` of every pixel (row-major) by perturbation on `gpu`
/// (`kernels::mandelbrot::mandelbrot_perturb`, the function [`render_job_cpu`] runs) with
/// the BLA table `bla` (empty: no skipping), launched in bands of `band_rows` rows; the orbit
/// and table are uploaded once.
///
/// # Errors
/// [`GpuError`](crate::gpu::GpuError) if an allocation, a launch or a copy fails.
pub fn render_gpu(
    gpu: &crate::gpu::Gpu,
    job: &DeepJob,
    orbit: &[Complex<f64>],
    bla: &[Bla],
    band_rows: u32,
) -> Result<(Vec<u32>, Vec<f32>), crate::gpu::GpuError> {
    use cust::memory::DeviceBuffer;
    use kernels::mandelbrot::mandelbrot_perturb;
    let n = job.width_px as usize * job.height_px as usize;
    gpu.check_free(
        "the deep-zoom buffers",
        n * 8 + std::mem::size_of_val(orbit) + std::mem::size_of_val(bla),
    )?;
    let stream = gpu.stream();
    let orbit_dev = DeviceBuffer::from_slice_in(gpu.context(), orbit)?;
    // A one-entry placeholder when there is no table (an empty device buffer cannot be
    // allocated); the kernel is given an empty slice view of it.
    let placeholder = [bla::single(0.0, 0.0, 0.0, 4.0)];
    let bla_dev = DeviceBuffer::from_slice_in(
        gpu.context(),
        if bla.is_empty() {
            &placeholder[..]
        } else {
            bla
        },
    )?;
    let bla_view = bla_dev.index(0..bla.len())?;
    let mut counts = DeviceBuffer::<u32>::zeroed_async(n, stream)?;
    let mut norms = DeviceBuffer::<f32>::zeroed_async(n, stream)?;
    let perturb = gpu.module().kernel(mandelbrot_perturb)?;
    let rows = band_rows.max(1);
    for band in common::Band::split(job.height_px, rows) {
        let start = band.first_row as usize * job.width_px as usize;
        let len = band.rows as usize * job.width_px as usize;
        let cfg = crate::launch::for_image(job.width_px, band.rows);
        let mut c = counts.index_mut(start..start + len)?;
        let mut z = norms.index_mut(start..start + len)?;
        perturb.launch(
            stream,
            cfg,
            (*job, band, &orbit_dev, &bla_view, &mut c, &mut z),
        )?;
    }
    let counts = counts.as_host_vec()?;
    let norms = norms.as_host_vec()?;
    Ok((counts, norms))
}

/// Escape times of every pixel (row-major) by iterating each pixel directly at the view's
/// precision: the slow, exact reference that perturbation is checked against.
pub fn render_direct(view: &DeepView, max_iter: u32) -> Vec<u32> {
    let spacing = view.spacing();
    let p = view.precision_bits;
    let w = view.width_px;
    (0..view.width_px * view.height_px)
        .into_par_iter()
        .map(|i| {
            let (c_re, c_im) = view.pixel(&spacing, i % w, i / w);
            let mut re = BigFloat::from_u32(0, p);
            let mut im = BigFloat::from_u32(0, p);
            for n in 1..=max_iter {
                let re2 = re.mul(&re, p, RM);
                let im2 = im.mul(&im, p, RM);
                let reim = re.mul(&im, p, RM);
                re = re2.sub(&im2, p, RM).add(&c_re, p, RM);
                im = reim.add(&reim, p, RM).add(&c_im, p, RM);
                let (r, m) = (to_floatexp(&re).to_f64(), to_floatexp(&im).to_f64());
                if r * r + m * m > 4.0 {
                    return n;
                }
            }
            max_iter
        })
        .collect()
}

/// `x` in decimal scientific notation with 4 significant digits, e.g. `"6.906e-41"` (any
/// exponent, beyond `f64`'s range too).
pub fn decimal(x: FloatExp) -> String {
    if x.m == 0.0 {
        return "0".into();
    }
    let log10 = (f64::from(x.e) + x.m.abs().log2()) * std::f64::consts::LOG10_2;
    let sign = if x.m < 0.0 { "-" } else { "" };
    format!("{sign}{}", decimal_of_log10(log10, 3))
}

/// `10^log10` in decimal scientific notation with `decimals` digits after the point, e.g.
/// `"3.162278e-301"` for `(-300.5, 6)` (any exponent, beyond `f64`'s range too).
pub fn decimal_of_log10(log10: f64, decimals: usize) -> String {
    let exp = log10.floor();
    let mant = 10f64.powf(log10 - exp);
    format!("{mant:.decimals$}e{exp}")
}

/// A complex number in arbitrary precision, for the minibrot search.
#[derive(Clone, Debug)]
struct BigComplex {
    re: BigFloat,
    im: BigFloat,
}

impl BigComplex {
    fn zero(p: usize) -> Self {
        Self {
            re: BigFloat::from_u32(0, p),
            im: BigFloat::from_u32(0, p),
        }
    }
    fn add(&self, o: &Self, p: usize) -> Self {
        Self {
            re: self.re.add(&o.re, p, RM),
            im: self.im.add(&o.im, p, RM),
        }
    }
    fn sub(&self, o: &Self, p: usize) -> Self {
        Self {
            re: self.re.sub(&o.re, p, RM),
            im: self.im.sub(&o.im, p, RM),
        }
    }
    fn mul(&self, o: &Self, p: usize) -> Self {
        Self {
            re: self
                .re
                .mul(&o.re, p, RM)
                .sub(&self.im.mul(&o.im, p, RM), p, RM),
            im: self
                .re
                .mul(&o.im, p, RM)
                .add(&self.im.mul(&o.re, p, RM), p, RM),
        }
    }
    fn div(&self, o: &Self, p: usize) -> Self {
        let d = o.re.mul(&o.re, p, RM).add(&o.im.mul(&o.im, p, RM), p, RM);
        let re = self
            .re
            .mul(&o.re, p, RM)
            .add(&self.im.mul(&o.im, p, RM), p, RM);
        let im = self
            .im
            .mul(&o.re, p, RM)
            .sub(&self.re.mul(&o.im, p, RM), p, RM);
        Self {
            re: re.div(&d, p, RM),
            im: im.div(&d, p, RM),
        }
    }
    fn to_fx(&self) -> ComplexFx {
        ComplexFx::new(to_floatexp(&self.re), to_floatexp(&self.im))
    }
}

/// A minibrot found near a point: its nucleus, period and approximate size.
#[derive(Clone, Debug)]
pub struct Minibrot {
    /// Real part of the nucleus (the centre: `z_period(c) = 0`).
    pub re: BigFloat,
    /// Imaginary part of the nucleus.
    pub im: BigFloat,
    /// The period.
    pub period: u32,
    /// Approximate radius (the standard estimate `1/|β·λ²|` from the orbit's derivatives,
    /// as in Claude Heiland-Allen's "minibrot size" method).
    pub size: FloatExp,
}

/// How many times its size ([`Minibrot::size`]) the scale of a minibrot's view is
/// ([`Minibrot::view`]): the minibrot and its nearest decorations fill the image.
pub const MINIBROT_FRAME: f64 = 6.0;

impl Minibrot {
    /// The scale of [`Minibrot::view`]: [`MINIBROT_FRAME`] times the size, as a decimal with
    /// 4 significant digits ([`decimal`]), e.g. `"6.058e-401"`.
    pub fn frame_scale(&self) -> String {
        decimal(self.size * FloatExp::from_f64(MINIBROT_FRAME))
    }

    /// The `width_px` × `height_px` view centred on the nucleus at [`Minibrot::frame_scale`].
    ///
    /// # Errors
    /// As [`DeepView::at`]: [`DeepError::EmptyImage`] for a zero size.
    pub fn view(&self, width_px: u32, height_px: u32) -> Result<DeepView, DeepError> {
        DeepView::at(&self.re, &self.im, &self.frame_scale(), width_px, height_px)
    }

    /// The nucleus as decimal strings with `digits` significant digits.
    pub fn center_strings(&self, digits: usize) -> (String, String) {
        let fmt = |x: &BigFloat| {
            let mut cc = Consts::new().expect("astro-float constants cache");
            let p = digits * 4;
            let mut v = x.clone();
            let _ = v.set_precision(p, RM);
            v.format(Radix::Dec, RM, &mut cc).unwrap_or_default()
        };
        (fmt(&self.re), fmt(&self.im))
    }
}

/// Finds the lowest-period minibrot whose atom lies within `radius` of `(c_re, c_im)` and
/// locates its nucleus, at `bits` of precision (enough for `radius`, plus some).
///
/// Period: the first `n ≤ max_period` at which the disk of radius `radius` around `c`, mapped
/// to first order by the orbit (`Z_n + Z_n'·δ`), contains 0: `|Z_n| < |Z_n'|·radius` ("ball
/// period", after Robert Munafo's box period). Nucleus: Newton's method on `z_p(c) = 0`
/// (`c ← c − z_p/z_p'`) from `c`, until the step is below `2^-bits` of the size estimate or
/// 64 steps.
///
/// `None` if no period is found up to `max_period`, or Newton's method leaves the disk.
pub fn find_minibrot(
    c_re: &BigFloat,
    c_im: &BigFloat,
    radius: FloatExp,
    bits: usize,
    max_period: u32,
) -> Option<Minibrot> {
    let p = bits;
    let c = BigComplex {
        re: c_re.clone(),
        im: c_im.clone(),
    };
    // Ball period, with the derivative in FloatExp (it grows far beyond f64).
    let mut z = BigComplex::zero(p);
    let mut dz = ComplexFx::ZERO;
    let one = ComplexFx::from_f64(1.0, 0.0);
    let mut period = None;
    for n in 1..=max_period {
        let zf = z.to_fx();
        dz = ComplexFx::from_f64(2.0, 0.0) * zf * dz + one;
        z = z.mul(&z, p).add(&c, p);
        let zf = z.to_fx();
        if zf.norm_sqr().to_f64() > 65_536.0 {
            return None;
        }
        if zf.abs().abs_lt(dz.abs() * radius) {
            period = Some(n);
            break;
        }
    }
    let period = period?;
    // Newton's method for the nucleus.
    let mut c = c;
    for _ in 0..64 {
        let mut z = BigComplex::zero(p);
        let mut dz = BigComplex::zero(p);
        let one = BigComplex {
            re: BigFloat::from_u32(1, p),
            im: BigFloat::from_u32(0, p),
        };
        let two = BigFloat::from_u32(2, p);
        for _ in 0..period {
            // dz ← 2·z·dz + 1, z ← z² + c
            let zdz = z.mul(&dz, p);
            dz = BigComplex {
                re: zdz.re.mul(&two, p, RM),
                im: zdz.im.mul(&two, p, RM),
            }
            .add(&one, p);
            z = z.mul(&z, p).add(&c, p);
        }
        let step = z.div(&dz, p);
        c = c.sub(&step, p);
        let s = step.to_fx().abs();
        if s.m == 0.0 || s.e < -(i32::try_from(bits).unwrap_or(i32::MAX)) + 8 {
            break;
        }
    }
    // Left the disk: a different minibrot, or no convergence.
    let start = BigComplex {
        re: c_re.clone(),
        im: c_im.clone(),
    };
    let moved = c.sub(&start, p).to_fx().abs();
    if (radius * FloatExp::from_f64(4.0)).abs_lt(moved) {
        return None;
    }
    // Size: b = Σ 1/λ_k, λ_k = Π 2·z_j; size = 1/|b·λ_p²|.
    let mut z = BigComplex::zero(p);
    let mut l = ComplexFx::from_f64(1.0, 0.0);
    let mut b = ComplexFx::from_f64(1.0, 0.0);
    for _ in 1..period {
        z = z.mul(&z, p).add(&c, p);
        l = ComplexFx::from_f64(2.0, 0.0) * z.to_fx() * l;
        b = b + inverse(l);
    }
    let size = inverse_abs(b * l * l);
    Some(Minibrot {
        re: c.re,
        im: c.im,
        period,
        size,
    })
}

/// `1/z` in [`ComplexFx`].
fn inverse(z: ComplexFx) -> ComplexFx {
    let n = z.norm_sqr();
    let inv = FloatExp::new(1.0 / n.m, -n.e);
    ComplexFx::new(z.re * inv, -(z.im * inv))
}

/// `1/|z|` in [`FloatExp`].
fn inverse_abs(z: ComplexFx) -> FloatExp {
    let a = z.abs();
    FloatExp::new(1.0 / a.m, -a.e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_to_floatexp_is_exact_for_f64_values() {
        for x in [0.75, -3.0, 1e-300, 2.5e10] {
            let b = BigFloat::from_f64(x, 128);
            assert_eq!(to_floatexp(&b).to_f64(), x, "{x}");
        }
        let mut cc = Consts::new().unwrap();
        let tiny = parse("1e-500", 2048, &mut cc).unwrap();
        let f = to_floatexp(&tiny);
        // 1e-500 = 2^(-500·log2 10) = 2^-1660.964047…: exponent -1660 and mantissa
        // 2^-0.964047… = 0.51261676… (computed separately).
        assert_eq!(f.e, -1660);
        let want = (-(500.0 * std::f64::consts::LOG2_10 - 1660.0)).exp2();
        assert!((f.m - want).abs() < 1e-12, "{f:?} vs {want}");
    }

    #[test]
    fn bad_views_name_the_value() {
        let e = DeepView::new("0.1x", "0", "1e-3", 4, 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "centre real part `0.1x` is not a decimal number (e.g. -0.75, 1.25e-3)"
        );
        for s in ["0", "-1e-5", "abc", ""] {
            assert_eq!(
                DeepView::new("0", "0", s, 4, 4).unwrap_err(),
                DeepError::BadScale(s.into())
            );
        }
        assert_eq!(
            DeepView::new("0", "0", "1", 0, 4).unwrap_err(),
            DeepError::EmptyImage(0, 4)
        );
        let v = DeepView::new("0", "1", "1e-300", 64, 64).unwrap();
        // 1e-300/64 ≈ 2^-1003: 1003 + 64 bits.
        assert!(
            (1060..1080).contains(&v.precision_bits),
            "{}",
            v.precision_bits
        );
    }

    /// Perturbation against the direct arbitrary-precision iteration, at a shallow depth
    /// that runs quickly; the deep scales are checked by the `deep-accuracy` example.
    #[test]
    fn perturbation_matches_direct_iteration_near_a_misiurewicz_point() {
        let v = DeepView::new(
            "-0.0000000000000000003",
            "1.0000000000000000002",
            "1e-18",
            16,
            12,
        )
        .unwrap();
        let max_iter = 400;
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let perturbed: Vec<u32> = render_perturbed(&v, &orbit, max_iter)
            .iter()
            .map(|p| p.n)
            .collect();
        let direct = render_direct(&v, max_iter);
        let same = perturbed
            .iter()
            .zip(&direct)
            .filter(|(a, b)| a == b)
            .count();
        assert!(
            same * 100 >= direct.len() * 99,
            "{same} of {}",
            direct.len()
        );
        // Structure, not a flat image: several different counts.
        let mut counts = direct.clone();
        counts.sort_unstable();
        counts.dedup();
        assert!(counts.len() > 5, "{counts:?}");
    }
}

#[cfg(test)]
mod minibrot_tests {
    use super::*;

    /// Near c = i, the minibrot in a disk of radius 10^-k has period about 2.66·k and size
    /// about 10^-2k (Misiurewicz-point scaling); Newton's nucleus satisfies z_p(c) ≈ 0.
    #[test]
    fn finds_minibrots_near_i() {
        for exp in [20i32, 50] {
            let v = DeepView::new(
                &format!("1.4285714285714285714e-{}", exp + 1),
                &format!("1.{}14285714285714285714", "0".repeat(exp as usize + 1)),
                &format!("1e-{exp}"),
                64,
                64,
            )
            .unwrap();
            let radius = FloatExp::from_f64(10f64.powi(-exp));
            // Twice the view's precision: the minibrot is about 10^-2k across.
            let bits = 2 * v.precision_bits;
            let m = find_minibrot(&v.center_re, &v.center_im, radius, bits, 10_000)
                .expect("a minibrot");
            let log10_size = (f64::from(m.size.e) + m.size.m.log2()) * std::f64::consts::LOG10_2;
            assert!(
                (log10_size + 2.0 * f64::from(exp)).abs() < 3.0,
                "1e-{exp}: size 10^{log10_size}"
            );
            // Converged: one more Newton step z_p/z_p' is far below the minibrot's size.
            let p = bits;
            let c = BigComplex {
                re: m.re.clone(),
                im: m.im.clone(),
            };
            let (mut z, mut dz) = (BigComplex::zero(p), BigComplex::zero(p));
            let one = BigComplex {
                re: BigFloat::from_u32(1, p),
                im: BigFloat::from_u32(0, p),
            };
            for _ in 0..m.period {
                let zdz = z.mul(&dz, p);
                dz = zdz.add(&zdz, p).add(&one, p);
                z = z.mul(&z, p).add(&c, p);
            }
            let step = z.div(&dz, p).to_fx().abs();
            assert!(
                step.abs_lt(m.size * FloatExp::from_f64(1e-20)),
                "1e-{exp}: {step:?}"
            );
        }
    }
}

#[cfg(test)]
mod bla_tests {
    use super::*;

    /// With the BLA table, a minibrot view at 1e-300 (period 401, where `|δz|²` underflows
    /// f64 for most of the orbit) gives the escape times of plain perturbation, and skips
    /// most iterations.
    #[test]
    fn bla_keeps_escape_times_and_skips_most_iterations_at_1e_300() {
        let near = near_i(150, 24, 16).unwrap();
        let m = find_minibrot(
            &near.center_re,
            &near.center_im,
            FloatExp::new(0.5, -498),
            2 * near.precision_bits + 64,
            10_000,
        )
        .expect("a minibrot near i");
        let v = m.view(24, 16).unwrap();
        let max_iter = 30 * m.period;
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let job = v.job(max_iter, 4.0);
        let table = bla_table(&orbit, &job, BLA_EPS);
        let plain = render_job_cpu(&job, &orbit, &[]);
        let skipping = render_job_cpu(&job, &orbit, &table);
        let same = plain
            .iter()
            .zip(&skipping)
            .filter(|(a, b)| a.n == b.n)
            .count();
        assert_eq!(same, plain.len(), "BLA changed escape times");
        assert!(plain.iter().any(|p| p.n < max_iter), "nothing escaped");
        let skipped: u64 = skipping.iter().map(|p| u64::from(p.skipped)).sum();
        let total: u64 = skipping.iter().map(|p| u64::from(p.n)).sum();
        assert!(skipped * 10 > total * 9, "skipped {skipped} of {total}");
    }

    /// Beyond f64's range (a minibrot view at about 6e-401, pixel spacing 2^-1333): the
    /// escape times by perturbation, with and without BLA, equal the direct iteration's. An
    /// odd size puts a row and a column at δc.im = 0 and δc.re = 0 exactly. Two faults this
    /// caught: a zero part of δc counted as exponent 0 (so δc "fitted" f64 and entered as
    /// 0), and f64 steps whose result fell far below f64's range at once (near the
    /// minibrot, Z passes close to 0 and 2·Z·δz and δz² underflow while δc matters again):
    /// every pixel then reached max_iter.
    #[test]
    fn perturbation_matches_direct_iteration_beyond_f64_at_a_minibrot() {
        let (w, h) = (7, 5);
        let near = near_i(200, w, h).unwrap();
        let m = find_minibrot(
            &near.center_re,
            &near.center_im,
            FloatExp::new(0.5, -664),
            2 * near.precision_bits + 64,
            100_000,
        )
        .expect("a minibrot near i");
        let v = m.view(w, h).unwrap();
        assert!(
            v.spacing().exponent() < Some(-1100),
            "not beyond f64's range"
        );
        let max_iter = 20 * m.period;
        let orbit = reference_orbit(&v.center_re, &v.center_im, v.precision_bits, max_iter);
        let job = v.job(max_iter, 4.0);
        let table = bla_table(&orbit, &job, BLA_EPS);
        let direct = render_direct(&v, max_iter);
        assert!(direct.iter().any(|&n| n < max_iter), "nothing escaped");
        for (what, bla) in [("perturbation", &[][..]), ("with BLA", &table[..])] {
            let got: Vec<u32> = render_job_cpu(&job, &orbit, bla)
                .iter()
                .map(|p| p.n)
                .collect();
            assert_eq!(got, direct, "{what} against the direct iteration");
        }
    }
}
