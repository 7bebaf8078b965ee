//! Bilinear approximation (BLA) of the perturbed iteration, to skip iterations in deep zooms.
//!
//! While `|δz|` is small, one perturbed step `δz ← 2·Z_m·δz + δz² + δc` is nearly linear:
//! `δz ← A·δz + B·δc` with `A = 2·Z_m`, `B = 1`, accurate to a relative `ε` while
//! `|δz| < ε·|A|` (the neglected `δz²` is then below `ε·|A·δz|`). Steps compose:
//! `(A, B)` of `l` steps followed by `(A', B')` of `l'` steps is `(A'·A, A'·B + B')` for
//! `l + l'` steps, valid while `|δz| < min(r, (r' − |B|·|δc|) / |A|)`, with `|δc|` bounded by
//! the largest pixel offset of the image. The table (built once per reference orbit on the host
//! and shared by the CPU and GPU) holds, at level `k`, the composition of `2^k` steps starting
//! at every reference index `m = 1 + j·2^k` (Zhuoran; Claude Heiland-Allen's "bilinear
//! approximation with rebasing", Fraktaler 3).
//!
//! Layout: level 0 holds one-step entries for `m = 1 ..= L − 2` (`L` = orbit length, so the
//! last step ends at `Z_{L−1}`); level `k + 1` has `⌊n_k / 2⌋` entries, entry `j` the merge of
//! level-`k` entries `2j` and `2j + 1`. Levels are stored one after another.

use crate::floatexp::{ComplexFx, FloatExp};

/// One table entry: `δz_{m+len} ≈ a·δz_m + b·δc` while `|δz_m| < r`.
#[derive(Clone, Copy, Debug, PartialEq, cuda_std::DeviceCopy)]
#[repr(C)]
pub struct Bla {
    /// Coefficient of `δz`.
    pub a: ComplexFx,
    /// Coefficient of `δc`.
    pub b: ComplexFx,
    /// Validity radius for `|δz|`.
    pub r: FloatExp,
    /// Steps it skips.
    pub len: u32,
}

/// Entries at level `k` for `n0` level-0 entries.
#[inline(always)]
pub fn level_len(n0: u32, k: u32) -> u32 {
    n0 >> k
}

/// Where level `k` starts in the flat table.
#[inline(always)]
pub fn level_start(n0: u32, k: u32) -> u32 {
    let mut start = 0;
    let mut i = 0;
    while i < k {
        start += level_len(n0, i);
        i += 1;
    }
    start
}

/// Number of level-0 entries for an orbit of `orbit_len` values (`0` when too short).
#[inline(always)]
pub fn level0_len(orbit_len: usize) -> u32 {
    orbit_len.saturating_sub(2) as u32
}

/// The longest entry usable at reference index `m` for `|δz|² = dz_norm_sqr`, skipping at
/// most `max_len` steps: the highest level whose entry starts at `m` (`(m − 1)` a multiple of
/// `2^k`), exists, and is valid (`|δz|² < r²`). Costs one comparison per level tried.
#[inline(always)]
pub fn lookup(table: &[Bla], n0: u32, m: u32, dz_norm_sqr: FloatExp, max_len: u32) -> Option<Bla> {
    if m == 0 || n0 == 0 || m > n0 {
        return None;
    }
    let i = m - 1;
    // Highest level at which m starts an entry, and where that level starts.
    let mut k = i.trailing_zeros().min(31);
    while k > 0 && level_len(n0, k) == 0 {
        k -= 1;
    }
    let mut start = level_start(n0, k);
    loop {
        let j = i >> k;
        if j < level_len(n0, k) {
            let e = table[(start + j) as usize];
            if e.len <= max_len && dz_norm_sqr.abs_lt(e.r * e.r) {
                return Some(e);
            }
        }
        if k == 0 {
            return None;
        }
        k -= 1;
        start -= level_len(n0, k);
    }
}

/// Merges `x` (first) and `y` (then) for pixels with `|δc| ≤ dc_max`.
pub fn merge(x: Bla, y: Bla, dc_max: FloatExp) -> Bla {
    let ax = x.a.abs();
    let shrunk = y.r - x.b.abs() * dc_max;
    let ry = if shrunk.m > 0.0 && ax.m != 0.0 {
        FloatExp::new(shrunk.m / ax.m, shrunk.e - ax.e)
    } else {
        FloatExp::ZERO
    };
    Bla {
        a: y.a * x.a,
        b: y.a * x.b + y.b,
        r: if x.r.abs_lt(ry) { x.r } else { ry },
        len: x.len + y.len,
    }
}

