#!/usr/bin/env bash
# What the VM twin (`refault twin --vm`) needs, fetched once:
#   - host tools from the system's own apt sources: qemu-system-x86, busybox-static, cpio,
#     e2fsprogs (installed with apt-get only when missing);
#   - Debian cloud kernels, downloaded with `apt-get download` and unpacked with
#     `dpkg-deb -x` into the cache directory: nothing goes into /boot, and the extra suites
#     (trixie for 6.12, sid for 7.2) use their own source list and state directory under the
#     cache, leaving the system's apt configuration alone.
#
# Usage: scripts/vm-setup.sh [--cache DIR] [--tools-only] [KERNEL...]
#   KERNEL: debian-6.1 (default), debian-6.12, debian-7.2
#   DIR:    $REFAULT_VM_CACHE, else ~/.cache/refault-vm
# Prints, per kernel, the directory holding its `vmlinuz` and `modules/` (one line each).
set -euo pipefail

cache="${REFAULT_VM_CACHE:-${HOME:-/root}/.cache/refault-vm}"
tools_only=0
kernels=()
while [ $# -gt 0 ]; do
    case "$1" in
        --cache) cache="$2"; shift 2 ;;
        --tools-only) tools_only=1; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        debian-6.1|debian-6.12|debian-7.2) kernels+=("$1"); shift ;;
        *) echo "vm-setup: unknown argument \`$1\` (kernels: debian-6.1, debian-6.12, debian-7.2)" >&2; exit 2 ;;
    esac
done
[ ${#kernels[@]} -gt 0 ] || kernels=(debian-6.1)
mkdir -p "$cache"

say() { echo "vm-setup: $*" >&2; }

# --- host tools -------------------------------------------------------------------------
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
[ -x /bin/busybox ] || missing+=(busybox-static)
command -v cpio >/dev/null || missing+=(cpio)
command -v mkfs.ext4 >/dev/null && command -v debugfs >/dev/null || missing+=(e2fsprogs)
command -v xz >/dev/null || missing+=(xz-utils)
command -v zstd >/dev/null || missing+=(zstd)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        say "missing ${missing[*]} and not root to install them"; exit 3
    fi
    say "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
[ $tools_only = 1 ] && exit 0

# --- kernels ----------------------------------------------------------------------------
# An apt configuration of our own for a suite: its source list and lists/cache directories
# live under the cache, so `apt-get update` there leaves the system's state alone.
apt_for() {
    local suite="$1" d="$cache/apt/$1"
    mkdir -p "$d/lists/partial" "$d/archives/partial"
    if [ ! -f "$d/sources.list" ]; then
        echo "deb http://deb.debian.org/debian $suite main" > "$d/sources.list"
    fi
    APT_OPTS=(-o "Dir::Etc::sourcelist=$d/sources.list" -o "Dir::Etc::sourceparts=-"
              -o "Dir::State::Lists=$d/lists" -o "Dir::Cache::archives=$d/archives"
              -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache=" -o "APT::Get::List-Cleanup=0")
    if [ -z "$(ls "$d/lists" 2>/dev/null | grep -v partial)" ]; then
        say "apt-get update for $suite (own lists under $d)"
        apt-get "${APT_OPTS[@]}" update -qq >&2
    fi
}

for k in "${kernels[@]}"; do
    out="$cache/kernels/$k"
    if [ -f "$out/vmlinuz" ] && [ -d "$out/modules" ]; then
        echo "$out"; continue
    fi
    case "$k" in
        debian-6.1) suite=bookworm; pat='^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' ;;
        debian-6.12) suite=trixie; pat='^linux-image-6\.12\.[0-9.]+\+deb13-cloud-amd64-unsigned$' ;;
        debian-7.2) suite=sid; pat='^linux-image-7\.2\.[0-9.]+\+deb14-cloud-amd64(-unsigned)?$' ;;
    esac
    apt_for "$suite"
    pkg=$(apt-cache "${APT_OPTS[@]}" pkgnames linux-image- | grep -E "$pat" | sort -V | tail -1 || true)
    if [ -z "$pkg" ]; then
        say "no package matching $pat in $suite"; exit 4
    fi
    say "$k: downloading $pkg"
    tmp=$(mktemp -d "$cache/dl.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get "${APT_OPTS[@]}" download -qq "$pkg" 2>&1 | grep -v unsandboxed >&2 || true)
    # Newer kernels (sid) split the image into linux-binary-* (vmlinuz) and
    # linux-modules-* packages that the image package depends on.
    for dep in $(dpkg-deb -f "$tmp"/*.deb Depends | tr ',' '\n' | grep -oE 'linux-(binary|modules)-[^ ]+' || true); do
        (cd "$tmp" && apt-get "${APT_OPTS[@]}" download -qq "$dep" 2>&1 | grep -v unsandboxed >&2 || true)
    done
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/x"; done
    ver=$(ls "$tmp/x/lib/modules" 2>/dev/null || ls "$tmp/x/usr/lib/modules")
    mods="$tmp/x/lib/modules/$ver"
    [ -d "$mods" ] || mods="$tmp/x/usr/lib/modules/$ver"
    rm -rf "$out.new"; mkdir -p "$out.new/modules"
    # /boot/vmlinuz-VER, or (7.x packages) /usr/lib/modules/VER/vmlinuz.
    for f in "$tmp/x/boot/vmlinuz-$ver" "$mods/vmlinuz"; do
        [ -f "$f" ] && cp "$f" "$out.new/vmlinuz" && break
    done
    for f in "$tmp/x/boot/config-$ver" "$mods/config"; do
        [ -f "$f" ] && cp "$f" "$out.new/config" && break
    done
    [ -f "$out.new/vmlinuz" ] || { say "$k: no vmlinuz in $pkg"; exit 4; }
    echo "$ver" > "$out.new/version"
    echo "$pkg" > "$out.new/package"
    # The modules the guest loads (with what they depend on, from each module's own
    # `depends=` field: the packages ship no modules.dep, depmod makes it at install),
    # decompressed so busybox's insmod can load them; load order in modules/order.
    # zram compresses with lzo-rle (6.1) or lz4 (6.12 and later); load both where modules.
    want=(lzo lzo-rle lz4 zram virtio_pci virtio_blk)
    declare -A seen=()
    order=()
    add() {
        local name="$1" path dep ko
        [ -n "${seen[$name]:-}" ] && return 0
        seen[$name]=1
        path=$(find "$mods/kernel" -name "$name.ko*" -o -name "${name//_/-}.ko*" | head -1)
        [ -z "$path" ] && return 0   # built in
        ko="$out.new/modules/$name.ko"
        case "$path" in
            *.ko.xz) xz -dc "$path" > "$ko" ;;
            *.ko.zst) zstd -qdc "$path" > "$ko" ;;
            *.ko.gz) gzip -dc "$path" > "$ko" ;;
            *) cp "$path" "$ko" ;;
        esac
        for dep in $(tr '\0' '\n' < "$ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
            add "$dep"
        done
        order+=("$name")
    }
    for m in "${want[@]}"; do add "$m"; done
    printf '%s\n' "${order[@]}" > "$out.new/modules/order"
    rm -rf "$out"; mv "$out.new" "$out"
    rm -rf "$tmp"; trap - EXIT
    say "$k: $ver in $out (modules: ${order[*]})"
    echo "$out"
done
