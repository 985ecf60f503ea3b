/* The MPI_Isend/Irecv transport (a baseline): every segment as chunked messages, posted
 * together and waited for within pull. Nothing is exposed. */
#include "core.h"
#include "transport.h"

#include <stdbool.h>
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

/* At most this many messages are posted at once. A plan with more (counts chunked far
 * below 2^31, MAL_MAX_COUNT) moves them in steps instead: MPICH 4.0 aborted with an
 * assertion (no request left) where every message of such a plan was posted at once.
 * Each rank chooses from its own count, without agreement, and may: a rank that posts
 * everything at once blocks nowhere before it has posted all, so a stepping peer's batch
 * always finds its messages posted, and both walk the chunks with one peer in the same
 * order (the segment list's), which is all MPI's matching needs. */
#define POSTED_MAX 16384
#define STEP_BATCH (POSTED_MAX / 2) /* per direction, per batch of a step */

static size_t plan_messages(const engine_plan_t *plan)
{
    int64_t chunk = engine_chunk_bytes(plan->count_limit);
    return count_messages(plan->recv, plan->nrecv, plan->me, plan->row_bytes, chunk) +
           count_messages(plan->send, plan->nsend, plan->me, plan->row_bytes, chunk);
}

/* Every request the plan posts is allocated before the collective part begins, so no
 * allocation can fail half-way through it. */
static mal_status_t p2p_allocate(engine_plan_t *plan)
{
    size_t n = plan_messages(plan);
    if (n > POSTED_MAX)
        n = POSTED_MAX;
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

/* Where a step stands in the segments with one peer, in list order: segment i, bytes
 * done of it. */
typedef struct {
    const partition_segment_t *segs;
    size_t n, i;
    int64_t done;
    int peer;
    bool is_send;
} cursor_t;

static void cursor_skip(cursor_t *c)
{
    while (c->i < c->n && c->segs[c->i].peer != c->peer)
        c->i++;
}

/* Post up to `most` chunks from the cursor on, counted in *nreq. */
static mal_status_t post_chunks(const engine_plan_t *plan, cursor_t *c, size_t most,
                                MPI_Request *reqs, size_t *nreq)
{
    int64_t rb = plan->row_bytes, chunk = engine_chunk_bytes(plan->count_limit);
    size_t start = *nreq;
    mal_status_t st = MAL_OK;
    for (cursor_skip(c); c->i < c->n && *nreq - start < most && !st; cursor_skip(c)) {
        const partition_segment_t *g = &c->segs[c->i];
        int64_t bytes = g->rows * rb, left = bytes - c->done;
        int64_t take = left < chunk * (int64_t)(most - (*nreq - start))
                           ? left : chunk * (int64_t)(most - (*nreq - start));
        int64_t off = (c->is_send ? g->src_offset : g->dst_offset) * rb + c->done;
        st = post_segment(plan, c->is_send ? plan->src : plan->dst, off, take, c->peer,
                          c->is_send, reqs, nreq);
        c->done += take;
        if (c->done == bytes) {
            c->i++;
            c->done = 0;
        }
    }
    return st;
}

/* Step s of p - 1: send to me + s, receive from me - s (pairwise exchange: the partners
 * of a step are in it together), at most STEP_BATCH chunks each way at a time; both
 * sides of a pair walk the same chunks in the same batches, so no batch waits for a
 * message its peer has not posted in the same batch. */
static mal_status_t pull_in_steps(engine_plan_t *plan)
{
    MPI_Request *reqs = plan->scratch;
    engine_copy_local(plan);
    mal_status_t st = MAL_OK;
    for (int s = 1; s < plan->nprocs && !st; s++) {
        cursor_t out = {plan->send, plan->nsend, 0, 0, (plan->me + s) % plan->nprocs, true};
        cursor_t in = {plan->recv, plan->nrecv, 0, 0,
                       (plan->me - s + plan->nprocs) % plan->nprocs, false};
        for (cursor_skip(&out), cursor_skip(&in); !st && (out.i < out.n || in.i < in.n);
             cursor_skip(&out), cursor_skip(&in)) {
            size_t nreq = 0;
            st = post_chunks(plan, &in, STEP_BATCH, reqs, &nreq);
            if (!st)
                st = post_chunks(plan, &out, STEP_BATCH, reqs, &nreq);
            if (st)
                cancel_requests(reqs, nreq);
            else
                st = engine_mpi_check(engine_waitall((int)nreq, reqs, true), "MPI_Waitall");
        }
    }
    return st;
}

/* Post every message, copy the rows that stay meanwhile, wait (in steps when there are
 * more than POSTED_MAX). */
static mal_status_t p2p_pull(engine_plan_t *plan)
{
    if (plan_messages(plan) > POSTED_MAX)
        return pull_in_steps(plan);
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
