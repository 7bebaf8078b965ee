//! End-to-end tests of the `ferrocuda` binary: each test runs it in a fresh temporary folder
//! and checks the exit status, the messages and the files it leaves behind.
//!
//! Most tests run anywhere (`--backend cpu`). Tests of the no-GPU paths (`--backend auto`
//! falling back, `--backend gpu` and `vector-add` failing, `info`) ask `ferrocuda info` whether
//! a CUDA driver is present; where one is, the tests that need its absence print that they
//! were skipped and pass.

use std::{
    path::Path,
    process::{Command, Output},
    sync::OnceLock,
};

/// Runs `ferrocuda` with `args` in `dir`.
fn ferrocuda(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the ferrocuda binary could not be started")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The names of the entries in `dir`, sorted (hidden files included).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("reading the temporary folder")
        .map(|e| {
            e.expect("reading a folder entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("creating a temporary folder")
}

/// Whether `ferrocuda info` finds a CUDA driver (asked once per test binary).
fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        let dir = temp_dir();
        let out = ferrocuda(dir.path(), &["info"]);
        !stdout(&out).contains("no CUDA driver found")
    })
}

/// `true` (and a note on stderr saying the test was skipped) when a CUDA driver is present.
fn skip_with_driver(test: &str) -> bool {
    let present = driver_present();
    if present {
        eprintln!("skipped {test}: it needs a machine without a CUDA driver");
    }
    present
}

/// Runs `ferrocuda args` in a fresh folder and asserts that it fails cleanly: non-zero exit,
/// an `error:` on stderr naming every string in `named`, no panic, and no file left behind
/// (neither the output nor a temporary `.part` file).
#[track_caller]
fn assert_rejected(args: &[&str], named: &[&str]) {
    // Every value out of range is a usage error, exit status 2 (as clap's own).
    assert_fails_with(2, args, named);
}

/// Like [`assert_rejected`] for a failure of the environment (no GPU): exit status 1.
fn assert_fails(args: &[&str], named: &[&str]) {
    assert_fails_with(1, args, named);
}

fn assert_fails_with(status: i32, args: &[&str], named: &[&str]) {
    let dir = temp_dir();
    let out = ferrocuda(dir.path(), args);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(status),
        "`ferrocuda {}` should fail with status {status}; stderr: {err}",
        args.join(" ")
    );
    assert!(
        err.contains("error"),
        "no error message on stderr for {args:?}: {err:?}"
    );
    assert!(
        !err.contains("panicked"),
        "ferrocuda panicked for {args:?}: {err}"
    );
    for value in named {
        assert!(
            err.contains(value),
            "stderr for {args:?} does not name `{value}`: {err:?}"
        );
    }
    assert_eq!(
        entries(dir.path()),
        Vec::<String>::new(),
        "files left behind by {args:?}"
    );
}

/// A small CPU render writing `out.png`; tests append the option under test.
const SMALL: [&str; 9] = [
    "mandelbrot",
    "--backend",
    "cpu",
    "--width",
    "7",
    "--height",
    "5",
    "-o",
    "out.png",
];

/// Decodes `path` as an 8-bit RGB PNG.
fn read_rgb(path: &Path) -> image::RgbImage {
    let decoded = image::ImageReader::open(path)
        .expect("opening the PNG")
        .with_guessed_format()
        .expect("reading the PNG header")
        .decode()
        .expect("decoding the PNG");
    assert_eq!(
        decoded.color(),
        image::ColorType::Rgb8,
        "{}",
        path.display()
    );
    decoded.into_rgb8()
}

/// Independent reference for the escape time: the textbook loop on plain `f64`s,
/// `z ← z² + c` from `z = 0`, returning the first `n` with `|z_n|² > 4`, else `max_iter`.
fn reference_escape(cr: f64, ci: f64, max_iter: u32) -> u32 {
    let (mut zr, mut zi) = (0.0_f64, 0.0_f64);
    for n in 1..=max_iter {
        let new_zr = zr * zr - zi * zi + cr;
        let new_zi = 2.0 * zr * zi + ci;
        zr = new_zr;
        zi = new_zi;
        if zr * zr + zi * zi > 4.0 {
            return n;
        }
    }
    max_iter
}

/// The documented gray palette: in the set (n = max_iter) → 0, else `255 - min(n, 255)`.
fn reference_gray(n: u32, max_iter: u32) -> u8 {
    if n >= max_iter {
        0
    } else {
        255 - n.min(255) as u8
    }
}

#[test]
fn cpu_render_writes_png_of_requested_odd_size() {
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "101",
        "--height",
        "77",
        "--center",
        "0,0",
        "--scale",
        "3",
        "--max-iter",
        "100",
        "-o",
        "out.png",
    ];
    let out = ferrocuda(dir.path(), &args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        stdout(&out).contains("wrote out.png"),
        "stdout: {}",
        stdout(&out)
    );
    // Only the output: no temporary `.part` file left next to it.
    assert_eq!(entries(dir.path()), ["out.png"]);
    let img = read_rgb(&dir.path().join("out.png"));
    assert_eq!(img.dimensions(), (101, 77));
    // Odd size: the middle pixel (50, 38) samples the centre c = 0, in the set → black.
    assert_eq!(img.get_pixel(50, 38).0, [0, 0, 0]);
    // Pixel (0, 0) samples c ≈ -1.485 + 1.128i: z2 ≈ -0.55 - 2.22i, |z2|² ≈ 5.2 > 4, so it
    // escapes at n = 2; the classic palette never colours an escaped pixel black.
    assert_ne!(img.get_pixel(0, 0).0, [0, 0, 0]);
}

#[test]
fn gray_pixels_match_hand_computed_escape_times() {
    // 7 × 3 pixels over re ∈ [-3.5, 3.5], im ∈ [-1.5, 1.5]: step 1 on both axes, so pixel
    // (x, y) samples UL + ((x + 0.5)·1, -(y + 0.5)·1) = (x - 3) + (1 - y)i, exactly.
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "7",
        "--height",
        "3",
        "--corners",
        "-3.5,1.5",
        "3.5,-1.5",
        "--palette",
        "gray",
        "--max-iter",
        "255",
        "-o",
        "out.png",
    ];
    let out = ferrocuda(dir.path(), &args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let img = read_rgb(&dir.path().join("out.png"));
    assert_eq!(img.dimensions(), (7, 3));
    // Escape times by hand (gray = 255 - n; 0 in the set):
    //   c = 0, -1, -2 (the tip: 0 → -2 → 2 → 2, |z|² = 4 is not > 4), ±i: in the set → 0.
    //   |c|² > 4 (±3, ±3 ± i, ±2 ± i): z1 = c escapes → n = 1 → 254.
    //   c = 2: z1 = 2 (|z|² = 4, not > 4), z2 = 6 → n = 2 → 253.
    //   c = 1: 1, 2, 5 → n = 3 → 252.
    //   c = 1 ± i: 1 ± i, 1 ± 3i (|z|² = 10) → n = 2 → 253.
    //   c = -1 ± i: -1 ± i, -1 ∓ i, -1 ± 3i (|z|² = 10) → n = 3 → 252.
    #[rustfmt::skip]
    let expected: [[u8; 7]; 3] = [
        // re: -3   -2   -1    0    1    2    3
        [254, 254, 252,   0, 253, 254, 254], // im = 1
        [254,   0,   0,   0, 252, 253, 254], // im = 0
        [254, 254, 252,   0, 253, 254, 254], // im = -1
    ];
    for (y, row) in expected.iter().enumerate() {
        for (x, &v) in row.iter().enumerate() {
            let (re, im) = (x as f64 - 3.0, 1.0 - y as f64);
            // The hand table and the reference loop agree ...
            assert_eq!(
                reference_gray(reference_escape(re, im, 255), 255),
                v,
                "c = {re}{im:+}i"
            );
            // ... and so does the image.
            assert_eq!(
                img.get_pixel(x as u32, y as u32).0,
                [v, v, v],
                "pixel ({x}, {y}), c = {re}{im:+}i"
            );
        }
    }
}

#[test]
fn gray_image_matches_reference_loop_f64() {
    // 33 × 17 pixels over re ∈ [-2.5, 1.625], im ∈ [-1.0625, 1.0625]: step 1/8 on both axes,
    // pixel centres are multiples of 1/16, so the pixel-centre formula
    // UL + ((x + 0.5)·step, -(y + 0.5)·step) is exact and the f64 reference loop (the same
    // IEEE operations as `escape_time`) must agree bit for bit. Row 8 is the real axis.
    let (w, h, max_iter) = (33_u32, 17_u32, 255_u32);
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--precision",
        "f64",
        "--width",
        "33",
        "--height",
        "17",
        "--corners",
        "-2.5,1.0625",
        "1.625,-1.0625",
        "--palette",
        "gray",
        "--max-iter",
        "255",
        "-o",
        "out.png",
    ];
    let out = ferrocuda(dir.path(), &args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let img = read_rgb(&dir.path().join("out.png"));
    assert_eq!(img.dimensions(), (w, h));
    let (ul_re, ul_im, step) = (-2.5, 1.0625, 0.125);
    let (mut inside, mut outside) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let re = ul_re + (f64::from(x) + 0.5) * step;
            let im = ul_im - (f64::from(y) + 0.5) * step;
            let n = reference_escape(re, im, max_iter);
            if n == max_iter {
                inside += 1;
            } else {
                outside += 1;
            }
            let v = reference_gray(n, max_iter);
            assert_eq!(
                img.get_pixel(x, y).0,
                [v, v, v],
                "pixel ({x}, {y}), c = {re}{im:+}i"
            );
        }
    }
    assert_eq!((ul_im - 8.5 * step), 0.0, "row 8 should be the real axis");
    // The view must show both outcomes for the comparison to mean anything.
    assert!(
        inside > 50 && outside > 200,
        "{inside} inside, {outside} outside"
    );
}

#[test]
fn auto_backend_without_gpu_notes_and_renders_on_cpu() {
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "auto",
        "--width",
        "9",
        "--height",
        "5",
        "--max-iter",
        "50",
        "-o",
        "out.png",
    ];
    let out = ferrocuda(dir.path(), &args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(entries(dir.path()), ["out.png"]);
    assert_eq!(read_rgb(&dir.path().join("out.png")).dimensions(), (9, 5));
    if skip_with_driver("the no-GPU part of auto_backend_without_gpu_notes_and_renders_on_cpu") {
        return;
    }
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected a one-line note, got: {err:?}");
    assert!(lines[0].starts_with("note:"), "{err:?}");
    assert!(lines[0].contains("no CUDA driver found"), "{err:?}");
    assert!(lines[0].contains("rendering on the CPU"), "{err:?}");
    assert!(stdout(&out).contains("CPU ("), "stdout: {}", stdout(&out));
}

