//! The race check over the launch's global buffers: the last plain writer and the last
//! atomic of each byte, across every block of the launch.
//!
//! What it sees: stores through the checked paths (`OutSlice::write`, `cuda_std::mem`'s
//! vector stores), atomics, and loads through the checked paths (`mem`'s vector and
//! read-only loads). Reads are checked against earlier writes but not remembered, so a read
//! followed by another thread's write is not seen; reads through a `&[T]` parameter and
//! any raw-pointer access are host loads and stores, invisible here.
//!
//! The ordering it knows: within a block, a barrier (the block's interval count) and a
//! `sync_warp` whose mask names both lanes; within a block and between blocks,
//! release/acquire synchronisation through atomics and fences (a flag handover, a lock:
//! `order.rs`). Two blocks writing one byte with no such chain between are a race.
//!
//! Memory: one entry per byte written (about 100 bytes each), up to [`MAX_TRACKED_BYTES`]
//! distinct bytes per launch; bytes past that are not tracked (the launch still runs).

use core::panic::Location;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::state::ThreadState;
use crate::{AccessKind, Dim3, EmuError, GlobalAccess, SourceLocation};

/// At most this many distinct bytes are tracked per launch (about 100 MB of shadow);
/// later bytes go unchecked.
pub(crate) const MAX_TRACKED_BYTES: usize = 1 << 20;

/// Shards of the byte map, picked by address (blocks on different workers rarely contend).
const SHARDS: usize = 64;

/// One access remembered for a byte.
#[derive(Clone, Copy)]
struct Seen {
    block: Dim3,
    thread: Dim3,
    /// The block's linear index in the grid.
    block_linear: u32,
    /// The thread's linear index in its block.
    linear: u32,
    /// The launch sequence at the access (`order.rs`).
    seq: u32,
    /// The block's barrier interval at the access.
    epoch: u32,
    /// The warp's completed `sync_warp`s in that interval at the access.
    wepoch: u32,
    location: &'static Location<'static>,
}

#[derive(Default, Clone, Copy)]
struct Entry {
    write: Option<Seen>,
    atomic: Option<Seen>,
}

/// Hashes a byte address with one multiplication (Fibonacci hashing): the map's keys are
/// addresses, which need no protection against chosen collisions.
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl core::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(26);
    }
}

type ByteMap = HashMap<usize, Entry, core::hash::BuildHasherDefault<AddrHasher>>;

/// The launch's global shadow (present when the race check is on).
pub(crate) struct GlobalShadow {
    shards: Box<[Mutex<ByteMap>]>,
    tracked: std::sync::atomic::AtomicUsize,
    /// Per launch buffer: whether any store or atomic was recorded in it (loads from a
    /// buffer nothing wrote, a kernel's inputs, skip the map).
    written: Box<[std::sync::atomic::AtomicBool]>,
}

impl GlobalShadow {
    /// The shadow of a launch with `buffers` buffers.
    pub(crate) fn new(buffers: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            tracked: std::sync::atomic::AtomicUsize::new(0),
            written: (0..buffers)
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
        }
    }

    /// Checks an access of `size` bytes at `addr`, inside launch buffer number `index`
    /// (`buffer`: its description and start), by thread `t` and records it; returns the
    /// first race found.
    pub(crate) fn access(
        &self,
        t: &ThreadState,
        addr: usize,
        size: usize,
        kind: AccessKind,
        loc: &'static Location<'static>,
        (index, buffer, buffer_start): (usize, &str, usize),
    ) -> Option<EmuError> {
        use std::sync::atomic::Ordering::Relaxed;
        let written = &self.written[index];
        if matches!(kind, AccessKind::Read | AccessKind::AtomicLoad) {
            if !written.load(Relaxed) {
                return None;
            }
        } else if !written.load(Relaxed) {
            written.store(true, Relaxed);
        }
        let b = t.block();
        let epoch = b.epoch.get();
        let warp_syncs = b.warp_syncs.borrow();
        let syncs = &warp_syncs[t.warp() as usize];
        t.accessed.set(epoch + 1);
        let me = Seen {
            block: b.idx,
            thread: t.tid,
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
            (o.block == me.block
                && (o.linear == me.linear
                    || o.epoch != epoch
                    || (o.linear / 32 == me.linear / 32
                        && syncs.orders(epoch, o.wepoch, o.linear, me.linear))))
                || crate::order::happens_before(t, o.block_linear, o.linear, o.seq, o.epoch)
        };
        let race = |addr: usize, first: &Seen, first_kind: AccessKind| EmuError::GlobalRace {
            kernel: b.launch().kernel,
            address: addr,
            buffer: buffer.into(),
            offset: addr - buffer_start,
            first: Box::new(GlobalAccess {
                block: first.block,
                thread: first.thread,
                kind: first_kind,
                location: SourceLocation::from_std(first.location),
            }),
            second: Box::new(GlobalAccess {
                block: me.block,
                thread: me.thread,
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
            // A plain store conflicts with any earlier plain store or atomic; an atomic
            // and a load with an earlier plain store. (An atomic load and an atomic
            // store of one word are not a race.)
            if let Some(w) = e.write.filter(|w| !ordered(w)) {
                return Some(race(a, &w, AccessKind::Write));
            }
            if kind == AccessKind::Write
                && let Some(x) = e.atomic.filter(|x| !ordered(x))
            {
                return Some(race(a, &x, AccessKind::Atomic));
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
                AccessKind::Read | AccessKind::AtomicLoad => continue,
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
