//! The escape-time algorithm: the plain loop ([`escape_time`]) and the production loop
//! ([`escape`]), which skips work that cannot change the result.
//!
//! Both iterate `z ← z² + c` with the same operations, [`step`], written with explicit fused
//! multiply-adds (one `fma.rn` each on the GPU, correctly rounded and so bit-identical on the
//! CPU). [`escape`] adds three tests that never change a count:
//! - points well inside the main cardioid or the period-2 bulb ([`in_main_cardioid`],
//!   [`in_period2_bulb`]) return `max_iter` at once;
//! - periodicity checking (Brent): the orbit is compared *exactly* with a saved point; an
//!   exact repeat means the floating-point orbit is periodic, so it will never escape, and the
//!   loop returns `max_iter`, just as the plain loop would after running to the end.

use crate::{Complex, Real};

/// The squared bailout radius for smooth colouring: `|z|² > 2¹⁶` (radius 256). A large radius
/// makes the normalized iteration count ([`crate::palette::smooth_iter`]) accurate.
pub const SMOOTH_BAILOUT_SQR: f32 = 65_536.0;

/// The largest multiplier `1 − margin` below which the shortcut tests answer "inside".
///
/// [`in_main_cardioid`] and [`in_period2_bulb`] answer "inside" only for multipliers
/// `|μ| < 1 − m`, with the margin `m =` [`Real::MULTIPLIER_MARGIN`] (`10⁻³` in
/// `f32`, `10⁻⁷` in `f64`); points nearer the boundary are left to the iteration (and to
/// periodicity checking). The textbook test, `|μ| < 1`, has no margin at all.
///
/// Why these margins. Near the attracting fixed point (or cycle) the orbit contracts by `|μ|`
/// per step, so the rounding errors of the steps (about `ε·|z|` each, `ε` = machine epsilon)
/// add up to about `ε/(1 − |μ|)`, while the basin reaches at least `1 − |μ|` around it (for
/// `f(z) = α + μ(z − α) + (z − α)²`, `|f(z) − α| < |z − α|` when `|z − α| < 1 − |μ|`). The
/// floating-point orbit therefore stays trapped when `(1 − |μ|)² ≫ ε`: `1 − |μ| ≫ √ε`, which
/// is `2.4·10⁻⁴` for `f32` and `1.05·10⁻⁸` for `f64`. The margins are 4× and 9.5× that; the
/// unit tests run the plain loop for points just inside them. The tests' own rounding is far
/// below the margins (`|μ|²` is off by a few ulps), except near the cusp `c = 1/4`, where
/// `w = 1 − 4c` is small and `√w` amplifies the rounding of `w`: there the cardioid test keeps
/// the wider [`Real::CUSP_MULTIPLIER_MARGIN`].
pub const fn multiplier_limit(margin: f64) -> f64 {
    1.0 - margin
}

/// Below this `|1 − 4c|` (that is `|1 − μ|² < 0.01`), [`in_main_cardioid`] uses the wider
/// margin [`Real::CUSP_MULTIPLIER_MARGIN`] (`|μ| < 0.95` in `f32`). Any `f32` point it accepts
/// there has `|1 − 4c| ≥ 0.0024` (from `|μ|² = 1 + |w| − 2·Re √w < 0.95²`), so the rounding
/// of `w` (half an ulp of 1) is at most 2.5·10⁻⁵ of `w`; at or above it the rounding of `w` is
/// at most 6·10⁻⁶ of `w` in `f32`, and `|μ|²` is off by about 10⁻⁵, against a margin of
/// 2·10⁻³.
pub const CUSP_W_MIN: f64 = 0.01;

/// One step `z ← z² + c` of the orbit, and `|z|²` of the new `z`:
/// `re' = fma(re, re, fma(-im, im, c.re))`, `im' = fma(2·re, im, c.im)` (`2·re` is exact),
/// `|z'|² = fma(im', im', re'·re')`.
///
/// ```
/// # use common::{Complex, escape::step};
/// // (1 + 2i)² + (0.5 - 1i) = -3 + 4i + 0.5 - i = -2.5 + 3i, |z|² = 6.25 + 9.
/// assert_eq!(step(1.0_f64, 2.0, Complex::new(0.5, -1.0)), (-2.5, 3.0, 15.25));
/// ```
#[inline(always)]
pub fn step<F: Real>(re: F, im: F, c: Complex<F>) -> (F, F, F) {
    let new_re = re.mul_add(re, (-im).mul_add(im, c.re));
    let new_im = (re + re).mul_add(im, c.im);
    let norm_sqr = new_im.mul_add(new_im, new_re * new_re);
    (new_re, new_im, norm_sqr)
}

/// Escape time of `c`: the smallest `n` in `1..=max_iter` such that `|z_n|² > 4`, where
/// `z_0 = 0` and `z_{k+1} = z_k² + c` computed by [`step`]; `max_iter` if the orbit has not
/// escaped after `max_iter` iterations. A result equal to `max_iter` means "taken to be in the
/// set". This is the plain reference loop; [`escape`] gives the same counts faster.
///
/// The result is therefore in `1..=max_iter` (`0` only when `max_iter == 0`). Every operation
/// is correctly rounded, so CPU and GPU give the same count for the same `c`.
///
/// ```
/// # use common::{Complex, escape_time};
/// assert_eq!(escape_time(Complex::new(0.0_f64, 0.0), 100), 100); // in the set
/// assert_eq!(escape_time(Complex::new(3.0_f64, 0.0), 100), 1); // z1 = 3, |z1|² = 9 > 4
/// assert_eq!(escape_time(Complex::new(2.0_f64, 0.0), 100), 2); // z1 = 2 (not > 4), z2 = 6
/// ```
#[inline(always)]
pub fn escape_time<F: Real>(c: Complex<F>, max_iter: u32) -> u32 {
    let mut re = F::ZERO;
    let mut im = F::ZERO;
    let mut n = 0;
    while n < max_iter {
        let (r, i, norm_sqr) = step(re, im, c);
        re = r;
        im = i;
        n += 1;
        if norm_sqr > F::BAILOUT_SQR {
            return n;
        }
    }
    max_iter
}

/// The outcome of [`escape`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Escape {
    /// The escape time: the first `n` with `|z_n|²` above the bailout, or `max_iter` when the
    /// orbit did not escape (then the point is taken to be in the set).
    pub n: u32,
    /// `|z_n|²` at escape, rounded to `f32` (for smooth colouring); `0` when `n == max_iter`
    /// without escaping.
    pub norm_sqr: f32,
}

impl Escape {
    /// The result for a point taken to be in the set.
    #[inline(always)]
    pub const fn inside(max_iter: u32) -> Self {
        Self {
            n: max_iter,
            norm_sqr: 0.0,
        }
    }
}

