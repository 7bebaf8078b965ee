//! The block scheduler: one coroutine per thread, resumed in a deterministic order; block
//! barriers and warp collectives complete when every thread they name has arrived.

use core::cell::{Cell, RefCell};
use core::ffi::c_void;
use std::boxed::Box;
use std::string::String;
use std::vec::Vec;

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use rayon::prelude::*;

use super::interleave::{interleave_state, splitmix};
use super::shared_mem::{SharedAlloc, SharedMem, WINDOW_START};
use super::state::{
    BarrierKind, BarrierWait, BlockState, ClusterState, LAST_PANIC, Launch, NAMED_BARRIERS, Resume,
    St, Suspend, ThreadState, Unwind, WarpKind, WarpSyncs, WarpWait, WorkerProgress, current,
    set_current,
};
use super::unit_state::AsyncState;
use super::{Dim3, EmuError, EmuReport, Printed, SourceLocation, ThreadSite};
use cust_core::launch::HostEntry;

type Coro = Coroutine<Resume, (), (), DefaultStack>;

std::thread_local! {
    /// Stacks kept for reuse by this worker: (size, stacks).
    static STACKS: RefCell<(usize, Vec<DefaultStack>)> = const { RefCell::new((0, Vec::new())) };
}

fn take_stack(bytes: usize) -> std::io::Result<DefaultStack> {
    let reused = STACKS.with(|s| {
        let mut s = s.borrow_mut();
        if s.0 != bytes {
            *s = (bytes, Vec::new());
        }
        s.1.pop()
    });
    match reused {
        Some(stack) => Ok(stack),
        None => DefaultStack::new(bytes),
    }
}

/// Keeps `stacks` (of `bytes`) for this worker's next blocks, up to 1024 in all (the rest
/// are freed): one thread-local access per block, where one per stack was a visible share
/// of a short thread's cost.
fn give_stacks(bytes: usize, stacks: Vec<DefaultStack>) {
    STACKS.with(|s| {
        let mut s = s.borrow_mut();
        if s.0 == bytes {
            let room = 1024usize.saturating_sub(s.1.len());
            s.1.extend(stacks.into_iter().take(room));
        }
    });
}

/// How a thread waiting at named barrier `id` is described.
const NAMED_SITES: [&str; 16] = [
    "named barrier 0",
    "named barrier 1",
    "named barrier 2",
    "named barrier 3",
    "named barrier 4",
    "named barrier 5",
    "named barrier 6",
    "named barrier 7",
    "named barrier 8",
    "named barrier 9",
    "named barrier 10",
    "named barrier 11",
    "named barrier 12",
    "named barrier 13",
    "named barrier 14",
    "named barrier 15",
];

/// A block's ready threads in the order they run: a ring of linear thread indices whose
/// capacity is a power of two (at least the block's threads, so it grows only if a thread
/// is queued twice). `VecDeque`'s general index arithmetic was a visible share of a step.
struct ReadyQueue {
    ring: Box<[u32]>,
    /// The positions of the first queued and the next free slot, counted without wrapping
    /// (the slot is the position masked by the capacity).
    head: usize,
    tail: usize,
}

impl ReadyQueue {
    fn new(order: &[u32]) -> Self {
        let mut ring = std::vec![0u32; order.len().next_power_of_two().max(32)];
        ring[..order.len()].copy_from_slice(order);
        Self {
            ring: ring.into_boxed_slice(),
            head: 0,
            tail: order.len(),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.tail - self.head
    }

    #[inline]
    fn pop_front(&mut self) -> Option<u32> {
        if self.head == self.tail {
            return None;
        }
        let t = self.ring[self.head & (self.ring.len() - 1)];
        self.head += 1;
        Some(t)
    }

    /// The thread that runs next, if any.
    #[inline]
    fn peek(&self) -> Option<u32> {
        (self.head != self.tail).then(|| self.ring[self.head & (self.ring.len() - 1)])
    }

    #[inline]
    fn push_back(&mut self, t: u32) {
        if self.len() == self.ring.len() {
            self.grow();
        }
        let mask = self.ring.len() - 1;
        self.ring[self.tail & mask] = t;
        self.tail += 1;
    }

    fn extend(&mut self, threads: impl IntoIterator<Item = u32>) {
        for t in threads {
            self.push_back(t);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mask = self.ring.len() - 1;
        let queued: Vec<u32> = (self.head..self.tail)
            .map(|i| self.ring[i & mask])
            .collect();
        let mut ring = std::vec![0u32; self.ring.len() * 2];
        ring[..queued.len()].copy_from_slice(&queued);
        self.ring = ring.into_boxed_slice();
        self.head = 0;
        self.tail = queued.len();
    }
}

/// Installs (once) a panic hook that, in an emulated thread, records the panic's message and
/// location for the launch's error instead of printing it.
fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if current().is_some() {
                let message = payload_text(info.payload());
                let location = info.location().map(|l| SourceLocation {
                    file: leak_file(l.file()),
                    line: l.line(),
                    column: l.column(),
                });
                if let Some(location) = location {
                    LAST_PANIC.with(|p| *p.borrow_mut() = Some((message, location)));
                    return;
                }
            }
            previous(info);
        }));
    });
}

/// A panic location's file as `'static` (locations of panics in `'static` code are
/// `'static` already; the hook only sees a borrowed `&str`). Interned, so each file leaks
/// once.
fn leak_file(file: &str) -> &'static str {
    static FILES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut files) = FILES.lock() else {
        return "<unknown>";
    };
    if let Some(f) = files.iter().find(|f| **f == file) {
        return f;
    }
    let leaked: &'static str = Box::leak(String::from(file).into_boxed_str());
    files.push(leaked);
    leaked
}

fn payload_text(payload: &(dyn core::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        String::from(*s)
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        String::from("<non-string panic payload>")
    }
}

struct BlockOutcome {
    steps: u64,
    printed: Vec<Printed>,
    /// The block's finding, if it failed (its output up to then is in `printed`).
    error: Option<EmuError>,
}

