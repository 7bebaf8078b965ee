//! Perturbation: escape times of deep-zoom pixels from one high-precision reference orbit.
//!
//! The reference orbit `Z_0 = 0, Z_{k+1} = Z_k² + C` of the view's centre `C` is computed once
//! in arbitrary precision (on the host) and stored rounded to `f64`. A pixel `c = C + δc`
//! then iterates only its difference from the reference, `z_n = Z_m + δz`:
//! `δz ← (2·Z_m + δz)·δz + δc`, in `f64` or [`FloatExp`] (for `δc` below `f64`'s range).
//!
//! **Rebasing** (Zhuoran, 2021): when `|Z_m + δz| < |δz|` (the pixel's orbit passes nearer to
//! 0 than its difference from the reference), or the reference orbit ends, the pixel restarts
//! from the reference's beginning: `δz ← Z_m + δz`, `m ← 0` (`Z_0 = 0`, so `z` is unchanged).
//! This keeps `|δz|` small relative to `|z|`, where the difference iteration is accurate, so
//! no "glitches" need detecting afterwards.
//!
//! Counts follow [`crate::escape_time`]: the smallest `n` in `1..=max_iter` with
//! `|z_n|² > bailout_sqr`, else `max_iter`.

use crate::{
    Complex, Real,
    bla::{self, Bla},
    floatexp::{ComplexFx, FloatExp},
};

/// The outcome of a perturbed iteration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Perturbed {
    /// The escape time (see the [module docs](self)).
    pub n: u32,
    /// `|z_n|²` at escape (`0` when the orbit did not escape).
    pub norm_sqr: f64,
    /// How many times the pixel rebased onto the reference's start.
    pub rebases: u32,
    /// Iterations skipped by bilinear approximation (included in `n`).
    pub skipped: u32,
}

/// A deep-zoom render for the perturbation kernels and the CPU renderer alike: the pixel grid
/// around the reference point and the iteration settings. Pixel `(x, y)` (row 0 at the top)
/// samples `C + δc` with `δc = spacing · (x + ½ − w/2, −(y + ½ − h/2))`.
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
#[repr(C)]
pub struct DeepJob {
    /// Distance between adjacent pixel centres (real and imaginary axes alike).
    pub spacing: FloatExp,
    /// Image width in pixels.
    pub width_px: u32,
    /// Image height in pixels.
    pub height_px: u32,
    /// Iteration limit.
    pub max_iter: u32,
    /// Escape when `|z|²` exceeds this (4, or a larger radius for smooth colouring).
    pub bailout_sqr: f64,
}

/// Pixel `(x, y)`'s offset from the centre of a `width_px × height_px` image, in pixels, with
/// the imaginary axis pointing up: `(x + ½ − w/2, −(y + ½ − h/2))` (exact in `f64`).
#[inline(always)]
pub fn pixel_offset(width_px: u32, height_px: u32, x: u32, y: u32) -> (f64, f64) {
    (
        x as f64 + 0.5 - width_px as f64 / 2.0,
        -(y as f64 + 0.5 - height_px as f64 / 2.0),
    )
}

impl DeepJob {
    /// `δc` of pixel `(x, y)`: its offset from the centre ([`pixel_offset`]) times the
    /// spacing.
    #[inline(always)]
    pub fn delta(&self, x: u32, y: u32) -> ComplexFx {
        let (ox, oy) = pixel_offset(self.width_px, self.height_px, x, y);
        ComplexFx::new(
            self.spacing * FloatExp::from_f64(ox),
            self.spacing * FloatExp::from_f64(oy),
        )
    }

    /// Pixel `(x, y)` iterated by [`escape_bla`] against `orbit` (the reference orbit of the
    /// view's centre, at least 2 entries) and its BLA table `bla` (empty: no skipping).
    #[inline(always)]
    pub fn escape(&self, orbit: &[Complex<f64>], bla: &[Bla], x: u32, y: u32) -> Perturbed {
        escape_bla(
            orbit,
            bla,
            self.delta(x, y),
            self.max_iter,
            self.bailout_sqr,
        )
    }
}

