#!/usr/bin/env bash
# Runs every test binary and every example of the last
# `cargo test --features fault-injection` build under one validation layer,
# with synchronization validation on (keel-hal's default with
# InstanceFlags::VALIDATION), and counts what the layer said.
#
#   scripts/validation-run.sh host     Debian 12's layer (1.3.239), here
#   scripts/validation-run.sh trixie   Debian 13's layer (1.4.309), in the
#                                      chroot of scripts/trixie.sh
#
# Counting goes through keel-hal's debug messenger. Every test asserts that
# its instance's messenger counted zero errors (the conformance harness and
# each Vulkan test check `validation_counter()`), so a test binary passes
# only with zero errors and hazards; the test harness captures the output of
# passing tests, and a failing test's log shows the messenger's lines. The
# examples check their own count and print theirs. The binaries run with
# RUST_LOG so that the messenger's error lines ("[vulkan] VALIDATION ...")
# reach the output, where they are counted here too. Where
# the layer is forced from outside (VK_INSTANCE_LAYERS, no messenger of
# ours), it prints "Validation Error: [ ... ]" to stdout: those lines are
# counted too. Nothing reads the layer's log file
# (`khronos_validation.log_filename`): it keeps an fd open per instance and
# was seen holding fewer errors than the messenger counted. The summary line
# gives errors and synchronization hazards.
#
# The trixie leg runs tests with one thread: Debian 13's loader (1.4.309)
# crashes in vkSetDebugUtilsObjectNameEXT / vkGetDeviceProcAddr while other
# threads create devices (a loader bug, fixed upstream in 1.4.345).
set -uo pipefail
cd "$(dirname "$0")/.."

leg=${1:?usage: $0 host|trixie}
log_dir=target/validation-$leg
rm -rf "$log_dir"
mkdir -p "$log_dir"

case "$leg" in
    host) wrap=(); threads=() ;;
    trixie) wrap=(scripts/trixie.sh run); threads=(--test-threads=1) ;;
    *) echo "usage: $0 host|trixie" >&2; exit 2 ;;
esac

# The binaries of the README's test command (built already: no-op if so).
mapfile -t tests < <(cargo test --features fault-injection --no-run --message-format=json 2>/dev/null \
    | jq -r 'select(.reason == "compiler-artifact" and .executable != null
                     and (.target.kind | index("test") or index("lib"))) | .executable')
# keel-wgpu's test binaries, but `examples` (it runs the examples, which
# the list below runs under the layer already, and stock wgpu beside them).
mapfile -t -O "${#tests[@]}" tests < <(cargo test -p keel-wgpu --no-run --message-format=json 2>/dev/null \
    | jq -r 'select(.reason == "compiler-artifact" and .executable != null
                     and (.target.kind | index("test") or index("lib"))
                     and .target.name != "examples") | .executable')
if [ ${#tests[@]} -eq 0 ]; then
    echo "validation-run: no test binaries (build failed?)" >&2
    exit 1
fi
cargo build --examples --quiet || exit 1
cargo build -p keel-wgpu --examples --quiet || exit 1

# keel-wgpu's windowed example presents to an X display: a virtual one
# when none is set (Xvfb, from scripts/setup.sh), stopped at exit. The
# chroot sees its socket under the bound /tmp.
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null; then
    # Xvfb picks a free display and writes its number once it accepts
    # connections (-displayfd).
    displayfile=$(mktemp)
    Xvfb -displayfd 3 -screen 0 320x240x24 -nolisten tcp 3>"$displayfile" >/dev/null 2>&1 &
    xvfb_pid=$!
    trap 'kill $xvfb_pid 2>/dev/null; rm -f "$displayfile"' EXIT
    for _ in $(seq 100); do [ -s "$displayfile" ] && break; sleep 0.1; done
    [ -s "$displayfile" ] && export DISPLAY=":$(head -n1 "$displayfile")"
fi

# name|command line (relative to the repository root). Examples that need a
# capability the adapter lacks say so and exit 0.
examples=(
    "info|target/debug/examples/info"
    "first_dispatch|target/debug/examples/first_dispatch"
    "triangle|target/debug/examples/triangle"
    "ray_traced_triangle-query|target/debug/examples/ray_traced_triangle --query --output $log_dir/rt-query.png"
    "ray_traced_triangle-pipeline|target/debug/examples/ray_traced_triangle --pipeline --output $log_dir/rt-pipeline.png"
    "external_memory|target/debug/examples/external_memory"
    "external_memory-noop|target/debug/examples/external_memory --backend noop"
    "cuda_interop|target/debug/examples/cuda_interop"
    # keel-wgpu: wgpu programs on keel-hal (each checks its own count too).
    "wgpu-compute_readback|target/debug/examples/compute_readback"
    "wgpu-render_to_texture|target/debug/examples/render_to_texture"
    "wgpu-textured_mesh|target/debug/examples/textured_mesh"
    "wgpu-mesh_shader|target/debug/examples/mesh_shader"
    "wgpu-mipmaps|target/debug/examples/mipmaps"
    "wgpu-msaa|target/debug/examples/msaa"
    "wgpu-shadow|target/debug/examples/shadow"
    "wgpu-particles|target/debug/examples/particles"
    "wgpu-timestamps|target/debug/examples/timestamps"
    "wgpu-pass_commands|target/debug/examples/pass_commands"
    "wgpu-window_triangle|target/debug/examples/window_triangle"
)

# A messenger error line, or the layer's own stdout line when it is forced.
error_lines=' ERROR [^]]*\] \[vulkan\] |^Validation Error: '
failed=0
run() { # name, command…
    local name=$1; shift
    local out=$log_dir/$name.log
    RUST_LOG=${RUST_LOG:-keel_hal::vulkan::instance=error} "${wrap[@]}" "$@" >"$out" 2>&1
    local status=$?
    local errors hazards
    errors=$(grep -cE "$error_lines" "$out")
    hazards=$(grep -c 'SYNC-HAZARD' "$out")
    printf '%-34s exit %-3s validation errors %-4s hazards %s\n' "$name" "$status" "$errors" "$hazards"
    if [ "$status" -ne 0 ] || [ "$errors" -ne 0 ]; then
        failed=1
        grep -E 'FAILED|panicked|\[vulkan\]|^error' "$out" | head -20
    fi
}

for t in "${tests[@]}"; do
    [ -x "$t" ] || { echo "validation-run: $t is missing" >&2; failed=1; continue; }
    name=$(basename "$t" | sed 's/-[0-9a-f]*$//')
    run "test:$name" "$t" "${threads[@]}"
done
for e in "${examples[@]}"; do
    bin=${e#*|}; bin=${bin%% *}
    [ -x "$bin" ] || { echo "validation-run: $bin not built" >&2; failed=1; continue; }
    # shellcheck disable=SC2086 # the command line splits on purpose
    run "example:${e%%|*}" ${e#*|}
done

version=host
[ "$leg" = trixie ] && version=$(scripts/trixie.sh layer-version)
[ "$leg" = host ] && version=$(dpkg-query -W -f='${Version}' vulkan-validationlayers 2>/dev/null)
total_errors=$(cat "$log_dir"/*.log | grep -cE "$error_lines")
total_hazards=$(cat "$log_dir"/*.log | grep -c 'SYNC-HAZARD')
echo "validation-run $leg (layer $version): ${#tests[@]} test binaries (each asserts zero errors)," \
     "${#examples[@]} example runs; $total_errors validation errors, $total_hazards synchronization hazards seen"
exit $failed