/// Escape time of `c` with bailout `|z|² > bailout_sqr`, with the shortcuts described in the
/// [module documentation](self): for `bailout_sqr = 4`, `escape(c, m, 4).n` equals
/// [`escape_time(c, m)`](escape_time) for every `c` (the shortcuts only ever return
/// `max_iter` for points whose plain loop runs to `max_iter`).
///
/// ```
/// # use common::{Complex, escape::escape, escape_time};
/// let c = Complex::new(-0.1226_f32, 0.7449); // centre of the period-3 bulb: periodic orbit
/// assert_eq!(escape(c, 5000, 4.0).n, escape_time(c, 5000));
/// assert_eq!(escape(Complex::new(3.0_f64, 0.0), 100, 4.0).norm_sqr, 9.0);
/// ```
#[inline(always)]
pub fn escape<F: Real>(c: Complex<F>, max_iter: u32, bailout_sqr: F) -> Escape {
    escape_chunked::<F, CHUNK_ITERS, PLAIN_ITERS>(c, max_iter, bailout_sqr).0
}

/// Orbit steps per chunk of the production loop ([`escape`]). A power of two (cheap
/// checkpoint arithmetic); it balances the per-chunk overhead (about 12 instructions: the
/// periodicity comparison, checkpointing and loop control) against the steps a chunk computes
/// past an escape and then recomputes (`CHUNK_ITERS - 1 + CHUNK_ITERS` at most). On an H200
/// (`ferrocuda mandelbrot-bench`, 8192², max_iter 1000), 8 was faster than 16 on the full view
/// and the minibrot but slower on seahorse and elephant valley, and slower on most views at
/// max_iter 20000: 16 is kept.
pub const CHUNK_ITERS: u32 = 16;

/// Plain steps before the production loop ([`escape`]) starts its chunks.
pub const PLAIN_ITERS: u32 = 32;

/// The work the production loop did for one point: chunks of plain steps and single steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Chunks computed (including a chunk that escaped and was then recomputed).
    pub chunks: u32,
    /// Steps computed one at a time (a recomputed chunk, the last steps before `max_iter`).
    pub single_steps: u32,
}

impl Work {
    /// All orbit steps computed, with chunks of `chunk` steps.
    pub const fn steps(&self, chunk: u32) -> u32 {
        self.chunks * chunk + self.single_steps
    }
}

/// [`escape`], and the number of orbit steps actually computed, counting the steps of a chunk
/// computed past an escape and the steps recomputed to find it (for tests and benchmarks).
#[inline(always)]
pub fn escape_counted<F: Real>(c: Complex<F>, max_iter: u32, bailout_sqr: F) -> (Escape, u32) {
    let (e, work) = escape_chunked::<F, CHUNK_ITERS, PLAIN_ITERS>(c, max_iter, bailout_sqr);
    (e, work.steps(CHUNK_ITERS))
}

/// The production loop with a plain prefix of `PLAIN` (≥ 1) steps and then chunks of `CHUNK`
/// (≥ 1) steps: [`escape`] is `escape_chunked::<F, `[`CHUNK_ITERS`]`, `[`PLAIN_ITERS`]`>`.
/// Returns the result and the [`Work`] done. `bailout_sqr` must be finite and non-negative.
///
/// - **Plain prefix.** The first `PLAIN` steps are the plain loop's, one [`step`] and one
///   bailout test each: most points of a typical view escape within a few dozen steps, and
///   for them a chunk would mostly compute steps past the escape and then recompute them.
/// - **Chunks.** Then the orbit advances `CHUNK` steps with no branch and no loop counter,
///   in one of two ways:
///   - *Escape tested at the chunk's end* (`f64`, `CHUNK ≤` [`Real::END_TEST_MAX_CHUNK`]):
///     the steps compute `z` only (three fused multiply-adds and `re + re`: no `|z|²`, no
///     test), and the chunk raises the alarm unless `|z|²` at its end is at most
///     `B − B/256` (`B = bailout_sqr`, `R = √B ≥ 2`). Why no escape is missed: once
///     `|z_k| > R` (with `|c| ≤ R`, which holds after the first step), `|z_{k+1}| ≥
///     |z_k|² − |c|` exceeds `R` by at least 4 times `|z_k| − R`, so in exact arithmetic
///     `|z|` stays above `R` for the rest of the chunk. Rounding (a few ulps per step,
///     relative) can eat into that excess by at most about `4^15 · 8ε ≈ 4·10⁻⁶` over 16
///     steps in `f64` (`ε = 1.1·10⁻¹⁶`), far less than the margin `B/256 ≥ 1/64`; an orbit
///     that overflows ends in ∞ or NaN, which also raises it. (In `f32` the same bound is
///     above 1: not used.) Non-escaping orbits whose end `|z|²` lies in the margin are
///     false alarms, recomputed like any other.
///   - *Escape tested at every step* (`f32`): the only extra work per step is an integer
///     maximum of [`Real::order_key`]`(|z|²)`. If the maximum stays below
///     [`Real::key_above`]`(bailout_sqr)`, no step of the chunk exceeded the bailout —
///     exactly what the plain loop would have seen. Chunk steps compute `2·re` with
///     [`Real::double_keyed`], whose key joins the maximum: it flags the rare `re` (zero,
///     subnormal) where that doubling is not exactly the plain step's `re + re`.
/// - **Recomputing.** Otherwise the chunk loop ends and the chunk is recomputed from its start
///   with the plain [`step`], one step at a time, which finds the first step above the
///   bailout: the plain loop's answer (the steps past an escape, which may overflow to ∞ or
///   NaN, are thrown away). On the GPU the threads of a warp that left the chunk loop wait for
///   each other, so a warp recomputes once, not once per chunk in which some thread escaped.
///   When the key test was a false alarm (an `f64` `|z|²` at most the bailout sharing its
///   high word, or a flagged doubling), chunks resume.
/// - **Periodicity** (Brent) is checked at chunk ends only: z is compared bit for bit with the
///   value saved at the end of the prefix and then after chunk `2^k`; an exact repeat proves
///   the orbit periodic, so it never escapes. Checking less often only finds a cycle later,
///   never wrongly.
/// - The last `max_iter mod CHUNK` steps run one at a time.
/// - A NaN `c` returns `max_iter` at once: the plain loop's NaN orbit never escapes.
#[inline(always)]
pub fn escape_chunked<F: Real, const CHUNK: u32, const PLAIN: u32>(
    c: Complex<F>,
    max_iter: u32,
    bailout_sqr: F,
) -> (Escape, Work) {
    let mut work = Work::default();
    // `x != x` only for NaN.
    #[allow(clippy::eq_op)]
    let nan = c.re != c.re || c.im != c.im;
    if nan || in_main_cardioid(c) || in_period2_bulb(c) {
        return (Escape::inside(max_iter), work);
    }
    let chunk = if CHUNK == 0 { 1 } else { CHUNK };
    // The prefix: the plain loop, at least the first step (z_0 = 0 would make every first
    // chunk a false alarm of `double_keyed`, which flags zeros).
    let prefix = if PLAIN == 0 { 1 } else { PLAIN }.min(max_iter);
    let mut re = F::ZERO;
    let mut im = F::ZERO;
    let mut n: u32 = 0;
    while n < prefix {
        let (r, i, norm_sqr) = step(re, im, c);
        re = r;
        im = i;
        n += 1;
        if norm_sqr > bailout_sqr {
            work.single_steps = n;
            let e = Escape {
                n,
                norm_sqr: norm_sqr.to_f32(),
            };
            return (e, work);
        }
    }
    work.single_steps = n;
    if n == max_iter {
        return (Escape::inside(max_iter), work);
    }
    let threshold = bailout_sqr.key_above();
    // Test for escape at chunk ends only (see below), where the precision allows it.
    let end_test = chunk <= F::END_TEST_MAX_CHUNK;
    let end_limit = bailout_sqr - bailout_sqr / F::from_u32(256);
    // The checkpoint: z at the end of the prefix, then after chunk 2^k.
    let mut saved_re = re;
    let mut saved_im = im;
    // Chunks completed without escaping (a recomputed false alarm counts as one).
    let mut chunks_done = 0u32;
    // After a completed chunk: `true` if z repeats the checkpoint; moves the checkpoint after
    // chunks 1, 2, 4, 8, …
    let mut periodic = |re: F, im: F| {
        // The orbit is a function of z alone, so an exact repeat repeats forever: it never
        // escapes.
        if re.same_bits(saved_re) && im.same_bits(saved_im) {
            return true;
        }
        chunks_done += 1;
        if chunks_done & (chunks_done - 1) == 0 {
            saved_re = re;
            saved_im = im;
        }
        false
    };
    loop {
        while max_iter - n >= chunk {
            let (start_re, start_im) = (re, im);
            let mut key = 0u32;
            let mut k = 0;
            while k < chunk {
                if end_test {
                    let (r, i) = step_without_norm(re, im, c);
                    re = r;
                    im = i;
                } else {
                    let (r, i, norm_sqr, double_key) = step_doubled(re, im, c);
                    re = r;
                    im = i;
                    key = key.max(norm_sqr.order_key()).max(double_key);
                }
                k += 1;
            }
            work.chunks += 1;
            let alarm = if end_test {
                // Not `≤`, NaN included: an overflowed orbit raises the alarm too.
                #[allow(clippy::neg_cmp_op_on_partial_ord)]
                let alarm = !(im.mul_add(im, re * re) <= end_limit);
                alarm
            } else {
                key >= threshold
            };
            if alarm {
                // Maybe escaped (or a doubling was not exact): recompute this chunk one step
                // at a time, below.
                re = start_re;
                im = start_im;
                break;
            }
            n += chunk;
            if periodic(re, im) {
                return (Escape::inside(max_iter), work);
            }
        }
        // One step at a time: the chunk that may have escaped (it ends before max_iter), or
        // the last steps up to max_iter.
        let stop = if max_iter - n >= chunk {
            n + chunk
        } else {
            max_iter
        };
        while n < stop {
            let (r, i, norm_sqr) = step(re, im, c);
            re = r;
            im = i;
            n += 1;
            work.single_steps += 1;
            if norm_sqr > bailout_sqr {
                let e = Escape {
                    n,
                    norm_sqr: norm_sqr.to_f32(),
                };
                return (e, work);
            }
        }
        if n == max_iter || periodic(re, im) {
            return (Escape::inside(max_iter), work);
        }
    }
}

