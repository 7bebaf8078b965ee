//! The epilogue's helpers: the walk over the accumulators with constant indices
//! ([`for_even_acc!`]), the barrier of one consumer warpgroup that orders its writes of a
//! store box, and the FP8 types' `scale`. The epilogue itself is the end of a tile in the
//! kernel body (`body`).

use super::elem::WgmmaElem;

/// Calls `$m!(i)` for every even accumulator index 0, 2, …, 126 (constant indices).
macro_rules! for_even_acc {
    ($m:ident) => {
        $m!(0);
        $m!(2);
        $m!(4);
        $m!(6);
        $m!(8);
        $m!(10);
        $m!(12);
        $m!(14);
        $m!(16);
        $m!(18);
        $m!(20);
        $m!(22);
        $m!(24);
        $m!(26);
        $m!(28);
        $m!(30);
        $m!(32);
        $m!(34);
        $m!(36);
        $m!(38);
        $m!(40);
        $m!(42);
        $m!(44);
        $m!(46);
        $m!(48);
        $m!(50);
        $m!(52);
        $m!(54);
        $m!(56);
        $m!(58);
        $m!(60);
        $m!(62);
        $m!(64);
        $m!(66);
        $m!(68);
        $m!(70);
        $m!(72);
        $m!(74);
        $m!(76);
        $m!(78);
        $m!(80);
        $m!(82);
        $m!(84);
        $m!(86);
        $m!(88);
        $m!(90);
        $m!(92);
        $m!(94);
        $m!(96);
        $m!(98);
        $m!(100);
        $m!(102);
        $m!(104);
        $m!(106);
        $m!(108);
        $m!(110);
        $m!(112);
        $m!(114);
        $m!(116);
        $m!(118);
        $m!(120);
        $m!(122);
        $m!(124);
        $m!(126);
    };
}

pub(super) use for_even_acc;

/// Waits until the 128 threads of the calling warpgroup arrive at named barrier `id`
/// (`cuda_std::thread::named_barrier_sync::<128>`; ids 1 and 2 are the consumers', 0 is
/// `sync_threads`'). Orders their shared-memory accesses like `sync_threads` does the
/// block's (the CPU emulator counts the arrivals of whole warps).
#[inline(always)]
pub(super) fn warpgroup_sync(id: u32) {
    // SAFETY: called only by the TMA epilogues (the cooperative and the ping-pong body's),
    // by all 128 threads of consumer warpgroup `id - 1` (whole warps) with `id` = 1 or 2
    // (< 16), each id by one warpgroup only; no other barrier of the kernel uses ids 1
    // and 2.
    unsafe { cuda_std::thread::named_barrier_sync::<128>(id) };
}

/// A pair of accumulators as the epilogue stores them: times `scale` for the scaled
/// (FP8) types, unchanged otherwise (no multiplication in the other kernels).
#[inline(always)]
pub(super) fn scaled<T: WgmmaElem>(x: f32, y: f32, scale: f32) -> (f32, f32) {
    if T::SCALED {
        (x * scale, y * scale)
    } else {
        (x, y)
    }
}
