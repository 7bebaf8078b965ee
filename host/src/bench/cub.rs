//! CUB's device-wide reductions, scans and radix sorts as peers in `ferrocuda bench`: the library a CUDA C++
//! programmer would call instead of writing these kernels. Built at run time, where `nvcc`
//! is found, from [`CUB_SOURCE`] into a shared library (`nvcc -shared`), loaded with
//! `libloading` and called through its C functions on the bench's stream (the CUDA runtime
//! inside it uses the device's primary context, the one `cust` opened).

use super::vectors::scan_label;
use super::{Bench, BenchError, Entry, Implementation, random_f64};
use crate::gpu::{Gpu, GpuError};
use crate::vector::{Element, ReduceOp, ScanKind};
use cust::{error::GpuContext, memory::DeviceBuffer};
use std::ffi::{CStr, c_char, c_int, c_void};

/// The CUDA C++ source of the CUB peers.
pub const CUB_SOURCE: &str = include_str!("../../../bench/cuda/cub_peers.cu");

/// `ferro_cub_reduce` / `ferro_cub_scan`: `(op or exclusive, dtype, in, out, n, temp,
/// temp_bytes, stream) -> cudaError_t`.
type CubFn = unsafe extern "C" fn(
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    *mut c_void,
    *mut usize,
    cust::stream::RawStream,
) -> c_int;

/// `ferro_cub_sort`: `(pairs, key dtype, keys_in, keys_out, values_in, values_out, n, temp,
/// temp_bytes, stream) -> cudaError_t`.
type CubSortFn = unsafe extern "C" fn(
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    *const c_void,
    *mut c_void,
    c_int,
    *mut c_void,
    *mut usize,
    cust::stream::RawStream,
) -> c_int;

/// The key `dtype` of `ferro_cub_sort` for `u32` keys (the bench's sort rows).
const SORT_U32: c_int = 2;

/// An element type CUB is instantiated for in [`CUB_SOURCE`].
pub trait CubType: Element {
    /// The `dtype` argument of the C functions.
    const DTYPE: c_int;
}
impl CubType for f32 {
    const DTYPE: c_int = 0;
}
impl CubType for f64 {
    const DTYPE: c_int = 1;
}
impl CubType for u32 {
    const DTYPE: c_int = 2;
}

