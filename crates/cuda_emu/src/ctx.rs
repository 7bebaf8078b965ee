//! What the intrinsics of `thread`, `warp`, `shared`, `atomic`, `mem` and `io` do on the
//! emulator (block and named barriers, warp collectives, shared memory and its window,
//! `printf`, asserts, host atomics), and the access checks: bounds, and the shared-memory
//! shadow for the race and initialisation checks. The state they act on is in `state.rs`
//! and `shared_mem.rs`.

use core::panic::Location;
use std::boxed::Box;
use std::string::String;

use self::atomics::{HostAtomic, Op};
use crate::clock::MemScope;
use crate::order::AtomicAccess;
use crate::shared_mem::{Loc, NONE, Shadow, SharedAlloc, SharedMem, SharedShape};
use crate::state::{
    BarrierKind, BarrierWait, BlockState, NAMED_BARRIERS, NamedWait, POLL_SITES, SpinWait, Suspend,
    ThreadState, WarpKind, WarpWait, current, fail, in_block_shared, suspend, thread,
};
use crate::{Access, AccessKind, EmuError, Printed, SourceLocation};
use core::sync::atomic::Ordering;

/// A block barrier; returns its reduction (count, or 0/1).
///
/// Inlined in a release build, down to the coroutine switch, into the kernel's call (as
/// [`warp_op`] is): see `state::suspend`.
#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn barrier(what: &str, kind: BarrierKind, predicate: bool) -> u64 {
    let t = thread(what);
    suspend(
        t,
        Suspend::Barrier(BarrierWait {
            kind,
            predicate,
            location: Location::caller(),
        }),
    )
}

/// A warp collective; returns this lane's result. Inlined in a release build, as
/// [`barrier`] is.
#[track_caller]
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn warp_op(what: &str, kind: WarpKind, mask: u32, value: u64, b: u32) -> u64 {
    let t = thread(what);
    suspend(
        t,
        Suspend::Warp(WarpWait {
            kind,
            mask,
            value,
            b,
            location: Location::caller(),
        }),
    )
}

/// A named barrier (`barrier.sync id, threads`, PTX ISA §9.7.13.1): waits until `threads`
/// threads of the block (a multiple of 32) have arrived at barrier `id` (0..16), counted by
/// warps: a warp counts 32 once every lane of it that has not exited waits there. Barrier
/// 0 with every thread of the block is `sync_threads`. Its completion orders the shared
/// accesses of the whole block for the race check (those of threads that did not take
/// part included: races across it between them go unreported). A barrier that too few
/// threads reach is a deadlock, reported as barrier divergence.
///
/// # Panics
/// (a launch error naming the call) if `id` ≥ 16, or `threads` is 0, not a multiple of
/// 32 or more than the block's threads.
#[track_caller]
pub fn named_barrier(what: &str, id: u32, threads: u32) {
    let t = thread(what);
    let [x, y, z] = t.block().launch().block;
    let block = x * y * z;
    assert!(
        id < NAMED_BARRIERS,
        "{what}: barrier id {id} is not in 0..{NAMED_BARRIERS}"
    );
    assert!(
        threads > 0 && threads.is_multiple_of(32) && threads <= block.next_multiple_of(32),
        "{what}: the thread count {threads} must be a nonzero multiple of 32, at most the \
         block's {block} threads rounded up to a warp"
    );
    suspend(
        t,
        Suspend::Named(NamedWait {
            id,
            threads,
            location: Location::caller(),
        }),
    );
}

/// The host address of `len` bytes at 32-bit shared address `addr` in the running block's
/// shared window (the inverse of [`shared_addr`]), or `None` when they do not lie inside one
/// of the block's shared allocations.
#[track_caller]
pub fn shared_ptr(what: &str, addr: u32, len: usize) -> Option<*mut u8> {
    let t = thread(what);
    let mem = t.block().mem.borrow();
    mem.host_of(addr, len).map(|p| p as *mut u8)
}

/// `nanosleep`: lets the block's other threads run (the caller goes behind every thread
/// of its block that is ready). A block whose threads do nothing but spin for a second
/// while the launch makes no progress is reported as an [`EmuError::Livelock`] naming each
/// spinning thread and this call.
#[track_caller]
pub fn spin(what: &'static str) {
    yield_spin(thread(what), what, Location::caller());
}