#[test]
fn info_without_driver_says_so_in_one_line() {
    let dir = temp_dir();
    let out = ferrocuda(dir.path(), &["info"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(entries(dir.path()), Vec::<String>::new());
    let text = stdout(&out);
    if driver_present() {
        assert!(
            text.starts_with("CUDA driver: version "),
            "stdout: {text:?}"
        );
        return;
    }
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {text:?}");
    assert!(lines[0].contains("no CUDA driver found"), "{text:?}");
}

// ---- Bad input: non-zero exit, the bad value named on stderr, nothing written. ----

#[test]
fn rejects_zero_width() {
    assert_rejected(
        &[
            "mandelbrot",
            "--width",
            "0",
            "--height",
            "7",
            "-o",
            "out.png",
        ],
        &["`0` is not allowed", "1 to 65536"],
    );
}

#[test]
fn rejects_zero_height() {
    assert_rejected(
        &[
            "mandelbrot",
            "--width",
            "7",
            "--height",
            "0",
            "-o",
            "out.png",
        ],
        &["--height", "`0` is not allowed", "1 to 65536"],
    );
}

#[test]
fn rejects_side_over_limit() {
    assert_rejected(
        &[
            "mandelbrot",
            "--width",
            "70000",
            "--height",
            "7",
            "-o",
            "out.png",
        ],
        &["`70000` is not allowed", "1 to 65536"],
    );
}

#[test]
fn rejects_too_many_pixels() {
    // Tiled rendering allows every size up to 65536 per side (2^32 pixels); beyond that the
    // size is rejected as a whole.
    assert_rejected(
        &[
            "mandelbrot",
            "--width",
            "65537",
            "--height",
            "70000",
            "-o",
            "out.png",
        ],
        &["`65537` is not allowed", "1 to 65536"],
    );
}

#[test]
fn rejects_zero_max_iter() {
    assert_rejected(
        &[&SMALL[..], &["--max-iter", "0"]].concat(),
        &["--max-iter", "`0` is not allowed", "1 to 10000000"],
    );
}

#[test]
fn rejects_nan_center() {
    assert_rejected(&[&SMALL[..], &["--center", "nan,0"]].concat(), &["nan,0"]);
}

#[test]
fn rejects_infinite_center() {
    assert_rejected(&[&SMALL[..], &["--center", "inf,0"]].concat(), &["inf,0"]);
}

#[test]
fn rejects_center_without_comma() {
    assert_rejected(
        &[&SMALL[..], &["--center", "1"]].concat(),
        &["`1`", "RE,IM"],
    );
}

#[test]
fn rejects_zero_scale() {
    assert_rejected(&[&SMALL[..], &["--scale", "0"]].concat(), &["scale `0`"]);
}

#[test]
fn rejects_negative_scale() {
    assert_rejected(&[&SMALL[..], &["--scale", "-1"]].concat(), &["scale -1"]);
}

#[test]
fn rejects_nan_scale() {
    // The message does not name the value (see the report); only the clean failure is checked.
    assert_rejected(&[&SMALL[..], &["--scale", "nan"]].concat(), &[]);
}

#[test]
fn rejects_corners_out_of_order() {
    // Upper-left is right of and below lower-right.
    assert_rejected(
        &[&SMALL[..], &["--corners", "1,-0.5", "-1,0.5"]].concat(),
        &["1,-0.5", "-1,0.5", "out of order"],
    );
}

#[test]
fn rejects_unknown_palette() {
    assert_rejected(
        &[&SMALL[..], &["--palette", "rainbow"]].concat(),
        &["rainbow", "gray, classic, fire, ocean"],
    );
}

#[test]
fn rejects_unknown_precision() {
    assert_rejected(&[&SMALL[..], &["--precision", "f16"]].concat(), &["f16"]);
}

/// Issue 35: `--png-compression` takes exactly `fast`, `default` or `best`; anything else
/// (another word, a zlib level number, a different case, an empty value) is a usage error
/// naming the value and the allowed ones, before anything is rendered or written.
#[test]
fn rejects_unknown_png_compression() {
    for bad in ["fastest", "9", "FAST", " best", ""] {
        let dir = temp_dir();
        let args = [&SMALL[..], &["--png-compression", bad]].concat();
        let out = ferrocuda(dir.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "`{bad}`: {err}");
        // clap names a given value in quotes, and says an empty one is missing.
        let value = if bad.is_empty() {
            "a value is required".to_owned()
        } else {
            format!("'{bad}'")
        };
        for needle in [&value[..], "--png-compression", "fast", "default", "best"] {
            assert!(
                err.contains(needle),
                "`{bad}`: does not name {needle}: {err}"
            );
        }
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }
}

/// Issue 35: every `--png-compression` level writes the same pixels (a deep view, whose
/// bands are coloured by `PerturbedJob::finish_band` on the CPU, and an f64 view with smooth
/// colouring in several bands), and a higher level never writes a larger file on these
/// images.
#[test]
fn png_compression_levels_write_the_same_pixels() {
    let dir = temp_dir();
    let views: [&[&str]; 2] = [
        &[
            "--center",
            "-0.7435,0.1314",
            "--scale",
            "0.01",
            "--smooth",
            "--band-rows",
            "7",
        ],
        &["--center", "0,1", "--scale", "1e-40", "--max-iter", "3000"],
    ];
    for view in views {
        let mut images = Vec::new();
        for level in ["fast", "default", "best"] {
            let name = format!("{level}.png");
            let args = [
                &["mandelbrot", "--backend", "cpu"][..],
                &["--width", "160", "--height", "120"],
                view,
                &["--png-compression", level, "-o", &name],
            ]
            .concat();
            ok(dir.path(), &args);
            let path = dir.path().join(&name);
            let size = std::fs::metadata(&path).expect("the PNG").len();
            images.push((level, size, read_rgb(&path)));
        }
        let (_, fast_size, fast) = &images[0];
        let mut last = *fast_size;
        for (level, size, image) in &images[1..] {
            assert!(
                image == fast,
                "{view:?}: {level} decodes to other pixels than fast"
            );
            assert!(
                *size <= last,
                "{view:?}: {level} wrote {size} bytes, more than the level below ({last})"
            );
            last = *size;
        }
    }
}

#[test]
fn rejects_output_in_missing_folder() {
    assert_rejected(
        &[
            "mandelbrot",
            "--backend",
            "cpu",
            "--width",
            "7",
            "--height",
            "5",
            "-o",
            "missing/out.png",
        ],
        &["missing/out.png"],
    );
}

#[test]
fn rejects_output_not_png() {
    assert_rejected(
        &[
            "mandelbrot",
            "--backend",
            "cpu",
            "--width",
            "7",
            "--height",
            "5",
            "-o",
            "out.jpg",
        ],
        &["out.jpg", ".png"],
    );
}

#[test]
fn rejects_gpu_backend_without_gpu() {
    if skip_with_driver("rejects_gpu_backend_without_gpu") {
        return;
    }
    let mut args = SMALL.to_vec();
    args[2] = "gpu";
    assert_fails(&args, &["--backend gpu", "no CUDA driver found"]);
}

#[test]
fn rejects_vector_add_without_gpu() {
    if skip_with_driver("rejects_vector_add_without_gpu") {
        return;
    }
    assert_fails(
        &["vector-add", "--len", "1024", "--reps", "1"],
        &["no CUDA driver found"],
    );
}

#[test]
fn rejects_vector_add_zero_len() {
    assert_rejected(&["vector-add", "--len", "0"], &["--len 0"]);
}

/// The PNG should get the usual permissions (0o666 less the umask), like any file the user
/// creates; it is written through a temporary file created with mode 0o600.
#[cfg(unix)]
#[test]
fn output_png_has_default_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir();
    let out = ferrocuda(dir.path(), &SMALL);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let mode = std::fs::metadata(dir.path().join("out.png"))
        .unwrap()
        .permissions()
        .mode();
    // Readable by the group and others under the common umasks 0o022 and 0o002.
    assert_eq!(mode & 0o044, 0o044, "mode {mode:o}");
}

// ---- Issue 5: smooth colouring, palette cycle/offset, supersampling, bands, zoom, bench. ----

/// Runs `ferrocuda args` in `dir` and asserts success.
#[track_caller]
fn ok(dir: &Path, args: &[&str]) -> Output {
    let out = ferrocuda(dir, args);
    assert!(
        out.status.success(),
        "`ferrocuda {}` failed: {}",
        args.join(" "),
        stderr(&out)
    );
    out
}

#[test]
fn banded_render_equals_one_band() {
    // The same image in one band and in bands of 4 rows (the last one partial), with smooth
    // colouring and 2×2 supersampling: identical pixels.
    let dir = temp_dir();
    let base = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "37",
        "--height",
        "29",
        "--center",
        "-0.7435,0.1314",
        "--scale",
        "0.02",
        "--max-iter",
        "400",
        "--smooth",
        "--supersample",
        "2",
        "--palette",
        "viridis",
    ];
    ok(dir.path(), &[&base[..], &["-o", "one.png"]].concat());
    let out = ok(
        dir.path(),
        &[&base[..], &["--band-rows", "4", "-o", "bands.png"]].concat(),
    );
    assert!(
        stdout(&out).contains("8 bands of 4 rows"),
        "{}",
        stdout(&out)
    );
    let (a, b) = (
        read_rgb(&dir.path().join("one.png")),
        read_rgb(&dir.path().join("bands.png")),
    );
    assert_eq!(a.dimensions(), (37, 29));
    assert!(a == b, "banded render differs from the one-band render");
    assert_eq!(entries(dir.path()), ["bands.png", "one.png"]);
}

#[test]
fn style_options_change_the_image() {
    // Smooth colouring, an offset, a cycle and supersampling each give a different image of
    // the same view; gray + discrete + defaults matches the hand-checked reference.
    let dir = temp_dir();
    let base = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "24",
        "--height",
        "16",
        "--max-iter",
        "200",
    ];
    let variants: [&[&str]; 5] = [
        &[],
        &["--smooth"],
        &["--palette-offset", "0.5"],
        &["--palette-cycle", "17"],
        &["--supersample", "4"],
    ];
    let mut images = Vec::new();
    for (k, extra) in variants.iter().enumerate() {
        let name = format!("v{k}.png");
        ok(dir.path(), &[&base[..], extra, &["-o", &name]].concat());
        images.push(read_rgb(&dir.path().join(name)));
    }
    for i in 0..images.len() {
        for j in i + 1..images.len() {
            assert!(
                images[i] != images[j],
                "variants {:?} and {:?} give the same image",
                variants[i],
                variants[j]
            );
        }
    }
}

#[test]
fn reports_peak_memory() {
    let dir = temp_dir();
    let out = ok(dir.path(), &SMALL);
    assert!(stdout(&out).contains("peak memory"), "{}", stdout(&out));
}

#[test]
fn rejects_supersample_3() {
    assert_rejected(
        &[&SMALL[..], &["--supersample", "3"]].concat(),
        &["`3`", "1, 2"],
    );
}

#[test]
fn rejects_zero_palette_cycle() {
    assert_rejected(
        &[&SMALL[..], &["--palette-cycle", "0"]].concat(),
        &["`0`", "palette cycle"],
    );
}

#[test]
fn rejects_palette_offset_out_of_range() {
    assert_rejected(
        &[&SMALL[..], &["--palette-offset", "1.5"]].concat(),
        &["`1.5`", "offset"],
    );
    assert_rejected(
        &[&SMALL[..], &["--palette-offset", "-0.25"]].concat(),
        &["`-0.25`", "offset"],
    );
    assert_rejected(
        &[&SMALL[..], &["--palette-offset", "nan"]].concat(),
        &["`nan`", "offset"],
    );
}

#[test]
fn rejects_zero_band_rows() {
    assert_rejected(
        &[&SMALL[..], &["--band-rows", "0"]].concat(),
        &["`0`", "rows per band"],
    );
}

#[test]
fn rejects_zero_or_unknown_gpus() {
    for bad in ["0", "some", "1.5"] {
        assert_rejected(
            &[&SMALL[..], &["--gpus", bad]].concat(),
            &[&format!("`{bad}`"), "--gpus"],
        );
    }
}

