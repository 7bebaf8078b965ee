//! Warpgroup-level matrix multiply-accumulate on the Hopper tensor cores: `wgmma.mma_async`
//! (**sm_90a**, PTX ISA 8.0+; PTX ISA §9.7.15 "Asynchronous Warpgroup Level Matrix
//! Instructions"), and `setmaxnreg` ([`reg_alloc`], [`reg_dealloc`]).
//!
//! A *warpgroup* is four consecutive warps (128 threads, the first warp's index a multiple
//! of 4). One `wgmma` computes `D = A·B + D` (or `D = A·B`) for a 64×N tile of `D`, with `A`
//! 64×K and `B` K×N both read from **shared memory** through [`MatrixDescriptor`]s, and `D`
//! held in registers: each thread holds `N / 2` `f32`, element `i` of thread `t` at the
//! `(row, col)` that [`layout::acc_row_col`] gives. Shapes here: `m64nNk16` with `.bf16` or
//! `.f16` inputs and `m64nNk8` with `.tf32` inputs, for N = 64, 128, 256, all with an `f32`
//! accumulator.
//!
//! The instruction is asynchronous. The protocol (PTX ISA §9.7.15.6 "Asynchronous Warpgroup
//! Level Matrix Multiply-Accumulate Operation"):
//! 1. the warpgroup writes `A` and `B` to shared memory (generic stores, or TMA); generic
//!    stores are made visible to the tensor core's *async proxy* with
//!    [`tma::fence_proxy_async_shared`](crate::tma::fence_proxy_async_shared) and a barrier;
//! 2. [`fence`] before the first `wgmma` (and whenever the accumulator registers were
//!    written by other instructions since the last `wgmma`);
//! 3. one or more `mma_*` calls;
//! 4. [`commit_group`], then [`wait_group`]`::<0>()` before the accumulators are read or
//!    `A`/`B`'s shared memory is overwritten (`wait_group::<N>` lets `N` groups stay in
//!    flight).
//!
//! ptxas keeps the results correct even if the accumulators are touched between the
//! `wgmma` and the wait (it serialises the `wgmma` and says so in a performance advisory),
//! so the protocol is a matter of speed for the registers and of correctness for the shared
//! memory.
//!
//! Shared-memory layouts: both operands are K-major by default (`A` stored M×K row-major,
//! `B` stored N×K row-major, i.e. `Bᵀ` row-major), made of *core matrices* of 8 rows × 16
//! bytes. [`layout::offset_no_swizzle`] and [`layout::offset_swizzle_128b`] give the byte
//! offset of an element in the two layouts the tests use; [`MatrixDescriptor::new`]
//! documents what the leading and stride byte offsets mean in each.
//!
//! The functions are not `cfg`-gated: inline PTX is only assembled when a kernel calls it, so
//! only a kernel built for sm_90a (`-C target-cpu=sm_90a`, `#[cfg(target_feature =
//! "sm_90a")]`) may call them; on the host they are stubs that panic. [`MatrixDescriptor`]
//! and [`layout`] are plain Rust and work everywhere.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

/// The swizzle mode of a [`MatrixDescriptor`] (bits 62–63; PTX ISA §9.7.15.5.1.2 "Matrix
/// Descriptor Format"): how 16-byte chunks of a row are permuted inside each
/// `8 × swizzle-width` atom. The shared memory written by TMA with the same swizzle
/// (`CU_TENSOR_MAP_SWIZZLE_128B`...) has exactly this layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Swizzle {
    /// No swizzle ("interleave"): core matrices of 8 rows × 16 contiguous bytes, placed at the
    /// leading and stride byte offsets.
    None = 0,
    /// 128-byte swizzle: rows of 128 bytes; chunk `c` (16 bytes) of row `r` is stored at
    /// chunk `c ^ (r % 8)`. An 8-row atom is 1024 bytes and must start 1024-byte aligned.
    B128 = 1,
    /// 64-byte swizzle: rows of 64 bytes, chunk `c` of row `r` at `c ^ ((r / 2) % 4)`;
    /// 512-byte atoms.
    B64 = 2,
    /// 32-byte swizzle: rows of 32 bytes, chunk `c` of row `r` at `c ^ ((r / 4) % 2)`;
    /// 256-byte atoms.
    B32 = 3,
}

