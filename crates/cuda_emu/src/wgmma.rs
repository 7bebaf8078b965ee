//! `wgmma.mma_async` on the emulator (PTX ISA §9.7.15 "Asynchronous Warpgroup Level Matrix
//! Instructions"): `D = A·B (+ D)` for a 64×N tile, `A` and `B` read from shared memory
//! through 64-bit matrix descriptors.
//!
//! `wgmma.mma_async` is a warpgroup collective here: each thread waits until the 128
//! threads of its warpgroup (four consecutive warps, `.sync.aligned`) have issued the same
//! instruction with the same operands, then the product is computed once and each
//! thread's accumulator elements (the lane map `cust_core::lanes::wgmma::acc_row_col`)
//! written into its registers (its `acc` array). `A` (64 rows) and `B` (N columns) are read
//! element by element through the descriptors ([`Descriptor`], [`Operand::element_addr`]);
//! every product is formed exactly (f16, bf16 and
//! tf32 significands have at most 11 bits, e4m3 and e5m2 at most 4), sums a `D` element's
//! products in ascending `k` in `f64`, adds the incoming accumulator (when `accumulate`),
//! and rounds once to nearest-even `f32`, as `mma_sync` is emulated (`tensor.rs`). NVIDIA
//! does not specify the tensor cores' accumulation order, width or rounding (for FP8 inputs
//! it is known to keep fewer bits than `f32`): the result equals the GPU's bit for bit where
//! every partial sum is exact in the hardware's accumulator. TF32 inputs are `f32` bits
//! whose 13 low mantissa bits are ignored; FP8 inputs are bytes in the OCP FP8 formats
//! ([`fp8_value`]). Shapes: `m64nNk16` (f16, bf16), `m64nNk8` (tf32), `m64nNk32` (e4m3,
//! e5m2): 32 bytes of K per instruction.
//!
//! Descriptors (§9.7.15.5.1.2.2 "Matrix Descriptor Format"): start address, leading and
//! stride byte offsets (14 bits each, `>> 4`), base offset (bits 49–51; only 0 is modelled:
//! tiles whose swizzle pattern starts at its period's boundary), swizzle mode (bits 62–63:
//! none, 128B, 64B, 32B). The layouts are the PTX ISA's canonical ones (§9.7.15.5.1.2.1.3
//! "Canonical Layouts", in bytes; `W` = the swizzle width, `e` = element bytes):
//! - K-major, no swizzle: `(r % 8)·16 + (r / 8)·SBO + (kb / 16)·LBO + kb % 16` for byte
//!   `kb` of row `r`'s K slice;
//! - K-major, swizzled: `(r % 8)·W + (r / 8)·SBO + kb` (LBO unused);
//! - MN-major, no swizzle: `mb % 16 + (mb / 16)·SBO + (k % 8)·16 + (k / 8)·LBO` for byte
//!   `mb = mn·e` along M/N and element `k` along K;
//! - MN-major, swizzled: `mb % W + (mb / W)·LBO + (k % 8)·W + (k / 8)·SBO`;
//!
//! each added to the start address, then swizzled on the absolute shared address (CuTe's
//! `Swizzle<B, 4, 3>`: bits 4..4+B ^= bits 7..7+B, B = 3, 2, 1 for 128B, 64B, 32B), which
//! is why tiles start at a multiple of the pattern's period (1024, 512, 256 bytes) and why
//! the emulator's shared addresses are congruent to host addresses modulo 1024.
//!
//! Timing: the product is computed when the warpgroup has issued the instruction, and each
//! thread's accumulator values become visible at the `wait_group` that retires its group
//! (`commit_group` closes a group; a `wgmma` chained on an accumulator whose values are not
//! yet visible adds to them, as the hardware's in-order `wgmma`s do). With the
//! asynchronous-proxy check on (`proxy.rs`), the operands must have been fenced after
//! generic writes and their TMA loads completed, and stay unchanged until the retiring
//! `wait_group`. Operand reads are not seen by the race and uninitialised-read checks.
//!
//! Checked: the block holds the whole warpgroup, and all of its threads reach the same
//! `wgmma` (a thread that exits or waits elsewhere meanwhile is an
//! [`EmuError::BarrierDivergence`]); they agree on the shape, type and operands, every
//! operand element lies in the block's shared memory, and the base offset is 0
//! ([`EmuError::AsyncUnit`]).

