//! The radix sort (`kernels::sort`) on the GPU or the CPU emulator: keys (`u32`, `i32`,
//! `f32`, `u64`) alone or with `u32` values, stable, over an optional bit range of the keys'
//! ordered image (re-exported from [`crate::vector`]).
//!
//! As for the scans, two levels: [`sort_keys_dev`] / [`sort_pairs_dev`] queue the launches
//! on device views with a [`SortPlan`] made once per capacity (the look-back status words,
//! the tile counter, the digit counts and the second key and value buffers the passes
//! alternate with), what the bench times; [`sort_keys`] / [`sort_pairs`] copy in, sort,
//! synchronise and copy back. One sort is one histogram launch and one launch per 8-bit
//! digit of the bit range (4 for 32-bit keys, 8 for `u64`), no synchronisation between.
//!
//! CPU references: [`sort_keys_cpu`] and [`sort_pairs_cpu`], a stable sort (rayon's
//! `par_sort_by_key`, a parallel merge sort) by the same ordered image
//! (`kernels::sort::SortKey::ordered`) restricted to the bit range.
//!
//! The host-level calls are in `sort/host_level.rs`, the CPU references in `sort/cpu.rs`;
//! both are re-exported here.

use super::LookBackBook;
use crate::gpu::{FunctionOf, Gpu, GpuError, ResolvedOf, kernel_table};
use cuda_std::launch::{AtomicOut, Kernel, Out, Safe, Slice, Unsafe, Value};
use cust::{
    error::GpuContext,
    function::LaunchConfig,
    memory::{
        DeviceBuffer, DeviceSlice, DeviceSliceMut, ValidAsZeroBits,
        device::{KernelMemory, KernelMemoryMut},
    },
};
use kernels::sort::{
    DigitPlace, HISTOGRAM_THREADS, MAX_PASSES, RADIX, SORT_TILE, SortKey,
    pass_dynamic_shared_bytes, pass_threads, pass_tile, passes, sort_tiles, status_words,
};
use std::ops::Range;

mod cpu;
mod host_level;

pub use cpu::{sort_keys_cpu, sort_pairs_cpu};
pub use host_level::{sort_keys, sort_keys_bits, sort_pairs, sort_pairs_bits};

/// `sort_histogram_<key>`: `(keys, counts, begin_bit, end_bit)`.
pub type HistogramKernel<K> = Kernel<(Slice<K>, AtomicOut<u32>, Value<u32>, Value<u32>), Safe>;
/// `sort_pass[_pairs]_<key>`: `(keys, keys_out, values, values_out, bins, status, counter,
/// place, epoch, base)`; see `kernels::sort`.
pub type SortPassKernel<K> = Kernel<
    (
        Slice<K>,
        Out<K>,
        Slice<u32>,
        Out<u32>,
        Slice<u32>,
        Out<u64>,
        AtomicOut<u32>,
        Value<u32>,
        Value<u32>,
        Value<u32>,
    ),
    Unsafe,
>;

/// The most keys one sort takes: output positions are `u32` in the kernels.
pub const MAX_SORT_LEN: usize = u32::MAX as usize;

/// A key type with sort kernels: `u32`, `i32`, `f32`, `u64`.
pub trait Sortable:
    SortKey + ValidAsZeroBits + Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static
{
    /// Type name as in the kernel names.
    const NAME: &'static str;
    /// `sort_histogram_<key>`.
    const HISTOGRAM: HistogramKernel<Self>;
    /// `sort_pass_<key>` (keys only), `sort_pass_pairs_<key>` (with values).
    const PASS: [SortPassKernel<Self>; 2];
    /// A value written to output buffers before a sort, so unwritten elements show up.
    const POISON: Self;
    /// The key's bits (zero-extended), for exact comparisons (`-0.0 != 0.0`, NaN payloads).
    fn raw_bits(self) -> u64;
}

