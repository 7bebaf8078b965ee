//! Thread, block and grid indices and dimensions, global indices (1D, 2D, 3D), block-wide
//! barriers (plain and with a count/and/or reduction), memory fences, grid dependency control
//! (programmatic dependent launch, sm_90: [`grid_dependency_sync`],
//! [`trigger_programmatic_launch_completion`]), sleep and clocks.
//!
//! Each index accessor reads one PTX special register (PTX ISA §10 "Special Registers":
//! `%tid`, `%ntid`, `%ctaid`, `%nctaid`); all are available on every compute capability.
//! Barriers are `bar.sync`/`bar.red` (PTX ISA §9.7 "Parallel Synchronization and
//! Communication Instructions: bar, barrier"), fences `fence.sc.{cta,gpu,sys}` (§9.7
//! "membar/fence"; for release/acquire fences see [`crate::atomic::fence`]).
//! On the host they read the CPU emulator's context (the `arch` backend); outside an emulated
//! launch they panic: they only have meaning inside a kernel.

macro_rules! special_register {
    ($(#[$doc:meta])* $name:ident, $reg:literal) => {
        $(#[$doc])*
        #[doc = concat!("\n\nReads the PTX special register `", $reg, "`.")]
        #[inline(always)]
        #[must_use]
        #[track_caller]
        pub fn $name() -> u32 {
            crate::arch::thread::$name()
        }
    };
}

special_register!(/// Index of this thread within its block, x coordinate.
    thread_idx_x, "%tid.x");
special_register!(/// Index of this thread within its block, y coordinate.
    thread_idx_y, "%tid.y");
special_register!(/// Index of this thread within its block, z coordinate.
    thread_idx_z, "%tid.z");
special_register!(/// Number of threads per block, x dimension.
    block_dim_x, "%ntid.x");
special_register!(/// Number of threads per block, y dimension.
    block_dim_y, "%ntid.y");
special_register!(/// Number of threads per block, z dimension.
    block_dim_z, "%ntid.z");
special_register!(/// Index of this block within the grid, x coordinate.
    block_idx_x, "%ctaid.x");
special_register!(/// Index of this block within the grid, y coordinate.
    block_idx_y, "%ctaid.y");
special_register!(/// Index of this block within the grid, z coordinate.
    block_idx_z, "%ctaid.z");
special_register!(/// Number of blocks in the grid, x dimension.
    grid_dim_x, "%nctaid.x");
special_register!(/// Number of blocks in the grid, y dimension.
    grid_dim_y, "%nctaid.y");
special_register!(/// Number of blocks in the grid, z dimension.
    grid_dim_z, "%nctaid.z");

/// This thread's index within its block as a vector `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn thread_idx() -> glam::UVec3 {
    glam::UVec3::new(thread_idx_x(), thread_idx_y(), thread_idx_z())
}

/// The block's dimensions in threads `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn block_dim() -> glam::UVec3 {
    glam::UVec3::new(block_dim_x(), block_dim_y(), block_dim_z())
}

/// This block's index within the grid `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn block_idx() -> glam::UVec3 {
    glam::UVec3::new(block_idx_x(), block_idx_y(), block_idx_z())
}

/// The grid's dimensions in blocks `(x, y, z)`.
#[inline(always)]
#[must_use]
pub fn grid_dim() -> glam::UVec3 {
    glam::UVec3::new(grid_dim_x(), grid_dim_y(), grid_dim_z())
}

/// Global 1D index of this thread: `block_idx_x * block_dim_x + thread_idx_x`, computed in
/// `usize` so that grids of more than 2^32 threads index correctly.
#[inline(always)]
#[must_use]
pub fn index_1d() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

/// Global 2D index `(x, y)` of this thread in a 2D grid of 2D blocks:
/// `x = block_idx_x * block_dim_x + thread_idx_x`, likewise for `y`.
///
/// For images, `x` is the column and `y` the row (row 0 at the top).
#[inline(always)]
#[must_use]
pub fn index_2d() -> (u32, u32) {
    (
        block_idx_x() * block_dim_x() + thread_idx_x(),
        block_idx_y() * block_dim_y() + thread_idx_y(),
    )
}

