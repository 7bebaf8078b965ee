//! Happens-before from release/acquire synchronisation: what lets the race checks accept a
//! flag handover (data stores, a release, the flag; on the other side an acquire that reads
//! the flag, then the data) and still report one whose fence is missing.
//!
//! The technique is the vector clock of ThreadSanitizer and of the C++ memory model's
//! formalisations, bounded. The launch numbers its releases (the *launch sequence*,
//! [`LaunchOrder::now`]); each checked access records the sequence then, its thread and its
//! block's barrier interval. A clock has two kinds of component:
//! - a *thread* component (block, thread) → (interval, sequence of a release of that
//!   thread): the thread's accesses recorded at or below that sequence, in that interval or
//!   earlier, happen before. A release carries its thread's component only when the thread
//!   made a checked access in the current interval (earlier ones are covered by the block
//!   component), and a join drops thread components of intervals that their block's
//!   component covers;
//! - a *block* component (block) → barrier interval: a release made in interval `e` of its
//!   block also publishes every access of that block in an earlier interval (a block
//!   barrier ordered them before the release).
//!
//! The bound: a clock keeps at most [`MAX_COMPONENTS`] components. Past it, the older half
//! (by the sequence of the release that carried each) folds into the clock's *floor*: an
//! access recorded below the floor counts as ordered. Everything a folded component
//! published ran before its release, so the floor keeps every true ordering (no false
//! race) and adds the emulator's own order for the rest: past the cap the check falls back
//! to sequentially consistent ordering for accesses older than the folded releases, and a
//! race among those is missed. The planted handovers stay far below the cap; kernels whose
//! threads all pass through one `AcqRel` counter, or a decoupled look-back over thousands
//! of blocks, fold. Likewise a location keeps the block-scope releases of at most
//! `MAX_BLOCK_SCOPED` blocks apart; past that, another block's block-scope release there
//! counts as of device scope. A block barrier moves what each thread acquired into the
//! block's clock, so each atomic costs O([`MAX_COMPONENTS`]) at most.
//!
//! What synchronises (PTX ISA §8, "Memory Consistency Model", release and acquire
//! patterns): a release (an atomic store or read-modify-write with `Release`, `AcqRel` or
//! `SeqCst`; or a relaxed one after a release fence, which publishes the clock of that
//! fence) read by an acquire (a load or read-modify-write with `Acquire`, `AcqRel` or
//! `SeqCst`; or a relaxed one followed by an acquire fence). `thread::fence_*` are
//! `SeqCst` fences, both a release and an acquire. A release or acquire of block scope
//! (`.cta`) synchronises only with threads of its own block. A relaxed store replaces a
//! location's release (it is not part of the release sequence); a read-modify-write keeps
//! it and adds its own. A block barrier joins what the block's threads acquired into every
//! thread of the block (`end_interval`). Not modelled: a `sync_warp` in such a chain (a
//! store, then `sync_warp`, then another lane's release does not publish the store), and
//! release/acquire through distributed shared memory of another block of a cluster.
//!
//! Cost: until a launch makes its first release, every atomic only reads one flag
//! ([`LaunchOrder::active`]); the race checks consult the clocks only for a pair of
//! accesses that barriers and `sync_warp` leave unordered (a race otherwise).
//!
//! The clocks and the release state are data in `clock.rs` (the launch and block state
//! hold them); this module holds the operations on them.
//!
//! [`LaunchOrder::now`]: crate::clock::LaunchOrder::now
//! [`LaunchOrder::active`]: crate::clock::LaunchOrder::active
//! [`MAX_COMPONENTS`]: crate::clock::MAX_COMPONENTS

use core::sync::atomic::Ordering;

use crate::clock::{
    BlockOrder, MemScope, SHARDS, SyncVar, VClock, block_key, stamp, thread_key, thread_mut,
};
use crate::state::{BlockState, ThreadState, in_block_shared};

/// Whether `order` has release semantics.
fn releases(order: Ordering) -> bool {
    matches!(
        order,
        Ordering::Release | Ordering::AcqRel | Ordering::SeqCst
    )
}

/// Whether `order` has acquire semantics.
fn acquires(order: Ordering) -> bool {
    matches!(
        order,
        Ordering::Acquire | Ordering::AcqRel | Ordering::SeqCst
    )
}

/// The linear index of `b` in its grid.
pub(crate) fn block_linear(b: &BlockState) -> u32 {
    linear_of(b.idx, b.launch().grid)
}

/// The linear index of block `idx` in a grid of `grid` blocks.
pub(crate) fn linear_of(idx: crate::Dim3, grid: crate::Dim3) -> u32 {
    idx[0] + grid[0] * (idx[1] + grid[1] * idx[2])
}

/// The block index whose linear index in a grid of `grid` blocks is `linear`
/// ([`linear_of`]'s inverse).
pub(crate) fn idx_of(linear: u32, grid: crate::Dim3) -> crate::Dim3 {
    [
        linear % grid[0],
        (linear / grid[0]) % grid[1],
        linear / (grid[0] * grid[1]),
    ]
}

/// The clock thread `t` publishes by a release now: what it acquired, its block's
/// barriers and interval, and, when it made a checked access in this interval, its own
/// component at the release's launch sequence (its later accesses record a higher one, so
/// they are not published).
fn release_clock(t: &ThreadState, order: &BlockOrder) -> VClock {
    let b = t.block();
    let me = block_linear(b);
    let epoch = b.epoch.get();
    let seq = b.launch().order.next();
    // (The larger clock copied, the smaller joined in: often a join that adds nothing.)
    let mut clock = match order.thread(t.linear) {
        Some(o) if o.acquired.components() > order.barrier.components() => {
            let mut clock = o.acquired.clone();
            clock.join(&order.barrier);
            clock
        }
        Some(o) => {
            let mut clock = order.barrier.clone();
            clock.join(&o.acquired);
            clock
        }
        None => order.barrier.clone(),
    };
    if t.accessed.get() == epoch + 1 {
        clock.raise(thread_key(me, t.linear), stamp(epoch, seq), seq);
    }
    // (Interval 0 has no earlier interval to publish.)
    if epoch > 0 {
        clock.raise(block_key(me), u64::from(epoch), seq);
    }
    clock.fold();
    clock
}