/// A `wgmma` shared-memory matrix descriptor (PTX ISA §9.7.15.5.1.2 "Matrix Descriptor
/// Format"), 64 bits:
///
/// | bits | field |
/// |---|---|
/// | 0–13 | start address (shared, bytes) `>> 4` |
/// | 16–29 | leading dimension byte offset `>> 4` |
/// | 32–45 | stride dimension byte offset `>> 4` |
/// | 49–51 | matrix base offset (0 here: swizzled tiles start at a swizzle-atom boundary) |
/// | 62–63 | [`Swizzle`] mode |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct MatrixDescriptor(pub u64);

impl MatrixDescriptor {
    /// Encodes a descriptor. All three values are in bytes, multiples of 16, and below
    /// 2¹⁸ (256 KiB, more than any shared memory); each is stored `>> 4` in 14 bits, so the
    /// low 4 bits and bits from 18 up are dropped.
    ///
    /// - `start_addr`: the 32-bit shared address ([`shared_addr`](crate::shared::shared_addr))
    ///   of the operand's first core matrix (for a swizzled tile, its first byte, aligned to
    ///   the swizzle atom: 1024 bytes for [`Swizzle::B128`]).
    /// - `leading_byte_offset` (LBO): for K-major [`Swizzle::None`], the distance between
    ///   core matrices adjacent in **K**; ignored by the hardware for K-major swizzled
    ///   layouts (pass 16, i.e. encoded 1, as CUTLASS does). For MN-major operands
    ///   (`TRANS_* = true`), the distance between swizzle atoms adjacent in M/N.
    /// - `stride_byte_offset` (SBO): the distance between groups of 8 rows adjacent in
    ///   **M** (or N), e.g. 1024 for a [`Swizzle::B128`] tile of 128-byte rows.
    #[must_use]
    pub const fn new(
        start_addr: u32,
        leading_byte_offset: u32,
        stride_byte_offset: u32,
        swizzle: Swizzle,
    ) -> Self {
        const fn field(bytes: u32) -> u64 {
            ((bytes as u64) >> 4) & 0x3fff
        }
        Self(
            field(start_addr)
                | (field(leading_byte_offset) << 16)
                | (field(stride_byte_offset) << 32)
                | ((swizzle as u64) << 62),
        )
    }

    /// The same descriptor with its start address advanced by `bytes` (a multiple of 16),
    /// e.g. to step K inside a swizzled tile: for a [`Swizzle::B128`] K-major tile of bf16,
    /// the k-th slice of 16 elements starts `32·k` bytes further (the hardware applies the
    /// swizzle to the resulting addresses). The other fields are unchanged; the address
    /// field wraps at 2¹⁸ bytes.
    #[must_use]
    pub const fn add_bytes(self, bytes: u32) -> Self {
        let addr = (self.0 & 0x3fff).wrapping_add((bytes as u64) >> 4) & 0x3fff;
        Self((self.0 & !0x3fff) | addr)
    }

    /// The 64-bit encoding, as `wgmma` takes it.
    #[must_use]
    pub const fn bits(self) -> u64 {
        self.0
    }
}