/// Block-wide barrier: waits until every thread of the block has reached this call, and makes
/// their earlier shared- and global-memory writes visible to each other (PTX `barrier.sync 0`,
/// the non-`.aligned` form; CUDA C `__syncthreads()`).
///
/// Every non-exited thread of the block must reach the *same* call: calling it in divergent
/// code (where some threads of the block skip it) deadlocks or gives undefined results.
#[inline(always)]
#[track_caller]
pub fn sync_threads() {
    crate::arch::thread::sync_threads()
}

/// Global 3D index `(x, y, z)` of this thread in a 3D grid of 3D blocks:
/// `x = block_idx_x * block_dim_x + thread_idx_x`, likewise for `y` and `z`.
#[inline(always)]
#[must_use]
pub fn index_3d() -> (u32, u32, u32) {
    (
        block_idx_x() * block_dim_x() + thread_idx_x(),
        block_idx_y() * block_dim_y() + thread_idx_y(),
        block_idx_z() * block_dim_z() + thread_idx_z(),
    )
}

/// This thread's linear index within its block, `x + y·Dx + z·Dx·Dy` (the order in which
/// threads are grouped into warps: CUDA C Programming Guide, "SIMT Architecture").
#[inline(always)]
#[must_use]
pub fn thread_idx_linear() -> u32 {
    (thread_idx_z() * block_dim_y() + thread_idx_y()) * block_dim_x() + thread_idx_x()
}

/// Named barrier: waits until `THREADS` threads of the block, counted by whole warps, have
/// arrived at barrier `id`, and orders their earlier shared- and global-memory accesses
/// before their later ones, as [`sync_threads`] does for the block (PTX `barrier.sync id,
/// THREADS`, the non-`.aligned` form as [`sync_threads`]; CUDA C `__barrier_sync_count`,
/// CUTLASS `NamedBarrier::sync`). Lets a subset of the block, e.g. one warpgroup of 128
/// threads, synchronise without the rest.
///
/// PTX ISA §9.7.13.1 "bar, barrier": each block has 16 barriers, ids 0 to 15; barrier 0 is
/// the one [`sync_threads`] uses (with every thread of the block). `THREADS` must be a
/// nonzero multiple of the warp size, 32, and at most 1024 (the largest block; CUDA C
/// Programming Guide, "Technical Specifications per Compute Capability"): checked at compile
/// time. A warp arrives as a whole: the instruction waits for the non-exited threads of the
/// calling thread's warp and counts all 32.
///
/// # Safety
/// - `id < 16`;
/// - every thread that reaches barrier `id` until it completes passes the same `THREADS`,
///   and exactly `THREADS` threads (`THREADS / 32` whole warps) reach it: fewer deadlock,
///   and a different count for the same barrier is undefined (PTX ISA §9.7.13.1);
/// - a barrier id is not used by [`sync_threads`] (id 0) or another named barrier while
///   this one is pending, unless with the same participants and count.
///
/// On the CPU emulator the barrier completes when `THREADS` threads, counted by whole warps,
/// have arrived at `id`; one that too few threads reach fails the launch as barrier
/// divergence, never a hang.
///
/// ```compile_fail,E0080
/// // 100 threads is not a whole number of warps: an error at compile time.
/// unsafe { cuda_std::thread::named_barrier_sync::<100>(1) };
/// ```
#[inline(always)]
#[track_caller]
pub unsafe fn named_barrier_sync<const THREADS: u32>(id: u32) {
    const {
        assert!(
            THREADS > 0 && THREADS.is_multiple_of(32) && THREADS <= 1024,
            "named_barrier_sync: THREADS must be a nonzero multiple of 32, at most 1024"
        )
    };
    // SAFETY: forwarded to the caller.
    unsafe { crate::arch::named_barrier::named_barrier_sync::<THREADS>(id) }
}

/// Block-wide barrier that also counts: waits like [`sync_threads`] and returns, to every
/// thread, the number of threads of the block whose `predicate` was `true`
/// (CUDA C `__syncthreads_count`).
///
/// PTX: `barrier.red.popc.u32 d, 0, p` (the non-`.aligned` form, as [`sync_threads`]) (PTX ISA §9.7, "Parallel Synchronization and
/// Communication Instructions: bar, barrier"); all compute capabilities (sm_20+).
///
/// Same rule as [`sync_threads`]: every non-exited thread of the block must reach the same
/// call, else the kernel hangs or the result is undefined (it cannot corrupt memory).
#[inline(always)]
#[must_use]
#[track_caller]
pub fn sync_threads_count(predicate: bool) -> u32 {
    crate::arch::thread::sync_threads_count(predicate)
}