#[test]
fn gpus_option_is_accepted_with_the_cpu_backend() {
    // `--gpus` selects GPUs; with `--backend cpu` it changes nothing.
    let dir = temp_dir();
    for gpus in ["all", "ALL", "1", "3"] {
        ok(dir.path(), &[&SMALL[..], &["--gpus", gpus]].concat());
    }
}

#[test]
fn rejects_gpu_pool_without_gpu() {
    if skip_with_driver("rejects_gpu_pool_without_gpu") {
        return;
    }
    let mut args = [&SMALL[..], &["--gpus", "2"]].concat();
    args[2] = "gpu";
    assert_fails(&args, &["--backend gpu", "no CUDA driver found"]);
}

/// A small CPU zoom; tests append outputs and the option under test.
const ZOOM: [&str; 13] = [
    "zoom",
    "--backend",
    "cpu",
    "--width",
    "16",
    "--height",
    "12",
    "--frames",
    "3",
    "--max-iter",
    "50",
    "--end-scale",
    "0.01",
];

#[test]
fn zoom_writes_frames_and_gif() {
    let dir = temp_dir();
    let out = ok(
        dir.path(),
        &[
            &ZOOM[..],
            &["-o", "frames", "--gif", "zoom.gif", "--smooth"],
        ]
        .concat(),
    );
    assert!(stdout(&out).contains("3 frames"), "{}", stdout(&out));
    assert_eq!(entries(dir.path()), ["frames", "zoom.gif"]);
    assert_eq!(
        entries(&dir.path().join("frames")),
        ["frame_00000.png", "frame_00001.png", "frame_00002.png"]
    );
    let first = read_rgb(&dir.path().join("frames/frame_00000.png"));
    let last = read_rgb(&dir.path().join("frames/frame_00002.png"));
    assert_eq!(first.dimensions(), (16, 12));
    assert!(first != last, "the zoom did not change the picture");
    let gif = std::fs::read(dir.path().join("zoom.gif")).unwrap();
    assert!(gif.starts_with(b"GIF89a"), "not a GIF");
    assert_eq!(gif.last(), Some(&0x3b), "GIF trailer missing");
}

#[test]
fn rejects_zoom_zero_frames() {
    let args = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "16",
        "--height",
        "12",
        "--frames",
        "0",
        "--gif",
        "z.gif",
    ];
    assert_rejected(&args, &["--frames 0"]);
}

#[test]
fn rejects_zoom_zero_fps() {
    assert_rejected(
        &[&ZOOM[..], &["--fps", "0", "--gif", "z.gif"]].concat(),
        &["--fps", "`0` is not allowed", "1 to 50"],
    );
}

#[test]
fn rejects_zoom_negative_end_scale() {
    let args = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "16",
        "--height",
        "12",
        "--end-scale",
        "-1",
        "--gif",
        "z.gif",
    ];
    assert_rejected(&args, &["--end-scale -1"]);
}

#[test]
fn zoom_goes_past_f64_by_perturbation() {
    let dir = temp_dir();
    let args = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "16",
        "--height",
        "12",
        "--center",
        "0,1",
        "--end-scale",
        "1e-300",
        "--frames",
        "3",
        "--max-iter",
        "100",
        "-o",
        "frames",
    ];
    let out = ok(dir.path(), &args);
    assert!(stdout(&out).contains("to 1e-300"), "{}", stdout(&out));
    for k in 0..3 {
        let img = read_rgb(&dir.path().join(format!("frames/frame_{k:05}.png")));
        assert_eq!(img.dimensions(), (16, 12));
    }
    // The deepest frame is not one flat colour: the set near i has detail at 1e-300.
    let last = read_rgb(&dir.path().join("frames/frame_00002.png"));
    let first = last.get_pixel(0, 0).0;
    assert!(last.pixels().any(|p| p.0 != first), "flat deepest frame");
}

#[test]
fn rejects_zoom_gif_not_gif() {
    assert_rejected(
        &[&ZOOM[..], &["--gif", "z.png"]].concat(),
        &["z.png", ".gif"],
    );
}

#[test]
fn rejects_zoom_without_output() {
    assert_rejected(&ZOOM, &["-o DIR", "--gif FILE"]);
}

#[test]
fn bench_on_cpu_reports_identical_counts() {
    let dir = temp_dir();
    let args = [
        "mandelbrot-bench",
        "--backend",
        "cpu",
        "--size",
        "24",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--max-iter",
        "300",
    ];
    let out = ok(dir.path(), &args);
    let text = stdout(&out);
    assert_eq!(text.matches("identical").count(), 8, "{text}");
    assert!(!text.contains("DIFFER"), "{text}");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn rejects_bench_zero_size() {
    assert_rejected(
        &["mandelbrot-bench", "--backend", "cpu", "--size", "0"],
        &["--size 0"],
    );
}

// ---- Signals, standard output, views, memory, output paths (issue: CLI reliability). ----

/// A CPU render that takes far longer than the waits below (2000×2000, 16 samples per pixel,
/// seahorse valley at max_iter 5000: tens of seconds on two cores).
const SLOW: [&str; 17] = [
    "mandelbrot",
    "--backend",
    "cpu",
    "--width",
    "2000",
    "--height",
    "2000",
    "--supersample",
    "4",
    "--center",
    "-0.7435,0.1314",
    "--scale",
    "0.01",
    "--max-iter",
    "5000",
    "-o",
    "slow.png",
];

/// Starts `args`, sends `signal` after `after`, and returns (exit code, stderr, time from the
/// signal to the exit).
fn interrupt(
    dir: &Path,
    args: &[&str],
    signal: &str,
    after: std::time::Duration,
) -> (Option<i32>, String, std::time::Duration) {
    use std::process::Stdio;
    let child = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting ferrocuda");
    std::thread::sleep(after);
    let sent = std::time::Instant::now();
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("running kill");
    assert!(
        status.success(),
        "kill -{signal} failed (did the render end already?)"
    );
    let out = child.wait_with_output().expect("waiting for ferrocuda");
    (out.status.code(), stderr(&out), sent.elapsed())
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT (issue 35: it used to dump core and leave the
/// `.part` file) stop a render promptly, with exit status 128 + signal and no file left.
#[test]
fn signals_stop_a_render_promptly_and_leave_no_file() {
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129), ("QUIT", 131)] {
        let dir = temp_dir();
        let (status, err, latency) = interrupt(
            dir.path(),
            &SLOW,
            signal,
            std::time::Duration::from_millis(700),
        );
        assert_eq!(status, Some(code), "SIG{signal}: {err}");
        assert!(err.contains(&format!("SIG{signal}")), "SIG{signal}: {err}");
        assert!(err.contains("stopping"), "no immediate notice: {err}");
        assert!(err.contains("no output file written"), "{err}");
        // Not a speed test: the render alone takes tens of seconds.
        assert!(latency.as_secs() < 10, "stopped only after {latency:?}");
        assert_eq!(entries(dir.path()), Vec::<String>::new(), "SIG{signal}");
    }
}

#[test]
fn an_interrupted_zoom_says_which_frames_it_wrote() {
    let dir = temp_dir();
    let args = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "400",
        "--height",
        "300",
        "--frames",
        "400",
        "--max-iter",
        "2000",
        "--supersample",
        "4",
        "-o",
        "frames",
    ];
    let (status, err, _) = interrupt(
        dir.path(),
        &args,
        "INT",
        std::time::Duration::from_millis(1500),
    );
    assert_eq!(status, Some(130), "{err}");
    let written = std::fs::read_dir(dir.path().join("frames")).map_or(0, |d| d.count());
    if written > 0 {
        assert!(
            err.contains(&format!("{written} frames written to `frames`")),
            "{written} frames on disk; stderr: {err}"
        );
        assert!(!err.contains("no output file written"), "{err}");
    } else {
        assert!(err.contains("no frame written"), "{err}");
    }
}

#[test]
fn a_closed_stdout_ends_quietly_and_a_full_one_is_one_error_line() {
    use std::process::Stdio;
    let bench = [
        "mandelbrot-bench",
        "--backend",
        "cpu",
        "--size",
        "16",
        "--reps",
        "1",
        "--warmup",
        "0",
    ];
    for args in [&SMALL[..], &["info"][..], &bench[..]] {
        let dir = temp_dir();
        // The reader is gone before the program starts, as with `| head -0`. (Closing it
        // after spawning raced with fast commands: `info` could fill the pipe's buffer
        // first and exit 0.)
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
            .args(args)
            .current_dir(dir.path())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("running ferrocuda");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
    }
    let dir = temp_dir();
    let full = std::fs::File::create("/dev/full").expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(SMALL)
        .current_dir(dir.path())
        .stdout(full)
        .output()
        .expect("running ferrocuda");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
}

#[test]
fn huge_views_render_in_f64_or_are_refused() {
    // 1e39 wide: f32 cannot hold the coordinates' squares; f64 renders it (every point
    // escapes at once: the textbook colour of escape time 1, not black).
    // An even size: no pixel sits at the centre, every |c| is about 1e38, so every pixel
    // escapes at the first iteration: gray level 255 - 1 everywhere (Palette::Gray).
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "8",
        "--height",
        "6",
        "--scale",
        "1e39",
        "--palette",
        "gray",
        "-o",
        "out.png",
    ];
    let out = ok(dir.path(), &args);
    assert!(stdout(&out).contains("f64"), "{}", stdout(&out));
    let img = read_rgb(&dir.path().join("out.png"));
    assert!(
        img.pixels().all(|p| p.0 == [254, 254, 254]),
        "not every pixel escaped at once: {:?}",
        img.pixels().map(|p| p.0).collect::<Vec<_>>()
    );
    assert_rejected(
        &[&SMALL[..], &["--center", "1.7e308,0", "--scale", "1.7e308"]].concat(),
        &["no precision renders it"],
    );
    // Deeper than f64 resolves (or than it represents at all): rendered by perturbation.
    for scale in ["1e-300", "5e-324", "1e-500"] {
        let out = ok(dir.path(), &[&SMALL[..], &["--scale", scale]].concat());
        assert!(stdout(&out).contains("deep zoom"), "{}", stdout(&out));
        assert_eq!(read_rgb(&dir.path().join("out.png")).dimensions(), (7, 5));
    }
}

