//! Happens-before from release/acquire synchronisation: what lets the race checks accept a
//! flag handover (data stores, a release, the flag; on the other side an acquire that reads
//! the flag, then the data) and still report one whose fence is missing.
//!
//! The technique is the vector clock of ThreadSanitizer and of the C++ memory model's
//! formalisations, with two kinds of component:
//! - a *thread* component (block, thread) → (interval, count): every thread counts its
//!   releases ([`ThreadState::clock`]); each checked access records the count and its
//!   block's barrier interval, and an access at `(e, c)` happens before a thread whose
//!   clock holds `≥ (e, c)` for its thread. A release carries its thread's component only
//!   when the thread made a checked access in the current interval (earlier ones are
//!   covered by the block component), and a join drops thread components of intervals
//!   that their block's component covers, so clocks stay small for kernels whose threads
//!   all pass through one atomic (a counter incremented with `AcqRel`);
//! - a *block* component (block) → barrier interval: a release made in interval `e` of its
//!   block also publishes every access of that block in an earlier interval (a block
//!   barrier ordered them before the release).
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

use core::sync::atomic::{AtomicBool, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;
use std::vec::Vec;

use crate::state::{BlockState, ThreadState};

/// The scope of an atomic or fence (PTX `.cta`, `.gpu`, `.sys`; a cluster scope counts as
/// `Device`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemScope {
    /// `.cta`: the threads of one block.
    Block,
    /// `.gpu`: the launch.
    Device,
    /// `.sys`: the launch and the host.
    System,
}

/// A vector clock: components sorted by key (few: the threads and blocks a thread has
/// synchronised with). A thread component's value is `interval << 32 | count` (the
/// thread's block interval and release count at the release), a block component's the
/// interval.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VClock(Vec<(u64, u64)>);

/// The block component's thread field (no thread has this linear index: at most 1024).
const BLOCK_COMPONENT: u64 = u32::MAX as u64;

/// The key of thread `linear` of block `block` (linear indices).
pub(crate) fn thread_key(block: u32, linear: u32) -> u64 {
    u64::from(block) << 32 | u64::from(linear)
}

/// The key of block `block`'s barrier-interval component.
pub(crate) fn block_key(block: u32) -> u64 {
    u64::from(block) << 32 | BLOCK_COMPONENT
}

impl VClock {
    pub(crate) fn get(&self, key: u64) -> Option<u64> {
        self.0
            .binary_search_by_key(&key, |c| c.0)
            .ok()
            .map(|i| self.0[i].1)
    }

