/* Windows over libmal's memory: in a job on several hosts, a structure's buffer is the
 * same private memory a direct buffer is (huge pages populated at allocation; a
 * newcomer's, 4 KiB pages faulted in by the move), with an MPI window created over it.
 *
 * Why not MPI_Win_allocate there: its memory is what UCX gives (SysV shared segments of
 * 4 KiB pages), populated when the window is made, and a rebalance whose part outgrew
 * its spare allocated all of it anew on the critical path. Here the memory is libmal's:
 * pairs on one host copy it by cross-memory attach (direct.c), the window serves only
 * the pairs across hosts, and a grown spare keeps its pages (engine_private_extend).
 *
 * Why created windows and not one dynamic window per communicator: Open MPI 4.1's osc
 * ucx crashed in MPI_Win_free (ucp_mem_unmap) after buffers had been attached and
 * detached (docs/design.md, platform facts, "Dynamic windows crash on free").
 *
 * Why only when every pair of one host is near: with osc ucx, created and dynamic
 * windows over memory MPI did not allocate returned wrong data whenever UCX served the
 * pair by its shared-memory transports (posix, sysv), and correct data over tcp and cma
 * (platform facts, "Windows over memory MPI did not allocate"). Pairs on one host must
 * therefore never read through the window: they copy directly, or the buffer is an
 * allocated window (array.c). */
#define _GNU_SOURCE
#include "core.h"
#include "memory.h"

#include <stdlib.h>
#include <sys/mman.h>

/* A window over this rank's memory at b->base, `bytes` of it; agreed. */
static mal_status_t create(MPI_Comm comm, engine_buffer_t *b, int64_t bytes)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_disp_unit", "true");
    /* Byte displacements keep 64-bit offsets exact whatever the row size. */
    mal_status_t st = engine_mpi_check(MPI_Win_create(b->base, (MPI_Aint)bytes, 1, info, comm,
                                                      &b->win), "MPI_Win_create");
    MPI_Info_free(&info);
    if (!st)
        MPI_Win_set_errhandler(b->win, MPI_ERRORS_RETURN);
    mal_status_t all = engine_agree_in(comm, st, 0, "MPI_Win_create");
    if (all && !st)
        MPI_Win_free(&b->win);
    return all;
}

/* Memory that is still (borrowed) or now (lent) another buffer's is not unmapped. */
static void unmap(engine_buffer_t *b)
{
    if (b->base != NULL && !b->borrowed && !b->lent)
        munmap(b->base, b->mapped);
    free(b->near);
    *b = (engine_buffer_t){.win = MPI_WIN_NULL, .caps = b->caps};
}

mal_status_t engine_window_own(MPI_Comm comm, engine_buffer_t *b, int64_t bytes,
                               bool allowed, const engine_buffer_t *donor, bool lazy,
                               bool *used)
{
    *used = false;
    /* Nothing to map where some rank does not allow direct copies (MAL_MEMORY=window):
     * the window would be allocated anyway. */
    int mine = allowed, every = 0;
    PMPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, comm);
    if (!every)
        return MAL_OK;
    b->base = engine_private_map_or_borrow((size_t)bytes, donor, lazy, &b->mapped,
                                           &b->borrowed);
    mal_status_t st = b->base != NULL ? MAL_OK
                      : engine_fail(MAL_ERR_NOMEM, "no memory for a buffer of %lld bytes",
                                    (long long)bytes);
    bool all_near = false;
    if (!(st = engine_agree_in(comm, st, 0, "buffer allocation")))
        st = engine_direct_near(comm, b, bytes, allowed, &all_near);
    if (!st && all_near)
        st = create(comm, b, bytes);
    if (st || !all_near) {
        unmap(b);
        return st;
    }
    b->own = true;
    *used = true;
    return MAL_OK;
}

mal_status_t engine_window_own_regrow(MPI_Comm comm, engine_buffer_t *b, int64_t bytes)
{
    MPI_Win_free(&b->win);
    free(b->near);
    b->near = NULL;
    mal_status_t st = MAL_OK;
    if ((size_t)bytes > b->mapped) { /* only ranks whose part outgrew their memory */
        size_t mapped = 0;
        char *grown = engine_private_extend(b->base, b->mapped, (size_t)bytes, &mapped);
        if (grown == NULL) {
            munmap(b->base, b->mapped);
            grown = engine_private_map((size_t)bytes, &mapped);
        }
        b->base = grown;
        b->mapped = grown != NULL ? mapped : 0;
        if (grown == NULL)
            st = engine_fail(MAL_ERR_NOMEM, "no memory for a buffer of %lld bytes",
                             (long long)bytes);
    }
    bool all_near = false;
    if (!(st = engine_agree_in(comm, st, 0, "buffer growth")))
        st = engine_direct_near(comm, b, bytes, true, &all_near);
    if (!st && !all_near) /* the same processes: cannot change, but never guess */
        st = engine_agree_in(comm, engine_fail(MAL_ERR_MPI, "a rank of this host is no "
                                               "longer reachable by cross-memory attach"),
                             0, "buffer growth");
    if (!st)
        st = create(comm, b, bytes);
    if (st)
        unmap(b); /* the caller frees the capacities */
    return st;
}

void engine_window_own_free(engine_buffer_t *b)
{
    MPI_Win_free(&b->win);
    unmap(b);
}
