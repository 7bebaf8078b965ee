//! Hopper device API (`cuda_std::{wgmma, barrier, tma, cluster}`, `mma::stmatrix_*`): the
//! probes of `kernels/src/hopper.rs` (in the sm_90a variant `PROBES_SM90A`) against CPU
//! models, and host-side tests of the descriptor encoding and the register layouts.
//!
//! `wgmma` inputs are small integers (`A`, `B` in -3..=3, K = 64 or 32) and `C` an integer
//! plus one half, so every product and partial sum is exact in `f32` whatever the order of
//! the hardware's additions, and with `C` added no `D` element is zero: the GPU's `D` must
//! equal the CPU's bit for bit. (Without `C`, a sum may be zero; `==` on `f32` then accepts
//! either sign of zero, the only freedom left.) GPU tests are skipped, with a message, on
//! GPUs other than sm_90 (the sm_90a PTX runs on compute capability 9.0 only). Without a
//! GPU (or with `FERROCUDA_DEVICE=cpu`) the `wgmma` and `stmatrix` tests run on the CPU
//! emulator, which emulates `wgmma`, TMA and `mbarrier`, but not clusters.

use cuda_std::mma::layout::ldmatrix_b16;
use cuda_std::wgmma::{MatrixDescriptor, Swizzle, layout};
use cust::function::{LaunchAttributes, LaunchConfig};
use host::Gpu;
use probes::hopper::{self as probe, STMATRIX_WORDS, stmatrix_value};
use tests::{dtoh, htod, launch_probe as launch, zeros};

include!(env!("PROBES_SM90A_MODULE"));

// ---------------------------------------------------------------------------------------
// Host-side: descriptor encoding and layouts (no GPU)

#[test]
fn matrix_descriptor_encodes_the_ptx_fields() {
    // PTX ISA §9.7.15.5.1.2 "Matrix Descriptor Format": bits 0–13 start address >> 4,
    // 16–29 leading byte offset >> 4, 32–45 stride byte offset >> 4, 49–51 base offset,
    // 62–63 swizzle (0 none, 1 128B, 2 64B, 3 32B).
    // 0x400 >> 4 = 0x40; 128 >> 4 = 8 at bit 16; 1024 >> 4 = 0x40 at bit 32.
    assert_eq!(
        MatrixDescriptor::new(0x400, 128, 1024, Swizzle::None).bits(),
        0x0000_0040_0008_0040
    );
    // 0x1_0000 >> 4 = 0x1000; 16 >> 4 = 1 at bit 16; swizzle 1 at bit 62.
    assert_eq!(
        MatrixDescriptor::new(0x1_0000, 16, 1024, Swizzle::B128).bits(),
        0x4000_0040_0001_1000
    );
    assert_eq!(
        MatrixDescriptor::new(0, 0, 0, Swizzle::B64).bits(),
        0x8000_0000_0000_0000
    );
    assert_eq!(
        MatrixDescriptor::new(0, 0, 0, Swizzle::B32).bits(),
        0xc000_0000_0000_0000
    );
    // Addresses are 18-bit (14 bits after >> 4): 0x4_0010 keeps only 0x0_0010.
    assert_eq!(
        MatrixDescriptor::new(0x4_0010, 0, 0, Swizzle::None).bits(),
        1
    );
    // Low 4 bits are dropped.
    assert_eq!(
        MatrixDescriptor::new(0x41f, 0, 0, Swizzle::None).bits(),
        0x41
    );
}

#[test]
fn add_bytes_moves_only_the_start_address() {
    let d = MatrixDescriptor::new(0x2000, 16, 1024, Swizzle::B128);
    assert_eq!(d.add_bytes(32).bits(), d.bits() + 2);
    assert_eq!(d.add_bytes(96).bits() & !0x3fff, d.bits() & !0x3fff);
    // The 14-bit field wraps without carrying into the leading byte offset.
    let top = MatrixDescriptor::new(0x3_fff0, 16, 1024, Swizzle::B128);
    assert_eq!(top.add_bytes(32).bits(), (top.bits() & !0x3fff) | 1);
}