/// A memory fence (`fence.acq_rel`, `fence.sc`, `membar`) of `scope` with `order`: for the
/// race checks, a release fence makes the thread's next relaxed atomic stores publish its
/// accesses before the fence, and an acquire fence learns what its earlier relaxed atomic
/// reads saw (`order.rs`). It is also a host `SeqCst` fence.
///
/// # Panics
/// If `order` is `Relaxed` (as `core::sync::atomic::fence`).
#[track_caller]
pub fn fence(what: &str, scope: MemScope, order: Ordering) {
    let t = thread(what);
    assert!(
        order != Ordering::Relaxed,
        "{what}: there is no such thing as a relaxed fence"
    );
    core::sync::atomic::fence(Ordering::SeqCst);
    crate::order::fence(t, scope, order);
}

/// An atomic load (`ld.relaxed`, `ld.acquire`, ...). A poll: when the thread polled at
/// this call before, without spinning since (a loop; the last 4 distinct calls count), it
/// first lets the block's other threads run, as [`spin`] does, then loads. A loop waiting
/// on a flag that another thread of the block sets thus makes progress without a
/// `nanosleep`, and a load made once costs no switch.
///
/// # Safety
/// `ptr` is valid and aligned for an atomic access (the caller checked its bounds).
#[track_caller]
pub unsafe fn atomic_load<T: HostAtomic>(
    what: &'static str,
    ptr: *const T,
    scope: MemScope,
    order: Ordering,
) -> T {
    let t = thread(what);
    let location = Location::caller();
    if polls_again(t, location) {
        yield_spin(t, what, location);
    }
    let size = core::mem::size_of::<T>();
    // SAFETY: the caller's contract.
    let op = || (unsafe { T::load(ptr) }, false);
    crate::order::atomic(t, ptr as usize, size, AtomicAccess::Load, scope, order, op)
}

/// An atomic compare-and-swap (`atom.cas`); returns the value it found. One that changes
/// memory counts as the launch's progress; one that leaves it unchanged (the comparison
/// failed, or `new` is `cmp`) is a poll, as [`atomic_load`] is, yielding after the
/// operation.
///
/// # Safety
/// As [`atomic_load`].
#[track_caller]
pub unsafe fn atomic_cas<T: HostAtomic>(
    what: &'static str,
    ptr: *mut T,
    cmp: T,
    new: T,
    scope: MemScope,
    order: Ordering,
) -> T {
    let t = thread(what);
    let size = core::mem::size_of::<T>();
    let op = || {
        // SAFETY: the caller's contract.
        let seen = unsafe { T::cas(ptr, cmp, new) };
        (seen, seen.bits() == cmp.bits())
    };
    let access = AtomicAccess::ReadModifyWrite;
    let seen = crate::order::atomic(t, ptr as usize, size, access, scope, order, op);
    progress_or_poll(
        t,
        what,
        seen.bits() == cmp.bits() && cmp.bits() != new.bits(),
    );
    seen
}

/// An atomic read-modify-write (`atom.add`, `atom.exch`, ...); returns the old value. As
/// for [`atomic_cas`], one that leaves memory unchanged (`exch` of the value already
/// there, `add` of 0, `or` of bits already set, a `min` above the minimum) is a poll.
///
/// # Safety
/// As [`atomic_load`].
#[track_caller]
pub unsafe fn atomic_rmw<T: HostAtomic>(
    what: &'static str,
    ptr: *mut T,
    op: Op,
    val: T,
    scope: MemScope,
    order: Ordering,
) -> T {
    let t = thread(what);
    let size = core::mem::size_of::<T>();
    // SAFETY: the caller's contract.
    let host = || (unsafe { T::rmw(ptr, op, val) }, true);
    let access = AtomicAccess::ReadModifyWrite;
    let old = crate::order::atomic(t, ptr as usize, size, access, scope, order, host);
    progress_or_poll(t, what, T::apply(op, old, val).bits() != old.bits());
    old
}

/// An atomic store (`st.relaxed`, `st.release`, ...). One that changes memory counts as
/// the launch's progress; storing the value already there does not (and does not yield).
///
/// # Safety
/// As [`atomic_load`].
#[track_caller]
pub unsafe fn atomic_store<T: HostAtomic>(
    what: &'static str,
    ptr: *mut T,
    val: T,
    scope: MemScope,
    order: Ordering,
) {
    let t = thread(what);
    let size = core::mem::size_of::<T>();
    // SAFETY: the caller's contract.
    let op = || (unsafe { T::rmw(ptr, Op::Exch, val) }, true);
    let access = AtomicAccess::Store;
    let old = crate::order::atomic(t, ptr as usize, size, access, scope, order, op);
    if old.bits() != val.bits() {
        wrote(t);
    }
}

