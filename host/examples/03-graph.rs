//! CUDA graphs with the `cust` runtime: a chain of 100 tiny kernels (STREAM scale on 256
//! elements, `b = q·a` then `a = q·b`, 50 times) queued launch by launch on a stream, then
//! captured once into a graph and replayed. Prints the GPU time per kernel both ways (CUDA
//! events around the chain, median of 20 repetitions) and the host time to queue the chain,
//! then checks the buffer against the same multiplications on the CPU.
//!
//! Then the same with a compute graph (`cust::graph::ComputeGraph`): four independent chains
//! of 24 kernels and three additions joining their ends, declared as nodes with inputs,
//! queued node by node on one stream against built once into a CUDA graph (whose branches
//! may run concurrently) and replayed; checked against the CPU.
//!
//! `cargo run --release -p host --example 03-graph` (needs a CUDA GPU).

use anyhow::{Result, ensure};
use cust::graph::ComputeGraph;
use cust::prelude::*;
use host::launch::for_num_elems;
use host::timing::{Repeat, Stats, event_time};
use kernels::vector::{add_f32, scale_f32};
use std::time::{Duration, Instant};

/// Kernels in the chain (even: the result ends in `a`).
const CHAIN: usize = 100;
/// Timed repetitions of the chain, each way.
const REPS: usize = 20;

/// Runs `queue` (work queued on `stream`) `REPS + 1` times, the first as a warm-up, and gives
/// the medians of the GPU time (CUDA events around the queued work) and of the host time to
/// queue it, both in ms.
fn timed_runs(stream: &Stream, queue: &mut dyn FnMut() -> CudaResult<()>) -> Result<(f64, f64)> {
    let ctx = CurrentContext::get_current()?;
    let runs = Repeat::new(1, REPS as u32).run(|| {
        let mut host = Duration::ZERO;
        let queued = || {
            let t = Instant::now();
            queue()?;
            host = t.elapsed();
            Ok(())
        };
        let gpu = event_time(&ctx, stream, queued, || stream.synchronize())?;
        Ok::<_, CudaError>((gpu, host))
    })?;
    let median = |pick: fn(&(Duration, Duration)) -> Duration| {
        Stats::from_durations(runs.iter().map(pick)).median_ms
    };
    Ok((median(|r| r.0), median(|r| r.1)))
}

fn main() -> Result<()> {
    let ctx = cust::quick_init()?;
    let module = Module::from_image(&host::KERNELS)?;
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
    let n = 256;
    let x0: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 / 256.0).collect();
    let mut a = DeviceBuffer::from_slice(&x0)?;
    let mut b = DeviceBuffer::<f32>::zeroed(n)?;
    let q = 1.0001f32;
    let cfg = for_num_elems(n, 256)?;

    // Queues the chain on `s`.
    let chain = |s: &Stream, a: &mut DeviceBuffer<f32>, b: &mut DeviceBuffer<f32>| {
        for _ in 0..CHAIN / 2 {
            scale_f32.launch(&module, s, cfg, (&*a, q, &mut *b))?;
            scale_f32.launch(&module, s, cfg, (&*b, q, &mut *a))?;
        }
        Ok::<(), CudaError>(())
    };
    // Launch by launch; one warm-up chain first (module and function lookup).
    let (s_gpu, s_host) = timed_runs(&stream, &mut || chain(&stream, &mut a, &mut b))?;

    // ANCHOR: capture
    // Captured once, replayed: the graph borrows `a` and `b` until it is dropped.
    let t = Instant::now();
    let graph = stream.capture(|s| chain(s, &mut a, &mut b))?;
    graph.upload()?;
    let build = t.elapsed();
    let (g_gpu, g_host) = timed_runs(&stream, &mut || graph.launch())?;
    drop(graph);
    // ANCHOR_END: capture
    let launches = 2 * (REPS + 1) * CHAIN;

    // Every launch multiplied each element by q once (one rounding, no FMA), in order.
    let got = a.as_host_vec()?;
    let want: Vec<f32> = x0
        .iter()
        .map(|&x| (0..launches).fold(x, |v, _| q * v))
        .collect();
    ensure!(
        got.iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits()),
        "GPU result differs from the CPU after {launches} kernels"
    );

    let per = |ms: f64| ms * 1e3 / CHAIN as f64;
    println!(
        "{} on {}: chain of {CHAIN} kernels ({n} elements each), median of {REPS}",
        scale_f32.name(),
        ctx.name()
    );
    println!(
        "  stream launches: {:.2} µs per kernel on the GPU, {:.2} µs per kernel to queue",
        per(s_gpu),
        per(s_host)
    );
    println!(
        "  graph replay:    {:.2} µs per kernel on the GPU, {:.2} µs per kernel to queue \
         (capture and instantiation once: {:.0} µs)",
        per(g_gpu),
        per(g_host),
        build.as_secs_f64() * 1e6
    );
    println!(
        "  graph vs stream: {:.2}x on the GPU, {:.1}x on the host; {launches} kernels, \
         result identical to the CPU",
        s_gpu / g_gpu,
        s_host / g_host
    );
    compute_graph(&module, &stream)
}

