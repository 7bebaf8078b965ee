//! `cp.async` on the emulator (PTX ISA §9.7.9.25 "cp.async", sm_80): a copy from global to
//! shared memory that lands when the issuing thread's `cp.async.wait_group` retires its
//! group, not before.
//!
//! What is modelled: the source is read when the copy is issued (one of the times a GPU
//! may read it), zero-filled past `src_bytes`; the destination is written at the
//! `wait_group N` that retires the copy's group (`commit_group` closes a group; every group
//! but the newest `N` retires), at `wait_all` (every copy, committed or not), or when the
//! thread exits. Bounds are checked at issue for both sides; the destination counts as
//! written by the issuing thread for the race check from the issue on.
//!
//! Checked (with [`EmuChecks::races`](crate::EmuChecks)): a read of a destination byte
//! through the checked accessors or `ldmatrix` before the issuing thread's wait
//! ([`EmuError::AsyncHazard`](crate::EmuError::AsyncHazard)): on a GPU it may read the old
//! bytes.

use core::panic::Location;
use std::vec::Vec;

use super::AccessKind;
use super::ctx::check_access;
use super::shared_mem::NONE;
use super::state::{BlockState, ThreadState, thread};
use super::unit_state::CpCopy;

/// Sets the `cp_thread` of the shadow bytes `[addr, addr + len)` of `block` to `value`
/// (when it is `from`, or always if `from` is `None`).
fn mark(block: &BlockState, addr: usize, len: usize, value: u32, from: Option<u32>) {
    if let Some(shadow) = block.mem.borrow_mut().shadow_mut(addr, len) {
        for s in shadow
            .iter_mut()
            .filter(|s| from.is_none_or(|f| s.cp_thread == f))
        {
            s.cp_thread = value;
        }
    }
}

/// `cp.async` of `copy_bytes` (4, 8 or 16) from global `src` to shared `dst` for the
/// running thread, reading `src_bytes` (≤ `copy_bytes`) and zero-filling the rest.
///
/// # Safety
/// As `cuda_std::mem::async_copy`'s copies: `src` is valid for reading `src_bytes`, `dst`
/// for writing `copy_bytes` until the copy lands, and they do not overlap.
#[track_caller]
pub unsafe fn copy(what: &str, dst: *mut u8, src: *const u8, copy_bytes: usize, src_bytes: usize) {
    let t = thread(what);
    let loc = Location::caller();
    if src_bytes > 0 {
        check_access(src as usize, src_bytes, AccessKind::Read, loc);
    }
    check_access(dst as usize, copy_bytes, AccessKind::Write, loc);
    let mut data = std::vec![0u8; copy_bytes];
    // SAFETY: the caller's contract: `src` valid for `src_bytes` ≤ `copy_bytes` bytes.
    unsafe { core::ptr::copy_nonoverlapping(src, data.as_mut_ptr(), src_bytes.min(copy_bytes)) };
    let b = t.block();
    mark(b, dst as usize, copy_bytes, t.linear, None);
    b.asyncs
        .borrow_mut()
        .thread_mut(t.linear)
        .cp_pending
        .push(CpCopy {
            group: 0,
            dst: dst as usize,
            data,
        });
}

/// `cp.async.commit_group` for the running thread.
#[track_caller]
pub fn commit(what: &str) {
    let t = thread(what);
    let mut asyncs = t.block().asyncs.borrow_mut();
    let me = asyncs.thread_mut(t.linear);
    me.cp_commits += 1;
    let group = me.cp_commits;
    for c in me.cp_pending.iter_mut().filter(|c| c.group == 0) {
        c.group = group;
    }
}

/// `cp.async.wait_group n` (`Some(n)`) or `cp.async.wait_all` (`None`) for the running
/// thread: the copies it retires land.
#[track_caller]
pub fn wait(what: &str, n: Option<u32>) {
    let t = thread(what);
    land(t, n);
}

