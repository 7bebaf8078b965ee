//! Warpgroup-level matrix multiply-accumulate on the Hopper tensor cores: `wgmma.mma_async`
//! (**sm_90a**, PTX ISA 8.0+; PTX ISA §9.7.15 "Asynchronous Warpgroup Level Matrix
//! Instructions"), and `setmaxnreg` ([`reg_alloc`], [`reg_dealloc`]).
//!
//! A *warpgroup* is four consecutive warps (128 threads, the first warp's index a multiple
//! of 4). One `wgmma` computes `D = A·B + D` (or `D = A·B`) for a 64×N tile of `D`, with `A`
//! 64×K and `B` K×N both read from **shared memory** through [`MatrixDescriptor`]s, and `D`
//! held in registers: each thread holds `N / 2` `f32`, element `i` of thread `t` at the
//! `(row, col)` that [`layout::acc_row_col`] gives. Shapes here: `m64nNk16` with `.bf16` or
//! `.f16` inputs, `m64nNk8` with `.tf32` inputs and `m64nNk32` with `.e4m3` or `.e5m2`
//! inputs (FP8: [`F8E4M3`](crate::half::F8E4M3), [`F8E5M2`](crate::half::F8E5M2)), for
//! N = 64, 128, 256, and N = 176 for `.bf16` and `.f16` with both operands in shared memory
//! (attention's key tile of 176; PTX ISA §9.7.15.2 "Matrix Shape" allows any multiple of 8
//! up to 256 for these types), all with an `f32` accumulator. Each instruction reads 32 bytes of K per
//! row of `A` and column of `B`.
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

/// The swizzle of a [`MatrixDescriptor`] (bits 62–63) and of TMA copies: one definition,
/// shared with the host ([`cust_core::tile::Swizzle`]). Tiles typed by it are in
/// [`crate::tile`].
pub use cust_core::tile::Swizzle;

/// A `wgmma` shared-memory matrix descriptor (PTX ISA §9.7.15.5.1.2), shared with the host
/// and the emulator ([`cust_core::tile::MatrixDescriptor`]); a typed tile makes its own with
/// [`crate::tile::Tile::descriptor`].
pub use cust_core::tile::MatrixDescriptor;

/// Makes prior register and shared-memory accesses of this thread visible to the following
/// `wgmma` instructions (PTX `wgmma.fence.sync.aligned`, PTX ISA §9.7.15.7.1; sm_90a). Call
/// it before the first `wgmma` of a batch and after writing accumulator registers.
///
/// `.sync.aligned`: all threads of the warpgroup must execute the same call, convergently
/// (otherwise the behaviour is undefined at the hardware level).
#[inline(always)]
#[track_caller]
pub fn fence() {
    crate::arch::wgmma::fence()
}

/// Closes the batch of `wgmma` operations issued since the last commit into one *wgmma
/// group* (PTX `wgmma.commit_group.sync.aligned`, PTX ISA §9.7.15.7.2; sm_90a). Warpgroup
/// collective, like [`fence`].
#[inline(always)]
#[track_caller]
pub fn commit_group() {
    crate::arch::wgmma::commit_group()
}

/// Waits until at most `N` wgmma groups of this thread are pending (PTX
/// `wgmma.wait_group.sync.aligned N`, PTX ISA §9.7.15.7.3; sm_90a): `N = 0` waits for all,
/// after which the accumulators may be read and the operands' shared memory reused.
/// Warpgroup collective, like [`fence`].
#[inline(always)]
#[track_caller]
pub fn wait_group<const N: u32>() {
    crate::arch::wgmma::wait_group::<N>()
}