/// After an atomic that may write: progress if it `changed` memory, else a poll.
#[track_caller]
fn progress_or_poll(t: &ThreadState, what: &'static str, changed: bool) {
    let location = Location::caller();
    if changed {
        wrote(t);
    } else if polls_again(t, location) {
        yield_spin(t, what, location);
    }
}

/// Counts an atomic of thread `t` that changed memory (its block's scheduler publishes
/// the count as the launch's progress).
#[inline]
fn wrote(t: &ThreadState) {
    let b = t.block();
    b.writes.set(b.writes.get() + 1);
}

/// Whether thread `t`'s poll (an atomic that did not change memory) at `location` repeats
/// one since its last spin: a loop. The first poll at a call (a flag found set, a `min`
/// that was not the minimum) does not yield; the second does, so a spin loop of up to
/// [`POLL_SITES`] polls yields every other pass.
fn polls_again(t: &ThreadState, location: &'static Location<'static>) -> bool {
    let site = core::ptr::from_ref(location) as usize;
    let mut sites = t.polls.get();
    if sites.contains(&site) {
        return true;
    }
    let next = t.polls_next.get();
    sites[next as usize % POLL_SITES] = site;
    t.polls.set(sites);
    t.polls_next.set(next.wrapping_add(1));
    false
}

/// Suspends thread `t` at a spin (behind its block's other ready threads); it starts
/// afresh counting its polls.
fn yield_spin(t: &ThreadState, what: &'static str, location: &'static Location<'static>) {
    t.polls.set([0; POLL_SITES]);
    suspend(t, Suspend::Spin(SpinWait { what, location }));
}

/// `activemask`'s answer: the calling lane alone. The emulator runs a warp's lanes one
/// after another, so it cannot tell which lanes would execute this instruction together on
/// a GPU (on a GPU only the lanes converged here, e.g. those inside the same branch, are
/// set). One lane is always a correct answer (CUDA C Programming Guide, "Warp Vote
/// Functions": `__activemask` does not make lanes converge) and never names a lane that
/// took another branch or has exited; code that uses it as a collective's mask, which the
/// guide warns against, sees the smallest mask here.
#[track_caller]
pub fn active_mask(what: &str) -> u32 {
    let t = thread(what);
    1 << t.lane()
}

/// The lanes of the running thread's warp that have not exited (what an `.aligned` warp
/// instruction needs: all 32).
#[track_caller]
pub fn live_lanes(what: &str) -> u32 {
    let t = thread(what);
    t.block().live.borrow()[t.warp() as usize]
}

/// The block's array for the shared declaration `id` (`bytes`, aligned to `align`),
/// allocated (zero-filled) by its first use in the block; reports name it `name` (e.g.
/// ``shared array `[f32; 256]` declared at src/lib.rs:12:20``) and the element a finding
/// is about by `shape` (``element [7] of type `f32` ``).
#[track_caller]
pub fn shared_static(
    id: u64,
    bytes: usize,
    align: usize,
    name: &'static str,
    shape: &'static SharedShape,
) -> *mut u8 {
    let t = thread("shared_array! / #[address_space(shared)]");
    let b = t.block();
    let mut mem = b.mem.borrow_mut();
    let checks = b.launch().options.checks;
    let shadow = checks.shadow();
    let p = mem.static_alloc(id, bytes, align, name, Some(shape), shadow);
    drop(mem);
    p.unwrap_or_else(|| panic!("cannot allocate {bytes} bytes of shared memory"))
}

/// The block's dynamic shared memory and its size in bytes.
#[track_caller]
pub fn dynamic_shared(what: &str) -> (*mut u8, usize) {
    let t = thread(what);
    let mem = t.block().mem.borrow();
    (mem.dynamic.ptr, mem.dynamic.bytes)
}

/// `shared_addr` on the emulator: the 32-bit shared address of `p` in the block's shared
/// window (the dynamic shared memory first, at `0x400`, then each static array in the order
/// the block first uses it, each at a multiple of 1024 and equal to its host address modulo
/// 1024); 0, never a valid address, when `p` is not in the block's shared memory
/// (unspecified on a GPU).
#[track_caller]
pub fn shared_addr(what: &str, p: *const u8) -> u32 {
    let t = thread(what);
    let mem = t.block().mem.borrow();
    mem.window_of(p as usize).unwrap_or(0)
}

/// Marks `len` bytes of shared memory at host address `addr` as written by an asynchronous
/// unit (a TMA load): initialised for the uninitialised-read check, and written by no thread
/// for the race check (the mbarrier that orders them is not tracked by the race check).
pub(crate) fn mark_async_write(block: &BlockState, addr: usize, len: usize) {
    if let Some(shadow) = block.mem.borrow_mut().shadow_mut(addr, len) {
        shadow.fill(Shadow {
            init: true,
            ..Shadow::EMPTY
        });
    }
}

