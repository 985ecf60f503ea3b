/* The executors of a transfer plan: one-sided (gets and puts sharing each segment, or
 * gets only), MPI_Alltoallv and MPI_Isend/Irecv (the baselines). All read the old parts and write the new ones at the
 * addresses the plan gives, and all treat rows that stay on a rank alike (left in place,
 * or copied with memcpy), so they differ only in how remote rows travel. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define REDIST_TAG 7411

/* Largest byte count of one get or message. 1 GiB keeps each call well below INT_MAX
 * bytes while staying large enough that per-call overhead is invisible. */
static int64_t chunk_bytes(void)
{
    const int64_t gib = INT64_C(1) << 30;
    return engine.xfer.count_limit < gib ? engine.xfer.count_limit : gib;
}

bool engine_one_sided(void)
{
    return engine.xfer.method == MAL_REDIST_RMA || engine.xfer.method == MAL_REDIST_RMA_GET ||
           engine.xfer.method == MAL_REDIST_SHMEM;
}

/* NOCHECK: nobody takes exclusive locks on libmal's windows. Direct memory has no
 * window and no epoch: the agreements around a move order it. */
mal_status_t engine_epoch(MPI_Win win, epoch_step_t step)
{
    if (win == MPI_WIN_NULL)
        return MAL_OK;
    switch (step) {
    case EPOCH_OPEN:
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        return engine_mpi_check(MPI_Win_sync(win), "MPI_Win_sync");
    case EPOCH_FLUSH:
        return engine_mpi_check(MPI_Win_flush_all(win), "MPI_Win_flush_all");
    case EPOCH_CLOSE:
        MPI_Win_sync(win);
        return engine_mpi_check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
    }
    return MAL_OK;
}

void engine_copy_local(const engine_plan_t *plan)
{
    if (plan->kept_in_place)
        return;
    int64_t rb = plan->row_bytes;
    for (size_t i = 0; i < plan->nrecv; i++) {
        const partition_segment_t *s = &plan->recv[i];
        if (s->peer == plan->me)
            memcpy(plan->dst + s->dst_offset * rb, plan->src + s->src_offset * rb,
                   (size_t)(s->rows * rb));
    }
}

/* Get (or put) `bytes` between local `buf` and byte `disp` of `peer`'s source (or
 * target) buffer: a cross-memory copy for direct memory, chunked MPI_Get/MPI_Put on a
 * window, or one SHMEM call at the buffer's symmetric address (sizes there are size_t:
 * nothing to chunk). */
