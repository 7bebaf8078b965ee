//! The radix-sort rows: our sort ([`crate::vector::sort_keys_dev`], `sort_pairs_dev`)
//! and CUB's `DeviceRadixSort::SortKeys` / `SortPairs` ([`super::cub::Cub::sort_u32`]) on
//! the same inputs: `u32` keys, alone and with `u32` values, at [`SORT_SIZES`] keys (those
//! up to the bench's length, at least the smallest), uniform and low-entropy (4 distinct
//! values). Each output is checked against the CPU's stable sort; a difference is a note.
//!
//! Rates count bytes as the other rows do, each array element read or written once: a
//! sort of `n` keys moves `2 · 4 · n` bytes, a pair sort `2 · 8 · n` (what a single-pass sort
//! would move; a radix sort moves about `passes + 1` times that).

use super::cub::Cub;
use super::{Bench, BenchError, Implementation};
use crate::gpu::GpuError;
use crate::vector::{SortPlan, sort_keys_cpu, sort_pairs_cpu};
use cust::{error::GpuContext, memory::DeviceBuffer};

/// Keys per sort row: 2^20, 2^24, 2^28.
pub const SORT_SIZES: [usize; 3] = [1 << 20, 1 << 24, 1 << 28];

/// The key distributions of the sort rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDistribution {
    /// Every `u32` equally likely.
    Uniform,
    /// Four distinct values (every digit pass sees at most four digits).
    FourValues,
}

impl KeyDistribution {
    /// Both.
    pub const ALL: [KeyDistribution; 2] = [Self::Uniform, Self::FourValues];

    /// The label in the workload name.
    pub fn label(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::FourValues => "4 values",
        }
    }

    /// `n` keys of this distribution (splitmix64 of the index, seeded per distribution).
    pub fn keys(self, n: usize) -> Vec<u32> {
        use rayon::prelude::*;
        (0..n as u64)
            .into_par_iter()
            .map(|i| {
                let r = splitmix(i ^ (self as u64 + 1) << 40);
                match self {
                    Self::Uniform => r as u32,
                    // Spread over all four bytes, so every pass has work to do.
                    Self::FourValues => {
                        [0x0000_0000, 0x1357_9bdf, 0x8642_0ace, 0xffff_ffff][(r >> 62) as usize]
                    }
                }
            })
            .collect()
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The sizes the sort rows run at for a bench of `len` elements per vector: those of
/// [`SORT_SIZES`] up to `len`, and at least the smallest.
pub fn sort_sizes(len: usize) -> Vec<usize> {
    let v: Vec<usize> = SORT_SIZES.into_iter().filter(|&n| n <= len).collect();
    if v.is_empty() { vec![SORT_SIZES[0]] } else { v }
}

/// The workload name of a sort row: `sort u32 2^24 uniform`, `sort pairs u32 2^20 4 values`.
pub fn sort_workload(n: usize, dist: KeyDistribution, pairs: bool) -> String {
    let size = if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    };
    let kind = if pairs { "sort pairs u32" } else { "sort u32" };
    format!("{kind} {size} {}", dist.label())
}

/// Bytes a sort row counts (see the module docs).
fn sort_bytes(n: usize, pairs: bool) -> u64 {
    (if pairs { 16 } else { 8 }) * n as u64
}

/// One size and distribution: inputs on the device, outputs, the CPU's answers.
struct SortCase {
    workload_keys: String,
    workload_pairs: String,
    n: usize,
    keys: DeviceBuffer<u32>,
    values: DeviceBuffer<u32>,
    keys_out: DeviceBuffer<u32>,
    values_out: DeviceBuffer<u32>,
    want_keys: Vec<u32>,
    want_pairs: (Vec<u32>, Vec<u32>),
}

impl SortCase {
    fn new(gpu: &crate::Gpu, n: usize, dist: KeyDistribution) -> Result<Self, GpuError> {
        let keys = dist.keys(n);
        let values: Vec<u32> = (0..n as u32).collect();
        let want_pairs = sort_pairs_cpu(&keys, &values, 0..32);
        Ok(Self {
            workload_keys: sort_workload(n, dist, false),
            workload_pairs: sort_workload(n, dist, true),
            n,
            keys: crate::vector::upload(gpu, &keys)?,
            values: crate::vector::upload(gpu, &values)?,
            keys_out: crate::vector::poisoned::<u32>(gpu, n)?,
            values_out: crate::vector::poisoned::<u32>(gpu, n)?,
            want_keys: sort_keys_cpu(&keys, 0..32),
            want_pairs,
        })
    }

    /// A note if the outputs differ from the CPU's (keys, and values for pairs).
    fn check(&self, who: Implementation, pairs: bool) -> Result<Option<String>, GpuError> {
        let what = "copying a sort result back";
        let keys = self.keys_out.as_host_vec().gpu_context(what)?;
        let want = if pairs {
            &self.want_pairs.0
        } else {
            &self.want_keys
        };
        let mut bad = keys.iter().zip(want).filter(|(a, b)| a != b).count();
        if pairs {
            let values = self.values_out.as_host_vec().gpu_context(what)?;
            bad += values
                .iter()
                .zip(&self.want_pairs.1)
                .filter(|(a, b)| a != b)
                .count();
        }
        let workload = if pairs {
            &self.workload_pairs
        } else {
            &self.workload_keys
        };
        Ok((bad > 0).then(|| {
            format!(
                "{workload}: {who}'s sort differs from the CPU's stable sort in {bad} of {} \
                 elements",
                self.n
            )
        }))
    }
}

