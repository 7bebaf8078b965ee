//! The CPU references of the sort: a stable sort by the same ordered image, restricted to
//! the bit range.

use super::check_bits;
use kernels::sort::SortKey;
use rayon::slice::ParallelSliceMut;
use std::ops::Range;

/// The ordered image's bits `bits` of `k` (what the sort compares).
fn sort_key<K: SortKey>(k: K, bits: &Range<u32>) -> u64 {
    let width = bits.end.saturating_sub(bits.start);
    let mask = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    k.ordered().checked_shr(bits.start).unwrap_or(0) & mask
}

/// The CPU reference: `keys` stably sorted (rayon's `par_sort_by_key`) by the bits `bits` of
/// their ordered image (`kernels::sort::SortKey::ordered`).
///
/// # Panics
/// If `bits` is outside the key ([`check_bits`]).
pub fn sort_keys_cpu<K: SortKey + Send>(keys: &[K], bits: Range<u32>) -> Vec<K> {
    assert!(
        check_bits::<K>(&bits).is_ok(),
        "sort_keys_cpu: bit range {bits:?}"
    );
    let mut v = keys.to_vec();
    v.par_sort_by_key(|&k| sort_key(k, &bits));
    v
}

/// The CPU reference of a key-value sort: pairs stably sorted by their keys as in
/// [`sort_keys_cpu`].
///
/// # Panics
/// If `bits` is outside the key, or the lengths differ.
pub fn sort_pairs_cpu<K: SortKey + Send>(
    keys: &[K],
    values: &[u32],
    bits: Range<u32>,
) -> (Vec<K>, Vec<u32>) {
    assert!(
        check_bits::<K>(&bits).is_ok(),
        "sort_pairs_cpu: bit range {bits:?}"
    );
    assert_eq!(
        keys.len(),
        values.len(),
        "sort_pairs_cpu: one value per key"
    );
    let mut v: Vec<(K, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    v.par_sort_by_key(|&(k, _)| sort_key(k, &bits));
    v.into_iter().unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_reference_sorts_by_the_bit_range() {
        let keys = [0x12u32, 0x21, 0x11, 0x22];
        assert_eq!(sort_keys_cpu(&keys, 0..4), [0x21, 0x11, 0x12, 0x22]);
        assert_eq!(sort_keys_cpu(&keys, 4..8), [0x12, 0x11, 0x21, 0x22]);
        assert_eq!(sort_keys_cpu(&keys, 3..3), keys);
        let (k, v) = sort_pairs_cpu(&[-1.0f32, f32::NAN, -0.0, 0.0], &[0, 1, 2, 3], 0..32);
        assert_eq!(v, [0, 2, 3, 1]);
        assert!(k[3].is_nan());
    }
}
