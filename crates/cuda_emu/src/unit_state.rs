//! The state types of the asynchronous and tensor-core units that the thread and block
//! state name: the tensor-core collective kinds ([`TensorOp`], [`MmaType`]) a warp wait
//! carries, and the `mbarrier` table of a block ([`MBarriers`]) and the poll a thread waits
//! in ([`MBarrierWait`]). The operations on them are in `tensor.rs` and `mbarrier.rs`;
//! this module imports none of the emulator.

use core::panic::Location;
use std::collections::HashMap;
use std::vec::Vec;

use crate::Dim3;

/// The input type of an emulated `mma.sync` or `wgmma`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaType {
    /// `m16n8k16` (`wgmma`: `m64nNk16`) with `.f16` inputs.
    F16,
    /// `m16n8k16` (`wgmma`: `m64nNk16`) with `.bf16` inputs.
    Bf16,
    /// `m16n8k8` (`wgmma`: `m64nNk8`) with `.tf32` inputs.
    Tf32,
    /// `wgmma` `m64nNk32` with `.e4m3` inputs (OCP FP8 E4M3); not an emulated `mma.sync`
    /// type.
    E4m3,
    /// `wgmma` `m64nNk32` with `.e5m2` inputs (OCP FP8 E5M2); not an emulated `mma.sync`
    /// type.
    E5m2,
}

impl MmaType {
    /// Bytes of one input element: 2 (f16, bf16), 4 (tf32), 1 (e4m3, e5m2).
    #[must_use]
    pub const fn bytes(self) -> u32 {
        match self {
            Self::F16 | Self::Bf16 => 2,
            Self::Tf32 => 4,
            Self::E4m3 | Self::E5m2 => 1,
        }
    }
}

/// A tensor-core collective; the lanes of one must agree on all of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorOp {
    /// `mma.sync` of this input type.
    Mma(MmaType),
    /// `ldmatrix` of `count` (1, 2 or 4) 8×8 matrices, `.trans` or not.
    Ldmatrix { count: u8, trans: bool },
    /// `stmatrix` of `count` (1, 2 or 4) 8×8 matrices, `.trans` or not.
    Stmatrix { count: u8, trans: bool },
}

impl TensorOp {
    /// The intrinsic's name, as reports print it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Mma(MmaType::F16) => "mma_sync (m16n8k16 f16)",
            Self::Mma(MmaType::Bf16) => "mma_sync (m16n8k16 bf16)",
            Self::Mma(MmaType::Tf32) => "mma_sync (m16n8k8 tf32)",
            // Not issued: `cuda_std` has no FP8 `mma.sync`.
            Self::Mma(MmaType::E4m3) => "mma_sync (e4m3)",
            Self::Mma(MmaType::E5m2) => "mma_sync (e5m2)",
            Self::Ldmatrix { count, trans } => match (count, trans) {
                (1, false) => "ldmatrix_x1",
                (2, false) => "ldmatrix_x2",
                (4, false) => "ldmatrix_x4",
                (1, true) => "ldmatrix_x1_trans",
                (2, true) => "ldmatrix_x2_trans",
                _ => "ldmatrix_x4_trans",
            },
            Self::Stmatrix { count, trans } => match (count, trans) {
                (1, false) => "stmatrix_x1",
                (2, false) => "stmatrix_x2",
                (4, false) => "stmatrix_x4",
                (1, true) => "stmatrix_x1_trans",
                (2, true) => "stmatrix_x2_trans",
                _ => "stmatrix_x4_trans",
            },
        }
    }
}

/// One barrier's state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MBarrierState {
    /// Arrivals each phase expects.
    pub(crate) count: u32,
    /// Arrivals the current phase still expects.
    pub(crate) pending: u32,
    /// Transaction bytes the current phase still expects (negative: delivered early).
    pub(crate) tx: i64,
    /// The current phase's number (0 after `init`).
    pub(crate) phase: u32,
    /// Transaction bytes the current phase was told to expect (`expect_tx`) and those
    /// delivered to it, for the asynchronous-proxy check's report.
    pub(crate) expected: u64,
    pub(crate) delivered: u64,
    /// The thread and call of the current phase's last `expect_tx`.
    pub(crate) expect_at: Option<(Dim3, &'static Location<'static>)>,
}

/// The `mbarrier` objects of a block, by host address.
#[derive(Debug, Default)]
pub(crate) struct MBarriers(pub(crate) HashMap<usize, MBarrierState>);

impl MBarriers {
    /// Whether the phase of parity `parity` of the barrier at `address` has completed.
    pub(crate) fn phase_done(&self, address: usize, parity: u32) -> bool {
        self.0
            .get(&address)
            .is_some_and(|s| s.phase & 1 != parity & 1)
    }
}

