//! The `#[kernel]` entry points: the rounding pass [`round_tf32`] over the TF32 inputs, and
//! the GEMMs `gemm_wgmma_*` (bf16, f16, TF32 in the SS and RS forms, FP8), each one call
//! of the kernel body `gemm` with its element types, `A` operand and cluster size, or
//! (`gemm_wgmma_{bf16,f16}_pp`) of the ping-pong body `gemm_pingpong`.

use super::body::gemm;
use super::operand::{PromotedA, RegA, SmemA};
use super::pingpong::gemm_pingpong;
use super::tf32::{Tf32Rounded, tf32_rna_bits};
use cuda_std::half::{F8E4M3, F8E5M2, bf16, f16};
use cuda_std::prelude::*;
use cuda_std::tma::TensorMap;

/// `out[i] = x[i]` rounded to TF32, to nearest with ties away from zero (as
/// `cvt.rna.tf32.f32`; NaNs stay NaNs), for `i < min(x.len(), out.len())`: the inputs
/// of `gemm_wgmma_tf32*`. The STREAM kernels' element loop (`crate::vector`:
/// 16-byte packs, grid-stride, any 1-D grid).
///
/// Each block first lets the kernel after it start early
/// (`cuda_std::thread::trigger_programmatic_launch_completion`, a scheduling hint): the
/// TF32 product the host launches next, with programmatic stream serialization, then
/// runs its prologue while this pass finishes, and waits for the pass before it reads
/// `out` (see the [module docs](super)).
#[kernel]
pub fn round_tf32(x: &[f32], out: OutSlice<f32>) {
    cuda_std::thread::trigger_programmatic_launch_completion();
    crate::vector::map1(x, &out, |v| f32::from_bits(tf32_rna_bits(v.to_bits())));
}

macro_rules! entry {
    ($name:ident, $t:ty, $cluster:literal, $what:literal, $b_tile:literal, $grid:literal) => {
        entry!($name, $t, $t, SmemA, $cluster, $what, $b_tile, $grid);
    };
    ($name:ident, $t:ty, $o:ty, $a:ty, $cluster:literal, $what:literal, $b_tile:literal,
     $grid:literal) => {
        #[doc = concat!("`C = A·Bᵀ` in ", $what, " on `wgmma` + TMA (sm_90a); see the ",
                        "[module docs](super) for the design and the launch shape.")]
        ///
        /// # Safety
        /// - `map_a` and `map_b` point to 64-byte-aligned [`TensorMap`]s in global memory,
        ///   written before the launch, describing `A` (dims `[k, m]`, innermost first)
        ///   and `B` (dims `[k, n]`) with elements of this type's size, built from the
        #[doc = concat!("  tiles `WgmmaElem::AStage` / ", $b_tile, " (box and swizzle: ")]
        ///   `TensorMapExt::for_tile`);
        /// - if `c_by_tma`, `map_c` points to such a map describing `C` (dims `[n, m]`,
        ///   row stride `n` elements, a multiple of 16 bytes) at `c`, built from the
        ///   tile `WgmmaOut::CBox` (else it is not read: `C` is stored from registers);
        /// - `c` points to an allocation of at least m·n elements that nothing else
        ///   accesses during the launch, 16-byte aligned (whole device allocations are);
        /// - `m`, `n`, `k` ≥ 1, `k` a multiple of 8 (bf16/f16) or 4 (f32);
        /// - launched with the [module's launch shape](super): `WG_THREADS` threads,
        #[doc = concat!("  ", $grid, ", `WG_SHARED_BYTES` of dynamic shared memory, on an")]
        ///   sm_90a build capped at `WG_MAX_REGISTERS` registers;
        /// - if launched with programmatic stream serialization: a TF32 kernel (the
        ///   others do not wait for the kernel before them), after a kernel that does not
        ///   access `C` or the maps (the inputs it may write: the producer waits for it
        ///   before loading them; see the [module docs](super)).
        #[kernel]
        pub unsafe fn $name(
            m: u32,
            n: u32,
            k: u32,
            map_a: *const TensorMap,
            map_b: *const TensorMap,
            map_c: *const TensorMap,
            c: *mut $o,
            c_by_tma: u32,
        ) {
            // SAFETY: forwarded from the kernel's contract.
            unsafe {
                gemm::<$t, $o, $a, $cluster>(
                    m,
                    n,
                    k,
                    map_a,
                    map_b,
                    map_c,
                    c,
                    c_by_tma != 0,
                    1.0,
                )
            }
        }
    };
}