#[test]
fn add_bytes_in_window_equals_add_bytes_inside_the_window() {
    // Every 16-byte start address of a 228 KiB shared memory and every step the kernels take
    // (K slices, column blocks, V rows: up to 64 KiB), for both swizzle modes they use.
    for swizzle in [Swizzle::B128, Swizzle::None] {
        for start in (0..228 * 1024u32).step_by(16 * 97) {
            let d = MatrixDescriptor::new(start, 16, 1024, swizzle);
            for bytes in [0, 16, 32, 96, 1024, 8192, 16 * 1024, 48 * 1024] {
                if start + bytes < 1 << 18 {
                    assert_eq!(
                        d.add_bytes_in_window(bytes),
                        d.add_bytes(bytes),
                        "start {start:#x}, {bytes} bytes"
                    );
                }
            }
        }
    }
}

#[test]
fn acc_row_col_matches_the_ptx_figure() {
    // PTX ISA figure "WGMMA .m64nNk16 register fragment layout for accumulator matrix D":
    // T0 holds d0, d1 at row 0, columns 0, 1 and d2, d3 at row 8; d4.. continue at column
    // 8; T1 at columns 2, 3; T4 at row 1; warp w starts at row 16w.
    assert_eq!(layout::acc_row_col(0, 0), (0, 0));
    assert_eq!(layout::acc_row_col(0, 1), (0, 1));
    assert_eq!(layout::acc_row_col(0, 2), (8, 0));
    assert_eq!(layout::acc_row_col(0, 3), (8, 1));
    assert_eq!(layout::acc_row_col(0, 4), (0, 8));
    assert_eq!(layout::acc_row_col(1, 0), (0, 2));
    assert_eq!(layout::acc_row_col(4, 0), (1, 0));
    assert_eq!(layout::acc_row_col(5, 0), (1, 2));
    // Thread 46: warp 1, lane 14 (row group 3, column pair 2).
    assert_eq!(layout::acc_row_col(46, 0), (19, 4));
    assert_eq!(layout::acc_row_col(46, 6), (27, 12));
    // The last element of m64n256: thread 127, d127.
    assert_eq!(layout::acc_row_col(127, 127), (63, 255));
}

