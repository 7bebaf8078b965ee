//! The vector workloads, each timed as the Rust kernel of [`crate::vector`] and, where built,
//! its CUDA C twin ([`super::twins`]): the memcpy reference, the STREAM operations, dot,
//! reductions and scans, for `f32`, `f64` and `u32`.

use super::elementwise::{StreamOp, Vectors};
use super::twins::{FloatTwins, ReduceTwins, ScanTwins};
use super::{Bench, Implementation, random_f64, report::Entry};
use crate::gpu::GpuError;
use crate::vector::{Float, ReduceOp, ScanKind, ScanState, Scannable, Scratch};
use cust::{
    error::GpuContext,
    memory::{AsyncCopyDestination, DeviceBuffer},
};
use rayon::prelude::*;

fn rust_stream<T: Float>(
    gpu: &crate::Gpu,
    op: StreamOp,
    q: T,
    v: &mut Vectors<T>,
) -> Result<(), GpuError> {
    match op {
        StreamOp::Copy => crate::vector::copy_dev(gpu, &v.a, &mut v.c),
        StreamOp::Scale => crate::vector::scale_dev(gpu, &v.c, q, &mut v.b),
        StreamOp::Add => crate::vector::add_dev(gpu, &v.a, &v.b, &mut v.c),
        StreamOp::Triad => crate::vector::triad_dev(gpu, &v.b, &v.c, q, &mut v.a),
        // y = q·x + y grows y by ~1 per run: fine for timing, values stay finite.
        StreamOp::Axpy => crate::vector::axpy_dev(gpu, q, &v.a, &mut v.b),
    }
}

