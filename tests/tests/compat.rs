//! Rust-CUDA source compatibility on the device side: shared memory declared as Rust-CUDA
//! declares it (`#[address_space(shared)] static mut`, local constant sizes), the indexable
//! `shared_array!([T; N])`, and `cuda_std::glam`. The PTX tests need no GPU; the others
//! compare GPU results with CPU references.

use cust::launch::LaunchUnchecked;
use cust::{function::LaunchConfig, memory::DeviceBuffer};
use probes::compat::{
    COMPAT_REVERSE_BLOCK, COMPAT_SUM_BLOCK, COMPAT_TILE, compat_block_sum, compat_glam_index,
    compat_shared_array_reverse, compat_tiled_matmul,
};
use tests::{PROBES, assert_identical, f32_bits, matmul_f32, probes as gpu};

/// The PTX text of entry `name` of the probes module: from its `.entry` line to the next.
fn entry_ptx(name: &str) -> &'static str {
    let ptx = PROBES.ptx;
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry `{name}` in the probes PTX"));
    let end = ptx[start + 1..]
        .find(".entry ")
        .map_or(ptx.len(), |i| start + 1 + i);
    &ptx[start..end]
}

/// The `.shared` declarations at module scope whose symbol starts with `prefix`:
/// `(symbol, align, bytes)`.
fn shared_decls(prefix: &str) -> Vec<(String, u32, u32)> {
    PROBES
        .ptx
        .lines()
        .filter_map(|l| l.trim().strip_prefix(".shared .align "))
        .filter_map(|rest| {
            // "<align> .b8 <symbol>[<bytes>];"
            let (align, rest) = rest.split_once(" .b8 ")?;
            let (symbol, bytes) = rest.split_once('[')?;
            let bytes = bytes.strip_suffix("];")?;
            Some((symbol.to_owned(), align.parse().ok()?, bytes.parse().ok()?))
        })
        .filter(|(symbol, _, _)| symbol.starts_with(prefix))
        .collect()
}

/// The symbols of `.shared` arrays whose generic address the PTX text takes.
fn cvta_symbols(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| l.trim().strip_prefix("cvta.shared.u64"))
        .filter_map(|rest| rest.rsplit(',').next())
        .map(|s| s.trim().trim_end_matches(';'))
        .collect()
}

#[test]
fn address_space_shared_declares_one_sized_shared_array_per_static() {
    // [[MaybeUninit<f32>; 16]; 16]: 1024 bytes, f32's alignment; declared once each.
    for name in ["TILE_A", "TILE_B"] {
        let decls = shared_decls(&format!("__cuda_std_shared_{name}_"));
        assert_eq!(decls.len(), 1, "{name}: {decls:?}");
        let (symbol, align, bytes) = &decls[0];
        assert_eq!((*align, *bytes), (4, 1024), "{symbol}");
        assert!(
            cvta_symbols(entry_ptx("compat_tiled_matmul")).contains(&symbol.as_str()),
            "compat_tiled_matmul does not take the address of {symbol}"
        );
    }
    // [u32; WARPS * 32] with a local `const WARPS: usize = 8`.
    let partial = shared_decls("__cuda_std_shared_PARTIAL_");
    assert_eq!(partial.len(), 1, "{partial:?}");
    assert_eq!((partial[0].1, partial[0].2), (4, 1024), "{}", partial[0].0);
    assert!(cvta_symbols(entry_ptx("compat_block_sum")).contains(&partial[0].0.as_str()));
}

#[test]
fn shared_array_with_a_local_const_length_declares_its_size() {
    let used = cvta_symbols(entry_ptx("compat_shared_array_reverse"));
    assert_eq!(used.len(), 1, "{used:?}");
    let decl = shared_decls(used[0]);
    assert_eq!(decl.len(), 1, "{used:?}: {decl:?}");
    // [u32; 128]
    assert_eq!((decl[0].1, decl[0].2), (4, 512), "{}", decl[0].0);
}

/// Deterministic values in [-1, 1) with short mantissas (so sums are not trivially exact
/// either way; the comparison is bitwise because the operation order is the same).
fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let h = i
                .wrapping_mul(0x9E37_79B9)
                .wrapping_add(seed)
                .rotate_left(13);
            (h % 2048) as f32 / 1024.0 - 1.0
        })
        .collect()
}