/// Bytes of the block's shared memory so far (the static arrays used, and the dynamic).
#[track_caller]
pub fn total_shared_bytes(what: &str) -> usize {
    let t = thread(what);
    let mem = t.block().mem.borrow();
    mem.statics.iter().map(|(_, a)| a.bytes).sum::<usize>() + mem.dynamic.bytes
}

/// Nanoseconds since the first call in this process (the emulator's clocks).
pub fn host_nanos() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// Checks an access of `size` bytes at `addr` by the running thread (no-op outside a
/// launch): bounds against the known allocations, and for shared memory the race and
/// initialisation shadows.
///
/// With a nonzero [`EmuOptions::seed`](crate::EmuOptions::seed) the thread may first let
/// its block's other threads run (one access in four, the seed choosing which): threads
/// then interleave at memory accesses between barriers, as on a GPU, so a lost update or a
/// check-then-act race can happen on the CPU too.
#[inline]
pub fn check_access(addr: usize, size: usize, kind: AccessKind, loc: &'static Location<'static>) {
    if let Some(t) = current() {
        interleave(t, addr, kind, loc);
    }
    check_access_with(addr, size, kind, loc, true);
}

/// With a seed, lets the block's other ready threads run before this access, one time in
/// [`INTERLEAVE_ONE_IN`], the block's seeded generator choosing.
///
/// A yield before a read of an address the thread already read at one of its last
/// [`POLL_SITES`] yields, with nothing written by the block since (no checked store, no
/// atomic that changed memory), is a spin, not progress: a busy-wait on plain reads that
/// can never end is then reported as a livelock, as one on atomics is.
///
/// Without a seed a thread runs alone to its next barrier or collective, until it makes
/// [`UNSEEDED_RUN_LIMIT`] checked accesses in one step: its block then interleaves as with
/// a seed, by a generator fixed per block, so a busy-wait on plain reads either sees
/// another thread's store or is reported, never hangs.
#[inline]
fn interleave(t: &ThreadState, addr: usize, kind: AccessKind, loc: &'static Location<'static>) {
    let b = t.block();
    let mut state = b.interleave.get();
    if state == 0 {
        let n = t.run_accesses.get() + 1;
        t.run_accesses.set(n);
        if n < UNSEEDED_RUN_LIMIT {
            return;
        }
        state = crate::interleave::unseeded_interleave(b.idx);
    }
    let reads = matches!(kind, AccessKind::Read | AccessKind::AtomicLoad);
    if !reads {
        b.stores.set(b.stores.get() + 1);
    }
    let mut next = state;
    let r = crate::interleave::splitmix(&mut next);
    b.interleave.set(next);
    if r.is_multiple_of(INTERLEAVE_ONE_IN) {
        let written = b.stores.get().wrapping_add(b.writes.get());
        let mut seen = t.yield_reads.get();
        if written != t.yield_written.get() {
            t.yield_written.set(written);
            seen = [0; POLL_SITES];
        } else if reads && seen.contains(&addr) {
            yield_spin(t, "a memory read (a busy-wait)", loc);
            return;
        }
        if reads {
            let i = t.polls_next.get();
            seen[i as usize % POLL_SITES] = addr;
            t.polls_next.set(i.wrapping_add(1));
        }
        t.yield_reads.set(seen);
        suspend(t, Suspend::Yield);
    }
}

/// With a seed, a thread yields before one memory access in this many.
const INTERLEAVE_ONE_IN: u64 = 4;

/// Without a seed, a thread's block starts interleaving once the thread makes this many
/// checked accesses without suspending (a step that long is most likely a busy-wait).
pub(crate) const UNSEEDED_RUN_LIMIT: u32 = 1 << 20;

/// Whether `size` bytes at `addr` lie inside one of `t`'s block's shared allocations.
pub(crate) fn in_shared(t: &ThreadState, addr: usize, size: usize) -> bool {
    in_block_shared(t.block(), addr, size)
}

