//! The asynchronous-proxy checks ([`EmuChecks::async_proxy`](crate::EmuChecks)): hazards
//! between Hopper's asynchronous units (TMA, `wgmma`) and the threads' generic accesses to
//! shared memory that compute-sanitizer does not report. Each finding is an
//! [`EmuError::AsyncHazard`] naming kernel, block, thread, address and source line.
//!
//! The rules (PTX ISA §8 "Memory Consistency Model", proxies; §9.7.15.4 `wgmma` groups):
//! - **Generic writes need `fence.proxy.async`** before an asynchronous unit reads them
//!   (a `wgmma` operand, a TMA store's source): each thread counts its fences, a write
//!   records its writer's count in the byte's shadow, and an asynchronous read of a byte
//!   whose writer has not fenced since is a finding. Only writes the shadow sees count
//!   (`shared::write`, `mem`'s vector stores, `stmatrix`, `cp.async`); plain stores through
//!   a pointer are host stores the emulator does not see.
//! - **A TMA load's destination is readable once its mbarrier phase completes:** the load
//!   records the barrier and its current phase in each byte it writes; a read through the
//!   checked accessors, `ldmatrix` or a `wgmma` before that phase has completed is a finding.
//! - **A `wgmma`'s operands stay unchanged until `wait_group` retires it:** each `wgmma`
//!   records the byte ranges its operands span for its warpgroup, `commit_group` gives the
//!   uncommitted ones their group, `wait_group::<N>` retires all but the newest `N` groups;
//!   a TMA load or a checked write into a range still in flight is a finding.
//! - **A TMA store's source stays unchanged until `wait_group_read` retires it:** each store
//!   (`cp.async.bulk.tensor` or `cp.async.bulk` to global memory) records its source range
//!   for its thread, `cp.async.bulk.commit_group` gives the uncommitted ones their group,
//!   `cp.async.bulk.wait_group.read N` retires all but the newest `N` groups; a TMA load or a
//!   checked write into a source not yet retired is a finding. (The emulator copies when the
//!   store is issued; a GPU may read the source later.)
//! - **`expect_tx` must match the bytes delivered:** when a phase cannot complete although
//!   every arrival came, because its transaction count is not zero, the deadlock is
//!   reported as this hazard, with both byte counts and the last `expect_tx` call.
//!
//! `wgmma` results become visible at `wait_group` (`wgmma.rs` keeps each thread's
//! accumulator values here until its group retires).

use core::panic::Location;
use std::boxed::Box;
use std::string::String;

use super::shared_mem::SharedMem;
use super::state::{BlockState, ThreadState, fail, thread};
use super::unit_state::{InFlight, MBarriers, PendingStore};
use super::{Access, AccessKind, Dim3, EmuError, SourceLocation};

/// The error for a hazard of thread `thread` of `block` at host address `address`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn hazard(
    block: &BlockState,
    mem: &SharedMem,
    thread: Dim3,
    problem: String,
    address: usize,
    location: &'static Location<'static>,
    earlier: Option<Access>,
) -> EmuError {
    let (allocation, offset) = mem.describe(address).map_or_else(
        || (String::from("not shared memory"), 0),
        |(name, start, _)| (name, address - start),
    );
    EmuError::AsyncHazard {
        kernel: block.launch().kernel,
        block: block.idx,
        thread,
        problem: problem.into_boxed_str(),
        address,
        place: Box::new((allocation, offset)),
        location: SourceLocation::from_std(location),
        earlier: earlier.map(Box::new),
    }
}

/// `fence.proxy.async.shared::cta` by the running thread.
#[track_caller]
pub fn fence(what: &str) {
    let t = thread(what);
    let mut asyncs = t.block().asyncs.borrow_mut();
    asyncs.thread_mut(t.linear).fences += 1;
}

/// Whether the phase `phase` of the barrier at `bar` has completed (a barrier re-initialised
/// or gone counts as completed: nothing is pending on it any more).
fn phase_completed(mbarriers: &MBarriers, bar: usize, phase: u32) -> bool {
    mbarriers
        .0
        .get(&bar)
        .is_none_or(|s| s.phase.wrapping_sub(phase) as i32 > 0)
}

