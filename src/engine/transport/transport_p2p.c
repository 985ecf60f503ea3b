/* The MPI_Isend/Irecv transport (a baseline): every segment as chunked messages, posted
 * together and waited for within pull. Nothing is exposed. */
#include "core.h"
#include "transport.h"

#include <stdlib.h>

#define REDIST_TAG 7411

static size_t count_messages(const partition_segment_t *segs, size_t n, int me, int64_t rb,
                             int64_t chunk)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (segs[i].peer != me)
            m += (size_t)((segs[i].rows * rb + chunk - 1) / chunk);
    return m;
}

/* Every request the plan posts is allocated before the collective part begins, so no
 * allocation can fail half-way through it. */
static mal_status_t p2p_allocate(engine_plan_t *plan)
{
    int64_t chunk = engine_chunk_bytes(plan->count_limit);
    size_t n = count_messages(plan->recv, plan->nrecv, plan->me, plan->row_bytes, chunk) +
               count_messages(plan->send, plan->nsend, plan->me, plan->row_bytes, chunk);
    plan->scratch = malloc((n ? n : 1) * sizeof(MPI_Request));
    return plan->scratch ? MAL_OK : engine_fail(MAL_ERR_NOMEM, "no memory for %zu requests",
                                                n);
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
    int64_t chunk = engine_chunk_bytes(plan->count_limit);
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

/* Post every message, copy the rows that stay meanwhile, wait. */
static mal_status_t p2p_pull(engine_plan_t *plan)
{
    int64_t rb = plan->row_bytes;
    MPI_Request *reqs = plan->scratch;
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
    return engine_mpi_check(engine_waitall((int)nreq, reqs, true), "MPI_Waitall");
}

const engine_transport_t engine_transport_p2p = {
    .name = "p2p",
    .allocate = p2p_allocate,
    .expose = engine_transport_no_epoch,
    .pull = p2p_pull,
    .complete = engine_transport_none_pending,
    .free = engine_transport_free_scratch,
};
