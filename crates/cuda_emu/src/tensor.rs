//! Tensor-core warp collectives on the emulator: `mma.sync`, `ldmatrix` and `stmatrix`.
//!
//! Each is a warp collective of all 32 lanes (`.aligned`): every lane puts its registers
//! (and, for `ldmatrix`, the 16-byte row its address points at) into a [`Lane`] record on
//! its own coroutine stack and suspends with the record's address as its value; when the
//! last lane arrives the scheduler calls [`complete`], which reads every lane's record and
//! writes each lane's result into it, by the PTX ISA's fragment maps
//! (`cust_core::lanes::mma`, re-exported as `cuda_std::mma::layout`). Memory is touched only by the lanes themselves,
//! in their own context, so the bounds and race checks name the right thread: `ldmatrix`
//! rows are read before the rendezvous, `stmatrix` rows written after it.
//!
//! `mma.sync`: every product of two inputs is exact (f16, bf16 and tf32 significands have at
//! most 11 bits, so a product has at most 22, and their exponents fit `f64`'s); the products
//! of a `D` element are summed in ascending `k` in `f64`, `C` added last, and the sum rounded
//! once to nearest-even `f32`. NVIDIA does not specify the tensor cores' internal
//! accumulation (order, width, rounding), so the result equals the GPU's bit for bit where
//! every partial sum is exact in `f32` (small integers, as the tests use), and may differ
//! in the last bits elsewhere.

use core::panic::Location;

use super::ctx::{check_access_with, in_shared, live_lanes, warp_op};
use super::state::{BlockState, ThreadState, WarpKind, fail, thread};
use super::unit_state::{MmaType, TensorOp};
use super::{AccessKind, EmuError, SourceLocation};
use cust_core::lanes::mma as layout;

/// One lane's part of a tensor collective, on the lane's stack while it is suspended.
#[derive(Clone, Copy, Debug, Default)]
struct Lane {
    /// `mma`: `A` registers 0..4, `B` registers 4..6. `ldmatrix`: the lane's row (4 words,
    /// element `c` in half `c % 2` of word `c / 2`). `stmatrix`: the lane's registers.
    words: [u32; 6],
    /// `mma`: the `C` registers.
    acc: [f32; 4],
    /// `mma`: `D`'s bits. `ldmatrix`: the lane's registers. `stmatrix`: the row the lane
    /// stores.
    out: [u32; 4],
}

/// Suspends the running lane at `op` with its record `lane`; on return the record holds
/// the lane's result. Fails (an [`EmuError::WarpMask`]) when the warp is not whole: these
/// instructions are `.aligned`, every lane of the warp takes part.
#[track_caller]
fn rendezvous(what: &'static str, op: TensorOp, lane: &mut Lane) {
    let t = thread(what);
    let live = live_lanes(what);
    if live != u32::MAX {
        let b = t.block();
        fail(
            t,
            EmuError::WarpMask {
                kernel: b.launch().kernel,
                block: b.idx,
                thread: t.tid,
                op: op.name(),
                mask: u32::MAX,
                lanes: !live,
                reason: "an `.aligned` tensor-core instruction needs all 32 lanes of the warp, and these have exited or do not exist",
                location: SourceLocation::from_std(Location::caller()),
            },
        );
    }
    let address = core::ptr::from_mut(lane).expose_provenance() as u64;
    warp_op(what, WarpKind::Tensor(op), u32::MAX, address, 0);
}

/// `mma.sync` for the running lane: its `A` (4) and `B` (2) registers and `C`; returns `D`.
#[track_caller]
pub fn mma(ty: MmaType, a: &[u32; 4], b: &[u32; 2], c: &[f32; 4]) -> [f32; 4] {
    let mut lane = Lane {
        words: [a[0], a[1], a[2], a[3], b[0], b[1]],
        acc: *c,
        out: [0; 4],
    };
    rendezvous("mma::mma_sync", TensorOp::Mma(ty), &mut lane);
    lane.out.map(f32::from_bits)
}

/// Fails the running thread with a panic-like error for a bad tensor-core address.
#[track_caller]
fn bad_address(t: &ThreadState, op: TensorOp, address: usize, reason: &str) -> ! {
    let b: &BlockState = t.block();
    fail(
        t,
        EmuError::Panic {
            kernel: b.launch().kernel,
            block: b.idx,
            thread: t.tid,
            message: std::format!("`{}`: row address {address:#x} {reason}", op.name()),
            location: Some(SourceLocation::from_std(Location::caller())),
        },
    )
}

