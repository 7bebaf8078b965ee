//! `ferrocuda mandelbrot`: render the Mandelbrot set to a PNG file.
//!
//! The image is rendered in bands of rows and each band is streamed into the PNG encoder (on
//! its own thread, overlapping the next band's render), so memory stays bounded whatever the
//! size: sides up to 65536 pixels (2^32 pixels). With several GPUs (`--gpus`), each renders
//! bands as it becomes free and the bands are put back in order before encoding. Ctrl-C stops
//! between bands and removes the temporary file.

mod args;
mod memory;
mod png;
mod report;
mod stream;
mod verify;
mod view;

use super::device::open_pool;
use super::{OutputFile, check_interrupt, deep::Location};
use anyhow::{Context, Result};
use common::{Band, RenderJob};
use host::{
    deep::DeepView,
    mandelbrot::{
        BandJob, BufferSize, FloatJob, Precision, Style,
        pool::{GpuPool, Prepared},
    },
};
use std::time::Instant;

pub use super::MAX_ITER_LIMIT;
pub use args::{CenterParts, MandelbrotArgs, PrecisionArg, RenderArgs, check_size_and_iter};
pub use memory::{DEFAULT_BAND_PX, band_renderer};
pub use view::{check_scale, choose_precision, view_error};

use memory::{BandMemory, BandRenderers, default_band_rows, default_deep_band_rows};
use report::{describe, print_render, print_written};
use stream::{BandStream, Tally};
use view::{deep_location, float_job};

/// Peak resident memory of this process (`VmHWM` in /proc/self/status), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The image a `mandelbrot` run renders: an f32/f64 job or a perturbed one, both rendered
/// band by band through [`BandJob`].
enum Work {
    Float {
        job: RenderJob<f64>,
        precision: Precision,
    },
    Deep(Box<super::deep::DeepPrepared>),
}

impl Work {
    fn band_job(&self) -> BandJob<'_> {
        match self {
            Self::Float { job, precision } => BandJob::Float(FloatJob {
                job,
                precision: *precision,
            }),
            Self::Deep(d) => BandJob::Perturbed(&d.job),
        }
    }
}

/// What a run renders, every value checked before the output file is created: an f32/f64
/// job, or a deep view whose reference orbit is computed later ([`prepare`]: it can take
/// long, and a signal stops it).
enum Plan {
    Float {
        job: RenderJob<f64>,
        precision: Precision,
    },
    Deep {
        location: Location,
        view: DeepView,
        max_iter: u32,
    },
}

impl Plan {
    /// Samples per pixel a band renderer holds for a deep view (`supersample²`), `None` for
    /// an f32/f64 job (its supersampling kernels average within a pixel's work).
    fn perturbed_samples(&self, style: &Style) -> Option<u64> {
        matches!(self, Self::Deep { .. }).then_some(u64::from(style.supersample).pow(2))
    }
}

/// `ferrocuda mandelbrot`: plans the image, opens the devices, renders the bands into the
/// PNG file and reports what it took.
pub fn run(args: &MandelbrotArgs) -> Result<()> {
    let style = args.render.look.style();
    let plan = plan(args, &style)?;
    let output = OutputFile::create(&args.output)?;
    super::catch_signals();

    let pool = open_pool(args.render.backend, args.gpus)?;
    let verify = args.verify && pool.is_some();
    let memory = band_memory(args, pool.as_ref(), plan.perturbed_samples(&style), verify)?;
    let start = Instant::now();
    let rows = band_rows(args, &plan, &style, pool.as_ref(), memory);
    let bands: Vec<Band> = Band::split(args.height, rows).collect();
    let (work, prepared) = prepare_beside_buffers(plan, args, &style, pool.as_ref(), &bands);
    let work = work?;
    if args.verify && pool.is_none() {
        super::errln!(
            "note: --verify compares the GPU with the CPU; rendering on the CPU, nothing to compare"
        );
    }

    let render = BandStream::new(args, pool.as_ref(), work.band_job(), &bands, verify)
        .with_prepared(prepared);
    let mut tally = Tally::default();
    let encode = render.into_png(&output, &mut tally);
    let encode = encode.with_context(|| format!("writing `{}`", args.output.display()))?;
    check_interrupt()?;
    output.persist()?;

    let bands_note = if bands.len() > 1 {
        format!(", {} bands of {rows} rows", bands.len())
    } else {
        String::new()
    };
    let what = format!("{}{bands_note}", describe(&work, args.width, args.height));
    print_render(&what, pool.as_ref(), &tally)?;
    print_written(args, verify, &tally, encode, start)
}