/// The problem with an asynchronous unit (`reader`, e.g. "`wgmma`") reading `len` bytes at
/// host address `addr` of `block`'s shared memory, if any: an unfenced generic write or a
/// TMA load not yet complete. Returns the first byte's address, the problem and the
/// earlier access.
pub(crate) fn async_read_problem(
    block: &BlockState,
    mem: &SharedMem,
    addr: usize,
    len: usize,
    reader: &str,
) -> Option<(usize, String, Option<Access>)> {
    async_reads_problem(block, mem, &[addr], len, reader)
}

/// [`async_read_problem`] for `len` bytes at each of `addrs` (the elements a `wgmma` reads),
/// with the state borrowed once.
pub(crate) fn async_reads_problem(
    block: &BlockState,
    mem: &SharedMem,
    addrs: &[usize],
    len: usize,
    reader: &str,
) -> Option<(usize, String, Option<Access>)> {
    let asyncs = block.asyncs.borrow();
    let mbarriers = block.mbarriers.borrow();
    let mut alloc = None;
    for &addr in addrs {
        let a = match alloc {
            Some(a) if super::shared_mem::SharedAlloc::contains(a, addr) => a,
            _ => {
                let Some((_, a, _)) = mem.locate(addr) else {
                    continue;
                };
                alloc = Some(a);
                a
            }
        };
        if a.shadow.is_empty() {
            continue;
        }
        let off = addr - a.ptr as usize;
        let end = (off + len).min(a.bytes);
        if let Some(p) = bytes_problem(
            block,
            &asyncs,
            &mbarriers,
            &a.shadow[off..end],
            addr,
            reader,
        ) {
            return Some(p);
        }
    }
    None
}

/// The first problem among the shadow bytes `shadow` (the first at host address `addr`).
fn bytes_problem(
    block: &BlockState,
    asyncs: &super::unit_state::AsyncState,
    mbarriers: &MBarriers,
    shadow: &[super::shared_mem::Shadow],
    addr: usize,
    reader: &str,
) -> Option<(usize, String, Option<Access>)> {
    for (i, s) in shadow.iter().enumerate() {
        if s.w_thread != super::shared_mem::NONE
            && asyncs.thread(s.w_thread).map_or(0, |a| a.fences) == s.w_fence
        {
            let writer = Access {
                thread: block.tid_of(s.w_thread),
                kind: AccessKind::Write,
                location: s.w_loc.map_or(
                    SourceLocation {
                        file: "<unknown>",
                        line: 0,
                        column: 0,
                    },
                    SourceLocation::from_std,
                ),
            };
            return Some((
                addr + i,
                std::format!(
                    "{reader} reads shared memory that a generic store wrote with no \
                     `fence.proxy.async` between (the writing thread must call \
                     `tma::fence_proxy_async_shared` after its stores and before the barrier \
                     that orders them with the {reader})"
                ),
                Some(writer),
            ));
        }
        if s.tma_bar != 0 && !phase_completed(mbarriers, s.tma_bar, s.tma_phase) {
            return Some((
                addr + i,
                tma_pending_text(reader, s.tma_bar, s.tma_phase),
                None,
            ));
        }
    }
    None
}

fn tma_pending_text(reader: &str, bar: usize, phase: u32) -> String {
    std::format!(
        "{reader} reads the destination of a TMA load before its mbarrier phase completes (wait \
         for parity {} of the mbarrier at {bar:#x}, phase {phase}, first)",
        phase & 1
    )
}

/// Checks a generic read of shadow byte `s` at `addr` (through the checked accessors or
/// `ldmatrix`) against a TMA load still pending on it.
pub(crate) fn generic_read_problem(
    block: &BlockState,
    tma_bar: usize,
    tma_phase: u32,
) -> Option<String> {
    (tma_bar != 0 && !phase_completed(&block.mbarriers.borrow(), tma_bar, tma_phase))
        .then(|| tma_pending_text("the thread", tma_bar, tma_phase))
}

/// The `wgmma` in flight in `block` whose operands overlap `[addr, addr + len)`, as thread
/// `writer` (linear index) sees it, if any: for a thread of its warpgroup, until that
/// thread's `wait_group` retires it; for another thread, until the first thread of its
/// warpgroup retires it (the other threads learn of the retirement only through a barrier
/// after that wait).
pub(crate) fn inflight_overlap(
    block: &BlockState,
    writer: u32,
    addr: usize,
    len: usize,
) -> Option<InFlight> {
    let asyncs = block.asyncs.borrow();
    asyncs
        .inflight
        .iter()
        .enumerate()
        .filter(|&(g, _)| g as u32 != writer / 128)
        .flat_map(|(_, fs)| fs.iter().filter(|f| f.retired == 0))
        .chain(
            asyncs
                .inflight
                .get((writer / 128) as usize)
                .into_iter()
                .flatten()
                .filter(|f| f.retired & (1 << (writer % 128)) == 0),
        )
        .find(|f| f.ranges.iter().any(|&(s, e)| addr < e && s < addr + len))
        .copied()
}

