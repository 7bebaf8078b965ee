//! Hot reloading of kernels: edit a kernel's source, and the running program launches the new
//! code a moment later, without restarting.
//!
//! Two modes:
//! - **Build** (default; needs cargo, the GPU is optional): writes a small kernels crate
//!   (`scale_by_gain`: `out[i] = x[i] · GAIN`) to a temporary folder, builds it, and watches it
//!   with `cuda_builder`'s watcher (`notify`). It then edits the line `const GAIN: f32 = …;`
//!   `--edits` times, and once with a syntax error. For each edit it prints the time from
//!   the write to the rebuilt PTX; with a GPU, it also loads the new module into a
//!   `cust::module::HotModule`, swaps it in, launches it and checks that the result uses the
//!   new gain. The broken edit must fail with the compiler's message while the old kernels
//!   keep working. `--save-ptx DIR` keeps each edit's PTX as `DIR/gain-<g>.ptx`.
//! - **PTX** (`--ptx-dir DIR`; needs a GPU, not cargo): for machines without a Rust toolchain.
//!   It watches `DIR/live/kernels.ptx` with `notify`, copies the saved `gain-<g>.ptx` files
//!   over it in turn, and prints the time from each write to the new module swapped in,
//!   launched and checked.
//!
//! `cargo run --release -p host --example 07-hot-reload [-- --edits 3 --save-ptx DIR]`

use anyhow::{Context as _, Result, bail, ensure};
use cuda_builder::{CudaBuilder, watch::Rebuild};
use cust::{launch::Launch, module::HotModule, prelude::*};
use notify::Watcher as _;
use std::{
    path::{Path, PathBuf},
    sync::mpsc,
    time::{Duration, Instant},
};

/// Elements the kernel scales.
const N: usize = 4096;
/// The longest wait for a rebuild.
const TIMEOUT: Duration = Duration::from_secs(300);
/// The longest wait for the watcher to load a written PTX file (expected: milliseconds).
const RELOAD_TIMEOUT: Duration = Duration::from_secs(20);

/// The kernels crate's source; the line `const GAIN: f32 = 1.0;` is what the edits change.
const LIB_RS: &str = include_str!("hot-reload/lib.rs");

/// The same source compiled into this program: the typed handle `scale_by_gain`.
#[path = "hot-reload/lib.rs"]
#[allow(dead_code)]
mod hot_kernels;
use hot_kernels::scale_by_gain;

fn lib_rs(gain: u32) -> String {
    LIB_RS.replace(
        "const GAIN: f32 = 1.0;",
        &format!("const GAIN: f32 = {gain}.0;"),
    )
}

struct Options {
    edits: u32,
    save_ptx: Option<PathBuf>,
    ptx_dir: Option<PathBuf>,
}

fn options() -> Result<Options> {
    let mut o = Options {
        edits: 3,
        save_ptx: None,
        ptx_dir: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--edits" => {
                let v = value()?;
                o.edits = v
                    .parse()
                    .ok()
                    .filter(|e| (1..=50).contains(e))
                    .with_context(|| format!("--edits {v}: give a count from 1 to 50"))?;
            }
            "--save-ptx" => o.save_ptx = Some(value()?.into()),
            "--ptx-dir" => o.ptx_dir = Some(value()?.into()),
            other => {
                bail!("unknown argument {other}; allowed: --edits N, --save-ptx DIR, --ptx-dir DIR")
            }
        }
    }
    Ok(o)
}

/// A GPU with an input buffer, for checking each module.
struct Check {
    ctx: Context,
    stream: Stream,
    x: Vec<f32>,
    x_dev: DeviceBuffer<f32>,
    out: DeviceBuffer<f32>,
}

