/* The OpenSHMEM transport: structures on the symmetric heap, rows pulled with
 * shmem_getmem_nbi (shmem.c) and completed with shmem_quiet. SHMEM has no epochs: the
 * agreement before a move orders the user's stores before the gets, and one quiet
 * completes every get of this PE. Closing quiets again, so that gets still in flight
 * after a failure land before any buffer is freed or reused. */
#include "transport.h"

static mal_status_t shmem_transfer(const engine_plan_t *plan, bool put, char *buf,
                                   int64_t bytes, int peer, int64_t disp)
{
    if (bytes <= 0) /* sizes are size_t there: nothing to chunk */
        return MAL_OK;
    const engine_remote_t *at = put ? &plan->dst_at : &plan->src_at;
    return engine_shmem_transfer(put, buf, at->base + disp, bytes, peer);
}

static mal_status_t shmem_pull(engine_plan_t *plan)
{
    mal_status_t st = engine_one_sided_walk(plan, shmem_transfer);
    if (!st)
        engine_copy_local(plan);
    return st;
}

static mal_status_t shmem_complete(engine_plan_t *plan, engine_side_t side, bool close)
{
    (void)plan, (void)side, (void)close;
    return engine_shmem_quiet();
}

const engine_transport_t engine_transport_shmem = {
    .name = "shmem",
    .allocate = engine_transport_no_scratch,
    .expose = engine_transport_no_epoch,
    .pull = shmem_pull,
    .complete = shmem_complete,
    .free = engine_transport_free_scratch,
};