/// The problem text and earlier access for a write by `writer` into the operands of `f`.
pub(crate) fn overwrite_problem(writer: &str, f: &InFlight) -> (String, Access) {
    (
        std::format!(
            "{writer} overwrites shared memory that a `wgmma` still reads (not yet retired: \
             call `wgmma::wait_group` for its group before reusing the stage)"
        ),
        Access {
            thread: f.thread,
            kind: AccessKind::Read,
            location: SourceLocation::from_std(f.location),
        },
    )
}

/// The TMA store of `block` not yet retired whose source overlaps `[addr, addr + len)`, if
/// any.
pub(crate) fn pending_store_overlap(
    block: &BlockState,
    addr: usize,
    len: usize,
) -> Option<PendingStore> {
    block
        .asyncs
        .borrow()
        .stores
        .iter()
        .find(|s| addr < s.range.1 && s.range.0 < addr + len)
        .copied()
}

/// The problem text and earlier access for a write by `writer` into the source of the TMA
/// store `s`.
pub(crate) fn store_overwrite_problem(writer: &str, s: &PendingStore) -> (String, Access) {
    (
        std::format!(
            "{writer} overwrites shared memory that a TMA store still reads (not yet retired: \
             `tma::wait_group_read` must cover the store's bulk group before the buffer is \
             reused)"
        ),
        Access {
            thread: s.thread,
            kind: AccessKind::Read,
            location: SourceLocation::from_std(s.location),
        },
    )
}

/// Records the TMA store the running thread `t` just issued, reading `[addr, addr + len)`
/// of its block's shared memory from `location`, until a `wait_group_read` retires it.
pub(crate) fn record_store(
    t: &ThreadState,
    addr: usize,
    len: usize,
    location: &'static Location<'static>,
) {
    let block = t.block();
    if !block.launch().options.checks.async_proxy {
        return;
    }
    block.asyncs.borrow_mut().stores.push(PendingStore {
        group: 0,
        range: (addr, addr + len),
        issuer: t.linear,
        thread: t.tid,
        location,
    });
}

/// `cp.async.bulk.commit_group` by the running thread: its uncommitted TMA stores form its
/// next bulk group.
#[track_caller]
pub fn bulk_commit(what: &str) {
    let t = thread(what);
    let mut asyncs = t.block().asyncs.borrow_mut();
    let me = asyncs.thread_mut(t.linear);
    me.bulk_commits += 1;
    let group = me.bulk_commits;
    for s in asyncs
        .stores
        .iter_mut()
        .filter(|s| s.issuer == t.linear && s.group == 0)
    {
        s.group = group;
    }
}

/// `cp.async.bulk.wait_group.read N` by the running thread: its TMA stores of every bulk
/// group but the newest `n` have read their sources.
#[track_caller]
pub fn bulk_wait_read(what: &str, n: u32) {
    let t = thread(what);
    let mut asyncs = t.block().asyncs.borrow_mut();
    let Some(retired) = asyncs.thread_mut(t.linear).bulk_commits.checked_sub(n) else {
        return;
    };
    asyncs
        .stores
        .retain(|s| !(s.issuer == t.linear && s.group != 0 && s.group <= retired));
}

/// Fails `t` if a TMA load into `[addr, addr + len)` of `block` overwrites a `wgmma`'s
/// operands in flight, or the source of a TMA store not yet retired.
#[track_caller]
pub(crate) fn check_tma_overwrite(t: &ThreadState, block: &BlockState, addr: usize, len: usize) {
    if !block.launch().options.checks.async_proxy {
        return;
    }
    if let Some(s) = pending_store_overlap(block, addr, len) {
        let (problem, earlier) = store_overwrite_problem("a TMA load", &s);
        let mem = block.mem.borrow();
        let err = hazard(
            block,
            &mem,
            t.tid,
            problem,
            addr.max(s.range.0),
            Location::caller(),
            Some(earlier),
        );
        drop(mem);
        fail(t, err);
    }
    if let Some(f) = inflight_overlap(block, t.linear, addr, len) {
        let (problem, earlier) = overwrite_problem("a TMA load", &f);
        let mem = block.mem.borrow();
        let err = hazard(
            block,
            &mem,
            t.tid,
            problem,
            addr.max(f.ranges.iter().map(|r| r.0).min().unwrap_or(addr)),
            Location::caller(),
            Some(earlier),
        );
        drop(mem);
        fail(t, err);
    }
}