macro_rules! sortable {
    ($t:ty, $name:literal, $hist:ident, $pass:ident, $pairs:ident, $poison:expr, $bits:expr) => {
        impl Sortable for $t {
            const NAME: &'static str = $name;
            const POISON: Self = $poison;
            const HISTOGRAM: HistogramKernel<Self> = kernels::sort::$hist;
            const PASS: [SortPassKernel<Self>; 2] = [kernels::sort::$pass, kernels::sort::$pairs];
            fn raw_bits(self) -> u64 {
                let f: fn($t) -> u64 = $bits;
                f(self)
            }
        }
    };
}
sortable!(
    u32,
    "u32",
    sort_histogram_u32,
    sort_pass_u32,
    sort_pass_pairs_u32,
    0xdead_beef,
    u64::from
);
sortable!(
    i32,
    "i32",
    sort_histogram_i32,
    sort_pass_i32,
    sort_pass_pairs_i32,
    0x5ead_beef,
    |x| { u64::from(x as u32) }
);
sortable!(
    f32,
    "f32",
    sort_histogram_f32,
    sort_pass_f32,
    sort_pass_pairs_f32,
    f32::from_bits(0x7fc0_dead),
    |x| { u64::from(x.to_bits()) }
);
sortable!(
    u64,
    "u64",
    sort_histogram_u64,
    sort_pass_u64,
    sort_pass_pairs_u64,
    0xdead_beef_dead_beef,
    |x| x
);

kernel_table! {
    /// The sort kernels of key type `K`, each resolved in a [`Gpu`]'s module on first use
    /// ([`Gpu::kernels`]): [`Sortable::HISTOGRAM`] and [`Sortable::PASS`].
    struct SortKernels<K> {
        histogram: ResolvedOf<HistogramKernel<K>>,
        pass: [ResolvedOf<SortPassKernel<K>>; 2],
    }
}

/// A sort's failure: bad arguments (named with their values) or the GPU's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SortError {
    /// The bit range is not within the key.
    #[error(
        "sort: bit range {begin_bit}..{end_bit} is outside the {key_bits}-bit key (give \
         0 <= begin_bit <= end_bit <= {key_bits})"
    )]
    BitRange {
        /// Its first bit.
        begin_bit: u32,
        /// One past its last bit.
        end_bit: u32,
        /// The key's width.
        key_bits: u32,
    },
    /// A buffer's length differs from the keys'.
    #[error("sort: {what} holds {len} elements but there are {keys} keys (give one per key)")]
    Length {
        /// Which buffer (`values`, `keys_out`, `values_out`).
        what: &'static str,
        /// Its length.
        len: usize,
        /// The keys' length.
        keys: usize,
    },
    /// More keys than a sort takes.
    #[error("sort: {len} keys exceed the {MAX_SORT_LEN} one sort takes")]
    TooLong {
        /// The keys' length.
        len: usize,
    },
    /// The plan was made for fewer keys, or for keys only.
    #[error(
        "sort: the plan was made for {capacity} keys{}, not {len}{}: make it with \
         `SortPlan::{}(gpu, {len})`",
        if *.pairs_plan { " with values" } else { "" },
        if *.pairs { " with values" } else { "" },
        if *.pairs { "pairs" } else { "keys" }
    )]
    Plan {
        /// Keys the plan holds room for.
        capacity: usize,
        /// Whether it has value buffers.
        pairs_plan: bool,
        /// Keys asked for.
        len: usize,
        /// Whether values were given.
        pairs: bool,
    },
    /// A GPU error (allocation, launch, copy).
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Checks that `bits` lies in a `K`: `begin <= end <= K::BITS`.
///
/// # Errors
/// [`SortError::BitRange`] naming the range and the width.
pub fn check_bits<K: SortKey>(bits: &Range<u32>) -> Result<(), SortError> {
    if bits.start <= bits.end && bits.end <= K::BITS {
        Ok(())
    } else {
        Err(SortError::BitRange {
            begin_bit: bits.start,
            end_bit: bits.end,
            key_bits: K::BITS,
        })
    }
}

/// Device scratch for sorts of up to `capacity` keys of `K` (make once, reuse): the
/// look-back status words and tile counter (`kernels::sort`), the upsweep's digit counts,
/// and the buffers the passes alternate with (keys, and values for a pairs plan).
#[derive(Debug)]
pub struct SortPlan<K: Sortable> {
    capacity: usize,
    pairs: bool,
    /// `MAX_PASSES · RADIX` digit counts, zeroed before each sort's upsweep.
    counts: DeviceBuffer<u32>,
    /// `kernels::sort::status_words(tiles)` for `capacity` keys.
    status: DeviceBuffer<u64>,
    counter: DeviceBuffer<u32>,
    alt_keys: DeviceBuffer<K>,
    /// `capacity` values for a pairs plan, one unused word otherwise.
    alt_values: DeviceBuffer<u32>,
    /// Blocks of the upsweep.
    histogram_blocks: u32,
    book: LookBackBook,
}