/// What kind of atomic an operation is (a compare-and-swap is a read-modify-write that
/// may not write).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomicAccess {
    Load,
    Store,
    ReadModifyWrite,
}

/// Runs the host operation `op` of an atomic of thread `t` at `addr` (`size` bytes) with
/// `scope` and `order`, and updates the release state: returns `op`'s result. `op` returns
/// its value and whether it wrote memory (a store or read-modify-write always does, a
/// compare-and-swap when it succeeded). With the race check off, only `op` runs.
pub(crate) fn atomic<R>(
    t: &ThreadState,
    addr: usize,
    size: usize,
    access: AtomicAccess,
    scope: MemScope,
    order: Ordering,
    op: impl FnOnce() -> (R, bool),
) -> R {
    let b = t.block();
    let launch = b.launch();
    let lo = &launch.order;
    if !launch.options.checks.races {
        return op().0;
    }
    let rel = access != AtomicAccess::Load && releases(order);
    if rel {
        lo.active.store(true, Ordering::SeqCst);
    } else if !lo.active.load(Ordering::Relaxed) {
        return op().0;
    }
    let me = block_linear(b);
    let own_shared = in_block_shared(b, addr, size);
    let mut bo = b.order.borrow_mut();
    // What a write of this atomic publishes: its release, or its thread's last release
    // fence (for a relaxed write); `None` for neither.
    let published = if rel {
        Some((release_clock(t, &bo), scope == MemScope::Block))
    } else if access != AtomicAccess::Load {
        bo.thread(t.linear)
            .and_then(|o| o.fence.clone())
            .map(|(clock, fscope)| {
                let block_scope = fscope == MemScope::Block || scope == MemScope::Block;
                (clock, block_scope)
            })
    } else {
        None
    };
    let BlockOrder {
        threads, shared, ..
    } = &mut *bo;
    let mut shard = (!own_shared).then(|| {
        lo.shards[(addr >> 3) % SHARDS]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    });
    let map = match shard.as_deref_mut() {
        Some(m) => m,
        None => shared,
    };
    // The host operation and the release state change together (no other thread sees the
    // value without its release, or the release without its value).
    let (result, wrote) = op();
    // What the operation read (before its own write).
    if access != AtomicAccess::Store
        && let Some(read) = map.get(&addr)
    {
        let o = thread_mut(threads, t.linear);
        if acquires(order) {
            read.learn(me, &mut o.acquired);
        } else {
            read.learn(me, &mut o.seen);
        }
    }
    if wrote {
        match (access, published) {
            (AtomicAccess::Store, Some((clock, block_scope))) => {
                map.insert(addr, SyncVar::of(me, block_scope, clock));
            }
            (AtomicAccess::Store, None) => {
                map.remove(&addr);
            }
            (_, Some((clock, block_scope))) => {
                map.entry(addr).or_default().add(me, block_scope, &clock);
            }
            (_, None) => {}
        }
    }
    drop(shard);
    result
}

/// A fence of thread `t` (`fence.acq_rel` / `fence.sc`, or `membar`) with `scope` and
/// `order`: a release fence records the clock a later relaxed store publishes; an acquire
/// fence learns what the thread's earlier relaxed reads saw.
pub(crate) fn fence(t: &ThreadState, scope: MemScope, order: Ordering) {
    let b = t.block();
    let launch = b.launch();
    if !launch.options.checks.races {
        return;
    }
    if releases(order) {
        launch.order.active.store(true, Ordering::SeqCst);
    } else if !launch.order.active.load(Ordering::Relaxed) {
        return;
    }
    let mut bo = b.order.borrow_mut();
    if releases(order) {
        let clock = release_clock(t, &bo);
        thread_mut(&mut bo.threads, t.linear).fence = Some((clock, scope));
    }
    if acquires(order)
        && let Some(o) = bo.threads.get_mut(t.linear as usize)
    {
        let seen = core::mem::take(&mut o.seen);
        o.acquired.join(&seen);
        o.seen = seen;
    }
}

/// Whether an access of thread `linear` of block `block` (linear indices), made at launch
/// sequence `seq` ([`LaunchOrder::now`]) in its block's barrier interval `epoch`, happens
/// before the running access of thread `t` through release/acquire synchronisation (or
/// ran before a folded clock's floor).
///
/// [`LaunchOrder::now`]: crate::clock::LaunchOrder::now
pub(crate) fn happens_before(
    t: &ThreadState,
    block: u32,
    linear: u32,
    seq: u32,
    epoch: u32,
) -> bool {
    let bo = t.block().order.borrow();
    if bo.threads.is_empty() {
        return false;
    }
    let mine = bo.thread(t.linear).map(|o| &o.acquired);
    let look = |key: u64| {
        let a = mine.and_then(|c| c.get(key));
        let b = bo.barrier.get(key);
        a.max(b)
    };
    look(thread_key(block, linear)).is_some_and(|c| c >= stamp(epoch, seq))
        || look(block_key(block)).is_some_and(|e| e > u64::from(epoch))
        || bo.barrier.below_floor(seq)
        || mine.is_some_and(|c| c.below_floor(seq))
}
