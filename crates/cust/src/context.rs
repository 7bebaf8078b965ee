//! [`Context`] (a device's primary context) and [`CurrentContext`], the context that
//! cust-style constructors without a context argument use.
//!
//! As in cust 0.3, `Module::from_ptx`, `Stream::new`, `DeviceBuffer::from_slice` and friends
//! work on the *current* context. Here that is the context made current on this thread with
//! [`CurrentContext::set_current`], else the first context created in the process (cust
//! follows the driver, whose current context is per thread only; the process-wide fallback
//! lets worker threads of a one-GPU program work without extra calls).
//!
//! A context is either a GPU's or the **CPU emulator**'s ([`Context::emulator`]): there,
//! buffers live in host memory, streams run their work at once, and a typed launch of a
//! `#[kernel]` handle runs its host body through `cuda_emu` (real 32-lane warps,
//! barriers, shared memory, atomics, and the emulator's race, divergence and bounds checks).
//! [`Context::from_env`] picks one from `FERROCUDA_DEVICE` (`gpu`, `cpu` or `auto`).
//! The emulator is one device (ordinal 0) of compute capability 9.0 with
//! [`EmulatorOptions::memory_bytes`] of device memory (80 GiB by default), which live
//! allocations are counted against; it refuses launches over the hardware's limits with the
//! driver's error and captures graphs as a GPU stream does. Operations that need a GPU (most
//! device attributes, NCCL, PTX or cubin modules, untyped `launch!`, occupancy other than
//! the cluster query) are [`CudaError::NotOnEmulator`] there; pinned and unified memory are host memory.
//!
//! Which device a context is lives in one place, the backend it holds (`crate::backend`):
//! a GPU's through cudarc, or the emulator's. Streams, events, modules and buffers made on
//! the context hold that backend's objects.

pub use crate::backend::cpu::EmuChecks;
use crate::{
    backend::{Backend, cpu::Cpu, driver::Gpu},
    device::{Device, DeviceAttribute},
    error::{CudaError, CudaResult},
};
use cust_core::ComputeCapability;
use std::{
    cell::RefCell,
    fmt,
    sync::{Arc, Mutex},
};

/// A device's primary context (shared by everything that uses the device in this process),
/// or the CPU emulator's device. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    backend: Arc<dyn Backend>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("device", &self.backend)
            .finish()
    }
}

/// Which device [`Context::from_env`] opens: the value of `FERROCUDA_DEVICE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// `gpu`: a CUDA GPU; failing without one.
    Gpu,
    /// `cpu`: the CPU emulator, even where a GPU is present.
    Cpu,
    /// `auto` (or unset): the GPU if the driver reports one, else the CPU emulator.
    Auto,
}

impl DeviceChoice {
    /// The environment variable read by [`DeviceChoice::from_env`].
    pub const ENV: &'static str = "FERROCUDA_DEVICE";

    /// Reads [`DeviceChoice::ENV`] ([`DeviceChoice::parse`]); unset is `auto`.
    ///
    /// # Errors
    /// [`CudaError::BadDeviceChoice`] naming the value if it is anything else (or not
    /// Unicode).
    pub fn from_env() -> CudaResult<Self> {
        match std::env::var_os(Self::ENV) {
            None => Ok(Self::Auto),
            Some(value) => Self::parse(&value.to_string_lossy()),
        }
    }

    /// `gpu`, `cpu` or `auto` (ASCII case-insensitive); the empty string is `auto`, as an
    /// unset variable is.
    ///
    /// # Errors
    /// [`CudaError::BadDeviceChoice`] naming `value` for anything else (no aliases: `cuda`
    /// or `emu` are errors, so a typo never picks a device silently).
    pub fn parse(value: &str) -> CudaResult<Self> {
        match value.to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "gpu" => Ok(Self::Gpu),
            "cpu" => Ok(Self::Cpu),
            _ => Err(CudaError::BadDeviceChoice {
                value: value.to_owned(),
            }),
        }
    }
}

/// Whether a CUDA GPU can be opened: a driver that reports at least one device.
pub fn gpu_present() -> bool {
    crate::device::Device::num_devices().is_ok_and(|n| n > 0)
}

/// How many devices the emulator is: one, ordinal 0.
const EMULATED_DEVICES: u32 = 1;

/// Whether `FERROCUDA_DEVICE` asks for the emulator: `cpu`, or `auto` without a GPU.
fn emulated() -> CudaResult<bool> {
    Ok(match DeviceChoice::from_env()? {
        DeviceChoice::Cpu => true,
        DeviceChoice::Auto => !gpu_present(),
        DeviceChoice::Gpu => false,
    })
}

