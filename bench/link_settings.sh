#!/bin/sh
# The transport settings across the two emulated hosts (ctest/multihost), measured: the
# warm benchmark at 256 MiB, one rank per host, once per setting, every method, the
# settings rotated so that none always runs after the same one. Prints one line per
# setting, pattern and method: the median time and the ratio to the best two-sided
# method of the same setting. As root, on a quiet machine; makes and removes the hosts;
# a job still running after 300 s is ended (and reported as failed).
# Usage: sh bench/link_settings.sh [BUILD_DIR] [PATTERN] [ROUNDS]
# LINK_SETTINGS replaces the list: lines "name|VAR=value VAR=value".
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
pattern=${2:-skewed-to-uniform}
rounds=${3:-2}
mh=$top/ctest/multihost
out=$(mktemp -d)
trap 'sh "$mh/multihost.sh" down; rm -rf "$out"' EXIT
sh "$mh/multihost.sh" up
# name|variables (exported for the job; mhrun passes the environment on with -x).
settings=${LINK_SETTINGS:-"default|
seg128k|UCX_TCP_TX_SEG_SIZE=128k UCX_TCP_RX_SEG_SIZE=128k
seg256k|UCX_TCP_TX_SEG_SIZE=256k UCX_TCP_RX_SEG_SIZE=256k
seg512k|UCX_TCP_TX_SEG_SIZE=512k UCX_TCP_RX_SEG_SIZE=512k
seg1m|UCX_TCP_TX_SEG_SIZE=1m UCX_TCP_RX_SEG_SIZE=1m
rndv-inf|UCX_RNDV_THRESH=inf
seg256k-rndv-inf|UCX_TCP_TX_SEG_SIZE=256k UCX_TCP_RX_SEG_SIZE=256k UCX_RNDV_THRESH=inf
seg256k-chunk4m|UCX_TCP_TX_SEG_SIZE=256k UCX_TCP_RX_SEG_SIZE=256k MAL_MAX_COUNT=4194304"}
n=$(echo "$settings" | wc -l)
for round in $(seq 1 "$rounds"); do
    echo "$settings" | awk -v r="$round" -v n="$n" '{ print (NR + r) % n, $0 }' | sort -n |
        cut -d' ' -f2- | while IFS='|' read -r name vars; do
        args=""
        for v in $vars; do args="$args -x ${v%%=*}"; done
        # shellcheck disable=SC2086
        timeout 300 env $vars "$mh/mhrun" -n 2 $args "$build/bench/mal_bench_redist" --size 268435456 \
            --reps 5 --pattern "$pattern" >"$out/$name.$round" 2>&1 </dev/null ||
            echo "link_settings: $name round $round failed" >&2
    done
done
# Medians per setting, pattern and method; the ratio to the best two-sided median.
for f in "$out"/*.*; do
    name=$(basename "$f" | sed 's/\.[0-9]*$//')
    awk -v s="$name" '$1 ~ /-to-/ && $2 != "memcpy" { print s, $1, $2, $5 }' "$f"
done | sort -k1,1 -k2,2 -k3,3 -k4,4n >"$out/all"
cut -d' ' -f1-3 "$out/all" | uniq | while read -r s p m; do
    set -- $(awk -v s="$s" -v p="$p" -v m="$m" '$1 == s && $2 == p && $3 == m { print $4 }' "$out/all")
    n=$#
    mid=$(( (n + 1) / 2 ))
    eval "lo=\${$mid}"
    if [ $((n % 2)) = 0 ]; then eval "hi=\${$((mid + 1))}"; else hi=$lo; fi
    echo "$s $p $m $(awk -v a="$lo" -v b="$hi" 'BEGIN { print (a + b) / 2 }')"
done >"$out/medians"
printf '%-16s %-18s %-10s %10s %10s\n' setting pattern method median_ms x_best2s
awk '{ k = $1 " " $2; med[NR] = $0; if (($3 == "alltoallv" || $3 == "p2p") &&
       (!(k in best) || $4 < best[k])) best[k] = $4 }
     END { for (i = 1; i <= NR; i++) { split(med[i], f, " ");
             printf "%-16s %-18s %-10s %10.1f %10.2f\n", f[1], f[2], f[3], f[4],
                    best[f[1] " " f[2]] / f[4] } }' "$out/medians"
