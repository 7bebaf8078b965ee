#!/usr/bin/env bash
# ferrocuda GPU run script, made by `cargo xtask bundle`. Runs on a machine with an NVIDIA
# driver and no Rust toolchain: every GPU test, the demonstrations, compute-sanitizer, and
# prints a summary. Logs go to $OUT (default ./out).
#   QUICK=1 ./run.sh     tests only (no 8192² renders, no sanitizer)
#   ONLY=REGEX ./run.sh  only the steps whose names match REGEX (bash =~); SKIP=REGEX skips
#                        those that match. DEADLINE=SECONDS starts no step after that many
#                        seconds and lists the rest as NOT RUN, so a run under a time limit
#                        still ends with its summary; a later call can run them with ONLY.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
# Exported: examples write their charts there (05-pipeline's timeline).
export OUT
mkdir -p "$OUT"
# The device tool returns at most 8 files: every step's log is appended to $OUT/logs.txt.
LOGS=$(mktemp -d)
mkdir -p "$LOGS"
: >"$OUT/logs.txt"
: >"$OUT/progress.txt"
passed=0
failed=0
summary=()

# step NAME COMMAND...: runs COMMAND, logs to $LOGS/NAME.log, prints its tail, records the result.
step() {
    local name=$1
    shift
    if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then return 0; fi
    if [ -n "${SKIP:-}" ] && [[ $name =~ $SKIP ]]; then return 0; fi
    if [ "${DEADLINE:-0}" -gt 0 ] && [ "$SECONDS" -ge "$DEADLINE" ]; then
        summary+=("NOT RUN  $name (past DEADLINE=$DEADLINE s)")
        echo "${summary[-1]}" >>"$OUT/progress.txt"
        return 0
    fi
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
    # Written as it goes, so a run stopped at a time limit still leaves its logs.
    { echo "##### $name"; cat "$LOGS/$name.log"; } >>"$OUT/logs.txt"
    echo "${summary[-1]}" >>"$OUT/progress.txt"
}