/// Below this `|δz|` (`2⁻⁹⁰⁰`), [`escape_fx`] iterates in [`FloatExp`]; above it, in `f64`.
/// Far enough above `f64`'s smallest normal (`2⁻¹⁰²²`) that `δz²` terms a few steps on are
/// still represented.
pub const F64_DELTA_MIN_EXP: i32 = -900;

/// One perturbed step in `f64`: `(2·Z + δz)·δz + δc`, products with fused multiply-adds.
#[inline(always)]
fn step_f64(z: Complex<f64>, dz: (f64, f64), dc: (f64, f64)) -> (f64, f64) {
    let ar = 2.0 * z.re + dz.0;
    let ai = 2.0 * z.im + dz.1;
    (
        Real::mul_add(ar, dz.0, Real::mul_add(-ai, dz.1, dc.0)),
        Real::mul_add(ar, dz.1, Real::mul_add(ai, dz.0, dc.1)),
    )
}

/// Escape time of `C + δc` with `f64` differences, given the reference orbit `orbit`
/// (`orbit[k] = Z_k` rounded to `f64`, `orbit[0] = 0`, at least 2 entries). For views whose
/// `δc` are all representable in `f64` (pixel spacing above about `10⁻³⁰⁰`).
///
/// ```
/// # use common::{Complex, escape_time, perturb::escape_f64};
/// // Reference C = -1 (period 2: 0, -1, 0, -1, ...); the pixel -1 + 0.3 escapes like the
/// // direct iteration of -0.7.
/// let orbit: Vec<Complex<f64>> = (0..100).map(|k| Complex::new(-((k % 2) as f64), 0.0)).collect();
/// let p = escape_f64(&orbit, (0.3, 0.0), 100, 4.0);
/// assert_eq!(p.n, escape_time(Complex::new(-0.7_f64, 0.0), 100));
/// ```
#[inline(always)]
pub fn escape_f64(
    orbit: &[Complex<f64>],
    dc: (f64, f64),
    max_iter: u32,
    bailout_sqr: f64,
) -> Perturbed {
    let mut at = Progress::default();
    let no_table = (&[][..], 0, ComplexFx::ZERO);
    // Never leaves early: the run ends at escape or max_iter.
    match f64_steps(
        orbit,
        no_table,
        dc,
        (0.0, 0.0),
        &mut at,
        max_iter,
        bailout_sqr,
        None,
    ) {
        Ok(p) => p,
        Err(_) => unreachable!("f64_steps leaves early only when asked to"),
    }
}

/// Where a pixel's perturbed iteration stands.
#[derive(Clone, Copy, Default)]
struct Progress {
    /// Reference index.
    m: usize,
    /// Iterations done.
    n: u32,
    /// Rebases so far.
    rebases: u32,
    /// Iterations skipped by BLA so far.
    skipped: u32,
}

impl Progress {
    /// One iteration done: the reference index moves on by one.
    #[inline(always)]
    fn step(&mut self) {
        self.m += 1;
        self.n += 1;
    }

    /// `len` iterations skipped by one BLA entry.
    #[inline(always)]
    fn skip(&mut self, len: u32) {
        self.m += len as usize;
        self.n += len;
        self.skipped += len;
    }

    fn result(&self, n: u32, norm_sqr: f64) -> Perturbed {
        Perturbed {
            n,
            norm_sqr,
            rebases: self.rebases,
            skipped: self.skipped,
        }
    }
}

/// When [`f64_steps`] must hand a pixel back to the [`FloatExp`] loop: `δc`'s exponent and
/// whether `δc` is exact in `f64` (see [`escape_bla`]).
#[derive(Clone, Copy)]
struct Guard {
    dc_fits: bool,
    dc_exp: i32,
}