/// Keeps the registers of `a` live and unmoved at this point, for the compiler (LLVM):
/// an `asm!` without instructions (a PTX comment) that takes the four values in registers
/// and may rewrite them (CUTLASS's `warpgroup_fence_operand`). Costs nothing at run time.
///
/// Use it on a register `A` fragment of an RS-form `wgmma` (e.g.
/// [`mma_m64n256k8_f32_tf32_rs`]) after the [`wait_group`] that covers that `wgmma`: PTX
/// ISA §9.7.15.5.2 ("wgmma.mma_async") makes it undefined to access the accumulator or the
/// `A` registers of a `wgmma.mma_async` before a `wgmma.wait_group` that waits on its group,
/// so the fragment must not be rewritten before then. This call keeps LLVM from reusing or
/// moving the values earlier; it does not by itself give them other PTX registers than the
/// next fragment's: a fragment made in a loop is written to the same PTX registers on every
/// trip, so a loop that keeps a `wgmma` in flight across trips must make consecutive
/// fragments at different places in the code (unroll by two) or wait for the group first.
#[inline(always)]
#[track_caller]
pub fn fence_operand(a: &mut [u32; 4]) {
    crate::arch::wgmma::fence_operand(a)
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
#[track_caller]
pub fn reg_alloc<const N: u32>() {
    const { check_reg_count(N) };
    crate::arch::wgmma::reg_alloc::<N>()
}

/// Lowers this warp's per-thread register limit to `N`, releasing registers to the CTA's
/// pool (PTX `setmaxnreg.dec.sync.aligned.u32 N`; see [`reg_alloc`]). `N` must be a multiple
/// of 8 in `24..=256` (checked at compile time) and at most the current limit; registers
/// above `N` are lost, so call it before the warp holds live values in them (at kernel
/// start, in the producer warpgroup).
#[inline(always)]
#[track_caller]
pub fn reg_dealloc<const N: u32>() {
    const { check_reg_count(N) };
    crate::arch::wgmma::reg_dealloc::<N>()
}

/// Defines `mma_m64nNk16_f32_{bf16,f16}`: descriptors for `A` and `B`, transposes as const
/// generics, one `asm!` with every accumulator an `inout(reg32)` operand.
macro_rules! wgmma_16bit {
    ($name:ident, $n:literal, $ty:literal, $ptx:literal) => {
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
        #[track_caller]
        pub unsafe fn $name<const TRANS_A: bool, const TRANS_B: bool>(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::wgmma::$name::<TRANS_A, TRANS_B>(acc, a, b, accumulate) }
        }
    };
}

/// Defines `mma_m64nNk16_f32_{bf16,f16}_rs`: `A` from four registers, `B` by descriptor,
/// `B`'s transpose as a const generic.
macro_rules! wgmma_16bit_rs {
    ($name:ident, $n:literal, $ty:literal, $ptx:literal) => {
        #[doc = concat!("`D = A·B + D` (or `D = A·B` when `accumulate` is false) for `A` 64×16 in `.",
            $ty, "` from **registers** and `B` 16×", stringify!($n), " from shared memory, `D` 64×",
            stringify!($n), " `f32` in registers (PTX `", $ptx, "` with a register `A`: the RS form).")]
        ///
        /// PTX ISA §9.7.15.5.2 "wgmma.mma_async"; **sm_90a**, PTX ISA 8.0. `a` holds this
        /// thread's part of `A`: register `r`, half `h` (0: the low 16 bits) is element
        /// [`layout::a_row_col`]`(thread, r, h)`. Accumulator elements `8j..8j + 8` of a
        /// `D` of the same warpgroup, packed in pairs (`[pack(d[8j], d[8j+1]), pack(d[8j+2],
        /// d[8j+3]), …]`), are its columns `16j..16j + 16` in exactly this layout, so a
        /// product's result feeds the next product's `A` without shared memory (attention's
        /// `P·V`). `TRANS_B` as in [`mma_m64n64k16_f32_bf16`]; `A` has no transpose.
        ///
        /// # Safety
        /// As [`mma_m64n64k16_f32_bf16`] for `B`: sm_90a; the whole warpgroup converged with
        /// equal `b` and `accumulate`; `b` describes this CTA's shared memory in the named
        /// layout, written and fenced for the async proxy before, not overwritten before the
        /// [`wait_group`]. The registers of `a` are read asynchronously too: the compiler
        /// keeps them until the [`wait_group`] (they are inputs of the instruction).
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name<const TRANS_B: bool>(
            acc: &mut [f32; $n],
            a: [u32; 4],
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::wgmma::$name::<TRANS_B>(acc, a, b, accumulate) }
        }
    };
}

