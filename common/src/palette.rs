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
