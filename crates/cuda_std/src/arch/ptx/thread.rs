//! `thread` on the GPU: special registers (PTX ISA §10), `barrier` (§9.7 "bar, barrier"),
//! `fence` (§9.7 "membar/fence"), `griddepcontrol` (§9.7.13), `nanosleep`, clocks.

macro_rules! special_register {
    ($($name:ident => $intrinsic:ident),* $(,)?) => {$(
        #[inline(always)]
        pub(crate) fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions; the value is
            // non-negative and fits in u32 by the PTX ISA.
            unsafe { core::arch::nvptx::$intrinsic() as u32 }
        }
    )*};
}

special_register!(
    thread_idx_x => _thread_idx_x, thread_idx_y => _thread_idx_y, thread_idx_z => _thread_idx_z,
    block_dim_x => _block_dim_x, block_dim_y => _block_dim_y, block_dim_z => _block_dim_z,
    block_idx_x => _block_idx_x, block_idx_y => _block_idx_y, block_idx_z => _block_idx_z,
    grid_dim_x => _grid_dim_x, grid_dim_y => _grid_dim_y, grid_dim_z => _grid_dim_z,
);

#[inline(always)]
pub(crate) fn sync_threads() {
    // SAFETY: `barrier.sync 0` has no memory-safety preconditions; misuse (divergence) can
    // hang the kernel but cannot corrupt memory. The non-`.aligned` form on purpose: rustc's
    // MIR jump threading may duplicate a barrier into both arms of an earlier `if` on the
    // thread index (rust-lang/rust#137086), so threads can reach *different copies* of one
    // source-level barrier; `bar.sync` (= `barrier.sync.aligned`) requires every thread to
    // execute the same instruction and hung a probe that way, while `barrier.sync` (sm_70+)
    // only counts arrivals at barrier 0. No `nomem`: the asm is a compiler memory barrier.
    unsafe { core::arch::asm!("barrier.sync 0;", options(nostack)) }
}

#[inline(always)]
pub(crate) fn sync_threads_count(predicate: bool) -> u32 {
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

#[inline(always)]
pub(crate) fn sync_threads_and(predicate: bool) -> bool {
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

#[inline(always)]
pub(crate) fn sync_threads_or(predicate: bool) -> bool {
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

macro_rules! fence_fn {
    ($($name:ident, $ptx:literal;)*) => {$(
        #[inline(always)]
        pub(crate) fn $name() {
            // SAFETY: a fence has no operands and no preconditions; it is a compiler barrier
            // too (no `nomem`), so memory accesses are not moved across it.
            unsafe { core::arch::asm!($ptx, options(nostack)) }
        }
    )*};
}

fence_fn!(
    fence_block, "fence.sc.cta;";
    fence_device, "fence.sc.gpu;";
    fence_system, "fence.sc.sys;";
);

#[inline(always)]
pub(crate) fn grid_dependency_sync() {
    // SAFETY: no operands; it only waits. Not `nomem`: the prerequisite grids' results are
    // read after it, so memory accesses must not move above it.
    unsafe { core::arch::asm!("griddepcontrol.wait;", options(nostack)) }
}

#[inline(always)]
pub(crate) fn trigger_programmatic_launch_completion() {
    // SAFETY: no operands; a scheduling hint with no effect on this grid's memory (so
    // `nomem`: accesses may move across it).
    unsafe { core::arch::asm!("griddepcontrol.launch_dependents;", options(nomem, nostack)) }
}

#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
    // SAFETY: no memory access, no preconditions.
    unsafe { core::arch::asm!("nanosleep.u32 {ns};", ns = in(reg32) ns, options(nomem, nostack)) }
}

#[inline(always)]
pub(crate) fn clock64() -> u64 {
    let t: u64;
    // SAFETY: reads a special register. Not `pure`: each read may differ, and reads must
    // not be merged or hoisted.
    unsafe {
        core::arch::asm!("mov.u64 {t}, %clock64;", t = out(reg64) t, options(nomem, nostack))
    };
    t
}

#[inline(always)]
pub(crate) fn global_timer_ns() -> u64 {
    let t: u64;
    // SAFETY: as in `clock64`.
    unsafe {
        core::arch::asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t, options(nomem, nostack))
    };
    t
}

#[inline(always)]
pub(crate) fn sm_id() -> u32 {
    let id: u32;
    // SAFETY: reads a special register; not `pure` (the PTX ISA calls it volatile).
    unsafe {
        core::arch::asm!("mov.u32 {id}, %smid;", id = out(reg32) id, options(nomem, nostack))
    };
    id
}
