//! The typed launch layer: every parameter kind, safe outputs, by-value struct layout on the
//! GPU, and the errors a bad launch produces, at launch time and when a handle is resolved
//! in a module (a missing kernel, a kernel with other parameters).

use common::{Complex, Palette, Viewport};
use cust::{
    function::LaunchConfig,
    launch::Launch,
    memory::DeviceBuffer,
    module::{ComputeCapability, EntryPoint, Module, ModuleImage},
};
use host::{
    Gpu, GpuError,
    launch::{for_image, for_num_elems},
};
use probes::launch_checks::{abi_probe, iota_2d_u32, raw_copy_u32, scale_offset_f32};
use std::{
    mem::{align_of, size_of},
    sync::LazyLock,
};
use tests::{PROBES, assert_identical, f32_bits, probes as gpu};

/// The parameter sizes the builder's manifest records for `kernel` of `image`.
fn sizes<'a>(image: &'a ModuleImage, kernel: &str) -> &'a [usize] {
    &image
        .entry(kernel)
        .unwrap_or_else(|| panic!("{} has no entry `{kernel}`", image.name))
        .param_sizes
}

/// Poison value for outputs: a kernel that skips an element leaves it visible.
const POISON_U32: u32 = 0xDEAD_BEEF;

#[test]
fn by_value_types_have_the_same_size_on_host_and_in_ptx() {
    // The PTX declares each by-value parameter's size (and alignment) from the *device*
    // compilation of the same Rust types; the host pushes `size_of` bytes.
    let probe = sizes(&PROBES, "abi_probe");
    let host_sizes = [
        size_of::<Viewport<f64>>(),
        size_of::<Palette>(),
        size_of::<Complex<f32>>(),
        size_of::<u8>(),
        16, // OutSlice<u64>: (pointer, length)
    ];
    assert_eq!(probe, host_sizes.as_slice(), "abi_probe parameter sizes");
    let product = &host::KERNELS;
    assert_eq!(
        sizes(product, "mandelbrot_naive_f32")[0],
        size_of::<Viewport<f32>>()
    );
    assert_eq!(
        sizes(product, "mandelbrot_f32")[0],
        size_of::<common::RenderJob<f32>>()
    );
    assert_eq!(
        sizes(product, "mandelbrot_f64")[0],
        size_of::<common::RenderJob<f64>>()
    );
    // Alignment: `.param .align N .b8 abi_probe_param_0[40]`.
    let decl = PROBES
        .ptx
        .lines()
        .find(|l| l.contains("abi_probe_param_0["))
        .expect("abi_probe declares its first parameter");
    assert!(
        decl.contains(&format!(".align {} ", align_of::<Viewport<f64>>())),
        "alignment of Viewport<f64> in `{decl}`"
    );
}

#[test]
fn launch_helpers_validate_their_input() {
    assert_eq!(for_num_elems(1000, 256).unwrap().grid_dim, (4, 1, 1));
    assert_eq!(for_num_elems(0, 256).unwrap().grid_dim, (1, 1, 1));
    for bad in [0, 16, 48 + 1, 2048] {
        let err = for_num_elems(10, bad).unwrap_err();
        assert!(err.to_string().contains(&bad.to_string()), "{err}");
    }
    assert_eq!(for_image(1001, 777).grid_dim, (63, 49, 1));
}

#[test]
fn slice_out_slice_and_values() {
    let gpu = gpu();
    for n in [1usize, 31, 1000, (1 << 20) + 7] {
        let x: Vec<f32> = (0..n).map(|i| (i as f32) / 7.0 - 3.0).collect();
        let x_dev = DeviceBuffer::from_slice_async(&x, gpu.stream()).unwrap();
        let mut out = DeviceBuffer::from_slice_async(&vec![f32::NAN; n], gpu.stream()).unwrap();
        let (a, b) = (1.5f32, -0.25f32);
        scale_offset_f32
            .launch(
                gpu.module(),
                gpu.stream(),
                LaunchConfig::for_num_elems(n, 256).unwrap(),
                (&x_dev, &mut out, a, b),
            )
            .unwrap();
        gpu.synchronize().unwrap();
        // Same two roundings (mul, then add) on the CPU: exact.
        let expected: Vec<f32> = x.iter().map(|v| a * v + b).collect();
        assert_identical(
            &format!("scale_offset n = {n}"),
            &f32_bits(&expected),
            &f32_bits(&out.as_host_vec().unwrap()),
        );
    }
}

#[test]
fn out_slice_write_2d_covers_an_odd_image_exactly() {
    let gpu = gpu();
    let (w, h) = (1001u32, 777u32);
    let mut out =
        DeviceBuffer::from_slice_async(&vec![POISON_U32; (w * h) as usize], gpu.stream()).unwrap();
    // The grid (63×49 blocks of 16×16) overhangs the image: extra threads must not write.
    let cfg = LaunchConfig::for_2d(w, h, (16, 16)).unwrap();
    assert_eq!(cfg.grid_dim, (63, 49, 1));
    iota_2d_u32
        .launch(gpu.module(), gpu.stream(), cfg, (&mut out, w))
        .unwrap();
    gpu.synchronize().unwrap();
    let got = out.as_host_vec().unwrap();
    let expected: Vec<u32> = (0..w * h).collect();
    assert_identical("iota_2d", &expected, &got);
}