#[test]
fn deep_zoom_options_name_bad_values() {
    assert_rejected(
        &[
            &SMALL[..],
            &[
                "--center-re",
                "0.1x",
                "--center-im",
                "1",
                "--scale",
                "1e-50",
            ],
        ]
        .concat(),
        &["`0.1x`", "decimal"],
    );
    assert_rejected(
        &[
            &SMALL[..],
            &["--center-re", "0", "--center-im", "1", "--scale", "-1e-50"],
        ]
        .concat(),
        &["scale `-1e-50`", "positive"],
    );
    let dir = temp_dir();
    std::fs::write(dir.path().join("bad.kfr"), "Re: 0\nIm: 1\nZoom: many\n").unwrap();
    let out = ferrocuda(dir.path(), &[&SMALL[..], &["--kfr", "bad.kfr"]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`Zoom: many` is not a positive decimal"),
        "{}",
        stderr(&out)
    );
    // A good file renders, deep below f64: 2.5e300 zoom.
    std::fs::write(
        dir.path().join("i.kfr"),
        "Re: 0\r\nIm: 1\r\nZoom: 2.5E300\r\nIterations: 2000\r\n",
    )
    .unwrap();
    let out = ok(dir.path(), &[&SMALL[..], &["--kfr", "i.kfr"]].concat());
    assert!(stdout(&out).contains("max_iter 2000"), "{}", stdout(&out));
    // Issue 35: a --max-iter given overrides `Iterations`, whatever its value: 1000 (the
    // value used without either) was taken for "not given" before and ignored.
    for given in ["1000", "1500"] {
        let args = [&SMALL[..], &["--kfr", "i.kfr", "--max-iter", given]].concat();
        let out = ok(dir.path(), &args);
        let want = format!("max_iter {given},");
        assert!(stdout(&out).contains(&want), "{}", stdout(&out));
    }
}

#[test]
fn memory_hungry_requests_are_refused_with_the_figure() {
    assert_rejected(
        &[
            "mandelbrot",
            "--backend",
            "cpu",
            "--width",
            "65536",
            "--height",
            "65536",
            "--band-rows",
            "65536",
            "-o",
            "x.png",
        ],
        // 13 bytes per pixel on the CPU (escape times while a band renders, colours of
        // three bands): 1.5 GiB hold 1890 rows of 65536 pixels.
        &["--band-rows 65536", "GiB", "--band-rows 1 to 1890"],
    );
    assert_rejected(
        &["mandelbrot-bench", "--backend", "cpu", "--size", "32768"],
        &["--size 32768", "14.0 GiB"],
    );
}

#[test]
fn bad_output_paths_fail_before_rendering_with_the_os_wording() {
    let dir = temp_dir();
    std::fs::create_dir(dir.path().join("x.png")).unwrap();
    let long = format!("{}.png", "a".repeat(300));
    for (out_path, needle) in [
        ("x.png", "existing folder"),
        (long.as_str(), "304 bytes"),
        ("missing/y.png", "does not exist"),
    ] {
        let args = [&SLOW[..16], &[out_path]].concat();
        let start = std::time::Instant::now();
        let out = ferrocuda(dir.path(), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{out_path}: {err}");
        assert!(err.contains(needle), "{out_path}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        // Refused up front: the slow render never started.
        assert!(
            start.elapsed().as_secs() < 5,
            "{out_path}: took {:?}",
            start.elapsed()
        );
    }
    let err = stderr(&ferrocuda(
        dir.path(),
        &[
            "zoom",
            "--backend",
            "cpu",
            "--gif",
            "x.png.gif",
            "--frames",
            "2",
        ],
    ));
    assert!(
        !err.contains("Is a directory (os error 21): Is a directory"),
        "{err}"
    );
    std::fs::create_dir(dir.path().join("d.gif")).unwrap();
    let out = ferrocuda(dir.path(), &["zoom", "--backend", "cpu", "--gif", "d.gif"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("existing folder"), "{}", stderr(&out));
    let out = ferrocuda(dir.path(), &[&SMALL[..8], &["/proc/foo.png"]].concat());
    let err = stderr(&out);
    assert!(
        err.contains("os error") && !err.contains("entity not found"),
        "{err}"
    );
    assert!(!err.contains(".part"), "{err}");
}

#[test]
fn read_only_outputs_are_kept_and_links_are_followed() {
    let dir = temp_dir();
    let ro = dir.path().join("ro.png");
    std::fs::write(&ro, b"keep").unwrap();
    let mut perms = std::fs::metadata(&ro).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&ro, perms).unwrap();
    let out = ferrocuda(dir.path(), &[&SMALL[..8], &["ro.png"]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&ro).unwrap(), b"keep");
    std::os::unix::fs::symlink("target.png", dir.path().join("link.png")).unwrap();
    std::fs::write(dir.path().join("target.png"), b"old").unwrap();
    ok(dir.path(), &[&SMALL[..8], &["link.png"]].concat());
    let link = std::fs::symlink_metadata(dir.path().join("link.png")).unwrap();
    assert!(
        link.file_type().is_symlink(),
        "the link was replaced by a file"
    );
    read_rgb(&dir.path().join("target.png"));
}

#[test]
fn small_cli_defects_are_fixed() {
    let dir = temp_dir();
    // Negative sizes name the documented range, not u32's.
    let err = stderr(&ferrocuda(dir.path(), &["mandelbrot", "--width=-5"]));
    assert!(
        err.contains("1 to 65536") && !err.contains("4294967295"),
        "{err}"
    );
    // Palette names in any case, British spelling too.
    for name in ["GREY", "Gray", "grey"] {
        ok(dir.path(), &[&SMALL[..], &["--palette", name]].concat());
    }
    // One comma in a complex number.
    let err = stderr(&ferrocuda(dir.path(), &["mandelbrot", "--center", "0,0,0"]));
    assert!(err.contains("one comma"), "{err}");
    // `cuda` is accepted as the GPU backend (not "did you mean cpu").
    let err = stderr(&ferrocuda(
        dir.path(),
        &[&SMALL[..], &["--backend", "cuda"]].concat(),
    ));
    assert!(!err.contains("similar value"), "{err}");
    // Corners with another aspect ratio: a note.
    let out = ok(
        dir.path(),
        &[&SMALL[..], &["--corners", "-2,1", "2,-1"]].concat(),
    );
    assert!(stderr(&out).contains("stretched"), "{}", stderr(&out));
    // GIF frame rates beyond what browsers play, and repetition limits, the same everywhere.
    assert_rejected(
        &[&ZOOM[..], &["--fps", "51", "--gif", "z.gif"]].concat(),
        &["1 to 50"],
    );
    for args in [
        &["mandelbrot-bench", "--backend", "cpu", "--reps", "1001"][..],
        &["bench", "--reps", "1001"][..],
        &["vector-add", "--reps", "1001"][..],
    ] {
        assert_rejected(args, &["`1001` is not allowed", "1 to 1000"]);
    }
    // An empty text in the workload filter would match every row.
    assert_rejected(&["bench", "--workloads", "scan,,sort"], &["an empty text"]);
}

#[test]
fn a_shorter_zoom_removes_the_frames_of_a_longer_one() {
    let dir = temp_dir();
    let with_frames = |n: &'static str| {
        let mut args = ZOOM.to_vec();
        let i = args.iter().position(|a| *a == "--frames").unwrap();
        args[i + 1] = n;
        [&args[..], &["-o", "frames"]].concat()
    };
    ok(dir.path(), &with_frames("5"));
    let out = ok(dir.path(), &with_frames("2"));
    let mut frames = entries(&dir.path().join("frames"));
    frames.sort();
    assert_eq!(frames, ["frame_00000.png", "frame_00001.png"]);
    assert!(
        stdout(&out).contains("removed 3 frames"),
        "{}",
        stdout(&out)
    );
    // The old flag name still works.
    let args = with_frames("1");
    ok(
        dir.path(),
        &[&args[..args.len() - 2], &["--output-dir", "f2"]].concat(),
    );
}

#[test]
fn long_runs_without_a_terminal_report_progress() {
    // stderr is a pipe here: one progress line every 10 s.
    let dir = temp_dir();
    let (status, err, _) = interrupt(
        dir.path(),
        &SLOW,
        "INT",
        std::time::Duration::from_millis(10_800),
    );
    assert_eq!(status, Some(130), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("progress: "))
        .unwrap_or_else(|| panic!("no progress line after 10 s: {err}"));
    assert!(
        line.contains("/4000000 pixels") && line.contains('%'),
        "{line}"
    );
}

#[test]
fn png_of_many_compressed_pieces_holds_the_rendered_pixels() {
    // 700 × 500 RGB is 1 MB of rows: the encoder compresses it in several 256 KiB pieces in
    // parallel, each its own IDAT chunk, and 37-row bands do not line up with the pieces.
    // Decoded, the file must hold exactly the pixels the library renders.
    use common::{Complex, Viewport, palette::Palette};
    use host::mandelbrot::{Precision, RenderParams, render_cpu};
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "700",
        "--height",
        "500",
        "--center",
        "-0.5,0",
        "--scale",
        "3",
        "--max-iter",
        "200",
        "--precision",
        "f64",
        "--band-rows",
        "37",
        "-o",
        "big.png",
    ];
    let out = ferrocuda(dir.path(), &args);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let bytes = std::fs::read(dir.path().join("big.png")).expect("reading big.png");
    let idat_chunks = bytes.windows(4).filter(|w| w == b"IDAT").count();
    assert!(idat_chunks >= 3, "{idat_chunks} IDAT chunks");
    let img = read_rgb(&dir.path().join("big.png"));
    let view =
        Viewport::from_center_scale(700, 500, Complex::new(-0.5, 0.0), 3.0).expect("a valid view");
    let want = render_cpu(&RenderParams {
        view,
        max_iter: 200,
        precision: Precision::F64,
        palette: Palette::Classic,
    });
    assert!(
        img.as_raw() == &want.rgb,
        "decoded pixels differ from the render"
    );
}

/// Runs `ferrocuda args` with its current folder on a fresh 64 KiB tmpfs that is already full
/// (a user and mount namespace of its own: `unshare --user --map-root-user --mount`). Returns
/// the output and the regular files left on the tmpfs other than the filler (`./NAME`), or
/// `None` where user namespaces or tmpfs mounts are not available.
fn on_full_disk(args: &[&str]) -> Option<(Output, Vec<String>)> {
    let mount = temp_dir();
    let listing = temp_dir();
    let list = listing.path().join("left");
    let script = r#"
        d=$1; list=$2; shift 2
        mount -t tmpfs -o size=64k tmpfs "$d" || exit 200
        cd "$d" || exit 200
        head -c 1048576 /dev/zero > fill 2>/dev/null
        "$@"; rc=$?
        find . -type f ! -name fill | sort > "$list"
        exit $rc
    "#;
    let out = Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--mount",
            "sh",
            "-c",
            script,
            "sh",
        ])
        .arg(mount.path())
        .arg(&list)
        .arg(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .output();
    match out {
        Ok(out) if out.status.code() != Some(200) && list.exists() => {
            let left = std::fs::read_to_string(&list).expect("reading the listing");
            Some((out, left.lines().map(str::to_owned).collect()))
        }
        Ok(out) => {
            eprintln!(
                "skipped the full-disk case: no tmpfs in a user namespace here: {}",
                stderr(&out)
            );
            None
        }
        Err(e) => {
            eprintln!("skipped the full-disk case: `unshare` cannot be run: {e}");
            None
        }
    }
}

/// N1: on a full disk every file write fails with the path and the OS error, exit status 1,
/// and leaves no file: the streaming PNG of an f64 render, a deep render's PNG (the image
/// crate's encoder behind a `BufWriter`, whose last flush used to be lost), zoom frames and
/// zoom's GIF.
#[test]
fn a_full_disk_fails_naming_the_path_and_leaves_no_file() {
    let deep = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "32",
        "--height",
        "32",
        "--center-re",
        "-1.7499984109937408174900248316242839345282",
        "--center-im",
        "-0.0000000000000016571246929541869232581096",
        "--scale",
        "1e-300",
        "-o",
        "x.png",
    ];
    let cases: [(&[&str], &str); 5] = [
        (&SMALL[..], "out.png"),
        (&deep[..], "x.png"),
        (&[&ZOOM[..], &["-o", "fr"]].concat(), "frame_00000.png"),
        (&[&ZOOM[..], &["--gif", "z.gif"]].concat(), "z.gif"),
        (
            &[&ZOOM[..], &["-o", "fr", "--gif", "fr/z.gif"]].concat(),
            "frame_00000.png",
        ),
    ];
    fails_on_a_full_disk_leaving_nothing(&cases);
}