use core::panic::Location;
use std::string::String;

use std::vec::Vec;

use super::shared_mem::SharedMem;
use super::state::{BlockState, GroupWait, Suspend, ThreadState, suspend, thread};
use super::unit_state::{InFlight, MmaType, PendingAcc};
use super::{EmuError, SourceLocation};
use cust_core::lanes::wgmma::{a_row_col, a_row_col_tf32, acc_row_col};

/// A decoded matrix descriptor (PTX ISA §9.7.15.5.1.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Descriptor {
    /// Start address, shared window bytes.
    pub(crate) start: u32,
    /// Leading dimension byte offset.
    pub(crate) lbo: u32,
    /// Stride dimension byte offset.
    pub(crate) sbo: u32,
    /// Matrix base offset (bits 49–51).
    pub(crate) base_offset: u32,
    /// Swizzle width in bytes: 0 (none), 32, 64 or 128.
    pub(crate) swizzle_bytes: u32,
}

impl Descriptor {
    /// Decodes the bits `cuda_std::wgmma::MatrixDescriptor::new` encodes.
    pub(crate) fn decode(bits: u64) -> Self {
        let field = |shift: u32| (((bits >> shift) & 0x3fff) as u32) << 4;
        Self {
            start: field(0),
            lbo: field(16),
            sbo: field(32),
            base_offset: ((bits >> 49) & 0x7) as u32,
            swizzle_bytes: match bits >> 62 {
                0 => 0,
                1 => 128,
                2 => 64,
                _ => 32,
            },
        }
    }
}

/// The swizzle of `width` bytes (0: none) applied to the shared address `addr`: CuTe's
/// `Swizzle<B, 4, 3>`, 16-byte chunk bits 4..4+B XORed with bits 7..7+B.
pub(crate) const fn swizzle(addr: u32, width: u32) -> u32 {
    let mask = match width {
        128 => 7,
        64 => 3,
        32 => 1,
        _ => 0,
    };
    addr ^ (((addr >> 7) & mask) << 4)
}

/// One operand of one `wgmma`: its descriptor, whether it is MN-major (`TRANS_*`), and
/// the element size.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand {
    pub(crate) desc: Descriptor,
    pub(crate) mn_major: bool,
    pub(crate) elem_bytes: u32,
}

impl Operand {
    /// The shared address of element `(mn, k)`: row `mn` of `A` (M) or column `mn` of `B`
    /// (N), element `k` of K, by the canonical layouts of the [module docs](self).
    pub(crate) const fn element_addr(&self, mn: u32, k: u32) -> u32 {
        let d = self.desc;
        let e = self.elem_bytes;
        let w = d.swizzle_bytes;
        let offset = if !self.mn_major {
            let kb = k * e;
            if w == 0 {
                (mn % 8) * 16 + (mn / 8) * d.sbo + (kb / 16) * d.lbo + kb % 16
            } else {
                (mn % 8) * w + (mn / 8) * d.sbo + kb
            }
        } else {
            let mb = mn * e;
            if w == 0 {
                mb % 16 + (mb / 16) * d.sbo + (k % 8) * 16 + (k / 8) * d.lbo
            } else {
                mb % w + (mb / w) * d.lbo + (k % 8) * w + (k / 8) * d.sbo
            }
        };
        swizzle(d.start.wrapping_add(offset), w)
    }
}

/// Fails the running thread with an [`EmuError::AsyncUnit`].
#[track_caller]
fn misuse(t: &ThreadState, op: &'static str, reason: String) -> ! {
    crate::state::async_misuse(t, op, reason)
}

/// Checks that the running thread's warpgroup exists whole in the block (four warps of
/// 32 threads); `fence`, `commit_group` and `wait_group`, which have nothing else to do
/// on the emulator.
#[track_caller]
pub fn check_warpgroup(what: &'static str) {
    let t = thread(what);
    let b = t.block();
    let [x, y, z] = b.launch().block;
    let threads = x * y * z;
    let end = (t.linear / 128 + 1) * 128;
    if end > threads {
        misuse(
            t,
            what,
            std::format!(
                "a warpgroup instruction needs the 128 threads {}..{end}, and the block has                  {threads} threads",
                end - 128
            ),
        );
    }
}

