# Emulated hosts on this machine, sourced by the multihost tests: network namespaces
# malA, malB (and malC, malD, ... with MH_COUNT, 2 by default, at most 8), each joined by
# a veth pair to one bridge that lives in a namespace of its own (malhub), at 10.77.0.1,
# .2, ...; MH_PREFIX (default mal) names another set (its hosts PREFIXA, PREFIXB, ...),
# which can exist beside this one; each process run with its own host name (a UTS namespace) and an /etc/hosts
# that names every host (`ip netns exec` bind-mounts /etc/netns/NAME/hosts over
# /etc/hosts).
#
# The links are virtual cables in one kernel: every byte crosses the TCP/IP stack, the
# veth driver and the bridge, but no wire. Figures measured here are not a network's.
#
# Functions: mh_unavailable (why the hosts cannot be made, or nothing), mh_up, mh_down,
# mh_run HOST COMMAND... (COMMAND as HOST), mh_link_bytes HOST (bytes sent + received on
# HOST's end of the link).

: "${MH_COUNT:=2}"
: "${MH_PREFIX:=mal}"
MH_HOSTS=$(echo A B C D E F G H | cut -d' ' -f1-"$MH_COUNT" | sed "s/\([A-H]\)/$MH_PREFIX\1/g")
# Every name a run may have made: cleaning up covers them all, whatever MH_COUNT it had.
MH_ALL_HOSTS=$(echo A B C D E F G H | sed "s/\([A-H]\)/$MH_PREFIX\1/g")
MH_HUB=${MH_PREFIX}hub # the namespace of the bridge every host's link ends in
MH_BRIDGE=${MH_PREFIX}br
MH_NET=10.77.0
MH_DEV=malnet # the link's name inside both namespaces, so one setting names it
MH_PROBE=${MH_PREFIX}-probe # the namespace mh_unavailable tries to make
# Left in /etc/netns when mh_up made that directory, so that mh_down (maybe in a later
# run, after a killed one) removes it then and only then: it may have been there before.
MH_MADE_NETNS=/etc/netns/.made-by-libmal-multihost

# A host's address: the first host .1, the second .2, ...
mh_address() {
    i=1
    for h in $MH_HOSTS; do
        [ "$h" = "$1" ] && { echo "$MH_NET.$i"; return; }
        i=$((i + 1))
    done
}

# Why the namespaces cannot be made here, on stdout; nothing when they can.
mh_unavailable() {
    [ "$(id -u)" = 0 ] || { echo "not root (network namespaces need CAP_SYS_ADMIN)"; return; }
    command -v ip >/dev/null 2>&1 || { echo "no ip command (iproute2)"; return; }
    command -v unshare >/dev/null 2>&1 || { echo "no unshare command (util-linux)"; return; }
    command -v hostname >/dev/null 2>&1 || { echo "no hostname command"; return; }
    for h in $MH_HOSTS $MH_HUB; do
        if ip netns list 2>/dev/null | grep -qw "^$h"; then
            echo "namespace $h already exists (another multihost test running, or left over: ip netns del $h)"
            return
        fi
    done
    # A probe namespace left by a killed run would make `ip netns add` fail here.
    mh_del_netns "$MH_PROBE"
    ip netns add "$MH_PROBE" 2>/dev/null || { echo "ip netns add fails (no CAP_SYS_ADMIN or no netns support)"; return; }
    if ! ip netns exec "$MH_PROBE" unshare --uts sh -c 'hostname "$0"' "$MH_PROBE" 2>/dev/null; then
        ip netns del "$MH_PROBE"
        echo "unshare --uts fails (cannot give a process its own host name)"
        return
    fi
    ip netns del "$MH_PROBE"
}

# Namespace $1 if it exists, processes left in it killed first (a namespace with a
# process in it outlives `ip netns del`).
mh_del_netns() {
    pids=$(ip netns pids "$1" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$1" 2>/dev/null
    return 0
}

mh_up() {
    if [ ! -d /etc/netns ]; then
        mkdir /etc/netns && : >"$MH_MADE_NETNS" || return 1
    fi
    for h in $MH_HOSTS; do
        ip netns add "$h" || return 1
        mkdir -p "/etc/netns/$h" || return 1
        { echo "127.0.0.1 localhost"
          for peer in $MH_HOSTS; do echo "$(mh_address "$peer") $peer"; done
        } > "/etc/netns/$h/hosts" || return 1
    done
    ip netns add "$MH_HUB" &&
        ip -n "$MH_HUB" link add "$MH_BRIDGE" type bridge &&
        ip -n "$MH_HUB" link set "$MH_BRIDGE" up || return 1
    for h in $MH_HOSTS; do
        # The host's end is named after the link (one setting names it everywhere), the
        # hub's after the host.
        ip link add "${MH_DEV}tmp" netns "$h" type veth peer name "$h" netns "$MH_HUB" &&
            ip -n "$MH_HUB" link set "$h" master "$MH_BRIDGE" &&
            ip -n "$MH_HUB" link set "$h" up &&
            ip -n "$h" link set "${MH_DEV}tmp" name "$MH_DEV" &&
            ip -n "$h" addr add "$(mh_address "$h")/24" dev "$MH_DEV" &&
            ip -n "$h" link set "$MH_DEV" up &&
            ip -n "$h" link set lo up || return 1
    done
    mh_wait_link
}

# Until every host's end reports carrier (UCX lists only interfaces that are up and
# running, which a fresh veth pair is some tens of milliseconds after `link set up`);
# 5 s at most.
mh_wait_link() {
    tries=0
    while [ $tries -lt 100 ]; do
        up=0
        for h in $MH_HOSTS; do
            ip -n "$h" link show "$MH_DEV" | grep -q 'state UP' && up=$((up + 1))
        done
        [ $up = "$MH_COUNT" ] && return 0
        tries=$((tries + 1))
        sleep 0.05
    done
    echo "hosts.sh: the link $MH_DEV did not come up" >&2
    return 1
}

# Everything mh_up and mh_unavailable made, whatever state it is in (and whatever
# MH_COUNT the run that made it had).
mh_down() {
    for h in $MH_ALL_HOSTS; do
        mh_del_netns "$h"
        rm -f "/etc/netns/$h/hosts"
        rmdir "/etc/netns/$h" 2>/dev/null
    done
    mh_del_netns "$MH_HUB"
    mh_del_netns "$MH_PROBE"
    # Another set (MH_PREFIX) may still use the directory: the mark stays until it is
    # empty.
    if [ -e "$MH_MADE_NETNS" ]; then
        rm -f "$MH_MADE_NETNS"
        rmdir /etc/netns 2>/dev/null || : >"$MH_MADE_NETNS"
    fi
    return 0
}

# COMMAND inside HOST's network namespace, with HOST as its host name.
mh_run() {
    h=$1
    shift
    ip netns exec "$h" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
}

mh_link_bytes() {
    ip -n "$1" -s -j link show "$MH_DEV" 2>/dev/null |
        sed -n 's/.*"rx":{"bytes":\([0-9]*\).*"tx":{"bytes":\([0-9]*\).*/\1 \2/p' |
        { read -r rx tx && echo $((rx + tx)); }
}
