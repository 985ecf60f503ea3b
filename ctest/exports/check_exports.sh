#!/bin/sh
# libmal.so exports its public interface and nothing else: every defined dynamic symbol
# is mal_* or MAL_*, one of the MPI_* wrappers listed below, or a symbol the linker
# defines. A new non-mal_ export (an internal function, a global such as the engine's
# state, which a program's own global of the same name would replace) fails the test.
# Usage: check_exports.sh NM LIBRARY
set -eu
nm=$1 lib=$2

# The PMPI interposition wrappers of src/engine/pmpi.c (the monitor counts the
# application's communication through them) and MPI_Finalize of src/engine/transport/shmem.c
# (built with OpenSHMEM only): exported on purpose. Add one here only with its wrapper.
wrappers="MPI_Allgather MPI_Allgatherv MPI_Allreduce MPI_Alltoall MPI_Alltoallv
MPI_Barrier MPI_Bcast MPI_Gather MPI_Gatherv MPI_Irecv MPI_Isend MPI_Recv MPI_Reduce
MPI_Scatter MPI_Scatterv MPI_Send MPI_Sendrecv MPI_Wait MPI_Waitall MPI_Finalize"
# Defined by the linker in every shared object.
linker="_end _edata __bss_start _init _fini"

symbols=$("$nm" -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
leaks=""
public=0
for s in $symbols; do
    case $s in
    mal_* | MAL_*) public=$((public + 1)); continue ;;
    esac
    case " $(echo $wrappers $linker) " in
    *" $s "*) continue ;;
    esac
    leaks="$leaks $s"
done
if [ -n "$leaks" ]; then
    echo "exports: FAIL: $lib exports symbols outside libmal's interface:$leaks"
    exit 1
fi
for s in mal_init mal_step mal_alloc_window mal_version; do
    echo "$symbols" | grep -qx "$s" || { echo "exports: FAIL: $s is not exported"; exit 1; }
done
echo "exports: PASS ($public mal_ symbols)"