#[test]
fn by_value_structs_arrive_bit_for_bit() {
    let gpu = gpu();
    let view = Viewport::from_corners(
        1001,
        777,
        Complex::new(-2.0, 1.25),
        Complex::new(0.6, -1.25),
    )
    .unwrap();
    let c = Complex::new(0.1f32, -0.7);
    let mut out = DeviceBuffer::from_slice_async(&[u64::MAX; 10], gpu.stream()).unwrap();
    abi_probe
        .launch(
            gpu.module(),
            gpu.stream(),
            LaunchConfig::for_num_elems(1, 32).unwrap(),
            (view, Palette::Ocean, c, 0xA5u8, &mut out),
        )
        .unwrap();
    gpu.synchronize().unwrap();
    let got = out.as_host_vec().unwrap();
    let expected = [
        1001,
        777,
        view.origin.re.to_bits(),
        view.origin.im.to_bits(),
        view.step_re.to_bits(),
        view.step_im.to_bits(),
        Palette::Ocean as u64,
        u64::from(c.re.to_bits()),
        u64::from(c.im.to_bits()),
        0xA5,
    ];
    assert_eq!(got, expected);
}

#[test]
fn raw_pointer_kernel_through_launch_unchecked() {
    let gpu = gpu();
    let n = 4099u32;
    let src: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let src_dev = DeviceBuffer::from_slice_async(&src, gpu.stream()).unwrap();
    let mut dst =
        DeviceBuffer::from_slice_async(&vec![POISON_U32; n as usize], gpu.stream()).unwrap();
    // Resolved once, launched through the typed function.
    let raw_copy = gpu.module().kernel(raw_copy_u32).unwrap();
    assert_eq!(raw_copy.name(), "raw_copy_u32");
    // SAFETY: both buffers hold n u32s and are distinct allocations.
    unsafe {
        raw_copy
            .launch_unchecked(
                gpu.stream(),
                LaunchConfig::for_num_elems(n as usize, 128).unwrap(),
                (&src_dev, &mut dst, n),
            )
            .unwrap();
    }
    gpu.synchronize().unwrap();
    assert_identical("raw copy", &src, &dst.as_host_vec().unwrap());
}

/// A launch whose configuration the hardware would refuse is refused by both backends with
/// the same error: the driver's `CUDA_ERROR_INVALID_VALUE`, naming kernel and configuration.
#[test]
fn a_rejected_launch_names_kernel_configuration_and_cuda_error() {
    let gpu = gpu();
    let x = DeviceBuffer::from_slice_async(&[1.0f32; 4], gpu.stream()).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_async(4, gpu.stream()).unwrap();
    // 2048 threads per block exceeds the limit of 1024 (CUDA C Programming Guide, Technical
    // Specifications): the driver rejects the launch.
    let cfg = LaunchConfig::new(1, 2048, 0);
    let err = scale_offset_f32
        .launch(gpu.module(), gpu.stream(), cfg, (&x, &mut out, 1.0, 0.0))
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            GpuError::Launch { ref kernel, .. } if kernel == "scale_offset_f32"
        ),
        "{msg}"
    );
    for needle in [
        "scale_offset_f32",
        "grid (1, 1, 1)",
        "block (2048, 1, 1)",
        "0 bytes dynamic shared memory",
        "CUDA_ERROR_INVALID_VALUE (1)",
    ] {
        assert!(msg.contains(needle), "`{needle}` missing from: {msg}");
    }
    // User code adds what it was doing; the launch's details and the CUDA code stay.
    use cust::GpuContext;
    let wrapped = Err::<(), _>(err)
        .gpu_context("scaling the inputs")
        .unwrap_err();
    let text = wrapped.to_string();
    assert!(
        text.starts_with("scaling the inputs: kernel `scale_offset_f32` failed"),
        "{text}"
    );
    assert_eq!(wrapped.cuda_code(), Some(1), "{text}");
}

#[test]
fn unknown_kernels_are_errors_that_list_the_module_entries() {
    let gpu = gpu();
    let err = gpu.module().get_function("no_such_kernel").unwrap_err();
    assert!(matches!(err, GpuError::UnknownKernel { .. }), "{err}");
    let msg = err.to_string();
    for needle in ["no_such_kernel", "kernels module `probes`", "abi_probe"] {
        assert!(msg.contains(needle), "`{needle}` missing from: {msg}");
    }
}

/// PTX with one entry named like the probe `scale_offset_f32` but with other parameters: a
/// pointer and a `u32` (8 and 4 bytes) where the handle has two slices and two `f32`s.
const IMPOSTOR_PTX: &str = "\
.version 7.0
.target sm_70
.address_size 64

