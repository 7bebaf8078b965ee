//! A block's shared memory as data: its allocations, their places in the block's 32-bit
//! shared window ([`WINDOW_START`], [`WINDOW_ALIGN`]) and the per-byte shadow the race and
//! initialisation checks keep (the checks themselves are in `ctx.rs`). Imports nothing of
//! the emulator.

use core::fmt;
use core::panic::Location;
use std::string::String;
use std::vec::Vec;

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

/// How a static shared array's elements are laid out, for naming the element a finding
/// is about: `[7][6]` of an array declared `[[f32; 33]; 32]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedShape {
    /// The element type as written at the declaration (`f32`).
    pub element: &'static str,
    /// `size_of` the element type, in bytes.
    pub element_bytes: usize,
    /// The array's dimensions, outermost first (`[32, 33]` for `[[f32; 33]; 32]`,
    /// row-major as Rust lays out nested arrays).
    pub dims: &'static [usize],
}

impl SharedShape {
    /// The element holding the byte at `offset` from the array's start; `None` for a
    /// zero-sized element or an offset past the last element.
    #[must_use]
    pub fn element_at(&self, offset: usize) -> Option<SharedElement> {
        let mut flat = offset.checked_div(self.element_bytes)?;
        let count = self
            .dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))?;
        if flat >= count {
            return None;
        }
        let mut index = std::vec![0; self.dims.len()];
        for (k, &d) in self.dims.iter().enumerate().rev() {
            index[k] = flat % d;
            flat /= d;
        }
        Some(SharedElement {
            index,
            element_type: self.element,
        })
    }
}

/// The element of a static shared array that a finding is about: its index, outermost
/// first (`[7, 6]` for `tile[7][6]` of a `[[f32; 33]; 32]`), and the element type as the
/// declaration wrote it. Displayed as ``element [7][6] of type `f32` ``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedElement {
    /// One index per dimension of the declaration, outermost first.
    pub index: Vec<usize>,
    /// The element type, as written at the declaration.
    pub element_type: &'static str,
}

impl fmt::Display for SharedElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("element ")?;
        for i in &self.index {
            write!(f, "[{i}]")?;
        }
        write!(f, " of type `{}`", self.element_type)
    }
}

/// One shared-memory allocation of a block.
pub(crate) struct SharedAlloc {
    pub(crate) ptr: *mut u8,
    /// Bytes usable (0 for an empty dynamic allocation).
    pub(crate) bytes: usize,
    layout: std::alloc::Layout,
    pub(crate) name: String,
    /// The element layout of a static array (`None` for dynamic shared memory, which has
    /// no declared type).
    pub(crate) shape: Option<&'static SharedShape>,
    pub(crate) shadow: Vec<Shadow>,
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
            shape: None,
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

    /// The alignment it was allocated with.
    pub(crate) fn align(&self) -> usize {
        self.layout.align()
    }

    /// The element holding byte `offset` (see [`SharedShape::element_at`]).
    pub(crate) fn element_at(&self, offset: usize) -> Option<SharedElement> {
        self.shape.and_then(|s| s.element_at(offset))
    }

