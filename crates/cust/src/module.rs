//! [`Module`]: kernels loaded from PTX, a cubin, a file, or a [`ModuleImage`] (the manifest
//! that `cuda_builder` generates: PTX, ahead-of-time cubins, entry points and their
//! parameter sizes).

use crate::{
    backend::{self, ArchState, Code},
    context::{Context, CurrentContext},
    error::{CudaError, CudaResult},
};
use std::{
    collections::HashMap,
    fmt,
    path::Path,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, AtomicU32},
    },
    time::{Duration, Instant},
};

/// What a module was loaded from (`cubin sm_90` or `PTX JIT` when displayed).
pub use crate::backend::ModuleSource;
/// The kernels module manifest that `cuda_builder` generates (the one source of truth for
/// entry names, parameter layouts and cubins), defined in `cust_core`. Include it with
/// `include!(env!("<CRATE>_MODULE"))` and load it with [`Module::from_image`].
pub use cust_core::{
    ArchVariant, ComputeCapability, Cubin, EntryPoint, EntryUnavailable, ModuleImage, ModuleTarget,
    Resources,
};

/// A JIT option of cust 0.3's `Module::from_ptx`. This runtime loads modules with the
/// driver's defaults (plus line information for PTX that carries line tables); any option
/// is refused with [`CudaError::Unsupported`] rather than ignored. Pass `&[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModuleJitOption {
    /// Limit registers per thread (`CU_JIT_MAX_REGISTERS`).
    MaxRegisters(u32),
    /// Optimisation level 0..=4 (`CU_JIT_OPTIMIZATION_LEVEL`).
    OptLevel(u32),
}

pub(crate) struct ModuleInner {
    /// The code: the GPU's loaded module, or the emulator's (none).
    code: Arc<dyn backend::Module>,
    ctx: Context,
    origin: String,
    image: Option<&'static ModuleImage>,
    source: ModuleSource,
    load_time: Duration,
    kernels: Mutex<HashMap<String, Arc<LoadedKernel>>>,
    /// For a module from an image on a GPU: the device's compute capability and the
    /// arch-specific variants loaded beside the baseline (those the device runs).
    arch: Option<ArchState>,
}

/// What a [`Module`] caches per kernel name, shared by every
/// [`Function`](crate::function::Function) of the kernel. It holds no [`Module`]: a cached
/// function would hold its own module and keep it loaded forever (a reference cycle through
/// the cache), so the module keeps these and pairs them with itself when it hands one out.
pub(crate) struct LoadedKernel {
    /// The backend's kernel.
    pub(crate) code: Box<dyn backend::Function>,
    pub(crate) name: Box<str>,
    /// `Function::param_sizes`, resolved at the first launch.
    pub(crate) param_sizes: OnceLock<Vec<usize>>,
    /// The dynamic shared memory limit set with `Function::set_max_dynamic_shared_bytes`
    /// (0 until then: the default 48 KB).
    pub(crate) max_dynamic_shared_bytes: AtomicU32,
    /// Whether `Function::set_non_portable_cluster_size_allowed` allowed clusters of up to
    /// 16 blocks.
    pub(crate) non_portable_cluster: AtomicBool,
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

impl Module {
    /// Loads PTX text on the current context; the driver compiles it for the GPU. PTX with
    /// line tables (`.loc` directives, `cuda_builder`'s `line_tables(true)`) is compiled
    /// with the driver's line information on (`CU_JIT_GENERATE_LINE_INFO`), so the profilers
    /// and compute-sanitizer name its source lines; other PTX with the driver's defaults.
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
        if Code::is_binary(&bytes) {
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
    /// On the CPU emulator nothing is loaded ([`ModuleSource::Emulator`]): typed launches
    /// run the kernels' host bodies.
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
        let loaded = ctx.backend().load_image(image, &origin)?;
        Ok(Self::with_parts(
            ctx,
            loaded.module,
            origin,
            Some(image),
            loaded.source,
            loaded.load_time,
            loaded.arch,
        ))
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
        Code::check_ptx(ptx).map_err(|reason| CudaError::InvalidModule {
            origin: origin.clone(),
            reason,
        })?;
        let t0 = Instant::now();
        let code = ctx.backend().load_module(Code::Ptx(ptx), &origin)?;
        Ok(Self::with_parts(
            ctx,
            code,
            origin,
            image,
            ModuleSource::PtxJit,
            t0.elapsed(),
            None,
        ))
    }

