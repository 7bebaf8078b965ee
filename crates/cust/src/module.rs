//! [`Module`]: kernels loaded from PTX, a cubin, a file, or a [`ModuleImage`] (the manifest
//! that `cuda_builder` generates: PTX, ahead-of-time cubins, entry points and their
//! parameter sizes).

use crate::{
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
    function::{Function, Kernel},
};
use cudarc::{
    driver::{CudaModule, sys},
    nvrtc::Ptx,
};
use std::{
    collections::HashMap,
    fmt,
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// The kernels module manifest that `cuda_builder` generates (the one source of truth for
/// entry names, parameter layouts and cubins), defined in `cust_core`. Include it with
/// `include!(env!("<CRATE>_MODULE"))` and load it with [`Module::from_image`].
pub use cust_core::{
    ArchVariant, ComputeCapability, Cubin, EntryPoint, EntryUnavailable, ModuleImage, ModuleTarget,
    Resources,
};

/// What a module was loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// A cubin for exactly the device's compute capability (no JIT compilation).
    Cubin(ComputeCapability),
    /// PTX, compiled by the driver when loaded.
    PtxJit,
    /// No code loaded: the CPU emulator runs the kernels' host bodies
    /// ([`Context::emulator`](crate::context::Context::emulator)).
    Emulator,
}

impl fmt::Display for ModuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cubin(cc) => write!(f, "cubin {cc}"),
            Self::PtxJit => f.write_str("PTX JIT"),
            Self::Emulator => f.write_str("CPU emulator"),
        }
    }
}

/// A JIT option of cust 0.3's `Module::from_ptx`. This runtime loads modules with the
/// driver's defaults; any option is refused with [`CudaError::Unsupported`] rather than
/// ignored. Pass `&[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModuleJitOption {
    /// Limit registers per thread (`CU_JIT_MAX_REGISTERS`).
    MaxRegisters(u32),
    /// Optimisation level 0..=4 (`CU_JIT_OPTIMIZATION_LEVEL`).
    OptLevel(u32),
}

pub(crate) struct ModuleInner {
    /// `None` on the CPU emulator.
    pub(crate) module: Option<Arc<CudaModule>>,
    pub(crate) ctx: Context,
    pub(crate) origin: String,
    pub(crate) image: Option<&'static ModuleImage>,
    source: ModuleSource,
    load_time: Duration,
    functions: Mutex<HashMap<String, Arc<Kernel>>>,
    /// For a module from an image: the device's compute capability and the arch-specific
    /// variants loaded beside the baseline (those the device runs).
    arch: Option<ArchState>,
}

/// The device and the loaded variants of a module from a [`ModuleImage`].
struct ArchState {
    device: ComputeCapability,
    variants: Vec<LoadedVariant>,
}

/// One arch-specific variant of a [`ModuleImage`], loaded.
struct LoadedVariant {
    /// Its index in [`ModuleImage::variants`].
    index: usize,
    arch: ComputeCapability,
    module: Arc<CudaModule>,
    source: ModuleSource,
}

/// A loaded module. Cheap to clone (shared). Kernels are looked up by name with
/// [`Module::get_function`] (cached), or launched through `#[kernel]` handles
/// (see [`mod@crate::launch`]).
#[derive(Clone)]
pub struct Module {
    pub(crate) inner: Arc<ModuleInner>,
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module")
            .field("origin", &self.inner.origin)
            .field("source", &self.inner.source)
            .finish_non_exhaustive()
    }
}

const NO_BINARY_HINT: &str = " (a cubin runs only on the architecture it was assembled for: \
                              load the PTX, or assemble for this GPU's sm_XY)";
const PTX_HINT: &str = " (PTX needs a driver at least as new as its .version: update the \
                        driver, or build with an older PTX ISA)";

impl Module {
    /// Loads PTX text on the current context; the driver compiles it for the GPU.
    ///
    /// # Errors
    /// [`CudaError::InvalidModule`] if `ptx` is not PTX text (no `.version` / `.target`
    /// directive, or a NUL byte), [`CudaError::ModuleLoad`] if the driver rejects it,
    /// [`CudaError::Unsupported`] for JIT options, [`CudaError::NoContext`].
    pub fn from_ptx(ptx: impl AsRef<str>, options: &[ModuleJitOption]) -> CudaResult<Self> {
        no_options(options)?;
        Self::load_ptx(
            &CurrentContext::get_current()?,
            ptx.as_ref(),
            "PTX text".into(),
            None,
        )
    }

