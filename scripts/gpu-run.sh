#!/usr/bin/env bash
# On the GPU machine: installs the carried Vulkan loader (.gl/*.deb), unpacks
# the validation layer beside it (not into /), points the loader at the
# NVIDIA ICD when the system has none registered, then runs "$@".
set -uo pipefail
if [ -f .gl/bin.tar.xz ] && [ ! -d .gl/bin ]; then tar -C .gl -xJf .gl/bin.tar.xz; fi
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# KEEL_LAYER=1.4.309 picks Debian 13's validation layer (carried as
# .gl/layer-1.4.309.tar.xz); the default is Debian 12's 1.3.239.
mkdir -p /tmp/vl
if [ "${KEEL_LAYER:-}" = 1.4.309 ]; then
    tar -C /tmp/vl -xJf .gl/layer-1.4.309.tar.xz
else
    for f in .gl/layers/*.deb; do dpkg -x "$f" /tmp/vl; done
fi
export VK_LAYER_PATH=/tmp/vl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=/tmp/vl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1 \
   && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
"$@"