/// Checks a row address of `ldmatrix`/`stmatrix`: 16-byte aligned (PTX ISA §9.7.14.5: "each
/// row address must be aligned to 16 bytes") and, with the bounds check on, 16 bytes of the
/// block's shared memory; records the access for the race check (not for the
/// uninitialised-read check: tiles are usually filled with plain stores the emulator does
/// not see).
#[track_caller]
fn check_row(t: &ThreadState, op: TensorOp, address: usize, kind: AccessKind) {
    if !address.is_multiple_of(16) {
        bad_address(t, op, address, "is not 16-byte aligned");
    }
    let checks = t.block().launch().options.checks;
    if checks.bounds && !in_shared(t, address, 16) {
        bad_address(
            t,
            op,
            address,
            "is not 16 bytes of this block's shared memory (the instruction reads and writes `.shared` only)",
        );
    }
    check_access_with(address, 16, kind, Location::caller(), false);
}

/// `ldmatrix` of `N` matrices for the running lane: lanes `0..8·N` read the 16-byte row at
/// `row`; every lane gets its `N` registers.
///
/// # Safety
/// As `mma::ldmatrix_x*`: in the lanes whose address is used, `row` is valid for reading
/// 16 bytes (checked when the bounds check is on).
#[track_caller]
pub unsafe fn ldmatrix<const N: usize>(row: *const u16, trans: bool) -> [u32; N] {
    let op = TensorOp::Ldmatrix {
        count: N as u8,
        trans,
    };
    let what = "mma::ldmatrix";
    let t = thread(what);
    let mut lane = Lane::default();
    if (t.lane() as usize) < 8 * N {
        check_row(t, op, row as usize, AccessKind::Read);
        // SAFETY: the caller's contract; aligned (checked above).
        let words = unsafe { row.cast::<[u32; 4]>().read() };
        lane.words[..4].copy_from_slice(&words);
    }
    rendezvous(what, op, &mut lane);
    core::array::from_fn(|i| lane.out[i])
}

/// `stmatrix` of `N` matrices for the running lane: every lane gives its `N` registers;
/// lanes `0..8·N` write the 16-byte row at `dst`.
///
/// # Safety
/// As `mma::stmatrix_x*`: in the lanes whose address is used, `dst` is valid for writing 16
/// bytes (checked when the bounds check is on).
#[track_caller]
pub unsafe fn stmatrix<const N: usize>(dst: *mut u16, regs: [u32; N], trans: bool) {
    let op = TensorOp::Stmatrix {
        count: N as u8,
        trans,
    };
    let what = "mma::stmatrix";
    let t = thread(what);
    let mut lane = Lane::default();
    lane.words[..N].copy_from_slice(&regs);
    rendezvous(what, op, &mut lane);
    if (t.lane() as usize) < 8 * N {
        check_row(t, op, dst as usize, AccessKind::Write);
        // SAFETY: the caller's contract; aligned (checked above).
        unsafe { dst.cast::<[u32; 4]>().write(lane.out) };
    }
}

/// Element `c` (0..8) of a row held as 4 words.
fn element(words: &[u32], c: u32) -> u32 {
    (words[(c / 2) as usize] >> (16 * (c % 2))) & 0xffff
}

/// Completes `op` for the lanes of `parts`, whose [`Lane`] records are at `addresses`
/// (a lane outside `parts` counts as all-zero registers: it exited, which the divergence
/// check reports when it is on).
///
/// # Safety
/// Each address of a lane in `parts` is that lane's live `Lane` record (it is suspended in
/// [`rendezvous`]).
pub(crate) unsafe fn complete(op: TensorOp, parts: u32, addresses: &[u64; 32]) {
    let zero = Lane::default();
    let mut lanes = [zero; 32];
    for (l, lane) in lanes.iter_mut().enumerate() {
        if parts & (1 << l) != 0 {
            // SAFETY: the caller's contract.
            *lane = unsafe { *core::ptr::with_exposed_provenance::<Lane>(addresses[l] as usize) };
        }
    }
    let mut out = [[0u32; 4]; 32];
    match op {
        TensorOp::Mma(ty) => mma_all(ty, &lanes, &mut out),
        TensorOp::Ldmatrix { count, trans } => {
            for (l, o) in out.iter_mut().enumerate() {
                for (i, reg) in o.iter_mut().enumerate().take(count.into()) {
                    for h in 0..2 {
                        let (mut r, mut c) = layout::ldmatrix_b16(l as u32, h);
                        if trans {
                            (r, c) = (c, r);
                        }
                        let src = &lanes[8 * i + r as usize].words;
                        *reg |= element(src, c) << (16 * h);
                    }
                }
            }
        }
        TensorOp::Stmatrix { count, trans } => {
            for (l, lane) in lanes.iter().enumerate() {
                for i in 0..usize::from(count) {
                    for h in 0..2 {
                        let (mut r, mut c) = layout::ldmatrix_b16(l as u32, h);
                        if trans {
                            (r, c) = (c, r);
                        }
                        let v = (lane.words[i] >> (16 * h)) & 0xffff;
                        out[8 * i + r as usize][(c / 2) as usize] |= v << (16 * (c % 2));
                    }
                }
            }
        }
    }
    for (l, o) in out.into_iter().enumerate() {
        if parts & (1 << l) != 0 {
            let p = core::ptr::with_exposed_provenance_mut::<Lane>(addresses[l] as usize);
            // SAFETY: the caller's contract; nothing else accesses the record while its lane
            // is suspended.
            unsafe { (*p).out = o };
        }
    }
}