    /// Loads a cubin (or fatbin) on the current context.
    ///
    /// # Errors
    /// [`CudaError::InvalidModule`] if `bytes` is not an ELF cubin or a fatbin,
    /// [`CudaError::ModuleLoad`] if the driver rejects it (e.g. built for another
    /// architecture), [`CudaError::Unsupported`] for JIT options, [`CudaError::NoContext`].
    pub fn from_cubin(bytes: impl AsRef<[u8]>, options: &[ModuleJitOption]) -> CudaResult<Self> {
        no_options(options)?;
        Self::load_binary(
            &CurrentContext::get_current()?,
            bytes.as_ref(),
            "cubin".into(),
        )
    }

    /// Loads a module file on the current context: PTX text (`.ptx`), a cubin or a fatbin,
    /// told apart by content.
    ///
    /// # Errors
    /// [`CudaError::ModuleFile`] if it cannot be read, [`CudaError::InvalidModule`] naming
    /// the file if it is none of those, [`CudaError::ModuleLoad`] if the driver rejects it.
    pub fn from_file(path: impl AsRef<Path>) -> CudaResult<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| CudaError::ModuleFile {
            path: path.to_path_buf(),
            source,
        })?;
        let ctx = CurrentContext::get_current()?;
        let origin = format!("module file {}", path.display());
        if is_binary(&bytes) {
            return Self::load_binary(&ctx, &bytes, origin);
        }
        match std::str::from_utf8(&bytes) {
            Ok(text) => Self::load_ptx(&ctx, text, origin, None),
            Err(_) => Err(CudaError::InvalidModule {
                origin,
                reason: "expected PTX text, an ELF cubin or a fatbin".into(),
            }),
        }
    }

    /// Loads a `cuda_builder` module image on the current context: the cubin whose
    /// architecture equals the device's compute capability, if the image has one and the
    /// driver accepts it, else the PTX (JIT-compiled). [`Module::source`] says which.
    ///
    /// Beside that baseline, it loads each arch-specific variant of the image
    /// ([`ModuleImage::variants`], e.g. `sm_90a`) that the device runs
    /// ([`ComputeCapability::runs_on`]: exactly 9.0 for sm_90a): its cubin where the image
    /// has one for the device's architecture and the driver accepts it, else its PTX.
    /// [`Module::get_function`] and [`Module::kernel`] then take each kernel from the best
    /// loaded target that defines it ([`ModuleImage::target_for`]: a variant before the
    /// baseline); [`Module::variant_sources`] says what was loaded.
    ///
    /// # Errors
    /// As [`Module::from_ptx`], for the baseline or a variant the device runs.
    pub fn from_image(image: &'static ModuleImage) -> CudaResult<Self> {
        Self::from_image_in(&CurrentContext::get_current()?, image)
    }

    /// [`Module::from_image`] on a given context.
    ///
    /// # Errors
    /// As [`Module::from_ptx`].
    pub fn from_image_in(ctx: &Context, image: &'static ModuleImage) -> CudaResult<Self> {
        let origin = format!("kernels module `{}`", image.name);
        if ctx.is_emulator() {
            return Ok(Self::with_parts(
                ctx,
                None,
                origin,
                Some(image),
                ModuleSource::Emulator,
                Duration::ZERO,
            ));
        }
        let cc = ctx.compute_capability()?;
        let mut variants = Vec::new();
        for (index, variant) in image.variants_for(cc) {
            let v_origin = format!("{origin} ({} variant)", variant.arch);
            let (module, source, _) = load_image_target(
                ctx,
                variant.ptx,
                &variant.cubins,
                variant.arch,
                cc,
                &v_origin,
            )?;
            variants.push(LoadedVariant {
                index,
                arch: variant.arch,
                module,
                source,
            });
        }
        let (module, source, load_time) =
            load_image_target(ctx, image.ptx, &image.cubins, cc, cc, &origin)?;
        let mut m = Self::new(ctx, module, origin, Some(image), source, load_time);
        if let Some(inner) = Arc::get_mut(&mut m.inner) {
            inner.arch = Some(ArchState {
                device: cc,
                variants,
            });
        }
        Ok(m)
    }

    /// [`Module::from_cubin`] on a given context, e.g. a cubin that nvcc built at run time;
    /// `origin` names the module in errors (e.g. "CUDA C module `vector`"). Its kernels'
    /// parameter sizes come from the driver (`cuFuncGetParamInfo`, CUDA 12.4 and later), so
    /// typed handles ([`Kernel::external`](cust_core::launch::Kernel::external)) resolved in
    /// it are checked too.
    ///
    /// # Errors
    /// As [`Module::from_cubin`].
    pub fn from_cubin_in(ctx: &Context, bytes: &[u8], origin: &str) -> CudaResult<Self> {
        Self::load_binary(ctx, bytes, origin.to_owned())
    }

    /// [`Module::from_ptx`] on a given context.
    ///
    /// # Errors
    /// As [`Module::from_ptx`].
    pub fn from_ptx_in(ctx: &Context, ptx: &str) -> CudaResult<Self> {
        Self::load_ptx(ctx, ptx, "PTX text".into(), None)
    }

    fn load_ptx(
        ctx: &Context,
        ptx: &str,
        origin: String,
        image: Option<&'static ModuleImage>,
    ) -> CudaResult<Self> {
        check_ptx(ptx).map_err(|reason| CudaError::InvalidModule {
            origin: origin.clone(),
            reason,
        })?;
        let t0 = Instant::now();
        let module = load_cudarc_ptx(ctx, ptx, &origin)?;
        Ok(Self::new(
            ctx,
            module,
            origin,
            image,
            ModuleSource::PtxJit,
            t0.elapsed(),
        ))
    }

    fn load_binary(ctx: &Context, bytes: &[u8], origin: String) -> CudaResult<Self> {
        let t0 = Instant::now();
        let module = load_cudarc_binary(ctx, bytes, &origin)?;
        let cc = ctx
            .compute_capability()
            .unwrap_or(ComputeCapability::new(0, 0));
        let source = ModuleSource::Cubin(cc);
        Ok(Self::new(ctx, module, origin, None, source, t0.elapsed()))
    }

    fn new(
        ctx: &Context,
        module: Arc<CudaModule>,
        origin: String,
        image: Option<&'static ModuleImage>,
        source: ModuleSource,
        load_time: Duration,
    ) -> Self {
        Self::with_parts(ctx, Some(module), origin, image, source, load_time)
    }

    fn with_parts(
        ctx: &Context,
        module: Option<Arc<CudaModule>>,
        origin: String,
        image: Option<&'static ModuleImage>,
        source: ModuleSource,
        load_time: Duration,
    ) -> Self {
        Self {
            inner: Arc::new(ModuleInner {
                module,
                ctx: ctx.clone(),
                origin,
                image,
                source,
                load_time,
                functions: Mutex::new(HashMap::new()),
                arch: None,
            }),
        }
    }

    /// The kernel `name` (looked up once, then cached). In a module from a [`ModuleImage`]
    /// with arch-specific variants, from the best loaded target that defines it (see
    /// [`Module::from_image`]).
    ///
    /// # Errors
    /// [`CudaError::UnknownKernel`] naming the module and, where it is known (modules from a
    /// [`ModuleImage`]), the kernels it has; [`CudaError::KernelArchitecture`] naming the
    /// kernel, the targets that define it and the device's architecture when only variants
    /// the device cannot run define it (e.g. "kernel `gemm_bf16_wgmma` needs sm_90a; this
    /// device is sm_80").
    pub fn get_function(&self, name: &str) -> CudaResult<Function> {
        let mut cache = self
            .inner
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(kernel) = cache.get(name) {
            return Ok(Function::new(kernel.clone(), self.clone()));
        }
        let unknown = || CudaError::UnknownKernel {
            kernel: name.to_owned(),
            origin: self.inner.origin.clone(),
            available: match self.inner.image {
                Some(image) => format!(
                    "; it has: {}",
                    image
                        .entries
                        .iter()
                        .map(|e| e.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => " (is it a `#[kernel]`, or `#[no_mangle] extern \"ptx-kernel\"`?)".into(),
            },
        };
        if name.contains('\0') {
            return Err(unknown());
        }
        let Some(mut module) = self.inner.module.as_ref() else {
            // The emulator: the image's entry names the kernel; the typed handle brings its
            // host body at launch.
            if self.inner.image.is_some_and(|i| i.entry(name).is_some()) {
                let kernel = Kernel::emulated(name);
                cache.insert(name.to_owned(), kernel.clone());
                return Ok(Function::new(kernel, self.clone()));
            }
            return Err(unknown());
        };
        if let Some(image) = self.inner.image {
            if image.entry(name).is_none() {
                return Err(unknown());
            }
            if let Some(arch) = &self.inner.arch {
                let target = image
                    .target_for(name, arch.device)
                    .map_err(|e| unavailable(name, &self.inner.origin, e))?;
                if let Some(variant) = arch.module(target) {
                    module = variant;
                }
            }
        }
        let function = module.load_function(name).map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_NOT_FOUND {
                unknown()
            } else {
                CudaError::driver(format!("looking up kernel `{name}`"))(e)
            }
        })?;
        let kernel = Kernel::new(function, name);
        cache.insert(name.to_owned(), kernel.clone());
        Ok(Function::new(kernel, self.clone()))
    }

    /// What the module (its baseline, for a module from an image) was loaded from (`cubin
    /// sm_90` or `PTX JIT` when displayed).
    pub fn source(&self) -> ModuleSource {
        self.inner.source
    }

    /// The arch-specific variants of the image loaded beside the baseline (those the device
    /// runs, see [`Module::from_image`]), each with what it was loaded from (`cubin sm_90a`
    /// or `PTX JIT`); empty for other modules.
    pub fn variant_sources(&self) -> Vec<(ComputeCapability, ModuleSource)> {
        self.inner.arch.as_ref().map_or_else(Vec::new, |a| {
            a.variants.iter().map(|v| (v.arch, v.source)).collect()
        })
    }

    /// How long loading took (driver JIT included for PTX).
    pub fn load_time(&self) -> Duration {
        self.inner.load_time
    }

    /// The module image, for modules loaded with [`Module::from_image`].
    pub fn image(&self) -> Option<&'static ModuleImage> {
        self.inner.image
    }

    /// Where the module came from, as errors name it (e.g. "kernels module `kernels`", a
    /// file path, "PTX text").
    pub fn origin(&self) -> &str {
        &self.inner.origin
    }

    /// The context the module lives in.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// `true` for a module of the CPU emulator (no code loaded).
    pub fn is_emulator(&self) -> bool {
        self.inner.module.is_none()
    }

    /// The cudarc module.
    ///
    /// # Panics
    /// For a module of the CPU emulator, which loads no code ([`Module::is_emulator`]).
    pub fn as_cudarc(&self) -> &Arc<CudaModule> {
        match &self.inner.module {
            Some(m) => m,
            None => panic!("Module::as_cudarc: a CPU-emulator module has no CUDA module"),
        }
    }
}

