//! Palettes: map an escape time to an RGB colour.
//!
//! [`Palette::color`] colours discrete escape times with a fixed cycle of
//! [`Palette::CYCLE_ITERS`]; [`Coloring`] adds smooth (continuous) colouring from the
//! normalized iteration count ([`smooth_iter`]), a cycle length and an offset.
//!
//! Gradients are interpolated with `glam::Vec3` using only `+ - *`, `floor` and exact
//! integer-to-float conversions, and the logarithms of smooth colouring come from `libm` on
//! both sides, so the CPU and GPU produce the same bytes.

use crate::{Real, escape::Escape, escape::SMOOTH_BAILOUT_SQR};
use cuda_std::math;
use glam::Vec3;

/// An 8-bit-per-channel colour `[r, g, b]`.
pub type Rgb = [u8; 3];

/// Colour of points taken to be in the set (escape time equal to `max_iter`), for the
/// gradient palettes.
pub const INSIDE: Rgb = [0, 0, 0];

/// How escape times become colours. `#[repr(u32)]` so it can be passed to a kernel by value.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, cuda_std::DeviceCopy)]
pub enum Palette {
    /// The textbook grey image: points in the set are 0 (black), escaped points `255 - n`,
    /// saturating at 0 for `n ≥ 255`. Use with `max_iter` 255 for the full grey range.
    Gray = 0,
    /// Deep blue through white to orange (after the well-known Ultra Fractal default).
    Classic = 1,
    /// Black through red and orange to pale yellow.
    Fire = 2,
    /// Navy through teal to white.
    Ocean = 3,
    /// Purple through blue and green to yellow (after matplotlib's perceptually uniform
    /// "viridis"), and back.
    Viridis = 4,
    /// Black through violet and pink to white, then sky blue.
    Electric = 5,
}

impl Palette {
    /// Every palette, in the order of [`Palette::NAMES`].
    pub const ALL: [Palette; 6] = [
        Self::Gray,
        Self::Classic,
        Self::Fire,
        Self::Ocean,
        Self::Viridis,
        Self::Electric,
    ];
    /// The name of every palette, as accepted by [`Palette::from_name`].
    pub const NAMES: [&'static str; 6] =
        ["gray", "classic", "fire", "ocean", "viridis", "electric"];

    /// Number of iterations one full cycle of a gradient palette spans.
    pub const CYCLE_ITERS: u32 = 64;

    /// The palette's name (lower case).
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Looks a palette up by its name (case-sensitive); `None` for unknown names.
    pub fn from_name(name: &str) -> Option<Self> {
        // British spelling too.
        let name = if name == "grey" { "gray" } else { name };
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The colour of a pixel with escape time `n` (see [`crate::escape_time`]).
    ///
    /// `n >= max_iter` means the point is taken to be in the set.
    ///
    /// ```
    /// # use common::Palette;
    /// assert_eq!(Palette::Gray.color(100, 255), [155, 155, 155]); // escaped after 100
    /// assert_eq!(Palette::Gray.color(255, 255), [0, 0, 0]); // in the set
    /// ```
    #[inline]
    pub fn color(self, n: u32, max_iter: u32) -> Rgb {
        let inside = n >= max_iter;
        match self {
            Self::Gray => {
                let v = if inside { 0 } else { 255 - n.min(255) as u8 };
                [v, v, v]
            }
            Self::Classic => gradient(&CLASSIC, n, inside),
            Self::Fire => gradient(&FIRE, n, inside),
            Self::Ocean => gradient(&OCEAN, n, inside),
            Self::Viridis => gradient(&VIRIDIS, n, inside),
            Self::Electric => gradient(&ELECTRIC, n, inside),
        }
    }

    /// The gradient's stops, `None` for [`Palette::Gray`].
    #[inline(always)]
    fn stops(self) -> Option<&'static [Rgb; 8]> {
        match self {
            Self::Gray => None,
            Self::Classic => Some(&CLASSIC),
            Self::Fire => Some(&FIRE),
            Self::Ocean => Some(&OCEAN),
            Self::Viridis => Some(&VIRIDIS),
            Self::Electric => Some(&ELECTRIC),
        }
    }
}

/// Discrete (one colour per escape time) or smooth (continuous) colouring.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, cuda_std::DeviceCopy)]
pub enum Shading {
    /// One colour per escape time `n`; bailout `|z|² > 4`.
    Discrete = 0,
    /// Colour from the normalized iteration count ([`smooth_iter`]); bailout
    /// `|z|² > `[`SMOOTH_BAILOUT_SQR`], so escape times are larger than with `Discrete`.
    Smooth = 1,
}

/// How escape results become colours: the palette, discrete or smooth shading, and where the
/// gradient cycle starts and how long it is. `#[repr(C)]`, passed to kernels by value.
///
/// A gradient palette maps the position `p` (in iterations: `n - 1` for discrete shading,
/// [`smooth_iter`]` + 1` for smooth shading, which lies in `[n - 2, n - 1)`) to the fraction `u = frac(p / cycle_iters + offset)`
/// of its cycle. [`Palette::Gray`] ignores the cycle and the offset: `255 - p - 1`, saturating.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
pub struct Coloring {
    /// The palette.
    pub palette: Palette,
    /// Discrete or smooth.
    pub shading: Shading,
    /// Iterations per gradient cycle (≥ 1; [`Palette::CYCLE_ITERS`] by default).
    pub cycle_iters: u32,
    /// Shift along the cycle, as a fraction of it (`0.0` by default; `0.5` starts half-way).
    pub offset: f32,
}

impl Coloring {
    /// Discrete shading with `palette`, the default cycle and no offset: the colours of
    /// [`Palette::color`].
    pub const fn discrete(palette: Palette) -> Self {
        Self {
            palette,
            shading: Shading::Discrete,
            cycle_iters: Palette::CYCLE_ITERS,
            offset: 0.0,
        }
    }

