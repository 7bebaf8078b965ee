//! The radix sort (`kernels::sort`, `host::vector::sort*`) against std's stable sort by the
//! same ordered image (`host::vector::sort_keys_cpu`, `sort_pairs_cpu`), compared bit for
//! bit (so `-0.0` against `+0.0`, and NaN payloads, count), for every key type and for
//! key-value pairs (values = input positions, so any instability shows).
//!
//! Lengths: 0, 1, a partial warp, and one before, at and past tile boundaries; on a GPU
//! also a few million keys (thousands of tiles, where the look-back waits for real). The
//! emulator runs the small set only (a debug build emulates ~1e7 thread-steps/s).

use host::vector::{
    self, SortError, SortPlan, Sortable, sort_keys_bits, sort_keys_cpu, sort_pairs_bits,
    sort_pairs_cpu,
};
use kernels::sort::{SORT_TILE, SORT_TILE_WIDE};
use std::ops::Range;
use tests::{assert_identical, gpu};

/// splitmix64 (Steele, Lea, Flood 2014).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// A key type's test inputs from 64 random bits.
trait TestKey: Sortable {
    /// Any key (every bit pattern, for floats NaNs and infinities included).
    fn random(r: u64) -> Self;
    /// One of `k` keys chosen by `r` (low entropy).
    fn few(r: u64, k: u64) -> Self;
    /// Values the order must get right.
    fn specials() -> Vec<Self>;
    /// The order the sort promises, written independently of `SortKey::ordered`: `Ord`
    /// for integers; for floats `total_cmp` (so `-0 < +0`) with every NaN last, NaNs
    /// equal among themselves.
    fn std_cmp(a: &Self, b: &Self) -> std::cmp::Ordering;
}

impl TestKey for u32 {
    fn std_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.cmp(b)
    }
    fn random(r: u64) -> Self {
        r as u32
    }
    fn few(r: u64, k: u64) -> Self {
        (r % k) as u32 * 0x0101_0101
    }
    fn specials() -> Vec<Self> {
        vec![0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 0xff, 0x100]
    }
}

impl TestKey for i32 {
    fn std_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.cmp(b)
    }
    fn random(r: u64) -> Self {
        r as i32
    }
    fn few(r: u64, k: u64) -> Self {
        (r % k) as i32 - 2
    }
    fn specials() -> Vec<Self> {
        vec![0, -1, 1, i32::MIN, i32::MAX, -256, 255]
    }
}

impl TestKey for f32 {
    fn std_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
        match (a.is_nan(), b.is_nan()) {
            (false, false) => a.total_cmp(b),
            (x, y) => x.cmp(&y),
        }
    }
    fn random(r: u64) -> Self {
        // Half any bit pattern (NaNs, infinities, subnormals), half ordinary numbers.
        if r & 1 == 0 {
            f32::from_bits((r >> 32) as u32)
        } else {
            ((r >> 11) as f64 / (1u64 << 53) as f64 * 2e3 - 1e3) as f32
        }
    }
    fn few(r: u64, k: u64) -> Self {
        [-0.0, 0.0, 1.5, f32::NAN, -2.0][(r % k) as usize % 5]
    }
    fn specials() -> Vec<Self> {
        vec![
            -0.0,
            0.0,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001), // signalling NaN
            f32::from_bits(0xffc0_1234), // negative NaN with a payload
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::from_bits(1), // smallest subnormal
            -f32::from_bits(1),
            f32::MAX,
            f32::MIN,
        ]
    }
}

impl TestKey for u64 {
    fn std_cmp(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.cmp(b)
    }
    fn random(r: u64) -> Self {
        r
    }
    fn few(r: u64, k: u64) -> Self {
        (r % k) << 56 | 1 << 53
    }
    fn specials() -> Vec<Self> {
        // Above 2^53, neighbours that an f64 would merge.
        let big = 1u64 << 53;
        vec![
            big,
            big + 1,
            big + 2,
            u64::MAX,
            u64::MAX - 1,
            0,
            1 << 32,
            (1 << 32) - 1,
        ]
    }
}

/// The inputs of one length: random (with the specials sprinkled in), all equal, four
/// distinct values, sorted and reversed.
fn inputs<K: TestKey>(rng: &mut Rng, n: usize) -> Vec<(&'static str, Vec<K>)> {
    let specials = K::specials();
    let mut random: Vec<K> = (0..n).map(|_| K::random(rng.next_u64())).collect();
    for (i, &s) in specials.iter().enumerate() {
        if n > 0 {
            let at = (rng.next_u64() as usize + i) % n;
            random[at] = s;
        }
    }
    let sorted = sort_keys_cpu(&random, 0..K::BITS);
    let reversed: Vec<K> = sorted.iter().rev().copied().collect();
    vec![
        ("random", random),
        ("all equal", vec![K::few(7, 1); n]),
        (
            "4 distinct",
            (0..n).map(|_| K::few(rng.next_u64(), 4)).collect(),
        ),
        ("sorted", sorted),
        ("reversed", reversed),
    ]
}

