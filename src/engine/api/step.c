/* The iteration loop: mal_step and the plan, carried values, the reconfiguration report. */
#include "engine.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *status_name(mal_status_t st)
{
    switch (st) {
#define MAL_STATUS_NAME_(name, value, text) case name: return #name;
        MAL_STATUS_LIST(MAL_STATUS_NAME_)
#undef MAL_STATUS_NAME_
    }
    return "MAL_UNKNOWN";
}

static double bandwidth(const mal_reconfig_stats_t *s)
{
    return s->redist_seconds > 0 ? (double)s->bytes_moved / s->redist_seconds : 0.0;
}

static void write_json(const char *path, const mal_reconfig_stats_t *s, mal_redist_t method,
                       const mal_decision_t *policy)
{
    if (report_reconfig(path, s, mal_redist_name(method), s->status < 0 ? mal_error_message()
                        : NULL, policy) != 0)
        engine_fail(MAL_ERR_ARG, "cannot append to the report '%s'", path);
}

static void print_summary(const mal_reconfig_stats_t *s)
{
    printf("libmal: it %lld %s %d -> %d procs, %.2f MiB moved, spawn %.3f s, windows "
           "%.3f s, redist %.3f s (%.0f MB/s), total %.3f s: %s%s\n",
           (long long)s->iteration, engine_action_name(s->action), s->procs_before, s->procs_after,
           (double)s->bytes_moved / (1 << 20), s->spawn_seconds, s->window_seconds,
           s->redist_seconds, bandwidth(s) / 1e6, s->total_seconds,
           s->status < 0 ? "abandoned, " : "ok", s->status < 0 ? status_name(s->status) : "");
    if (s->status < 0)
        printf("libmal:   reason: %s\n", mal_error_message());
    if (engine.pol.decision_fresh)
        engine_decision_summary();
    fflush(stdout);
}

void engine_report(MPI_Comm comm, mal_reconfig_stats_t *local)
{
    double t[5] = {local->spawn_seconds, local->window_seconds, local->redist_seconds,
                   local->total_seconds, local->process_seconds};
    int64_t bytes = local->bytes_moved;
    PMPI_Allreduce(MPI_IN_PLACE, t, 5, MPI_DOUBLE, MPI_MAX, comm);
    PMPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_INT64_T, MPI_SUM, comm);
    mal_reconfig_stats_t s = *local;
    s.spawn_seconds = t[0];
    s.window_seconds = t[1];
    s.redist_seconds = t[2];
    s.total_seconds = t[3];
    s.process_seconds = t[4];
    s.bytes_moved = bytes;
    engine.stats.reconfig = s;
    engine_monitor_reconfigured(&s);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0)
        return;
    if (engine.procs.settings.report != NULL)
        write_json(engine.procs.settings.report, &s, engine.xfer.method,
                   engine.pol.decision_fresh ? &engine.pol.decision : NULL);
    if (engine.procs.settings.summary)
        print_summary(&s);
}

static mal_status_t run_action(engine_state_t *e, const schedule_action_t *act)
{
    switch (act->kind) {
    case SCHEDULE_EXPAND: {
        mal_spawn_mode_t mode = act->spawn == SCHEDULE_SPAWN_BATCHED    ? MAL_SPAWN_BATCHED
                                : act->spawn == SCHEDULE_SPAWN_PER_CALL ? MAL_SPAWN_PER_CALL
                                                                        : MAL_SPAWN_DEFAULT;
        return engine_expand(e, act->count, mode, NULL);
    }
    case SCHEDULE_SHRINK:
        return engine_shrink(e, act->count, act->ranks, NULL);
    case SCHEDULE_REBALANCE:
        return engine_reported_rebalance(e, act->weights, act->count, act->iteration);
    }
    return engine_fail(MAL_ERR_ARG, "plan entry of unknown kind %d", (int)act->kind);
}

/* The plan's action for the iteration that just ended, if any. */
static mal_status_t planned_action(engine_state_t *e)
{
    const schedule_t *plan = &e->pol.schedule;
    while (e->pol.next_action < plan->count &&
           plan->actions[e->pol.next_action].iteration < e->iteration)
        e->pol.next_action++;
    if (e->pol.next_action >= plan->count ||
        plan->actions[e->pol.next_action].iteration != e->iteration)
        return MAL_CONTINUE;
    return run_action(e, &plan->actions[e->pol.next_action++]);
}

mal_status_t mal_step(void)
{
    engine_state_t *e = engine_context();
    if (e->initialized && e->procs.removed)
        return MAL_REMOVED;
    mal_status_t st = engine_require_init("mal_step");
    if (st)
        return st;
    engine_enclose(true); /* the calls a plan or the policy makes are this one */
    engine_monitor_end_iteration();
    e->iteration++;
    /* Between sampling intervals and plan entries a step communicates nothing; a plan
     * overrides the policy. A failed gather (agreed) acts on nothing this step. */
    st = engine_monitor_step();
    if (!st)
        st = e->pol.schedule.count > 0 ? planned_action(e)
             : engine_monitor_closed() ? engine_policy_step() : MAL_CONTINUE;
    if (st != MAL_REMOVED)
        engine_monitor_begin_iteration();
    engine_enclose(false);
    return st;
}