/// Runs each `(args, path)` case on a full disk ([`on_full_disk`]; nothing to check where
/// the sandbox cannot mount one): exit 1 with an error naming `path` and the OS error, no
/// panic, no "wrote", and no file left behind.
fn fails_on_a_full_disk_leaving_nothing(cases: &[(&[&str], &str)]) {
    for &(args, path) in cases {
        let Some((out, left)) = on_full_disk(args) else {
            return;
        };
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(path) && err.contains("No space left on device"),
            "{args:?}: the error names no path or no OS error: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(!stdout(&out).contains("wrote"), "{}", stdout(&out));
        assert_eq!(left, Vec::<String>::new(), "{args:?} left files behind");
    }
}

/// N10: a full or closed stderr never panics and never costs the image: the notes and
/// warnings are dropped, the PNG is written, the exit status is 0.
#[test]
fn a_full_stderr_does_not_lose_the_image() {
    let deep = [
        "--center-re",
        "-0.75",
        "--center-im",
        "0.1",
        "--scale",
        "1e-20",
    ];
    for extra in [
        // Notes on stderr: --verify on the CPU, and corners of another aspect ratio.
        &["--verify", "--corners", "-2,1", "2,-1"][..],
        &["--verify"][..],
        &deep[..],
        &[&deep[..], &["--verify"]].concat()[..],
    ] {
        let dir = temp_dir();
        let full = std::fs::File::create("/dev/full").expect("/dev/full");
        let out = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
            .args([&SMALL[..], extra].concat())
            .current_dir(dir.path())
            .stderr(full)
            .output()
            .expect("running ferrocuda");
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", stdout(&out));
        assert_eq!(read_rgb(&dir.path().join("out.png")).dimensions(), (7, 5));
    }
    // A zoom's note (iterations capped) on a full stderr.
    let dir = temp_dir();
    let full = std::fs::File::create("/dev/full").expect("/dev/full");
    let out = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(&ZOOM[..9])
        .args([
            "--max-iter",
            "9999999",
            "--end-scale",
            "0.01",
            "--gif",
            "z.gif",
        ])
        .current_dir(dir.path())
        .stderr(full)
        .output()
        .expect("running ferrocuda");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(dir.path().join("z.gif").is_file());
}

/// N3, N11, N12: KFR files: `Iterations` in --max-iter's range, at most 1 MiB read, a BOM
/// and CR-only line ends accepted.
#[test]
fn kfr_files_are_bounded_and_any_line_end_is_read() {
    let dir = temp_dir();
    std::fs::write(
        dir.path().join("huge.kfr"),
        "Re: 0\nIm: 1\nZoom: 2.5E300\nIterations: 4294967295\n",
    )
    .unwrap();
    let big = format!("Re: 0\nIm: 1\nZoom: 1\n{}", "x".repeat(2 << 20));
    std::fs::write(dir.path().join("big.kfr"), &big).unwrap();
    let big_size = format!("{} bytes", big.len());
    for (file, named) in [
        (
            "huge.kfr",
            &["`Iterations: 4294967295`", "1 to 10000000"][..],
        ),
        ("big.kfr", &["big.kfr", "1048576 bytes", &big_size][..]),
        ("/dev/zero", &["/dev/zero", "1048576 bytes"][..]),
    ] {
        let out = ferrocuda(dir.path(), &[&SMALL[..], &["--kfr", file]].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        for n in named {
            assert!(err.contains(n), "{file}: no `{n}` in {err}");
        }
        assert!(!dir.path().join("out.png").exists());
    }
    // A BOM and CR-only line ends (old Mac style), deep below f64.
    std::fs::write(
        dir.path().join("cr.kfr"),
        "\u{feff}Re: 0\rIm: 1\rZoom: 2.5E300\rIterations: 2000\r",
    )
    .unwrap();
    let out = ok(dir.path(), &[&SMALL[..], &["--kfr", "cr.kfr"]].concat());
    assert!(stdout(&out).contains("max_iter 2000"), "{}", stdout(&out));
}

/// N4, N14: one strict decimal parser: malformed numbers are refused naming the value and
/// the rule; the messages say what is wrong (positive, exponent out of range).
#[test]
fn decimals_are_strict_and_messages_precise() {
    let deep = |re: &str, im: &str, scale: &str| {
        [
            &SMALL[..],
            &["--center-re", re, "--center-im", im, "--scale", scale],
        ]
        .concat()
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<String>>()
    };
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (
            deep("-0.75", "0.1", "1.2.3e-3"),
            vec!["`1.2.3e-3`", "at most one `.`"],
        ),
        (deep("1-2", "0.1", "1e-20"), vec!["`1-2`", "not a decimal"]),
        (deep("0", "0.1", "1e"), vec!["`1e`", "not a decimal"]),
        (
            deep("0", "1e5e5", "1e-20"),
            vec!["`1e5e5`", "not a decimal"],
        ),
        (
            deep("0", "0", "1e-9223372036854775808"),
            vec!["1e-9223372036854775808", "exponent out of range"],
        ),
        (deep("0", "0", "-1e0"), vec!["-1e0", "must be positive"]),
        (deep("0", "0", "0e0"), vec!["0e0", "must be positive"]),
    ];
    for (args, named) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_rejected(&args, &named);
    }
    assert_rejected(
        &[&SMALL[..], &["--center", "1.2.3,0"]].concat(),
        &["`1.2.3`", "at most one `.`"],
    );
    assert_rejected(
        &[&ZOOM[..], &["--start-scale", "0e0", "--gif", "z.gif"]].concat(),
        &["--start-scale", "0e0", "must be positive"],
    );
    assert_rejected(
        &[&ZOOM[..11], &["--end-scale", "1e5e5", "--gif", "z.gif"]].concat(),
        &["`1e5e5`", "not a decimal"],
    );
}

/// N5: `--center` keeps every digit for a deep view: the image equals the one from
/// --center-re/--center-im with the same digits, and differs from the f64-rounded centre's.
#[test]
fn center_keeps_every_digit_on_a_deep_view() {
    let (re, im) = (
        "-0.7436438870371587047521915061147746795140173834748",
        "0.1318259042053119704931320563851394",
    );
    let dir = temp_dir();
    let base = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "16",
        "--height",
        "12",
        "--scale",
        "1e-30",
        "--max-iter",
        "20000",
    ];
    let center = format!("{re},{im}");
    ok(
        dir.path(),
        &[&base[..], &["--center", &center, "-o", "a.png"]].concat(),
    );
    ok(
        dir.path(),
        &[
            &base[..],
            &["--center-re", re, "--center-im", im, "-o", "b.png"],
        ]
        .concat(),
    );
    let rounded = (
        re.parse::<f64>().unwrap().to_string(),
        im.parse::<f64>().unwrap().to_string(),
    );
    ok(
        dir.path(),
        &[
            &base[..],
            &[
                "--center-re",
                &rounded.0,
                "--center-im",
                &rounded.1,
                "-o",
                "c.png",
            ],
        ]
        .concat(),
    );
    let (a, b, c) = (
        read_rgb(&dir.path().join("a.png")),
        read_rgb(&dir.path().join("b.png")),
        read_rgb(&dir.path().join("c.png")),
    );
    assert!(
        a == b,
        "--center and --center-re/--center-im give different images"
    );
    assert!(
        a != c,
        "the view does not tell the digits apart; choose another"
    );
}

/// D13: coordinates beyond f64 name the values that gave them.
#[test]
fn views_beyond_f64_name_their_values() {
    assert_rejected(
        &[&SMALL[..], &["--corners", "-1e308,1e308", "1e308,-1e308"]].concat(),
        &["--corners -1e308,1e308 1e308,-1e308", "beyond f64's range"],
    );
    assert_rejected(
        &[&SMALL[..], &["--center", "1e400,0", "--scale", "1e-20"]].concat(),
        &["1e400,0", "f64's range"],
    );
    assert_rejected(
        &[
            &SMALL[..],
            &[
                "--center-re",
                "0",
                "--center-im",
                "-1e1000000",
                "--scale",
                "1e-20",
            ],
        ]
        .concat(),
        &["0,-1e1000000", "f64's range"],
    );
    assert_rejected(
        &[&ZOOM[..11], &["--end-scale", "1e400", "--gif", "z.gif"]].concat(),
        &["--end-scale 1e400", "beyond f64's range"],
    );
}

/// D12, D17: negative numbers after a space reach the range checks; --max-iter-growth has a
/// stated range and values outside it are refused.
#[test]
fn negative_and_out_of_range_numbers_name_value_and_range() {
    assert_rejected(
        &[&SMALL[..], &["--max-iter", "-1"]].concat(),
        &["`-1` is not allowed", "1 to 10000000"],
    );
    assert_rejected(
        &["mandelbrot", "--backend", "cpu", "--width", "-5"],
        &["`-5` is not allowed", "1 to 65536"],
    );
    assert_rejected(
        &["zoom", "--frames", "-1", "--gif", "z.gif"],
        &["--frames -1", "1 to 100000"],
    );
    for growth in ["100000000", "-1"] {
        assert_rejected(
            &[&ZOOM[..], &["--max-iter-growth", growth, "--gif", "z.gif"]].concat(),
            &[&format!("`{growth}` is not allowed"), "0 to 1000000"],
        );
    }
    let dir = temp_dir();
    let help = stdout(&ferrocuda(dir.path(), &["zoom", "--help"]));
    assert!(help.contains("0 to 1,000,000"), "{help}");
}

/// N15: a GIF path that is the frame folder is refused before rendering; a GIF inside the
/// frame folder that -o creates is fine.
#[test]
fn zoom_gif_and_frame_folder_are_checked_before_rendering() {
    assert_rejected(
        &[&ZOOM[..], &["-o", "x.gif", "--gif", "x.gif"]].concat(),
        &["x.gif", "frame folder"],
    );
    assert_rejected(
        &[&ZOOM[..], &["-o", "a.gif/fr", "--gif", "./a.gif"]].concat(),
        &["a.gif", "lies inside"],
    );
    let dir = temp_dir();
    ok(
        dir.path(),
        &[&ZOOM[..], &["-o", "fr", "--gif", "fr/a.gif"]].concat(),
    );
    assert!(dir.path().join("fr/a.gif").is_file());
    assert!(dir.path().join("fr/frame_00002.png").is_file());
}

/// D12 in the benchmark commands: a negative count reaches the range check.
#[test]
fn bench_counts_accept_negative_numbers_into_the_range_check() {
    for args in [
        &["mandelbrot-bench", "--backend", "cpu", "--reps", "-1"][..],
        &["bench", "--warmup", "-1"][..],
        &["vector-add", "--reps", "-1"][..],
    ] {
        assert_rejected(args, &["`-1` is not allowed", "1000"]);
    }
    assert_rejected(&["mandelbrot-bench", "--size", "-1"], &["'-1'"]);
}