#[test]
fn acc_row_col_covers_each_tile_element_once() {
    for n in [64u32, 128, 256] {
        let mut seen = vec![0u8; (64 * n) as usize];
        for t in 0..128 {
            for i in 0..n / 2 {
                let (r, c) = layout::acc_row_col(t, i);
                assert!(r < 64 && c < n, "n={n} t={t} i={i}: ({r}, {c})");
                seen[(r * n + c) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "m64n{n}: not a bijection");
    }
}

#[test]
fn a_row_col_covers_the_a_tile_and_packs_accumulator_pairs() {
    // PTX ISA figure "WGMMA .m64nNk16 register fragment layout for matrix A": T0's a0, a1 at
    // row 0, columns 0, 1; a2, a3 at row 8; a4.. at column 8; warp w from row 16w.
    assert_eq!(layout::a_row_col(0, 0, 0), (0, 0));
    assert_eq!(layout::a_row_col(0, 0, 1), (0, 1));
    assert_eq!(layout::a_row_col(0, 1, 0), (8, 0));
    assert_eq!(layout::a_row_col(0, 2, 1), (0, 9));
    assert_eq!(layout::a_row_col(46, 3, 0), (27, 12));
    let mut seen = [0u8; 64 * 16];
    for t in 0..128 {
        for reg in 0..4 {
            for half in 0..2 {
                let (r, c) = layout::a_row_col(t, reg, half);
                assert!(r < 64 && c < 16, "t={t} reg={reg} half={half}: ({r}, {c})");
                seen[(r * 16 + c) as usize] += 1;
                // What attention's P·V relies on: accumulator elements 8j + 2·reg + half of
                // a 64×N D are its columns 16j.. in this layout.
                for j in 0..4 {
                    let (ar, ac) = layout::acc_row_col(t, 8 * j + 2 * reg + half);
                    assert_eq!(
                        (ar, ac),
                        (r, 16 * j + c),
                        "t={t} j={j} reg={reg} half={half}"
                    );
                }
            }
        }
    }
    assert!(seen.iter().all(|&s| s == 1), "A 64×16: not a bijection");
}

#[test]
fn staging_layouts_are_bijections_onto_their_tiles() {
    // 64 rows × 128 bytes in 16-byte units: each layout must place every 16-byte chunk in a
    // distinct slot of the 8 KiB tile.
    for mode in [0, 1] {
        let mut seen = [0u8; 512];
        for row in 0..64 {
            for chunk in 0..8 {
                let off = probe::staged_offset(mode, row, chunk * 16);
                assert_eq!(off % 16, 0);
                seen[(off / 16) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "mode {mode}");
    }
    // 128-byte swizzle (PTX ISA §9.7.15.5.1, "128-Byte swizzling"): row r's chunk c lands at
    // chunk c ^ (r % 8).
    assert_eq!(layout::offset_swizzle_128b(0, 16), 16);
    assert_eq!(layout::offset_swizzle_128b(1, 0), 128 + 16);
    assert_eq!(
        layout::offset_swizzle_128b(9, 35),
        9 * 128 + (2 ^ 1) * 16 + 3
    );
    // No swizzle: core matrix (row / 8, k / 16) at (row / 8)·sbo + (k / 16)·lbo.
    assert_eq!(
        layout::offset_no_swizzle(9, 18, 128, 1024),
        1024 + 128 + 16 + 2
    );
}

// ---------------------------------------------------------------------------------------
// CPU models

/// A deterministic integer in `lo..=hi` for index `i` of stream `seed`.
fn small_int(seed: u32, i: usize, lo: i32, hi: i32) -> f32 {
    let mut x = (i as u32).wrapping_mul(0x9e37_79b9) ^ seed.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b_3c6d);
    x ^= x >> 12;
    (lo + (x % (hi - lo + 1) as u32) as i32) as f32
}

/// `D = A·Bᵀ (+ C)`: `a` 64×k, `bt` n×k, `c` 64×n, row-major.
fn wgmma_reference(a: &[f32], bt: &[f32], c: &[f32], n: usize, k: usize, add_c: bool) -> Vec<f32> {
    let mut d = vec![0.0f32; 64 * n];
    for r in 0..64 {
        for col in 0..n {
            let mut s = if add_c { c[r * n + col] } else { 0.0 };
            for p in 0..k {
                s += a[r * k + p] * bt[col * k + p];
            }
            d[r * n + col] = s;
        }
    }
    d
}

/// The `stmatrix_probe` output the PTX ISA's `stmatrix` layout predicts (the `ldmatrix`
/// fragment map, §9.7.14.5): matrix `m`'s element `(row, col)` comes from half `h` of
/// register `m` of the lane with `ldmatrix_b16(lane, h) == (row, col)`; transposed, it is
/// stored at `(col, row)`.
fn stmatrix_reference() -> Vec<u16> {
    let mut out = vec![0u16; STMATRIX_WORDS];
    for m in 0..4 {
        for lane in 0..32 {
            for h in 0..2 {
                let (row, col) = ldmatrix_b16(lane, h);
                let v = stmatrix_value(m, lane, h);
                out[(m * 64 + row * 8 + col) as usize] = v;
                out[(256 + m * 64 + col * 8 + row) as usize] = v;
            }
        }
    }
    out
}

#[test]
fn stmatrix_reference_fills_every_element() {
    // Each of the 4 × 64 values appears once in each half: no (row, col) written twice.
    let out = stmatrix_reference();
    for half in out.chunks(256) {
        let mut sorted = half.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..256).collect::<Vec<u16>>());
    }
}

// ---------------------------------------------------------------------------------------
// GPU tests

/// The sm_90a probes on the test device, or `None` (with a message) on GPUs other than
/// sm_90. The CPU emulator runs them: it executes every kernel's host body, the sm_90a
/// variant's included, and emulates `wgmma`, TMA and `mbarrier` (not clusters: the cluster
/// probes fail there with `EmuError::NotEmulated`, so their tests stay GPU-only).
fn sm90a() -> Option<(Gpu, cust::module::Module)> {
    let gpu = tests::probes();
    if !gpu.is_emulator() {
        let cc = gpu
            .context()
            .compute_capability()
            .expect("compute capability");
        if (cc.major, cc.minor) != (9, 0) {
            eprintln!(
                "skipped: {} is not sm_90 (the sm_90a probes run on 9.0 only)",
                gpu.name()
            );
            return None;
        }
    }
    let module = cust::module::Module::from_image_in(gpu.context(), &PROBES_SM90A)
        .expect("loading the sm_90a kernels variant");
    Some((gpu, module))
}

/// Runs one `wgmma` probe for `n` columns and element storage `encode`, in both staging
/// modes and with and without `C`, and compares with [`wgmma_reference`].
fn check_wgmma<T: cust::memory::DeviceCopy>(
    what: &str,
    n: usize,
    k: usize,
    encode: impl Fn(f32) -> T,
    run: impl Fn(
        &cust::memory::DeviceBuffer<T>,
        &cust::memory::DeviceBuffer<T>,
        &cust::memory::DeviceBuffer<f32>,
        &mut cust::memory::DeviceBuffer<f32>,
        u32,
        u32,
    ),
    gpu: &Gpu,
) {
    let a: Vec<f32> = (0..64 * k).map(|i| small_int(1, i, -3, 3)).collect();
    let bt: Vec<f32> = (0..n * k).map(|i| small_int(2, i, -3, 3)).collect();
    let c: Vec<f32> = (0..64 * n).map(|i| small_int(3, i, -8, 8) + 0.5).collect();
    let a_d = htod(gpu, &a.iter().map(|&x| encode(x)).collect::<Vec<_>>());
    let b_d = htod(gpu, &bt.iter().map(|&x| encode(x)).collect::<Vec<_>>());
    let c_d = htod(gpu, &c);
    for mode in [0, 1] {
        for scale_d in [1, 0] {
            let mut d_d = zeros::<f32>(gpu, 64 * n);
            run(&a_d, &b_d, &c_d, &mut d_d, mode, scale_d);
            let got = dtoh(&d_d);
            let want = wgmma_reference(&a, &bt, &c, n, k, scale_d != 0);
            let bad = got.iter().zip(&want).position(|(g, w)| g != w);
            if let Some(i) = bad {
                panic!(
                    "{what} m64n{n} mode {mode} scale_d {scale_d}: D[{}][{}] = {} on the GPU, \
                     {} expected",
                    i / n,
                    i % n,
                    got[i],
                    want[i]
                );
            }
        }
    }
}

/// `wgmma` bf16, f16 and tf32 for N = 64, 128, 256 (bf16, f16: and 176), no-swizzle and 128-byte-swizzle tiles
/// (on the GPU, or on the CPU emulator, which reads the tiles through the same descriptors).
#[test]
fn wgmma_matches_the_cpu_model() {
    let Some((gpu, module)) = sm90a() else { return };
    let cfg = LaunchConfig::new(1, 128, 0);
    let bf16 = |x: f32| half::bf16::from_f32(x).to_bits();
    let f16 = |x: f32| half::f16::from_f32(x).to_bits();
    macro_rules! case {
        ($what:literal, $kernel:expr, $n:literal, $k:literal, $enc:expr) => {
            check_wgmma(
                $what,
                $n,
                $k,
                $enc,
                |a, b, c, d, mode, scale_d| {
                    launch!(&gpu, &module, $kernel, cfg, (a, b, c, d, mode, scale_d));
                },
                &gpu,
            )
        };
    }
    case!("bf16", probe::wgmma_bf16_n64, 64, 64, bf16);
    case!("bf16", probe::wgmma_bf16_n128, 128, 64, bf16);
    case!("bf16", probe::wgmma_bf16_n176, 176, 64, bf16);
    case!("bf16", probe::wgmma_bf16_n256, 256, 64, bf16);
    case!("f16", probe::wgmma_f16_n64, 64, 64, f16);
    case!("f16", probe::wgmma_f16_n128, 128, 64, f16);
    case!("f16", probe::wgmma_f16_n176, 176, 64, f16);
    case!("f16", probe::wgmma_f16_n256, 256, 64, f16);
    case!("tf32", probe::wgmma_tf32_n64, 64, 32, |x: f32| x);
    case!("tf32", probe::wgmma_tf32_n128, 128, 32, |x: f32| x);
    case!("tf32", probe::wgmma_tf32_n256, 256, 32, |x: f32| x);
}

/// `stmatrix` x4 and x4.trans against the `ldmatrix` fragment map (GPU or emulator).
#[test]
fn stmatrix_stores_the_ldmatrix_layout() {
    let Some((gpu, module)) = sm90a() else { return };
    let mut out = zeros::<u16>(&gpu, STMATRIX_WORDS);
    launch!(
        &gpu,
        &module,
        probe::stmatrix_probe,
        LaunchConfig::new(1, 32, 0),
        (&mut out)
    );
    assert_eq!(dtoh(&out), stmatrix_reference());
}

/// `cuda_std::tile::Pipeline`: a producer thread passes 50 items through a 2- and a
/// 3-stage ring (25 and 17 rounds, so every stage's barriers go through both parities many
/// times) to two consumer warps, with bulk copies completing on the full barriers; every
/// item must arrive once, whole, in order. A wait for the wrong phase either never ends (the
/// emulator fails the launch as a deadlock) or lets a consumer read a stage before it is
/// filled or after it was refilled, which shows as another item's word in `out`.
#[test]
fn pipeline_passes_every_item_through_the_ring_in_order() {
    let Some((gpu, module)) = sm90a() else { return };
    let items = 50usize;
    let words = probe::PIPE_ITEM_WORDS as usize;
    let src: Vec<u32> = (0..(items * words) as u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995)
        .collect();
    let src_d = htod(&gpu, &src);
    for (stages, kernel) in [(2, probe::pipeline_ring_2), (3, probe::pipeline_ring_3)] {
        let mut out = zeros::<u32>(&gpu, items * words);
        launch!(
            &gpu,
            &module,
            kernel,
            LaunchConfig::new(1, probe::PIPE_THREADS, 0),
            (&src_d, items as u32, &mut out)
        );
        let out = dtoh(&out);
        if let Some(i) = out.iter().zip(&src).position(|(o, s)| o != s) {
            let from = src.iter().position(|&s| s == out[i]);
            panic!(
                "{stages} stages: item {} word {} is {:#010x}, expected {:#010x} (that value \
                 is {})",
                i / words,
                i % words,
                out[i],
                src[i],
                from.map_or("no item's".to_string(), |f| format!(
                    "item {} word {}",
                    f / words,
                    f % words
                ))
            );
        }
    }
}

/// Programmatic dependent launch: the dependent, launched with
/// `LaunchAttributes::programmatic_stream_serialization` right after the primary (which
/// triggers its dependents at its start), waits for it (`grid_dependency_sync`) and must see
/// every element the primary wrote: `out = 2·x + 4` exactly. On an sm_90 GPU the dependent
/// may really start early; the CPU emulator runs the launches in order and ignores the
/// attribute (the same result is its test: the option is accepted and changes nothing).
#[test]
fn a_programmatic_dependent_launch_sees_the_primary_s_writes() {
    let Some((gpu, module)) = sm90a() else { return };
    let n = if gpu.is_emulator() {
        3 * 1024 + 5
    } else {
        1 << 24
    };
    let x: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 8)
        .collect();
    let x_dev = htod(&gpu, &x);
    let mut mid = zeros::<u32>(&gpu, n);
    let mut out = zeros::<u32>(&gpu, n);
    let cfg = LaunchConfig::new(((n as u32).div_ceil(256), 1), 256, 0);
    let primary = module
        .kernel(probe::pdl_primary)
        .unwrap_or_else(|e| panic!("{e}"));
    let dependent = module
        .kernel(probe::pdl_dependent)
        .unwrap_or_else(|e| panic!("{e}"));
    primary
        .launch(gpu.stream(), cfg, (&x_dev, &mut mid))
        .unwrap_or_else(|e| panic!("{e}"));
    let attributes = LaunchAttributes::new().programmatic_stream_serialization(true);
    // SAFETY: the dependent reads `mid`, which the primary writes, only after
    // `grid_dependency_sync`; it writes `out`, which the primary does not access.
    unsafe { dependent.launch_ex_unchecked(gpu.stream(), cfg, attributes, 0, (&mid, &mut out)) }
        .unwrap_or_else(|e| panic!("{e}"));
    gpu.stream()
        .synchronize()
        .expect("programmatic dependent launch");
    let out = dtoh(&out);
    for (i, (&got, &xi)) in out.iter().zip(&x).enumerate() {
        assert_eq!(got, 2 * xi + 4, "element {i} of {n}");
    }
}