impl ArchState {
    /// The loaded module of `target` (`None` for a variant that was not loaded, which
    /// [`ModuleImage::target_for`] never picks on this device).
    fn module(&self, target: ModuleTarget) -> Option<&Arc<CudaModule>> {
        match target {
            ModuleTarget::Baseline => None,
            ModuleTarget::Variant(index) => self
                .variants
                .iter()
                .find(|v| v.index == index)
                .map(|v| &v.module),
        }
    }
}

/// The error for a kernel `name` of `origin` that [`ModuleImage::target_for`] found no
/// target for.
fn unavailable(name: &str, origin: &str, why: EntryUnavailable) -> CudaError {
    match why {
        EntryUnavailable::Architecture { needs, device } => CudaError::KernelArchitecture {
            kernel: name.to_owned(),
            origin: origin.to_owned(),
            needs: needs
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" or "),
            device,
        },
        other => CudaError::UnknownKernel {
            kernel: name.to_owned(),
            origin: origin.to_owned(),
            available: format!(" ({other})"),
        },
    }
}

/// Loads one target of an image (the baseline or a variant for `arch`) on a device of
/// capability `device`: the cubin for the device's architecture where `cubins` has one
/// and the driver accepts it (a rejected cubin, e.g. from a newer ptxas than the driver
/// supports, is not fatal), else the PTX.
fn load_image_target(
    ctx: &Context,
    ptx: &str,
    cubins: &[Cubin],
    arch: ComputeCapability,
    device: ComputeCapability,
    origin: &str,
) -> CudaResult<(Arc<CudaModule>, ModuleSource, Duration)> {
    let t0 = Instant::now();
    let cubin = cubins
        .iter()
        .find(|c| c.arch.base() == device.base() && c.arch.arch_specific == arch.arch_specific);
    if let Some(cubin) = cubin
        && let Ok(module) = load_cudarc_binary(ctx, cubin.bytes, origin)
    {
        return Ok((module, ModuleSource::Cubin(cubin.arch), t0.elapsed()));
    }
    check_ptx(ptx).map_err(|reason| CudaError::InvalidModule {
        origin: origin.to_owned(),
        reason,
    })?;
    let module = load_cudarc_ptx(ctx, ptx, origin)?;
    Ok((module, ModuleSource::PtxJit, t0.elapsed()))
}