/// One thread's part of a `wgmma`, on its stack while it waits for its warpgroup.
#[derive(Debug)]
struct Record {
    ty: MmaType,
    acc: *mut f32,
    n: u32,
    a_bits: u64,
    /// `A` from registers (the RS form): this thread's four registers of its warp's 16×16
    /// fragment (`cust_core::lanes::wgmma::a_row_col`); `a_bits` is then 0.
    a_regs: Option<[u32; 4]>,
    b_bits: u64,
    trans_a: bool,
    trans_b: bool,
    accumulate: bool,
    what: &'static str,
    location: &'static Location<'static>,
    tid: crate::Dim3,
}

/// `wgmma.mma_async` m64nNk16 (f16, bf16), m64nNk8 (tf32) or m64nNk32 (e4m3, e5m2) for the
/// running thread, with
/// its `acc` (`N / 2` elements), `A` (`a_bits`, M-major if `trans_a`) and `B` (`b_bits`,
/// N-major if `trans_b`): the thread waits until its warpgroup's 128 threads have issued
/// it, then the product is computed for all of them at once (so no thread runs on while
/// another's operands are still to be read). Descriptors, layouts and arithmetic: the
/// docs of `cuda_emu`'s `wgmma` module.
#[track_caller]
#[allow(clippy::too_many_arguments)]
pub fn mma_async(
    what: &'static str,
    ty: MmaType,
    acc: &mut [f32],
    a_bits: u64,
    b_bits: u64,
    trans_a: bool,
    trans_b: bool,
    accumulate: bool,
) {
    issue(
        what, ty, acc, a_bits, None, b_bits, trans_a, trans_b, accumulate,
    );
}

/// `wgmma.mma_async` m64nNk16 (f16, bf16) or m64nNk8 (tf32) with `A` from registers (the
/// RS form): as [`mma_async`], with `a` this thread's four registers of `A` (16-bit types:
/// two elements each, the lower column in the low half, the lane map
/// `cust_core::lanes::wgmma::a_row_col`; tf32: one `f32` each, its 13 low mantissa bits
/// ignored, `a_row_col_tf32`) instead of a descriptor; `B` is read through `b_bits`,
/// N-major if `trans_b` (always `false` for tf32).
#[track_caller]
pub fn mma_async_rs(
    what: &'static str,
    ty: MmaType,
    acc: &mut [f32],
    a: [u32; 4],
    b_bits: u64,
    trans_b: bool,
    accumulate: bool,
) {
    issue(
        what,
        ty,
        acc,
        0,
        Some(a),
        b_bits,
        false,
        trans_b,
        accumulate,
    );
}

/// Both forms: records the thread's part and waits for its warpgroup.
#[track_caller]
#[allow(clippy::too_many_arguments)]
fn issue(
    what: &'static str,
    ty: MmaType,
    acc: &mut [f32],
    a_bits: u64,
    a_regs: Option<[u32; 4]>,
    b_bits: u64,
    trans_a: bool,
    trans_b: bool,
    accumulate: bool,
) {
    let t = thread(what);
    check_warpgroup(what);
    let mut record = Record {
        ty,
        acc: acc.as_mut_ptr(),
        n: (acc.len() * 2) as u32,
        a_bits,
        a_regs,
        b_bits,
        trans_a,
        trans_b,
        accumulate,
        what,
        location: Location::caller(),
        tid: t.tid,
    };
    let wait = GroupWait {
        record: core::ptr::from_mut(&mut record).expose_provenance(),
        what,
        location: Location::caller(),
    };
    suspend(t, Suspend::Group(wait));
}