/// How many devices [`Context::from_env`] can open (ordinals `0..count`): the GPUs the
/// driver reports for `gpu` (and for `auto` when there is one), 1 for the emulator.
///
/// # Errors
/// [`CudaError::BadDeviceChoice`] for a bad `FERROCUDA_DEVICE` value; for `gpu`, those of
/// [`Device::num_devices`] (e.g. [`CudaError::NoDriver`]).
pub fn device_count_from_env() -> CudaResult<u32> {
    if emulated()? {
        Ok(EMULATED_DEVICES)
    } else {
        Device::num_devices()
    }
}

/// How the CPU emulator runs the launches of a context ([`Context::emulator_with`]; read from
/// the environment by [`Context::from_env`] when it opens the emulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmulatorOptions {
    /// The order of the threads of a block: 0 resumes them in ascending linear index, any
    /// other value in a permutation derived from it (the same on every run), to expose
    /// order-dependent bugs.
    pub seed: u64,
    /// Which checks every launch makes (races, uninitialised shared reads, divergence,
    /// bounds).
    pub checks: EmuChecks,
    /// The emulated device memory, bytes: what [`Context::mem_info`] reports as the total,
    /// and what live `DeviceBuffer`s and `UnifiedBuffer`s may take before an allocation is
    /// refused with [`CudaError::OutOfMemory`]. Default [`DEFAULT_EMULATOR_MEMORY_BYTES`]
    /// (80 GiB, an H100 SXM5's). The host must still provide what is allocated.
    pub memory_bytes: usize,
}

/// The emulator's device memory unless [`EmulatorOptions::memory_bytes`] says otherwise,
/// bytes: 80 GiB, the HBM3 of the H100 SXM5 whose compute capability (9.0) the emulator
/// reports (NVIDIA H100 Tensor Core GPU datasheet: 80 GB).
pub const DEFAULT_EMULATOR_MEMORY_BYTES: usize = crate::backend::cpu::DEFAULT_MEMORY_BYTES;

impl Default for EmulatorOptions {
    /// Seed 0, every check on, 80 GiB of device memory.
    fn default() -> Self {
        Self {
            seed: 0,
            checks: EmuChecks::ALL,
            memory_bytes: DEFAULT_EMULATOR_MEMORY_BYTES,
        }
    }
}

impl EmulatorOptions {
    /// The variable [`from_env`](Self::from_env) reads the seed from: a decimal `u64`.
    pub const SEED_ENV: &'static str = "FERROCUDA_EMU_SEED";
    /// The variable [`from_env`](Self::from_env) reads the checks from: `all` or `none`.
    pub const CHECKS_ENV: &'static str = "FERROCUDA_EMU_CHECKS";

    /// The options `FERROCUDA_EMU_SEED` and `FERROCUDA_EMU_CHECKS` ask for; an unset or empty
    /// variable keeps its default (seed 0, every check on).
    ///
    /// # Errors
    /// [`CudaError::BadEmulatorOption`] naming the variable, its value and what is allowed.
    pub fn from_env() -> CudaResult<Self> {
        let read = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Self::parse(
            read(Self::SEED_ENV).as_deref(),
            read(Self::CHECKS_ENV).as_deref(),
        )
    }

    /// The options for a seed and a checks value given as text (`None`: the default).
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn parse(seed: Option<&str>, checks: Option<&str>) -> CudaResult<Self> {
        let mut options = Self::default();
        if let Some(value) = seed {
            options.seed = value
                .trim()
                .parse()
                .map_err(|_| CudaError::BadEmulatorOption {
                    variable: Self::SEED_ENV,
                    value: value.to_owned(),
                    allowed: "a decimal integer from 0 to 18446744073709551615",
                })?;
        }
        if let Some(value) = checks {
            options.checks = match value.trim().to_ascii_lowercase().as_str() {
                "all" => EmuChecks::ALL,
                "none" => EmuChecks::NONE,
                _ => {
                    return Err(CudaError::BadEmulatorOption {
                        variable: Self::CHECKS_ENV,
                        value: value.to_owned(),
                        allowed: "`all` or `none`",
                    });
                }
            };
        }
        Ok(options)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Context>> = const { RefCell::new(None) };
}
static PROCESS_DEFAULT: Mutex<Option<Context>> = Mutex::new(None);

impl Context {
    /// Opens `device`'s primary context and makes it current on this thread (and the
    /// process-wide default if there is none yet).
    ///
    /// # Errors
    /// [`CudaError::Driver`] if the driver cannot create it.
    pub fn new(device: Device) -> CudaResult<Self> {
        let ctx = Self {
            backend: Gpu::open(device.ordinal())?,
        };
        ctx.make_current_and_default();
        Ok(ctx)
    }

