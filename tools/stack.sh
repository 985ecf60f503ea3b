#!/bin/sh
# A second software stack: a Debian 13 (trixie) root made with debootstrap from Debian's
# packages, in which libmal is built and tested beside the machine's Debian 12
# (docs/development.md, "Debian 13"). Usage: stack.sh debian13 [COMMAND [ARG...]]
#   Makes the root if there is none, or if the last making of it did not finish; installs
#   into it what tools/setup-deps.sh --test lists (only what is missing); then runs
#   COMMAND inside it (none: only prepares), in the source tree, which is mounted inside
#   at the same path. MAL_STACK_ROOT names the root's directory (default
#   /var/lib/mal/stacks/debian13); MAL_STACK_MIRROR the Debian mirror.
# The mounts (the root on itself, /proc, /sys, /dev, /etc/hosts, the tree) live in a
# mount namespace of this command's own (unshare -m): they go when it ends, killed or
# not, and nothing is left mounted.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
stack=${1:-}
case $stack in
debian13) suite=trixie ;;
*) echo "stack.sh: stack '$stack': only debian13 is known" >&2; exit 2 ;;
esac
shift
root=${MAL_STACK_ROOT:-/var/lib/mal/stacks/$stack}
mirror=${MAL_STACK_MIRROR:-http://deb.debian.org/debian}
made=$root/.made-by-libmal # written last: a root without it is incomplete
[ "$(id -u)" -eq 0 ] || { echo "stack.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

# debootstrap itself, on the machine (Debian 12's knows trixie).
if ! command -v debootstrap >/dev/null 2>&1; then
    echo "stack.sh: installing debootstrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
fi

if [ ! -e "$made" ]; then
    if [ -e "$root" ]; then
        echo "stack.sh: $root is incomplete (an interrupted making): made again" >&2
        rm -rf --one-file-system "$root"
    fi
    echo "stack.sh: making the $stack root in $root (debootstrap $suite, a few minutes)" >&2
    mkdir -p "$(dirname "$root")"
    debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; echo "stack.sh: debootstrap failed ($root.log)" >&2; exit 1; }
    rm -f "$root.log"
    date -u +%Y-%m-%dT%H:%M:%SZ >"$made"
fi
# apt inside needs a resolver; the tree's path must exist to mount it on.
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || :
mkdir -p "$root$top"

# The environment inside: the caller's, but for what names this machine's tools.
inside="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root"
inside="$inside LANG=C.UTF-8 MAL_STACK_INSIDE=$stack"
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare --mount --propagation private sh -euc '
    root=$1 top=$2 inside=$3
    shift 3
    # the root a mount of its own, so that its / is a mount point: `ip netns exec`
    # (the emulated hosts) makes / a slave mount and fails on a plain directory
    mount --bind "$root" "$root"
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount --bind "$top" "$root$top"
    # the machine names itself (hostname "vm") in its /etc/hosts, which libmal resolves
    # before spawning; the root shares the network, so it shares the names
    mount --bind -o ro /etc/hosts "$root/etc/hosts"
    mount -t tmpfs tmpfs "$root/run"
    mkdir -p "$root/run/lock" "$root/run/shm"
    # shellcheck disable=SC2086
    # apt prints thousands of lines on a first install: they go to a log, shown on failure.
    log=$root/var/log/libmal-setup-deps.log
    env $inside chroot "$root" sh "$top/tools/setup-deps.sh" --test >"$log" 2>&1 ||
        { tail -30 "$log" >&2; echo "stack.sh: setup-deps.sh failed inside ($log)" >&2; exit 1; }
    [ $# -eq 0 ] && exit 0
    cd "$root$top"
    # shellcheck disable=SC2086
    exec env $inside chroot "$root" sh -c "cd \"\$0\" && exec \"\$@\"" "$top" "$@"
' stack "$root" "$top" "$inside" "$@"
