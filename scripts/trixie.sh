#!/usr/bin/env bash
# The newest validation layer: a Debian 13 ("trixie") chroot with lavapipe,
# the Vulkan loader and the Khronos validation layer 1.4.309, which needs
# glibc 2.38 and so cannot run on Debian 12 directly. Binaries built on this
# machine run inside it unchanged (trixie's glibc is newer).
#
#   scripts/trixie.sh setup            make the chroot (idempotent)
#   scripts/trixie.sh run CMD [ARG…]   run CMD inside, in this repository
#                                      (mounted at the same path), with /proc,
#                                      /dev and /tmp bound for the call and
#                                      unbound afterwards, whatever happens
#   scripts/trixie.sh layer-version    prints the layer's package version
#
# The chroot lives in $KEEL_TRIXIE (default /var/cache/keel-hal/trixie) and is
# made with debootstrap from the Debian mirror this machine's apt already uses.
set -euo pipefail

root=${KEEL_TRIXIE:-/var/cache/keel-hal/trixie}
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi

mirror() {
    local m
    m=$( { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } \
         | grep -vE '^[[:space:]]*#' | grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -n1 || true)
    m=${m:-http://deb.debian.org/debian}
    echo "${m%/}"
}

# Packages the chroot needs: Vulkan and the layer; the X client libraries
# winit opens for keel-wgpu's windowed example (on the X server of the host,
# whose socket is under the bound /tmp).
packages=libvulkan1,mesa-vulkan-drivers,vulkan-validationlayers,libx11-6,libx11-xcb1,libxcursor1,libxrandr2,libxi6,libxkbcommon-x11-0

setup() {
    if [ -f "$root/.keel-ready" ]; then
        # A chroot made before a package joined the list gets it now.
        if ! $SUDO chroot "$root" dpkg-query -W ${packages//,/ } >/dev/null 2>&1; then
            echo "trixie: adding packages to $root"
            $SUDO chroot "$root" apt-get update >/dev/null || true
            $SUDO chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y ${packages//,/ } >/dev/null
        fi
        echo "trixie: chroot ready at $root"
        return 0
    fi
    if ! command -v debootstrap >/dev/null; then
        $SUDO apt-get update >/dev/null || true
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap
    fi
    local m
    m=$(mirror)
    echo "trixie: debootstrap from $m into $root"
    $SUDO rm -rf "$root"
    $SUDO mkdir -p "$root"
    $SUDO debootstrap --variant=minbase \
        --include="$packages" \
        trixie "$root" "$m"
    $SUDO touch "$root/.keel-ready"
    echo "trixie: validation layer $(layer_version)"
}

layer_version() {
    $SUDO chroot "$root" dpkg-query -W -f='${Version}\n' vulkan-validationlayers
}

mounted=()
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        $SUDO umount -l "${mounted[$i]}" 2>/dev/null || true
    done
    mounted=()
}

bind() {
    local src=$1 dst=$root$1
    $SUDO mkdir -p "$dst"
    $SUDO mount --bind "$src" "$dst"
    mounted+=("$dst")
}

run() {
    [ -f "$root/.keel-ready" ] || setup
    trap unmount_all EXIT INT TERM
    $SUDO mount -t proc proc "$root/proc"
    mounted+=("$root/proc")
    bind /dev
    bind /tmp
    bind "$repo"
    # Home for caches (Mesa's shader cache) inside the chroot.
    $SUDO mkdir -p "$root/root"
    local status=0
    $SUDO chroot "$root" /usr/bin/env -i \
        PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
        RUST_BACKTRACE="${RUST_BACKTRACE:-1}" RUST_LOG="${RUST_LOG:-}" \
        KEEL_BACKENDS="${KEEL_BACKENDS:-}" KEEL_LAYER="trixie" DISPLAY="${DISPLAY:-}" \
        MESA_SHADER_CACHE_DIR="${MESA_SHADER_CACHE_DIR:-}" \
        /bin/sh -c 'cd "$0" && exec "$@"' "$repo" "$@" || status=$?
    unmount_all
    trap - EXIT INT TERM
    return $status
}

case "${1:-}" in
    setup) setup ;;
    run) shift; run "$@" ;;
    layer-version) layer_version ;;
    *) echo "usage: $0 setup | run CMD [ARG…] | layer-version" >&2; exit 2 ;;
esac
