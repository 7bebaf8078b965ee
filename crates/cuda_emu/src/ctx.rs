//! The running thread's context (a thread-local set by the block scheduler) and what the
//! intrinsics of `thread`, `warp`, `shared`, `atomic`, `mem` and `io` do on the emulator.

use core::cell::{Cell, RefCell};
use core::panic::Location;
use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

use corosensei::Yielder;

use super::block::Launch;
use super::{Access, AccessKind, Dim3, EmuError, Printed, SourceLocation};

/// What a thread waits for when it suspends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Suspend {
    /// A block barrier.
    Barrier(BarrierWait),
    /// A warp collective.
    Warp(WarpWait),
    /// `nanosleep`: runnable again after the others had their turn.
    Spin,
    /// An `mbarrier` poll (`try_wait`/`test_wait`) of a phase that has not completed:
    /// runnable again when the phase completes (resumed with 1) or, when nothing else can
    /// run, once with 0 (the poll's time limit; see `block.rs`).
    MBarrier(super::mbarrier::MBarrierWait),
    /// A warpgroup collective (`wgmma.mma_async`): completes when the 128 threads of the
    /// warpgroup have arrived (see `wgmma.rs`).
    Group(GroupWait),
    /// A named barrier (`barrier.sync id, threads`): completes when `threads` threads have
    /// arrived at barrier `id`.
    Named(NamedWait),
}

/// A thread waiting at a named barrier.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NamedWait {
    /// The barrier, 0..16.
    pub(crate) id: u32,
    /// The threads it waits for.
    pub(crate) threads: u32,
    pub(crate) location: &'static Location<'static>,
}

/// A thread waiting at a warpgroup collective.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupWait {
    /// The address of the thread's record (on its suspended stack).
    pub(crate) record: usize,
    /// The intrinsic.
    pub(crate) what: &'static str,
    pub(crate) location: &'static Location<'static>,
}

/// What a suspended thread is resumed with.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resume {
    /// Go on; the collective's result (0 where there is none).
    Value(u64),
    /// Unwind: the block is being abandoned.
    Cancel,
}

/// The kinds of block barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    Sync,
    Count,
    And,
    Or,
}

impl BarrierKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Sync => "sync_threads",
            Self::Count => "sync_threads_count",
            Self::And => "sync_threads_and",
            Self::Or => "sync_threads_or",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct BarrierWait {
    pub(crate) kind: BarrierKind,
    pub(crate) predicate: bool,
    pub(crate) location: &'static Location<'static>,
}

/// The kinds of warp collective, with the qualifiers that must agree across lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpKind {
    /// `shfl.sync` with its mode (0 idx, 1 up, 2 down, 3 bfly) and `c` operand.
    Shfl {
        mode: u8,
        c: u32,
    },
    VoteAll,
    VoteAny,
    VoteUni,
    Ballot,
    MatchAny,
    MatchAll,
    /// `redux.sync`: op (0 add, 1 min, 2 max, 3 and, 4 or, 5 xor), signed.
    Redux {
        op: u8,
        signed: bool,
    },
    SyncWarp,
    /// A tensor-core collective (`mma.sync`, `ldmatrix`, `stmatrix`): each lane's value is
    /// the address of its record (`tensor::complete`).
    Tensor(super::tensor::TensorOp),
}