fn load_cudarc_ptx(ctx: &Context, ptx: &str, origin: &str) -> CudaResult<Arc<CudaModule>> {
    ctx.cuda("loading PTX (the emulator runs `#[kernel]` handles of a module image)")?
        .load_module(Ptx::from_src(ptx))
        .map_err(|source| load_error(ctx, origin, PTX_HINT, source))
}

fn load_cudarc_binary(ctx: &Context, bytes: &[u8], origin: &str) -> CudaResult<Arc<CudaModule>> {
    ctx.cuda("loading a cubin (the emulator runs `#[kernel]` handles of a module image)")?;
    if !is_binary(bytes) {
        return Err(CudaError::InvalidModule {
            origin: origin.to_owned(),
            reason: "expected an ELF cubin (starts with 0x7f 'ELF') or a fatbin".into(),
        });
    }
    ctx.as_cudarc()
        .load_module(Ptx::from_binary(bytes.to_vec()))
        .map_err(|source| load_error(ctx, origin, NO_BINARY_HINT, source))
}

fn no_options(options: &[ModuleJitOption]) -> CudaResult<()> {
    if options.is_empty() {
        Ok(())
    } else {
        Err(CudaError::Unsupported(
            "JIT options: modules are loaded with the driver's defaults; pass `&[]`",
        ))
    }
}