/// [`step`] without `|z'|²`: the new `(re, im)` only, the same bits as [`step`]'s.
#[inline(always)]
fn step_without_norm<F: Real>(re: F, im: F, c: Complex<F>) -> (F, F) {
    let new_re = re.mul_add(re, (-im).mul_add(im, c.re));
    let new_im = (re + re).mul_add(im, c.im);
    (new_re, new_im)
}

/// [`step`] with `2·re` computed by [`Real::double_keyed`], and its key: the same bits as
/// [`step`] whenever the key is below the threshold and `re` comes from an orbit point below
/// the bailout (`|re|² ≤ |z|² ≤ bailout_sqr`, far below 2^1022).
#[inline(always)]
fn step_doubled<F: Real>(re: F, im: F, c: Complex<F>) -> (F, F, F, u32) {
    let (re2, key) = re.double_keyed();
    let new_re = re.mul_add(re, (-im).mul_add(im, c.re));
    let new_im = re2.mul_add(im, c.im);
    let norm_sqr = new_im.mul_add(new_im, new_re * new_re);
    (new_re, new_im, norm_sqr, key)
}

/// Whether `c` lies in the main cardioid with a multiplier `|μ| < 1 −`
/// [`Real::MULTIPLIER_MARGIN`] (`1 −` [`Real::CUSP_MULTIPLIER_MARGIN`] near the cusp, see
/// [`CUSP_W_MIN`] and [`multiplier_limit`]), where
/// `c = μ/2 - μ²/4` (the fixed point `μ/2` attracts with multiplier `μ`). Then the orbit of 0
/// converges to that fixed point and never escapes.
///
/// Solved for `μ`: `1 - 4c = (1 - μ)²`, so `μ = 1 - s` with `s = √(1 - 4c)` (principal root),
/// and `|μ|² = 1 - 2·Re s + |s|²`, where `|s|² = |1 - 4c|` and `Re s = √((|w| + Re w)/2)` for
/// `w = 1 - 4c`. Rounding moves `|μ|²` by a few ulps, far less than the margin to 1.
///
/// ```
/// # use common::{Complex, escape::in_main_cardioid};
/// assert!(in_main_cardioid(Complex::new(0.0_f64, 0.0))); // μ = 0
/// assert!(in_main_cardioid(Complex::new(0.2_f32, 0.0))); // μ = 1 - √0.2 ≈ 0.553
/// assert!(!in_main_cardioid(Complex::new(0.25_f64, 0.0))); // the cusp, μ = 1
/// assert!(!in_main_cardioid(Complex::new(-1.0_f64, 0.0))); // period-2 bulb, not the cardioid
/// ```
#[inline(always)]
pub fn in_main_cardioid<F: Real>(c: Complex<F>) -> bool {
    // Most points of a view lie outside the cardioid: reject them first with the textbook
    // test `q·(q + a) ≤ y²/4` (`a = x − 1/4`, `q = a² + y²`), a few multiplications and no
    // square root. Rounding can only make it reject a few points within ulps of the boundary
    // (`|μ| = 1`), which the test below would reject anyway (its limit is below 1): the
    // answer is the same, the loop only runs for those points.
    let quarter = F::ONE / (F::TWO + F::TWO);
    let a = c.re - quarter;
    let y_sqr = c.im * c.im;
    let q = a.mul_add(a, y_sqr);
    if q * (q + a) > quarter * y_sqr {
        return false;
    }
    let four = F::TWO + F::TWO;
    let w_re = F::ONE - four * c.re;
    let w_im = four * c.im;
    let w_abs = w_im.mul_add(w_im, w_re * w_re).sqrt();
    let s_re = ((w_abs + w_re) / F::TWO).sqrt();
    let mu_sqr = F::ONE + w_abs - F::TWO * s_re;
    let limit = multiplier_limit(if w_abs >= F::from_f64(CUSP_W_MIN) {
        F::MULTIPLIER_MARGIN
    } else {
        F::CUSP_MULTIPLIER_MARGIN
    });
    mu_sqr < F::from_f64(limit * limit)
}

