/* mal_rebalance: a reconfiguration whose old and new communicators are the same
 * (plan.h): new layouts from the weights, moved into the current buffer where they fit
 * or into the spare, then swapped. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

bool engine_one_sided(void)
{
    return engine_method_one_sided(engine.xfer.method);
}

static mal_status_t check_weights(const double *weights)
{
    if (weights == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: weights is NULL");
    return engine_check_weights(weights, engine.size, "mal_rebalance");
}

/* What this rank sent, received and kept, from its plans. */
static mal_rebalance_stats_t rebalance_stats(const engine_reconfig_t *rc, double t0)
{
    mal_rebalance_stats_t s = {.method = rc->xfer->method,
                               .windows_created = rc->windows_created,
                               .layout_changed = rc->changed, .in_place = rc->changed};
    for (int i = 0; i < rc->count; i++) {
        const engine_move_t *m = &rc->moves[i];
        int64_t row_bytes = m->array->row_bytes;
        s.in_place &= !m->moves || m->in_place;
        for (size_t k = 0; m->moves && k < m->plan.nrecv; k++) {
            int64_t bytes = m->plan.recv[k].rows * row_bytes;
            *(m->plan.recv[k].peer == rc->me_u ? &s.bytes_kept : &s.bytes_received) += bytes;
        }
        for (size_t k = 0; m->moves && k < m->plan.nsend; k++)
            if (m->plan.send[k].peer != rc->me_u)
                s.bytes_sent += m->plan.send[k].rows * row_bytes;
    }
    s.seconds = MPI_Wtime() - t0;
    return s;
}

static uint64_t rebalance_fingerprint(mal_redist_t method, const double *weights, int n)
{
    int m = (int)method;
    uint64_t h = engine_hash(ENGINE_HASH_SEED, &m, sizeof m);
    return engine_hash(h, weights, (size_t)n * sizeof *weights);
}

mal_status_t mal_rebalance(const double *weights)
{
    double t0 = MPI_Wtime();
    mal_status_t st = engine_require_init("mal_rebalance");
    if (st)
        return st;
    st = check_weights(weights);
    engine_reconfig_t rc = {
        .action = MAL_ACTION_REBALANCE, .reg = &engine.reg, .xfer = &engine.xfer,
        .min_rows = engine.config.min_rows, .u = engine.comm, .me_u = engine.rank,
        .n_u = engine.size, .n = engine.comm, .me_n = engine.rank, .n_n = engine.size,
        .old_procs = engine.size, .weights = weights,
        .fingerprint = st ? 0 : rebalance_fingerprint(engine.xfer.method, weights,
                                                       engine.size)};
    if (!st)
        st = engine_reconfig_prepare(&rc);
    st = engine_reconfig_move(&rc, st);
    if (!st) {
        engine_reconfig_commit(&rc, true);
        engine.stats.last = rebalance_stats(&rc, t0);
    }
    engine_reconfig_release(&rc);
    return st;
}