static mal_status_t one_sided_transfer(const engine_plan_t *plan, bool put, char *buf,
                                       int64_t bytes, int peer, int64_t disp)
{
    const engine_peer_mem_t *peers = put ? plan->dst_peers : plan->src_peers;
    if (peers != NULL)
        return engine_direct_transfer(peers, put, buf, bytes, peer, disp);
    if (bytes > 0 && engine.xfer.method == MAL_REDIST_SHMEM)
        return engine_shmem_transfer(put, buf, (put ? plan->dst_base : plan->src_base) + disp,
                                     bytes, peer);
    MPI_Win win = put ? plan->dst_win : plan->src_win;
    int64_t chunk = chunk_bytes();
    for (int64_t done = 0; done < bytes; done += chunk) {
        int n = (int)(bytes - done < chunk ? bytes - done : chunk);
        int rc = put ? MPI_Put(buf + done, n, MPI_BYTE, peer, (MPI_Aint)(disp + done), n,
                               MPI_BYTE, win)
                     : MPI_Get(buf + done, n, MPI_BYTE, peer, (MPI_Aint)(disp + done), n,
                               MPI_BYTE, win);
        if (rc != MPI_SUCCESS)
            return engine_mpi_check(rc, put ? "MPI_Put" : "MPI_Get");
    }
    return MAL_OK;
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

mal_status_t engine_redist_rma(const engine_plan_t *plan, engine_rma_mode_t mode)
{
    int64_t rb = plan->row_bytes;
    int me = plan->me;
    mal_status_t st = MAL_OK;
    /* Pull the head of each incoming segment; its source pushes the tail. */
    for (size_t i = 0; i < plan->nrecv && mode != ENGINE_RMA_PUSH && !st; i++) {
        const partition_segment_t *s = &plan->recv[i];
        if (s->peer == me)
            continue;
        int64_t pushed = pushed_rows(mode, s->rows, plan->in_rows[me], plan->out_rows[s->peer]);
        st = one_sided_transfer(plan, false, plan->dst + s->dst_offset * rb,
                                (s->rows - pushed) * rb, s->peer,
                                (plan->src_offsets[s->peer] + s->src_offset) * rb);
    }
    for (size_t i = 0; i < plan->nsend && mode != ENGINE_RMA_PULL && !st; i++) {
        const partition_segment_t *s = &plan->send[i];
        if (s->peer == me)
            continue;
        int64_t pushed = pushed_rows(mode, s->rows, plan->in_rows[s->peer], plan->out_rows[me]);
        int64_t head = s->rows - pushed;
        st = one_sided_transfer(plan, true, plan->src + (s->src_offset + head) * rb,
                                pushed * rb, s->peer,
                                (plan->dst_offsets[s->peer] + s->dst_offset + head) * rb);
    }
    return st;
}

/* Alltoallv counts and displacements in rows (the rank's own rows are copied apart). */
static void fill_counts(const partition_segment_t *segs, size_t n, int me, bool use_src,
                        int *counts, int *displs)
{
    for (size_t i = 0; i < n; i++) {
        const partition_segment_t *s = &segs[i];
        if (s->peer == me)
            continue;
        counts[s->peer] = (int)s->rows;
        displs[s->peer] = (int)(use_src ? s->src_offset : s->dst_offset);
    }
}

/* Whether every count and displacement in rows fits the count limit. It is bounded by
 * the largest part of either layout, which every rank knows: all ranks choose the same
 * collective (a rank-local test could pair Alltoallv with Alltoallw and hang). */
static bool rows_fit_counts(const engine_plan_t *plan)
{
    for (int r = 0; r < plan->nprocs; r++)
        if (plan->old_bounds[r + 1] - plan->old_bounds[r] > engine.xfer.count_limit ||
            plan->new_bounds[r + 1] - plan->new_bounds[r] > engine.xfer.count_limit)
            return false;
    return true;
}

/* One segment as a datatype anchored at the buffer start: blocks of at most the chunk
 * size at 64-bit byte displacements, so no int count or displacement can overflow. */
static mal_status_t segment_type(int64_t offset, int64_t bytes, MPI_Datatype *type)
{
    int64_t chunk = chunk_bytes(), nblocks = (bytes + chunk - 1) / chunk;
    int *lens = malloc((size_t)nblocks * sizeof *lens);
    MPI_Aint *displs = malloc((size_t)nblocks * sizeof *displs);
    mal_status_t st = MAL_OK;
    if (lens == NULL || displs == NULL) {
        st = engine_fail(MAL_ERR_NOMEM, "no memory for a segment datatype");
        goto out;
    }
    for (int64_t b = 0; b < nblocks; b++) {
        lens[b] = (int)(bytes - b * chunk < chunk ? bytes - b * chunk : chunk);
        displs[b] = (MPI_Aint)(offset + b * chunk);
    }
    st = engine_mpi_check(MPI_Type_create_hindexed((int)nblocks, lens, displs, MPI_BYTE, type),
                          "MPI_Type_create_hindexed");
    if (!st)
        st = engine_mpi_check(MPI_Type_commit(type), "MPI_Type_commit");
out:
    free(lens);
    free(displs);
    return st;
}

static mal_status_t fill_types(const partition_segment_t *segs, size_t n, int me,
                               bool use_src, int64_t rb, int *counts, MPI_Datatype *types)
{
    for (size_t i = 0; i < n; i++) {
        const partition_segment_t *s = &segs[i];
        if (s->peer == me)
            continue;
        int64_t off = (use_src ? s->src_offset : s->dst_offset) * rb;
        mal_status_t st = segment_type(off, s->rows * rb, &types[s->peer]);
        if (st)
            return st;
        counts[s->peer] = 1;
    }
    return MAL_OK;
}

static void free_types(MPI_Datatype *types, int p)
{
    for (int r = 0; r < p; r++)
        if (types[r] != MPI_BYTE)
            MPI_Type_free(&types[r]);
}

/* Fallback when a count or displacement in rows does not fit an int: MPI_Alltoallw with
 * one typed segment per peer (counts of 1, displacements carried by the types). */
static mal_status_t alltoallw_typed(const engine_plan_t *plan, int *buf)
{
    int p = plan->nprocs;
    int *sc = buf, *rc = buf + p, *zero = buf + 2 * p;
    MPI_Datatype *types = malloc(2 * (size_t)p * sizeof *types);
    mal_status_t st = types ? MAL_OK
                            : engine_fail(MAL_ERR_NOMEM, "no memory for %d datatypes", 2 * p);
    for (int r = 0; r < 2 * p && types != NULL; r++)
        types[r] = MPI_BYTE;
    memset(buf, 0, 3 * (size_t)p * sizeof *buf);
    if (!st)
        st = fill_types(plan->send, plan->nsend, plan->me, true, plan->row_bytes, sc, types);
    if (!st)
        st = fill_types(plan->recv, plan->nrecv, plan->me, false, plan->row_bytes, rc, types + p);
    /* Building the types allocates: agree before the collective so a rank that failed
     * does not leave the others inside it. Past 2^31 rows the allreduce is noise. */
    st = engine_agree_in(plan->comm, st, 0, "MPI_Alltoallw datatypes");
    if (!st)
        st = engine_mpi_check(MPI_Alltoallw(plan->src, sc, zero, types, plan->dst, rc, zero,
                                            types + p, plan->comm),
                              "MPI_Alltoallw");
    if (types != NULL)
        free_types(types, 2 * p);
    free(types);
    return st;
}

mal_status_t engine_redist_alltoallv(const engine_plan_t *plan)
{
    int p = plan->nprocs;
    int *buf = plan->counts;
    memset(buf, 0, 4 * (size_t)p * sizeof *buf);
    int *sc = buf, *sd = buf + p, *rc = buf + 2 * p, *rd = buf + 3 * p;
    mal_status_t st;
    if (rows_fit_counts(plan)) {
        fill_counts(plan->send, plan->nsend, plan->me, true, sc, sd);
        fill_counts(plan->recv, plan->nrecv, plan->me, false, rc, rd);
        MPI_Datatype row;
        MPI_Type_contiguous((int)plan->row_bytes, MPI_BYTE, &row);
        MPI_Type_commit(&row);
        st = engine_mpi_check(PMPI_Alltoallv(plan->src, sc, sd, row, plan->dst, rc, rd, row,
                                            plan->comm),
                              "MPI_Alltoallv");
        MPI_Type_free(&row);
    } else {
        st = alltoallw_typed(plan, buf);
    }
    if (!st)
        engine_copy_local(plan);
    return st;
}

static size_t count_messages(const partition_segment_t *segs, size_t n, int me, int64_t rb)
{
    size_t m = 0;
    int64_t chunk = chunk_bytes();
    for (size_t i = 0; i < n; i++)
        if (segs[i].peer != me)
            m += (size_t)((segs[i].rows * rb + chunk - 1) / chunk);
    return m;
}

size_t engine_p2p_messages(const engine_plan_t *plan)
{
    return count_messages(plan->recv, plan->nrecv, plan->me, plan->row_bytes) +
           count_messages(plan->send, plan->nsend, plan->me, plan->row_bytes);
}

/* After a failed post: withdraw what was posted, so no receive left pending can match a
 * message of a later rebalance. */
static void cancel_requests(MPI_Request *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&reqs[i]);
            MPI_Request_free(&reqs[i]);
        }
}