fn bits<K: Sortable>(v: &[K]) -> Vec<u64> {
    v.iter().map(|k| k.raw_bits()).collect()
}

/// Lengths: empty, one, a partial warp, and around the boundaries of both tile sizes
/// (`3 · SORT_TILE + 1` is also `2 · SORT_TILE_WIDE + 1`); on a GPU also thousands of
/// tiles.
fn lengths(gpu: &host::Gpu) -> Vec<usize> {
    const _: () = assert!(3 * SORT_TILE == 2 * SORT_TILE_WIDE);
    let mut v = vec![
        0,
        1,
        31,
        SORT_TILE - 1,
        SORT_TILE,
        SORT_TILE + 1,
        SORT_TILE_WIDE - 1,
        SORT_TILE_WIDE,
        SORT_TILE_WIDE + 1,
        3 * SORT_TILE + 1,
    ];
    if !gpu.is_emulator() {
        v.extend([(1 << 20) + 1, (1 << 22) + 3 * SORT_TILE + 1]);
    }
    v
}

fn check_keys<K: TestKey>(seed: u64) {
    let gpu = gpu();
    let mut rng = Rng(seed);
    for n in lengths(&gpu) {
        // Every input kind at a multi-tile length; random keys at the others.
        let all = n == 3 * SORT_TILE + 1 || n > 1 << 20;
        for (kind, keys) in inputs::<K>(&mut rng, n) {
            if !all && kind != "random" {
                continue;
            }
            let what = format!("sort {} n = {n}, {kind}", K::NAME);
            let got =
                sort_keys_bits(&gpu, &keys, 0..K::BITS).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_identical(&what, &bits(&sort_keys_cpu(&keys, 0..K::BITS)), &bits(&got));
            let mut std_sorted = keys.clone();
            std_sorted.sort_by(K::std_cmp); // stable
            assert_identical(
                &format!("{what} (std order)"),
                &bits(&std_sorted),
                &bits(&got),
            );
        }
    }
}

#[test]
fn sort_u32_identical_to_cpu_stable_sort() {
    check_keys::<u32>(1);
}

#[test]
fn sort_i32_identical_to_cpu_stable_sort() {
    check_keys::<i32>(2);
}

#[test]
fn sort_f32_identical_to_cpu_stable_sort() {
    // -0 before +0, NaNs of either sign last in input order, payloads kept.
    check_keys::<f32>(3);
}

#[test]
fn sort_u64_identical_to_cpu_stable_sort() {
    check_keys::<u64>(4);
}

fn check_pairs<K: TestKey>(seed: u64, n: usize, bits_range: Range<u32>) {
    let gpu = gpu();
    let mut rng = Rng(seed);
    let values: Vec<u32> = (0..n as u32).collect();
    for (kind, keys) in inputs::<K>(&mut rng, n) {
        let what = format!("sort pairs {} n = {n} bits {bits_range:?}, {kind}", K::NAME);
        let (k, v) = sort_pairs_bits(&gpu, &keys, &values, bits_range.clone())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let (wk, wv) = sort_pairs_cpu(&keys, &values, bits_range.clone());
        assert_identical(&format!("{what}: keys"), &bits(&wk), &bits(&k));
        assert_identical(&format!("{what}: values (input positions)"), &wv, &v);
    }
}

#[test]
fn sort_pairs_are_stable() {
    // Values are input positions: equal keys (all-equal and 4-distinct inputs, and equal
    // digits under a narrow bit range) must keep them ascending.
    let n = 2 * SORT_TILE + 33;
    check_pairs::<u32>(5, n, 0..32);
    check_pairs::<f32>(6, n, 0..32);
    check_pairs::<u64>(7, SORT_TILE + 1, 0..64);
    check_pairs::<i32>(8, SORT_TILE_WIDE + 1, 0..32);
    if !gpu().is_emulator() {
        check_pairs::<u32>(9, (1 << 22) + 1, 0..32);
    }
}