impl<K: Sortable> SortPlan<K> {
    /// A plan for keys-only sorts of up to `capacity` keys.
    ///
    /// # Errors
    /// [`SortError::TooLong`] past [`MAX_SORT_LEN`]; allocation errors.
    pub fn keys(gpu: &Gpu, capacity: usize) -> Result<Self, SortError> {
        Self::new(gpu, capacity, false)
    }

    /// A plan for key-value sorts (and keys-only sorts) of up to `capacity` keys.
    ///
    /// # Errors
    /// As [`SortPlan::keys`].
    pub fn pairs(gpu: &Gpu, capacity: usize) -> Result<Self, SortError> {
        Self::new(gpu, capacity, true)
    }

    fn new(gpu: &Gpu, capacity: usize, pairs: bool) -> Result<Self, SortError> {
        if capacity > MAX_SORT_LEN {
            return Err(SortError::TooLong { len: capacity });
        }
        let s = gpu.stream();
        let what = "allocating the sort plan";
        let sms = super::sm_count(gpu)?;
        // Enough blocks of the upsweep to fill the GPU (8 per multiprocessor), each over
        // at least 16 keys per thread.
        let per_block = HISTOGRAM_THREADS as usize * 16;
        let histogram_blocks = capacity.div_ceil(per_block).clamp(1, sms as usize * 8) as u32;
        let zeroed_u32 = |n: usize| DeviceBuffer::<u32>::zeroed_async(n.max(1), s);
        Ok(Self {
            capacity,
            pairs,
            counts: zeroed_u32(MAX_PASSES * RADIX).gpu_context(what)?,
            // SORT_TILE, the smallest tile, gives the most tiles.
            status: DeviceBuffer::zeroed_async(
                status_words(sort_tiles(capacity, SORT_TILE).max(1)),
                s,
            )
            .gpu_context(what)?,
            counter: zeroed_u32(1).gpu_context(what)?,
            alt_keys: DeviceBuffer::zeroed_async(capacity.max(1), s).gpu_context(what)?,
            alt_values: zeroed_u32(if pairs { capacity } else { 1 }).gpu_context(what)?,
            histogram_blocks,
            book: LookBackBook::default(),
        })
    }

    /// Keys this plan holds room for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Checks a sort of `len` keys (with values or not) against the plan.
    fn check(&self, len: usize, pairs: bool) -> Result<(), SortError> {
        if len > self.capacity || (pairs && !self.pairs) {
            return Err(SortError::Plan {
                capacity: self.capacity,
                pairs_plan: self.pairs,
                len,
                pairs,
            });
        }
        Ok(())
    }
}

fn same_len(what: &'static str, len: usize, keys: usize) -> Result<(), SortError> {
    if len == keys {
        Ok(())
    } else {
        Err(SortError::Length { what, len, keys })
    }
}

/// Where a pass reads or writes: the caller's input or output, or the plan's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buf {
    In,
    Out,
    Alt,
}

/// The buffers of pass `pass` of `passes`: the last writes the output, the ones before
/// alternate back from there, the first reads the input.
fn pass_buffers(pass: u32, passes: u32) -> (Buf, Buf) {
    let dst = |p: u32| {
        if (passes - 1 - p).is_multiple_of(2) {
            Buf::Out
        } else {
            Buf::Alt
        }
    };
    let src = if pass == 0 { Buf::In } else { dst(pass - 1) };
    (src, dst(pass))
}

