/* The one-sided transport over MPI windows or direct memory: remote rows are got or put
 * with MPI_Get/MPI_Put on a window, or copied by cross-memory attach (direct.c), along
 * the segment walk every one-sided transport shares (transport_common.c). */
#include "core.h"
#include "transport.h"

/* Get (or put) `bytes` between local `buf` and byte `disp` of `peer`'s source (or
 * target) buffer: a cross-memory copy for direct memory, chunked MPI_Get/MPI_Put on a
 * window. */
static mal_status_t rma_transfer(const engine_plan_t *plan, bool put, char *buf,
                                 int64_t bytes, int peer, int64_t disp)
{
    const engine_remote_t *at = put ? &plan->dst_at : &plan->src_at;
    bool near = engine_remote_near(at, peer);
    if (plan->moved_by != NULL)
        plan->moved_by[near ? ENGINE_PATH_MEMORY : ENGINE_PATH_MPI] += bytes;
    if (near)
        return engine_direct_transfer(at->peers != NULL ? at->peers : at->near, put, buf,
                                      bytes, peer, disp);
    int64_t chunk = engine_chunk_bytes(plan->count_limit);
    for (int64_t done = 0; done < bytes; done += chunk) {
        int n = (int)(bytes - done < chunk ? bytes - done : chunk);
        int rc = put ? MPI_Put(buf + done, n, MPI_BYTE, peer, (MPI_Aint)(disp + done), n,
                               MPI_BYTE, at->win)
                     : MPI_Get(buf + done, n, MPI_BYTE, peer, (MPI_Aint)(disp + done), n,
                               MPI_BYTE, at->win);
        if (rc != MPI_SUCCESS)
            return engine_mpi_check(rc, put ? "MPI_Put" : "MPI_Get");
    }
    return MAL_OK;
}

static MPI_Win side_window(const engine_plan_t *plan, engine_side_t side)
{
    return side == ENGINE_SIDE_SRC ? plan->src_at.win : plan->dst_at.win;
}

/* A passive-target epoch: lock_all NOCHECK (nobody takes exclusive locks on libmal's
 * windows) + win_sync, before the agreement that orders the user's stores before any
 * remote access. Direct memory has no window and no epoch: the agreements around a
 * move order it. */
static mal_status_t rma_expose(engine_plan_t *plan, engine_side_t side)
{
    MPI_Win win = side_window(plan, side);
    if (win == MPI_WIN_NULL)
        return MAL_OK;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    return engine_mpi_check(MPI_Win_sync(win), "MPI_Win_sync");
}

/* One-sided: every transfer of the plan is in flight; copy the rows that stay
 * meanwhile. */
static mal_status_t rma_pull(engine_plan_t *plan)
{
    mal_status_t st = engine_one_sided_walk(plan, rma_transfer);
    if (!st)
        engine_copy_local(plan);
    return st;
}

/* MPI_Win_flush to every rank of the window, one at a time, instead of MPI_Win_flush_all:
 * osc/ucx's flush_all waits on its whole UCX worker, which it shares between windows, and
 * across hosts (UCX over TCP) it waited for ever on a move after processes had left
 * (docs/design.md, "A flush that never returns"); a flush to one rank waits on that
 * rank's endpoint only, and costs next to nothing where this rank has none. */
static mal_status_t flush_each(MPI_Win win)
{
    MPI_Group group;
    int size = 0, rc = MPI_Win_get_group(win, &group);
    if (rc != MPI_SUCCESS)
        return engine_mpi_check(rc, "MPI_Win_get_group");
    MPI_Group_size(group, &size);
    MPI_Group_free(&group);
    for (int r = 0; r < size && rc == MPI_SUCCESS; r++)
        rc = MPI_Win_flush(r, win);
    return engine_mpi_check(rc, "MPI_Win_flush");
}

/* Flush completes this rank's gets and puts at origin and target; closing syncs first
 * so remote puts are visible to local loads. */
static mal_status_t rma_complete(engine_plan_t *plan, engine_side_t side, bool close)
{
    MPI_Win win = side_window(plan, side);
    if (win == MPI_WIN_NULL)
        return MAL_OK;
    if (!close)
        return flush_each(win);
    MPI_Win_sync(win);
    return engine_mpi_check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
}

const engine_transport_t engine_transport_rma = {
    .name = "rma",
    .allocate = engine_transport_no_scratch,
    .expose = rma_expose,
    .pull = rma_pull,
    .complete = rma_complete,
    .free = engine_transport_free_scratch,
};