impl WarpKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Shfl { mode: 0, .. } => "shfl_idx_sync",
            Self::Shfl { mode: 1, .. } => "shfl_up_sync",
            Self::Shfl { mode: 2, .. } => "shfl_down_sync",
            Self::Shfl { .. } => "shfl_xor_sync",
            Self::VoteAll => "vote_all_sync",
            Self::VoteAny => "vote_any_sync",
            Self::VoteUni => "vote_uni_sync",
            Self::Ballot => "vote_ballot_sync",
            Self::MatchAny => "match_any_sync",
            Self::MatchAll => "match_all_sync",
            Self::Redux { .. } => "redux_sync",
            Self::SyncWarp => "sync_warp",
            Self::Tensor(op) => op.name(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct WarpWait {
    pub(crate) kind: WarpKind,
    pub(crate) mask: u32,
    /// The lane's value (predicate as 0/1, 32-bit values zero-extended).
    pub(crate) value: u64,
    /// The lane's `b` operand (shuffle source lane, delta or xor mask).
    pub(crate) b: u32,
    pub(crate) location: &'static Location<'static>,
}

/// How a thread's coroutine is unwound by the emulator itself (payloads of
/// `resume_unwind`, never seen by the panic hook).
#[derive(Debug)]
pub(crate) enum Unwind {
    /// The block is abandoned (another thread failed, or a deadlock).
    Cancel,
    /// This thread failed a check or an assertion; the error is recorded in its block.
    Abort,
}

/// One emulated thread.
pub(crate) struct ThreadState {
    pub(crate) tid: Dim3,
    pub(crate) linear: u32,
    pub(crate) block: *const BlockState,
    pub(crate) yielder: Cell<*const Yielder<Resume, Suspend>>,
    /// The coroutine stack's address range `[start, end)`: accesses to locals are in bounds.
    pub(crate) stack: (usize, usize),
}

/// Where a block's shared window starts: the first shared address an allocation gets. On
/// sm_80 and later the first 1 KiB of a block's shared memory is reserved for the system
/// (CUDA C Programming Guide, "Shared Memory" of compute capability 8.x/9.0: "1 KB of
/// shared memory is reserved for system use"), so user shared addresses start there too.
pub(crate) const WINDOW_START: u32 = 0x400;

/// Alignment of every shared allocation, in host memory and in the shared window: 1024
/// bytes, the period of the widest swizzle (128-byte swizzle: 8 rows of 128 bytes). A host
/// address and its shared address are then equal modulo 1024, so a swizzle computed on
/// either (kernel code on generic pointers, TMA and `wgmma` on shared addresses) agrees.
pub(crate) const WINDOW_ALIGN: usize = 1024;

/// One shared-memory allocation of a block.
pub(crate) struct SharedAlloc {
    pub(crate) ptr: *mut u8,
    /// Bytes usable (0 for an empty dynamic allocation).
    pub(crate) bytes: usize,
    layout: std::alloc::Layout,
    pub(crate) name: String,
    shadow: Vec<Shadow>,
    /// Its first byte's 32-bit `.shared` address (`shared::shared_addr`): allocations are
    /// placed one after another in the block's shared window, each at a multiple of
    /// [`WINDOW_ALIGN`] (see [`SharedMem::next_window`]).
    pub(crate) window: u32,
}

impl SharedAlloc {
    pub(crate) fn new(
        bytes: usize,
        align: usize,
        name: String,
        shadow: bool,
        window: u32,
    ) -> Option<Self> {
        let layout =
            std::alloc::Layout::from_size_align(bytes.max(1), align.max(WINDOW_ALIGN)).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return None;
        }
        let shadow = if shadow {
            std::vec![Shadow::EMPTY; bytes]
        } else {
            Vec::new()
        };
        Some(Self {
            ptr,
            bytes,
            layout,
            name,
            shadow,
            window,
        })
    }

    /// The shared-window bytes this allocation reserves: its size rounded up to
    /// [`WINDOW_ALIGN`], at least one period (so an empty dynamic allocation has an address of
    /// its own).
    pub(crate) fn window_bytes(&self) -> u32 {
        self.bytes.max(1).next_multiple_of(WINDOW_ALIGN) as u32
    }

    fn contains(&self, addr: usize) -> bool {
        let start = self.ptr as usize;
        addr >= start && addr < start + self.bytes.max(1)
    }
}

impl Drop for SharedAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

const NONE: u32 = u32::MAX;
type Loc = Option<&'static Location<'static>>;

/// Per-byte shadow of shared memory: the last writer and up to two readers of the current
/// barrier interval (epoch), with the warp epoch of each access, and whether it was ever
/// written.
#[derive(Clone, Copy)]
struct Shadow {
    init: bool,
    w_thread: u32,
    w_epoch: u32,
    w_wepoch: u32,
    w_loc: Loc,
    r_epoch: u32,
    r: [(u32, u32, Loc); 2],
}

impl Shadow {
    const EMPTY: Self = Self {
        init: false,
        w_thread: NONE,
        w_epoch: NONE,
        w_wepoch: 0,
        w_loc: None,
        r_epoch: NONE,
        r: [(NONE, 0, None); 2],
    };
}