/// Issue 35: a negative or out-of-range `--size` or `--len` says what is allowed (not u32's
/// range, not "invalid digit").
#[test]
fn bench_sizes_and_lengths_name_what_is_allowed() {
    for (args, flag, range) in [
        (
            &["mandelbrot-bench", "--size", "-1"][..],
            "--size -1",
            "1 to 32768",
        ),
        (
            &["mandelbrot-bench", "--size", "32769"],
            "--size 32769",
            "1 to 32768",
        ),
        (&["bench", "--len", "-1"], "--len -1", "1 to 2147483648"),
        (
            &["vector-add", "--len", "-1"],
            "--len -1",
            "1 to 2147483648",
        ),
        (
            &["vector-add", "--len", "2147483649"],
            "--len 2147483649",
            "1 to 2147483648",
        ),
    ] {
        assert_rejected(args, &[&format!("{flag} is not allowed"), range]);
        let err = stderr(&ferrocuda(temp_dir().path(), args));
        assert!(
            !err.contains("4294967295") && !err.contains("invalid digit"),
            "{args:?}: {err}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Deep zoom in the band pipeline (issue 20: N2, N6, N7, N8, N9, N13, N16). Appended as one
// section; the helpers above are shared.
// ---------------------------------------------------------------------------------------------

/// A deep CPU view near c = i (pixel spacing about 1e-23, perturbation) whose pixels take
/// minutes in a debug build: its reference orbit is quick, so a signal lands in the bands.
const DEEP_SLOW: [&str; 17] = [
    "mandelbrot",
    "--backend",
    "cpu",
    "--width",
    "2000",
    "--height",
    "2000",
    "--center-re",
    "1.4285714285714285714e-21",
    "--center-im",
    "1.00000000000000000000014285714285714285714",
    "--scale",
    "1e-20",
    "--max-iter",
    "200000",
    "-o",
    "deep.png",
];

/// N2: SIGINT, SIGTERM and SIGHUP stop a deep CPU render within about a second, in the
/// pixels (bands) and in the reference orbit (a view inside the set with 10^7 iterations:
/// minutes of arbitrary-precision steps), with exit status 128 + signal and no file left.
#[test]
fn signals_stop_a_deep_render_within_a_second_and_leave_no_file() {
    let orbit_bound = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "64",
        "--height",
        "48",
        "--center-re",
        "-0.1",
        "--center-im",
        "0.1",
        "--scale",
        "1e-30",
        "--max-iter",
        "10000000",
        "-o",
        "deep.png",
    ];
    for (args, what, signal, code) in [
        (&DEEP_SLOW, "pixels", "INT", 130),
        (&DEEP_SLOW, "pixels", "TERM", 143),
        (&orbit_bound, "reference orbit", "TERM", 143),
        (&orbit_bound, "reference orbit", "HUP", 129),
    ] {
        let dir = temp_dir();
        let (status, err, latency) = interrupt(
            dir.path(),
            args,
            signal,
            std::time::Duration::from_millis(1500),
        );
        assert_eq!(status, Some(code), "SIG{signal} in the {what}: {err}");
        assert!(err.contains(&format!("SIG{signal}")), "{what}: {err}");
        assert!(err.contains("no output file written"), "{what}: {err}");
        assert!(
            latency.as_secs_f64() < 1.5,
            "SIG{signal} in the {what}: stopped only after {latency:?}"
        );
        assert_eq!(entries(dir.path()), Vec::<String>::new(), "{what}");
    }
}

/// N6: a deep render shows progress; with stderr not a terminal, a `progress:` line of
/// pixels every 10 s (the render is stopped after the first one).
#[test]
fn a_deep_render_prints_progress_lines_when_stderr_is_not_a_terminal() {
    let dir = temp_dir();
    let (line, code) = first_progress_line_then_sigterm(dir.path(), &DEEP_SLOW, |_| true);
    assert!(
        line.contains("/4000000 pixels"),
        "no progress line: {line:?}"
    );
    assert_eq!(code, Some(143));
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

/// Deep CPU renders in small bands (3 rows) give the same PNG bytes as in one band, plain
/// and supersampled with smooth colouring; bands also bound the memory (N7).
#[test]
fn banded_deep_render_equals_one_band() {
    let dir = temp_dir();
    let base = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "29",
        "--height",
        "23",
        "--center-re",
        "1.4285714285714285714e-31",
        "--center-im",
        "1.000000000000000000000000000000142857142857142857",
        "--scale",
        "1e-30",
        "--max-iter",
        "3000",
    ];
    for look in [
        &["--palette", "fire"][..],
        &["--smooth", "--supersample", "2"][..],
    ] {
        let one = [&base[..], look, &["--band-rows", "23", "-o", "one.png"]].concat();
        let out = ok(dir.path(), &one);
        assert!(stdout(&out).contains("deep zoom"), "{}", stdout(&out));
        let banded = [&base[..], look, &["--band-rows", "3", "-o", "bands.png"]].concat();
        let out = ok(dir.path(), &banded);
        assert!(
            stdout(&out).contains("8 bands of 3 rows"),
            "{}",
            stdout(&out)
        );
        let a = std::fs::read(dir.path().join("one.png")).unwrap();
        let b = std::fs::read(dir.path().join("bands.png")).unwrap();
        assert!(a == b, "{look:?}: banded deep render differs from one band");
        let img = read_rgb(&dir.path().join("one.png"));
        let first = img.get_pixel(0, 0).0;
        assert!(img.pixels().any(|p| p.0 != first), "{look:?}: flat image");
    }
}

/// N9: a scale deeper than the precision bound is refused at once, naming the bound.
#[test]
fn too_deep_scales_are_refused_quickly_with_the_bound() {
    for scale in ["1e-1000000", "1e-100000000"] {
        let t = std::time::Instant::now();
        assert_rejected(
            &[
                &SMALL[..],
                &["--center-re", "0", "--center-im", "1", "--scale", scale],
            ]
            .concat(),
            &[&format!("scale `{scale}` is too deep"), "100000 bits"],
        );
        assert_rejected(
            &[&SMALL[..], &["--center", "0,1", "--scale", scale]].concat(),
            &["100000 bits"],
        );
        assert!(t.elapsed().as_secs() < 5, "{scale}: {:?}", t.elapsed());
    }
}

/// N13: on deep views, --band-rows, --supersample and --gpus work, and --precision f32/f64
/// with a decimal centre is refused with the reason, the same way in `mandelbrot` and
/// `zoom` (zoom frames past f64 supersample too).
#[test]
fn options_on_deep_views_work_or_are_refused_alike() {
    let dir = temp_dir();
    let deep = ["--center-re", "0", "--center-im", "1", "--scale", "1e-40"];
    let out = ok(
        dir.path(),
        &[
            &SMALL[..],
            &deep[..],
            &["--supersample", "4", "--band-rows", "2", "--gpus", "1"],
        ]
        .concat(),
    );
    assert!(
        stdout(&out).contains("3 bands of 2 rows"),
        "{}",
        stdout(&out)
    );
    let reason = "views are always rendered by perturbation";
    for p in ["f32", "f64"] {
        assert_rejected(
            &[&SMALL[..], &deep[..], &["--precision", p]].concat(),
            &[&format!("--precision {p} is not allowed"), reason],
        );
        assert_rejected(
            &[
                "zoom",
                "--backend",
                "cpu",
                "--frames",
                "2",
                "--center-re",
                "0",
                "--center-im",
                "1",
                "--end-scale",
                "1e-40",
                "--precision",
                p,
                "-o",
                "frames",
            ],
            &[&format!("--precision {p} is not allowed"), "perturbation"],
        );
    }
    // Zoom: the deep frames are supersampled (not silently dropped): the last frame differs
    // from the same zoom without supersampling.
    let zoom = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "16",
        "--height",
        "12",
        "--center",
        "0,1",
        "--end-scale",
        "1e-40",
        "--frames",
        "2",
        "--max-iter",
        "300",
    ];
    ok(dir.path(), &[&zoom[..], &["-o", "plain"]].concat());
    ok(
        dir.path(),
        &[&zoom[..], &["--supersample", "2", "-o", "ss"]].concat(),
    );
    let a = read_rgb(&dir.path().join("plain/frame_00001.png"));
    let b = read_rgb(&dir.path().join("ss/frame_00001.png"));
    assert!(a != b, "--supersample changed nothing on a deep frame");
}

/// N16: one rule decides perturbation and the "f64 is too coarse" warning: the view of the
/// report (spacing 2^-49 of the centre) is rendered by perturbation, without the warning;
/// forcing f64 there renders blocky, with it.
#[test]
fn the_f64_warning_and_perturbation_start_at_the_same_depth() {
    let dir = temp_dir();
    let view = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "64",
        "--height",
        "48",
        "--center",
        "0.2500000000012,0",
        "--scale",
        "2e-12",
        "-o",
        "out.png",
    ];
    let out = ok(dir.path(), &view);
    assert!(stdout(&out).contains("deep zoom"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("blocky"), "{}", stderr(&out));
    let out = ok(dir.path(), &[&view[..], &["--precision", "f64"]].concat());
    assert!(stderr(&out).contains("blocky"), "{}", stderr(&out));
    // Shallower than 2^-44 of the centre: f64, no warning.
    let out = ok(
        dir.path(),
        &[&view[..9], &["--scale", "2e-9", "-o", "out.png"]].concat(),
    );
    assert!(stdout(&out).contains("f64"), "{}", stdout(&out));
    assert!(!stderr(&out).contains("blocky"), "{}", stderr(&out));
}

/// N13: options that would be silently ignored are refused by name, in `mandelbrot` and in
/// `zoom` alike: `--scale` beside `--kfr` (the file gives the zoom), and a `--center` beside
/// `--center-re/--center-im` (each gives the centre).
#[test]
fn options_a_view_would_ignore_are_refused_by_name() {
    let dir = temp_dir();
    std::fs::write(dir.path().join("l.kfr"), "Re: 0\nIm: 1\nZoom: 1e20\n").unwrap();
    for args in [
        &[
            "mandelbrot",
            "--kfr",
            "l.kfr",
            "--scale",
            "1e-5",
            "-o",
            "k.png",
        ][..],
        &[
            "mandelbrot",
            "--center",
            "0,1",
            "--center-re",
            "0",
            "--center-im",
            "1",
            "-o",
            "c.png",
        ],
        &[
            "zoom",
            "--center",
            "0,1",
            "--center-re",
            "0.1",
            "--center-im",
            "1",
            "--frames",
            "2",
            "-o",
            "z",
        ],
    ] {
        let out = ferrocuda(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("cannot be used with"), "{args:?}: {err}");
        assert_eq!(entries(dir.path()), ["l.kfr"], "{args:?} left files");
    }
}

// ---- Issue 35: special output files, deep memory, tiny centre exponents. ----

/// Runs `ferrocuda args` in `dir`, killing it if it is still running after `limit` (then the
/// test fails saying so): for tests of inputs that once made it hang. Not a timing test: the
/// limit is many times what the run takes.
fn ferrocuda_within(dir: &Path, args: &[&str], limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the ferrocuda binary could not be started");
    let start = std::time::Instant::now();
    while child.try_wait().expect("waiting for ferrocuda").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("waiting for ferrocuda");
            panic!(
                "`ferrocuda {}` was still running after {limit:?} (killed); stderr: {}",
                args.join(" "),
                stderr(&out)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().expect("waiting for ferrocuda")
}

/// Makes a FIFO at `path` with `mkfifo`.
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("running mkfifo");
    assert!(status.success(), "mkfifo {} failed", path.display());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Runs `ferrocuda args` while a thread reads the FIFO `fifo` to its end; returns the run
/// and the bytes read. The FIFO is ours (in a temporary folder), so a ferrocuda that
/// replaces it instead of writing into it damages nothing; the reader it then never
/// connects to is abandoned (it ends with the test process).
fn run_into_fifo(dir: &Path, fifo: &Path, args: &[&str]) -> (Output, Option<Vec<u8>>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let reading = fifo.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::read(reading));
    });
    let out = ferrocuda_within(dir, args, std::time::Duration::from_secs(120));
    let read = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .ok()
        .map(|r| r.expect("reading the FIFO"));
    (out, read)
}