    fn load_binary(ctx: &Context, bytes: &[u8], origin: String) -> CudaResult<Self> {
        let t0 = Instant::now();
        let code = ctx.backend().load_module(Code::Binary(bytes), &origin)?;
        let cc = ctx
            .compute_capability()
            .unwrap_or(ComputeCapability::new(0, 0));
        let source = ModuleSource::Cubin(cc);
        Ok(Self::with_parts(
            ctx,
            code,
            origin,
            None,
            source,
            t0.elapsed(),
            None,
        ))
    }

    fn with_parts(
        ctx: &Context,
        code: Arc<dyn backend::Module>,
        origin: String,
        image: Option<&'static ModuleImage>,
        source: ModuleSource,
        load_time: Duration,
        arch: Option<ArchState>,
    ) -> Self {
        Self {
            inner: Arc::new(ModuleInner {
                code,
                ctx: ctx.clone(),
                origin,
                image,
                source,
                load_time,
                kernels: Mutex::new(HashMap::new()),
                arch,
            }),
        }
    }

    /// The kernel `name` (looked up once, then cached): what [`Module::get_function`] pairs
    /// with the module. In a
    /// module from a [`ModuleImage`] with arch-specific variants, from the best loaded target
    /// that defines it (see [`Module::from_image`]).
    ///
    /// # Errors
    /// As [`Module::get_function`].
    pub(crate) fn loaded_kernel(&self, name: &str) -> CudaResult<Arc<LoadedKernel>> {
        let mut cache = self.inner.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kernel) = cache.get(name) {
            return Ok(kernel.clone());
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
        let mut module = &self.inner.code;
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
        let code = module.function(name)?.ok_or_else(unknown)?;
        let kernel = Arc::new(LoadedKernel {
            code,
            name: name.into(),
            param_sizes: OnceLock::new(),
            max_dynamic_shared_bytes: AtomicU32::new(0),
            non_portable_cluster: AtomicBool::new(false),
        });
        cache.insert(name.to_owned(), kernel.clone());
        Ok(kernel)
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
        self.inner.code.is_emulator()
    }

    /// The backend's module.
    pub(crate) fn code(&self) -> &dyn backend::Module {
        &*self.inner.code
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

fn no_options(options: &[ModuleJitOption]) -> CudaResult<()> {
    if options.is_empty() {
        Ok(())
    } else {
        Err(CudaError::Unsupported(
            "JIT options: modules are loaded with the driver's defaults; pass `&[]`",
        ))
    }
}

/// A module that can be replaced while the program runs (hot reloading during development):
/// launches go through [`HotModule::current`], a snapshot of the module at that moment, and
/// [`HotModule::swap`] installs a new one between launches. Work already queued keeps the
/// functions it was launched with.
///
/// Replaced modules are unloaded only when no snapshot of them is left and after the
/// context's queued work has finished (a module unloaded under a running kernel is undefined
/// behaviour); until then [`HotModule`] keeps them ([`HotModule::retired`]). A
/// [`Function`](crate::function::Function) taken from a snapshot keeps its module loaded as
/// long as it lives.
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
        let check_ptx = Code::check_ptx;
        assert!(check_ptx("//\n.version 7.0\n.target sm_70\n.address_size 64\n").is_ok());
        assert!(check_ptx("hello").unwrap_err().contains(".version"));
        assert!(
            check_ptx(".version 7.0\n.target sm_70\0")
                .unwrap_err()
                .contains("NUL")
        );
    }

    #[test]
    fn line_tables_are_recognised_by_their_loc_directives() {
        let has = Code::has_line_tables;
        assert!(has(
            ".version 7.0\n\t.file\t1 \"k.rs\"\n{\n\t.loc\t1 3 5\n}"
        ));
        assert!(has("{\n    .loc 1 3 5\n}"));
        // `.local` is a state space, not a line directive; a `.file` alone places nothing.
        assert!(!has("{\n\t.local .align 4 .b8 \t__local_depot0[8];\n}"));
        assert!(!has("\t.file\t1 \"k.rs\"\n.version 7.0\n"));
        assert!(!has(".version 7.0\n// .loc 1 2 3 in a comment\n"));
    }

    #[test]
    fn binaries_are_recognised_by_magic() {
        let is_binary = Code::is_binary;
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