/// Lands `t`'s copies that `wait_group n` retires (all of them for `None`).
pub(crate) fn land(t: &ThreadState, n: Option<u32>) {
    let b = t.block();
    let landed: Vec<CpCopy> = {
        let mut asyncs = b.asyncs.borrow_mut();
        let Some(me) = asyncs
            .thread(t.linear)
            .is_some_and(|a| !a.cp_pending.is_empty())
            .then(|| asyncs.thread_mut(t.linear))
        else {
            return;
        };
        let retired = match n {
            Some(n) => me.cp_commits.saturating_sub(n),
            None => u32::MAX,
        };
        let done = |c: &CpCopy| n.is_none() || (c.group != 0 && c.group <= retired);
        let (landed, kept) = core::mem::take(&mut me.cp_pending)
            .into_iter()
            .partition(done);
        me.cp_pending = kept;
        landed
    };
    for c in landed {
        // SAFETY: the caller's contract at issue: `dst` stays valid for the copy until it
        // lands (shared memory of the block, alive while its threads run).
        unsafe { core::ptr::copy_nonoverlapping(c.data.as_ptr(), c.dst as *mut u8, c.data.len()) };
        mark(b, c.dst, c.data.len(), NONE, Some(t.linear));
    }
}

#[cfg(test)]
mod tests {
    use crate::device::{self, AccessKind};
    use crate::{EmuError, EmuOptions, HostBuffer, launch};
    use core::ffi::c_void;
    use core::panic::Location;
    use core::sync::atomic::{AtomicU32, Ordering};
    use cust_core::launch::Kernel;

    #[repr(C, align(16))]
    struct Source([u32; 4]);
    static SOURCE: Source = Source([11, 22, 33, 44]);
    /// The first destination word before the wait and after it.
    static SEEN: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];

    fn run(name: &'static str, body: unsafe fn(*const *mut c_void)) -> Result<(), EmuError> {
        let kernel: Kernel<(), ()> = Kernel::__new_with_host(name, body);
        let options = EmuOptions {
            buffers: std::vec![HostBuffer {
                address: SOURCE.0.as_ptr() as usize,
                bytes: 16,
            }],
            ..EmuOptions::default()
        };
        // SAFETY: the bodies take no parameters and touch shared memory, `SOURCE` and
        // `SEEN`.
        unsafe { launch(&kernel, [1, 1, 1], [32, 1, 1], 64, &[], &options) }.map(|_| ())
    }

    fn dst() -> *mut u8 {
        device::dynamic_shared("test").0
    }

    fn issue() {
        // SAFETY: 16 bytes of `SOURCE` to the first 16 of the 64-byte dynamic shared memory.
        unsafe {
            super::copy(
                "mem::async_copy::copy_16",
                dst(),
                SOURCE.0.as_ptr().cast(),
                16,
                16,
            );
        }
        super::commit("mem::async_copy::commit_group");
    }

    #[track_caller]
    fn checked_read() -> u32 {
        device::check_access(dst() as usize, 4, AccessKind::Read, Location::caller());
        // SAFETY: the first word of the dynamic shared memory.
        unsafe { dst().cast::<u32>().read() }
    }

    /// Thread 0 copies, then reads the destination without waiting.
    unsafe fn early(_: *const *mut c_void) {
        if device::thread_idx("test")[0] == 0 {
            issue();
            checked_read();
        }
    }

    /// Thread 0 copies; the word is still 0 until its wait, the source's after.
    unsafe fn waited(_: *const *mut c_void) {
        if device::thread_idx("test")[0] == 0 {
            issue();
            // SAFETY: as `checked_read`, unchecked (a look at the memory, not the program's).
            SEEN[0].store(unsafe { dst().cast::<u32>().read() }, Ordering::Relaxed);
            super::wait("mem::async_copy::wait_group", Some(0));
            SEEN[1].store(checked_read(), Ordering::Relaxed);
        }
    }

    #[test]
    fn a_copy_lands_at_its_wait_and_an_earlier_read_is_reported() {
        let err = run("early", early).expect_err("reported");
        let EmuError::AsyncHazard {
            problem, thread, ..
        } = &err
        else {
            panic!("expected AsyncHazard, got {err}")
        };
        assert!(problem.contains("before that thread's"), "{err}");
        assert_eq!(*thread, [0, 0, 0]);
        run("waited", waited).expect("clean");
        assert_eq!(SEEN[0].load(Ordering::Relaxed), 0, "landed before the wait");
        assert_eq!(
            SEEN[1].load(Ordering::Relaxed),
            11,
            "not landed at the wait"
        );
    }
}