/// `keys_out` = `keys` stably sorted by the bits `bits` of their ordered image (all of
/// them: `0..K::BITS`), queued on `gpu`'s stream: one upsweep launch, then one launch per
/// digit pass ([`kernels::sort::passes`]). `keys` and `keys_out` are views of different
/// buffers, of equal length. A zero-length sort queues nothing.
///
/// # Errors
/// [`SortError::BitRange`], [`SortError::Length`], [`SortError::Plan`] (all before anything
/// is queued), GPU errors.
pub fn sort_keys_dev<K: Sortable>(
    gpu: &Gpu,
    keys: &DeviceSlice<'_, K>,
    keys_out: &mut DeviceSliceMut<'_, K>,
    bits: Range<u32>,
    plan: &mut SortPlan<K>,
) -> Result<(), SortError> {
    sort_dev(gpu, (keys, keys_out), None, bits, plan)
}

/// As [`sort_keys_dev`], with `values_out[j] = values[i]` where `keys_out[j] = keys[i]`
/// (stable: equal keys keep their values' input order). All four views have the keys'
/// length; `plan` is a [`SortPlan::pairs`].
///
/// # Errors
/// As [`sort_keys_dev`].
pub fn sort_pairs_dev<K: Sortable>(
    gpu: &Gpu,
    (keys, values): (&DeviceSlice<'_, K>, &DeviceSlice<'_, u32>),
    (keys_out, values_out): (&mut DeviceSliceMut<'_, K>, &mut DeviceSliceMut<'_, u32>),
    bits: Range<u32>,
    plan: &mut SortPlan<K>,
) -> Result<(), SortError> {
    sort_dev(
        gpu,
        (keys, keys_out),
        Some((values, values_out)),
        bits,
        plan,
    )
}

type Values<'a, 'b, 'c> = Option<(&'a DeviceSlice<'b, u32>, &'a mut DeviceSliceMut<'c, u32>)>;

fn sort_dev<K: Sortable>(
    gpu: &Gpu,
    (keys, keys_out): (&DeviceSlice<'_, K>, &mut DeviceSliceMut<'_, K>),
    mut values: Values<'_, '_, '_>,
    bits: Range<u32>,
    plan: &mut SortPlan<K>,
) -> Result<(), SortError> {
    check_bits::<K>(&bits)?;
    let len = keys.len();
    if len > MAX_SORT_LEN {
        return Err(SortError::TooLong { len });
    }
    same_len("keys_out", keys_out.len(), len)?;
    if let Some((v, vo)) = &values {
        same_len("values", v.len(), len)?;
        same_len("values_out", vo.len(), len)?;
    }
    plan.check(len, values.is_some())?;
    if len == 0 {
        return Ok(());
    }
    let (begin, end) = (bits.start, bits.end);
    let passes = passes(begin, end);
    let stream = gpu.stream();
    plan.counts
        .set_zero(stream)
        .gpu_context("zeroing the sort's digit counts")?;
    let cfg = LaunchConfig::new(plan.histogram_blocks, HISTOGRAM_THREADS, 0);
    let table = gpu.kernels::<SortKernels<K>>();
    let histogram = table.histogram.get(gpu, K::HISTOGRAM)?;
    histogram.launch(stream, cfg, (keys, &mut plan.counts, begin, end))?;
    let pairs = usize::from(values.is_some());
    let tile = pass_tile::<K>(pairs == 1);
    let tiles = u32::try_from(sort_tiles(len, tile)).unwrap_or(u32::MAX);
    let kernel = table.pass[pairs].get(gpu, K::PASS[pairs])?;
    let SortPlan {
        counts,
        status,
        counter,
        alt_keys,
        alt_values,
        book,
        ..
    } = plan;
    for pass in 0..passes {
        let place = DigitPlace::of_pass(begin, end, pass).pack();
        let bins = counts.index(pass as usize * RADIX..(pass as usize + 1) * RADIX)?;
        let l = book.book(tiles, || {
            status
                .set_zero(stream)
                .gpu_context("zeroing the sort status words")
        })?;
        let look_back = Pass {
            bins: &bins,
            status: &mut *status,
            counter: &mut *counter,
            place,
            epoch: l.epoch,
            base: l.base,
        };
        let (src, dst) = pass_buffers(pass, passes);
        let cfg = LaunchConfig::new(
            tiles,
            pass_threads::<K>(pairs == 1),
            pass_dynamic_shared_bytes::<K>(pairs == 1),
        );
        // Keys from `src` to `dst`; values likewise (or, keys only, an unused pair).
        match (&mut values, src, dst) {
            (None, Buf::In, Buf::Out) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (keys, &mut *keys_out),
                (&bins, &mut *alt_values),
            ),
            (None, Buf::In, Buf::Alt) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (keys, &mut *alt_keys),
                (&bins, &mut *alt_values),
            ),
            (None, Buf::Out, Buf::Alt) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (&*keys_out, &mut *alt_keys),
                (&bins, &mut *alt_values),
            ),
            (None, Buf::Alt, Buf::Out) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (&*alt_keys, &mut *keys_out),
                (&bins, &mut *alt_values),
            ),
            (Some((v, vo)), Buf::In, Buf::Out) => {
                look_back.launch(gpu, kernel, cfg, (keys, &mut *keys_out), (*v, &mut **vo))
            }
            (Some((v, _)), Buf::In, Buf::Alt) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (keys, &mut *alt_keys),
                (*v, &mut *alt_values),
            ),
            (Some((_, vo)), Buf::Out, Buf::Alt) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (&*keys_out, &mut *alt_keys),
                (&**vo, &mut *alt_values),
            ),
            (Some((_, vo)), Buf::Alt, Buf::Out) => look_back.launch(
                gpu,
                kernel,
                cfg,
                (&*alt_keys, &mut *keys_out),
                (&*alt_values, &mut **vo),
            ),
            (_, src, dst) => unreachable!("pass_buffers never gives {src:?} -> {dst:?}"),
        }?;
    }
    Ok(())
}