/// TMA and cluster probes: tensor maps encoded by `cust::tma`, cluster launches.
mod tma_and_cluster {
    use super::*;
    use cust::memory::DeviceBox;
    use cust::tma::{TensorMap, TensorMapExt, TmaSwizzle};

    /// TMA 2-D load into shared memory (raw layout checked: plain rows without swizzle,
    /// `offset_swizzle_128b` with it), then TMA store back to a zeroed tensor: the box
    /// region must equal the input and the rest stay zero.
    ///
    /// The probe's block barrier between the phase-0 waits and thread 0's phase-1 arrival
    /// matters: without it, thread 0 could complete phase 1 before another thread polled
    /// phase 0, which then names a phase two behind the barrier's (PTX ISA §9.7.13.15.16
    /// allows the current or the preceding one) and waits forever. The CPU emulator found
    /// that race (its default order runs thread 0 until it blocks) and reports such a wait
    /// as `EmuError::MBarrierDeadlock`.
    #[test]
    fn tma_load_and_store_round_trip() {
        let Some((gpu, module)) = sm90a() else { return };
        // A 96 × 80 tensor of u32 (x innermost), box 32 × 16 (128-byte rows) at (32, 48).
        let (w, h, bw, bh, x, y) = (96usize, 80usize, 32usize, 16usize, 32usize, 48usize);
        let input: Vec<u32> = (0..(w * h) as u32).map(|i| i * 7 + 1).collect();
        for (swizzle, name) in [(TmaSwizzle::None, "none"), (TmaSwizzle::B128, "128B")] {
            let src = htod(&gpu, &input);
            let dst = zeros::<u32>(&gpu, w * h);
            let map = |buf: &cust::memory::DeviceBuffer<u32>| {
                let m = TensorMap::tiled_2d::<u32>(
                    buf.as_device_ptr(),
                    [w as u64, h as u64],
                    (w * 4) as u64,
                    [bw as u32, bh as u32],
                    swizzle,
                )
                .unwrap_or_else(|e| panic!("{e}"));
                DeviceBox::new(&m).expect("tensor map copy")
            };
            let (map_in, map_out) = (map(&src), map(&dst));
            let mut raw = zeros::<u32>(&gpu, bw * bh);
            let mut status = zeros::<u32>(&gpu, 1);
            let box_bytes = (bw * bh * 4) as u32;
            launch!(
                &gpu,
                &module,
                probe::tma_roundtrip,
                LaunchConfig::new(1, 128, 0),
                (
                    &map_in,
                    &map_out,
                    x as i32,
                    y as i32,
                    box_bytes,
                    &mut raw,
                    &mut status
                )
            );
            assert_eq!(
                dtoh(&status)[0],
                0,
                "{name}: status bits (1: the TMA load's phase never completed, 2: the arrival's \
                 phase never completed, 4: try_wait false on a completed phase)"
            );
            let raw = dtoh(&raw);
            for r in 0..bh {
                for c in 0..bw {
                    let off = if name == "none" {
                        (r * bw + c) * 4
                    } else {
                        layout::offset_swizzle_128b(r as u32, (c * 4) as u32) as usize
                    };
                    assert_eq!(
                        raw[off / 4],
                        input[(y + r) * w + x + c],
                        "{name}: raw ({r}, {c})"
                    );
                }
            }
            let out = dtoh(&dst);
            for r in 0..h {
                for c in 0..w {
                    let inside = (y..y + bh).contains(&r) && (x..x + bw).contains(&c);
                    let want = if inside { input[r * w + c] } else { 0 };
                    assert_eq!(out[r * w + c], want, "{name}: stored ({r}, {c})");
                }
            }
        }
    }

