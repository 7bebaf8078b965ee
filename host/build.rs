//! Compiles the `kernels` crate with `cuda_builder`: PTX for sm_70, and where ptxas is found,
//! cubins for sm_80 and sm_90 (ahead-of-time SASS for A100 and H100/H200); beside it two
//! variants for the tensor-core GEMMs (`kernels::gemm_tc`): sm_80 (`mma.sync`, `cp.async`)
//! and sm_90a (`wgmma`, TMA, `setmaxnreg`), from which `cust` resolves the kernels the
//! device runs. The builder's manifest, `KERNELS_MODULE`, is included by `src/lib.rs` as
//! `host::KERNELS`.

use cuda_builder::{ComputeCapability, CudaBuilder};

fn main() {
    let result = CudaBuilder::new("../kernels")
        // Validate for the baseline (sm_70) and for Hopper (sm_90), where we run.
        .ptxas_archs([ComputeCapability::new(7, 0), ComputeCapability::new(9, 0)])
        // Ahead-of-time SASS for Ampere (A100) and Hopper (H100, H200).
        .cubin_archs([ComputeCapability::new(8, 0), ComputeCapability::new(9, 0)])
        .arch_variant(ComputeCapability::new(8, 0))
        .arch_variant(ComputeCapability::sm_90a())
        // 384 threads × 168 registers fit the 64 K register file; the warpgroups then
        // rebalance with `setmaxnreg` (kernels::gemm_tc::wgmma::WG_MAX_REGISTERS).
        .max_registers("attention_fwd_wgmma_bf16_d64", 128)
        .max_registers("attention_fwd_wgmma_bf16_d128", 168)
        .max_registers("attention_fwd_wgmma_f16_d64", 128)
        .max_registers("attention_fwd_wgmma_f16_d128", 168)
        .max_registers("gemm_wgmma_bf16", 168)
        .max_registers("gemm_wgmma_f16", 168)
        .max_registers("gemm_wgmma_tf32", 168)
        .max_registers("gemm_wgmma_bf16_c2", 168)
        .max_registers("gemm_wgmma_f16_c2", 168)
        .max_registers("gemm_wgmma_bf16_pp", 168)
        .max_registers("gemm_wgmma_f16_pp", 168)
        .max_registers("gemm_wgmma_bf16_pp_c2", 168)
        .max_registers("gemm_wgmma_f16_pp_c2", 168)
        .max_registers("gemm_wgmma_tf32_c2", 168)
        .max_registers("gemm_wgmma_tf32_rs", 168)
        .max_registers("gemm_wgmma_tf32_rs_c2", 168)
        .max_registers("gemm_wgmma_e4m3_bf16", 168)
        .max_registers("gemm_wgmma_e4m3_f32", 168)
        .max_registers("gemm_wgmma_e5m2_bf16", 168)
        .max_registers("gemm_wgmma_e5m2_f32", 168)
        // Scans: more blocks per multiprocessor keep more tiles' loads in flight while
        // warp 0 looks back (kernels::scan). On an H100 at 2^28, same runs as CUB: 48
        // registers (5 blocks of 256 threads) for 4-byte types, 1.02-1.09x CUB. 8-byte types
        // (224 threads, 18 items): 72 registers, still 4 blocks (224 x 72 = 16,128 of the
        // 65,536), without the 12-28 bytes of spills that 64 left; one H100 run at 2^28 gave
        // f64 0.978 / 0.947x CUB against 0.945 / 0.932x at 64. Tried: 72 with 22 items,
        // 0.94-0.95x but half speed for the affine scan; 56 with 14 items, 0.91-0.92x.
        .max_registers("scan_inclusive_f32", 48)
        .max_registers("scan_exclusive_f32", 48)
        .max_registers("scan_inclusive_u32", 48)
        .max_registers("scan_exclusive_u32", 48)
        .max_registers("scan_inclusive_f64", 72)
        .max_registers("scan_exclusive_f64", 72)
        .max_registers("scan_inclusive_affine", 72)
        .max_registers("scan_exclusive_affine", 72)
        // In the sm_90a variant the 8-byte scans move their tiles by bulk copies and keep
        // no items in registers through the look-back: ptxas 12.9 fits them in 40 registers
        // without spills (7 blocks of 224 by registers; 6 by the 32 KiB of shared memory),
        // but given 72 it takes 60-64 (4 blocks).
        .max_registers_in(ComputeCapability::sm_90a(), "scan_inclusive_f64", 40)
        .max_registers_in(ComputeCapability::sm_90a(), "scan_exclusive_f64", 40)
        .max_registers_in(ComputeCapability::sm_90a(), "scan_inclusive_affine", 40)
        .max_registers_in(ComputeCapability::sm_90a(), "scan_exclusive_affine", 40)
        // Sort passes of 32-bit keys (384 threads, 16 keys each, unrolled). Unbounded, ptxas
        // 12.9 at sm_90 gave the 256-thread keys-only passes 188 registers and the pairs
        // passes 168 (1 block per multiprocessor: 0.49x CUB at 2^28 on an H200). At 80: 2
        // blocks of 384 per multiprocessor (3 of 256), no spills for keys only, 48 bytes of
        // spill stores for pairs (whose values wait in registers during the look-back). One
        // H200 each, 2^28, against CUB in the same run: keys 256 threads at 80 0.89x, 384 at
        // 80 0.94x; pairs 256 at 128 (values through the keys' buffer) 0.74x, at 80 with the
        // values loaded after the keys' scatter 0.68x, 256 at 80 with their own buffer 0.79x.
        // The u64 passes keep their registers.
        .max_registers("sort_pass_u32", 80)
        .max_registers("sort_pass_i32", 80)
        .max_registers("sort_pass_f32", 80)
        .max_registers("sort_pass_pairs_u32", 80)
        .max_registers("sort_pass_pairs_i32", 80)
        .max_registers("sort_pass_pairs_f32", 80)
        .build();
    if let Err(err) = result {
        eprintln!("{err}");
        std::process::exit(1);
    }
}
