//! The `cust` runtime on a GPU: devices and contexts, modules from every source (and the
//! errors of bad ones), typed launches on created streams, cust-style `launch!` with
//! Rust-CUDA's `(pointer, length)` slice pairs, events, stream ordering, and device, pinned
//! and unified memory. Every result is checked against the CPU.
//!
//! Tests without `#[ignore]` need no GPU.

use cust::{
    CudaError,
    event::EventStatus,
    launch::{Launch, LaunchUnchecked},
    memory::{AsyncCopyDestination, CopyDestination},
    module::{Module, ModuleSource},
    prelude::*,
};
use probes::{
    launch_checks::scale_offset_f32,
    runtime::{affine_in_place_f32, delay_then_write_u32, vecadd_raw},
};
use tests::PROBES;

/// Opens GPU 0, or the CPU emulator without a GPU (`FERROCUDA_DEVICE` overrides), and
/// makes its context current.
fn init() -> Context {
    Context::from_env(0).unwrap_or_else(|e| panic!("no device for the test: {e}"))
}

fn cfg_1d(n: usize, block: u32) -> LaunchConfig {
    LaunchConfig::new((n as u32).div_ceil(block).max(1), block, 0)
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
    let b = (0..n).map(|i| (i as f32).sqrt() - 150.0).collect();
    (a, b)
}

#[test]
fn without_a_context_constructors_say_what_to_call() {
    // This test process never creates a context on this thread before this call in the
    // GPU-less run; on a GPU machine another test may have created the process default.
    if cust::device::driver_available() {
        return;
    }
    // The other tests of this process open the CPU emulator, which becomes the process
    // default: then a constructor finds it. Otherwise it must say what to call.
    match Stream::new(StreamFlags::NON_BLOCKING, None) {
        Err(err) => {
            assert!(matches!(err, CudaError::NoContext), "{err}");
            assert!(err.to_string().contains("cust::quick_init()"), "{err}");
        }
        Ok(stream) => assert!(stream.is_emulator(), "a GPU stream without a driver"),
    }
    // `quick_init` opens a GPU: refused without a driver, whatever else is open.
    let err = cust::quick_init().unwrap_err();
    assert!(matches!(err, CudaError::NoDriver), "{err}");
    assert!(err.to_string().contains("Context::from_env(0)"), "{err}");
}