/// Whether `c` lies in the period-2 bulb with a multiplier `|μ| < 1 −`
/// [`Real::MULTIPLIER_MARGIN`], where
/// the 2-cycle's multiplier is `μ = 4(c + 1)`: `|c + 1|² < (limit/4)²`.
///
/// ```
/// # use common::{Complex, escape::in_period2_bulb};
/// assert!(in_period2_bulb(Complex::new(-1.0_f64, 0.0))); // centre, μ = 0
/// assert!(in_period2_bulb(Complex::new(-1.2_f32, 0.0))); // μ = -0.8
/// assert!(!in_period2_bulb(Complex::new(-1.25_f64, 0.0))); // boundary, μ = -1
/// ```
#[inline(always)]
pub fn in_period2_bulb<F: Real>(c: Complex<F>) -> bool {
    let re = c.re + F::ONE;
    let limit = multiplier_limit(F::MULTIPLIER_MARGIN) / 4.0;
    c.im.mul_add(c.im, re * re) < F::from_f64(limit * limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = 1000;

    fn c64(re: f64, im: f64) -> Complex<f64> {
        Complex::new(re, im)
    }

    fn c32(re: f32, im: f32) -> Complex<f32> {
        Complex::new(re, im)
    }

    /// Independent reference: the documented loop on plain `f64`s with `libm`'s fused
    /// multiply-add (whatever backend `common::math` picked): `zr' = fma(zr, zr, cr - zi²)`
    /// with `cr - zi²` fused too, `zi' = fma(2·zr, zi, ci)`, bailout `fma(zi', zi', zr'²) > 4`.
    fn reference(cr: f64, ci: f64, max_iter: u32) -> u32 {
        let (mut zr, mut zi) = (0.0_f64, 0.0_f64);
        for n in 1..=max_iter {
            let new_zr = libm::fma(zr, zr, libm::fma(-zi, zi, cr));
            let new_zi = libm::fma(2.0 * zr, zi, ci);
            zr = new_zr;
            zi = new_zi;
            if libm::fma(zi, zi, zr * zr) > 4.0 {
                return n;
            }
        }
        max_iter
    }

    #[test]
    fn periodic_points_inside() {
        // c = 0: z stays 0.
        // c = -1: 0 → -1 → 0 → -1 … (period 2, |z|² ≤ 1).
        // c = -2 (the tip): 0 → -2 → 2 → 2 … ; |z|² = 4 is not > 4, so it never escapes.
        // c = i: 0 → i → -1+i → -i → -1+i … (period 2 after one step, |z|² ≤ 2).
        // c = -i: the conjugate orbit.
        // All values are small integers, so the arithmetic is exact in f32 and f64.
        for (re, im) in [
            (0.0, 0.0),
            (-1.0, 0.0),
            (-2.0, 0.0),
            (0.0, 1.0),
            (0.0, -1.0),
        ] {
            assert_eq!(escape_time(c64(re, im), MAX), MAX, "f64 c = {re}+{im}i");
            assert_eq!(
                escape_time(c32(re as f32, im as f32), MAX),
                MAX,
                "f32 c = {re}+{im}i"
            );
        }
    }

    #[test]
    fn real_segment_inside_even_with_rounding() {
        // For real c in [-2, 0]: if z ∈ [c, c² + c] then |z| ≤ |c| (because |c² + c| =
        // |c|·|c + 1| ≤ |c|), so z² ∈ [0, c²] and z² + c ∈ [c, c² + c]. Rounding to nearest is
        // monotonic and the end points are the rounded values themselves, so the interval stays
        // invariant in floating point too (z² + c is rounded once, by a fused multiply-add), and
        // |z|² ≤ c² ≤ 4 never exceeds 4.
        // For c in [0, 1/4]: z ∈ [0, 1/2] ⇒ z² ≤ 1/4 ⇒ z² + c ≤ 1/2 (again exact end points,
        // monotonic rounding). This covers -0.75 (the cardioid/bulb junction) and 0.25 (the cusp).
        for k in 0..=144 {
            let re = -2.0 + f64::from(k) / 64.0; // -2, -2 + 1/64, …, 0.25 (all exact)
            assert_eq!(escape_time(c64(re, 0.0), MAX), MAX, "f64 c = {re}");
            assert_eq!(escape_time(c32(re as f32, 0.0), MAX), MAX, "f32 c = {re}");
        }
        assert_eq!(escape_time(c64(-0.75, 0.0), 100_000), 100_000);
        assert_eq!(escape_time(c64(0.25, 0.0), 100_000), 100_000);
    }

    /// Points of the main cardioid and the period-2 bulb, built from multipliers `μ` with
    /// `|μ| = r < 1` (rational points on the unit circle scaled by `r`, so no trigonometry):
    /// - cardioid: `c = μ/2 - μ²/4` has the fixed point `μ/2` with multiplier `2·(μ/2) = μ`;
    /// - bulb: `c = -1 + μ/4` has a 2-cycle with multiplier `4(c + 1) = μ`.
    ///
    /// An attracting cycle attracts the critical orbit (Fatou), so these `c` are in the set.
    fn interior_points(r: f64) -> impl Iterator<Item = (f64, f64)> {
        let dirs = [
            (1.0, 0.0),
            (0.0, 1.0),
            (-1.0, 0.0),
            (0.0, -1.0),
            (0.6, 0.8),
            (-0.6, 0.8),
            (5.0 / 13.0, 12.0 / 13.0),
            (-12.0 / 13.0, 5.0 / 13.0),
            (8.0 / 17.0, -15.0 / 17.0),
            (-15.0 / 17.0, -8.0 / 17.0),
        ];
        dirs.into_iter().flat_map(move |(dx, dy)| {
            let (mr, mi) = (r * dx, r * dy);
            let cardioid = (
                mr / 2.0 - (mr * mr - mi * mi) / 4.0,
                mi / 2.0 - mr * mi / 2.0,
            );
            let bulb = (-1.0 + mr / 4.0, mi / 4.0);
            [cardioid, bulb]
        })
    }

    #[test]
    fn cardioid_and_bulb_inside() {
        for r in [0.0, 0.25, 0.5, 0.8, 0.9] {
            for (re, im) in interior_points(r) {
                assert_eq!(
                    escape_time(c64(re, im), 10_000),
                    10_000,
                    "f64 c = {re}+{im}i"
                );
                assert_eq!(
                    escape_time(c32(re as f32, im as f32), 10_000),
                    10_000,
                    "f32 c = {re}+{im}i"
                );
            }
        }
    }

    /// Points outside with escape times counted by hand. All intermediate values are dyadic
    /// rationals with few bits, so f32 and f64 compute them exactly.
    const HAND_COUNTED: [(f64, f64, u32); 9] = [
        // z1 = 1 (1), z2 = 2 (4, not > 4), z3 = 5 (25).
        (1.0, 0.0, 3),
        // z1 = 3 (9).
        (3.0, 0.0, 1),
        // z1 = 2 (4, not > 4), z2 = 6 (36).
        (2.0, 0.0, 2),
        // z1 = -2.5 (6.25).
        (-2.5, 0.0, 1),
        // z1 = 2i (4, not > 4), z2 = -4 + 2i (20).
        (0.0, 2.0, 2),
        // z1 = .5, z2 = .75, z3 = 1.0625, z4 = 1.62890625 (|z|² ≈ 2.65),
        // z5 = 2.6533355712890625 + .5 ≈ 3.15 (≈ 9.94).
        (0.5, 0.0, 5),
        // z1 = 1+i (2), z2 = 2i + 1+i = 1+3i (10).
        (1.0, 1.0, 2),
        // z1 = -1+i (2), z2 = -2i + c = -1-i (2), z3 = 2i + c = -1+3i (10).
        (-1.0, 1.0, 3),
        // z1 = 2+2i (8).
        (2.0, 2.0, 1),
    ];

    #[test]
    fn hand_counted_escapes() {
        for (re, im, n) in HAND_COUNTED {
            assert_eq!(escape_time(c64(re, im), MAX), n, "f64 c = {re}+{im}i");
            assert_eq!(escape_time(c64(re, -im), MAX), n, "f64 c = {re}-{im}i");
            assert_eq!(
                escape_time(c32(re as f32, im as f32), MAX),
                n,
                "f32 c = {re}+{im}i"
            );
        }
    }

    #[test]
    fn just_past_the_tip_escapes_at_once_in_f64() {
        // c = -2 - 2⁻⁴⁰: |z1|² = (2 + 2⁻⁴⁰)² = 4 + 2⁻³⁸ + 2⁻⁸⁰, which rounds to > 4 in f64.
        let c = c64(-2.0 - 2.0_f64.powi(-40), 0.0);
        assert_eq!(escape_time(c, MAX), 1);
        // In f32 the same number rounds to -2, the tip, which is in the set.
        assert_eq!(escape_time(c.cast::<f32>(), MAX), MAX);
    }

    #[test]
    fn max_iter_zero_and_one() {
        // max_iter = 0: no iteration at all, result 0 whatever c is.
        for (re, im) in [(0.0, 0.0), (3.0, 0.0), (1.0, 0.0), (f64::NAN, 0.0)] {
            assert_eq!(escape_time(c64(re, im), 0), 0);
            assert_eq!(escape_time(c32(re as f32, im as f32), 0), 0);
        }
        // max_iter = 1: escaping at step 1 gives 1, and not escaping also gives max_iter = 1.
        assert_eq!(escape_time(c64(3.0, 0.0), 1), 1); // escapes at 1
        assert_eq!(escape_time(c64(0.0, 0.0), 1), 1); // in the set
        assert_eq!(escape_time(c64(1.0, 0.0), 1), 1); // would escape at 3
        assert_eq!(escape_time(c64(1.0, 0.0), 2), 2); // not yet escaped
        assert_eq!(escape_time(c64(1.0, 0.0), 3), 3); // escapes exactly at the last step
        assert_eq!(escape_time(c64(1.0, 0.0), 4), 3);
    }

    #[test]
    fn nan_never_escapes() {
        // NaN > 4 is false, so a NaN orbit runs to max_iter (documented here, not relied on).
        assert_eq!(escape_time(c64(f64::NAN, 0.0), 50), 50);
    }

    #[test]
    fn result_in_range_and_matches_reference_loop() {
        // Grid over [-2.5, 1] × [-1.25, 1.25]; every result is in 1..=max_iter and equals the
        // plain-f64 reference loop (the same correctly rounded operations, so exact equality is
        // expected).
        for j in 0..=50 {
            for i in 0..=70 {
                let re = -2.5 + f64::from(i) * 0.05;
                let im = -1.25 + f64::from(j) * 0.05;
                let n = escape_time(c64(re, im), 300);
                assert!((1..=300).contains(&n), "c = {re}+{im}i gave {n}");
                assert_eq!(n, reference(re, im, 300), "c = {re}+{im}i");
            }
        }
    }

    /// `escape_time(conj c) == escape_time(c)`, exactly. The orbit of `conj c` is the
    /// conjugate of the orbit of `c` even in IEEE arithmetic: negation is exact and
    /// round-to-nearest is symmetric, so `fl(2·re·(-im) + (-c.im)) = -fl(2·re·im + c.im)`,
    /// and `(-im)² = im²` bit for bit; the bailout test only sees `re²` and `im²`.
    fn check_conjugate_symmetry<F: Real>() {
        let mut escaped = 0;
        let mut inside = 0;
        for j in 0..=60 {
            for i in 0..=90 {
                let re = -2.2 + f64::from(i) * (3.0 / 90.0);
                let im = f64::from(j) * (1.3 / 60.0);
                let c = Complex::new(F::from_f64(re), F::from_f64(im));
                let n = escape_time(c, 500);
                assert_eq!(n, escape_time(c.conj(), 500), "c = {c:?}");
                if n == 500 {
                    inside += 1;
                } else {
                    escaped += 1;
                }
            }
        }
        // The grid must exercise both outcomes for the test to mean anything.
        assert!(
            escaped > 100 && inside > 100,
            "{escaped} escaped, {inside} inside"
        );
    }

    #[test]
    fn conjugate_symmetry_f64() {
        check_conjugate_symmetry::<f64>();
    }

    #[test]
    fn conjugate_symmetry_f32() {
        check_conjugate_symmetry::<f32>();
    }

    #[test]
    fn f32_and_f64_agree_far_from_the_boundary() {
        // Interior points with a strongly attracting cycle (|μ| ≤ 1/2) and outside points
        // whose orbits are exact in both precisions, or that leave the radius-2 disc at once.
        for (re, im) in interior_points(0.5) {
            let n64 = escape_time(c64(re, im), 2000);
            assert_eq!(n64, 2000);
            assert_eq!(escape_time(c32(re as f32, im as f32), 2000), n64);
        }
        for (re, im, _) in HAND_COUNTED {
            assert_eq!(
                escape_time(c64(re, im), MAX),
                escape_time(c32(re as f32, im as f32), MAX)
            );
        }
        // |c|² > 4 with a wide margin: escapes at 1 in both.
        for (re, im) in [(2.1, 0.3), (-1.9, 1.1), (0.1, -2.05), (-3.3, -3.3)] {
            assert_eq!(escape_time(c64(re, im), MAX), 1);
            assert_eq!(escape_time(c32(re as f32, im as f32), MAX), 1);
        }
    }

    // ---- The production loop: shortcuts that must never change a count. ----

    /// Rational points on the unit circle (no trigonometry): `(a/h, b/h)` for Pythagorean
    /// triples, in all four quadrants and both orders.
    fn unit_directions() -> impl Iterator<Item = (f64, f64)> {
        let triples = [
            (0.0, 1.0, 1.0),
            (3.0, 4.0, 5.0),
            (5.0, 12.0, 13.0),
            (8.0, 15.0, 17.0),
            (20.0, 21.0, 29.0),
        ];
        triples.into_iter().flat_map(|(a, b, h)| {
            let (x, y) = (a / h, b / h);
            [
                (x, y),
                (y, x),
                (-x, y),
                (-y, x),
                (x, -y),
                (y, -x),
                (-x, -y),
                (-y, -x),
            ]
        })
    }

    /// `c = μ/2 - μ²/4` for `μ = r·d`: the main-cardioid point with fixed-point multiplier `μ`.
    fn cardioid_point(r: f64, (dx, dy): (f64, f64)) -> (f64, f64) {
        let (mr, mi) = (r * dx, r * dy);
        (
            mr / 2.0 - (mr * mr - mi * mi) / 4.0,
            mi / 2.0 - mr * mi / 2.0,
        )
    }

    /// `c = -1 + μ/4`: the period-2-bulb point with 2-cycle multiplier `μ = r·d`.
    fn bulb_point(r: f64, (dx, dy): (f64, f64)) -> (f64, f64) {
        (-1.0 + r * dx / 4.0, r * dy / 4.0)
    }

    #[test]
    fn cardioid_and_bulb_tests_accept_points_with_small_multiplier() {
        for r in [0.0, 0.1, 0.25, 0.5, 0.8, 0.9, 0.94] {
            for d in unit_directions() {
                let (re, im) = cardioid_point(r, d);
                assert!(
                    in_main_cardioid(c64(re, im)),
                    "cardioid r = {r}, c = {re}+{im}i"
                );
                assert!(
                    in_main_cardioid(c32(re as f32, im as f32)),
                    "f32 cardioid r = {r}"
                );
                let (re, im) = bulb_point(r, d);
                assert!(in_period2_bulb(c64(re, im)), "bulb r = {r}, c = {re}+{im}i");
                assert!(
                    in_period2_bulb(c32(re as f32, im as f32)),
                    "f32 bulb r = {r}"
                );
            }
        }
    }

    #[test]
    fn cardioid_test_keeps_a_wider_margin_near_the_cusp() {
        // c = μ/2 − μ²/4 for a multiplier μ (complex, as (re, im)).
        let c_of = |mr: f64, mi: f64| {
            let (sr, si) = (mr * mr - mi * mi, 2.0 * mr * mi);
            (mr / 2.0 - sr / 4.0, mi / 2.0 - si / 4.0)
        };
        // |μ| = 0.99 away from the cusp (|1 − μ| ≈ 0.95): inside.
        let (re, im) = c_of(0.99 * 1f64.cos(), 0.99 * 1f64.sin());
        assert!(in_main_cardioid(c64(re, im)), "{re}+{im}i");
        assert!(
            in_main_cardioid(c32(re as f32, im as f32)),
            "f32 {re}+{im}i"
        );
        // μ real, at the cusp side (|1 − 4c| = (1 − μ)² < CUSP_W_MIN): everything above
        // 1 − CUSP_MULTIPLIER_MARGIN is left to the iteration (0.95 in f32, 0.9999 in f64).
        let (re, im) = c_of(0.98, 0.0);
        assert!(!in_main_cardioid(c32(re as f32, im as f32)), "f32 {re}");
        assert!(in_main_cardioid(c64(re, im)), "{re}");
        let (re, im) = c_of(0.99995, 0.0);
        assert!(!in_main_cardioid(c64(re, im)), "{re}");
        let (re, im) = c_of(0.9, 0.0);
        assert!(in_main_cardioid(c64(re, im)), "{re}");
        assert!(in_main_cardioid(c32(re as f32, im as f32)), "f32 {re}");
    }

    #[test]
    fn cardioid_and_bulb_tests_reject_the_margin_and_outside() {
        // Between the margin and the boundary (left to the iteration), on the boundary, and
        // just outside: never "inside".
        // For |μ| > 1 the point μ/2 - μ²/4 is outside only if the other fixed point's
        // multiplier 2 - μ is not attracting either (c = 0.1875 has μ = 1.5 and 0.5): skip
        // those.
        fn check<F: Real>(radii: &[f64]) -> u32 {
            let c = |(re, im): (f64, f64)| Complex::new(F::from_f64(re), F::from_f64(im));
            let mut outside = 0;
            for &r in radii {
                for d in unit_directions() {
                    let (or, oi) = (2.0 - r * d.0, -r * d.1);
                    if or * or + oi * oi >= 1.0 {
                        outside += 1;
                        let p = cardioid_point(r, d);
                        assert!(!in_main_cardioid(c(p)), "cardioid r = {r}, c = {p:?}");
                    }
                    let p = bulb_point(r, d);
                    assert!(!in_period2_bulb(c(p)), "bulb r = {r}, c = {p:?}");
                }
            }
            outside
        }
        let beyond = [1.0, 1.000_001, 1.001, 1.05, 1.5, 3.0];
        let f32_margin = [0.9995, 0.9999];
        let f64_margin = [0.999_999_95, 0.999_999_99];
        let outside = check::<f32>(&[&f32_margin[..], &beyond].concat())
            + check::<f64>(&[&f64_margin[..], &beyond].concat());
        assert!(outside > 500, "{outside} cardioid points tested");
        // Far away, and the other component's centre.
        for (re, im) in [
            (2.0, 0.0),
            (-2.0, 0.0),
            (0.0, 1.0),
            (-1.75, 0.0),
            (0.3, 0.0),
            (f64::NAN, 0.0),
        ] {
            assert!(!in_main_cardioid(c64(re, im)), "c = {re}+{im}i");
            assert!(!in_period2_bulb(c64(re, im)), "c = {re}+{im}i");
        }
        assert!(!in_main_cardioid(c64(-1.0, 0.0)));
        assert!(!in_period2_bulb(c64(0.0, 0.0)));
    }

    #[test]
    fn points_just_inside_the_margin_never_escape_in_the_plain_loop() {
        // The margins' reason (see `multiplier_limit`): orbits of points with |μ| just below
        // 1 − MULTIPLIER_MARGIN stay trapped despite rounding. Run the plain loop far past the
        // transient (1/(1 − |μ|) steps in f32; in f64, 10⁵ steps of an orbit that converges
        // over ~10⁷) for every test direction, the cusp side with its own margin included.
        fn check<F: Real>(max_iter: u32) -> u32 {
            let c = |(re, im): (f64, f64)| Complex::new(F::from_f64(re), F::from_f64(im));
            let mut accepted = 0;
            for (margin, cusp_side) in [
                (F::MULTIPLIER_MARGIN, false),
                (F::CUSP_MULTIPLIER_MARGIN, true),
            ] {
                let r = 1.0 - 1.2 * margin;
                for d in unit_directions() {
                    let near_cusp = d.0 > 0.9;
                    if near_cusp != cusp_side && cusp_side {
                        continue;
                    }
                    for (p, inside) in [
                        (
                            cardioid_point(r, d),
                            in_main_cardioid(c(cardioid_point(r, d))),
                        ),
                        (bulb_point(r, d), in_period2_bulb(c(bulb_point(r, d)))),
                    ] {
                        if inside {
                            accepted += 1;
                            assert_eq!(escape_time(c(p), max_iter), max_iter, "c = {p:?}");
                        }
                    }
                }
            }
            accepted
        }
        let accepted = check::<f32>(20_000);
        assert!(accepted >= 70, "f32: {accepted} points accepted");
        let accepted = check::<f64>(100_000);
        assert!(accepted >= 70, "f64: {accepted} points accepted");
    }

    #[test]
    fn shortcut_points_run_to_max_iter_in_the_plain_loop() {
        // Every grid point the shortcuts classify as inside must be one where the plain loop
        // never escapes (in both precisions).
        let mut shortcut = 0;
        for j in 0..=80 {
            for i in 0..=120 {
                let re = -1.3 + f64::from(i) * (1.65 / 120.0);
                let im = f64::from(j) * (0.8 / 80.0);
                let c = c64(re, im);
                if in_main_cardioid(c) || in_period2_bulb(c) {
                    shortcut += 1;
                    assert_eq!(escape_time(c, 3000), 3000, "f64 c = {c:?}");
                }
                let c = c32(re as f32, im as f32);
                if in_main_cardioid(c) || in_period2_bulb(c) {
                    assert_eq!(escape_time(c, 3000), 3000, "f32 c = {c:?}");
                }
            }
        }
        assert!(
            shortcut > 2000,
            "only {shortcut} grid points took a shortcut"
        );
    }

    /// `escape(c, m, 4).n == escape_time(c, m)` over a `w × h` grid centred on `(re, im)` with
    /// spacing `step`; returns how many points the production loop finished early (shortcut or
    /// cycle found before `max_iter`) and how many ran to the end without escaping.
    fn check_grid<F: Real>(
        re: f64,
        im: f64,
        step: f64,
        w: u32,
        h: u32,
        max_iter: u32,
    ) -> (u32, u32) {
        let (mut early, mut full) = (0, 0);
        for y in 0..h {
            for x in 0..w {
                let c = Complex::new(
                    F::from_f64(re + (f64::from(x) - f64::from(w) / 2.0) * step),
                    F::from_f64(im - (f64::from(y) - f64::from(h) / 2.0) * step),
                );
                let naive = escape_time(c, max_iter);
                let (fast, iterations) = escape_counted(c, max_iter, F::BAILOUT_SQR);
                assert_eq!(fast.n, naive, "c = {c:?}, max_iter {max_iter}");
                if fast.n == max_iter {
                    if iterations < max_iter {
                        early += 1;
                    } else {
                        full += 1;
                    }
                }
            }
        }
        (early, full)
    }

    /// The plain loop with any bailout, reporting `|z_n|²` like [`escape`] (the reference for
    /// the chunked loop).
    fn plain_escape<F: Real>(c: Complex<F>, max_iter: u32, bailout_sqr: F) -> Escape {
        let (mut re, mut im) = (F::ZERO, F::ZERO);
        for n in 1..=max_iter {
            let (r, i, norm_sqr) = step(re, im, c);
            (re, im) = (r, i);
            if norm_sqr > bailout_sqr {
                return Escape {
                    n,
                    norm_sqr: norm_sqr.to_f32(),
                };
            }
        }
        Escape::inside(max_iter)
    }

    /// `escape_chunked::<F, K, P>` equals the plain loop (count and `|z_n|²`) for chunk sizes
    /// that do and do not divide `max_iter`, prefixes shorter and longer than `max_iter`, with
    /// the discrete and the smooth bailout.
    fn check_chunks<F: Real>() {
        fn with_prefix<F: Real, const K: u32, const P: u32>(
            c: Complex<F>,
            max_iter: u32,
            bailout: F,
        ) {
            let want = plain_escape(c, max_iter, bailout);
            let (got, work) = escape_chunked::<F, K, P>(c, max_iter, bailout);
            assert_eq!(
                got, want,
                "K = {K}, P = {P}, c = {c:?}, max_iter {max_iter}"
            );
            // Escaping work: at most one discarded chunk plus its recomputation past n.
            if want.n < max_iter {
                assert!(
                    work.steps(K.max(1)) <= want.n + 2 * K.max(1),
                    "K = {K}, c = {c:?}"
                );
            }
        }
        let cases = [
            (-0.7435, 0.1314, 0.02 / 40.0, 300),
            (0.2925, 0.0149, 0.01 / 40.0, 257),
            (-1.7549, 0.0, 0.04 / 40.0, 1000),
            (-0.75, 0.0, 3.0 / 40.0, 17),
            (-0.75, 0.0, 3.0 / 40.0, 1),
        ];
        for (re, im, spacing, max_iter) in cases {
            for y in 0..24 {
                for x in 0..40 {
                    let c = Complex::new(
                        F::from_f64(re + (f64::from(x) - 20.0) * spacing),
                        F::from_f64(im - (f64::from(y) - 12.0) * spacing),
                    );
                    for bailout in [F::BAILOUT_SQR, F::from_f64(f64::from(SMOOTH_BAILOUT_SQR))] {
                        with_prefix::<F, 1, 1>(c, max_iter, bailout);
                        with_prefix::<F, 3, 0>(c, max_iter, bailout);
                        with_prefix::<F, 3, 5>(c, max_iter, bailout);
                        with_prefix::<F, 8, 1>(c, max_iter, bailout);
                        with_prefix::<F, CHUNK_ITERS, 1>(c, max_iter, bailout);
                        with_prefix::<F, CHUNK_ITERS, PLAIN_ITERS>(c, max_iter, bailout);
                        with_prefix::<F, 32, 5>(c, max_iter, bailout);
                    }
                }
            }
        }
    }

    #[test]
    fn chunked_loop_equals_the_plain_loop_for_every_chunk_size() {
        check_chunks::<f32>();
        check_chunks::<f64>();
    }

    #[test]
    fn chunked_loop_edge_cases() {
        // Escape exactly at the last step of a chunk, of max_iter, and in the tail.
        // c = 1: |z|² = 1, 4, 25: escapes at 3.
        for max_iter in [2, 3, 4, 16, 17] {
            let want = plain_escape(c64(1.0, 0.0), max_iter, 4.0);
            assert_eq!(
                escape_chunked::<f64, 3, 1>(c64(1.0, 0.0), max_iter, 4.0).0,
                want
            );
            assert_eq!(
                escape_chunked::<f64, 1, 1>(c64(1.0, 0.0), max_iter, 4.0).0,
                want
            );
            assert_eq!(escape(c64(1.0, 0.0), max_iter, 4.0), want);
        }
        // |z|² = 4 exactly at every step (c = -2: 0, -2, 2, 2, …) shares the f64 key of the
        // bailout: a false alarm every chunk, and the cycle is still found.
        let (e, work) =
            escape_chunked::<f64, CHUNK_ITERS, PLAIN_ITERS>(c64(-2.0, 0.0), 10_000, 4.0);
        assert_eq!(e, Escape::inside(10_000));
        assert!(work.steps(CHUNK_ITERS) < 200, "{work:?}");
        // A NaN orbit never escapes (as in the plain loop), with every chunk a false alarm.
        for m in [0, 1, 40, 41] {
            assert_eq!(escape(c64(0.3, f64::NAN), m, 4.0), Escape::inside(m));
            assert_eq!(escape(c32(f32::NAN, 0.3), m, 4.0), Escape::inside(m));
        }
        // Steps past an escape overflow to ∞ and NaN inside the chunk; the count is exact.
        let c = c32(1.0e18, 0.0); // z1 = 1e18 escapes; z2 = 1e36, z3 = ∞, z4 = NaN
        assert_eq!(escape(c, 100, 4.0).n, 1);
        assert_eq!(
            escape(c64(-1.9, 1.0e-3), 100, 4.0),
            plain_escape(c64(-1.9, 1.0e-3), 100, 4.0)
        );
    }

    #[test]
    fn periodicity_checking_returns_the_plain_count_on_grids() {
        // (centre, spacing, size, max_iter): the whole set, boundary-rich zooms (seahorse and
        // elephant valleys, the period-3 minibrot on the real axis, a period-3 bulb's edge),
        // and tiny limits where "run to the end" and "escaped at the last step" meet.
        let cases: [(f64, f64, f64, u32, u32, u32); 7] = [
            (-0.75, 0.0, 3.0 / 64.0, 64, 48, 500),
            (-0.7435, 0.1314, 0.02 / 64.0, 64, 48, 1000),
            (0.2925, 0.0149, 0.01 / 64.0, 48, 48, 800),
            (-1.7549, 0.0, 0.04 / 64.0, 64, 32, 2000),
            (-0.1226, 0.7449, 0.1 / 64.0, 48, 48, 1500),
            (-0.75, 0.0, 3.0 / 32.0, 32, 24, 1),
            (-0.75, 0.0, 3.0 / 32.0, 32, 24, 7),
        ];
        let (mut early, mut full) = (0, 0);
        for (re, im, step, w, h, m) in cases {
            let (e, f) = check_grid::<f64>(re, im, step, w, h, m);
            let (e32, f32_) = check_grid::<f32>(re, im, step, w, h, m);
            early += e + e32;
            full += f + f32_;
        }
        // The shortcuts must actually fire for the test to mean anything.
        assert!(
            early > 3000,
            "{early} points finished early, {full} ran to max_iter"
        );
    }

    #[test]
    fn periodicity_checking_finds_cycles_early() {
        // Centres of hyperbolic components (superattracting cycles, so the floating-point orbit
        // becomes exactly periodic quickly), outside the cardioid and period-2 bulb tests:
        // period 3 (upper bulb and the real minibrot), period 4 on the real axis, and the tip
        // c = -2 (0 → -2 → 2 → 2 …, pre-periodic).
        for (re, im) in [
            (-0.122_561_166, 0.744_861_767),
            (-1.754_877_666, 0.0),
            (-1.310_702_641, 0.0),
            (-2.0, 0.0),
        ] {
            let (e, iterations) = escape_counted(c64(re, im), 100_000, 4.0);
            assert_eq!(e, Escape::inside(100_000), "c = {re}+{im}i");
            assert!(
                iterations < 1000,
                "c = {re}+{im}i: cycle found after {iterations}"
            );
            let (e, iterations) = escape_counted(c32(re as f32, im as f32), 100_000, 4.0);
            assert_eq!(e.n, 100_000, "f32 c = {re}+{im}i");
            assert!(
                iterations < 1000,
                "f32 c = {re}+{im}i: cycle found after {iterations}"
            );
        }
        // Shortcut points take no iteration at all.
        assert_eq!(
            escape_counted(c64(0.0, 0.0), 50, 4.0),
            (Escape::inside(50), 0)
        );
        assert_eq!(
            escape_counted(c64(-1.0, 0.0), 50, 4.0),
            (Escape::inside(50), 0)
        );
    }

    #[test]
    fn escape_reports_count_and_norm_by_hand() {
        // c = 3: z1 = 3, |z1|² = 9.
        assert_eq!(
            escape(c64(3.0, 0.0), 100, 4.0),
            Escape {
                n: 1,
                norm_sqr: 9.0
            }
        );
        // c = 1: 1, 2, 5 → n = 3, |z3|² = 25.
        assert_eq!(
            escape(c32(1.0, 0.0), 100, 4.0),
            Escape {
                n: 3,
                norm_sqr: 25.0
            }
        );
        // Smooth-colouring bailout 2¹⁶: c = 1: 1, 2, 5, 26, 677 → n = 5, |z5|² = 458329.
        assert_eq!(
            escape(c64(1.0, 0.0), 100, f64::from(SMOOTH_BAILOUT_SQR)),
            Escape {
                n: 5,
                norm_sqr: 458_329.0
            }
        );
        // c = 1 + i: 1+i, 1+3i (|z|² = 10) → n = 2.
        assert_eq!(
            escape(c64(1.0, 1.0), 100, 4.0),
            Escape {
                n: 2,
                norm_sqr: 10.0
            }
        );
        // Limits: max_iter 0 gives 0 like the plain loop; not escaped by max_iter gives max_iter.
        assert_eq!(escape(c64(3.0, 0.0), 0, 4.0).n, 0);
        assert_eq!(escape(c64(0.0, 0.0), 0, 4.0).n, 0);
        assert_eq!(escape(c64(1.0, 0.0), 2, 4.0), Escape::inside(2));
        assert_eq!(escape(c64(f64::NAN, 0.0), 40, 4.0), Escape::inside(40));
    }

    #[test]
    fn step_by_hand() {
        // (2 - i)² + (1 + 1i) = 4 - 4i - 1 + 1 + i = 4 - 3i, |z|² = 25.
        assert_eq!(step(2.0_f64, -1.0, c64(1.0, 1.0)), (4.0, -3.0, 25.0));
        assert_eq!(step(0.0_f32, 0.0, c32(-0.5, 0.25)), (-0.5, 0.25, 0.3125));
    }
}