/// A block's shared memory.
pub(crate) struct SharedMem {
    pub(crate) statics: Vec<(u64, SharedAlloc)>,
    pub(crate) dynamic: SharedAlloc,
    /// The shared address the next static allocation gets: the dynamic allocation is placed
    /// first, at [`WINDOW_START`], then the static arrays in the order the block first uses
    /// them (deterministic for a seed). The GPU places static arrays first; no kernel can
    /// tell, as long as it takes addresses from `shared_addr`.
    pub(crate) next_window: u32,
}

impl SharedMem {
    fn all(&self) -> impl Iterator<Item = &SharedAlloc> {
        self.statics
            .iter()
            .map(|(_, a)| a)
            .chain(core::iter::once(&self.dynamic))
    }

    /// The 32-bit shared address of the host address `p`, if `p` is inside (or one past the
    /// end of) one of the block's allocations.
    pub(crate) fn window_of(&self, p: usize) -> Option<u32> {
        self.all().find_map(|a| {
            let start = a.ptr as usize;
            (p >= start && p <= start + a.bytes).then(|| a.window + (p - start) as u32)
        })
    }

    /// The host address of `len` bytes at shared address `addr`, if they lie inside one
    /// allocation, with that allocation's name, host start and size.
    pub(crate) fn host_of(&self, addr: u32, len: usize) -> Option<usize> {
        self.all().find_map(|a| {
            let off = addr.checked_sub(a.window)? as usize;
            (off + len <= a.bytes).then(|| a.ptr as usize + off)
        })
    }

    /// The allocation holding host address `addr`: its name, host start and size.
    pub(crate) fn describe(&self, addr: usize) -> Option<(String, usize, usize)> {
        self.all().find_map(|a| {
            let start = a.ptr as usize;
            (addr >= start && addr < start + a.bytes.max(1))
                .then(|| (a.name.clone(), start, a.bytes))
        })
    }
}

/// One block being run, shared by its threads (one OS thread runs them all, one at a time).
pub(crate) struct BlockState {
    pub(crate) launch: *const Launch,
    pub(crate) idx: Dim3,
    pub(crate) mem: RefCell<SharedMem>,
    /// Barrier intervals completed.
    pub(crate) epoch: Cell<u32>,
    /// `sync_warp`s completed, per warp.
    pub(crate) warp_epochs: RefCell<Vec<u32>>,
    /// Lanes that have not exited, per warp.
    pub(crate) live: RefCell<Vec<u32>>,
    pub(crate) error: RefCell<Option<EmuError>>,
    pub(crate) printed: RefCell<Vec<Printed>>,
    pub(crate) steps: Cell<u64>,
    /// The block's `mbarrier` objects, by host address (`mbarrier.rs`).
    pub(crate) mbarriers: RefCell<super::mbarrier::MBarriers>,
    /// Counts every change a waiting thread could be waiting for (an `mbarrier` operation,
    /// a barrier or collective completing, a thread exiting): the scheduler reports a
    /// deadlock only when a round of timed-out `mbarrier` polls changed nothing.
    pub(crate) progress: Cell<u64>,
    /// `mbarrier` phases completed (the scheduler wakes the threads polling them).
    pub(crate) phases_completed: Cell<u64>,
}

impl BlockState {
    pub(crate) fn launch(&self) -> &Launch {
        // SAFETY: the launch outlives every block it runs.
        unsafe { &*self.launch }
    }

    /// The in-block index `(x, y, z)` of linear thread `linear`.
    pub(crate) fn tid_of(&self, linear: u32) -> Dim3 {
        let [bx, by, _] = self.launch().block;
        [linear % bx, (linear / bx) % by, linear / (bx * by)]
    }

    /// Records `err` unless an earlier error is recorded.
    pub(crate) fn record(&self, err: EmuError) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(err);
        }
    }
}

std::thread_local! {
    static CURRENT: Cell<*const ThreadState> = const { Cell::new(core::ptr::null()) };
    /// The last panic's message and location in an emulated thread, set by the hook.
    pub(crate) static LAST_PANIC: RefCell<Option<(String, SourceLocation)>> =
        const { RefCell::new(None) };
}

/// Makes `t` the running thread (null: none).
pub(crate) fn set_current(t: *const ThreadState) {
    CURRENT.with(|c| c.set(t));
}

