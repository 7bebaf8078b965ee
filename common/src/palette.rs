//! Palettes: map an escape time to an RGB colour.
//!
//! Gradients are interpolated with `glam::Vec3` using only `+ - *` and exact integer-to-float
//! conversions, so the CPU and GPU produce the same bytes.

use glam::Vec3;

/// An 8-bit-per-channel colour `[r, g, b]`.
pub type Rgb = [u8; 3];

/// Colour of points taken to be in the set (escape time equal to `max_iter`), for the
/// gradient palettes.
pub const INSIDE: Rgb = [0, 0, 0];

/// How escape times become colours. `#[repr(u32)]` so it can be passed to a kernel by value.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
}

// SAFETY: `#[repr(u32)]` fieldless enum; host code only creates declared variants.
unsafe impl cuda_std::DeviceCopy for Palette {}

impl Palette {
    /// Every palette, in the order of [`Palette::NAMES`].
    pub const ALL: [Palette; 4] = [Self::Gray, Self::Classic, Self::Fire, Self::Ocean];
    /// The name of every palette, as accepted by [`Palette::from_name`].
    pub const NAMES: [&'static str; 4] = ["gray", "classic", "fire", "ocean"];

    /// Number of iterations one full cycle of a gradient palette spans.
    pub const CYCLE_ITERS: u32 = 64;

    /// The palette's name (lower case).
    pub const fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Looks a palette up by its name (case-sensitive); `None` for unknown names.
    pub fn from_name(name: &str) -> Option<Self> {
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
        }
    }
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

    const GRADIENTS: [(Palette, &[Rgb; 8]); 3] = [
        (Palette::Classic, &CLASSIC),
        (Palette::Fire, &FIRE),
        (Palette::Ocean, &OCEAN),
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
        for unknown in ["", "grey", "Gray", "CLASSIC", " fire", "ocean ", "rainbow"] {
            assert_eq!(Palette::from_name(unknown), None, "{unknown:?}");
        }
    }
}