    /// A new CPU emulator device (see the [module docs](self)), made current on this thread
    /// (and the process-wide default if there is none yet). Its buffers are host memory,
    /// its streams run work at once, and typed launches run kernels through
    /// `cuda_emu::launch` with seed 0 and every emulator check on
    /// ([`EmulatorOptions::default`]).
    pub fn emulator() -> Self {
        Self::emulator_with(EmulatorOptions::default())
    }

    /// As [`Context::emulator`], with the thread order (`options.seed`) and the checks
    /// (`options.checks`) every launch of this context uses, so that ordinary tests can run
    /// under several orders, and the size of its device memory (`options.memory_bytes`).
    pub fn emulator_with(options: EmulatorOptions) -> Self {
        let ctx = Self {
            backend: Cpu::open(options.memory_bytes, options.seed, options.checks),
        };
        ctx.make_current_and_default();
        ctx
    }

    /// The context [`DeviceChoice::from_env`] asks for: GPU `ordinal`'s
    /// ([`Context::new`]) for `gpu`, [`Context::emulator`] for `cpu`, and for `auto` the
    /// GPU if the driver reports one, else the emulator, which is one device: ordinal 0.
    ///
    /// # Errors
    /// [`CudaError::BadDeviceChoice`] for a bad `FERROCUDA_DEVICE` value;
    /// [`CudaError::BadOrdinal`] for an ordinal other than 0 on the emulator; for `gpu`,
    /// those of [`Device::get_device`] and [`Context::new`] (e.g. [`CudaError::NoDriver`]
    /// without a GPU: never a silent emulator).
    pub fn from_env(ordinal: u32) -> CudaResult<Self> {
        if !emulated()? {
            return Self::new(Device::get_device(ordinal)?);
        }
        if ordinal >= EMULATED_DEVICES {
            return Err(CudaError::BadOrdinal {
                ordinal: ordinal as usize,
                count: EMULATED_DEVICES as usize,
            });
        }
        Ok(Self::emulator_with(EmulatorOptions::from_env()?))
    }

    fn make_current_and_default(&self) {
        CurrentContext::set_current(self);
        let mut default = PROCESS_DEFAULT.lock().unwrap_or_else(|e| e.into_inner());
        if default.is_none() {
            *default = Some(self.clone());
        }
    }

    /// A context over `backend` (not made current).
    pub(crate) fn from_backend(backend: Arc<dyn Backend>) -> Self {
        Self { backend }
    }

    /// The device the context's objects are created on.
    pub(crate) fn backend(&self) -> &Arc<dyn Backend> {
        &self.backend
    }

    /// `true` for the CPU emulator's context ([`Context::emulator`]).
    pub fn is_emulator(&self) -> bool {
        self.backend.is_emulator()
    }

    /// The device.
    ///
    /// # Errors
    /// As [`Device::get_device`]; [`CudaError::NotOnEmulator`] on the emulator.
    pub fn device(&self) -> CudaResult<Device> {
        self.backend.device()
    }

    /// Waits for all work on the device (on the emulator all work is done already).
    ///
    /// # Errors
    /// [`CudaError::Driver`] with the first asynchronous error (e.g. a kernel that trapped).
    pub fn synchronize(&self) -> CudaResult<()> {
        self.backend.synchronize()
    }

    /// `(free, total)` device memory, bytes (on the emulator: its
    /// [`EmulatorOptions::memory_bytes`] less its live device and managed allocations).
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn mem_info(&self) -> CudaResult<(usize, usize)> {
        self.backend.mem_info()
    }

    /// Checks that `bytes` more bytes fit in free device memory ([`Context::mem_info`]).
    ///
    /// # Errors
    /// [`CudaError::OutOfMemory`] when they do not.
    pub fn check_free(&self, what: &'static str, bytes: usize) -> CudaResult<()> {
        self.backend.check_free(what, bytes)
    }

    /// The compute capability of the context's device.
    ///
    /// The emulator reports 9.0, the Hopper architecture whose sm_90a units it runs.
    ///
    /// # Errors
    /// [`CudaError::Driver`].
    pub fn compute_capability(&self) -> CudaResult<ComputeCapability> {
        self.backend.compute_capability()
    }

    /// The device's name, e.g. `NVIDIA H200` (`unknown GPU` if the driver cannot say;
    /// `ferrocuda CPU emulator` for [`Context::emulator`]).
    pub fn name(&self) -> String {
        self.backend.name()
    }

