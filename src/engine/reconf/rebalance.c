/* A rebalance (mal_rebalance, a plan's or the policy's): a reconfiguration whose old and
 * new communicators are the same (plan.h): new layouts from the weights, moved into the
 * current buffer where they fit or into the spare, then swapped. */
#include "core.h"
#include "monitor.h"
#include "plan.h"
#include "reconf.h"

#include <stdlib.h>
#include <string.h>

static mal_status_t check_weights(const double *weights, int n)
{
    if (weights == NULL)
        return engine_fail(MAL_ERR_ARG, "mal_rebalance: weights is NULL");
    return engine_check_weights(weights, n, "mal_rebalance");
}

/* What this rank sent, received and kept, from its plans. */
static mal_rebalance_stats_t rebalance_stats(const engine_reconfig_t *rc, double t0)
{
    mal_rebalance_stats_t s = {.method = rc->moved.method,
                               .windows_created = rc->windows_created,
                               .layout_changed = rc->changed, .in_place = rc->changed};
    for (int i = 0; i < rc->count; i++) {
        const engine_move_t *m = &rc->moves[i];
        int64_t row_bytes = engine_array_row_bytes(m->array);
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

/* The same method and weights on every rank (mal_set_redist is local), else the message
 * names the first that differs and its values. */
static mal_status_t agree_rebalance(const engine_group_t *g, mal_status_t st,
                                    mal_redist_t method, const double *weights)
{
    const engine_arg_t args[] = {{"the method (mal_set_redist)", method, engine_method_name,
                                  false}};
    return engine_agree_args(g->comm, st, args, 1, "weights", weights, g->size,
                             "mal_rebalance");
}

engine_reconfig_t engine_reconfig_of(const engine_parts_t *parts, mal_action_t action)
{
    return (engine_reconfig_t){.action = action, .reg = parts->reg, .xfer = parts->xfer,
                               .min_rows = settings_num(parts->settings, SETTING_MIN_ROWS),
                               .mon = parts->sink->mon, .params = &parts->conf->params,
                               .debug = settings_num(parts->settings, SETTING_DEBUG) != 0,
                               .iteration = parts->group->iteration};
}

mal_status_t engine_rebalance(const engine_parts_t *parts, const double *weights)
{
    engine_group_t *g = parts->group;
    double t0 = MPI_Wtime();
    parts->sink->phases = (report_phases_t){0};
    mal_status_t st = agree_rebalance(g, check_weights(weights, g->size), parts->xfer->method,
                                      weights);
    engine_reconfig_t rc = engine_reconfig_of(parts, MAL_ACTION_REBALANCE);
    rc.u = rc.n = g->comm;
    rc.me_u = rc.me_n = g->rank;
    rc.n_u = rc.n_n = rc.old_procs = g->size;
    rc.weights = weights;
    if (!st)
        st = engine_reconfig_prepare(&rc);
    double t_move = MPI_Wtime();
    st = engine_reconfig_move(&rc, st);
    parts->sink->stats.moved = rc.moved; /* the executor, also of a move that failed */
    double t_commit = MPI_Wtime();
    if (!st)
        engine_reconfig_commit(&rc, true);
    engine_phases_of(parts->sink, &rc, MPI_Wtime() - t_commit);
    /* Nobody joins: the first agreement is part of the arguments'. */
    parts->sink->phases.agree = t_move - t0 + rc.t_meet;
    parts->sink->phases.join = 0;
    if (!st)
        parts->sink->stats.last = rebalance_stats(&rc, t0);
    engine_reconfig_release(&rc);
    return st;
}

mal_status_t engine_reported_rebalance(const engine_parts_t *parts, const double *weights,
                                       int count, int64_t plan_iteration)
{
    engine_group_t *g = parts->group;
    double t0 = MPI_Wtime();
    mal_status_t st;
    /* The executor until it moves. */
    parts->sink->stats.moved = (engine_moved_t){.method = parts->xfer->method};
    if (count != g->size)
        st = engine_fail(MAL_ERR_ARG, "plan entry at iteration %lld: %d weights for %d "
                         "processes", (long long)plan_iteration, count, g->size);
    else {
        engine_monitor_predict(parts->sink->mon, g->comm, g->iteration, MAL_ACTION_REBALANCE,
                               (engine_change_t){0}, NULL, g->size, weights,
                               (engine_host_list_t){0});
        st = engine_rebalance(parts, weights);
    }
    mal_rebalance_stats_t r = parts->sink->stats.last;
    mal_reconfig_stats_t s = {
        .action = MAL_ACTION_REBALANCE, .iteration = g->iteration,
        .procs_before = g->size, .procs_after = g->size,
        .bytes_moved = st ? 0 : r.bytes_received, .redist_seconds = st ? 0 : r.seconds,
        .total_seconds = MPI_Wtime() - t0, .status = st};
    const report_change_t change = {.weights = weights, .nweights = count};
    engine_report(parts, g->comm, &s, &parts->sink->stats.moved, &change);
    return st ? st : MAL_RECONFIGURED;
}