.visible .entry scale_offset_f32(
    .param .u64 scale_offset_f32_param_0,
    .param .u32 scale_offset_f32_param_1
)
{
    ret;
}
";

/// A module image whose manifest declares the probe's name `scale_offset_f32` with
/// [`IMPOSTOR_PTX`]'s parameters (8 and 4 bytes) and whose PTX is that text: what
/// `cuda_builder` records for a kernels crate with that entry. The emulator reads only the
/// manifest; a GPU also loads the PTX.
static IMPOSTOR_IMAGE: LazyLock<ModuleImage> = LazyLock::new(|| {
    let sm_70 = ComputeCapability::new(7, 0);
    ModuleImage {
        name: "impostor".into(),
        ptx_file: String::new(),
        ptx: IMPOSTOR_PTX,
        ptx_arch: sm_70,
        cubins: vec![],
        entries: vec![EntryPoint {
            name: "scale_offset_f32".into(),
            param_sizes: vec![8, 4],
            resources: vec![],
            archs: vec![sm_70],
        }],
        variants: vec![],
    }
});

/// The probe handle `scale_offset_f32` (two slices, two `f32`s) resolved in `module`, whose
/// entry of that name has 8- and 4-byte parameters, is refused naming both layouts and
/// `origin`; so is a one-off launch of it, before anything is queued.
fn assert_impostor_refused(gpu: &Gpu, module: &Module, origin: &str) {
    // The entry exists: looked up by name it resolves; the typed handle does not.
    module.get_function("scale_offset_f32").unwrap();
    let expected = GpuError::ParamMismatch {
        kernel: "scale_offset_f32".into(),
        origin: origin.into(),
        host: vec![16, 16, 4, 4],
        module: vec![8, 4],
        hint: "",
    };
    let err = module.kernel(scale_offset_f32).unwrap_err();
    let msg = err.to_string();
    assert_eq!(err, expected, "{msg}");
    for needle in ["`scale_offset_f32`", origin, "[16, 16, 4, 4]", "[8, 4]"] {
        assert!(msg.contains(needle), "`{needle}` missing from: {msg}");
    }
    // The one-off launch path resolves the same way: refused before anything is queued.
    let x = DeviceBuffer::from_slice_async(&[1.0f32; 4], gpu.stream()).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_async(4, gpu.stream()).unwrap();
    let cfg = LaunchConfig::for_num_elems(4, 32).unwrap();
    let err = scale_offset_f32
        .launch(module, gpu.stream(), cfg, (&x, &mut out, 1.0, 0.0))
        .unwrap_err();
    assert_eq!(err, expected, "{err}");
}

/// Both backends: the layout from a module image's manifest ([`IMPOSTOR_IMAGE`], named
/// "kernels module `impostor`"). On a GPU also the layout the driver reports for PTX text
/// ([`IMPOSTOR_PTX`], "PTX text"): the emulator has no PTX interpreter.
#[test]
fn a_handle_resolved_where_the_kernel_has_other_parameters_is_refused_with_both_layouts() {
    let gpu = gpu();
    let image = Module::from_image_in(gpu.context(), &IMPOSTOR_IMAGE).unwrap();
    assert_impostor_refused(&gpu, &image, "kernels module `impostor`");
    if gpu.is_emulator() {
        return;
    }
    let module = Module::from_ptx_in(gpu.context(), IMPOSTOR_PTX).unwrap();
    assert_impostor_refused(&gpu, &module, "PTX text");
}

#[test]
fn a_handle_resolved_in_a_module_without_the_kernel_names_kernel_and_module() {
    let gpu = gpu();
    // A probe handle in ferrocuda's product module, which has no probes.
    let product = Module::from_image_in(gpu.context(), &host::KERNELS).unwrap();
    let err = product.kernel(abi_probe).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            GpuError::UnknownKernel { ref kernel, ref origin, .. }
                if kernel == "abi_probe" && origin == "kernels module `kernels`"
        ),
        "{msg}"
    );
    for needle in ["`abi_probe`", "kernels module `kernels`"] {
        assert!(msg.contains(needle), "`{needle}` missing from: {msg}");
    }
    // And a module without a manifest (PTX text): named as such. PTX needs a GPU (the
    // emulator has no PTX interpreter).
    if gpu.is_emulator() {
        return;
    }
    let module = Module::from_ptx_in(gpu.context(), IMPOSTOR_PTX).unwrap();
    let err = module.kernel(raw_copy_u32).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, GpuError::UnknownKernel { .. }), "{msg}");
    for needle in ["`raw_copy_u32`", "PTX text"] {
        assert!(msg.contains(needle), "`{needle}` missing from: {msg}");
    }
}

#[test]
fn occupancy_block_size_is_a_valid_block() {
    let gpu = gpu();
    let (_, block) = gpu
        .module()
        .get_function(scale_offset_f32.name())
        .unwrap()
        .suggested_launch_configuration(0, 0.into())
        .unwrap();
    assert!(
        block.is_multiple_of(32) && (32..=1024).contains(&block),
        "block {block}"
    );
}