    pub(crate) fn contains(&self, addr: usize) -> bool {
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

pub(crate) const NONE: u32 = u32::MAX;
pub(crate) type Loc = Option<&'static Location<'static>>;

/// Per-byte shadow of shared memory: the last writer and up to two readers of the current
/// barrier interval (epoch), with the warp epoch of each access, and whether it was ever
/// written.
#[derive(Clone, Copy)]
pub(crate) struct Shadow {
    pub(crate) init: bool,
    pub(crate) w_thread: u32,
    pub(crate) w_epoch: u32,
    pub(crate) w_wepoch: u32,
    /// The launch sequence at the write (`order.rs`); likewise `a_seq` and each
    /// reader's third field.
    pub(crate) w_seq: u32,
    pub(crate) w_loc: Loc,
    pub(crate) r_epoch: u32,
    pub(crate) r: [(u32, u32, u32, Loc); 2],
    /// The writer's `fence.proxy.async` count when it wrote (the asynchronous-proxy check:
    /// the write is visible to the async proxy once the writer's count has grown).
    pub(crate) w_fence: u32,
    /// The host address of the mbarrier whose phase `tma_phase` completes the TMA load that
    /// wrote this byte (0: none pending).
    pub(crate) tma_bar: usize,
    pub(crate) tma_phase: u32,
    /// The thread whose `cp.async` into this byte has not landed yet (its wait has not
    /// come; [`NONE`]: none).
    pub(crate) cp_thread: u32,
    /// The last atomic that may write this byte (read-modify-write or store) in barrier
    /// interval `a_epoch`: its thread, warp epoch and call. A plain access by another
    /// thread of the same interval races with it (PTX ISA §8.4 "Memory consistency model":
    /// a plain access and an atomic one to the same location, unordered, conflict).
    pub(crate) a_thread: u32,
    pub(crate) a_epoch: u32,
    pub(crate) a_wepoch: u32,
    pub(crate) a_seq: u32,
    pub(crate) a_loc: Loc,
}

impl Shadow {
    pub(crate) const EMPTY: Self = Self {
        init: false,
        w_thread: NONE,
        w_epoch: NONE,
        w_wepoch: 0,
        w_seq: 0,
        w_loc: None,
        r_epoch: NONE,
        r: [(NONE, 0, 0, None); 2],
        w_fence: 0,
        tma_bar: 0,
        tma_phase: 0,
        cp_thread: NONE,
        a_thread: NONE,
        a_epoch: NONE,
        a_wepoch: 0,
        a_seq: 0,
        a_loc: None,
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
    /// The static array of declaration `id`, allocated (`bytes` bytes, aligned to `align`,
    /// named `name`, its elements laid out as `shape`, shadowed if `shadow`) at the next
    /// place in the window on its first use. `None` when the host cannot allocate it.
    pub(crate) fn static_alloc(
        &mut self,
        id: u64,
        bytes: usize,
        align: usize,
        name: &str,
        shape: Option<&'static SharedShape>,
        shadow: bool,
    ) -> Option<*mut u8> {
        if let Some((_, a)) = self.statics.iter().find(|(i, _)| *i == id) {
            return Some(a.ptr);
        }
        let mut a = SharedAlloc::new(bytes, align, name.into(), shadow, self.next_window)?;
        a.shape = shape;
        let p = a.ptr;
        self.next_window += a.window_bytes();
        self.statics.push((id, a));
        Some(p)
    }

    /// The shadow of the bytes `[addr, addr + len)` (clipped to their allocation), if `addr`
    /// is in one of the block's allocations and the checks keep a shadow.
    pub(crate) fn shadow_mut(&mut self, addr: usize, len: usize) -> Option<&mut [Shadow]> {
        let a = self
            .statics
            .iter_mut()
            .map(|(_, a)| a)
            .chain(core::iter::once(&mut self.dynamic))
            .find(|a| a.contains(addr))?;
        if a.shadow.is_empty() {
            return None;
        }
        let off = addr - a.ptr as usize;
        let end = (off + len).min(a.bytes);
        a.shadow.get_mut(off..end)
    }

    /// Where host address `p` is: the allocation holding it (`Some(id)` for the static array
    /// of declaration `id`, `None` for the dynamic shared memory), its size, alignment and
    /// name, and `p`'s offset in it.
    pub(crate) fn locate(&self, p: usize) -> Option<(Option<u64>, &SharedAlloc, usize)> {
        self.statics
            .iter()
            .map(|(id, a)| (Some(*id), a))
            .chain(core::iter::once((None, &self.dynamic)))
            .find(|(_, a)| a.contains(p))
            .map(|(id, a)| (id, a, p - a.ptr as usize))
    }

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