/// Issue 35 (M): an output that is, or links to, a FIFO or a character device
/// (`ln -s /dev/null out.png`) is written through and never replaced by a regular file: the
/// PNG and the GIF arrive in the FIFO, which is still a FIFO afterwards, and no `.part`
/// file is left. Before, the output was written beside the link's target and renamed over
/// it, so as root `-o` a link to `/dev/null` replaced `/dev/null`. Tested with FIFOs made
/// here, never with the system's devices.
#[test]
fn fifos_and_links_to_them_are_written_through_never_replaced() {
    let dir = temp_dir();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    // Through a link, and named directly.
    std::os::unix::fs::symlink("pipe", dir.path().join("out.png")).unwrap();
    let direct = dir.path().join("direct.png");
    mkfifo(&direct);
    for (name, path) in [("out.png", &fifo), ("direct.png", &direct)] {
        let (out, read) = run_into_fifo(dir.path(), path, &[&SMALL[..8], &[name]].concat());
        assert!(out.status.success(), "-o {name}: {}", stderr(&out));
        assert!(is_fifo(path), "-o {name}: the FIFO was replaced");
        let png = read.unwrap_or_else(|| panic!("-o {name}: nothing was written into the FIFO"));
        let image = image::load_from_memory(&png).expect("the FIFO got a PNG");
        assert_eq!((image.width(), image.height()), (7, 5), "-o {name}");
    }
    std::os::unix::fs::symlink("pipe", dir.path().join("z.gif")).unwrap();
    let (out, read) = run_into_fifo(
        dir.path(),
        &fifo,
        &[&ZOOM[..], &["--gif", "z.gif"]].concat(),
    );
    assert!(out.status.success(), "--gif: {}", stderr(&out));
    assert!(is_fifo(&fifo), "--gif: the FIFO was replaced");
    let gif = read.expect("--gif: nothing was written into the FIFO");
    assert!(
        gif.starts_with(b"GIF89a") && gif.last() == Some(&0x3b),
        "not a whole GIF"
    );
    assert!(
        std::fs::symlink_metadata(dir.path().join("out.png"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        entries(dir.path()),
        ["direct.png", "out.png", "pipe", "z.gif"],
        "files left behind"
    );
}

/// Issue 35 (M): a socket (or, through the same check, a block device: not tested, that
/// would need a real disk) is refused before rendering, with exit status 2, an error naming
/// the path, what it is and what is allowed, and is left as it was.
#[test]
fn sockets_are_refused_as_outputs_and_kept() {
    let dir = temp_dir();
    let socket = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("binding a socket");
    std::os::unix::fs::symlink("sock", dir.path().join("s.png")).unwrap();
    let args = [&SLOW[..16], &["s.png"]].concat();
    let start = std::time::Instant::now();
    let out = ferrocuda(dir.path(), &args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for needle in ["s.png", "socket", "regular file", "/dev/null", "FIFO"] {
        assert!(err.contains(needle), "does not name `{needle}`: {err}");
    }
    // Refused up front: the slow render never started.
    assert!(start.elapsed().as_secs() < 5, "took {:?}", start.elapsed());
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket(),
        "the socket was replaced"
    );
    assert_eq!(entries(dir.path()), ["s.png", "sock"]);
}

/// The peak resident memory a `mandelbrot` run reports ("peak memory N MiB"), in bytes.
fn reported_peak_bytes(out: &Output) -> u64 {
    let text = stdout(out);
    let mib: u64 = text
        .split("peak memory ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak memory in {text:?}"));
    mib << 20
}

/// Issue 35 (M): a deep view's reference orbit and BLA table are held once, within the
/// stated 192 bytes per iteration of `--max-iter`. Before, each was built in a `Vec` and
/// copied into an `Arc`, so both copies were alive at the peak: about 380 bytes per
/// iteration (3.5 GiB for a 64×64 render at 10,000,000). Here 500,000 iterations of a
/// reference orbit that never escapes (c = -0.1 is inside the set): at most 96 MB for orbit
/// and table, against about 190 MB with the copies; the allowance over the bound (32 MiB) is
/// the program itself and a 64×64 image.
#[test]
fn deep_views_hold_one_orbit_and_one_bla_table() {
    let dir = temp_dir();
    let max_iter: u64 = 500_000;
    let out = ok(
        dir.path(),
        &[
            "mandelbrot",
            "--backend",
            "cpu",
            "--center-re",
            "-0.1",
            "--center-im",
            "0",
            "--scale",
            "1e-20",
            "--width",
            "64",
            "--height",
            "64",
            "--max-iter",
            &max_iter.to_string(),
            "-o",
            "deep.png",
        ],
    );
    assert!(
        stdout(&out).contains("reference orbit 500000 steps"),
        "{}",
        stdout(&out)
    );
    let peak = reported_peak_bytes(&out);
    let bound = max_iter * host::deep::DEEP_BYTES_PER_ITERATION + (32 << 20);
    assert!(
        peak <= bound,
        "peak memory {} MiB, more than the {} MiB of one orbit and one table (192 bytes per \
         iteration) and 32 MiB for the rest",
        peak >> 20,
        bound >> 20
    );
}

/// Issue 35 (M): a centre part with a tiny exponent (below about -6.46·10⁸, which
/// `astro-float`'s decimal conversion never finished) is read at once, by `--center-re/-im`,
/// `--center` and a KFR file's `Re`/`Im` alike. It is below what any view resolves (a part
/// smaller than 1e-30103 in size is taken as 0), so the image is the one with that part 0
/// (views with detail: around c = i and the tip c = -2). The limit is not a speed bound:
/// the runs take well under a second; before, they ran for more than 10 minutes.
#[test]
fn tiny_centre_exponents_are_read_at_once_as_zero() {
    let dir = temp_dir();
    let limit = std::time::Duration::from_secs(60);
    let view = |out: &'static str, centre: &[&'static str]| -> Vec<&'static str> {
        let mut args = vec![
            "mandelbrot",
            "--backend",
            "cpu",
            "--width",
            "9",
            "--height",
            "7",
            "--max-iter",
            "3000",
            "-o",
            out,
        ];
        args.extend_from_slice(centre);
        if !centre.contains(&"--kfr") {
            args.extend_from_slice(&["--scale", "1e-20"]);
        }
        args
    };
    for (name, re) in [("tiny.kfr", "-0.5e-999999999"), ("zero.kfr", "0")] {
        let kfr = format!("Re: {re}\r\nIm: 1\r\nZoom: 5.1e20\r\n");
        std::fs::write(dir.path().join(name), kfr).unwrap();
    }
    let pairs: [(&[&str], &[&str]); 3] = [
        (
            &["--center-re", "1e-999999999", "--center-im", "1"],
            &["--center-re", "0", "--center-im", "1"],
        ),
        (&["--center", "-2,-1e-1000000000"], &["--center", "-2,0"]),
        (&["--kfr", "tiny.kfr"], &["--kfr", "zero.kfr"]),
    ];
    for (tiny, zero) in pairs {
        ok(dir.path(), &view("zero.png", zero));
        let reference = read_rgb(&dir.path().join("zero.png"));
        let first = reference.get_pixel(0, 0).0;
        assert!(reference.pixels().any(|p| p.0 != first), "{zero:?}: flat");
        let args = view("tiny.png", tiny);
        let out = ferrocuda_within(dir.path(), &args, limit);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).contains("perturbation"), "{}", stdout(&out));
        let image = read_rgb(&dir.path().join("tiny.png"));
        assert!(image == reference, "{tiny:?}: not the image of {zero:?}");
    }
}

// ---- Issue 35: the low-severity CLI defects. ----

/// A `--start-scale` below f64's range is named as typed, not as its f64 rounding `0e0`.
#[test]
fn a_start_scale_below_f64_is_named_as_typed() {
    for scale in ["1e-400", "0.5e-310"] {
        assert_rejected(
            &[&ZOOM[..], &["--start-scale", scale, "--gif", "z.gif"]].concat(),
            &[
                &format!("--start-scale `{scale}` is not allowed"),
                "below f64's range",
            ],
        );
        let err = stderr(&ferrocuda(
            temp_dir().path(),
            &[&ZOOM[..], &["--start-scale", scale, "--gif", "z.gif"]].concat(),
        ));
        assert!(!err.contains("0e0"), "{err}");
    }
}

/// `--precision f32|f64` (or `--corners`) on a view too deep for f64 says what to change:
/// leave out --precision (or use --center/--scale), not the --center/--scale already typed.
#[test]
fn a_forced_precision_too_deep_for_f64_advises_leaving_it_out() {
    let deep = ["--center", "-1.75,0", "--scale", "1e-17"];
    for p in ["f32", "f64"] {
        let args = [&SMALL[..], &deep[..], &["--precision", p]].concat();
        assert_rejected(
            &args,
            &[
                "below f64's resolution",
                &format!("leave out --precision {p}"),
            ],
        );
        let err = stderr(&ferrocuda(temp_dir().path(), &args));
        assert!(!err.contains("--center/--scale"), "{err}");
    }
    assert_rejected(
        &[
            &ZOOM[..11],
            &[
                "--center",
                "-1.75,0",
                "--end-scale",
                "1e-17",
                "--precision",
                "f64",
            ],
            &["--gif", "z.gif"],
        ]
        .concat(),
        &["frame 2", "leave out --precision f64"],
    );
    assert_rejected(
        &[
            &SMALL[..],
            &[
                "--corners",
                "-1.75,0.00000000000000001",
                "-1.7499999999999996,0",
            ],
        ]
        .concat(),
        &[
            "below f64's resolution",
            "--center RE,IM --scale WIDTH instead of --corners",
        ],
    );
}

/// `bench --from-json` reads at most 64 MiB: a larger file and `/dev/zero` (endless) are
/// refused naming the file and the limit, instead of reading gigabytes.
#[test]
fn bench_from_json_reads_at_most_64_mib() {
    let limit = "at most 67108864 bytes (64 MiB)";
    let dir = temp_dir();
    // Sparse: no disk space taken.
    std::fs::File::create(dir.path().join("big.json"))
        .and_then(|f| f.set_len((64 << 20) + 1))
        .expect("creating a sparse file");
    let out = ferrocuda(dir.path(), &["bench", "--from-json", "big.json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`big.json` is not allowed") && err.contains(limit),
        "{err}"
    );
    assert!(err.contains("this one is 67108865 bytes"), "{err}");
    assert_eq!(entries(dir.path()), ["big.json"]);
    // Last: without the bound this one reads until memory runs out.
    assert_rejected(
        &["bench", "--from-json", "/dev/zero"],
        &["--from-json `/dev/zero` is not allowed", limit],
    );
}

/// A quick `mandelbrot-bench` on the CPU; tests append `--json FILE`.
const MANDELBROT_BENCH: [&str; 11] = [
    "mandelbrot-bench",
    "--backend",
    "cpu",
    "--size",
    "8",
    "--reps",
    "1",
    "--warmup",
    "0",
    "--max-iter",
    "50",
];