impl Launch {
    pub(crate) fn run(&self) -> Result<EmuReport, EmuError> {
        install_hook();
        let [gx, gy, gz] = self.grid.map(u64::from);
        let blocks = gx * gy * gz;
        let per_cluster = self.cluster.iter().map(|&c| u64::from(c)).product::<u64>();
        let mut outcomes: Vec<(u64, Result<BlockOutcome, EmuError>)> = (0..blocks / per_cluster)
            .into_par_iter()
            .flat_map_iter(|c| self.run_cluster(c))
            .collect();
        outcomes.sort_by_key(|o| o.0);
        let mut report = EmuReport {
            kernel: self.kernel,
            blocks,
            threads: blocks * self.block.iter().map(|&d| u64::from(d)).product::<u64>(),
            thread_steps: 0,
            printed: Vec::new(),
        };
        let mut first_error = None;
        for (_, outcome) in outcomes {
            match outcome {
                Ok(o) => {
                    report.thread_steps += o.steps;
                    report.printed.extend(o.printed);
                    first_error = first_error.or(o.error);
                }
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        if let Some(err) = first_error {
            // A GPU's printf buffer reaches the host even when the launch traps: print the
            // output of a failing launch (there is no report to carry it) before its error.
            let text: String = report.printed.iter().map(|p| p.text.as_str()).collect();
            std::print!("{text}");
            return Err(err);
        }
        Ok(report)
    }

    /// Runs cluster `linear_cluster` (in `%clusterid` order, x fastest): its blocks
    /// together on this worker, each block's threads in its own order, the blocks taking
    /// turns until none can run. Returns each block's outcome with its linear index.
    fn run_cluster(&self, linear_cluster: u64) -> Vec<(u64, Result<BlockOutcome, EmuError>)> {
        let [gx, gy, gz] = self.grid;
        let [cx, cy, cz] = self.cluster;
        let (ncx, ncy) = (gx / cx, gy / cy);
        let c = linear_cluster;
        let id = [
            (c % u64::from(ncx)) as u32,
            ((c / u64::from(ncx)) % u64::from(ncy)) as u32,
            (c / (u64::from(ncx) * u64::from(ncy))) as u32,
        ];
        debug_assert!(id[2] < gz / cz);
        let ranks = cx * cy * cz;
        let n = self.block[0] * self.block[1] * self.block[2];
        let idxs: Vec<Dim3> = (0..ranks)
            .map(|r| {
                [
                    id[0] * cx + r % cx,
                    id[1] * cy + (r / cx) % cy,
                    id[2] * cz + r / (cx * cy),
                ]
            })
            .collect();
        let linear = |idx: Dim3| {
            u64::from(idx[0])
                + u64::from(idx[1]) * u64::from(gx)
                + u64::from(idx[2]) * u64::from(gx) * u64::from(gy)
        };
        let cluster = ClusterState {
            id,
            blocks: core::cell::OnceCell::new(),
            threads: n * ranks,
            arrived: Cell::new(0),
            exited: Cell::new(0),
            phase: Cell::new(0),
        };
        let mut states = Vec::with_capacity(ranks as usize);
        for (r, &idx) in idxs.iter().enumerate() {
            match self.block_state(idx, r as u32, &cluster) {
                Ok(s) => states.push(s),
                Err(e) => return std::vec![(linear(idx), Err(e))],
            }
        }
        let _ = cluster
            .blocks
            .set(states.iter().map(|s| s as *const BlockState).collect());
        let mut runs = Vec::with_capacity(ranks as usize);
        for (s, &idx) in states.iter().zip(&idxs) {
            match BlockRun::new(self, s, linear(idx)) {
                Ok(r) => runs.push(r),
                Err(e) => return std::vec![(linear(idx), Err(e))],
            }
        }
        let failed = |runs: &[BlockRun<'_>]| runs.iter().any(|r| r.block.error.borrow().is_some());
        // The summed `progress` count at the last round of timed-out `mbarrier` polls.
        let mut timed_out_at = None;
        loop {
            let mut ran = false;
            for r in &mut runs {
                ran |= r.drain();
                if r.block.error.borrow().is_some() {
                    break;
                }
            }
            if failed(&runs) || runs.iter().all(|r| r.sched.done == n) {
                break;
            }
            if ran {
                continue;
            }
            // Nothing can run, and threads poll `mbarrier` phases that have not completed:
            // their polls time out (`try_wait` returns false after a system-dependent time;
            // here, once nothing else can run). If a round of timed-out polls changed
            // nothing, no phase can complete: a deadlock.
            if runs.iter().all(|r| r.sched.polling == 0) {
                break;
            }
            let progress: u64 = runs.iter().map(|r| r.block.progress.get()).sum();
            if timed_out_at == Some(progress) {
                break;
            }
            timed_out_at = Some(progress);
            for r in &mut runs {
                r.sched.time_out_polls();
            }
        }
        // The last barrier interval ends with the block: a pending uninitialised read is
        // reported now.
        for r in &runs {
            r.block.end_interval();
        }
        if !failed(&runs) && runs.iter().any(|r| r.sched.done < n) {
            // A deadlock: reported by the block where it starts, the first with a thread
            // stuck at something other than the cluster barrier (the cluster barrier's
            // waiters wait for it), else the first block not done.
            let stuck = runs
                .iter()
                .position(|r| {
                    r.sched
                        .states
                        .iter()
                        .any(|s| !matches!(s.get(), St::Done | St::Wait(Suspend::Cluster(_))))
                })
                .or_else(|| runs.iter().position(|r| r.sched.done < n));
            if let Some(i) = stuck {
                let err = runs[i].sched.deadlock();
                runs[i].block.record(err);
            }
        }
        runs.into_iter()
            .map(|r| (r.linear, Ok(r.finish())))
            .collect()
    }

    /// The state of block `idx`, of rank `rank` in `cluster`.
    fn block_state(
        &self,
        idx: Dim3,
        rank: u32,
        cluster: &ClusterState,
    ) -> Result<BlockState, EmuError> {
        let n = self.block[0] * self.block[1] * self.block[2];
        let warps = n.div_ceil(32);
        let checks = self.options.checks;
        let shadow = checks.shadow();
        let dynamic = SharedAlloc::new(
            self.dynamic_shared_bytes as usize,
            16,
            String::from("dynamic shared memory"),
            shadow,
            WINDOW_START,
        )
        .ok_or_else(|| EmuError::Stack {
            kernel: self.kernel,
            bytes: self.options.stack_bytes,
            message: String::from("out of memory (shared memory)"),
        })?;
        let live: Vec<u32> = (0..warps)
            .map(|w| {
                let lanes = (n - w * 32).min(32);
                if lanes == 32 {
                    u32::MAX
                } else {
                    (1u32 << lanes) - 1
                }
            })
            .collect();
        Ok(BlockState {
            launch: self,
            idx,
            cluster,
            rank,
            mem: RefCell::new(SharedMem {
                statics: Vec::new(),
                next_window: WINDOW_START + dynamic.window_bytes(),
                dynamic,
            }),
            epoch: Cell::new(0),
            warp_syncs: RefCell::new(std::vec![Default::default(); warps as usize]),
            pending_uninit: RefCell::new(None),
            live: RefCell::new(live),
            error: RefCell::new(None),
            failed: Cell::new(false),
            printed: RefCell::new(Vec::new()),
            steps: Cell::new(0),
            mbarriers: RefCell::new(Default::default()),
            progress: Cell::new(0),
            phases_completed: Cell::new(0),
            writes: Cell::new(0),
            worker: self.worker_slot(),
            asyncs: RefCell::new(AsyncState::new(n.div_ceil(128))),
            order: RefCell::default(),
            stores: Cell::new(0),
            interleave: Cell::new(if self.options.seed == 0 {
                0
            } else {
                interleave_state(self.options.seed, idx)
            }),
        })
    }
}

/// One block being run: its threads' states and coroutines and its scheduler.
struct BlockRun<'a> {
    block: &'a BlockState,
    linear: u64,
    threads: Vec<ThreadState>,
    /// Each thread's coroutine, created at its first resumption (`None` before it and
    /// after it returned).
    coros: Vec<Option<Coro>>,
    /// Stacks of threads that returned, for the threads that start later: a block whose
    /// threads never wait runs on one stack.
    spare: Vec<DefaultStack>,
    sched: Sched<'a>,
    steps: u64,
}

impl<'a> BlockRun<'a> {
    fn new(launch: &Launch, block: &'a BlockState, linear_block: u64) -> Result<Self, EmuError> {
        let n = launch.block[0] * launch.block[1] * launch.block[2];
        let warps = n.div_ceil(32);
        // Thread indices in linear order, x fastest (as `BlockState::tid_of` gives them,
        // without its three divisions per thread).
        let [bx, by, bz] = launch.block;
        let mut threads: Vec<ThreadState> = Vec::with_capacity(n as usize);
        for z in 0..bz {
            for y in 0..by {
                for x in 0..bx {
                    let linear = threads.len() as u32;
                    debug_assert_eq!([x, y, z], block.tid_of(linear));
                    threads.push(ThreadState {
                        tid: [x, y, z],
                        linear,
                        block,
                        yielder: Cell::new(core::ptr::null()),
                        stack: Cell::new((0, 0)),
                        cluster_arrivals: Cell::new(0),
                        cluster_waits: Cell::new(0),
                        polls: Cell::new([0; super::state::POLL_SITES]),
                        polls_next: Cell::new(0),
                        accessed: Cell::new(0),
                        yield_reads: Cell::new([0; super::state::POLL_SITES]),
                        yield_written: Cell::new(0),
                        run_accesses: Cell::new(0),
                        sp: core::ptr::null(),
                        state: core::ptr::null(),
                    });
                }
            }
        }
        let coros: Vec<Option<Coro>> = (0..n).map(|_| None).collect();
        let mut order: Vec<u32> = (0..n).collect();
        if launch.options.seed != 0 {
            let mut state = launch.options.seed ^ linear_block.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for i in (1..order.len()).rev() {
                let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
        }
        let mut rank = std::vec![0u32; n as usize];
        for (r, &t) in order.iter().enumerate() {
            rank[t as usize] = r as u32;
        }
        let exist = block.live.borrow().clone();
        let sched = Sched {
            block,
            progress_slot: block.launch().progress_slot(block.worker),
            n,
            states: (0..n).map(|_| Cell::new(St::Ready(0))).collect(),
            sps: (0..n).map(|_| Cell::new(0)).collect(),
            ready: ReadyQueue::new(&order),
            rank,
            order,
            shuffled: launch.options.seed != 0,
            at_barrier: 0,
            barrier: BarrierArrivals::default(),
            done: 0,
            waiting: std::vec![0; warps as usize],
            done_lanes: std::vec![0; warps as usize],
            exist,
            polling: 0,
            phases_seen: 0,
            spins: 0,
            quiet: None,
            writes_seen: 0,
            at_group: std::vec![0; n.div_ceil(128) as usize],
            at_named: Default::default(),
            named_busy: 0,
            at_cluster: 0,
        };
        // (The states' heap buffer stays where it is when `sched` moves.)
        for ((thread, state), sp) in threads.iter_mut().zip(&sched.states).zip(&sched.sps) {
            thread.state = state;
            thread.sp = sp;
        }
        Ok(Self {
            block,
            linear: linear_block,
            threads,
            coros,
            spare: Vec::new(),
            sched,
            steps: 0,
        })
    }

    /// Thread `t`'s coroutine, created on a spare stack (or a new one) at its first
    /// resumption; `None` (the block's error recorded) if no stack can be had.
    fn coroutine(&mut self, t: u32) -> Option<&mut Coro> {
        if self.coros[t as usize].is_none() {
            let launch = self.block.launch();
            let bytes = launch.options.stack_bytes;
            let stack = match self.spare.pop().map_or_else(|| take_stack(bytes), Ok) {
                Ok(s) => s,
                Err(e) => {
                    self.block.record(EmuError::Stack {
                        kernel: launch.kernel,
                        bytes,
                        message: std::format!("{e}"),
                    });
                    return None;
                }
            };
            let thread = &self.threads[t as usize];
            thread.stack.set((stack.limit().get(), stack.base().get()));
            let (entry, args) = (launch.entry, launch.args as usize);
            // The coroutine holds a pointer into `threads`' heap buffer, which moving the
            // `Vec` does not move.
            let ts = core::ptr::from_ref(thread) as usize;
            self.coros[t as usize] = Some(Coroutine::with_stack(
                stack,
                move |y: &Yielder<Resume, ()>, first| {
                    thread_main(
                        ts as *const ThreadState,
                        y,
                        first,
                        entry,
                        args as *const *mut c_void,
                    )
                },
            ));
        }
        self.coros[t as usize].as_mut()
    }

    /// Runs the block's threads until none is ready (or the block failed); returns whether
    /// any ran.
    fn drain(&mut self) -> bool {
        self.sched.wake_polls();
        self.sched.wake_cluster();
        let mut ran = false;
        // Spins in a row in this call: a block of a cluster whose threads all spin gives
        // the cluster's other blocks their turn (they may be what it waits for).
        let mut round = 0usize;
        let siblings = self.block.cluster().threads > self.sched.n;
        while let Some(t) = self.sched.ready.pop_front() {
            let v = match self.sched.states[t as usize].get() {
                St::Ready(v) => v,
                St::Wait(Suspend::Spin(_)) => 0,
                _ => continue,
            };
            ran = true;
            self.steps += 1;
            // The next thread's stack lines, on their way while this one runs.
            if let Some(next) = self.sched.ready.peek() {
                prefetch_stack(self.sched.sps[next as usize].get());
            }
            let Some(coro) = self.coroutine(t) else {
                break;
            };
            let coro: *mut Coro = coro;
            let thread = &self.threads[t as usize];
            set_current(thread);
            // SAFETY: `coro` points into `self.coros`, which nothing else touches while the
            // thread runs.
            let result = unsafe { (*coro).resume(Resume::Value(v)) };
            set_current(core::ptr::null());
            // The thread wrote what it waits at into its state (`state::suspend`): read
            // in place, field by field, as the stores that wrote it are still in flight.
            let state = self.sched.states[t as usize].as_ptr();
            match result {
                // The two common suspensions first, their arrivals inline.
                CoroutineResult::Yield(()) => {
                    // SAFETY: the state is the thread's, written before it suspended; nothing
                    // writes it while this reads (the reference ends before the arrival).
                    let (spin, barrier, warp_mask) = match unsafe { &*state } {
                        St::Wait(Suspend::Barrier(b)) => (false, Some(*b), None),
                        St::Wait(Suspend::Warp(op)) => (false, None, Some(op.mask)),
                        St::Wait(Suspend::Spin(_)) => (true, None, None),
                        _ => (false, None, None),
                    };
                    if let Some(b) = barrier {
                        round = 0;
                        self.sched.stepped();
                        self.sched.arrive_barrier(t, b);
                    } else if let Some(mask) = warp_mask {
                        round = 0;
                        self.sched.stepped();
                        self.sched.arrive_warp(t, mask);
                    } else if spin {
                        self.sched.arrive(t);
                        self.sched.spun();
                        round += 1;
                    } else {
                        round = 0;
                        self.sched.stepped();
                        self.sched.arrive(t);
                    }
                }
                CoroutineResult::Return(()) => {
                    round = 0;
                    self.sched.stepped();
                    if let Some(c) = self.coros[t as usize].take() {
                        self.spare.push(c.into_stack());
                    }
                    self.sched.exit(t);
                    super::cluster::thread_exited(thread);
                    // Copies never waited for land when their thread exits.
                    super::cp_async::land(thread, None);
                }
            }
            if self.block.failed.get() {
                break;
            }
            self.sched.wake_polls();
            self.sched.wake_cluster();
            if round != 0 && siblings && round > self.sched.ready.len() {
                break;
            }
        }
        ran
    }

    /// Unwinds every thread still suspended (a thread never started returns at once on
    /// `Cancel`), recycles the stacks, and returns the block's outcome.
    fn finish(mut self) -> BlockOutcome {
        let stack_bytes = self.block.launch().options.stack_bytes;
        for (t, coro) in self.coros.iter_mut().enumerate() {
            if let Some(c) = coro.as_mut()
                && !c.done()
            {
                set_current(&self.threads[t]);
                let _ = c.resume(Resume::Cancel);
                set_current(core::ptr::null());
            }
        }
        let mut stacks = core::mem::take(&mut self.spare);
        let recycled = stacks.len();
        for coro in self.coros.iter_mut() {
            if let Some(c) = coro.take()
                && c.done()
            {
                stacks.push(c.into_stack());
            }
        }
        // (Kept in the order they were given before: the threads' stacks, then the spares.)
        stacks.rotate_left(recycled);
        give_stacks(stack_bytes, stacks);
        BlockOutcome {
            steps: self.steps + self.block.steps.get(),
            printed: self.block.printed.take(),
            error: self.block.error.take(),
        }
    }
}

/// Prefetches the stack lines that the resumption of a thread suspended at stack pointer
/// `sp` (0: never suspended, nothing to fetch) reads first: the three words the switch
/// saved below `sp` and the [`PREFETCH_LINES`] lines from there up (its frame). A block's
/// threads take turns, so each one's frame has left the level-1 cache by its next step
/// (256 threads' frames are several times its size); fetched one step ahead, its lines
/// arrive while the thread before it runs.
#[inline(always)]
fn prefetch_stack(sp: usize) {
    #[cfg(target_arch = "x86_64")]
    if sp != 0 {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (sp - 24) & !63;
        for line in 0..PREFETCH_LINES {
            // SAFETY: a prefetch is only a hint: it never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((first + line * 64) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = sp;
}

/// Stack lines [`prefetch_stack`] fetches: the tiled SGEMM probe's frame and the switch's
/// words span 9 or 10 lines, the reduction's 5 or 6; more than its frame were fetched for
/// nothing, and 8 was the best of 5, 6, 8 and 11 measured (`emu_speed`, both probes).
const PREFETCH_LINES: usize = 8;

/// A thread's coroutine body: runs the kernel's host entry, turning panics into errors.
fn thread_main(
    t: *const ThreadState,
    y: &Yielder<Resume, ()>,
    first: Resume,
    entry: HostEntry,
    args: *const *mut c_void,
) {
    // SAFETY: the thread state outlives its coroutine (the block unwinds every coroutine
    // before dropping the states).
    let t = unsafe { &*t };
    t.yielder.set(y);
    if let Resume::Cancel = first {
        return;
    }
    // SAFETY: `launch`'s contract: `args` matches the kernel's parameters.
    let result = std::panic::catch_unwind(|| unsafe { entry(args) });
    let Err(payload) = result else { return };
    if payload.downcast_ref::<Unwind>().is_some() {
        return;
    }
    let (message, location) = LAST_PANIC
        .with(|p| p.borrow_mut().take())
        .map_or_else(|| (payload_text(&*payload), None), |(m, l)| (m, Some(l)));
    let b = t.block();
    b.record(EmuError::Panic {
        kernel: b.launch().kernel,
        block: b.idx,
        thread: t.tid,
        message,
        location,
    });
}

/// Whether two barrier call sites are the same: the same `Location` (one static per call
/// site, so usually the same pointer), or equal ones.
fn same_site(
    a: &'static core::panic::Location<'static>,
    b: &'static core::panic::Location<'static>,
) -> bool {
    core::ptr::eq(a, b) || a == b
}

/// The arrivals at the block barrier in the current interval.
#[derive(Default)]
struct BarrierArrivals {
    /// The waiting threads, in arrival order.
    waiting: Vec<u32>,
    /// The first arrival's barrier kind and call site.
    first: Option<(BarrierKind, &'static core::panic::Location<'static>)>,
    /// Whether some arrival differs from the first in kind or call site.
    mixed: bool,
    /// Arrivals with a true predicate.
    count: u64,
    /// Whether some thread arrived before one of lower scheduling rank (the waiting
    /// threads then need sorting to be released in rank order), and the last arrival's
    /// rank.
    unordered: bool,
    last_rank: u32,
}

impl BarrierArrivals {
    #[inline(always)]
    fn arrive(&mut self, t: u32, rank: u32, b: BarrierWait) {
        // (`last_rank` is 0 before the interval's first arrival.)
        self.unordered |= rank < self.last_rank;
        self.last_rank = rank;
        self.waiting.push(t);
        self.count += u64::from(b.predicate);
        match self.first {
            None => self.first = Some((b.kind, b.location)),
            Some((kind, loc)) => {
                self.mixed |= kind != b.kind || !same_site(loc, b.location);
            }
        }
    }

    /// The barrier's result for `live` threads taking part.
    fn value(&self, kind: BarrierKind, live: u32) -> u64 {
        barrier_value(kind, self.count, u64::from(live))
    }
}

/// What a barrier of `kind` returns when `count` of the `live` threads at it have a true
/// predicate.
fn barrier_value(kind: BarrierKind, count: u64, live: u64) -> u64 {
    match kind {
        BarrierKind::Sync => 0,
        BarrierKind::Count => count,
        BarrierKind::And => u64::from(count == live),
        BarrierKind::Or => u64::from(count > 0),
    }
}

/// The scheduling state of one block.
struct Sched<'a> {
    block: &'a BlockState,
    /// The launch's progress count of the worker running the block
    /// ([`Launch::note_progress`]), looked up once.
    progress_slot: &'a core::sync::atomic::AtomicU64,
    n: u32,
    /// Each thread's state. A thread writes its own when it suspends (`state::suspend`,
    /// through [`ThreadState::state`]), so that what it waits at reaches the scheduler
    /// without a copy: read right after the switch, a copy stalled on the thread's stores.
    states: Vec<Cell<St>>,
    /// Each thread's stack pointer at its last suspension (0: never suspended), written by
    /// the thread (`state::suspend`, through [`ThreadState::sp`]): `drain` prefetches
    /// the next thread's stack lines from it.
    sps: Vec<Cell<usize>>,
    ready: ReadyQueue,
    rank: Vec<u32>,
    /// The threads in rank order (the inverse of `rank`).
    order: Vec<u32>,
    /// Whether a seed shuffled the ranks (without one, a thread's rank is its linear
    /// index).
    shuffled: bool,
    at_barrier: u32,
    /// The block barrier's arrivals in the current interval, kept as they come so that its
    /// completion visits only the waiting threads.
    barrier: BarrierArrivals,
    done: u32,
    /// Lanes waiting at a warp collective, per warp.
    waiting: Vec<u32>,
    /// Lanes exited, per warp.
    done_lanes: Vec<u32>,
    /// Lanes that exist, per warp.
    exist: Vec<u32>,
    /// Threads suspended in an `mbarrier` poll.
    polling: u32,
    /// `block.phases_completed` when the polls were last checked.
    phases_seen: u64,
    /// Threads waiting at a warpgroup collective, per warpgroup.
    at_group: Vec<u32>,
    /// Threads waiting at each named barrier.
    at_named: [Vec<u32>; NAMED_BARRIERS as usize],
    /// Bit `id` set while `at_named[id]` is not empty (a thread's exit then visits only
    /// those barriers).
    named_busy: u32,
    /// Threads waiting at the cluster barrier (`barrier.cluster.wait`).
    at_cluster: u32,
    /// Steps in a row that ended in a spin (any other step resets it).
    spins: u64,
    /// Since when, and at which progress count ([`Sched::progress_count`]), the block's
    /// steps have all been spins and that count has not moved.
    quiet: Option<(std::time::Instant, u64)>,
    /// `block.writes` when last published to the launch's progress count.
    writes_seen: u64,
}

/// How long a block may do nothing but spin, with no progress anywhere in the launch,
/// before it is reported as livelocked (long enough that a block on another worker, in
/// the middle of a debug build's long stretch between barriers, is not mistaken for one;
/// short enough to be a report rather than a hang).
const LIVELOCK_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// The clock is read once per this many spins in a row.
const SPINS_PER_CHECK: u64 = 64;

impl Sched<'_> {
    fn kernel(&self) -> &'static str {
        self.block.launch().kernel
    }

    /// A thread's step ended other than in a spin (at a barrier, collective or poll, or
    /// its exit): progress for this block and, through its worker's count, for blocks
    /// spinning on it.
    #[inline]
    fn stepped(&mut self) {
        // (`quiet` is set only after spins, so it is `None` already when `spins` is 0.)
        if self.spins != 0 {
            self.spins = 0;
            self.quiet = None;
        }
        WorkerProgress::note(self.progress_slot);
    }

    /// What a spinning block waits for to change: every worker's steps and atomic writes
    /// (this block's as last published), and this block's `mbarrier` operations.
    fn progress_count(&self) -> u64 {
        self.block
            .launch()
            .total_progress()
            .wrapping_add(self.block.progress.get())
            .wrapping_add(self.block.phases_completed.get())
    }

    /// A thread's step ended in a spin. Once the block's steps have been spins only for
    /// [`LIVELOCK_AFTER`], with no progress counted anywhere meanwhile, records the
    /// livelock (the block's error: `drain` stops).
    fn spun(&mut self) {
        self.spins += 1;
        if !self.spins.is_multiple_of(SPINS_PER_CHECK) {
            return;
        }
        // Atomics that changed memory in these spins are progress for blocks that spin on
        // this one.
        let writes = self.block.writes.get();
        if writes != self.writes_seen {
            self.writes_seen = writes;
            self.block.launch().note_progress(self.block.worker);
        }
        let count = self.progress_count();
        match self.quiet {
            Some((since, seen)) if seen == count => {
                if since.elapsed() >= LIVELOCK_AFTER {
                    let err = self.livelock();
                    self.block.record(err);
                }
            }
            _ => self.quiet = Some((std::time::Instant::now(), count)),
        }
    }

    /// The livelock report: every spinning thread at its last spin, and a thread of the
    /// block waiting at something else, if one is.
    fn livelock(&self) -> EmuError {
        let spinning = (0..self.n)
            .filter(|&t| matches!(self.states[t as usize].get(), St::Wait(Suspend::Spin(_))))
            .map(|t| self.site(t))
            .collect();
        let elsewhere = (0..self.n)
            .find(|&t| matches!(self.states[t as usize].get(), St::Wait(s) if !matches!(s, Suspend::Spin(_))))
            .map(|t| Box::new(self.site(t)));
        EmuError::Livelock {
            kernel: self.kernel(),
            block: self.block.idx,
            spinning,
            elsewhere,
        }
    }

    /// Thread `t` suspended at what its state says (the thread wrote it).
    fn arrive(&mut self, t: u32) {
        let St::Wait(s) = self.states[t as usize].get() else {
            return;
        };
        match s {
            // Ready again at once, behind the others; the state keeps the spin's site.
            Suspend::Spin(_) => self.ready.push_back(t),
            Suspend::Yield => {
                self.states[t as usize].set(St::Ready(0));
                self.ready.push_back(t);
            }
            Suspend::MBarrier(_) => self.polling += 1,
            Suspend::Named(w) => {
                self.at_named[w.id as usize].push(t);
                self.named_busy |= 1 << w.id;
                self.try_named(w.id);
            }
            Suspend::Group(_) => self.arrive_group(t),
            Suspend::Barrier(b) => self.arrive_barrier(t, b),
            Suspend::Cluster(_) => self.at_cluster += 1,
            Suspend::Warp(op) => self.arrive_warp(t, op.mask),
        }
    }

    /// Thread `t` arrived at the block barrier.
    #[inline(always)]
    fn arrive_barrier(&mut self, t: u32, b: BarrierWait) {
        self.at_barrier += 1;
        self.barrier.arrive(t, self.rank[t as usize], b);
        self.try_barrier();
    }

    /// Thread `t` arrived at a warp collective with `mask` (the rest of it is in its state).
    #[inline(always)]
    fn arrive_warp(&mut self, t: u32, mask: u32) {
        let w = (t / 32) as usize;
        let lane_bit = 1 << (t % 32);
        self.waiting[w] |= lane_bit;
        // The common arrival: a well-formed mask (existing lanes, the caller among them,
        // none exited) with lanes still to come; `try_warp_op` would wait without a
        // finding.
        let (exist, done) = (self.exist[w], self.done_lanes[w]);
        if mask & lane_bit != 0
            && mask & !exist == 0
            && mask & done == 0
            && mask & !self.waiting[w] != 0
        {
            return;
        }
        if let St::Wait(Suspend::Warp(op)) = self.states[t as usize].get() {
            self.try_warp_op(t, op);
        }
    }

    /// Thread `t` arrived at a warpgroup collective.
    #[inline(never)]
    fn arrive_group(&mut self, t: u32) {
        let g = (t / 128) as usize;
        self.at_group[g] += 1;
        if (g as u32 + 1) * 128 > self.n {
            // The warpgroup is not whole: it can never complete.
            self.group_divergence(t, self.n);
        } else if self.at_group[g] == 128 {
            self.complete_group(g as u32);
        }
    }

    fn exit(&mut self, t: u32) {
        self.states[t as usize].set(St::Done);
        self.done += 1;
        self.progress();
        let w = (t / 32) as usize;
        self.done_lanes[w] |= 1 << (t % 32);
        // An exit may complete a named barrier its warp-mates wait at (a warp arrives as a
        // whole, its exited lanes counted).
        let mut busy = self.named_busy;
        while busy != 0 {
            let id = busy.trailing_zeros();
            busy &= busy - 1;
            if self.at_named[id as usize].iter().any(|&u| u / 32 == t / 32) {
                self.try_named(id);
                if self.block.error.borrow().is_some() {
                    return;
                }
            }
        }
        // An exit dooms a warpgroup collective its group waits at.
        if self.at_group[(t / 128) as usize] > 0 {
            let g = t / 128;
            if let Some(u) = (128 * g..(128 * g + 128).min(self.n))
                .find(|&u| matches!(self.states[u as usize].get(), St::Wait(Suspend::Group(_))))
            {
                self.group_divergence(u, t);
                return;
            }
        }
        self.block.live.borrow_mut()[w] &= !(1 << (t % 32));
        // An exit may complete (or doom) the warp's pending collectives and the barrier.
        let mut pending = self.waiting[w];
        while pending != 0 {
            let lane = pending.trailing_zeros();
            pending &= pending - 1;
            let u = w as u32 * 32 + lane;
            if let St::Wait(Suspend::Warp(op)) = self.states[u as usize].get() {
                self.try_warp_op(u, op);
                if self.block.error.borrow().is_some() {
                    return;
                }
            }
        }
        self.try_barrier();
    }

    fn site(&self, t: u32) -> ThreadSite {
        let thread = self.block.tid_of(t);
        match self.states[t as usize].get() {
            St::Wait(Suspend::Barrier(b)) => ThreadSite {
                thread,
                waits_at: b.kind.name(),
                location: Some(SourceLocation::from_std(b.location)),
            },
            St::Wait(Suspend::Warp(op)) => ThreadSite {
                thread,
                waits_at: op.kind.name(),
                location: Some(SourceLocation::from_std(op.location)),
            },
            St::Wait(Suspend::Named(w)) => ThreadSite {
                thread,
                waits_at: NAMED_SITES[w.id as usize],
                location: Some(SourceLocation::from_std(w.location)),
            },
            St::Wait(Suspend::Group(w)) => ThreadSite {
                thread,
                waits_at: w.what,
                location: Some(SourceLocation::from_std(w.location)),
            },
            St::Wait(Suspend::MBarrier(w)) => ThreadSite {
                thread,
                waits_at: w.what,
                location: Some(SourceLocation::from_std(w.location)),
            },
            St::Wait(Suspend::Cluster(w)) => ThreadSite {
                thread,
                waits_at: "cluster barrier wait",
                location: Some(SourceLocation::from_std(w.location)),
            },
            St::Done => ThreadSite {
                thread,
                waits_at: "exited",
                location: None,
            },
            St::Wait(Suspend::Spin(w)) => ThreadSite {
                thread,
                waits_at: w.what,
                location: Some(SourceLocation::from_std(w.location)),
            },
            // (A yield leaves the thread ready at once: never a waiting state.)
            St::Ready(_) | St::Wait(Suspend::Yield) => ThreadSite {
                thread,
                waits_at: "running",
                location: None,
            },
        }
    }

    /// Completes the block barrier if every thread not exited waits there (checked inline:
    /// most arrivals leave it waiting).
    #[inline]
    fn try_barrier(&mut self) {
        if self.at_barrier == 0 || self.at_barrier + self.done < self.n {
            return;
        }
        self.complete_barrier();
    }

    #[inline(never)]
    fn complete_barrier(&mut self) {
        let checks = self.block.launch().options.checks;
        // Every waiting thread at the same call of the same barrier kind, none exited: the
        // common case, from the arrivals alone.
        if let (false, Some((kind, _)), false) = (
            self.barrier.mixed,
            self.barrier.first,
            self.done > 0 && checks.divergence,
        ) {
            let value = self.barrier.value(kind, self.n - self.done);
            self.release_barrier(value);
            return;
        }
        let mut first: Option<(u32, BarrierKind, &'static core::panic::Location<'static>)> = None;
        let (mut count, mut exited) = (0u64, None);
        for t in 0..self.n {
            match self.states[t as usize].get() {
                St::Wait(Suspend::Barrier(b)) => {
                    count += u64::from(b.predicate);
                    match first {
                        None => first = Some((t, b.kind, b.location)),
                        Some((f, kind, loc)) => {
                            if checks.divergence && (kind != b.kind || !same_site(loc, b.location))
                            {
                                let err = EmuError::BarrierDivergence {
                                    kernel: self.kernel(),
                                    block: self.block.idx,
                                    waiting: Box::new(self.site(f)),
                                    other: Box::new(self.site(t)),
                                };
                                self.block.record(err);
                                return;
                            }
                        }
                    }
                }
                St::Done => {
                    exited.get_or_insert(t);
                }
                _ => {}
            }
        }
        let Some((f, kind, _)) = first else { return };
        if let (Some(e), true) = (exited, checks.divergence) {
            let err = EmuError::BarrierDivergence {
                kernel: self.kernel(),
                block: self.block.idx,
                waiting: Box::new(self.site(f)),
                other: Box::new(self.site(e)),
            };
            self.block.record(err);
            return;
        }
        let value = barrier_value(kind, count, u64::from(self.n - self.done));
        self.release_barrier(value);
    }

    /// Completes the block barrier: a new interval, and its waiting threads ready (in their
    /// scheduling rank's order) with the barrier's `value`.
    fn release_barrier(&mut self, value: u64) {
        self.block.end_interval();
        self.block.epoch.set(self.block.epoch.get() + 1);
        self.at_barrier = 0;
        self.progress();
        let mut released = core::mem::take(&mut self.barrier.waiting);
        if self.barrier.unordered {
            // The waiting threads are those whose state is at the barrier: in rank order,
            // the ranks' threads filtered (linear where sorting `released` by rank was a
            // visible share of the reduction's steps).
            released.clear();
            released.extend(self.order.iter().copied().filter(|&t| {
                matches!(self.states[t as usize].get(), St::Wait(Suspend::Barrier(_)))
            }));
        }
        for &t in &released {
            self.states[t as usize].set(St::Ready(value));
            self.ready.push_back(t);
        }
        released.clear();
        self.barrier = BarrierArrivals {
            waiting: released,
            ..BarrierArrivals::default()
        };
    }

    fn warp_mask_error(&self, t: u32, op: WarpWait, lanes: u32, reason: &'static str) -> EmuError {
        EmuError::WarpMask {
            kernel: self.kernel(),
            block: self.block.idx,
            thread: self.block.tid_of(t),
            op: op.kind.name(),
            mask: op.mask,
            lanes,
            reason,
            location: SourceLocation::from_std(op.location),
        }
    }

    /// Completes `op` (the collective lane `t` waits at) if every lane it names has arrived.
    #[inline(never)]
    fn try_warp_op(&mut self, t: u32, op: WarpWait) {
        let w = (t / 32) as usize;
        let base = w as u32 * 32;
        let lane_bit = 1u32 << (t % 32);
        let checks = self.block.launch().options.checks;
        let missing = op.mask & !self.exist[w];
        if missing != 0 && checks.divergence {
            let err = self.warp_mask_error(
                t,
                op,
                missing,
                "lanes named by the mask do not exist (they are past the end of the block)",
            );
            self.block.record(err);
            return;
        }
        let mut parts = op.mask & self.exist[w];
        if op.mask & lane_bit == 0 {
            if checks.divergence {
                let err = self.warp_mask_error(
                    t,
                    op,
                    lane_bit,
                    "the mask does not name the calling lane",
                );
                self.block.record(err);
                return;
            }
            parts |= lane_bit;
        }
        let exited = parts & self.done_lanes[w];
        if exited != 0 && checks.divergence {
            let err = self.warp_mask_error(t, op, exited, "lanes named by the mask have exited");
            self.block.record(err);
            return;
        }
        let parts = parts & !exited;
        if parts & !self.waiting[w] != 0 {
            return;
        }
        let mut values = [0u64; 32];
        let mut bs = [0u32; 32];
        let mut rest = parts;
        while rest != 0 {
            let lane = rest.trailing_zeros();
            rest &= rest - 1;
            match self.states[(base + lane) as usize].get() {
                St::Wait(Suspend::Warp(o)) if o.kind == op.kind && o.mask == op.mask => {
                    values[lane as usize] = o.value;
                    bs[lane as usize] = o.b;
                }
                _ => return,
            }
        }
        let results = collective(op.kind, parts, &values, &bs);
        self.progress();
        if op.kind == WarpKind::SyncWarp {
            let epoch = self.block.epoch.get();
            let syncs = &mut self.block.warp_syncs.borrow_mut()[w];
            if syncs.epoch != epoch {
                *syncs = WarpSyncs {
                    epoch,
                    masks: Vec::new(),
                };
            }
            syncs.masks.push(parts);
        }
        self.waiting[w] &= !parts;
        // The lanes, ready in their scheduling rank's order: lane order unless a seed
        // shuffled the ranks.
        let mut released = [0u32; 32];
        let mut count = 0;
        let mut rest = parts;
        while rest != 0 {
            let lane = rest.trailing_zeros();
            rest &= rest - 1;
            self.states[(base + lane) as usize].set(St::Ready(results[lane as usize]));
            released[count] = base + lane;
            count += 1;
        }
        let released = &mut released[..count];
        if self.shuffled {
            released.sort_unstable_by_key(|&u| self.rank[u as usize]);
        }
        self.ready.extend(released.iter().copied());
    }

    /// Completes named barrier `id` if the warps whose every live lane waits there make up
    /// its thread count (a warp counts 32, exited lanes included: PTX ISA §9.7.13.1, as
    /// `cuda_std::thread::named_barrier_sync` documents).
    #[inline(never)]
    fn try_named(&mut self, id: u32) {
        let waiting = &self.at_named[id as usize];
        let Some(&first) = waiting.first() else {
            return;
        };
        let St::Wait(Suspend::Named(w)) = self.states[first as usize].get() else {
            return;
        };
        let mut lanes_waiting = std::collections::BTreeMap::<u32, u32>::new();
        for &u in waiting {
            if let St::Wait(Suspend::Named(v)) = self.states[u as usize].get()
                && v.threads != w.threads
            {
                let err = EmuError::BarrierDivergence {
                    kernel: self.kernel(),
                    block: self.block.idx,
                    waiting: Box::new(self.site(first)),
                    other: Box::new(self.site(u)),
                };
                self.block.record(err);
                return;
            }
            *lanes_waiting.entry(u / 32).or_default() |= 1 << (u % 32);
        }
        let whole = lanes_waiting
            .iter()
            .filter(|&(&warp, &lanes)| {
                let live = self.exist[warp as usize] & !self.done_lanes[warp as usize];
                lanes & live == live
            })
            .count() as u32;
        if whole * 32 < w.threads {
            return;
        }
        let mut released = core::mem::take(&mut self.at_named[id as usize]);
        self.named_busy &= !(1 << id);
        self.block.end_interval();
        self.block.epoch.set(self.block.epoch.get() + 1);
        self.progress();
        released.sort_by_key(|&u| self.rank[u as usize]);
        for u in released {
            self.states[u as usize].set(St::Ready(0));
            self.ready.push_back(u);
        }
    }

    /// Records that thread `waiting`'s warpgroup collective cannot complete because of
    /// thread `other` (exited, elsewhere, or missing from a partial warpgroup).
    fn group_divergence(&self, waiting: u32, other: u32) {
        let err = EmuError::BarrierDivergence {
            kernel: self.kernel(),
            block: self.block.idx,
            waiting: Box::new(self.site(waiting)),
            other: Box::new(if other < self.n {
                self.site(other)
            } else {
                ThreadSite {
                    thread: [other, 0, 0],
                    waits_at: "missing (the block does not hold the whole warpgroup)",
                    location: None,
                }
            }),
        };
        self.block.record(err);
    }

    /// Completes the warpgroup collective all 128 threads of warpgroup `g` wait at.
    fn complete_group(&mut self, g: u32) {
        let threads: Vec<u32> = (128 * g..128 * g + 128).collect();
        let records: Vec<(u32, usize)> = threads
            .iter()
            .map(|&t| match self.states[t as usize].get() {
                St::Wait(Suspend::Group(w)) => (t, w.record),
                _ => (t, 0),
            })
            .collect();
        // SAFETY: every thread of the group is suspended in `wgmma::mma_async`, its record
        // live on its stack.
        if let Err(e) = unsafe { super::wgmma::complete(self.block, &records) } {
            self.block.record(e);
            return;
        }
        self.at_group[g as usize] = 0;
        self.progress();
        let mut released = threads;
        released.sort_by_key(|&t| self.rank[t as usize]);
        for t in released {
            self.states[t as usize].set(St::Ready(0));
            self.ready.push_back(t);
        }
    }

    fn progress(&self) {
        self.block.progress.set(self.block.progress.get() + 1);
    }

    /// Makes the threads whose `mbarrier` poll is now satisfied (a phase completed since
    /// the last check) runnable, with the poll's result `true`.
    #[inline]
    fn wake_polls(&mut self) {
        let completed = self.block.phases_completed.get();
        if self.polling == 0 || completed == self.phases_seen {
            return;
        }
        self.wake_polls_now(completed);
    }

    #[inline(never)]
    fn wake_polls_now(&mut self, completed: u64) {
        self.phases_seen = completed;
        let mbarriers = self.block.mbarriers.borrow();
        let mut woken: Vec<u32> = (0..self.n)
            .filter(|&t| {
                matches!(self.states[t as usize].get(),
                    St::Wait(Suspend::MBarrier(w)) if mbarriers.phase_done(w.address, w.parity))
            })
            .collect();
        drop(mbarriers);
        woken.sort_by_key(|&t| self.rank[t as usize]);
        for t in woken {
            self.states[t as usize].set(St::Ready(1));
            self.polling -= 1;
            self.ready.push_back(t);
        }
    }

    /// Makes the threads waiting at the cluster barrier for a phase that has completed
    /// runnable.
    #[inline]
    fn wake_cluster(&mut self) {
        if self.at_cluster == 0 {
            return;
        }
        self.wake_cluster_now();
    }

    #[inline(never)]
    fn wake_cluster_now(&mut self) {
        let phase = self.block.cluster().phase.get();
        let mut woken: Vec<u32> = (0..self.n)
            .filter(|&t| {
                matches!(self.states[t as usize].get(),
                    St::Wait(Suspend::Cluster(w)) if w.phase < phase)
            })
            .collect();
        woken.sort_by_key(|&t| self.rank[t as usize]);
        for t in woken {
            self.states[t as usize].set(St::Ready(0));
            self.at_cluster -= 1;
            self.ready.push_back(t);
        }
    }

    /// Resumes every thread suspended in an `mbarrier` poll with the result `false`: the
    /// poll's time limit passed (nothing else could run).
    fn time_out_polls(&mut self) {
        let mut woken: Vec<u32> = (0..self.n)
            .filter(|&t| {
                matches!(
                    self.states[t as usize].get(),
                    St::Wait(Suspend::MBarrier(_))
                )
            })
            .collect();
        woken.sort_by_key(|&t| self.rank[t as usize]);
        for t in woken {
            self.states[t as usize].set(St::Ready(0));
            self.ready.push_back(t);
        }
        self.polling = 0;
    }

    /// Nothing can run but some threads have not exited: the error that explains it.
    fn deadlock(&self) -> EmuError {
        // Threads polling an mbarrier phase that cannot complete come first: what the
        // others wait for (a barrier, a collective) is usually downstream of it.
        if let Some(t) = (0..self.n).find(|&t| {
            matches!(
                self.states[t as usize].get(),
                St::Wait(Suspend::MBarrier(_))
            )
        }) {
            let St::Wait(Suspend::MBarrier(w)) = self.states[t as usize].get() else {
                unreachable!()
            };
            let waiters: Vec<Dim3> = (0..self.n)
                .filter(|&u| {
                    matches!(self.states[u as usize].get(),
                        St::Wait(Suspend::MBarrier(v)) if v.address == w.address)
                })
                .map(|u| self.block.tid_of(u))
                .collect();
            let elsewhere = (0..self.n).find(|&u| {
                !matches!(
                    self.states[u as usize].get(),
                    St::Done | St::Wait(Suspend::MBarrier(_))
                )
            });
            return super::mbarrier::deadlock(
                self.block,
                w,
                self.site(t),
                waiters,
                elsewhere.map(|u| self.site(u)),
            );
        }
        // A named barrier that too few threads reach: one of them, and a thread elsewhere.
        if let Some(t) = (0..self.n)
            .find(|&t| matches!(self.states[t as usize].get(), St::Wait(Suspend::Named(_))))
        {
            let St::Wait(Suspend::Named(w)) = self.states[t as usize].get() else {
                unreachable!()
            };
            let other = (0..self.n)
                .find(|&u| {
                    !matches!(self.states[u as usize].get(),
                        St::Wait(Suspend::Named(v)) if v.id == w.id)
                })
                .unwrap_or(t);
            return EmuError::BarrierDivergence {
                kernel: self.kernel(),
                block: self.block.idx,
                waiting: Box::new(self.site(t)),
                other: Box::new(self.site(other)),
            };
        }
        // A warpgroup collective: a thread of the group that is elsewhere.
        if let Some(t) = (0..self.n)
            .find(|&t| matches!(self.states[t as usize].get(), St::Wait(Suspend::Group(_))))
        {
            let g = t / 128;
            let other = (128 * g..128 * g + 128)
                .find(|&u| {
                    u >= self.n
                        || !matches!(self.states[u as usize].get(), St::Wait(Suspend::Group(_)))
                })
                .unwrap_or(t);
            let waiting = t;
            let site = |u: u32| {
                if u < self.n {
                    self.site(u)
                } else {
                    ThreadSite {
                        thread: [u, 0, 0],
                        waits_at: "missing",
                        location: None,
                    }
                }
            };
            return EmuError::BarrierDivergence {
                kernel: self.kernel(),
                block: self.block.idx,
                waiting: Box::new(site(waiting)),
                other: Box::new(site(other)),
            };
        }
        // A collective first: the lanes it names that are elsewhere.
        for t in 0..self.n {
            if let St::Wait(Suspend::Warp(op)) = self.states[t as usize].get() {
                let w = (t / 32) as usize;
                let base = w as u32 * 32;
                let mut missing = 0;
                let mut rest = op.mask & self.exist[w];
                while rest != 0 {
                    let lane = rest.trailing_zeros();
                    rest &= rest - 1;
                    let same = matches!(self.states[(base + lane) as usize].get(),
                        St::Wait(Suspend::Warp(o)) if o.kind == op.kind && o.mask == op.mask);
                    if !same {
                        missing |= 1 << lane;
                    }
                }
                return self.warp_mask_error(
                    t,
                    op,
                    missing,
                    "lanes named by the mask never arrive",
                );
            }
        }
        // Otherwise threads wait at different barriers.
        let waiting = (0..self.n)
            .find(|&t| matches!(self.states[t as usize].get(), St::Wait(Suspend::Barrier(_))))
            .unwrap_or(0);
        let key = |t: u32| match self.states[t as usize].get() {
            St::Wait(Suspend::Barrier(b)) => Some((b.kind, b.location)),
            _ => None,
        };
        let other = (0..self.n)
            .find(|&t| key(t) != key(waiting))
            .unwrap_or(waiting);
        EmuError::BarrierDivergence {
            kernel: self.kernel(),
            block: self.block.idx,
            waiting: Box::new(self.site(waiting)),
            other: Box::new(self.site(other)),
        }
    }
}

/// The result of a collective for each lane of `parts` (PTX ISA §9.7: `shfl.sync`'s
/// pseudo-code, `vote.sync`, `match.sync`, `redux.sync`).
fn collective(kind: WarpKind, parts: u32, values: &[u64; 32], bs: &[u32; 32]) -> [u64; 32] {
    let mut out = [0u64; 32];
    let lanes = || (0..32u32).filter(move |l| parts & (1 << l) != 0);
    match kind {
        WarpKind::Shfl { mode, c } => {
            let clamp = c & 0x1f;
            let segmask = (c >> 8) & 0x1f;
            for lane in lanes() {
                // `bval[4:0] = b[4:0]`: only the low five bits of the lane operand count
                // (PTX ISA §9.7.9.6, `shfl.sync`), so lane 37 reads lane 5.
                let b = bs[lane as usize] & 0x1f;
                let max_lane = (lane & segmask) | (clamp & !segmask);
                let min_lane = lane & segmask;
                let (j, ok) = match mode {
                    0 => {
                        let j = min_lane | (b & !segmask);
                        (j as i64, j <= max_lane)
                    }
                    1 => {
                        let j = i64::from(lane) - i64::from(b);
                        (j, j >= i64::from(max_lane))
                    }
                    2 => {
                        let j = i64::from(lane) + i64::from(b);
                        (j, j <= i64::from(max_lane))
                    }
                    _ => {
                        let j = lane ^ b;
                        (i64::from(j), j <= max_lane)
                    }
                };
                let src = if ok && (0..32).contains(&j) && parts & (1 << j) != 0 {
                    j as usize
                } else {
                    lane as usize
                };
                out[lane as usize] = values[src];
            }
        }
        WarpKind::VoteAll | WarpKind::VoteAny | WarpKind::VoteUni | WarpKind::Ballot => {
            let ballot = lanes()
                .filter(|&l| values[l as usize] != 0)
                .fold(0u32, |m, l| m | (1 << l));
            let r = match kind {
                WarpKind::VoteAll => u64::from(ballot == parts),
                WarpKind::VoteAny => u64::from(ballot != 0),
                WarpKind::VoteUni => u64::from(ballot == parts || ballot == 0),
                _ => u64::from(ballot),
            };
            for lane in lanes() {
                out[lane as usize] = r;
            }
        }
        WarpKind::MatchAny => {
            for lane in lanes() {
                let v = values[lane as usize];
                out[lane as usize] = u64::from(
                    lanes()
                        .filter(|&l| values[l as usize] == v)
                        .fold(0u32, |m, l| m | (1 << l)),
                );
            }
        }
        WarpKind::MatchAll => {
            let first = lanes().next().map(|l| values[l as usize]);
            let all = lanes().all(|l| Some(values[l as usize]) == first);
            for lane in lanes() {
                out[lane as usize] = if all { (1 << 32) | u64::from(parts) } else { 0 };
            }
        }
        WarpKind::Redux { op, signed } => {
            let vals = lanes().map(|l| values[l as usize] as u32);
            let r = match (op, signed) {
                (0, _) => vals.fold(0u32, u32::wrapping_add),
                (1, false) => vals.min().unwrap_or(0),
                (1, true) => vals.map(|v| v as i32).min().unwrap_or(0) as u32,
                (2, false) => vals.max().unwrap_or(0),
                (2, true) => vals.map(|v| v as i32).max().unwrap_or(0) as u32,
                (3, _) => vals.fold(u32::MAX, |a, v| a & v),
                (4, _) => vals.fold(0, |a, v| a | v),
                _ => vals.fold(0, |a, v| a ^ v),
            };
            for lane in lanes() {
                out[lane as usize] = u64::from(r);
            }
        }
        WarpKind::SyncWarp => {}
        // SAFETY: every lane of `parts` is suspended in `tensor::rendezvous` with its
        // record's address as its value.
        WarpKind::Tensor(op) => unsafe { super::tensor::complete(op, parts, values) },
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::device::{self, BarrierKind, MemScope, WarpKind};
    use crate::{EmuError, EmuOptions, launch};
    use core::ffi::c_void;
    use core::sync::atomic::Ordering::Relaxed;
    use cust_core::launch::Kernel;

    fn run(name: &'static str, body: unsafe fn(*const *mut c_void)) -> Result<(), EmuError> {
        run_n(name, body, 256)
    }

    /// Runs `body` on one block of `threads` threads with 256 bytes of dynamic shared memory.
    fn run_n(
        name: &'static str,
        body: unsafe fn(*const *mut c_void),
        threads: u32,
    ) -> Result<(), EmuError> {
        let kernel: Kernel<(), ()> = Kernel::__new_with_host(name, body);
        // SAFETY: the bodies take no parameters and touch only shared memory.
        unsafe {
            launch(
                &kernel,
                [1, 1, 1],
                [threads, 1, 1],
                256,
                &[],
                &EmuOptions::default(),
            )
        }
        .map(|_| ())
    }

    fn lane() -> u32 {
        device::thread_idx("test")[0] % 32
    }

    /// A checked access of shared word `i` (as `shared::read` / `shared::write` make).
    #[track_caller]
    fn word(i: u32, kind: device::AccessKind) {
        let p = device::dynamic_shared("test").0 as usize + 4 * i as usize;
        device::check_access(p, 4, kind, core::panic::Location::caller());
    }

    fn shfl_idx(mask: u32) -> u64 {
        device::warp_op(
            "warp::shfl_sync",
            WarpKind::Shfl { mode: 0, c: 0x1f },
            mask,
            7,
            0,
        )
    }

    /// A full-mask shuffle in a block of 100 threads: lanes 4..32 of warp 3 do not exist.
    unsafe fn full_mask_partial_warp(_: *const *mut c_void) {
        shfl_idx(u32::MAX);
    }

    /// The same shuffle over the lanes that exist.
    unsafe fn live_mask_partial_warp(_: *const *mut c_void) {
        shfl_idx(device::live_lanes("test"));
    }

    /// Each lane writes its word; each half-warp then meets at its own `sync_warp`; lane `l`
    /// reads the word of lane `l ^ 16`, in the other half (or, with `whole`, after one
    /// `sync_warp` of the whole warp).
    fn exchange(whole: bool) {
        let l = lane();
        word(l, device::AccessKind::Write);
        let mask = if whole {
            u32::MAX
        } else if l < 16 {
            0x0000_ffff
        } else {
            0xffff_0000
        };
        device::warp_op("warp::sync_warp", WarpKind::SyncWarp, mask, 0, 0);
        word(l ^ 16, device::AccessKind::Read);
    }

    unsafe fn half_warp_syncs(_: *const *mut c_void) {
        exchange(false);
    }

    unsafe fn whole_warp_sync(_: *const *mut c_void) {
        exchange(true);
    }

    /// Thread 0 reads word 5 before thread 1 writes it, in one barrier interval.
    unsafe fn read_before_write(_: *const *mut c_void) {
        match device::thread_idx("test")[0] {
            0 => word(5, device::AccessKind::Read),
            1 => word(5, device::AccessKind::Write),
            _ => {}
        }
    }

    /// Thread 1 writes word 5, a barrier, thread 0 reads it; then thread 0 reads word 6,
    /// which nobody writes.
    unsafe fn written_then_never(_: *const *mut c_void) {
        let t = device::thread_idx("test")[0];
        if t == 1 {
            word(5, device::AccessKind::Write);
        }
        device::barrier("thread::sync_threads", BarrierKind::Sync, false);
        if t == 0 {
            word(5, device::AccessKind::Read);
            word(6, device::AccessKind::Read);
        }
    }

    #[test]
    fn a_collective_naming_lanes_past_the_block_is_reported() {
        let err =
            run_n("full_mask_partial_warp", full_mask_partial_warp, 100).expect_err("reported");
        let EmuError::WarpMask {
            thread,
            lanes,
            reason,
            ..
        } = &err
        else {
            panic!("expected WarpMask, got {err}")
        };
        assert_eq!((*thread, *lanes), ([96, 0, 0], 0xffff_fff0), "{err}");
        assert!(reason.contains("do not exist"), "{err}");
        run_n("live_mask_partial_warp", live_mask_partial_warp, 100).expect("clean");
    }

    #[test]
    fn sync_warp_orders_only_the_lanes_in_its_mask() {
        let err = run_n("half_warp_syncs", half_warp_syncs, 32).expect_err("race");
        let EmuError::SharedRace { first, second, .. } = &err else {
            panic!("expected SharedRace, got {err}")
        };
        // Lane 0 reads lane 16's word: no `sync_warp` named both.
        assert_eq!(
            (first.thread, second.thread),
            ([16, 0, 0], [0, 0, 0]),
            "{err}"
        );
        run_n("whole_warp_sync", whole_warp_sync, 32).expect("clean");
    }

    #[test]
    fn an_uninitialised_read_that_another_thread_then_writes_is_the_race() {
        let err = run_n("read_before_write", read_before_write, 32).expect_err("race");
        let EmuError::SharedRace { first, second, .. } = &err else {
            panic!("expected SharedRace, got {err}")
        };
        assert_eq!(
            (first.thread, first.kind, second.thread, second.kind),
            (
                [0, 0, 0],
                crate::AccessKind::Read,
                [1, 0, 0],
                crate::AccessKind::Write
            ),
            "{err}"
        );
        // Written before a barrier: clean; never written: the uninitialised read, reported
        // when the block ends.
        let err = run_n("written_then_never", written_then_never, 32).expect_err("uninit");
        let EmuError::UninitRead { offset, thread, .. } = &err else {
            panic!("expected UninitRead, got {err}")
        };
        assert_eq!((*offset, *thread), (24, [0, 0, 0]), "{err}");
    }

    /// Each warpgroup meets at its own named barrier, twice.
    unsafe fn per_warpgroup(_: *const *mut c_void) {
        let g = device::thread_idx("test")[0] / 128;
        for _ in 0..2 {
            device::named_barrier("thread::named_barrier_sync", 1 + g, 128);
        }
    }

    /// Only 96 of the 128 threads barrier 1 waits for come.
    unsafe fn too_few(_: *const *mut c_void) {
        if device::thread_idx("test")[0] < 96 {
            device::named_barrier("thread::named_barrier_sync", 1, 128);
        }
    }

    /// Thread 0 spins with `nanosleep` forever; the others wait at a barrier it never
    /// reaches.
    unsafe fn sleeps_forever(_: *const *mut c_void) {
        if device::thread_idx("test")[0] == 0 {
            loop {
                device::spin("thread::nanosleep");
            }
        }
        device::barrier("thread::sync_threads", BarrierKind::Sync, false);
    }

    #[test]
    fn a_block_that_only_spins_is_a_livelock_naming_the_spinner_and_a_waiter() {
        let start = std::time::Instant::now();
        let err = run_n("sleeps_forever", sleeps_forever, 64).expect_err("livelock");
        let EmuError::Livelock {
            spinning,
            elsewhere,
            ..
        } = &err
        else {
            panic!("expected Livelock, got {err}")
        };
        let spinning: std::vec::Vec<_> = spinning.iter().map(|s| (s.thread, s.waits_at)).collect();
        assert_eq!(spinning, [([0, 0, 0], "thread::nanosleep")], "{err}");
        let elsewhere = elsewhere.as_deref().expect("threads wait at the barrier");
        assert_eq!(
            (elsewhere.thread, elsewhere.waits_at),
            ([1, 0, 0], "sync_threads"),
            "{err}"
        );
        assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
    }

    static FLAG: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

    /// Block 1's thread 0 spins on `FLAG`, which block 0 sets after 1.5 s of work between
    /// barriers (each step progress, on another worker when there are two).
    unsafe fn waits_for_a_slow_block(_: *const *mut c_void) {
        if device::block_idx("test")[0] == 0 {
            for _ in 0..150 {
                if device::thread_idx("test")[0] == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                device::barrier("thread::sync_threads", BarrierKind::Sync, false);
            }
            if device::thread_idx("test")[0] == 0 {
                // SAFETY: a static, atomic accesses only.
                unsafe {
                    device::atomic_store(
                        "atomic::store",
                        FLAG.as_ptr(),
                        1,
                        MemScope::Device,
                        Relaxed,
                    )
                };
            }
        } else if device::thread_idx("test")[0] == 0 {
            // SAFETY: as above.
            while unsafe {
                device::atomic_load("atomic::load", FLAG.as_ptr(), MemScope::Device, Relaxed)
            } == 0
            {}
        }
    }

    #[test]
    fn a_block_spinning_on_a_block_that_progresses_is_no_livelock() {
        let kernel: Kernel<(), ()> =
            Kernel::__new_with_host("waits_for_a_slow_block", waits_for_a_slow_block);
        let options = EmuOptions {
            checks: crate::EmuChecks::NONE,
            ..EmuOptions::default()
        };
        // SAFETY: the body takes no parameters and touches only `FLAG`.
        unsafe { launch(&kernel, [2, 1, 1], [32, 1, 1], 0, &[], &options) }
            .expect("block 0 sets the flag");
    }

    static SIBLING_FLAG: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

    /// In a cluster of two blocks, block 0's thread 0 spins on a flag that block 1 (which
    /// takes its turn after block 0 on the same worker) sets.
    unsafe fn waits_for_its_sibling(_: *const *mut c_void) {
        let first = device::thread_idx("test")[0] == 0;
        match device::block_idx("test")[0] {
            0 if first => {
                // SAFETY: a static, atomic accesses only.
                while unsafe {
                    device::atomic_load(
                        "atomic::load",
                        SIBLING_FLAG.as_ptr(),
                        MemScope::Device,
                        Relaxed,
                    )
                } == 0
                {}
            }
            1 if first => {
                // SAFETY: as above.
                unsafe {
                    device::atomic_store(
                        "atomic::store",
                        SIBLING_FLAG.as_ptr(),
                        1,
                        MemScope::Device,
                        Relaxed,
                    )
                }
            }
            _ => {}
        }
    }

    #[test]
    fn a_block_spinning_on_its_cluster_sibling_lets_the_sibling_run() {
        let kernel: Kernel<(), ()> =
            Kernel::__new_with_host("waits_for_its_sibling", waits_for_its_sibling);
        // SAFETY: the body takes no parameters and touches only `SIBLING_FLAG`.
        unsafe {
            crate::launch_cluster(
                &kernel,
                [2, 1, 1],
                [32, 1, 1],
                [2, 1, 1],
                0,
                &[],
                &EmuOptions::default(),
            )
        }
        .expect("block 1 sets the flag");
    }

    #[test]
    fn named_barriers_complete_with_their_thread_count_and_deadlock_without_it() {
        run("per_warpgroup", per_warpgroup).expect("each warpgroup meets");
        let err = run("too_few", too_few).expect_err("never completes");
        let EmuError::BarrierDivergence { waiting, other, .. } = &err else {
            panic!("expected BarrierDivergence, got {err}")
        };
        assert_eq!(waiting.waits_at, "named barrier 1", "{err}");
        assert_eq!(
            (waiting.thread, other.thread),
            ([0, 0, 0], [96, 0, 0]),
            "{err}"
        );
        assert_eq!(other.waits_at, "exited", "{err}");
    }
}
