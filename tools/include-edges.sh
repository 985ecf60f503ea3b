#!/bin/sh
# The include graph of a tree, for tools/check-layers.sh and tools/check-cycles.sh:
# "includer included" for every quoted include between the files listed, by their paths
# under ROOT, found as the compiler finds them: beside the includer, else the one listed
# file of that name. A name listed twice and not beside the includer gives
# "includer name AMBIGUOUS"; a name not listed (include/, MPI's headers) gives nothing.
#
#   sh tools/include-edges.sh ROOT FILES   (FILES: one path under ROOT a line)
set -eu
root=$1 files=$2
while read -r file; do
    dir=$(dirname "$file")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/$file" |
        while read -r inc; do
            if [ -f "$root/$dir/$inc" ]; then
                echo "$file $(cd "$root/$dir" && realpath --relative-to="$root" "$inc")"
                continue
            fi
            found=$(grep -E "(^|/)$(basename "$inc")\$" "$files" || true)
            case $(echo "$found" | grep -c .) in
            0) ;;
            1) echo "$file $found" ;;
            *) echo "$file $inc AMBIGUOUS" ;;
            esac
        done
done <"$files" | awk '$1 != $2' | sort -u