/// The one-step entry at `Z_m` for relative accuracy `eps`, for pixels that escape once
/// `|z|² > bailout_sqr`.
///
/// Within a skip every `|δz_k| < 2ε·|Z_k|` (each step's radius), so
/// `|z_k| ≤ (1 + 2ε)·|Z_k|`: a pixel can escape inside a skip only at a step where
/// `(1 + 2ε)²·|Z_k|² > bailout_sqr`. Such a step gets radius 0 (with a margin: factor
/// `1 + 8ε`): it is never skipped, nor is any merged entry across it, so the escape test
/// after each skip finds every escape at its own iteration. Only escaping references have
/// such steps (a bounded orbit stays within `|Z| ≤ 2`). (Without this rule, a pixel with
/// `δc = 0`, which follows an escaping reference exactly, skipped past the reference's
/// escape.)
pub fn single(z_re: f64, z_im: f64, eps: f64, bailout_sqr: f64) -> Bla {
    let a = ComplexFx::from_f64(2.0 * z_re, 2.0 * z_im);
    let near_escape = (z_re * z_re + z_im * z_im) * (1.0 + 8.0 * eps) > bailout_sqr;
    Bla {
        a,
        b: ComplexFx::from_f64(1.0, 0.0),
        r: if near_escape {
            FloatExp::ZERO
        } else {
            a.abs() * FloatExp::from_f64(eps)
        },
        len: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        // 10 level-0 entries: levels of 10, 5, 2 and 1.
        assert_eq!([0, 1, 2, 3].map(|k| level_len(10, k)), [10, 5, 2, 1]);
        assert_eq!([0, 1, 2, 3].map(|k| level_start(10, k)), [0, 10, 15, 17]);
        assert_eq!(level0_len(12), 10);
    }

    #[test]
    fn steps_near_the_bailout_are_never_skipped() {
        // |Z| = 2 − 1e-6: within (1 + 2ε)·|Z| of the bailout radius 2 for ε = 1e-6, radius
        // 0; |Z| = 1.9: radius ε·|2Z|.
        let far = single(2.0 - 1e-6, 0.0, 1e-6, 4.0);
        let near = single(1.9, 0.0, 1e-6, 4.0);
        assert_eq!(far.r, FloatExp::ZERO);
        assert!((near.r.to_f64() - 3.8e-6).abs() < 1e-18, "{:?}", near.r);
        // Any merge across the far step is invalid too, even for δz = 0 (a pixel on the
        // reference itself).
        let m = merge(near, far, FloatExp::from_f64(1e-12));
        assert_eq!(m.r, FloatExp::ZERO);
        let table = [near, far, m];
        assert_eq!(
            lookup(&table, 2, 1, FloatExp::ZERO, 10).map(|e| e.len),
            Some(1)
        );
        assert_eq!(lookup(&table, 2, 2, FloatExp::ZERO, 10), None);
    }

    #[test]
    fn merged_entries_compose_the_linear_maps() {
        // Z = 0.5 then Z = -0.25: A = 1 then -0.5; merged a = -0.5, b = -0.5·1 + 1 = 0.5.
        let x = single(0.5, 0.0, 1e-6, 4.0);
        let y = single(-0.25, 0.0, 1e-6, 4.0);
        let m = merge(x, y, FloatExp::from_f64(1e-12));
        assert_eq!(m.a.to_f64(), (-0.5, 0.0));
        assert_eq!(m.b.to_f64(), (0.5, 0.0));
        assert_eq!(m.len, 2);
        // r = min(1e-6·1, (0.5e-6 − 1·1e-12)/1).
        let r = m.r.to_f64();
        assert!((r - (0.5e-6 - 1e-12)).abs() < 1e-20, "{r}");
        // Lookup takes the longest valid entry starting at m (arguments are |δz|²).
        let table = [x, y, m];
        assert_eq!(
            lookup(&table, 2, 1, FloatExp::from_f64(1e-18), 10).map(|e| e.len),
            Some(2)
        );
        assert_eq!(
            lookup(&table, 2, 1, FloatExp::from_f64(1e-18), 1).map(|e| e.len),
            Some(1)
        );
        assert_eq!(
            lookup(&table, 2, 1, FloatExp::from_f64(0.49e-12), 10).map(|e| e.len),
            Some(1)
        );
        assert_eq!(
            lookup(&table, 2, 2, FloatExp::from_f64(1e-18), 10).map(|e| e.len),
            Some(1)
        );
        assert_eq!(lookup(&table, 2, 1, FloatExp::from_f64(1.0), 10), None);
        assert_eq!(lookup(&table, 2, 0, FloatExp::from_f64(1e-18), 10), None);
    }
}
