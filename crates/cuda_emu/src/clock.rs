//! The data of release/acquire ordering: the bounded vector clock ([`VClock`]) and the
//! release state kept in clocks, of a location ([`SyncVar`]), of the launch ([`LaunchOrder`],
//! global memory by address), of a block ([`BlockOrder`], its threads and its own shared
//! memory) and of a thread ([`ThreadOrder`]); the scope of an atomic or fence
//! ([`MemScope`]). The launch and block state (`state.rs`) hold it. The technique, its bound
//! and what synchronises, and the operations that update this state (atomics, fences, the
//! happens-before query), are in `order.rs`. Imports nothing of the emulator but the global
//! shadow's address hasher (`global_shadow.rs`).

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::collections::HashMap;
use std::sync::Mutex;
use std::vec::Vec;

use crate::global_shadow::AddrHasher;

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

/// A vector clock: at most [`MAX_COMPONENTS`] components sorted by key, and a floor.
/// A thread component's value is `interval << 32 | seq` (the thread's block interval and
/// the launch sequence of the release, [`LaunchOrder::next`]), a block component's the
/// interval. Each component keeps the sequence of the release that carried it; past the
/// cap, the oldest components fold into the floor: every access the launch ran before
/// that sequence counts as ordered (see `order.rs`'s module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VClock {
    /// An access recorded at launch sequence `s` with `s < floor` happens before.
    floor: u64,
    comps: Vec<Comp>,
}

/// One component of a [`VClock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Comp {
    key: u64,
    value: u64,
    /// The launch sequence of the release that carried it (the latest, after joins).
    seq: u32,
}

/// The most components a clock keeps. Past it, the older half folds into the floor.
/// Small enough that a join costs little in a debug build, large enough that the planted
/// handovers (a few threads and blocks) never fold.
pub(crate) const MAX_COMPONENTS: usize = 16;