/// Makes prior register and shared-memory accesses of this thread visible to the following
/// `wgmma` instructions (PTX `wgmma.fence.sync.aligned`, PTX ISA §9.7.15.7.1; sm_90a). Call
/// it before the first `wgmma` of a batch and after writing accumulator registers.
///
/// `.sync.aligned`: all threads of the warpgroup must execute the same call, convergently
/// (otherwise the behaviour is undefined at the hardware level).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn fence() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: no operands. Not `nomem`: orders memory accesses.
    unsafe {
        asm!("wgmma.fence.sync.aligned;", options(nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    crate::emu::not_emulated_fail("wgmma::fence")
}

/// Closes the batch of `wgmma` operations issued since the last commit into one *wgmma
/// group* (PTX `wgmma.commit_group.sync.aligned`, PTX ISA §9.7.15.7.2; sm_90a). Warpgroup
/// collective, like [`fence`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn commit_group() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: no operands.
    unsafe {
        asm!("wgmma.commit_group.sync.aligned;", options(nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    crate::emu::not_emulated_fail("wgmma::commit_group")
}

/// Waits until at most `N` wgmma groups of this thread are pending (PTX
/// `wgmma.wait_group.sync.aligned N`, PTX ISA §9.7.15.7.3; sm_90a): `N = 0` waits for all,
/// after which the accumulators may be read and the operands' shared memory reused.
/// Warpgroup collective, like [`fence`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn wait_group<const N: u32>() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an immediate operand. Not `nomem`: later shared-memory writes must not move
    // above it.
    unsafe {
        asm!("wgmma.wait_group.sync.aligned {n};", n = const N, options(nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    crate::emu::not_emulated_fail("wgmma::wait_group")
}

/// Rejects a `setmaxnreg` count outside `24..=256` or not a multiple of 8 (PTX ISA
/// §9.7.17.1 "setmaxnreg") at compile time.
const fn check_reg_count(n: u32) {
    assert!(
        n >= 24 && n <= 256 && n.is_multiple_of(8),
        "setmaxnreg: the register count must be a multiple of 8 in 24..=256"
    );
}

/// Raises this warp's per-thread register limit to `N` (PTX `setmaxnreg.inc.sync.aligned.u32
/// N`, PTX ISA §9.7.17.1 "setmaxnreg"; sm_90a, PTX ISA 8.0), blocking until the CTA's
/// register pool has enough free registers. Used by warp-specialised kernels: the
/// consumer (math) warpgroups raise their limit after the producer (TMA) warpgroup lowered
/// its own with [`reg_dealloc`].
///
/// `N` must be a multiple of 8 in `24..=256` (a compile-time error otherwise) and at least
/// the current limit. All threads of the warpgroup must execute the same call
/// (`.sync.aligned`), and the kernel should be built with a register cap
/// (`CudaBuilder::max_registers`) that the warpgroups' limits add up to.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reg_alloc<const N: u32>() {
    const { check_reg_count(N) };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an immediate operand; the value is checked above.
    unsafe {
        asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nomem, nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    crate::emu::not_emulated_fail("wgmma::reg_alloc")
}

/// Lowers this warp's per-thread register limit to `N`, releasing registers to the CTA's
/// pool (PTX `setmaxnreg.dec.sync.aligned.u32 N`; see [`reg_alloc`]). `N` must be a multiple
/// of 8 in `24..=256` (checked at compile time) and at most the current limit; registers
/// above `N` are lost, so call it before the warp holds live values in them (at kernel
/// start, in the producer warpgroup).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reg_dealloc<const N: u32>() {
    const { check_reg_count(N) };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an immediate operand; the value is checked above.
    unsafe {
        asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nomem, nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    crate::emu::not_emulated_fail("wgmma::reg_dealloc")
}

/// Calls `$m!($($args)* [0 1 … n-1])` with the accumulator indices of an `m64nN` shape
/// (`n = N / 2` registers per thread), so every accumulator operand has a constant index.
macro_rules! with_acc_indices {
    (32, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31]);
    };
    (64, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63]);
    };
    (128, $m:ident!($($args:tt)*)) => {
        $m!($($args)* [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127]);
    };
}

/// The accumulator list `{0}, {1}, …` of a `wgmma` template (positional operands).
#[cfg(target_arch = "nvptx64")]
macro_rules! acc_list {
    ($first:literal $($i:literal)*) => {
        concat!("{", stringify!($first), "}" $(, ", {", stringify!($i), "}")*)
    };
}

/// Defines `mma_m64nNk16_f32_{bf16,f16}`: descriptors for `A` and `B`, transposes as const
/// generics, one `asm!` with every accumulator an `inout(reg32)` operand.
macro_rules! wgmma_16bit {
    ($name:ident, $n:literal, $ty:literal, $ptx:literal, [$($i:literal)+]) => {
        #[doc = concat!("`D = A·B + D` (or `D = A·B` when `accumulate` is false) for `A` 64×16 and `B` 16×",
            stringify!($n), " in `.", $ty, "` from shared memory, `D` 64×", stringify!($n),
            " `f32` in registers (PTX `", $ptx, "`).")]
        ///
        /// PTX ISA §9.7.15.5.2 "wgmma.mma_async"; **sm_90a**, PTX ISA 8.0. Asynchronous: see
        /// the [module docs](self) for the fence / commit / wait protocol.
        ///
        /// - `acc`: this thread's accumulators, element `i` at
        ///   [`layout::acc_row_col`]`(thread, i)` of `D` (`thread` = index in the warpgroup);
        /// - `a`: descriptor of `A` (64×16); `TRANS_A = false`: K-major (stored M×K
        ///   row-major), `true`: M-major (stored K×M row-major);
        /// - `b`: descriptor of `B` (16×N); `TRANS_B = false`: K-major (stored N×K
        ///   row-major, i.e. `Bᵀ`), `true`: N-major (stored K×N row-major);
        /// - `accumulate`: `false` ignores `acc`'s incoming values (PTX scale-d = 0).
        ///
        /// # Safety
        /// - the kernel is built for sm_90a (ptxas rejects the instruction otherwise);
        /// - all 128 threads of the warpgroup (4 consecutive warps, the first a multiple of
        ///   4) execute this same call convergently, with the same `a`, `b` and
        ///   `accumulate` (`.sync.aligned`);
        /// - `a` and `b` describe shared memory of this CTA holding the operands in the
        ///   layout their fields name, the start address aligned to 16 bytes (to the
        ///   swizzle atom when swizzled);
        /// - that memory was written before the preceding [`fence`] and made visible to the
        ///   async proxy (TMA writes are; generic stores need
        ///   [`fence_proxy_async_shared`](crate::tma::fence_proxy_async_shared) and a
        ///   barrier), and is not written until a [`wait_group`] covering this operation
        ///   returned.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<const TRANS_A: bool, const TRANS_B: bool>(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: caller contract. Reads shared memory: not `nomem`.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p; setp.ne.b32 p, {sd}, 0; ", $ptx, " {{",
                        acc_list!($($i)+), "}}, {a}, {b}, p, 1, 1, {ta}, {tb}; }}"),
                    $(inout(reg32) acc[$i],)+
                    a = in(reg64) a.0,
                    b = in(reg64) b.0,
                    sd = in(reg32) u32::from(accumulate),
                    ta = const TRANS_A as u32,
                    tb = const TRANS_B as u32,
                    options(nostack),
                )
            };
            #[cfg(not(target_arch = "nvptx64"))]
            crate::emu::not_emulated!(concat!("wgmma::", stringify!($name)), acc, a, b, accumulate)
        }
    };
}