/// [`check_access`], with the uninitialised-read check only when `uninit` is true (reads
/// of data usually written by plain stores, which the shadow does not see, pass `false`).
#[inline]
pub fn check_access_with(
    addr: usize,
    size: usize,
    kind: AccessKind,
    loc: &'static Location<'static>,
    uninit: bool,
) {
    let Some(t) = current() else { return };
    let b = t.block();
    let launch = b.launch();
    let checks = launch.options.checks;
    if !(checks.bounds || checks.shadow()) || size == 0 {
        return;
    }
    let mut mem = b.mem.borrow_mut();
    let SharedMem {
        statics, dynamic, ..
    } = &mut *mem;
    let shared = statics
        .iter_mut()
        .map(|(_, a)| a)
        .chain(core::iter::once(dynamic))
        .find(|a| a.contains(addr));
    if let Some(a) = shared {
        let start = a.ptr as usize;
        if addr + size > start + a.bytes {
            if checks.bounds {
                let nearest = Some((a.name.clone(), start, a.bytes));
                drop(mem);
                out_of_bounds(t, addr, size, kind, loc, nearest);
            }
            return;
        }
        if a.shadow.is_empty() {
            return;
        }
        let offset = addr - start;
        if let Some(err) = shadow_access(t, a, offset, size, kind, loc, uninit) {
            drop(mem);
            fail(t, err);
        }
        return;
    }
    let buffers = &launch.buffers;
    let i = buffers.partition_point(|b| b.0 <= addr);
    if i > 0 {
        let (start, len, name) = &buffers[i - 1];
        if addr + size <= start + len {
            drop(mem);
            if let Some(global) = &launch.global
                && let Some(err) = global.access(t, addr, size, kind, loc, (name, *start))
            {
                fail(t, err);
            }
            return;
        }
    }
    if !checks.bounds {
        return;
    }
    // Distributed shared memory: another block of the cluster (bounds only; the race and
    // initialisation shadows are per block).
    if let Some(blocks) = b.cluster().blocks.get()
        && blocks.len() > 1
    {
        for &other in blocks {
            if core::ptr::eq(other, b) {
                continue;
            }
            // SAFETY: the cluster's blocks live as long as the cluster.
            let other = unsafe { &*other };
            let theirs = other.mem.borrow();
            if let Some((_, a, _)) = theirs.locate(addr) {
                if addr + size <= a.ptr as usize + a.bytes {
                    return;
                }
                let nearest = Some((
                    std::format!("{} of the block of cluster rank {}", a.name, other.rank),
                    a.ptr as usize,
                    a.bytes,
                ));
                drop(theirs);
                drop(mem);
                out_of_bounds(t, addr, size, kind, loc, nearest);
            }
        }
    }
    let (stack_start, stack_end) = t.stack.get();
    if addr >= stack_start && addr + size <= stack_end {
        return;
    }
    // The nearest allocation: a shared one of the block, or the buffer before or after.
    let distance = |s: usize, l: usize| {
        if addr < s {
            s - addr
        } else {
            addr.saturating_sub(s + l)
        }
    };
    let nearest = [i.checked_sub(1), Some(i)]
        .into_iter()
        .flatten()
        .filter_map(|j| buffers.get(j))
        .map(|(s, l, n)| (n.clone(), *s, *l))
        .chain(
            mem.statics
                .iter()
                .map(|(_, a)| a)
                .chain(core::iter::once(&mem.dynamic))
                .map(|a| (a.name.clone(), a.ptr as usize, a.bytes)),
        )
        .min_by_key(|(_, s, l)| distance(*s, *l));
    drop(mem);
    out_of_bounds(t, addr, size, kind, loc, nearest);
}

fn out_of_bounds(
    t: &ThreadState,
    address: usize,
    size: usize,
    kind: AccessKind,
    loc: &'static Location<'static>,
    nearest: Option<(String, usize, usize)>,
) -> ! {
    let b = t.block();
    fail(
        t,
        EmuError::OutOfBounds {
            kernel: b.launch().kernel,
            block: b.idx,
            thread: t.tid,
            address,
            size,
            kind,
            location: SourceLocation::from_std(loc),
            nearest: nearest.map(Box::new),
        },
    )
}