/// The loaded CUB peers.
pub struct Cub {
    reduce: CubFn,
    scan: CubFn,
    sort: CubSortFn,
    error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    /// CUB's version `(major, minor, subminor)`.
    pub version: (u32, u32, u32),
    // Last: the functions above point into it.
    _lib: libloading::Library,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for Cub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cub")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Cub {
    /// Builds [`CUB_SOURCE`] for `gpu`'s architecture and loads it. `Err` says why not: no
    /// nvcc on `PATH`, a compile error (with nvcc's messages), a load error.
    pub fn build(gpu: &Gpu) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
        let src = dir.path().join("cub_peers.cu");
        let lib_path = dir.path().join("libferro_cub.so");
        std::fs::write(&src, CUB_SOURCE).map_err(|e| format!("writing {}: {e}", src.display()))?;
        crate::nvcc::compile(
            gpu,
            " on the CUB peers",
            &["-shared", "-Xcompiler", "-fPIC"],
            &src,
            &lib_path,
        )?;
        // SAFETY: our own library, built just now; its initialisers are the CUDA runtime's.
        let lib = unsafe { libloading::Library::new(&lib_path) }
            .map_err(|e| format!("loading {}: {e}", lib_path.display()))?;
        // SAFETY: the symbols are the `extern "C"` functions of CUB_SOURCE, with these
        // signatures.
        unsafe {
            let reduce = *lib
                .get::<CubFn>(b"ferro_cub_reduce\0")
                .map_err(|e| e.to_string())?;
            let scan = *lib
                .get::<CubFn>(b"ferro_cub_scan\0")
                .map_err(|e| e.to_string())?;
            let sort = *lib
                .get::<CubSortFn>(b"ferro_cub_sort\0")
                .map_err(|e| e.to_string())?;
            let error_string = *lib
                .get::<unsafe extern "C" fn(c_int) -> *const c_char>(b"ferro_cub_error_string\0")
                .map_err(|e| e.to_string())?;
            let version = lib
                .get::<unsafe extern "C" fn() -> c_int>(b"ferro_cub_version\0")
                .map_err(|e| e.to_string())?();
            let v = u32::try_from(version).unwrap_or(0);
            Ok(Self {
                reduce,
                scan,
                sort,
                error_string,
                version: (v / 100_000, v / 100 % 1000, v % 100),
                _lib: lib,
                _dir: dir,
            })
        }
    }

    fn check(&self, code: c_int, what: &str) -> Result<(), BenchError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string for any value.
        let text = unsafe { CStr::from_ptr((self.error_string)(code)) }.to_string_lossy();
        Err(BenchError(format!("CUB {what}: cudaError {code}: {text}")))
    }

    /// Calls `f` twice in CUB's protocol: the scratch size, then (with `temp` grown to it)
    /// the work, queued on `gpu`'s stream.
    #[allow(clippy::too_many_arguments)]
    fn call<T: cust::memory::DeviceCopy>(
        &self,
        gpu: &Gpu,
        (f, selector): (CubFn, c_int),
        dtype: c_int,
        what: &str,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        temp: &mut DeviceBuffer<u8>,
    ) -> Result<(), BenchError> {
        let n = c_int::try_from(x.len())
            .map_err(|_| BenchError(format!("CUB {what}: {} elements exceed i32", x.len())))?;
        let stream = gpu.stream();
        let mut bytes = 0usize;
        // SAFETY: the size query reads no memory (`temp` is null).
        let code = unsafe {
            f(
                selector,
                dtype,
                std::ptr::null(),
                std::ptr::null_mut(),
                n,
                std::ptr::null_mut(),
                &raw mut bytes,
                stream.as_inner(),
            )
        };
        self.check(code, what)?;
        if temp.len() < bytes {
            *temp = DeviceBuffer::zeroed_async(bytes, stream)
                .map_err(|e| BenchError(format!("CUB {what} scratch: {e}")))?;
        }
        let mut bytes = temp.len();
        // Raw addresses: CUB's work is queued on `stream`, the stream every use of these
        // buffers in the bench is queued on, so it is ordered after their writes.
        let xp = x.as_device_ptr().as_raw();
        let op = out.as_device_ptr().as_raw();
        let tp = temp.as_device_ptr().as_raw();
        // SAFETY: `x` holds n elements of T, `out` the result (1 element for a reduction,
        // n for a scan: the caller's buffers), `temp` at least the queried bytes; all on
        // this stream's device, kept alive (borrowed) until the bench synchronises.
        let code = unsafe {
            f(
                selector,
                dtype,
                xp as *const c_void,
                op as *mut c_void,
                n,
                tp as *mut c_void,
                &raw mut bytes,
                stream.as_inner(),
            )
        };
        self.check(code, what)
    }

    /// `out[0] = op(x)` with `cub::DeviceReduce::{Sum, Min, Max}`.
    ///
    /// # Errors
    /// CUB's error, or more than `i32::MAX` elements.
    pub fn reduce<T: CubType>(
        &self,
        gpu: &Gpu,
        op: ReduceOp,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        temp: &mut DeviceBuffer<u8>,
    ) -> Result<(), BenchError> {
        self.call(
            gpu,
            (self.reduce, op as c_int),
            T::DTYPE,
            op.name(),
            x,
            out,
            temp,
        )
    }

    /// `out = scan(x)` with `cub::DeviceScan::{InclusiveSum, ExclusiveSum}`.
    ///
    /// # Errors
    /// CUB's error, or more than `i32::MAX` elements.
    pub fn scan<T: CubType>(
        &self,
        gpu: &Gpu,
        kind: ScanKind,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        temp: &mut DeviceBuffer<u8>,
    ) -> Result<(), BenchError> {
        let exclusive = c_int::from(kind == ScanKind::Exclusive);
        self.call(gpu, (self.scan, exclusive), T::DTYPE, "scan", x, out, temp)
    }

    /// `out = scan(x)` of affine maps packed as `kernels::scan::affine` (the user-operator
    /// example), with `cub::DeviceScan::{InclusiveScan, ExclusiveScan}` and a composition
    /// functor equal to `kernels::scan::Affine` (exclusive: from the identity map).
    ///
    /// # Errors
    /// CUB's error, or more than `i32::MAX` elements.
    pub fn affine_scan(
        &self,
        gpu: &Gpu,
        kind: ScanKind,
        x: &DeviceBuffer<u64>,
        out: &mut DeviceBuffer<u64>,
        temp: &mut DeviceBuffer<u8>,
    ) -> Result<(), BenchError> {
        let exclusive = c_int::from(kind == ScanKind::Exclusive);
        self.call(
            gpu,
            (self.scan, exclusive),
            AFFINE_DTYPE,
            "affine scan",
            x,
            out,
            temp,
        )
    }
}