#[test]
fn devices_report_plausible_properties() {
    let ctx = init();
    let n = cust::context::device_count_from_env().unwrap();
    assert!(n >= 1);
    assert!(!ctx.name().is_empty());
    let cc = ctx.compute_capability().unwrap();
    assert!(
        cc.major >= 7,
        "sm_{}{} is below the supported sm_70",
        cc.major,
        cc.minor
    );
    let (free, total) = ctx.mem_info().unwrap();
    assert!(total >= 1 << 30, "{total} bytes of device memory");
    assert!(free <= total, "{free} bytes free of {total}");
    // The compute capability as the device attributes give it.
    let attribute = |a| ctx.attribute(a).unwrap();
    use cust::device::DeviceAttribute as A;
    assert_eq!(
        (
            attribute(A::ComputeCapabilityMajor),
            attribute(A::ComputeCapabilityMinor)
        ),
        (cc.major as i32, cc.minor as i32)
    );
    // One past the last device, through the same choice of device.
    let err = Context::from_env(n).unwrap_err();
    assert!(
        matches!(err, CudaError::BadOrdinal { ordinal, count } if ordinal == n as usize && count == n as usize),
        "{err}"
    );
    if ctx.is_emulator() {
        // The device the emulator stands for: compute capability 9.0 (it runs sm_90a's
        // wgmma, TMA and mbarrier).
        assert!(ctx.name().contains("emulator"), "{}", ctx.name());
        assert_eq!((cc.major, cc.minor), (9, 0));
        assert!(matches!(ctx.device(), Err(CudaError::NotOnEmulator { .. })));
    } else {
        // The driver's device handle says the same as the context.
        let dev = ctx.device().unwrap();
        assert_eq!(dev.name().unwrap(), ctx.name());
        assert_eq!(dev.compute_capability().unwrap(), cc);
        assert_eq!(dev.total_memory().unwrap(), total);
        let err = Device::get_device(n).unwrap_err();
        assert!(matches!(err, CudaError::BadOrdinal { .. }), "{err}");
    }
    // The driver's version is the driver's, whichever device the context is.
    match cust::device::driver_version() {
        Ok((major, _)) => assert!(major >= 12, "driver CUDA {major}"),
        Err(err) => {
            assert!(
                matches!(err, CudaError::NoDriver) && !cust::device::driver_available(),
                "{err}"
            );
            assert!(ctx.is_emulator(), "a GPU context without a driver");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: loads PTX/cubin modules (the emulator has no PTX interpreter; it \
            runs module-image #[kernel]s)"]
fn modules_load_from_ptx_file_cubin_and_image() {
    let ctx = init();
    let cc = ctx.compute_capability().unwrap();
    let from_ptx = Module::from_ptx(PROBES.ptx, &[]).unwrap();
    assert_eq!(from_ptx.source(), ModuleSource::PtxJit);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probes.ptx");
    std::fs::write(&path, PROBES.ptx).unwrap();
    Module::from_file(&path)
        .unwrap()
        .get_function("vecadd_raw")
        .unwrap();
    let image = Module::from_image(&PROBES).unwrap();
    match PROBES.cubin(cc) {
        Some(cubin) => {
            assert_eq!(image.source(), ModuleSource::Cubin(cc));
            Module::from_cubin(cubin.bytes, &[]).unwrap();
            let cubin_path = dir.path().join("probes.cubin");
            std::fs::write(&cubin_path, cubin.bytes).unwrap();
            Module::from_file(&cubin_path).unwrap();
        }
        None => eprintln!("no cubin for {cc} in this build: PTX only"),
    }
}

/// Bad module input is a clear error. On both backends: text that is not PTX, a file that is
/// neither PTX nor a cubin (named), a missing file, a kernel the module image lacks (the
/// error lists what it has), and JIT options (refused, not ignored): all refused before
/// any backend loads code. On a GPU also what only the driver can judge: PTX text where a
/// cubin is expected, and a cubin for another architecture.
#[test]
fn bad_modules_and_kernels_are_clear_errors() {
    let ctx = init();
    let dir = tempfile::tempdir().unwrap();
    // Not PTX at all.
    let err = Module::from_ptx("hello", &[]).unwrap_err();
    assert!(matches!(err, CudaError::InvalidModule { .. }), "{err}");
    assert!(err.to_string().contains(".version"), "{err}");
    // A file that is neither PTX nor a cubin, named in the error.
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, [0xffu8, 0xfe, 0x00, 0x01]).unwrap();
    let err = Module::from_file(&junk).unwrap_err();
    assert!(matches!(err, CudaError::InvalidModule { .. }), "{err}");
    assert!(err.to_string().contains("junk.bin"), "{err}");
    // A missing file.
    let err = Module::from_file(dir.path().join("missing.ptx")).unwrap_err();
    assert!(matches!(err, CudaError::ModuleFile { .. }), "{err}");
    // A kernel the module lacks: the error lists what it has.
    let module = Module::from_image(&PROBES).unwrap();
    let err = module.get_function("vecad").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("`vecad`") && msg.contains("vecadd_raw"),
        "{msg}"
    );
    // JIT options are refused, not ignored.
    let err = Module::from_ptx(
        PROBES.ptx,
        &[cust::module::ModuleJitOption::MaxRegisters(32)],
    )
    .unwrap_err();
    assert!(matches!(err, CudaError::Unsupported(_)), "{err}");
    // The rest needs the driver (the emulator loads no PTX or cubin).
    if ctx.is_emulator() {
        return;
    }
    // PTX text where a cubin is expected.
    let err = Module::from_cubin(PROBES.ptx.as_bytes(), &[]).unwrap_err();
    assert!(err.to_string().contains("ELF"), "{err}");
    // A cubin for another architecture.
    let cc = ctx.compute_capability().unwrap();
    if let Some(other) = PROBES.cubins.iter().find(|c| c.arch.major != cc.major) {
        let err = Module::from_cubin(other.bytes, &[]).unwrap_err();
        assert!(matches!(err, CudaError::ModuleLoad { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("CUDA_ERROR_NO_BINARY_FOR_GPU"), "{msg}");
        assert!(msg.contains("architecture"), "{msg}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: loads PTX/cubin modules (the emulator has no PTX interpreter; it \
            runs module-image #[kernel]s)"]
fn driver_parameter_sizes_match_the_builders_manifest() {
    // Two independent readings of every kernel's parameter layout: the builder parsed the
    // PTX text; the driver reports what it compiled (cuFuncGetParamInfo).
    init();
    let plain = Module::from_ptx(PROBES.ptx, &[]).unwrap(); // no manifest: asks the driver
    for entry in &PROBES.entries {
        let function = plain.get_function(&entry.name).unwrap();
        let driver = function.param_sizes().unwrap();
        assert_eq!(driver, entry.param_sizes, "kernel `{}`", entry.name);
    }
}

#[test]
fn typed_launch_on_a_created_stream_matches_the_cpu() {
    init();
    let module = Module::from_image(&PROBES).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let n = 100_003;
    let (x, _) = inputs(n);
    let x_dev = DeviceBuffer::from_slice(&x).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(n).unwrap();
    scale_offset_f32
        .launch(
            &module,
            &stream,
            cfg_1d(n, 256),
            (&x_dev, &mut out, 2.5f32, -1.0f32),
        )
        .unwrap();
    stream.synchronize().unwrap();
    let mut got = vec![0.0f32; n];
    out.copy_to(&mut got).unwrap();
    let expected: Vec<f32> = x.iter().map(|v| 2.5 * v + -1.0).collect();
    tests::assert_identical("scale_offset_f32", &expected, &got);
    // The occupancy calculator's suggestion is a legal block.
    let f = module.get_function("scale_offset_f32").unwrap();
    let (min_grid, block) = f.suggested_launch_configuration(0, 0.into()).unwrap();
    assert!(
        min_grid >= 1 && block.is_multiple_of(32) && block <= 1024,
        "{block}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU: loads PTX/cubin modules (the emulator has no PTX interpreter; it \
            runs module-image #[kernel]s)"]
fn cust_launch_macro_packs_rust_cuda_slice_pairs() {
    init();
    let module = Module::from_ptx(PROBES.ptx, &[]).unwrap(); // layout from the driver
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let n = 100_000;
    let (a, b) = inputs(n);
    let a_gpu = a.as_slice().as_dbuf().unwrap();
    let b_gpu = b.as_slice().as_dbuf().unwrap();
    let mut out = vec![0.0f32; n];
    let out_buf = out.as_slice().as_dbuf().unwrap();
    let vecadd = module.get_function("vecadd_raw").unwrap();
    let (_, block) = vecadd.suggested_launch_configuration(0, 0.into()).unwrap();
    let grid = (n as u32).div_ceil(block);
    // SAFETY: out_buf holds n floats, as many as a_gpu and b_gpu; synchronised below.
    unsafe {
        launch!(vecadd<<<grid, block, 0, stream>>>(
            a_gpu.as_device_ptr(),
            a_gpu.len(),
            b_gpu.as_device_ptr(),
            b_gpu.len(),
            out_buf.as_device_ptr(),
        ))
        .unwrap();
    }
    stream.synchronize().unwrap();
    out_buf.copy_to(&mut out).unwrap();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a + b).collect();
    tests::assert_identical("vecadd_raw via launch!", &expected, &out);

    // The `module.kernel<<<...>>>` form, and a layout that does not fit: refused before
    // anything is queued, naming both layouts.
    // SAFETY: refused before launching.
    let err = unsafe {
        launch!(module.vecadd_raw<<<grid, block, 0, stream>>>(
            a_gpu.as_device_ptr(),
            b_gpu.as_device_ptr(),
            out_buf.as_device_ptr(),
        ))
    }
    .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, CudaError::ParamMismatch { .. }), "{msg}");
    assert!(
        msg.contains("[16, 16, 8]") && msg.contains("buf.len()"),
        "{msg}"
    );
}

#[test]
fn unsafe_kernels_launch_through_launch_unchecked() {
    init();
    let module = Module::from_image(&PROBES).unwrap();
    let stream = Stream::new(StreamFlags::DEFAULT, None).unwrap();
    let n = 4097;
    let (a, b) = inputs(n);
    let (a_d, b_d) = (
        DeviceBuffer::from_slice(&a).unwrap(),
        DeviceBuffer::from_slice(&b).unwrap(),
    );
    let mut c_d = DeviceBuffer::<f32>::zeroed(n).unwrap();
    // SAFETY: c_d holds n floats, as many as a_d and b_d.
    unsafe {
        vecadd_raw
            .launch_unchecked(&module, &stream, cfg_1d(n, 128), (&a_d, &b_d, &mut c_d))
            .unwrap();
    }
    stream.synchronize().unwrap();
    let expected: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a + b).collect();
    tests::assert_identical("vecadd_raw typed", &expected, &c_d.as_host_vec().unwrap());
}

#[test]
// ANCHOR: events
fn events_order_streams_and_time_kernels() {
    let ctx = init();
    let module = Module::from_image(&PROBES).unwrap();
    let (least, greatest) = Stream::priority_range().unwrap();
    let producer = Stream::new(StreamFlags::NON_BLOCKING, Some(greatest)).unwrap();
    assert_eq!(producer.priority(), greatest);
    let consumer = Stream::new(StreamFlags::NON_BLOCKING, Some(least)).unwrap();
    let mut flag = DeviceBuffer::<u32>::zeroed(1).unwrap();
    let start = Event::new(EventFlags::DEFAULT).unwrap();
    let done = Event::new(EventFlags::DEFAULT).unwrap();
    start.record(&producer).unwrap();
    // About 20 ms at ~2 GHz: long enough that an unordered read would see 0.
    delay_then_write_u32
        .launch(
            &module,
            &producer,
            cfg_1d(1, 32),
            (&mut flag, 40_000_000u64, 7u32),
        )
        .unwrap();
    done.record(&producer).unwrap();
    consumer.wait_event(&done).unwrap();
    let mut host = [0u32; 1];
    flag.async_copy_to(&mut host, &consumer).unwrap();
    consumer.synchronize().unwrap();
    assert_eq!(
        host,
        [7],
        "the consumer stream read before the producer's write"
    );
    assert_eq!(done.query().unwrap(), EventStatus::Ready);
    let ms = done.elapsed_time_f32(&start).unwrap();
    assert!(ms > 1.0 && ms < 10_000.0, "{ms} ms");
    drop(ctx);
    // ANCHOR_END: events
}

#[test]
fn buffers_copy_and_refuse_length_mismatches() {
    let ctx = init();
    let data: Vec<u32> = (0..1000).map(|i| i * 7 + 3).collect();
    let mut buf = DeviceBuffer::from_slice(&data).unwrap();
    let mut back = vec![0u32; 1000];
    buf.copy_to(&mut back).unwrap();
    assert_eq!(back, data);
    let err = buf.copy_to(&mut vec![0u32; 999]).unwrap_err();
    assert!(
        matches!(
            err,
            CudaError::LengthMismatch {
                src: 1000,
                dst: 999,
                ..
            }
        ),
        "{err}"
    );
    let err = buf.copy_from(&vec![0u32; 1001]).unwrap_err();
    assert!(matches!(err, CudaError::LengthMismatch { .. }), "{err}");
    let doubled: Vec<u32> = data.iter().map(|v| v * 2).collect();
    buf.copy_from(&doubled).unwrap();
    let view = buf.index(10..20).unwrap();
    let mut part = [0u32; 10];
    view.copy_to(&mut part).unwrap();
    assert_eq!(part.as_slice(), &doubled[10..20]);
    let err = buf.index(990..1001).unwrap_err();
    assert_eq!(
        err,
        CudaError::OutOfRange {
            range: "990..1001".into(),
            len: 1000
        }
    );
    assert_eq!(
        err.to_string(),
        "range 990..1001 is out of bounds for a buffer of 1000 elements"
    );
    // A writable sub-view: a copy into it lands in that range only.
    let stream = Stream::default_of(&ctx);
    buf.index_mut(0..10)
        .unwrap()
        .async_copy_from(&[5u32; 10], &stream)
        .unwrap();
    stream.synchronize().unwrap();
    let mut expected = doubled.clone();
    expected[..10].fill(5);
    assert_eq!(buf.as_host_vec().unwrap(), expected);
    let err = buf.index_mut(..=1000).unwrap_err().to_string();
    assert!(
        err.contains("..=1000") && err.contains("1000 elements"),
        "{err}"
    );
    let mut other = DeviceBuffer::<u32>::zeroed(1000).unwrap();
    other.copy_from(&buf).unwrap();
    assert_eq!(other.as_host_vec().unwrap(), expected);

    let mut boxed = DeviceBox::new(&41u64).unwrap();
    assert_eq!(boxed.get().unwrap(), 41);
    boxed.copy_from(&42).unwrap();
    let mut v = 0u64;
    boxed.copy_to(&mut v).unwrap();
    assert_eq!(v, 42);
}

/// Taken by the tests that capture a graph and by those that synchronise the device (the
/// drop of an unpooled buffer, `cuMemFree`), which would invalidate a capture running on
/// another thread of this process.
static DEVICE_SYNC: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn unpooled_buffers_wait_for_their_work_and_are_freed_on_drop() {
    // `DeviceBuffer::{zeroed, from_slice}_unpooled` allocate by `cuMemAlloc` on a GPU, outside
    // the stream-ordered pool, and the drop frees by `cuMemFree` after the work queued on the
    // buffer. A drop that did not wait would free memory a kernel still writes; one that did
    // not free would run out of memory below.
    let _sync = DEVICE_SYNC
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let ctx = init();
    let module = Module::from_image(&PROBES).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let data: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    let copied = DeviceBuffer::from_slice_unpooled(&ctx, &data).unwrap();
    assert_eq!(copied.as_host_vec().unwrap(), data);
    let mut buf = DeviceBuffer::<u32>::zeroed_unpooled(&ctx, 1 << 20).unwrap();
    assert!(buf.as_host_vec().unwrap().iter().all(|&v| v == 0));
    let done = Event::new(EventFlags::DEFAULT).unwrap();
    // About 20 ms at ~2 GHz, so that a drop which did not wait would come first.
    delay_then_write_u32
        .launch(
            &module,
            &stream,
            cfg_1d(1, 32),
            (&mut buf, 40_000_000u64, 7u32),
        )
        .unwrap();
    done.record(&stream).unwrap();
    drop(buf);
    assert_eq!(
        done.query().unwrap(),
        EventStatus::Ready,
        "the buffer was freed before the kernel writing into it finished"
    );
    if !ctx.is_emulator() {
        // 24 buffers of a sixteenth of the device's memory each, one at a time: more than
        // the device holds, unless each drop frees its buffer.
        let (_, total) = ctx.mem_info().unwrap();
        for i in 0..24 {
            let chunk = DeviceBuffer::<u8>::zeroed_unpooled(&ctx, total / 16)
                .unwrap_or_else(|e| panic!("buffer {i} of {} bytes: {e}", total / 16));
            drop(chunk);
        }
    }
}

#[test]
fn pinned_buffers_round_trip_asynchronously() {
    let ctx = init();
    let n = 1 << 20;
    let src: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    // On the context's default stream too, where the runtime records no events of its own
    // (while no other stream exists): `as_slice` must still wait for the copy. 256 MiB, so that
    // reading early would see the copy unfinished.
    // On the emulator copies are done when they return: 2^16 elements are enough there.
    let big_len = if ctx.is_emulator() {
        1u32 << 16
    } else {
        1u32 << 26
    };
    {
        let big: Vec<u32> = (0..big_len)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let dev = DeviceBuffer::from_slice(&big).unwrap();
        let mut back = LockedBuffer::new(&0u32, big.len()).unwrap();
        dev.async_copy_to(&mut back, &Stream::default_of(&ctx))
            .unwrap();
        tests::assert_identical("default-stream pinned copy", &big, back.as_slice());
    }
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let pinned = LockedBuffer::from_slice(&src).unwrap();
    let mut dev = DeviceBuffer::<f32>::zeroed(n).unwrap();
    dev.async_copy_from(&pinned, &stream).unwrap();
    let mut back = LockedBuffer::new(&-1.0f32, n).unwrap();
    dev.async_copy_to(&mut back, &stream).unwrap();
    // Reading it as a slice (`Deref`, as cust 0.3's `LockedBuffer` is) waits for the copy
    // into `back` itself.
    tests::assert_identical("pinned round trip", &src, &back);
    // A shorter device buffer fills only the front; the rest keeps its values.
    let short = DeviceBuffer::from_slice(&src[..1000]).unwrap();
    let mut part = LockedBuffer::new_in(&ctx, &-2.0f32, 4000).unwrap();
    part.async_copy_prefix_from(&short, &stream).unwrap();
    let got = part.try_as_slice().unwrap();
    tests::assert_identical("pinned prefix copy", &src[..1000], &got[..1000]);
    assert!(got[1000..].iter().all(|&v| v == -2.0));
    let long = DeviceBuffer::<f32>::zeroed(4001).unwrap();
    let e = part
        .async_copy_prefix_from(&long, &stream)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the source has 4001 elements, the destination 4000"),
        "{e}"
    );
}

#[test]
fn unified_memory_is_updated_in_place_by_a_kernel() {
    init();
    let module = Module::from_image(&PROBES).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let n = 65_537;
    let init_values: Vec<f32> = (0..n).map(|i| i as f32 - 30_000.0).collect();
    let mut unified = UnifiedBuffer::from_slice(&init_values).unwrap();
    // Hints change where pages live, never what the kernel computes.
    for advice in [
        cust::memory::MemoryAdvice::ReadMostly,
        cust::memory::MemoryAdvice::PreferDevice,
        cust::memory::MemoryAdvice::AccessedByDevice,
    ] {
        unified.advise(advice).unwrap();
    }
    unified.prefetch_to_device().unwrap();
    affine_in_place_f32
        .launch(
            &module,
            &stream,
            cfg_1d(n, 256),
            (&mut unified, 0.5f32, 3.0f32),
        )
        .unwrap();
    unified.prefetch_to_host(&stream).unwrap();
    stream.synchronize().unwrap();
    // Read on the host, no copy.
    let expected: Vec<f32> = init_values.iter().map(|v| v * 0.5 + 3.0).collect();
    tests::assert_identical("unified in place", &expected, unified.as_slice().unwrap());
    let mut one = UnifiedBox::new(5u32).unwrap();
    one.set(6).unwrap();
    assert_eq!(one.get().unwrap(), 6);
}

#[test]
fn oversized_allocations_are_refused_with_the_figure() {
    let ctx = init();
    let (free, _) = ctx.mem_info().unwrap();
    let too_many = free / 4 + (1 << 20);
    // The figure in the error is the free memory (other tests of this process may allocate
    // meanwhile, so it is read, not compared with `free`).
    let refused = |err: CudaError, what: &str| match err {
        CudaError::OutOfMemory {
            what: w,
            bytes,
            free: f,
        } => {
            assert_eq!((w, bytes), (what, too_many * 4), "{err}");
            assert!(f < bytes, "{err}");
            assert!(
                err.to_string().contains(&format!("{f} bytes free")),
                "{err}"
            );
        }
        other => panic!("{what}: expected OutOfMemory, got {other}"),
    };
    // SAFETY: never read; the allocation is refused.
    refused(
        unsafe { DeviceBuffer::<u32>::uninitialized(too_many) }.unwrap_err(),
        "DeviceBuffer",
    );
    refused(
        UnifiedBuffer::new(&0u32, too_many).unwrap_err(),
        "UnifiedBuffer",
    );
    let err = DeviceBuffer::<u64>::zeroed(usize::MAX / 4).unwrap_err();
    assert!(matches!(err, CudaError::SizeOverflow { .. }), "{err}");
}

#[test]
fn graphs_replay_captured_launches_and_refuse_what_cannot_be_captured() {
    let _sync = DEVICE_SYNC
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let ctx = init();
    let module = Module::from_image(&PROBES).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let x0: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 100.0).collect();
    let mut x = DeviceBuffer::from_slice(&x0).unwrap();
    let cfg = cfg_1d(x0.len(), 128);
    // Three launches captured, nothing run yet.
    let graph = stream
        .capture(|s| {
            for (a, b) in [(2.0f32, 1.0f32), (0.5, -3.0), (3.0, 0.25)] {
                affine_in_place_f32.launch(&module, s, cfg, (&mut x, a, b))?;
            }
            Ok(())
        })
        .unwrap();
    for _ in 0..4 {
        graph.launch().unwrap();
    }
    stream.synchronize().unwrap();
    drop(graph);
    let want: Vec<f32> = x0
        .iter()
        .map(|&v| {
            (0..4).fold(v, |v, _| {
                [(2.0f32, 1.0f32), (0.5, -3.0), (3.0, 0.25)]
                    .iter()
                    .fold(v, |v, &(a, b)| v * a + b)
            })
        })
        .collect();
    tests::assert_identical("graph replays", &want, &x.as_host_vec().unwrap());
    // Nothing queued: a graph that does nothing when replayed.
    let empty = stream.capture(|_| Ok(())).unwrap();
    empty.launch().unwrap();
    drop(empty);
    // The closure's error comes back, and the stream works again afterwards.
    let failed = stream
        .capture(|_| Err(CudaError::LaunchConfig("refused".into())))
        .unwrap_err();
    assert!(matches!(failed, CudaError::LaunchConfig(_)), "{failed}");
    affine_in_place_f32
        .launch(&module, &stream, cfg, (&mut x, 1.0, 0.0))
        .unwrap();
    stream.synchronize().unwrap();
    // The context's default stream cannot be captured; the error says what to use.
    let default = Stream::default_of(&ctx)
        .capture(|_| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(default.contains("Stream::new"), "{default}");
}

#[test]
fn compute_graphs_run_nodes_after_their_declared_inputs() {
    let _sync = DEVICE_SYNC
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    init();
    let module = Module::from_image(&PROBES).unwrap();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let n = 1 << 16;
    let (l0, r0) = inputs(n);
    let mut l = DeviceBuffer::from_slice(&l0).unwrap();
    let mut r = DeviceBuffer::from_slice(&r0).unwrap();
    let mut sum = DeviceBuffer::<f32>::zeroed(n).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed(n).unwrap();
    let cfg = cfg_1d(n, 256);
    // Declared out of order: "out" reads "sum", which reads both branches.
    let mut dag = cust::graph::ComputeGraph::new();
    dag.node("out", &["sum"]).unwrap();
    dag.node("sum", &["left", "right"]).unwrap();
    dag.node("left", &[]).unwrap();
    dag.node("right", &[]).unwrap();
    assert_eq!(dag.order().unwrap(), ["left", "right", "sum", "out"]);
    let mut record = |node: &str, s: &Stream| -> CudaResult<()> {
        match node {
            "left" => affine_in_place_f32.launch(&module, s, cfg, (&mut l, 2.0, 1.0)),
            "right" => affine_in_place_f32.launch(&module, s, cfg, (&mut r, 0.5, -3.0)),
            // SAFETY: `sum` holds n floats, as many as `l` and `r`.
            "sum" => unsafe { vecadd_raw.launch_unchecked(&module, s, cfg, (&l, &r, &mut sum)) },
            "out" => scale_offset_f32.launch(&module, s, cfg, (&sum, &mut out, 3.0, 0.25)),
            other => panic!("no node `{other}`"),
        }
    };
    let replays = 3;
    {
        let graph = dag.build(&stream, &mut record).unwrap();
        for _ in 0..replays {
            graph.launch().unwrap();
        }
    }
    // Once more, call by call on one stream: the same work as a fourth replay.
    dag.queue(&stream, &mut record).unwrap();
    stream.synchronize().unwrap();
    let runs = replays + 1;
    let left: Vec<f32> = l0
        .iter()
        .map(|&v| (0..runs).fold(v, |v, _| v * 2.0 + 1.0))
        .collect();
    let right: Vec<f32> = r0
        .iter()
        .map(|&v| (0..runs).fold(v, |v, _| v * 0.5 - 3.0))
        .collect();
    let want: Vec<f32> = left
        .iter()
        .zip(&right)
        .map(|(a, b)| 3.0 * (a + b) + 0.25)
        .collect();
    tests::assert_identical("compute graph", &want, &out.as_host_vec().unwrap());
    // A node reading an undeclared one is refused before anything is captured.
    dag.node("bad", &["missing"]).unwrap();
    let err = dag.build(&stream, |_, _| Ok(())).unwrap_err().to_string();
    assert!(
        err.contains("`bad` reads `missing`, which is not a node"),
        "{err}"
    );
}

#[test]
fn device_pool_lends_every_gpu_and_takes_it_back() {
    // Every GPU, or one emulated device without a GPU.
    let pool = cust::pool::DevicePool::from_env().unwrap();
    let gpus = pool.len();
    assert!(gpus >= 1);
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let pool = &pool;
            s.spawn(move || {
                let gpu = pool.acquire();
                // The lease's context is current on this thread: load and launch there.
                let module = Module::from_image(&PROBES).unwrap();
                let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
                let x0: Vec<f32> = (0..4096).map(|i| (i + t) as f32).collect();
                let mut x = DeviceBuffer::from_slice(&x0).unwrap();
                affine_in_place_f32
                    .launch(&module, &stream, cfg_1d(x0.len(), 256), (&mut x, 2.0, 1.0))
                    .unwrap();
                stream.synchronize().unwrap();
                let want: Vec<f32> = x0.iter().map(|v| v * 2.0 + 1.0).collect();
                tests::assert_identical("pooled GPU", &want, &x.as_host_vec().unwrap());
                assert!(gpu.index() < pool.len());
            });
        }
    });
    assert_eq!(pool.free_count(), gpus, "every GPU came back");
}