/// The value of an input element's bits (f16/bf16: 16 bits; tf32: an `f32` whose 13 low
/// mantissa bits the tensor core ignores, PTX ISA §9.7.14.5 ".tf32").
fn decode(ty: MmaType, bits: u32) -> f64 {
    match ty {
        MmaType::F16 => f64::from(half::f16::from_bits(bits as u16).to_f32()),
        MmaType::Bf16 => f64::from(half::bf16::from_bits(bits as u16).to_f32()),
        MmaType::Tf32 => f64::from(f32::from_bits(bits & !0x1fff)),
        MmaType::E4m3 | MmaType::E5m2 => super::wgmma::fp8_value(ty, bits as u8),
    }
}

/// `D = A·B + C` over the warp's fragments, into each lane's `out`.
fn mma_all(ty: MmaType, lanes: &[Lane; 32], out: &mut [[u32; 4]; 32]) {
    let k = if ty == MmaType::Tf32 { 8 } else { 16 };
    let per_reg = if ty == MmaType::Tf32 { 1 } else { 2 };
    let mut a = [[0f64; 16]; 16];
    let mut b = [[0f64; 8]; 16];
    for (l, lane) in lanes.iter().enumerate() {
        let l = l as u32;
        for reg in 0..4u32 {
            for h in 0..per_reg {
                let (row, col) = match ty {
                    MmaType::Tf32 => layout::a_m16n8k8_tf32(l, reg),
                    _ => layout::a_m16n8k16(l, reg, h),
                };
                let bits = if per_reg == 2 {
                    (lane.words[reg as usize] >> (16 * h)) & 0xffff
                } else {
                    lane.words[reg as usize]
                };
                a[row as usize][col as usize] = decode(ty, bits);
            }
        }
        for reg in 0..2u32 {
            for h in 0..per_reg {
                let (kk, n) = match ty {
                    MmaType::Tf32 => layout::b_m16n8k8_tf32(l, reg),
                    _ => layout::b_m16n8k16(l, reg, h),
                };
                let word = lane.words[4 + reg as usize];
                let bits = if per_reg == 2 {
                    (word >> (16 * h)) & 0xffff
                } else {
                    word
                };
                b[kk as usize][n as usize] = decode(ty, bits);
            }
        }
    }
    for (l, o) in out.iter_mut().enumerate() {
        for (reg, d) in o.iter_mut().enumerate() {
            let (row, col) = layout::acc_m16n8(l as u32, reg as u32);
            let (row, col) = (row as usize, col as usize);
            let products = (0..k).fold(0f64, |s, p| s + a[row][p] * b[p][col]);
            let sum = products + f64::from(lanes[l].acc[reg]);
            *d = (sum as f32).to_bits();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldmatrix_then_stmatrix_of_the_same_rows_is_the_identity() {
        for trans in [false, true] {
            let mut lanes = [Lane::default(); 32];
            for (l, lane) in lanes.iter_mut().enumerate() {
                lane.words[..4].copy_from_slice(&core::array::from_fn::<u32, 4, _>(|w| {
                    (l as u32 * 1000 + w as u32) * 0x0001_0001 + 0x0001_0000
                }));
            }
            let addresses: [u64; 32] = core::array::from_fn(|l| {
                core::ptr::from_mut(&mut lanes[l]).expose_provenance() as u64
            });
            let rows: std::vec::Vec<[u32; 4]> = lanes
                .iter()
                .map(|l| [l.words[0], l.words[1], l.words[2], l.words[3]])
                .collect();
            // SAFETY: every address is a live record.
            unsafe { complete(TensorOp::Ldmatrix { count: 4, trans }, u32::MAX, &addresses) };
            for lane in &mut lanes {
                lane.words[..4].copy_from_slice(&lane.out);
                lane.out = [0; 4];
            }
            // SAFETY: as above.
            unsafe { complete(TensorOp::Stmatrix { count: 4, trans }, u32::MAX, &addresses) };
            for (l, lane) in lanes.iter().enumerate() {
                assert_eq!(lane.out, rows[l], "lane {l}, trans {trans}");
            }
        }
    }

    #[test]
    fn tf32_ignores_the_low_mantissa_bits() {
        assert_eq!(decode(MmaType::Tf32, 1.0f32.to_bits() | 0x1fff), 1.0);
        assert_eq!(decode(MmaType::Bf16, 0x3f80), 1.0);
        assert_eq!(decode(MmaType::F16, 0x3c00), 1.0);
    }
}