impl Cub {
    /// `keys_out = keys` sorted (all 32 bits) with `cub::DeviceRadixSort::SortKeys`, or,
    /// with `values`, the pairs with `SortPairs`, queued on `gpu`'s stream; `temp` grows to
    /// CUB's scratch size (queried first, CUB's two-phase protocol, as [`Cub::scan`]).
    ///
    /// # Errors
    /// CUB's error, or more than `i32::MAX` keys.
    pub fn sort_u32(
        &self,
        gpu: &Gpu,
        keys: (&DeviceBuffer<u32>, &mut DeviceBuffer<u32>),
        values: Option<(&DeviceBuffer<u32>, &mut DeviceBuffer<u32>)>,
        temp: &mut DeviceBuffer<u8>,
    ) -> Result<(), BenchError> {
        let (k, ko) = keys;
        let n = c_int::try_from(k.len())
            .map_err(|_| BenchError(format!("CUB sort: {} keys exceed i32", k.len())))?;
        let pairs = c_int::from(values.is_some());
        let stream = gpu.stream();
        let null = (std::ptr::null::<c_void>(), std::ptr::null_mut::<c_void>());
        let mut bytes = 0usize;
        // SAFETY: the size query reads no memory (`temp` is null).
        let code = unsafe {
            (self.sort)(
                pairs,
                SORT_U32,
                null.0,
                null.1,
                null.0,
                null.1,
                n,
                null.1,
                &raw mut bytes,
                stream.as_inner(),
            )
        };
        self.check(code, "sort")?;
        if temp.len() < bytes {
            *temp = DeviceBuffer::zeroed_async(bytes, stream)
                .map_err(|e| BenchError(format!("CUB sort scratch: {e}")))?;
        }
        let mut bytes = temp.len();
        let raw = |b: &DeviceBuffer<u32>| b.as_device_ptr().as_raw();
        let (vp, vop) = match &values {
            Some((v, vo)) => (raw(v) as *const c_void, raw(vo) as *mut c_void),
            None => null,
        };
        let tp = temp.as_device_ptr().as_raw();
        // SAFETY: `keys` and `ko` (and for pairs `values` and its output) hold n elements
        // (the caller's buffers), `temp` at least the queried bytes; all on this stream's
        // device, borrowed until the bench synchronises; CUB's work is queued on the
        // stream every use of these buffers in the bench is queued on.
        let code = unsafe {
            (self.sort)(
                pairs,
                SORT_U32,
                raw(k) as *const c_void,
                raw(ko) as *mut c_void,
                vp,
                vop,
                n,
                tp as *mut c_void,
                &raw mut bytes,
                stream.as_inner(),
            )
        };
        self.check(code, "sort")
    }
}

/// The `dtype` of the affine-map scans in [`CUB_SOURCE`] (scans only).
const AFFINE_DTYPE: c_int = 3;

/// Host data for one element type, converted from the bench's random numbers the way the
/// Rust rows' inputs are.
pub trait CubInput: CubType {
    /// The bench's inputs (seeded like the Rust rows').
    fn inputs(n: usize) -> Vec<Self>;
    /// `op` over `x` on the CPU, exact for min and max and u32 (wrapping) sums; `f64` sum
    /// of the values for floats.
    fn cpu(op: ReduceOp, x: &[Self]) -> f64;
    /// Whether CUB's `got` is acceptable against the CPU's `want` for `op`: equal for min,
    /// max and u32 sums; for float sums within `1e-5` (f32) or `1e-12` (f64) of Σ|x| (every
    /// input is positive here, so Σ|x| = `want`), far above any summation order's rounding.
    fn close(op: ReduceOp, got: Self, want: f64) -> bool;
    /// Elements of CUB's scan `got` that are wrong: u32 exactly against the CPU's wrapping
    /// scan; floats against an f64 scan, within `1e-5` (f32) or `1e-12` (f64) of the prefix
    /// (inputs are positive, so the prefix bounds any order's rounding).
    fn scan_errors(kind: ScanKind, x: &[Self], got: &[Self]) -> usize;
}

