#!/bin/sh
# Checks that the files of src/ form no cycle, by calls or by includes.
#
#   sh tools/check-layers.sh LIBMAL_STATIC_ARCHIVE [SRC_DIR]
#
# Calls: every object of the archive is a node; an edge A -> B means A.o uses a symbol
# B.o defines (nm). Includes: every header and source under SRC_DIR is a node; an edge
# A -> B means A includes "B". coreutils' tsort finds the cycles of each graph. With
# MAL_LAYERS_VERBOSE=1 the call graph is printed as "user -> provider: symbols".
# Layers: a file of src/engine/<layer>/ may call only files of layers before its own in
# MAL_LAYERS below (and the pure modules, src/partition, src/predict, src/policy, which
# come first); a call the other way is reported as upward even where it closes no cycle.
# Includes follow the same order: a file (source or header) of one layer may include only
# headers of its own layer or of layers before it, a header's layer being its folder; an
# include of a later layer's header is reported as upward.
# Exit status: 0 without a cycle, an upward call or an upward include, 1 otherwise (the
# files are printed), 2 on bad usage.
set -eu

if [ $# -lt 1 ] || [ ! -f "$1" ]; then
    echo "usage: check-layers.sh LIBMAL_STATIC_ARCHIVE [SRC_DIR]" >&2
    exit 2
fi
archive=$1
src=${2:-$(dirname "$0")/../src}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "symbol file" for every symbol an object defines, and for every one it uses.
nm -A --defined-only -g "$archive" 2>/dev/null |
    awk '$(NF-1) ~ /^[TDBRCV]$/ { split($1, p, ":"); f = p[2]; sub(/\.c\.o$/, "", f);
                                  print $NF, f }' | sort -u >"$work/defs"
nm -A -u "$archive" 2>/dev/null |
    awk '{ split($1, p, ":"); f = p[2]; sub(/\.c\.o$/, "", f); print $NF, f }' |
    sort -u >"$work/uses"
join "$work/uses" "$work/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort >"$work/calls"
awk '{ print $1, $2 }' "$work/calls" | sort -u >"$work/call_edges"

# "includer included" for every quoted include between files under src/.
find "$src" -name '*.[ch]' | while read -r file; do
    base=$(basename "$file")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
        while read -r inc; do
            inc=$(basename "$inc")
            if [ -n "$(find "$src" -name "$inc" | head -n 1)" ] && [ "$inc" != "$base" ]; then
                echo "$base $inc"
            fi
        done
done | sort -u >"$work/include_edges"

if [ "${MAL_LAYERS_VERBOSE:-0}" = 1 ]; then
    awk '{ k = $1 " -> " $2; s[k] = s[k] " " $3 } END { for (k in s) print k ":" s[k] }' \
        "$work/calls" | sort
fi

# The layer of every file: its folder's position in the order (pure modules 0).
layers=${MAL_LAYERS:-"core transport registry monitor reconf procs decide api"}
find "$src" -name '*.c' | while read -r file; do
    dir=$(basename "$(dirname "$file")")
    rank=0 i=1
    for l in $layers; do
        [ "$l" = "$dir" ] && rank=$i
        i=$((i + 1))
    done
    echo "$(basename "$file" .c) $rank $dir"
done | sort >"$work/layer_of"
# The same for every source and header, known by its full base name (includes name it).
find "$src" -name '*.[ch]' | while read -r file; do
    dir=$(basename "$(dirname "$file")")
    rank=0 i=1
    for l in $layers; do
        [ "$l" = "$dir" ] && rank=$i
        i=$((i + 1))
    done
    echo "$(basename "$file") $rank $dir"
done | sort >"$work/layer_of_file"

status=0
# Upward calls: the caller's layer is before the callee's.
sort "$work/call_edges" | join - "$work/layer_of" | sort -k2,2 |
    join -1 2 -2 1 - "$work/layer_of" |
    awk '$3 < $5 { printf "  %s (%s) -> %s (%s)\n", $2, $4, $1, $6 }' >"$work/upward"
if [ -s "$work/upward" ]; then
    echo "layers: UPWARD calls ($(wc -l <"$work/upward")):"
    cat "$work/upward"
    status=1
else
    echo "layers: every call goes down the order: $layers"
fi
# Upward includes: the including file's layer is before the included header's.
sort "$work/include_edges" | join - "$work/layer_of_file" | sort -k2,2 |
    join -1 2 -2 1 - "$work/layer_of_file" |
    awk '$3 < $5 { printf "  %s (%s) includes %s (%s)\n", $2, $4, $1, $6 }' \
        >"$work/upward_includes"
if [ -s "$work/upward_includes" ]; then
    echo "layers: UPWARD includes ($(wc -l <"$work/upward_includes")):"
    cat "$work/upward_includes"
    status=1
else
    echo "layers: every include goes down the order: $(wc -l <"$work/include_edges") checked"
fi
for graph in call include; do
    edges="$work/${graph}_edges"
    nodes=$(awk '{ print $1; print $2 }' "$edges" | sort -u | wc -l)
    if tsort "$edges" >/dev/null 2>"$work/loops"; then
        echo "$graph graph: $(wc -l <"$edges") edges between $nodes files, no cycle"
    else
        files=$(grep -v 'input contains a loop' "$work/loops" | sed 's/^tsort: //' |
            sort -u | tr '\n' ' ')
        echo "$graph graph: CYCLE through $(echo $files | wc -w) files: $files"
        status=1
    fi
done
exit $status
