//! Several GPUs with NCCL through `cust::nccl`: a dot product of 2^28 f64 pairs sharded over
//! 1 GPU, then over every GPU, each GPU reducing its shard with ferrocuda's dot kernel and
//! NCCL summing the partial results (`all_reduce`) so that every GPU holds the total; then
//! the all-reduce bandwidth of a 256 MiB f32 buffer per GPU. Prints wall-clock medians of 10
//! and the scaling, and checks every GPU's total against the CPU (the inputs are small
//! integers, so every summation order gives the exact total).
//!
//! `NCCL_NVLS_ENABLE=0 cargo run --release -p host --example 06-nccl` (needs a CUDA GPU and
//! NCCL; on one GPU it runs the 1-GPU case only).

use anyhow::{Context as _, Result, ensure};
use cust::{
    nccl::{Communicators, ReduceOp},
    prelude::Stream,
};
use host::timing::Repeat;
use host::{gpu::Gpu, vector};
use rayon::prelude::*;

/// Elements in each dot-product input.
const N: usize = 1 << 28;
/// f32 elements in each GPU's all-reduce buffer (256 MiB).
const ALL_REDUCE_LEN: usize = 1 << 26;
/// Timed repetitions.
const REPS: u32 = 10;

fn a(i: usize) -> f64 {
    (i % 13) as f64 - 6.0
}
fn b(i: usize) -> f64 {
    (i % 7) as f64 - 3.0
}

/// The dot product on the first `g` GPUs: (median ms, the total read back from every GPU).
fn sharded_dot(gpus: &[Gpu], g: usize) -> Result<(f64, Vec<f64>)> {
    let used = &gpus[..g];
    let shard = N / g;
    let mut inputs = Vec::new();
    let mut scratch = Vec::new();
    for (k, gpu) in used.iter().enumerate() {
        let range = k * shard..(k + 1) * shard;
        let xa: Vec<f64> = range.clone().into_par_iter().map(a).collect();
        let xb: Vec<f64> = range.into_par_iter().map(b).collect();
        inputs.push((vector::upload(gpu, &xa)?, vector::upload(gpu, &xb)?));
        scratch.push(vector::scratch::<f64>(gpu, shard)?);
    }
    let streams: Vec<Stream> = used.iter().map(|g| g.stream().clone()).collect();
    let comms = Communicators::new(&streams)?;
    // One warm-up, then REPS runs on the wall clock.
    let times = Repeat::new(1, REPS).wall(|| {
        for (k, gpu) in used.iter().enumerate() {
            vector::dot_dev(gpu, &inputs[k].0, &inputs[k].1, &mut scratch[k])?;
        }
        let mut partials: Vec<_> = scratch.iter_mut().map(|s| &mut s.result).collect();
        comms.all_reduce_in_place(&mut partials, ReduceOp::Sum)?;
        for gpu in used {
            gpu.synchronize()?;
        }
        Ok::<_, anyhow::Error>(())
    })?;
    let totals = scratch
        .iter()
        .map(|s| Ok(s.result.as_host_vec()?[0]))
        .collect::<Result<Vec<f64>>>()?;
    Ok((times.median_ms, totals))
}

/// All-reduce (sum) of one 256 MiB f32 buffer per GPU over the first `g` GPUs: median ms.
fn all_reduce_time(gpus: &[Gpu], g: usize) -> Result<f64> {
    let used = &gpus[..g];
    let mut send = Vec::new();
    let mut recv = Vec::new();
    for (r, gpu) in used.iter().enumerate() {
        send.push(vector::upload(gpu, &vec![(r + 1) as f32; ALL_REDUCE_LEN])?);
        recv.push(vector::upload(gpu, &vec![0.0f32; ALL_REDUCE_LEN])?);
    }
    let streams: Vec<Stream> = used.iter().map(|g| g.stream().clone()).collect();
    let comms = Communicators::new(&streams)?;
    let times = Repeat::new(1, REPS).wall(|| {
        comms.all_reduce(
            &send.iter().collect::<Vec<_>>(),
            &mut recv.iter_mut().collect::<Vec<_>>(),
            ReduceOp::Sum,
        )?;
        for gpu in used {
            gpu.synchronize()?;
        }
        Ok::<_, anyhow::Error>(())
    })?;
    let want = (g * (g + 1) / 2) as f32;
    for (gpu, r) in used.iter().zip(&recv) {
        let got = r.as_host_vec()?;
        ensure!(
            got.iter().all(|&v| v == want),
            "all_reduce on GPU {} did not give {want} everywhere",
            gpu.context().ordinal()
        );
    }
    Ok(times.median_ms)
}

fn main() -> Result<()> {
    if std::env::var_os(cust::nccl::NVLS_ENV).is_none() {
        // SAFETY: no other thread exists yet (nothing has been started), so nothing reads
        // the environment concurrently.
        unsafe { std::env::set_var(cust::nccl::NVLS_ENV, "0") };
    }
    let count = cust::device::Device::num_devices()? as usize;
    let gpus = (0..count)
        .map(Gpu::new)
        .collect::<Result<Vec<_>, _>>()
        .context("opening the GPUs")?;
    let (major, minor, patch) = cust::nccl::version()?;
    println!(
        "NCCL {major}.{minor}.{patch} on {count} x {} ({}={})",
        gpus[0].name(),
        cust::nccl::NVLS_ENV,
        std::env::var(cust::nccl::NVLS_ENV).unwrap_or_default()
    );
    let want: f64 = (0..N).into_par_iter().map(|i| a(i) * b(i)).sum();
    let gib = (2 * N * size_of::<f64>()) as f64 / f64::from(1u32 << 30);
    println!(
        "dot product of 2^{} f64 pairs ({gib:.0} GiB), sharded; partial sums all-reduced \
         (median of {REPS}, wall clock):",
        N.trailing_zeros()
    );
    let mut configs = vec![1];
    if count > 1 {
        configs.push(count);
    }
    let mut one = 0.0;
    for &g in &configs {
        let (ms, totals) = sharded_dot(&gpus, g)?;
        ensure!(
            totals.iter().all(|&t| t == want),
            "dot on {g} GPU(s): totals {totals:?}, CPU {want}"
        );
        let tb_s = (2 * N * size_of::<f64>()) as f64 / (ms * 1e-3) / 1e12;
        if g == 1 {
            one = ms;
            println!("  1 GPU : {ms:7.3} ms ({tb_s:.2} TB/s); total {want} on the GPU, = CPU");
        } else {
            println!(
                "  {g} GPUs: {ms:7.3} ms ({tb_s:.2} TB/s); total {want} on every GPU, = CPU; \
                 scaling {:.2}x",
                one / ms
            );
        }
    }
    let mib = (ALL_REDUCE_LEN * size_of::<f32>()) >> 20;
    for &g in &configs {
        let ms = all_reduce_time(&gpus, g)?;
        let alg_gb_s = (ALL_REDUCE_LEN * size_of::<f32>()) as f64 / (ms * 1e-3) / 1e9;
        // nccl-tests' bus bandwidth for all-reduce: algbw · 2(n−1)/n (PERFORMANCE.md there).
        let bus_gb_s = alg_gb_s * 2.0 * (g as f64 - 1.0) / g as f64;
        println!(
            "all_reduce (sum) of {mib} MiB f32 on {g} GPU(s): {ms:.3} ms, algbw {alg_gb_s:.0} \
             GB/s, busbw {bus_gb_s:.0} GB/s; result checked on every GPU"
        );
    }
    Ok(())
}