    /// Smooth shading with `palette`, the default cycle and no offset.
    pub const fn smooth(palette: Palette) -> Self {
        Self {
            shading: Shading::Smooth,
            ..Self::discrete(palette)
        }
    }

    /// The squared bailout radius this shading needs: 4 for discrete, [`SMOOTH_BAILOUT_SQR`]
    /// for smooth.
    #[inline(always)]
    pub fn bailout_sqr<F: Real>(&self) -> F {
        match self.shading {
            Shading::Discrete => F::BAILOUT_SQR,
            Shading::Smooth => F::from_f64(SMOOTH_BAILOUT_SQR as f64),
        }
    }

    /// The colour of an escape result (computed with [`Coloring::bailout_sqr`]).
    /// `e.n >= max_iter` means the point is taken to be in the set: black.
    ///
    /// ```
    /// # use common::{Escape, palette::{Coloring, Palette}};
    /// let discrete = Coloring::discrete(Palette::Classic);
    /// let e = Escape { n: 9, norm_sqr: 5.0 };
    /// assert_eq!(discrete.color(e, 100), Palette::Classic.color(9, 100));
    /// assert_eq!(discrete.color(Escape::inside(100), 100), [0, 0, 0]);
    /// ```
    #[inline]
    pub fn color(&self, e: Escape, max_iter: u32) -> Rgb {
        if e.n >= max_iter {
            return INSIDE;
        }
        let cycle = if self.cycle_iters == 0 {
            1
        } else {
            self.cycle_iters
        };
        // The part of the position below one iteration: 0 for discrete shading, in [-1, 0)
        // for smooth shading (see `smooth_iter`).
        let fraction = match self.shading {
            Shading::Discrete => 0.0,
            // ν + 1 - (n - 1) = 4 - log₂ log₂ |z_n|², without rounding n through f32.
            Shading::Smooth => 4.0 - math::log2f(math::log2f(e.norm_sqr)),
        };
        let Some(stops) = self.palette.stops() else {
            // Gray: 255 - (p + 1), saturating; p + 1 = n for discrete shading.
            let p = e.n.min(300) as f32 + fraction;
            let v = 255.5 - p.clamp(0.0, 255.0);
            return [v as u8; 3];
        };
        // `(n - 1) mod cycle` in integers first, so that large counts keep their phase.
        let m = e.n.wrapping_sub(1) % cycle;
        let t = (m as f32 + fraction) / cycle as f32 + self.offset;
        gradient_at(stops, t - math::floorf(t))
    }
}

impl Coloring {
    /// Fills `table[n]` with the colour of escape time `n` under discrete shading, packed as
    /// `r | g << 8 | b << 16` ([`pack_rgb`]): what [`Coloring::color`] gives for it (`|z_n|²`
    /// plays no part in discrete shading). Returns `false`, leaving `table` alone, for smooth
    /// shading. The GPU's colour pass looks escape times below `table.len()` up instead of
    /// computing them (a modulo and a division per pixel).
    ///
    /// ```
    /// # use common::{Escape, palette::{Coloring, Palette, pack_rgb}};
    /// let c = Coloring::discrete(Palette::Fire);
    /// let mut table = [0u32; 100];
    /// assert!(c.fill_discrete_table(300, &mut table));
    /// assert_eq!(table[42], pack_rgb(c.color(Escape { n: 42, norm_sqr: 0.0 }, 300)));
    /// assert!(!Coloring::smooth(Palette::Fire).fill_discrete_table(300, &mut table));
    /// ```
    pub fn fill_discrete_table(&self, max_iter: u32, table: &mut [u32]) -> bool {
        if self.shading != Shading::Discrete {
            return false;
        }
        for (n, slot) in table.iter_mut().enumerate() {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            *slot = pack_rgb(self.color(crate::Escape { n, norm_sqr: 0.0 }, max_iter));
        }
        true
    }
}

/// Where a band's pixels find their samples: `supersample × supersample` samples per pixel
/// of a band `width_px` pixels wide, stored row-major by sample rows (`width_px · s` samples
/// a row), as the deep-zoom escape pass writes them. Passed by value to the colour pass
/// (`kernels::mandelbrot::colorize`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, cuda_std::DeviceCopy)]
pub struct SampleGrid {
    /// Band width in pixels (read only when `supersample > 1`; then not 0).
    pub width_px: u32,
    /// Samples per pixel along each axis (0 is taken as 1).
    pub supersample: u32,
}

impl SampleGrid {
    /// One sample per pixel.
    pub const fn single(width_px: u32) -> Self {
        Self {
            width_px,
            supersample: 1,
        }
    }

