#!/usr/bin/env bash
# Runs the fault-injection sweep binary N times in a row with Mesa's shader
# cache warm, then N times with MESA_SHADER_CACHE_DIR at a fresh empty
# directory each run (cold): the sweep's leak checks must not flake on the
# driver's own cache files. Stops at the first failure and prints its log.
set -uo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
bin=$(cargo test --features fault-injection --no-run --message-format=json --test fault_injection 2>/dev/null \
      | jq -r 'select(.reason == "compiler-artifact" and .executable != null) | .executable' | tail -n1)
[ -x "$bin" ] || { echo "sweep-repeat: no fault_injection binary" >&2; exit 1; }
log=$(mktemp)
for cache in warm cold; do
    for i in $(seq 1 "$n"); do
        if [ "$cache" = cold ]; then
            dir=$(mktemp -d)
            MESA_SHADER_CACHE_DIR=$dir "$bin" >"$log" 2>&1; status=$?
            rm -rf "$dir"
        else
            "$bin" >"$log" 2>&1; status=$?
        fi
        if [ "$status" -ne 0 ]; then
            cat "$log"
            echo "sweep-repeat: run $i of $n ($cache shader cache) failed with status $status"
            exit 1
        fi
    done
    echo "sweep-repeat: $n of $n runs passed ($cache shader cache)"
done
rm -f "$log"