/// What a thread polling a barrier waits for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MBarrierWait {
    /// The barrier's host address.
    pub(crate) address: usize,
    /// The parity of the phase waited for.
    pub(crate) parity: u32,
    /// `"mbarrier try_wait"` or `"mbarrier test_wait"`.
    pub(crate) what: &'static str,
    pub(crate) location: &'static Location<'static>,
}

/// A `wgmma` a warpgroup issued that no `wait_group` has retired yet: the host byte ranges
/// `[start, end)` its `A` and `B` operands span.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    /// Its commit group: the issuing threads' `commit_group` count once committed (1, 2,
    /// ...); 0 before.
    pub(crate) group: u32,
    pub(crate) ranges: [(usize, usize); 2],
    /// The first thread of the warpgroup and the call.
    pub(crate) thread: Dim3,
    pub(crate) location: &'static Location<'static>,
    /// The threads of the warpgroup whose `wait_group` has retired it (bit = linear index
    /// in the warpgroup); it is gone when all 128 have.
    pub(crate) retired: u128,
}

/// A TMA store (tensor or bulk) whose shared-memory source no `wait_group_read` of its
/// thread has retired yet: the unit may still read `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingStore {
    /// Its bulk async-group: the issuing thread's `cp.async.bulk.commit_group` count once
    /// committed (1, 2, ...); 0 before.
    pub(crate) group: u32,
    /// The source's host byte range `[start, end)`.
    pub(crate) range: (usize, usize),
    /// The issuing thread (linear index in the block, and as a thread index) and the call.
    pub(crate) issuer: u32,
    pub(crate) thread: Dim3,
    pub(crate) location: &'static Location<'static>,
}

/// An accumulator write of a `wgmma` that becomes visible when `wait_group` retires its
/// group.
#[derive(Debug)]
pub(crate) struct PendingAcc {
    /// As [`InFlight::group`].
    pub(crate) group: u32,
    /// The thread's accumulator array (on its stack).
    pub(crate) acc: *mut f32,
    pub(crate) values: Vec<f32>,
}

/// One thread's part of the asynchronous-proxy state.
#[derive(Debug, Default)]
pub(crate) struct ThreadAsync {
    /// `fence.proxy.async` calls so far.
    pub(crate) fences: u32,
    /// `wgmma.commit_group` calls so far.
    pub(crate) commits: u32,
    /// Accumulator writes not yet visible, oldest first.
    pub(crate) pending: Vec<PendingAcc>,
    /// `cp.async.commit_group` calls so far.
    pub(crate) cp_commits: u32,
    /// `cp.async` copies not landed yet, oldest first.
    pub(crate) cp_pending: Vec<CpCopy>,
    /// `cp.async.bulk.commit_group` calls so far.
    pub(crate) bulk_commits: u32,
}

/// A `cp.async` copy that lands at the `wait_group` retiring its group.
#[derive(Debug)]
pub(crate) struct CpCopy {
    /// Its group (as [`InFlight::group`], counted by the thread's `cp.async` commits).
    pub(crate) group: u32,
    /// The destination's host address.
    pub(crate) dst: usize,
    /// The bytes to land: the source read at issue, zero-filled to the copy's size.
    pub(crate) data: Vec<u8>,
}

/// A block's asynchronous-proxy state (operated on by `proxy.rs` and `wgmma.rs`).
#[derive(Debug, Default)]
pub(crate) struct AsyncState {
    /// Per thread, by linear index, up to the highest thread that used an asynchronous
    /// unit (made on first use: most kernels use none, and a block's start then makes
    /// nothing).
    threads: Vec<ThreadAsync>,
    /// The `wgmma`s in flight, per warpgroup.
    pub(crate) inflight: Vec<Vec<InFlight>>,
    /// The TMA stores whose sources may still be read, oldest first.
    pub(crate) stores: Vec<PendingStore>,
}

impl AsyncState {
    /// The state of a block of `warpgroups` warpgroups (whole or not).
    pub(crate) fn new(warpgroups: u32) -> Self {
        Self {
            threads: Vec::new(),
            inflight: std::vec![Vec::new(); warpgroups as usize],
            stores: Vec::new(),
        }
    }

    /// The state of the block's thread of linear index `linear`.
    pub(crate) fn thread_mut(&mut self, linear: u32) -> &mut ThreadAsync {
        let i = linear as usize;
        if i >= self.threads.len() {
            self.threads.resize_with(i + 1, ThreadAsync::default);
        }
        &mut self.threads[i]
    }

    /// The state of that thread, if it used an asynchronous unit.
    pub(crate) fn thread(&self, linear: u32) -> Option<&ThreadAsync> {
        self.threads.get(linear as usize)
    }
}