fn load_error(
    ctx: &Context,
    origin: &str,
    hint: &'static str,
    source: cudarc::driver::DriverError,
) -> CudaError {
    let cc = ctx
        .compute_capability()
        .map(|cc| format!(" ({cc})"))
        .unwrap_or_default();
    let relevant = matches!(
        source.0,
        sys::CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
            | sys::CUresult::CUDA_ERROR_INVALID_PTX
            | sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
            | sys::CUresult::CUDA_ERROR_INVALID_IMAGE
    );
    CudaError::ModuleLoad {
        origin: origin.to_owned(),
        device: format!("{}{cc}", ctx.name()),
        hint: if relevant { hint } else { "" },
        source,
    }
}

/// An ELF cubin or a fatbin (magic `0xBA55ED50`, little-endian).
fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF") || bytes.starts_with(&0xBA55_ED50u32.to_le_bytes())
}

/// Why `text` is not PTX the driver could load, if it is not.
fn check_ptx(text: &str) -> Result<(), String> {
    if text.contains('\0') {
        return Err("PTX text must not contain NUL bytes".into());
    }
    let directive = |d: &str| text.lines().any(|l| l.trim_start().starts_with(d));
    if !directive(".version") || !directive(".target") {
        return Err("expected PTX text with `.version` and `.target` directives".into());
    }
    Ok(())
}

/// A module that can be replaced while the program runs (hot reloading during development):
/// launches go through [`HotModule::current`], a snapshot of the module at that moment, and
/// [`HotModule::swap`] installs a new one between launches. Work already queued keeps the
/// functions it was launched with.
///
/// Replaced modules are unloaded only when no snapshot of them is left and after the
/// context's queued work has finished (a module unloaded under a running kernel is undefined
/// behaviour); until then [`HotModule`] keeps them ([`HotModule::retired`]). A
/// [`Function`] taken from a snapshot keeps its module loaded as long as it lives.
///
/// ```no_run
/// # use cust::{module::HotModule, prelude::*};
/// # fn main() -> CudaResult<()> {
/// # let ctx = cust::quick_init()?;
/// # let (ptx_v1, ptx_v2) = ("", "");
/// let hot = HotModule::new(Module::from_ptx(ptx_v1, &[])?);
/// let module = hot.current(); // launch with `&module`
/// # drop(module);
/// hot.swap(Module::from_ptx(ptx_v2, &[])?)?; // later launches use the new kernels
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct HotModule {
    state: Mutex<HotState>,
}

#[derive(Debug)]
struct HotState {
    current: Module,
    generation: u64,
    retired: Vec<Module>,
}