/// Defines `mma_m64nNk8_f32_tf32` (K-major only: tf32 `wgmma` has no transpose).
macro_rules! wgmma_tf32 {
    ($name:ident, $n:literal, $ptx:literal) => {
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
        #[track_caller]
        pub unsafe fn $name(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::wgmma::$name(acc, a, b, accumulate) }
        }
    };
}

/// Defines `mma_m64nNk8_f32_tf32_rs`: `A` from four registers (one `.tf32` each), `B` by
/// descriptor (K-major: `.tf32` has no transpose).
macro_rules! wgmma_tf32_rs {
    ($name:ident, $n:literal, $ptx:literal) => {
        #[doc = concat!("`D = A·B + D` (or `D = A·B` when `accumulate` is false) for `A` 64×8 in `.tf32` \
            from **registers** and `B` 8×", stringify!($n), " in `.tf32` (`f32` in memory; the low \
            13 mantissa bits are ignored) from shared memory, `D` 64×", stringify!($n),
            " `f32` in registers (PTX `", $ptx, "` with a register `A`: the RS form).")]
        ///
        /// PTX ISA §9.7.15.5.2 "wgmma.mma_async"; **sm_90a**, PTX ISA 8.0. `a` holds this
        /// thread's part of `A`, one `f32` per register (its 13 low mantissa bits ignored,
        /// so round it first, e.g. with [`tf32_from_f32`](crate::mma::tf32_from_f32)):
        /// register `r` is element [`layout::a_row_col_tf32`]`(thread, r)`, per warp the
        /// `mma.m16n8k8` `.tf32` `A` fragment of its 16 rows, which `ldmatrix.x4` loads from
        /// a K-major tile (see that function). `B` is K-major, as in
        /// [`mma_m64n64k8_f32_tf32`].
        ///
        /// # Safety
        /// As [`mma_m64n64k8_f32_tf32`] for `B`: sm_90a; the whole warpgroup converged with
        /// equal `b` and `accumulate`; `b` describes this CTA's shared memory in the named
        /// layout, written and fenced for the async proxy before, not overwritten before the
        /// [`wait_group`]. The registers of `a` are read asynchronously too: written before
        /// the preceding [`fence`] (PTX ISA §9.7.15.7.1: a fence between a register access
        /// and a `wgmma` reading the register), and not rewritten before a [`wait_group`]
        /// covering this `wgmma` returned (PTX ISA §9.7.15.5.2). Neither the compiler nor
        /// ptxas sees that read after the instruction: a loop that loads the next fragment
        /// while this `wgmma` runs must load it into other PTX registers (unroll by two) and
        /// keep this one live with [`fence_operand`] after the wait.
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(
            acc: &mut [f32; $n],
            a: [u32; 4],
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::wgmma::$name(acc, a, b, accumulate) }
        }
    };
}

wgmma_16bit!(
    mma_m64n64k16_f32_bf16,
    32,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"
);
wgmma_16bit!(
    mma_m64n128k16_f32_bf16,
    64,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
);
wgmma_16bit!(
    mma_m64n176k16_f32_bf16,
    88,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16"
);
wgmma_16bit!(
    mma_m64n256k16_f32_bf16,
    128,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"
);
wgmma_16bit!(
    mma_m64n64k16_f32_f16,
    32,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
);
wgmma_16bit!(
    mma_m64n128k16_f32_f16,
    64,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
);
wgmma_16bit!(
    mma_m64n176k16_f32_f16,
    88,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n176k16.f32.f16.f16"
);
wgmma_16bit!(
    mma_m64n256k16_f32_f16,
    128,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"
);
wgmma_tf32!(
    mma_m64n64k8_f32_tf32,
    32,
    "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"
);
wgmma_tf32!(
    mma_m64n128k8_f32_tf32,
    64,
    "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"
);
wgmma_tf32!(
    mma_m64n256k8_f32_tf32,
    128,
    "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"
);