/// The most blocks whose block-scope releases one location keeps apart (past it, a
/// block-scope release counts as of device scope: more ordering, never a false race).
const MAX_BLOCK_SCOPED: usize = 8;

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
        self.comps
            .binary_search_by_key(&key, |c| c.key)
            .ok()
            .map(|i| self.comps[i].value)
    }

    /// How many components the clock holds (at most [`MAX_COMPONENTS`] after a join).
    pub(crate) fn components(&self) -> usize {
        self.comps.len()
    }

    /// Whether an access recorded at launch sequence `seq` lies below the floor.
    pub(crate) fn below_floor(&self, seq: u32) -> bool {
        u64::from(seq) < self.floor
    }

    /// Raises component `key` to at least `value`, carried by the release `seq`.
    pub(crate) fn raise(&mut self, key: u64, value: u64, seq: u32) {
        match self.comps.binary_search_by_key(&key, |c| c.key) {
            Ok(i) => {
                let c = &mut self.comps[i];
                c.value = c.value.max(value);
                c.seq = c.seq.max(seq);
            }
            Err(i) => self.comps.insert(i, Comp { key, value, seq }),
        }
    }

    /// Whether joining `other` would change nothing: its floor is no higher and each of
    /// its components is below this floor or no greater than this clock's.
    fn covers(&self, other: &VClock) -> bool {
        if other.floor > self.floor {
            return false;
        }
        let mut i = 0;
        for c in &other.comps {
            if self.below_floor(c.seq) {
                continue;
            }
            while i < self.comps.len() && self.comps[i].key < c.key {
                i += 1;
            }
            match self.comps.get(i) {
                Some(m) if m.key == c.key && m.value >= c.value && m.seq >= c.seq => {}
                _ => return false,
            }
        }
        true
    }

    /// Joins `other` in (a merge of the two sorted lists), then drops the components that
    /// the floor or a block component makes redundant (a thread component of an earlier
    /// interval of its block: the barrier between already orders everything it
    /// publishes), then folds the oldest half into the floor if more than
    /// [`MAX_COMPONENTS`] remain. A join that adds nothing copies nothing.
    pub(crate) fn join(&mut self, other: &VClock) {
        if self.covers(other) {
            return;
        }
        if self.comps.is_empty() && self.floor <= other.floor {
            self.clone_from(other);
            return;
        }
        let floor = self.floor.max(other.floor);
        let mut out = Vec::with_capacity(self.comps.len() + other.comps.len());
        let (mut i, mut j) = (0, 0);
        while i < self.comps.len() || j < other.comps.len() {
            let next = match (self.comps.get(i), other.comps.get(j)) {
                (Some(&a), Some(&b)) if a.key == b.key => {
                    i += 1;
                    j += 1;
                    Comp {
                        key: a.key,
                        value: a.value.max(b.value),
                        seq: a.seq.max(b.seq),
                    }
                }
                (Some(&a), Some(&b)) if a.key < b.key => {
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
            if u64::from(next.seq) >= floor {
                out.push(next);
            }
        }
        // A block's component sorts after its threads': walk backwards.
        let mut block = (u64::MAX, 0u64);
        let mut kept: Vec<Comp> = Vec::with_capacity(out.len());
        for &c in out.iter().rev() {
            if c.key & BLOCK_COMPONENT == BLOCK_COMPONENT {
                block = (c.key >> 32, c.value);
                kept.push(c);
            } else if !(c.key >> 32 == block.0 && c.value >> 32 < block.1) {
                kept.push(c);
            }
        }
        kept.reverse();
        self.floor = floor;
        self.comps = kept;
        self.fold();
    }

    /// Past [`MAX_COMPONENTS`], raises the floor past the older half of the components
    /// (by the sequence of their releases) and drops those: everything they published ran
    /// before their releases, so the floor still counts it as ordered.
    pub(crate) fn fold(&mut self) {
        if self.comps.len() <= MAX_COMPONENTS {
            return;
        }
        let mut seqs: Vec<u32> = self.comps.iter().map(|c| c.seq).collect();
        let keep = MAX_COMPONENTS / 2;
        let cut = seqs.len() - keep - 1;
        let (_, &mut s, _) = seqs.select_nth_unstable(cut);
        self.floor = self.floor.max(u64::from(s) + 1);
        let floor = self.floor;
        self.comps.retain(|c| u64::from(c.seq) >= floor);
    }
}

/// What an acquire of one location can learn: the releases of its release sequence, those
/// of device or system scope joined, those of block scope by the block that made them.
#[derive(Clone, Debug, Default)]
pub(crate) struct SyncVar {
    device: VClock,
    block_scoped: Vec<(u32, VClock)>,
}

impl SyncVar {
    /// A release by a thread of block `block` (of block scope or not).
    pub(crate) fn of(block: u32, block_scope: bool, clock: VClock) -> Self {
        let mut v = Self::default();
        v.add(block, block_scope, &clock);
        v
    }

    /// Adds a read-modify-write's release (the sequence goes on).
    pub(crate) fn add(&mut self, block: u32, block_scope: bool, clock: &VClock) {
        if !block_scope {
            self.device.join(clock);
        } else if let Some(e) = self.block_scoped.iter_mut().find(|e| e.0 == block) {
            e.1.join(clock);
        } else if self.block_scoped.len() < MAX_BLOCK_SCOPED {
            self.block_scoped.push((block, clock.clone()));
        } else {
            // Past the cap, as of device scope (every block learns it).
            self.device.join(clock);
        }
    }

    /// What an acquire of scope `scope` by a thread of block `block` learns: the
    /// device-scope releases and its own block's block-scope ones. (A block-scope acquire
    /// of another block's device-scope release learns it too: not told apart.)
    pub(crate) fn learn(&self, block: u32, into: &mut VClock) {
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
    pub(crate) active: AtomicBool,
    /// The launch sequence: how many releases the launch has made ([`LaunchOrder::now`]).
    seq: AtomicU64,
    pub(crate) shards: [Mutex<AddrMap<SyncVar>>; SHARDS],
}

impl LaunchOrder {
    /// The launch sequence now, which each checked access records: an access recorded at
    /// `s` ran before the release that [`LaunchOrder::next`] numbered `s` (or later), and
    /// after those numbered below `s`. (Saturates at `u32::MAX`: past it every access
    /// counts as ordered before every release, more ordering, never a false race.)
    pub(crate) fn now(&self) -> u32 {
        self.seq.load(Ordering::Relaxed).min(u64::from(u32::MAX)) as u32
    }

    /// Numbers a release (saturating as [`LaunchOrder::now`]).
    pub(crate) fn next(&self) -> u32 {
        self.seq
            .fetch_add(1, Ordering::Relaxed)
            .min(u64::from(u32::MAX)) as u32
    }
}

/// Shards of [`LaunchOrder`]'s map, picked by address.
pub(crate) const SHARDS: usize = 16;

/// A map by address (hashed as the global shadow's).
type AddrMap<V> = HashMap<usize, V, core::hash::BuildHasherDefault<AddrHasher>>;

/// One thread's synchronisation state (present once it released or acquired).
#[derive(Default)]
pub(crate) struct ThreadOrder {
    /// What the thread has acquired.
    pub(crate) acquired: VClock,
    /// What its relaxed reads of releases have seen, for a later acquire fence.
    pub(crate) seen: VClock,
    /// The clock its last release fence published, and the fence's scope.
    pub(crate) fence: Option<(VClock, MemScope)>,
}

/// A block's synchronisation state: its threads' (by linear index), and what its barriers
/// have joined (every thread of the block has passed them).
#[derive(Default)]
pub(crate) struct BlockOrder {
    /// By linear index, up to the highest that released or acquired (empty: none has).
    pub(crate) threads: Vec<ThreadOrder>,
    pub(crate) barrier: VClock,
    /// Release state of the block's own shared memory, by address.
    pub(crate) shared: AddrMap<SyncVar>,
}

impl BlockOrder {
    /// A block barrier completes: what each thread acquired becomes every thread's.
    /// (Each thread's own clock empties: the barrier clock now holds it.)
    pub(crate) fn end_interval(&mut self) {
        for t in &mut self.threads {
            let acquired = core::mem::take(&mut t.acquired);
            self.barrier.join(&acquired);
        }
    }

    /// Thread `linear`'s state, if it has any.
    pub(crate) fn thread(&self, linear: u32) -> Option<&ThreadOrder> {
        self.threads.get(linear as usize)
    }
}

/// Thread `linear`'s state in `threads` (made on first use).
pub(crate) fn thread_mut(threads: &mut Vec<ThreadOrder>, linear: u32) -> &mut ThreadOrder {
    let i = linear as usize;
    if threads.len() <= i {
        threads.resize_with(i + 1, ThreadOrder::default);
    }
    &mut threads[i]
}

/// A thread component's value for launch sequence `seq` in interval `epoch`.
pub(crate) fn stamp(epoch: u32, seq: u32) -> u64 {
    u64::from(epoch) << 32 | u64::from(seq)
}

#[cfg(test)]
mod tests {
    use super::{MAX_COMPONENTS, VClock, block_key, stamp, thread_key};

    /// A clock of one thread component: thread `linear` of block 0 released at sequence
    /// `seq` in interval 0.
    fn released(linear: u32, seq: u32) -> VClock {
        let mut c = VClock::default();
        c.raise(thread_key(0, linear), stamp(0, seq), seq);
        c
    }

    #[test]
    fn a_join_that_adds_nothing_leaves_the_clock_as_it_was() {
        let mut c = released(1, 5);
        c.join(&released(2, 7));
        let before = c.clone();
        c.join(&released(1, 3));
        c.join(&released(2, 7));
        assert_eq!(c, before);
        assert_eq!(c.get(thread_key(0, 1)), Some(stamp(0, 5)));
    }

    #[test]
    fn a_clock_past_the_cap_folds_its_oldest_releases_into_the_floor() {
        let n = 3 * MAX_COMPONENTS as u32;
        let mut c = VClock::default();
        // Thread i released at sequence 10 + i.
        for i in 0..n {
            c.join(&released(i, 10 + i));
            assert!(
                c.comps.len() <= MAX_COMPONENTS,
                "{} components",
                c.comps.len()
            );
        }
        // The newest releases keep their components, exactly.
        let last = n - 1;
        assert_eq!(c.get(thread_key(0, last)), Some(stamp(0, 10 + last)));
        // Every release that lost its component lies below the floor: what it published
        // (accesses at or below its sequence) still counts as ordered.
        for i in 0..n {
            if c.get(thread_key(0, i)).is_none() {
                assert!(c.below_floor(10 + i), "thread {i}'s release is lost");
            }
        }
        // An access after the newest release is not ordered by the floor.
        assert!(!c.below_floor(10 + n));
    }

    #[test]
    fn a_block_component_drops_its_threads_of_earlier_intervals() {
        let mut c = VClock::default();
        c.raise(thread_key(3, 1), stamp(0, 4), 4);
        c.raise(thread_key(3, 2), stamp(1, 6), 6);
        let mut block = VClock::default();
        block.raise(block_key(3), 1, 8);
        c.join(&block);
        assert_eq!(c.get(thread_key(3, 1)), None, "interval 0 is covered");
        assert_eq!(c.get(thread_key(3, 2)), Some(stamp(1, 6)));
        assert_eq!(c.get(block_key(3)), Some(1));
    }
}