/// Updates the shadow of `size` bytes at `offset` of `a`; returns the first finding.
fn shadow_access(
    t: &ThreadState,
    a: &mut SharedAlloc,
    offset: usize,
    size: usize,
    kind: AccessKind,
    loc: &'static Location<'static>,
    uninit: bool,
) -> Option<EmuError> {
    let b = t.block();
    let launch = b.launch();
    let checks = launch.options.checks;
    let epoch = b.epoch.get();
    let warp_syncs = b.warp_syncs.borrow();
    let me = t.linear;
    let syncs = &warp_syncs[t.warp() as usize];
    let my_wepoch = syncs.count(epoch);
    // Whether an earlier access by `other` in this epoch (after `wepoch` of its warp's
    // `sync_warp`s) is ordered before this one by a later `sync_warp` naming both lanes.
    // Or by release/acquire synchronisation from that access (made at launch sequence
    // `seq`, `order.rs`).
    let block = crate::order::block_linear(b);
    let ordered = |other: u32, wepoch: u32, seq: u32| {
        (other / 32 == me / 32 && syncs.orders(epoch, wepoch, other, me))
            || crate::order::happens_before(t, block, other, seq, epoch)
    };
    let my_seq = launch.order.now();
    t.accessed.set(epoch + 1);
    let race = |i: usize, first_thread: u32, first_kind: AccessKind, first_loc: Loc| {
        EmuError::SharedRace {
            kernel: launch.kernel,
            block: b.idx,
            address: a.ptr as usize + offset + i,
            allocation: a.name.clone(),
            offset: offset + i,
            element: a.element_at(offset + i).map(Box::new),
            first: Box::new(Access {
                thread: b.tid_of(first_thread),
                kind: first_kind,
                location: first_loc.map_or(SourceLocation::from_std(loc), SourceLocation::from_std),
            }),
            second: Box::new(Access {
                thread: t.tid,
                kind,
                location: SourceLocation::from_std(loc),
            }),
        }
    };
    let hazard = |i: usize, problem: String, earlier: Option<Access>| EmuError::AsyncHazard {
        kernel: launch.kernel,
        block: b.idx,
        thread: t.tid,
        problem: problem.into_boxed_str(),
        address: a.ptr as usize + offset + i,
        place: Box::new((a.name.clone(), offset + i)),
        location: SourceLocation::from_std(loc),
        earlier: earlier.map(Box::new),
    };
    // The writer's `fence.proxy.async` count, recorded with each byte it writes.
    let mut my_fences = 0;
    if checks.async_proxy && kind == AccessKind::Write {
        if let Some(f) = super::proxy::inflight_overlap(b, me, a.ptr as usize + offset, size) {
            let (problem, earlier) = super::proxy::overwrite_problem("a generic store", &f);
            return Some(hazard(0, problem, Some(earlier)));
        }
        let at = a.ptr as usize + offset;
        if let Some(s) = super::proxy::pending_store_overlap(b, at, size) {
            let (problem, earlier) = super::proxy::store_overwrite_problem("a generic store", &s);
            return Some(hazard(s.range.0.saturating_sub(at), problem, Some(earlier)));
        }
        my_fences = b.asyncs.borrow().thread(me).map_or(0, |a| a.fences);
    }
    for i in 0..size {
        let s = a.shadow[offset + i];
        match kind {
            AccessKind::Read => {
                if checks.races && s.cp_thread != NONE {
                    let issuer = b.tid_of(s.cp_thread);
                    return Some(hazard(
                        i,
                        std::format!(
                            "the thread reads the destination of a `cp.async` that thread \
                             {issuer:?} issued, before that thread's \
                             `async_copy::wait_group` (or `wait_all`) lands it"
                        ),
                        None,
                    ));
                }
                if checks.async_proxy
                    && let Some(problem) =
                        super::proxy::generic_read_problem(b, s.tma_bar, s.tma_phase)
                {
                    return Some(hazard(i, problem, None));
                }
                if uninit && checks.uninit_reads && !s.init {
                    // Reported when the barrier interval ends, unless another thread
                    // writes the byte before then: then the race is reported, with both
                    // sites (the read is recorded below as the race check's reader).
                    let mut pending = b.pending_uninit.borrow_mut();
                    if pending.is_none() {
                        *pending = Some(EmuError::UninitRead {
                            kernel: launch.kernel,
                            block: b.idx,
                            thread: t.tid,
                            address: a.ptr as usize + offset + i,
                            allocation: a.name.clone(),
                            offset: offset + i,
                            element: a.element_at(offset + i).map(Box::new),
                            location: SourceLocation::from_std(loc),
                        });
                    }
                }
                if checks.races
                    && s.w_epoch == epoch
                    && s.w_thread != me
                    && !ordered(s.w_thread, s.w_wepoch, s.w_seq)
                {
                    return Some(race(i, s.w_thread, AccessKind::Write, s.w_loc));
                }
                if checks.races
                    && s.a_epoch == epoch
                    && s.a_thread != me
                    && !ordered(s.a_thread, s.a_wepoch, s.a_seq)
                {
                    return Some(race(i, s.a_thread, AccessKind::Atomic, s.a_loc));
                }
            }
            AccessKind::Write => {
                if checks.races {
                    if s.w_epoch == epoch
                        && s.w_thread != me
                        && !ordered(s.w_thread, s.w_wepoch, s.w_seq)
                    {
                        return Some(race(i, s.w_thread, AccessKind::Write, s.w_loc));
                    }
                    if s.a_epoch == epoch
                        && s.a_thread != me
                        && !ordered(s.a_thread, s.a_wepoch, s.a_seq)
                    {
                        return Some(race(i, s.a_thread, AccessKind::Atomic, s.a_loc));
                    }
                    if s.r_epoch == epoch {
                        for (r, we, rc, rloc) in s.r {
                            if r != NONE && r != me && !ordered(r, we, rc) {
                                return Some(race(i, r, AccessKind::Read, rloc));
                            }
                        }
                    }
                }
            }
            // An atomic conflicts with plain accesses of the interval by other threads:
            // a plain store (whichever came first), and, when the atomic may write, a plain
            // load.
            AccessKind::Atomic | AccessKind::AtomicLoad => {
                if checks.races {
                    if s.w_epoch == epoch
                        && s.w_thread != me
                        && !ordered(s.w_thread, s.w_wepoch, s.w_seq)
                    {
                        return Some(race(i, s.w_thread, AccessKind::Write, s.w_loc));
                    }
                    if kind == AccessKind::Atomic && s.r_epoch == epoch {
                        for (r, we, rc, rloc) in s.r {
                            if r != NONE && r != me && !ordered(r, we, rc) {
                                return Some(race(i, r, AccessKind::Read, rloc));
                            }
                        }
                    }
                }
            }
        }
    }
    for i in 0..size {
        let s = &mut a.shadow[offset + i];
        match kind {
            AccessKind::Read => {
                if s.r_epoch != epoch {
                    s.r_epoch = epoch;
                    s.r = [(me, my_wepoch, my_seq, Some(loc)), (NONE, 0, 0, None)];
                } else if s.r[0].0 != me && s.r[1].0 != me {
                    s.r[1] = (me, my_wepoch, my_seq, Some(loc));
                }
            }
            AccessKind::Write => {
                s.init = true;
                s.w_thread = me;
                s.w_epoch = epoch;
                s.w_wepoch = my_wepoch;
                s.w_seq = my_seq;
                s.w_loc = Some(loc);
                s.w_fence = my_fences;
                s.tma_bar = 0;
            }
            AccessKind::Atomic => {
                s.init = true;
                s.a_thread = me;
                s.a_epoch = epoch;
                s.a_wepoch = my_wepoch;
                s.a_seq = my_seq;
                s.a_loc = Some(loc);
            }
            // (As before it was told apart from other atomics: counted as initialising,
            // so a word only atomics touch is never an uninitialised read.)
            AccessKind::AtomicLoad => s.init = true,
        }
    }
    None
}