/// Defines `mma_m64nNk8_f32_tf32` (K-major only: tf32 `wgmma` has no transpose).
macro_rules! wgmma_tf32 {
    ($name:ident, $n:literal, $ptx:literal, [$($i:literal)+]) => {
        #[doc = concat!("`D = A·B + D` (or `D = A·B` when `accumulate` is false) for `A` 64×8 and `B` 8×",
            stringify!($n), " in `.tf32` (`f32` in memory; the low 13 mantissa bits are ignored) \
            from shared memory, `D` 64×", stringify!($n), " `f32` in registers (PTX `", $ptx, "`).")]
        ///
        /// PTX ISA §9.7.15.5.2 "wgmma.mma_async"; **sm_90a**, PTX ISA 8.0. Both operands are
        /// K-major (`A` stored M×K row-major, `B` stored N×K row-major): `.tf32` has no
        /// transpose. Otherwise as [`mma_m64n64k16_f32_bf16`], whose `# Safety` list
        /// applies unchanged.
        ///
        /// # Safety
        /// As [`mma_m64n64k16_f32_bf16`]: sm_90a; the whole warpgroup converged with equal
        /// arguments; `a`, `b` describe this CTA's shared memory in the named layout, written
        /// and fenced for the async proxy before, not overwritten before the [`wait_group`].
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: caller contract. Reads shared memory: not `nomem`.
            unsafe {
                asm!(
                    concat!("{{ .reg .pred p; setp.ne.b32 p, {sd}, 0; ", $ptx, " {{",
                        acc_list!($($i)+), "}}, {a}, {b}, p, 1, 1; }}"),
                    $(inout(reg32) acc[$i],)+
                    a = in(reg64) a.0,
                    b = in(reg64) b.0,
                    sd = in(reg32) u32::from(accumulate),
                    options(nostack),
                )
            };
            #[cfg(not(target_arch = "nvptx64"))]
            crate::emu::not_emulated!(concat!("wgmma::", stringify!($name)), acc, a, b, accumulate)
        }
    };
}

