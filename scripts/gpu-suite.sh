#!/usr/bin/env bash
# On the GPU machine, with .gl/ from scripts/gpu-bundle.sh: every carried test
# binary and example under Debian 12's validation layer (1.3.239) and Debian
# 13's (1.4.309), counting errors and synchronization hazards through the
# debug messenger; then the ray-tracing tests N times (default 10) without a
# layer at the default thread count, each under a time limit (a hang is a
# failure: every thread's state, and once the stacks, go to the logs); then
# the CUDA interop example; then the benchmark (BENCH_ROUNDS rounds, default
# 9); then wgpu-hal's and keel-hal's feature lists side by side. Logs go to /tmp/gpu-suite, and into one $OUT/gpu-suite-logs.tgz where
# $OUT is set.
#
# keel-wgpu's examples (`wgpu`: each on keel-wgpu and stock wgpu, compared,
# under each layer) and its bench row (with `bench`) run too.
#
#   scripts/gpu-suite.sh [layers] [wgpu] [rt N] [cuda] [bench] [wgpu-bench] [parity]   (no argument: all, N = 10)
#   (wgpu-bench: only keel-wgpu's benchmarks, for a `gpu-bundle.sh --bench-only` bundle)
set -uo pipefail
cd "$(dirname "$0")/.."
out=/tmp/gpu-suite
mkdir -p "$out"
if [ -f .gl/bin.tar.xz ] && [ ! -d .gl/bin ]; then tar -C .gl -xJf .gl/bin.tar.xz; fi
parts=" $* "
[ $# -eq 0 ] && parts=" layers wgpu rt 10 cuda bench parity "
rt_runs=$(echo "$parts" | sed -n 's/.* rt \([0-9]*\) .*/\1/p')
failed=0
error_lines=' ERROR [^]]*\] \[vulkan\] |^Validation Error: '

count() { # log → "errors hazards"
    echo "$(grep -cE "$error_lines" "$1") $(grep -c 'SYNC-HAZARD' "$1")"
}

examples=(
    "info|info"
    "first_dispatch|first_dispatch"
    "triangle|triangle"
    "ray_traced_triangle|ray_traced_triangle --output $out/ray_traced_triangle.png"
    "external_memory|external_memory"
)

# GPU_LAYERS picks the layers (default both); GPU_TIMEOUT limits each binary.
read -r -a all_layers <<< "${GPU_LAYERS:-1.3.239 1.4.309}"
limit=${GPU_TIMEOUT:-300}
case "$parts" in *" layers "*) layers=("${all_layers[@]}") ;; *) layers=() ;; esac
for layer in "${layers[@]}"; do
    total_e=0; total_h=0
    # readme checks this checkout's files, not the GPU: it is not carried over.
    for t in $(grep -vx readme .gl/tests.txt); do
        log=$out/$layer-$t.log
        KEEL_LAYER=$layer RUST_LOG=keel_hal::vulkan::instance=error timeout "$limit" \
            scripts/gpu-run.sh ".gl/bin/$t" >"$log" 2>&1
        status=$?
        read -r e h < <(count "$log")
        total_e=$((total_e + e)); total_h=$((total_h + h))
        summary=$(grep -E '^test result' "$log" | tail -n1)
        printf 'layer %s  %-22s exit %-3s errors %-3s hazards %-3s %s\n' "$layer" "$t" "$status" "$e" "$h" "$summary"
        [ "$status" -eq 0 ] && [ "$e" -eq 0 ] || { failed=1; grep -E 'FAILED|panicked|\[vulkan\]' "$log" | head -8; }
    done
    for x in "${examples[@]}"; do
        name=${x%%|*}; cmd=${x#*|}
        [ -x ".gl/bin/${cmd%% *}" ] || continue
        log=$out/$layer-example-$name.log
        # shellcheck disable=SC2086
        KEEL_LAYER=$layer RUST_LOG=keel_hal::vulkan::instance=error timeout "$limit" \
            scripts/gpu-run.sh .gl/bin/$cmd >"$log" 2>&1
        status=$?
        read -r e h < <(count "$log")
        total_e=$((total_e + e)); total_h=$((total_h + h))
        printf 'layer %s  example %-14s exit %-3s errors %-3s hazards %s\n' "$layer" "$name" "$status" "$e" "$h"
        [ "$status" -eq 0 ] && [ "$e" -eq 0 ] || { failed=1; tail -n 8 "$log"; }
    done
    echo "== layer $layer: $total_e validation errors, $total_h synchronization hazards"
done

# keel-wgpu: every example on keel-wgpu and on stock wgpu, compared, under
# each layer (the examples check their own validation count and leaks).
case "$parts" in *" wgpu "*) wgpu_layers=("${all_layers[@]}") ;; *) wgpu_layers=() ;; esac
for layer in "${wgpu_layers[@]}"; do
    [ -x .gl/bin/keel_wgpu_examples ] || break
    log=$out/$layer-keel-wgpu-examples.log
    KEEL_LAYER=$layer RUST_LOG=warn timeout "$limit" \
        scripts/gpu-run.sh .gl/bin/keel_wgpu_examples --test-threads=1 --nocapture >"$log" 2>&1
    status=$?
    read -r e h < <(count "$log")
    printf 'layer %s  keel-wgpu examples     exit %-3s errors %-3s hazards %-3s %s\n' "$layer" "$status" "$e" "$h" \
        "$(grep -E '^test result' "$log" | tail -n1)"
    grep -E '^test |skipped' "$log"
    [ "$status" -eq 0 ] && [ "$e" -eq 0 ] || { failed=1; grep -E 'FAILED|panicked|\[vulkan\]' "$log" | head -8; }
    # The ported wgpu GPU tests and the correctness tests (each fails on
    # a layer message of keel-wgpu's side itself).
    for t in wgpu_gpu correctness; do
        [ -x ".gl/bin/keel_wgpu_$t" ] || continue
        log=$out/$layer-keel-wgpu-$t.log
        KEEL_LAYER=$layer RUST_LOG=warn timeout "$limit" \
            scripts/gpu-run.sh ".gl/bin/keel_wgpu_$t" --test-threads=1 >"$log" 2>&1
        status=$?
        read -r e h < <(count "$log")
        printf 'layer %s  keel-wgpu %-12s exit %-3s errors %-3s hazards %-3s %s\n' "$layer" "$t" "$status" "$e" "$h" \
            "$(grep -E '^test result' "$log" | tail -n1)"
        [ "$status" -eq 0 ] || { failed=1; grep -E 'FAILED|panicked|\[vulkan\]' "$log" | head -12; }
    done