impl Guard {
    /// Whether `δz = d`, just computed in `f64` (or rounded to it), is accurate: above
    /// `2⁻⁹⁰⁰` ([`F64_DELTA_MIN_EXP`]), so that every product that underflowed on the way
    /// (each off by at most `2⁻¹⁰⁷⁴`) is negligible beside it, and with `δc` exact or below
    /// `2⁻⁶⁴·|δz|` (it entered as its `f64` value, perhaps 0).
    #[inline(always)]
    fn accepts(self, d: (f64, f64)) -> bool {
        self.accepts_exponent(ComplexFx::from_f64(d.0, d.1).exponent())
    }

    /// [`Guard::accepts`] for a `δz` of [`ComplexFx::exponent`] `e` (zero: `i32::MIN`,
    /// refused; checked first, so `e - 64` cannot overflow).
    #[inline(always)]
    fn accepts_exponent(self, e: i32) -> bool {
        e > F64_DELTA_MIN_EXP && (self.dc_fits || self.dc_exp < e - 64)
    }
}

/// Perturbed steps in `f64` from `δz = d`: each a BLA skip when the table (`bla`: entries,
/// level-0 length, and `δc` in [`FloatExp`] for applying them) has a valid one, else one step
/// with `δc = dc`; after each, the escape test and rebasing. `Ok` at escape or `max_iter`.
///
/// With a `guard`, each new `δz` must pass [`Guard::accepts`] before the step counts:
/// otherwise `Err(δz)` with `δz` and the progress as they were before that step, for the
/// caller to take the step in [`FloatExp`]. (A step can fall from `2⁻⁹⁰⁰` to far below
/// `f64`'s range at once: near a minibrot, `Z` passes close to 0 and `2·Z·δz` and `δz²`
/// underflow while `δc` matters again.) Also `Err` after a rebase that leaves `|δz|` at
/// `2⁻⁹⁰⁰` or below.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn f64_steps(
    orbit: &[Complex<f64>],
    (bla, n0, dc_fx): (&[Bla], u32, ComplexFx),
    dc: (f64, f64),
    mut d: (f64, f64),
    at: &mut Progress,
    max_iter: u32,
    bailout_sqr: f64,
    guard: Option<Guard>,
) -> Result<Perturbed, (f64, f64)> {
    let last = orbit.len() - 1;
    let accepted = |d: (f64, f64)| guard.is_none_or(|g| g.accepts(d));
    while at.n < max_iter {
        let skip = if n0 == 0 {
            None
        } else {
            // |δz|² in FloatExp: in f64 it underflows for |δz| below 1e-154.
            let d2 = ComplexFx::from_f64(d.0, d.1).norm_sqr();
            bla::lookup(bla, n0, at.m as u32, d2, max_iter - at.n)
        };
        if let Some(e) = skip {
            let dzf = ComplexFx::from_f64(d.0, d.1);
            let next = (e.a * dzf + e.b * dc_fx).to_f64();
            if !accepted(next) {
                return Err(d);
            }
            d = next;
            at.skip(e.len);
        } else {
            let next = step_f64(orbit[at.m], d, dc);
            if !accepted(next) {
                return Err(d);
            }
            d = next;
            at.step();
        }
        let zr = orbit[at.m].re + d.0;
        let zi = orbit[at.m].im + d.1;
        let r2 = Real::mul_add(zi, zi, zr * zr);
        if r2 > bailout_sqr {
            return Ok(at.result(at.n, r2));
        }
        let d2 = Real::mul_add(d.1, d.1, d.0 * d.0);
        if r2 < d2 || at.m == last {
            d = (zr, zi);
            at.m = 0;
            at.rebases += 1;
            if !accepted(d) {
                return Err(d);
            }
        }
    }
    Ok(at.result(max_iter, 0.0))
}