impl HotModule {
    /// Starts with `module` as generation 0.
    pub fn new(module: Module) -> Self {
        Self {
            state: Mutex::new(HotState {
                current: module,
                generation: 0,
                retired: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HotState> {
        // Every critical section is a few assignments: a panic cannot leave it half-done.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The module now, with its generation (0 for the first, one more per swap). Launch with
    /// the returned module; a swap meanwhile does not change it.
    pub fn current_with_generation(&self) -> (Module, u64) {
        let state = self.lock();
        (state.current.clone(), state.generation)
    }

    /// The module now (see [`current_with_generation`](Self::current_with_generation)).
    pub fn current(&self) -> Module {
        self.lock().current.clone()
    }

    /// Number of swaps so far.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Installs `module` for every later [`current`](Self::current) and returns the new
    /// generation; the replaced module is retired, then every retired module without
    /// snapshots left is unloaded once the context has finished its queued work.
    ///
    /// # Errors
    /// The error of that synchronisation (e.g. a kernel of the old module failed); the new
    /// module is installed anyway.
    pub fn swap(&self, module: Module) -> CudaResult<u64> {
        let generation = {
            let mut state = self.lock();
            let old = std::mem::replace(&mut state.current, module);
            state.retired.push(old);
            state.generation += 1;
            state.generation
        };
        self.collect()?;
        Ok(generation)
    }

    /// Unloads the retired modules of which no snapshot is left, after waiting for their
    /// contexts' queued work. Called by [`swap`](Self::swap); call it after dropping
    /// snapshots to free modules sooner.
    ///
    /// # Errors
    /// A synchronisation error; the modules concerned stay retired.
    pub fn collect(&self) -> CudaResult<()> {
        let unused: Vec<Module> = {
            let mut state = self.lock();
            let (unused, kept) = std::mem::take(&mut state.retired)
                .into_iter()
                .partition(|m| Arc::strong_count(&m.inner) == 1);
            state.retired = kept;
            unused
        };
        // No snapshot is left, so no new launch can use them; wait for those queued.
        for m in &unused {
            if let Err(e) = m.context().synchronize() {
                self.lock().retired.extend(unused);
                return Err(e);
            }
        }
        drop(unused);
        Ok(())
    }

    /// Replaced modules not yet unloaded (snapshots of them are still alive).
    pub fn retired(&self) -> usize {
        self.lock().retired.len()
    }
}

impl Drop for HotModule {
    /// Waits for queued work before the retired modules are unloaded (the current one is
    /// unloaded by the last snapshot's drop, as any [`Module`]).
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        for m in &state.retired {
            let _ = m.context().synchronize();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_text_is_recognised() {
        assert!(check_ptx("//\n.version 7.0\n.target sm_70\n.address_size 64\n").is_ok());
        assert!(check_ptx("hello").unwrap_err().contains(".version"));
        assert!(
            check_ptx(".version 7.0\n.target sm_70\0")
                .unwrap_err()
                .contains("NUL")
        );
    }

    #[test]
    fn binaries_are_recognised_by_magic() {
        assert!(is_binary(b"\x7fELF\x02\x01"));
        assert!(is_binary(&[0x50, 0xED, 0x55, 0xBA, 1, 0]));
        assert!(!is_binary(b".version 7.0"));
    }

    #[test]
    fn a_kernel_no_loadable_target_defines_names_both_architectures() {
        let err = unavailable(
            "gemm_bf16_wgmma",
            "kernels module `kernels`",
            EntryUnavailable::Architecture {
                needs: vec![ComputeCapability::sm_90a()],
                device: ComputeCapability::new(8, 0),
            },
        );
        assert_eq!(
            err.to_string(),
            "kernel `gemm_bf16_wgmma` needs sm_90a; this device is sm_80 (kernels module \
             `kernels`)"
        );
        let err = unavailable(
            "k",
            "m",
            EntryUnavailable::Architecture {
                needs: vec![
                    ComputeCapability::sm_90a(),
                    ComputeCapability::new_arch_specific(10, 0),
                ],
                device: ComputeCapability::new(12, 0),
            },
        );
        assert!(
            err.to_string()
                .contains("needs sm_90a or sm_100a; this device is sm_120"),
            "{err}"
        );
        let err = unavailable("k", "m", EntryUnavailable::Unknown);
        assert!(matches!(err, CudaError::UnknownKernel { .. }), "{err}");
    }

    #[test]
    fn jit_options_are_refused_not_ignored() {
        assert!(no_options(&[]).is_ok());
        let err = no_options(&[ModuleJitOption::MaxRegisters(32)]).unwrap_err();
        assert!(err.to_string().contains("pass `&[]`"), "{err}");
    }
}