/// The `# Safety` texts of the entry points without clusters.
macro_rules! plain {
    ($name:ident, $t:ty, $what:literal) => {
        entry!(
            $name,
            $t,
            1,
            $what,
            "`WgmmaElem::BStage`",
            "a 1-D grid without clusters"
        );
    };
}
/// The `# Safety` texts of the entry points with clusters of two.
macro_rules! clustered {
    ($name:ident, $t:ty, $what:literal) => {
        entry!(
            $name,
            $t,
            2,
            $what,
            "`WgmmaElem::BHalf`",
            "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
        );
    };
}

plain!(gemm_wgmma_bf16, bf16, "bf16 (f32 accumulation, bf16 out)");
plain!(gemm_wgmma_f16, f16, "f16 (f32 accumulation, f16 out)");
clustered!(
    gemm_wgmma_bf16_c2,
    bf16,
    "bf16 (f32 accumulation, bf16 out), clusters of 2 along M sharing `B`"
);
clustered!(
    gemm_wgmma_f16_c2,
    f16,
    "f16 (f32 accumulation, f16 out), clusters of 2 along M sharing `B`"
);

entry!(
    gemm_wgmma_tf32,
    Tf32Rounded,
    f32,
    SmemA,
    1,
    "TF32 (f32 in and out) on inputs already rounded to TF32 ([`round_tf32`])",
    "`WgmmaElem::BStage`",
    "a 1-D grid without clusters"
);
entry!(
    gemm_wgmma_tf32_c2,
    Tf32Rounded,
    f32,
    SmemA,
    2,
    "TF32 (f32 in and out) on inputs already rounded to TF32 ([`round_tf32`]), clusters \
     of 2 along M sharing `B`",
    "`WgmmaElem::BHalf`",
    "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
);

entry!(
    gemm_wgmma_tf32_rs,
    Tf32Rounded,
    f32,
    RegA,
    1,
    "TF32 (f32 in and out) with `A` rounded to TF32 in registers (plain `f32` in memory; \
     the RS form) and `B` already rounded ([`round_tf32`]; its elements typed \
     [`Tf32Rounded`] in the map)",
    "`WgmmaElem::BStage`",
    "a 1-D grid without clusters"
);
entry!(
    gemm_wgmma_tf32_rs_c2,
    Tf32Rounded,
    f32,
    RegA,
    2,
    "TF32 (f32 in and out) with `A` rounded to TF32 in registers (plain `f32` in memory; \
     the RS form) and `B` already rounded ([`round_tf32`]), clusters of 2 along M \
     sharing `B`",
    "`WgmmaElem::BHalf`",
    "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
);

/// The FP8 entry points: input type `$t`, output type `$o`, no clusters, a `scale`
/// parameter.
macro_rules! fp8_entry {
    ($name:ident, $t:ty, $o:ty, $what:literal) => {
        #[doc = concat!("`C = scale·(A·Bᵀ)` with ", $what, " on `wgmma` + TMA (sm_90a): ",
                        "the FP8 products accumulated in `f32` (or narrower: the tensor ",
                        "cores' FP8 accumulation width is not specified), multiplied by ",
                        "`scale` and rounded once to the output type (to nearest even). ",
                        "See the [module docs](super) for the design and the launch shape.")]
        ///
        /// # Safety
        /// - `map_a` and `map_b` point to 64-byte-aligned [`TensorMap`]s in global memory,
        ///   written before the launch, describing `A` (dims `[k, m]`, innermost first)
        ///   and `B` (dims `[k, n]`) as bytes (`u8`), built from the tiles
        ///   `WgmmaElem::AStage` / `WgmmaElem::BStage` (`TensorMapExt::for_tile`);
        /// - if `c_by_tma`, `map_c` points to such a map describing `C` (dims `[n, m]`,
        ///   row stride `n` elements, a multiple of 16 bytes) at `c` with the output
        ///   type, built from the tile `WgmmaOut::CBox` (else it is not read);
        /// - `c` points to an allocation of at least m·n elements that nothing else
        ///   accesses during the launch, 16-byte aligned (whole device allocations are);
        /// - `m`, `n`, `k` ≥ 1, `k` a multiple of 16 (16-byte rows for TMA);
        /// - launched with the [module's launch shape](super): `WG_THREADS` threads,
        ///   a 1-D grid without clusters, `WG_SHARED_BYTES` of dynamic shared memory,
        ///   on an sm_90a build capped at `WG_MAX_REGISTERS` registers.
        #[kernel]
        pub unsafe fn $name(
            m: u32,
            n: u32,
            k: u32,
            map_a: *const TensorMap,
            map_b: *const TensorMap,
            map_c: *const TensorMap,
            c: *mut $o,
            c_by_tma: u32,
            scale: f32,
        ) {
            // SAFETY: forwarded from the kernel's contract.
            unsafe {
                gemm::<$t, $o, PromotedA, 1>(m, n, k, map_a, map_b, map_c, c, c_by_tma != 0, scale)
            }
        }
    };
}