/// Branches of the compute graph, and kernels in each (even).
const BRANCHES: usize = 4;
const BRANCH_LEN: usize = 24;

/// The second half: a compute graph of four chains joined by three additions.
fn compute_graph(module: &Module, stream: &Stream) -> Result<()> {
    let n = 256;
    let q = 1.0001f32;
    let cfg = for_num_elems(n, 256)?;
    let x0: Vec<Vec<f32>> = (0..BRANCHES)
        .map(|b| (0..n).map(|i| (b * n + i) as f32 / 64.0 - 7.0).collect())
        .collect();
    let mut a = x0
        .iter()
        .map(|x| DeviceBuffer::from_slice(x))
        .collect::<CudaResult<Vec<_>>>()?;
    let mut b = (0..BRANCHES)
        .map(|_| DeviceBuffer::<f32>::zeroed(n))
        .collect::<CudaResult<Vec<_>>>()?;
    let mut s01 = DeviceBuffer::<f32>::zeroed(n)?;
    let mut s23 = DeviceBuffer::<f32>::zeroed(n)?;
    let mut out = DeviceBuffer::<f32>::zeroed(n)?;

    // Node "c{branch}.{k}" reads the node before it; the sums read the ends of the chains.
    let mut dag = ComputeGraph::new();
    let end = |br: usize| format!("c{br}.{}", BRANCH_LEN - 1);
    dag.node("out", &["s01", "s23"])?;
    dag.node("s01", &[&end(0), &end(1)])?;
    dag.node("s23", &[&end(2), &end(3)])?;
    for br in 0..BRANCHES {
        dag.node(&format!("c{br}.0"), &[])?;
        for k in 1..BRANCH_LEN {
            dag.node(&format!("c{br}.{k}"), &[&format!("c{br}.{}", k - 1)])?;
        }
    }
    let kernels = dag.len();
    let mut record = |node: &str, s: &Stream| -> CudaResult<()> {
        match node {
            "s01" => add_f32.launch(module, s, cfg, (&a[0], &a[1], &mut s01)),
            "s23" => add_f32.launch(module, s, cfg, (&a[2], &a[3], &mut s23)),
            "out" => add_f32.launch(module, s, cfg, (&s01, &s23, &mut out)),
            chain => {
                let (br, k) = chain[1..]
                    .split_once('.')
                    .and_then(|(br, k)| Some((br.parse::<usize>().ok()?, k.parse::<usize>().ok()?)))
                    .ok_or_else(|| CudaError::GraphSpec(format!("no node `{chain}`")))?;
                // Even steps a → b, odd steps b → a: the chain ends in a.
                if k % 2 == 0 {
                    scale_f32.launch(module, s, cfg, (&a[br], q, &mut b[br]))
                } else {
                    scale_f32.launch(module, s, cfg, (&b[br], q, &mut a[br]))
                }
            }
        }
    };
    let (q_gpu, q_host) = timed_runs(stream, &mut || dag.queue(stream, &mut record))?;
    let t = Instant::now();
    let graph = dag.build(stream, &mut record)?;
    graph.upload()?;
    let build = t.elapsed();
    let (g_gpu, g_host) = timed_runs(stream, &mut || graph.launch())?;
    drop(graph);
    let runs = 2 * (REPS + 1);

    // Each run multiplies every chain BRANCH_LEN times by q, in order; the sums add the
    // chains' ends of the last run.
    let chains: Vec<Vec<f32>> = x0
        .iter()
        .map(|x| {
            x.iter()
                .map(|&v| (0..runs * BRANCH_LEN).fold(v, |v, _| q * v))
                .collect()
        })
        .collect();
    let want: Vec<f32> = (0..n)
        .map(|i| (chains[0][i] + chains[1][i]) + (chains[2][i] + chains[3][i]))
        .collect();
    let got = out.as_host_vec()?;
    ensure!(
        got.iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits()),
        "compute graph result differs from the CPU after {runs} runs"
    );
    let per = |ms: f64| ms * 1e3 / kernels as f64;
    println!(
        "compute graph: {BRANCHES} chains of {BRANCH_LEN} kernels joined by 3 additions \
         ({kernels} nodes with declared inputs), median of {REPS}"
    );
    println!(
        "  nodes queued on one stream: {:.2} µs per kernel on the GPU, {:.2} µs per kernel \
         to queue",
        per(q_gpu),
        per(q_host)
    );
    println!(
        "  built into a graph, replayed: {:.2} µs per kernel on the GPU, {:.2} µs per kernel \
         to queue (built once: {:.0} µs)",
        per(g_gpu),
        per(g_host),
        build.as_secs_f64() * 1e6
    );
    println!(
        "  graph vs stream: {:.2}x on the GPU, {:.1}x on the host; {runs} runs, result \
         identical to the CPU",
        q_gpu / g_gpu,
        q_host / g_host
    );
    Ok(())
}