/// Checks the size, the iteration limit and the view, and picks the arithmetic (a deep
/// view for a location past `f64`, else an f32/f64 job).
fn plan(args: &MandelbrotArgs, style: &Style) -> Result<Plan> {
    let (width, height) = (args.width, args.height);
    let cli_max_iter = args.max_iter.unwrap_or(super::DEFAULT_MAX_ITER);
    check_size_and_iter(width, height, cli_max_iter)?;
    Ok(match deep_location(args)? {
        Some(location) => {
            let view = super::deep::view(&location, width, height)?;
            let max_iter = super::deep::max_iter(args.max_iter, &location);
            Plan::Deep {
                location,
                view,
                max_iter,
            }
        }
        None => {
            let (job, precision) = float_job(args, style)?;
            Plan::Float { job, precision }
        }
    })
}

/// The host memory rule for this run's band renderers (`pool`: GPUs, else the CPU), with
/// `--band-rows` checked against it.
fn band_memory(
    args: &MandelbrotArgs,
    pool: Option<&GpuPool>,
    perturbed_samples: Option<u64>,
    verify: bool,
) -> Result<BandMemory> {
    let memory = BandMemory {
        perturbed_samples,
        renderers: match pool {
            None => BandRenderers::Cpu,
            Some(pool) => BandRenderers::Gpus {
                count: pool.len() as u64,
                reorder_window: pool.reorder_window() as u64,
            },
        },
        verify,
    };
    if let Some(rows) = args.band_rows {
        let deep = perturbed_samples.is_some();
        memory.check_rows(rows, args.width, args.height, deep)?;
    }
    Ok(memory)
}

/// The job the bands render: a deep view's reference orbit and BLA table are computed here.
fn prepare(plan: Plan, args: &MandelbrotArgs, style: &Style) -> Result<Work> {
    Ok(match plan {
        Plan::Float { job, precision } => Work::Float { job, precision },
        Plan::Deep {
            location,
            view,
            max_iter,
        } => {
            let mut d =
                super::deep::prepare(&view, max_iter, style, args.render.look.palette, None)?;
            d.scale = location.scale.text();
            Work::Deep(Box::new(d))
        }
    })
}

/// [`prepare`], and for a deep view on GPUs each GPU's buffers for `bands` made beside it
/// ([`GpuPool::prepare_beside`]): the allocations (about a millisecond, the host colours'
/// pages included) then do not follow the reference orbit and BLA table. An f32/f64 job has
/// no host work to hide them behind, so its GPUs allocate when the render starts.
fn prepare_beside_buffers(
    plan: Plan,
    args: &MandelbrotArgs,
    style: &Style,
    pool: Option<&GpuPool>,
    bands: &[Band],
) -> (Result<Work>, Option<Prepared>) {
    match (pool, plan.perturbed_samples(style)) {
        (Some(pool), Some(samples)) => {
            let size = BufferSize::for_bands(args.width, samples as usize, bands);
            let (work, prepared) = pool.prepare_beside(size, || prepare(plan, args, style));
            (work, Some(prepared))
        }
        _ => (prepare(plan, args, style), None),
    }
}

/// Rows per band: `--band-rows`, else the job's default for the number of GPUs within the
/// memory rule; at most the image height. Known before a deep view's reference orbit.
fn band_rows(
    args: &MandelbrotArgs,
    plan: &Plan,
    style: &Style,
    pool: Option<&GpuPool>,
    memory: BandMemory,
) -> u32 {
    let gpus = pool.map_or(1, GpuPool::len);
    args.band_rows
        .unwrap_or_else(|| {
            let default = match plan {
                Plan::Float { job, .. } => default_band_rows(job, gpus),
                Plan::Deep { view, max_iter, .. } => {
                    let coloring = style.coloring(args.render.look.palette);
                    let job = view.job(*max_iter, coloring.bailout_sqr::<f64>());
                    default_deep_band_rows(&job, style.supersample, gpus)
                }
            };
            default.min(memory.max_rows(args.width))
        })
        .min(args.height)
}
