#!/usr/bin/env bash
# ferrocuda GPU run script, made by `cargo xtask bundle`. Runs on a machine with an NVIDIA
# driver and no Rust toolchain: every GPU test, the demonstrations, compute-sanitizer, and
# prints a summary. Logs go to $OUT (default ./out).
#   QUICK=1 ./run.sh     tests only (no 8192² renders, no sanitizer)
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
# The device tool returns at most 8 files: logs are gathered into $OUT/logs.txt at the end.
LOGS=$(mktemp -d)
mkdir -p "$LOGS"
passed=0
failed=0
summary=()

# step NAME COMMAND...: runs COMMAND, logs to $LOGS/NAME.log, prints its tail, records the result.
step() {
    local name=$1
    shift
    echo "=== $name: $*"
    local start=$SECONDS
    if "$@" >"$LOGS/$name.log" 2>&1; then
        passed=$((passed + 1))
        summary+=("PASS  $name ($((SECONDS - start)) s)")
    else
        local rc=$?
        failed=$((failed + 1))
        summary+=("FAIL  $name (exit $rc, $((SECONDS - start)) s)")
    fi
    tail -n 12 "$LOGS/$name.log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee "$OUT/gpu.txt"

step info ./ferrocuda info
for t in tests/*; do
    step "test-$(basename "$t")" "$t" --include-ignored --test-threads=1
done

if [ "${QUICK:-0}" != 1 ]; then
    step mandelbrot-8192-f32 ./ferrocuda mandelbrot --backend gpu --width 8192 --height 8192 \
        --max-iter 1000 --precision f32 --verify -o /tmp/m8192_f32.png
    step mandelbrot-8192-f64 ./ferrocuda mandelbrot --backend gpu --width 8192 --height 8192 \
        --max-iter 1000 --precision f64 --verify -o /tmp/m8192_f64.png
    step mandelbrot-preview ./ferrocuda mandelbrot --backend gpu --width 1200 --height 900 \
        -o "$OUT/mandelbrot.png"
    step vector-add-2e28 ./ferrocuda vector-add --len 268435456
    # Memory errors in kernels (out-of-bounds, misaligned, uninitialised device reads) for
    # every integration-test binary; API errors are off because some tests provoke them on
    # purpose (a rejected launch must report its error).
    for t in tests/tests-*; do
        [ -x "$t" ] && step "sanitizer-$(basename "$t")" compute-sanitizer --tool memcheck \
            --report-api-errors no --error-exitcode 1 "$t" --include-ignored --test-threads=1
    done
    if command -v ptxas >/dev/null; then
        step ptxas-sm90 ptxas -arch=sm_90 -v kernels.ptx -o /tmp/kernels.cubin
    fi
fi

echo
echo "===== summary ($(head -2 "$OUT/gpu.txt" | tail -1)) ====="
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
echo "$passed passed, $failed failed" | tee -a "$OUT/summary.txt"
for f in "$LOGS"/*.log; do echo "##### $(basename "$f")"; cat "$f"; done >"$OUT/logs.txt"
[ "$failed" = 0 ]