impl Bench<'_> {
    /// Our sort rows: keys and pairs of every distribution at every size of
    /// [`sort_sizes`], checked against the CPU.
    pub(super) fn sorts(&mut self) -> Result<(), GpuError> {
        for n in sort_sizes(self.len) {
            let mut plan = SortPlan::<u32>::pairs(&self.gpu, n).map_err(sort_gpu_error)?;
            for dist in KeyDistribution::ALL {
                let wanted = [false, true].map(|pairs| self.wants(&sort_workload(n, dist, pairs)));
                if wanted == [false, false] {
                    continue;
                }
                let mut c = SortCase::new(&self.gpu, n, dist)?;
                for pairs in [false, true] {
                    if !wanted[pairs as usize] {
                        continue;
                    }
                    let stats = self.time(|| {
                        let (k, ko) = (c.keys.as_slice(), &mut c.keys_out.as_mut_slice());
                        let r = if pairs {
                            let v = c.values.as_slice();
                            let vo = &mut c.values_out.as_mut_slice();
                            crate::vector::sort_pairs_dev(
                                &self.gpu,
                                (&k, &v),
                                (ko, vo),
                                0..32,
                                &mut plan,
                            )
                        } else {
                            crate::vector::sort_keys_dev(&self.gpu, &k, ko, 0..32, &mut plan)
                        };
                        r.map_err(sort_gpu_error)
                    })?;
                    self.notes.extend(c.check(Implementation::Rust, pairs)?);
                    let workload = if pairs {
                        &c.workload_pairs
                    } else {
                        &c.workload_keys
                    };
                    let row = self.row(workload, Implementation::Rust, stats, sort_bytes(n, pairs));
                    self.log(&format!(
                        "{workload}: rust {} ({:.2} G keys/s)",
                        row.rate_text(),
                        n as f64 / (row.stats.median_ms * 1e-3) / 1e9
                    ));
                    self.entries.push(row);
                }
            }
        }
        Ok(())
    }

    /// CUB's sort rows, on the same inputs as ours.
    pub(super) fn cub_sort_rows(&mut self, cub: &Cub) -> Result<(), GpuError> {
        let mut temp = DeviceBuffer::<u8>::zeroed_async(1, self.gpu.stream())
            .gpu_context("allocating CUB scratch")?;
        for n in sort_sizes(self.len) {
            for dist in KeyDistribution::ALL {
                let wanted = [false, true].map(|pairs| self.wants(&sort_workload(n, dist, pairs)));
                if wanted == [false, false] {
                    continue;
                }
                let mut c = SortCase::new(&self.gpu, n, dist)?;
                for pairs in [false, true] {
                    if !wanted[pairs as usize] {
                        continue;
                    }
                    let timed = self.time(|| {
                        let values = pairs.then_some((&c.values, &mut c.values_out));
                        cub.sort_u32(&self.gpu, (&c.keys, &mut c.keys_out), values, &mut temp)
                    });
                    let workload = if pairs {
                        c.workload_pairs.clone()
                    } else {
                        c.workload_keys.clone()
                    };
                    let stats = match timed {
                        Ok(s) => s,
                        Err(BenchError(e)) => {
                            self.notes.push(format!("{workload}: CUB failed: {e}"));
                            continue;
                        }
                    };
                    self.notes.extend(c.check(Implementation::Cub, pairs)?);
                    let row = self.row(&workload, Implementation::Cub, stats, sort_bytes(n, pairs));
                    self.log(&format!("{workload}: cub {}", row.rate_text()));
                    self.entries.push(row);
                }
            }
        }
        Ok(())
    }
}

/// A sort error in the bench: its arguments are the bench's own (always valid), so only
/// GPU errors reach here; anything else is reported as an invalid value.
fn sort_gpu_error(e: crate::vector::SortError) -> GpuError {
    match e {
        crate::vector::SortError::Gpu(g) => g,
        other => GpuError::Context {
            context: other.to_string(),
            source: Box::new(GpuError::InvalidValue),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_bench_length() {
        assert_eq!(sort_sizes(1 << 28), SORT_SIZES);
        assert_eq!(sort_sizes((1 << 24) + 1), [1 << 20, 1 << 24]);
        assert_eq!(sort_sizes(1000), [1 << 20]);
    }

    #[test]
    fn workload_names_and_inputs() {
        assert_eq!(
            sort_workload(1 << 24, KeyDistribution::Uniform, false),
            "sort u32 2^24 uniform"
        );
        assert_eq!(
            sort_workload(1 << 20, KeyDistribution::FourValues, true),
            "sort pairs u32 2^20 4 values"
        );
        let few = KeyDistribution::FourValues.keys(10_000);
        let mut distinct = few.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 4);
        let uniform = KeyDistribution::Uniform.keys(10_000);
        assert!(uniform.iter().any(|&k| k > 1 << 31) && uniform.iter().any(|&k| k < 1 << 31));
        assert_eq!(uniform, KeyDistribution::Uniform.keys(10_000), "seeded");
        assert_eq!(sort_bytes(4, true), 64);
    }
}