/* Post one segment as chunked messages; both sides walk the same chunks in the same
 * order, and MPI's non-overtaking rule pairs them without distinct tags. */
static mal_status_t post_segment(const engine_plan_t *plan, char *base, int64_t off,
                                 int64_t bytes, int peer, bool is_send, MPI_Request *reqs,
                                 size_t *nreq)
{
    int64_t chunk = chunk_bytes();
    for (int64_t done = 0; done < bytes; done += chunk) {
        int n = (int)(bytes - done < chunk ? bytes - done : chunk);
        MPI_Request *req = &reqs[(*nreq)++];
        *req = MPI_REQUEST_NULL;
        int rc = is_send ? PMPI_Isend(base + off + done, n, MPI_BYTE, peer, REDIST_TAG,
                                     plan->comm, req)
                         : PMPI_Irecv(base + off + done, n, MPI_BYTE, peer, REDIST_TAG,
                                     plan->comm, req);
        if (rc != MPI_SUCCESS)
            return engine_mpi_check(rc, is_send ? "MPI_Isend" : "MPI_Irecv");
    }
    return MAL_OK;
}

mal_status_t engine_redist_p2p(const engine_plan_t *plan)
{
    int64_t rb = plan->row_bytes;
    MPI_Request *reqs = plan->requests;
    size_t nreq = 0;
    mal_status_t st = MAL_OK;
    for (size_t i = 0; i < plan->nrecv && !st; i++)
        if (plan->recv[i].peer != plan->me)
            st = post_segment(plan, plan->dst, plan->recv[i].dst_offset * rb,
                              plan->recv[i].rows * rb, plan->recv[i].peer, false, reqs, &nreq);
    for (size_t i = 0; i < plan->nsend && !st; i++)
        if (plan->send[i].peer != plan->me)
            st = post_segment(plan, plan->src, plan->send[i].src_offset * rb,
                              plan->send[i].rows * rb, plan->send[i].peer, true, reqs, &nreq);
    if (st) {
        cancel_requests(reqs, nreq);
        return st;
    }
    engine_copy_local(plan);
    return engine_mpi_check(PMPI_Waitall((int)nreq, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
}