    /// Samples per pixel (`s²`).
    #[inline(always)]
    pub const fn samples_per_px(&self) -> usize {
        let s = if self.supersample == 0 {
            1
        } else {
            self.supersample as usize
        };
        s * s
    }

    /// The colour of pixel `i` (row-major within the band) from its samples' colours
    /// `sample(k)` (`k` the sample's index): the sample's own colour with one sample per
    /// pixel, else [`average_samples`] of the `s × s` samples, sample `(c, j)` of pixel
    /// `(x, r)` being `k = (r·s + j)·(width_px·s) + x·s + c`.
    ///
    /// ```
    /// # use common::palette::SampleGrid;
    /// // A 2-pixel-wide band, 2×2 samples: pixel 1 has samples 2, 3, 6 and 7.
    /// let grid = SampleGrid { width_px: 2, supersample: 2 };
    /// let c = grid.pixel_color(1, |k| [k as u8 * 10, 0, 0]);
    /// assert_eq!(c, [(20 + 30 + 60 + 70 + 2) / 4, 0, 0]);
    /// ```
    #[inline(always)]
    pub fn pixel_color(&self, i: usize, mut sample: impl FnMut(usize) -> Rgb) -> Rgb {
        let s = self.supersample.max(1) as usize;
        if s == 1 {
            return sample(i);
        }
        let w = self.width_px as usize;
        let (x, r) = (i % w, i / w);
        average_samples(s as u32, |j, c| {
            sample((r * s + j as usize) * (w * s) + x * s + c as usize)
        })
    }
}

/// The colour of a pixel of `s × s` samples: the rounded average `(Σ channel + s²/2) / s²`
/// of the sample colours `color(j, i)` (sample row `j`, column `i`, each in `0 .. s`), as
/// [`crate::RenderJob::pixel_supersampled`] averages. The deep-zoom colour pass calls it on
/// the GPU (`kernels::mandelbrot::colorize`) and the CPU band renderer on the host, so both
/// give the same bytes. `s` is at most 16 (the sums stay below 2^17).
///
/// ```
/// # use common::palette::average_samples;
/// let c = average_samples(2, |j, i| [(10 * (2 * j + i)) as u8, 255, 0]);
/// // (0 + 10 + 20 + 30 + 2) / 4 = 15; (4·255 + 2) / 4 = 255.
/// assert_eq!(c, [15, 255, 0]);
/// assert_eq!(average_samples(1, |_, _| [1, 2, 3]), [1, 2, 3]);
/// ```
#[inline(always)]
pub fn average_samples(s: u32, mut color: impl FnMut(u32, u32) -> Rgb) -> Rgb {
    let mut sum = [0u32; 3];
    for j in 0..s {
        for i in 0..s {
            let c = color(j, i);
            sum[0] += u32::from(c[0]);
            sum[1] += u32::from(c[1]);
            sum[2] += u32::from(c[2]);
        }
    }
    let count = s * s;
    let avg = |v: u32| ((v + count / 2) / count) as u8;
    [avg(sum[0]), avg(sum[1]), avg(sum[2])]
}

/// `r | g << 8 | b << 16`.
#[inline(always)]
pub const fn pack_rgb(c: Rgb) -> u32 {
    c[0] as u32 | (c[1] as u32) << 8 | (c[2] as u32) << 16
}

/// The inverse of [`pack_rgb`] (the top byte is ignored).
#[inline(always)]
pub const fn unpack_rgb(v: u32) -> Rgb {
    [v as u8, (v >> 8) as u8, (v >> 16) as u8]
}

/// The normalized iteration count `ν = n + 1 - log₂(log₂ |z_n|)` of a point that escaped at
/// `n` with `|z_n|² = norm_sqr`, computed as `n + 2 - log₂(log₂ |z_n|²)` with `libm`'s `log2f`
/// (bit-identical on the CPU and the GPU).
///
/// `ν` is continuous in `c`: when `c` moves so that `n` grows by one, `log₂ log₂ |z_n|` grows
/// by one too. With the bailout [`SMOOTH_BAILOUT_SQR`] = 2¹⁶, `|z_n|² ∈ (2¹⁶, about 2³²]`, so
/// `log₂ log₂ |z_n|² ∈ (4, 5]` and `ν ∈ [n - 3, n - 2)`.
///
/// ```
/// # use common::palette::smooth_iter;
/// // |z|² = 2¹⁶: log₂ = 16, log₂ 16 = 4, ν = n + 2 - 4.
/// assert_eq!(smooth_iter(10, 65536.0), 8.0);
/// // |z|² = 2³²: log₂ = 32, log₂ 32 = 5, ν = n - 3.
/// assert_eq!(smooth_iter(10, 4294967296.0), 7.0);
/// ```
#[inline]
pub fn smooth_iter(n: u32, norm_sqr: f32) -> f32 {
    n as f32 + 2.0 - math::log2f(math::log2f(norm_sqr))
}

const CLASSIC: [Rgb; 8] = [
    [0, 7, 100],
    [32, 107, 203],
    [237, 255, 255],
    [255, 170, 0],
    [120, 40, 0],
    [0, 2, 0],
    [0, 20, 60],
    [0, 7, 100],
];
const FIRE: [Rgb; 8] = [
    [0, 0, 0],
    [90, 0, 0],
    [190, 30, 0],
    [255, 120, 0],
    [255, 210, 60],
    [255, 255, 200],
    [200, 80, 0],
    [60, 0, 0],
];
const OCEAN: [Rgb; 8] = [
    [0, 0, 40],
    [0, 40, 100],
    [0, 110, 150],
    [40, 190, 190],
    [200, 250, 250],
    [90, 160, 220],
    [20, 60, 140],
    [0, 10, 70],
];

const VIRIDIS: [Rgb; 8] = [
    [68, 1, 84],
    [70, 50, 127],
    [54, 92, 141],
    [39, 127, 142],
    [31, 161, 135],
    [74, 194, 109],
    [159, 218, 58],
    [253, 231, 37],
];
const ELECTRIC: [Rgb; 8] = [
    [0, 0, 0],
    [25, 0, 90],
    [100, 0, 200],
    [200, 40, 255],
    [255, 150, 255],
    [255, 255, 255],
    [120, 200, 255],
    [0, 80, 160],
];

/// The colour at fraction `u ∈ [0, 1]` of the cyclic gradient over `stops` (evenly spaced,
/// stop 7 blends back into stop 0), rounded half up to bytes.
#[inline]
fn gradient_at(stops: &[Rgb; 8], u: f32) -> Rgb {
    let s = u * 8.0;
    // `as` saturates; u = 1 (a rounding of 1 - ε) lands on the last segment's end.
    let i = (s as usize).min(7);
    let f = s - i as f32;
    let a = to_vec(stops[i]);
    let b = to_vec(stops[(i + 1) % 8]);
    let c = a + (b - a) * f + Vec3::splat(0.5);
    [c.x as u8, c.y as u8, c.z as u8]
}

/// Cyclic gradient over `stops`: one cycle every [`Palette::CYCLE_ITERS`] iterations, the
/// stops evenly spaced, linear interpolation between neighbours.
#[inline]
fn gradient(stops: &[Rgb; 8], n: u32, inside: bool) -> Rgb {
    const SEGMENT: u32 = Palette::CYCLE_ITERS / 8;
    if inside {
        return INSIDE;
    }
    // Escape times start at 1; start the cycle there.
    let m = n.wrapping_sub(1) % Palette::CYCLE_ITERS;
    let i = (m / SEGMENT) as usize;
    // Exact: SEGMENT is a power of two and (m % SEGMENT) < 2^24.
    let f = (m % SEGMENT) as f32 / SEGMENT as f32;
    let a = to_vec(stops[i]);
    let b = to_vec(stops[(i + 1) % 8]);
    let c = a + (b - a) * f + Vec3::splat(0.5);
    // `as u8` saturates, and c is within [0.5, 255.5].
    [c.x as u8, c.y as u8, c.z as u8]
}

#[inline(always)]
fn to_vec(c: Rgb) -> Vec3 {
    Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRADIENTS: [(Palette, &[Rgb; 8]); 5] = [
        (Palette::Classic, &CLASSIC),
        (Palette::Fire, &FIRE),
        (Palette::Ocean, &OCEAN),
        (Palette::Viridis, &VIRIDIS),
        (Palette::Electric, &ELECTRIC),
    ];

    /// Iterations between two stops.
    const SEGMENT: u32 = 8;

    #[test]
    fn segment_is_an_eighth_of_the_cycle() {
        assert_eq!(Palette::CYCLE_ITERS, 8 * SEGMENT);
    }

    #[test]
    fn gray_by_hand() {
        // Escaped: 255 - n.
        assert_eq!(Palette::Gray.color(1, 255), [254; 3]);
        assert_eq!(Palette::Gray.color(100, 255), [155; 3]);
        assert_eq!(Palette::Gray.color(254, 255), [1; 3]);
        // n = 0 never comes from escape_time with max_iter > 0, but is not "inside".
        assert_eq!(Palette::Gray.color(0, 255), [255; 3]);
        // Inside: n ≥ max_iter is black, even for small n.
        assert_eq!(Palette::Gray.color(255, 255), [0; 3]);
        assert_eq!(Palette::Gray.color(10, 10), [0; 3]);
        assert_eq!(Palette::Gray.color(11, 10), [0; 3]);
        assert_eq!(Palette::Gray.color(0, 0), [0; 3]);
        assert_eq!(Palette::Gray.color(u32::MAX, u32::MAX), [0; 3]);
        // Saturation: escaped at n ≥ 255 is 0 too.
        assert_eq!(Palette::Gray.color(255, 1000), [0; 3]);
        assert_eq!(Palette::Gray.color(300, 1000), [0; 3]);
        assert_eq!(Palette::Gray.color(u32::MAX - 1, u32::MAX), [0; 3]);
        for n in 0..1000_u32 {
            let v = 255 - n.min(255);
            assert_eq!(Palette::Gray.color(n, 1000), [v as u8; 3], "n = {n}");
        }
    }

    #[test]
    fn gradients_inside_is_inside_colour() {
        for (p, _) in GRADIENTS {
            for (n, max_iter) in [(100, 100), (150, 100), (0, 0), (1, 1), (u32::MAX, u32::MAX)] {
                assert_eq!(
                    p.color(n, max_iter),
                    INSIDE,
                    "{p:?} n = {n}, max = {max_iter}"
                );
            }
        }
    }

    #[test]
    fn gradients_are_cyclic() {
        for (p, _) in GRADIENTS {
            for n in 0..=600 {
                assert_eq!(
                    p.color(n, 10_000),
                    p.color(n + Palette::CYCLE_ITERS, 10_000),
                    "{p:?} n = {n}"
                );
            }
            // Far out: (2³² - 2) - 1 ≡ 61 (mod 64), the same phase as n = 62.
            assert_eq!(p.color(u32::MAX - 1, u32::MAX), p.color(62, 100));
        }
    }

    #[test]
    fn gradients_hit_stops_exactly() {
        // n - 1 = k·SEGMENT + j·CYCLE_ITERS lands on stop k.
        for (p, stops) in GRADIENTS {
            for (k, stop) in stops.iter().enumerate() {
                for j in 0..4 {
                    let n = 1 + k as u32 * SEGMENT + j * Palette::CYCLE_ITERS;
                    assert_eq!(p.color(n, 10_000), *stop, "{p:?} n = {n}");
                }
            }
        }
        // Spelled out for Classic: escape after 1 → first stop, after 9 → second stop.
        assert_eq!(Palette::Classic.color(1, 100), [0, 7, 100]);
        assert_eq!(Palette::Classic.color(9, 100), [32, 107, 203]);
        assert_eq!(Palette::Classic.color(65, 100), [0, 7, 100]);
    }

    #[test]
    fn gradients_by_hand_between_stops() {
        // Classic n = 5: halfway (f = 4/8) from [0, 7, 100] to [32, 107, 203]:
        // 0 + 16 = 16, 7 + 50 = 57, 100 + 51.5 = 151.5 → rounded half up 152.
        assert_eq!(Palette::Classic.color(5, 100), [16, 57, 152]);
        // Ocean n = 64: last segment, f = 7/8 from [0, 10, 70] back to [0, 0, 40]:
        // 10 - 8.75 = 1.25 → 1, 70 - 26.25 = 43.75 → 44.
        assert_eq!(Palette::Ocean.color(64, 100), [0, 1, 44]);
        // Fire n = 2: f = 1/8 from [0, 0, 0] to [90, 0, 0]: 11.25 → 11.
        assert_eq!(Palette::Fire.color(2, 100), [11, 0, 0]);
    }

    #[test]
    fn gradients_interpolate_monotonically_and_round_to_nearest() {
        for (p, stops) in GRADIENTS {
            for k in 0..8 {
                let (a, b) = (stops[k], stops[(k + 1) % 8]);
                let mut prev = a;
                for j in 0..=SEGMENT {
                    let n = 1 + k as u32 * SEGMENT + j;
                    let got = p.color(n, 10_000);
                    for ch in 0..3 {
                        let (a, b, g) = (i32::from(a[ch]), i32::from(b[ch]), i32::from(got[ch]));
                        // Independent integer computation of round-half-up(a + (b - a)·j/8).
                        let want = (8 * a + (b - a) * j as i32 + 4).div_euclid(8);
                        assert_eq!(g, want, "{p:?} n = {n} channel {ch}");
                        // Stays between the stops and moves monotonically from a towards b.
                        assert!(a.min(b) <= g && g <= a.max(b), "{p:?} n = {n}");
                        let step = g - i32::from(prev[ch]);
                        assert!(step * (b - a).signum() >= 0, "{p:?} n = {n} not monotonic");
                    }
                    prev = got;
                }
                assert_eq!(prev, b, "{p:?} segment {k} must end on the next stop");
            }
        }
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(Palette::ALL.len(), Palette::NAMES.len());
        for (i, p) in Palette::ALL.into_iter().enumerate() {
            assert_eq!(p as usize, i, "discriminant indexes NAMES");
            assert_eq!(p.name(), Palette::NAMES[i]);
            assert_eq!(Palette::from_name(p.name()), Some(p));
        }
        assert_eq!(Palette::Gray.name(), "gray");
        assert_eq!(Palette::Classic.name(), "classic");
        assert_eq!(Palette::Fire.name(), "fire");
        assert_eq!(Palette::Ocean.name(), "ocean");
        assert_eq!(Palette::Viridis.name(), "viridis");
        assert_eq!(Palette::Electric.name(), "electric");
        // The British spelling names the same palette; matching is exact otherwise (the CLI
        // lower-cases what users type).
        assert_eq!(Palette::from_name("grey"), Some(Palette::Gray));
        for unknown in ["", "Gray", "CLASSIC", " fire", "ocean ", "rainbow"] {
            assert_eq!(Palette::from_name(unknown), None, "{unknown:?}");
        }
    }

    // ---- Coloring: cycles, offsets, smooth shading. ----

    fn escaped(n: u32) -> Escape {
        Escape { n, norm_sqr: 5.0 }
    }

    #[test]
    fn discrete_coloring_equals_palette_color() {
        for p in Palette::ALL {
            let c = Coloring::discrete(p);
            for n in 0..=700 {
                assert_eq!(c.color(escaped(n), 600), p.color(n, 600), "{p:?} n = {n}");
            }
            assert_eq!(
                c.color(escaped(u32::MAX - 1), u32::MAX),
                p.color(u32::MAX - 1, u32::MAX)
            );
        }
    }

    #[test]
    fn offset_shifts_the_cycle() {
        // Offset 1/8 of a 64-iteration cycle = one stop (8 iterations) ahead: n + 8 colours.
        for (p, _) in GRADIENTS {
            let shifted = Coloring {
                offset: 0.125,
                ..Coloring::discrete(p)
            };
            for n in 1..=200 {
                assert_eq!(
                    shifted.color(escaped(n), 1000),
                    p.color(n + 8, 1000),
                    "{p:?} n = {n}"
                );
            }
            // A whole cycle of offset changes nothing; inside stays black.
            let whole = Coloring {
                offset: 1.0,
                ..Coloring::discrete(p)
            };
            assert_eq!(whole.color(escaped(37), 1000), p.color(37, 1000));
            assert_eq!(shifted.color(Escape::inside(1000), 1000), INSIDE);
        }
    }

    #[test]
    fn cycle_length_stretches_the_gradient() {
        // A 128-iteration cycle: stop k at n - 1 = 16k; n = 17 → stop 1, n = 9 → halfway from
        // stop 0 to stop 1 (as n = 5 with the 64-iteration cycle).
        for (p, stops) in GRADIENTS {
            let c = Coloring {
                cycle_iters: 128,
                ..Coloring::discrete(p)
            };
            for (k, stop) in stops.iter().enumerate() {
                assert_eq!(
                    c.color(escaped(1 + 16 * k as u32), 10_000),
                    *stop,
                    "{p:?} stop {k}"
                );
            }
            assert_eq!(c.color(escaped(9), 10_000), p.color(5, 10_000), "{p:?}");
            assert_eq!(c.color(escaped(1 + 128 * 3), 10_000), stops[0]);
            // Cycle 1 (every escape time the same phase) and the defensive 0 (treated as 1).
            for cycle in [0, 1] {
                let c = Coloring {
                    cycle_iters: cycle,
                    ..Coloring::discrete(p)
                };
                assert_eq!(c.color(escaped(5), 100), stops[0], "{p:?} cycle {cycle}");
            }
        }
    }

    #[test]
    fn smooth_iter_by_hand_and_continuity() {
        // |z|² = 2¹⁶ (log₂ 16 = 4): ν = n - 2; |z|² = 2³² (log₂ 32 = 5): ν = n - 3.
        assert_eq!(smooth_iter(7, 65_536.0), 5.0);
        assert_eq!(smooth_iter(7, 4_294_967_296.0), 4.0);
        // |z|² = 2^(16·√2) would be ν = n - 2.5; between the ends it decreases with |z|.
        let mut prev = smooth_iter(7, 65_536.0);
        for k in 1..=64 {
            let norm = 65_536.0_f32 * 2f32.powi(k / 4);
            let v = smooth_iter(7, norm);
            assert!(
                v <= prev && v >= 4.0,
                "|z|² = {norm}: ν = {v}, previous {prev}"
            );
            prev = v;
        }
        // Continuity across a band: escaping at n with |z_n|² just above 2¹⁶ gives about
        // n - 2; the neighbour escaping one step later at n + 1 with |z|² ≈ (2¹⁶)² gives about
        // (n + 1) - 3 = n - 2.
        let a = smooth_iter(10, 65_536.0 * 1.0001);
        let b = smooth_iter(11, 4_294_967_296.0 * 0.9999);
        assert!((a - b).abs() < 1e-3, "{a} vs {b}");
    }

    #[test]
    fn smooth_coloring_between_discrete_neighbours() {
        // Escaping at n with |z|² = 2³² puts p = ν + 1 = n - 2 (one iteration before the
        // discrete position n - 1), with |z|² = 2¹⁶ at p = n - 1: the discrete colours of
        // n - 1 and n.
        for (p, _) in GRADIENTS {
            let c = Coloring::smooth(p);
            for n in 2..200 {
                let lo = Escape {
                    n,
                    norm_sqr: 4_294_967_296.0,
                };
                let hi = Escape {
                    n,
                    norm_sqr: 65_536.0,
                };
                assert_eq!(c.color(lo, 1000), p.color(n - 1, 1000), "{p:?} n = {n}");
                assert_eq!(c.color(hi, 1000), p.color(n, 1000), "{p:?} n = {n}");
            }
            assert_eq!(c.color(Escape::inside(50), 50), INSIDE);
        }
        // Gray: 255 - (p + 1), rounded: n = 10, |z|² = 2¹⁶ → 245; |z|² = 2³² → 246.
        let g = Coloring::smooth(Palette::Gray);
        assert_eq!(
            g.color(
                Escape {
                    n: 10,
                    norm_sqr: 65_536.0
                },
                100
            ),
            [245; 3]
        );
        assert_eq!(
            g.color(
                Escape {
                    n: 10,
                    norm_sqr: 4_294_967_296.0
                },
                100
            ),
            [246; 3]
        );
        assert_eq!(
            g.color(
                Escape {
                    n: 1000,
                    norm_sqr: 65_536.0
                },
                2000
            ),
            [0; 3]
        );
    }

    #[test]
    fn bailout_per_shading() {
        assert_eq!(Coloring::discrete(Palette::Fire).bailout_sqr::<f64>(), 4.0);
        assert_eq!(
            Coloring::smooth(Palette::Fire).bailout_sqr::<f32>(),
            65_536.0
        );
    }
}
