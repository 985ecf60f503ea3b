#!/bin/sh
# Checks that the files of src/ form no cycle, by calls or by includes, and that the
# engine's layers call and include only downward. Every file is known by its path under
# src/ (engine/api/reconf.c and engine/reconf/reconf.h are different files).
#
#   sh tools/check-layers.sh OBJECT_ROOT [SRC_DIR]
#
# OBJECT_ROOT is the build's src/CMakeFiles: the objects of the static library
# (mal_static.dir) and of the pure modules (mal_partition, mal_predict, mal_policy), each
# at its source's path (engine/core/agree.c.o).
# Calls: every object is a node; an edge A -> B means A uses a symbol B defines (nm).
# Includes: every header and source under SRC_DIR is a node; an edge A -> B means A
# includes "B", found as the compiler finds it: beside A, else the one file of that name
# under SRC_DIR (a name found twice elsewhere is reported as ambiguous). coreutils' tsort
# finds the cycles of each graph. With MAL_LAYERS_VERBOSE=1 the call graph is printed as
# "user -> provider: symbols".
# Layers: a file of src/engine/<layer>/ may call only files of layers before its own in
# MAL_LAYERS below (and the pure modules, src/partition, src/predict, src/policy, which
# come first); a call the other way is reported as upward even where it closes no cycle.
# Includes follow the same order: a file (source or header) of one layer may include only
# headers of its own layer or of layers before it, a header's layer being its folder; an
# include of a later layer's header is reported as upward.
# Private headers: a header named *_impl.h belongs to its folder (registry/registry_impl.h:
# what a structure holds, which the other layers reach through registry.h's functions); an
# include of one from another folder is reported as private.
# Exit status: 0 without a cycle, an upward call or include, an ambiguous include and a
# private header included from another folder, 1 otherwise (the files are printed), 2 on
# bad usage.
set -eu

if [ $# -lt 1 ] || [ ! -d "$1/mal_static.dir" ]; then
    echo "usage: check-layers.sh OBJECT_ROOT [SRC_DIR] (OBJECT_ROOT: build/src/CMakeFiles)" >&2
    exit 2
fi
objects=$1
src=$(cd "${2:-$(dirname "$0")/../src}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "symbol file" for every symbol of code or data an object defines (defs) and for every
# one it uses (uses); a file is its object's path under its target's folder, without .c.o.
for dir in mal_static mal_partition mal_predict mal_policy; do
    [ -d "$objects/$dir.dir" ] || continue
    (cd "$objects/$dir.dir" && find . -name '*.c.o' | sed 's|^\./||' |
        while read -r obj; do
            nm -g "$obj" 2>/dev/null | awk -v f="${obj%.c.o}" -v defs="$work/defs" \
                -v uses="$work/uses" '$(NF-1) == "U" { print $NF, f >> uses }
                                      $(NF-1) ~ /^[TDBRCV]$/ { print $NF, f >> defs }'
        done)
done
touch "$work/defs" "$work/uses"
sort -u -o "$work/defs" "$work/defs"
sort -u -o "$work/uses" "$work/uses"
join "$work/uses" "$work/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort >"$work/calls"
awk '{ print $1, $2 }' "$work/calls" | sort -u >"$work/call_edges"

# "includer included" for every quoted include between files under src/, by path.
(cd "$src" && find . -name '*.[ch]' | sed 's|^\./||' | sort) >"$work/files"
sh "$(dirname "$0")/include-edges.sh" "$src" "$work/files" >"$work/include_lines"
grep -v ' AMBIGUOUS$' "$work/include_lines" >"$work/include_edges" || true
status=0
if grep -q ' AMBIGUOUS$' "$work/include_lines"; then
    echo "layers: AMBIGUOUS includes (a name found in several folders, none beside the includer):"
    grep ' AMBIGUOUS$' "$work/include_lines" | sed 's/ AMBIGUOUS$//; s/^/  /; s/ / includes /'
    status=1
fi

if [ "${MAL_LAYERS_VERBOSE:-0}" = 1 ]; then
    awk '{ k = $1 " -> " $2; s[k] = s[k] " " $3 } END { for (k in s) print k ":" s[k] }' \
        "$work/calls" | sort
fi

# The layer of every source and header: its folder's position in the order when it is
# src/engine/<layer>/, else 0 (the pure modules, pmpi).
layers=${MAL_LAYERS:-"core platform transport registry monitor reconf procs decide api"}
while read -r file; do
    rank=0 i=1 dir=none
    case $file in
    engine/*/*) dir=$(echo "$file" | cut -d/ -f2) ;;
    esac
    for l in $layers; do
        [ "$l" = "$dir" ] && rank=$i
        i=$((i + 1))
    done
    echo "$file $rank $dir"
done <"$work/files" | sort >"$work/layer_of_file"
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

upward "$work/call_edges" "$work/layer_of" "->" call "$work/upward" || status=1
upward "$work/include_edges" "$work/layer_of_file" includes include \
    "$work/upward_includes" || status=1
awk '$2 ~ /_impl\.h$/ { from = $1; to = $2; sub(/\/[^\/]*$/, "", from); sub(/\/[^\/]*$/, "", to)
                        if (from != to) print "  " $1 " includes " $2 }' \
    "$work/include_edges" >"$work/private"
if [ -s "$work/private" ]; then
    echo "layers: PRIVATE headers included from another folder ($(wc -l <"$work/private")):"
    cat "$work/private"
    status=1
else
    echo "layers: every private header (*_impl.h) is included only in its own folder"
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