done

# Ray tracing without a layer, default threads, unlocked (not alone even on
# NVIDIA's driver: the hal absorbs its deadlocks): a hang is a failure.
# A hang's report goes straight to $OUT (or $out): the thread states of the
# hung process, and with RT_STACKS=1 every stack once (cuda-gdb; a cuda-gdb
# killed while attached has left the process unkillable, so it is opt-in).
report_dir=${OUT:-$out}
stacks_taken=0
hang_report() { # pid name
    for t in /proc/"$1"/task/*; do
        echo "task $(basename "$t") $(cat "$t"/comm) wchan=$(cat "$t"/wchan)"
    done
    # The binary's first mapping: its frames resolve against the unstripped
    # build at (address - this start).
    echo "mapping $(grep -m1 -E '/\.gl/bin/' /proc/"$1"/maps)"
    # Without ptrace: return addresses found on each thread's stack.
    [ "${RT_STACKS:-0}" = scan ] && python3 scripts/stack-scan.py "$1"
    if [ "${RT_STACKS:-0}" = 1 ] && [ "$stacks_taken" -eq 0 ] && command -v cuda-gdb >/dev/null; then
        stacks_taken=1
        # Whole stacks, then an explicit detach: a cuda-gdb killed while
        # attached has left the process unkillable.
        timeout 300 cuda-gdb -q -p "$1" -batch -ex 'set pagination off' \
            -ex 'thread apply all bt 60' -ex detach -ex quit 2>&1 | grep -E '^#|^Thread'
    fi
} >> "$report_dir/$2.hang"
hangs=0
for i in $(seq 1 "${rt_runs:-0}"); do
    for t in conformance vulkan_ray_tracing; do
        filter=(); [ "$t" = conformance ] && filter=(ray_tracing)
        log=$out/rt-$i-$t.log
        KEEL_LAYER=none scripts/gpu-run.sh env VK_LAYER_PATH=/nonexistent KEEL_ALLOW_NO_VALIDATION=1 \
            ".gl/bin/$t" "${filter[@]}" >"$log" 2>&1 &
        pid=$!; waited=0
        while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "${RT_LIMIT:-60}" ]; do sleep 1; waited=$((waited + 1)); done
        if kill -0 "$pid" 2>/dev/null; then
            hangs=$((hangs + 1))
            echo "ray tracing run $i ($t): hung; report in $report_dir/rt-$i-$t.hang"
            cp "$log" "$report_dir/" 2>/dev/null
            for p in $(pgrep -f "^\.gl/bin/$t"); do hang_report "$p" "rt-$i-$t"; done
            pkill -KILL -f "^\.gl/bin/$t"
            # A process the driver keeps from dying must not stop the suite.
            for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
            failed=1
            continue
        fi
        wait "$pid"; status=$?
        [ "$status" -eq 0 ] || { failed=1; echo "ray tracing run $i ($t): exit $status"; tail -n 5 "$log"; }
    done
done
if [ -n "$rt_runs" ]; then
    echo "== ray tracing without a layer, default threads: $rt_runs runs of conformance ray_tracing* and vulkan_ray_tracing, $hangs hang(s)"
    grep -h -E '^test result' "$out"/rt-1-*.log
fi

if [[ "$parts" == *" cuda "* ]] && [ -x .gl/bin/cuda_interop ]; then
    PYTHONUNBUFFERED=1 RUST_LOG=warn timeout 300 scripts/gpu-run.sh .gl/bin/cuda_interop \
        --script scripts/cuda_interop.py --python python3 >"$out/cuda_interop.log" 2>&1
    status=$?
    echo "== cuda_interop: exit $status"
    cat "$out/cuda_interop.log"
    [ "$status" -eq 0 ] || failed=1
fi
if [[ "$parts" == *" bench "* ]] && [ -x .gl/bin/bench ]; then
    # The process's only Vulkan user: no layer (docs/benchmarks.md).
    KEEL_LAYER=none timeout 540 scripts/gpu-run.sh env VK_LAYER_PATH=/nonexistent BENCH_ADAPTER="${BENCH_ADAPTER:-H200}" \
        .gl/bin/bench --rounds "${BENCH_ROUNDS:-9}" --json "$out/bench.json" >"$out/bench.md" 2>&1
    status=$?
    echo "== bench: exit $status"
    cat "$out/bench.md"
    [ "$status" -eq 0 ] || failed=1
fi
if [[ "$parts" == *" bench "* || "$parts" == *" wgpu-bench "* ]]; then
    # keel-wgpu against stock wgpu: frame, threads, memory (no layer).
    for b in wgpu_frame wgpu_threads wgpu_memory; do
        [ -x ".gl/bin/$b" ] || continue
        KEEL_LAYER=none timeout 300 scripts/gpu-run.sh env VK_LAYER_PATH=/nonexistent \
            ".gl/bin/$b" --rounds "${BENCH_ROUNDS:-9}" >"$out/$b.md" 2>&1
        echo "== $b (keel-wgpu vs stock wgpu): exit $?"
        cat "$out/$b.md"
    done
fi
if [[ "$parts" == *" parity "* ]] && [ -x .gl/bin/feature_parity ]; then
    KEEL_LAYER=none timeout 120 scripts/gpu-run.sh env VK_LAYER_PATH=/nonexistent \
        .gl/bin/feature_parity >"$out/feature-parity.md" 2>&1
    echo "== feature parity: exit $?"
    cat "$out/feature-parity.md"
fi
[ -n "${OUT:-}" ] && tar -C "$out" -czf "$OUT/gpu-suite-logs.tgz" .
exit $failed
