#!/bin/sh
# What each library exports:
#   check_exports.sh NM LIBMAL          libmal.so: only mal_* and MAL_* names (and what the
#                                       linker defines), and no MPI_ name at all
#   check_exports.sh NM LIBMAL_PMPI pmpi libmal-pmpi.so: only MPI_* names (the wrappers of
#                                       src/pmpi/pmpi.c) and the linker's
# A new export outside these (an internal function, a global such as the engine's state,
# which a program's own global of the same name would replace) fails the test.
set -eu
nm=$1 lib=$2 kind=${3:-libmal}

# Defined by the linker in every shared object.
linker="_end _edata __bss_start _init _fini"

symbols=$("$nm" -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
leaks=""
public=0
for s in $symbols; do
    case "$kind:$s" in
    libmal:mal_* | libmal:MAL_* | pmpi:MPI_*) public=$((public + 1)); continue ;;
    esac
    case " $linker " in
    *" $s "*) continue ;;
    esac
    leaks="$leaks $s"
done
if [ -n "$leaks" ]; then
    echo "exports: FAIL: $lib exports symbols outside its interface:$leaks"
    exit 1
fi
if [ "$kind" = pmpi ]; then
    expected="MPI_Send MPI_Allreduce MPI_Finalize"
else
    expected="mal_init mal_step mal_alloc_window mal_version mal_pmpi_attach
mal_pmpi_finalize_shmem mal_pmpi_check_comm"
fi
for s in $expected; do
    echo "$symbols" | grep -qx "$s" || { echo "exports: FAIL: $s is not exported"; exit 1; }
done
echo "exports: PASS ($public $kind symbols)"