/// `vprintf` on the emulator: formats and records the text.
///
/// # Safety
/// As `io::vprintf`.
#[track_caller]
pub unsafe fn printf(what: &str, format: *const u8, args: *const u8) -> i32 {
    let t = thread(what);
    // SAFETY: forwarded to the caller.
    let (text, n) = unsafe { super::printf::format(format, args) };
    let b = t.block();
    b.printed.borrow_mut().push(Printed {
        block: b.idx,
        thread: t.tid,
        text,
    });
    n
}

/// A failed `device_assert!`.
///
/// # Safety
/// `message` and `file` are NUL-terminated strings.
#[track_caller]
pub unsafe fn assert_fail(what: &str, message: *const u8, file: *const u8, line: u32) -> ! {
    let t = thread(what);
    // SAFETY: forwarded to the caller.
    let (condition, file) = unsafe { (super::printf::c_str(message), super::printf::c_str(file)) };
    let b = t.block();
    fail(
        t,
        EmuError::Assert {
            kernel: b.launch().kernel,
            block: b.idx,
            thread: t.tid,
            condition,
            file,
            line,
        },
    )
}

/// Host atomics for the raw operations of `atomic` (every ordering is `SeqCst`).
pub mod atomics {
    use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::SeqCst};

    /// The operations `atom` offers.
    #[derive(Clone, Copy, Debug)]
    pub enum Op {
        Add,
        Min,
        Max,
        And,
        Or,
        Xor,
        Exch,
    }

    impl Op {
        pub fn from_ptx(op: &str) -> Self {
            match op.as_bytes() {
                b"add" => Self::Add,
                b"min" => Self::Min,
                b"max" => Self::Max,
                b"and" => Self::And,
                b"or" => Self::Or,
                b"xor" => Self::Xor,
                _ => Self::Exch,
            }
        }
    }

    /// A type the raw atomics operate on.
    pub trait HostAtomic: Copy {
        /// # Safety
        /// `ptr` is valid and aligned for an atomic access.
        unsafe fn rmw(ptr: *mut Self, op: Op, val: Self) -> Self;
        /// # Safety
        /// As `rmw`.
        unsafe fn cas(ptr: *mut Self, cmp: Self, new: Self) -> Self;
        /// # Safety
        /// As `rmw`.
        unsafe fn load(ptr: *const Self) -> Self;
        /// # Safety
        /// As `rmw`.
        unsafe fn store(ptr: *mut Self, val: Self);
        /// What `rmw` writes when it finds `old`.
        fn apply(op: Op, old: Self, val: Self) -> Self;
        /// The value's bits (zero-extended): what memory holds.
        fn bits(self) -> u64;
    }

    macro_rules! host_int {
        ($t:ty, $a:ty, $u:ty) => {
            impl HostAtomic for $t {
                unsafe fn rmw(ptr: *mut Self, op: Op, val: Self) -> Self {
                    // SAFETY: the caller's contract; same size and alignment.
                    let a = unsafe { <$a>::from_ptr(ptr) };
                    match op {
                        Op::Add => a.fetch_add(val, SeqCst),
                        Op::Min => a.fetch_min(val, SeqCst),
                        Op::Max => a.fetch_max(val, SeqCst),
                        Op::And => a.fetch_and(val, SeqCst),
                        Op::Or => a.fetch_or(val, SeqCst),
                        Op::Xor => a.fetch_xor(val, SeqCst),
                        Op::Exch => a.swap(val, SeqCst),
                    }
                }
                unsafe fn cas(ptr: *mut Self, cmp: Self, new: Self) -> Self {
                    // SAFETY: as above.
                    let a = unsafe { <$a>::from_ptr(ptr) };
                    match a.compare_exchange(cmp, new, SeqCst, SeqCst) {
                        Ok(v) | Err(v) => v,
                    }
                }
                unsafe fn load(ptr: *const Self) -> Self {
                    // SAFETY: as above; only loaded.
                    unsafe { <$a>::from_ptr(ptr.cast_mut()) }.load(SeqCst)
                }
                unsafe fn store(ptr: *mut Self, val: Self) {
                    // SAFETY: as above.
                    unsafe { <$a>::from_ptr(ptr) }.store(val, SeqCst)
                }
                fn apply(op: Op, old: Self, val: Self) -> Self {
                    match op {
                        Op::Add => old.wrapping_add(val),
                        Op::Min => old.min(val),
                        Op::Max => old.max(val),
                        Op::And => old & val,
                        Op::Or => old | val,
                        Op::Xor => old ^ val,
                        Op::Exch => val,
                    }
                }
                fn bits(self) -> u64 {
                    self as $u as u64
                }
            }
        };
    }
    host_int!(u32, AtomicU32, u32);
    host_int!(i32, AtomicI32, u32);
    host_int!(u64, AtomicU64, u64);
    host_int!(i64, AtomicI64, u64);

    macro_rules! host_float {
        ($t:ty, $bits:ty) => {
            impl HostAtomic for $t {
                unsafe fn rmw(ptr: *mut Self, op: Op, val: Self) -> Self {
                    let p = ptr.cast::<$bits>();
                    // SAFETY: the caller's contract; same size and alignment as the bits.
                    let mut old = unsafe { <$bits>::load(p) };
                    loop {
                        let new = Self::apply(op, <$t>::from_bits(old), val);
                        // SAFETY: as above.
                        let seen = unsafe { <$bits>::cas(p, old, new.to_bits()) };
                        if seen == old {
                            return <$t>::from_bits(old);
                        }
                        old = seen;
                    }
                }
                unsafe fn cas(ptr: *mut Self, cmp: Self, new: Self) -> Self {
                    // SAFETY: as above.
                    <$t>::from_bits(unsafe {
                        <$bits>::cas(ptr.cast(), cmp.to_bits(), new.to_bits())
                    })
                }
                unsafe fn load(ptr: *const Self) -> Self {
                    // SAFETY: as above.
                    <$t>::from_bits(unsafe { <$bits>::load(ptr.cast()) })
                }
                unsafe fn store(ptr: *mut Self, val: Self) {
                    // SAFETY: as above.
                    unsafe { <$bits>::store(ptr.cast(), val.to_bits()) }
                }
                fn apply(op: Op, old: Self, val: Self) -> Self {
                    match op {
                        Op::Add => old + val,
                        Op::Min => old.min(val),
                        Op::Max => old.max(val),
                        _ => val,
                    }
                }
                fn bits(self) -> u64 {
                    u64::from(self.to_bits())
                }
            }
        };
    }
    host_float!(f32, u32);
    host_float!(f64, u64);
}
