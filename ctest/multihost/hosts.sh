# Two emulated hosts on this machine, sourced by the multihost tests: network namespaces
# malA and malB joined by a veth pair (10.77.0.1 and 10.77.0.2), each process run with
# its own host name (a UTS namespace) and an /etc/hosts that names both
# (`ip netns exec` bind-mounts /etc/netns/NAME/hosts over /etc/hosts).
#
# The link is two ends of a virtual cable in one kernel: every byte crosses the TCP/IP
# stack and the veth driver, but no wire. Figures measured here are not a network's.
#
# Functions: mh_unavailable (why the hosts cannot be made, or nothing), mh_up, mh_down,
# mh_run HOST COMMAND... (COMMAND as HOST), mh_link_bytes HOST (bytes sent + received on
# HOST's end of the link).

MH_HOSTS="malA malB"
MH_NET=10.77.0
MH_DEV=malnet # the link's name inside both namespaces, so one setting names it
MH_PROBE=mal-probe # the namespace mh_unavailable tries to make
# Left in /etc/netns when mh_up made that directory, so that mh_down (maybe in a later
# run, after a killed one) removes it then and only then: it may have been there before.
MH_MADE_NETNS=/etc/netns/.made-by-libmal-multihost

mh_address() { [ "$1" = malA ] && echo "$MH_NET.1" || echo "$MH_NET.2"; }

# Why the namespaces cannot be made here, on stdout; nothing when they can.
mh_unavailable() {
    [ "$(id -u)" = 0 ] || { echo "not root (network namespaces need CAP_SYS_ADMIN)"; return; }
    command -v ip >/dev/null 2>&1 || { echo "no ip command (iproute2)"; return; }
    command -v unshare >/dev/null 2>&1 || { echo "no unshare command (util-linux)"; return; }
    command -v hostname >/dev/null 2>&1 || { echo "no hostname command"; return; }
    for h in $MH_HOSTS; do
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
    ip link add "${MH_DEV}A" netns malA type veth peer name "${MH_DEV}B" netns malB || return 1
    for h in $MH_HOSTS; do
        end=${MH_DEV}$(echo "$h" | cut -c4)
        ip -n "$h" link set "$end" name "$MH_DEV" &&
            ip -n "$h" addr add "$(mh_address "$h")/24" dev "$MH_DEV" &&
            ip -n "$h" link set "$MH_DEV" up &&
            ip -n "$h" link set lo up || return 1
    done
    mh_wait_link
}

# Until both ends report carrier (UCX lists only interfaces that are up and running,
# which a fresh veth pair is some tens of milliseconds after `link set up`); 5 s at most.
mh_wait_link() {
    tries=0
    while [ $tries -lt 100 ]; do
        up=0
        for h in $MH_HOSTS; do
            ip -n "$h" link show "$MH_DEV" | grep -q 'state UP' && up=$((up + 1))
        done
        [ $up = 2 ] && return 0
        tries=$((tries + 1))
        sleep 0.05
    done
    echo "hosts.sh: the link $MH_DEV did not come up" >&2
    return 1
}

# Everything mh_up and mh_unavailable made, whatever state it is in.
mh_down() {
    for h in $MH_HOSTS; do
        mh_del_netns "$h"
        rm -f "/etc/netns/$h/hosts"
        rmdir "/etc/netns/$h" 2>/dev/null
    done
    mh_del_netns "$MH_PROBE"
    if [ -e "$MH_MADE_NETNS" ]; then
        rm -f "$MH_MADE_NETNS"
        rmdir /etc/netns 2>/dev/null
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