/// The value of the FP8 byte `bits` in the format `ty` (`E4m3` or `E5m2`; the OCP 8-bit
/// Floating Point Specification (OFP8) rev. 1.0, Table 1, as PTX's `.e4m3` and `.e5m2`):
/// - E4M3: exponent bias 7, 3 mantissa bits, subnormals `m·2⁻⁹`, no infinities, `S.1111.111`
///   is NaN (so the largest magnitude is 448);
/// - E5M2: exponent bias 15, 2 mantissa bits, subnormals `m·2⁻¹⁶`, IEEE infinities and NaNs
///   at the all-ones exponent.
///
/// Other types are not FP8: their value is NaN.
#[must_use]
pub(crate) fn fp8_value(ty: MmaType, bits: u8) -> f64 {
    let sign = if bits & 0x80 != 0 { -1.0 } else { 1.0 };
    let (exp_bits, man_bits, bias) = match ty {
        MmaType::E4m3 => (4, 3, 7),
        MmaType::E5m2 => (5, 2, 15),
        _ => return f64::NAN,
    };
    let e = i32::from((bits & 0x7f) >> man_bits);
    let m = f64::from(bits & ((1 << man_bits) - 1));
    let all_ones = (1 << exp_bits) - 1;
    let scale = f64::from(1u32 << man_bits);
    let magnitude = match ty {
        MmaType::E4m3 if e == all_ones && m == 7.0 => return f64::NAN,
        MmaType::E5m2 if e == all_ones => {
            if m == 0.0 {
                f64::INFINITY
            } else {
                return f64::NAN;
            }
        }
        _ if e == 0 => m / scale * 2f64.powi(1 - bias),
        _ => (1.0 + m / scale) * 2f64.powi(e - bias),
    };
    sign * magnitude
}

/// The value of the element at shared address `addr` of type `ty`, or `None` outside the
/// block's shared memory.
fn read(mem: &SharedMem, ty: MmaType, addr: u32) -> Option<f64> {
    let bytes = ty.bytes() as usize;
    let host = mem.host_of(addr, bytes)?;
    // SAFETY: `host_of` found `bytes` bytes of a live shared allocation there; the block's
    // threads are all suspended while the scheduler completes the collective.
    Some(unsafe {
        match ty {
            MmaType::F16 => f64::from(
                half::f16::from_bits(core::ptr::read_unaligned(host as *const u16)).to_f32(),
            ),
            MmaType::Bf16 => f64::from(
                half::bf16::from_bits(core::ptr::read_unaligned(host as *const u16)).to_f32(),
            ),
            MmaType::Tf32 => f64::from(f32::from_bits(
                core::ptr::read_unaligned(host as *const u32) & !0x1fff,
            )),
            MmaType::E4m3 | MmaType::E5m2 => fp8_value(ty, *(host as *const u8)),
        }
    })
}

