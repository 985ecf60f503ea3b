/* The one-sided transport over MPI windows or direct memory, the segment walk every
 * one-sided transport shares, and the choice of a transport. All transports read the old
 * parts and write the new ones at the addresses the plan gives, and treat rows that stay
 * on a rank alike (left in place, or copied with memcpy), so they differ only in how
 * remote rows travel. */
#include "engine.h"
#include "transport.h"

#include <stdlib.h>
#include <string.h>

int64_t engine_chunk_bytes(int64_t count_limit)
{
    /* 1 GiB keeps each call well below INT_MAX bytes while staying large enough that
     * per-call overhead is invisible. */
    const int64_t gib = INT64_C(1) << 30;
    return count_limit < gib ? count_limit : gib;
}

bool engine_method_one_sided(mal_redist_t method)
{
    return method == MAL_REDIST_RMA || method == MAL_REDIST_RMA_GET ||
           method == MAL_REDIST_SHMEM;
}

const engine_transport_t *engine_transport_choose(mal_redist_t method, bool replicated)
{
    if (replicated)
        return &engine_transport_rma;
    switch (method) {
    case MAL_REDIST_ALLTOALLV: return &engine_transport_alltoallv;
    case MAL_REDIST_P2P: return &engine_transport_p2p;
    case MAL_REDIST_SHMEM: return &engine_transport_shmem;
    default: return &engine_transport_rma;
    }
}

engine_rma_mode_t engine_transport_mode(mal_redist_t method, mal_action_t action)
{
    if (action == MAL_ACTION_EXPAND)
        return ENGINE_RMA_PUSH;
    if (action == MAL_ACTION_SHRINK || method == MAL_REDIST_RMA_GET ||
        method == MAL_REDIST_SHMEM)
        return ENGINE_RMA_PULL;
    return ENGINE_RMA_SPLIT;
}

void engine_copy_local(const engine_plan_t *plan)
{
    if (plan->kept_in_place || plan->dst == NULL)
        return;
    int64_t rb = plan->row_bytes;
    for (size_t i = 0; i < plan->nrecv; i++) {
        const partition_segment_t *s = &plan->recv[i];
        if (s->peer == plan->me)
            memcpy(plan->dst + s->dst_offset * rb, plan->src + s->src_offset * rb,
                   (size_t)(s->rows * rb));
    }
}

/* Rows of a segment its source writes; the destination reads the rest. */
static int64_t pushed_rows(engine_rma_mode_t mode, int64_t rows, int64_t dst_in,
                           int64_t src_out)
{
    switch (mode) {
    case ENGINE_RMA_PULL: return 0;
    case ENGINE_RMA_PUSH: return rows;
    case ENGINE_RMA_SPLIT: break;
    }
    return partition_push_rows(rows, dst_in, src_out);
}

mal_status_t engine_one_sided_walk(const engine_plan_t *plan, engine_one_sided_fn transfer)
{
    int64_t rb = plan->row_bytes;
    int me = plan->me;
    engine_rma_mode_t mode = plan->mode;
    mal_status_t st = MAL_OK;
    /* Pull the head of each incoming segment; its source pushes the tail. */
    for (size_t i = 0; i < plan->nrecv && mode != ENGINE_RMA_PUSH && !st; i++) {
        const partition_segment_t *s = &plan->recv[i];
        if (s->peer == me)
            continue;
        int64_t pushed = pushed_rows(mode, s->rows, plan->in_rows[me], plan->out_rows[s->peer]);
        st = transfer(plan, false, plan->dst + s->dst_offset * rb, (s->rows - pushed) * rb,
                      s->peer, (plan->src_at.offsets[s->peer] + s->src_offset) * rb);
    }
    for (size_t i = 0; i < plan->nsend && mode != ENGINE_RMA_PULL && !st; i++) {
        const partition_segment_t *s = &plan->send[i];
        if (s->peer == me)
            continue;
        int64_t pushed = pushed_rows(mode, s->rows, plan->in_rows[s->peer], plan->out_rows[me]);
        int64_t head = s->rows - pushed;
        st = transfer(plan, true, plan->src + (s->src_offset + head) * rb, pushed * rb,
                      s->peer, (plan->dst_at.offsets[s->peer] + s->dst_offset + head) * rb);
    }
    return st;
}

/* Get (or put) `bytes` between local `buf` and byte `disp` of `peer`'s source (or
 * target) buffer: a cross-memory copy for direct memory, chunked MPI_Get/MPI_Put on a
 * window. */
static mal_status_t rma_transfer(const engine_plan_t *plan, bool put, char *buf,
                                 int64_t bytes, int peer, int64_t disp)
{
    const engine_remote_t *at = put ? &plan->dst_at : &plan->src_at;
    if (at->peers != NULL)
        return engine_direct_transfer(at->peers, put, buf, bytes, peer, disp);
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

mal_status_t engine_transport_no_scratch(engine_plan_t *plan)
{
    plan->scratch = NULL;
    return MAL_OK;
}

void engine_transport_free_scratch(engine_plan_t *plan)
{
    free(plan->scratch);
    plan->scratch = NULL;
}

mal_status_t engine_transport_no_epoch(engine_plan_t *plan, engine_side_t side)
{
    (void)plan, (void)side;
    return MAL_OK;
}

mal_status_t engine_transport_none_pending(engine_plan_t *plan, engine_side_t side,
                                           bool close)
{
    (void)plan, (void)side, (void)close;
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

/* Flush completes this rank's gets and puts at origin and target; closing syncs first
 * so remote puts are visible to local loads. */
static mal_status_t rma_complete(engine_plan_t *plan, engine_side_t side, bool close)
{
    MPI_Win win = side_window(plan, side);
    if (win == MPI_WIN_NULL)
        return MAL_OK;
    if (!close)
        return engine_mpi_check(MPI_Win_flush_all(win), "MPI_Win_flush_all");
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
