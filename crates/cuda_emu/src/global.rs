//! The race check over the launch's global buffers: per byte, the last plain store, the
//! last atomic and the last load, across every block of the launch.
//!
//! What it sees: stores through the checked paths (`OutSlice::write`, `cuda_std::mem`'s
//! vector stores), atomics, and loads through the checked paths (`mem`'s vector and
//! read-only loads, atomic loads). A store conflicts with an unordered earlier store,
//! atomic or load of another thread; an atomic with an earlier store or plain load; a
//! plain load with an earlier store or atomic. Only the latest load of a byte is
//! remembered, so of two unordered loads followed by a store, the store is checked against
//! the second.
//!
//! Reads through a `&[T]` parameter are host loads, invisible here; instead, a store or
//! atomic into a `&[T]` parameter's memory is itself the finding
//! ([`EmuError::ReadOnlyWrite`]), so none of those reads can race unseen. Loads from a
//! `&[T]` are not remembered for the same reason. Raw-pointer dereferences stay unseen.
//!
//! The ordering it knows: within a block, a barrier (the block's interval count) and a
//! `sync_warp` whose mask names both lanes; within a block and between blocks,
//! release/acquire synchronisation through atomics and fences (a flag handover, a lock:
//! `order.rs`). Two blocks writing one byte with no such chain between are a race.
//!
//! Memory: one entry per byte accessed (about 110 bytes with the map's own), up to
//! [`MAX_TRACKED_BYTES`] distinct bytes per launch; bytes past that are not tracked (the
//! launch still runs).
//!
//! The shadow is data in `global_shadow.rs` (the launch state holds it); this module holds
//! the check, [`GlobalShadow::access`].
//!
//! [`MAX_TRACKED_BYTES`]: crate::global_shadow::MAX_TRACKED_BYTES

use core::panic::Location;

use crate::global_shadow::{ByteMap, Entry, GlobalShadow, MAX_TRACKED_BYTES, SHARDS, Seen};
use crate::state::ThreadState;
use crate::{AccessKind, EmuError, GlobalAccess, SourceLocation};

impl GlobalShadow {
    /// Checks an access of `size` bytes at `addr`, inside launch buffer `buffer` (its
    /// description and start), by thread `t` and records it; returns the first finding.
    pub(crate) fn access(
        &self,
        t: &ThreadState,
        addr: usize,
        size: usize,
        kind: AccessKind,
        loc: &'static Location<'static>,
        (buffer, buffer_start): (&str, usize),
    ) -> Option<EmuError> {
        let b = t.block();
        let loads = matches!(kind, AccessKind::Read | AccessKind::AtomicLoad);
        if !self.read_only.is_empty()
            && let Some((start, bytes, param)) = self.read_only_at(addr, size)
        {
            if loads {
                // Nothing may store there: no later store to check the load against.
                if addr >= start && addr + size <= start + bytes {
                    return None;
                }
            } else {
                let first = addr.max(start);
                return Some(EmuError::ReadOnlyWrite {
                    kernel: b.launch().kernel,
                    address: first,
                    parameter: std::format!("parameter {param}"),
                    offset: first - start,
                    access: Box::new(GlobalAccess {
                        block: b.idx,
                        thread: t.tid,
                        kind,
                        location: SourceLocation::from_std(loc),
                    }),
                });
            }
        }
        let epoch = b.epoch.get();
        let warp_syncs = b.warp_syncs.borrow();
        let syncs = &warp_syncs[t.warp() as usize];
        t.accessed.set(epoch + 1);
        let me = Seen {
            block_linear: crate::order::block_linear(b),
            linear: t.linear,
            seq: b.launch().order.now(),
            epoch,
            wepoch: syncs.count(epoch),
            location: loc,
        };
        // Whether `other` is ordered before this access: the same thread, or the same block
        // with a barrier between, or the same warp with a `sync_warp` naming both since, or
        // release/acquire synchronisation from it to this thread.
        let ordered = |o: &Seen| {
            (o.block_linear == me.block_linear
                && (o.linear == me.linear
                    || o.epoch != epoch
                    || (o.linear / 32 == me.linear / 32
                        && syncs.orders(epoch, o.wepoch, o.linear, me.linear))))
                || crate::order::happens_before(t, o.block_linear, o.linear, o.seq, o.epoch)
        };
        let launch = b.launch();
        let race = |addr: usize, first: &Seen, first_kind: AccessKind| EmuError::GlobalRace {
            kernel: launch.kernel,
            address: addr,
            buffer: buffer.into(),
            offset: addr - buffer_start,
            first: Box::new(GlobalAccess {
                block: crate::order::idx_of(first.block_linear, launch.grid),
                thread: b.tid_of(first.linear),
                kind: first_kind,
                location: SourceLocation::from_std(first.location),
            }),
            second: Box::new(GlobalAccess {
                block: b.idx,
                thread: t.tid,
                kind,
                location: SourceLocation::from_std(loc),
            }),
        };
        // One lock per 16-byte granule (an aligned access of up to 16 bytes takes one).
        let mut held: Option<(usize, std::sync::MutexGuard<'_, ByteMap>)> = None;
        for a in addr..addr + size {
            let which = (a >> 4) % SHARDS;
            if held.as_ref().is_none_or(|(w, _)| *w != which) {
                // Released before the next is taken: one lock held at a time, so two workers
                // cannot wait for each other.
                drop(held.take());
                let guard = self.shards[which]
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                held = Some((which, guard));
            }
            let Some((_, shard)) = held.as_mut() else {
                unreachable!("the shard was just locked")
            };
            let found = shard.get(&a).copied();
            let e = found.unwrap_or_default();
            // Every access conflicts with an earlier plain store. A store conflicts with
            // any earlier access; an atomic with an earlier plain load; a plain load with
            // an earlier atomic (an atomic load and an atomic write of one word, or two
            // loads, are not a race).
            if let Some(w) = e.write.filter(|w| !ordered(w)) {
                return Some(race(a, &w, AccessKind::Write));
            }
            if matches!(kind, AccessKind::Write | AccessKind::Read)
                && let Some(x) = e.atomic.filter(|x| !ordered(x))
            {
                return Some(race(a, &x, AccessKind::Atomic));
            }
            if !loads
                && let Some(r) = e
                    .read
                    .filter(|r| (kind == AccessKind::Write || !e.read_atomic) && !ordered(r))
            {
                let first = if e.read_atomic {
                    AccessKind::AtomicLoad
                } else {
                    AccessKind::Read
                };
                return Some(race(a, &r, first));
            }
            let record = match kind {
                AccessKind::Write => Entry {
                    write: Some(me),
                    ..e
                },
                AccessKind::Atomic => Entry {
                    atomic: Some(me),
                    ..e
                },
                AccessKind::Read | AccessKind::AtomicLoad => Entry {
                    read: Some(me),
                    read_atomic: kind == AccessKind::AtomicLoad,
                    ..e
                },
            };
            if found.is_none() {
                let n = self
                    .tracked
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if n >= MAX_TRACKED_BYTES {
                    continue;
                }
            }
            shard.insert(a, record);
        }
        None
    }
}