impl Check {
    fn new() -> Result<Self> {
        let ctx = cust::quick_init()?;
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
        let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.25 - 100.0).collect();
        let x_dev = DeviceBuffer::from_slice(&x)?;
        let out = DeviceBuffer::<f32>::zeroed(N)?;
        Ok(Self {
            ctx,
            stream,
            x,
            x_dev,
            out,
        })
    }

    /// Launches the hot module's kernel and checks `out = x · gain` exactly.
    fn run(&mut self, hot: &HotModule, gain: u32) -> Result<()> {
        let module = hot.current();
        let cfg = cust::function::LaunchConfig::new((N as u32).div_ceil(256), 256, 0);
        scale_by_gain.launch(&module, &self.stream, cfg, (&self.x_dev, &mut self.out))?;
        self.stream.synchronize()?;
        let got = self.out.as_host_vec()?;
        let g = gain as f32;
        ensure!(
            got.iter().zip(&self.x).all(|(o, x)| *o == x * g),
            "generation {}: the kernel does not scale by {gain}",
            hot.generation()
        );
        Ok(())
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Build mode: edits, rebuilds, and (with a GPU) reloads.
fn build_mode(o: &Options) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("workspace root")?;
    let cuda_std = root.join("crates/cuda_std");
    std::fs::create_dir_all(dir.path().join("src"))?;
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!(
            "[package]\nname = \"hot-kernels\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\
             publish = false\n\n[dependencies]\n\
             cuda_std = {{ path = {:?}, package = \"ferrocuda-cuda-std\" }}\n\n[lib]\n\
             crate-type = [\"cdylib\", \"rlib\"]\n\n[workspace]\n",
            cuda_std.display().to_string()
        ),
    )?;
    let lib = dir.path().join("src/lib.rs");
    std::fs::write(&lib, lib_rs(1))?;
    if let Some(save) = &o.save_ptx {
        std::fs::create_dir_all(save)?;
    }

    // The kernels' target folder is kept between runs (core for nvptx is built once).
    let target = root.join("target/hot-reload");
    let (tx, rx) = mpsc::channel::<Rebuild>();
    let t = Instant::now();
    // An unoptimised build without debug information: a one-line change rebuilds in about
    // 0.2 s instead of twelve (see `CudaBuilder::release`).
    let (first, watcher) = CudaBuilder::new(dir.path())
        .target_dir(&target)
        .release(false)
        .debug_info(false)
        .watch(move |r| {
            let _ = tx.send(r);
        })?;
    println!(
        "built hot-kernels in {:.0} ms; watching {} files (the crate and its dependencies)",
        ms(t.elapsed()),
        first.inputs.len()
    );
    let mut check = match Check::new() {
        Ok(c) => Some(c),
        Err(e) => {
            println!("no GPU ({e}): rebuilds only, no loading");
            None
        }
    };
    let hot = match &check {
        Some(_) => Some(HotModule::new(Module::from_file(&first.ptx_path)?)),
        None => None,
    };
    if let (Some(c), Some(h)) = (&mut check, &hot) {
        c.run(h, 1)?;
        println!("GPU {}: generation 0 scales by 1", c.ctx.name());
    }
    let save = |gain: u32, ptx: &Path| -> Result<()> {
        if let Some(save) = &o.save_ptx {
            std::fs::copy(ptx, save.join(format!("gain-{gain}.ptx")))?;
        }
        Ok(())
    };
    save(1, &first.ptx_path)?;

    let mut totals = Vec::new();
    for edit in 1..=o.edits {
        let gain = edit + 1;
        let written = Instant::now();
        std::fs::write(&lib, lib_rs(gain))?;
        let r = rx
            .recv_timeout(TIMEOUT)
            .context("no rebuild after an edit")?;
        // The PTX is ready when the watcher hands it over (after the debounce and the build).
        let built = Instant::now();
        let artifact = r
            .result
            .with_context(|| format!("rebuild after setting GAIN to {gain}"))?;
        save(gain, &artifact.ptx_path)?;
        let mut line = format!(
            "edit {edit} (GAIN = {gain}.0): noticed after {:.0} ms, rebuilt in {:.0} ms",
            ms(r.noticed - written),
            ms(r.build_time)
        );
        let done = if let (Some(c), Some(h)) = (&mut check, &hot) {
            let t = Instant::now();
            let module = Module::from_file(&artifact.ptx_path)?;
            let load = t.elapsed();
            h.swap(module)?;
            c.run(h, gain)?;
            line += &format!(
                ", PTX loaded in {:.1} ms, swapped and checked: edit to new kernel {:.0} ms",
                ms(load),
                ms(written.elapsed())
            );
            written.elapsed()
        } else {
            line += &format!(": edit to new PTX {:.0} ms", ms(built - written));
            built - written
        };
        totals.push(ms(done));
        println!("{line}");
    }

    // A broken edit: the rebuild fails with the compiler's message; the old kernels stay.
    std::fs::write(
        &lib,
        lib_rs(o.edits + 1).replace("x[i] * GAIN", "x[i] * GAIN +"),
    )?;
    let r = rx
        .recv_timeout(TIMEOUT)
        .context("no rebuild after the broken edit")?;
    let Err(e) = r.result else {
        bail!("a kernel with a syntax error built");
    };
    let message = e.to_string();
    let first_error = message
        .lines()
        .find(|l| l.contains("error"))
        .unwrap_or("(no error line)");
    println!("broken edit: rebuild failed as it should: {first_error}");
    if let (Some(c), Some(h)) = (&mut check, &hot) {
        c.run(h, o.edits + 1)?;
        println!(
            "  the previous kernels still run (generation {})",
            h.generation()
        );
    }
    drop(watcher);
    totals.sort_by(f64::total_cmp);
    println!(
        "edit to {}: median {:.0} ms over {} edits ({} cores)",
        if check.is_some() {
            "new kernel running"
        } else {
            "new PTX"
        },
        totals[totals.len() / 2],
        totals.len(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    Ok(())
}

/// PTX mode: saved PTX files copied over a watched file, reloaded and checked on the GPU.
fn ptx_mode(dir: &Path) -> Result<()> {
    let mut gains: Vec<u32> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix("gain-")?
                .strip_suffix(".ptx")?
                .parse()
                .ok()
        })
        .collect();
    gains.sort_unstable();
    ensure!(
        gains.len() >= 2 && gains[0] == 1,
        "{}: expected gain-1.ptx, gain-2.ptx, ... (made by --save-ptx)",
        dir.display()
    );
    let live_dir = dir.join("live");
    std::fs::create_dir_all(&live_dir)?;
    let live = live_dir.join("kernels.ptx");
    std::fs::copy(dir.join("gain-1.ptx"), &live)?;
    let mut check = Check::new()?;
    let hot = std::sync::Arc::new(HotModule::new(Module::from_file(&live)?));
    check.run(&hot, 1)?;
    println!("GPU {}: generation 0 scales by 1", check.ctx.name());

    // The watcher thread loads each new PTX and swaps it in; the main thread waits for the
    // generation to change.
    let (tx, rx) = mpsc::channel::<Result<(u64, Duration)>>();
    let (ctx, watched, hot2) = (check.ctx.clone(), live.clone(), hot.clone());
    let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        let Ok(e) = e else { return };
        let closed = matches!(
            e.kind,
            notify::EventKind::Access(notify::event::AccessKind::Close(
                notify::event::AccessMode::Write
            ))
        );
        // notify reports absolute paths; only `live_dir` is watched, so the file name
        // identifies the file.
        if !closed || !e.paths.iter().any(|p| p.file_name() == watched.file_name()) {
            return;
        }
        CurrentContext::set_current(&ctx);
        let t = Instant::now();
        let loaded = Module::from_file(&watched)
            .map_err(anyhow::Error::from)
            .and_then(|m| Ok(hot2.swap(m)?))
            .map(|generation| (generation, t.elapsed()));
        let _ = tx.send(loaded);
    })?;
    watcher.watch(&live_dir, notify::RecursiveMode::NonRecursive)?;

    let mut totals = Vec::new();
    for &gain in &gains[1..] {
        let written = Instant::now();
        std::fs::copy(dir.join(format!("gain-{gain}.ptx")), &live)?;
        let (generation, load) = rx.recv_timeout(RELOAD_TIMEOUT).with_context(|| {
            format!(
                "no reload within {RELOAD_TIMEOUT:?} of writing {}",
                live.display()
            )
        })??;
        check.run(&hot, gain)?;
        let total = written.elapsed();
        totals.push(ms(total));
        println!(
            "gain-{gain}.ptx written: generation {generation} loaded in {:.1} ms; write to new \
             kernel checked {:.1} ms",
            ms(load),
            ms(total)
        );
    }
    totals.sort_by(f64::total_cmp);
    println!(
        "PTX write to new kernel running: median {:.1} ms over {} reloads",
        totals[totals.len() / 2],
        totals.len()
    );
    Ok(())
}

fn main() -> Result<()> {
    let o = options()?;
    match &o.ptx_dir {
        Some(dir) => ptx_mode(dir),
        None => build_mode(&o),
    }
}
