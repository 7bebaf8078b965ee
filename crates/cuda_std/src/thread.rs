//! Thread, block and grid indices and dimensions, global indices (1D, 2D, 3D), block-wide
//! barriers (plain and with a count/and/or reduction), memory fences, sleep and clocks.
//!
//! Each index accessor reads one PTX special register (PTX ISA §10 "Special Registers":
//! `%tid`, `%ntid`, `%ctaid`, `%nctaid`); all are available on every compute capability.
//! Barriers are `bar.sync`/`bar.red` (PTX ISA §9.7 "Parallel Synchronization and
//! Communication Instructions: bar, barrier"), fences `fence.sc.{cta,gpu,sys}` (§9.7
//! "membar/fence"; for release/acquire fences see [`crate::atomic::fence`]).
//! On the host they read the CPU emulator's context (`cuda_std::emu`); outside an emulated
//! launch they panic: they only have meaning inside a kernel.

macro_rules! special_register {
    ($(#[$doc:meta])* $name:ident => $intrinsic:ident, $reg:literal, |$t:ident| $host:expr) => {
        $(#[$doc])*
        #[doc = concat!("\n\nReads the PTX special register `", $reg, "`.")]
        #[inline(always)]
        #[must_use]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: reading a special register has no preconditions; the value is
                // non-negative and fits in u32 by the PTX ISA.
                unsafe { core::arch::nvptx::$intrinsic() as u32 }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                let $t = crate::emu::thread(concat!("thread::", stringify!($name)));
                $host
            }
        }
    };
}

special_register!(/// Index of this thread within its block, x coordinate.
    thread_idx_x => _thread_idx_x, "%tid.x", |t| t.tid[0]);
special_register!(/// Index of this thread within its block, y coordinate.
    thread_idx_y => _thread_idx_y, "%tid.y", |t| t.tid[1]);
special_register!(/// Index of this thread within its block, z coordinate.
    thread_idx_z => _thread_idx_z, "%tid.z", |t| t.tid[2]);
special_register!(/// Number of threads per block, x dimension.
    block_dim_x => _block_dim_x, "%ntid.x", |t| t.block().launch().block[0]);
special_register!(/// Number of threads per block, y dimension.
    block_dim_y => _block_dim_y, "%ntid.y", |t| t.block().launch().block[1]);
special_register!(/// Number of threads per block, z dimension.
    block_dim_z => _block_dim_z, "%ntid.z", |t| t.block().launch().block[2]);
special_register!(/// Index of this block within the grid, x coordinate.
    block_idx_x => _block_idx_x, "%ctaid.x", |t| t.block().idx[0]);
special_register!(/// Index of this block within the grid, y coordinate.
    block_idx_y => _block_idx_y, "%ctaid.y", |t| t.block().idx[1]);
special_register!(/// Index of this block within the grid, z coordinate.
    block_idx_z => _block_idx_z, "%ctaid.z", |t| t.block().idx[2]);
special_register!(/// Number of blocks in the grid, x dimension.
    grid_dim_x => _grid_dim_x, "%nctaid.x", |t| t.block().launch().grid[0]);
special_register!(/// Number of blocks in the grid, y dimension.
    grid_dim_y => _grid_dim_y, "%nctaid.y", |t| t.block().launch().grid[1]);
special_register!(/// Number of blocks in the grid, z dimension.
    grid_dim_z => _grid_dim_z, "%nctaid.z", |t| t.block().launch().grid[2]);

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
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `barrier.sync 0` has no memory-safety preconditions; misuse (divergence) can
    // hang the kernel but cannot corrupt memory. The non-`.aligned` form on purpose: rustc's
    // MIR jump threading may duplicate a barrier into both arms of an earlier `if` on the
    // thread index (rust-lang/rust#137086), so threads can reach *different copies* of one
    // source-level barrier; `bar.sync` (= `barrier.sync.aligned`) requires every thread to
    // execute the same instruction and hung a probe that way, while `barrier.sync` (sm_70+)
    // only counts arrivals at barrier 0. No `nomem`: the asm is a compiler memory barrier.
    unsafe {
        core::arch::asm!("barrier.sync 0;", options(nostack))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::emu::barrier("thread::sync_threads", crate::emu::BarrierKind::Sync, false);
    }
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
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_count(predicate: bool) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let count: u32;
        // SAFETY: a barrier with a reduction; no memory access through operands. Not `nomem`:
        // it orders the block's memory accesses like `bar.sync`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {x}, 0; barrier.red.popc.u32 {c}, 0, p; }}",
                x = in(reg32) predicate as u32,
                c = out(reg32) count,
                options(nostack),
            );
        }
        count
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::emu::barrier(
            "thread::sync_threads_count",
            crate::emu::BarrierKind::Count,
            predicate,
        ) as u32
    }
}

