/* What every transport table shares: rows that stay on a rank (left in place, or copied
 * with memcpy), the chunk size of one MPI call, the one-sided segment walk, and the
 * entries of transports that keep no scratch, open no epoch or leave nothing pending. All
 * transports read the old parts and write the new ones at the addresses the plan gives,
 * so they differ only in how remote rows travel. Calls no table: the tables call it. */
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