    /// The typed copies (`tma::expect_tiles`, `load_tile`, `store_tile` of
    /// `probe::ProbeTile`, 16 × 32 `u32` in the 128-byte swizzle) with maps built from the
    /// same type (`TensorMap::for_tile`): the raw tile is the box in the tile's layout
    /// (`Tile::offset`), and the store writes the box back. On the CPU emulator a map with
    /// another box (32 × 8) is refused by the typed load, naming both layouts.
    #[test]
    fn typed_tile_copies_use_the_tiles_layout() {
        use cuda_std::tile::Tile;
        use probes::hopper::ProbeTile;
        let Some((gpu, module)) = sm90a() else { return };
        let (w, h, x, y) = (96usize, 80usize, 64usize, 40usize);
        let [bw, bh] = ProbeTile::BOX.map(|d| d as usize);
        let input: Vec<u32> = (0..(w * h) as u32).map(|i| i * 11 + 3).collect();
        let src = htod(&gpu, &input);
        let dst = zeros::<u32>(&gpu, w * h);
        let map = |buf: &cust::memory::DeviceBuffer<u32>| {
            let m = TensorMap::for_tile::<ProbeTile, u32>(
                buf.as_device_ptr(),
                [w as u64, h as u64],
                (w * 4) as u64,
            )
            .unwrap_or_else(|e| panic!("{e}"));
            DeviceBox::new(&m).expect("tensor map copy")
        };
        let (map_in, map_out) = (map(&src), map(&dst));
        let mut raw = zeros::<u32>(&gpu, (ProbeTile::BYTES / 4) as usize);
        let mut status = zeros::<u32>(&gpu, 1);
        launch!(
            &gpu,
            &module,
            probe::tma_tile_roundtrip,
            LaunchConfig::new(1, 128, 0),
            (&map_in, &map_out, x as i32, y as i32, &mut raw, &mut status)
        );
        assert_eq!(
            dtoh(&status)[0],
            0,
            "the typed load's phase never completed"
        );
        let (tile, out) = (dtoh(&raw), dtoh(&dst));
        for r in 0..bh {
            for c in 0..bw {
                let off = ProbeTile::offset(r as u32, c as u32) as usize;
                assert_eq!(tile[off / 4], input[(y + r) * w + x + c], "raw ({r}, {c})");
            }
        }
        for r in 0..h {
            for c in 0..w {
                let inside = (y..y + bh).contains(&r) && (x..x + bw).contains(&c);
                let want = if inside { input[r * w + c] } else { 0 };
                assert_eq!(out[r * w + c], want, "stored ({r}, {c})");
            }
        }
        if !gpu.is_emulator() {
            return;
        }
        // A map built by hand for another box: the emulator's typed load refuses it.
        let other = TensorMap::tiled_2d::<u32>(
            src.as_device_ptr(),
            [w as u64, h as u64],
            (w * 4) as u64,
            [32, 8],
            TmaSwizzle::B128,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let other = DeviceBox::new(&other).expect("tensor map copy");
        let kernel = module
            .kernel(probe::tma_tile_roundtrip)
            .unwrap_or_else(|e| panic!("{e}"));
        let cfg = LaunchConfig::new(1, 128, 0);
        // SAFETY: buffers sized as the probe's `# Safety` asks; the emulator checks the map.
        let launched = unsafe {
            kernel.launch_unchecked(
                gpu.stream(),
                cfg,
                (&other, &map_out, x as i32, y as i32, &mut raw, &mut status),
            )
        };
        let err = launched
            .and_then(|()| gpu.stream().synchronize_after(kernel.name(), cfg))
            .expect_err("a map with another box is refused")
            .to_string();
        assert!(
            err.contains("boxes of 32 × 8 elements") && err.contains("is 32 × 16 elements"),
            "{err}"
        );
    }

    /// TMA multicast in clusters of 2 (4 blocks): rank 0 loads one 32 × 16 box of a
    /// 96 × 80 `u32` tensor to both CTAs of its cluster; every block's tile must equal the
    /// box (no swizzle: plain rows).
    #[test]
    fn tma_multicast_fills_every_cta_of_the_cluster() {
        let Some((gpu, module)) = sm90a() else { return };
        let (w, h, bw, bh, x, y) = (96usize, 80usize, 32usize, 16usize, 64usize, 8usize);
        let blocks = 4usize;
        let input: Vec<u32> = (0..(w * h) as u32).map(|i| i * 3 + 5).collect();
        let src = htod(&gpu, &input);
        let map = TensorMap::tiled_2d::<u32>(
            src.as_device_ptr(),
            [w as u64, h as u64],
            (w * 4) as u64,
            [bw as u32, bh as u32],
            TmaSwizzle::None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let map = DeviceBox::new(&map).expect("tensor map copy");
        let mut out = zeros::<u32>(&gpu, blocks * bw * bh);
        let mut status = zeros::<u32>(&gpu, 1);
        let box_bytes = (bw * bh * 4) as u32;
        let kernel = module
            .kernel(probe::tma_multicast)
            .unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: buffers sized as the probe's `# Safety` asks; clusters of 2.
        unsafe {
            kernel.launch_ex_unchecked(
                gpu.stream(),
                LaunchConfig::new(blocks as u32, 128, 0),
                [2, 1, 1],
                0,
                (&map, x as i32, y as i32, box_bytes, &mut out, &mut status),
            )
        }
        .unwrap_or_else(|e| panic!("{e}"));
        gpu.stream().synchronize().expect("multicast probe");
        assert_eq!(dtoh(&status)[0], 0, "a CTA's TMA phase never completed");
        let out = dtoh(&out);
        for b in 0..blocks {
            for r in 0..bh {
                for c in 0..bw {
                    assert_eq!(
                        out[(b * bh + r) * bw + c],
                        input[(y + r) * w + x + c],
                        "block {b}: ({r}, {c})"
                    );
                }
            }
        }
    }

    /// Clusters of 4 blocks (8 blocks): ranks, shapes, distributed shared memory reads of the
    /// next rank and `arrive_cluster` on its barrier.
    #[test]
    fn cluster_ranks_and_distributed_shared_memory() {
        let Some((gpu, module)) = sm90a() else { return };
        let (blocks, size) = (8usize, 4usize);
        let mut out = zeros::<u32>(&gpu, blocks * 128);
        let mut info = zeros::<u32>(&gpu, blocks * probe::CLUSTER_INFO_WORDS);
        let kernel = module
            .kernel(probe::cluster_probe)
            .unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: buffers sized as the probe's `# Safety` asks.
        unsafe {
            kernel.launch_ex_unchecked(
                gpu.stream(),
                LaunchConfig::new(blocks as u32, 128, 0),
                [size as u32, 1, 1],
                0,
                (&mut out, &mut info),
            )
        }
        .unwrap_or_else(|e| panic!("{e}"));
        gpu.stream().synchronize().expect("cluster probe");
        let (out, info) = (dtoh(&out), dtoh(&info));
        for b in 0..blocks {
            let rank = b % size;
            let i = &info[b * probe::CLUSTER_INFO_WORDS..][..probe::CLUSTER_INFO_WORDS];
            assert_eq!(
                i,
                [
                    rank as u32,
                    size as u32,
                    rank as u32,
                    0,
                    0,
                    size as u32,
                    1,
                    1,
                    1,
                    (b / size) as u32
                ],
                "block {b}"
            );
            let next = (rank + 1) % size;
            for t in 0..128 {
                assert_eq!(
                    out[b * 128 + t],
                    1000 * next as u32 + t as u32,
                    "block {b} thread {t}"
                );
            }
        }
    }
}