/// Block-wide barrier that returns `true` to every thread iff `predicate` was `true` for all
/// threads of the block (CUDA C `__syncthreads_and`).
///
/// PTX: `barrier.red.and.pred` (PTX ISA §9.7, "bar, barrier"); sm_20+. Same rule as
/// [`sync_threads`].
#[inline(always)]
#[must_use]
#[track_caller]
pub fn sync_threads_and(predicate: bool) -> bool {
    crate::arch::thread::sync_threads_and(predicate)
}

/// Block-wide barrier that returns `true` to every thread iff `predicate` was `true` for at
/// least one thread of the block (CUDA C `__syncthreads_or`).
///
/// PTX: `barrier.red.or.pred` (PTX ISA §9.7, "bar, barrier"); sm_20+. Same rule as
/// [`sync_threads`].
#[inline(always)]
#[must_use]
#[track_caller]
pub fn sync_threads_or(predicate: bool) -> bool {
    crate::arch::thread::sync_threads_or(predicate)
}

macro_rules! fence_fn {
    ($(#[$doc:meta])* $name:ident, $ptx:literal) => {
        $(#[$doc])*
        #[doc = concat!("\n\nPTX: `", $ptx, "` (PTX ISA §9.7, \"membar/fence\"; §8, \"Memory \
            Consistency Model\"); sm_70+ (on older targets the same semantics were `membar`).")]
        #[inline(always)]
        #[track_caller]
        pub fn $name() {
            crate::arch::thread::$name()
        }
    };
}

fence_fn!(
    /// Sequentially consistent fence among the threads of this block (CUDA C
    /// `__threadfence_block`): this thread's memory accesses before the fence are observed by
    /// the block's threads before its accesses after the fence.
    fence_block,
    "fence.sc.cta;"
);
fence_fn!(
    /// Sequentially consistent fence at device scope (CUDA C `__threadfence`): orders this
    /// thread's accesses as observed by every thread of the device (all blocks, all grids
    /// on this GPU). Pair it with a flag written/read atomically to publish data to other
    /// blocks; [`crate::atomic`] offers lighter release/acquire operations for that.
    fence_device,
    "fence.sc.gpu;"
);
fence_fn!(
    /// Sequentially consistent fence at system scope (CUDA C `__threadfence_system`):
    /// orders this thread's accesses as observed by the host and by peer GPUs too (for
    /// mapped/managed memory).
    fence_system,
    "fence.sc.sys;"
);

/// Rust-CUDA's name for [`fence_device`]: a memory fence at device scope, `fence.sc.gpu`
/// (CUDA C `__threadfence`; the same as `membar.gl` on sm_70+, PTX ISA §9.7,
/// "membar/fence").
#[inline(always)]
#[track_caller]
pub fn device_fence() {
    crate::arch::thread::fence_device()
}

/// Rust-CUDA's name for [`fence_system`]: a memory fence at system scope, `fence.sc.sys`
/// (CUDA C `__threadfence_system`; `membar.sys`).
#[inline(always)]
#[track_caller]
pub fn system_fence() {
    crate::arch::thread::fence_system()
}

/// Rust-CUDA's `grid_fence`: a memory fence for all the threads of the kernel's grid, which
/// may run on every SM of the device, so device scope: `fence.sc.gpu`, the same as
/// [`device_fence`]. Not an execution barrier: threads of other blocks do not wait.
/// (Rust-CUDA emits `membar.cta` here, a block-scope fence that does not order accesses as
/// the other blocks of the grid observe them, though its documentation promises the grid;
/// this function keeps the documented promise.)
#[inline(always)]
#[track_caller]
pub fn grid_fence() {
    crate::arch::thread::fence_device()
}

