#!/usr/bin/env bash
# Source lines in NVIDIA's profilers, made by `cargo xtask profile` and `cargo xtask bundle`
# (bundle/profile.sh). Needs a CUDA GPU and Nsight Compute (`ncu`) or compute-sanitizer on
# PATH, and binaries whose kernels carry line tables (FERROCUDA_LINE_TABLES=1 builds).
#   profile.sh ncu-mandelbrot FERROCUDA OUT [SOURCE_DIR]
#   profile.sh ncu-gemm       FERROCUDA OUT [SOURCE_DIR]
#       Nsight Compute, full set with the sources imported, on one launch of the optimized
#       Mandelbrot escape kernel (seahorse valley, f32) or the sm_90a BF16 wgmma GEMM
#       (4096³); writes OUT/<name>.ncu-rep and prints its source page (CSV), which lists
#       the .rs lines with their warp stall samples. SOURCE_DIR: where the .rs files are
#       when not at the paths the build recorded (a bundle's src/).
#   profile.sh sanitizer TEST_BINARY OUT
#       compute-sanitizer memcheck on the planted out-of-bounds write of
#       tests/tests/sanitizer.rs; passes when the report names the .rs file and line.
set -euo pipefail
what=$1
exe=$2
out=$3
src=${4:-}
mkdir -p "$out"
folders=()
[ -n "$src" ] && folders=(--source-folders "$src")

# source_page REPORT FILE: prints the source page of REPORT as CSV (CUDA source view where
# this ncu has it) into REPORT.source.csv, then the rows on the project's .rs files with
# their warp stall samples, most first; fails unless a line of FILE (a path suffix, the
# profiled kernel's own file) has samples.
source_page() {
    local report=$1 want=$2 csv=${1%.ncu-rep}.source.csv
    ncu --import "$report" --page source --csv --print-source cuda,sass >"$csv" 2>&1 ||
        ncu --import "$report" --page source --csv >"$csv" 2>&1
    echo "($(wc -l <"$csv") lines in $csv)"
    python3 - "$csv" "$want" <<'PY'
import csv, sys

# The CSV holds one table per source file: a "File Path" row, a header row starting with
# "Line No", then one row per line.
path, header, rows = None, None, []
for r in csv.reader(open(sys.argv[1], newline="")):
    if len(r) >= 2 and r[0] == "File Path":
        path, header = r[1], None
    elif r and r[0] == "Line No":
        header = r
    elif path and header and r and r[0].isdigit() and path.endswith(".rs"):
        col = "Warp Stall Sampling (All Samples)"
        if col not in header:
            sys.exit(f"no '{col}' column in the source page; columns: {header}")
        cell = r[header.index(col)].replace(",", "")
        # Lines without samples read "-" or are empty.
        samples = int(float(cell)) if cell.replace(".", "", 1).isdigit() else 0
        rows.append((samples, path, int(r[0]), r[1].strip()[:70]))
ours = [x for x in rows if "/src/" in x[1]
        and not any(s in x[1] for s in ("/rustlib/", "/rustc/", "/.cargo/registry/"))]
ours.sort(key=lambda x: -x[0])
print(f"--- {len(rows)} .rs rows, {len(ours)} on the project's files; most samples first:")
for samples, path, line, text in ours[:15]:
    short = path[path.rfind("/", 0, path.rfind("/src/")) + 1:]
    print(f"{samples:>10} samples  {short}:{line}  {text}")
hot = [x for x in ours if x[1].endswith(sys.argv[2]) and x[0] > 0]
if not hot:
    sys.exit(f"no line of {sys.argv[2]} has warp stall samples on the source page")
print(f"--- {len(hot)} lines of {sys.argv[2]} have samples")
PY
}

case $what in
ncu-mandelbrot)
    # The 13th mandelbrot_f32 launch of mandelbrot-bench: seahorse valley (2 warm-up + 10
    # timed runs of the full view come first).
    ncu --set full --import-source yes "${folders[@]}" -f \
        -o "$out/ncu-source-mandelbrot" -k regex:^mandelbrot_f32$ --launch-skip 12 -c 1 \
        "$exe" mandelbrot-bench --size 8192 --max-iter 1000 --precision f32 --reps 10 --warmup 2
    source_page "$out/ncu-source-mandelbrot.ncu-rep" kernels/src/mandelbrot.rs
    ;;
ncu-gemm)
    ncu --set full --import-source yes "${folders[@]}" -f \
        -o "$out/ncu-source-gemm" -k regex:^gemm_wgmma_bf16$ -c 1 \
        "$exe" bench --gemm-only --precision-gemm bf16 --precision-gemm-shape 4096,4096,4096 \
        --no-cublas --warmup 1 --reps 1 -o "$out/ncu-source-gemm-bench"
    source_page "$out/ncu-source-gemm.ncu-rep" kernels/src/gemm_tc/wgmma.rs
    ;;
sanitizer)
    log=$out/sanitizer-planted-oob.log
    # memcheck exits non-zero on the planted error; the report is what counts here.
    FERROCUDA_PLANTED_OOB=1 compute-sanitizer --tool memcheck --show-backtrace device \
        "$exe" --include-ignored --exact planted_out_of_bounds_write_for_compute_sanitizer \
        --nocapture --test-threads=1 >"$log" 2>&1 || true
    cat "$log"
    grep -q "Invalid __global__ write" "$log" || { echo "memcheck reported no invalid write" >&2; exit 1; }
    grep -qE 'runtime\.rs:[0-9]+' "$log" || { echo "the report names no runtime.rs line" >&2; exit 1; }
    echo "--- the report names: $(grep -oE '[^ ]*runtime\.rs:[0-9]+' "$log" | sort -u | tr '\n' ' ')"
    ;;
*)
    echo "unknown step '$what' (ncu-mandelbrot, ncu-gemm, sanitizer)" >&2
    exit 2
    ;;
esac