/// Completes the `wgmma` the 128 threads of a warpgroup wait at: `records` holds each
/// thread's linear index and record address, in warpgroup order.
///
/// # Errors
/// [`EmuError::AsyncUnit`] (naming the first thread) if the threads disagree on the
/// instruction or its operands, a descriptor has a base offset, or an operand element lies
/// outside the block's shared memory.
///
/// # Safety
/// Each address is the live [`Record`] of a thread suspended in [`mma_async`], whose
/// accumulator array nothing else accesses until it is resumed.
pub(crate) unsafe fn complete(
    block: &BlockState,
    records: &[(u32, usize)],
) -> Result<(), EmuError> {
    let get = |i: usize| {
        // SAFETY: the caller's contract.
        unsafe { &*core::ptr::with_exposed_provenance::<Record>(records[i].1) }
    };
    let first = get(0);
    let err = |reason: String| EmuError::AsyncUnit {
        kernel: block.launch().kernel,
        block: block.idx,
        thread: first.tid,
        op: first.what,
        reason,
        location: SourceLocation::from_std(first.location),
    };
    let key = |r: &Record| {
        (
            r.ty,
            r.n,
            r.a_bits,
            r.a_regs.is_some(),
            r.b_bits,
            r.trans_a,
            r.trans_b,
            r.accumulate,
        )
    };
    for i in 1..records.len() {
        let r = get(i);
        if key(r) != key(first) || r.what != first.what {
            return Err(err(std::format!(
                "the threads of a warpgroup must execute the same `wgmma` with the same                  operands (`.sync.aligned`); thread {:?} runs `{}` with descriptors                  {:#018x} / {:#018x}, thread {:?} `{}` with {:#018x} / {:#018x}",
                first.tid,
                first.what,
                first.a_bits,
                first.b_bits,
                r.tid,
                r.what,
                r.a_bits,
                r.b_bits
            )));
        }
    }
    let ty = first.ty;
    let elem_bytes = ty.bytes();
    let k = (32 / elem_bytes) as usize;
    let n = first.n;
    let operand = |bits: u64, mn_major: bool| Operand {
        desc: Descriptor::decode(bits),
        mn_major,
        elem_bytes,
    };
    let (a, b) = (
        operand(first.a_bits, first.trans_a),
        operand(first.b_bits, first.trans_b),
    );
    let mem = block.mem.borrow();
    let checks = block.launch().options.checks;
    // The host byte range `[start, end)` each operand spans, for the check of writes while
    // the `wgmma` is in flight.
    let mut ranges = [(usize::MAX, 0usize); 2];
    let mut load = |which: char, op: Operand, rows: u32| -> Result<Vec<[f64; 32]>, EmuError> {
        let range = &mut ranges[usize::from(which == 'B')];
        let mut hosts = Vec::with_capacity(rows as usize * k);
        if op.desc.base_offset != 0 {
            return Err(err(std::format!(
                "the descriptor of `{which}` has base offset {} (bits 49–51): the emulator                  models tiles whose swizzle pattern starts at its period only (base offset 0)",
                op.desc.base_offset
            )));
        }
        let mut out = std::vec![[0f64; 32]; rows as usize];
        for (mn, row) in out.iter_mut().enumerate() {
            for (kk, v) in row.iter_mut().enumerate().take(k) {
                let addr = op.element_addr(mn as u32, kk as u32);
                if let Some(host) = mem.host_of(addr, elem_bytes as usize) {
                    range.0 = range.0.min(host);
                    range.1 = range.1.max(host + elem_bytes as usize);
                    hosts.push(host);
                }
                *v = read(&mem, ty, addr).ok_or_else(|| {
                    err(std::format!(
                        "element ({mn}, {kk}) of `{which}` is at shared address {addr:#x},                          outside this block's shared memory (descriptor {:#018x}: start                          {:#x}, leading byte offset {}, stride byte offset {}, {}-byte                          swizzle)",
                        if which == 'A' { first.a_bits } else { first.b_bits },
                        op.desc.start,
                        op.desc.lbo,
                        op.desc.sbo,
                        op.desc.swizzle_bytes
                    ))
                })?;
            }
        }
        if checks.async_proxy
            && let Some((at, problem, earlier)) = super::proxy::async_reads_problem(
                block,
                &mem,
                &hosts,
                elem_bytes as usize,
                "a `wgmma`",
            )
        {
            return Err(super::proxy::hazard(
                block,
                &mem,
                first.tid,
                problem,
                at,
                first.location,
                earlier,
            ));
        }
        Ok(out)
    };
    let a_rows = if first.a_regs.is_some() {
        // The RS form: row r, column c of A from the register of the thread the lane map
        // names: for the 16-bit types two elements per register, the lower column low
        // (`a_row_col`); for tf32 one `f32` per register, its 13 low mantissa bits ignored
        // (`a_row_col_tf32`).
        let mut rows = std::vec![[0f64; 32]; 64];
        for (i, &(linear, _)) in records.iter().enumerate() {
            let tw = linear % 128;
            let regs = get(i).a_regs.unwrap_or_default();
            for (reg, bits) in regs.into_iter().enumerate() {
                if ty == MmaType::Tf32 {
                    let (row, col) = a_row_col_tf32(tw, reg as u32);
                    rows[row as usize][col as usize] = f64::from(f32::from_bits(bits & !0x1fff));
                    continue;
                }
                for hi in 0..2 {
                    let (row, col) = a_row_col(tw, reg as u32, hi);
                    let h = (bits >> (16 * hi)) as u16;
                    rows[row as usize][col as usize] = match ty {
                        MmaType::F16 => f64::from(half::f16::from_bits(h).to_f32()),
                        _ => f64::from(half::bf16::from_bits(h).to_f32()),
                    };
                }
            }
        }
        rows
    } else {
        load('A', a, 64)?
    };
    let b_cols = load('B', b, n)?;
    drop(mem);
    let mut asyncs = block.asyncs.borrow_mut();
    if checks.async_proxy {
        asyncs.inflight[(records[0].0 / 128) as usize].push(InFlight {
            group: 0,
            ranges,
            thread: first.tid,
            location: first.location,
            retired: 0,
        });
    }
    for (i, &(linear, _)) in records.iter().enumerate() {
        let r = get(i);
        let tw = linear % 128;
        let pending = &mut asyncs.thread_mut(linear).pending;
        // The accumulator this `wgmma` adds to: the newest value not yet visible of the
        // same array (`wgmma`s chained on one accumulator without a wait between), else
        // the array's.
        let before = pending.iter().rev().find(|p| p.acc == r.acc);
        let values: Vec<f32> = (0..(n / 2) as usize)
            .map(|e| {
                let (row, col) = acc_row_col(tw, e as u32);
                let (ra, cb) = (&a_rows[row as usize], &b_cols[col as usize]);
                let products = (0..k).fold(0f64, |s, p| s + ra[p] * cb[p]);
                let d = match before {
                    Some(p) => p.values[e],
                    // SAFETY: the caller's contract: `acc` holds `n / 2` elements of the
                    // suspended thread.
                    None => unsafe { *r.acc.add(e) },
                };
                let sum = if first.accumulate {
                    products + f64::from(d)
                } else {
                    products
                };
                sum as f32
            })
            .collect();
        pending.push(PendingAcc {
            group: 0,
            acc: r.acc,
            values,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cust_core::lanes::wgmma::{offset_no_swizzle, offset_swizzle_128b};

    /// The bits of a descriptor, put together by hand from PTX ISA §9.7.15.5.1.2.2's table.
    fn bits(start: u64, lbo: u64, sbo: u64, base: u64, mode: u64) -> u64 {
        (start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (base << 49) | (mode << 62)
    }

    #[test]
    fn descriptors_decode_every_field() {
        let d = Descriptor::decode(bits(0x1_2340, 0x80, 0x400, 0, 1));
        assert_eq!(
            d,
            Descriptor {
                start: 0x1_2340,
                lbo: 0x80,
                sbo: 0x400,
                base_offset: 0,
                swizzle_bytes: 128
            }
        );
        assert_eq!(Descriptor::decode(bits(0, 0, 0, 0, 2)).swizzle_bytes, 64);
        assert_eq!(Descriptor::decode(bits(0, 0, 0, 0, 3)).swizzle_bytes, 32);
        assert_eq!(Descriptor::decode(bits(0, 0, 0, 5, 0)).base_offset, 5);
        // 14-bit fields: the largest address is 2^18 - 16.
        assert_eq!(
            Descriptor::decode(bits(0x3_fff0, 0, 0, 0, 0)).start,
            0x3_fff0
        );
        assert_eq!(Descriptor::decode(0x3fff << 32).sbo, 0x3_fff0);
    }

    #[test]
    fn k_major_no_swizzle_is_the_core_matrix_layout() {
        // bf16, LBO 128, SBO 1024, as the probes stage it.
        let op = Operand {
            desc: Descriptor::decode(bits(0x2000, 128, 1024, 0, 0)),
            mn_major: false,
            elem_bytes: 2,
        };
        for row in 0..64 {
            for k in 0..16 {
                assert_eq!(
                    op.element_addr(row, k),
                    0x2000 + offset_no_swizzle(row, 2 * k, 128, 1024),
                    "row {row}, k {k}"
                );
            }
        }
        // Row 9, element 9 (byte 18): core matrix (1, 1) at 1024 + 128, row 1 of it, byte 2.
        assert_eq!(op.element_addr(9, 9), 0x2000 + 1024 + 128 + 16 + 2);
    }

    #[test]
    fn k_major_128b_matches_the_tma_layout_at_every_k_step() {
        // A 1024-aligned tile of 128-byte rows; step s starts 32·s bytes in (`add_bytes`).
        for step in 0..4u32 {
            for elem_bytes in [2u32, 4] {
                let op = Operand {
                    desc: Descriptor::decode(bits(u64::from(0x4000 + 32 * step), 16, 1024, 0, 1)),
                    mn_major: false,
                    elem_bytes,
                };
                for row in 0..256 {
                    for k in 0..32 / elem_bytes {
                        let kb = 32 * step + k * elem_bytes;
                        assert_eq!(
                            op.element_addr(row, k),
                            0x4000 + offset_swizzle_128b(row, kb),
                            "row {row}, byte {kb}"
                        );
                    }
                }
            }
        }
        // Row 9, byte 35 by hand: chunk 2 ^ (9 % 8) = 3.
        assert_eq!(offset_swizzle_128b(9, 35), 9 * 128 + 3 * 16 + 3);
    }

    #[test]
    fn k_major_64b_and_32b_swizzle_rows_of_their_width() {
        // 64B: chunk c of row r at c ^ ((r / 2) % 4); 32B: c ^ ((r / 4) % 2).
        for (mode, width) in [(2u64, 64u32), (3, 32)] {
            let op = Operand {
                desc: Descriptor::decode(bits(0x800, 16, 8 * u64::from(width), 0, mode)),
                mn_major: false,
                elem_bytes: 2,
            };
            for row in 0..16u32 {
                for k in 0..16u32 {
                    let kb = 2 * k;
                    let phase = if width == 64 {
                        (row / 2) % 4
                    } else {
                        (row / 4) % 2
                    };
                    let want = 0x800 + row * width + ((kb / 16) ^ phase) * 16 + kb % 16;
                    assert_eq!(op.element_addr(row, k), want, "{width}B row {row} k {k}");
                }
            }
        }
    }

    #[test]
    fn mn_major_follows_the_ptx_examples() {
        // PTX ISA §9.7.15.5.1.2.1.3, "MN-Major, no-swizzling and bf16": exact layout
        // ((8,1,2),(8,2)):((1,8,64),(8,128)) in elements, LBO = 128·2, SBO = 64·2 bytes.
        let op = Operand {
            desc: Descriptor::decode(bits(0, 256, 128, 0, 0)),
            mn_major: true,
            elem_bytes: 2,
        };
        for mn in 0..16u32 {
            for k in 0..16u32 {
                let elems = (mn % 8) + (mn / 8) * 64 + (k % 8) * 8 + (k / 8) * 128;
                assert_eq!(op.element_addr(mn, k), 2 * elems, "mn {mn} k {k}");
            }
        }
        // "MN-Major, 64B swizzling and bf16": ((8,4,2),(8,2)):((1,8,256),(32,512)),
        // LBO = 256·2, SBO = 512·2 bytes, then Swizzle<2,4,3>.
        let op = Operand {
            desc: Descriptor::decode(bits(0, 512, 1024, 0, 2)),
            mn_major: true,
            elem_bytes: 2,
        };
        for mn in 0..64u32 {
            for k in 0..16u32 {
                let elems =
                    (mn % 8) + ((mn / 8) % 4) * 8 + (mn / 32) * 256 + (k % 8) * 32 + (k / 8) * 512;
                let plain = 2 * elems;
                let swizzled = plain ^ (((plain >> 7) & 3) << 4);
                assert_eq!(op.element_addr(mn, k), swizzled, "mn {mn} k {k}");
            }
        }
    }

    /// Values from the OFP8 specification's Table 1 and hand-worked codes.
    #[test]
    fn fp8_bytes_decode_to_the_spec_values() {
        let e4 = |b| fp8_value(MmaType::E4m3, b);
        let e5 = |b| fp8_value(MmaType::E5m2, b);
        assert_eq!(e4(0x38), 1.0); // 0.0111.000
        assert_eq!(e4(0x7e), 448.0); // 0.1111.110: the largest
        assert_eq!(e4(0x78), 256.0); // the all-ones exponent is finite
        assert_eq!(e4(0x01), 2f64.powi(-9)); // the smallest subnormal
        assert_eq!(e4(0x08), 2f64.powi(-6)); // the smallest normal
        assert_eq!(e4(0xc4), -3.0); // 1.1000.100: -1.5·2
        assert!(e4(0x7f).is_nan() && e4(0xff).is_nan());
        assert_eq!(e5(0x3c), 1.0); // 0.01111.00
        assert_eq!(e5(0x7b), 57344.0); // 0.11110.11: the largest
        assert_eq!(e5(0x01), 2f64.powi(-16));
        assert_eq!(e5(0x04), 2f64.powi(-14));
        assert_eq!(e5(0xc2), -3.0); // 1.10000.10: -1.5·2
        assert_eq!(e5(0x7c), f64::INFINITY);
        assert_eq!(e5(0xfc), f64::NEG_INFINITY);
        assert!(e5(0x7d).is_nan() && e5(0xff).is_nan());
        assert_eq!(e4(0x80), 0.0);
        assert!(e4(0x80).is_sign_negative());
        assert!(fp8_value(MmaType::Bf16, 0x38).is_nan());
    }

    #[test]
    fn swizzles_permute_chunks_within_their_period() {
        for (width, period) in [(128u32, 1024u32), (64, 512), (32, 256)] {
            let mut seen = std::vec![false; period as usize];
            for a in 0..period {
                let s = swizzle(a, width);
                assert_eq!(s % 16, a % 16);
                assert!(!seen[s as usize]);
                seen[s as usize] = true;
            }
        }
        assert_eq!(swizzle(0x1234, 0), 0x1234);
    }
}