impl Bench<'_> {
    /// The reference: a device-to-device copy of `len` f32 (reads and writes 4 bytes per
    /// element); its bandwidth is what the other rows' `vs_reference` divide by.
    pub(super) fn memcpy(&mut self) -> Result<(), GpuError> {
        let n = self.len;
        let gpu = &self.gpu;
        let host: Vec<f32> = random_f64(1, n).iter().map(|&v| v as f32).collect();
        let src = crate::vector::upload(gpu, &host)?;
        let mut dst = crate::vector::poisoned::<f32>(gpu, n)?;
        let stats = self.time(|| {
            dst.async_copy_from(&src, self.gpu.stream())
                .gpu_context("device-to-device copy")
        })?;
        let e = Entry::bandwidth(
            "memcpy d2d f32",
            Implementation::Memcpy,
            stats,
            8 * n as u64,
            None,
        );
        self.log(&format!("memcpy: {:.1} GB/s", e.gb_per_s.unwrap_or(0.0)));
        self.memcpy_gb_per_s = e.gb_per_s.unwrap_or(f64::NAN);
        self.entries.push(e);
        Ok(())
    }

    /// All vector workloads: f32 (with scans), then f64 (with scans; after the f32 buffers
    /// are freed), then u32 reductions and scans, then the user-operator (affine map) scans.
    pub(super) fn vectors(&mut self) -> Result<(), GpuError> {
        {
            let mut v = self.floats::<f32>()?;
            let (x, out, scratch) = (&v.a, &mut v.c, &mut v.scratch);
            self.scans(x, out, scratch)?;
        }
        {
            let mut v = self.floats::<f64>()?;
            let (x, out, scratch) = (&v.a, &mut v.c, &mut v.scratch);
            for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
                if !self.wants(&format!("{} f64", scan_label(kind))) {
                    continue;
                }
                let (rust, _) = self.rust_scan(kind, x, scratch.scan_state(), out)?;
                self.push_pair(rust, None);
            }
        }
        let n = self.len;
        let host: Vec<u32> = random_f64(5, n).iter().map(|&v| (v * 1e6) as u32).collect();
        let x = crate::vector::upload(&self.gpu, &host)?;
        let mut out = crate::vector::poisoned::<u32>(&self.gpu, n)?;
        let mut scratch = crate::vector::scratch::<u32>(&self.gpu, n)?;
        self.reductions(&x, &mut scratch)?;
        self.scans(&x, &mut out, &mut scratch)?;
        drop((x, out, scratch));
        self.affine_scans()
    }

    /// Times our scan of `kind` (`x` → `out`); returns its row and our output.
    fn rust_scan<T: Scannable>(
        &mut self,
        kind: ScanKind,
        x: &DeviceBuffer<T>,
        st: &mut ScanState,
        out: &mut DeviceBuffer<T>,
    ) -> Result<(Entry, Vec<T>), GpuError> {
        let bytes = (2 * std::mem::size_of::<T>() * self.len) as u64;
        let workload = format!("{} {}", scan_label(kind), T::NAME);
        let stats = self.time(|| {
            crate::vector::scan_dev(&self.gpu, kind, &x.as_slice(), st, &mut out.as_mut_slice())
        })?;
        let rust = self.row(&workload, Implementation::Rust, stats, bytes);
        let rust_out = out
            .as_host_vec()
            .gpu_context("copying the scan result back")?;
        Ok((rust, rust_out))
    }

    /// The user-operator scans (`affine`: composition of affine maps mod 2^32 packed in a
    /// `u64`, [`crate::vector::affine_scan_dev`]), checked against the CPU (exact).
    fn affine_scans(&mut self) -> Result<(), GpuError> {
        let n = self.len;
        let host = affine_inputs(n);
        let what = "copying the affine scan input";
        let x = DeviceBuffer::from_slice_async(&host, self.gpu.stream()).gpu_context(what)?;
        let mut out = DeviceBuffer::<u64>::zeroed_async(n, self.gpu.stream()).gpu_context(what)?;
        let mut st = ScanState::new(&self.gpu, n)?;
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            let workload = format!("{} affine", scan_label(kind));
            if !self.wants(&workload) {
                continue;
            }
            let stats = self.time(|| {
                crate::vector::affine_scan_dev(
                    &self.gpu,
                    kind,
                    &x.as_slice(),
                    &mut st,
                    &mut out.as_mut_slice(),
                )
            })?;
            let got = out
                .as_host_vec()
                .gpu_context("copying the affine scan result back")?;
            let want = crate::vector::affine_scan_cpu(kind, &host);
            let bad = got.par_iter().zip(&want).filter(|(a, b)| a != b).count();
            if bad > 0 {
                self.notes.push(format!(
                    "{workload}: ours differs from the CPU in {bad} of {n} elements"
                ));
            }
            let row = self.row(&workload, Implementation::Rust, stats, 16 * n as u64);
            self.push_pair(row, None);
        }
        Ok(())
    }

    /// A bandwidth row of this run (`vs_reference` over the memcpy row).
    pub(super) fn row(
        &self,
        workload: &str,
        imp: Implementation,
        stats: crate::timing::Stats,
        bytes: u64,
    ) -> Entry {
        Entry::bandwidth(workload, imp, stats, bytes, Some(self.memcpy_gb_per_s))
    }

    /// STREAM operations and dot of `T`, then its reductions; returns the buffers.
    fn floats<T: FloatTwins>(&mut self) -> Result<Vectors<T>, GpuError> {
        let n = self.len;
        let gpu = &self.gpu;
        let size = std::mem::size_of::<T>() as u64;
        let mk = |seed| -> Result<DeviceBuffer<T>, GpuError> {
            let v: Vec<T> = random_f64(seed, n).into_iter().map(T::from_f64).collect();
            crate::vector::upload(gpu, &v)
        };
        let mut v = Vectors {
            a: mk(2)?,
            b: mk(3)?,
            c: mk(4)?,
            scratch: crate::vector::scratch::<T>(gpu, n)?,
        };
        let q = T::from_f64(0.75);
        let cfg = crate::vector::stream_config::<T>(n);
        for op in StreamOp::ALL {
            let workload = format!("{} {}", op.name(), T::NAME);
            if !self.wants(&workload) {
                continue;
            }
            let bytes = op.words() * size * n as u64;
            let stats = self.time(|| rust_stream(&self.gpu, op, q, &mut v))?;
            let rust = self.row(&workload, Implementation::Rust, stats, bytes);
            let cuda = match &self.cuda_c {
                Some(cu) => {
                    let stats = self.time(|| cu.stream_op(&self.gpu, op, q, cfg, &mut v))?;
                    Some(self.row(&workload, Implementation::CudaC, stats, bytes))
                }
                None => None,
            };
            self.push_pair(rust, cuda);
        }
        // Dot: 2 words per element.
        if self.wants(&format!("dot {}", T::NAME)) {
            let workload = format!("dot {}", T::NAME);
            let bytes = 2 * size * n as u64;
            let stats =
                self.time(|| crate::vector::dot_dev(&self.gpu, &v.a, &v.b, &mut v.scratch))?;
            let rust = self.row(&workload, Implementation::Rust, stats, bytes);
            let cuda = match &self.cuda_c {
                Some(cu) => {
                    let stats = self.time(|| cu.dot(&self.gpu, &mut v))?;
                    Some(self.row(&workload, Implementation::CudaC, stats, bytes))
                }
                None => None,
            };
            self.push_pair(rust, cuda);
        }
        self.reductions(&v.a, &mut v.scratch)?;
        Ok(v)
    }

    /// Sum, min and max of `x`; the twin's result is compared with ours in the log.
    fn reductions<T: ReduceTwins>(
        &mut self,
        x: &DeviceBuffer<T>,
        scratch: &mut Scratch<T>,
    ) -> Result<(), GpuError> {
        let bytes = (std::mem::size_of::<T>() * self.len) as u64;
        for op in ReduceOp::ALL {
            let workload = format!("{} {}", op.name(), T::NAME);
            if !self.wants(&workload) {
                continue;
            }
            let stats = self.time(|| crate::vector::reduce_dev(&self.gpu, op, x, scratch))?;
            let rust_value = super::download_one(&scratch.result)?;
            let rust = self.row(&workload, Implementation::Rust, stats, bytes);
            let cuda = match &self.cuda_c {
                Some(cu) => {
                    let stats = self.time(|| cu.reduce(&self.gpu, op as usize, x, scratch))?;
                    let cuda_value = super::download_one(&scratch.result)?;
                    if cuda_value != rust_value {
                        (self.log)(&format!(
                            "{workload}: rust {rust_value:?} vs cuda-c {cuda_value:?} (float sums may differ in the last bits)"
                        ));
                    }
                    Some(self.row(&workload, Implementation::CudaC, stats, bytes))
                }
                None => None,
            };
            self.push_pair(rust, cuda);
        }
        Ok(())
    }

    /// Inclusive and exclusive scans of `x` into `out`; the twin's output is compared with
    /// ours in the log.
    fn scans<T: ScanTwins>(
        &mut self,
        x: &DeviceBuffer<T>,
        out: &mut DeviceBuffer<T>,
        scratch: &mut Scratch<T>,
    ) -> Result<(), GpuError> {
        let n = self.len;
        let bytes = (2 * std::mem::size_of::<T>() * n) as u64;
        for (kind, idx) in [(ScanKind::Inclusive, 0), (ScanKind::Exclusive, 1)] {
            let workload = format!("{} {}", scan_label(kind), T::NAME);
            if !self.wants(&workload) {
                continue;
            }
            let (rust, rust_out) = self.rust_scan(kind, x, scratch.scan_state(), out)?;
            let cuda = match &self.cuda_c {
                Some(cu) => {
                    let stats =
                        self.time(|| cu.scan(&self.gpu, idx, x, scratch.scan_state(), out))?;
                    let cuda_out = out
                        .as_host_vec()
                        .gpu_context("copying the scan result back")?;
                    let differ = rust_out
                        .par_iter()
                        .zip(&cuda_out)
                        .filter(|(a, b)| a != b)
                        .count();
                    if differ > 0 {
                        (self.log)(&format!(
                            "{workload}: rust and cuda-c differ in {differ} of {n} elements (float \
                             sums may differ in the last bits; u32 must not)"
                        ));
                    }
                    Some(self.row(&workload, Implementation::CudaC, stats, bytes))
                }
                None => None,
            };
            self.push_pair(rust, cuda);
        }
        Ok(())
    }
}

/// The workload label of a scan kind, as in the rows (`inclusive scan f32`).
pub(super) fn scan_label(kind: ScanKind) -> &'static str {
    match kind {
        ScanKind::Inclusive => "inclusive scan",
        ScanKind::Exclusive => "exclusive scan",
    }
}

/// The affine-map scans' inputs (ours and CUB's): `n` maps `x ↦ a·x + b` with odd `a`, from
/// the bench's seeded random numbers.
pub(super) fn affine_inputs(n: usize) -> Vec<u64> {
    random_f64(6, n)
        .iter()
        .map(|&v| {
            let bits = (v * 4e9) as u32;
            kernels::scan::affine(bits | 1, bits.rotate_left(16))
        })
        .collect()
}