fp8_entry!(gemm_wgmma_e4m3_bf16, F8E4M3, bf16, "e4m3 inputs, bf16 out");
fp8_entry!(gemm_wgmma_e4m3_f32, F8E4M3, f32, "e4m3 inputs, f32 out");
fp8_entry!(gemm_wgmma_e5m2_bf16, F8E5M2, bf16, "e5m2 inputs, bf16 out");
fp8_entry!(gemm_wgmma_e5m2_f32, F8E5M2, f32, "e5m2 inputs, f32 out");

/// The ping-pong entry points (bf16, f16): the `wgmma` kernels' parameters, so that the
/// host launches them alike.
macro_rules! pp_entry {
    ($name:ident, $t:ty, $cluster:literal, $what:literal, $b_tile:literal, $grid:literal) => {
        #[doc = concat!("`C = A·Bᵀ` in ", $what, " on `wgmma` + TMA (sm_90a), the ping-pong ",
                                "form: each consumer warpgroup computes its own 128 × 176 tiles, ",
                                "the two taking turns; see `gemm_tc::wgmma`'s `pingpong` module.")]
        ///
        /// # Safety
        /// - `map_a` and `map_b` point to 64-byte-aligned [`TensorMap`]s in global memory,
        ///   written before the launch, describing `A` (dims `[k, m]`, innermost first)
        ///   and `B` (dims `[k, n]`) with elements of this type's size, built from the
        #[doc = concat!("  tiles `WgmmaElem::AStage` / ", $b_tile, " (`TensorMapExt::for_tile`);")]
        /// - if `c_by_tma`, `map_c` points to such a map describing `C` (dims `[n, m]`,
        ///   row stride `n` elements, a multiple of 16 bytes) at `c`, built from the tile
        ///   `WgmmaOut::CBoxPp` (else it is not read: `C` is stored from registers);
        /// - `c` points to an allocation of at least m·n elements that nothing else
        ///   accesses during the launch, 16-byte aligned (whole device allocations are);
        /// - `m`, `n`, `k` ≥ 1, `k` a multiple of 8;
        #[doc = concat!("- launched with `PP_THREADS` threads, ", $grid, ",")]
        ///   `PP_SHARED_BYTES` of dynamic shared memory, on an sm_90a build capped at
        ///   `WG_MAX_REGISTERS` registers.
        #[kernel]
        pub unsafe fn $name(
            m: u32,
            n: u32,
            k: u32,
            map_a: *const TensorMap,
            map_b: *const TensorMap,
            map_c: *const TensorMap,
            c: *mut $t,
            c_by_tma: u32,
        ) {
            // SAFETY: forwarded from the kernel's contract.
            unsafe {
                gemm_pingpong::<$t, $cluster>(m, n, k, map_a, map_b, map_c, c, c_by_tma != 0)
            }
        }
    };
}

/// The `# Safety` texts of the ping-pong entry points without and with clusters.
macro_rules! pp_plain {
    ($name:ident, $t:ty, $what:literal) => {
        pp_entry!(
            $name,
            $t,
            1,
            $what,
            "`WgmmaElem::BStagePp`",
            "a 1-D grid without clusters"
        );
    };
}
macro_rules! pp_clustered {
    ($name:ident, $t:ty, $what:literal) => {
        pp_entry!(
            $name,
            $t,
            2,
            $what,
            "`WgmmaElem::BHalfPp`",
            "a 1-D grid of clusters of `(WG_CLUSTER_M, 1, 1)` blocks (an even grid)"
        );
    };
}

pp_plain!(
    gemm_wgmma_bf16_pp,
    bf16,
    "bf16 (f32 accumulation, bf16 out)"
);
pp_plain!(gemm_wgmma_f16_pp, f16, "f16 (f32 accumulation, f16 out)");
pp_clustered!(
    gemm_wgmma_bf16_pp_c2,
    bf16,
    "bf16 (f32 accumulation, bf16 out), clusters of 2 along M sharing `B`"
);
pp_clustered!(
    gemm_wgmma_f16_pp_c2,
    f16,
    "f16 (f32 accumulation, f16 out), clusters of 2 along M sharing `B`"
);
