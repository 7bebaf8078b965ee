//! The global race check's shadow as data: the launch's byte map ([`GlobalShadow`], sharded
//! by address), what it remembers of each byte ([`Entry`], [`Seen`]), the `&[T]` parameters
//! it leaves unmapped, and the address hasher of its map and of the release state's
//! (`clock.rs`), [`AddrHasher`]. The launch state (`state.rs`) holds it; the check that
//! records and compares accesses is in `global.rs`. Imports nothing of the emulator.

use core::panic::Location;
use std::collections::HashMap;
use std::sync::Mutex;

/// At most this many distinct bytes are tracked per launch (about 100 MB of shadow);
/// later bytes go unchecked.
pub(crate) const MAX_TRACKED_BYTES: usize = 1 << 20;

/// Shards of the byte map, picked by address (blocks on different workers rarely contend).
pub(crate) const SHARDS: usize = 64;

/// One access remembered for a byte (the block's and thread's indices are kept linear:
/// 32 bytes, and `Option<Seen>` no more, through the location's niche).
#[derive(Clone, Copy)]
pub(crate) struct Seen {
    /// The block's linear index in the grid.
    pub(crate) block_linear: u32,
    /// The thread's linear index in its block.
    pub(crate) linear: u32,
    /// The launch sequence at the access (`order.rs`).
    pub(crate) seq: u32,
    /// The block's barrier interval at the access.
    pub(crate) epoch: u32,
    /// The warp's completed `sync_warp`s in that interval at the access.
    pub(crate) wepoch: u32,
    pub(crate) location: &'static Location<'static>,
}

#[derive(Default, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) write: Option<Seen>,
    pub(crate) atomic: Option<Seen>,
    /// The latest load, plain or atomic ([`Entry::read_atomic`]).
    pub(crate) read: Option<Seen>,
    pub(crate) read_atomic: bool,
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

pub(crate) type ByteMap = HashMap<usize, Entry, core::hash::BuildHasherDefault<AddrHasher>>;

/// The launch's global shadow (present when the race check is on).
pub(crate) struct GlobalShadow {
    pub(crate) shards: Box<[Mutex<ByteMap>]>,
    pub(crate) tracked: std::sync::atomic::AtomicUsize,
    /// The `&[T]` parameters, `(start, bytes, parameter index)`: stores into them are
    /// findings, loads from them are not remembered.
    pub(crate) read_only: Vec<(usize, usize, usize)>,
}

impl GlobalShadow {
    /// The shadow of a launch whose `&[T]` parameters are `read_only`
    /// (`(start, bytes, parameter index)`).
    pub(crate) fn new(read_only: Vec<(usize, usize, usize)>) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            tracked: std::sync::atomic::AtomicUsize::new(0),
            read_only,
        }
    }

    /// The `&[T]` parameter overlapping `size` bytes at `addr`, if any:
    /// `(start, bytes, parameter index)`.
    pub(crate) fn read_only_at(&self, addr: usize, size: usize) -> Option<(usize, usize, usize)> {
        self.read_only
            .iter()
            .find(|&&(start, bytes, _)| addr < start + bytes && start < addr + size)
            .copied()
    }
}
