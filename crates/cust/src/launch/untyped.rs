//! The untyped launch of cust 0.3's [`launch!`](crate::launch!), for ported code: each
//! argument's bytes, packed into the parameter layout the kernel declares (Rust-CUDA's
//! `(pointer, length)` slice pairs into one 16-byte parameter), and handed to the function's
//! backend as the typed launch's are. See the [module docs](super).

use crate::{
    backend,
    error::{CudaError, CudaResult},
    function::Function,
    launch_config::{BlockSize, GridSize, LaunchConfig},
    memory::pointer::DevicePointer,
    stream::Stream,
};
use cust_core::DeviceCopy;
use std::{any::TypeId, ffi::c_void};

/// One argument of [`launch!`](crate::launch!): its bytes, and whether it is a device
/// pointer or a length (for packing Rust-CUDA's `(pointer, length)` slice pairs).
#[doc(hidden)]
#[derive(Debug)]
pub struct RawArg {
    bytes: Vec<u8>,
    role: Role,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Pointer,
    Length,
    Other,
}

impl RawArg {
    /// Captures `value`'s bytes.
    pub fn new<T: DeviceCopy + 'static>(value: &T) -> Self {
        let size = std::mem::size_of::<T>();
        // SAFETY: `DeviceCopy` types have a defined layout; reading their `size` bytes is
        // what the driver does with a kernel argument.
        let bytes = unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size) };
        let role = if TypeId::of::<T>() == TypeId::of::<usize>() {
            Role::Length
        } else if size == 8 && is_device_pointer::<T>() {
            Role::Pointer
        } else {
            Role::Other
        };
        Self {
            bytes: bytes.to_vec(),
            role,
        }
    }
}

/// Whether `T` is `DevicePointer<U>` for some `U`. `TypeId` differs per `U`, so this compares
/// the type's path as the compiler names it (the same compiler names both).
fn is_device_pointer<T: 'static>() -> bool {
    let any = std::any::type_name::<DevicePointer<()>>();
    let prefix = any.strip_suffix("()>").unwrap_or(any);
    std::any::type_name::<T>().starts_with(prefix)
}

/// Groups the arguments into the kernel's parameters: one argument per parameter of equal
/// size, or a `(DevicePointer, usize)` pair for a 16-byte parameter.
fn pack(kernel: &str, origin: &str, params: &[usize], args: &[RawArg]) -> CudaResult<Vec<Vec<u8>>> {
    let host: Vec<usize> = args.iter().map(|a| a.bytes.len()).collect();
    let mismatch = |hint| CudaError::ParamMismatch {
        kernel: kernel.to_owned(),
        origin: origin.to_owned(),
        host: host.clone(),
        module: params.to_vec(),
        hint,
    };
    let mut packed = Vec::with_capacity(params.len());
    let mut i = 0;
    for &size in params {
        let Some(arg) = args.get(i) else {
            return Err(mismatch(" (too few arguments)"));
        };
        if arg.bytes.len() == size {
            packed.push(arg.bytes.clone());
            i += 1;
        } else if size == 16
            && arg.role == Role::Pointer
            && args.get(i + 1).is_some_and(|a| a.role == Role::Length)
        {
            let mut pair = arg.bytes.clone();
            pair.extend_from_slice(&args[i + 1].bytes);
            packed.push(pair);
            i += 2;
        } else {
            return Err(mismatch(if size == 16 {
                ": a `&[T]` kernel parameter takes `buf.as_device_ptr(), buf.len()` (a \
                 DevicePointer then a usize), or use a typed launch with `&buf`"
            } else {
                ""
            }));
        }
    }
    if i != args.len() {
        return Err(mismatch(" (too many arguments)"));
    }
    Ok(packed)
}

/// The implementation of [`launch!`](crate::launch!).
///
/// # Safety
/// As `launch!`: the arguments are what the kernel expects (pointers to live device
/// buffers of the sizes it assumes, kept alive and not used by other work until the kernel
/// has finished).
#[doc(hidden)]
pub unsafe fn __launch_raw(
    function: &Function,
    grid: impl Into<GridSize>,
    block: impl Into<BlockSize>,
    shared_mem_bytes: u32,
    stream: &Stream,
    args: &[RawArg],
) -> CudaResult<()> {
    let cfg = LaunchConfig::new(grid, block, shared_mem_bytes);
    function.ensure_dynamic_shared(shared_mem_bytes)?;
    let params = function.param_sizes()?;
    let mut packed = pack(function.name(), function.module().origin(), params, args)?;
    // The driver reads `params[i]` bytes starting at each address: the whole vector.
    let mut pointers: Vec<*mut c_void> = packed
        .iter_mut()
        .map(|p| p.as_mut_ptr().cast::<c_void>())
        .collect();
    // SAFETY: the layout matches the kernel's parameters (checked by `pack`); `packed`
    // outlives the call; the rest is the caller's contract. Without a host body the
    // emulator refuses the launch (`NotOnEmulator`).
    unsafe {
        function.code().launch(
            stream.queue(),
            backend::Launch {
                kernel: function.name(),
                grid: cfg.grid_dim,
                block: cfg.block_dim,
                shared_bytes: cfg.shared_mem_bytes,
                attributes: None,
                args: &mut pointers,
                host: None,
            },
        )
    }
}