/// Block-wide barrier that returns `true` to every thread iff `predicate` was `true` for all
/// threads of the block (CUDA C `__syncthreads_and`).
///
/// PTX: `barrier.red.and.pred` (PTX ISA §9.7, "bar, barrier"); sm_20+. Same rule as
/// [`sync_threads`].
#[inline(always)]
#[must_use]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_and(predicate: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let all: u32;
        // SAFETY: as in `sync_threads_count`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p, q; setp.ne.u32 p, {x}, 0; barrier.red.and.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
                x = in(reg32) predicate as u32,
                r = out(reg32) all,
                options(nostack),
            );
        }
        all != 0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::emu::barrier(
            "thread::sync_threads_and",
            crate::emu::BarrierKind::And,
            predicate,
        ) != 0
    }
}

/// Block-wide barrier that returns `true` to every thread iff `predicate` was `true` for at
/// least one thread of the block (CUDA C `__syncthreads_or`).
///
/// PTX: `barrier.red.or.pred` (PTX ISA §9.7, "bar, barrier"); sm_20+. Same rule as
/// [`sync_threads`].
#[inline(always)]
#[must_use]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_or(predicate: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let any: u32;
        // SAFETY: as in `sync_threads_count`.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p, q; setp.ne.u32 p, {x}, 0; barrier.red.or.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
                x = in(reg32) predicate as u32,
                r = out(reg32) any,
                options(nostack),
            );
        }
        any != 0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::emu::barrier(
            "thread::sync_threads_or",
            crate::emu::BarrierKind::Or,
            predicate,
        ) != 0
    }
}

macro_rules! fence_fn {
    ($(#[$doc:meta])* $name:ident, $ptx:literal) => {
        $(#[$doc])*
        #[doc = concat!("\n\nPTX: `", $ptx, "` (PTX ISA §9.7, \"membar/fence\"; §8, \"Memory \
            Consistency Model\"); sm_70+ (on older targets the same semantics were `membar`).")]
        #[inline(always)]
        pub fn $name() {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: a fence has no operands and no preconditions; it is a compiler barrier
            // too (no `nomem`), so memory accesses are not moved across it.
            unsafe {
                core::arch::asm!($ptx, options(nostack))
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                // The emulator's threads share the host's memory: a host fence orders them.
                let _ = crate::emu::thread(concat!("thread::", stringify!($name)));
                core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
            }
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

/// Suspends this thread for about `ns` nanoseconds (hint; the hardware sleeps for a
/// duration in `[0, 2·ns]`, at most about 1 ms). Use it to back off in spin loops.
///
/// PTX: `nanosleep.u32` (PTX ISA §9.7, "Miscellaneous Instructions: nanosleep"); sm_70+,
/// PTX ISA 6.3+.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn nanosleep(ns: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: no memory access, no preconditions.
    unsafe {
        core::arch::asm!("nanosleep.u32 {ns};", ns = in(reg32) ns, options(nomem, nostack))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // The emulator yields to the block's other threads (spin loops make progress).
        let _ = ns;
        crate::emu::spin("thread::nanosleep");
    }
}

/// The SM's 64-bit cycle counter (CUDA C `clock64()`), in SM clock cycles. Counters of
/// different SMs are not synchronised: compare values only within one thread.
///
/// PTX: `mov.u64 d, %clock64` (PTX ISA §10, "Special Registers: %clock64"); sm_20+.
#[inline(always)]
#[must_use]
pub fn clock64() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let t: u64;
        // SAFETY: reads a special register. Not `pure`: each read may differ, and reads must
        // not be merged or hoisted.
        unsafe {
            core::arch::asm!("mov.u64 {t}, %clock64;", t = out(reg64) t, options(nomem, nostack))
        };
        t
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // The emulator counts nanoseconds of host time (monotonic within the process).
        let _ = crate::emu::thread("thread::clock64");
        crate::emu::host_nanos()
    }
}

/// A global nanosecond timer, the same on every SM (CUDA C `%globaltimer`); its resolution
/// is coarse (updated every microsecond or so on most GPUs), so use it for wall-clock
/// intervals across blocks, and [`clock64`] for short intervals within a thread.
///
/// PTX: `mov.u64 d, %globaltimer` (PTX ISA §10, "Special Registers: %globaltimer"); sm_30+.
#[inline(always)]
#[must_use]
pub fn global_timer_ns() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let t: u64;
        // SAFETY: as in `clock64`.
        unsafe {
            core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t, options(nomem, nostack))
        };
        t
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = crate::emu::thread("thread::global_timer_ns");
        crate::emu::host_nanos()
    }
}

/// The index of the SM this thread runs on, in `0..number of SMs` (may change only for
/// preempted or migrated blocks; use for diagnostics, not for indexing results).
///
/// PTX: `mov.u32 d, %smid` (PTX ISA §10, "Special Registers: %smid"); all compute
/// capabilities.
#[inline(always)]
#[must_use]
pub fn sm_id() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let id: u32;
        // SAFETY: reads a special register; not `pure` (the PTX ISA calls it volatile).
        unsafe {
            core::arch::asm!("mov.u32 {id}, %smid;", id = out(reg32) id, options(nomem, nostack))
        };
        id
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // The emulator: the rayon worker running the block.
        let _ = crate::emu::thread("thread::sm_id");
        rayon::current_thread_index().unwrap_or(0) as u32
    }
}
