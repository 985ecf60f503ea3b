#!/bin/sh
# Checks that no files of the tree call or include each other in a cycle: the library
# (tools/check-layers.sh checks its layers too), the examples, the tools, the benchmarks,
# support/ and the tests.
#
#   sh tools/check-cycles.sh BUILD_DIR [SOURCE_DIR]
#
# Calls: within each target of the build (each CMakeFiles/<target>.dir), an edge A -> B
# means A's object uses a symbol B's object defines (nm). Includes: between the sources
# and headers of src/, bench/, apps/, examples/, support/ and ctest/, an edge A -> B
# means A includes "B", found beside A, else as the one file of that name in those
# folders (tools/include-edges.sh). coreutils' tsort finds the cycles. Exit status 0 without a cycle, 1 with one
# (its files are printed), 2 on bad usage.
set -eu

if [ $# -lt 1 ] || [ ! -d "$1/CMakeFiles" ]; then
    echo "usage: check-cycles.sh BUILD_DIR [SOURCE_DIR]" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
top=$(cd "${2:-$(dirname "$0")/..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

# A graph's verdict: "WHAT: N edges between M files, no cycle", or the cycle's files.
verdict() { # EDGES WHAT
    nodes=$(awk '{ print $1; print $2 }' "$1" | sort -u | wc -l)
    if tsort "$1" >/dev/null 2>"$work/loops"; then
        echo "$2: $(wc -l <"$1") edges between $nodes files, no cycle"
        return 0
    fi
    files=$(grep -v 'input contains a loop' "$work/loops" | sed 's/^tsort: //' |
        sort -u | tr '\n' ' ')
    echo "$2: CYCLE through $(echo $files | wc -w) files: $files"
    return 1
}

# Calls, target by target.
targets=0 edges=0
find "$build" -type d -name '*.dir' -path '*/CMakeFiles/*' | sort >"$work/targets"
while read -r dir; do
    (cd "$dir" && find . -name '*.o' | sed 's|^\./||' | sort) >"$work/objects"
    [ "$(wc -l <"$work/objects")" -gt 1 ] || continue
    : >"$work/defs"
    : >"$work/uses"
    while read -r obj; do
        nm -g "$dir/$obj" 2>/dev/null | awk -v f="$obj" -v defs="$work/defs" \
            -v uses="$work/uses" '$(NF-1) == "U" { print $NF, f >> uses }
                                  $(NF-1) ~ /^[TDBRCV]$/ { print $NF, f >> defs }'
    done <"$work/objects"
    sort -u -o "$work/defs" "$work/defs"
    sort -u -o "$work/uses" "$work/uses"
    join "$work/uses" "$work/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u \
        >"$work/call_edges"
    targets=$((targets + 1))
    edges=$((edges + $(wc -l <"$work/call_edges")))
    name=${dir#"$build"/}
    verdict "$work/call_edges" "calls in $name" >"$work/one" || { cat "$work/one"; status=1; }
done <"$work/targets"
echo "calls: $edges edges in $targets targets of several objects$([ $status = 0 ] && echo ", no cycle")"

# Includes, across the folders of code.
(cd "$top" && find src bench apps examples support ctest -name '*.[ch]' 2>/dev/null | sort) \
    >"$work/files"
sh "$(dirname "$0")/include-edges.sh" "$top" "$work/files" | grep -v ' AMBIGUOUS$' \
    >"$work/include_edges" || true
verdict "$work/include_edges" "includes" || status=1
exit $status