/// The look-back arguments of one scatter launch.
struct Pass<'a, 'b> {
    bins: &'a DeviceSlice<'b, u32>,
    status: &'a mut DeviceBuffer<u64>,
    counter: &'a mut DeviceBuffer<u32>,
    place: u32,
    epoch: u32,
    base: u32,
}

impl Pass<'_, '_> {
    /// Queues `kernel` from `keys` to `keys_out`, moving `values` to `values_out`.
    fn launch<K, KS, KD, VS, VD>(
        self,
        gpu: &Gpu,
        kernel: &FunctionOf<SortPassKernel<K>>,
        cfg: LaunchConfig,
        (keys, keys_out): (&KS, &mut KD),
        (values, values_out): (&VS, &mut VD),
    ) -> Result<(), SortError>
    where
        K: Sortable,
        KS: KernelMemory<K>,
        KD: KernelMemoryMut<K>,
        VS: KernelMemory<u32>,
        VD: KernelMemoryMut<u32>,
    {
        // SAFETY: `book` gave a fresh epoch (no status word carries it) and the counter's
        // value before this launch, the only one using this plan on the stream (`&mut`);
        // `bins` are the upsweep's counts of these keys at this pass's digit (the previous
        // pass reordered the keys, not their digits); the grid has one block of
        // `pass_threads` per tile of `pass_tile` keys, with `pass_dynamic_shared_bytes`, the
        // kernel's shape.
        unsafe {
            kernel.launch_unchecked(
                gpu.stream(),
                cfg,
                (
                    keys,
                    keys_out,
                    values,
                    values_out,
                    self.bins,
                    self.status,
                    self.counter,
                    self.place,
                    self.epoch,
                    self.base,
                ),
            )
        }?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_pass_writes_the_output() {
        for passes in 1..=8 {
            let mut prev = Buf::In;
            for p in 0..passes {
                let (src, dst) = pass_buffers(p, passes);
                assert_eq!(src, prev, "pass {p} of {passes}");
                assert_ne!(src, dst);
                assert_ne!(dst, Buf::In);
                prev = dst;
            }
            assert_eq!(prev, Buf::Out, "{passes} passes");
        }
    }

    #[test]
    fn bit_ranges_are_checked_against_the_key() {
        assert!(check_bits::<u32>(&(0..32)).is_ok());
        assert!(check_bits::<u64>(&(0..64)).is_ok());
        assert!(check_bits::<f32>(&(7..7)).is_ok());
        let e = check_bits::<u32>(&(0..33)).unwrap_err().to_string();
        assert!(e.contains("0..33") && e.contains("32-bit"), "{e}");
        let e = check_bits::<i32>(&Range { start: 9, end: 4 })
            .unwrap_err()
            .to_string();
        assert!(e.contains("9..4"), "{e}");
    }
}