/// `bench.json`, `bench.svg` and `mandelbrot-bench --json` are replaced atomically (a
/// temporary file renamed into place): on a full disk the error names the file and the OS
/// error, and no file is left, not even an empty one; otherwise only the files are left.
#[test]
fn bench_outputs_are_written_atomically() {
    let from = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/bench/bench.json");
    let dir = temp_dir();
    ok(dir.path(), &["bench", "--from-json", from, "-o", "out"]);
    assert_eq!(
        entries(&dir.path().join("out")),
        ["bench.json", "bench.svg"]
    );
    ok(
        dir.path(),
        &[&MANDELBROT_BENCH[..], &["--json", "m.json"]].concat(),
    );
    assert_eq!(entries(dir.path()), ["m.json", "out"]);
    let cases: [(&[&str], &str); 2] = [
        (&["bench", "--from-json", from, "-o", "."], "bench.json"),
        (
            &[&MANDELBROT_BENCH[..], &["--json", "m.json"]].concat(),
            "m.json",
        ),
    ];
    fails_on_a_full_disk_leaving_nothing(&cases);
}

/// `mandelbrot-bench --json` is checked before the benchmark runs: a read-only file is
/// refused and kept, a missing folder named, and nothing is benchmarked (no table).
#[test]
fn mandelbrot_bench_json_is_checked_before_the_benchmark() {
    let dir = temp_dir();
    let read_only = dir.path().join("ro.json");
    std::fs::write(&read_only, "keep\n").unwrap();
    let mut permissions = std::fs::metadata(&read_only).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&read_only, permissions).unwrap();
    for (json, named) in [
        ("ro.json", "`ro.json` is read-only"),
        ("no/m.json", "folder `no` does not exist"),
    ] {
        let out = ferrocuda(
            dir.path(),
            &[&MANDELBROT_BENCH[..], &["--json", json]].concat(),
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{json}: {err}");
        assert!(err.contains(named), "{json}: {err}");
        assert_eq!(stdout(&out), "", "{json}: the benchmark ran");
    }
    assert_eq!(std::fs::read_to_string(&read_only).unwrap(), "keep\n");
    assert_eq!(entries(dir.path()), ["ro.json"]);
}

/// `zoom --backend gpu -o DIR` without a driver fails without leaving the empty frame
/// folder it created; a folder that existed is kept.
#[test]
fn a_zoom_without_a_device_leaves_no_empty_frame_folder() {
    if skip_with_driver("a_zoom_without_a_device_leaves_no_empty_frame_folder") {
        return;
    }
    let mut args = ZOOM.to_vec();
    args[2] = "gpu";
    assert_fails(
        &[&args[..], &["-o", "newfr"]].concat(),
        &["--backend gpu", "no CUDA driver found"],
    );
    let dir = temp_dir();
    std::fs::create_dir(dir.path().join("old")).unwrap();
    let out = ferrocuda(dir.path(), &[&args[..], &["-o", "old"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(entries(dir.path()), ["old"]);
}

// ---- Issue 35, low: band memory, progress within rows, zoom stops. ----

/// A deep view whose pixels escape within a few iterations (c = 0.5 lies outside the set):
/// cheap pixels, so the tests below measure memory, not arithmetic.
const DEEP_CHEAP: [&str; 9] = [
    "mandelbrot",
    "--backend",
    "cpu",
    "--center-re",
    "0.5",
    "--center-im",
    "0",
    "--scale",
    "1e-20",
];

/// Issue 35: the deep `--band-rows` bound counts every buffer of a band. It used to count
/// 3 bytes per pixel (two bands of colours), while a deep CPU band holds each sample's
/// escape time and `|z|²` (8 bytes) besides its colours, so the largest band allowed
/// (2^28 samples) peaked at 2.8 GiB against a stated 1.5 GiB. Now `--band-rows` is refused
/// above what fits in 1.5 GiB at the bytes per pixel the message states (17 on the CPU:
/// 8 per sample and the colours of three bands; 41 with 2×2 samples), naming the value and
/// the allowed range; and a render's measured peak grows by no more than that per pixel of
/// its band (one band of 2048×512 against bands of 4 rows).
#[test]
fn deep_band_rows_are_bounded_by_what_a_band_holds() {
    let dir = temp_dir();
    let wide = [&DEEP_CHEAP[..], &["--width", "32768", "--height", "8192"]].concat();
    for (supersample, rows, allowed, per_px) in [
        ("1", "8192", "--band-rows 1 to 2891", "17 bytes per pixel"),
        ("2", "2048", "--band-rows 1 to 1198", "41 bytes per pixel"),
    ] {
        // Before, both were accepted and rendered 2^28 samples: a limit, not a timing.
        let args = [
            &wide[..],
            &[
                "--supersample",
                supersample,
                "--band-rows",
                rows,
                "-o",
                "d.png",
            ],
        ]
        .concat();
        let out = ferrocuda_within(dir.path(), &args, std::time::Duration::from_secs(20));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        for needle in [&format!("--band-rows {rows}"), allowed, per_px, "1.5 GiB"] {
            assert!(err.contains(needle), "does not name `{needle}`: {err}");
        }
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }
    // As stated above for one sample per pixel.
    let bytes_per_px: u64 = 17;
    let peak = |rows: &str| {
        let args = [
            &DEEP_CHEAP[..],
            &["--width", "2048", "--height", "512", "--band-rows", rows],
            &["-o", "d.png"],
        ]
        .concat();
        reported_peak_bytes(&ok(dir.path(), &args))
    };
    let (one_band, small_bands) = (peak("512"), peak("4"));
    let band_px: u64 = 2048 * 512;
    let grown = one_band.saturating_sub(small_bands);
    assert!(
        grown <= bytes_per_px * band_px,
        "one band of {band_px} pixels peaked {} MiB above bands of 4 rows, more than the \
         {bytes_per_px} bytes per pixel stated ({} MiB)",
        grown >> 20,
        (bytes_per_px * band_px) >> 20
    );
}

/// Issue 35: progress moves within rows. It counted finished rows, so a few deep rows of
/// slow pixels showed "0/2 rows" for minutes; now a CPU render counts finished pixels (of a
/// deep image, its samples), still one `progress:` line every 10 s when stderr is not a
/// terminal. Here two rows of 65536 pixels near the Feigenbaum point at 10^6 iterations
/// (about a minute per row in a debug build): the first line, at 10 s, is not at 0.
#[test]
fn progress_moves_within_the_rows_of_a_deep_render() {
    let dir = temp_dir();
    let args = [
        "mandelbrot",
        "--backend",
        "cpu",
        "--width",
        "65536",
        "--height",
        "2",
        "--center-re",
        "-1.40115518909205060052382383",
        "--center-im",
        "0",
        "--scale",
        "1e-20",
        "--max-iter",
        "1000000",
        "-o",
        "deep.png",
    ];
    // The reference orbit may report its own steps first.
    let (line, code) =
        first_progress_line_then_sigterm(dir.path(), &args, |l| !l.contains("reference orbit"));
    assert_eq!(code, Some(143), "{line}");
    assert!(
        line.contains("/131072 pixels"),
        "not counted in pixels: {line:?}"
    );
    assert!(
        !line.starts_with("progress: 0/"),
        "no progress within the rows: {line:?}"
    );
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

/// Starts `ferrocuda args` in `dir` with stderr piped, waits for its first `progress:` line
/// that `wanted` accepts (empty if it ends first), stops it with SIGTERM and returns that
/// line and its exit code.
fn first_progress_line_then_sigterm(
    dir: &Path,
    args: &[&str],
    wanted: impl Fn(&str) -> bool,
) -> (String, Option<i32>) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting ferrocuda");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let line = rx
        .iter()
        .find(|l| l.starts_with("progress:") && wanted(l))
        .unwrap_or_default();
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().expect("waiting for ferrocuda");
    (line, status.code())
}

/// Starts `args` in `dir`, waits until `ready(dir)` (polled every 5 ms; the test fails if it
/// is not ready within 5 minutes or the program ends first), sends `signal` at once, and
/// returns (exit code, stderr, time from the signal to the exit).
fn interrupt_when(
    dir: &Path,
    args: &[&str],
    signal: &str,
    ready: impl Fn(&Path) -> bool,
) -> (Option<i32>, String, std::time::Duration) {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting ferrocuda");
    let start = std::time::Instant::now();
    while !ready(dir) {
        if let Some(status) = child.try_wait().expect("waiting for ferrocuda") {
            let out = child.wait_with_output().expect("reading its output");
            panic!("ended ({status}) before it was ready: {}", stderr(&out));
        }
        if start.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            panic!("not ready after 5 minutes");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let sent = std::time::Instant::now();
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("running kill");
    assert!(status.success(), "kill -{signal} failed");
    let out = child.wait_with_output().expect("waiting for ferrocuda");
    (out.status.code(), stderr(&out), sent.elapsed())
}

/// Issue 35: a signal while a zoom encodes a large frame stops it at once, as a render
/// does. The GIF frame was encoded on the main thread, which noticed the signal only after
/// it (1.0–1.7 s for a large frame in a release build; seconds in a debug one). Here the
/// signal is sent as soon as the 2000×2000 frame's PNG is in place, when its GIF encoding
/// starts; the zoom ends within 0.5 s, saying what was written, and leaves no GIF.
#[test]
fn a_signal_during_a_zoom_frames_gif_encoding_stops_it_at_once() {
    let dir = temp_dir();
    let args = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "2000",
        "--height",
        "2000",
        "--frames",
        "1",
        "--max-iter",
        "20",
        "-o",
        "fr",
        "--gif",
        "z.gif",
    ];
    let (status, err, latency) = interrupt_when(dir.path(), &args, "INT", |d| {
        d.join("fr/frame_00000.png").exists()
    });
    assert_eq!(status, Some(130), "{err}");
    assert!(
        err.contains("1 frames written to `fr`; no GIF written"),
        "{err}"
    );
    assert!(
        latency.as_secs_f64() < 0.5,
        "stopped {latency:?} after the signal"
    );
    assert_eq!(entries(dir.path()), ["fr"]);
    assert_eq!(entries(&dir.path().join("fr")), ["frame_00000.png"]);
}

/// Issue 35: a zoom stopped while computing its deepest reference orbit (after some f64
/// frames were written) says which frames are on disk, not "no output file written". Frame
/// 0 (scale 1e-10) is f64; frame 1 (1e-20) needs the orbit of the deepest frame, inside the
/// set at 10^7 iterations: minutes of arbitrary-precision steps.
#[test]
fn a_zoom_stopped_in_its_deepest_orbit_names_the_frames_written() {
    let dir = temp_dir();
    let args = [
        "zoom",
        "--backend",
        "cpu",
        "--width",
        "64",
        "--height",
        "48",
        "--frames",
        "3",
        "--center-re",
        "-0.1",
        "--center-im",
        "0.1",
        "--start-scale",
        "1e-10",
        "--end-scale",
        "1e-30",
        "--max-iter",
        "1000",
        "--max-iter-growth",
        "1000000",
        "-o",
        "fr",
    ];
    let (status, err, latency) = interrupt_when(dir.path(), &args, "TERM", |d| {
        d.join("fr/frame_00000.png").exists()
    });
    assert_eq!(status, Some(143), "{err}");
    assert!(err.contains("1 frames written to `fr`"), "{err}");
    assert!(!err.contains("no output file written"), "{err}");
    assert!(
        latency.as_secs_f64() < 1.5,
        "stopped {latency:?} after the signal"
    );
    assert_eq!(entries(&dir.path().join("fr")), ["frame_00000.png"]);
}