/// One perturbed step in [`FloatExp`]: `(2·Z + δz)·δz + δc`.
#[inline(always)]
fn step_fx(z: Complex<f64>, dz: ComplexFx, dc: ComplexFx) -> ComplexFx {
    let two_z = ComplexFx::from_f64(2.0 * z.re, 2.0 * z.im);
    (two_z + dz) * dz + dc
}

/// Escape time of `C + δc` for any `δc`, however small: differences in [`FloatExp`] while
/// `|δz| < 2⁻⁹⁰⁰` ([`F64_DELTA_MIN_EXP`]), then in `f64` (the steps of [`escape_f64`]) once
/// `δc` is either in `f64`'s range too or negligible beside `δz` (`|δc| < 2⁻⁶⁴·|δz|`, below
/// `f64`'s rounding; `δc` then enters as its `f64` value, perhaps 0). Any step whose `f64`
/// result would fail those conditions (a fall below `2⁻⁹⁰⁰`, as near a minibrot where `Z`
/// passes close to 0, or a rebase to a small `δz`) is taken in [`FloatExp`] instead, and the
/// pixel returns to `f64` when `|δz|` allows. `orbit` as for [`escape_f64`].
pub fn escape_fx(
    orbit: &[Complex<f64>],
    dc: ComplexFx,
    max_iter: u32,
    bailout_sqr: f64,
) -> Perturbed {
    escape_bla(orbit, &[], dc, max_iter, bailout_sqr)
}

