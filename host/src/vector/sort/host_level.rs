//! The host-level sorts: copy the keys (and values) in, poison the output, sort with a fresh
//! [`SortPlan`], synchronise and copy back.

use super::{SortError, SortPlan, Sortable, check_bits, same_len, sort_keys_dev, sort_pairs_dev};
use crate::gpu::{Gpu, GpuError};
use crate::vector::finish;
use cust::{
    error::GpuContext,
    memory::{DeviceBuffer, ValidAsZeroBits},
};
use std::ops::Range;

/// `keys` sorted on the GPU by all their bits ([`sort_keys_bits`] with `0..K::BITS`).
///
/// # Errors
/// As [`sort_keys_bits`].
pub fn sort_keys<K: Sortable>(gpu: &Gpu, keys: &[K]) -> Result<Vec<K>, SortError> {
    sort_keys_bits(gpu, keys, 0..K::BITS)
}

/// `keys` stably sorted on the GPU by the bits `bits` of their ordered image: copy in,
/// poison the output ([`Sortable::POISON`]), [`sort_keys_dev`] with a fresh plan, copy back.
///
/// # Errors
/// [`SortError::BitRange`] for a range outside the key, [`SortError::TooLong`], GPU errors.
pub fn sort_keys_bits<K: Sortable>(
    gpu: &Gpu,
    keys: &[K],
    bits: Range<u32>,
) -> Result<Vec<K>, SortError> {
    check_bits::<K>(&bits)?;
    let mut plan = SortPlan::keys(gpu, keys.len())?;
    let k = upload(gpu, keys)?;
    let mut out = upload(gpu, &vec![K::POISON; keys.len()])?;
    sort_keys_dev(
        gpu,
        &k.index(..keys.len())?,
        &mut out.index_mut(..keys.len())?,
        bits,
        &mut plan,
    )?;
    finish(gpu, K::PASS[0].name())?;
    download(&out, keys.len())
}

/// `(keys, values)` sorted on the GPU by all the keys' bits ([`sort_pairs_bits`]).
///
/// # Errors
/// As [`sort_pairs_bits`].
pub fn sort_pairs<K: Sortable>(
    gpu: &Gpu,
    keys: &[K],
    values: &[u32],
) -> Result<(Vec<K>, Vec<u32>), SortError> {
    sort_pairs_bits(gpu, keys, values, 0..K::BITS)
}

/// `(keys, values)` stably sorted on the GPU by the bits `bits` of the keys' ordered
/// image, each value moving with its key.
///
/// # Errors
/// [`SortError::Length`] when `values` and `keys` differ in length, [`SortError::BitRange`],
/// [`SortError::TooLong`], GPU errors.
pub fn sort_pairs_bits<K: Sortable>(
    gpu: &Gpu,
    keys: &[K],
    values: &[u32],
    bits: Range<u32>,
) -> Result<(Vec<K>, Vec<u32>), SortError> {
    check_bits::<K>(&bits)?;
    same_len("values", values.len(), keys.len())?;
    let n = keys.len();
    let mut plan = SortPlan::pairs(gpu, n)?;
    let (k, v) = (upload(gpu, keys)?, upload(gpu, values)?);
    let mut ko = upload(gpu, &vec![K::POISON; n])?;
    let mut vo = upload(gpu, &vec![0xdead_beef_u32; n])?;
    sort_pairs_dev(
        gpu,
        (&k.index(..n)?, &v.index(..n)?),
        (&mut ko.index_mut(..n)?, &mut vo.index_mut(..n)?),
        bits,
        &mut plan,
    )?;
    finish(gpu, K::PASS[1].name())?;
    Ok((download(&ko, n)?, download(&vo, n)?))
}

/// A device copy of `x` (one element at least, so an empty input still allocates).
fn upload<T: cust::memory::DeviceCopy + ValidAsZeroBits>(
    gpu: &Gpu,
    x: &[T],
) -> Result<DeviceBuffer<T>, GpuError> {
    let what = "copying the sort's input to the GPU";
    if x.is_empty() {
        DeviceBuffer::zeroed_async(1, gpu.stream()).gpu_context(what)
    } else {
        DeviceBuffer::from_slice_async(x, gpu.stream()).gpu_context(what)
    }
}

fn download<T: cust::memory::DeviceCopy>(
    x: &DeviceBuffer<T>,
    len: usize,
) -> Result<Vec<T>, SortError> {
    let mut v = x
        .as_host_vec()
        .gpu_context("copying the sort's result to the host")?;
    v.truncate(len);
    Ok(v)
}