/// Launches a kernel, cust 0.3's syntax:
///
/// ```no_run
/// # use cust::prelude::*;
/// # fn main() -> CudaResult<()> {
/// # let _ctx = cust::quick_init()?;
/// # let module = Module::from_ptx("", &[])?;
/// # let function = module.get_function("scale")?;
/// # let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
/// # let (grid, block) = (4u32, 256u32);
/// # let (a, b) = (DeviceBuffer::<f32>::zeroed(1024)?, DeviceBuffer::<f32>::zeroed(1024)?);
/// # let (c, x) = (DeviceBuffer::<f32>::zeroed(1024)?, DeviceBuffer::<f32>::zeroed(1024)?);
/// unsafe {
///     launch!(module.vecadd<<<grid, block, 0, stream>>>(
///         a.as_device_ptr(), a.len(), b.as_device_ptr(), b.len(), c.as_device_ptr()
///     ))?;
///     launch!(function<<<grid, block, 0, stream>>>(x.as_device_ptr(), 2.0f32))?;
/// }
/// # Ok(())
/// # }
/// ```
///
/// `grid` and `block` are anything that converts into [`GridSize`] / [`BlockSize`] (`u32`,
/// `(u32, u32)`, `(u32, u32, u32)`); `shared` is dynamic shared memory per block, bytes;
/// `stream` a [`Stream`]. Each argument is any [`DeviceCopy`] value. Returns
/// [`CudaResult<()>`](crate::error::CudaResult) once queued. See the [module docs](mod@crate::launch)
/// for how slices are passed.
///
/// Unsafe: it expands to a call of an `unsafe fn`. The caller guarantees the arguments are
/// what the kernel expects (pointers to live device buffers of the sizes it assumes, kept
/// alive and unused by other work until the kernel has finished). Prefer typed launches.
#[macro_export]
macro_rules! launch {
    ($module:ident . $function:ident <<<$grid:expr, $block:expr, $shared:expr, $stream:ident>>>( $($arg:expr),* $(,)? )) => {
        match $module.get_function(stringify!($function)) {
            Ok(function) => $crate::launch!(function<<<$grid, $block, $shared, $stream>>>($($arg),*)),
            Err(e) => Err(e),
        }
    };
    ($function:ident <<<$grid:expr, $block:expr, $shared:expr, $stream:ident>>>( $($arg:expr),* $(,)? )) => {
        $crate::launch::__launch_raw(
            &$function,
            $grid,
            $block,
            $shared,
            &$stream,
            &[$($crate::launch::RawArg::new(&$arg)),*],
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr() -> RawArg {
        RawArg::new(&DevicePointer::<f32>::from_raw(0x1000))
    }

    #[test]
    fn roles_are_recognised() {
        assert_eq!(ptr().role, Role::Pointer);
        assert_eq!(RawArg::new(&7usize).role, Role::Length);
        assert_eq!(RawArg::new(&7u64).role, Role::Other);
        assert_eq!(RawArg::new(&1.0f64).role, Role::Other);
    }

    #[test]
    fn rust_cuda_slice_pairs_are_packed_into_one_parameter() {
        // Rust-CUDA's vecadd: (a: &[f32], b: &[f32], c: *mut f32) = [16, 16, 8] in the PTX.
        let args = [
            ptr(),
            RawArg::new(&5usize),
            ptr(),
            RawArg::new(&5usize),
            ptr(),
        ];
        let packed = pack("vecadd", "m", &[16, 16, 8], &args).unwrap();
        assert_eq!(packed.iter().map(Vec::len).collect::<Vec<_>>(), [16, 16, 8]);
        let mut expected = 0x1000u64.to_le_bytes().to_vec();
        expected.extend_from_slice(&5u64.to_le_bytes());
        assert_eq!(packed[0], expected);
    }

    #[test]
    fn layouts_that_do_not_fit_are_refused_with_both_layouts() {
        // A pointer without its length for a slice parameter.
        let err = pack("k", "m", &[16, 4], &[ptr(), RawArg::new(&2.0f32)]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("[8, 4]") && text.contains("[16, 4]"),
            "{text}"
        );
        assert!(text.contains("buf.as_device_ptr(), buf.len()"), "{text}");
        // Two u64s are not a (pointer, length) pair: never packed by size alone.
        assert!(pack("k", "m", &[16], &[RawArg::new(&1u64), RawArg::new(&2u64)]).is_err());
        // Too many / too few.
        assert!(pack("k", "m", &[4], &[RawArg::new(&1u32), RawArg::new(&1u32)]).is_err());
        assert!(pack("k", "m", &[4, 4], &[RawArg::new(&1u32)]).is_err());
    }
}