/// [`escape_fx`] skipping iterations with the bilinear-approximation table `bla` (built for
/// `orbit`, see [`crate::bla`]; empty: no skipping): before each step, the longest valid
/// entry at the reference index replaces that many steps, `δz ← A·δz + B·δc` in
/// [`FloatExp`]. [`Perturbed::skipped`] counts the iterations skipped.
pub fn escape_bla(
    orbit: &[Complex<f64>],
    bla: &[Bla],
    dc: ComplexFx,
    max_iter: u32,
    bailout_sqr: f64,
) -> Perturbed {
    let last = orbit.len() - 1;
    let n0 = if bla.is_empty() {
        0
    } else {
        bla::level0_len(orbit.len())
    };
    let dc_f64 = dc.to_f64();
    let dc_exp = dc.exponent();
    // δc enters the f64 steps as its f64 value: exactly when it is in f64's normal range, or
    // rounded (perhaps to 0) when it is negligible beside δz.
    let dc_fits = dc_exp == i32::MIN || dc_exp > F64_DELTA_MIN_EXP;
    let guard = Guard { dc_fits, dc_exp };
    let mut dz = ComplexFx::ZERO;
    let mut at = Progress::default();
    // Set when the f64 steps handed a step back: take it here before trying f64 again.
    let mut handed_back = false;
    while at.n < max_iter {
        // The f64 steps' own condition on each result, applied to where they would start.
        let in_f64 = !handed_back && guard.accepts_exponent(dz.exponent());
        handed_back = false;
        if in_f64 {
            // f64 steps until escape, max_iter, or a step that needs FloatExp.
            let table = (bla, n0, dc);
            match f64_steps(
                orbit,
                table,
                dc_f64,
                dz.to_f64(),
                &mut at,
                max_iter,
                bailout_sqr,
                Some(guard),
            ) {
                Ok(p) => return p,
                Err(d) => {
                    dz = ComplexFx::from_f64(d.0, d.1);
                    handed_back = true;
                    continue;
                }
            }
        }
        let skip = if n0 == 0 {
            None
        } else {
            bla::lookup(bla, n0, at.m as u32, dz.norm_sqr(), max_iter - at.n)
        };
        if let Some(e) = skip {
            dz = e.a * dz + e.b * dc;
            at.skip(e.len);
        } else {
            dz = step_fx(orbit[at.m], dz, dc);
            at.step();
        }
        let z = ComplexFx::from_f64(orbit[at.m].re, orbit[at.m].im) + dz;
        let r2 = z.norm_sqr().to_f64();
        if r2 > bailout_sqr {
            return at.result(at.n, r2);
        }
        if z.norm_sqr().abs_lt(dz.norm_sqr()) || at.m == last {
            dz = z;
            at.m = 0;
            at.rebases += 1;
        }
    }
    at.result(max_iter, 0.0)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::escape_time;
    use std::{vec, vec::Vec};

    fn orbit_of(c: Complex<f64>, len: usize) -> Vec<Complex<f64>> {
        let mut z = Complex::new(0.0, 0.0);
        let mut out = vec![z];
        for _ in 1..len {
            z = Complex::new(z.re * z.re - z.im * z.im + c.re, 2.0 * z.re * z.im + c.im);
            out.push(z);
            if z.re * z.re + z.im * z.im > 1e6 {
                break;
            }
        }
        out
    }

    #[test]
    fn shallow_views_agree_with_the_direct_loop() {
        // Reference at a boundary point; pixels around it at spacing 1e-3, where f64 direct
        // iteration is exact enough that both should agree nearly everywhere.
        let c0 = Complex::new(-0.743_643_887_037_151, 0.131_825_904_205_33);
        let orbit = orbit_of(c0, 2001);
        let (mut same, mut same_fx, mut total) = (0, 0, 0);
        for y in -20..20 {
            for x in -20..20 {
                let dc = (f64::from(x) * 1e-3, f64::from(y) * 1e-3);
                let direct = escape_time(Complex::new(c0.re + dc.0, c0.im + dc.1), 2000);
                let p = escape_f64(&orbit, dc, 2000, 4.0);
                let q = escape_fx(&orbit, ComplexFx::from_f64(dc.0, dc.1), 2000, 4.0);
                total += 1;
                same += usize::from(p.n == direct);
                same_fx += usize::from(p.n == q.n);
            }
        }
        // The perturbed and the direct loops round differently, so chaotic boundary pixels
        // may differ; the FloatExp loop runs the f64 steps after its first and rarely differs.
        assert!(same * 1000 >= total * 995, "{same} of {total}");
        assert!(same_fx * 1000 >= total * 999, "{same_fx} of {total}");
    }

    #[test]
    fn an_escaping_reference_forces_rebases_and_still_agrees() {
        // The reference escapes after a few steps (C = 0.3, outside the set); pixels inside
        // the set near it must rebase at the orbit's end and keep iterating.
        let orbit = orbit_of(Complex::new(0.3, 0.0), 1000);
        assert!(orbit.len() < 50);
        for dc in [(-0.3, 0.0), (-0.55, 0.1), (-1.3, 0.02)] {
            let p = escape_f64(&orbit, dc, 500, 4.0);
            let direct = escape_time(Complex::new(0.3 + dc.0, dc.1), 500);
            assert_eq!(p.n, direct, "{dc:?}");
            assert!(p.rebases > 0);
        }
    }

    #[test]
    fn floatexp_differences_reach_below_f64() {
        // δc = 1e-320·(1, 0) is subnormal in f64 and 1e-400 is zero; the FloatExp loop still
        // sees it. At the reference C = 0 (in the set, orbit constant 0) the pixel stays in
        // the set; at C = 0.25 + tiny the count is the same as C = 0.25's within max_iter.
        let orbit = orbit_of(Complex::new(0.0, 0.0), 300);
        let tiny = ComplexFx::new(FloatExp::new(0.5, -1329), FloatExp::ZERO); // ≈ 1e-400
        assert_eq!(escape_fx(&orbit, tiny, 200, 4.0).n, 200);
        // Rebasing with FloatExp: pixel 2 + tiny escapes at n = 2 like c = 2 (z1 = 2, z2 = 6).
        let far = ComplexFx::new(
            FloatExp::from_f64(2.0) + FloatExp::new(0.5, -1329),
            FloatExp::ZERO,
        );
        assert_eq!(escape_fx(&orbit, far, 200, 4.0).n, 2);
    }
}