/// Fails `t` if an asynchronous unit (`reader`) reading `[addr, addr + len)` of its block
/// meets a hazard.
#[track_caller]
pub(crate) fn check_async_read(t: &ThreadState, addr: usize, len: usize, reader: &str) {
    let b = t.block();
    if !b.launch().options.checks.async_proxy {
        return;
    }
    let mem = b.mem.borrow();
    if let Some((at, problem, earlier)) = async_read_problem(b, &mem, addr, len, reader) {
        let err = hazard(b, &mem, t.tid, problem, at, Location::caller(), earlier);
        drop(mem);
        fail(t, err);
    }
}

/// Records, in each byte of `[addr, addr + len)` of `block`, that a TMA load completing on
/// the barrier at `bar` in its current phase wrote it.
pub(crate) fn mark_tma_dest(block: &BlockState, addr: usize, len: usize, bar: usize) {
    let phase = block.mbarriers.borrow().0.get(&bar).map_or(0, |s| s.phase);
    if let Some(shadow) = block.mem.borrow_mut().shadow_mut(addr, len) {
        for s in shadow {
            s.tma_bar = bar;
            s.tma_phase = phase;
        }
    }
}

/// `wgmma.commit_group` by the running thread: its uncommitted accumulator writes, and its
/// warpgroup's uncommitted `wgmma`s, form its next group.
#[track_caller]
pub fn wgmma_commit(what: &str) {
    let t = thread(what);
    let mut asyncs = t.block().asyncs.borrow_mut();
    let me = asyncs.thread_mut(t.linear);
    me.commits += 1;
    let group = me.commits;
    for p in me.pending.iter_mut().filter(|p| p.group == 0) {
        p.group = group;
    }
    for f in asyncs.inflight[(t.linear / 128) as usize]
        .iter_mut()
        .filter(|f| f.group == 0)
    {
        f.group = group;
    }
}

/// `wgmma.wait_group N` by the running thread: every group but the newest `n` retires: its
/// accumulator writes become visible, and its warpgroup's `wgmma`s of those groups no longer
/// hold their operands.
#[track_caller]
pub fn wgmma_wait(what: &str, n: u32) {
    let t = thread(what);
    let mut asyncs = t.block().asyncs.borrow_mut();
    let me = asyncs.thread_mut(t.linear);
    let Some(retired) = me.commits.checked_sub(n) else {
        return;
    };
    let done = |g: u32| g != 0 && g <= retired;
    for p in me.pending.iter().filter(|p| done(p.group)) {
        // SAFETY: `wgmma.rs` recorded the running thread's accumulator array, which lives
        // on its stack and which it passes to every `wgmma` and reads after this wait.
        unsafe { core::ptr::copy_nonoverlapping(p.values.as_ptr(), p.acc, p.values.len()) };
    }
    me.pending.retain(|p| !done(p.group));
    let bit = 1u128 << (t.linear % 128);
    let inflight = &mut asyncs.inflight[(t.linear / 128) as usize];
    for f in inflight.iter_mut().filter(|f| done(f.group)) {
        f.retired |= bit;
    }
    inflight.retain(|f| f.retired != u128::MAX);
}

#[cfg(test)]
mod tests {
    use crate::device::{self, AccessKind, BarrierKind, MmaType};
    use crate::{EmuChecks, EmuError, EmuOptions, HostBuffer, launch};
    use core::ffi::c_void;
    use core::panic::Location;
    use core::sync::atomic::{AtomicU32, Ordering};
    use cust_core::TensorMap;
    use cust_core::launch::Kernel;
    use cust_core::tma::{Tiled2d, TmaSwizzle};

    /// A bf16 one.
    const ONE: u16 = 0x3f80;
    /// Bytes of one 64 × 16 bf16 operand (K-major, no swizzle: 8-row core matrices of 16
    /// bytes, the two K halves 128 bytes apart, row groups 256 bytes apart).
    const TILE: usize = 2048;

