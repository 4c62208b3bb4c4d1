#!/usr/bin/env bash
# Installs what keel-hal's tests need on a fresh Debian 12 (bookworm) machine:
# Mesa lavapipe 25 from bookworm-backports, the Vulkan loader, the Khronos
# validation layer, vulkaninfo, and Xvfb (keel-wgpu's windowed example runs
# on a virtual X display). Idempotent; safe to run twice.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi

if vulkaninfo --summary 2>/dev/null | grep -q 'llvmpipe' \
   && [ -f /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json ] \
   && command -v Xvfb >/dev/null; then
    echo "setup: lavapipe, the validation layer and Xvfb are already installed"
    exit 0
fi

# The backports suite on the same mirror as the machine's Debian sources.
mirror=$( { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } \
         | grep -vE "^[[:space:]]*#" | grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
list=/etc/apt/sources.list.d/keel-hal-backports.list
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb $mirror bookworm-backports main" | $SUDO tee "$list" >/dev/null
fi

# Third-party sources on the machine may be unreachable; the Debian ones are what we need.
$SUDO apt-get update || echo "setup: apt-get update reported errors (continuing with what was fetched)"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -t bookworm-backports mesa-vulkan-drivers
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y libvulkan1 vulkan-validationlayers vulkan-tools \
    xvfb libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6

vulkaninfo --summary | grep -E 'deviceName|driverName|driverInfo|apiVersion' || true