#[test]
fn sort_bit_ranges_identical_to_cpu() {
    // A range compares only its bits of the ordered image: ranges narrower than a digit,
    // not digit-aligned, empty (a stable copy), and the top bits only.
    let gpu = gpu();
    let mut rng = Rng(10);
    let n = SORT_TILE + 77;
    let ranges: [(Range<u32>, Range<u32>); 5] = [
        (0..0, 0..0),
        (4..21, 13..64),
        (8..16, 0..1),
        (31..32, 56..64),
        (0..5, 3..17),
    ];
    for (r32, r64) in ranges {
        let keys: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let what = format!("sort u32 bits {r32:?}");
        let got =
            sort_keys_bits(&gpu, &keys, r32.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_identical(&what, &sort_keys_cpu(&keys, r32.clone()), &got);
        let floats: Vec<f32> = (0..n).map(|_| f32::random(rng.next_u64())).collect();
        let what = format!("sort f32 bits {r32:?}");
        let got =
            sort_keys_bits(&gpu, &floats, r32.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_identical(
            &what,
            &bits(&sort_keys_cpu(&floats, r32.clone())),
            &bits(&got),
        );
        check_pairs::<u64>(rng.next_u64(), n, r64);
    }
}

#[test]
fn sort_bad_input_is_an_error_naming_the_values() {
    let gpu = gpu();
    let e = sort_keys_bits(&gpu, &[3u32, 1], 0..33).unwrap_err();
    assert!(
        matches!(
            e,
            SortError::BitRange {
                begin_bit: 0,
                end_bit: 33,
                key_bits: 32
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("0..33") && e.to_string().contains("32-bit"),
        "{e}"
    );
    let e = sort_keys_bits(&gpu, &[3u64], Range { start: 40, end: 20 }).unwrap_err();
    assert!(
        e.to_string().contains("40..20") && e.to_string().contains("64-bit"),
        "{e}"
    );
    let e = sort_pairs_bits(&gpu, &[3u32, 1, 2], &[0, 1], 0..32).unwrap_err();
    assert!(
        matches!(
            e,
            SortError::Length {
                what: "values",
                len: 2,
                keys: 3
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("2 elements") && e.to_string().contains("3 keys"),
        "{e}"
    );
    // A plan for keys only, or for fewer keys.
    let mut plan = SortPlan::<u32>::keys(&gpu, 4).expect("plan");
    let k = vector::upload(&gpu, &[1u32; 8]).expect("upload");
    let mut out = vector::upload(&gpu, &[0u32; 8]).expect("upload");
    let e = vector::sort_keys_dev(
        &gpu,
        &k.as_slice(),
        &mut out.as_mut_slice(),
        0..32,
        &mut plan,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("4 keys") && e.to_string().contains("not 8"),
        "{e}"
    );
    let e = vector::sort_keys_dev(
        &gpu,
        &k.index(..4).expect("view"),
        &mut out.as_mut_slice(),
        0..32,
        &mut plan,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            SortError::Length {
                what: "keys_out",
                len: 8,
                keys: 4
            }
        ),
        "{e}"
    );
    // Zero keys: a no-op, not an error.
    assert!(
        sort_keys_bits::<f32>(&gpu, &[], 0..32)
            .expect("empty")
            .is_empty()
    );
    let (k, v) = vector::sort_pairs::<u64>(&gpu, &[], &[]).expect("empty pairs");
    assert!(k.is_empty() && v.is_empty());
}

#[test]
fn sort_plan_reused_across_lengths_and_kinds() {
    // The plan keeps look-back state between sorts (epochs, the tile counter's base) and
    // between the passes of one sort: repeated sorts on one plan, shorter ones included,
    // keys only and pairs, must all be exact.
    let gpu = gpu();
    let mut rng = Rng(11);
    let cap = 3 * SORT_TILE + 5;
    let mut plan = SortPlan::<u32>::pairs(&gpu, cap).expect("plan");
    for (round, len) in [cap, 1, SORT_TILE + 1, cap, 100].into_iter().enumerate() {
        let keys: Vec<u32> = (0..len).map(|_| rng.next_u64() as u32 % 1000).collect();
        let values: Vec<u32> = (0..len as u32).collect();
        let k = vector::upload(&gpu, &keys).expect("upload");
        let v = vector::upload(&gpu, &values).expect("upload");
        let mut ko = vector::poisoned::<u32>(&gpu, len).expect("alloc");
        let mut vo = vector::poisoned::<u32>(&gpu, len).expect("alloc");
        let what = format!("round {round}, {len} keys");
        let bits = if round % 2 == 0 { 0..32 } else { 0..10 };
        {
            let (kv, vv) = (k.index(..len).expect("view"), v.index(..len).expect("view"));
            let (mut kov, mut vov) = (
                ko.index_mut(..len).expect("view"),
                vo.index_mut(..len).expect("view"),
            );
            vector::sort_pairs_dev(
                &gpu,
                (&kv, &vv),
                (&mut kov, &mut vov),
                bits.clone(),
                &mut plan,
            )
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        gpu.synchronize().unwrap_or_else(|e| panic!("{what}: {e}"));
        let (wk, wv) = sort_pairs_cpu(&keys, &values, bits);
        assert_identical(&what, &wk, &ko.as_host_vec().expect("download")[..len]);
        assert_identical(&what, &wv, &vo.as_host_vec().expect("download")[..len]);
    }
}