fn float_scan_errors(kind: ScanKind, x: &[f64], got: &[f64], rel: f64) -> usize {
    let mut acc = 0.0f64;
    let mut bad = 0;
    for (v, g) in x.iter().zip(got) {
        let before = acc;
        acc += v;
        let want = if kind == ScanKind::Inclusive {
            acc
        } else {
            before
        };
        if (g - want).abs() > rel * acc {
            bad += 1;
        }
    }
    bad
}

impl CubInput for f32 {
    fn inputs(n: usize) -> Vec<Self> {
        random_f64(1, n).iter().map(|&v| v as f32).collect()
    }
    fn cpu(op: ReduceOp, x: &[Self]) -> f64 {
        fold(op, x.iter().map(|&v| f64::from(v)))
    }
    fn close(op: ReduceOp, got: Self, want: f64) -> bool {
        match op {
            ReduceOp::Sum => (f64::from(got) - want).abs() <= 1e-5 * want,
            _ => f64::from(got) == want,
        }
    }
    fn scan_errors(kind: ScanKind, x: &[Self], got: &[Self]) -> usize {
        let x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let got: Vec<f64> = got.iter().map(|&v| f64::from(v)).collect();
        float_scan_errors(kind, &x, &got, 1e-5)
    }
}

impl CubInput for f64 {
    fn inputs(n: usize) -> Vec<Self> {
        random_f64(3, n)
    }
    fn cpu(op: ReduceOp, x: &[Self]) -> f64 {
        fold(op, x.iter().copied())
    }
    fn close(op: ReduceOp, got: Self, want: f64) -> bool {
        match op {
            ReduceOp::Sum => (got - want).abs() <= 1e-12 * want,
            _ => got == want,
        }
    }
    fn scan_errors(kind: ScanKind, x: &[Self], got: &[Self]) -> usize {
        float_scan_errors(kind, x, got, 1e-12)
    }
}

impl CubInput for u32 {
    fn inputs(n: usize) -> Vec<Self> {
        random_f64(5, n).iter().map(|&v| (v * 1e6) as u32).collect()
    }
    fn cpu(op: ReduceOp, x: &[Self]) -> f64 {
        match op {
            ReduceOp::Sum => f64::from(x.iter().fold(0u32, |a, &v| a.wrapping_add(v))),
            _ => fold(op, x.iter().map(|&v| f64::from(v))),
        }
    }
    fn close(_: ReduceOp, got: Self, want: f64) -> bool {
        f64::from(got) == want
    }
    fn scan_errors(kind: ScanKind, x: &[Self], got: &[Self]) -> usize {
        crate::vector::scan_u32_cpu(kind, x)
            .iter()
            .zip(got)
            .filter(|(w, g)| w != g)
            .count()
    }
}

fn fold(op: ReduceOp, x: impl Iterator<Item = f64>) -> f64 {
    match op {
        ReduceOp::Sum => x.sum(),
        ReduceOp::Min => x.fold(f64::INFINITY, f64::min),
        ReduceOp::Max => x.fold(f64::NEG_INFINITY, f64::max),
    }
}