#[test]
#[ignore = "needs a CUDA GPU: NCCL communicators between GPUs (on the emulator, \
            CudaError::NotOnEmulator)"]
fn nccl_all_reduce_sums_one_buffer_per_gpu() {
    use cust::nccl::{Communicators, ReduceOp};
    assert_eq!(
        std::env::var("NCCL_NVLS_ENABLE").as_deref(),
        Ok("0"),
        "run GPU tests with NCCL_NVLS_ENABLE=0 (bundle run.sh sets it)"
    );
    init();
    let gpus = cust::device::Device::num_devices().unwrap() as usize;
    let contexts: Vec<Context> = (0..gpus)
        .map(|i| Context::new(cust::device::Device::get_device(i as u32).unwrap()).unwrap())
        .collect();
    let streams: Vec<Stream> = contexts
        .iter()
        .map(|c| Stream::new_in(c, StreamFlags::NON_BLOCKING, None).unwrap())
        .collect();
    let comms = Communicators::new(&streams).unwrap();
    assert_eq!(comms.len(), gpus);
    let (major, minor, _) = cust::nccl::version().unwrap();
    assert!(major == 2 && minor >= 18, "NCCL {major}.{minor}");
    // Rank r holds x_r[i] = (r + 1)·i (integers well below 2^24: exact sums in f32).
    let n = 100_003;
    let shard = |r: usize| -> Vec<f32> { (0..n).map(|i| ((r + 1) * (i % 1000)) as f32).collect() };
    let send: Vec<DeviceBuffer<f32>> = contexts
        .iter()
        .enumerate()
        .map(|(r, c)| DeviceBuffer::from_slice_in(c, &shard(r)).unwrap())
        .collect();
    let mut recv: Vec<DeviceBuffer<f32>> = contexts
        .iter()
        .map(|c| DeviceBuffer::from_slice_in(c, &vec![-1.0f32; n]).unwrap())
        .collect();
    comms
        .all_reduce(
            &send.iter().collect::<Vec<_>>(),
            &mut recv.iter_mut().collect::<Vec<_>>(),
            ReduceOp::Sum,
        )
        .unwrap();
    let want: Vec<f32> = (0..n)
        .map(|i| (0..gpus).map(|r| ((r + 1) * (i % 1000)) as f32).sum())
        .collect();
    for (r, buf) in recv.iter().enumerate() {
        comms.stream(r).synchronize().unwrap();
        CurrentContext::set_current(&contexts[r]);
        tests::assert_identical(
            &format!("all_reduce on rank {r}"),
            &want,
            &buf.as_host_vec().unwrap(),
        );
    }
    // In place, maximum: every rank ends with the largest shard.
    let mut bufs = send;
    comms
        .all_reduce_in_place(&mut bufs.iter_mut().collect::<Vec<_>>(), ReduceOp::Max)
        .unwrap();
    for (r, buf) in bufs.iter().enumerate() {
        comms.stream(r).synchronize().unwrap();
        CurrentContext::set_current(&contexts[r]);
        tests::assert_identical(
            &format!("max on rank {r}"),
            &shard(gpus - 1),
            &buf.as_host_vec().unwrap(),
        );
    }
    // Wrong shapes are refused before NCCL sees them.
    let short = DeviceBuffer::<f32>::zeroed_in(&contexts[0], n - 1).unwrap();
    let mut refs: Vec<&mut DeviceBuffer<f32>> = recv.iter_mut().collect();
    let e = comms
        .all_reduce(&[&short], &mut refs[..1], ReduceOp::Sum)
        .unwrap_err()
        .to_string();
    if gpus == 1 {
        assert!(
            e.contains("the source has 100002 elements, the destination 100003"),
            "{e}"
        );
    } else {
        assert!(
            e.contains(&format!("1 buffers given for {gpus} ranks")),
            "{e}"
        );
        // A buffer on the wrong GPU: rank 1 given rank 0's.
        let e = comms
            .all_reduce_in_place(
                &mut bufs.iter_mut().rev().collect::<Vec<_>>(),
                ReduceOp::Sum,
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 0's buffer is on GPU"), "{e}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU: loads PTX/cubin modules (the emulator has no PTX interpreter; it \
            runs module-image #[kernel]s)"]
fn hot_modules_swap_between_launches_and_unload_unused_ones() {
    use cust::module::HotModule;
    init();
    let stream = Stream::new(StreamFlags::NON_BLOCKING, None).unwrap();
    let hot = HotModule::new(Module::from_ptx(PROBES.ptx, &[]).unwrap());
    let n = 1000;
    let mut x = DeviceBuffer::from_slice(&vec![1.0f32; n]).unwrap();
    let cfg = cfg_1d(n, 128);
    // A snapshot taken before the swap keeps working, and keeps its module loaded.
    let (old, generation) = hot.current_with_generation();
    assert_eq!(generation, 0);
    assert_eq!(
        hot.swap(Module::from_ptx(PROBES.ptx, &[]).unwrap())
            .unwrap(),
        1
    );
    assert_eq!(hot.retired(), 1, "the old module has a snapshot");
    affine_in_place_f32
        .launch(&old, &stream, cfg, (&mut x, 2.0, 1.0))
        .unwrap();
    affine_in_place_f32
        .launch(&hot.current(), &stream, cfg, (&mut x, 3.0, 0.0))
        .unwrap();
    drop(old);
    // Unloaded only now: no snapshot left, and the queued launches waited for.
    hot.collect().unwrap();
    assert_eq!(hot.retired(), 0);
    stream.synchronize().unwrap();
    tests::assert_identical(
        "hot module launches",
        &vec![9.0f32; n],
        &x.as_host_vec().unwrap(),
    );
    assert_eq!(hot.generation(), 1);
}