    /// The device's ordinal (0 = first GPU; 0 for the emulator).
    pub fn ordinal(&self) -> usize {
        self.backend.ordinal()
    }

    /// A device attribute of the context's device (`cuDeviceGetAttribute`), e.g.
    /// [`DeviceAttribute::MultiprocessorCount`].
    ///
    /// On the emulator the compute capability (9.0), the launch limits it checks (threads
    /// and dimensions of blocks and grids, the shared-memory opt-in limit), the warp size and
    /// `MultiprocessorCount` (the host's cores) are answered.
    ///
    /// # Errors
    /// A driver error; [`CudaError::NotOnEmulator`] on the emulator for other attributes.
    pub fn attribute(&self, attribute: DeviceAttribute) -> CudaResult<i32> {
        self.backend.attribute(attribute)
    }
}

/// The context used by constructors that take none (see the [module docs](self)).
#[derive(Debug)]
pub struct CurrentContext;

impl CurrentContext {
    /// Makes `ctx` current on this thread.
    pub fn set_current(ctx: &Context) {
        CURRENT.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    }

    /// This thread's current context, else the process-wide default.
    ///
    /// # Errors
    /// [`CudaError::NoContext`] when neither exists.
    pub fn get_current() -> CudaResult<Context> {
        if let Some(ctx) = CURRENT.with(|c| c.borrow().clone()) {
            return Ok(ctx);
        }
        PROCESS_DEFAULT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or(CudaError::NoContext)
    }
}

/// Initialises CUDA, opens device 0 and makes its context current: the usual first line of a
/// cust program. Keep the returned [`Context`] alive while you use the GPU. It never opens
/// the CPU emulator: for a program that also runs without a GPU, use
/// [`Context::from_env`] (`FERROCUDA_DEVICE`: GPU 0 if there is one, else the emulator).
///
/// # Errors
/// [`CudaError::NoDriver`] (whose message names the emulator as the way on without a GPU),
/// [`CudaError::NoDevice`], or a driver error.
pub fn quick_init() -> CudaResult<Context> {
    Context::new(Device::get_device(0)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulator_options_accept_exactly_the_documented_values() {
        assert_eq!(
            EmulatorOptions::parse(None, None).unwrap(),
            EmulatorOptions::default()
        );
        let o = EmulatorOptions::parse(Some(" 42 "), Some("NONE")).unwrap();
        assert_eq!((o.seed, o.checks), (42, EmuChecks::NONE));
        let o = EmulatorOptions::parse(Some("18446744073709551615"), Some("all")).unwrap();
        assert_eq!((o.seed, o.checks), (u64::MAX, EmuChecks::ALL));
        for (seed, checks, variable, value) in [
            (Some("-1"), None, EmulatorOptions::SEED_ENV, "-1"),
            (
                Some("18446744073709551616"),
                None,
                EmulatorOptions::SEED_ENV,
                "18446744073709551616",
            ),
            (Some("0x10"), None, EmulatorOptions::SEED_ENV, "0x10"),
            (None, Some("races"), EmulatorOptions::CHECKS_ENV, "races"),
        ] {
            let err = EmulatorOptions::parse(seed, checks).unwrap_err();
            let CudaError::BadEmulatorOption {
                variable: v,
                value: got,
                ..
            } = &err
            else {
                panic!("{err}")
            };
            assert_eq!((*v, got.as_str()), (variable, value));
            let text = err.to_string();
            assert!(text.contains(variable) && text.contains(value), "{text}");
        }
    }

    #[test]
    fn device_choice_accepts_exactly_the_documented_values() {
        for (value, choice) in [
            ("", DeviceChoice::Auto),
            ("auto", DeviceChoice::Auto),
            ("gpu", DeviceChoice::Gpu),
            ("GPU", DeviceChoice::Gpu),
            ("cpu", DeviceChoice::Cpu),
            ("Cpu", DeviceChoice::Cpu),
        ] {
            assert_eq!(DeviceChoice::parse(value), Ok(choice), "{value:?}");
        }
        // No aliases, no padding: each is its own error naming the value and the choices.
        for value in ["xyz", "cuda", "emu", "emulator", " cpu", "gpu0"] {
            let err = DeviceChoice::parse(value).unwrap_err();
            assert!(
                matches!(&err, CudaError::BadDeviceChoice { value: v } if v == value),
                "{value:?}: {err:?}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "FERROCUDA_DEVICE={value:?} is not a device: use `gpu`, `cpu` or `auto` \
                     (unset is `auto`: the GPU if there is one, else the CPU emulator)"
                )
            );
        }
    }
}