/// The running emulated thread, if any.
#[inline]
pub(crate) fn current() -> Option<&'static ThreadState> {
    let p = CURRENT.with(Cell::get);
    // SAFETY: set by the scheduler to a thread state that lives until it is reset to null
    // (after the block); the reference does not escape the intrinsic that asked for it.
    unsafe { p.as_ref() }
}

impl ThreadState {
    pub(crate) fn block(&self) -> &'static BlockState {
        // SAFETY: the block state outlives its threads' runs.
        unsafe { &*self.block }
    }
    pub(crate) fn lane(&self) -> u32 {
        self.linear % 32
    }
    pub(crate) fn warp(&self) -> u32 {
        self.linear / 32
    }
}

/// The running thread, or the host stub's panic for `what`.
#[track_caller]
#[inline]
pub(crate) fn thread(what: &str) -> &'static ThreadState {
    match current() {
        Some(t) => t,
        None => crate::device::gpu_only(what),
    }
}

/// Records `err` in the running thread's block and unwinds the thread.
pub(crate) fn fail(t: &ThreadState, err: EmuError) -> ! {
    t.block().record(err);
    std::panic::resume_unwind(Box::new(Unwind::Abort))
}

pub(crate) fn suspend(t: &ThreadState, s: Suspend) -> u64 {
    // SAFETY: set by the coroutine's entry; valid while the coroutine runs.
    let yielder = unsafe { &*t.yielder.get() };
    match yielder.suspend(s) {
        Resume::Value(v) => v,
        Resume::Cancel => std::panic::resume_unwind(Box::new(Unwind::Cancel)),
    }
}

/// A block barrier; returns its reduction (count, or 0/1).
#[track_caller]
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

/// A warp collective; returns this lane's result.
#[track_caller]
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

/// Number of named barriers per block (PTX ISA §9.7.13.1 "bar, barrier": ids 0..15).
pub(crate) const NAMED_BARRIERS: u32 = 16;

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