/// Waits until every *prerequisite grid* of this launch has completed and its memory
/// operations are performed and visible to this grid (PTX `griddepcontrol.wait`, PTX ISA
/// §9.7.13 "Parallel Synchronization and Communication Instructions: griddepcontrol";
/// **sm_90**, PTX ISA 7.8; CUDA C `cudaGridDependencySynchronize()`).
///
/// Prerequisite grids come from *programmatic dependent launch*: a kernel launched with
/// programmatic stream serialization allowed (on the host,
/// `cust::function::LaunchAttributes::programmatic_stream_serialization`) may start before
/// the kernel queued just before it on the stream (its prerequisite) has completed, as soon
/// as every block of that kernel has called [`trigger_programmatic_launch_completion`] or
/// exited. This call is where a thread of the dependent kernel waits for it: the calling
/// thread's accesses after the call see the prerequisite's writes and are ordered after all
/// its accesses; its accesses before the call are not. So a thread calls it before it
/// reads what the prerequisite writes, or writes what the prerequisite reads or writes (or
/// is ordered after a thread that called it, by a barrier or an `mbarrier`). Only the
/// calling thread waits.
///
/// After an ordinary launch (without the attribute) the kernel before it had completed
/// when this one started, and the call returns at once: a kernel that calls it is correct
/// either way.
///
/// Not `cfg`-gated, like the other sm_90 instructions ([`crate::barrier`],
/// [`crate::cluster`]): a kernel that calls it must be built for sm_90 or later (ptxas
/// rejects the instruction for older targets). On the CPU emulator it returns at once:
/// emulated launches run to completion in stream order (the host's launch attribute is
/// ignored there), so every earlier kernel has completed before this one starts.
#[inline(always)]
#[track_caller]
pub fn grid_dependency_sync() {
    crate::arch::thread::grid_dependency_sync()
}

/// Lets the kernels that depend on this one through programmatic dependent launch be
/// scheduled once every block of this grid has made this call or exited (PTX
/// `griddepcontrol.launch_dependents`, PTX ISA §9.7.13 "Parallel Synchronization and
/// Communication Instructions: griddepcontrol"; **sm_90**, PTX ISA 7.8; CUDA C
/// `cudaTriggerProgrammaticLaunchCompletion()`).
///
/// Only a scheduling hint: it says nothing about this grid's memory, and the dependent may
/// still start only when this grid completes. A dependent's [`grid_dependency_sync`] waits
/// for this whole grid to complete and for its writes to be visible, wherever this call
/// was made, so calling it early (at the start of the kernel) is correct: it only lets the
/// dependent's blocks take resources while this grid runs. Calls after a block's first have
/// no further effect; a block that never calls it counts at its exit; without a dependent
/// launched with programmatic stream serialization it does nothing.
///
/// sm_90 or later, not `cfg`-gated (as [`grid_dependency_sync`]). On the CPU emulator it
/// does nothing (launches run to completion in stream order).
#[inline(always)]
#[track_caller]
pub fn trigger_programmatic_launch_completion() {
    crate::arch::thread::trigger_programmatic_launch_completion()
}

/// Suspends this thread for about `ns` nanoseconds (hint; the hardware sleeps for a
/// duration in `[0, 2·ns]`, at most about 1 ms). Use it to back off in spin loops.
///
/// PTX: `nanosleep.u32` (PTX ISA §9.7, "Miscellaneous Instructions: nanosleep"); sm_70+,
/// PTX ISA 6.3+.
#[inline(always)]
#[track_caller]
pub fn nanosleep(ns: u32) {
    crate::arch::thread::nanosleep(ns)
}

/// The SM's 64-bit cycle counter (CUDA C `clock64()`), in SM clock cycles. Counters of
/// different SMs are not synchronised: compare values only within one thread.
///
/// PTX: `mov.u64 d, %clock64` (PTX ISA §10, "Special Registers: %clock64"); sm_20+.
#[inline(always)]
#[must_use]
pub fn clock64() -> u64 {
    crate::arch::thread::clock64()
}

/// A global nanosecond timer, the same on every SM (CUDA C `%globaltimer`); its resolution
/// is coarse (updated every microsecond or so on most GPUs), so use it for wall-clock
/// intervals across blocks, and [`clock64`] for short intervals within a thread.
///
/// PTX: `mov.u64 d, %globaltimer` (PTX ISA §10, "Special Registers: %globaltimer"); sm_30+.
#[inline(always)]
#[must_use]
pub fn global_timer_ns() -> u64 {
    crate::arch::thread::global_timer_ns()
}

/// The index of the SM this thread runs on, in `0..number of SMs` (may change only for
/// preempted or migrated blocks; use for diagnostics, not for indexing results).
///
/// PTX: `mov.u32 d, %smid` (PTX ISA §10, "Special Registers: %smid"); all compute
/// capabilities.
#[inline(always)]
#[must_use]
pub fn sm_id() -> u32 {
    crate::arch::thread::sm_id()
}