#[test]
fn tiled_matmul_with_address_space_shared_matches_the_cpu() {
    let gpu = gpu();
    // Sizes that are not multiples of the tile, so partial tiles are exercised.
    for (m, n, k) in [(16usize, 16usize, 16usize), (37, 53, 29), (64, 48, 100)] {
        let a = values(m * k, 1);
        let b = values(k * n, 2);
        let d_a = DeviceBuffer::from_slice_async(&a, gpu.stream()).unwrap();
        let d_b = DeviceBuffer::from_slice_async(&b, gpu.stream()).unwrap();
        let mut d_c = DeviceBuffer::from_slice_async(&vec![f32::NAN; m * n], gpu.stream()).unwrap();
        let tile = COMPAT_TILE as u32;
        let cfg = LaunchConfig::new(
            ((n as u32).div_ceil(tile), (m as u32).div_ceil(tile)),
            (tile, tile),
            0,
        );
        // SAFETY: 16×16 blocks covering n columns and m rows; c holds m·n elements.
        unsafe {
            compat_tiled_matmul
                .launch_unchecked(
                    gpu.module(),
                    gpu.stream(),
                    cfg,
                    (&d_a, &d_b, &mut d_c, m as u32, n as u32, k as u32),
                )
                .unwrap();
        }
        gpu.synchronize().unwrap();
        assert_identical(
            &format!("matmul {m}x{n}x{k}"),
            &f32_bits(&matmul_f32(&a, &b, m, k, n)),
            &f32_bits(&d_c.as_host_vec().unwrap()),
        );
    }
}

#[test]
fn block_sum_with_address_space_shared_matches_the_cpu() {
    let gpu = gpu();
    let n = 256 * 37 + 100; // a partial last block
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
    let blocks = (n as u32).div_ceil(COMPAT_SUM_BLOCK);
    let d_in = DeviceBuffer::from_slice_async(&input, gpu.stream()).unwrap();
    let mut d_sums = DeviceBuffer::<u32>::zeroed_async(blocks as usize, gpu.stream()).unwrap();
    let cfg = LaunchConfig::new(blocks, COMPAT_SUM_BLOCK, 0);
    // SAFETY: 256-thread blocks; one sum per block.
    unsafe {
        compat_block_sum
            .launch_unchecked(gpu.module(), gpu.stream(), cfg, (&d_in, &mut d_sums))
            .unwrap();
    }
    gpu.synchronize().unwrap();
    let expected: Vec<u32> = input
        .chunks(COMPAT_SUM_BLOCK as usize)
        .map(|c| c.iter().fold(0u32, |s, &x| s.wrapping_add(x)))
        .collect();
    assert_identical("block sums", &expected, &d_sums.as_host_vec().unwrap());
}

#[test]
fn shared_array_with_a_local_const_reverses_blocks() {
    let gpu = gpu();
    let block = COMPAT_REVERSE_BLOCK as usize;
    let n = block * 9;
    let input: Vec<u32> = (0..n as u32).map(|i| i ^ 0x5A5A).collect();
    let d_in = DeviceBuffer::from_slice_async(&input, gpu.stream()).unwrap();
    let mut d_out = DeviceBuffer::<u32>::zeroed_async(n, gpu.stream()).unwrap();
    let cfg = LaunchConfig::new((n / block) as u32, COMPAT_REVERSE_BLOCK, 0);
    // SAFETY: 128-thread blocks, exactly n threads; out holds n elements.
    unsafe {
        compat_shared_array_reverse
            .launch_unchecked(gpu.module(), gpu.stream(), cfg, (&d_in, &mut d_out))
            .unwrap();
    }
    gpu.synchronize().unwrap();
    let expected: Vec<u32> = (0..n)
        .map(|i| input[i - i % block + block - 1 - i % block])
        .collect();
    assert_identical("reversed", &expected, &d_out.as_host_vec().unwrap());
}

#[test]
fn glam_vectors_index_a_2d_grid() {
    let gpu = gpu();
    let (w, h) = (100u32, 37u32);
    let mut d_out =
        DeviceBuffer::from_slice_async(&vec![u32::MAX; (w * h) as usize], gpu.stream()).unwrap();
    let cfg = LaunchConfig::new((w.div_ceil(16), h.div_ceil(16)), (16, 16), 0);
    // SAFETY: out holds w·h elements; the grid covers w × h threads.
    unsafe {
        compat_glam_index
            .launch_unchecked(gpu.module(), gpu.stream(), cfg, (&mut d_out, w, h))
            .unwrap();
    }
    gpu.synchronize().unwrap();
    let expected: Vec<u32> = (0..w * h).collect();
    assert_identical("glam index", &expected, &d_out.as_host_vec().unwrap());
}
