#!/usr/bin/env bash
# Prepares .gl/ (ignored by git) for running keel-hal on a GPU machine that has
# a driver but no Vulkan loader or validation layer: the loader and GL/EGL
# packages, the validation layer, and release builds of the test binaries,
# examples and the benchmark. Run it here, then carry .gl to the GPU machine and
# run scripts/gpu-run.sh there (scripts/gpu-suite.sh runs the lot).
# Arguments: the examples to carry too; `--bench-only` first carries only the
# keel-wgpu-vs-stock benchmarks (wgpu_frame, wgpu_threads, wgpu_memory).
set -euo pipefail
bench_only=
if [ "${1:-}" = --bench-only ]; then bench_only=1; shift; fi
cd "$(dirname "$0")/.."
exclude=$(git rev-parse --git-path info/exclude)
grep -qx '/.gl/' "$exclude" 2>/dev/null || echo /.gl/ >> "$exclude"
mkdir -p .gl/layers .gl/bin /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
if ! ls .gl/libvulkan1_*.deb >/dev/null 2>&1; then
    apt-get $o update >/dev/null
    (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
    (cd .gl/layers && apt-get $o download vulkan-validationlayers)
fi
# Debian 13's validation layer (1.4.309) from the chroot of scripts/trixie.sh;
# the GPU machine's glibc and libstdc++ are new enough for it.
trixie=${KEEL_TRIXIE:-/var/cache/keel-hal/trixie}
if [ ! -f .gl/layer-1.4.309.tar.xz ] && [ -f "$trixie/.keel-ready" ]; then
    tar -C "$trixie" -cJf .gl/layer-1.4.309.tar.xz \
        usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so \
        usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
fi
rm -rf .gl/bin .gl/bin.tar.xz .gl/tests.txt
mkdir -p .gl/bin
wgpu_benches=(wgpu_frame wgpu_threads wgpu_memory)
if [ -n "$bench_only" ]; then
    cargo build --release -p bench $(printf -- '--bin %s ' "${wgpu_benches[@]}")
    for b in "${wgpu_benches[@]}"; do cp "target/release/$b" .gl/bin/; done
    strip .gl/bin/* 2>/dev/null || true
    tar -C .gl -cf - bin | xz -T2 -9 > .gl/bin.tar.xz
    rm -rf .gl/bin
    du -sh .gl
    exit 0
fi
cargo test --release --features fault-injection --no-run 2>&1 | tee /tmp/gpu-bundle.log | grep -E '^error' || true
for t in $(sed -n 's/.*Executable tests\/\([a-z_]*\)\.rs (\(.*\))/\1=\2/p' /tmp/gpu-bundle.log); do
    cp "${t#*=}" ".gl/bin/${t%%=*}"
    echo "${t%%=*}" >> .gl/tests.txt
done
for ex in "$@"; do
    cargo build --release --example "$ex"
    cp "target/release/examples/$ex" .gl/bin/
done
# The benchmark (docs/benchmarks.md) and the feature-parity list
# (docs/design.md), run by scripts/gpu-suite.sh bench and parity; keel-wgpu's
# bench rows (wgpu_frame, wgpu_threads, wgpu_memory) too.
cargo build --release -p bench --bin bench $(printf -- '--bin %s ' "${wgpu_benches[@]}") --example feature_parity
cp target/release/bench target/release/examples/feature_parity .gl/bin/
for b in "${wgpu_benches[@]}"; do cp "target/release/$b" .gl/bin/; done
# keel-wgpu: its examples test (run by scripts/gpu-suite.sh wgpu) finds the
# example programs in examples/ next to it.
cargo test --release -p keel-wgpu --no-run 2>&1 | tee /tmp/gpu-bundle-wgpu.log | grep -E '^error' || true
wgpu_test=$(sed -n 's/.*Executable tests\/examples\.rs (\(.*\))/\1/p' /tmp/gpu-bundle-wgpu.log)
cp "$wgpu_test" .gl/bin/keel_wgpu_examples
# keel-wgpu's ported wgpu GPU tests and its correctness tests, run by
# scripts/gpu-suite.sh wgpu on keel-wgpu and stock wgpu under each layer.
for t in wgpu_gpu correctness; do
    bin=$(sed -n "s/.*Executable tests\/$t\.rs (\(.*\))/\1/p" /tmp/gpu-bundle-wgpu.log)
    cp "$bin" ".gl/bin/keel_wgpu_$t"
done
mkdir -p .gl/bin/examples
for f in keel-wgpu/examples/*.rs; do
    cp "target/release/examples/$(basename "$f" .rs)" .gl/bin/examples/
done
strip .gl/bin/* .gl/bin/examples/* 2>/dev/null || true
# The carried tree is limited to 64 MiB: the binaries travel compressed (a
# dictionary large enough to share the code the binaries have in common)
# and scripts/gpu-run.sh unpacks them.
tar -C .gl -cf - bin | xz -T2 -9 > .gl/bin.tar.xz
rm -rf .gl/bin
du -sh .gl
