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

# The layer of every source and header: its folder's position in the order (pure modules
# and other folders 0). Includes name a file by its base name, nm by its stem (array.c.o).
layers=${MAL_LAYERS:-"core transport registry monitor reconf procs decide api"}
find "$src" -name '*.[ch]' | while read -r file; do
    dir=$(basename "$(dirname "$file")")
    rank=0 i=1
    for l in $layers; do
        [ "$l" = "$dir" ] && rank=$i
        i=$((i + 1))
    done
    echo "$(basename "$file") $rank $dir"
done | sort >"$work/layer_of_file"
awk '$1 ~ /\.c$/ { sub(/\.c$/, "", $1); print }' "$work/layer_of_file" | sort >"$work/layer_of"

# Edges ("from to") whose source's layer comes before the target's, as "from (layer)
# VERB to (layer)" lines in OUT; prints the verdict and returns 1 when there is one.
upward() { # EDGES LAYERS VERB WHAT OUT
    sort "$1" | join - "$2" | sort -k2,2 | join -1 2 -2 1 - "$2" |
        awk -v verb="$3" '$3 < $5 { printf "  %s (%s) %s %s (%s)\n", $2, $4, verb, $1, $6 }' \
            >"$5"
    if [ -s "$5" ]; then
        echo "layers: UPWARD ${4}s ($(wc -l <"$5")):"
        cat "$5"
        return 1
    fi
    echo "layers: every $4 goes down the order ($(wc -l <"$1") checked): $layers"
}

status=0
upward "$work/call_edges" "$work/layer_of" "->" call "$work/upward" || status=1
upward "$work/include_edges" "$work/layer_of_file" includes include \
    "$work/upward_includes" || status=1
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