# profiled ARGS...: `ncu ARGS...`, failing when ncu profiled no kernel: it exits 0 then, so a
# kernel name that matches nothing (as `^sgemm$` did once sm_90 ran `sgemm_cp_async`) would
# otherwise pass as a step.
profiled() {
    local out rc
    out=$(ncu "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    if [ "$rc" -ne 0 ]; then return "$rc"; fi
    if grep -q "No kernels were profiled" <<<"$out"; then
        echo "ncu profiled no kernel (the -k pattern matched none)" >&2
        return 1
    fi
}

# cuBLAS for `ferrocuda bench`: cudarc loads libcublas.so by name (and the CUDA 12 sonames);
# the Python wheels ship libcublas.so.<major> without the unversioned link, so add one.
# On the H200 image it is the `nvidia.cublas` package; on the H100 image (CUDA 13 wheels)
# `import nvidia.cublas` fails and the libraries sit in `nvidia/cu13/lib`.
CUBLAS_LIB=$(python3 -c "import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], 'lib'))" 2>/dev/null ||
    python3 -c "import nvidia, os, glob; print(next(d for p in nvidia.__path__ for d in sorted(glob.glob(os.path.join(p, 'cu*', 'lib'))) if glob.glob(os.path.join(d, 'libcublas.so*'))))" 2>/dev/null ||
    true)
echo "cuBLAS: ${CUBLAS_LIB:-not found: the cuBLAS rows of the bench and the gemm example will fail}"
if [ -n "$CUBLAS_LIB" ] && [ -d "$CUBLAS_LIB" ]; then
    CUBLAS_LINKS=$(mktemp -d)
    for f in "$CUBLAS_LIB"/libcublas.so.* "$CUBLAS_LIB"/libcublasLt.so.*; do
        [ -e "$f" ] || continue
        base=$(basename "$f")
        ln -sf "$f" "$CUBLAS_LINKS/${base%%.so.*}.so"
    done
    export LD_LIBRARY_PATH="$CUBLAS_LINKS:$CUBLAS_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# NCCL for cust::nccl (06-nccl, the NCCL test): cudarc loads libnccl.so by name; the
# Python wheel (nvidia-nccl-cu*, torch's dependency) ships libnccl.so.2 only. NVLink
# multicast stays off in every process that uses NCCL on these machines.
export NCCL_NVLS_ENABLE=0
NCCL_SO=$(python3 -c "import nvidia.nccl, os, glob; print(sorted(glob.glob(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so*')))[0])" 2>/dev/null ||
    find /usr /opt -name 'libnccl.so*' 2>/dev/null | head -1)
if [ -n "$NCCL_SO" ] && [ -e "$NCCL_SO" ]; then
    NCCL_LINKS=$(mktemp -d)
    ln -sf "$NCCL_SO" "$NCCL_LINKS/libnccl.so"
    export LD_LIBRARY_PATH="$NCCL_LINKS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NCCL: $NCCL_SO"
else
    echo "NCCL: not found (06-nccl and the NCCL test will fail with NoNccl)"
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 | tee "$OUT/gpu.txt"

step info ./ferrocuda info
# Example programs (each checks its GPU result against the CPU and exits non-zero on a
# difference): host examples, the out-of-workspace projects, a `cargo xtask new` project.
for e in examples/*; do
    case $(basename "$e") in
    # No cargo here: reload the PTX that `cargo xtask bundle` rebuilt after each edit.
    07-hot-reload) step example-07-hot-reload "$e" --ptx-dir hot-reload ;;
    # Deep zoom: a minibrot near 1e-100 and one near 1e-400 (the default), 1920x1080,
    # max_iter 100000; pictures into $OUT.
    09-deep-zoom)
        step example-09-deep-zoom-1e-100 "$e" 100
        step example-09-deep-zoom-1e-400 "$e"
        ;;
    *) step "example-$(basename "$e")" "$e" ;;
    esac
done
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
    step mandelbrot-bench ./ferrocuda mandelbrot-bench --size 8192 --max-iter 1000 \
        --json "$OUT/mandelbrot-bench.json"
    step mandelbrot-32768-tiled ./ferrocuda mandelbrot --backend gpu --width 32768 --height 32768 \
        --max-iter 1000 --smooth -o /tmp/m32768.png
    # Multi-GPU: the same 16384² render on one GPU and on every GPU (bands of 256 rows taken
    # by whichever GPU is free); both must give the same PNG bytes. Prints both times.
    for g in 1 all; do
        step "mandelbrot-16384-gpus-$g" ./ferrocuda mandelbrot --backend gpu --gpus "$g" \
            --width 16384 --height 16384 --center -0.7435,0.1314 --scale 0.02 --max-iter 50000 \
            --band-rows 256 -o "/tmp/m16384_gpus_$g.png"
    done
    step mandelbrot-16384-gpus-identical cmp /tmp/m16384_gpus_1.png /tmp/m16384_gpus_all.png
    echo "--- 16384x16384 seahorse valley, max_iter 50000: --gpus 1 vs --gpus all"
    grep -h "GPU\|end to end" "$LOGS"/mandelbrot-16384-gpus-1.log "$LOGS"/mandelbrot-16384-gpus-all.log
    # The same on a GPU-bound view (issue 35's two-GPU figure): a perturbation render whose
    # kernels take about 2.9 s on one H200 while its PNG takes 0.25 s to encode, so the
    # end-to-end time follows the GPUs. Each configuration twice, alternating.
    for r in 1 2; do
        for g in 1 all; do
            step "mandelbrot-deep-8192-gpus-$g-$r" ./ferrocuda mandelbrot --backend gpu \
                --gpus "$g" --width 8192 --height 8192 \
                --center -0.743643887037151,0.131825904205330 --scale 1e-10 \
                --max-iter 1000000 --band-rows 64 -o "/tmp/d8192_gpus_$g.png"
        done
    done
    step mandelbrot-deep-8192-gpus-identical cmp /tmp/d8192_gpus_1.png /tmp/d8192_gpus_all.png
    echo "--- 8192x8192 deep view at 1e-10, max_iter 1000000: --gpus 1 vs --gpus all"
    grep -h "kernel\|end to end" "$LOGS"/mandelbrot-deep-8192-gpus-*.log
    # Issue 35, renders at the GPU's pace. Deep bands are coloured on the GPU: compare each
    # deep render's "render wall" with its "kernel" (target: at most 1.5x). The f64 16384²
    # seahorse at each --png-compression level: compare "end to end" with the larger of
    # "kernel" and "PNG encode" (target at the default level, fast: at most 1.25x).
    for size in 1920x1080 16384x16384; do
        iters=5000
        [ "$size" = 16384x16384 ] && iters=20000
        step "mandelbrot-deep-1e-300-$size" ./ferrocuda mandelbrot --backend gpu \
            --width "${size%x*}" --height "${size#*x}" --center 0,1 --scale 1e-300 \
            --max-iter "$iters" --smooth --palette electric -o "/tmp/deep_1e-300_$size.png"
    done
    echo "--- deep 1e-300, 1920x1080 at 5000 and 16384x16384 at 20000 iterations"
    grep -h "kernel\|end to end" "$LOGS"/mandelbrot-deep-1e-300-*.log
    for level in fast default best; do
        step "mandelbrot-16384-f64-png-$level" ./ferrocuda mandelbrot --backend gpu --gpus 1 \
            --width 16384 --height 16384 --center -0.7435,0.1314 --scale 0.02 --max-iter 50000 \
            --precision f64 --png-compression "$level" -o "/tmp/m16384_png_$level.png"
    done
    echo "--- f64 16384x16384 seahorse valley, max_iter 50000, by --png-compression"
    for level in fast default best; do
        echo "$level: $(stat -c %s "/tmp/m16384_png_$level.png") bytes"
        grep -h "kernel\|end to end" "$LOGS/mandelbrot-16384-f64-png-$level.log"
    done
    # Past f64: perturbation with BLA on the GPU, checked pixel for pixel against the CPU.
    step mandelbrot-deep-1e-300-verify ./ferrocuda mandelbrot --backend gpu --width 1920 \
        --height 1080 --center 0,1 --scale 1e-300 --max-iter 5000 --smooth --palette electric \
        --verify -o "$OUT/deep-1e-300.png"
    step mandelbrot-smooth-ss4 ./ferrocuda mandelbrot --backend gpu --width 1600 --height 1200 \
        --center -0.7435,0.1314 --scale 0.02 --max-iter 2000 --smooth --supersample 4 --verify \
        -o "$OUT/mandelbrot-smooth.png"
    step zoom-gif ./ferrocuda zoom --backend gpu --width 480 --height 360 --frames 60 --fps 15 \
        --end-scale 1e-7 --smooth --palette electric --gif "$OUT/zoom.gif"
    step vector-add-2e28 ./ferrocuda vector-add --len 268435456
    step bench ./ferrocuda bench -o "$OUT/bench"
    # GEMM by precision (BF16, FP16, TF32, FP32, FP8 E4M3; 2048³, 4096³, 8192³ and two
    # transformer shapes) against cuBLAS's cublasGemmEx and cuBLASLt (FP8: cuBLASLt's
    # scaled matmul only) in the same run, with the sampled f64 check.
    step bench-gemm ./ferrocuda bench --gemm-only --precision-gemm all -o "$OUT/bench-gemm"
    # Attention forward (bf16; 4x32x4096x128 non-causal and causal, 16x16x2048x64, and
    # 4x32x4096x128 with 8 key/value heads): the peers (torch SDPA cuDNN and flash backends,
    # FlashAttention-3 if it imports) timed by python first, then ours beside them.
    # Without the peers' file (the script died) our rows still run, with a note.
    step attention-peers python3 bench/python/attention_peers.py --out "$OUT/attention-peers.json"
    peers=()
    [ -s "$OUT/attention-peers.json" ] && peers=(--attention-peers "$OUT/attention-peers.json")
    step bench-attention ./ferrocuda bench --attention ${peers[@]+"${peers[@]}"} \
        -o "$OUT/bench-attention"
    # compute-sanitizer over every integration-test binary with GPU tests (the sanitizer
    # refuses programs that never call CUDA), each tool in turn: memcheck (out-of-bounds and
    # misaligned accesses, leaks of device memory), racecheck (shared-memory data races),
    # synccheck (barriers under divergence, invalid warp-synchronous masks), initcheck
    # (reads of device memory nothing wrote). API errors are off because some tests provoke
    # them on purpose (a rejected launch must report its error); the device-assert test traps
    # on purpose, which the sanitizer would count as an error.
    # The NCCL test is left out too: NCCL's own kernels and transports are not ours to
    # sanitize (it runs, unsanitized, in the test step above).
    # racecheck leaves out tests-render: its kernels (mandelbrot_*, colorize) use no shared
    # memory (ptxas: 0 bytes shared), the only memory racecheck inspects, and under it that
    # binary ran past 170 s on an H200.
    for tool in memcheck racecheck synccheck initcheck; do
        for t in tests/tests-*; do
            [ "$tool" = racecheck ] && [ "$(basename "$t")" = tests-render ] && continue
            grep -q "needs a CUDA GPU" "$t" && step "sanitizer-$tool-$(basename "$t")" \
                compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 1 \
                "$t" --include-ignored --test-threads=1 \
                --skip device_assert_failure_surfaces_as_a_host_error_with_its_message \
                --skip nccl_all_reduce_sums_one_buffer_per_gpu
        done
    done
    # Where a speed target is missed, what limits it: Nsight Compute's speed-of-light and
    # occupancy for one exclusive scan launch and for the optimized Mandelbrot kernel on
    # seahorse valley (the 13th mandelbrot_f32 launch of mandelbrot-bench: 2 warm-up + 10
    # timed runs of the full view come first). Clocks are left alone (--clock-control none).
    if command -v ncu >/dev/null; then
        step ncu-scan profiled --clock-control none -k regex:scan_exclusive_u32 -c 1 \
            --section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis \
            ./ferrocuda bench --len 268435456 --gemm 256,256,256 --no-cuda-c --no-cublas --no-cub \
            --warmup 1 --reps 1 -o /tmp/ncu-bench
        step ncu-mandelbrot profiled --clock-control none -k regex:^mandelbrot_f32$ --launch-skip 12 \
            -c 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
            ./ferrocuda mandelbrot-bench --size 8192 --max-iter 1000 --precision f32 --reps 10 \
            --warmup 2
        # Vector peers (targets against memcpy and cuBLAS): what limits the STREAM copy and
        # add and the SGEMM kernel.
        for k in copy add; do
            step "ncu-$k" profiled --clock-control none -k "regex:^${k}_f32$" -c 1 \
                --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
                ./ferrocuda bench --len 268435456 --gemm 256,256,256 --no-cuda-c --no-cublas \
                --no-cub --warmup 1 --reps 1 -o "/tmp/ncu-$k"
        done
        # Attention (bf16, D = 128): the first launch of each kernel (wgmma, then mma.sync)
        # at the first --attention shape (4x32x4096x128, non-causal).
        step ncu-attention profiled --clock-control none -k regex:attention_fwd_.*bf16_d128 -c 2 \
            --section SpeedOfLight --section Occupancy --section WarpStateStats \
            --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
            ./ferrocuda bench --attention --warmup 1 --reps 1 -o /tmp/ncu-attention
        step ncu-sgemm profiled --clock-control none -k "regex:^sgemm(_cp_async)?$" -c 1 \
            --section SpeedOfLight --section Occupancy --section WarpStateStats \
            --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
            ./ferrocuda bench --len 1048576 --gemm 4096,4096,4096 --no-cuda-c --no-cublas \
            --no-cub --warmup 1 --reps 1 -o /tmp/ncu-sgemm
    fi
    # Source lines for the profilers (issue 34): lines/ holds ferrocuda and the planted-bug
    # test built with line tables (FERROCUDA_LINE_TABLES=1). First the cost: the Mandelbrot
    # escape pass and the BF16 wgmma GEMM with and without line tables, alternating, twice.
    for r in 1 2; do
        for build in plain lines; do
            exe=./ferrocuda
            [ "$build" = lines ] && exe=lines/ferrocuda
            step "lines-timing-mandelbrot-$build-$r" "$exe" mandelbrot-bench --size 8192 \
                --max-iter 1000 --json "$OUT/lines-timing-mandelbrot-$build-$r.json"
            step "lines-timing-gemm-$build-$r" "$exe" bench --gemm-only --precision-gemm bf16 \
                --precision-gemm-shape 8192,8192,8192 -o "/tmp/lines-timing-gemm-$build-$r"
        done
    done
    # Then what they show: Nsight Compute's source page (.rs lines with stall samples) for
    # the Mandelbrot kernel and the wgmma GEMM, and compute-sanitizer naming the .rs line of
    # a planted out-of-bounds write (profile.sh, as `cargo xtask profile` runs it).
    if command -v ncu >/dev/null; then
        step ncu-source-mandelbrot ./profile.sh ncu-mandelbrot lines/ferrocuda "$OUT/profile" "$PWD/src"
        step ncu-source-gemm ./profile.sh ncu-gemm lines/ferrocuda "$OUT/profile" "$PWD/src"
    fi
    step sanitizer-names-the-line ./profile.sh sanitizer lines/tests-sanitizer "$OUT/profile"
    if command -v ptxas >/dev/null; then
        step ptxas-sm90 ptxas -arch=sm_90 -v kernels.ptx -o /tmp/kernels.cubin
    fi
fi

echo
echo "===== summary ($(head -2 "$OUT/gpu.txt" | tail -1)) ====="
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
echo "$passed passed, $failed failed" | tee -a "$OUT/summary.txt"
[ "$failed" = 0 ]