wgmma_16bit_rs!(
    mma_m64n64k16_f32_bf16_rs,
    32,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"
);
wgmma_16bit_rs!(
    mma_m64n64k16_f32_f16_rs,
    32,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
);
wgmma_16bit_rs!(
    mma_m64n128k16_f32_bf16_rs,
    64,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
);
wgmma_16bit_rs!(
    mma_m64n128k16_f32_f16_rs,
    64,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"
);
wgmma_16bit_rs!(
    mma_m64n256k16_f32_bf16_rs,
    128,
    "bf16",
    "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"
);
wgmma_16bit_rs!(
    mma_m64n256k16_f32_f16_rs,
    128,
    "f16",
    "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"
);

wgmma_tf32_rs!(
    mma_m64n64k8_f32_tf32_rs,
    32,
    "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"
);
wgmma_tf32_rs!(
    mma_m64n128k8_f32_tf32_rs,
    64,
    "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"
);
wgmma_tf32_rs!(
    mma_m64n256k8_f32_tf32_rs,
    128,
    "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32"
);

/// Defines `mma_m64nNk32_f32_{e4m3,e5m2}` (K-major only: FP8 `wgmma` has no transpose).
macro_rules! wgmma_fp8 {
    ($name:ident, $n:literal, $ty:literal, $ptx:literal) => {
        #[doc = concat!("`D = A·B + D` (or `D = A·B` when `accumulate` is false) for `A` 64×32 and `B` 32×",
            stringify!($n), " in `.", $ty, "` (OCP FP8, one byte per element) from shared \
            memory, `D` 64×", stringify!($n), " `f32` in registers (PTX `", $ptx, "`).")]
        ///
        /// PTX ISA §9.7.15.5.2 "wgmma.mma_async"; **sm_90a**, PTX ISA 8.0. Both operands are
        /// K-major (`A` stored M×K row-major, `B` stored N×K row-major): the FP8 types have
        /// no transpose. The accumulation is in `f32` or narrower: NVIDIA does not specify
        /// its width for FP8 inputs. Otherwise as [`mma_m64n64k16_f32_bf16`].
        ///
        /// # Safety
        /// As [`mma_m64n64k16_f32_bf16`]: sm_90a; the whole warpgroup converged with equal
        /// arguments; `a`, `b` describe this CTA's shared memory in the named layout, written
        /// and fenced for the async proxy before, not overwritten before the [`wait_group`].
        #[inline(always)]
        #[track_caller]
        pub unsafe fn $name(
            acc: &mut [f32; $n],
            a: MatrixDescriptor,
            b: MatrixDescriptor,
            accumulate: bool,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { crate::arch::wgmma::$name(acc, a, b, accumulate) }
        }
    };
}

wgmma_fp8!(
    mma_m64n64k32_f32_e4m3,
    32,
    "e4m3",
    "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"
);
wgmma_fp8!(
    mma_m64n128k32_f32_e4m3,
    64,
    "e4m3",
    "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"
);
wgmma_fp8!(
    mma_m64n256k32_f32_e4m3,
    128,
    "e4m3",
    "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"
);
wgmma_fp8!(
    mma_m64n64k32_f32_e5m2,
    32,
    "e5m2",
    "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2"
);
wgmma_fp8!(
    mma_m64n128k32_f32_e5m2,
    64,
    "e5m2",
    "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"
);
wgmma_fp8!(
    mma_m64n256k32_f32_e5m2,
    128,
    "e5m2",
    "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2"
);

/// The lane maps ([`cust_core::lanes::wgmma`]): pure functions from registers to matrix
/// coordinates, shared with the CPU emulator.
pub use cust_core::lanes::wgmma as layout;
