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

# source_page REPORT: prints the source page of REPORT as CSV (CUDA source view where this
# ncu has it) into REPORT.source.csv and stdout; fails when it names no .rs line.
source_page() {
    local report=$1 csv=${1%.ncu-rep}.source.csv
    ncu --import "$report" --page source --csv --print-source cuda,sass >"$csv" 2>&1 ||
        ncu --import "$report" --page source --csv >"$csv" 2>&1
    head -n 60 "$csv"
    echo "... ($(wc -l <"$csv") lines in $csv)"
    echo "--- lines naming .rs files:"
    grep -E '\.rs' "$csv" | head -n 40 || true
    grep -qE '\.rs' "$csv" || { echo "the source page names no .rs line" >&2; return 1; }
}

case $what in
ncu-mandelbrot)
    # The 13th mandelbrot_f32 launch of mandelbrot-bench: seahorse valley (2 warm-up + 10
    # timed runs of the full view come first).
    ncu --set full --import-source yes "${folders[@]}" -f \
        -o "$out/ncu-source-mandelbrot" -k regex:^mandelbrot_f32$ --launch-skip 12 -c 1 \
        "$exe" mandelbrot-bench --size 8192 --max-iter 1000 --precision f32 --reps 10 --warmup 2
    source_page "$out/ncu-source-mandelbrot.ncu-rep"
    ;;
ncu-gemm)
    ncu --set full --import-source yes "${folders[@]}" -f \
        -o "$out/ncu-source-gemm" -k regex:^gemm_wgmma_bf16$ -c 1 \
        "$exe" bench --gemm-only --precision-gemm bf16 --precision-gemm-shape 4096,4096,4096 \
        --no-cublas --warmup 1 --reps 1 -o "$out/ncu-source-gemm-bench"
    source_page "$out/ncu-source-gemm.ncu-rep"
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