with_acc_indices!(
    32,
    wgmma_16bit!(
        mma_m64n64k16_f32_bf16,
        32,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    64,
    wgmma_16bit!(
        mma_m64n128k16_f32_bf16,
        64,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    128,
    wgmma_16bit!(
        mma_m64n256k16_f32_bf16,
        128,
        "bf16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
    )
);
with_acc_indices!(
    32,
    wgmma_16bit!(
        mma_m64n64k16_f32_f16,
        32,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
    )
);
with_acc_indices!(
    64,
    wgmma_16bit!(
        mma_m64n128k16_f32_f16,
        64,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
    )
);
with_acc_indices!(
    128,
    wgmma_16bit!(
        mma_m64n256k16_f32_f16,
        128,
        "f16",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
    )
);
with_acc_indices!(
    32,
    wgmma_tf32!(
        mma_m64n64k8_f32_tf32,
        32,
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    64,
    wgmma_tf32!(
        mma_m64n128k8_f32_tf32,
        64,
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32",
    )
);
with_acc_indices!(
    128,
    wgmma_tf32!(
        mma_m64n256k8_f32_tf32,
        128,
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32",
    )
);

/// Pure functions mapping `wgmma` registers and shared-memory layouts to matrix
/// coordinates; they run on the host too (the tests' CPU models use them).
pub mod layout {
    /// `(row, col)` in the 64×N tile of `D` of accumulator element `i` (0..N/2) of thread
    /// `thread` (0..128, the index within the warpgroup), for every `m64nNk*` shape with an
    /// `f32` accumulator.
    ///
    /// PTX ISA §9.7.15.5.1.1 (figure "WGMMA .m64nNk16 register fragment layout for
    /// accumulator matrix D"): warp `w = thread / 32` owns rows `16w..16w+16`; within it,
    /// lane `l` has `group = l / 4` and `t = l % 4`, and the registers come in 8-column
    /// blocks of four: `i = 4·j + 2·h + c` is at row `16w + group + 8h`, column
    /// `8j + 2t + c` (the `mma.m16n8` accumulator layout repeated N/8 times).
    ///
    /// Arguments are not checked: `thread < 128` and `i < N/2` give each element of the
    /// tile exactly once.
    #[must_use]
    pub const fn acc_row_col(thread: u32, i: u32) -> (u32, u32) {
        let (warp, lane) = (thread / 32, thread % 32);
        let (group, t) = (lane / 4, lane % 4);
        (
            16 * warp + group + 8 * ((i / 2) % 2),
            8 * (i / 4) + 2 * t + i % 2,
        )
    }

    /// Byte offset of the byte `k_bytes` (of its row, K-major) of row `row` in a
    /// [`Swizzle::None`](super::Swizzle::None) K-major tile whose core matrices (8 rows ×
    /// 16 bytes, rows 16 bytes apart) are `lbo` bytes apart along K and `sbo` bytes apart
    /// along M/N: the layout a [`MatrixDescriptor`](super::MatrixDescriptor) with leading
    /// byte offset `lbo` and stride byte offset `sbo` describes (PTX ISA §9.7.15.5.1
    /// "Shared Memory Matrix Layout", the K-major "no swizzling" figure).
    #[must_use]
    pub const fn offset_no_swizzle(row: u32, k_bytes: u32, lbo: u32, sbo: u32) -> u32 {
        (row / 8) * sbo + (k_bytes / 16) * lbo + (row % 8) * 16 + k_bytes % 16
    }

    /// Byte offset of byte `k_bytes` (< 128) of row `row` in a
    /// [`Swizzle::B128`](super::Swizzle::B128) K-major tile of 128-byte rows: 16-byte
    /// chunk `c` of row `r` is stored at chunk `c ^ (r % 8)` of that row (PTX ISA
    /// §9.7.15.5.1, the "128-Byte swizzling" layout; TMA's `CU_TENSOR_MAP_SWIZZLE_128B`
    /// writes the same). 8-row groups are 1024 bytes apart (the stride byte offset).
    #[must_use]
    pub const fn offset_swizzle_128b(row: u32, k_bytes: u32) -> u32 {
        row * 128 + (((k_bytes / 16) ^ (row % 8)) * 16) + k_bytes % 16
    }
}