/// `nanosleep`: lets the block's other threads run.
#[track_caller]
pub fn spin(what: &str) {
    let t = thread(what);
    suspend(t, Suspend::Spin);
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
/// allocated (zero-filled) by its first use in the block.
#[track_caller]
pub fn shared_static(id: u64, bytes: usize, align: usize) -> *mut u8 {
    let t = thread("shared_array! / #[address_space(shared)]");
    let b = t.block();
    let mut mem = b.mem.borrow_mut();
    if let Some((_, a)) = mem.statics.iter().find(|(i, _)| *i == id) {
        return a.ptr;
    }
    let checks = b.launch().options.checks;
    let shadow = checks.races || checks.uninit_reads;
    let name = std::format!("shared array #{:x}", id);
    match SharedAlloc::new(bytes, align, name, shadow, mem.next_window) {
        Some(a) => {
            let p = a.ptr;
            mem.next_window += a.window_bytes();
            mem.statics.push((id, a));
            p
        }
        None => {
            drop(mem);
            panic!("cannot allocate {bytes} bytes of shared memory")
        }
    }
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
pub(crate) fn mark_async_write(t: &ThreadState, addr: usize, len: usize) {
    let mut mem = t.block().mem.borrow_mut();
    let SharedMem {
        statics, dynamic, ..
    } = &mut *mem;
    if let Some(a) = statics
        .iter_mut()
        .map(|(_, a)| a)
        .chain(core::iter::once(dynamic))
        .find(|a| a.contains(addr))
    {
        if a.shadow.is_empty() {
            return;
        }
        let off = addr - a.ptr as usize;
        let end = (off + len).min(a.bytes);
        for s in &mut a.shadow[off..end] {
            *s = Shadow {
                init: true,
                ..Shadow::EMPTY
            };
        }
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
#[inline]
pub fn check_access(addr: usize, size: usize, kind: AccessKind, loc: &'static Location<'static>) {
    check_access_with(addr, size, kind, loc, true);
}

/// Whether `size` bytes at `addr` lie inside one of `t`'s block's shared allocations.
pub(crate) fn in_shared(t: &ThreadState, addr: usize, size: usize) -> bool {
    let mem = t.block().mem.borrow();
    mem.statics
        .iter()
        .map(|(_, a)| a)
        .chain(core::iter::once(&mem.dynamic))
        .any(|a| {
            let start = a.ptr as usize;
            addr >= start && addr + size <= start + a.bytes
        })
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
    if !(checks.bounds || checks.races || checks.uninit_reads) || size == 0 {
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
    if !checks.bounds {
        return;
    }
    let buffers = &launch.buffers;
    let i = buffers.partition_point(|b| b.0 <= addr);
    if i > 0 {
        let (start, len, _) = &buffers[i - 1];
        if addr + size <= start + len {
            return;
        }
    }
    if addr >= t.stack.0 && addr + size <= t.stack.1 {
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
    let warp_epochs = b.warp_epochs.borrow();
    let me = t.linear;
    let my_wepoch = warp_epochs[t.warp() as usize];
    // Whether an earlier access by `other` in this epoch is ordered before this one by a
    // `sync_warp` of their common warp.
    let ordered = |other: u32, wepoch: u32| other / 32 == me / 32 && wepoch < my_wepoch;
    let race = |i: usize, first_thread: u32, first_kind: AccessKind, first_loc: Loc| {
        EmuError::SharedRace {
            kernel: launch.kernel,
            block: b.idx,
            address: a.ptr as usize + offset + i,
            allocation: a.name.clone(),
            offset: offset + i,
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
    for i in 0..size {
        let s = a.shadow[offset + i];
        match kind {
            AccessKind::Read => {
                if uninit && checks.uninit_reads && !s.init {
                    return Some(EmuError::UninitRead {
                        kernel: launch.kernel,
                        block: b.idx,
                        thread: t.tid,
                        address: a.ptr as usize + offset + i,
                        allocation: a.name.clone(),
                        offset: offset + i,
                        location: SourceLocation::from_std(loc),
                    });
                }
                if checks.races
                    && s.w_epoch == epoch
                    && s.w_thread != me
                    && !ordered(s.w_thread, s.w_wepoch)
                {
                    return Some(race(i, s.w_thread, AccessKind::Write, s.w_loc));
                }
            }
            AccessKind::Write => {
                if checks.races {
                    if s.w_epoch == epoch && s.w_thread != me && !ordered(s.w_thread, s.w_wepoch) {
                        return Some(race(i, s.w_thread, AccessKind::Write, s.w_loc));
                    }
                    if s.r_epoch == epoch {
                        for (r, we, rloc) in s.r {
                            if r != NONE && r != me && !ordered(r, we) {
                                return Some(race(i, r, AccessKind::Read, rloc));
                            }
                        }
                    }
                }
            }
            AccessKind::Atomic => {}
        }
    }
    for i in 0..size {
        let s = &mut a.shadow[offset + i];
        match kind {
            AccessKind::Read => {
                if s.r_epoch != epoch {
                    s.r_epoch = epoch;
                    s.r = [(me, my_wepoch, Some(loc)), (NONE, 0, None)];
                } else if s.r[0].0 != me && s.r[1].0 != me {
                    s.r[1] = (me, my_wepoch, Some(loc));
                }
            }
            AccessKind::Write => {
                s.init = true;
                s.w_thread = me;
                s.w_epoch = epoch;
                s.w_wepoch = my_wepoch;
                s.w_loc = Some(loc);
            }
            AccessKind::Atomic => s.init = true,
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
    }

    macro_rules! host_int {
        ($t:ty, $a:ty) => {
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
            }
        };
    }
    host_int!(u32, AtomicU32);
    host_int!(i32, AtomicI32);
    host_int!(u64, AtomicU64);
    host_int!(i64, AtomicI64);

    macro_rules! host_float {
        ($t:ty, $bits:ty) => {
            impl HostAtomic for $t {
                unsafe fn rmw(ptr: *mut Self, op: Op, val: Self) -> Self {
                    let p = ptr.cast::<$bits>();
                    // SAFETY: the caller's contract; same size and alignment as the bits.
                    let mut old = unsafe { <$bits>::load(p) };
                    loop {
                        let new = match op {
                            Op::Add => <$t>::from_bits(old) + val,
                            Op::Min => <$t>::from_bits(old).min(val),
                            Op::Max => <$t>::from_bits(old).max(val),
                            _ => val,
                        };
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
            }
        };
    }
    host_float!(f32, u32);
    host_float!(f64, u64);
}