impl Bench<'_> {
    /// Builds CUB (unless skipped) and times its reductions of f32, f64 and u32, its
    /// scans of f32, f64, u32 and affine maps, and its radix sorts (`sort.rs`); failures
    /// become notes.
    pub(super) fn cub(&mut self) -> Result<(), GpuError> {
        if !self.opts.cub {
            self.notes.push("CUB skipped (--no-cub)".into());
            return Ok(());
        }
        match Cub::build(&self.gpu) {
            Ok(peers) => {
                let (v0, v1, v2) = peers.version;
                self.log(&format!("CUB {v0}.{v1}.{v2}: reductions, scans and sorts"));
                self.notes
                    .push(format!("CUB {v0}.{v1}.{v2} (built with nvcc at run time)"));
                self.cub_rows::<f32>(&peers, true)?;
                self.cub_rows::<f64>(&peers, true)?;
                self.cub_rows::<u32>(&peers, true)?;
                self.cub_affine_rows(&peers)?;
                self.cub_sort_rows(&peers)?;
            }
            Err(e) => {
                self.log(&format!("CUB skipped: {e}"));
                self.notes.push(format!("CUB skipped: {e}"));
            }
        }
        Ok(())
    }

    /// Times CUB's reductions (and, with `scans`, its scans) of the bench's `len` elements
    /// of `T`, checks each against the CPU, and appends `cub` entries (notes for any
    /// difference).
    fn cub_rows<T: CubInput>(&mut self, cub: &Cub, scans: bool) -> Result<(), GpuError> {
        let (gpu, n, memcpy) = (&self.gpu, self.len, self.memcpy_gb_per_s);
        let host = T::inputs(n);
        let x = crate::vector::upload(gpu, &host)?;
        let mut out = crate::vector::poisoned::<T>(gpu, if scans { n } else { 1 })?;
        let mut temp = DeviceBuffer::<u8>::zeroed_async(1, gpu.stream())
            .gpu_context("allocating CUB scratch")?;
        let size = std::mem::size_of::<T>() as u64;
        for op in ReduceOp::ALL {
            let workload = format!("{} {}", op.name(), T::NAME);
            if !self.wants(&workload) {
                continue;
            }
            let timed = self.time(|| cub.reduce(&self.gpu, op, &x, &mut out, &mut temp));
            let stats = match timed {
                Ok(s) => s,
                Err(BenchError(e)) => {
                    self.notes.push(format!("{workload}: CUB failed: {e}"));
                    continue;
                }
            };
            let got = super::download_one(&out)?;
            let want = T::cpu(op, &host);
            if !T::close(op, got, want) {
                self.notes.push(format!(
                    "{workload}: CUB gave {got:?}, the CPU {want} (outside the tolerance)"
                ));
            }
            self.entries.push(Entry::bandwidth(
                &workload,
                Implementation::Cub,
                stats,
                size * n as u64,
                Some(memcpy),
            ));
        }
        if scans {
            for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
                let workload = format!("{} {}", scan_label(kind), T::NAME);
                if !self.wants(&workload) {
                    continue;
                }
                let timed = self.time(|| cub.scan(&self.gpu, kind, &x, &mut out, &mut temp));
                self.cub_scan_entry(&workload, 2 * size * n as u64, timed, &out, |got| {
                    T::scan_errors(kind, &host, got)
                })?;
            }
        }
        Ok(())
    }

    /// Times CUB's affine-map scans (the user operator) on the inputs of our affine rows,
    /// checks them against the CPU (exact), and appends `cub` entries.
    fn cub_affine_rows(&mut self, cub: &Cub) -> Result<(), GpuError> {
        let (gpu, n) = (&self.gpu, self.len);
        let host = super::vectors::affine_inputs(n);
        let what = "copying the affine scan input";
        let x = DeviceBuffer::from_slice_async(&host, gpu.stream()).gpu_context(what)?;
        let mut out = DeviceBuffer::<u64>::zeroed_async(n, gpu.stream()).gpu_context(what)?;
        let mut temp = DeviceBuffer::<u8>::zeroed_async(1, gpu.stream())
            .gpu_context("allocating CUB scratch")?;
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let workload = format!("{} affine", scan_label(kind));
            if !self.wants(&workload) {
                continue;
            }
            let timed = self.time(|| cub.affine_scan(&self.gpu, kind, &x, &mut out, &mut temp));
            self.cub_scan_entry(&workload, 16 * n as u64, timed, &out, |got| {
                let want = crate::vector::affine_scan_cpu(kind, &host);
                got.iter().zip(&want).filter(|(a, b)| a != b).count()
            })?;
        }
        Ok(())
    }

    /// Records one timed CUB scan: copies its output `out` back, notes how many elements
    /// `wrong` rejects, and appends a `cub` entry moving `bytes`; a CUB failure becomes a
    /// note instead.
    fn cub_scan_entry<T: cust::memory::DeviceCopy>(
        &mut self,
        workload: &str,
        bytes: u64,
        timed: Result<crate::timing::Stats, BenchError>,
        out: &DeviceBuffer<T>,
        wrong: impl FnOnce(&[T]) -> usize,
    ) -> Result<(), GpuError> {
        let stats = match timed {
            Ok(stats) => stats,
            Err(BenchError(e)) => {
                self.notes.push(format!("{workload}: CUB failed: {e}"));
                return Ok(());
            }
        };
        let got = out.as_host_vec().gpu_context("copying CUB's scan back")?;
        let bad = wrong(&got);
        if bad > 0 {
            let n = got.len();
            self.notes.push(format!(
                "{workload}: CUB's scan is wrong in {bad} of {n} elements"
            ));
        }
        let memcpy = self.memcpy_gb_per_s;
        self.entries.push(Entry::bandwidth(
            workload,
            Implementation::Cub,
            stats,
            bytes,
            Some(memcpy),
        ));
        Ok(())
    }
}