    /// Raises component `key` to at least `value`.
    pub(crate) fn raise(&mut self, key: u64, value: u64) {
        match self.0.binary_search_by_key(&key, |c| c.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(value),
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    /// Joins `other` in (a merge of the two sorted lists), then drops the thread
    /// components that a block component makes redundant (an earlier interval of their
    /// block: the barrier between already orders everything they publish).
    pub(crate) fn join(&mut self, other: &VClock) {
        if other.0.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() || j < other.0.len() {
            let next = match (self.0.get(i), other.0.get(j)) {
                (Some(&a), Some(&b)) if a.0 == b.0 => {
                    i += 1;
                    j += 1;
                    (a.0, a.1.max(b.1))
                }
                (Some(&a), Some(&b)) if a.0 < b.0 => {
                    i += 1;
                    a
                }
                (Some(&a), None) => {
                    i += 1;
                    a
                }
                (_, Some(&b)) => {
                    j += 1;
                    b
                }
                (None, None) => unreachable!("the loop's condition"),
            };
            out.push(next);
        }
        // A block's component sorts after its threads': walk backwards.
        let mut block = (u64::MAX, 0u64);
        let mut kept: Vec<(u64, u64)> = Vec::with_capacity(out.len());
        for &(k, v) in out.iter().rev() {
            if k & BLOCK_COMPONENT == BLOCK_COMPONENT {
                block = (k >> 32, v);
                kept.push((k, v));
            } else if !(k >> 32 == block.0 && v >> 32 < block.1) {
                kept.push((k, v));
            }
        }
        kept.reverse();
        self.0 = kept;
    }
}

/// What an acquire of one location can learn: the releases of its release sequence, those
/// of device or system scope joined, those of block scope by the block that made them.
#[derive(Clone, Debug, Default)]
struct SyncVar {
    device: VClock,
    block_scoped: Vec<(u32, VClock)>,
}

impl SyncVar {
    /// A release by a thread of block `block` (of block scope or not).
    fn of(block: u32, block_scope: bool, clock: VClock) -> Self {
        let mut v = Self::default();
        v.add(block, block_scope, &clock);
        v
    }

    /// Adds a read-modify-write's release (the sequence goes on).
    fn add(&mut self, block: u32, block_scope: bool, clock: &VClock) {
        if !block_scope {
            self.device.join(clock);
        } else if let Some(e) = self.block_scoped.iter_mut().find(|e| e.0 == block) {
            e.1.join(clock);
        } else {
            self.block_scoped.push((block, clock.clone()));
        }
    }

    /// What an acquire of scope `scope` by a thread of block `block` learns: the
    /// device-scope releases and its own block's block-scope ones. (A block-scope acquire
    /// of another block's device-scope release learns it too: not told apart.)
    fn learn(&self, block: u32, into: &mut VClock) {
        into.join(&self.device);
        if let Some(e) = self.block_scoped.iter().find(|e| e.0 == block) {
            into.join(&e.1);
        }
    }
}

/// The launch's release state of global-memory locations (and of shared memory reached
/// from another block), by address.
#[derive(Default)]
pub(crate) struct LaunchOrder {
    /// Set by the launch's first release: before it, no atomic looks at the clocks.
    active: AtomicBool,
    shards: [Mutex<HashMap<usize, SyncVar>>; SHARDS],
}

const SHARDS: usize = 16;

/// One thread's synchronisation state (present once it released or acquired).
#[derive(Default)]
pub(crate) struct ThreadOrder {
    /// What the thread has acquired.
    acquired: VClock,
    /// What its relaxed reads of releases have seen, for a later acquire fence.
    seen: VClock,
    /// The clock its last release fence published, and the fence's scope.
    fence: Option<(VClock, MemScope)>,
}

/// A block's synchronisation state: its threads' (by linear index), and what its barriers
/// have joined (every thread of the block has passed them).
#[derive(Default)]
pub(crate) struct BlockOrder {
    threads: HashMap<u32, ThreadOrder>,
    barrier: VClock,
    /// Release state of the block's own shared memory, by address.
    shared: HashMap<usize, SyncVar>,
}

impl BlockOrder {
    /// A block barrier completes: what each thread acquired becomes every thread's.
    pub(crate) fn end_interval(&mut self) {
        for t in self.threads.values() {
            self.barrier.join(&t.acquired);
        }
    }
}

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

/// The clock thread `t` publishes by a release now: what it acquired, its block's
/// barriers and interval, and, when it made a checked access in this interval, its own
/// count (then moved on, so its later accesses are not published).
fn release_clock(t: &ThreadState, order: &BlockOrder) -> VClock {
    let b = t.block();
    let me = block_linear(b);
    let epoch = b.epoch.get();
    let mut clock = order.barrier.clone();
    if let Some(o) = order.threads.get(&t.linear) {
        clock.join(&o.acquired);
    }
    let mut own = VClock::default();
    if t.accessed.get() == epoch + 1 {
        own.raise(thread_key(me, t.linear), stamp(epoch, t.clock.get()));
        t.clock.set(t.clock.get() + 1);
    }
    // (Interval 0 has no earlier interval to publish.)
    if epoch > 0 {
        own.raise(block_key(me), u64::from(epoch));
    }
    clock.join(&own);
    clock
}

/// A thread component's value for release count `clock` in interval `epoch`.
fn stamp(epoch: u32, clock: u32) -> u64 {
    u64::from(epoch) << 32 | u64::from(clock)
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
    let own_shared = crate::ctx::in_block_shared(b, addr, size);
    let mut bo = b.order.borrow_mut();
    // What a write of this atomic publishes: its release, or its thread's last release
    // fence (for a relaxed write); `None` for neither.
    let published = if rel {
        Some((release_clock(t, &bo), scope == MemScope::Block))
    } else if access != AtomicAccess::Load {
        bo.threads
            .get(&t.linear)
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
        let o = threads.entry(t.linear).or_default();
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
        bo.threads.entry(t.linear).or_default().fence = Some((clock, scope));
    }
    if acquires(order)
        && let Some(o) = bo.threads.get_mut(&t.linear)
    {
        let seen = core::mem::take(&mut o.seen);
        o.acquired.join(&seen);
        o.seen = seen;
    }
}

/// Whether an access of thread `linear` of block `block` (linear indices), made at its
/// release count `clock` in its block's barrier interval `epoch`, happens before the
/// running access of thread `t` through release/acquire synchronisation.
pub(crate) fn happens_before(
    t: &ThreadState,
    block: u32,
    linear: u32,
    clock: u32,
    epoch: u32,
) -> bool {
    let bo = t.block().order.borrow();
    if bo.threads.is_empty() {
        return false;
    }
    let mine = bo.threads.get(&t.linear).map(|o| &o.acquired);
    let look = |key: u64| {
        let a = mine.and_then(|c| c.get(key));
        let b = bo.barrier.get(key);
        a.max(b)
    };
    look(thread_key(block, linear)).is_some_and(|c| c >= stamp(epoch, clock))
        || look(block_key(block)).is_some_and(|e| e > u64::from(epoch))
}