    /// A tensor TMA can read: its global address must be 16-byte aligned.
    #[repr(C, align(128))]
    struct Aligned([u16; 64 * 16]);

    /// The tensor the TMA tests load from (64 rows of 16 bf16 ones) and its map.
    static TENSOR: Aligned = Aligned([ONE; 64 * 16]);
    static MAP: std::sync::OnceLock<Box<TensorMap>> = std::sync::OnceLock::new();

    fn map() -> &'static TensorMap {
        MAP.get_or_init(|| {
            Box::new(
                TensorMap::encode_cpu(&Tiled2d {
                    base_addr: TENSOR.0.as_ptr() as u64,
                    elem_bytes: 2,
                    dims: [16, 64],
                    row_stride_bytes: 32,
                    box_dims: [16, 64],
                    swizzle: TmaSwizzle::None,
                })
                .expect("a valid map"),
            )
        })
    }

    /// Global memory the TMA store tests write (two 2048-byte halves).
    #[repr(C, align(128))]
    struct Sink(core::cell::UnsafeCell<[u8; 4096]>);
    // SAFETY: written only by the emulated launches, one at a time (the tests using it run
    // their launches in turn), and never read.
    unsafe impl Sync for Sink {}
    static SINK: Sink = Sink(core::cell::UnsafeCell::new([0; 4096]));

    fn run(
        name: &'static str,
        body: unsafe fn(*const *mut c_void),
        checks: EmuChecks,
    ) -> Result<(), EmuError> {
        let kernel: Kernel<(), ()> = Kernel::__new_with_host(name, body);
        let options = EmuOptions {
            checks,
            buffers: std::vec![
                HostBuffer {
                    address: TENSOR.0.as_ptr() as usize,
                    bytes: core::mem::size_of_val(&TENSOR.0),
                },
                HostBuffer {
                    address: core::ptr::from_ref(map()) as usize,
                    bytes: 128,
                },
                HostBuffer {
                    address: SINK.0.get() as usize,
                    bytes: 4096,
                },
            ],
            ..EmuOptions::default()
        };
        // SAFETY: the bodies take no parameters and touch shared memory, `TENSOR` (read by
        // TMA) and `SEEN`.
        unsafe { launch(&kernel, [1, 1, 1], [128, 1, 1], 8192, &[], &options) }.map(|_| ())
    }

    fn tid() -> usize {
        device::thread_idx("test")[0] as usize
    }

    fn smem() -> *mut u8 {
        device::dynamic_shared("test").0
    }

    fn sync() {
        device::barrier("thread::sync_threads", BarrierKind::Sync, false);
    }

    /// A checked store of a bf16 one at byte `off` of the dynamic shared memory (as
    /// `shared::write` does).
    #[track_caller]
    fn store_one(off: usize) {
        // SAFETY: `off` + 2 is inside the 8192 bytes.
        let p = unsafe { smem().add(off) };
        device::check_access(p as usize, 2, AccessKind::Write, Location::caller());
        // SAFETY: as above.
        unsafe { p.cast::<u16>().write(ONE) };
    }

    /// Each thread writes its share of `A` (bytes 0..2048) and `B` (2048..4096) with checked
    /// stores, fencing them for the async proxy if `fence`, then the block barrier.
    fn stage(fence: bool) {
        for off in (2 * tid()..2 * TILE).step_by(256) {
            store_one(off);
        }
        if fence {
            super::fence("tma::fence_proxy_async_shared");
        }
        sync();
    }

    /// The descriptor of the operand at byte `off` of the dynamic shared memory.
    fn desc(off: usize) -> u64 {
        // SAFETY: inside the dynamic shared memory.
        let start = u64::from(device::shared_addr("test", unsafe { smem().add(off) }));
        (start >> 4) | ((128 >> 4) << 16) | ((256u64 >> 4) << 32)
    }

    fn mma(acc: &mut [f32; 32]) {
        device::wgmma_mma_async(
            "wgmma::mma_m64n64k16_f32_bf16",
            MmaType::Bf16,
            acc,
            desc(0),
            desc(TILE),
            false,
            false,
            false,
        );
    }

    /// Thread 0's accumulator element 0 before `wait_group`, and after.
    static SEEN: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];

    unsafe fn unfenced(_: *const *mut c_void) {
        stage(false);
        let mut acc = [0f32; 32];
        mma(&mut acc);
    }

    unsafe fn fenced(_: *const *mut c_void) {
        stage(true);
        let mut acc = [0f32; 32];
        mma(&mut acc);
        if tid() == 0 {
            SEEN[0].store(acc[0].to_bits(), Ordering::Relaxed);
        }
        super::wgmma_commit("wgmma::commit_group");
        super::wgmma_wait("wgmma::wait_group", 0);
        if tid() == 0 {
            SEEN[1].store(acc[0].to_bits(), Ordering::Relaxed);
        }
    }

    unsafe fn overwrite_in_flight(_: *const *mut c_void) {
        stage(true);
        let mut acc = [0f32; 32];
        mma(&mut acc);
        super::wgmma_commit("wgmma::commit_group");
        if tid() == 5 {
            // The stage is refilled before `wait_group` retires the `wgmma`.
            store_one(64);
        }
        super::wgmma_wait("wgmma::wait_group", 0);
    }

    /// Thread 0 stores shared bytes `half·2048..` (after `stage`) to `SINK` by a bulk copy
    /// and commits it as a group.
    fn store_half(half: usize) {
        // SAFETY: 2048 bytes of the dynamic shared memory to 2048 bytes of `SINK`.
        unsafe {
            device::tma_bulk_store(
                "tma::bulk_store",
                SINK.0.get().cast::<u8>().add(half * TILE),
                smem().add(half * TILE),
                TILE as u32,
            );
        }
        super::bulk_commit("tma::commit_group");
    }

    /// The first half is stored, then rewritten by thread 5 after a block barrier, with
    /// `wait_group_read::<0>` before the barrier (`WAIT`) or without.
    fn store_then_rewrite<const WAIT: bool>() {
        stage(true);
        if tid() == 0 {
            store_half(0);
            if WAIT {
                super::bulk_wait_read("tma::wait_group_read", 0);
            }
        }
        sync();
        if tid() == 5 {
            store_one(64);
        }
    }

    unsafe fn rewrite_unretired(_: *const *mut c_void) {
        store_then_rewrite::<false>();
    }

    unsafe fn rewrite_retired(_: *const *mut c_void) {
        store_then_rewrite::<true>();
    }

    /// Both halves stored in two groups, `wait_group_read::<1>` (the first retires), then
    /// thread 5 rewrites the first half (`SECOND` false) or the second.
    fn two_groups<const SECOND: bool>() {
        stage(true);
        if tid() == 0 {
            store_half(0);
            store_half(1);
            super::bulk_wait_read("tma::wait_group_read", 1);
        }
        sync();
        if tid() == 5 {
            store_one(if SECOND { TILE + 64 } else { 64 });
        }
    }

    unsafe fn rewrite_older_group(_: *const *mut c_void) {
        two_groups::<false>();
    }

    unsafe fn rewrite_newest_group(_: *const *mut c_void) {
        two_groups::<true>();
    }

    fn bar() -> *mut u64 {
        // SAFETY: 8 bytes at 4096 of the dynamic shared memory.
        unsafe { smem().add(4096).cast() }
    }

    fn load() {
        // SAFETY: the map describes `TENSOR`; the box (2048 bytes) and the barrier are in
        // the dynamic shared memory.
        unsafe { device::tma_load_2d("tma::load_2d", smem(), map(), 0, 0, bar()) };
    }

    unsafe fn tma_read_early(_: *const *mut c_void) {
        if tid() == 0 {
            device::mbarrier_init("barrier::MBarrier::init", bar(), 1);
            load();
            // Read before the phase completes (the arrival has not come).
            device::check_access(
                smem() as usize + 64,
                2,
                AccessKind::Read,
                Location::caller(),
            );
        }
    }

    unsafe fn tx_mismatch(_: *const *mut c_void) {
        if tid() == 0 {
            device::mbarrier_init("barrier::MBarrier::init", bar(), 1);
        }
        sync();
        if tid() == 0 {
            // 4096 bytes expected, one 2048-byte box delivered.
            device::mbarrier_arrive("barrier::MBarrier::arrive_expect_tx", bar(), 4096, true);
            load();
        }
        while !device::mbarrier_poll("barrier::MBarrier::try_wait", bar(), 0) {}
    }

    fn hazard(err: &EmuError) -> (&str, [u32; 3], Option<[u32; 3]>, &str) {
        let EmuError::AsyncHazard {
            problem,
            thread,
            earlier,
            location,
            ..
        } = err
        else {
            panic!("expected AsyncHazard, got {err}")
        };
        (
            problem,
            *thread,
            earlier.as_ref().map(|a| a.thread),
            location.file,
        )
    }

    #[test]
    fn a_wgmma_of_unfenced_generic_stores_is_reported_and_a_fenced_one_runs() {
        let err = run("unfenced", unfenced, EmuChecks::ALL).expect_err("reported");
        let (problem, thread, writer, file) = hazard(&err);
        assert!(problem.contains("no `fence.proxy.async`"), "{err}");
        assert_eq!((thread, writer), ([0, 0, 0], Some([0, 0, 0])), "{err}");
        assert_eq!(file, file!(), "{err}");
        // The check can be turned off on its own.
        let others = EmuChecks {
            async_proxy: false,
            ..EmuChecks::ALL
        };
        run("unfenced", unfenced, others).expect("unchecked");
        // Fenced: runs, and the result (16 products of ones) appears at `wait_group` only.
        run("fenced", fenced, EmuChecks::ALL).expect("fenced");
        assert_eq!(f32::from_bits(SEEN[0].load(Ordering::Relaxed)), 0.0);
        assert_eq!(f32::from_bits(SEEN[1].load(Ordering::Relaxed)), 16.0);
    }

    #[test]
    fn a_stage_overwritten_before_wait_group_is_reported() {
        let err =
            run("overwrite_in_flight", overwrite_in_flight, EmuChecks::ALL).expect_err("reported");
        let (problem, thread, reader, _) = hazard(&err);
        assert!(problem.contains("a generic store overwrites"), "{err}");
        assert_eq!((thread, reader), ([5, 0, 0], Some([0, 0, 0])), "{err}");
    }

    #[test]
    fn a_tma_store_source_rewritten_before_wait_group_read_is_reported() {
        let err =
            run("rewrite_unretired", rewrite_unretired, EmuChecks::ALL).expect_err("reported");
        let (problem, thread, reader, file) = hazard(&err);
        assert!(
            problem
                .contains("a generic store overwrites shared memory that a TMA store still reads"),
            "{err}"
        );
        assert_eq!((thread, reader), ([5, 0, 0], Some([0, 0, 0])), "{err}");
        assert_eq!(file, file!(), "{err}");
        run("rewrite_retired", rewrite_retired, EmuChecks::ALL).expect("retired before");
        // `wait_group_read::<1>` retires all but the newest group.
        run("rewrite_older_group", rewrite_older_group, EmuChecks::ALL).expect("older retired");
        let err =
            run("rewrite_newest_group", rewrite_newest_group, EmuChecks::ALL).expect_err("newest");
        assert!(
            problem_of(&err).contains("a TMA store still reads"),
            "{err}"
        );
        // The check can be turned off with the other asynchronous-proxy checks.
        let others = EmuChecks {
            async_proxy: false,
            ..EmuChecks::ALL
        };
        run("rewrite_unretired", rewrite_unretired, others).expect("unchecked");
    }

    fn problem_of(err: &EmuError) -> &str {
        hazard(err).0
    }

    #[test]
    fn a_tma_destination_read_before_its_phase_completes_is_reported() {
        let err = run("tma_read_early", tma_read_early, EmuChecks::ALL).expect_err("reported");
        let (problem, thread, _, _) = hazard(&err);
        assert!(
            problem.contains("before its mbarrier phase completes"),
            "{err}"
        );
        assert_eq!(thread, [0, 0, 0]);
    }

    #[test]
    fn an_expect_tx_that_differs_from_the_bytes_delivered_is_reported_within_a_second() {
        let start = std::time::Instant::now();
        let err = run("tx_mismatch", tx_mismatch, EmuChecks::ALL).expect_err("reported");
        assert!(start.elapsed().as_secs() < 1, "reported within a second");
        let (problem, thread, _, _) = hazard(&err);
        assert!(
            problem.contains("asked for 4096 bytes and its TMA copies delivered 2048"),
            "{err}"
        );
        assert_eq!(thread, [0, 0, 0]);
        // Without the check it is the deadlock it causes.
        let others = EmuChecks {
            async_proxy: false,
            ..EmuChecks::ALL
        };
        let err = run("tx_mismatch", tx_mismatch, others).expect_err("deadlock");
        assert!(matches!(err, EmuError::MBarrierDeadlock { .. }), "{err}");
    }
}
